"""NetworkPolicy semantics (``networking.k8s.io/v1``), written once.

What Kubernetes does, and what this module follows:

- A policy applies to a pod when it is in the policy's namespace and ``spec.podSelector``
  selects the pod's labels (``{}``, or no selector at all, selects every pod of the namespace).
- ``policyTypes`` defaults to ``[Ingress]``, plus ``Egress`` when the policy has a non-empty
  ``egress`` list (``SetDefaults_NetworkPolicy``). A pod selected by any policy of a type is
  isolated for that direction and allowed only what the union of those policies' rules allows;
  a pod that no policy of a type selects is not isolated (everything is allowed).
- A rule allows traffic when one of its peers matches the other pod and the port is one of its
  ports. No ``from``/``to`` (or an empty list) matches every peer; no ``ports`` (or an empty
  list) allows every port and protocol. A peer's ``podSelector`` alone means pods of the policy's
  namespace; ``namespaceSelector`` alone means every pod of the selected namespaces; both in one
  peer means the selected pods of the selected namespaces. ``protocol`` defaults to TCP; a port
  without ``port`` is every port of its protocol; ``endPort`` makes a range; a named port is
  resolved against the destination pod's container ports of that name and protocol.
- Traffic from A to B passes when B's ingress allows it *and* A's egress allows it.

What a manifest cannot say is **unknown** and is resolved optimistically (taken to allow), so a
rule that reports blocked traffic never reports traffic that might flow:

- the namespace of an object whose manifest names none: it goes to the namespace it is applied
  to. Two such objects in one folder are taken to be applied together (same namespace); one in
  another folder, or beside an object that names its namespace, may or may not share it;
- a namespace's labels other than ``kubernetes.io/metadata.name`` (set on every namespace);
- pod labels that vary per pod (replica indexes …) or that a target does not pin down;
- ``ipBlock`` peers: whether they cover pod IPs depends on the network plugin (Cilium, for one,
  does not match cluster pods by CIDR), so an ``ipBlock`` may match a pod unless every private
  range (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) inside it is excepted.

Only ``networking.k8s.io`` (and the legacy ``extensions``) NetworkPolicies are read; Calico,
Cilium and AdminNetworkPolicy objects are other APIs with other semantics.
"""

from __future__ import annotations

import ipaddress
import posixpath
import weakref
from typing import Any, Iterable, Mapping

from msgspec import Struct, field

from mlops_lint.model.distributed import PER_POD_LABELS, container_ports, pod_count, pod_labels
from mlops_lint.model.k8s import PodSpec, Workload
from mlops_lint.model.selectors import label_value, labels_of, selector_matches
from mlops_lint.model.memo import once
from mlops_lint.model.tree import frozen

