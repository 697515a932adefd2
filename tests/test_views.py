"""The typed views reach every container of every pod-carrying kind, and quantities parse exactly.

A container rule (GPU001) is run over one small manifest per kind. Each pod template holds an init
container and an app container that violate it, plus one that does not; the rule must fire once per
violating container, on the line below each ``# expect: GPU001`` marker, with a node path that
starts at the kind's pod template (the place Kubernetes, Kubeflow, Volcano, KubeRay and JobSet keep
it) and leads back to the offending request in the document.
"""

from __future__ import annotations

import re
import textwrap
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.quantity import parse_quantity
from mlops_lint.model.tree import dig
from mlops_lint.registry import load_registry
from mlops_lint.result import ObjectRef, Result
from mlops_lint.sources.yaml_k8s import load_text

MARKER = re.compile(r"^\s*# expect: GPU001\s*$")

# One pod spec, indented at column 0; %RESTART% is the restart policy the kind allows.
POD_SPEC = """\
restartPolicy: %RESTART%
nodeSelector:
  accelerator: nvidia
initContainers:
- name: gpu-preflight
  image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
  resources:
    requests:
      # expect: GPU001
      nvidia.com/gpu: 1
containers:
- name: trainer
  image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
  resources:
    requests:
      cpu: "4"
      # expect: GPU001
      nvidia.com/gpu: 1
    limits:
      cpu: "4"
- name: dont-fire-exporter
  image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04
  resources:
    requests: {nvidia.com/gpu: 1}
    limits: {nvidia.com/gpu: 1}
"""

INIT_SUFFIX = ("initContainers", 0, "resources", "requests", "nvidia.com/gpu")
APP_SUFFIX = ("containers", 0, "resources", "requests", "nvidia.com/gpu")

