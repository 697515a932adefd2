"""ARM templates (``*.json`` whose ``$schema`` is a ``deploymentTemplate``): the parameters,
variables and AKS resources the cluster model reads, with exact positions.

A ``.json`` file is discovered as a manifest; :func:`is_template` recognises an ARM template by
its content (``"$schema"`` naming ``deploymentTemplate`` in the first 4 KB, where the key always
stands) and :func:`linter.sources.files.load_bytes` gives it to this reader instead of the YAML
one. A deployment parameters file (``deploymentParameters``) is recognised the same way.

The JSON is composed into the positioned tree of :mod:`linter.model.tree` (the YAML loader's
composer, with its bounds) and becomes the expression tuples of :mod:`linter.sources.terraform`,
so :mod:`linter.model.cluster.from_bicep` reads it as it reads Bicep:

* ``parameters`` are ``variable`` blocks named ``param:<name>`` with their ``defaultValue``;
  ``variables`` are ``locals`` named ``var:<name>`` (ARM keeps the two apart, so do the names);
* ``resources`` (a list, or the symbolic-name object of ``languageVersion`` 2.0) of type
  ``Microsoft.ContainerService/managedClusters`` and ``…/managedClusters/agentPools`` are
  ``resource`` blocks whose attributes are the resource's keys (an ``agentPools`` resource nested
  in its cluster's ``resources`` too, that cluster its parent). A pool's ``name`` is
  ``cluster/pool``: the part after the last ``/`` is the pool, the part before names its
  cluster (the ``parent`` the Bicep reader follows), when both are determined;
* ``copy`` loops: a pool resource's ``copy`` (``count``, ``name``) and a cluster's property
  loop ``properties.copy[]`` named ``agentPoolProfiles`` (``count``, ``input``) are kept as
  written, with ``copyIndex(…)`` read as ``("copyindex", loop, offset)``; the pool reader expands
  a known count into one pool per index (:mod:`linter.model.cluster.from_bicep`);
* values: JSON literals; a string ``[expression]`` is read for the simple forms
  ``parameters('x')``, ``variables('x')``, ``'text'``, integers, ``copyIndex(…)`` and ``concat(…)`` of those; any
  other expression (``format``, ``resourceId``, ``if`` …) is unknown, never guessed. ``[[`` at the
  start is an escaped ``[`` (a literal).

Positions are the JSON key's line and column (and its value's span). Whole-line ``//`` comments,
which ARM accepts, are read as blank lines (and for suppression directives,
``// mlops-lint: disable=AKS001 reason``); comments after a value or ``/* */`` are not read (the
file is then not JSON the reader can compose: one SCH001). A template Bicep generated
(``metadata._generator.name: bicep``) beside the ``.bicep`` file of the same name is that file
compiled, and is not read twice (see :func:`linter.model.cluster.from_bicep.read_bicep`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from msgspec import Struct

from mlops_lint.model.document import BICEP, Comment, Document, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.sources.comments import DIRECTIVE_WORD, place_comments, positioned
from mlops_lint.sources.terraform import MAX_DEPTH, OTHER, TfAttr, TfBlock, TfFile
from mlops_lint.sources.text import load_decoded

CLUSTER_TYPES_WRITTEN = ("Microsoft.ContainerService/managedClusters", "Microsoft.ContainerService/managedClusters/agentPools")
CLUSTER_TYPES = tuple(t.lower() for t in CLUSTER_TYPES_WRITTEN)
_HEAD = 4096
_SCHEMA = re.compile(rb'"\$schema"\s*:\s*"[^"]*(deploymentTemplate|deploymentParameters)', re.IGNORECASE)
MAX_EXPRESSION_CHARS = 4096  # an ARM expression longer than this is not read (unknown)


class ArmFile(TfFile):
    """An ARM template (or parameters file) as the Bicep reader's blocks; ``generator`` is
    ``metadata._generator.name`` (``bicep`` for a compiled Bicep file)."""

    generator: str = ""


def is_template(data: bytes, display: str) -> bool:
    """Whether a ``.json`` file is an ARM template or deployment parameters file (by content)."""
    return display.lower().endswith(".json") and _SCHEMA.search(data[:_HEAD]) is not None


# ---------------------------------------------------------------------------------------------
# ARM expressions: the simple forms


_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<int>-?\d{1,18})|(?P<name>[A-Za-z_][\w.]*)|(?P<punct>[(),]))")


def _tokens(text: str) -> list[tuple[str, str]] | None:
    out: list[tuple[str, str]] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            if text[position:].strip() == "":
                break
            return None
        position = match.end()
        kind = match.lastgroup or ""
        out.append((kind, match.group(kind)))
    return out


def _parse(tokens: list[tuple[str, str]], at: int, depth: int) -> tuple[Any, int]:
    """One expression at ``tokens[at]``: (its tuple, the index after it); OTHER for what is not read."""
    if depth > MAX_DEPTH or at >= len(tokens):
        return OTHER, len(tokens)
    kind, text = tokens[at]
    if kind == "str":
        return ("lit", text[1:-1].replace("''", "'")), at + 1
    if kind == "int":
        return ("lit", int(text)), at + 1
    if kind != "name" or at + 1 >= len(tokens) or tokens[at + 1] != ("punct", "("):
        return OTHER, len(tokens)
    args: list[Any] = []
    position = at + 2
    while position < len(tokens) and tokens[position] != ("punct", ")"):
        arg, position = _parse(tokens, position, depth + 1)
        args.append(arg)
        if position < len(tokens) and tokens[position] == ("punct", ","):
            position += 1
        elif position < len(tokens) and tokens[position] != ("punct", ")"):
            return OTHER, len(tokens)  # a property access, an index: not read
    if position >= len(tokens):
        return OTHER, len(tokens)
    after = position + 1
    name = text.lower()
    if name in ("parameters", "variables") and len(args) == 1 and args[0][0] == "lit" and isinstance(args[0][1], str):
        prefix = "param:" if name == "parameters" else "var:"
        return ("ref", (prefix + args[0][1],)), after
    if name == "copyindex" and len(args) <= 2:
        return _copy_index(args), after
    if name == "concat" and args and all(a[0] in ("lit", "ref", "tpl", "copyindex") for a in args):
        parts: list[Any] = []
        for arg in args:
            if arg[0] == "lit" and isinstance(arg[1], (str, int)) and not isinstance(arg[1], bool):
                parts.append(str(arg[1]))
            elif arg[0] == "tpl":
                parts.extend(arg[1])
            else:
                parts.append(arg)
        return ("tpl", tuple(parts)), after
    return OTHER, after


def _copy_index(args: list[Any]) -> Any:
    """``copyIndex()``, ``copyIndex(1)``, ``copyIndex('loop')``, ``copyIndex('loop', 1)``:
    ``("copyindex", loop name or None, offset)``; the pool reader replaces it by the instance's
    number when the loop's count is known (:func:`linter.model.cluster.from_bicep.substitute`)."""
    loop, offset = None, 0
    rest = list(args)
    if rest and rest[0][0] == "lit" and isinstance(rest[0][1], str):
        loop = rest.pop(0)[1]
    if rest and rest[0][0] == "lit" and isinstance(rest[0][1], int) and not isinstance(rest[0][1], bool):
        offset = rest.pop(0)[1]
    return ("copyindex", loop, offset) if not rest else OTHER