PROTOCOLS = ("TCP", "UDP", "SCTP")
MIN_PORT, MAX_PORT = 1, 65535
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
POLICY_GROUPS = ("networking.k8s.io", "extensions")
PRIVATE_NETWORKS = tuple(ipaddress.ip_network(n) for n in
                         ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"))

Interval = tuple[int, int]


# ---------------------------------------------------------------------------------------------
# Port sets


def _merge(intervals: Iterable[Interval]) -> tuple[Interval, ...]:
    merged: list[list[int]] = []
    for lo, hi in sorted(intervals):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


class PortSet(Struct, frozen=True):
    """Ports per protocol, as sorted disjoint inclusive intervals."""

    ranges: Mapping[str, tuple[Interval, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, items: Iterable[tuple[str, int, int]]) -> "PortSet":
        by_protocol: dict[str, list[Interval]] = {}
        for protocol, lo, hi in items:
            lo, hi = max(lo, MIN_PORT), min(hi, MAX_PORT)
            if lo <= hi:
                by_protocol.setdefault(protocol, []).append((lo, hi))
        return cls({p: _merge(v) for p, v in sorted(by_protocol.items())})

    @classmethod
    def all(cls, protocols: Iterable[str] = PROTOCOLS) -> "PortSet":
        return cls.of((p, MIN_PORT, MAX_PORT) for p in protocols)

    def union(self, other: "PortSet") -> "PortSet":
        return PortSet.of((p, lo, hi) for s in (self, other) for p, items in s.ranges.items() for lo, hi in items)

    def intersection(self, other: "PortSet") -> "PortSet":
        items = []
        for protocol, mine in self.ranges.items():
            for lo, hi in mine:
                for olo, ohi in other.ranges.get(protocol, ()):
                    if max(lo, olo) <= min(hi, ohi):
                        items.append((protocol, max(lo, olo), min(hi, ohi)))
        return PortSet.of(items)

    def only(self, protocol: str) -> "PortSet":
        return PortSet({protocol: self.ranges[protocol]}) if protocol in self.ranges else PortSet()

    def contains(self, protocol: str, lo: int, hi: int | None = None) -> bool:
        hi = lo if hi is None else hi
        return any(a <= lo and hi <= b for a, b in self.ranges.get(protocol, ()))

    def __bool__(self) -> bool:
        return any(self.ranges.values())

    def is_all(self, protocol: str) -> bool:
        return self.contains(protocol, MIN_PORT, MAX_PORT)

    def describe(self, protocol: str | None = None) -> str:
        """``TCP 80, 8000-8100; UDP 53``; only ``protocol`` when given."""
        parts = []
        for name, items in self.ranges.items():
            if protocol is not None and name != protocol:
                continue
            ports = ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in items)
            parts.append(f"{name} {ports}")
        return "; ".join(parts) or "no port"


ALL_PORTS = PortSet.all()
NO_PORTS = PortSet()


# ---------------------------------------------------------------------------------------------
# Label selectors over partly known labels


class Labels(Struct, frozen=True, eq=False):
    """What is known of an object's labels: ``known`` values, keys present with a value that is
    not known (``unknown_keys``), and whether other keys may exist (``open``)."""

    known: Mapping[str, str]
    unknown_keys: frozenset[str] = frozenset()
    open: bool = False

    def is_known(self, key: str) -> bool:
        return key not in self.unknown_keys and (key in self.known or not self.open)


def partial_match(selector: Any, labels: Labels) -> bool | None:
    """``selector_matches`` when some labels are unknown: True or False when the known labels
    decide, ``None`` when the answer depends on labels that are not known. A selector that is
    absent or not a mapping selects nothing, as ``selector_matches`` says."""
    if not isinstance(selector, Mapping):
        return False
    decided: dict[str, Any] = {}
    undecided = False
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        known = {k: v for k, v in match_labels.items() if labels.is_known(label_value(k))}
        undecided |= len(known) != len(match_labels)
        decided["matchLabels"] = known
    expressions = selector.get("matchExpressions")
    if isinstance(expressions, list):
        known_expressions = [e for e in expressions
                             if not isinstance(e, Mapping) or labels.is_known(label_value(e.get("key")))]
        undecided |= len(known_expressions) != len(expressions)
        decided["matchExpressions"] = known_expressions
    if not selector_matches(decided, labels.known):
        return False
    return None if undecided else True


def _and(a: bool | None, b: bool | None) -> bool | None:
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


# ---------------------------------------------------------------------------------------------
# The endpoints traffic flows between


class Port(Struct, frozen=True):
    name: str
    number: int
    protocol: str = "TCP"


class Endpoint(Struct, frozen=True, eq=False):
    """A pod (or a group of identical pods) as NetworkPolicies see it."""

    namespace: str | None  # None: the manifest names none (it goes where it is applied)
    labels: Labels
    ports: tuple[Port, ...] = ()  # container ports, for named ports in policies
    is_cluster_pod: bool = True  # False for a destination that may sit outside the pod network (DNS)
    describe: str = ""
    folder: str = ""  # the folder of the manifest, for objects without a namespace

    @property
    def namespace_labels(self) -> Labels:
        if self.namespace is None:
            return Labels({}, frozenset({NAMESPACE_NAME_LABEL}), open=True)
        return Labels({NAMESPACE_NAME_LABEL: self.namespace}, open=True)


def same_namespace(a: str | None, a_folder: str, b: str | None, b_folder: str) -> bool | None:
    """Whether two objects share a namespace. Objects that name none go to the namespace they are
    applied to: two such objects of one folder are taken to be applied together (``kubectl apply
    -f dir/``); otherwise, and when only one names its namespace, it is not known."""
    if a is not None and b is not None:
        return a == b
    if a is None and b is None and a_folder == b_folder:
        return True
    return None


# CoreDNS on AKS: pods labelled k8s-app=kube-dns in kube-system, ports dns (53/UDP) and
# dns-tcp (53/TCP). A policy may also reach DNS through an ipBlock (the cluster DNS Service IP,
# NodeLocal DNSCache on 169.254.20.10, a resolver outside the cluster).
CLUSTER_DNS = Endpoint(
    "kube-system", Labels({"k8s-app": "kube-dns"}, open=True),
    (Port("dns", 53, "UDP"), Port("dns-tcp", 53, "TCP"), Port("metrics", 9153, "TCP")),
    is_cluster_pod=False, describe="cluster DNS",
)


# ---------------------------------------------------------------------------------------------
# Policies


class Peer(Struct, frozen=True, eq=False):
    pod_selector: Any = None
    namespace_selector: Any = None
    ip_block: Any = None


class Rule(Struct, frozen=True, eq=False):
    peers: tuple[Peer, ...] | None  # None: every peer
    ports: tuple[Mapping[str, Any], ...] | None  # None: every port


_UNSET: Any = object()


class Policy(Struct, frozen=True, eq=False, dict=True):
    name: str
    namespace: str | None  # None: the manifest names none
    pod_selector: Any
    ingress: tuple[Rule, ...] | None  # None: the policy does not govern ingress
    egress: tuple[Rule, ...] | None
    obj: Any = None
    folder: str = ""

    def holds(self, pod: Endpoint) -> bool | None:
        """Whether ``pod`` is in this policy's namespace."""
        return same_namespace(self.namespace, self.folder, pod.namespace, pod.folder)

    def selects(self, pod: Endpoint) -> bool | None:
        """Whether the policy selects ``pod``: once per endpoint (endpoints are immutable, built
        once per pod view; a job's flows ask it of every pair of its replica types)."""
        memo = self.__dict__.get("_selects")
        if memo is None:
            memo = self.__dict__["_selects"] = {}
        found = memo.get(pod, _UNSET)
        if found is _UNSET:
            found = memo[pod] = _and(self.holds(pod), partial_match(self.pod_selector, pod.labels))
        return found


def _rules(items: Any, peer_field: str) -> tuple[Rule, ...]:
    rules = []
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, Mapping):
            continue
        raw_peers = item.get(peer_field)
        peers = None
        if isinstance(raw_peers, list) and raw_peers:
            peers = tuple(Peer(p.get("podSelector"), p.get("namespaceSelector"), p.get("ipBlock"))
                          for p in raw_peers if isinstance(p, Mapping))
        raw_ports = item.get("ports")
        ports = None
        if isinstance(raw_ports, list) and raw_ports:
            ports = tuple(p for p in raw_ports if isinstance(p, Mapping))
        rules.append(Rule(peers, ports))
    return tuple(rules)


