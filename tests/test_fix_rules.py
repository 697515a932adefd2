"""The plans the Kubernetes manifest rules propose (``Finding.autofix``), read on the parsed nodes:
which intents, on which node (the very mapping of the file, or of the object the finding points
into), with which values; and where a rule proposes none. What the plans become as text is the
resolver's (tests/test_fix_resolve.py) and the golden fixtures' (tests/test_fix_golden.py)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Any

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import run_rules
from mlops_lint.engine.runner import Runner
from mlops_lint.fix import AppendItem, DeleteItem, Plan, Replace, SetKey
from mlops_lint.fix.plans import set_path
from mlops_lint.model.quantity import format_bytes, parse_quantity
from mlops_lint.model.tree import dig
from mlops_lint.registry import load_registry
from mlops_lint.sources.shell import load_text as load_script
from mlops_lint.sources.yaml_k8s import compose_tree, load_text

REGISTRY = load_registry()


@dataclass
class Proposed:
    code: str
    line: int
    col: int
    plan: Plan | None
    node: tuple


def propose(monkeypatch: pytest.MonkeyPatch, files: dict[str, str], *codes: str,
            config: Config | None = None) -> tuple[list[Proposed], dict[str, Any]]:
    """Every finding of ``codes`` on ``files`` (all targets) with its plan, and each file's first
    object's body by file name (for checking which node a plan holds)."""
    documents = [(load_script if name.endswith(".sh") else load_text)(textwrap.dedent(text).lstrip("\n"), name)
                 for name, text in files.items()]
    seen: list[Proposed] = []
    original = Runner.stamp

    def stamp(self, meta, finding, path, obj, base=()):
        seen.append(Proposed(meta.code, finding.span.line, finding.span.col, finding.autofix, tuple(finding.node)))
        return original(self, meta, finding, path, obj, base)

    monkeypatch.setattr(Runner, "stamp", stamp)
    run_rules(documents, {d.path for d in documents}, [REGISTRY.get(code) for code in codes], config or Config())
    return sorted(seen, key=lambda p: (p.code, p.line, p.col)), {d.path: d.objects for d in documents}


def only(found: list[Proposed]) -> Plan:
    assert len(found) == 1, found
    assert found[0].plan is not None, found[0]
    return found[0].plan


def intent(plan: Plan) -> Any:
    assert len(plan.intents) == 1, plan.intents
    return plan.intents[0]


JOB = """
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
{container}
"""


def job(container: str, **files: str) -> dict[str, str]:
    body = textwrap.indent(textwrap.dedent(container).strip("\n"), " " * 8)
    return {"job.yaml": JOB.replace("{container}", body), **files}


def container_body(objects: dict, name: str = "job.yaml") -> Any:
    return dig(objects[name][0].body, "spec", "template", "spec", "containers", 0)


# ---------------------------------------------------------------------------------------------
# set_path: anchored at the deepest existing mapping, never through a value that is not one


def test_set_path_anchors_at_the_deepest_mapping_and_stops_at_non_mappings() -> None:
    tree = compose_tree("a:\n  b:\n    c: 1\n  n:\n  s: text\n  l: [1]\n")
    tree = tree[0] if isinstance(tree, list) else tree
    a = tree["a"]
    assert set_path(tree, ("a", "b", "d"), 2) == SetKey(a["b"], ("d",), 2)
    assert set_path(tree, ("a", "x", "y"), 2) == SetKey(a, ("x", "y"), 2)
    assert set_path(tree, ("a", "b", "c"), 3) == SetKey(a["b"], ("c",), 3)
    assert set_path(tree, ("a", "n", "y"), 2) == SetKey(a, ("n", "y"), 2)  # `n:` left null: written as its value
    assert set_path(tree, ("a", "s", "y"), 2) is None
    assert set_path(tree, ("a", "l"), 2) is None  # a scalar never replaces a list
    assert set_path(tree, ("a", "b"), 2) is None


