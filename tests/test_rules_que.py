"""Semantics of the QUE rules beyond their fixtures: Kueue's quota arithmetic (``potentialAvailable``
over cohorts, lending and borrowing limits, hierarchical cohorts), pod-set counts, where queue
names and suspend flags are read, the reference-rule conditions, and the QUE005/QUE006 split."""

from __future__ import annotations

import textwrap
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import load_bytes, run_rules
from mlops_lint.index import ProjectIndex
from mlops_lint.model.document import K8S
from mlops_lint.model.kueue import (
    INFINITE,
    QuotaTree,
    cluster_queue_quota,
    cohort_of,
    flavor_node_labels,
    flavor_node_taints,
    format_amount,
    podsets,
    queue_ref,
    suspend_field,
)
from mlops_lint.registry import load_registry

REGISTRY = load_registry()


def documents(*texts: str, paths: tuple[str, ...] = ()) -> list:
    docs = []
    for i, text in enumerate(texts):
        path = paths[i] if i < len(paths) else f"f{i}.yaml"
        doc = load_bytes(textwrap.dedent(text).encode(), path, K8S)
        assert not doc.errors, doc.errors
        docs.append(doc)
    return docs


def lint(*texts: str, select: tuple[str, ...], paths: tuple[str, ...] = (), config: Config | None = None) -> list:
    docs = documents(*texts, paths=paths)
    metas = [REGISTRY.get(code) for code in select]
    results = run_rules(docs, {d.path for d in docs}, metas, config or Config())
    return sorted((r for r, _ in results), key=lambda r: (r.path, r.line, r.column, r.rule))


def objects(*texts: str) -> tuple[ProjectIndex, dict]:
    index = ProjectIndex(documents(*texts))
    return index, {(o.kind, o.name): o for o in index.objects}


def cq(name: str, gpus: str, *, cohort: str | None = None, lending: str | None = None, borrowing: str | None = None,
       flavor: str = "nvidia-gpu", version: str = "v1beta1") -> str:
    cohort_key = "cohort" if version == "v1beta1" else "cohortName"
    limits = "".join(f", {k}: \"{v}\"" for k, v in (("lendingLimit", lending), ("borrowingLimit", borrowing)) if v)
    return f"""
    apiVersion: kueue.x-k8s.io/{version}
    kind: ClusterQueue
    metadata: {{name: {name}}}
    spec:
      namespaceSelector: {{}}
      {f"{cohort_key}: {cohort}" if cohort else ""}
      resourceGroups:
      - coveredResources: ["nvidia.com/gpu"]
        flavors:
        - name: {flavor}
          resources:
          - {{name: nvidia.com/gpu, nominalQuota: "{gpus}"{limits}}}
    """


