"""docs/rules/ is generated from the rules' docstrings and must be current."""

import re
from pathlib import Path

import pytest

from mlops_lint import docs

REPO = Path(__file__).resolve().parents[1]


def test_generated_rule_docs_are_current() -> None:
    out = REPO / "docs" / "rules"
    stale = [str(p) for p, text in docs.expected(out).items() if not p.exists() or p.read_text("utf-8") != text]
    assert not stale, f"run `python -m mlops_lint.docs` to regenerate: {stale}"
    assert docs.main(["--check", "--out", str(out), "--readme", str(REPO / "README.md")]) == 0


def test_shared_paragraphs_are_expanded_into_every_rule_that_names_them() -> None:
    import re

    import pytest

    from mlops_lint.docparts import PARTS, expand
    from mlops_lint.registry import load_registry

    metas = load_registry().rules
    for name, text in PARTS.items():
        users = [m.code for m in metas if text in m.doc]
        assert len(users) >= 2, (name, users)  # a part one rule uses belongs in that rule
    assert not [m.code for m in metas if re.search(r"^\{\{[a-z-]+\}\}$", m.doc, re.M)]
    assert "GPU005" in [m.code for m in metas if PARTS["placement"] in m.doc]
    with pytest.raises(KeyError):
        expand("intro\n\n{{no-such-part}}\n")
    assert expand("`{{ .Values.image }}` stays") == "`{{ .Values.image }}` stays"


# ---- the README's generated lists (issue 35 item 3) ------------------------------------------

README = REPO / "README.md"


def test_the_readme_lists_are_generated_from_the_registry_the_formats_and_the_schema() -> None:
    text = README.read_text("utf-8")
    assert docs.readme(README) == text, "run `python -m mlops_lint.docs` to regenerate the README's lists"
    assert docs.main(["--check", "--out", str(REPO / "docs" / "rules"), "--readme", str(README)]) == 0


def _region(text: str, name: str) -> str:
    return text.split(f"<!-- {name}:start -->", 1)[1].split(f"<!-- {name}:end -->", 1)[0]


def test_the_rules_table_has_every_rule_once() -> None:
    from mlops_lint.registry import load_registry

    rows = [line for line in _region(README.read_text("utf-8"), "rules-table").splitlines() if line.startswith("| ")]
    codes = [row.split("|")[1].strip() for row in rows[1:]]  # the header's row first
    registered = [m.code for m in load_registry().rules if m.status != "removed"]
    assert codes == registered and len(set(codes)) == len(codes)
    assert {"LNT003", "LNT004"} <= set(codes)  # the hand-kept table had lost them
    lnt001 = next(row for row in rows if row.startswith("| LNT001 |"))
    assert "| info (opt-in) |" in lnt001
    from click.testing import CliRunner

    from mlops_lint.cli import main

    listed = CliRunner().invoke(main, ["rules"]).output.splitlines()  # `mlops-lint rules`: the same registry
    assert [line.split()[:2] for line in listed] == [[c.strip() for c in row.split("|")[1:3]] for row in rows[1:]]


def test_the_formats_and_config_keys_are_those_the_cli_and_the_config_take() -> None:
    import json

    import click

    from mlops_lint import config
    from mlops_lint.cli import main
    from mlops_lint.formats import FORMATS

    text = README.read_text("utf-8")
    option = next(p for p in main.commands["check"].params if p.name == "fmt")
    assert isinstance(option.type, click.Choice) and tuple(option.type.choices) == FORMATS
    assert _region(text, "formats") == ", ".join(f"`{f}`" for f in FORMATS[:-1]) + f" or `{FORMATS[-1]}`"
    schema = json.loads((REPO / "schemas" / "config.schema.json").read_text("utf-8"))["properties"]
    assert set(schema) == set(config._KEYS) | {"fix"}  # `fix: {unsafe: …}` is read apart from the table
    listed = [row.split("|")[1].strip().strip("`") for row in _region(text, "config-keys").splitlines()[3:] if row]
    assert listed == list(schema)
    example = next(block for block in re.findall(r"^```yaml\n(.*?)^```$", text, re.S | re.M)
                   if block.startswith("profile: "))
    shown = re.findall(r"^([a-z-]+):", example, re.M)
    assert set(shown) <= set(schema) and len(shown) >= 15  # the example names only real keys


@pytest.mark.parametrize("edit", [
    lambda t: t.replace("| GPU001 | gpu-limit-missing |", "| GPU001 | gpu-limit-absent |"),  # a row changed
    lambda t: re.sub(r"^\| LNT003 \|.*\n", "", t, flags=re.M),  # a row lost
    lambda t: t.replace("`junit` or `gitlab`<!-- formats:end -->", "`junit`<!-- formats:end -->"),
    lambda t: t.replace("| `unfixable` |", "| `unfixables` |"),
])
def test_a_hand_edit_inside_a_region_is_stale(tmp_path: Path, edit) -> None:
    edited = edit(README.read_text("utf-8"))
    assert edited != README.read_text("utf-8")
    copy = tmp_path / "README.md"
    copy.write_text(edited, encoding="utf-8")
    out = REPO / "docs" / "rules"
    assert docs.main(["--check", "--out", str(out), "--readme", str(copy)]) == 1
    assert docs.main(["--out", str(out), "--readme", str(copy)]) == 0  # regenerates the copy
    assert copy.read_text("utf-8") == README.read_text("utf-8")


def test_a_readme_without_a_region_is_an_error(tmp_path: Path, capsys) -> None:
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text("utf-8").replace("<!-- formats:end -->", ""), encoding="utf-8")
    assert docs.main(["--check", "--out", str(REPO / "docs" / "rules"), "--readme", str(copy)]) == 2
    assert "<!-- formats:start -->" in capsys.readouterr().err
