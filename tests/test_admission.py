"""Each placement source changes a verdict: Kueue flavor injection, node auto-provisioning
NodePools, AKS-managed MIG pools, GPUs through Dynamic Resource Allocation. Every test lints the
same pod with and without the source, so it fails if the source is ignored."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.k8s import workload_of
from mlops_lint.registry import load_registry
from mlops_lint.sources.yaml_k8s import load_text

GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
  labels: {kueue.x-k8s.io/queue-name: team-a}
spec:
  suspend: true
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
"""

QUEUES = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: team-a, namespace: ml}
spec: {clusterQueue: gpu-queue}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: gpu-queue}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
%FLAVORS%
"""

FLAVOR = """\
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: %NAME%}
spec:
  nodeLabels: {%LABELS%}
  nodeTaints: [{key: sku, value: gpu, effect: NoSchedule}]
  tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
"""


def run(tmp_path: Path, files: dict[str, str], select: list[str]) -> list[tuple[str, str, int]]:
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=select, cwd=tmp_path))
    return sorted((r.rule, r.path, r.line) for r in report.active)


def flavors(*specs: tuple[str, str]) -> str:
    names = "\n".join(f"    - name: {name}\n      resources:\n      - {{name: cpu, nominalQuota: 64}}\n"
                      f"      - {{name: memory, nominalQuota: 256Gi}}\n      - {{name: nvidia.com/gpu, nominalQuota: 8}}"
                      for name, _ in specs)
    objects = "".join(FLAVOR.replace("%NAME%", name).replace("%LABELS%", labels) for name, labels in specs)
    return QUEUES.replace("%FLAVORS%", names) + objects


def test_kueue_flavor_injects_gpu_node_labels_and_tolerations(tmp_path: Path) -> None:
    queued = {"job.yaml": GPU_JOB, "queues.yaml": flavors(("a100", "accelerator: nvidia"))}
    assert run(tmp_path, queued, ["GPU005", "GPU006"]) == []
    # the same Job with no queue: nothing injects the labels or the toleration
    (tmp_path / "queues.yaml").unlink()
    alone = {"job.yaml": GPU_JOB.replace("  labels: {kueue.x-k8s.io/queue-name: team-a}\n", "")}
    assert {rule for rule, _, _ in run(tmp_path, alone, ["GPU005", "GPU006"])} == {"GPU005", "GPU006"}


def test_with_several_flavors_only_what_holds_for_every_flavor_counts(tmp_path: Path) -> None:
    # one flavor pins GPU nodes, the other only a zone: the pod may be admitted without a GPU selector
    files = {"job.yaml": GPU_JOB,
             "queues.yaml": flavors(("a100", "accelerator: nvidia"), ("zone-1", "topology.kubernetes.io/zone: westeurope-1"))}
    assert [(rule, line) for rule, _, line in run(tmp_path, files, ["GPU005", "GPU006"])] == [("GPU006", 10)]


def test_kueue_flavor_tolerations_reach_pool_taints(tmp_path: Path) -> None:
    script = ("az aks create -g rg -n aks --node-vm-size Standard_D4s_v5\n"
              "az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC24ads_A100_v4 "
              "--labels accelerator=nvidia --node-taints sku=gpu:NoSchedule\n")
    job = GPU_JOB.replace("      restartPolicy: Never\n", "      restartPolicy: Never\n      nodeSelector: {accelerator: nvidia}\n")
    files = {"job.yaml": job, "cluster.sh": script, "queues.yaml": flavors(("a100", "accelerator: nvidia"))}
    assert run(tmp_path, files, ["XPL002"]) == []
    (tmp_path / "queues.yaml").unlink()
    files = {"job.yaml": job.replace("  labels: {kueue.x-k8s.io/queue-name: team-a}\n", ""), "cluster.sh": script}
    assert run(tmp_path, files, ["XPL002"]) == [("XPL002", "job.yaml", 9)]


NODEPOOL = """\
apiVersion: karpenter.sh/v1
kind: NodePool
metadata: {name: gpu}
spec:
  template:
    metadata:
      labels: {workload: training}
    spec:
      nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
      taints: [{key: sku, value: gpu, effect: NoSchedule}]
      requirements:
      - {key: karpenter.azure.com/sku-family, operator: In, values: [N]}
      - {key: node.kubernetes.io/instance-type, operator: In, values: [Standard_NC24ads_A100_v4, Standard_NC48ads_A100_v4]}