@pytest.mark.parametrize("limit, half", [
    ("16Gi", "8Gi"), ("3G", "1500M"), ("1Gi", "512Mi"), ("1.5Gi", "768Mi"), ("100Mi", "50Mi"), ("7", "3"),
    ("1000", "500"), ("1e9", "500M"), ("64Gi", "32Gi"), ("10G", "5G"),
])
def test_format_bytes_uses_the_largest_exact_suffix_of_the_limit_s_kind(limit: str, half: str) -> None:
    assert format_bytes(int(parse_quantity(limit) / 2), limit) == half
    assert parse_quantity(half) == int(parse_quantity(limit) / 2)


# ---------------------------------------------------------------------------------------------
# GPU001 / GPU002


def test_gpu001_adds_the_limit_equal_to_the_request(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("""
        resources:
          requests:
            nvidia.com/gpu: 2
          limits:
            memory: 16Gi
    """), "GPU001")
    plan = only(found)
    resources = container_body(objects)["resources"]
    assert plan.safe and plan.path is None
    assert intent(plan) == SetKey(resources["limits"], ("nvidia.com/gpu",), 2)
    assert intent(plan).node is resources["limits"]


def test_gpu001_creates_limits_and_keeps_the_request_s_text(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("""
        resources:
          requests: {"nvidia.com/mig-1g.10gb": "1"}
    """), "GPU001")
    resources = container_body(objects)["resources"]
    assert intent(only(found)) == SetKey(resources, ("limits", "nvidia.com/mig-1g.10gb"), "1")


@pytest.mark.parametrize("request_, limits", [("0.5", "{}"), ("0", "{}"), ("two", "{}"), ("1", "[]"), ("1", "x")])
def test_gpu001_no_fix_for_a_bad_count_or_limits_that_is_not_a_mapping(monkeypatch, request_, limits) -> None:
    found, _ = propose(monkeypatch, job(f"""
        resources:
          requests: {{nvidia.com/gpu: {request_}}}
          limits: {limits}
    """), "GPU001")
    assert [p.plan for p in found] == [None]


def test_gpu002_adds_the_request_equal_to_the_limit(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("""
        resources:
          limits:
            nvidia.com/gpu: 4
    """), "GPU002")
    plan = only(found)
    assert plan.safe
    assert intent(plan) == SetKey(container_body(objects)["resources"], ("requests", "nvidia.com/gpu"), 4)


# ---------------------------------------------------------------------------------------------
# QUE001: the flag of each kind


@pytest.mark.parametrize("manifest, holder, path", [
    ("""
     apiVersion: batch/v1
     kind: Job
     metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
     spec:
       parallelism: 2
     """, ("spec",), ("suspend",)),
    ("""
     apiVersion: batch/v1
     kind: Job
     metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
     spec:
       suspend: false
     """, ("spec",), ("suspend",)),
    ("""
     apiVersion: batch/v1
     kind: CronJob
     metadata: {name: c}
     spec:
       schedule: "0 * * * *"
       jobTemplate:
         metadata: {labels: {kueue.x-k8s.io/queue-name: q}}
         spec:
           parallelism: 1
     """, ("spec", "jobTemplate", "spec"), ("suspend",)),
    ("""
     apiVersion: kubeflow.org/v1
     kind: PyTorchJob
     metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: q}}
     spec:
       pytorchReplicaSpecs: {}
     """, ("spec",), ("runPolicy", "suspend")),
    ("""
     apiVersion: kubeflow.org/v1
     kind: PyTorchJob
     metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: q}}
     spec:
       runPolicy: {suspend: "true"}
     """, ("spec", "runPolicy"), ("suspend",)),
    ("""
     apiVersion: ray.io/v1
     kind: RayJob
     metadata: {name: r, labels: {kueue.x-k8s.io/queue-name: q}}
     spec:
       entrypoint: python x.py
     """, ("spec",), ("suspend",)),
])
def test_que001_sets_the_kind_s_suspend_flag(monkeypatch, manifest, holder, path) -> None:
    found, objects = propose(monkeypatch, {"q.yaml": manifest}, "QUE001")
    plan = only(found)
    assert plan.safe
    node = dig(objects["q.yaml"][0].body, *holder)
    assert intent(plan) == SetKey(node, path, True)
    assert intent(plan).node is node


def test_que001_no_fix_for_a_placeholder(monkeypatch) -> None:
    found, _ = propose(monkeypatch, {"q.yaml": """
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, labels: {kueue.x-k8s.io/queue-name: q}}
        spec:
          suspend: "{{ .Values.suspend }}"
    """}, "QUE001")
    assert [p.plan for p in found] == [None]