def cohort(name: str, *, parent: str | None = None, gpus: str | None = None, lending: str | None = None,
           borrowing: str | None = None) -> str:
    limits = "".join(f", {k}: \"{v}\"" for k, v in (("lendingLimit", lending), ("borrowingLimit", borrowing)) if v)
    groups = f"""
      resourceGroups:
      - coveredResources: ["nvidia.com/gpu"]
        flavors:
        - name: nvidia-gpu
          resources:
          - {{name: nvidia.com/gpu, nominalQuota: "{gpus}"{limits}}}""" if gpus is not None else ""
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: Cohort
    metadata: {{name: {name}}}
    spec:
      {f"parentName: {parent}" if parent else "fairSharing: {weight: 1}"}{groups}
    """


GPU = ("nvidia-gpu", "nvidia.com/gpu")


# ---------------------------------------------------------------------------------------------
# The public model API other rules import


def test_cluster_queue_quota_and_flavor_api() -> None:
    _, objs = objects(cq("team-a", "4", cohort="research", version="v1beta2"), """
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {name: nvidia-gpu}
    spec:
      nodeLabels: {accelerator: nvidia, gpu-count: 8}
      nodeTaints: [{key: sku, value: gpu, effect: NoSchedule}, {key: broken}]
    """)
    queue = objs[("ClusterQueue", "team-a")]
    assert cluster_queue_quota(queue) == {GPU: Fraction(4)}
    assert cohort_of(queue) == "research"
    flavor = objs[("ResourceFlavor", "nvidia-gpu")]
    assert flavor_node_labels(flavor) == {"accelerator": "nvidia", "gpu-count": "8"}
    assert [str(t) for t in flavor_node_taints(flavor)] == ["sku=gpu:NoSchedule"]


def test_a_quota_that_is_not_a_quantity_is_unbounded() -> None:
    _, objs = objects(cq("templated", "{{ .Values.gpus }}"))
    assert cluster_queue_quota(objs[("ClusterQueue", "templated")]) == {GPU: INFINITE}


# ---------------------------------------------------------------------------------------------
# potentialAvailable


def potential(*texts: str, queue: str) -> Fraction | float:
    index, objs = objects(*texts)
    return QuotaTree(index).potential_available(objs[("ClusterQueue", queue)], GPU)


def test_alone_a_cluster_queue_has_its_nominal_quota() -> None:
    assert potential(cq("a", "4"), queue="a") == 4


def test_a_cohort_lends_everything_without_lending_limits() -> None:
    texts = (cq("a", "4", cohort="c"), cq("b", "8", cohort="c"), cq("other", "100", cohort="elsewhere"))
    assert potential(*texts, queue="a") == 12
    assert potential(*texts, queue="b") == 12


def test_lending_limit_keeps_the_rest_for_the_lender() -> None:
    texts = (cq("a", "4", cohort="c"), cq("b", "8", cohort="c", lending="2"))
    assert potential(*texts, queue="a") == 6  # 4 + the 2 b may lend
    assert potential(*texts, queue="b") == 12  # b keeps 6 for itself and can borrow all of a's


def test_borrowing_limit_caps_what_a_queue_takes() -> None:
    texts = (cq("a", "2", cohort="c", borrowing="1"), cq("b", "8", cohort="c"))
    assert potential(*texts, queue="a") == 3


def test_hierarchical_cohorts_add_their_own_quota_and_limits() -> None:
    texts = (cohort("org", gpus="8"), cohort("team", parent="org"), cq("t", "0", cohort="team", version="v1beta2"))
    assert potential(*texts, queue="t") == 8
    limited = (cohort("org", gpus="8"), cohort("team", parent="org", gpus="2", borrowing="3"),
               cq("t", "1", cohort="team", version="v1beta2"))
    # the team subtree holds 1 + 2 = 3 and may borrow 3 more from org: 6
    assert potential(*limited, queue="t") == 6
    lending = (cohort("org"), cohort("team-a", parent="org", gpus="10", lending="4"), cohort("team-b", parent="org"),
               cq("b", "0", cohort="team-b", version="v1beta2"))
    assert potential(*lending, queue="b") == 4  # team-a lends at most 4 of its 10 to the rest of org


def test_a_parent_named_by_no_cohort_object_is_a_plain_root() -> None:
    texts = (cohort("team", parent="missing"), cq("t", "2", cohort="team", version="v1beta2"),
             cq("u", "3", cohort="missing", version="v1beta2"))
    assert potential(*texts, queue="t") == 5


def test_a_cohort_cycle_disables_the_tree() -> None:
    index, objs = objects(cohort("x", parent="y"), cohort("y", parent="x"), cq("q", "1", cohort="x", version="v1beta2"))
    assert QuotaTree(index).disabled(objs[("ClusterQueue", "q")])
    index, objs = objects(cohort("x", parent="y"), cq("q", "1", cohort="x", version="v1beta2"))
    assert not QuotaTree(index).disabled(objs[("ClusterQueue", "q")])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.one_of(st.none(), st.integers(0, 50)),
                          st.one_of(st.none(), st.integers(0, 50))), min_size=1, max_size=5))
def test_potential_available_matches_kueues_flat_cohort_formula(queues) -> None:
    """One flat cohort: a queue reaches its nominal plus every other queue's lendable quota
    (min(nominal, lendingLimit)), capped at nominal + borrowingLimit; never below its nominal."""
    texts = [cq(f"q{i}", str(n), cohort="c", lending=None if lend is None else str(lend),
                borrowing=None if borrow is None else str(borrow))
             for i, (n, lend, borrow) in enumerate(queues)]
    index, objs = objects(*texts)
    tree = QuotaTree(index)
    for i, (nominal, _, borrow) in enumerate(queues):
        others = sum(min(n, lend) if lend is not None else n for j, (n, lend, _) in enumerate(queues) if j != i)
        expected = nominal + others if borrow is None else min(nominal + borrow, nominal + others)
        got = tree.potential_available(objs[("ClusterQueue", f"q{i}")], GPU)
        assert got == expected and got >= nominal


# ---------------------------------------------------------------------------------------------
# Queue names, suspend flags, pod sets


def test_variant_definitions_of_a_cluster_queue_lend_as_one_alternative() -> None:
    """A ClusterQueue written in two variant files (0 and 4 GPUs) is one queue with alternative
    definitions: a neighbour can count on what the best alternative lends, each alternative is
    judged with its own quota, and the index groups them."""
    index = ProjectIndex(documents(cq("a", "2", cohort="c"), cq("b", "0", cohort="c"), cq("b", "4", cohort="c"),
                                   paths=("a.yaml", "b.yaml", "b-variant.yaml")))
    a, b0, b4 = index.objects
    assert index.alternatives(b0) == index.alternatives(b4) == (b0, b4) and index.alternatives(a) == (a,)
    tree = QuotaTree(index)
    assert tree.potential_available(a, GPU) == 6  # 2 + the 4 that b's variant lends
    assert tree.potential_available(b0, GPU) == 2  # its own 0 and a's 2, not its alternative's 4
    assert tree.potential_available(b4, GPU) == 6


def test_que006_needs_every_alternative_flavor_to_refuse() -> None:
    """A ResourceFlavor in two variant files (one tainted, one not): the Job that tolerates nothing
    fits the untainted one, so QUE006 stays silent; with both tainted it reports."""
    flavor = """
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ResourceFlavor
    metadata: {name: nvidia-gpu}
    spec: {nodeLabels: {accelerator: nvidia}%s}
    """
    tainted = flavor % ", nodeTaints: [{key: sku, value: gpu, effect: NoSchedule}]"
    paths = ("q/cq.yaml", "q/flavor.yaml", "q/flavor-variant.yaml", "q/lq.yaml", "jobs/job.yaml")
    job = GPU_JOB.replace('cpu: "1", ', "")
    found = lint(cq("research", "4"), tainted, flavor % "", RESEARCH_QUEUE, job, select=("QUE006",), paths=paths)
    assert found == []
    found = lint(cq("research", "4"), tainted, tainted, RESEARCH_QUEUE, job, select=("QUE006",), paths=paths)
    assert [r.rule for r in found] == ["QUE006"] and "taint sku=gpu:NoSchedule" in found[0].message


def test_queue_name_label_wins_and_cronjobs_read_their_job_template() -> None:
    _, objs = objects("""
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: both
      labels: {kueue.x-k8s.io/queue-name: from-label}
      annotations: {kueue.x-k8s.io/queue-name: from-annotation}
    spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}
    """, """
    apiVersion: batch/v1
    kind: CronJob
    metadata:
      name: nightly
      labels: {kueue.x-k8s.io/queue-name: ignored}
    spec:
      schedule: "0 1 * * *"
      jobTemplate:
        metadata: {labels: {kueue.x-k8s.io/queue-name: nightly-queue}}
        spec: {template: {spec: {containers: [{name: c, image: busybox}]}}}
    """, """
    apiVersion: v1
    kind: Service
    metadata:
      name: svc
      labels: {kueue.x-k8s.io/queue-name: q}
    spec: {}
    """)
    both = queue_ref(objs[("Job", "both")])
    assert (both.name, both.source, both.node) == ("from-label", "label", ("metadata", "labels", "kueue.x-k8s.io/queue-name"))
    nightly = queue_ref(objs[("CronJob", "nightly")])
    assert nightly.name == "nightly-queue" and nightly.node[:3] == ("spec", "jobTemplate", "metadata")
    assert queue_ref(objs[("Service", "svc")]) is None


def test_suspend_flags_per_kind() -> None:
    _, objs = objects("""
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: p}
    spec:
      runPolicy: {suspend: true}
      pytorchReplicaSpecs: {}
    """, """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: d}
    spec: {}
    """, """
    apiVersion: ray.io/v1
    kind: RayJob
    metadata: {name: r}
    spec: {entrypoint: python x.py}
    """)
    pytorch = suspend_field(objs[("PyTorchJob", "p")])
    assert pytorch.suspended and pytorch.dotted == "spec.runPolicy.suspend"
    assert suspend_field(objs[("Deployment", "d")]) is None
    ray = suspend_field(objs[("RayJob", "r")])
    assert not ray.present and ray.span.line == 5  # the `spec:` key


@pytest.mark.parametrize("spec,annotations,count", [
    ("parallelism: 8", "", 8),
    ("parallelism: 8\n      completions: 3", "", 3),
    ("parallelism: 8", "annotations: {kueue.x-k8s.io/job-min-parallelism: \"2\"}", 2),
    ("completions: 5", "", 1),
    ("parallelism: 0", "", 0),
])
def test_job_pod_counts(spec: str, annotations: str, count: int) -> None:
    index, objs = objects(f"""
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: j
      {annotations}
    spec:
      {spec}
      template: {{spec: {{containers: [{{name: c, image: busybox, resources: {{limits: {{cpu: "2"}}}}}}]}}}}
    """)
    sets = podsets(index.workload(objs[("Job", "j")]))
    assert [s.count for s in sets] == [count]
    assert sets[0].per_pod["cpu"].amount == 2


def test_jobset_deployment_and_volcano_pod_sets() -> None:
    index, objs = objects("""
    apiVersion: jobset.x-k8s.io/v1alpha2
    kind: JobSet
    metadata: {name: js}
    spec:
      replicatedJobs:
      - name: workers
        replicas: 3
        template: {spec: {parallelism: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}}
    """, """
    apiVersion: apps/v1
    kind: Deployment
    metadata: {name: d}
    spec:
      replicas: 10
      template: {spec: {containers: [{name: c, image: busybox}]}}
    """, """
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: v}
    spec: {tasks: [{name: w, replicas: 2, template: {spec: {containers: [{name: c, image: busybox}]}}}]}
    """)
    assert [(s.name, s.count) for s in podsets(index.workload(objs[("JobSet", "js")]))] == [("workers", 6)]
    assert [s.count for s in podsets(index.workload(objs[("Deployment", "d")]))] == [1]
    assert podsets(index.workload(objs[("Job", "v")])) is None


def test_format_amount() -> None:
    assert format_amount("memory", Fraction(2**40)) == "1Ti"
    assert format_amount("memory", Fraction(3 * 2**29)) == "1.5Gi"
    assert format_amount("cpu", Fraction(1, 2)) == "500m"
    assert format_amount("cpu", Fraction(64)) == "64"
    assert format_amount("nvidia.com/gpu", INFINITE) == "unlimited"


# ---------------------------------------------------------------------------------------------
# Reference rules fire only when the project holds the referenced kind

JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: trial
  namespace: research
  labels: {kueue.x-k8s.io/queue-name: research-queue}
spec:
  suspend: true
  template:
    spec:
      priorityClassName: batch-low
      containers: [{name: c, image: busybox}]
"""
LOCAL_QUEUE = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: other-queue, namespace: research}
spec: {clusterQueue: research}
"""


def test_reference_rules_stay_silent_without_the_referenced_kind() -> None:
    assert lint(JOB, select=("QUE002", "QUE010")) == []
    assert lint(LOCAL_QUEUE, select=("QUE003",)) == []
    assert lint(cq("a", "4"), select=("QUE004",)) == []


def test_reference_rules_fire_once_the_kind_is_there() -> None:
    found = lint(JOB, LOCAL_QUEUE, "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 1\n",
                 select=("QUE002", "QUE010"))
    assert [(r.rule, r.line) for r in found] == [("QUE002", 7), ("QUE010", 12)]
    assert found[1].message.endswith("did you mean `batch`?")
    assert lint(LOCAL_QUEUE, cq("researchers", "4"), select=("QUE003",))[0].message.endswith("did you mean `researchers`?")


def test_workload_priority_classes_are_a_reference_of_their_own() -> None:
    job = JOB.replace("labels: {", "labels: {kueue.x-k8s.io/priority-class: urgent, ")
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch-low}\nvalue: 1\n"
    assert lint(job, pc, select=("QUE010",)) == []  # no WorkloadPriorityClass in the project
    wpc = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: low}\nvalue: 1\n"
    found = lint(job, pc, wpc, select=("QUE010",))
    assert len(found) == 1 and "WorkloadPriorityClass `urgent`" in found[0].message


def test_only_the_two_builtin_system_classes_exist() -> None:
    pc = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: batch}\nvalue: 1\n"
    for name, fires in (("system-node-critical", False), ("system-cluster-critical", False), ("system-critical", True)):
        job = JOB.replace("batch-low", name)
        assert bool(lint(job, pc, select=("QUE010",))) is fires, name


# ---------------------------------------------------------------------------------------------
# QUE005 and QUE006 never report the same gap

FLAVORS = """
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: gpu-nodes}
spec: {nodeLabels: {accelerator: nvidia}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: cpu-nodes}
spec: {nodeLabels: {kubernetes.azure.com/agentpool: cpunp}}
"""


def cpu_only_queue(flavor: str) -> str:
    return f"""
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {{name: research}}
    spec:
      namespaceSelector: {{}}
      resourceGroups:
      - coveredResources: ["cpu"]
        flavors:
        - name: {flavor}
          resources: [{{name: cpu, nominalQuota: "64"}}]
    """


GPU_JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: research
  labels: {kueue.x-k8s.io/queue-name: research-queue}
spec:
  suspend: true
  template:
    spec:
      containers:
      - name: c
        image: busybox
        resources: {limits: {cpu: "1", nvidia.com/gpu: 1}}
"""
RESEARCH_QUEUE = LOCAL_QUEUE.replace("other-queue", "research-queue")


