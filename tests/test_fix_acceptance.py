"""Issue 19's acceptance run: the article's own manifests (../shared/perf/extract_seeds.py) and a
copy of ../shared/corpus, fixed with ``--fix --unsafe-fixes``: no file parses worse, no finding
appears that was not there, every finding a fix was applied for is gone, and a second run fixes
nothing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (SHARED / "corpus").is_dir() or not (SHARED / "perf" / "extract_seeds.py").is_file():
        pytest.skip("../shared (corpus, perf/extract_seeds.py) is absent")
    root = tmp_path_factory.mktemp("acceptance")
    subprocess.run([sys.executable, str(SHARED / "perf" / "extract_seeds.py"),
                    str(SHARED / "seed" / "mlops-aks-best-practices.txt"), str(root / "seed-manifests")],
                   check=True, capture_output=True)
    shutil.copytree(SHARED / "corpus", root / "corpus", symlinks=True)
    for path in (root / "corpus").rglob("*"):  # ../shared is laid without write bits, which copytree keeps:
        if path.is_file() and not path.is_symlink():  # a user's checkout is writable (--fix leaves read-only files)
            path.chmod(path.stat().st_mode | 0o200)
    (root / ".mlops-lint.yaml").write_text("# the acceptance run's project root\n")
    return root


def _lint(root: Path):
    from mlops_lint.engine import LintRequest, lint
    from mlops_lint.registry import load_registry

    return lint(LintRequest(paths=[root], config=None, registry=load_registry(), jobs=2, cwd=root))


def _identities(report) -> Counter:
    return Counter(r.identity() for r in report.active)


def _new(before, after) -> list:
    """Findings of ``after`` that ``before`` had neither at the same node nor with the same
    message on the same object (a finding that points at another key once a fix added it, as
    GPU005 at the request GPU002 adds, is the same finding)."""
    nodes = {r.identity() for r in before.active}
    said = {(r.rule, r.path, r.obj, r.message) for r in before.active}
    return sorted((r.rule, r.path, r.line, r.message) for r in after.active
                  if r.identity() not in nodes and (r.rule, r.path, r.obj, r.message) not in said)


def test_the_article_and_the_corpus_fixed_parse_as_before_with_no_new_finding(tree: Path) -> None:
    from mlops_lint.engine import LintRequest
    from mlops_lint.fix.run import run_fixes
    from mlops_lint.registry import load_registry

    before = _lint(tree)
    bytes_before = {p: p.read_bytes() for p in tree.rglob("*") if p.is_file()}
    outcome = run_fixes(LintRequest(paths=[tree], config=None, registry=load_registry(), jobs=2, cwd=tree),
                        unsafe=True, write=True)
    after = _lint(tree)
    fixed = outcome.fixed
    print(f"\nfixes per rule: {dict(sorted(fixed.items()))}; {sum(fixed.values())} in {len(outcome.written)} files, "
          f"{outcome.passes} passes")
    assert sum(fixed.values()) >= 100 and len(fixed) >= 5  # the catalogue's fixes do run on real files
    assert outcome.written == sorted(outcome.changed)
    assert [n.message for n in outcome.notes] == []  # nothing refused, nothing left after the passes
    parse = [r for r in after.active if r.rule == "SCH001"]
    assert len(parse) == sum(1 for r in before.active if r.rule == "SCH001")
    new = _new(before, after)
    assert new == [], f"findings the fixes brought: {new[:20]}"
    gone = _identities(before) - _identities(after)
    assert sum(gone.values()) >= sum(fixed.values())
    assert not any(r.autofix is not None for r in after.active)  # everything --fix --unsafe-fixes can fix, fixed
    changed = {p for p, data in bytes_before.items() if p.read_bytes() != data}
    assert {p.relative_to(tree).as_posix() for p in changed} == set(outcome.changed)  # no other file touched
    again = run_fixes(LintRequest(paths=[tree], config=None, registry=load_registry(), jobs=2, cwd=tree),
                      unsafe=True, write=True)
    assert (again.fixed, again.changed) == (Counter(), {})
