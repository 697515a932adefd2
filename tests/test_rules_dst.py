"""Distributed training rules (DST001-DST004, DST006-DST008) and the semantics under them.

NetworkPolicy evaluation (``linter.model.netpol``) is tested directly, with hypothesis properties
over random policies (selection, isolation, union of rules, ports, namespaces, ipBlocks); the
environment model (``linter.model.envvars``, ``linter.model.distributed.rank_env``) and the
operators' runtime labels are tested through small manifests; the rules through the engine, on
the lines and messages they report.
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import run_rules
from mlops_lint.index import ProjectIndex
from mlops_lint.model.distributed import is_distributed, operator_labels, pod_labels, rank_env, replica_specs
from mlops_lint.model.envvars import resolve
from mlops_lint.model.k8s import workload_of
from mlops_lint.model.netpol import (
    ALL_PORTS,
    CLUSTER_DNS,
    NO_PORTS,
    Endpoint,
    Labels,
    Port,
    PortSet,
    ip_block_may_match_pods,
    partial_match,
    policies,
    replica_flows,
    same_namespace,
    traffic,
)
from mlops_lint.model.selectors import selector_matches
from mlops_lint.registry import load_registry
from mlops_lint.sources.yaml_k8s import load_text


def documents(files: dict[str, str]):
    return [load_text(textwrap.dedent(text), path) for path, text in files.items()]


def lint(files: dict[str, str], *codes: str):
    docs = documents(files)
    registry = load_registry()
    rules = [registry.get(code) for code in codes]
    return sorted(((r.path, r.line, r.rule, r.message) for r, _ in run_rules(docs, set(files), rules, Config())))


def objects(text: str, path: str = "job.yaml"):
    return load_text(textwrap.dedent(text), path).objects


# ---------------------------------------------------------------------------------------------
# Port sets


PORT = st.integers(1, 40)
RANGE = st.tuples(st.sampled_from(["TCP", "UDP"]), PORT, PORT).map(lambda t: (t[0], min(t[1], t[2]), max(t[1], t[2])))


def brute(items) -> set[tuple[str, int]]:
    return {(p, n) for p, lo, hi in items for n in range(lo, hi + 1)}


def members(ports: PortSet) -> set[tuple[str, int]]:
    return {(p, n) for p, items in ports.ranges.items() for lo, hi in items for n in range(lo, hi + 1)}


@given(st.lists(RANGE, max_size=6), st.lists(RANGE, max_size=6))
def test_port_set_union_and_intersection_match_sets(a, b):
    pa, pb = PortSet.of(a), PortSet.of(b)
    assert members(pa) == brute(a)
    assert members(pa.union(pb)) == brute(a) | brute(b)
    assert members(pa.intersection(pb)) == brute(a) & brute(b)
    for protocol, items in pa.ranges.items():  # canonical: sorted, disjoint, not adjacent
        assert all(hi + 1 < lo2 for (_, hi), (lo2, _) in zip(items, items[1:]))


@given(st.lists(RANGE, max_size=6), st.sampled_from(["TCP", "UDP"]), PORT, PORT)
def test_port_set_contains_is_subset(a, protocol, lo, hi):
    lo, hi = min(lo, hi), max(lo, hi)
    assert PortSet.of(a).contains(protocol, lo, hi) == ({(protocol, n) for n in range(lo, hi + 1)} <= brute(a))


def test_port_set_describe_and_bounds():
    ports = PortSet.of([("TCP", 80, 80), ("TCP", 8000, 8100), ("UDP", 53, 53), ("TCP", 0, 0), ("TCP", 70000, 70001)])
    assert ports.describe() == "TCP 80, 8000-8100; UDP 53"
    assert ports.describe("UDP") == "UDP 53"
    assert not NO_PORTS and ALL_PORTS.is_all("TCP") and ALL_PORTS.is_all("SCTP")


# ---------------------------------------------------------------------------------------------
# Selectors over partly known labels

KEYS = st.sampled_from(["app", "role", "team", "tier"])
VALUES = st.sampled_from(["a", "b", "c"])
EXPRESSION = st.one_of(
    st.builds(lambda k, op, vs: {"key": k, "operator": op, "values": vs}, KEYS, st.sampled_from(["In", "NotIn"]),
              st.lists(VALUES, min_size=1, max_size=2)),
    st.builds(lambda k, op: {"key": k, "operator": op}, KEYS, st.sampled_from(["Exists", "DoesNotExist"])),
)
SELECTOR = st.fixed_dictionaries({}, optional={"matchLabels": st.dictionaries(KEYS, VALUES, max_size=2),
                                               "matchExpressions": st.lists(EXPRESSION, max_size=2)})
LABELS = st.dictionaries(KEYS, VALUES, max_size=4)


@given(SELECTOR, LABELS)
def test_partial_match_with_everything_known_is_selector_matches(selector, labels):
    assert partial_match(selector, Labels(labels)) is selector_matches(selector, labels)


@given(SELECTOR, LABELS, st.sets(KEYS), LABELS)
def test_partial_match_never_contradicts_a_completion(selector, known, unknown, extra):
    """A definite answer holds for every way the unknown labels could turn out."""
    known = {k: v for k, v in known.items() if k not in unknown}
    verdict = partial_match(selector, Labels(known, frozenset(unknown), open=True))
    completion = {**{k: v for k, v in extra.items() if k not in known}, **known}
    if verdict is not None:
        assert verdict is selector_matches(selector, completion)


def test_partial_match_null_selector_selects_nothing():
    assert partial_match(None, Labels({"app": "a"})) is False
    assert partial_match({}, Labels({}, open=True)) is True


# ---------------------------------------------------------------------------------------------
# NetworkPolicy evaluation

NS = "ml-training"


def pod(labels: dict, namespace: str | None = NS, ports=(), folder: str = "") -> Endpoint:
    return Endpoint(namespace, Labels(labels), tuple(ports), folder=folder)


def netpols(text: str, path: str = "netpol.yaml"):
    return policies(objects(text, path))


DENY_ALL = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny-all, namespace: ml-training}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
"""
ALLOW_ALL = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: allow-all, namespace: ml-training}
spec:
  podSelector: {}
  policyTypes: [Ingress, Egress]
  ingress: [{}]
  egress: [{}]