@pytest.mark.parametrize("flavor,rule", [("gpu-nodes", "QUE005"), ("cpu-nodes", "QUE006")])
def test_an_uncovered_gpu_is_reported_by_exactly_one_rule(flavor: str, rule: str) -> None:
    found = lint(FLAVORS, cpu_only_queue(flavor), RESEARCH_QUEUE, GPU_JOB, select=("QUE005", "QUE006"))
    assert [r.rule for r in found] == [rule]
    assert "nvidia.com/gpu" in found[0].message


def test_que006_uses_the_definitions_nearest_the_job() -> None:
    small = cq("research", "1").replace("nvidia.com/gpu\"]", "nvidia.com/gpu\", \"cpu\"]").replace(
        "nominalQuota: \"1\"}", "nominalQuota: \"1\"}\n          - {name: cpu, nominalQuota: \"8\"}")
    large = small.replace("nominalQuota: \"1\"", "nominalQuota: \"8\"")
    job = GPU_JOB.replace("suspend: true", "suspend: true\n  parallelism: 4")
    paths = ("team/queues.yaml", "team/job.yaml", "samples/queues.yaml", "team/lq.yaml")
    found = lint(large, job, small, RESEARCH_QUEUE, select=("QUE006",), paths=paths)
    assert found == []  # team/queues.yaml (8 GPUs) is the one the job goes with
    found = lint(small, job, large, RESEARCH_QUEUE, select=("QUE006",), paths=paths)
    assert [r.rule for r in found] == ["QUE006"] and "more than 1 in flavor `nvidia-gpu`" in found[0].message


def test_que006_counts_init_containers_by_the_kubernetes_rule() -> None:
    queue = """
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {name: research}
    spec:
      namespaceSelector: {}
      resourceGroups:
      - coveredResources: ["cpu"]
        flavors:
        - name: any
          resources: [{name: cpu, nominalQuota: "10"}]
    """

    def job(init_cpu: str, app_cpu: str) -> str:
        return f"""
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: j
          namespace: research
          labels: {{kueue.x-k8s.io/queue-name: research-queue}}
        spec:
          suspend: true
          parallelism: 2
          template:
            spec:
              initContainers: [{{name: init, image: busybox, resources: {{requests: {{cpu: "{init_cpu}"}}}}}}]
              containers:
              - {{name: a, image: busybox, resources: {{requests: {{cpu: "{app_cpu}"}}}}}}
              - {{name: b, image: busybox, resources: {{requests: {{cpu: "{app_cpu}"}}}}}}
        """

    assert lint(queue, RESEARCH_QUEUE, job("5", "2500m"), select=("QUE006",)) == []  # 2 x max(5, 5) = 10
    over = lint(queue, RESEARCH_QUEUE, job("5500m", "1"), select=("QUE006",))  # 2 x max(5.5, 2) = 11
    assert len(over) == 1 and "needs 11 cpu" in over[0].message and over[0].line == 13