def policy_of(obj: Any) -> Policy | None:
    """The policy a ``networking.k8s.io`` NetworkPolicy object defines (None for other APIs)."""
    if obj.kind != "NetworkPolicy" or obj.group not in POLICY_GROUPS:
        return None
    spec = obj.body.get("spec")
    spec = spec if isinstance(spec, Mapping) else {}
    types = spec.get("policyTypes")
    if isinstance(types, list) and types:
        kinds = {str(t) for t in types}
    else:
        egress = spec.get("egress")
        kinds = {"Ingress"} | ({"Egress"} if isinstance(egress, list) and egress else set())
    selector = spec.get("podSelector")
    return Policy(
        name=obj.name, namespace=obj.namespace or None, folder=posixpath.dirname(obj.path),
        pod_selector=selector if selector is not None else {},  # a struct, not a pointer: absent = {}
        ingress=_rules(spec.get("ingress"), "from") if "Ingress" in kinds else None,
        egress=_rules(spec.get("egress"), "to") if "Egress" in kinds else None,
        obj=obj,
    )


def policies(objects: Iterable[Any]) -> list[Policy]:
    return [p for p in map(policy_of, objects) if p is not None]


_BY_INDEX: "weakref.WeakKeyDictionary[Any, dict[tuple[str | None, str], list[Policy]]]" = weakref.WeakKeyDictionary()