"""

A, B = pod({"app": "a"}), pod({"app": "b"})


def test_no_policy_means_not_isolated():
    t = traffic([], A, B)
    assert t.ports.is_all("TCP") and not t.governed


def test_deny_all_blocks_both_directions_and_allow_all_adds_back():
    deny = netpols(DENY_ALL)
    t = traffic(deny, A, B)
    assert t.ingress.isolated and t.egress.isolated and not t.ports
    t = traffic(deny + netpols(ALLOW_ALL), A, B)
    assert t.ports.is_all("TCP") and t.ports.is_all("UDP")


def test_policy_types_default_ingress_and_egress_only_when_listed():
    only_ingress = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {}
          egress: []
        """)
    assert only_ingress[0].ingress == () and only_ingress[0].egress is None
    with_egress = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {matchLabels: {app: a}}
          egress: [{to: [{podSelector: {}}]}]
        """)
    assert with_egress[0].ingress == () and len(with_egress[0].egress) == 1
    no_spec = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        """)
    assert traffic(no_spec, A, B).ingress.isolated  # no podSelector: every pod of the namespace


def test_policies_of_other_apis_and_namespaces_do_not_apply():
    calico = netpols("""\
        apiVersion: projectcalico.org/v3
        kind: NetworkPolicy
        metadata: {name: c, namespace: ml-training}
        spec: {selector: all(), types: [Ingress]}
        """)
    assert calico == []
    other = netpols(DENY_ALL.replace("namespace: ml-training", "namespace: other"))
    assert not traffic(other, A, B).governed


def test_peers_pod_and_namespace_selectors_and_together():
    rules = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {matchLabels: {app: b}}
          ingress:
          - from:
            - podSelector: {matchLabels: {app: a}}
          - from:
            - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}
              podSelector: {matchLabels: {app: prometheus}}
        """)
    assert traffic(rules, A, B).ports.is_all("TCP")
    assert not traffic(rules, pod({"app": "a"}, "other"), B).ports  # podSelector alone: the policy's namespace
    assert traffic(rules, pod({"app": "prometheus"}, "monitoring"), B).ports.is_all("TCP")
    assert not traffic(rules, pod({"app": "grafana"}, "monitoring"), B).ports  # both must hold
    assert not traffic(rules, pod({"app": "prometheus"}, "ml-training"), B).ports


def test_ports_default_protocol_named_ports_and_end_port():
    rules = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {matchLabels: {app: b}}
          ingress:
          - ports:
            - port: 53
            - {protocol: UDP, port: dns}
            - {port: 29500, endPort: 29510}
            - {port: rendezvous}
            - {port: missing}
        """)
    dest = pod({"app": "b"}, ports=[Port("dns", 5353, "UDP"), Port("rendezvous", 23456, "TCP"), Port("dns", 9999, "TCP")])
    allowed = traffic(rules, A, dest).ports
    assert allowed.describe() == "TCP 53, 23456, 29500-29510; UDP 5353"