# ---------------------------------------------------------------------------------------------
# RES005: half of the smallest memory limit of the containers that mount the volume

SHM_POD = """
apiVersion: batch/v1
kind: Job
metadata: {name: shm}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: a
        image: x:1
        resources: {limits: {memory: LIMIT_A}}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
      - name: b
        image: x:1
        resources: {limits: {memory: LIMIT_B}}
        volumeMounts: [{name: dshm, mountPath: /dev/shm/}]
      volumes:
      - name: dshm
        emptyDir:
          medium: Memory
"""


@pytest.mark.parametrize("a, b, size", [("16Gi", "32Gi", "8Gi"), ("64Gi", "3G", "1500M"), ("1Gi", '""', "512Mi")])
def test_res005_sizes_shm_at_half_the_smallest_memory_limit(monkeypatch, a, b, size) -> None:
    found, objects = propose(monkeypatch, {"p.yaml": SHM_POD.replace("LIMIT_A", a).replace("LIMIT_B", b)}, "RES005")
    plan = only(found)
    empty_dir = dig(objects["p.yaml"][0].body, "spec", "template", "spec", "volumes", 0, "emptyDir")
    assert plan.safe
    assert intent(plan) == SetKey(empty_dir, ("sizeLimit",), size)


def test_res005_sized_shm_lints_clean_for_res006(monkeypatch) -> None:
    for a, b in (("16Gi", "32Gi"), ("64Gi", "3G"), ("1Gi", "1Gi"), ("3", "7")):
        found, _ = propose(monkeypatch, {"p.yaml": SHM_POD.replace("LIMIT_A", a).replace("LIMIT_B", b)}, "RES005")
        size = intent(only(found)).value
        fixed = SHM_POD.replace("LIMIT_A", a).replace("LIMIT_B", b) + f"          sizeLimit: {size}\n"
        assert propose(monkeypatch, {"p.yaml": fixed}, "RES005", "RES006")[0] == []


def test_res005_no_fix_without_a_memory_limit(monkeypatch) -> None:
    text = SHM_POD.replace("resources: {limits: {memory: LIMIT_A}}", "resources: {}").replace(
        "resources: {limits: {memory: LIMIT_B}}", "resources: {limits: {cpu: 2}}")
    found, _ = propose(monkeypatch, {"p.yaml": text}, "RES005")
    assert [p.plan for p in found] == [None]


# ---------------------------------------------------------------------------------------------
# DST003

PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: ddp}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
            resources: {limits: {nvidia.com/gpu: 1}}
