"""linter.fix.resolve and linter.fix.apply: a rule's Plan becomes text edits at exact spans, in the
file's own style, and applying them changes no byte outside them.

Each case compares the fixed text byte for byte with what a careful person would write; the
property tests at the end generate manifests (indentation 2 and 4, sequences indented or not,
flow and block, comments, CRLF, several documents) and intents, and check that the result parses,
holds exactly the data intended, keeps every byte outside the edits, and that a second resolve
changes nothing.
"""

from __future__ import annotations

import re
import textwrap

import pytest
import yaml

from mlops_lint.fix import AppendItem, Edit, Fix, Plan, Replace, SetKey
from mlops_lint.fix.apply import OverlapError, apply_edits, apply_fixes, select_non_overlapping
from mlops_lint.fix.resolve import key_text, resolve, scalar_text
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, dig, frozen
from mlops_lint.sources.yaml_k8s import load_text


def bodies(text: str) -> list:
    doc = load_text(text, "t.yaml")
    assert not doc.errors, doc.errors
    return [obj.body for obj in doc.objects]


def fixed(text: str, *make, expect_edits: int | None = None) -> str | None:
    """``text`` after resolving and applying the intents ``make`` builds from its objects' bodies;
    None when resolve gives no fix."""
    found = bodies(text)
    intents = [m(found) for m in make]
    fix = resolve(Plan.safe_fix("t", *intents), text, "t.yaml")
    if fix is None:
        return None
    assert all(edit.path == "t.yaml" for edit in fix.edits)
    if expect_edits is not None:
        assert len(fix.edits) == expect_edits
    out = apply_edits(text, fix.edits)
    list(yaml.safe_load_all(out))  # parses
    return out


def container(i: int = 0, doc: int = 0):
    return lambda b: b[doc]["spec"]["containers"][i]


POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: p  # the pod
spec:
  containers:
  - name: c
    image: "repo/x:1"
    resources:
      requests:
        nvidia.com/gpu: 1
  # about volumes
  volumes:
  - name: v
"""


# ---------------------------------------------------------------------------------------------
# SetKey, block style


def test_gpu_limit_added_beside_the_request_at_the_keys_column() -> None:
    out = fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0]["resources"], ("limits", "nvidia.com/gpu"), 1))
    assert out == POD.replace(
        "        nvidia.com/gpu: 1\n",
        "        nvidia.com/gpu: 1\n      limits:\n        nvidia.com/gpu: 1\n")


def test_sequence_item_mapping_gets_keys_after_its_dash_and_before_a_comment_between_keys() -> None:
    out = fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0], ("securityContext", "allowPrivilegeEscalation"),
                                      False))
    assert out == POD.replace(
        "  # about volumes\n",
        "    securityContext:\n      allowPrivilegeEscalation: false\n  # about volumes\n")


@pytest.mark.parametrize("values,quoted", [
    ("a: 'x'\nb: 'y'\nc: \"z\"\n", "'7'"),   # more single quotes
    ("a: \"x\"\nb: \"y\"\nc: 'z'\n", '"7"'),  # more double quotes (Helm-rendered and kubectl-edited files)
    ("a: x\nb: [\"y\", \"z\"]\n", '"7"'),    # flow items count too
    ("a: x\n", "'7'"),                       # none: PyYAML's single quote
])
def test_a_string_that_needs_quotes_is_quoted_as_the_file_quotes_its_strings(values: str, quoted: str) -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n" + textwrap.indent(values, "  ")
    out = fixed(text, lambda b: SetKey(b[0]["data"], ("n",), "7"))
    assert out == text + f"  n: {quoted}\n"
    assert fixed(text, lambda b: SetKey(b[0]["data"], ("n",), "plain")) == text + "  n: plain\n"  # no quotes needed
    assert fixed(text, lambda b: SetKey(b[0]["data"], ("n",), "two\nlines")) == text + '  n: "two\\nlines"\n'


def test_existing_scalar_replaced_in_place_keeping_double_quotes_and_line_comment() -> None:
    assert fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0], ("image",), "repo/x:2")) == \
        POD.replace('"repo/x:1"', '"repo/x:2"')
    # a string that needs quotes takes the file's: POD's one quoted value is double-quoted
    assert fixed(POD, lambda b: SetKey(b[0]["metadata"], ("name",), "on")) == POD.replace("name: p  #", 'name: "on"  #')
    single = POD.replace('"repo/x:1"', "'repo/x:1'")
    assert fixed(single, lambda b: SetKey(b[0]["metadata"], ("name",), "on")) == \
        single.replace("name: p  #", "name: 'on'  #")
    assert fixed(single, lambda b: SetKey(b[0]["spec"]["containers"][0], ("image",), "it's")) == \
        single.replace("'repo/x:1'", "'it''s'")
    # a quoted number replaced by a number is plain (the type is the value's, not the old text's)
    quoted = "apiVersion: apps/v1\nkind: Deployment\nspec:\n  replicas: \"3\"\n"
    assert fixed(quoted, lambda b: SetKey(b[0]["spec"], ("replicas",), 2)) == quoted.replace('"3"', "2")


def test_a_key_after_the_last_entry_on_a_line_with_a_comment_keeps_the_comment_on_its_line() -> None:
    out = fixed(POD, lambda b: SetKey(b[0]["metadata"], ("namespace",), "ml"))
    assert out == POD.replace("  name: p  # the pod\n", "  name: p  # the pod\n  namespace: ml\n")


def test_indentation_four_and_indented_sequences_are_detected() -> None:
    text = """\