def test_ip_blocks_match_pods_unless_every_private_range_is_excepted():
    assert ip_block_may_match_pods({"cidr": "10.244.0.0/16"}) is None
    assert ip_block_may_match_pods({"cidr": "0.0.0.0/0"}) is None
    assert ip_block_may_match_pods({"cidr": "20.50.0.0/16"}) is False
    assert ip_block_may_match_pods({"cidr": "169.254.20.10/32"}) is False
    everything_private_excepted = {"cidr": "0.0.0.0/0",
                                   "except": ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"]}
    assert ip_block_may_match_pods(everything_private_excepted) is False
    assert ip_block_may_match_pods({"cidr": "10.0.0.0/8", "except": ["10.1.0.0/16"]}) is None
    assert ip_block_may_match_pods({"cidr": "10.0.0.0/8", "except": ["10.0.0.0/9", "10.128.0.0/9"]}) is False
    assert ip_block_may_match_pods({"cidr": "not-a-cidr"}) is None


def test_dns_through_ip_block_counts_but_tcp_default_does_not():
    tcp_only = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {}
          policyTypes: [Egress]
          egress:
          - to: [{ipBlock: {cidr: 169.254.20.10/32}}]
            ports: [{port: 53}]
        """)
    dns = traffic(tcp_only, A, CLUSTER_DNS).egress
    assert dns.isolated and not dns.ports.contains("UDP", 53) and dns.ports.contains("TCP", 53)
    udp = netpols(textwrap.dedent("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: p, namespace: ml-training}
        spec:
          podSelector: {}
          policyTypes: [Egress]
          egress:
          - to: [{namespaceSelector: {}, podSelector: {matchLabels: {k8s-app: kube-dns}}}]
            ports: [{protocol: UDP, port: dns}]
        """))
    assert traffic(udp, A, CLUSTER_DNS).egress.ports.contains("UDP", 53)


def test_namespaces_of_manifests_that_name_none():
    assert same_namespace("a", "x", "a", "y") is True
    assert same_namespace("a", "x", "b", "x") is False
    assert same_namespace(None, "deploy", None, "deploy") is True
    assert same_namespace(None, "deploy", None, "other") is None
    assert same_namespace(None, "deploy", "ml-training", "deploy") is None
    deny = netpols(DENY_ALL.replace("metadata: {name: deny-all, namespace: ml-training}", "metadata: {name: deny-all}"),
                   "deploy/netpol.yaml")
    here, elsewhere = pod({"app": "a"}, None, folder="deploy"), pod({"app": "a"}, None, folder="examples")
    assert traffic(deny, here, here).ingress.isolated
    assert not traffic(deny, elsewhere, elsewhere).governed  # may be another namespace: not judged


RULE = st.fixed_dictionaries({}, optional={
    "from": st.lists(st.one_of(st.builds(lambda s: {"podSelector": s}, SELECTOR),
                               st.builds(lambda s: {"namespaceSelector": s}, SELECTOR),
                               st.just({"ipBlock": {"cidr": "10.0.0.0/8"}})), max_size=2),
    "ports": st.lists(st.fixed_dictionaries({"port": st.integers(1, 40)},
                                            optional={"protocol": st.sampled_from(["TCP", "UDP"])}), max_size=2),
})
POLICY = st.fixed_dictionaries({"podSelector": SELECTOR, "ingress": st.lists(RULE, max_size=2)})


def policy_objects(specs, namespace=NS):
    from mlops_lint.model.document import K8sObject
    from mlops_lint.model.tree import YMap

    result = []
    for index, spec in enumerate(specs):
        body = YMap()
        body.update({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                     "metadata": {"name": f"p{index}", "namespace": namespace}, "spec": spec})
        result.append(K8sObject("networking.k8s.io/v1", "NetworkPolicy", f"p{index}", namespace, body, "x.yaml", index))
    return policies(result)


@settings(max_examples=150)
@given(st.lists(POLICY, max_size=3), LABELS, LABELS, POLICY)
def test_policy_properties(specs, source_labels, dest_labels, extra):
    source, dest = pod(source_labels), pod(dest_labels)
    base = policy_objects(specs)
    before = traffic(base, source, dest).ingress
    # order does not matter
    assert members_tcp(traffic(list(reversed(base)), source, dest).ingress.ports) == members_tcp(before.ports)
    # a policy that selects the destination can only add to what an isolated pod is allowed
    grown = traffic(policy_objects(specs + [extra]), source, dest).ingress
    if before.isolated:
        assert members_tcp(before.ports) <= members_tcp(grown.ports)
    # an allow-all policy makes everything reachable; a deny-all one alone blocks everything
    assert traffic(base + netpols(ALLOW_ALL), source, dest).ports.is_all("TCP")
    assert not traffic(netpols(DENY_ALL), source, dest).ingress.ports


