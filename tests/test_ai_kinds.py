"""The 2026 AI kinds (issue 37): their pod templates read as pod views, KServe's and Dynamo's
controller-completed pods judged on what the object writes, Trainer v2 runtimePatches merged as
Trainer merges them, and GPU013 (a GPUCluster beside a ClusterPolicy)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.index import ProjectIndex
from mlops_lint.registry import load_registry
from mlops_lint.sources.yaml_k8s import load_text

REGISTRY = load_registry()


def lint_files(tmp_path: Path, files: dict[str, str], select: list[str], jobs: int = 1) -> list[tuple]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=select, cwd=tmp_path,
                              jobs=jobs))
    return sorted((r.rule, r.path, r.line, r.column, r.obj.kind if r.obj else None, r.node, r.message)
                  for r in report.active)


def views(text: str) -> list[tuple]:
    document = load_text(textwrap.dedent(text), "m.yaml")
    index = ProjectIndex([document])
    workload = index.workload(document.objects[0])
    return [(pod.role, pod.replicas, pod.path, [(c.name, c.path) for c in pod.containers]) for pod in workload.pods]


# --- pod views ------------------------------------------------------------------------------------

LLM = """\
apiVersion: serving.kserve.io/v1alpha2
kind: LLMInferenceService
metadata: {name: qwen, namespace: llm}
spec:
  model: {uri: "hf://Qwen/Qwen2.5-7B-Instruct"}
  replicas: 3
  template:
    containers:
    - name: main
      resources:
        requests: {nvidia.com/gpu: "1"}
  worker:
    containers:
    - name: main
  prefill:
    replicas: 2
    template:
      containers:
      - name: main
  router:
    scheduler:
      replicas: 1
      template:
        containers:
        - name: epp
          image: ghcr.io/llm-d/llm-d-inference-scheduler:v0.3.0
