"""Kubernetes' ValidatingAdmissionPolicy and its bindings: which objects a policy judges, and its verdict.

A ``ValidatingAdmissionPolicy`` (admissionregistration.k8s.io/v1, GA in 1.30) holds CEL
``validations``; a ``ValidatingAdmissionPolicyBinding`` puts it in force with
``validationActions`` (Deny, Warn, Audit), optionally narrowing what it matches
(``matchResources``) and giving it parameters (``paramRef``). The API server evaluates, on each
CREATE or UPDATE of an object the policy and the binding both match, its ``matchConditions`` and
then every validation (https://kubernetes.io/docs/reference/access-authn-authz/validating-admission-policy/).

What is reproduced here, for a manifest about to be applied (a CREATE):

- **Matching**: ``matchConstraints.resourceRules`` and ``excludeResourceRules`` (apiGroups,
  apiVersions, resources with ``*`` and ``resource/*``, operations CREATE/UPDATE/``*``,
  resourceNames, scope), the policy's and the binding's ``namespaceSelector`` and ``objectSelector``.
  Namespace labels are those of the project's Namespace objects, plus the
  ``kubernetes.io/metadata.name`` label Kubernetes gives every namespace; when a selector reads
  other labels of a namespace the project does not define, whether it matches is unknown, and the
  object is not judged (never a guess). A resource's plural is its CRD's ``names.plural`` when the
  project has the CRD, else Kubernetes' default pluralisation of the kind.
- **Evaluation**: ``variables`` in order, ``matchConditions`` (all must hold), then each
  validation with ``object``, ``oldObject`` (null), ``params``, ``namespaceObject``, ``request``
  (operation CREATE, the kind, name and namespace) and ``variables``. A false validation is denied
  with its ``message`` (or ``messageExpression``, or ``failed expression: …``); an expression that
  fails to evaluate denies too, unless the policy's ``failurePolicy`` is ``Ignore``. An expression
  the engine cannot compile (Kubernetes' optional syntax ``object.?field``, which
  common-expression-language lacks) is never a denial: a validation is skipped, a variable or
  match condition leaves the policy unjudged (:func:`uncompiled` names them; ADM001 reports it).
- **Parameters**: ``paramRef.name`` (and ``namespace``, default the object's), or ``selector``
  (every matching object, each must allow); none found follows ``parameterNotFoundAction``
  (``Deny`` by default in Kubernetes: the object is denied, the message says so; ``Allow``: it
  passes).

The data is plain JSON (the object as the API server would hold it), so these checks run where
every object can be seen: ADM001 collects each object's facts where its file is linted and judges
them in one place (see the rule).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from msgspec import Struct

from mlops_lint.model.selectors import selector_matches

NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
ACTIONS = {"Deny": "error", "Warn": "warning", "Audit": "info"}

# Kinds with no namespace (the API server ignores namespaceSelector for them).
CLUSTER_SCOPED = frozenset({
    "Namespace", "Node", "PersistentVolume", "StorageClass", "ClusterRole", "ClusterRoleBinding",
    "CustomResourceDefinition", "PriorityClass", "ClusterQueue", "ResourceFlavor", "Cohort", "ClusterPolicy",
    "NodePool", "AKSNodeClass", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
    "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration", "ClusterTrainingRuntime", "ClusterServingRuntime", "DeviceClass",
    "WorkloadPriorityClass", "IngressClass", "RuntimeClass", "APIService", "CSIDriver", "VolumeAttachment",
    "Queue", "GPUCluster",
})


def plural(kind: str) -> str:
    """Kubernetes' default resource name of a kind (``NetworkPolicy`` -> ``networkpolicies``)."""
    lower = kind.lower()
    if lower.endswith("s"):
        return lower if lower == "endpoints" else lower + "es"
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def plain(value: Any) -> Any:
    """A parsed YAML value as plain JSON data (the tree's mappings and lists are dict and list
    subclasses with positions; CEL and pickling want the data alone)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class Subject(Struct, frozen=True):
    """What a policy is matched against and evaluated on: one object as plain data."""

    api_version: str
    kind: str
    name: str
    namespace: str  # "" when the manifest names none
    body: Any  # plain JSON


def _group_version(api_version: str) -> tuple[str, str]:
    group, _, version = api_version.rpartition("/")
    return group, version


def _listed(values: Any, value: str) -> bool:
    return isinstance(values, list) and ("*" in values or value in values)


def _rule_matches(rule: Any, subject: Subject, resource: str) -> bool:
    if not isinstance(rule, Mapping):
        return False
    group, version = _group_version(subject.api_version)
    operations = rule.get("operations")
    if not (isinstance(operations, list) and ("*" in operations or "CREATE" in operations or "UPDATE" in operations)):
        return False
    if not _listed(rule.get("apiGroups"), group) or not _listed(rule.get("apiVersions"), version):
        return False
    resources = rule.get("resources")
    if not isinstance(resources, list) or not any(r in ("*", resource, f"{resource}/*") for r in resources):
        return False
    names = rule.get("resourceNames")
    if isinstance(names, list) and names and subject.name not in names:
        return False
    scope = rule.get("scope")
    cluster = subject.kind in CLUSTER_SCOPED
    if scope == "Cluster" and not cluster or scope == "Namespaced" and cluster:
        return False
    return True


class Namespaces(Struct):
    """The project's namespaces and their labels."""

    labels: dict[str, dict[str, str]]

    def matches(self, selector: Any, subject: Subject) -> bool | None:
        """Whether ``selector`` (a namespaceSelector) selects the subject's namespace; None: unknown."""
        if subject.kind in CLUSTER_SCOPED or not isinstance(selector, Mapping) or not selector:
            return True  # no selector, or an empty one, selects every namespace
        if not subject.namespace:
            return None  # applied with -n: which namespace is not known
        known = self.labels.get(subject.namespace)
        if known is not None:
            return selector_matches(selector, {**known, NAMESPACE_NAME_LABEL: subject.namespace})
        keys = {str(k) for k in (selector.get("matchLabels") or {})} | {
            str(e.get("key")) for e in (selector.get("matchExpressions") or []) if isinstance(e, Mapping)}
        if keys <= {NAMESPACE_NAME_LABEL}:
            return selector_matches(selector, {NAMESPACE_NAME_LABEL: subject.namespace})
        return None