def naive_direction(items, selected, other, egress):
    """NetworkPolicy evaluation as written before policies were grouped: every policy, every
    time (the reference the grouped evaluation must equal)."""
    from mlops_lint.model.netpol import Direction, peer_matches, rule_ports

    sure = [p for p in items if (p.egress if egress else p.ingress) is not None and p.selects(selected) is True]
    maybe = [p for p in items if (p.egress if egress else p.ingress) is not None and p.selects(selected) is None]
    if not sure:
        return Direction(ALL_PORTS)
    allowed = NO_PORTS
    for policy in (*sure, *maybe):
        for rule in (policy.egress if egress else policy.ingress) or ():
            if rule.peers is None or any(peer_matches(p, policy, other) is not False for p in rule.peers):
                allowed = allowed.union(rule_ports(rule, other if egress else selected))
    return Direction(allowed, tuple(sure))


ENDPOINT = st.builds(lambda labels, unknown, is_open, namespace, folder:
                     Endpoint(namespace, Labels(labels, frozenset(unknown), is_open), folder=folder),
                     LABELS, st.sets(KEYS, max_size=2), st.booleans(), st.sampled_from([NS, "other", None]),
                     st.sampled_from(["", "jobs"]))


def variants(endpoint: Endpoint) -> list[Endpoint]:
    """``endpoint`` and endpoints that differ from it in one thing a policy may tell apart."""
    labels = endpoint.labels
    key = next(iter(labels.known), "app")
    return [endpoint,
            Endpoint(endpoint.namespace, Labels(labels.known, labels.unknown_keys, not labels.open), folder=endpoint.folder),
            Endpoint(endpoint.namespace, Labels(labels.known, labels.unknown_keys ^ {key}, labels.open), folder=endpoint.folder),
            Endpoint("other" if endpoint.namespace == NS else NS, labels, folder=endpoint.folder),
            Endpoint(endpoint.namespace, labels, folder="elsewhere"),
            Endpoint(endpoint.namespace, labels, (Port("p", 7),), folder=endpoint.folder)]


PLACED_POLICY = st.tuples(POLICY, st.sampled_from([NS, "other", None]), st.sampled_from(["x.yaml", "jobs/x.yaml"]))