# kind -> (manifest with %POD% lines where pod specs go, restart policy, pod template paths in text order)
KINDS: dict[str, tuple[str, str, list[tuple]]] = {
    "Pod": ("""\
        apiVersion: v1
        kind: Pod
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          %POD%
        """, "Never", [("spec",)]),
    "Deployment": ("""\
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          replicas: 2
          selector: {matchLabels: {app: inference}}
          template:
            metadata: {labels: {app: inference}}
            spec:
              %POD%
        """, "Always", [("spec", "template", "spec")]),
    "StatefulSet": ("""\
        apiVersion: apps/v1
        kind: StatefulSet
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          serviceName: trainer
          replicas: 4
          selector: {matchLabels: {app: trainer}}
          template:
            metadata: {labels: {app: trainer}}
            spec:
              %POD%
        """, "Always", [("spec", "template", "spec")]),
    "DaemonSet": ("""\
        apiVersion: apps/v1
        kind: DaemonSet
        metadata: {name: should-fire, namespace: kube-system}
        spec:
          selector: {matchLabels: {app: gpu-burn-in}}
          template:
            metadata: {labels: {app: gpu-burn-in}}
            spec:
              %POD%
        """, "Always", [("spec", "template", "spec")]),
    "ReplicaSet": ("""\
        apiVersion: apps/v1
        kind: ReplicaSet
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          replicas: 1
          selector: {matchLabels: {app: inference}}
          template:
            metadata: {labels: {app: inference}}
            spec:
              %POD%
        """, "Always", [("spec", "template", "spec")]),
    "Job": ("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          backoffLimit: 3
          template:
            spec:
              %POD%
        """, "Never", [("spec", "template", "spec")]),
    "CronJob": ("""\
        apiVersion: batch/v1
        kind: CronJob
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          schedule: "0 2 * * *"
          jobTemplate:
            spec:
              template:
                spec:
                  %POD%
        """, "OnFailure", [("spec", "jobTemplate", "spec", "template", "spec")]),
    "PyTorchJob": ("""\
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              restartPolicy: OnFailure
              template:
                spec:
                  %POD%
            Worker:
              replicas: 3
              restartPolicy: OnFailure
              template:
                spec:
                  %POD%
        """, "OnFailure", [("spec", "pytorchReplicaSpecs", "Master", "template", "spec"),
                           ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec")]),
    "TFJob": ("""\
        apiVersion: kubeflow.org/v1
        kind: TFJob
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          tfReplicaSpecs:
            Chief:
              replicas: 1
              template:
                spec:
                  %POD%
            Worker:
              replicas: 2
              template:
                spec:
                  %POD%
            PS:
              replicas: 1
              template:
                spec:
                  %POD%
        """, "OnFailure", [("spec", "tfReplicaSpecs", role, "template", "spec") for role in ("Chief", "Worker", "PS")]),
    "MPIJob": ("""\
        apiVersion: kubeflow.org/v2beta1
        kind: MPIJob
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          slotsPerWorker: 1
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  %POD%
            Worker:
              replicas: 2
              template:
                spec:
                  %POD%
        """, "OnFailure", [("spec", "mpiReplicaSpecs", role, "template", "spec") for role in ("Launcher", "Worker")]),
    "Volcano Job": ("""\
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          schedulerName: volcano
          minAvailable: 3
          tasks:
          - name: master
            replicas: 1
            template:
              spec:
                %POD%
          - name: worker
            replicas: 2
            template:
              spec:
                %POD%
        """, "OnFailure", [("spec", "tasks", 0, "template", "spec"), ("spec", "tasks", 1, "template", "spec")]),
    "RayCluster": ("""\
        apiVersion: ray.io/v1
        kind: RayCluster
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          headGroupSpec:
            rayStartParams: {dashboard-host: 0.0.0.0}
            template:
              spec:
                %POD%
          workerGroupSpecs:
          - groupName: gpu-workers
            replicas: 2
            rayStartParams: {}
            template:
              spec:
                %POD%
        """, "Always", [("spec", "headGroupSpec", "template", "spec"),
                        ("spec", "workerGroupSpecs", 0, "template", "spec")]),
    "JobSet": ("""\
        apiVersion: jobset.x-k8s.io/v1alpha2
        kind: JobSet
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          replicatedJobs:
          - name: leader
            replicas: 1
            template:
              spec:
                template:
                  spec:
                    %POD%
          - name: workers
            replicas: 2
            template:
              spec:
                parallelism: 4
                completions: 4
                template:
                  spec:
                    %POD%
        """, "Never", [("spec", "replicatedJobs", 0, "template", "spec", "template", "spec"),
                       ("spec", "replicatedJobs", 1, "template", "spec", "template", "spec")]),
    "LeaderWorkerSet": ("""\
        apiVersion: leaderworkerset.x-k8s.io/v1
        kind: LeaderWorkerSet
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          replicas: 2
          leaderWorkerTemplate:
            size: 4
            leaderTemplate:
              spec:
                %POD%
            workerTemplate:
              spec:
                %POD%
        """, "Always", [("spec", "leaderWorkerTemplate", "leaderTemplate", "spec"),
                        ("spec", "leaderWorkerTemplate", "workerTemplate", "spec")]),
    "Workspace": ("""\
        apiVersion: kaito.sh/v1beta1
        kind: Workspace
        metadata: {name: should-fire, namespace: ml-serving}
        resource:
          instanceType: Standard_NC24ads_A100_v4
          labelSelector: {matchLabels: {apps: custom}}
        inference:
          template:
            spec:
              %POD%
        """, "Always", [("inference", "template", "spec")]),
    "RayJob": ("""\
        apiVersion: ray.io/v1
        kind: RayJob
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          entrypoint: python train.py
          submitterPodTemplate:
            spec:
              %POD%
          rayClusterSpec:
            headGroupSpec:
              rayStartParams: {}
              template:
                spec:
                  %POD%
            workerGroupSpecs:
            - groupName: gpu
              replicas: 2
              template:
                spec:
                  %POD%
        """, "Never", [("spec", "submitterPodTemplate", "spec"), ("spec", "rayClusterSpec", "headGroupSpec", "template", "spec"),
                       ("spec", "rayClusterSpec", "workerGroupSpecs", 0, "template", "spec")]),
    "RayService": ("""\
        apiVersion: ray.io/v1
        kind: RayService
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          serveConfigV2: ""
          rayClusterConfig:
            headGroupSpec:
              template:
                spec:
                  %POD%
            workerGroupSpecs:
            - groupName: gpu
              template:
                spec:
                  %POD%
        """, "Always", [("spec", "rayClusterConfig", "headGroupSpec", "template", "spec"),
                        ("spec", "rayClusterConfig", "workerGroupSpecs", 0, "template", "spec")]),
    "ClusterTrainingRuntime": ("""\
        apiVersion: trainer.kubeflow.org/v1alpha1
        kind: ClusterTrainingRuntime
        metadata: {name: should-fire}
        spec:
          mlPolicy: {numNodes: 2, torch: {numProcPerNode: auto}}
          template:
            spec:
              replicatedJobs:
              - name: dataset-initializer
                template:
                  spec:
                    template:
                      spec:
                        %POD%
              - name: node
                template:
                  spec:
                    template:
                      spec:
                        %POD%
        """, "OnFailure", [("spec", "template", "spec", "replicatedJobs", i, "template", "spec", "template", "spec")
                           for i in (0, 1)]),
    "InferenceService": ("""\
        apiVersion: serving.kserve.io/v1beta1
        kind: InferenceService
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          predictor:
            minReplicas: 1
            %POD%
          transformer:
            %POD%
        """, "Always", [("spec", "predictor"), ("spec", "transformer")]),
    "ServingRuntime": ("""\
        apiVersion: serving.kserve.io/v1alpha1
        kind: ServingRuntime
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          supportedModelFormats: [{name: huggingface, autoSelect: true}]
          %POD%
        """, "Always", [("spec",)]),
    **{kind: (f"""\
        apiVersion: kubeflow.org/v1
        kind: {kind}
        metadata: {{name: should-fire, namespace: ml-training}}
        spec:
          {field}:
            {role}:
              replicas: 1
              template:
                spec:
                  %POD%
        """, "OnFailure", [("spec", field, role, "template", "spec")])
       for kind, field, role in (("XGBoostJob", "xgbReplicaSpecs", "Master"), ("PaddleJob", "paddleReplicaSpecs", "Worker"),
                                 ("JAXJob", "jaxReplicaSpecs", "Worker"))},
    # the 2026 AI kinds (issue 37): KServe's LLMInferenceService (pod specs inline), KAITO's
    # InferenceSet (a Workspace template per replica), NVIDIA Dynamo's DynamoGraphDeployment
    "LLMInferenceService": ("""\
        apiVersion: serving.kserve.io/v1alpha2
        kind: LLMInferenceService
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          model: {uri: "hf://Qwen/Qwen2.5-7B-Instruct"}
          replicas: 2
          template:
            %POD%
          worker:
            %POD%
          prefill:
            replicas: 1
            template:
              %POD%
          router:
            scheduler:
              template:
                %POD%
        """, "Always", [("spec", "template"), ("spec", "worker"), ("spec", "prefill", "template"),
                        ("spec", "router", "scheduler", "template")]),
    "InferenceSet": ("""\
        apiVersion: kaito.sh/v1beta1
        kind: InferenceSet
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          replicas: 2
          labelSelector: {matchLabels: {apps: phi}}
          template:
            resource: {instanceType: Standard_NC24ads_A100_v4}
            inference:
              template:
                spec:
                  %POD%
        """, "Always", [("spec", "template", "inference", "template", "spec")]),
    "DynamoGraphDeployment": ("""\
        apiVersion: nvidia.com/v1alpha1
        kind: DynamoGraphDeployment
        metadata: {name: should-fire, namespace: ml-serving}
        spec:
          services:
            VllmDecodeWorker:
              componentType: worker
              replicas: 2
              extraPodSpec:
                %POD%
        """, "Always", [("spec", "services", "VllmDecodeWorker", "extraPodSpec")]),
    "unmodelled kind (generic view)": ("""\
        apiVersion: agents.x-k8s.io/v1alpha1
        kind: Sandbox
        metadata: {name: should-fire, namespace: ml-training}
        spec:
          podTemplate:
            spec:
              %POD%
        """, "Never", [("spec", "podTemplate", "spec")]),
}


def build(kind: str) -> str:
    wrapper, restart, _ = KINDS[kind]
    pod = POD_SPEC.replace("%RESTART%", restart)
    out = []
    for line in textwrap.dedent(wrapper).splitlines():
        if line.strip() == "%POD%":
            indent = line[: line.index("%")]
            out.extend(indent + pod_line if pod_line else "" for pod_line in pod.splitlines())
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def marker_lines(text: str) -> list[int]:
    """1-based numbers of the lines directly below ``# expect: GPU001`` markers, in text order."""
    return [index + 2 for index, line in enumerate(text.splitlines()) if MARKER.match(line)]


def lint_text(tmp_path: Path, text: str, name: str = "manifest.yaml") -> list[Result]:
    (tmp_path / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / name], config=Config(), registry=load_registry(),
                              select=["GPU001"], cwd=tmp_path))
    return report.active