# ---------------------------------------------------------------------------------------------
# QUE012: what "low priority" means

CLASSES = """
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: batch}
value: 100
preemptionPolicy: Never
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: serving}
value: 1000
"""


@pytest.mark.parametrize("pod_spec,fires", [
    ("priorityClassName: batch", True),            # serving (1000, may preempt) outranks it
    ("priorityClassName: serving", False),         # the top class
    ("", False),                                   # the plain default priority is not "low"
    ("priorityClassName: nowhere", False),         # unknown class: QUE010's
])
def test_que012_low_priority(pod_spec: str, fires: bool) -> None:
    job = f"""
    apiVersion: batch/v1
    kind: Job
    metadata: {{name: j, namespace: ml}}
    spec:
      template:
        spec:
          {pod_spec}
          containers: [{{name: c, image: myacr.azurecr.io/ml/trainer:1.0.0}}]
    """
    assert bool(lint(CLASSES, job, select=("QUE012",))) is fires


def test_que012_reads_the_priority_class_name_as_a_sign_of_training() -> None:
    """A busybox Job shows no sign of training (tests/test_training_signs.py) but for the class it
    runs with: `training-batch` says what the job is."""
    job = """
    apiVersion: batch/v1
    kind: Job
    metadata: {name: nightly, namespace: ml}
    spec: {template: {spec: {restartPolicy: Never, priorityClassName: CLASS, containers: [{name: c, image: busybox}]}}}
    """
    training = CLASSES.replace("name: batch", "name: training-batch")
    found = lint(training, job.replace("CLASS", "training-batch"), select=("QUE012",))
    assert [r.rule for r in found] == ["QUE012"] and "`training-batch` (100)" in found[0].message
    assert lint(CLASSES, job.replace("CLASS", "batch"), select=("QUE012",)) == []


def test_que012_a_never_preempting_higher_class_preempts_nobody() -> None:
    classes = CLASSES.replace("value: 1000\n", "value: 1000\npreemptionPolicy: Never\n")
    job = """
    apiVersion: batch/v1
    kind: Job
    metadata: {name: j, namespace: ml}
    spec: {template: {spec: {priorityClassName: batch, containers: [{name: c, image: myacr.azurecr.io/ml/trainer:1.0.0}]}}}
    """
    assert lint(classes, job, select=("QUE012",)) == []
    assert [r.rule for r in lint(CLASSES, job, select=("QUE012",))] == ["QUE012"]  # the same job, preemptible


def test_que012_needs_every_alternative_priority_class_to_be_preemptible() -> None:
    """`batch` is written in two variant files (100 and 1000000); `urgent` (1000) preempts only the
    first: the Job is preemptible under one alternative, not both, so QUE012 stays silent."""
    def pc(name: str, value: int) -> str:
        return f"""
        apiVersion: scheduling.k8s.io/v1
        kind: PriorityClass
        metadata: {{name: {name}}}
        value: {value}
        """
    job = """
    apiVersion: batch/v1
    kind: Job
    metadata: {name: train, namespace: ml}
    spec:
      template:
        spec:
          priorityClassName: batch
          restartPolicy: Never
          containers: [{name: c, image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime, command: [python, train.py]}]
    """
    paths = ("classes/batch.yaml", "classes/batch-high.yaml", "classes/urgent.yaml", "jobs/job.yaml")
    assert lint(pc("batch", 100), pc("batch", 1000000), pc("urgent", 1000), job, select=("QUE012",), paths=paths) == []
    found = lint(pc("batch", 100), pc("batch", 500), pc("urgent", 1000), job, select=("QUE012",), paths=paths)
    assert [r.rule for r in found] == ["QUE012"] and "`batch` (500)" in found[0].message


MPI_PI = """
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  runPolicy: {suspend: true}
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:openmpi
            name: mpi-launcher
            command: [mpirun, -n, "2", /home/mpiuser/pi]
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: mpioperator/mpi-pi:openmpi
            name: mpi-worker
            command: [/usr/sbin/sshd, -De]
            resources: {limits: {cpu: 1}}
"""

RAY_COUNTER = """
apiVersion: ray.io/v1
kind: RayJob
metadata:
  name: rayjob-sample
  labels: {kueue.x-k8s.io/queue-name: user-queue}
spec:
  suspend: true
  entrypoint: python /home/ray/samples/sample_code.py
  rayClusterSpec:
    headGroupSpec:
      rayStartParams: {}
      template:
        spec:
          containers:
          - {name: ray-head, image: "rayproject/ray:2.9.0", resources: {limits: {cpu: "1"}}}
"""


@pytest.mark.parametrize("workload", [MPI_PI, RAY_COUNTER])
def test_que012_a_cpu_ray_or_mpi_job_trains_only_when_it_shows_training(workload: str) -> None:
    """Kueue's MPIJob `pi` and its RayJob counter sample: their operators run any program, so on
    CPUs their kind shows no training and there is nothing to checkpoint (as NAP004 judges them);
    the same jobs running a training script, or holding a GPU, are flagged."""
    assert lint(workload, select=("QUE012",)) == []
    training = workload.replace("/home/mpiuser/pi", "python train.py").replace("sample_code.py", "train_resnet.py")
    found = lint(training, select=("QUE012",))
    assert [(r.rule, r.line, r.column) for r in found] == [("QUE012", 16, 13 if "MPIJob" in workload else 14)]  # the name
    assert "`train` in its entrypoint or pods" in found[0].message
    on_gpu = workload.replace("limits: {cpu: 1}", "limits: {nvidia.com/gpu: 1}").replace('cpu: "1"', "nvidia.com/gpu: 1")
    assert [r.rule for r in lint(on_gpu, select=("QUE012",))] == ["QUE012"]


