"""The YAML/JSON loader: exact positions, YAML 1.1 scalars, encodings, and bounded hostile input."""

from __future__ import annotations

import codecs
import time

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from mlops_lint.model.position import Span
from mlops_lint.sources import yaml_k8s
from mlops_lint.sources.text import MAX_FILE_BYTES

from strategies import manifests

POD = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: x:1\n"


def load(text: str | bytes, path: str = "t.yaml"):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return yaml_k8s.load(data, path)


def test_positions_are_one_based_keys_and_values() -> None:
    doc = load(POD)
    (obj,) = doc.objects
    container = obj.body["spec"]["containers"][0]
    assert container.kspans["image"] == Span(8, 5, 8, 10)
    assert container.vspans["image"] == Span(8, 12, 8, 15)
    assert obj.span == Span(2, 1, 2, 5)  # the kind: key
    assert (obj.kind, obj.name, obj.namespace) == ("Pod", "p", "")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_encodings_with_and_without_bom(encoding: str) -> None:
    data = POD.encode(encoding)
    doc = load(data)
    assert not doc.errors
    assert doc.objects[0].body["spec"]["containers"][0].vspans["image"] == Span(8, 12, 8, 15)


def test_crlf_line_ends_keep_positions() -> None:
    doc = load(POD.replace("\n", "\r\n"))
    assert doc.objects[0].body["spec"]["containers"][0].vspans["image"] == Span(8, 12, 8, 15)


def test_invalid_utf8_and_nul_bytes_are_parse_errors_with_lines() -> None:
    (issue,) = load(b"apiVersion: v1\nkind: Pod\nmetadata: {name: \xff}\n").errors
    assert issue.span.line == 3 and "invalid UTF-8" in issue.message
    (issue,) = load(b"apiVersion: v1\n\x00\x01\x02binary\x00\xff\xfe\x00\x00\x00").errors
    assert issue.span.line == 2 and "NUL byte" in issue.message


def test_file_size_limit() -> None:
    (issue,) = load(b"a: b\n" * (MAX_FILE_BYTES // 5 + 10)).errors
    assert "larger than the 16 MiB" in issue.message


def test_yaml_11_scalars_as_kubernetes_reads_them() -> None:
    text = POD + "  x: {a: yes, b: on, c: 'yes', d: 0777, e: 1e3, f: 0x1F, g: ~, h: 1.5, i: 12:30, j: 2024-01-01, k: Off}\n"
    values = dict(load(text).objects[0].body["spec"]["x"])
    assert values == {"a": True, "b": True, "c": "yes", "d": 511, "e": 1000.0, "f": 31, "g": None, "h": 1.5,
                      "i": "12:30", "j": "2024-01-01", "k": False}


def test_custom_and_python_tags_are_never_constructed() -> None:
    text = POD + "  x: !!python/object/apply:os.system ['echo pwned']\n  y: !custom {a: 1}\n  z: !!binary aGk=\n"
    spec = load(text).objects[0].body["spec"]
    assert spec["x"] == ["echo pwned"] and spec["y"] == {"a": 1} and spec["z"] == "aGk="


def test_duplicate_keys_are_findings_and_last_value_wins() -> None:
    doc = load(POD + "    image: y:2\n")
    (issue,) = doc.errors
    assert issue.span == Span(9, 5, 9, 10)
    assert issue.message == 'duplicate key "image" (first at line 8); the last value wins'
    assert doc.objects[0].body["spec"]["containers"][0]["image"] == "y:2"


def test_anchors_aliases_and_merge_keys() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
            "  - &base {name: a, image: 'x:1', resources: {limits: {cpu: 1}}}\n"
            "  - <<: *base\n    name: b\n")
    first, second = load(text).objects[0].body["spec"]["containers"]
    assert second["name"] == "b" and second["image"] == "x:1"  # explicit keys win over merged ones
    assert second.kspans["name"] == Span(8, 5, 8, 9)
    assert second["resources"] is first["resources"]  # aliases share one converted object


def test_multi_document_empty_documents_and_list_items() -> None:
    listing = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a, "
               "managedFields: [{}]}\n  status: {x: 1}\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n")
    doc = load("---\n---\n" + POD + "---\n# only a comment\n---\n" + listing + "---\nvalues: 1\n")
    kinds = [(o.kind, o.name, o.doc_index, o.node_path) for o in doc.objects]
    assert kinds == [("Pod", "p", 1, ()), ("ConfigMap", "a", 3, ("items", 0)), ("ConfigMap", "b", 3, ("items", 1))]
    assert "status" not in doc.objects[1].body and "managedFields" not in doc.objects[1].body["metadata"]