"""


def test_llm_inference_service_pods_are_its_template_worker_prefill_and_scheduler() -> None:
    assert views(LLM) == [
        ("main", 3, ("spec", "template"), [("main", ("spec", "template", "containers", 0))]),
        ("worker", None, ("spec", "worker"), [("main", ("spec", "worker", "containers", 0))]),
        ("prefill main", 2, ("spec", "prefill", "template"), [("main", ("spec", "prefill", "template", "containers", 0))]),
        ("scheduler", 1, ("spec", "router", "scheduler", "template"),
         [("epp", ("spec", "router", "scheduler", "template", "containers", 0))]),
    ]


def test_dynamo_components_are_pods_with_their_main_container() -> None:
    text = """\
    apiVersion: nvidia.com/v1alpha1
    kind: DynamoGraphDeployment
    metadata: {name: disagg}
    spec:
      services:
        Frontend:
          replicas: 1
        VllmPrefillWorker:
          replicas: 2
          multinode: {nodeCount: 2}
          extraPodSpec:
            mainContainer:
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
            containers:
            - name: sidecar
              image: busybox:1.36
    """
    base = ("spec", "services", "VllmPrefillWorker", "extraPodSpec")
    assert views(text) == [("VllmPrefillWorker", 4, base, [("sidecar", base + ("containers", 0)),
                                                             ("main", base + ("mainContainer",))])]


def test_inference_set_runs_its_workspace_template_per_replica() -> None:
    text = """\
    apiVersion: kaito.sh/v1beta1
    kind: InferenceSet
    metadata: {name: phi}
    spec:
      replicas: 3
      labelSelector: {matchLabels: {apps: phi}}
      template:
        resource: {instanceType: Standard_NC24ads_A100_v4}
        inference:
          template:
            spec:
              containers:
              - name: server
                image: mcr.microsoft.com/aks/kaito/kaito-base:0.0.8
    """
    path = ("spec", "template", "inference", "template", "spec")
    assert views(text) == [("inference", 3, path, [("server", path + ("containers", 0))])]


# --- what the controller fills in -----------------------------------------------------------------

SECURITY = ["SEC001", "SEC002", "SEC003", "RES001", "RES002", "GPU001", "SEC004", "IMG002"]


def test_llm_inference_service_is_judged_on_what_it_writes(tmp_path: Path) -> None:
    """KServe merges the template over its well-known config (image, command, security context):
    no finding about a key the object leaves out; its own values are judged."""
    found = lint_files(tmp_path, {"llm.yaml": LLM}, SECURITY)
    assert [(rule, line, node) for rule, _, line, _, _, node, _ in found] == [
        ("GPU001", 11, ("spec", "template", "containers", 0, "resources", "requests", "nvidia.com/gpu")),
        ("IMG002", 26, ("spec", "router", "scheduler", "template", "containers", 0, "image")),
    ]
    written = LLM.replace("    - name: main\n      resources:", "    - name: main\n      securityContext:\n"
                          "        allowPrivilegeEscalation: true\n      resources:", 1)
    found = lint_files(tmp_path, {"llm.yaml": written}, ["SEC001"])
    assert [(rule, line, node) for rule, _, line, _, _, node, _ in found] == [
        ("SEC001", 11, ("spec", "template", "containers", 0, "securityContext", "allowPrivilegeEscalation"))]


def test_dynamo_main_container_values_are_judged_and_missing_keys_are_not(tmp_path: Path) -> None:
    text = """\
    apiVersion: nvidia.com/v1alpha1
    kind: DynamoGraphDeployment
    metadata: {name: agg}
    spec:
      services:
        VllmDecodeWorker:
          replicas: 1
          resources:
            limits: {gpu: "1"}
          extraPodSpec:
            mainContainer:
              image: nvcr.io/nvidia/ai-dynamo/vllm-runtime@sha256:0000000000000000000000000000000000000000000000000000000000000000
              securityContext:
                privileged: true
    """
    found = lint_files(tmp_path, {"dgd.yaml": text}, SECURITY)
    assert [(rule, line) for rule, _, line, *_ in found] == [("SEC004", 14)]


DYNAMO_GPUS = """\
apiVersion: nvidia.com/v1alpha1
kind: DynamoGraphDeployment
metadata: {name: agg, namespace: ml}
spec:
  services:
    Frontend:
      replicas: 1
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
    VllmDecodeWorker:
      replicas: 2
      resources:
        requests: {cpu: "8", gpu: "4"}
        limits:
          gpu: "1"
      extraPodSpec:
        mainContainer:
          image: nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.4.0
    Prefill:
      resources:
        limits: {gpu: "2", gpuType: amd.com/gpu}
    Overridden:
      resources:
        limits: {gpu: "1"}
      extraPodSpec:
        mainContainer:
          resources:
            limits: {nvidia.com/gpu: "2"}
"""


def test_dynamo_component_gpus_are_the_main_containers_gpu_demand() -> None:
    document = load_text(DYNAMO_GPUS, "m.yaml")
    workload = ProjectIndex([document]).workload(document.objects[0])
    found = {}
    for pod in workload.pods:
        main = next(c for c in pod.containers if c.name == "main")
        found[pod.role] = ({n: (r.raw, r.key_span.line) for n, r in main.requests.items()},
                           {n: (r.raw, r.key_span.line) for n, r in main.limits.items()}, pod.written)
    assert found == {
        "Frontend": ({}, {}, True),
        # limits.gpu is the limit and (Kubernetes' default) the request; requests.gpu the operator drops
        "VllmDecodeWorker": ({"nvidia.com/gpu": ("1", 16)}, {"nvidia.com/gpu": ("1", 16)}, True),
        # no extraPodSpec: a pod of its own, nothing else written; gpuType names the resource
        "Prefill": ({"amd.com/gpu": ("2", 22)}, {"amd.com/gpu": ("2", 22)}, False),
        # mainContainer's own limit replaces the component's (the operator merges it over), and the
        # request defaults to it: the view is mainContainer's as written
        "Overridden": ({}, {"nvidia.com/gpu": ("2", 29)}, True),
    }


def test_dynamo_component_gpu_findings_point_at_the_component(tmp_path: Path) -> None:
    found = lint_files(tmp_path, {"dgd.yaml": DYNAMO_GPUS}, ["GPU005"])
    base = ("spec", "services")
    assert [(line, column, node) for _, _, line, column, _, node, _ in found] == [
        (16, 11, base + ("VllmDecodeWorker", "resources", "limits", "gpu")),
        (22, 18, base + ("Prefill", "resources", "limits", "gpu")),
        (29, 22, base + ("Overridden", "extraPodSpec", "mainContainer", "resources", "limits", "nvidia.com/gpu")),
    ]
    assert "VllmDecodeWorker replicas asks for nvidia.com/gpu (container `main`)" in found[0][6]


def test_dynamo_component_without_a_pod_spec_gets_no_fix(tmp_path: Path) -> None:
    """A fix may edit a component's extraPodSpec; one without it has no pod spec to edit."""
    (tmp_path / "dgd.yaml").write_text(DYNAMO_GPUS, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["GPU005"], cwd=tmp_path))
    fixes = {r.node[2]: r.autofix is not None for r in report.active}
    assert fixes == {"VllmDecodeWorker": True, "Prefill": False, "Overridden": True}


