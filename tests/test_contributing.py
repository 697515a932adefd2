"""CONTRIBUTING.md stays true (issue 35): every path it names exists, every command it shows runs
something that exists (a module, a script, a subcommand, an option), and the paths of its
example rule are the files ``scripts/new_rule.py`` writes for it or the generators make.

- a word with a ``/`` in an inline code span or a ``sh`` block is a path of the repository
  (``../shared/…``: of the folder beside it, checked when it is there; ``/tmp/…`` and
  placeholders such as ``<ID>`` are not checked; ``*`` is a glob that must match);
- ``python -m M`` needs the module ``M``; ``python FILE`` the file; their ``--options`` must be
  named in the module's or script's source (pytest's: in tests/conftest.py);
- ``mlops-lint`` needs its subcommand, and the ``--options`` of the lint command.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TEXT = (REPO / "CONTRIBUTING.md").read_text("utf-8")
sys.path.insert(0, str(REPO / "scripts"))
import new_rule  # noqa: E402

EXAMPLE = ("GPU014", "nvidia-visible-devices-set", "gpu", "container")
# what the generators write for a rule beside the scaffold's files (tests/test_new_rule.py)
GENERATED = {"docs/rules/GPU014.md", "fixtures/rules/GPU014/expected.txt"}


def blocks(language: str) -> list[str]:
    return re.findall(rf"^ *```{language}\n(.*?)^ *```$", TEXT, re.S | re.M)


def prose() -> str:
    return re.sub(r"^ *```.*?^ *```$", "", TEXT, flags=re.S | re.M)


def inline() -> list[str]:
    return re.findall(r"`([^`\n]+)`", prose())


def commands() -> list[str]:
    found = []
    for block in blocks("sh"):
        for line in block.splitlines():
            found.extend(part.strip() for part in line.split("&&"))
    found.extend(code for code in inline() if code.startswith(("python ", "mlops-lint ")))
    return [c for c in found if c and not c.startswith((". ", "npm "))]


def paths() -> list[str]:
    words = [w for code in inline() for w in code.split()]
    words += [w for block in blocks("sh") for w in block.split()]
    found = []
    for word in words:
        word = word.strip("\"'(),;:")
        if "/" not in word or "<" in word or "=" in word or word.startswith(("/", "http", "@", "-", ".venv/")):
            continue
        found.append(word)
    return sorted(set(found))


def scaffolded() -> set[str]:
    code, slug, family, scope = EXAMPLE
    files = new_rule.files_for(code, slug, family, scope, "warning", None, REPO)
    return {p.relative_to(REPO).as_posix() for p in files} | GENERATED


def test_the_text_names_paths_and_commands() -> None:
    assert len(paths()) >= 40 and len(commands()) >= 15  # the extraction finds what the text shows


def check_path(path: str) -> None:
    if path.startswith("../shared"):
        if not SHARED.is_dir():
            pytest.skip("../shared is not present")
        base, path = SHARED.parent, path[3:]
    else:
        base = REPO
    if "GPU014" in path or "gpu014" in path:  # the example rule: what the scaffold and generators write
        made = scaffolded()
        assert path.rstrip("/") in made or any(m.startswith(path) for m in made), path
        return
    if "*" in path:
        assert list(base.glob(path)), path
        return
    assert (base / path).exists(), path


@pytest.mark.parametrize("path", paths())
def test_every_path_exists(path: str) -> None:
    check_path(path)


def _source_of_module(name: str) -> str:
    if name == "pytest":
        return (REPO / "tests" / "conftest.py").read_text("utf-8")
    spec = importlib.util.find_spec(name)
    assert spec is not None, f"no module {name}"
    origin = spec.origin or ""
    return Path(origin).read_text("utf-8") if origin.endswith(".py") else ""


def _script(path: str) -> Path:
    if path.startswith("../shared"):
        return SHARED / path[len("../shared/"):]
    return REPO / path


def check_command(command: str) -> None:
    words = [w for w in shlex.split(command.split("  #", 1)[0]) if "=" not in w or w.startswith("-")]
    program, rest = words[0], words[1:]
    options = [w.split("=", 1)[0] for w in rest if w.startswith("--")]
    if program == "mlops-lint":
        from mlops_lint.cli import main

        first = next((w for w in rest if not w.startswith("-")), None)
        if first in main.commands and first != "check":
            return
        known = {o for p in main.commands["check"].params for o in (*p.opts, *p.secondary_opts)}
        assert set(options) <= known, set(options) - known
        return
    assert program in ("python", "python3"), command
    if rest[0] == "-m":
        module = rest[1]
        source = _source_of_module(module)
        if module in ("venv", "pip", "cProfile"):
            return
        rest = rest[2:]
    else:
        script = _script(rest[0])
        if script.parts[-2:-1] == ("perf",) and not SHARED.is_dir():
            pytest.skip("../shared is not present")
        assert script.is_file(), rest[0]
        source = script.read_text("utf-8")
    for option in options:
        assert f'"{option}"' in source, f"{command}: {option} is not an option of it"


@pytest.mark.parametrize("command", commands())
def test_every_command_runs_something_that_exists(command: str) -> None:
    check_command(command)


@pytest.mark.parametrize("bad", [
    "tests/test_no_such_file.py", "linter/no_such_module.py", "fixtures/reports/nothing.*",
    "rules/gpu/gpu014_another_slug.py", "fixtures/rules/GPU014/fail.json",
])
def test_a_path_that_does_not_exist_fails(bad: str) -> None:
    with pytest.raises(AssertionError):
        check_path(bad)


@pytest.mark.parametrize("bad", [
    "python -m mlops_lint.no_such_module", "python scripts/no_such_script.py", "python -m mlops_lint.docs --no-such-option",
    "python -m pytest -q --update-goldens tests/test_docs.py", "mlops-lint --no-such-option .",
    "python scripts/new_rule.py GPU014 x --famly gpu",
])
def test_a_command_that_does_not_exist_fails(bad: str) -> None:
    with pytest.raises(AssertionError):
        check_command(bad)


def test_the_sampling_snippet_draws_with_the_fixed_seed(tmp_path: Path) -> None:
    [snippet] = blocks("python")
    assert "random.Random(20261205)" in snippet
    report = tmp_path / "after.json"
    findings = [{"rule": "GPU014" if i % 3 else "GPU001", "path": f"f{i}.yaml", "line": i, "column": 1,
                 "message": f"m{i}"} for i in range(60)]
    report.write_text(json.dumps({"findings": findings}))
    out: list[str] = []
    exec(snippet.replace("/tmp/after.json", str(report)), {"print": out.append})  # noqa: S102 - our own text
    assert len(out) == 20 and all(line.startswith("f") and ":1 m" in line for line in out)
    assert all(int(line.split(":")[1]) % 3 for line in out)  # only the rule's own findings