apiVersion: batch/v1
kind: Job
spec:
    template:
        spec:
            containers:
                -   name: c
                    image: x
"""
    out = fixed(text, lambda b: SetKey(b[0]["spec"]["template"]["spec"]["containers"][0],
                                       ("securityContext", "capabilities", "drop"), ["ALL"]))
    assert out == text + """\
                    securityContext:
                        capabilities:
                            drop:
                                - ALL
"""
    out = fixed(text, lambda b: SetKey(b[0]["spec"], ("suspend",), True))
    assert out == text + "    suspend: true\n"


def test_block_scalars_before_the_insertion_point_keep_their_text() -> None:
    text = """\
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: c
    command: |
      echo hi
        indented # not a comment

    args: |+
      kept

  restartPolicy: Never
"""
    out = fixed(text, lambda b: SetKey(b[0]["spec"]["containers"][0], ("stdin",), True))
    assert out == text.replace("      kept\n\n", "      kept\n\n    stdin: true\n")
    before = bodies(text)[0]["spec"]["containers"][0]
    after = bodies(out)[0]["spec"]["containers"][0]
    assert (after["command"], after["args"]) == (before["command"], before["args"]) == \
        ("echo hi\n  indented # not a comment\n", "kept\n\n")
    clip = text.replace("    args: |+\n      kept\n\n", "")
    out = fixed(clip, lambda b: SetKey(b[0]["spec"]["containers"][0], ("stdin",), True))
    assert out == clip.replace("not a comment\n", "not a comment\n    stdin: true\n")


def test_null_value_is_filled_with_a_block() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  securityContext:\n  containers: []\n"
    out = fixed(text, lambda b: SetKey(b[0]["spec"], ("securityContext", "runAsNonRoot"), True))
    assert out == "apiVersion: v1\nkind: Pod\nspec:\n  securityContext:\n    runAsNonRoot: true\n  containers: []\n"
    commented = text.replace("securityContext:\n", "securityContext: ~  # todo\n")
    out = fixed(commented, lambda b: SetKey(b[0]["spec"], ("securityContext", "runAsNonRoot"), True))
    assert out == commented.replace(" ~  # todo\n", "  # todo\n    runAsNonRoot: true\n")


def test_empty_flow_mapping_under_a_block_key_becomes_a_block() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  securityContext: {}\n  hostNetwork: false\n"
    out = fixed(text, lambda b: SetKey(b[0]["spec"], ("securityContext", "runAsNonRoot"), True))
    assert out == "apiVersion: v1\nkind: Pod\nspec:\n  securityContext:\n    runAsNonRoot: true\n  hostNetwork: false\n"


def test_a_dict_value_over_an_existing_mapping_is_merged_key_by_key() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  securityContext:\n    runAsUser: 1000\n"
    out = fixed(text, lambda b: SetKey(b[0]["spec"], ("securityContext",), {"runAsUser": 1000, "runAsNonRoot": True}))
    assert out == text + "    runAsNonRoot: true\n"


def test_several_intents_under_one_mapping_share_one_fragment() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n"
    out = fixed(text,
                lambda b: SetKey(b[0]["spec"]["containers"][0], ("resources", "limits", "nvidia.com/gpu"), 1),
                lambda b: SetKey(b[0]["spec"]["containers"][0], ("resources", "requests", "nvidia.com/gpu"), 1),
                lambda b: SetKey(b[0]["spec"], ("restartPolicy",), "Never"),
                expect_edits=1)
    assert out == text + ("    resources:\n      limits:\n        nvidia.com/gpu: 1\n      requests:\n"
                          "        nvidia.com/gpu: 1\n  restartPolicy: Never\n")


def test_documents_separated_by_dashes_and_a_list_item() -> None:
    text = """\
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: a
---
apiVersion: v1
kind: List
items:
- apiVersion: batch/v1
  kind: Job
  spec:
    parallelism: 1
---
apiVersion: v1
kind: ConfigMap
"""
    out = fixed(text, lambda b: SetKey(b[1]["spec"], ("suspend",), True))
    assert out == text.replace("    parallelism: 1\n", "    parallelism: 1\n    suspend: true\n")
    out = fixed(text, lambda b: SetKey(b[0], ("metadata", "name"), "p"))
    assert out == text.replace("  - name: a\n", "  - name: a\nmetadata:\n  name: p\n", 1)


def test_crlf_is_kept_and_new_lines_use_it() -> None:
    text = POD.replace("\n", "\r\n")
    out = fixed(text, lambda b: SetKey(b[0]["metadata"], ("namespace",), "ml"))
    assert out == text.replace("  name: p  # the pod\r\n", "  name: p  # the pod\r\n  namespace: ml\r\n")
    assert "\n" not in out.replace("\r\n", "")


def test_a_file_without_a_final_line_break_stays_without_one() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  hostNetwork: true"
    assert fixed(text, lambda b: SetKey(b[0]["spec"], ("hostNetwork",), False)) == text.replace("true", "false")
    assert fixed(text, lambda b: SetKey(b[0]["spec"], ("hostPID",), False)) == text + "\n  hostPID: false"


# ---------------------------------------------------------------------------------------------
# Flow style and JSON


def test_flow_mapping_gets_the_entry_before_its_brace() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: x}}\n"
    out = fixed(text, lambda b: SetKey(b[0]["metadata"], ("labels", "team"), "ml"),
                lambda b: SetKey(b[0]["metadata"], ("annotations", "a"), "x, y"))
    assert out == "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {app: x, team: ml}, annotations: {a: 'x, y'}}\n"
    empty = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {}}\n"
    assert fixed(empty, lambda b: SetKey(b[0]["metadata"], ("labels", "team"), "ml")) == \
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, labels: {team: ml}}\n"


def test_json_gets_json_one_entry_per_line_as_it_is_written() -> None:
    text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "spec": {\n    "containers": [{"name": "c"}]\n  }\n}\n'
    out = fixed(text, lambda b: SetKey(b[0]["spec"], ("hostNetwork",), False),
                lambda b: SetKey(b[0]["spec"]["containers"][0], ("resources", "limits", "cpu"), "1"))
    assert out == ('{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "spec": {\n'
                   '    "containers": [{"name": "c", "resources": {"limits": {"cpu": "1"}}}],\n'
                   '    "hostNetwork": false\n  }\n}\n')
    import json
    assert json.loads(out)["spec"]["hostNetwork"] is False


# ---------------------------------------------------------------------------------------------
# AppendItem


def test_append_to_block_sequence_with_its_dash_column() -> None:
    text = """\