def placed_policies(placed):
    from mlops_lint.model.document import K8sObject
    from mlops_lint.model.tree import YMap

    result = []
    for index, (spec, namespace, path) in enumerate(placed):
        body = YMap()
        metadata = {"name": f"p{index}", **({"namespace": namespace} if namespace else {})}
        body.update({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": metadata, "spec": spec})
        result.append(K8sObject("networking.k8s.io/v1", "NetworkPolicy", f"p{index}", namespace or "", body, path, index))
    return policies(result)


@settings(max_examples=200)
@given(st.lists(PLACED_POLICY, max_size=4), st.lists(st.tuples(st.integers(0, 3), st.sampled_from([NS, "other", None])), max_size=6),
       ENDPOINT, st.lists(ENDPOINT, max_size=2))
def test_grouped_policies_answer_as_every_policy_evaluated_alone(placed, copies, base, more):
    # copies of one policy under other names (and in other namespaces) are classes of the
    # group; every question asked of one group, its memo shared, must get what evaluating every
    # policy on its own gives, however little the endpoints differ
    from mlops_lint.model.netpol import PolicyGroup, selecting

    placed = placed + [(placed[i][0], namespace, placed[i][2]) for i, namespace in copies if i < len(placed)]
    items = placed_policies(placed)
    group = PolicyGroup(items)
    endpoints = variants(base) + more
    for selected in endpoints:
        assert selecting(group, selected) == tuple(p for p in items if p.selects(selected) is True)
        for other in endpoints:
            for egress in (False, True):
                want = naive_direction(items, selected, other, egress)
                got = group.direction(selected, other, egress)
                assert got.ports == want.ports and got.isolating == want.isolating


def test_policy_evaluations_grow_with_distinct_questions_not_with_copies(monkeypatch):
    # a namespace holding N copies of the article's policy and N jobs: the selectors are
    # evaluated once per distinct (policy, question), so 4x the copies is not 16x the work
    from mlops_lint.model import netpol

    calls = []
    real = netpol.partial_match
    monkeypatch.setattr(netpol, "partial_match", lambda s, labels: calls.append(1) or real(s, labels))
    spec = {"podSelector": {"matchLabels": {"app": "a"}}, "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "a"}}}]}]}
    counts = []
    for n in (25, 100):
        calls.clear()
        group = netpol.PolicyGroup(policy_objects([spec] * n))
        for job in range(n):  # each job's pods: its own name label, which no policy tests
            a = pod({"app": "a", "job": f"j{job}"})
            group.direction(a, a, False)
            group.selecting(a)
        counts.append(len(calls))
    assert counts[1] <= 2 * counts[0], counts


def members_tcp(ports: PortSet) -> set[int]:
    return {n for p, items in ports.ranges.items() if p == "TCP" for lo, hi in items for n in range(lo, min(hi, 60) + 1)}


# ---------------------------------------------------------------------------------------------
# Operators' labels and replica flows

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: llm, namespace: ml-training}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata: {labels: {app: llm, training.kubeflow.org/job-name: overridden}}
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/llm:1
    Worker:
      replicas: 3
      template:
        spec:
          containers:
          - name: pytorch
            image: myacr.azurecr.io/llm:1
"""


def test_operator_labels_win_over_template_labels():
    workload = workload_of(objects(PYTORCHJOB)[0])
    master, worker = workload.pods
    assert pod_labels(master) == {"app": "llm", "training.kubeflow.org/job-name": "llm",
                                  "training.kubeflow.org/replica-type": "master",
                                  "training.kubeflow.org/job-role": "master"}
    assert operator_labels(worker) == {"training.kubeflow.org/job-name": "llm",
                                       "training.kubeflow.org/replica-type": "worker"}
    mpi = workload_of(objects("""\
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {name: pi}
        spec:
          mpiReplicaSpecs:
            Launcher: {replicas: 1, template: {spec: {containers: [{name: l, image: x:1}]}}}
        """)[0])
    assert operator_labels(mpi.pods[0]) == {"training.kubeflow.org/job-name": "pi", "training.kubeflow.org/job-role": "launcher"}


def test_replica_flows_pair_every_template_and_a_template_with_itself_when_it_has_two_pods():
    workload = workload_of(objects(PYTORCHJOB)[0])
    pairs = [(f.source.role, f.destination.role) for f in replica_flows(workload, [])]
    assert pairs == [("Worker", "Master"), ("Master", "Worker"), ("Worker", "Worker")]


def test_selectors_on_per_pod_labels_are_unknown_not_absent():
    workload = workload_of(objects(PYTORCHJOB)[0])
    selective = netpols("""\
        apiVersion: networking.k8s.io/v1
        kind: NetworkPolicy
        metadata: {name: index-zero-only, namespace: ml-training}
        spec:
          podSelector: {matchLabels: {training.kubeflow.org/replica-index: "0"}}
        """)
    flows = replica_flows(workload, selective)
    assert not any(f.traffic.ingress.isolated for f in flows)  # may or may not select: not judged


def test_is_distributed_counts_pods_of_distributed_kinds_only():
    assert is_distributed(workload_of(objects(PYTORCHJOB)[0]))
    single = PYTORCHJOB.replace("replicas: 3", "replicas: 0")
    assert not is_distributed(workload_of(objects(single)[0]))
    sweep = workload_of(objects("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: sweep}
        spec:
          parallelism: 8
          template: {spec: {restartPolicy: Never, containers: [{name: t, image: x:1}]}}
        """)[0])
    assert not is_distributed(sweep)


VOLCANO = """\
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: v}
spec:
  %PLUGINS%
  tasks:
  - {name: worker, replicas: 2, template: {spec: {containers: [{name: w, image: x:1}]}}}
  %TASK%
"""


@pytest.mark.parametrize("plugins,task,distributed", [
    ("", "", False),  # one task, nothing connects its pods: a gang of independent pods
    ("plugins: {svc: [], ssh: []}", "", True),
    ("plugins: {pytorch: ['--master=master']}", "", True),
    ("plugins: {env: []}", "", False),
    ("", "- {name: ps, replicas: 1, template: {spec: {containers: [{name: p, image: x:1}]}}}", True),
    ("", "- {name: ps, replicas: 0, template: {spec: {containers: [{name: p, image: x:1}]}}}", False),
])
def test_volcano_jobs_are_distributed_when_their_pods_can_find_each_other(plugins, task, distributed):
    text = VOLCANO.replace("%PLUGINS%", plugins).replace("%TASK%", task)
    assert is_distributed(workload_of(objects(text)[0])) is distributed