def test_que012_a_volcano_job_holding_a_cpu_ray_cluster_trains_only_when_it_shows_training() -> None:
    """Volcano's Ray example: a Job whose pods start a Ray cluster from a Ray image and run nothing
    else; Ray runs whatever is submitted to it, so its image alone shows no training (as a RayJob's
    kind shows none on CPUs). The same Job running a training script is flagged."""
    job = """
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: ray-cluster-job}
    spec:
      minAvailable: 3
      schedulerName: volcano
      plugins: {ray: []}
      queue: default
      tasks:
      - replicas: 1
        name: head
        template:
          spec:
            containers: [{name: head, image: "bitnami/ray:2.49.0", resources: {}}]
            restartPolicy: OnFailure
      - replicas: 2
        name: worker
        template:
          spec:
            containers: [{name: worker, image: "bitnami/ray:2.49.0", resources: {}}]
            restartPolicy: OnFailure
    """
    assert lint(job, select=("QUE012",)) == []
    training = job.replace('name: head, image: "bitnami/ray:2.49.0"', 'name: head, image: "bitnami/ray:2.49.0", command: [python, train.py]')
    found = lint(training, select=("QUE012",))
    assert [(r.rule, r.line, r.column) for r in found] == [("QUE012", 15, 23)]  # the first container's name
    assert "`ray` in the image of container `head`, `train` in its entrypoint or pods" in found[0].message


RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch-distributed}
spec:
  mlPolicy: {numNodes: 1, torch: {numProcPerNode: auto}}
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          metadata:
            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
"""

QUEUED_TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: kueue-example
  labels:
    # Tells Kueue which LocalQueue to admit this TrainJob into.
    kueue.x-k8s.io/queue-name: training-queue
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: torch-distributed}
  suspend: true
  trainer:
    numNodes: 3
    image: python:3.11-slim
    command: [python3, -c, "print('Training started via Kueue')"]
"""


def test_que012_on_a_trainjob_points_into_the_runtime_that_sets_the_containers() -> None:
    """Kubeflow Trainer's Kueue example: the TrainJob is queued, its containers (and their missing
    volumeMounts) are the runtime's. QUE012 pointed at the runtime container's line and column in
    the TrainJob's file (a comment there); it is reported at the runtime's container, saying which
    TrainJob runs it, as the pod rules' findings on runtime values are."""
    found = lint(RUNTIME, QUEUED_TRAINJOB, select=("QUE012",), paths=("runtime.yaml", "trainjob.yaml"))
    assert [(r.rule, r.path, r.line, r.column) for r in found] == [("QUE012", "runtime.yaml", 18, 19)]  # `name: node`
    assert found[0].message.endswith("(as TrainJob `kueue-example` runs it)")


# ---------------------------------------------------------------------------------------------
# QUE013: distributed GPU jobs without gang admission

from mlops_lint.model.k8s import workload_of  # noqa: E402
from mlops_lint.rules.que.que013_distributed_job_not_gang_admitted import _gpu_pods  # noqa: E402


def index_of(text: str) -> ProjectIndex:
    return ProjectIndex(documents(text))

PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ddp
  namespace: ml
LABELS
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: REPLICAS
      template:
        POD_META
        spec:
          SCHEDULER
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
            resources: {limits: {GPUS}}