---
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata: {name: default}
spec: {imageFamily: Ubuntu2204}
"""

NAP_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {karpenter.sh/nodepool: gpu}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 4}
          limits: {cpu: "8", memory: 64Gi, nvidia.com/gpu: 4}
"""


def test_nap_nodepool_is_a_pool_with_its_sizes_labels_and_taints(tmp_path: Path) -> None:
    files = {"nodepool.yaml": NODEPOOL, "job.yaml": NAP_JOB}
    # the NodePool allows A100 sizes with 1 and 2 GPUs: 4 per pod never fits
    assert run(tmp_path, files, ["XPL003", "GPU006"]) == [("XPL003", "job.yaml", 14)]
    # its taint keeps a pod that does not tolerate it off (every pool it selects is tainted)
    files["job.yaml"] = NAP_JOB.replace("      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]\n", "")
    assert run(tmp_path, files, ["XPL002"]) == [("XPL002", "job.yaml", 6)]
    # a selector on the NodePool's own template label is a GPU selector
    files["job.yaml"] = NAP_JOB.replace("karpenter.sh/nodepool: gpu", "workload: training")
    assert run(tmp_path, files, ["GPU006"]) == []
    # without the NodePool nothing is known of the nodes: no finding
    (tmp_path / "nodepool.yaml").unlink()
    assert run(tmp_path, {"job.yaml": NAP_JOB}, ["XPL003", "XPL002"]) == []


MIG_SCRIPT = """\
az aks create -g rg -n aks --node-vm-size Standard_D4s_v5
az aks nodepool add -g rg --cluster-name aks -n mignp --node-vm-size Standard_NC24ads_A100_v4 \\
  --gpu-instance-profile MIG1g --labels accelerator=nvidia
"""

MIG_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: trial, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trial
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          requests: {nvidia.com/mig-1g.10gb: 1}
          limits: {nvidia.com/mig-1g.10gb: 1}
"""


def test_aks_managed_mig_pool_offers_its_profile_without_mig_labels(tmp_path: Path) -> None:
    # only mignp offers MIG 1g.10gb (the CPU system pool does not): AKS partitions it, no mig.config label needed
    assert run(tmp_path, {"cluster.sh": MIG_SCRIPT, "job.yaml": MIG_JOB}, ["GPU007"]) == []
    # a pool partitioned with another profile offers no 1g.10gb: the MIG Manager labels matter again
    (tmp_path / "cluster.sh").write_text(MIG_SCRIPT.replace("MIG1g", "MIG2g"), encoding="utf-8")
    assert run(tmp_path, {}, ["GPU007"]) == [("GPU007", "job.yaml", 6)]


DRA = """\
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
"""

DRA_JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      resourceClaims:
      - {name: gpus, resourceClaimTemplateName: two-gpus}
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          claims:
          - name: gpus
          requests: {cpu: "1", memory: 4Gi}
          limits: {cpu: "1", memory: 4Gi}
"""

DRA_SCRIPT = ("az aks create -g rg -n aks --node-vm-size Standard_D4s_v5\n"
              "az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC24ads_A100_v4\n")