# ---------------------------------------------------------------------------------------------
# The environment of a rank


ENV_JOB = """\
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: bench}
spec:
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - name: launcher
            image: x:1
            env:
            - {name: NCCL_SOCKET_IFNAME, value: eth0}
            command: [mpirun, -x, NCCL_SOCKET_IFNAME, -x, NCCL_IB_DISABLE=1, -x, NCCL_ALGO, python, t.py]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: worker
            image: x:1
            env:
            - {name: A, value: 1}
            - {name: A, value: "2"}
            - {name: B}
            - {name: C, value: "$(A)"}
            - {name: D, value: "$$(A)"}
            - name: E
              valueFrom: {fieldRef: {fieldPath: metadata.name}}
            - {name: F, value: true}
"""


def test_env_resolution_kubernetes_semantics():
    workload = workload_of(objects(ENV_JOB)[0])
    worker = workload.pods[1].containers[0]
    assert resolve(worker, "A").value == "2"  # the last entry wins; values are strings
    assert resolve(worker, "B").value == ""  # no value is the empty string
    assert resolve(worker, "C").is_unknown and resolve(worker, "D").value == "$$(A)"
    assert resolve(worker, "E").is_unknown and resolve(worker, "F").value == "true"
    assert resolve(worker, "G").is_unset


def test_rank_env_reads_mpirun_exports_of_the_launcher():
    workload = workload_of(objects(ENV_JOB)[0])
    worker = workload.pods[1].containers[0]
    assert rank_env(worker, "NCCL_IB_DISABLE").value == "1"
    assert rank_env(worker, "NCCL_SOCKET_IFNAME").value == "eth0"  # -x NAME forwards the launcher's value
    assert rank_env(worker, "NCCL_ALGO").is_unknown  # forwarded, but the launcher does not set it
    assert rank_env(worker, "NCCL_DEBUG").is_unset


# ---------------------------------------------------------------------------------------------
# Rules through the engine


def test_dst001_reads_replica_specs_without_templates():
    obj = objects("""\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: j}
        spec:
          pytorchReplicaSpecs:
            Master: {replicas: 2}
        """)[0]
    assert [r.role for r in replica_specs(obj)] == ["Master"]
    found = lint({"j.yaml": "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: j}\nspec:\n"
                            "  pytorchReplicaSpecs:\n    Master: {replicas: 2}\n"}, "DST001")
    assert [(line, rule) for _, line, rule, _ in found] == [(6, "DST001")]


def test_dst003_accepts_blocking_wait_and_reports_legacy_zero():
    job = """\
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: j}
    spec:
      pytorchReplicaSpecs:
        Worker:
          replicas: 2
          template:
            spec:
              containers:
              - name: pytorch
                image: x:1
                env: %ENV%
                resources: {limits: {nvidia.com/gpu: 1}}
    """
    def findings(env: str):
        return lint({"j.yaml": job.replace("%ENV%", env)}, "DST003")
    assert findings("[{name: NCCL_BLOCKING_WAIT, value: '1'}]") == []
    assert findings("[{name: TORCH_NCCL_ASYNC_ERROR_HANDLING, value: '3'}]") == []
    assert findings("[{name: TORCH_NCCL_ASYNC_ERROR_HANDLING, value: '1'}, {name: NCCL_ASYNC_ERROR_HANDLING, value: '0'}]") == []
    [(_, line, _, message)] = findings("[{name: NCCL_ASYNC_ERROR_HANDLING, value: '0'}]")
    assert line == 13 and "NCCL_ASYNC_ERROR_HANDLING=0" in message and "turns asynchronous error handling off" in message


def test_dst007_and_dst008_name_policies_and_replicas():
    files = {
        "deploy/netpol.yaml": DENY_ALL + "---\n" + ALLOW_ALL.replace("allow-all", "rendezvous").replace(
            "ingress: [{}]", "ingress: [{ports: [{port: 23456}]}]").replace("egress: [{}]", "egress: [{}]"),
        "deploy/job.yaml": PYTORCHJOB,
    }
    found = lint(files, "DST007", "DST008")
    rules = [(rule, line) for _, line, rule, _ in found]
    assert rules == [("DST008", 9), ("DST008", 17)]
    assert "(`deny-all`, `rendezvous`)" in found[0][3]  # every policy that governs the restricted direction
    assert "the Worker replicas can reach the Master replicas" in found[0][3]
    assert "the Master and Worker replicas can reach the Worker replicas" in found[1][3]
    assert "only on TCP 23456" in found[1][3]


