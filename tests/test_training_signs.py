"""What makes a run-to-completion workload a trainer for the rules about what a trainer needs
beyond a GPU (QUE012: checkpoints on persistent storage; RES004's CPU branch: shared memory):
a kind of the ML operators, or a word of an ML framework or of training somewhere in its pods.
Queueing demos (``sleep`` in busybox or agnhost) and web-server Jobs show none, and are not
flagged; a GPU is a sign of its own for QUE012 (the article's queued jobs are GPU ``sleep``s)."""
from __future__ import annotations

import textwrap

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import load_bytes, run_rules
from mlops_lint.index import ProjectIndex
from mlops_lint.model.document import K8S
from mlops_lint.registry import load_registry

REGISTRY = load_registry()


def lint(text: str, code: str) -> list:
    doc = load_bytes(textwrap.dedent(text).encode(), "w.yaml", K8S)
    assert not doc.errors, doc.errors
    return [r for r, _ in run_rules([doc], {doc.path}, [REGISTRY.get(code)], Config())]


def queued_job(container: str, *, name: str = "j", extra: str = "") -> str:
    """A Kueue-queued Job with one container (a flow map) and no volume at all."""
    return f"""
    apiVersion: batch/v1
    kind: Job
    metadata:
      name: {name}
      labels: {{kueue.x-k8s.io/queue-name: q}}
    spec:
      suspend: true
      template:
        spec:
          restartPolicy: Never
          {extra}
          containers: [{container}]
    """


@pytest.mark.parametrize("container,name,fires", [
    ("{name: sleep, image: busybox, command: [sleep, '60']}", "sample-job", False),
    ("{name: c, image: registry.k8s.io/e2e-test-images/agnhost:2.53, args: [pause]}", "sample-job", False),
    ("{name: web, image: nginx}", "test-job", False),
    # words that only contain a sign: "constraint" (train), "array" (ray), "tfvars" (tf)
    ("{name: c, image: busybox, command: [solve, --constraint, array.tfvars]}", "constraint-solver", False),
    # a GPU is a sign unless the pods only look at it or wait (the article's Kueue and Volcano
    # demos run nvidia-smi and sleep: nothing to checkpoint)
    ("{name: c, image: busybox, command: [sleep, '60'], resources: {limits: {nvidia.com/gpu: 1}}}", "j", False),
    ("{name: c, image: nvcr.io/nvidia/pytorch:24.05-py3, command: [bash, -c, 'set -e; nvidia-smi && sleep 120'], "
     "resources: {limits: {nvidia.com/gpu: 1}}}", "train-smoke", False),
    ("{name: c, image: myacr.azurecr.io/app:1, resources: {limits: {nvidia.com/gpu: 1}}}", "j", True),
    ("{name: c, image: busybox, command: [bash, -c, 'nvidia-smi; ./run'], resources: {limits: {nvidia.com/gpu: 1}}}",
     "j", True),
    # a name says training only with a training or framework word: a benchmark sweep is not one
    ("{name: c, image: busybox, command: [sysbench, cpu, run]}", "cpu-benchmark-sweep", False),
    ("{name: c, image: busybox, command: [sysbench, cpu, run]}", "hpo-tune-ai", False),
    ("{name: c, image: python:3.12-slim, command: [python, train.py]}", "j", True),
    ("{name: c, image: busybox, args: ['--epochs=3']}", "j", True),
    ("{name: c, image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime}", "j", True),
    ("{name: c, image: myacr.azurecr.io/ml/sweep:0.4.2}", "j", True),
    ("{name: c, image: busybox}", "finetune-llama", True),
    ("{name: c, image: busybox, env: [{name: CHECKPOINT_DIR, value: /tmp/ckpt}]}", "j", True),
    ("{name: c, image: busybox, env: [{name: MODEL, value: meta-llama/Llama-3.1-8B}]}", "j", True),
])
def test_que012_needs_a_sign_of_training(container: str, name: str, fires: bool) -> None:
    found = lint(queued_job(container, name=name), "QUE012")
    assert [r.rule for r in found] == (["QUE012"] if fires else [])


def test_que012_takes_the_ml_operators_kinds_as_training() -> None:
    pytorchjob = """
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: pi
      labels: {kueue.x-k8s.io/queue-name: q}
    spec:
      pytorchReplicaSpecs:
        Master:
          replicas: 1
          template: {spec: {containers: [{name: pytorch, image: busybox}]}}
    """
    (found,) = lint(pytorchjob, "QUE012")
    assert "PyTorchJob `pi` trains (it is a kubeflow.org PyTorchJob) and is queued by Kueue" in found.message
    volcano = """
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: test-job}
    spec:
      schedulerName: volcano
      tasks:
      - replicas: 2
        name: nginx
        template: {spec: {restartPolicy: OnFailure, containers: [{name: nginx, image: nginx}]}}
    """
    assert lint(volcano, "QUE012") == []
    assert [r.rule for r in lint(volcano.replace("image: nginx", "image: volcanosh/horovod-tf-mnist:0.5"),
                                 "QUE012")] == ["QUE012"]


