"""The fix resolver's deletions (``DeleteItem``, ``DeleteKey``) and its one switch on an edit's
kind: only the removed entry's characters go (its lines in block style, with the comment on
them; its separating comma in flow style), every other byte stays, and where that cannot be done
exactly there is no fix. The property tests generate manifests (block and flow, comments, CRLF,
indentation 2 and 4, several documents), delete random entries and check that the result parses
to the same documents minus those entries and that nothing but the deleted text changed.
"""

from __future__ import annotations

import copy

import pytest
import yaml
from hypothesis import assume, event, given
from hypothesis import strategies as st

from mlops_lint.fix import AppendItem, DeleteItem, DeleteKey, Plan, Replace, SetKey
from mlops_lint.fix.apply import apply_edits, text_index
from mlops_lint.fix.resolve import _OPERATIONS, resolve
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq, dig, frozen
from strategies import FUZZ
from test_fix_resolve import _kept_outside, _plain_data, bodies, manifest_texts


HEAD = "apiVersion: v1\nkind: Pod\n"


def fixed(text: str, *make) -> str | None:
    """``text`` after resolving and applying the operations ``make`` builds from its objects'
    bodies (a text starting with ``spec:`` is given a kind first, and shown without it)."""
    head = HEAD if text.startswith("spec") else ""
    text = head + text
    found = bodies(text)
    fix = resolve(Plan.unsafe_fix("t", *(m(found) for m in make)), text, "t.yaml")
    if fix is None:
        return None
    out = apply_edits(text, fix.edits)
    list(yaml.safe_load_all(out))
    assert out.startswith(head)
    return out[len(head):]


POD = """\
apiVersion: v1
kind: Pod
spec:
  containers:
  - name: c  # the c
    securityContext:
      capabilities:
        add:  # extra
        - NET_ADMIN  # net
        # about sys admin
        - SYS_ADMIN  # why
        - CHOWN
        drop: [ALL]
"""


def caps(b):
    return b[0]["spec"]["containers"][0]["securityContext"]["capabilities"]


def context(b):
    return b[0]["spec"]["containers"][0]["securityContext"]


# ---------------------------------------------------------------------------------------------
# DeleteItem, block style


@pytest.mark.parametrize("indexes, gone", [
    ((0,), ["        - NET_ADMIN  # net\n"]),
    ((1,), ["        - SYS_ADMIN  # why\n"]),
    ((2,), ["        - CHOWN\n"]),
    ((1, 2), ["        - SYS_ADMIN  # why\n", "        - CHOWN\n"]),
])
def test_a_block_item_goes_with_its_lines_and_the_comment_on_them_only(indexes, gone) -> None:
    out = fixed(POD, lambda b: DeleteItem(caps(b), "add", indexes))
    expected = POD
    for line in gone:
        expected = expected.replace(line, "")
    assert out == expected  # "# about sys admin" above SYS_ADMIN stays: whose it is is a guess


def test_every_block_item_removed_leaves_an_empty_list_not_a_null() -> None:
    out = fixed(POD, lambda b: DeleteItem(caps(b), "add", (2, 0, 1)))
    assert out == POD.replace("add:  # extra\n        - NET_ADMIN  # net\n", "add: []  # extra\n").replace(
        "        - SYS_ADMIN  # why\n        - CHOWN\n", "")
    assert yaml.safe_load(out)["spec"]["containers"][0]["securityContext"]["capabilities"]["add"] == []


def test_crlf_and_a_missing_final_line_break_are_kept() -> None:
    crlf = POD.replace("\n", "\r\n")
    assert fixed(crlf, lambda b: DeleteItem(caps(b), "add", (1,))) == crlf.replace("        - SYS_ADMIN  # why\r\n", "")
    last = POD.replace("        drop: [ALL]\n", "").rstrip("\n")
    assert fixed(last, lambda b: DeleteItem(caps(b), "add", (2,))) == last[:-len("\n        - CHOWN")]