"""


def pytorchjob(*, replicas: str = "2", gpus: str = "nvidia.com/gpu: 1", labels: str = "", pod_meta: str = "",
               scheduler: str = "") -> str:
    return (PYTORCHJOB.replace("REPLICAS", replicas).replace("GPUS", gpus).replace("LABELS", labels)
            .replace("POD_META", pod_meta).replace("SCHEDULER", scheduler))


def test_que013_points_at_the_labels_key_else_metadata_and_counts_the_gpu_pods() -> None:
    (bare,) = lint(pytorchjob(), select=("QUE013",))
    assert (bare.line, bare.column, bare.severity) == (4, 1, "warning")  # `metadata:`
    assert "PyTorchJob `ddp` runs GPU pods that must run together" in bare.message
    (labelled,) = lint(pytorchjob(replicas="3", labels="  labels: {team: a}"), select=("QUE013",))
    assert (labelled.line, labelled.column) == (7, 3)
    assert _gpu_pods(workload_of(index_of(pytorchjob(replicas="3")).objects[0])) == 3
    assert labelled.node[-3:] == ("metadata", "labels", "kueue.x-k8s.io/queue-name")


@pytest.mark.parametrize("change, fires", [
    ({}, True),
    ({"replicas": "1"}, False),  # one GPU pod: nothing to gang
    ({"gpus": "cpu: 1"}, False),  # no GPU
    ({"gpus": "nvidia.com/mig-1g.10gb: 1"}, True),  # a MIG slice is a GPU
    ({"labels": "  labels: {kueue.x-k8s.io/queue-name: gpu-queue}"}, False),
    ({"labels": "  annotations: {kueue.x-k8s.io/queue-name: gpu-queue}"}, False),
    ({"pod_meta": "metadata: {labels: {kueue.x-k8s.io/queue-name: q}}"}, False),
    ({"pod_meta": "metadata: {annotations: {scheduling.k8s.io/group-name: pg}}"}, False),
    ({"pod_meta": "metadata: {labels: {scheduling.x-k8s.io/pod-group: pg}}"}, False),
    ({"pod_meta": "metadata: {labels: {pod-group.scheduling.sigs.k8s.io: pg}}"}, False),
    ({"scheduler": "schedulerName: volcano"}, False),
    ({"scheduler": "schedulerName: kai-scheduler"}, False),
    ({"scheduler": "schedulerName: default-scheduler"}, True),
])
def test_que013_gang_admission_signs(change: dict, fires: bool) -> None:
    assert [r.rule for r in lint(pytorchjob(**change), select=("QUE013",))] == (["QUE013"] if fires else [])


def test_que013_scheduling_policy_and_default_local_queue() -> None:
    policy = pytorchjob().replace("spec:\n  pytorchReplicaSpecs:",
                                  "spec:\n  runPolicy: {schedulingPolicy: {minAvailable: 2}}\n  pytorchReplicaSpecs:")
    assert lint(policy, select=("QUE013",)) == []
    queue = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: NAME, namespace: NS}\nspec: {clusterQueue: cq}\n"
    assert lint(queue.replace("NAME", "default").replace("NS", "ml"), pytorchjob(), select=("QUE013",)) == []
    # another queue's name, or the default queue of another namespace, admits nothing here
    assert len(lint(queue.replace("NAME", "gpu").replace("NS", "ml"), pytorchjob(), select=("QUE013",))) == 1
    assert len(lint(queue.replace("NAME", "default").replace("NS", "other"), pytorchjob(), select=("QUE013",))) == 1


BATCH_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: j}
spec:
  SPEC
  template:
    spec:
      POD
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        COMMAND
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("spec, pod, command, fires", [
    ("{parallelism: 2, completions: 2}", "", 'command: ["torchrun", "--nnodes=2", "t.py"]', True),
    ("{parallelism: 2}", "", "env: [{name: MASTER_ADDR, value: j-0.svc}]", True),
    ("{parallelism: 2}", "", 'command: ["sh", "-c", "python -m torch.distributed.run --nnodes 2 t.py"]', True),
    ("{parallelism: 2, completionMode: Indexed}", "subdomain: ranks", "", True),
    ("{parallelism: 2, completionMode: Indexed}", "", 'command: ["python", "trial.py"]', False),  # a sweep
    ("{parallelism: 2, completions: 1}", "", 'command: ["torchrun", "t.py"]', False),  # one pod at a time
    ("{parallelism: 1}", "", 'command: ["torchrun", "t.py"]', False),
    ("{}", "", 'command: ["torchrun", "t.py"]', False),
])
def test_que013_batch_jobs_only_when_their_pods_talk(spec: str, pod: str, command: str, fires: bool) -> None:
    job = BATCH_JOB.replace("SPEC", spec.strip("{}").replace(", ", "\n  ")).replace("POD", pod).replace("COMMAND", command)
    assert [r.rule for r in lint(job, select=("QUE013",))] == (["QUE013"] if fires else [])


@pytest.mark.parametrize("size, leader_gpu, worker_gpu, count", [
    (2, True, True, 2), (4, False, True, 3), (2, True, False, None), (1, True, True, None), (3, False, False, None),
])
def test_que013_counts_one_leader_worker_group(size: int, leader_gpu: bool, worker_gpu: bool, count: int | None) -> None:
    def template(gpu: bool) -> str:
        limits = "{nvidia.com/gpu: 8}" if gpu else "{cpu: 1}"
        return f"{{spec: {{containers: [{{name: c, image: vllm/vllm-openai:v0.8.5, resources: {{limits: {limits}}}}}]}}}}"

    lws = f"""
    apiVersion: leaderworkerset.x-k8s.io/v1
    kind: LeaderWorkerSet
    metadata: {{name: serve}}
    spec:
      replicas: 5
      leaderWorkerTemplate:
        size: {size}
        leaderTemplate: {template(leader_gpu)}
        workerTemplate: {template(worker_gpu)}
    """
    found = lint(lws, select=("QUE013",))
    if count is None:
        assert found == []
    else:
        assert len(found) == 1 and "runs each group's GPU pods" in found[0].message
        assert _gpu_pods(workload_of(index_of(lws).objects[0])) == count


def test_que013_leaves_volcano_jobs_and_generic_kinds_to_other_rules() -> None:
    volcano = """
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: v}
    spec:
      tasks:
      - replicas: 2
        name: w
        template: {spec: {containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 1}}}]}}
    """
    assert lint(volcano, select=("QUE013",)) == []


def test_que013_stays_on_in_the_aks_automatic_profile() -> None:
    """Node auto-provisioning "doesn't guarantee atomic admission for every worker" (the article)."""
    from mlops_lint.engine.selection import enabled_rules

    automatic = Config(profile="aks-automatic")
    assert "QUE013" in [m.code for m in enabled_rules(REGISTRY, automatic, ["ALL"])]
    assert "GPU006" not in [m.code for m in enabled_rules(REGISTRY, automatic, ["ALL"])]  # the control
    found = lint(pytorchjob(), select=("QUE013",), config=automatic)
    assert [(r.rule, r.severity) for r in found] == [("QUE013", "warning")]


# ---------------------------------------------------------------------------------------------
# QUE015: the LocalQueue's namespace against its ClusterQueue's namespaceSelector

QUE015_CQ = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ClusterQueue\nmetadata: {name: gpu}\nspec:\n  namespaceSelector: SELECTOR\n"
QUE015_LQ = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: q, namespace: team-a}\nspec:\n  clusterQueue: gpu\n"
QUE015_NS = "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-a\n  labels: LABELS\n"


@pytest.mark.parametrize("selector, labels, fires", [
    ("{}", None, False),
    ("{matchLabels: {kubernetes.io/metadata.name: team-a}}", None, False),
    ("{matchLabels: {kubernetes.io/metadata.name: team-b}}", None, True),  # decidable without a Namespace object
    ("{matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [team-a]}]}", None, True),
    ("{matchLabels: {team: ml}}", None, False),  # the namespace's labels are unknown
    ("{matchLabels: {team: ml}}", "{team: ml}", False),
    ("{matchLabels: {team: ml}}", "{team: research}", True),
    ("{matchExpressions: [{key: team, operator: Exists}]}", "{}", True),
    ("{matchExpressions: [{key: team, operator: DoesNotExist}]}", "{}", False),
    ("null", None, False),  # no selector: not judged
])
def test_que015_namespace_selection(selector: str, labels: str | None, fires: bool) -> None:
    texts = [QUE015_CQ.replace("SELECTOR", selector), QUE015_LQ]
    if labels is not None:
        texts.append(QUE015_NS.replace("LABELS", labels))
    results = lint(*texts, select=("QUE015",))
    assert [r.rule for r in results] == (["QUE015"] if fires else [])
    if fires:
        assert (results[0].line, results[0].column) == (5, 17) and "namespace `team-a`" in results[0].message


# ---------------------------------------------------------------------------------------------
# QUE014: GPU jobs that bypass the namespace's LocalQueue

QUE014_LQ = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata: {name: LQNAME, namespace: team-a}\nspec: {clusterQueue: cq}\n"
QUE014_JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: train\n  namespace: team-a\n  LABELS\nspec:\n  template:\n"
              "    spec:\n      containers:\n      - name: t\n        image: x:1\n        resources: {limits: {RESOURCE: 1}}\n")


@pytest.mark.parametrize("lq_name, labels, resource, fires", [
    ("gpu-queue", "labels: {team: a}", "nvidia.com/gpu", True),
    ("gpu-queue", "labels: {team: a}", "nvidia.com/mig-1g.10gb", True),
    ("gpu-queue", "labels: {kueue.x-k8s.io/queue-name: gpu-queue}", "nvidia.com/gpu", False),
    ("gpu-queue", "annotations: {kueue.x-k8s.io/queue-name: gpu-queue}", "nvidia.com/gpu", False),  # the older form
    ("gpu-queue", "labels: {team: a}", "cpu", False),
    ("default", "labels: {team: a}", "nvidia.com/gpu", False),  # LocalQueue defaulting
])
def test_que014_cases(lq_name: str, labels: str, resource: str, fires: bool) -> None:
    job = QUE014_JOB.replace("LABELS", labels).replace("RESOURCE", resource)
    results = lint(QUE014_LQ.replace("LQNAME", lq_name), job, select=("QUE014",))
    assert [r.rule for r in results] == (["QUE014"] if fires else [])
    if fires:
        assert (results[0].line, results[0].column) == (4, 9) and "`gpu-queue`" in results[0].message


def test_que014_needs_both_namespaces_written() -> None:
    job = QUE014_JOB.replace("LABELS", "labels: {team: a}").replace("RESOURCE", "nvidia.com/gpu")
    assert lint(QUE014_LQ.replace("LQNAME", "q"), job.replace("  namespace: team-a\n", ""), select=("QUE014",)) == []
    unplaced = QUE014_LQ.replace("LQNAME", "q").replace(", namespace: team-a", "")
    assert lint(unplaced, job.replace("team-a", "default"), select=("QUE014",)) == []
    deployment = job.replace("batch/v1\nkind: Job", "apps/v1\nkind: Deployment")
    assert lint(QUE014_LQ.replace("LQNAME", "q"), deployment, select=("QUE014",)) == []


# ---------------------------------------------------------------------------------------------
# QUE016: training ranked at or above serving

QUE016_PC = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: NAME}\nVALUE\n"
QUE016_TRAIN = ("apiVersion: batch/v1\nkind: Job\nmetadata: {name: train, namespace: ml}\nspec:\n  template:\n    spec:\n"
                "      restartPolicy: Never\n      PRIORITY\n      containers:\n      - name: t\n        image: IMAGE\n"
                "        command: [python, train.py]\n")
QUE016_SERVE = ("apiVersion: apps/v1\nkind: KIND\nmetadata: {name: serve, namespace: ml}\nspec:\n  template:\n    spec:\n"
                "      PRIORITY\n      containers:\n      - name: s\n        image: SERVER\n")


def que016(train_value: int | None, serve_value: int, *, server: str = "vllm/vllm-openai:v0.6.3",
           kind: str = "Deployment", train_image: str = "myacr.azurecr.io/trainer:1", default: str = "") -> list:
    train_pc = QUE016_PC.replace("NAME", "train-pc").replace("VALUE", "" if train_value is None else f"value: {train_value}")
    serve_pc = QUE016_PC.replace("NAME", "serve-pc").replace("VALUE", f"value: {serve_value}{default}")
    train = QUE016_TRAIN.replace("PRIORITY", "priorityClassName: train-pc").replace("IMAGE", train_image)
    serve = QUE016_SERVE.replace("KIND", kind).replace("SERVER", server)
    serve = serve.replace("PRIORITY", "" if default else "priorityClassName: serve-pc")
    return lint(train_pc, serve_pc, train, serve, select=("QUE016",))


@pytest.mark.parametrize("train_value, serve_value, fires", [(100000, 10000, True), (10000, 10000, True),
                                                             (10000, 100000, False)])
def test_que016_compares_values_and_points_at_the_training_value(train_value: int, serve_value: int, fires: bool) -> None:
    results = que016(train_value, serve_value)
    assert [(r.rule, r.path, r.line, r.column) for r in results] == ([("QUE016", "f0.yaml", 4, 8)] if fires else [])
    if fires:
        assert "`train-pc`" in results[0].message and "`serve-pc`" in results[0].message
        assert "Job `ml/train`" in results[0].message and "Deployment `ml/serve`" in results[0].message


@pytest.mark.parametrize("server, kind, fires", [
    ("nvcr.io/nvidia/tritonserver:24.05-py3", "StatefulSet", True),
    ("myacr.azurecr.io/mirror/vllm/vllm-openai:v0.6.3", "Deployment", True),  # a mirror of the server image
    ("nginx:1.27", "Deployment", False),  # not a model server: not the serving the article ranks
    ("vllm/vllm-openai:v0.6.3", "DaemonSet", False),
])
def test_que016_serving_needs_a_model_server(server: str, kind: str, fires: bool) -> None:
    assert [r.rule for r in que016(100000, 10000, server=server, kind=kind)] == (["QUE016"] if fires else [])


def test_que016_global_default_class_and_idle_jobs() -> None:
    # the serving Deployment names no class: it runs with the global default one
    assert [r.rule for r in que016(100000, 10000, default="\nglobalDefault: true")] == ["QUE016"]
    # a class without a value is 0: never at or above a serving class with a positive value
    assert que016(None, 10000) == []
    # a busybox Job trains nothing
    idle = QUE016_TRAIN.replace("PRIORITY", "priorityClassName: train-pc").replace("IMAGE", "busybox:1.36")
    idle = idle.replace("[python, train.py]", "[sleep, '60']")
    texts = (QUE016_PC.replace("NAME", "train-pc").replace("VALUE", "value: 100000"),
             QUE016_PC.replace("NAME", "serve-pc").replace("VALUE", "value: 10"), idle,
             QUE016_SERVE.replace("KIND", "Deployment").replace("SERVER", "vllm/vllm-openai:v0.6.3")
             .replace("PRIORITY", "priorityClassName: serve-pc"))
    assert lint(*texts, select=("QUE016",)) == []


def test_que016_kueue_workload_priority_classes() -> None:
    wpc = "apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata: {name: NAME}\nvalue: VALUE\n"
    train = QUE016_TRAIN.replace("PRIORITY", "").replace("IMAGE", "trainer:1").replace(
        "metadata: {name: train, namespace: ml}",
        "metadata:\n  name: train\n  namespace: ml\n  labels: {kueue.x-k8s.io/priority-class: hi}")
    serve = QUE016_SERVE.replace("KIND", "Deployment").replace("SERVER", "ollama/ollama:0.3.12").replace("PRIORITY", "")
    serve = serve.replace("metadata: {name: serve, namespace: ml}",
                          "metadata:\n  name: serve\n  namespace: ml\n  labels: {kueue.x-k8s.io/priority-class: lo}")
    results = lint(wpc.replace("NAME", "hi").replace("VALUE", "1000"), wpc.replace("NAME", "lo").replace("VALUE", "10"),
                   train, serve, select=("QUE016",))
    assert [(r.rule, r.path, r.line) for r in results] == [("QUE016", "f0.yaml", 4)]
    assert "WorkloadPriorityClass `hi`" in results[0].message and "label `kueue.x-k8s.io/priority-class`" in results[0].message


def test_que016_a_shared_class_only_when_both_sides_name_it() -> None:
    pc = QUE016_PC.replace("NAME", "everything").replace("VALUE", "value: 1000\nglobalDefault: true")
    serve = QUE016_SERVE.replace("KIND", "Deployment").replace("SERVER", "vllm/vllm-openai:v0.6.3")
    train = QUE016_TRAIN.replace("IMAGE", "trainer:1")
    # both fall back to the global default: no ranking to judge
    assert lint(pc, train.replace("PRIORITY", ""), serve.replace("PRIORITY", ""), select=("QUE016",)) == []
    assert lint(pc, train.replace("PRIORITY", "priorityClassName: everything"), serve.replace("PRIORITY", ""),
                select=("QUE016",)) == []
    both = lint(pc, train.replace("PRIORITY", "priorityClassName: everything"),
                serve.replace("PRIORITY", "priorityClassName: everything"), select=("QUE016",))
    assert [(r.rule, r.line) for r in both] == [("QUE016", 4)] and "also the class serving runs with" in both[0].message


# --- Kueue v1beta2 reads as v1beta1 ----------------------------------------------------------------

from pathlib import Path  # noqa: E402

_RULE_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"
# Every rule whose fixtures hold Kueue v1beta1 objects (SCH003 judges the version itself)
_V1BETA1_RULES = sorted({path.parent.name for path in _RULE_FIXTURES.glob("*/*.yaml")
                         if path.parent.name != "SCH003" and b"kueue.x-k8s.io/v1beta1" in path.read_bytes()})


def _as_v1beta2(text: str) -> str:
    """``text`` with its Kueue objects moved to v1beta2 (the one renamed field the rules read: a
    ClusterQueue's ``cohort`` is ``cohortName`` there)."""
    import re

    return re.sub(r"(?m)^(\s*)cohort:", r"\1cohortName:", text.replace("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"))


def _fixture_findings(folder: Path, rule: str) -> list[tuple]:
    from mlops_lint.engine import LintRequest
    from mlops_lint.engine import lint as lint_paths

    report = lint_paths(LintRequest(paths=[folder], config=None, registry=REGISTRY, select=[rule], cwd=folder))
    return sorted((r.rule, r.path, tuple(r.span), r.message.replace(str(folder), "<dir>"))
                  for r in report.results)


def test_the_v1beta1_fixtures_cover_the_queue_rules() -> None:
    assert {"QUE003", "QUE005", "QUE006", "QUE014", "QUE015", "QUE016", "XPL006"} <= set(_V1BETA1_RULES)


@pytest.mark.parametrize("rule", _V1BETA1_RULES)
def test_kueue_v1beta2_objects_give_the_findings_of_v1beta1_ones(tmp_path: Path, rule: str) -> None:
    """The queue rules read ``kueue.x-k8s.io/v1beta2`` objects as they read v1beta1 ones: the rule's
    fixture project moved to v1beta2 gives the same findings, at the same places, with the same
    messages."""
    import shutil

    before, after = tmp_path / "v1beta1", tmp_path / "v1beta2"
    shutil.copytree(_RULE_FIXTURES / rule, before)
    shutil.copytree(_RULE_FIXTURES / rule, after)
    moved = 0
    for path in after.glob("*.yaml"):
        data = path.read_bytes()
        if b"kueue.x-k8s.io/v1beta1" in data:
            path.write_bytes(_as_v1beta2(data.decode("utf-8")).encode("utf-8"))
            moved += 1
    assert moved
    found = _fixture_findings(before, rule)
    assert any(f[0] == rule for f in found), f"{rule}: its fixtures give no {rule} finding"
    assert _fixture_findings(after, rule) == found


def test_kueue_v1beta2_objects_are_validated_against_the_v1beta2_schema() -> None:
    """SCH002 checks a v1beta2 object against the v1beta2 CRD: v1beta1's ``cohort`` is unknown
    there, ``cohortName`` fits; a v1beta2 Workload is checked too (its CRD is bundled)."""
    queue = """\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ClusterQueue
        metadata: {name: team-a}
        spec:
          %s: research
          namespaceSelector: {}
        """
    assert lint(queue % "cohortName", select=("SCH002",)) == []
    found = [(r.rule, r.line, r.column, r.message) for r in lint(queue % "cohort", select=("SCH002",))]
    assert found == [("SCH002", 5, 3, 'unknown field "spec.cohort" (did you mean "cohortName"?)')]
    workload = """\
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: Workload
        metadata: {name: job-train, namespace: ml}
        spec:
          queueName: team-a
          podSets:
          - name: main
            count: 2
        """
    found = [(r.rule, r.line, r.column, r.message) for r in lint(workload, select=("SCH002",))]
    assert found == [("SCH002", 7, 5, 'missing required field "spec.podSets[0].template"')]


# ---------------------------------------------------------------------------------------------
# QUE012: Volcano evicts only with its preempt or reclaim action

VOLCANO_JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: mnist, namespace: ml}
spec:
  minAvailable: 2
  schedulerName: volcano
  tasks:
  - {replicas: 2, name: worker, template: {spec: {containers: [{name: c, image: myacr.azurecr.io/ml/trainer:1.0.0, command: [python, train.py]}]}}}
