"""docs/rules/ is generated from the rules' docstrings and must be current."""

from pathlib import Path

from linter import docs

REPO = Path(__file__).resolve().parents[1]


def test_generated_rule_docs_are_current() -> None:
    out = REPO / "docs" / "rules"
    stale = [str(p) for p, text in docs.expected(out).items() if not p.exists() or p.read_text("utf-8") != text]
    assert not stale, f"run `python -m linter.docs` to regenerate: {stale}"
    assert docs.main(["--check", "--out", str(out)]) == 0


def test_shared_paragraphs_are_expanded_into_every_rule_that_names_them() -> None:
    import re

    import pytest

    from linter.docparts import PARTS, expand
    from linter.registry import load_registry

    metas = load_registry().rules
    for name, text in PARTS.items():
        users = [m.code for m in metas if text in m.doc]
        assert len(users) >= 2, (name, users)  # a part one rule uses belongs in that rule
    assert not [m.code for m in metas if re.search(r"^\{\{[a-z-]+\}\}$", m.doc, re.M)]
    assert "GPU005" in [m.code for m in metas if PARTS["placement"] in m.doc]
    with pytest.raises(KeyError):
        expand("intro\n\n{{no-such-part}}\n")
    assert expand("`{{ .Values.image }}` stays") == "`{{ .Values.image }}` stays"