def test_dst007_ignores_objects_that_may_live_in_other_namespaces():
    files = {
        "examples/netpol.yaml": DENY_ALL.replace("metadata: {name: deny-all, namespace: ml-training}", "metadata: {name: deny-all}"),
        "jobs/job.yaml": PYTORCHJOB.replace("metadata: {name: llm, namespace: ml-training}", "metadata: {name: llm}"),
    }
    assert lint(files, "DST007") == []
    files["jobs/netpol.yaml"] = files.pop("examples/netpol.yaml")
    assert {rule for _, _, rule, _ in lint(files, "DST007")} == {"DST007"}


def test_dst006_only_literal_verbose_levels():
    pod = """\
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      containers:
      - name: c
        image: x:1
        env: [{name: NCCL_DEBUG, value: %V%}]
    """
    assert [line for _, line, _, _ in lint({"p.yaml": pod.replace("%V%", "INFO")}, "DST006")] == [8]
    for level in ("WARN", "VERSION", "$(LEVEL)", '""'):
        assert lint({"p.yaml": pod.replace("%V%", level)}, "DST006") == []


def test_index_lookups_stay_within_reference_kinds():
    """DST007/DST008 only look up NetworkPolicy, which parallel runs index."""
    docs = documents({"deploy/netpol.yaml": DENY_ALL, "deploy/job.yaml": PYTORCHJOB})
    index = ProjectIndex(docs, only_kinds=frozenset({"NetworkPolicy"}))
    registry = load_registry()
    results = run_rules(docs, {"deploy/job.yaml"}, [registry.get("DST007"), registry.get("LNT002")], Config(), index)
    assert {r.rule for r, _ in results} == {"DST007"}


@pytest.mark.parametrize("kind,field", [("TFJob", "tfReplicaSpecs"), ("XGBoostJob", "xgbReplicaSpecs")])
def test_dst001_is_pytorchjob_only(kind, field):
    text = f"apiVersion: kubeflow.org/v1\nkind: {kind}\nmetadata: {{name: j}}\nspec:\n  {field}:\n    Master: {{replicas: 2}}\n"
    assert lint({"j.yaml": text}, "DST001") == []


# ---------------------------------------------------------------------------------------------
# AWS EFA devices are RDMA devices (DST004, DST005)

EFA_JOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: efa, namespace: ml-training}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.05-py3
            env: [ENV]
            resources:
              limits: {nvidia.com/gpu: 8, vpc.amazonaws.com/efa: 4}
"""


@pytest.mark.parametrize("env, efa, found", [
    ("", True, []),  # NCCL reaches EFA through aws-ofi-nccl: no TCP sockets to choose an interface for
    ("", False, [("job.yaml", 13, "DST004")]),
    ('{name: NCCL_IB_DISABLE, value: "0"}', True, []),  # RDMA wanted, and the pod has its device
    ('{name: NCCL_IB_DISABLE, value: "0"}', False, [("job.yaml", 13, "DST005")]),
])
def test_efa_devices_count_as_rdma(env: str, efa: bool, found: list) -> None:
    text = EFA_JOB.replace("[ENV]", f"[{env}]")
    if not efa:
        text = text.replace(", vpc.amazonaws.com/efa: 4", "")
    assert [(path, line, code) for path, line, code, _ in lint({"job.yaml": text}, "DST004", "DST005")] == found
# DST009: processes per node against the pod's GPUs

NPROC_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        COMMAND
        resources: {RESOURCES}
"""


def results(files: dict[str, str], code: str) -> list:
    """The findings as results (rule, severity, line, column, node, fix), in position order."""
    found = run_rules(documents(files), set(files), [load_registry().get(code)], Config())
    return sorted((r for r, _ in found), key=lambda r: (r.path, r.line, r.column))


def nproc(command: str, resources: str = "limits: {nvidia.com/gpu: 4}") -> list:
    return results({"job.yaml": NPROC_JOB.replace("COMMAND", command).replace("RESOURCES", resources)}, "DST009")