ENV
"""


def pytorchjob(env: str) -> dict[str, str]:
    return {"ddp.yaml": PYTORCHJOB.replace("ENV\n", textwrap.indent(textwrap.dedent(env).lstrip("\n"), " " * 12))}


def worker(objects: dict) -> Any:
    return dig(objects["ddp.yaml"][0].body, "spec", "pytorchReplicaSpecs", "Worker", "template", "spec",
               "containers", 0)


def test_dst003_appends_the_variable_as_the_string_1(monkeypatch) -> None:
    found, objects = propose(monkeypatch, pytorchjob("env:\n- {name: NCCL_DEBUG, value: WARN}\n"), "DST003")
    plan = only(found)
    assert plan.safe
    assert intent(plan) == AppendItem(worker(objects), "env",
                                      {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"})


def test_dst003_creates_env_when_there_is_none(monkeypatch) -> None:
    found, objects = propose(monkeypatch, pytorchjob(""), "DST003")
    assert intent(only(found)) == AppendItem(worker(objects), "env",
                                             {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"})


@pytest.mark.parametrize("name, value", [("TORCH_NCCL_ASYNC_ERROR_HANDLING", "0"),
                                         ("TORCH_NCCL_ASYNC_ERROR_HANDLING", '"2"'),
                                         ("NCCL_ASYNC_ERROR_HANDLING", "0")])
def test_dst003_sets_a_wrong_value_in_place(monkeypatch, name, value) -> None:
    found, objects = propose(monkeypatch, pytorchjob(f"""
        env:
        - name: OTHER
          value: x
        - name: {name}
          value: {value}
    """), "DST003")
    assert intent(only(found)) == SetKey(worker(objects)["env"][1], ("value",), "1")
    assert intent(only(found)).node is worker(objects)["env"][1]


def test_dst003_no_fix_when_env_is_not_a_list(monkeypatch) -> None:
    found, objects = propose(monkeypatch, pytorchjob("env:\n"), "DST003")
    assert intent(only(found)) == AppendItem(worker(objects), "env",
                                             {"name": "TORCH_NCCL_ASYNC_ERROR_HANDLING", "value": "1"})
    found, _ = propose(monkeypatch, pytorchjob("env: {}\n"), "DST003")
    assert [p.plan for p in found] == [None]


# ---------------------------------------------------------------------------------------------
# SEC001 / SEC002 (unsafe)


def test_sec001_sets_allow_privilege_escalation_false(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("securityContext: {allowPrivilegeEscalation: true}"), "SEC001")
    plan = only(found)
    assert not plan.safe
    assert intent(plan) == SetKey(container_body(objects)["securityContext"], ("allowPrivilegeEscalation",), False)
    found, objects = propose(monkeypatch, job("command: [python]"), "SEC001")
    assert intent(only(found)) == SetKey(container_body(objects), ("securityContext", "allowPrivilegeEscalation"), False)


def test_sec001_beside_cap_sys_admin_removes_the_capability_and_sets_the_field(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("""
        securityContext:
          capabilities:
            add: [NET_ADMIN, SYS_ADMIN, cap_sys_admin]
    """), "SEC001")
    plan = only(found)
    assert not plan.safe
    context = container_body(objects)["securityContext"]
    assert plan.intents == (DeleteItem(context["capabilities"], "add", (1, 2)),
                            SetKey(context, ("allowPrivilegeEscalation",), False))
    assert plan.intents[0].node is context["capabilities"]
    # a placeholder in the field, or capabilities that are not a list: no fix
    found, _ = propose(monkeypatch, job("""
        securityContext:
          allowPrivilegeEscalation: "{{ .Values.escalate }}"
          capabilities: {add: [SYS_ADMIN]}
    """), "SEC001")
    assert [p.plan for p in found] == [None]


def test_sec001_fix_beside_cap_sys_admin_leaves_an_empty_list_and_other_items(monkeypatch) -> None:
    from mlops_lint.fix.apply import apply_edits
    from mlops_lint.fix.resolve import resolve

    for written, expected in [
        ("securityContext:\n  capabilities:\n    add:\n    - SYS_ADMIN  # for fuse\n",
         "securityContext:\n  capabilities:\n    add: []\n  allowPrivilegeEscalation: false\n"),
        ("securityContext:\n  capabilities:\n    add:\n    - CHOWN\n    - CAP_SYS_ADMIN\n    drop: [ALL]\n",
         "securityContext:\n  capabilities:\n    add:\n    - CHOWN\n    drop: [ALL]\n  allowPrivilegeEscalation: false\n"),
    ]:
        files = job(written)
        found, _ = propose(monkeypatch, files, "SEC001")
        text = textwrap.dedent(files["job.yaml"]).lstrip("\n")
        fix = resolve(only(found), text, "job.yaml")
        assert apply_edits(text, fix.edits) == text.replace(textwrap.indent(written, " " * 8),
                                                            textwrap.indent(expected, " " * 8))


@pytest.mark.parametrize("context, expected", [
    ("", lambda c: SetKey(c, ("securityContext", "capabilities", "drop"), ["ALL"])),
    ("securityContext: {runAsNonRoot: true}", lambda c: SetKey(c["securityContext"], ("capabilities", "drop"), ["ALL"])),
    ("securityContext: {capabilities: {add: [NET_BIND_SERVICE]}}",
     lambda c: SetKey(c["securityContext"]["capabilities"], ("drop",), ["ALL"])),
    ("securityContext: {capabilities: {drop: [NET_RAW]}}",
     lambda c: AppendItem(c["securityContext"]["capabilities"], "drop", "ALL")),
    ("securityContext: {capabilities: {drop: [NET_RAW, all]}}",
     lambda c: Replace(c["securityContext"]["capabilities"]["drop"].item_span(1), "ALL")),
])
def test_sec002_drops_all(monkeypatch, context, expected) -> None:
    found, objects = propose(monkeypatch, job(context or "command: [python]"), "SEC002")
    plan = only(found)
    assert not plan.safe
    assert intent(plan) == expected(container_body(objects))


def test_sec002_no_fix_when_drop_is_not_a_list(monkeypatch) -> None:
    found, _ = propose(monkeypatch, job("securityContext: {capabilities: {drop: ALL}}"), "SEC002")
    assert [p.plan for p in found] == [None]


# ---------------------------------------------------------------------------------------------
# STO001: the StorageClass or PV of the project, wherever it is defined

CLASS = """
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: ml-files}
provisioner: file.csi.azure.com
"""
CLAIM = """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: model-checkpoints, namespace: ml}
spec:
  accessModes: [ReadWriteMany]
  storageClassName: CLASS
  resources: {requests: {storage: 100Gi}}