def test_a_key_inserted_after_a_removed_last_item_stays_on_its_own_line() -> None:
    out = fixed(POD.replace("        drop: [ALL]\n", ""), lambda b: DeleteItem(caps(b), "add", (2,)),
                lambda b: SetKey(context(b), ("allowPrivilegeEscalation",), False))
    assert out.endswith("        - SYS_ADMIN  # why\n      allowPrivilegeEscalation: false\n")


def test_a_mapping_item_goes_whole_with_its_nested_block() -> None:
    text = ("spec:\n  tolerations:\n  - key: a\n    effect: NoSchedule\n  - key: b\n    operator: Exists\n"
            "    effect: NoExecute\n  # end\n  x: 1\n")
    out = fixed(text, lambda b: DeleteItem(b[0]["spec"], "tolerations", (1,)))
    assert out == "spec:\n  tolerations:\n  - key: a\n    effect: NoSchedule\n  # end\n  x: 1\n"


@pytest.mark.parametrize("text", [
    "spec:\n  add:\n  -\n    SYS_ADMIN\n  - B\n",  # a dash alone on its line
    "spec:\n  add: &caps\n  - A\n  other: *caps\n",  # an anchor that an alias uses
    "spec:\n  add: !!seq\n  - A\n",  # a tag on the list: every item gone would drop it
])
def test_no_fix_where_the_removal_cannot_be_exact(text) -> None:
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (0,))) is None


def test_an_index_outside_the_list_or_no_list_is_no_fix() -> None:
    assert fixed(POD, lambda b: DeleteItem(caps(b), "add", (3,))) is None
    assert fixed(POD, lambda b: DeleteItem(caps(b), "add", ())) is None
    assert fixed(POD, lambda b: DeleteItem(caps(b), "missing", (0,))) is None
    assert fixed(POD, lambda b: DeleteItem(context(b), "capabilities", (0,))) is None  # a mapping


# ---------------------------------------------------------------------------------------------
# DeleteItem, flow style


FLOW = "spec: {add: [A, B, C], drop: [ALL]}\n"


@pytest.mark.parametrize("indexes, expected", [
    ((0,), "[B, C]"), ((1,), "[A, C]"), ((2,), "[A, B]"), ((0, 1), "[C]"), ((1, 2), "[A]"), ((0, 2), "[B]"),
    ((0, 1, 2), "[]"),
])
def test_a_flow_item_goes_with_its_comma(indexes, expected) -> None:
    assert fixed(FLOW, lambda b: DeleteItem(b[0]["spec"], "add", indexes)) == FLOW.replace("[A, B, C]", expected)


def test_a_flow_list_on_several_lines_keeps_its_layout() -> None:
    text = "spec:\n  add: [\n    A,\n    B,\n    C\n  ]\n"
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (1,))) == "spec:\n  add: [\n    A,\n    C\n  ]\n"
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (2,))) == "spec:\n  add: [\n    A,\n    B\n  ]\n"
    trailing = "spec:\n  add: [A, B,]\n"
    assert fixed(trailing, lambda b: DeleteItem(b[0]["spec"], "add", (1,))) == "spec:\n  add: [A,]\n"
    assert fixed(trailing, lambda b: DeleteItem(b[0]["spec"], "add", (0, 1))) == "spec:\n  add: []\n"


def test_a_comment_between_flow_items_that_would_go_is_no_fix() -> None:
    text = "spec:\n  add: [\n    A,  # keep A\n    B  # the last one\n  ]\n"
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (1,))) is None
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (0, 1))) is None
    # removing A takes only `A,  ` up to B? no: the comment stands between A and B
    assert fixed(text, lambda b: DeleteItem(b[0]["spec"], "add", (0,))) is None


# ---------------------------------------------------------------------------------------------
# DeleteKey


def test_a_block_key_goes_with_its_value_and_the_comments_on_its_lines() -> None:
    text = "spec:\n  a: 1\n  b:  # the b\n    c: 2\n    d: [x]  # d\n  # about e\n  e: 3\n"
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"], "b")) == "spec:\n  a: 1\n  # about e\n  e: 3\n"
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"], "e")) == "spec:\n  a: 1\n  b:  # the b\n    c: 2\n    d: [x]  # d\n  # about e\n"
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"], "a")) == text.replace("  a: 1\n", "")
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"], "missing")) is None  # nothing to remove