@pytest.mark.parametrize("kind", list(KINDS))
def test_container_rule_reaches_every_container_of_every_kind(kind: str, tmp_path: Path) -> None:
    text = build(kind)
    templates = KINDS[kind][2]
    lines = marker_lines(text)
    assert len(lines) == 2 * len(templates)  # the manifest is built as intended
    expected = set()
    for number, prefix in enumerate(templates):
        init_line, app_line = lines[2 * number: 2 * number + 2]  # init containers come first in POD_SPEC
        expected.add((init_line, prefix + INIT_SUFFIX))
        expected.add((app_line, prefix + APP_SUFFIX))

    results = lint_text(tmp_path, text)
    assert all(r.rule == "GPU001" for r in results)
    assert len(results) == len(expected), [(r.line, r.node) for r in results]  # once per violating container
    assert {(r.line, r.node) for r in results} == expected
    api_kind = {"Volcano Job": "Job", "unmodelled kind (generic view)": "Sandbox"}.get(kind, kind)
    namespace = load_text(text, "manifest.yaml").objects[0].namespace  # as the manifest's metadata gives it
    assert {r.obj for r in results} == {ObjectRef(api_kind, namespace, "should-fire")}

    body = load_text(text, "manifest.yaml").objects[0].body
    for result in results:
        assert dig(body, *result.node) == 1, result.node  # the node path leads to the request
        assert result.span == dig(body, *result.node[:-1]).kspans["nvidia.com/gpu"]