def test_dra_claim_makes_a_gpu_container(tmp_path: Path) -> None:
    files = {"claim.yaml": DRA, "job.yaml": DRA_JOB, "cluster.sh": DRA_SCRIPT}
    found = run(tmp_path, files, ["GPU001", "GPU002", "GPU003", "GPU005", "GPU006", "RES004", "XPL003"])
    # a GPU pod for placement and /dev/shm; 2 devices on a 1-GPU size; no nvidia.com/gpu rule (GPU005:
    # the only pool with GPUs has no taint)
    assert found == [("GPU006", "job.yaml", 6), ("RES004", "job.yaml", 11), ("XPL003", "job.yaml", 15)]
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["XPL003"], cwd=tmp_path))
    assert "each pod asks for 2 nvidia.com/gpu" in report.active[0].message
    assert "`gpunp` (Standard_NC24ads_A100_v4) has 1 nvidia.com/gpu" in report.active[0].message
    assert "nodepool1" not in report.active[0].message  # a CPU pool cannot take a GPU pod: not judged
    (tmp_path / "claim.yaml").unlink()
    assert run(tmp_path, {}, ["GPU005", "GPU006", "RES004", "XPL003"]) == []


def test_dra_device_class_of_the_project_and_v1beta1_shape(tmp_path: Path) -> None:
    classes = """\
apiVersion: resource.k8s.io/v1beta1
kind: DeviceClass
metadata: {name: big-gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'}
---
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata: {name: two-gpus, namespace: ml}
spec:
  spec:
    devices:
      requests:
      - {name: gpu, deviceClassName: big-gpu, count: 2}
"""
    index_text = classes + "---\n" + DRA_JOB
    from mlops_lint.index import ProjectIndex

    document = load_text(index_text, "all.yaml")
    index = ProjectIndex([document])
    pod = index.workload(document.objects[2]).pods[0]
    [(container, section, entry)] = __import__("mlops_lint.model.gpunodes", fromlist=["gpu_entries"]).gpu_entries(pod)
    assert (container.name, section, entry.value, entry.node) == ("trainer", "claims", 2,
                                                                  ("spec", "template", "spec", "containers", 0, "resources", "claims", 0))
    # a class that selects another driver is no GPU class
    other = index_text.replace('device.driver == "gpu.nvidia.com"', 'device.driver == "dra.example.com"')
    document = load_text(other, "all.yaml")
    assert not ProjectIndex([document]).workload(document.objects[2]).uses_gpu


def test_leaderworkerset_pod_counts_are_size_times_replicas() -> None:
    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm}
spec:
  replicas: 3
  leaderWorkerTemplate:
    size: 4
    %LEADER%
    workerTemplate:
      spec:
        containers: [{name: worker, image: vllm/vllm-openai:v0.6.3}]
"""
    with_leader = text.replace("%LEADER%", "leaderTemplate:\n      spec:\n        containers: [{name: leader, image: vllm/vllm-openai:v0.6.3}]")
    pods = workload_of(load_text(with_leader, "lws.yaml").objects[0]).pods
    assert [(p.role, p.replicas) for p in pods] == [("leader", 3), ("worker", 9)]
    pods = workload_of(load_text(text.replace("    %LEADER%\n", ""), "lws.yaml").objects[0]).pods
    assert [(p.role, p.replicas) for p in pods] == [("leader and worker", 12)]


RUNTIME = """\
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
          spec:
            template:
              spec:
                containers:
                - name: node
                  image: pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime
                  env:
                  - {name: NCCL_DEBUG, value: INFO}
"""

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: fine-tune, namespace: ml}
spec:
  runtimeRef: {name: torch-distributed}
  trainer:
    numNodes: 4
    image: myregistry.azurecr.io/trainer:latest
    resourcesPerNode:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 2}
"""