"""


def test_sto001_sets_retain_on_the_class_in_its_own_file(monkeypatch) -> None:
    found, objects = propose(monkeypatch, {"claim.yaml": CLAIM.replace("CLASS", "ml-files"), "sc.yaml": CLASS},
                             "STO001")
    plan = only(found)
    assert not plan.safe and plan.path == "sc.yaml"
    assert intent(plan) == SetKey(objects["sc.yaml"][0].body, ("reclaimPolicy",), "Retain")


def test_sto001_same_file_needs_no_path_and_a_builtin_class_gets_no_fix(monkeypatch) -> None:
    found, _ = propose(monkeypatch, {"both.yaml": CLASS + "reclaimPolicy: Delete\n---\n" + CLAIM.replace("CLASS", "ml-files")},
                       "STO001")
    assert only(found).path is None
    found, _ = propose(monkeypatch, {"claim.yaml": CLAIM.replace("CLASS", "azurefile-csi")}, "STO001")
    assert [p.plan for p in found] == [None]


def test_sto001_static_volume_gets_persistent_volume_reclaim_policy(monkeypatch) -> None:
    volume = """
    apiVersion: v1
    kind: PersistentVolume
    metadata: {name: run-42}
    spec:
      capacity: {storage: 100Gi}
      accessModes: [ReadWriteOnce]
      persistentVolumeReclaimPolicy: Delete
      csi: {driver: disk.csi.azure.com, volumeHandle: x}
    """
    claim = CLAIM.replace("storageClassName: CLASS", 'storageClassName: ""\n  volumeName: run-42')
    found, objects = propose(monkeypatch, {"claim.yaml": claim, "pv.yaml": volume}, "STO001")
    plan = only(found)
    assert plan.path == "pv.yaml"
    assert intent(plan) == SetKey(objects["pv.yaml"][0].body["spec"], ("persistentVolumeReclaimPolicy",), "Retain")


# ---------------------------------------------------------------------------------------------
# STO005: the rule's minimum, from its option


def test_sto005_sets_the_configured_minimum(monkeypatch) -> None:
    text = job("volumeMounts: [{name: ckpt, mountPath: /checkpoints}]")
    text["job.yaml"] = text["job.yaml"].replace(
        "      restartPolicy: Never\n", "      restartPolicy: Never\n      terminationGracePeriodSeconds: 10\n")
    text["job.yaml"] += "      volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]\n"
    found, objects = propose(monkeypatch, text, "STO005", config=Config(rule_options={"STO005": {"min-grace-period-seconds": 90}}))
    plan = only(found)
    assert not plan.safe
    spec = dig(objects["job.yaml"][0].body, "spec", "template", "spec")
    assert intent(plan) == SetKey(spec, ("terminationGracePeriodSeconds",), 90)


# ---------------------------------------------------------------------------------------------
# A TrainJob's views: the plan holds the node of the object the finding points into

RUNTIME = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: torch}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
"""
TRAINJOB = """
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: tj, namespace: ml}
spec:
  runtimeRef: {name: torch}
  trainer:
    resourcesPerNode:
      requests: {nvidia.com/gpu: 1}
"""


