"""scripts/new_rule.py (issue 35): adding a rule with the scaffold changes no other rule's files.

A scripted run in a temporary clone of the repository at HEAD: the scaffold, then the project's
generators (`python -m mlops_lint.docs`, the rule's own golden, the violating reference reports), then
``git status``: the files that changed are the new rule's own and the generated ones listed in
:data:`GENERATED`, and those change only by the new rule (a README row, a docs index row; in the
violating reports the summary and, in SARIF, the rule's entry and the rule indexes after it, until
per-rule snapshots replace the whole-project reports).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import new_rule  # noqa: E402

# what a new rule regenerates beside its own files: the lists (tests/test_docs.py). The whole-project
# reports of fixtures/violating/ show only the report formats (tests/test_reference_fixtures.py): each
# rule's findings and docs are in its own snapshots (issue 35 item 2), so they do not change
ALWAYS = {"README.md", "docs/rules/README.md"}
GENERATED = ALWAYS
SLUG = "nvidia-visible-devices-set"


def free_code(prefix: str) -> str:
    taken = [m.code for m in load_registry().rules if m.code.startswith(prefix)]
    return f"{prefix}{max(int(c[3:]) for c in taken) + 1:03}"


def git(clone: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=clone, capture_output=True, text=True, check=True).stdout


def python(clone: Path, *args: str) -> subprocess.CompletedProcess:
    """``args`` run by the clone's own interpreter: a virtual environment (with this one's packages)
    where the clone is installed editable, so ``mlops_lint`` is the clone's code (pyproject maps the
    name to its ``linter/`` folder: no path of the clone names it)."""
    venv = clone.parent / "venv"
    if not venv.exists():
        subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                        "--no-index", "-e", str(clone)], check=True, timeout=600, capture_output=True)
    return subprocess.run([str(venv / "bin" / "python"), *args], cwd=clone, capture_output=True, text=True, timeout=900)


def outcomes(done: subprocess.CompletedProcess) -> dict[str, str]:
    """test id -> PASSED/FAILED from a ``pytest -rA`` run."""
    return {match[2]: match[1] for match in re.finditer(r"^(PASSED|FAILED) \S+?::(\S+)", done.stdout, re.M)}


@pytest.mark.skipif(not (REPO / ".git").exists(), reason="not a git checkout: nothing to clone")
def test_a_scaffolded_rule_touches_only_its_own_files_and_generated_ones(tmp_path: Path) -> None:
    clone = tmp_path / "repo"
    subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(clone)], check=True, timeout=300)
    code = free_code("GPU")
    stem = f"{code.lower()}_{SLUG.replace('-', '_')}"
    done = python(clone, "scripts/new_rule.py", code, SLUG, "--family", "gpu", "--scope", "container")
    assert done.returncode == 0, done.stderr
    done = python(clone, "-m", "mlops_lint.docs")
    assert done.returncode == 0, done.stderr
    pytest_run = ("-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider")
    python(clone, *pytest_run, "--update-golden", "tests/test_rule_fixtures.py", "tests/test_reference_fixtures.py",
           "-k", code)

    changed = {line[3:] for line in git(clone, "status", "--porcelain", "--untracked-files=all").splitlines()}
    own = {f"rules/gpu/{stem}.py", f"fixtures/rules/{code}/.mlops-lint.yaml", f"fixtures/rules/{code}/fail.yaml",
           f"fixtures/rules/{code}/pass.yaml", f"fixtures/rules/{code}/expected.txt",
           f"fixtures/rules/{code}/expected.json", f"fixtures/rules/{code}/expected.sarif",
           f"fixtures/violating/{code.lower()}-{SLUG}.yaml", f"tests/test_rule_{code.lower()}.py",
           f"docs/rules/{code}.md"}
    assert own | ALWAYS <= changed <= own | GENERATED, (sorted(own | ALWAYS - changed), sorted(changed - own - GENERATED))

    # the generated files change only by the new rule
    for path in ("README.md", "docs/rules/README.md"):
        diff = [line for line in git(clone, "diff", "-U0", "--", path).splitlines()
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]
        assert len(diff) == 1 and diff[0].startswith("+") and code in diff[0], diff
    # the structural tests pass at once; the behaviour tests fail until the check is written
    structural = outcomes(python(clone, *pytest_run, "tests/test_meta.py", "-k", code))
    assert structural and set(structural.values()) == {"PASSED"}, structural
    behaviour = outcomes(python(clone, *pytest_run, "tests/test_rule_fixtures.py", f"tests/test_rule_{code.lower()}.py",
                                "tests/test_new_rule.py::test_no_rule_keeps_the_scaffolds_placeholder_text", "-k",
                                f"{code} or placeholder"))
    assert behaviour[f"test_pass_has_no_findings[{code}]"] == "PASSED"
    assert behaviour[f"test_text_report_matches_golden[{code}]"] == "PASSED"
    assert behaviour[f"test_fail_findings_are_the_expected_lines[{code}]"] == "FAILED"
    assert behaviour["test_the_fail_fixture_is_reported_at_its_expect_line"] == "FAILED"
    assert behaviour["test_no_rule_keeps_the_scaffolds_placeholder_text"] == "FAILED"


def test_no_rule_keeps_the_scaffolds_placeholder_text() -> None:
    """The scaffold's docs are placeholders: a rule is not done while any is left."""
    left = [m.code for m in load_registry().rules if new_rule.PLACEHOLDER in m.doc]
    assert left == [], f"write the docs of {left} (scripts/new_rule.py left `{new_rule.PLACEHOLDER}`)"


@pytest.mark.parametrize("argv, message", [
    (["GPU001", "visible-devices-set", "--family", "gpu"], "GPU001 is taken (gpu-limit-missing)"),
    ([free_code("GPU"), "gpu-limit-missing", "--family", "gpu"], "the slug gpu-limit-missing is taken"),
    ([free_code("GPU"), SLUG, "--family", "img"], "does not match the id"),
    ([free_code("GPU"), "no-visible-devices", "--family", "gpu"], "names the problem, not the fix"),
    (["GPU14", SLUG, "--family", "gpu"], "is not an id of three capitals and three digits"),
])
def test_the_scaffold_refuses_before_writing(tmp_path: Path, argv: list[str], message: str, capsys) -> None:
    root = tmp_path / "repo"
    assert new_rule.main([*argv, "--root", str(REPO) if "taken" in message else str(root)]) == 2
    assert message in capsys.readouterr().err
    assert not root.exists()