apiVersion: v1
kind: Pod
spec:
  containers:
    - name: c
      env:
        - name: A
          value: "1"
      image: x
"""
    out = fixed(text, lambda b: AppendItem(b[0]["spec"]["containers"][0], "env",
                                           {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"}))
    assert out == text.replace('          value: "1"\n', '          value: "1"\n'
                               "        - name: TORCH_NCCL_ASYNC_ERROR_HANDLING\n          value: \"1\"\n")  # quoted as the file quotes


def test_append_creates_the_key_and_keeps_flow_sequences_flow() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - name: c\n    args: [a, b]\n"
    out = fixed(text, lambda b: AppendItem(b[0]["spec"]["containers"][0], "args", "--x=1"),
                lambda b: AppendItem(b[0]["spec"]["containers"][0], "env", {"name": "A", "value": "on"}))
    assert out == text.replace("[a, b]\n", "[a, b, --x=1]\n    env:\n    - name: A\n      value: 'on'\n")
    empty = "apiVersion: v1\nkind: Pod\nspec:\n  tolerations: []\n"
    assert fixed(empty, lambda b: AppendItem(b[0]["spec"], "tolerations", {"operator": "Exists"})) == \
        "apiVersion: v1\nkind: Pod\nspec:\n  tolerations:\n  - operator: Exists\n"


def test_append_of_an_item_already_there_is_no_fix() -> None:
    text = "apiVersion: v1\nkind: Pod\nspec:\n  tolerations:\n  - operator: Exists\n"
    assert fixed(text, lambda b: AppendItem(b[0]["spec"], "tolerations", {"operator": "Exists"})) is None


# ---------------------------------------------------------------------------------------------
# Replace, validation, overlaps


def test_replace_is_a_raw_edit_inside_the_text_only() -> None:
    text = "FROM python:3.11\nRUN pip install x\n"
    fix = resolve(Plan.safe_fix("t", Replace(Span(2, 17, 2, 17), "--no-cache-dir ")), text, "Dockerfile")
    assert fix == Fix("t", (Edit("Dockerfile", Span(2, 17, 2, 17), "--no-cache-dir "),))
    assert apply_edits(text, fix.edits) == "FROM python:3.11\nRUN pip install --no-cache-dir x\n"
    assert resolve(Plan.safe_fix("t", Replace(Span(3, 5, 3, 9), "x")), text, "Dockerfile") is None
    assert resolve(Plan.safe_fix("t", Replace(Span(1, 30, 1, 31), "x")), text, "Dockerfile") is None
    assert resolve(Plan.safe_fix("t", Replace(Span(2, 5, 1, 1), "x")), text, "Dockerfile") is None


def test_equal_value_already_set_is_no_fix() -> None:
    assert fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0], ("resources", "requests", "nvidia.com/gpu"), 1)) \
        is None
    # 1 and "1" and true are three values
    out = fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0], ("resources", "requests", "nvidia.com/gpu"), "1"))
    assert out == POD.replace("nvidia.com/gpu: 1", 'nvidia.com/gpu: "1"')  # POD quotes with "


def test_nodes_whose_spans_do_not_match_the_text_give_no_fix() -> None:
    body = bodies(POD)[0]
    built = YMap()  # a view put together in memory: default spans
    built["name"] = "c"
    assert resolve(Plan.safe_fix("t", SetKey(built, ("x",), 1)), POD, "t.yaml") is None
    # the node of another text (a kustomize build's output, another file)
    other = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: q\n"
    assert resolve(Plan.safe_fix("t", SetKey(bodies(other)[0]["metadata"], ("x",), 1)), POD, "t.yaml") is None
    # a view merging two mappings: keys from both, spans from both
    merged = YMap(body["metadata"].span)
    for source in (body["metadata"], body["spec"]["containers"][0]):
        for key in source:
            merged[key] = source[key]
            merged.kspans[key], merged.vspans[key] = source.kspans[key], source.vspans[key]
    assert resolve(Plan.safe_fix("t", SetKey(merged, ("x",), 1)), POD, "t.yaml") is None
    # a text changed since the nodes were read
    assert resolve(Plan.safe_fix("t", SetKey(body["metadata"], ("x",), 1)), POD.replace("name: p", "nom: p"),
                   "t.yaml") is None


def test_aliases_and_merge_keys_are_not_followed() -> None:
    text = """\
