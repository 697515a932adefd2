"""Bicep files (``*.bicep``, ``*.bicepparam``): the parameters, variables and resources the
cluster model reads, with exact positions.

Parsed with pycep-parser's Lark grammar (LALR, as Checkov does), from its raw parse tree: its
JSON form drops the quotes, so a reference to the parameter ``location`` and the string
``'location'`` read alike there, and it carries no positions. The tree becomes the expression
tuples of :mod:`linter.sources.terraform` (``("lit", v)``, ``("tpl", parts)``, ``("ref", names)``,
``("tuple", items)``, ``("object", pairs, spans)``, ``("other",)``), where an object also keeps
each pair's (key span, value span). A file is a :class:`~linter.sources.terraform.TfFile` whose
blocks are ``variable`` (a ``param`` with its default), ``locals`` (the ``var``\\ s) and
``resource`` (type, symbolic name; the body's pairs as attributes; ``existing`` for a resource
declared ``existing``; a resource loop ``[for … in …: {…}]`` keeps its loop as the attribute
``[for]``, ``("for", item, index, collection, filtered)``, with ``range(a, n)`` read as
``("call", "range", args)``; a loop as a value, ``agentPoolProfiles: [for …]``, is
``("forexpr", loop, body)``); a ``.bicepparam`` file's
``param x = value`` lines are the attributes of one block of type ``""``, like a ``.tfvars``.

A file over :data:`MAX_BICEP_BYTES` is not parsed (the grammar's quoted-string pattern looks
ahead to the end of the line for every string), and one that does not parse is one SCH001 when
it holds a ``Microsoft.ContainerService`` resource (else it is skipped with a note).

Its ``//`` and ``/* */`` comments are the document's, for the suppression directives of
:mod:`linter.suppress`, when the text names ``mlops-lint``
(:func:`linter.sources.comments.bicep_comments`; pycep's tree drops them).
"""

from __future__ import annotations

import re
from typing import Any

from mlops_lint.model.document import BICEP, Document, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.sources.comments import DIRECTIVE_WORD, bicep_comments
from mlops_lint.sources.terraform import MAX_DEPTH, OTHER, TfAttr, TfBlock, TfFile
from mlops_lint.sources.text import load_decoded

MAX_BICEP_BYTES = 512 * 1024
_INTERPOLATION = re.compile(r"\\.|\$\{([^{}]*)\}", re.S)
_PARAM = re.compile(r"^\s*param\s+([A-Za-z_]\w*)\s*=\s*(.+?)\s*$", re.M)


def _span(meta: Any) -> Span:
    return Span(meta.line, meta.column, meta.end_line, meta.end_column)


def _token_span(token: Any) -> Span:
    return Span(token.line, token.column, token.end_line, token.end_column)