def policies_near(index: Any, pod: PodSpec) -> "PolicyGroup":
    """The project's policies that may hold ``pod``'s namespace (``Policy.holds`` is not False),
    built once per index and namespace: a workload is only ever governed by those, so rules
    never scan every policy of every namespace for every workload."""
    cache = _BY_INDEX.get(index)
    if cache is None:
        every = policies(index.of_kind("NetworkPolicy"))
        cache = _BY_INDEX[index] = {"all": every}  # type: ignore[index]
        by_namespace: dict[str, list[Policy]] = {}
        for policy in every:
            if policy.namespace is not None:
                by_namespace.setdefault(policy.namespace, []).append(policy)
        cache["by-namespace"] = by_namespace  # type: ignore[index]
        cache["namespace-less"] = [p for p in every if p.namespace is None]  # type: ignore[index]
        cache["position"] = {id(p): i for i, p in enumerate(every)}  # type: ignore[index]
    namespace = pod.obj.namespace or None
    folder = posixpath.dirname(pod.obj.path)
    key = (namespace, folder if namespace is None else "")
    found = cache.get(key)  # type: ignore[call-overload]
    if found is None:
        if namespace is None:  # same_namespace is never False for a pod that names no namespace
            found = list(cache["all"])  # type: ignore[index]
        else:  # its namespace's policies and those that name none, in project order
            own = cache["by-namespace"].get(namespace, [])  # type: ignore[index]
            rest = cache["namespace-less"]  # type: ignore[index]
            found = own + rest if not rest or not own else sorted(own + rest, key=lambda p: cache["position"][id(p)])  # type: ignore[index]
        found = cache[key] = PolicyGroup(found)
    return found


# ---------------------------------------------------------------------------------------------
# Evaluation


def ip_block_may_match_pods(ip_block: Any) -> bool | None:
    """False when the block (minus its ``except``) holds no private address, where pod IPs live;
    else None: whether an ipBlock matches pod traffic depends on the network plugin."""
    if not isinstance(ip_block, Mapping):
        return None
    try:
        block = ipaddress.ip_network(str(ip_block.get("cidr")), strict=False)
        excepts = [ipaddress.ip_network(str(e), strict=False) for e in ip_block.get("except") or ()]
    except (TypeError, ValueError):
        return None
    for private in PRIVATE_NETWORKS:
        if private.version != block.version or not block.overlaps(private):
            continue
        remaining = [block if block.subnet_of(private) else private]
        for excluded in excepts:
            if excluded.version != block.version:
                continue
            kept = []
            for net in remaining:
                if net.subnet_of(excluded):
                    continue
                kept.extend(net.address_exclude(excluded) if excluded.subnet_of(net) else [net])
            remaining = kept
        if remaining:
            return None
    return False


def peer_matches(peer: Peer, policy: Policy, pod: Endpoint) -> bool | None:
    if peer.ip_block is not None:
        return ip_block_may_match_pods(peer.ip_block) if pod.is_cluster_pod else None
    if peer.pod_selector is None and peer.namespace_selector is None:
        return None  # rejected by the API server: no judgement
    if peer.namespace_selector is not None:
        in_namespace = partial_match(peer.namespace_selector, pod.namespace_labels)
    else:
        in_namespace = policy.holds(pod)
    if peer.pod_selector is None:
        return in_namespace
    return _and(in_namespace, partial_match(peer.pod_selector, pod.labels))


def rule_ports(rule: Rule, destination: Endpoint) -> PortSet:
    """The ports a rule opens on ``destination`` (named ports resolved against its containers)."""
    if rule.ports is None:
        return ALL_PORTS
    items = []
    for spec in rule.ports:
        protocol = str(spec.get("protocol") or "TCP")
        port = spec.get("port")
        if port is None:
            items.append((protocol, MIN_PORT, MAX_PORT))
        elif isinstance(port, int) and not isinstance(port, bool):
            end = spec.get("endPort")
            end = end if isinstance(end, int) and not isinstance(end, bool) and end >= port else port
            items.append((protocol, port, end))
        elif isinstance(port, str) and port.isdigit():
            items.append((protocol, int(port), int(port)))
        elif isinstance(port, str):
            items.extend((protocol, p.number, p.number) for p in destination.ports
                         if p.name == port and p.protocol == protocol)
    return PortSet.of(items)


class Direction(Struct, frozen=True):
    """What one direction's policies allow: ``ports`` (all when nothing isolates), and the
    policies that isolate the pod for it (definitely selected ones)."""

    ports: PortSet
    isolating: tuple[Policy, ...] = ()

    @property
    def isolated(self) -> bool:
        return bool(self.isolating)


def _direction(all_policies: Iterable[Policy], selected: Endpoint, other: Endpoint, egress: bool) -> Direction:
    return group_of(all_policies).direction(selected, other, egress)


def ingress(all_policies: Iterable[Policy], destination: Endpoint, source: Endpoint) -> Direction:
    """What ``destination``'s ingress policies let in from ``source``."""
    return _direction(all_policies, destination, source, egress=False)