def test_trainjob_gpu001_fix_goes_into_the_trainjob_s_resources_per_node(monkeypatch) -> None:
    found, objects = propose(monkeypatch, {"runtime.yaml": RUNTIME, "trainjob.yaml": TRAINJOB}, "GPU001")
    plan = only(found)
    resources = dig(objects["trainjob.yaml"][0].body, "spec", "trainer", "resourcesPerNode")
    assert found[0].node == ("spec", "trainer", "resourcesPerNode", "requests", "nvidia.com/gpu")
    assert intent(plan).node is resources
    assert intent(plan) == SetKey(resources, ("limits", "nvidia.com/gpu"), 1)


def test_trainjob_container_keys_of_the_runtime_are_fixed_in_the_runtime(monkeypatch) -> None:
    found, objects = propose(monkeypatch, {"runtime.yaml": RUNTIME, "trainjob.yaml": TRAINJOB}, "SEC001")
    runtime_container = dig(objects["runtime.yaml"][0].body, "spec", "template", "spec", "replicatedJobs", 0,
                            "template", "spec", "template", "spec", "containers", 0)
    assert found, "SEC001 fires on the runtime's container"
    for proposed in found:
        assert intent(proposed.plan).node is runtime_container


def test_trainjob_gpu005_gives_no_fix_into_a_shared_runtime(monkeypatch) -> None:
    found, _ = propose(monkeypatch, {"runtime.yaml": RUNTIME, "trainjob.yaml": TRAINJOB.replace(
        "requests: {nvidia.com/gpu: 1}", "limits: {nvidia.com/gpu: 1}")}, "GPU005")
    assert found and all(p.plan is None for p in found)


# ---------------------------------------------------------------------------------------------
# The catalogue's other rules with one repair


def test_dst001_missing_replicas_is_safe_a_wrong_count_unsafe(monkeypatch) -> None:
    text = """
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata: {name: p}
    spec:
      pytorchReplicaSpecs:
        Master: {REPLICAS template: {spec: {containers: [{name: pytorch, image: x:1}]}}}
    """
    found, objects = propose(monkeypatch, {"p.yaml": text.replace("REPLICAS ", "")}, "DST001")
    master = dig(objects["p.yaml"][0].body, "spec", "pytorchReplicaSpecs", "Master")
    assert only(found).safe and intent(only(found)) == SetKey(master, ("replicas",), 1)
    found, _ = propose(monkeypatch, {"p.yaml": text.replace("REPLICAS ", "replicas: 3, ")}, "DST001")
    assert not only(found).safe and intent(only(found)).value == 1


def test_dst004_and_dst006_env_values(monkeypatch) -> None:
    found, objects = propose(monkeypatch, pytorchjob("env:\n- {name: NCCL_DEBUG, value: INFO}\n"), "DST004", "DST006")
    by_code = {p.code: p.plan for p in found}
    env = worker(objects)["env"]
    assert not by_code["DST004"].safe
    assert intent(by_code["DST004"]) == AppendItem(worker(objects), "env", {"name": "NCCL_SOCKET_IFNAME", "value": "eth0"})
    assert by_code["DST006"].safe and intent(by_code["DST006"]) == SetKey(env[0], ("value",), "WARN")


def test_que007_and_que008_and_que011(monkeypatch) -> None:
    volcano = """
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: v}
    spec:
      minAvailable: 4
      tasks:
      - {name: worker, replicas: 2, template: {spec: {containers: [{name: w, image: x:1}]}}}
    """
    found, objects = propose(monkeypatch, {"v.yaml": volcano}, "QUE007", "QUE008")
    spec = objects["v.yaml"][0].body["spec"]
    by_code = {p.code: p.plan for p in found}
    assert intent(by_code["QUE007"]) == SetKey(spec, ("minAvailable",), 2) and not by_code["QUE007"].safe
    assert intent(by_code["QUE008"]) == SetKey(spec, ("schedulerName",), "volcano") and by_code["QUE008"].safe
    classes = """
    apiVersion: scheduling.k8s.io/v1
    kind: PriorityClass
    metadata: {name: batch}
    value: 1000
    """
    training = """
    apiVersion: batch/v1
    kind: Job
    metadata: {name: j}
    spec:
      template:
        spec:
          priorityClassName: batch
          restartPolicy: Never
          containers: [{name: c, image: x:1}]
    """
    found, objects = propose(monkeypatch, {"j.yaml": training, "pc.yaml": classes}, "QUE011")
    plan = only(found)
    assert not plan.safe and plan.path is None  # the finding is the PriorityClass's own (obj=pc)
    assert intent(plan) == SetKey(objects["pc.yaml"][0].body, ("preemptionPolicy",), "Never")