def test_a_key_sharing_its_line_with_a_dash_or_the_only_key_of_a_block_mapping_is_no_fix() -> None:
    text = "spec:\n  containers:\n  - name: c\n    image: x\n  only:\n    k: v\n"
    first = lambda b: b[0]["spec"]["containers"][0]  # noqa: E731
    assert fixed(text, lambda b: DeleteKey(first(b), "name")) is None
    assert fixed(text, lambda b: DeleteKey(first(b), "image")) == "spec:\n  containers:\n  - name: c\n  only:\n    k: v\n"
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"]["only"], "k")) is None


def test_flow_and_json_keys_go_with_their_comma() -> None:
    assert fixed("spec: {a: 1, b: 2, c: 3}\n", lambda b: DeleteKey(b[0]["spec"], "b")) == "spec: {a: 1, c: 3}\n"
    assert fixed("spec: {a: 1}\n", lambda b: DeleteKey(b[0]["spec"], "a")) == "spec: {}\n"
    text = '{\n  "apiVersion": "v1",\n  "kind": "Pod",\n  "spec": {\n    "a": 1,\n    "b": [2]\n  }\n}\n'
    assert fixed(text, lambda b: DeleteKey(b[0]["spec"], "b")) == text.replace(',\n    "b": [2]', "")


def test_deleting_where_another_operation_inserts_is_no_fix() -> None:
    # AppendItem to the list whose last item goes: the new item follows the removed one's line
    out = fixed(POD, lambda b: DeleteItem(caps(b), "add", (2,)), lambda b: AppendItem(caps(b), "add", "KILL"))
    assert out == POD.replace("        - CHOWN\n", "        - KILL\n")
    # SetKey under the key that goes
    assert fixed(POD, lambda b: DeleteKey(context(b), "capabilities"),
                 lambda b: SetKey(caps(b), ("drop",), ["X"])) is None


# ---------------------------------------------------------------------------------------------
# One switch on the kind


def test_every_operation_of_linter_fix_has_one_entry_in_the_switch() -> None:
    import mlops_lint.fix as fix

    kinds = {cls.kind: cls for cls in (SetKey, AppendItem, DeleteItem, DeleteKey, Replace, fix.InsertLine)}
    assert {kind: cls for kind, (cls, _) in _OPERATIONS.items()} == kinds
    assert set(fix.Intent.__args__) == set(kinds.values())
    assert {cls for cls in kinds.values() if cls.steps is not None and not isinstance(cls.steps, property)} == set()
    for cls in fix.NODE_OPERATIONS:
        assert isinstance(cls.__dict__["steps"], property)


def test_an_object_that_only_looks_like_an_operation_is_no_fix() -> None:
    class Fake:
        kind = "replace"
        span = Span(1, 1, 1, 2)
        text = "x"

    assert resolve(Plan.safe_fix("t", Fake()), "a: 1\n", "t.yaml") is None  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------
# Properties