# --- Trainer v2 runtimePatches --------------------------------------------------------------------

RUNTIME = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
spec:
  mlPolicy:
    numNodes: 1
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
                securityContext: {runAsNonRoot: true, runAsUser: 1000}
                containers:
                - name: node
                  image: pytorch/pytorch@sha256:0000000000000000000000000000000000000000000000000000000000000000
                  securityContext:
                    allowPrivilegeEscalation: false
                    capabilities: {drop: [ALL]}
                  resources:
                    requests: {cpu: "4", memory: 16Gi}
                    limits: {cpu: "4", memory: 16Gi}
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: patched
spec:
  runtimeRef:
    name: torch-distributed
  %TRAINER%runtimePatches:
  - manager: example.io/platform-team
    trainingRuntimeSpec:
      template:
        spec:
          replicatedJobs:
          - name: node
            template:
              spec:
                template:
                  spec:
                    serviceAccountName: training-sa
                    containers:
                    - name: node
                      %SECURITY%volumeMounts:
                      - {name: data, mountPath: /data}
                    volumes:
                    - {name: data, emptyDir: {}}
"""


@pytest.mark.parametrize("trainer", ["", "trainer:\n    numNodes: 2\n  "])
def test_a_runtime_patch_container_merges_into_the_runtimes_by_name(tmp_path: Path, trainer: str) -> None:
    """A patch naming the container `node` with only volumeMounts left it with no image, resources
    or security context (the patch's list replaced the runtime's): RES001, RES002, SEC001, SEC002."""
    job = TRAINJOB.replace("%TRAINER%", trainer).replace("%SECURITY%", "")
    found = lint_files(tmp_path, {"runtime.yaml": RUNTIME, "job.yaml": job}, SECURITY)
    assert found == []


def test_a_value_a_runtime_patch_sets_in_a_container_is_reported_in_the_patch(tmp_path: Path) -> None:
    job = TRAINJOB.replace("%TRAINER%", "trainer:\n    numNodes: 2\n  ").replace(
        "%SECURITY%", "securityContext: {privileged: true}\n                      ")
    found = lint_files(tmp_path, {"runtime.yaml": RUNTIME, "job.yaml": job}, SECURITY)
    line = job.splitlines().index("                      securityContext: {privileged: true}") + 1
    assert [(rule, path, ln, kind, node) for rule, path, ln, _, kind, node, _ in found] == [
        ("SEC004", "job.yaml", line, "TrainJob",
         ("spec", "runtimePatches", 0, "trainingRuntimeSpec", "template", "spec", "replicatedJobs", 0, "template",
          "spec", "template", "spec", "containers", 0, "securityContext", "privileged"))]


# --- GPU013 -----------------------------------------------------------------------------------------

POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  devicePlugin: {enabled: true}
"""
GPU_CLUSTER = """\
apiVersion: nvidia.com/v1alpha1
kind: GPUCluster
metadata:
  name: gpu-cluster
spec:
  draDriver: {repository: registry.k8s.io/dra-driver-nvidia, image: dra-driver-nvidia-gpu, version: v0.4.0}
"""