def test_gpu005_tolerates_the_one_configured_taint(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("resources: {limits: {nvidia.com/gpu: 1}}"), "GPU005")
    spec = dig(objects["job.yaml"][0].body, "spec", "template", "spec")
    assert intent(only(found)) == AppendItem(spec, "tolerations",
                                             {"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"})
    two = Config(gpu_taints=[{"key": "sku", "value": "gpu", "effect": "NoSchedule"},
                             {"key": "nvidia.com/gpu", "effect": "NoSchedule"}])
    found, _ = propose(monkeypatch, job("resources: {limits: {nvidia.com/gpu: 1}}"), "GPU005", config=two)
    assert [p.plan for p in found] == [None]


def test_gpu010_hardening(monkeypatch) -> None:
    plugin = """
    apiVersion: apps/v1
    kind: DaemonSet
    metadata: {name: nvidia-device-plugin, namespace: kube-system}
    spec:
      selector: {matchLabels: {app: dp}}
      template:
        metadata: {labels: {app: dp}}
        spec:
          tolerations: [{key: sku, operator: Exists}]
          containers:
          - name: nvidia-device-plugin
            image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
            volumeMounts: [{name: dp, mountPath: /var/lib/kubelet/device-plugins}]
          volumes: [{name: dp, hostPath: {path: /var/lib/kubelet/device-plugins}}]
    """
    found, objects = propose(monkeypatch, {"dp.yaml": plugin}, "GPU010")
    spec = dig(objects["dp.yaml"][0].body, "spec", "template", "spec")
    container = spec["containers"][0]
    assert [(intent(p.plan), p.plan.safe) for p in found] == [
        (SetKey(spec, ("priorityClassName",), "system-node-critical"), True),
        (AppendItem(spec, "tolerations", {"operator": "Exists"}), True),
        (SetKey(container, ("securityContext", "allowPrivilegeEscalation"), False), False),
        (SetKey(container, ("securityContext", "capabilities", "drop"), ["ALL"]), False),
    ]


def test_dst004_no_fix_for_mpi_ranks_started_over_ssh(monkeypatch) -> None:
    mpijob = """
    apiVersion: kubeflow.org/v2beta1
    kind: MPIJob
    metadata: {name: m}
    spec:
      mpiReplicaSpecs:
        Launcher:
          replicas: 1
          template: {spec: {containers: [{name: l, image: x:1, command: [mpirun, python, t.py]}]}}
        Worker:
          replicas: 2
          template: {spec: {containers: [{name: w, image: x:1, resources: {limits: {nvidia.com/gpu: 1}}}]}}
    """
    found, _ = propose(monkeypatch, {"m.yaml": mpijob}, "DST004")
    assert found and all(p.plan is None for p in found)