def test_files_without_kubernetes_objects_are_skipped_silently() -> None:
    doc = load("replicaCount: 2\nimage: {repository: x}\n", "values.yaml")
    assert not doc.errors and not doc.objects and doc.skipped


def test_error_in_a_later_document_keeps_earlier_ones() -> None:
    doc = load(POD + "---\napiVersion: v1\nkind: Pod\nmetadata: [\n")
    assert [o.name for o in doc.objects] == ["p"]
    (issue,) = doc.errors
    assert issue.span.line == 13 and issue.message.startswith("invalid YAML:")


def test_json_manifests_have_positions() -> None:
    text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "metadata": {"name": "j"},\n  "spec": {"containers": []}\n}\n'
    (obj,) = load(text, "pod.json").objects
    assert obj.name == "j" and obj.body.kspans["kind"] == Span(3, 3, 3, 9)


def test_alias_bomb_is_rejected_fast() -> None:
    lines = ["apiVersion: v1", "kind: ConfigMap", "a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 12)]
    start = time.perf_counter()
    doc = load("\n".join(lines) + "\n")
    assert time.perf_counter() - start < 2
    (issue,) = doc.errors
    assert "alias bomb" in issue.message and not doc.objects


def test_recursive_alias_is_an_error() -> None:
    (issue,) = load("apiVersion: v1\nkind: X\na: &a [*a]\n").errors
    assert "recursive alias" in issue.message


@pytest.mark.parametrize("depth", [300, 10_000, 200_000])
def test_deep_nesting_is_bounded(depth: int) -> None:
    start = time.perf_counter()
    (issue,) = load("[" * depth + "]" * depth).errors
    # ours at 256 levels; a libyaml build with its own limit (0.2.5+: 1000) may stop it first
    assert "nesting deeper than 256" in issue.message or "exceeded maximum nesting depth" in issue.message
    assert time.perf_counter() - start < 10


def test_block_nesting_is_bounded() -> None:
    text = "".join("  " * i + f"k{i}:\n" for i in range(3000))
    (issue,) = load(text).errors
    assert "nesting deeper" in issue.message


def test_comments_are_found_only_outside_scalars() -> None:
    text = ("apiVersion: v1\nkind: ConfigMap  # mlops-lint: disable=X\nmetadata: {name: 'a # b'}\n"
            "data:\n  s: |\n    # mlops-lint: disable=NOT-A-COMMENT\n  # mlops-lint: disable=Y\n  t: a#b\n")
    comments = load(text).comments
    assert [(c.line, c.col, c.text, c.own_line) for c in comments] == [
        (2, 18, "mlops-lint: disable=X", False),
        (7, 3, "mlops-lint: disable=Y", True),
    ]
    assert comments[1].next_line == 8


def test_templates_get_a_render_hint() -> None:
    (issue,) = load("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }\n").errors
    assert "helm template" in issue.message


def test_utf16_without_bom_is_sniffed() -> None:
    data = codecs.encode(POD, "utf-16-le")
    assert load(data).objects[0].name == "p"


# -- documents parsed on their own -------------------------------------------------------------

def _tree(node):
    """A converted tree with every span, for comparing two parses."""
    if isinstance(node, yaml_k8s.YMap):
        return ("map", node.span, [(k, node.kspans[k], node.vspans[k], _tree(v)) for k, v in node.items()])
    if isinstance(node, yaml_k8s.YSeq):
        return ("seq", node.span, list(node.ispans), [_tree(v) for v in node])
    return node


def _objects(objects):
    """Comparable as text: a .nan scalar is not equal to itself."""
    return repr([(o.kind, o.name, o.doc_index, o.node_path, o.span, _tree(o.body)) for o in objects])


def test_a_syntax_error_leaves_the_other_documents_linted() -> None:
    second = POD.replace("name: p", "name: q")
    doc = load("# leading comment\n" + POD + "---\napiVersion: v1\nkind: Pod\nmetadata: [\n---\n" + second)
    assert [(o.name, o.doc_index, o.span.line) for o in doc.objects] == [("p", 0, 3), ("q", 2, 16)]
    (issue,) = doc.errors
    assert issue.span.line == 14 and issue.message.startswith("invalid YAML:")


def test_files_with_directives_or_document_ends_are_one_stream_that_stops_at_an_error() -> None:
    broken = "---\napiVersion: v1\nkind: Pod\nmetadata: [\n"
    for text in ("%YAML 1.1\n---\n" + POD + broken + "---\n" + POD, POD + "...\n" + broken + "---\n" + POD):
        assert yaml_k8s.Stream(text, "t.yaml").pieces is None
        doc = load(text)
        assert [o.name for o in doc.objects] == ["p"] and len(doc.errors) == 1


def test_documents_parsed_in_any_order_make_the_same_document() -> None:
    pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\nspec: {}\n"
    text = POD + "---\n" + pvc + "---   # a comment after the marker\n" + POD.replace("name: p", "name: r")
    stream = yaml_k8s.Stream(text, "t.yaml")
    first = stream.parse(lambda piece: "PersistentVolumeClaim" in piece)
    assert [o.name for o in first] == ["data"] and sorted(stream.parsed) == [1]
    doc = stream.document()
    assert doc.objects[1] is first[0]  # the object the index holds is the file's own
    assert _objects(doc.objects) == _objects(load(text).objects) == _objects(yaml_k8s._whole(text, "t.yaml")[0])
    assert [(o.name, o.doc_index) for o in doc.objects] == [("p", 0), ("data", 1), ("r", 2)]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(manifests(), st.sampled_from(["", "# head\n", "\n\n", "---\n", "# c\n---\n---\n"]),
       st.sampled_from(["", "---\n", "---\n# only a comment\n"]), st.booleans())
def test_documents_on_their_own_parse_as_one_stream_does(text: str, head: str, tail: str, crlf: bool) -> None:
    text = head + text + ("" if text.endswith("\n") else "\n") + tail
    if crlf:
        text = text.replace("\n", "\r\n")
    assume(yaml_k8s.Stream(text, "t.yaml").pieces is not None)  # else it is composed as one stream anyway
    whole, duplicates, errors = yaml_k8s._whole(text, "t.yaml")
    doc = load(text)
    assert _objects(doc.objects) == _objects(whole)
    assert doc.errors == [*duplicates, *errors]


@pytest.mark.parametrize("text", [
    "---\n",
    "---\n---\n",
    "# only a comment\n",
    "\n\n# c\n---\n" + POD,
    "--- # marker with a comment\n" + POD + "--- !!map\n" + POD.replace("name: p", "name: q"),
    "--- |\n  a root block scalar\n---\n" + POD,
    POD + "---\n\n\n",
    POD + "---\n# trailing comment only\n",
    "---\n" + POD + "---foo: not a marker\n",
    POD.replace("  name: p\n", "  name: p\n  annotations: {a: \"---\"}\n") + "---\n" + POD,
    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n  script: |\n    ---\n    indented dashes are content\n",
    "\ufeff---\n" + POD,
])
def test_documents_split_where_a_stream_would_begin_them(text: str) -> None:
    stream = yaml_k8s.Stream(text, "t.yaml")
    assert stream.pieces is not None
    whole, duplicates, errors = yaml_k8s._whole(stream.text, "t.yaml")
    doc = load(text)
    assert _objects(doc.objects) == _objects(whole)
    assert [(e.span, e.message) for e in doc.errors] == [(e.span, e.message) for e in [*duplicates, *errors]]


def test_an_invalid_document_has_the_streams_error_and_the_next_one_is_still_read() -> None:
    text = "--- |\nroot block scalar at column 0\n---\n" + POD  # libyaml: not valid at indentation 0
    _, _, errors = yaml_k8s._whole(text, "t.yaml")
    doc = load(text)
    assert [(e.span, e.message) for e in doc.errors] == [(e.span, e.message) for e in errors] != []
    assert [(o.name, o.doc_index, o.span.line) for o in doc.objects] == [("p", 1, 5)]


def test_the_loader_has_no_path_resolvers_so_its_resolver_hooks_may_do_nothing() -> None:
    """yaml_k8s._Loader replaces PyYAML's descend/ascend_resolver (called around every node) with
    C no-ops: right only while no path resolver is registered, which nothing here does."""
    import yaml

    from mlops_lint.sources.yaml_k8s import _Loader, load_text

    assert not _Loader.yaml_path_resolvers
    text = "a: [1, {b: x}]\nc: {d: [yes, '2']}\n"
    node = yaml.compose(text, Loader=_Loader)
    assert [(k.value, v.tag) for k, v in node.value] == [("a", "tag:yaml.org,2002:seq"), ("c", "tag:yaml.org,2002:map")]
    assert load_text(text, "x.yaml").objects == [] and load_text("kind: Pod\napiVersion: v1\n", "p.yaml").objects[0].kind == "Pod"