CPU_JOB = """
apiVersion: batch/v1
kind: Job
metadata: {name: NAME}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: IMAGE
        resources: {limits: {cpu: "4", memory: 8Gi}}
"""


@pytest.mark.parametrize("name,image,fires", [
    ("sample-job", "busybox", False),
    ("sample-job", "alpine", False),
    ("sample-job", "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime", True),
    ("train-resnet", "busybox", True),
    ("sample-job", "python:3.12-slim", True),  # Python multiprocessing shares memory through /dev/shm
    ("cpu-benchmark-sweep", "busybox", False),  # not taken for training by a word of its name
])
def test_res004_counts_cpus_only_in_a_workload_that_trains(name: str, image: str, fires: bool) -> None:
    found = lint(CPU_JOB.replace("NAME", name).replace("IMAGE", image), "RES004")
    assert [(r.rule, r.line) for r in found] == ([("RES004", 10)] if fires else [])
    if fires:
        assert "training container `worker` uses 4 CPUs (training: `" in found[0].message


def test_res004_still_flags_a_gpu_container_whatever_it_runs() -> None:
    text = CPU_JOB.replace("NAME", "sample-job").replace("IMAGE", "busybox").replace(
        'cpu: "4"', "nvidia.com/gpu: 1")
    found = lint(text, "RES004")
    assert [r.rule for r in found] == ["RES004"] and "uses 1 nvidia.com/gpu" in found[0].message


def test_a_ray_job_trains_whatever_its_images_are() -> None:
    rayjob = """
    apiVersion: ray.io/v1
    kind: RayJob
    metadata: {name: collector}
    spec:
      rayClusterSpec:
        headGroupSpec:
          template: {spec: {containers: [{name: ray-head, image: collector:v0.1.0},
                                         {name: collector, image: collector:v0.1.0, resources: {limits: {cpu: "5", memory: 8Gi}}}]}}
    """
    index = ProjectIndex([load_bytes(textwrap.dedent(rayjob).encode(), "r.yaml", K8S)])
    (workload,) = [w for o in index.objects for w in [index.workload(o)] if w is not None]
    assert workload.runs_ml and workload.is_training
    # the second container: KubeRay mounts a memory-backed /dev/shm in the Ray container (the first)
    found = lint(rayjob, "RES004")
    assert [r.rule for r in found] == ["RES004"] and "`collector` uses 5 CPUs (training: it is a ray.io RayJob)" in found[0].message


def test_the_sign_of_training_is_named() -> None:
    text = CPU_JOB.replace("NAME", "sample-job").replace("IMAGE", "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime")
    (found,) = lint(text, "RES004")
    assert "uses 4 CPUs (training: `pytorch` in the image of container `worker`)" in found.message
    (found,) = lint(CPU_JOB.replace("NAME", "train-resnet").replace("IMAGE", "busybox"), "RES004")
    assert "(training: `train` in its name)" in found.message
    # a framework or training word before a short one: `trainer`, not the registry path's `ml`
    (found,) = lint(CPU_JOB.replace("NAME", "j").replace("IMAGE", "myacr.azurecr.io/ml/trainer:1"), "RES004")
    assert "(training: `trainer` in the image of container `worker`)" in found.message


SMOKE_POD = """
apiVersion: v1
kind: Pod
metadata: {name: nvidia-smi}
spec:
  restartPolicy: OnFailure
  containers:
  - name: nvidia-smi
    image: ubuntu:22.04
    COMMAND
    resources:
      limits: {nvidia.com/gpu: 1}
"""


@pytest.mark.parametrize("command,trains", [
    ('args: ["nvidia-smi"]', False),
    ('command: [/bin/bash, -lc, "set -e\\nnvidia-smi\\necho ok\\nsleep 30"]', False),
    ('command: [sh, -c, "while true; do nvidia-smi; sleep 10; done"]', False),
    ('command: [sleep, infinity]', False),
    # a script's comments and its signal trap run nothing (KAI-Scheduler's simulated training)
    ('command: [bash, -c]\n    args: ["echo started\\n# Simulate training work\\ntrap \'exit 0\' TERM\\nsleep 600 & wait"]', False),
    ('command: [python, train.py]', True),
    ('command: [bash, -c, "nvidia-smi && python train.py"]', True),
    ('command: [bash, run.sh]', True),  # a script the linter cannot read: a GPU job as before
    ("", True),  # the image's own entrypoint
])
def test_a_gpu_smoke_test_is_not_training(command: str, trains: bool) -> None:
    """nvidia-smi / sleep pods hold a GPU but train nothing: no RES004 (shared memory), RES007
    (Guaranteed QoS) nor IMG003 (its plain image is fine: the toolkit mounts nvidia-smi)."""
    text = SMOKE_POD.replace("COMMAND", command)
    for code in ("RES004", "RES007", "IMG003"):
        assert [r.rule for r in lint(text, code)] == ([code] if trains else []), code


