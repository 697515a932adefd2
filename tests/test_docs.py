"""docs/rules/ is generated from the rules' docstrings and must be current."""

from pathlib import Path

from linter import docs

REPO = Path(__file__).resolve().parents[1]


def test_generated_rule_docs_are_current() -> None:
    out = REPO / "docs" / "rules"
    stale = [str(p) for p, text in docs.expected(out).items() if not p.exists() or p.read_text("utf-8") != text]
    assert not stale, f"run `python -m linter.docs` to regenerate: {stale}"
    assert docs.main(["--check", "--out", str(out)]) == 0