def test_trainjob_findings_point_where_the_value_comes_from(tmp_path: Path) -> None:
    files = {"runtime.yaml": RUNTIME, "trainjob.yaml": TRAINJOB}
    found = run(tmp_path, files, ["IMG001", "GPU003", "DST006", "RES004"])
    assert found == [
        ("DST006", "runtime.yaml", 18),  # the runtime's own value: reported once, on the runtime
        ("GPU003", "trainjob.yaml", 11),  # resourcesPerNode is the TrainJob's
        ("IMG001", "trainjob.yaml", 8),  # the TrainJob's image replaces the runtime's
        ("RES004", "runtime.yaml", 15),  # no /dev/shm in the runtime's container, which the TrainJob's GPUs make a GPU trainer
    ]
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["RES004"], cwd=tmp_path))
    [result] = report.active
    assert result.obj.kind == "ClusterTrainingRuntime" and "(as TrainJob `ml/fine-tune` runs it)" in result.message
    # linting the TrainJob alone reports nothing into the runtime's file, which is no target
    report = lint(LintRequest(paths=[tmp_path / "trainjob.yaml"], config=Config(root=tmp_path), registry=load_registry(),
                              select=["IMG001", "RES004"], cwd=tmp_path))
    assert [(r.rule, r.path) for r in report.active] == [("IMG001", "trainjob.yaml")]
    # the pod count comes from numNodes
    from mlops_lint.index import ProjectIndex

    documents = [load_text(RUNTIME, "runtime.yaml"), load_text(TRAINJOB, "trainjob.yaml")]
    index = ProjectIndex(documents)
    [pod] = index.workload(documents[1].objects[0]).pods
    assert (pod.role, pod.replicas, pod.containers[0].image) == ("node", 4, "myregistry.azurecr.io/trainer:latest")


def test_trainjob_runtime_patches_place_its_pods(tmp_path: Path) -> None:
    patched = TRAINJOB + """\
  runtimePatches:
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
                    nodeSelector: {accelerator: nvidia}
                    tolerations:
                    - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
"""
    files = {"runtime.yaml": RUNTIME, "trainjob.yaml": patched.replace("limits: {nvidia.com/gpu: 2}", "limits: {nvidia.com/gpu: 1}")}
    assert run(tmp_path, files, ["GPU005", "GPU006"]) == []
    files["trainjob.yaml"] = files["trainjob.yaml"].replace("accelerator: nvidia", "team: ml").replace("value: gpu", "value: cpu")
    # a patched key that does not place the pod is the TrainJob's finding, at the patch
    assert run(tmp_path, files, ["GPU005", "GPU006"]) == [("GPU005", "trainjob.yaml", 24), ("GPU006", "trainjob.yaml", 23)]


def test_runtime_trainer_resources_are_judged_through_trainjobs(tmp_path: Path) -> None:
    # the runtime's trainer has no resources (its TrainJobs set them): no RES001 there; the
    # TrainJob's resourcesPerNode lacks cpu and memory: its finding, at its requests
    assert run(tmp_path, {"runtime.yaml": RUNTIME, "trainjob.yaml": TRAINJOB}, ["RES001", "RES002"]) == [
        ("RES001", "trainjob.yaml", 10), ("RES002", "trainjob.yaml", 11)]
    # a TrainJob that sets no resources leaves the runtime's missing ones: reported into the runtime
    bare = TRAINJOB.split("    resourcesPerNode:")[0]
    assert run(tmp_path, {"trainjob.yaml": bare}, ["RES001"]) == [("RES001", "runtime.yaml", 15)]


def test_kueue_admits_a_leaderworkerset_group_by_group() -> None:
    from mlops_lint.model.kueue import podsets

    text = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, labels: {kueue.x-k8s.io/queue-name: serving}}
spec:
  replicas: 3
  leaderWorkerTemplate:
    size: 4
    leaderTemplate:
      spec:
        containers: [{name: leader, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: 1}}}]
    workerTemplate:
      spec:
        containers: [{name: worker, image: vllm/vllm-openai:v0.6.3, resources: {limits: {nvidia.com/gpu: 1}}}]
"""
    workload = workload_of(load_text(text, "lws.yaml").objects[0])
    assert [(p.replicas) for p in workload.pods] == [3, 9]  # every pod of the LeaderWorkerSet
    assert [(s.name, s.count) for s in podsets(workload)] == [("leader", 1), ("worker", 3)]  # one group


KUEUE_CONFIG = """\
apiVersion: config.kueue.x-k8s.io/v1beta1
kind: Configuration
integrations:
  frameworks: [%FRAMEWORKS%]