def _matches_resources(spec: Any, subject: Subject, resource: str, namespaces: Namespaces, *,
                       constraints: bool) -> bool | None:
    """Whether a policy's ``matchConstraints`` (``constraints``) or a binding's ``matchResources``
    matches the subject; None when it depends on labels the project does not show."""
    if not isinstance(spec, Mapping):
        return not constraints  # a policy must constrain; a binding may leave matchResources out
    rules = spec.get("resourceRules")
    if constraints or rules is not None:
        if not isinstance(rules, list) or not any(_rule_matches(rule, subject, resource) for rule in rules):
            return False
    excluded = spec.get("excludeResourceRules")
    if isinstance(excluded, list) and any(_rule_matches(rule, subject, resource) for rule in excluded):
        return False
    labels = (subject.body.get("metadata") or {}).get("labels") or {}
    objects = spec.get("objectSelector")
    if isinstance(objects, Mapping) and objects and not selector_matches(objects, labels):
        return False
    return namespaces.matches(spec.get("namespaceSelector"), subject)


class Verdict(Struct, frozen=True):
    severity: str  # error | warning | info
    message: str


def _request(subject: Subject, resource: str) -> dict[str, Any]:
    group, version = _group_version(subject.api_version)
    return {
        "operation": "CREATE", "name": subject.name, "namespace": subject.namespace,
        "kind": {"group": group, "version": version, "kind": subject.kind},
        "resource": {"group": group, "version": version, "resource": resource},
        "requestKind": {"group": group, "version": version, "kind": subject.kind},
        "userInfo": {"username": "", "groups": []}, "dryRun": False,
    }


def evaluate_policy(policy: Any, subject: Subject, resource: str, params: list[Any] | None,
                    namespace_object: Any, libraries: frozenset | None = None) -> list[str] | None:
    """The denial messages of ``policy`` (its spec as plain data) for ``subject``: [] when every
    validation holds, None when a match condition excludes it or it cannot be judged.
    ``libraries``: those the engine lacks that its expressions may call (see :func:`uncompiled`)."""
    from mlops_lint.cel import Unevaluated, compile_expression, evaluate, message_of

    spec = policy if isinstance(policy, Mapping) else {}
    unknown = uncompiled(spec, libraries)
    if any(where.startswith(("variables", "matchConditions")) for where, _, _ in unknown):
        return None  # what the validations see, or whether the policy applies, is not known (ADM001 says so)
    skipped = {where for where, _, _ in unknown}
    ignore_errors = spec.get("failurePolicy") == "Ignore"
    base = {"object": subject.body, "oldObject": None, "namespaceObject": namespace_object,
            "request": _request(subject, resource)}
    messages: list[str] = []
    for param in (params if params is not None else [None]):
        variables: dict[str, Any] = {}
        context = {**base, "params": param, "variables": variables}
        for variable in spec.get("variables") or []:
            if isinstance(variable, Mapping) and isinstance(variable.get("name"), str):
                value = evaluate(compile_expression(str(variable.get("expression", ""))), context)
                if not isinstance(value, Unevaluated):
                    variables[variable["name"]] = value
        for condition in spec.get("matchConditions") or []:
            if not isinstance(condition, Mapping):
                continue
            value = evaluate(compile_expression(str(condition.get("expression", ""))), context)
            if value is False:
                return None
            if isinstance(value, Unevaluated) and ignore_errors:
                return None
        for number, validation in enumerate(spec.get("validations") or []):
            if not isinstance(validation, Mapping) or f"validations[{number}].expression" in skipped:
                continue  # not checked (ADM001 says so at the policy), never a denial the API server would not make
            expression = str(validation.get("expression", ""))
            compiled = compile_expression(expression)
            value = evaluate(compiled, context)
            if value is True:
                continue
            if isinstance(value, Unevaluated):
                if ignore_errors or value.kind == "cost":
                    continue
                messages.append(f"{message_of(validation, context, expression, 'expression')} (the expression fails to evaluate: "
                                f"{value.reason})")
                continue
            messages.append(message_of(validation, context, expression, "expression"))
    return messages