"""


def scheduler_conf(actions: str, key: str = "volcano-scheduler.conf") -> str:
    return f"""
    apiVersion: v1
    kind: ConfigMap
    metadata: {{name: volcano-scheduler-configmap, namespace: volcano-system}}
    data:
      {key}: |
        actions: "{actions}"
        tiers:
        - plugins:
          - name: gang
    """


@pytest.mark.parametrize("confs,fires", [
    ((), True),                                                        # no configuration: taken to evict
    (("enqueue, allocate, backfill",), False),                         # Volcano's shipped actions: no eviction
    (("enqueue, allocate, preempt, backfill",), True),
    (("enqueue, reclaim, allocate, backfill",), True),
    (("enqueue, allocate, backfill", "enqueue, allocate, reclaim"), True),  # one of the nearest evicts
    (("{{ .Values.actions }}",), True),                                # templated: not known
])
def test_que012_volcano_needs_an_evicting_scheduler_action(confs: tuple[str, ...], fires: bool) -> None:
    texts = [VOLCANO_JOB, *(scheduler_conf(a) for a in confs)]
    paths = ("jobs/mnist.yaml", *(f"installer/conf{i}.yaml" for i in range(len(confs))))
    found = lint(*texts, select=("QUE012",), paths=paths, config=PROJECT)
    assert [(r.rule, r.path, r.line) for r in found] == ([("QUE012", "jobs/mnist.yaml", 9)] if fires else [])
    message = "is gang-scheduled by Volcano, whose queues reclaim and preempt running jobs"
    assert all(message in r.message for r in found)


PROJECT = Config(path=Path(".mlops-lint.yaml"))  # one project: its statements govern every file


def test_que012_which_volcano_scheduler_conf_governs_the_job() -> None:
    # the agent scheduler's conf (agent-scheduler.conf) is a Volcano scheduler configuration too
    assert lint(VOLCANO_JOB, scheduler_conf("allocate", "agent-scheduler.conf"), select=("QUE012",),
                paths=("jobs/mnist.yaml", "installer/agent.yaml"), config=PROJECT) == []
    # the conf in the job's folder governs it, not the one elsewhere
    texts = (VOLCANO_JOB, scheduler_conf("enqueue, allocate, backfill"), scheduler_conf("allocate, preempt"))
    assert lint(*texts, select=("QUE012",), paths=("jobs/mnist.yaml", "jobs/conf.yaml", "installer/conf.yaml"),
                config=PROJECT) == []
    assert len(lint(*texts, select=("QUE012",), paths=("jobs/mnist.yaml", "installer/conf.yaml", "jobs/conf.yaml"),
                    config=PROJECT)) == 1
    # repositories side by side (no config, no .git): another repository's conf says nothing of this job
    assert len(lint(VOLCANO_JOB, scheduler_conf("enqueue, allocate, backfill"), select=("QUE012",),
                    paths=("repo-a/jobs/mnist.yaml", "repo-b/installer/conf.yaml"))) == 1
    # a ConfigMap value that is not a scheduler configuration is not read as one
    assert len(lint(VOLCANO_JOB, scheduler_conf("enqueue, allocate, backfill", "settings.yaml"), select=("QUE012",),
                    paths=("jobs/mnist.yaml", "installer/conf.yaml"), config=PROJECT)) == 1
