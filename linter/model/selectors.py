"""Kubernetes matching semantics, written once: label selectors, node placement, taints.

Rules never re-implement these: NetworkPolicy ``podSelector``, PodMonitor ``selector`` and
Service ``selector`` go through :func:`selector_matches`; a pod template's ``nodeSelector`` and
required node affinity through :class:`Placement`; tolerations against taints through
:func:`tolerates`. Each follows the Kubernetes code it names, so a rule's verdict is the
scheduler's.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from msgspec import Struct, field

from mlops_lint.model.placeholder import has_placeholder
from mlops_lint.model.tree import YMap, YSeq


def label_value(value: Any) -> str:
    """A label or selector value as the API server stores it (YAML ``true`` is ``"true"``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def labels_of(mapping: Any) -> dict[str, str]:
    """A ``labels:`` / ``nodeSelector:`` mapping with keys and values as strings."""
    if not isinstance(mapping, dict):
        return {}
    return {label_value(k): label_value(v) for k, v in mapping.items()}


# ---------------------------------------------------------------------------------------------
# metav1.LabelSelector (NetworkPolicy podSelector, PodMonitor selector, Deployment selector …)


def _values(expression: Mapping[str, Any]) -> list[str]:
    values = expression.get("values")
    return [label_value(v) for v in values] if isinstance(values, list) else []


def selector_matches(selector: Any, labels: Mapping[str, Any]) -> bool:
    """Whether a ``metav1.LabelSelector`` selects an object with ``labels``.

    As ``LabelSelectorAsSelector``: a null selector selects nothing; an empty one (``{}``)
    selects everything; ``matchLabels`` and every ``matchExpressions`` entry must all hold
    (``In``, ``NotIn``, ``Exists``, ``DoesNotExist``; ``NotIn`` and ``DoesNotExist`` hold for an
    absent key). An expression with an unknown operator selects nothing, as the API server
    rejects it.
    """
    if not isinstance(selector, dict):
        return False
    have = labels_of(labels)
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, dict):
        for key, value in match_labels.items():
            if have.get(label_value(key)) != label_value(value):
                return False
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        if not isinstance(expression, dict):
            return False
        key = label_value(expression.get("key"))
        operator = expression.get("operator")
        present = key in have
        if operator == "In":
            if not present or have[key] not in _values(expression):
                return False
        elif operator == "NotIn":
            if present and have[key] in _values(expression):
                return False
        elif operator == "Exists":
            if not present:
                return False
        elif operator == "DoesNotExist":
            if present:
                return False
        else:
            return False
    return True


def selector_is_empty(selector: Any) -> bool:
    """``{}`` (or only empty parts): selects every object in scope."""
    return isinstance(selector, dict) and not selector.get("matchLabels") and not selector.get("matchExpressions")


def services_selecting(services: Iterable[Any], namespace: str, labels: Mapping[str, Any]) -> list[Any]:
    """The Services of ``namespace`` whose ``spec.selector`` (a plain map) selects ``labels``."""
    have = labels_of(labels)
    found = []
    for service in services:
        spec = service.body.get("spec")
        selector = spec.get("selector") if isinstance(spec, dict) else None
        if (service.namespace or "default") != (namespace or "default") or not isinstance(selector, dict) or not selector:
            continue
        if all(have.get(label_value(k)) == label_value(v) for k, v in selector.items()):
            found.append(service)
    return found


# ---------------------------------------------------------------------------------------------
# Taints and tolerations (k8s.io/api/core/v1 Toleration.ToleratesTaint)

TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_TAINT = re.compile(r"^(?P<key>[^=:\s]+)(?:=(?P<value>[^:\s]*))?:(?P<effect>[A-Za-z]+)$")


class Taint(Struct, frozen=True):
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    @property
    def repels(self) -> bool:
        """Whether the taint keeps untolerating pods off (PreferNoSchedule only discourages)."""
        return self.effect in ("NoSchedule", "NoExecute")


def parse_taint(text: Any) -> Taint | None:
    """``key=value:Effect`` or ``key:Effect`` (``az aks --node-taints``, ``kubectl taint``);
    a mapping ``{key, value, effect}`` (the config's ``gpu-taints``); None when malformed."""
    if isinstance(text, Mapping):
        key, effect = text.get("key"), text.get("effect")
        if not isinstance(key, str) or effect not in TAINT_EFFECTS:
            return None
        return Taint(key, label_value(text.get("value")), str(effect))
    if not isinstance(text, str):
        return None
    match = _TAINT.match(text.strip())
    if match is None or match["effect"] not in TAINT_EFFECTS:
        return None
    return Taint(match["key"], match["value"] or "", match["effect"])


def tolerates(toleration: Mapping[str, Any], taint: Taint) -> bool:
    """Whether one toleration tolerates ``taint``, exactly as ``Toleration.ToleratesTaint``:

    an empty effect matches every effect; an empty key with ``operator: Exists`` matches every
    taint; ``Exists`` ignores the value; ``Equal`` (the default operator) compares it.
    """
    effect = toleration.get("effect") or ""
    if effect and effect != taint.effect:
        return False
    key = label_value(toleration.get("key")) if toleration.get("key") is not None else ""
    operator = toleration.get("operator") or "Equal"
    if key and key != taint.key:
        return False
    if operator == "Exists":
        return True
    if operator == "Equal":
        return bool(key) and label_value(toleration.get("value")) == taint.value
    return False