# Kyverno's own CEL libraries (https://kyverno.io/docs/policy-types/cel-libraries/), which the
# engine does not have: a Kyverno ValidatingPolicy's expression that calls one is not checked.
KYVERNO_LIBRARIES = frozenset({"resource", "http", "imagedata", "globalContext", "x509", "json", "yaml", "random"})


def _library_calls(text: str, compiled: Any, libraries: frozenset) -> list[str]:
    """The ``libraries`` that ``text`` calls as ``name.Function(…)`` (a free name, not a field)."""
    return sorted(name for name in libraries & compiled.variables
                  if re.search(rf"(?<![\w.]){name}\s*\.\s*\w+\s*\(", text))


def uncompiled(policy: Any, libraries: frozenset | None = None) -> list[tuple[str, str, str]]:
    """The expressions of a policy's spec that the engine cannot compile (Kubernetes' optional
    syntax ``object.?field``, an unknown macro, a syntax error), or that call one of ``libraries``
    (Kyverno's): (where, expression, why), in the order the API server reads them: ``variables``,
    ``matchConditions``, ``validations``."""
    from mlops_lint.cel import Compiled, Unevaluated, compile_expression

    spec = policy if isinstance(policy, Mapping) else {}
    found = []
    for section, keys in (("variables", ("expression",)), ("matchConditions", ("expression",)),
                          ("validations", ("expression", "messageExpression"))):
        entries = spec.get(section)
        if not isinstance(entries, list):
            continue
        for number, entry in enumerate(entries):
            if not isinstance(entry, Mapping):
                continue
            for key in keys:
                text = entry.get(key)
                if not isinstance(text, str) or (key == "messageExpression" and not text.strip()):
                    continue
                compiled = compile_expression(text)
                if isinstance(compiled, Unevaluated) and compiled.kind == "compile":
                    found.append((f"{section}[{number}].{key}", text, compiled.reason))
                elif libraries and isinstance(compiled, Compiled) and _library_calls(text, compiled, libraries):
                    names = ", ".join(f"`{n}`" for n in _library_calls(text, compiled, libraries))
                    found.append((f"{section}[{number}].{key}", text,
                                  f"it calls Kyverno's {names} library, which the engine does not have"))
    return found


def severity_of(actions: Any) -> str | None:
    """The most severe finding a binding's ``validationActions`` make (Deny > Warn > Audit)."""
    if not isinstance(actions, list):
        return None
    found = [ACTIONS[a] for a in actions if a in ACTIONS]
    for severity in ("error", "warning", "info"):
        if severity in found:
            return severity
    return None


def matches(policy: Mapping, binding: Mapping, subject: Subject, resource: str, namespaces: Namespaces) -> bool | None:
    first = _matches_resources(policy.get("matchConstraints"), subject, resource, namespaces, constraints=True)
    if first is not True:
        return first
    return _matches_resources(binding.get("matchResources"), subject, resource, namespaces, constraints=False)


def select_params(binding: Mapping, policy: Mapping, subject: Subject,
                  candidates: Iterable[Subject]) -> tuple[list[Any] | None, str | None]:
    """The parameter objects a binding gives for ``subject`` and why there are none when it needs
    some (``parameterNotFoundAction``); (None, None) when the policy takes none, or when where to
    look is not known (the object's own namespace, unnamed)."""
    kind = policy.get("paramKind")
    ref = binding.get("paramRef")
    if not isinstance(kind, Mapping) or not isinstance(ref, Mapping):
        return None, None
    api_version, wanted = str(kind.get("apiVersion", "")), str(kind.get("kind", ""))
    namespace = ref.get("namespace") or subject.namespace
    if wanted not in CLUSTER_SCOPED and not namespace:
        return None, None  # the object's own namespace, which it does not name (applied with -n): not known
    found = []
    for candidate in candidates:
        if candidate.kind != wanted or candidate.api_version != api_version:
            continue
        if wanted not in CLUSTER_SCOPED and (candidate.namespace or "") != (namespace or ""):
            continue
        if isinstance(ref.get("name"), str):
            if candidate.name == ref["name"]:
                found.append(candidate.body)
        elif isinstance(ref.get("selector"), Mapping):
            labels = (candidate.body.get("metadata") or {}).get("labels") or {}
            if selector_matches(ref["selector"], labels):
                found.append(candidate.body)
    if found:
        return found, None
    if ref.get("parameterNotFoundAction") == "Allow":
        return [], None
    named = ref.get("name") or "matching the selector"
    where = "" if wanted in CLUSTER_SCOPED else f" in namespace `{namespace}`"
    return [], f"no {wanted} `{named}`{where}"


__all__ = ["ACTIONS", "CLUSTER_SCOPED", "Namespaces", "Subject", "Verdict", "evaluate_policy", "matches", "plain",
           "plural", "select_params", "severity_of", "uncompiled", "KYVERNO_LIBRARIES"]