apiVersion: v1
kind: Pod
metadata:
  labels: &l {app: x}
  annotations: *l
spec:
  base: &b
    a: 1
  other:
    <<: *b
    c: 2
"""
    assert fixed(text, lambda b: SetKey(b[0]["metadata"], ("annotations", "x"), "y")) is None
    assert fixed(text, lambda b: SetKey(b[0]["spec"]["other"], ("d",), 3)) is None
    assert fixed(text, lambda b: SetKey(b[0]["metadata"], ("labels",), "z")) is None  # would drop the anchor
    assert fixed(text, lambda b: SetKey(b[0], ("metadata",), "z")) is None  # would drop the anchor inside it
    # a scalar alias is a value like another: the entry after it, or the alias itself replaced
    scalar = "apiVersion: v1\nkind: Pod\nx: &p /tmp\nspec:\n  path: *p\n"
    assert fixed(scalar, lambda b: SetKey(b[0]["spec"], ("b",), 1)) == scalar + "  b: 1\n"
    assert fixed(scalar, lambda b: SetKey(b[0]["spec"], ("path",), "/x")) == scalar.replace("*p", "/x")
    assert fixed(scalar.replace("path: *p", "path: *p  # c"), lambda b: SetKey(b[0]["spec"], ("b",), 1)) == \
        scalar.replace("path: *p", "path: *p  # c") + "  b: 1\n"
    # the anchored mapping an alias names takes no key: every path that aliases it would get it
    # too (issue 32, item 13: a GPU limit given to another container); an anchor no alias names does
    assert fixed(text, lambda b: SetKey(b[0]["spec"]["base"], ("e",), 5)) is None
    assert fixed(text, lambda b: SetKey(b[0]["metadata"]["labels"], ("e",), "5")) is None
    lone = text.replace("    <<: *b\n", "").replace("  annotations: *l\n", "")
    assert fixed(lone, lambda b: SetKey(b[0]["spec"]["base"], ("e",), 5)) == lone.replace("    a: 1\n",
                                                                                          "    a: 1\n    e: 5\n")


def test_a_scalar_in_the_way_or_conflicting_intents_give_no_fix() -> None:
    assert fixed(POD, lambda b: SetKey(b[0]["metadata"], ("name", "x"), 1)) is None
    assert fixed(POD, lambda b: SetKey(b[0]["metadata"], ("ns",), "a"), lambda b: SetKey(b[0]["metadata"], ("ns",), "b")) \
        is None
    assert fixed(POD, lambda b: SetKey(b[0]["spec"]["containers"][0], ("image",), "a"),
                 lambda b: Replace(b[0]["spec"]["containers"][0].vspans["image"], "b")) is None


def test_lone_cr_line_breaks_give_no_fix_for_nodes() -> None:
    text = 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: "a\rb"\n'
    assert fixed(text, lambda b: SetKey(b[0]["metadata"], ("x",), 1)) is None


# ---------------------------------------------------------------------------------------------
# Scalars


@pytest.mark.parametrize(("value", "block", "flow"), [
    ("plain", "plain", "plain"),
    ("on", "'on'", "'on'"),
    ("yes", "'yes'", "'yes'"),
    ("true", "'true'", "'true'"),
    ("null", "'null'", "'null'"),
    ("~", "'~'", "'~'"),
    ("1", "'1'", "'1'"),
    ("0777", "'0777'", "'0777'"),
    ("1e3", "'1e3'", "'1e3'"),
    ("1_000", "'1_000'", "'1_000'"),
    ("2024-01-01", "'2024-01-01'", "'2024-01-01'"),
    ("", "''", "''"),
    ("a: b", "'a: b'", "'a: b'"),
    ("a #b", "'a #b'", "'a #b'"),
    ("#a", "'#a'", "'#a'"),
    ("- a", "'- a'", "'- a'"),
    ("a, b", "a, b", "'a, b'"),
    ("{x", "'{x'", "'{x'"),
    ("it's", "it's", "it's"),
    ("a\nb", '"a\\nb"', '"a\\nb"'),
    ("名前", "名前", "名前"),
    (1, "1", "1"),
    (True, "true", "true"),
    (False, "false", "false"),
    (None, "null", "null"),
    (0.5, "0.5", "0.5"),
])
def test_scalar_quoting(value, block, flow) -> None:
    assert scalar_text(value) == block
    assert scalar_text(value, True) == flow
    for text, context in ((block, "k: {}\n"), (flow, "{{k: {}}}\n")):
        read = yaml.safe_load(context.format(text))["k"]
        assert frozen(read) == frozen(value)
        assert frozen(load_text("apiVersion: v1\nkind: X\nk: " + text + "\n", "t.yaml").objects[0].body["k"]) \
            == frozen(value)


def test_key_quoting() -> None:
    assert key_text("nvidia.com/gpu") == "nvidia.com/gpu"
    assert key_text("on") == "'on'"
    assert key_text("a: b") == "'a: b'"
    assert key_text("a,b", True) == "'a,b'"


# ---------------------------------------------------------------------------------------------
# apply


def test_apply_converts_line_breaks_keeps_bom_and_refuses_overlaps() -> None:
    text = "\ufeffa: 1\r\nb: 2\r\n"
    edits = [Edit("f", Span(2, 5, 2, 5), "\nc: 3"), Edit("f", Span(1, 4, 1, 5), "9")]
    assert apply_edits(text, edits) == "\ufeffa: 9\r\nb: 2\r\nc: 3\r\n"
    with pytest.raises(OverlapError):
        apply_edits(text, [Edit("f", Span(1, 1, 1, 5), "x"), Edit("f", Span(1, 4, 2, 1), "y")])
    with pytest.raises(OverlapError):
        apply_edits(text, [Edit("f", Span(1, 1, 1, 5), "x"), Edit("f", Span(1, 3, 1, 3), "y")])
    with pytest.raises(OverlapError):
        apply_edits(text, [Edit("f", Span(5, 1, 5, 1), "x")])
    # insertions at one point keep the order given; a replacement and an insertion may touch
    assert apply_edits("ab", [Edit("f", Span(1, 2, 1, 2), "1"), Edit("f", Span(1, 2, 1, 2), "2"),
                              Edit("f", Span(1, 1, 1, 2), "A")]) == "A12b"


def test_select_non_overlapping_defers_whole_fixes() -> None:
    one = Fix("one", (Edit("f", Span(1, 1, 1, 3), "x"), Edit("f", Span(3, 1, 3, 1), "i")))
    two = Fix("two", (Edit("f", Span(1, 2, 1, 4), "y"),))  # overlaps one
    three = Fix("three", (Edit("f", Span(3, 1, 3, 1), "j"),))  # inserts where one inserts
    four = Fix("four", (Edit("f", Span(1, 3, 1, 5), "z"), Edit("g", Span(1, 1, 1, 3), "w")))  # adjacent: fine
    applied, deferred = select_non_overlapping([one, two, three, four])
    assert [f.title for f in applied] == ["one", "four"]
    assert [f.title for f in deferred] == ["two", "three"]
    text, applied, deferred = apply_fixes("abcdef\n\nxyz\n", "f", [one, two, three, four])
    assert text == "xzef\n\nixyz\n" and len(applied) == 2 and len(deferred) == 2


def test_resolved_fix_edits_never_overlap_and_are_sorted() -> None:
    found = bodies(POD)
    c = found[0]["spec"]["containers"][0]
    fix = resolve(Plan.safe_fix("t", SetKey(c, ("image",), "y"), SetKey(c, ("stdin",), True),
                                SetKey(found[0]["metadata"], ("namespace",), "n")), POD, "t.yaml")
    spans = [e.span for e in fix.edits]
    assert spans == sorted(spans)
    assert select_non_overlapping([fix]) == ([fix], [])
    assert dig(bodies(apply_edits(POD, fix.edits))[0], "spec", "containers", 0, "stdin") is True


# ---------------------------------------------------------------------------------------------
# Properties: generated manifests and intents

from hypothesis import assume, example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from strategies import FUZZ  # noqa: E402


class _FlowMap(dict):
    pass


class _FlowSeq(list):
    pass


class _Literal(str):
    pass


def _plain_data(value):
    if isinstance(value, dict):
        return {k: _plain_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain_data(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


KEYS = st.sampled_from(["name", "image", "a", "b-c", "nvidia.com/gpu", "on", "x y", "k: v", "#k", "1", "value"])
SCALARS = st.sampled_from([0, 1, -5, 10**20, True, False, None, 1.5, "x", "on", "1", "1e3", "", "a: b", "a #b",
                           "x, y", "- a", "名前", "a\nb", "it's", '"q"', "{x}", "[y]", "* z", "&a", "!t", "%p", "@u",
                           "2024-01-01", "0o17", "null", "~", " lead", "trail ", "a\tb"])
VALUES = st.one_of(SCALARS, st.dictionaries(KEYS, SCALARS, min_size=1, max_size=2),
                   st.lists(st.one_of(SCALARS, st.dictionaries(KEYS, SCALARS, min_size=1, max_size=2)),
                            min_size=1, max_size=2))


@st.composite
def _styled(draw, value, flow_ok=True):
    """``value`` with some of its mappings and sequences marked flow and some strings literal."""
    if isinstance(value, dict):
        inner = {k: draw(_styled(v)) for k, v in value.items()}
        return _FlowMap(inner) if flow_ok and draw(st.integers(0, 5)) == 0 else inner
    if isinstance(value, list):
        inner = [draw(_styled(v)) for v in value]
        return _FlowSeq(inner) if flow_ok and draw(st.integers(0, 5)) == 0 else inner
    return value


@st.composite
def _container(draw):
    c = {"name": draw(st.sampled_from(["c", "trainer", "on"])), "image": draw(st.sampled_from(["x:1", "repo/y@sha"]))}
    if draw(st.booleans()):
        c["env"] = [{"name": "A", "value": draw(SCALARS.filter(lambda s: isinstance(s, str)))}]
    if draw(st.booleans()):
        c["resources"] = draw(st.sampled_from([{"requests": {"nvidia.com/gpu": 1}}, {"limits": {"cpu": "1"}}, {}, None]))
    if draw(st.booleans()):
        c["command"] = _Literal(draw(st.sampled_from(["echo a\n  b\n", "run\n\n", "x\n  # not a comment\n"])))
    if draw(st.booleans()):
        c["args"] = draw(st.sampled_from([["--a", "b"], [], ["x: y"]]))
    if draw(st.booleans()):
        c["securityContext"] = draw(st.sampled_from([None, {}, {"runAsUser": 1000}]))
    return c


@st.composite
def _object(draw):
    spec = {"containers": [draw(_container()) for _ in range(draw(st.integers(1, 2)))]}
    if draw(st.booleans()):
        spec["restartPolicy"] = "Never"
    if draw(st.booleans()):
        spec["extra"] = draw(VALUES)
    meta = {"name": draw(st.sampled_from(["p", "job-1", "yes"]))}
    if draw(st.booleans()):
        meta["labels"] = {"app": "x", "tier": draw(SCALARS.filter(lambda s: isinstance(s, str)))}
    if draw(st.booleans()):
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": {"spec": spec}}}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def _dumper(indent_sequences: bool):
    class Dumper(yaml.SafeDumper):
        def increase_indent(self, flow=False, indentless=False):
            return super().increase_indent(flow, False if indent_sequences else indentless)

    Dumper.add_representer(_FlowMap, lambda d, v: d.represent_mapping("tag:yaml.org,2002:map", v, flow_style=True))
    Dumper.add_representer(_FlowSeq, lambda d, v: d.represent_sequence("tag:yaml.org,2002:seq", v, flow_style=True))
    Dumper.add_representer(_Literal, lambda d, v: d.represent_scalar("tag:yaml.org,2002:str", v, style="|"))
    return Dumper


@st.composite
def manifest_texts(draw):
    """(text, plain data of each document): 1-3 documents, indented 2 or 4, sequences indented or
    not, some parts (or all) in flow style, literal blocks, comments at line ends and between
    lines, nulls written as nothing, JSON, LF or CRLF."""
    objects = [draw(_object()) for _ in range(draw(st.integers(1, 3)))]
    indent = draw(st.sampled_from([2, 4]))
    dumper = _dumper(draw(st.booleans()))
    all_flow = draw(st.integers(0, 7)) == 0
    as_json = not all_flow and draw(st.integers(0, 7)) == 0
    pieces = []
    for obj in objects:
        if as_json:
            import json

            pieces.append(json.dumps(_plain_data(obj), indent=draw(st.sampled_from([None, 2, 4])),
                                     ensure_ascii=False) + "\n")
            continue
        styled = draw(_styled(obj)) if not all_flow else obj
        pieces.append(yaml.dump(_plain_data(styled) if all_flow else styled, Dumper=dumper, indent=indent,
                                sort_keys=False, allow_unicode=True, default_flow_style=all_flow, width=60))
    if draw(st.booleans()):  # `key: null` written as `key:`
        pieces = [piece.replace(": null\n", ":\n") for piece in pieces]
    text = "---\n".join(pieces)
    plain = [_plain_data(obj) for obj in objects]
    assert list(yaml.safe_load_all(text)) == list(yaml.safe_load_all(yaml.safe_dump_all(plain)))
    lines = text.split("\n")
    for _ in range(draw(st.integers(0, 6))):
        at = draw(st.integers(0, max(len(lines) - 2, 0)))
        candidate = list(lines)
        if draw(st.booleans()):
            candidate[at] = candidate[at] + "  # note: x"
        else:
            pad = len(candidate[at]) - len(candidate[at].lstrip(" "))
            candidate.insert(at, " " * pad + "# between")
        try:
            same = list(yaml.safe_load_all("\n".join(candidate))) == list(yaml.safe_load_all(text))
        except yaml.YAMLError:
            same = False
        if same:
            lines = candidate
            text = "\n".join(lines)
    if draw(st.booleans()):
        text = text.replace("\n", "\r\n")
    return text


def _maps(node, prefix=()):
    """Paths of every mapping in a parsed body."""
    if isinstance(node, dict):
        yield prefix
        for key, value in node.items():
            yield from _maps(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _maps(value, prefix + (index,))


class _InTheWay(Exception):
    pass


def _expect_set(target: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        if key not in target or target[key] is None or target[key] == {}:
            target[key] = {}
        elif not isinstance(target[key], dict):
            raise _InTheWay
        target = target[key]
    key = path[-1]
    if isinstance(value, dict) and value and isinstance(target.get(key), dict):
        for sub, sub_value in value.items():
            _expect_set(target[key], (sub,), sub_value)
    else:
        target[key] = value


def _expect_append(target: dict, key: str, item) -> None:
    if target.get(key) is None:
        target[key] = [item]
    elif isinstance(target[key], list):
        if all(frozen(item) != frozen(have) for have in target[key]):
            target[key].append(item)
    else:
        raise _InTheWay


@st.composite
def intents(draw, text: str):
    """1-2 (document, mapping path, kind, key path or key, value) picked in the parsed text."""
    found = bodies(text)
    chosen = []
    for _ in range(draw(st.integers(1, 2))):
        doc = draw(st.integers(0, len(found) - 1))
        paths = list(_maps(found[doc]))
        where = draw(st.sampled_from(paths))
        node = dig(found[doc], *where)
        existing = [k for k in node if not (where == () and k in ("apiVersion", "kind"))]
        pick_key = st.one_of(KEYS, st.sampled_from(existing)) if existing else KEYS
        if draw(st.integers(0, 2)):
            keys = tuple(draw(st.lists(pick_key, min_size=1, max_size=3)))
            assume(not (where == () and keys[0] in ("apiVersion", "kind")))  # would unmake the object
            chosen.append((doc, where, "set", keys, draw(VALUES)))
        else:
            chosen.append((doc, where, "append", draw(pick_key), draw(st.one_of(SCALARS, st.dictionaries(
                KEYS, SCALARS, min_size=1, max_size=2)))))
    return chosen


def _build(found, chosen):
    built = []
    for doc, where, kind, keys, value in chosen:
        node = dig(found[doc], *where)
        built.append(SetKey(node, keys, value) if kind == "set" else AppendItem(node, keys, value))
    return built


def _expected(data: list, chosen) -> list:
    import copy

    out = copy.deepcopy(data)
    for doc, where, kind, keys, value in chosen:
        target = dig(out, doc, *where)
        if not isinstance(target, dict):
            raise _InTheWay  # an earlier intent replaced the mapping this one adds to
        if kind == "set":
            _expect_set(target, keys, copy.deepcopy(value))
        else:
            _expect_append(target, keys, copy.deepcopy(value))
    return out


def _nested(one, other) -> bool:
    """Whether two intents reach the same key or one reaches inside what the other sets."""
    def reach(intent):
        doc, where, kind, keys, _ = intent
        return (doc,) + tuple(where) + (tuple(keys) if kind == "set" else (keys,))

    a, b = reach(one), reach(other)
    return a[:len(b)] == b or b[:len(a)] == a


def _kept_outside(original: str, result: str, edits) -> bool:
    """Every character of ``original`` outside the edits is in ``result``, in order, with only
    the edits' texts (line breaks as the file's) between them."""
    from mlops_lint.fix.apply import text_index

    index = text_index(original)
    newline = index.newline
    placed = sorted((index.offset(e.span.line, e.span.col), index.offset(e.span.end_line, e.span.end_col),
                     e.text.replace("\n", newline)) for e in edits)
    rebuilt, last = [], 0
    for start, end, new in placed:
        rebuilt += [original[last:start], new]
        last = end
    rebuilt.append(original[last:])
    return "".join(rebuilt) == result


@FUZZ
@given(st.data())
def test_property_fixes_parse_hold_the_intended_data_keep_other_bytes_and_are_idempotent(data) -> None:
    text = data.draw(manifest_texts())
    chosen = data.draw(intents(text))
    found = bodies(text)
    ours_before = [_plain_data(b) for b in found]
    theirs_before = list(yaml.safe_load_all(text))
    try:
        expect_ours = _expected(ours_before, chosen)
        expect_theirs = _expected(theirs_before, chosen)
        in_the_way = False
    except _InTheWay:
        in_the_way = True
    fix = resolve(Plan.safe_fix("t", *_build(found, chosen)), text, "t.yaml")
    if in_the_way:
        assert fix is None
        return
    overlapping = len(chosen) == 2 and _nested(*chosen)
    if fix is None:
        # nothing to change, or two intents at one mapping that want different things
        assert frozen(expect_ours) == frozen(ours_before) or overlapping, (text, chosen)
        return
    result = apply_edits(text, fix.edits)
    assert _kept_outside(text, result, fix.edits)
    theirs_after = list(yaml.safe_load_all(result))  # PyYAML reads it
    after = bodies(result)
    assert frozen([_plain_data(b) for b in after]) == frozen(expect_ours), (text, chosen, result)
    assert frozen(theirs_after) == frozen(expect_theirs), (text, chosen, result)
    if "\r\n" in text:
        assert "\n" not in result.replace("\r\n", "")
    again = resolve(Plan.safe_fix("t", *_build(after, chosen)), result, "t.yaml")
    assert again is None, (result, again)


def test_an_intent_replacing_the_value_another_adds_to_is_no_fix() -> None:
    text = "apiVersion: batch/v1\nkind: Job\nspec:\n  template: {spec: {}}\n  parallelism: 2\n"
    for order in ((0, 1), (1, 0)):
        make = [lambda b: SetKey(b[0], ("spec", "suspend"), True), lambda b: SetKey(b[0], ("spec",), 0)]
        assert fixed(text, *(make[i] for i in order)) is None
    assert fixed(text, lambda b: SetKey(b[0]["spec"], ("template",), "x"),
                 lambda b: SetKey(b[0]["spec"]["template"], ("spec", "a"), 1)) is None


def test_json_string_replaced_with_json_escapes_and_a_bom_is_not_counted() -> None:
    text = '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}\n'
    out = fixed(text, lambda b: SetKey(b[0]["metadata"], ("name",), "a\u0007b"))
    assert out == '{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a\\u0007b"}}\n'
    bom = "\ufeffapiVersion: v1\nkind: Pod\nmetadata: {name: p}\n"
    assert fixed(bom, lambda b: SetKey(b[0]["metadata"], ("name",), "q")) == bom.replace("name: p", "name: q")
    bom = "\ufeffkind: Pod\napiVersion: v1\n"
    assert fixed(bom, lambda b: SetKey(b[0], ("kind",), "Job")) == "\ufeffkind: Job\napiVersion: v1\n"


def test_a_block_value_replaced_keeps_the_comment_after_its_key() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:  # owned by team x\n    app: x\n  name: p\n"
    assert fixed(text, lambda b: SetKey(b[0]["metadata"], ("labels",), 0)) == \
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels: 0  # owned by team x\n  name: p\n"
    assert fixed(text, lambda b: SetKey(b[0]["metadata"], ("labels",), ["a"])) == \
        "apiVersion: v1\nkind: Pod\nmetadata:\n  labels:  # owned by team x\n  - a\n  name: p\n"
    crlf = text.replace("\n", "\r\n")
    assert fixed(crlf, lambda b: SetKey(b[0]["metadata"], ("labels",), 0)) == \
        "apiVersion: v1\r\nkind: Pod\r\nmetadata:\r\n  labels: 0  # owned by team x\r\n  name: p\r\n"


def test_a_block_replaced_by_a_scalar_takes_the_comment_lines_above_its_first_key_with_it() -> None:
    """Comment lines between a key and its block value are the block's (found by the property
    test): the block goes, they go with it; a comment on the key's own line stays."""
    text = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  # between\n  name: p\n  labels: {app: x}\nspec: {}\n"
    assert fixed(text, lambda b: SetKey(b[0], ("metadata",), 0)) == \
        "apiVersion: batch/v1\nkind: Job\nmetadata: 0\nspec: {}\n"
    kept = text.replace("metadata:\n", "metadata:  # keep\n")
    assert fixed(kept, lambda b: SetKey(b[0], ("metadata",), 0)) == \
        "apiVersion: batch/v1\nkind: Job\nmetadata: 0  # keep\nspec: {}\n"
    assert fixed(text, lambda b: SetKey(b[0], ("metadata",), [1])) == \
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n- 1\nspec: {}\n"