def tolerated_by(tolerations: Iterable[Mapping[str, Any]], taint: Taint) -> bool:
    return any(tolerates(t, taint) for t in tolerations if isinstance(t, Mapping))


# ---------------------------------------------------------------------------------------------
# Node placement: nodeSelector AND required node affinity (ORed terms of ANDed requirements)


class Requirement(Struct, frozen=True):
    """One ``matchExpressions`` entry of a NodeSelectorTerm."""

    key: str
    operator: str
    values: tuple[str, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        """``NodeSelectorRequirement`` semantics (``nodeaffinity.NewNodeSelector``)."""
        present = self.key in labels
        op = self.operator
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if op in ("Gt", "Lt"):
            if not present or len(self.values) != 1:
                return False
            try:
                have, want = int(labels[self.key]), int(self.values[0])
            except ValueError:
                return False
            return have > want if op == "Gt" else have < want
        return False  # an unknown operator is rejected by the API server: matches no node

    def selects(self, key: str, value: str | None) -> bool:
        """Whether this requirement pins ``key`` (to ``value`` when given)."""
        if self.key != key:
            return False
        if self.operator == "Exists":
            return value is None
        if self.operator == "In":  # every node it admits carries one of the values
            return bool(self.values) and (value is None or set(self.values) == {value})
        return False


class Placement(Struct, frozen=True):
    """Where a pod template may be scheduled, as far as node labels decide.

    ``node_selector`` must all match; then at least one of ``terms`` must match (when there are
    any). A term that also uses ``matchFields`` (node names) cannot be judged from labels and
    ``unknown_terms`` says so: such a term is taken to match, never to exclude. So is a label
    whose key or value is filled in later (``agentpool: <your-pool>``, ``values: [$POOL]``): it is
    left out of ``node_selector``/``terms`` and sets ``unknown_terms``.
    """

    node_selector: dict[str, str] = field(default_factory=dict)
    terms: tuple[tuple[Requirement, ...], ...] = ()
    unknown_terms: bool = False

    @property
    def constrained(self) -> bool:
        """Whether anything restricts the nodes at all."""
        return bool(self.node_selector or self.terms or self.unknown_terms)

    def matches(self, node_labels: Mapping[str, Any]) -> bool:
        labels = labels_of(node_labels)
        for key, value in self.node_selector.items():
            if labels.get(key) != value:
                return False
        if self.unknown_terms:
            return True
        if not self.terms:
            return True
        return any(all(req.matches(labels) for req in term) for term in self.terms)

    def selects(self, key: str, value: str | None = None) -> bool:
        """Whether every node this placement allows carries ``key`` (= ``value`` if given):
        the nodeSelector sets it, or every required term pins it with ``In``/``Exists``."""
        if key in self.node_selector and (value is None or self.node_selector[key] == value):
            return True
        if not self.terms:
            return False
        return all(any(req.selects(key, value) for req in term) for term in self.terms)


def _requirements(items: Any) -> tuple[Requirement, ...]:
    result = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        result.append(Requirement(label_value(item.get("key")), str(item.get("operator") or ""), tuple(_values(item))))
    return tuple(result)


def placement_of(spec: Any) -> Placement:
    """The placement of a pod spec (a ``PodSpec`` view's ``spec`` mapping)."""
    if not isinstance(spec, dict):
        return Placement()
    node_selector = labels_of(spec.get("nodeSelector"))
    # a label filled in later (``agentpool: <your-pool>``, ``${ACCEL}``) selects unknown nodes: it
    # constrains, but excludes no pool (linter.model.placeholder)
    unknown = any(has_placeholder(key) or has_placeholder(value) for key, value in node_selector.items())
    if unknown:
        node_selector = {k: v for k, v in node_selector.items() if not (has_placeholder(k) or has_placeholder(v))}
    affinity = spec.get("affinity")
    node_affinity = affinity.get("nodeAffinity") if isinstance(affinity, dict) else None
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution") if isinstance(node_affinity, dict) else None
    raw_terms = required.get("nodeSelectorTerms") if isinstance(required, dict) else None
    terms: list[tuple[Requirement, ...]] = []
    for term in raw_terms if isinstance(raw_terms, (list, YSeq)) else ():
        if not isinstance(term, (dict, YMap)):
            continue
        if term.get("matchFields"):
            unknown = True
        requirements = _requirements(term.get("matchExpressions"))
        if any(has_placeholder(r.key) or any(has_placeholder(v) for v in r.values) for r in requirements):
            unknown = True  # a term with a value filled in later: taken to match, never to exclude
            requirements = tuple(r for r in requirements
                                 if not (has_placeholder(r.key) or any(has_placeholder(v) for v in r.values)))
            if not requirements:
                continue
        if requirements:
            terms.append(requirements)
        elif not term.get("matchFields"):
            # an empty term matches no node (NodeSelectorTerm semantics); keep it as unmatchable
            terms.append((Requirement("", "<empty term>", ()),))
    return Placement(node_selector, tuple(terms), unknown)
