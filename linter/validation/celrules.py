"""A CustomResourceDefinition's CEL rules (``x-kubernetes-validations``), evaluated as the API server does.

Each schema node may carry rules; a rule is evaluated with ``self`` bound to the object's value
at that node, when the object has one (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-
resources/custom-resource-definitions/#validation-rules). What this module reproduces of the API
server:

- **Defaulting first**: absent properties with a schema ``default`` are filled in before the rules
  run, as the API server defaults before it validates.
- **Property names** are escaped as Kubernetes escapes them (``foo-bar`` is ``self.foo__dash__bar``,
  a CEL keyword ``namespace`` is ``self.__namespace__``, and since Kubernetes 1.32 also
  ``self.namespace``, as JobSet's and Trainer's rules read it); map keys (``additionalProperties``)
  are not.
- At the root, ``self.metadata`` has only ``name`` and ``generateName``; ``status`` is never
  validated here (it is live state, as for the rest of SCH002).
- ``number`` fields are doubles (``1`` in a ``type: number`` field is ``1.0``).
- A rule that is false is the rule's ``message`` (else its ``messageExpression``'s value, else
  ``failed rule: <rule>``), at ``fieldPath`` when it names a node of the object; a rule that fails
  to evaluate (``no such key``, no overload) is an error there too, as the API server rejects the
  object with the evaluation error.

Not checked, and listed by ``mlops-lint explain SCH002``: **transition rules** (those that read
``oldSelf``: they compare an update with the stored object, which a manifest does not have), rules
that do not compile with the engine (:mod:`linter.cel`; for a project's CRD, an info finding at the
rule in the CRD, :func:`crd_uncompiled`), and rules whose estimated cost is over the API server's
per-call limit for the object at hand (an info finding at the node).

One cause, one finding: a node the structural schema already reports as malformed (a wrong type, a
missing required field inside it) gets no CEL finding, nor do the nodes that hold it.
"""

from __future__ import annotations

import re
from typing import Any

from mlops_lint.model.vap import plain
from mlops_lint.validation.messages import KEY, VALUE, Issue, dotted

RULES = "x-kubernetes-validations"
_RESERVED = frozenset({
    "true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if", "import",
    "let", "loop", "package", "namespace", "return", "var", "void", "while",
})
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_NAMEABLE = re.compile(r"[A-Za-z_.\-/][A-Za-z0-9_.\-/]*").fullmatch
_FIELD_STEP = re.compile(r"""\.([A-Za-z_][A-Za-z0-9_-]*)|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*"((?:[^"\\]|\\.)*)"\s*\]""")


def escape(name: str) -> str | None:
    """A property's name as CEL reads it, or None when CEL cannot name it (Kubernetes' rules)."""
    if name in _RESERVED:
        return f"__{name}__"
    if not _NAMEABLE(name):
        return None
    escaped = name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__")
    return escaped.replace("/", "__slash__")


_MEMO: dict[int, tuple[Any, bool]] = {}  # id(node) -> (node, answer): the node is kept, so its id is not reused
_MEMO_KEPT = 1 << 20


def has_rules(schema: Any, memo: dict[int, tuple[Any, bool]] = _MEMO) -> bool:
    """Whether ``schema`` or a node below it carries CEL rules (memoised by node identity for the
    process: a CRD's schema is read once and kept, and most objects' schemas have no rule)."""
    key = id(schema)
    found = memo.get(key)
    if found is not None and found[0] is schema:
        return found[1]
    if len(memo) >= _MEMO_KEPT:
        memo.clear()
    memo[key] = (schema, False)  # a cycle (never in a CRD) ends here
    result = False
    if isinstance(schema, dict):
        if schema.get(RULES):
            result = True
        else:
            for child in _children(schema):
                if has_rules(child, memo):
                    result = True
                    break
    memo[key] = (schema, result)
    return result


def _children(schema: dict[str, Any]) -> list[Any]:
    children = []
    properties = schema.get("properties")
    if isinstance(properties, dict):
        children.extend(properties.values())
    for keyword in ("items", "additionalProperties"):
        if isinstance(schema.get(keyword), dict):
            children.append(schema[keyword])
    return children