@pytest.mark.parametrize("command, resources, count", [
    ('command: ["torchrun", "--nproc-per-node=2", "t.py"]', "limits: {nvidia.com/gpu: 4}", 2),
    ('command: ["torchrun", "--nproc_per_node", "8", "t.py"]', "limits: {nvidia.com/gpu: 4}", 8),
    ('command: ["torchrun"]\n        args: ["--nproc_per_node=1", "t.py"]', "limits: {nvidia.com/gpu: 4}", 1),
    ('command: ["sh", "-c", "cd /w; torchrun --nproc-per-node 2 t.py"]', "limits: {nvidia.com/gpu: 4}", 2),
    ('command: ["torchrun", "--nproc-per-node=2", "t.py"]', "requests: {nvidia.com/gpu: 4}", 2),  # a request alone
    ('command: ["torchrun", "--nproc-per-node=2", "t.py"]', "limits: {amd.com/gpu: 4}", 2),
    ('env: [{name: PET_NPROC_PER_NODE, value: "8"}]', "limits: {nvidia.com/gpu: 4}", 8),
    ('env: [{name: PET_NPROC_PER_NODE, value: 3}]', "limits: {nvidia.com/gpu: 4}", 3),
])
def test_dst009_fires(command: str, resources: str, count: int) -> None:
    (finding,) = nproc(command, resources)
    assert finding.rule == "DST009" and finding.severity == "error"
    assert f"starts {count} processes" in finding.message or f"PET_NPROC_PER_NODE={count}`" in finding.message
    assert ("fewer processes than GPUs" if count < 4 else "more processes than GPUs") in finding.message


@pytest.mark.parametrize("command, resources", [
    ('command: ["torchrun", "--nproc-per-node=4", "t.py"]', "limits: {nvidia.com/gpu: 4}"),
    ('command: ["torchrun", "--nproc-per-node=gpu", "t.py"]', "limits: {nvidia.com/gpu: 4}"),
    ('command: ["torchrun", "--nproc-per-node=$(N)", "t.py"]', "limits: {nvidia.com/gpu: 4}"),
    ('command: ["torchrun", "--nproc-per-node=4", "t.py"]', "{}"),  # no GPU: gloo on CPUs
    ('command: ["torchrun", "--nproc-per-node=2", "t.py"]', "limits: {nvidia.com/gpu: 0.5}"),  # not a whole number
    ('command: ["torchrun", "--nproc-per-node=2", "t.py"]', 'limits: {nvidia.com/gpu: "{{ .Values.gpus }}"}'),
    ('command: ["python", "t.py", "--workers", "2"]', "limits: {nvidia.com/gpu: 4}"),
    ('env: [{name: PET_NPROC_PER_NODE, valueFrom: {configMapKeyRef: {name: c, key: n}}}]', "limits: {nvidia.com/gpu: 4}"),
    # the command line's flag wins over the env var
    ('command: ["torchrun", "--nproc-per-node=4", "t.py"]\n        env: [{name: PET_NPROC_PER_NODE, value: "8"}]',
     "limits: {nvidia.com/gpu: 4}"),
])
def test_dst009_does_not_fire(command: str, resources: str) -> None:
    assert nproc(command, resources) == []


def test_dst009_positions_at_the_flag_item_and_the_env_value() -> None:
    (flag,) = nproc('command: ["torchrun", "--nproc_per_node", "8", "t.py"]')
    assert (flag.line, flag.column) == (12, 51) and flag.node[-2:] == ("command", 2)
    (env,) = nproc('env: [{name: PET_NPROC_PER_NODE, value: "8"}]')
    assert (env.line, env.column) == (12, 49) and env.node[-3:] == ("env", 0, "value")
    assert env.fix == 'PET_NPROC_PER_NODE: "4"'


PT_JOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  nprocPerNode: NPROC
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template: {spec: {containers: [{name: pytorch, image: i, resources: {limits: {nvidia.com/gpu: MASTER}}}]}}
    Worker:
      replicas: 2
      template: {spec: {containers: [{name: pytorch, image: i, ENV resources: {limits: {nvidia.com/gpu: WORKER}}}]}}
"""


@pytest.mark.parametrize("nproc_value, master, worker, env, message", [
    ('"4"', "4", "4", "", None),
    ('"8"', "4", "4", "", "but Master pods get 4 GPUs, Worker pods get 4 GPUs"),
    ('"4"', "4", "8", "", "but Worker pods get 8 GPUs"),
    ("4", "1", "4", "", "but Master pods get 1 GPU"),
    ("auto", "1", "4", "", None),
    ('"8"', "8", "4", "env: [{name: PET_NPROC_PER_NODE, value: '4'}],", None),  # the Worker's own env wins
])
def test_dst009_nproc_per_node_gives_one_finding_at_the_field(nproc_value, master, worker, env, message) -> None:
    text = PT_JOB.replace("NPROC", nproc_value).replace("MASTER", master).replace("WORKER", worker).replace("ENV", env)
    found = results({"job.yaml": text}, "DST009")
    if message is None:
        assert found == []
        return
    (finding,) = found
    assert (finding.line, finding.column) == (6, 17) and message in finding.message