def egress(all_policies: Iterable[Policy], source: Endpoint, destination: Endpoint) -> Direction:
    """What ``source``'s egress policies let out to ``destination``."""
    return _direction(all_policies, source, destination, egress=True)


class Traffic(Struct, frozen=True):
    """From ``source`` to ``destination``: each direction, and the ports both allow."""

    ingress: Direction
    egress: Direction

    @property
    def ports(self) -> PortSet:
        return self.ingress.ports.intersection(self.egress.ports)

    @property
    def governed(self) -> bool:
        return self.ingress.isolated or self.egress.isolated


def traffic(all_policies: Iterable[Policy], source: Endpoint, destination: Endpoint) -> Traffic:
    group = group_of(all_policies)
    return Traffic(ingress(group, destination, source), egress(group, source, destination))


def selecting(all_policies: Iterable[Policy], pod: Endpoint) -> tuple[Policy, ...]:
    """Policies that definitely select ``pod`` (for either direction), in project order."""
    return group_of(all_policies).selecting(pod)


def names(items: Iterable[Policy]) -> str:
    """```a`, `b``` (each policy once, sorted), for messages."""
    return ", ".join(f"`{name}`" for name in sorted({p.name for p in items}))


# ---------------------------------------------------------------------------------------------
# Policies as a group: each distinct question answered once


def _rules_key(rules: tuple[Rule, ...] | None) -> Any:
    if rules is None:
        return None
    return tuple((None if r.peers is None else tuple((frozen(p.pod_selector), frozen(p.namespace_selector),
                                                     frozen(p.ip_block)) for p in r.peers),
                  None if r.ports is None else tuple(frozen(p) for p in r.ports)) for r in rules)


def _selector_keys(selector: Any) -> Iterable[str]:
    if not isinstance(selector, Mapping):
        return ()
    keys = []
    match_labels = selector.get("matchLabels")
    if isinstance(match_labels, Mapping):
        keys.extend(label_value(k) for k in match_labels)
    expressions = selector.get("matchExpressions")
    for expression in expressions if isinstance(expressions, list) else ():
        if isinstance(expression, Mapping):
            keys.append(label_value(expression.get("key")))
    return keys


class PolicyGroup:
    """The policies that may govern some pods (``policies_near``), in project order, with what
    is derived from them once: policies that say the same thing (namespace, selector, rules:
    copies under other names) are evaluated as one, and each direction's answer is kept per
    distinct question. A question is the pair of endpoints as far as these policies can tell
    them apart: their namespaces (and folders, for objects that name none), the labels the
    policies' selectors test, the container ports and whether the pod is a cluster pod. So a
    project with hundreds of policies and jobs costs one evaluation per distinct question, not
    one per policy and job."""

    __slots__ = ("policies", "_classes", "_keys", "_answers", "__weakref__")

    def __init__(self, policies: Iterable[Policy]):
        self.policies = tuple(policies)
        classes: dict[Any, list[Policy]] = {}
        keys: dict[str, None] = {}
        for policy in self.policies:
            key = (policy.namespace, policy.folder if policy.namespace is None else "", frozen(policy.pod_selector),
                   _rules_key(policy.ingress), _rules_key(policy.egress))
            classes.setdefault(key, []).append(policy)
            keys.update(dict.fromkeys(_selector_keys(policy.pod_selector)))
            for rule in (*(policy.ingress or ()), *(policy.egress or ())):
                for peer in rule.peers or ():
                    keys.update(dict.fromkeys(_selector_keys(peer.pod_selector)))
        self._classes = tuple(tuple(members) for members in classes.values())  # in first-member order
        self._keys = tuple(keys)
        self._answers: dict[Any, Any] = {}

    def __iter__(self):
        return iter(self.policies)

    def __len__(self) -> int:
        return len(self.policies)

    def __bool__(self) -> bool:
        return bool(self.policies)

    def _question(self, pod: Endpoint) -> Any:
        labels = pod.labels
        have = labels_of(labels.known)  # what selector_matches compares
        return (pod.namespace, pod.folder if pod.namespace is None else "", labels.open,
                tuple((k in labels.unknown_keys, k in labels.known, have.get(k)) for k in self._keys),
                pod.ports, pod.is_cluster_pod)

    def direction(self, selected: Endpoint, other: Endpoint, egress: bool) -> Direction:
        key = (egress, self._question(selected), self._question(other))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self._evaluate(selected, other, egress)
        return found

    def selecting(self, pod: Endpoint) -> tuple[Policy, ...]:
        key = ("selecting", self._question(pod))
        found = self._answers.get(key)
        if found is None:
            found = self._answers[key] = self._members(c for c in self._classes if c[0].selects(pod) is True)
        return found

    def _members(self, classes: Iterable[tuple[Policy, ...]]) -> tuple[Policy, ...]:
        chosen = list(classes)
        if len(chosen) == 1:
            return chosen[0]
        if len(chosen) == len(self._classes) and len(chosen) == len(self.policies):
            return self.policies
        wanted = {id(p) for members in chosen for p in members}
        return tuple(p for p in self.policies if id(p) in wanted)

    def _evaluate(self, selected: Endpoint, other: Endpoint, egress: bool) -> Direction:
        sure: list[tuple[Policy, ...]] = []
        maybe: list[tuple[Policy, ...]] = []
        for members in self._classes:
            policy = members[0]
            if (policy.egress if egress else policy.ingress) is None:
                continue
            verdict = policy.selects(selected)
            if verdict is True:
                sure.append(members)
            elif verdict is None:
                maybe.append(members)
        if not sure:
            return Direction(ALL_PORTS)  # optimistic: a policy that might select the pod may not
        destination = other if egress else selected
        allowed = NO_PORTS
        for members in (*sure, *maybe):
            policy = members[0]
            for rule in (policy.egress if egress else policy.ingress) or ():
                if rule.peers is None or any(peer_matches(p, policy, other) is not False for p in rule.peers):
                    allowed = allowed.union(rule_ports(rule, destination))
        return Direction(allowed, self._members(sure))