def _layouts_line_by_line(text: str, scan: int) -> tuple[list[int], list[tuple[int, int]]]:
    """The layout reading written the obvious way (every line, a state machine), the oracle of
    the resolver's scan, which reads only lines ending with a colon and the line after each."""
    from collections import Counter

    from mlops_lint.fix.resolve import _KEY_LINE, _pick

    lines = text.split("\n")
    starts = [0] + [n for n, line in enumerate(lines) if n and re.match(r"---(?=[ \t\r]|\Z)", line)]
    per_doc, steps_all, seqs_all = [], Counter(), Counter()
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(lines)
        steps, seqs, opener = Counter(), Counter(), None
        for line in lines[start:min(end, start + scan)]:
            body = line.rstrip()
            stripped = body.lstrip(" ")
            if not stripped or stripped.startswith("#"):
                continue
            indent = len(body) - len(stripped)
            if opener is not None:
                if stripped.startswith("- ") or stripped == "-":
                    seqs[indent - opener] += 1
                elif indent > opener:
                    steps[indent - opener] += 1
                opener = None
            if body.endswith(":") and " #" not in body and not stripped.startswith(("'", '"', "|", ">")):
                match = _KEY_LINE.match(body)
                opener = len(match.group(1)) + len(match.group(2))
        steps_all.update(steps)
        seqs_all.update(seqs)
        per_doc.append((_pick(steps, 1), _pick(seqs, 0)))
    step_all, seq_all = _pick(steps_all, 1) or 2, _pick(seqs_all, 0)
    return [s + 1 for s in starts], [(step or step_all, seq if seq is not None else (seq_all or 0))
                                     for step, seq in per_doc]