def _quoted(text: str, depth: int) -> Any:
    """A ``'…'`` string: a literal, or a template of its ``${name}`` / ``${a.b}`` interpolations."""
    body = text[1:-1]
    parts: list[Any] = []
    position = 0
    for match in _INTERPOLATION.finditer(body):
        if match.group(1) is None:
            continue  # an escape (``\${`` is the text ``${``): _unescape reads it
        parts.append(body[position:match.start()])
        inner = match.group(1).strip()
        if re.fullmatch(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*", inner):
            parts.append(("ref", tuple(inner.split("."))))
        else:
            parts.append(OTHER)
        position = match.end()
    parts.append(body[position:])
    parts = [_unescape(p) if isinstance(p, str) else p for p in parts if p != ""]
    if not parts:
        return ("lit", "")
    if len(parts) == 1 and isinstance(parts[0], str):
        return ("lit", parts[0])
    return ("tpl", tuple(parts))


def _unescape(text: str) -> str:
    simple = {"n": "\n", "t": "\t", "r": "\r", "'": "'", "\\": "\\", "$": "$"}
    return re.sub(r"\\(.)", lambda m: simple.get(m.group(1), "\\" + m.group(1)), text)


def expression(node: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        return OTHER
    if not hasattr(node, "data"):
        return OTHER
    kind = node.data
    if kind in ("null", "true", "false"):
        return ("lit", {"null": None, "true": True, "false": False}[kind])
    if kind == "int_type":
        text = str(node.children[-1])
        return ("lit", int(text)) if len(text) <= 100 and text.lstrip("-").isdigit() else OTHER
    if kind == "string":
        token = node.children[-1]
        if token.type == "STRING":
            return ("ref", (str(token),))
        return _quoted(str(token), depth) if str(token).startswith("'") else OTHER
    if kind == "array":
        return ("tuple", tuple(expression(c, depth + 1) for c in node.children if hasattr(c, "data")))
    if kind == "object":
        pairs, spans = [], []
        for pair in (c for c in node.children if hasattr(c, "data") and c.data == "pair"):
            key_node = pair.children[0]
            key = str(key_node.children[0]) if hasattr(key_node, "children") and key_node.children else ""
            if key.startswith("'") and key.endswith("'"):
                key = key[1:-1]
            value = pair.children[1]
            pairs.append((("lit", key), expression(value, depth + 1)))
            spans.append((_span(key_node.meta), _span(value.meta) if hasattr(value, "meta") and not value.meta.empty
                           else _span(key_node.meta)))
        return ("object", tuple(pairs), tuple(spans))
    if kind == "loop" and node.children:
        head = _loop(node)
        return ("forexpr", head, expression(node.children[-1], depth + 1)) if head is not OTHER else OTHER
    if kind == "function" and node.children and str(node.children[0]).rstrip("(") == "range":
        args = tuple(expression(c, depth + 1) for c in node.children[1:] if hasattr(c, "data"))
        return ("call", "range", args)
    if kind == "operator" and node.children and getattr(node.children[0], "data", "") == "property_accessor":
        left, right = node.children[0].children[0], node.children[0].children[-1]
        base, name = expression(left, depth + 1), expression(right, depth + 1)
        if base[0] == "ref" and name[0] == "ref" and len(name[1]) == 1:
            return ("ref", base[1] + name[1])
    return OTHER


def _blocks(tree: Any) -> list[TfBlock]:
    blocks: list[TfBlock] = []
    for element in tree.children:
        if not hasattr(element, "data"):
            continue
        kids = element.children
        if element.data == "param":
            name = next((k for k in kids if getattr(k, "type", "") == "STRING"), None)
            if name is None:
                continue
            block = TfBlock("variable", (str(name),), _token_span(name))
            value = kids[-1]
            if hasattr(value, "data") and value.data != "data_type":
                block.attrs["default"] = TfAttr("default", _span(value.meta), _span(value.meta), expression(value))
            blocks.append(block)
        elif element.data == "var":
            name = next((k for k in kids if getattr(k, "type", "") == "STRING"), None)
            if name is not None:
                value = kids[-1]
                block = TfBlock("locals", (), _token_span(name))
                block.attrs[str(name)] = TfAttr(str(name), _token_span(name), _span(value.meta), expression(value))
                blocks.append(block)
        elif element.data == "resource":
            name = next((k for k in kids if getattr(k, "type", "") == "STRING"), None)
            pair = next((k for k in kids if hasattr(k, "data") and k.data == "type_api_pair"), None)
            body = kids[-1]
            loop = None
            if hasattr(body, "data") and body.data == "loop":
                loop, body = _loop(body), body.children[-1]
            if name is None or pair is None or not (hasattr(body, "data") and body.data == "object"):
                continue  # a condition (if), or a loop over something else than an object: its pools are not read
            resource_type = str(pair.children[0]).strip("'").partition("@")[0]
            existing = any(getattr(k, "type", "") == "EXISTING" for k in kids)
            block = TfBlock("existing" if existing else "resource", (resource_type, str(name)), _token_span(name))
            if loop is not None:
                block.attrs["[for]"] = TfAttr("[for]", _token_span(name), _token_span(name), loop)
            expr = expression(body)
            for (key, value), (key_span, value_span) in zip(expr[1], expr[2]):
                block.attrs[key[1]] = TfAttr(key[1], key_span, value_span, value)
            blocks.append(block)
    return blocks


def _loop(node: Any) -> Any:
    """A resource loop ``[for x in coll: …]``, ``[for (x, i) in coll: …]``, ``[for x in items(obj): …]``:
    ``("for", item name, index name or None, collection, filtered)`` (a ``: if (…)`` filter makes
    the instances unknown); OTHER for a form not read."""
    kids = [k for k in node.children if hasattr(k, "data") or k is None]
    head = kids[0] if kids else None
    if head is None or not hasattr(head, "data") or len(kids) < 3:
        return OTHER
    names = [str(k) for k in head.children if getattr(k, "type", "") == "STRING"]
    value = next((k for k in reversed(head.children) if hasattr(k, "data")), None)
    if value is None or not names:
        return OTHER
    collection = expression(value, 1)
    if head.data == "loop_object":
        collection = ("call", "items", (collection,))
    filtered = kids[-2] is not None
    if head.data == "loop_array_index" and len(names) == 2:
        return ("for", names[0], names[1], collection, filtered)
    return ("for", names[0], None, collection, filtered)


_PARSER: Any = None


def _parser() -> Any:
    global _PARSER
    if _PARSER is None:
        from pycep import BicepParser

        _PARSER = BicepParser().lark_parser
    return _PARSER


def _bicepparam(text: str, path: str) -> Document:
    """``param name = value`` lines of a parameters file (values read as Bicep expressions)."""
    block = TfBlock("", (), Span(1, 1, 1, 2))
    for match in _PARAM.finditer(text):
        line = text.count("\n", 0, match.start(1)) + 1
        col = match.start(1) - (text.rfind("\n", 0, match.start(1)) + 1) + 1
        value = _value_of(match.group(2))
        span = Span(line, col, line, col + len(match.group(1)))
        block.attrs[match.group(1)] = TfAttr(match.group(1), span, span, value)
    document = Document(path=path, kind=BICEP, iac=TfFile(path, [block], True))
    if DIRECTIVE_WORD in text:
        document.comments = bicep_comments(text)
    return document


def _value_of(text: str) -> Any:
    from lark.exceptions import LarkError

    try:
        tree = _parser().parse(f"var x = {text}\n")
    except (LarkError, RecursionError):
        return OTHER
    element = next((c for c in tree.children if hasattr(c, "data")), None)
    return expression(element.children[-1]) if element is not None and element.children else OTHER


def load_text(text: str, path: str) -> Document:
    """Read a Bicep file into a :class:`Document` (never raises for bad input)."""
    from lark.exceptions import LarkError, UnexpectedInput

    if text.startswith("\ufeff"):
        text = text[1:]
    if path.endswith(".bicepparam"):
        return _bicepparam(text, path)
    if text.count("'''") % 2:
        return Document(path=path, kind=BICEP, errors=[ParseIssue(Span(1, 1, 1, 2),
                        "a ''' multi-line string is not closed; the file was not read")])
    try:
        tree = _parser().parse(text if text.endswith("\n") else text + "\n")
    except UnexpectedInput as exc:
        line, col = max(getattr(exc, "line", 1) or 1, 1), max(getattr(exc, "column", 1) or 1, 1)
        if "Microsoft.ContainerService" not in text:  # no AKS resource in it: pycep's gap is no error of the user's
            return Document(path=path, kind=BICEP, skipped=(
                f"pycep-parser cannot read it (line {line}) and it defines no AKS cluster or agent pool"))
        return Document(path=path, kind=BICEP, errors=[ParseIssue(
            Span(line, col, line, col + 1), "not valid Bicep syntax here (as pycep-parser reads it); the file was not read")])
    except (LarkError, RecursionError):
        return Document(path=path, kind=BICEP, errors=[ParseIssue(
            Span(1, 1, 1, 2), "not valid Bicep syntax (as pycep-parser reads it); the file was not read")])
    document = Document(path=path, kind=BICEP, iac=TfFile(path, _blocks(tree), False))
    if DIRECTIVE_WORD in text:  # suppression comments (`// mlops-lint: disable=AKS001 reason`)
        document.comments = bicep_comments(text)
    return document


def load(data: bytes, path: str) -> Document:
    if len(data) > MAX_BICEP_BYTES:
        return Document(path=path, kind=BICEP, errors=[ParseIssue(Span(1, 1, 1, 2), (
            f"this Bicep file is {len(data) // 1024} KiB, over the {MAX_BICEP_BYTES // 1024} KiB mlops-lint "
            "parses; it was not read, so the node pools it defines are unknown to the cluster model"))])
    return load_decoded(data, path, BICEP, load_text)