def test_same_shape_in_an_unknown_group_is_read_generically(tmp_path: Path) -> None:
    """A Job of another group is no batch Job: its pod template is linted through a generic view
    (the container rule fires at the same places), and it is no training workload."""
    from mlops_lint.model.k8s import workload_of

    text = build("Job").replace("apiVersion: batch/v1", "apiVersion: example.com/v1")
    results = lint_text(tmp_path, text)
    assert [(r.line, r.node) for r in results] == [
        (line, ("spec", "template", "spec") + suffix) for line, suffix in zip(marker_lines(text), (INIT_SUFFIX, APP_SUFFIX))]
    workload = workload_of(load_text(text, "m.yaml").objects[0])
    assert workload.generic and not workload.is_training
    assert workload.pods[0].describe() == "pod template at `spec.template.spec`"


LIST = """\
apiVersion: v1
kind: List
metadata:
  resourceVersion: ""
items:
- apiVersion: batch/v1
  kind: Job
  metadata:
    name: train-a
    namespace: ml-training
    uid: 6f9c2a3e-5d8b-4c1e-9a7f-0b2d4e6f8a1c
    managedFields:
    - apiVersion: batch/v1
      fieldsType: FieldsV1
      fieldsV1:
        f:spec:
          f:template:
            f:spec:
              f:containers:
                k:{"name":"trainer"}:
                  f:resources:
                    f:requests:
                      f:nvidia.com/gpu: {}
      manager: kubectl-client-side-apply
      operation: Update
      time: "2024-05-27T10:00:00Z"
  spec:
    backoffLimit: 3
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: trainer
          image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
          resources:
            requests:
              # expect: GPU001
              nvidia.com/gpu: 1
  status:
    active: 1
    startTime: "2024-05-27T10:00:01Z"
- apiVersion: v1
  kind: Pod
  metadata:
    name: train-b-7x2lq
    namespace: ml-training
    managedFields:
    - apiVersion: v1
      fieldsType: FieldsV1
      fieldsV1:
        f:status:
          f:containerStatuses: {}
      manager: kubelet
      operation: Update
      subresource: status
  spec:
    restartPolicy: Never
    initContainers:
    - name: gpu-preflight
      image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
      resources:
        requests:
          # expect: GPU001
          nvidia.com/gpu: 1
    containers:
    - name: trainer
      image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
      resources:
        requests: {nvidia.com/gpu: 1}
        limits: {nvidia.com/gpu: 1}
  status:
    phase: Running
    containerStatuses:
    - name: trainer
      ready: true
      resources:
        requests:
          nvidia.com/gpu: "1"
"""