def group_of(all_policies: Iterable[Policy]) -> PolicyGroup:
    """``all_policies`` as a :class:`PolicyGroup` (itself when it is one)."""
    return all_policies if isinstance(all_policies, PolicyGroup) else PolicyGroup(all_policies)


# ---------------------------------------------------------------------------------------------
# The replicas of a distributed job


def endpoint_of(pod: PodSpec) -> Endpoint:
    """The pods of one template: their namespace, labels (the template's plus the operator's;
    per-pod labels unknown) and container ports (with the operator's default port). Built once
    per pod view (views are read-only; endpoints are immutable)."""
    return once(pod, "_endpoint", lambda: _endpoint_of(pod))


def _endpoint_of(pod: PodSpec) -> Endpoint:
    ports = tuple(Port(p.name, p.port, p.protocol) for p in container_ports(pod))
    return Endpoint(pod.obj.namespace or None, Labels(pod_labels(pod), PER_POD_LABELS), ports,
                    describe=pod.describe(), folder=posixpath.dirname(pod.obj.path))


class Flow(Struct, frozen=True, eq=False):
    """Traffic from the pods of one template to the pods of another (or of the same one)."""

    source: PodSpec
    destination: PodSpec
    traffic: Traffic


def replica_flows(workload: Workload, all_policies: Iterable[Policy]) -> list[Flow]:
    """Every ordered pair of the workload's templates that run pods, a template with itself
    when it runs two or more pods; grouped by destination, in document order. Computed once per
    workload view and set of policies (DST007 and DST008 both ask); a fresh list each call."""
    group = group_of(all_policies)  # compared by identity; the key keeps it alive
    return list(once(workload, ("replica_flows", group), lambda: tuple(_replica_flows(workload, group))))


def _replica_flows(workload: Workload, items: PolicyGroup) -> list[Flow]:
    pods = [p for p in workload.pods if pod_count(p) > 0]
    endpoints = {id(p): endpoint_of(p) for p in pods}
    flows = []
    for destination in pods:
        for source in pods:
            if source is destination and pod_count(source) < 2:
                continue
            flows.append(Flow(source, destination, traffic(items, endpoints[id(source)], endpoints[id(destination)])))
    return flows


__all__ = [
    "ALL_PORTS", "CLUSTER_DNS", "NO_PORTS", "Direction", "Endpoint", "Labels", "Peer", "Policy", "Port",
    "PortSet", "Rule", "Traffic", "egress", "ingress", "ip_block_may_match_pods", "labels_of", "names",
    "partial_match", "peer_matches", "policies", "policy_of", "rule_ports", "selecting", "traffic",
    "Flow", "PolicyGroup", "endpoint_of", "group_of", "replica_flows",
]
