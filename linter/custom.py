"""The organisation's own rules, written in the config as CEL (``custom-rules``), shaped like a
ValidatingAdmissionPolicy so that the same text can be enforced in the cluster
(``mlops-lint export-policies``)::

    custom-rules:
      - id: ORG001
        name: training-priority-required
        severity: error
        match: {kinds: [Job, PyTorchJob], namespaces: [research]}
        validations:
          - expression: "has(object.spec.template.spec.priorityClassName)"
            message: "training Jobs in research use PriorityClass training-low"

Each custom rule becomes a :class:`~linter.rule.RuleMeta` of an OBJECT scope restricted to its
kinds, in the reserved ``ORG`` family: selected, ignored, suppressed (``# mlops-lint:
disable=ORG001``), severity-overridden and baselined like a built-in rule. A validation sees
``object`` (the object as plain data) and ``namespaceObject`` (null: the linter does not resolve it
here); it is bounded in cost like every CEL expression (:mod:`linter.cel`). A validation that is
false is a finding at the object (or at ``fieldPath`` when that names a node of it) with the
validation's ``message`` (or ``messageExpression``); one that fails to evaluate is a finding too,
as the API server with ``failurePolicy: Fail`` would deny the object.

The rules come from the config the user trusts (a config in a folder others can write to is not
read: :mod:`linter.roots`); an expression is data, compiled and bounded, never Python.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Iterator

from mlops_lint.rule import Finding, Kind, RuleMeta

CUSTOM_CODE = re.compile(r"^ORG[0-9]{3}$")
_CUSTOM_PREFIX = re.compile(r"^ORG[0-9]{0,3}$", re.IGNORECASE)


def is_custom_selector(token: str) -> bool:
    """Whether a command-line selector names the custom rules' family (``ORG``, ``ORG0``, ``ORG001``):
    the rules themselves are the config's, known once each project's config is read."""
    return bool(_CUSTOM_PREFIX.match(token.strip()))


def _field_steps(text: Any) -> tuple[str, ...] | None:
    from mlops_lint.validation.celrules import field_path  # one parser of Kubernetes fieldPaths

    return field_path(text)


def _span(obj: Any, steps: tuple[str, ...] | None) -> tuple[Any, tuple]:
    node: Any = obj.body
    span = obj.span
    walked: tuple = ()
    for step in steps or ():
        if not isinstance(node, dict) or step not in node:
            break
        span = node.kspans.get(step, span) if hasattr(node, "kspans") else span
        walked += (step,)
        node = node[step]
    return span, walked


def _namespaces_match(wanted: Any, obj: Any) -> bool:
    if not wanted:
        return True
    return bool(obj.namespace) and obj.namespace in wanted


def _labels_match(selector: Any, obj: Any) -> bool:
    if not selector:
        return True
    from mlops_lint.model.selectors import selector_matches

    return selector_matches(selector, obj.labels)


def _checker(definition: dict[str, Any]):
    match = definition.get("match") or {}
    validations = [v for v in definition.get("validations") or [] if isinstance(v, dict)]

    def check(obj: Any, ctx: Any) -> Iterator[Finding]:
        from mlops_lint.cel import Unevaluated, compile_expression, evaluate, message_of
        from mlops_lint.model.vap import plain

        if not _namespaces_match(match.get("namespaces"), obj) or not _labels_match(match.get("objectSelector"), obj):
            return
        context = {"object": plain(obj.body), "oldObject": None, "namespaceObject": None, "params": None}
        for validation in validations:
            value = evaluate(compile_expression(str(validation.get("expression", ""))), context)
            if value is True or (isinstance(value, Unevaluated) and value.kind == "cost"):
                continue
            message = message_of(validation, context, str(validation.get("expression", "")), "expression")
            if isinstance(value, Unevaluated):
                message += f" (the expression fails to evaluate: {value.reason})"
            span, node = _span(obj, _field_steps(validation.get("fieldPath")))
            yield Finding(span, message, node=node)

    return check


def _doc(definition: dict[str, Any], where: str) -> str:
    match = definition.get("match") or {}
    kinds = ", ".join(f"`{k}`" for k in match.get("kinds") or [])
    namespaces = ", ".join(f"`{n}`" for n in match.get("namespaces") or [])
    lines = [str(definition.get("description") or f"{definition['name']}: a rule of the organisation's own.")]
    lines += ["", "## What it does", f"A custom rule of the project's config ({where}): on {kinds or 'every kind'}"
              + (f" in namespace {namespaces}" if namespaces else "") + ", each CEL validation must hold:", ""]
    for validation in definition.get("validations") or []:
        if isinstance(validation, dict):
            lines.append(f"- `{validation.get('expression', '')}`: {validation.get('message') or ''}".rstrip(": "))
    lines += ["", "## Why is this bad?", "The organisation's policy says so; `mlops-lint export-policies` writes the "
              "same rule as a ValidatingAdmissionPolicy for the cluster to enforce."]
    return "\n".join(lines)


def metas(definitions: Iterable[Any], where: str = "the config") -> list[RuleMeta]:
    """The custom rules of a config as rule metadata (the config schema has checked their shape)."""
    found = []
    for definition in definitions:
        if not isinstance(definition, dict) or not CUSTOM_CODE.match(str(definition.get("id", ""))):
            continue
        kinds = tuple(str(k) for k in (definition.get("match") or {}).get("kinds") or ())
        doc = _doc(definition, where)
        found.append(RuleMeta(
            code=str(definition["id"]), name=str(definition["name"]), severity=str(definition.get("severity", "error")),
            scope=Kind(*kinds), func=_checker(definition), doc=doc, summary=doc.splitlines()[0].rstrip("."),
            module="custom-rules", tags=("custom",)))
    return found


def compile_problems(definitions: Iterable[Any]) -> Iterator[tuple[tuple, str]]:
    """(config path, problem) for each expression of the custom rules that does not compile."""
    from mlops_lint.cel import Unevaluated, compile_expression

    for i, definition in enumerate(definitions):
        if not isinstance(definition, dict):
            continue
        for j, validation in enumerate(definition.get("validations") or []):
            for key in ("expression", "messageExpression"):
                text = validation.get(key) if isinstance(validation, dict) else None
                if isinstance(text, str):
                    compiled = compile_expression(text)
                    if isinstance(compiled, Unevaluated):
                        yield ("custom-rules", i, "validations", j, key), f"does not compile: {compiled.reason}"


def extended(registry: Any, config: Any) -> Any:
    """``registry`` with the custom rules of ``config`` (the same registry when it has none)."""
    definitions = getattr(config, "custom_rules", ())
    if not definitions:
        return registry
    return registry.with_rules(metas(definitions, str(getattr(config, "path", None) or "the config")))


__all__ = ["CUSTOM_CODE", "compile_problems", "extended", "is_custom_selector", "metas"]


# ---------------------------------------------------------------------------------------------
# export-policies: the custom rules as ValidatingAdmissionPolicy + ValidatingAdmissionPolicyBinding

_ACTIONS = {"error": "Deny", "warning": "Warn", "info": "Audit"}


class ExportError(ValueError):
    """A custom rule that cannot be written as a policy (a kind whose API group is not known)."""


def _kind_resources(kind: str, kubernetes_version: str) -> tuple[str, list[str], str]:
    """(API group, versions, resource) of ``kind``: a built-in kind of the Kubernetes release, else
    a kind whose CRD mlops-lint bundles."""
    from mlops_lint.model.vap import plural
    from mlops_lint.validation import builtin
    from mlops_lint.validation.bundle import kinds as bundled

    release = builtin.release(kubernetes_version)
    if release is not None:
        for (group, name), versions in sorted(release.kinds.items()):
            if name == kind:
                return group, sorted(set(versions)), plural(kind)
    for record in bundled():
        if record["kind"] == kind:
            served = sorted(v for v, entry in record["versions"].items() if entry.get("served", True))
            return record["group"], served, plural(kind)
    raise ExportError(f"kind {kind!r} is neither a built-in kind of Kubernetes {kubernetes_version} nor a kind whose "
                      "CRD mlops-lint bundles: its API group is not known")


def policies(config: Any) -> list[dict[str, Any]]:
    """The documents ``export-policies`` writes: per custom rule, a ValidatingAdmissionPolicy and
    its ValidatingAdmissionPolicyBinding (Deny, Warn or Audit as the rule's severity)."""
    from mlops_lint.validation.builtin import effective_version

    version = effective_version(config)
    documents: list[dict[str, Any]] = []
    for definition in getattr(config, "custom_rules", ()):
        match = definition.get("match") or {}
        rules: list[dict[str, Any]] = []
        for kind in match.get("kinds") or []:
            group, versions, resource = _kind_resources(kind, version)
            rules.append({"apiGroups": [group], "apiVersions": versions, "operations": ["CREATE", "UPDATE"],
                          "resources": [resource]})
        if not rules:
            rules.append({"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"],
                          "resources": ["*"]})
        name = f"{definition['name']}"
        # a policy's validation has no fieldPath (a CRD rule's has): the cluster reports at the object
        validations = [{k: v for k, v in validation.items() if k in ("expression", "message", "messageExpression")}
                       for validation in definition.get("validations") or []]
        policy_spec: dict[str, Any] = {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules},
                                       "validations": validations}
        annotations = {"mlops-lint.io/rule": str(definition["id"])}
        if definition.get("description"):
            annotations["mlops-lint.io/description"] = " ".join(str(definition["description"]).split())
        documents.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                          "metadata": {"name": name, "annotations": annotations}, "spec": policy_spec})
        binding_spec: dict[str, Any] = {"policyName": name,
                                        "validationActions": [_ACTIONS[definition.get("severity", "error")]]}
        match_resources: dict[str, Any] = {}
        if match.get("namespaces"):
            match_resources["namespaceSelector"] = {"matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(match["namespaces"])}]}
        if match.get("objectSelector"):
            match_resources["objectSelector"] = match["objectSelector"]
        if match_resources:
            binding_spec["matchResources"] = match_resources
        documents.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
                          "metadata": {"name": name, "annotations": {"mlops-lint.io/rule": str(definition["id"])}},
                          "spec": binding_spec})
    return documents


def export_text(config: Any) -> str:
    """``policies(config)`` as one YAML stream, with a header saying where it comes from."""
    import yaml

    where = getattr(config, "path", None) or "the config"
    head = (f"# Generated by `mlops-lint export-policies` from the custom-rules of {where}:\n"
            "# apply with kubectl; the cluster then enforces what mlops-lint checks (Deny, Warn, Audit).\n")
    body = yaml.safe_dump_all(policies(config), sort_keys=False, default_flow_style=False, allow_unicode=True, width=100)
    return head + body
