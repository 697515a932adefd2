"""The real rules' fixes, byte for byte: every ``<fixture>.fixed`` beside a fixture
(``fixtures/rules/<RULE>/fail.yaml`` and ``fail.yaml.fixed``; any folder named by a rule id under
``fixtures/`` works the same way) is what ``mlops-lint --fix --unsafe-fixes --select RULE`` makes
of the fixture, and the fixed file lints clean of the findings ``RULE`` can fix, with no finding
of any rule it did not have before. ``pytest --update-golden`` rewrites the ``.fixed`` files from
the current output (review with ``git diff fixtures/``).

A ``.fixed`` name is never linted (no loader's suffix: ``fail.Dockerfile.fixed`` is no
Dockerfile name, ``Dockerfile.fixed`` would be, and is refused below), so ``mlops-lint
fixtures/`` reads the same files with or without them. The fixture is copied to a temporary
folder with its folder's other fixtures (a fix may need a context file: a StorageClass, a
node-pool script) and its ``.mlops-lint.yaml`` (the rule's options)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.discover import classify_name

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
SUFFIX = ".fixed"
CODE = re.compile(r"^[A-Z]{2,4}[0-9]{3}$")
MIN_CASES = 2  # at least these exist (GPU001 and QUE001 among them): the harness never passes empty


def _rule_of(path: Path) -> str | None:
    for folder in path.parents:
        if CODE.match(folder.name):
            return folder.name
        if folder == FIXTURES:
            return None
    return None


def cases() -> list[Path]:
    """The expected files (``X.fixed`` beside ``X``) under fixtures/ in a rule's folder."""
    return sorted(p for p in FIXTURES.rglob(f"*{SUFFIX}")
                  if p.is_file() and _rule_of(p) is not None and p.with_name(p.name[:-len(SUFFIX)]).is_file())


CASES = cases()


def _id(path: Path) -> str:
    return path.relative_to(FIXTURES).as_posix()


def test_there_are_golden_fix_cases() -> None:
    assert len(CASES) >= MIN_CASES, f"only {len(CASES)} golden fix cases (*.fixed) under fixtures/"
    assert {"GPU001", "QUE001"} <= {_rule_of(p) for p in CASES}


def test_no_expected_file_is_ever_linted_as_input() -> None:
    stray = [p for p in FIXTURES.rglob(f"*{SUFFIX}") if classify_name(p.name) is not None]
    assert stray == [], "these .fixed names are lintable (rename the fixture, e.g. fail.Dockerfile)"
    orphans = [p for p in FIXTURES.rglob(f"*{SUFFIX}") if p not in CASES]
    assert orphans == [], "a .fixed file without its fixture beside it, or outside a rule's folder"


def _lint(folder: Path, target: str, *args: str) -> tuple[int, dict]:
    import os

    old = Path.cwd()
    os.chdir(folder)
    try:
        result = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--format", "json", *args, target],
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code, json.loads(result.stdout)


def _identities(report: dict) -> set[tuple]:
    """What stays the same when lines move (as Result.identity): rule, object, node or message."""
    out = set()
    for f in report["findings"]:
        if f["suppressed"]:
            continue
        obj = f["object"] or {}
        out.add((f["rule"], obj.get("kind"), obj.get("namespace"), obj.get("name"), f["message"]))
    return out


@pytest.mark.parametrize("expected", CASES, ids=_id)
def test_fix_gives_the_expected_file_byte_for_byte(expected: Path, tmp_path: Path, update_golden: bool) -> None:
    rule = _rule_of(expected)
    source = expected.with_name(expected.name[:-len(SUFFIX)])
    for sibling in source.parent.iterdir():  # the fixture set, as a project of its own
        if sibling.is_file() and not sibling.name.endswith(SUFFIX) and sibling.name != "expected.txt" \
                and (sibling.name.startswith("fail") or sibling.name == ".mlops-lint.yaml" or sibling == source):
            shutil.copyfile(sibling, tmp_path / sibling.name)
    if not (tmp_path / ".mlops-lint.yaml").exists():
        (tmp_path / ".mlops-lint.yaml").write_text("# a project root of its own\n")
    _, before = _lint(tmp_path, source.name)
    _, after_fix = _lint(tmp_path, source.name, "--fix", "--unsafe-fixes", "--select", rule)
    fixed = (tmp_path / source.name).read_bytes()
    if update_golden:
        expected.write_bytes(fixed)
    assert fixed == expected.read_bytes(), f"--fix output differs from {_id(expected)} (pytest --update-golden)"
    assert after_fix["summary"].get("fixed", {}).get(rule, 0) >= 1, f"{rule} fixed nothing in {_id(source)}"
    assert fixed != source.read_bytes()
    # safe to run twice: the fixed file lints clean of what the rule can fix, nothing new appears
    _, after = _lint(tmp_path, source.name)
    left = [f for f in after["findings"] if f["rule"] == rule and f["autofix"] is not None and not f["suppressed"]]
    assert left == [], f"{rule} still proposes fixes after --fix"
    assert not any(f["rule"] == "SCH001" for f in after["findings"]), "the fixed file does not parse"
    new = _identities(after) - _identities(before)
    assert new == set(), f"findings the fix brought: {sorted(new)}"
    _, again = _lint(tmp_path, source.name, "--fix", "--unsafe-fixes", "--select", rule)
    assert (tmp_path / source.name).read_bytes() == fixed
    assert again["summary"]["fixed"] == {}