@pytest.mark.parametrize("jobs", [1, 2])
def test_gpu013_a_gpucluster_beside_a_clusterpolicy_at_its_name(tmp_path: Path, jobs: int) -> None:
    found = lint_files(tmp_path, {"deploy/policy.yaml": POLICY, "deploy/dra.yaml": GPU_CLUSTER}, ["GPU013"], jobs)
    assert [(rule, path, line, column, node) for rule, path, line, column, _, node, _ in found] == [
        ("GPU013", "deploy/dra.yaml", 4, 9, ("metadata", "name"))]
    assert "ClusterPolicy `cluster-policy` (deploy/policy.yaml:2)" in found[0][-1]
    assert lint_files(tmp_path / "alone", {"dra.yaml": GPU_CLUSTER}, ["GPU013"], jobs) == []


def test_gpu013_sample_files_are_alternatives_but_one_file_is_one_deployment(tmp_path: Path) -> None:
    """The GPU Operator's own config/samples holds one sample of each: not reported; both in one
    file of a samples folder, or a sample beside a deployed ClusterPolicy, are."""
    assert lint_files(tmp_path / "a", {"config/samples/v1_clusterpolicy.yaml": POLICY,
                                       "config/samples/nvidia_v1alpha1_gpucluster.yaml": GPU_CLUSTER}, ["GPU013"]) == []
    found = lint_files(tmp_path / "b", {"examples/both.yaml": POLICY + "---\n" + GPU_CLUSTER}, ["GPU013"])
    assert [(rule, line) for rule, _, line, *_ in found] == [("GPU013", 11)]
    found = lint_files(tmp_path / "c", {"deploy/policy.yaml": POLICY, "examples/dra.yaml": GPU_CLUSTER}, ["GPU013"])
    assert [(rule, path) for rule, path, *_ in found] == [("GPU013", "examples/dra.yaml")]


@pytest.mark.parametrize("command, expected", [
    ("helm install gpu-operator nvidia/gpu-operator --set gpuCluster.deployCR=true", 1),  # the chart's ClusterPolicy too
    ("helm install gpu-operator nvidia/gpu-operator --set gpuCluster.deployCR=true --set clusterPolicy.deployCR=false", 0),
    ("helm install gpu-operator nvidia/gpu-operator -f values.yaml --set gpuCluster.deployCR=true", 0),  # unknown
    ("helm install gpu-operator nvidia/gpu-operator --set clusterPolicy.deployCR=false,gpuCluster.deployCR=true", 0),
    ("helm install gpu-operator nvidia/gpu-operator", 0),  # the default: a ClusterPolicy, no GPUCluster
])
def test_gpu013_reads_the_charts_deploycr_values(tmp_path: Path, command: str, expected: int) -> None:
    found = lint_files(tmp_path, {"install.sh": f"#!/bin/sh\n{command}\n"}, ["GPU013"])
    assert [(rule, line, column) for rule, _, line, column, *_ in found] == [
        ("GPU013", 2, command.index("nvidia/gpu-operator") + 1)] * expected


def test_gpu013_a_helm_clusterpolicy_beside_a_gpucluster_manifest(tmp_path: Path) -> None:
    found = lint_files(tmp_path, {"install.sh": "#!/bin/sh\nhelm install gpu-operator nvidia/gpu-operator\n",
                                  "dra.yaml": GPU_CLUSTER}, ["GPU013"])
    assert [(rule, path, line) for rule, path, line, *_ in found] == [("GPU013", "dra.yaml", 4)]
    assert "installed by Helm chart `nvidia/gpu-operator`" in found[0][-1]