@pytest.mark.parametrize("api_version, kind, wanted", [
    ("batch/v1beta1", "CronJob", "batch/v1"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass", "scheduling.k8s.io/v1"),
    ("extensions/v1beta1", "NetworkPolicy", "networking.k8s.io/v1"),
    ("extensions/v1beta1", "Deployment", None),  # apps/v1 requires spec.selector
    ("networking.k8s.io/v1beta1", "Ingress", None),  # v1 renames the backends
    ("autoscaling/v2beta1", "HorizontalPodAutoscaler", None),  # v2 rewrites the metrics
    ("policy/v1beta1", "PodDisruptionBudget", None),  # v1 reads an empty selector as every pod
])
def test_sch003_rewrites_only_drop_in_versions(monkeypatch, api_version, kind, wanted) -> None:
    found, objects = propose(monkeypatch, {"o.yaml": f"apiVersion: {api_version}\nkind: {kind}\nmetadata: {{name: o}}\n"},
                             "SCH003")
    assert len(found) == 1
    if wanted is None:
        assert found[0].plan is None
    else:
        assert found[0].plan.safe
        assert intent(found[0].plan) == SetKey(objects["o.yaml"][0].body, ("apiVersion",), wanted)


def test_res004_adds_the_article_s_volume_or_mounts_the_pod_s_own(monkeypatch) -> None:
    found, objects = propose(monkeypatch, job("resources: {limits: {nvidia.com/gpu: 1, memory: 16Gi}}"), "RES004")
    spec = dig(objects["job.yaml"][0].body, "spec", "template", "spec")
    plan = only(found)
    assert plan.safe
    assert plan.intents == (
        AppendItem(spec, "volumes", {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "8Gi"}}),
        AppendItem(spec["containers"][0], "volumeMounts", {"name": "shared-memory", "mountPath": "/dev/shm"}),
    )
    two = """
    apiVersion: v1
    kind: Pod
    metadata: {name: p}
    spec:
      restartPolicy: Never
      containers:
      - {name: a, image: x:1, command: [python, train.py], resources: {limits: {cpu: 4, memory: 8Gi}}}
      - {name: b, image: x:1, resources: {limits: {cpu: 4, memory: 8Gi}}, volumeMounts: [{name: dshm, mountPath: /dev/shm}]}
      volumes: [{name: dshm, emptyDir: {medium: Memory, SIZE}}]
    """
    found, objects = propose(monkeypatch, {"p.yaml": two.replace("SIZE", "sizeLimit: 2Gi")}, "RES004")
    first = objects["p.yaml"][0].body["spec"]["containers"][0]
    assert intent(only(found)) == AppendItem(first, "volumeMounts", {"name": "dshm", "mountPath": "/dev/shm"})
    found, objects = propose(monkeypatch, {"p.yaml": two.replace("SIZE", "sizeLimit: 7Gi")}, "RES004")
    spec = objects["p.yaml"][0].body["spec"]
    assert only(found).intents[0] == AppendItem(  # 7Gi would crowd a's 8Gi limit (RES006): a volume of its own
        spec, "volumes", {"name": "shared-memory", "emptyDir": {"medium": "Memory", "sizeLimit": "4Gi"}})
    found, _ = propose(monkeypatch, job("resources: {limits: {nvidia.com/gpu: 1}}"), "RES004")
    assert [p.plan for p in found] == [None]


def test_gpu006_adds_the_configured_labels_only_without_known_pools(monkeypatch) -> None:
    text = job("resources: {limits: {nvidia.com/gpu: 1}}")
    text["job.yaml"] = text["job.yaml"].replace("      restartPolicy: Never\n",
                                                "      restartPolicy: Never\n      nodeSelector: {zone: a}\n")
    found, objects = propose(monkeypatch, text, "GPU006", config=Config(gpu_node_labels={"pool": "gpu", "sku": "a100"}))
    selector = dig(objects["job.yaml"][0].body, "spec", "template", "spec", "nodeSelector")
    assert not only(found).safe  # added into the selector there is, `zone: a` kept
    assert only(found).intents == (SetKey(selector, ("pool",), "gpu"), SetKey(selector, ("sku",), "a100"))
    pools = Config(node_pools=[{"name": "gpunp", "vm-size": "Standard_NC24ads_A100_v4", "labels": {"pool": "gpu"}}])
    found, _ = propose(monkeypatch, job("resources: {limits: {nvidia.com/gpu: 1}}"), "GPU006", config=pools)
    assert [p.plan for p in found] in ([], [None])


def test_sto005_no_fix_where_the_autoscaler_would_cut_the_new_grace_period(monkeypatch, tmp_path) -> None:
    text = job("volumeMounts: [{name: ckpt, mountPath: /checkpoints}]")
    text["job.yaml"] += "      volumes: [{name: ckpt, persistentVolumeClaim: {claimName: ckpt}}]\n"
    script = ("az aks nodepool add --resource-group rg --cluster-name c --name gpunp "
              "--node-vm-size Standard_NC24ads_A100_v4 --enable-cluster-autoscaler --min-count 0 --max-count 2\n"
              "az aks update --resource-group rg --name c --cluster-autoscaler-profile max-graceful-termination-sec=45\n")
    found, _ = propose(monkeypatch, {**text, "cluster.sh": script}, "STO005")
    assert [p.plan for p in found] == [None]
    found, _ = propose(monkeypatch, {**text, "cluster.sh": script.replace("=45", "=600")}, "STO005")
    assert intent(only(found)).value == 60