"""


def test_a_job_kueue_does_not_manage_gets_no_flavor(tmp_path: Path) -> None:
    # the project's Kueue Configuration leaves batch/job out: Kueue's webhook ignores the Job's
    # queue-name label, admits nothing, and injects no flavor's labels or tolerations
    files = {"job.yaml": GPU_JOB, "queues.yaml": flavors(("a100", "accelerator: nvidia")),
             "kueue-config.yaml": KUEUE_CONFIG.replace("%FRAMEWORKS%", '"jobset.x-k8s.io/jobset"')}
    assert {rule for rule, _, _ in run(tmp_path, files, ["GPU005", "GPU006"])} == {"GPU005", "GPU006"}
    # the same Configuration with batch/job enabled: the flavor places the Job
    (tmp_path / "kueue-config.yaml").write_text(KUEUE_CONFIG.replace("%FRAMEWORKS%", '"batch/job"'), encoding="utf-8")
    assert run(tmp_path, {}, ["GPU005", "GPU006"]) == []


def test_pool_placement_of_a_job_kueue_does_not_manage_has_no_flavor_toleration(tmp_path: Path) -> None:
    script = ("az aks create -g rg -n aks --node-vm-size Standard_D4s_v5\n"
              "az aks nodepool add -g rg --cluster-name aks -n gpunp --node-vm-size Standard_NC24ads_A100_v4 "
              "--labels accelerator=nvidia --node-taints sku=gpu:NoSchedule\n")
    job = GPU_JOB.replace("      restartPolicy: Never\n", "      restartPolicy: Never\n      nodeSelector: {accelerator: nvidia}\n")
    files = {"job.yaml": job, "cluster.sh": script, "queues.yaml": flavors(("a100", "accelerator: nvidia")),
             "kueue-config.yaml": KUEUE_CONFIG.replace("%FRAMEWORKS%", '"batch/job"')}
    assert run(tmp_path, files, ["XPL002"]) == []
    # batch/job left out: the flavor's toleration never reaches the pod, the pool's taint repels it
    (tmp_path / "kueue-config.yaml").write_text(KUEUE_CONFIG.replace("%FRAMEWORKS%", '"pod"'), encoding="utf-8")
    assert run(tmp_path, {}, ["XPL002"]) == [("XPL002", "job.yaml", 10)]


KAITO_WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata: {name: custom-llm, namespace: ml}
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels: {apps: custom-llm}
inference:
  template:
    spec:
      containers:
      - name: llm
        image: mcr.microsoft.com/aks/kaito/kaito-base:0.2.0
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
"""


def test_kaito_appends_its_gpu_tolerations_to_the_inference_template(tmp_path: Path) -> None:
    # KAITO's workspace controller appends `nvidia.com/gpu` (Exists) and `sku=gpu` (NoSchedule)
    # tolerations to the pods it makes from `inference.template`: no GPU taint repels them
    assert run(tmp_path, {"workspace.yaml": KAITO_WORKSPACE}, ["GPU005"]) == []
    inference_set = ("apiVersion: kaito.sh/v1alpha1\nkind: InferenceSet\nmetadata: {name: custom-llm, namespace: ml}\n"
                     "spec:\n  replicas: 2\n  template:\n"
                     + "".join(f"    {line}\n" for line in KAITO_WORKSPACE.split("\n", 3)[3].splitlines()))
    (tmp_path / "workspace.yaml").unlink()
    assert run(tmp_path, {"inferenceset.yaml": inference_set}, ["GPU005"]) == []
    # the same pod template in a Deployment of the user's: nothing appends them
    (tmp_path / "inferenceset.yaml").unlink()
    deployment = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: custom-llm, namespace: ml}\nspec:\n"
                  "  selector: {matchLabels: {app: llm}}\n  template:\n    metadata: {labels: {app: llm}}\n"
                  + KAITO_WORKSPACE.split("  template:\n", 1)[1])
    assert [rule for rule, _, _ in run(tmp_path, {"deployment.yaml": deployment}, ["GPU005"])] == ["GPU005"]
