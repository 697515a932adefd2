"""The fix invariant (issue 33 item 2), checked from outside the fix engine: parsed data before and
after ``--fix`` differ only at the paths the fixes target, and a second ``--fix`` changes nothing.

- a hypothesis property over generated layouts of one GPU Job: a block scalar with every chomping
  and indentation indicator ending the file (with or without a final line break, with trailing
  blank lines), flow and block ``limits``, anchors (on a path the fix does not touch, and on the
  ``limits`` another container aliases), comments, CRLF line breaks, a byte-order mark;
- every real rule's fixture that has a ``.fixed`` golden file (tests/test_fix_golden.py): no
  value the fixture holds is removed, and a value that changes stands where a fix's edit is.

The data are read here with PyYAML's own loader, not with the engine's check
(:mod:`linter.fix.invariant`), so the two cannot share a blind spot.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from strategies import FUZZ

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
RULES = ("GPU001", "GPU004", "RES004")  # safe fixes that add limits, tolerations, a /dev/shm volume


def run(folder: Path, *args: str) -> str:
    import mlops_lint.cli

    cwd = Path.cwd()
    os.chdir(folder)  # not monkeypatch: hypothesis runs many examples in one test function
    try:
        result = CliRunner().invoke(mlops_lint.cli.main, ["check", "--no-cache", "--no-color", *args],
                                    catch_exceptions=False)
    finally:
        os.chdir(cwd)
    return result.stdout


HEADERS = ["|", "|-", "|+", ">", ">-", ">+", "|2", "|2-", "|+2", ">2-", "|-2"]
LINES = ["eth0", "python train.py --lr 0.1", "a: b", "# not a comment", "sleep 10"]


@st.composite
def layouts(draw) -> dict:
    return {
        "limits": draw(st.sampled_from(["flow", "block", "none"])),
        "anchor": draw(st.sampled_from(["none", "labels", "shared-limits"])),
        "comments": draw(st.booleans()),
        "crlf": draw(st.booleans()),
        "bom": draw(st.booleans()),
        "final_newline": draw(st.booleans()),
        "tail": draw(st.sampled_from(["block-scalar", "plain", "flow-env"])),
        "header": draw(st.sampled_from(HEADERS)),
        "lines": draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=3)),
        "more": draw(st.sampled_from([[], ["  indented more"], ["", "after a blank line"]])),
        "blank_after": draw(st.integers(0, 2)),
    }


def job_text(layout: dict) -> str:
    comment = "  # set by the team" if layout["comments"] else ""
    shared = layout["anchor"] == "shared-limits"
    anchor = " &lim" if shared else ""
    out = ["# a training job"] if layout["comments"] else []
    out += ["apiVersion: batch/v1", "kind: Job", "metadata:",
           f"  name: train{comment}", "  namespace: ml"]
    if layout["anchor"] == "labels":
        out.append("  labels: &l {app: train}")
    out += ["spec:", "  template:", "    metadata:",
            "      labels: *l" if layout["anchor"] == "labels" else "      labels: {app: train}",
            "    spec:", "      restartPolicy: Never", "      containers:", "      - name: a",
            "        image: nvcr.io/nvidia/pytorch:24.05-py3", "        resources:",
            f'          requests: {{cpu: "4", nvidia.com/gpu: 1}}{comment}']
    if layout["limits"] == "flow":
        out.append(f'          limits:{anchor} {{cpu: "4", memory: 16Gi}}')
    elif layout["limits"] == "block" or shared:
        out += [f"          limits:{anchor}", '            cpu: "4"', "            memory: 16Gi"]
    if shared:
        out += ["      - name: b", "        image: nvcr.io/nvidia/pytorch:24.05-py3", "        resources:",
                '          requests: {cpu: "4"}', "          limits: *lim"]
    if layout["tail"] == "flow-env":
        out.append('        env: [{name: X, value: "eth0"}]')
    else:
        out += ["        env:", "        - name: X"]
        if layout["tail"] == "plain":
            out.append("          value: eth0")
        else:
            out.append(f"          value: {layout['header']}{comment}")
            out += ["            " + line for line in layout["lines"]]
            out += [("            " + line) if line else "" for line in layout["more"]]
            if layout["final_newline"]:
                out += [""] * layout["blank_after"]
    text = "\n".join(out)
    if layout["final_newline"]:
        text += "\n"
    if layout["crlf"]:
        text = text.replace("\n", "\r\n")
    return ("\ufeff" if layout["bom"] else "") + text


def load(data: bytes) -> list:
    return list(yaml.safe_load_all(data.decode("utf-8-sig")))


ALLOWED_NEW = {("spec", "template", "spec", "tolerations"), ("spec", "template", "spec", "volumes"),
               ("spec", "template", "spec", "containers", 0, "volumeMounts"),
               ("spec", "template", "spec", "containers", 1, "volumeMounts")}


def without_new(after: object, before: object, path: tuple, allowed: set[tuple]) -> object:
    """``after`` with the keys it gained at ``allowed`` paths removed (compared with ``before``)."""
    if isinstance(after, dict) and isinstance(before, dict):
        return {k: without_new(v, before[k], path + (k,), allowed) for k, v in after.items()
                if k in before or path + (k,) not in allowed}
    if isinstance(after, list) and isinstance(before, list) and len(after) == len(before):
        return [without_new(a, b, path + (i,), allowed) for i, (a, b) in enumerate(zip(after, before))]
    return after


@FUZZ
@given(layouts())
def test_a_fix_changes_the_data_only_where_it_targets(tmp_path_factory, layout: dict) -> None:
    folder = tmp_path_factory.mktemp("layout")
    (folder / ".git").mkdir()
    job = folder / "job.yaml"
    original = job_text(layout).encode("utf-8")
    job.write_bytes(original)
    try:
        before = load(original)
    except yaml.YAMLError:
        return  # a generated layout YAML itself refuses (an indentation indicator too small): nothing to fix
    out = run(folder, "--fix", "--select", ",".join(RULES), "job.yaml")
    fixed = job.read_bytes()
    after = load(fixed)
    assert "not applied" not in out, out  # the resolver's own care suffices: the engine's check dropped nothing
    shared = layout["anchor"] == "shared-limits"
    allowed = set(ALLOWED_NEW)
    limits = ("spec", "template", "spec", "containers", 0, "resources", "limits")
    if not shared:
        allowed.add(limits + ("nvidia.com/gpu",) if layout["limits"] != "none" else limits)
        assert after[0]["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == 1
    assert [without_new(a, b, (), allowed) for a, b in zip(after, before)] == before
    assert len(after) == len(before)
    # the bytes around the edits keep their style
    assert fixed.startswith(b"\xef\xbb\xbf") == layout["bom"]
    assert (b"\r\n" in fixed) == layout["crlf"] and (layout["crlf"] or b"\r" not in fixed)
    again = run(folder, "--fix", "--select", ",".join(RULES), "job.yaml")
    assert job.read_bytes() == fixed, again


# -- every fixable rule's fixtures


def _yaml_goldens() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*.fixed") if p.name.endswith((".yaml.fixed", ".yml.fixed", ".json.fixed")))


def _rule_of(path: Path) -> str:
    import re

    for folder in path.parents:
        if re.fullmatch(r"[A-Z]{2,4}[0-9]{3}", folder.name):
            return folder.name
    raise AssertionError(path)


def _scalars(node: object, path: tuple, out: dict) -> None:
    """Every scalar node under ``node`` by path, with its line (1-based): first occurrences."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            _scalars(value, path + (key.value if isinstance(key, yaml.ScalarNode) else id(key),), out)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _scalars(item, path + (index,), out)
    else:
        out.setdefault(path, (node.tag, node.value, node.start_mark.line + 1, node.end_mark.line + 1))