# --- QUE017: Kueue topology-aware scheduling annotations ---------------------------------------------

TOPOLOGY = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata:
  name: default
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-rack
  - nodeLabel: kubernetes.io/hostname
"""


def tas_job(annotations: dict[str, str], parallelism: int = 4, queued: bool = True) -> str:
    labels = "  labels:\n    kueue.x-k8s.io/queue-name: tas-user-queue\n" if queued else ""
    lines = "".join(f"        {key}: {value!r}\n".replace("'", '"') for key, value in annotations.items())
    return (f"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: tas\n  namespace: team-a\n{labels}spec:\n"
            f"  parallelism: {parallelism}\n  template:\n    metadata:\n      annotations:\n{lines}"
            "    spec:\n      restartPolicy: Never\n      containers:\n      - name: w\n        image: busybox:1.36\n")


K = "kueue.x-k8s.io/podset-"


@pytest.mark.parametrize("annotations, parallelism, fired", [
    ({K + "required-topology": "cloud.provider.com/topology-rack"}, 4, []),
    ({K + "required-topology": "cloud.provider.com/topology-zone"}, 4, [K + "required-topology"]),  # no such level
    ({K + "preferred-topology": "kubernetes.io/hostname", K + "unconstrained-topology": "true"}, 4,
     [K + "unconstrained-topology"]),
    ({K + "slice-required-topology": "kubernetes.io/hostname", K + "slice-size": "2"}, 4, []),
    ({K + "slice-required-topology": "kubernetes.io/hostname", K + "slice-size": "5"}, 4, [K + "slice-size"]),
    ({K + "slice-required-topology": "kubernetes.io/hostname", K + "slice-size": "0"}, 4, [K + "slice-size"]),
    ({K + "slice-required-topology": "kubernetes.io/hostname", K + "slice-size": "two"}, 4, [K + "slice-size"]),
    ({K + "slice-required-topology": "kubernetes.io/hostname"}, 4, [K + "slice-required-topology"]),
    ({K + "unconstrained-topology": "True"}, 4, []),
    ({K + "group-name": "g", K + "required-topology": "kubernetes.io/hostname"}, 4, []),
    ({K + "group-name": "g"}, 4, [K + "group-name"]),
])
@pytest.mark.parametrize("jobs", [1, 2])
def test_que017_reports_what_kueue_rejects_or_cannot_place_at_the_annotation(
        tmp_path: Path, annotations: dict, parallelism: int, fired: list, jobs: int) -> None:
    text = tas_job(annotations, parallelism)
    found = lint_files(tmp_path, {"topology.yaml": TOPOLOGY, "job.yaml": text}, ["QUE017"], jobs)
    lines = text.splitlines()
    expected = [("QUE017", "job.yaml", next(i for i, line in enumerate(lines, 1) if line.strip().startswith(key)),
                 ("spec", "template", "metadata", "annotations", key)) for key in fired]
    assert [(rule, path, line, node) for rule, path, line, _, _, node, _ in found] == sorted(expected)


def test_que017_levels_are_judged_only_against_the_projects_topologies_and_only_on_queued_jobs(tmp_path: Path) -> None:
    zone = {K + "required-topology": "cloud.provider.com/topology-zone"}
    assert lint_files(tmp_path / "a", {"job.yaml": tas_job(zone)}, ["QUE017"]) == []  # no Topology in the project
    broken = {K + "slice-size": "2"}
    assert lint_files(tmp_path / "b", {"job.yaml": tas_job(broken, queued=False)}, ["QUE017"]) == []
    assert len(lint_files(tmp_path / "c", {"job.yaml": tas_job(broken)}, ["QUE017"])) == 1


TOPOLOGY3 = TOPOLOGY.replace("  - nodeLabel: cloud.provider.com/topology-rack\n",
                             "  - nodeLabel: cloud.provider.com/topology-block\n"
                             "  - nodeLabel: cloud.provider.com/topology-rack\n")
C = K + "slice-required-topology-constraints"
RACK, BLOCK, HOST = "cloud.provider.com/topology-rack", "cloud.provider.com/topology-block", "kubernetes.io/hostname"


def quoted_job(annotations: dict[str, str], parallelism: int) -> str:
    """tas_job with each value in YAML single quotes (the JSON of the multi-level annotation)."""
    lines = "".join(f"        {key}: '{value}'\n" for key, value in annotations.items())
    return tas_job({}, parallelism).replace("      annotations:\n", "      annotations:\n" + lines)


def layers(*pairs: tuple[str, int]) -> str:
    return "[" + ",".join(f'{{"topology":"{t}","size":{n}}}' for t, n in pairs) + "]"


@pytest.mark.parametrize("annotations, fired", [
    ({K + "required-topology": BLOCK, C: layers((RACK, 4), (HOST, 2))}, {}),
    ({K + "preferred-topology": RACK, C: layers((RACK, 8))}, {}),  # the slice at the pod set's own level
    # what the webhook rejects
    ({C: layers((RACK, 4)), K + "slice-size": "4", K + "slice-required-topology": RACK},
     {C: "is set beside `kueue.x-k8s.io/podset-slice-required-topology`"}),
    ({C: "rack=4"}, {C: "is not valid JSON"}),
    ({C: '{"topology": "kubernetes.io/hostname", "size": 2}'}, {C: "is not a JSON list"}),
    ({C: "[]"}, {C: "has 0 layers; it must have 1 to 3"}),
    ({C: layers((BLOCK, 8), (RACK, 4), ("a", 2), (HOST, 1))}, {C: "has 4 layers"}),
    ({C: '[{"topology":"kubernetes.io/hostname","size":"2"}]'}, {C: "`size` is not a whole number"}),
    ({C: layers((RACK, 4), (HOST, 3))}, {C: "layer 2's size 3 does not divide layer 1's size 4"}),
    ({C: layers((RACK, 4), (RACK, 2))}, {C: "layer 2 names `cloud.provider.com/topology-rack` again"}),
    ({C: layers(("Rack Level", 4))}, {C: "layer 1's `topology` `Rack Level` is not a label name"}),
    ({C: layers((HOST, 0))}, {C: "layer 1's `size` is 0"}),
    ({C: layers((RACK, 16))}, {C: "asks for slices of 16 pods, more than the 8 pods"}),
    ({C: layers((RACK, 4)), K + "group-name": "g", K + "required-topology": BLOCK},
     {K + "group-name": "is set beside `kueue.x-k8s.io/podset-slice-required-topology-constraints`"}),
    # what the Topology cannot place
    ({C: layers(("cloud.provider.com/topology-zone", 4))}, {C: "names the level `cloud.provider.com/topology-zone`"}),
    ({C: layers((HOST, 4), (RACK, 2))},
     {C: "puts the layer `cloud.provider.com/topology-rack` after `kubernetes.io/hostname`"}),
    ({K + "required-topology": RACK, C: layers((BLOCK, 4))},
     {C: "the slice level `cloud.provider.com/topology-block`"}),
    ({K + "required-topology": HOST, K + "slice-required-topology": RACK, K + "slice-size": "2"},
     {K + "slice-required-topology": "is above the pod set's level `kubernetes.io/hostname`"}),
])
def test_que017_multi_level_slices(tmp_path: Path, annotations: dict, fired: dict) -> None:
    text = quoted_job(annotations, parallelism=8)
    found = lint_files(tmp_path, {"topology.yaml": TOPOLOGY3, "job.yaml": text}, ["QUE017"])
    lines = text.splitlines()
    assert [(line, node[-1]) for _, _, line, _, _, node, _ in found] == sorted(
        (next(i for i, line in enumerate(lines, 1) if line.strip().startswith(key + ":")), key) for key in fired)
    for (*_, node, message), key in zip(found, sorted(fired, key=lambda k: next(
            i for i, line in enumerate(lines, 1) if line.strip().startswith(k + ":")))):
        assert fired[key] in message, message
