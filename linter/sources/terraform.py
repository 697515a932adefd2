"""Terraform files (``*.tf``, ``*.tfvars``): the blocks and attributes the cluster model reads,
with exact positions.

Parsed with python-hcl2's Lark grammar (an LALR parser: linear in the text, no recursion per
nesting level), from its raw parse tree, whose tokens carry 1-based lines and columns; the
dictionaries python-hcl2 builds from it carry no positions for attributes. The tree is turned
here into small records that can be pickled: :class:`TfBlock` (type, labels, attributes,
nested blocks) and :class:`TfAttr` (name, spans, and the expression as nested tuples):

* ``("lit", value)``: a string without interpolation, a number, ``true``/``false``, ``null``;
* ``("tpl", parts)``: a string with ``${…}`` interpolations (parts are strings or expressions);
* ``("ref", names)``: a traversal of names (``var.gpu_size``, ``local.pools``, ``each.value``;
  an index ``[0]`` or ``["k"]`` is a name too);
* ``("tuple", items)``, ``("object", ((key, value), …))``, ``("call", name, args)``;
* ``("other",)``: anything else (operators, conditionals, ``for`` expressions, splats,
  heredocs): a value the model does not know, never a guess.

Expressions nested deeper than :data:`MAX_DEPTH` are ``("other",)`` past it. A file that does not
parse is one ParseIssue (SCH001) at the position the parser names, when it holds an
``azurerm_kubernetes_cluster`` resource (else it is skipped with a note: another provider's
module that python-hcl2 cannot read is no finding); nothing of it is read. So is
a file over :data:`MAX_TERRAFORM_BYTES`.

Its comments (``#``, ``//``, ``/* */``, as the parser's lexer read them) are the document's, for
the suppression directives of :mod:`linter.suppress`, when the text names ``mlops-lint``.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct, field

from mlops_lint.model.document import TERRAFORM, Document, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.sources.comments import DIRECTIVE_WORD, hcl_comments
from mlops_lint.sources.text import load_decoded

MAX_DEPTH = 48  # expression nesting the reader follows; deeper is ("other",)
# The Lark parser is linear but slow and its tree is large. Measured (2026-12-05, one core of the
# 2-core build machine, python-hcl2 8.1.4): 10,000 one-line pool resources (868 KiB) parse in 3.7 s
# (2,500 of them in 0.8 s) with a 133 MB peak; a for_each over a 100,000-item literal list (965 KiB)
# in 9.6 s (25,000 items in 1.9 s) with a 268 MB peak: 4-10 s and 130-270 MB per MiB. A larger
# file is not parsed and says so (one SCH001 naming it): the cap bounds one file to about 5 s and
# 140 MB. No real module comes near it: AKS allows 100 node pools per cluster, and the azurerm AKS
# examples are under 20 KiB.
MAX_TERRAFORM_BYTES = 512 * 1024
OTHER = ("other",)


class TfAttr(Struct, frozen=True):
    name: str
    span: Span  # the attribute's name
    value_span: Span  # its expression
    expr: Any


class TfBlock(Struct):
    type: str
    labels: tuple[str, ...]
    span: Span  # the block's type keyword to the end of its labels
    attrs: dict[str, TfAttr] = field(default_factory=dict)
    blocks: list["TfBlock"] = field(default_factory=list)

    def block(self, name: str) -> "TfBlock | None":
        return next((b for b in self.blocks if b.type == name), None)


class TfFile(Struct):
    """One Terraform file of the project: its top-level blocks (a ``.tfvars`` file's attributes
    are those of one block of type ``""``)."""

    path: str
    blocks: list[TfBlock] = field(default_factory=list)
    is_vars: bool = False
    az_commands: tuple = ()  # no az commands: the AKS rules that read scripts' commands see none
    commands: tuple = ()  # no shell commands: the script rules run on IaC files (SHL001) see none

    @property
    def folder(self) -> str:
        return self.path.rpartition("/")[0]


def _span(meta: Any) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_span(token: Any) -> Span:
    return Span(token.line, token.column, token.end_line, token.end_column)


def _unescape(text: str) -> str:
    if "\\" not in text and "$${" not in text and "%%{" not in text:
        return text
    out = re.sub(r'\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)', _escape, text)
    return out.replace("$${", "${").replace("%%{", "%{")


def _escape(match: re.Match) -> str:
    code = match.group(1)
    simple = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}
    if code in simple:
        return simple[code]
    if code[0] in "uU" and len(code) > 1:
        return chr(int(code[1:], 16)) if int(code[1:], 16) < 0x110000 else ""
    return "\\" + code


def _children(tree: Any) -> list:
    return [c for c in tree.children if not (hasattr(c, "data") and c.data == "new_line_or_comment")]


def _name(node: Any) -> str:
    """The text of an identifier / keyword / literal_value node (or a token)."""
    if hasattr(node, "data"):
        return "".join(str(c) for c in node.children)
    return str(node)


def expression(node: Any, depth: int = 0) -> Any:
    """The tuple form of one expression subtree (see the module comment)."""
    if depth > MAX_DEPTH:
        return OTHER
    while hasattr(node, "data") and node.data == "expr_term":
        kids = _children(node)
        if len(kids) == 3 and str(kids[0]) == "(":
            node = kids[1]
        elif len(kids) == 1:
            node = kids[0]
        else:
            return OTHER
        depth += 1
        if depth > MAX_DEPTH:
            return OTHER
    if not hasattr(node, "data"):
        return OTHER
    kind = node.data
    if kind == "int_lit" or kind == "float_lit":
        text = str(node.children[0])
        if len(text) > 100:
            return OTHER
        try:
            return ("lit", int(text) if kind == "int_lit" else float(text))
        except ValueError:
            return OTHER
    if kind == "literal_value":
        return ("lit", {"true": True, "false": False, "null": None}[str(node.children[0])])
    if kind == "string":
        return _string(node, depth)
    if kind == "identifier":
        return ("ref", (_name(node),))
    if kind in ("get_attr_expr_term", "index_expr_term"):
        names: list[str] = []
        while hasattr(node, "data") and node.data in ("get_attr_expr_term", "index_expr_term") and depth <= MAX_DEPTH:
            inner, step = _children(node)[:2]
            if node.data == "get_attr_expr_term":
                names.append(_name(_children(step)[-1]))
            else:
                index = expression(_children(step)[1] if len(_children(step)) > 2 else _children(step)[-1], depth + 1)
                if index[0] != "lit" or not isinstance(index[1], (str, int)) or isinstance(index[1], bool):
                    return OTHER
                names.append(str(index[1]))
            node = inner
            while hasattr(node, "data") and node.data == "expr_term" and len(_children(node)) == 1:
                node = _children(node)[0]
            depth += 1
        if not (hasattr(node, "data") and node.data == "identifier"):
            return OTHER
        names.append(_name(node))
        return ("ref", tuple(reversed(names)))
    if kind == "tuple":
        items = [c for c in _children(node) if hasattr(c, "data")]
        return ("tuple", tuple(expression(c, depth + 1) for c in items))
    if kind == "object":
        pairs = []
        for elem in (c for c in _children(node) if hasattr(c, "data") and c.data == "object_elem"):
            key_node, _, value = _children(elem)[:3]
            key = expression(_children(key_node)[0], depth + 1)
            if key[0] == "ref" and len(key[1]) == 1:
                key = ("lit", key[1][0])  # a bare name as an object key is that string
            pairs.append((key, expression(value, depth + 1)))
        return ("object", tuple(pairs))
    if kind == "function_call":
        kids = _children(node)
        name = _name(kids[0])
        arguments = next((c for c in kids if hasattr(c, "data") and c.data == "arguments"), None)
        args = tuple(expression(c, depth + 1) for c in _children(arguments) if hasattr(c, "data")) \
            if arguments is not None else ()
        return ("call", name, args)
    return OTHER


def _string(node: Any, depth: int) -> Any:
    parts: list[Any] = []
    for part in node.children:
        if not hasattr(part, "data"):
            continue  # the quotes
        inner = part.children[0]
        if hasattr(inner, "data"):
            if inner.data != "interpolation":
                return OTHER  # %{ if } / %{ for } directives
            parts.append(expression(_children(inner)[1], depth + 1))
        else:
            text = str(inner)
            if inner.type == "ESCAPED_INTERPOLATION":
                text = text[1:]
            elif inner.type == "ESCAPED_DIRECTIVE":
                text = text[1:]
            else:
                text = _unescape(text)
            if parts and isinstance(parts[-1], str):
                parts[-1] += text
            else:
                parts.append(text)
    if not parts:
        return ("lit", "")
    if len(parts) == 1 and isinstance(parts[0], str):
        return ("lit", parts[0])
    return ("tpl", tuple(parts))


def _body(body: Any, depth: int = 0) -> tuple[dict[str, TfAttr], list[TfBlock]]:
    attrs: dict[str, TfAttr] = {}
    blocks: list[TfBlock] = []
    for item in _children(body):
        if not hasattr(item, "data"):
            continue
        if item.data == "attribute":
            kids = item.children
            name_node, value = kids[0], kids[-1]
            attrs[_name(name_node)] = TfAttr(_name(name_node), _span(name_node.meta), _span(value.meta)
                                             if hasattr(value, "meta") and not value.meta.empty
                                             else _span(name_node.meta), expression(value))
        elif item.data == "block":
            kids = _children(item)
            labels = []
            for kid in kids[1:]:
                if hasattr(kid, "data") and kid.data == "string":
                    labels.append("".join(str(p.children[0]) for p in kid.children if hasattr(p, "data")))
                elif hasattr(kid, "data") and kid.data in ("identifier", "keyword", "literal_value"):
                    labels.append(_name(kid))
                else:
                    break
            inner = next((k for k in kids if hasattr(k, "data") and k.data == "body"), None)
            head = _span(kids[0].meta)
            last = kids[len(labels)].meta if labels else kids[0].meta
            block = TfBlock(_name(kids[0]), tuple(labels), Span(head.line, head.col, last.end_line, last.end_column))
            if inner is not None and depth < MAX_DEPTH:
                block.attrs, block.blocks = _body(inner, depth + 1)
            blocks.append(block)
    return attrs, blocks


def load_text(text: str, path: str) -> Document:
    """Read a Terraform file into a :class:`Document` (never raises for bad input)."""
    import hcl2
    from lark.exceptions import UnexpectedInput

    if text.startswith("\ufeff"):
        text = text[1:]
    is_vars = path.endswith(".tfvars")
    try:
        tree = hcl2.parses_to_tree(text)
    except UnexpectedInput as exc:
        line, col = max(getattr(exc, "line", 1) or 1, 1), max(getattr(exc, "column", 1) or 1, 1)
        if "azurerm_kubernetes_cluster" not in text:  # no AKS resource in it: the parser's gap is no error of the user's
            return Document(path=path, kind=TERRAFORM, skipped=(
                f"python-hcl2 cannot read it (line {line}) and it defines no AKS cluster or node pool"))
        return Document(path=path, kind=TERRAFORM, errors=[ParseIssue(
            Span(line, col, line, col + 1), "not valid Terraform (HCL) syntax here; the file was not read")])
    except RecursionError:
        return Document(path=path, kind=TERRAFORM, errors=[ParseIssue(
            Span(1, 1, 1, 2), "expressions nest too deeply to be read; the file was not read")])
    body = next((c for c in tree.children if hasattr(c, "data") and c.data == "body"), None)
    attrs, blocks = _body(body) if body is not None else ({}, [])
    if is_vars:
        blocks = [TfBlock("", (), Span(1, 1, 1, 2), attrs)]
    document = Document(path=path, kind=TERRAFORM, iac=TfFile(path, blocks, is_vars))
    if DIRECTIVE_WORD in text:  # suppression comments (`# mlops-lint: disable=AKS001 reason`)
        document.comments = hcl_comments(tree, text)
    return document


def load(data: bytes, path: str) -> Document:
    if len(data) > MAX_TERRAFORM_BYTES:
        return Document(path=path, kind=TERRAFORM, errors=[ParseIssue(Span(1, 1, 1, 2), (
            f"this Terraform file is {len(data) // 1024} KiB, over the {MAX_TERRAFORM_BYTES // 1024} KiB mlops-lint "
            "parses; it was not read, so the node pools it defines are unknown to the cluster model"))])
    return load_decoded(data, path, TERRAFORM, load_text)