def test_kind_list_items_are_linted_and_status_is_not(tmp_path: Path) -> None:
    results = lint_text(tmp_path, LIST)
    assert {r.line for r in results} == set(marker_lines(LIST))
    assert len(results) == 2
    by_item = {r.node[:2]: r for r in results}
    assert set(by_item) == {("items", 0), ("items", 1)}
    assert by_item[("items", 0)].obj == ObjectRef("Job", "ml-training", "train-a")
    assert by_item[("items", 1)].obj == ObjectRef("Pod", "ml-training", "train-b-7x2lq")
    assert by_item[("items", 0)].node[2:] == ("spec", "template", "spec") + APP_SUFFIX
    assert by_item[("items", 1)].node[2:] == ("spec",) + INIT_SUFFIX

    objects = load_text(LIST, "list.yaml").objects
    assert [o.node_path for o in objects] == [("items", 0), ("items", 1)]
    assert all("status" not in o.body and "managedFields" not in o.metadata for o in objects)


# ---------------------------------------------------------------------------------------------
# Quantities (k8s.io/apimachinery/pkg/api/resource)

BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 10**3), "": 1, "k": 10**3,
           "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18}
EXPONENT = {"e3": 10**3, "E3": 10**3, "e-2": Fraction(1, 100), "E+6": 10**6, "e0": 1}
SUFFIXES = {**BINARY, **DECIMAL, **EXPONENT}


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("500m", Fraction(1, 2)),
        ("1.5", Fraction(3, 2)),
        ("8Gi", 8 * 2**30),
        ("8G", 8 * 10**9),
        ("1e3", Fraction(1000)),
        ("2E-1", Fraction(1, 5)),
        (".5", Fraction(1, 2)),
        ("0.1", Fraction(1, 10)),  # exact: not the float 0.1000000000000000055…
        ("1Gi", 1073741824),
        ("1G", 1000000000),
        ("-2", -2),
        ("+250m", Fraction(1, 4)),
        (16, 16),
        (0.5, Fraction(1, 2)),
    ],
)
def test_quantity_exact_values(text, value) -> None:
    parsed = parse_quantity(text)
    assert isinstance(parsed, Fraction)
    assert parsed == value


@pytest.mark.parametrize("text", ["1.2.3", "Gi", "", "m", "1gi", "1K", "1 Gi", "one", "0x10", "1e", "1.5.Gi",
                                  True, False, None, [1], {"cpu": 1}, float("nan"), float("inf")])
def test_quantity_invalid(text) -> None:
    assert parse_quantity(text) is None


def test_quantity_comparisons_are_exact() -> None:
    assert parse_quantity("0.1") + parse_quantity("0.2") == parse_quantity("300m")
    assert parse_quantity("1Gi") > parse_quantity("1G")
    assert parse_quantity("500m") == parse_quantity("0.5") == parse_quantity(0.5)
    assert parse_quantity("1") == parse_quantity(1) == parse_quantity("1000m")


@given(n=st.integers(min_value=-(10**15), max_value=10**15), suffix=st.sampled_from(sorted(SUFFIXES)))
def test_quantity_integer_times_suffix(n: int, suffix: str) -> None:
    assert parse_quantity(f"{n}{suffix}") == n * SUFFIXES[suffix]


@given(d=st.decimals(min_value=-(10**9), max_value=10**9, places=4, allow_nan=False, allow_infinity=False),
       suffix=st.sampled_from(sorted(BINARY) + sorted(DECIMAL)))
def test_quantity_decimal_times_suffix(d: Decimal, suffix: str) -> None:
    assert parse_quantity(f"{d:f}{suffix}") == Fraction(d) * SUFFIXES[suffix]


def test_what_is_derived_from_a_view_is_computed_once_and_goes_with_it() -> None:
    from mlops_lint.index import ProjectIndex
    from mlops_lint.model.memo import once

    doc = load_text(textwrap.dedent("""\
        apiVersion: batch/v1
        kind: Job
        metadata: {name: j, namespace: ml}
        spec:
          template:
            spec:
              containers:
              - {name: c, image: x}
        """), "j.yaml")
    workload = ProjectIndex([doc]).workload(doc.objects[0])
    pod, container = workload.pods[0], workload.pods[0].containers[0]
    calls = []
    for view in (workload, pod, container, object()):  # the last has no memo: built each time
        for _ in range(2):
            assert once(view, "test-key", lambda: calls.append(view) or len(calls)) is not None
    assert calls.count(workload) == calls.count(pod) == calls.count(container) == 1 and len(calls) == 5
    assert "test-key" in workload._memo and "test-key" in pod.__dict__ and "test-key" in container._sections
    workload.dispose()
    assert not workload._memo and not workload.pods and "test-key" not in container._sections