def to_cel(value: Any, schema: Any, *, root: bool = False) -> Any:
    """``value`` as a rule's ``self`` sees it: defaulted, property names escaped, numbers typed."""
    if not isinstance(schema, dict):
        return plain(value)
    if isinstance(value, dict):
        properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else None
        extra = schema.get("additionalProperties")
        out: dict[str, Any] = {}
        if properties is not None:
            for name, child in properties.items():
                if name in value:
                    item = value[name]
                elif isinstance(child, dict) and "default" in child:
                    item = child["default"]
                else:
                    continue
                if item is None and not (isinstance(child, dict) and child.get("nullable")):
                    continue  # null in an optional field is pruned by the API server
                if root and name == "metadata" and isinstance(item, dict):
                    out[name] = {k: plain(item[k]) for k in ("name", "generateName") if k in item}
                    continue
                cel_name = escape(name)
                if cel_name is not None:
                    out[cel_name] = to_cel(item, child)
                    if name in _RESERVED:  # Kubernetes 1.32+ also accepts the keyword unescaped
                        out[name] = out[cel_name]
            if schema.get("x-kubernetes-preserve-unknown-fields"):
                for name, item in value.items():
                    if name not in properties and isinstance(name, str):
                        out.setdefault(name, plain(item))
        elif isinstance(extra, dict):
            for name, item in value.items():
                out[str(name)] = to_cel(item, extra)
        else:
            out = {str(name): plain(item) for name, item in value.items()}
        return out
    if isinstance(value, list):
        items = schema.get("items")
        return [to_cel(item, items) for item in value]
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def field_path(text: Any) -> tuple[str, ...] | None:
    """``.spec.foo['bar.baz']`` as steps, or None when it is not a path Kubernetes accepts."""
    if not isinstance(text, str) or not text:
        return None
    steps: list[str] = []
    at = 0
    while at < len(text):
        match = _FIELD_STEP.match(text, at)
        if match is None:
            return None
        steps.append(next(group for group in match.groups() if group is not None))
        at = match.end()
    return tuple(steps)


class Walk:
    """The CEL issues of one object against one version's OpenAPI schema."""

    def __init__(self, schema: dict[str, Any], blocked: list[tuple]):
        self.schema = schema
        self.blocked = blocked  # paths the structural schema reports as malformed
        self.issues: list[Issue] = []

    def run(self, body: Any) -> list[Issue]:
        if not isinstance(body, dict) or not has_rules(self.schema):
            return []
        try:
            self._node(body, self.schema, (), root=True)
        except RecursionError:  # data nested near the loader's depth limit: what was found stands
            pass
        return self.issues

    def _malformed(self, path: tuple) -> bool:
        for where in self.blocked:
            cut = min(len(where), len(path))
            if where[:cut] == path[:cut]:
                return True
        return False

    def _node(self, value: Any, schema: Any, path: tuple, *, root: bool = False) -> None:
        if value is None:
            return
        live = _live(schema)
        if live is None:
            return
        rules, properties, extra, items = live
        if rules and not self._malformed(path):
            self._rules(rules, value, schema, path, root)
        if isinstance(value, dict):
            for name, child in properties:  # only the properties with rules at or below them
                if root and name == "status":
                    continue
                if name in value:
                    self._node(value[name], child, path + (name,))
            if extra is not None:
                for name, item in value.items():
                    self._node(item, extra, path + (name,))
        elif isinstance(value, list) and items is not None:
            for i, item in enumerate(value):
                self._node(item, items, path + (i,))


    def _rules(self, rules: Any, value: Any, schema: dict[str, Any], path: tuple, root: bool) -> None:
        from mlops_lint.cel import Compiled, Unevaluated, compile_expression, evaluate, largest_collection, message_of

        if not isinstance(rules, list):
            return
        converted: Any = None
        largest = -1
        for rule in rules:
            if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
                continue
            compiled = compile_expression(rule["rule"])
            if isinstance(compiled, Compiled) and "oldSelf" in compiled.variables:
                continue  # a transition rule: needs the stored object (explain SCH002 lists them)
            if isinstance(compiled, Unevaluated):
                continue  # the engine cannot compile it: listed by explain SCH002 as not checked
            if converted is None:
                converted = to_cel(value, schema, root=root)
                largest = largest_collection(converted)
            result = evaluate(compiled, {"self": converted}, largest)
            if result is True:
                continue
            where = path
            anchor = VALUE
            steps = field_path(rule.get("fieldPath"))
            if steps is not None and _reaches(value, steps):
                where = path + steps
            text = dotted(where) if where else "the object"
            if isinstance(result, Unevaluated) and result.kind == "cost":
                self.issues.append(Issue(where, anchor, f"{text}: the CRD's CEL rule `{_short(rule['rule'])}` is not "
                                                        f"checked: {result.reason}", "unchecked", "info"))
                continue
            message = message_of(rule, {"self": converted}, rule["rule"], "rule")
            if isinstance(result, Unevaluated):
                message += f" (the CRD's CEL rule fails to evaluate: {result.reason})"
            elif result is not False:
                message += f" (the CRD's CEL rule gives {type(result).__name__}, not a boolean)"
            if where == () and isinstance(value, dict) and "kind" in value:
                anchor = KEY
                where = ("kind",)
            self.issues.append(Issue(where, anchor, f"{text}: {message}", "cel"))


_LIVE: dict[int, tuple[Any, Any]] = {}  # id(node) -> (node, its _live answer), as has_rules' memo


def _live(schema: Any) -> tuple[Any, list[tuple[str, Any]], Any, Any] | None:
    """What the walk needs of a schema node that carries CEL rules at or below it: its own rules,
    the properties, ``additionalProperties`` (when there are no properties) and ``items`` that
    carry rules; None for a node with none (most of a schema: the walk skips them without
    looking at each property)."""
    key = id(schema)
    found = _LIVE.get(key)
    if found is not None and found[0] is schema:
        return found[1]
    answer = None
    if isinstance(schema, dict) and has_rules(schema):
        properties = schema.get("properties")
        live = [(name, child) for name, child in properties.items() if isinstance(child, dict) and has_rules(child)] \
            if isinstance(properties, dict) else []
        extra = schema.get("additionalProperties")
        extra = extra if isinstance(extra, dict) and not isinstance(properties, dict) and has_rules(extra) else None
        items = schema.get("items")
        items = items if isinstance(items, dict) and has_rules(items) else None
        answer = (schema.get(RULES), live, extra, items)
    if len(_LIVE) >= _MEMO_KEPT:
        _LIVE.clear()
    _LIVE[key] = (schema, answer)
    return answer