_LAYOUT_PIECES = st.sampled_from(["a", "k:", ":", " ", "  ", "- ", "-", "\n", "#", " #", "'", '"', "|", ">",
                                  "---", "\t", "\r", "\xa0", "x: "])


@FUZZ
@given(st.lists(_LAYOUT_PIECES, max_size=80).map("".join), st.sampled_from([3, 4000]))
@example("a:\n  b: 1\n  c:\n    - x\n", 3)  # the line after the last one read opens nothing
@example("a:\n  b: 1\n---\nc:\n    - x\n", 4000)  # nor does a line past its document's end
def test_the_layout_scan_reads_what_a_line_by_line_reading_reads(text: str, scan: int) -> None:
    import mlops_lint.fix.resolve as resolve_module

    saved = resolve_module._SCAN_LINES
    resolve_module._SCAN_LINES = scan
    try:
        assert resolve_module._layouts.__wrapped__(text) == _layouts_line_by_line(text, scan)
    finally:
        resolve_module._SCAN_LINES = saved


def test_plans_of_one_file_resolve_as_they_do_alone() -> None:
    """What resolvers learn about a file's nodes is shared by its plans: each plan's fix is the
    one it gets against a freshly loaded copy of the file, in any order."""
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n    name: p\nspec:\n    containers:\n"
            "    -   name: a\n        image: x\n    -   name: b\n        image: y\n")

    def plans(bodies):
        spec = bodies[0]["spec"]
        return [Plan("ctx", (SetKey(spec["containers"][0], ("securityContext", "runAsNonRoot"), True),)),
                Plan("stdin", (SetKey(spec["containers"][1], ("stdin",), False),)),
                Plan("sa", (SetKey(spec, ("automountServiceAccountToken",), False),)),
                Plan("label", (SetKey(bodies[0]["metadata"], ("labels", "app"), "p"),))]

    together = [resolve(plan, text, "pod.yaml") for plan in reversed(plans(bodies(text)))][::-1]
    alone = []
    for number in range(4):
        other = text + "\n" * (number + 1)  # another text: no facts shared with the first
        alone.append(resolve(plans(bodies(other))[number], other, "pod.yaml"))
    assert [fix.edits for fix in together] == [fix.edits for fix in alone]
    assert all(fix is not None for fix in together)
    assert "        image: x\n        securityContext:\n            runAsNonRoot: true\n    -   name: b" in \
        apply_edits(text, together[0].edits)