def _collections(node, prefix=()):
    """(path of a mapping, key) of every entry, and whether its value is a list."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix, key, isinstance(value, list)
            yield from _collections(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _collections(value, prefix + (index,))


def _first_on_dash_line(text: str, node: YMap, key: str) -> bool:
    span = node.kspans[key]
    return bool(text_index(text).line(span.line)[:span.col - 1].strip())


def _scalars(node, text: str, out: list) -> list:
    """The written text of every key and scalar value, in document order."""
    index = text_index(text)
    if isinstance(node, YMap):
        for key in sorted(node, key=lambda k: (node.kspans[k].line, node.kspans[k].col)):
            out.append(index.slice(node.kspans[key]))
            value = node[key]
            if isinstance(value, (YMap, YSeq)):
                _scalars(value, text, out)
            elif node.vspans[key].line == node.vspans[key].end_line:
                out.append(index.slice(node.vspans[key]))
    elif isinstance(node, YSeq):
        for value, span in zip(node, node.ispans):
            if isinstance(value, (YMap, YSeq)):
                _scalars(value, text, out)
            elif span.line == span.end_line:
                out.append(index.slice(span))
    return out


@FUZZ
@given(st.data())
def test_property_a_deletion_leaves_the_same_documents_minus_that_entry_and_every_other_byte(data) -> None:
    text = data.draw(manifest_texts())
    found = bodies(text)
    doc = data.draw(st.integers(0, len(found) - 1))
    entries = [(where, key, is_list) for where, key, is_list in _collections(found[doc])
               if not (where == () and key in ("apiVersion", "kind"))]
    assume(entries)
    lists = [(where, key, True) for where, key, is_list in entries if is_list and dig(found[doc], *where, key)]
    delete_item = bool(lists) and data.draw(st.booleans())
    where, key, _ = data.draw(st.sampled_from(lists if delete_item else entries))
    node = dig(found[doc], *where)
    items = node[key]
    if delete_item:
        indexes = tuple(sorted(data.draw(st.sets(st.integers(0, len(items) - 1), min_size=1))))
        operation = DeleteItem(node, key, indexes)
    else:
        operation = DeleteKey(node, key)
    fix = resolve(Plan.unsafe_fix("t", operation), text, "t.yaml")
    event(f"{operation.kind}: {'refused' if fix is None else 'resolved'}")

    ours, theirs = [_plain_data(b) for b in found], list(yaml.safe_load_all(text))
    for expected in (ours, theirs):
        target = dig(expected, doc, *where)
        if delete_item:
            target[key] = [item for index, item in enumerate(target[key]) if index not in indexes]
        else:
            del target[key]
    if fix is None:
        # refused only where exactness is impossible: a block mapping's only key, a key after a
        # list item's dash, a comment or an anchor among what would go, a value on the key's line
        block = not text_index(text).line(node.span.line)[node.span.col - 1:].startswith(("{", "["))
        assert ("#" in text or "&" in text or "!" in text
                or (not delete_item and (block and (len(node) == 1 or _first_on_dash_line(text, node, key))))
                or (not delete_item and node.kspans[key].line == 1)), (text, operation)
        return
    result = apply_edits(text, fix.edits)
    assert _kept_outside(text, result, fix.edits)
    assert all(edit.text in ("", " []") for edit in fix.edits)  # nothing written but an empty list
    after = bodies(result)
    assert frozen([_plain_data(b) for b in after]) == frozen(ours), (text, operation, result)
    assert frozen(list(yaml.safe_load_all(result))) == frozen(theirs), (text, operation, result)
    if "\r\n" in text:
        assert "\n" not in result.replace("\r\n", "")
    # every key and scalar left is written as it was (positions of the others unchanged)
    kept = copy.copy(found)
    before_texts = _scalars(kept[doc], text, [])
    after_texts = _scalars(after[doc], result, [])
    assert set(after_texts) <= set(before_texts) and len(after_texts) <= len(before_texts)
    for other in range(len(found)):
        if other != doc:
            assert _scalars(found[other], text, []) == _scalars(after[other], result, [])


def test_deletions_named_by_several_operations_are_removed_together() -> None:
    flow = "spec: {add: [A, B, C], x: 1, y: 2}\n"
    assert fixed(flow, lambda b: DeleteItem(b[0]["spec"], "add", (1,)),
                 lambda b: DeleteItem(b[0]["spec"], "add", (2, 1))) == flow.replace("[A, B, C]", "[A]")
    assert fixed(flow, lambda b: DeleteKey(b[0]["spec"], "x"), lambda b: DeleteKey(b[0]["spec"], "y")) == \
        "spec: {add: [A, B, C]}\n"
    block = "spec:\n  a: 1\n  b: 2\n"
    assert fixed(block, lambda b: DeleteKey(b[0]["spec"], "a")) == "spec:\n  b: 2\n"
    # every key of a block mapping, one operation each: it would read as null
    assert fixed(block, lambda b: DeleteKey(b[0]["spec"], "a"), lambda b: DeleteKey(b[0]["spec"], "b")) is None
    assert fixed(POD, lambda b: DeleteItem(caps(b), "add", (0,)), lambda b: DeleteItem(caps(b), "add", (1, 2))) == \
        fixed(POD, lambda b: DeleteItem(caps(b), "add", (0, 1, 2)))