def _reaches(value: Any, steps: tuple[str, ...]) -> bool:
    node = value
    for step in steps:
        if not isinstance(node, dict) or step not in node:
            return False
        node = node[step]
    return True


def _short(rule: str) -> str:
    text = " ".join(rule.split())
    return text if len(text) <= 120 else text[:119] + "…"


def cel_issues(body: Any, schema: Any, known: list[Issue]) -> list[Issue]:
    """The CEL issues of ``body`` against ``schema`` (a version's OpenAPI schema), given the
    structural schema's issues ``known`` (nodes they report malformed are not judged again)."""
    if not isinstance(schema, dict):
        return []
    blocked = [issue.path for issue in known if issue.severity is None]
    return Walk(schema, blocked).run(body)


def rules(schema: Any) -> list[tuple[str, dict[str, Any], str | None]]:
    """Every CEL rule of ``schema`` where the walk reaches (properties, items, map values), in
    schema order: (schema path, the rule's entry, why it is never checked or None when SCH002
    evaluates it). The schema path is ``.`` for the root, ``.spec.groups[]`` for a list's items,
    ``.spec.labels[*]`` for a map's values."""
    from mlops_lint.cel import Compiled, compile_expression

    found: list[tuple[str, dict[str, Any], str | None]] = []

    def visit(node: Any, where: str, live: bool) -> None:
        if not isinstance(node, dict):
            return
        for rule in node.get(RULES) or []:
            if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
                continue
            compiled = compile_expression(rule["rule"])
            why = None
            if live:
                why = "under status (live state)"
            elif not isinstance(compiled, Compiled):
                why = f"not compiled by the engine: {compiled.reason}"
            elif "oldSelf" in compiled.variables:
                why = "transition rules (read oldSelf)"
            found.append((where if live else where or ".", rule, why))
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, child in properties.items():
                visit(child, f"{where}.{name}", live or (not where and name == "status"))
        if isinstance(node.get("items"), dict):
            visit(node["items"], f"{where}[]", live)
        if isinstance(node.get("additionalProperties"), dict):
            visit(node["additionalProperties"], f"{where}[*]", live)

    visit(schema, "", False)
    return found


def crd_uncompiled(crd: Any) -> list[Issue]:
    """An info issue at each rule of a CustomResourceDefinition (the project's own) that the engine
    cannot compile (Kubernetes' optional syntax ``self.?field``, an unknown function's macro): SCH002
    never checks it on the CRD's objects, and says so once, here, rather than on every object."""
    from mlops_lint.cel import Unevaluated, compile_expression

    spec = crd.get("spec") if isinstance(crd, dict) else None
    versions = spec.get("versions") if isinstance(spec, dict) else None
    if not isinstance(versions, list):
        return []
    found: list[Issue] = []

    def visit(node: Any, path: tuple, depth: int) -> None:
        if not isinstance(node, dict) or depth > 64:
            return
        rules = node.get(RULES)
        if isinstance(rules, list):
            for number, rule in enumerate(rules):
                if not isinstance(rule, dict) or not isinstance(rule.get("rule"), str):
                    continue
                compiled = compile_expression(rule["rule"])
                if isinstance(compiled, Unevaluated) and compiled.kind == "compile":
                    where = path + (RULES, number, "rule")
                    found.append(Issue(where, VALUE, f"{dotted(where)}: the CEL rule `{_short(rule['rule'])}` is not "
                                                     f"checked on this CRD's objects: the engine cannot compile it "
                                                     f"({compiled.reason})", "unchecked", "info"))
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, child in properties.items():
                visit(child, path + ("properties", name), depth + 1)
        for keyword in ("items", "additionalProperties"):
            if isinstance(node.get(keyword), dict):
                visit(node[keyword], path + (keyword,), depth + 1)

    for number, version in enumerate(versions):
        schema = version.get("schema") if isinstance(version, dict) else None
        if isinstance(schema, dict) and has_rules(schema.get("openAPIV3Schema")):
            visit(schema["openAPIV3Schema"], ("spec", "versions", number, "schema", "openAPIV3Schema"), 0)
    return found


def inventory(schema: Any) -> tuple[int, list[tuple[str, str, str]]]:
    """How many CEL rules ``schema`` has where the walk reaches, and those that are never checked:
    (schema path, rule, why)."""
    found = rules(schema)
    return len(found), [(where, rule["rule"], why) for where, rule, why in found if why is not None]


__all__ = ["RULES", "cel_issues", "crd_uncompiled", "escape", "field_path", "inventory", "rules", "to_cel"]