@pytest.mark.parametrize("golden", _yaml_goldens(), ids=lambda p: str(p.relative_to(FIXTURES)))
def test_a_rule_fixture_keeps_every_value_its_fixes_do_not_edit(golden: Path, tmp_path: Path) -> None:
    source = golden.with_name(golden.name[: -len(".fixed")])
    rule = _rule_of(golden)
    for sibling in source.parent.iterdir():
        if sibling.is_file() and not sibling.name.endswith(".fixed"):
            shutil.copy(sibling, tmp_path / sibling.name)
    (tmp_path / ".git").mkdir()
    target = tmp_path / source.name
    report = json.loads(run(tmp_path, "--format", "json", "--unsafe-fixes", "--select", rule, source.name))
    lines = {line for finding in report["findings"] if finding["autofix"]
             for edit in finding["autofix"]["edits"] if edit["path"] == source.name
             for line in range(edit["line"], edit["end_line"] + 1)}
    out = run(tmp_path, "--fix", "--unsafe-fixes", "--select", rule, source.name)
    assert "not applied" not in out, out
    text_before, text_after = source.read_text(encoding="utf-8-sig"), target.read_text(encoding="utf-8-sig")
    assert text_after == golden.read_text(encoding="utf-8-sig")  # the golden file is what --fix makes
    old, new = {}, {}
    data_before, data_after = text_before, text_after
    if source.suffix == ".json":  # an ARM template's whole-line // comments (linter.sources.arm blanks them too)
        from mlops_lint.sources.arm import _without_line_comments

        data_before, data_after = _without_line_comments(text_before), _without_line_comments(text_after)
    for index, node in enumerate(yaml.compose_all(data_before, Loader=yaml.SafeLoader)):
        _scalars(node, (index,), old)
    for index, node in enumerate(yaml.compose_all(data_after, Loader=yaml.SafeLoader)):
        _scalars(node, (index,), new)
    for path, (tag, value, first, last) in old.items():
        if path in new and new[path][:2] == (tag, value):
            continue
        # a changed or removed value: only where an edit of the rule's fixes stands (first pass)
        assert lines & set(range(first, last + 1)), f"{path} changed from {value!r} ({rule}, line {first})"
    out = run(tmp_path, "--fix", "--unsafe-fixes", "--select", rule, source.name)
    assert target.read_text(encoding="utf-8-sig") == text_after, out  # a second --fix changes nothing