@pytest.mark.parametrize("image,command", [
    ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04", ""),  # the GPU Operator's test pod
    ("nvcr.io/nvidia/k8s/cuda-sample:nbody", 'command: ["nbody"]\n    args: ["-benchmark", "-i=10000000"]'),
])
def test_a_cuda_sample_pod_is_a_gpu_check(image: str, command: str) -> None:
    """NVIDIA's CUDA sample images check the GPU (vectorAdd, nbody): they hold no framework and
    train nothing, whether they run their entrypoint or a sample's command line."""
    text = SMOKE_POD.replace("ubuntu:22.04", f'"{image}"').replace("COMMAND", command)
    for code in ("RES004", "RES007"):
        assert lint(text, code) == [], code


def test_a_cuda_image_that_is_not_a_sample_still_trains() -> None:
    text = SMOKE_POD.replace("ubuntu:22.04", "nvcr.io/nvidia/cuda:12.5.0-runtime-ubuntu22.04").replace("COMMAND", "")
    assert [r.rule for r in lint(text, "RES004")] == ["RES004"]


KATIB = """
apiVersion: kubeflow.org/v1beta1
kind: Experiment
metadata: {name: random, namespace: kubeflow}
spec:
  objective: {type: maximize, goal: 0.99, objectiveMetricName: accuracy}
  algorithm: {algorithmName: random}
  parallelTrialCount: 3
  maxTrialCount: 12
  parameters:
  - {name: lr, parameterType: double, feasibleSpace: {min: "0.01", max: "0.05"}}
  trialTemplate:
    primaryContainerName: training-container
    trialParameters:
    - {name: learningRate, reference: lr}
    trialSpec:
      apiVersion: batch/v1
      kind: Job
      spec:
        template:
          spec:
            restartPolicy: Never
            containers:
            - name: training-container
              image: docker.io/kubeflowkatib/pytorch-mnist-cpu:v0.17.0
              command: [python3, /opt/pytorch-mnist/mnist.py, "--lr=${trialParameters.learningRate}"]
              resources:
                limits: {cpu: "4", memory: 8Gi}
"""


def test_a_katib_experiment_runs_its_trial_job_as_training() -> None:
    index = ProjectIndex([load_bytes(textwrap.dedent(KATIB).encode(), "e.yaml", K8S)])
    (workload,) = [w for o in index.objects for w in [index.workload(o)] if w is not None]
    assert workload.is_training and not workload.generic
    assert workload.ml_sign == "it is a kubeflow.org Experiment"
    assert [c.path for c in workload.containers()] == [
        ("spec", "trialTemplate", "trialSpec", "spec", "template", "spec", "containers", 0)]
    found = lint(KATIB, "RES004")
    assert [(r.rule, r.line, r.column) for r in found] == [("RES004", 24, 15)]
    assert "[Experiment kubeflow/random]" not in found[0].message and "`training-container` uses 4 CPUs" in found[0].message


PYTORCHJOB = """
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: pytorch-debug}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
            COMMAND
            resources: {limits: {nvidia.com/gpu: 1}}
    Worker:
      replicas: 1
      template:
        spec:
          containers:
          - name: pytorch
            image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
            COMMAND
            resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("command,trains", [
    ("command: [sleep, infinity]", False),  # a placeholder to shell into: nothing runs until someone does
    ('command: [sh, -c, "echo ready; sleep infinity"]', False),
    ("command: [torchrun, train.py]", True),
    ("", True),  # the image's own entrypoint
])
def test_an_operators_kind_whose_pods_only_wait_is_not_training(command: str, trains: bool) -> None:
    """An ML operator's kind is training by kind unless every app container of every pod only
    waits or looks at the node: then it is a session to shell into, as a GPU `sleep` Job is."""
    text = PYTORCHJOB.replace("COMMAND", command)
    index = ProjectIndex([load_bytes(textwrap.dedent(text).encode(), "p.yaml", K8S)])
    (workload,) = [w for o in index.objects for w in [index.workload(o)] if w is not None]
    assert workload.ml_sign == ("it is a kubeflow.org PyTorchJob" if trains else None)
    assert (workload.trains is not None) is trains
    for code in ("RES004", "RES007"):
        assert [r.rule for r in lint(text, code)] == ([code, code] if trains else []), code