def expression_of(text: str) -> Any:
    """A JSON string as ARM reads it: a literal, or a ``[…]`` expression (simple forms only)."""
    if not (text.startswith("[") and text.endswith("]")) or text.startswith("[["):
        return ("lit", text[1:] if text.startswith("[[") else text)
    body = text[1:-1]
    if len(body) > MAX_EXPRESSION_CHARS:
        return OTHER
    tokens = _tokens(body)
    if not tokens:
        return OTHER
    parsed, end = _parse(tokens, 0, 0)
    return parsed if end == len(tokens) else OTHER


def _value(node: Any, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        return OTHER
    if isinstance(node, YMap):
        pairs, spans = [], []
        for key, value in node.items():
            pairs.append((("lit", str(key)), _value(value, depth + 1)))
            spans.append((node.key_span(key), node.value_span(key)))
        return ("object", tuple(pairs), tuple(spans))
    if isinstance(node, YSeq):
        return ("tuple", tuple(_value(item, depth + 1) for item in node))
    if isinstance(node, str):
        return expression_of(node)
    if node is None or isinstance(node, (bool, int, float)):
        return ("lit", node)
    return OTHER


# ---------------------------------------------------------------------------------------------
# The template


def _resources(root: YMap) -> list[tuple[Any, YMap]]:
    """(symbolic name or None, resource) of every top-level resource."""
    resources = root.get("resources")
    if isinstance(resources, YSeq):
        return [(None, r) for r in resources if isinstance(r, YMap)]
    if isinstance(resources, YMap):  # languageVersion 2.0: symbolic names
        return [(name, r) for name, r in resources.items() if isinstance(r, YMap)]
    return []


def _text(node: Any) -> str | None:
    return node if isinstance(node, str) else None


def _pool_name(expr: Any) -> tuple[Any, Any]:
    """(cluster part, pool part) of an agent pool's ``cluster/pool`` name expression."""
    if expr[0] == "lit" and isinstance(expr[1], str) and "/" in expr[1]:
        cluster, _, pool = expr[1].rpartition("/")
        return ("lit", cluster), ("lit", pool)
    if expr[0] == "tpl":
        parts = list(expr[1])
        for position in range(len(parts) - 1, -1, -1):
            part = parts[position]
            if isinstance(part, str) and "/" in part:
                before, _, after = part.rpartition("/")
                head = tuple(p for p in (*parts[:position], before) if p != "")
                tail = tuple(p for p in (after, *parts[position + 1:]) if p != "")

                def one(items: tuple) -> Any:
                    if not items:
                        return ("lit", "")
                    if len(items) == 1:
                        return ("lit", items[0]) if isinstance(items[0], str) else items[0]
                    return ("tpl", items)
                return one(head), one(tail)
    return OTHER, OTHER


def _read(root: YMap, path: str) -> ArmFile:
    schema = _text(root.get("$schema")) or ""
    if "deploymentparameters" in schema.lower():
        parameters = root.get_map("parameters")
        block = TfBlock("", (), root.span)
        for name, entry in (parameters or {}).items():
            if isinstance(entry, YMap) and "value" in entry:
                block.attrs["param:" + str(name)] = TfAttr("param:" + str(name), parameters.key_span(name),
                                                           entry.value_span("value"), _value(entry["value"]))
        return ArmFile(path, [block], is_vars=True)
    blocks: list[TfBlock] = []
    parameters = root.get_map("parameters")
    for name, entry in (parameters or {}).items():
        block = TfBlock("variable", ("param:" + str(name),), parameters.key_span(name))
        if isinstance(entry, YMap) and "defaultValue" in entry:
            block.attrs["default"] = TfAttr("default", entry.key_span("defaultValue"), entry.value_span("defaultValue"),
                                            _value(entry["defaultValue"]))
        blocks.append(block)
    variables = root.get_map("variables")
    if variables:
        block = TfBlock("locals", (), root.key_span("variables"))
        for name, value in variables.items():
            block.attrs["var:" + str(name)] = TfAttr("var:" + str(name), variables.key_span(name),
                                                     variables.value_span(name), _value(value))
        blocks.append(block)
    clusters: dict[Any, str] = {}  # the cluster's name (as an expression) -> its block's symbol
    pools: list[tuple[TfBlock, Any]] = []
    for position, (symbol, resource) in enumerate(_resources(root)):
        kind = (_text(resource.get("type")) or "").lower()
        if kind not in CLUSTER_TYPES:
            continue
        name_span = resource.key_span("name") if "name" in resource else resource.span
        label = f"{path}#{symbol or f'resources[{position}]'}"  # unique in the folder
        resource_type = CLUSTER_TYPES_WRITTEN[1] if kind.endswith("agentpools") else CLUSTER_TYPES_WRITTEN[0]
        block = TfBlock("resource", (resource_type, str(label)), name_span)
        for key, value in resource.items():
            block.attrs[str(key)] = TfAttr(str(key), resource.key_span(key), resource.value_span(key), _value(value))
        if kind.endswith("agentpools"):
            pools.append((block, None))
        elif "name" in block.attrs:
            try:
                clusters.setdefault(block.attrs["name"].expr, str(label))
            except TypeError:  # an unhashable expression: matched by no pool
                pass
            children = resource.get("resources")
            for index, child in enumerate(children if isinstance(children, YSeq) else ()):
                # an agentPools resource nested in its cluster: its parent is that cluster
                child_kind = (_text(child.get("type")) if isinstance(child, YMap) else None) or ""
                if child_kind.lower() not in ("agentpools", CLUSTER_TYPES[1]):
                    continue
                nested = TfBlock("resource", (CLUSTER_TYPES_WRITTEN[1], f"{label}/resources[{index}]"),
                                 child.key_span("name") if "name" in child else child.span)
                for key, value in child.items():
                    nested.attrs[str(key)] = TfAttr(str(key), child.key_span(key), child.value_span(key), _value(value))
                pools.append((nested, str(label)))
                blocks.append(nested)
        blocks.append(block)
    for block, parent in pools:
        name = block.attrs.get("name")
        if name is None:
            continue
        if parent is not None:  # nested: its name is the pool's (or cluster/pool)
            pool_part = _pool_name(name.expr)[1] if _pool_name(name.expr)[1] is not OTHER else name.expr
            block.attrs["name"] = TfAttr("name", name.span, name.value_span, pool_part)
            block.attrs["parent"] = TfAttr("parent", name.span, name.value_span, ("ref", (parent,)))
            continue
        cluster_part, pool_part = _pool_name(name.expr)
        block.attrs["name"] = TfAttr("name", name.span, name.value_span, pool_part)
        try:
            symbol = clusters.get(cluster_part) if cluster_part is not OTHER else None
        except TypeError:
            symbol = None
        # the parent the Bicep reader follows: the template's cluster of that name, else one made elsewhere
        block.attrs["parent"] = TfAttr("parent", name.span, name.value_span,
                                       ("ref", (symbol,)) if symbol is not None else OTHER)
    metadata = root.get_map("metadata")
    generator = metadata.get_map("_generator") if metadata is not None else None
    return ArmFile(path, blocks, generator=(_text(generator.get("name")) or "") if generator is not None else "")


_LINE_COMMENT = re.compile(r"^[ \t]*//[^\n]*", re.M)
_LINE_COMMENT_AT = re.compile(r"^[ \t]*(//[^\n]*)", re.M)


def _without_line_comments(text: str) -> str:
    """Whole-line ``//`` comments (ARM accepts them) blanked, positions kept: a JSON string holds
    no raw line break, so a line that starts with ``//`` is outside every string."""
    return _LINE_COMMENT.sub(lambda m: " " * len(m.group(0)), text) if "//" in text else text


def _line_comments(text: str) -> list[Comment]:
    """The whole-line ``//`` comments, for suppression directives (``// mlops-lint: disable=…``)."""
    found = ((m.start(1), m.group(1)) for m in _LINE_COMMENT_AT.finditer(text))
    return place_comments(list(positioned(text, found)), text.split("\n"), "//")


def load_text(text: str, path: str) -> Document:
    """Read an ARM template into a :class:`Document` (never raises for bad input)."""
    from mlops_lint.sources.yaml_k8s import compose_tree

    text = text.lstrip("\ufeff")
    comments = _line_comments(text) if DIRECTIVE_WORD in text else []
    text = _without_line_comments(text)
    root = compose_tree(text)
    if not isinstance(root, YMap):
        span, why = Span(1, 1, 1, 2), "is not a JSON object the linter can read (too deep or too large)"
        try:
            json.loads(text)
        except ValueError as exc:  # where the JSON breaks
            line, col = getattr(exc, "lineno", 1), getattr(exc, "colno", 1)
            span, why = Span(line, col, line, col + 1), f"is not valid JSON ({getattr(exc, 'msg', exc)})"
        except RecursionError:
            pass
        return Document(path=path, kind=BICEP, errors=[ParseIssue(
            span, f"this ARM template {why}; its node pools were not read")])
    return Document(path=path, kind=BICEP, iac=_read(root, path), comments=comments)


def load(data: bytes, path: str) -> Document:
    return load_decoded(data, path, BICEP, load_text)
