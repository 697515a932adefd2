"""A training job's container runs a CUDA image but the job requests no GPU.

## What it does
Flags the containers (init containers included) of a training workload (a Job, CronJob, Kubeflow
job, Volcano Job, RayJob, JobSet, Trainer v2 TrainJob or run-to-completion Pod) none of whose
pods requests a GPU (`nvidia.com/gpu`, `nvidia.com/mig-*`, `amd.com/gpu`, or GPUs through a DRA
resource claim; a zero quantity is none) when the container's image is a CUDA build:

- NVIDIA's CUDA image (`nvidia/cuda`, `nvcr.io/nvidia/cuda`) and NGC's framework images
  (`nvcr.io/nvidia/pytorch`, `tensorflow`, `nemo`, `jax`), which all carry CUDA;
- a tag or repository name with a CUDA part: `cuda`, `cuda12`, `cudnn9`, `cu121`
  (`pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime`, `rayproject/ray:2.41.0-py311-cu121`,
  `myacr.azurecr.io/trainer-cuda:1.2`);
- TensorFlow's and Ray's `-gpu` tags (`tensorflow/tensorflow:2.16.1-gpu`).

A tag with a `cpu` part is never a CUDA build. A workload of which any pod holds a GPU is not
flagged: the launcher of an MPIJob, a PyTorchJob's master or a Ray head without a GPU run the
workers' image by design. NVIDIA's CUDA sample images (GPU checks) and templated images are
skipped. The finding points at the image.

A Kubeflow Trainer v2 TrainJob is judged on the image it sets itself (`spec.trainer.image`),
never on its runtime's: a runtime (the platform's `torch-distributed` ClusterTrainingRuntime) is
shared, its image is the runtime author's default for the GPU TrainJobs that use it, and a
CPU-only TrainJob that runs it (a demo that falls back to the CPU) is no reason to change it;
a finding there would also point into the runtime once per TrainJob. A TrainJob that sets a
CUDA image and requests no GPU (`resourcesPerNode`) is reported at its `image:`.

## Why is this bad?
The article: "Maintain separate CPU and GPU image variants so scheduler placement and runtime
dependencies stay explicit." A CUDA image on a job that asks for no GPU is one of two mistakes:
the GPU request was forgotten (the job then trains on the CPU of whatever node it lands on, hours
slower, while the framework quietly falls back), or the job is CPU work that pulls several
gigabytes of CUDA and cuDNN libraries onto every node it runs on, slowing each start.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: preprocess
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: preprocess
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        command: ["python", "preprocess.py"]
```

Use instead (a CPU image for CPU work, or request the GPU the image is built for):
```yaml
      containers:
      - name: preprocess
        image: myacr.azurecr.io/ml/preprocess-cpu:1.4.0
        command: ["python", "preprocess.py"]
```

## Known problems
- Which repair is right (request a GPU, or a CPU variant) depends on the job: there is no
  automatic fix.
- A GPU the pod gets in a way the manifest does not show (a mutating webhook adding the request)
  is not seen.

## References
- NVIDIA CUDA images: https://catalog.ngc.nvidia.com/orgs/nvidia/containers/cuda
- PyTorch Docker images: https://hub.docker.com/r/pytorch/pytorch/tags
"""

import re
from functools import lru_cache

from mlops_lint.model.dra import claimed_gpus
from mlops_lint.model.images import repository_path
from mlops_lint.model.memo import once
from mlops_lint.model.k8s import GPU_CHECK_IMAGES, Container, Workload, gpu_resources, image_reference, image_registry
from mlops_lint.rule import CONTAINER, Finding, rule

_PARTS = re.compile(r"[-_.:]")
_CUDA_PART = re.compile(r"cuda\d*|cudnn\d*|cu\d{2,3}")
NGC_FRAMEWORKS = frozenset({"nvidia/pytorch", "nvidia/tensorflow", "nvidia/nemo", "nvidia/jax", "nvidia/cuda"})
GPU_TAGGED = ("tensorflow/tensorflow", "rayproject/ray")


@lru_cache(maxsize=4096)  # a pure function of the image reference
def cuda_image(image: str | None) -> str | None:
    """Why the image is a CUDA build (for messages), else None."""
    reference = image_reference(image)
    if reference is None or reference[0] in GPU_CHECK_IMAGES:
        return None
    name, tag, _ = reference
    tag_parts = set(_PARTS.split(tag.lower())) if tag else set()
    if "cpu" in tag_parts:
        return None
    path = repository_path(name).lower()
    if path == "nvidia/cuda" or path.endswith("/nvidia/cuda"):
        return "is NVIDIA's CUDA image"
    if image_registry(name) == "nvcr.io" and path in NGC_FRAMEWORKS:
        return f"is NGC's `{path}` image, built on CUDA"
    cuda_tag = next((p for p in sorted(tag_parts) if _CUDA_PART.fullmatch(p)), None)
    if cuda_tag is not None:
        return f"has a CUDA tag (`{tag}`)"
    repository = path.rsplit("/", 1)[-1]
    if "cpu" not in _PARTS.split(repository) and any(_CUDA_PART.fullmatch(p) for p in _PARTS.split(repository)):
        return f"is a CUDA build (repository `{repository}`)"
    if "gpu" in tag_parts and any(path == f or path.endswith("/" + f) for f in GPU_TAGGED):
        return f"is a GPU build (tag `{tag}`)"
    return None


def _runtime_image(container: Container) -> bool:
    """Whether the container is in a TrainJob's view and its image is the runtime's (the TrainJob's
    ``spec.trainer.image`` does not set it)."""
    pod = container.pod
    if pod.workload is None or pod.workload.runtime is None:
        return False
    for _, _, body, _, origin, *_ in pod.merged:
        if body is container.body:
            return origin.get("image") != "trainjob"
    return True  # a runtime's container the TrainJob does not override


def holds_gpu(workload: Workload) -> bool:
    """Whether a container of any pod of the workload requests or limits a GPU (a zero is none; an
    unreadable quantity counts) or takes one through a resource claim (once per workload view)."""
    return once(workload, "IMG005-holds-gpu", lambda: _holds_gpu(workload))


def _holds_gpu(workload: Workload) -> bool:
    for container in workload.containers():
        for section in (container.requests, container.limits):
            if any(r.value is None or r.value > 0 for r in gpu_resources(section).values()):
                return True
        if claimed_gpus(container):
            return True
    return False


@rule(code="IMG005", name="cuda-image-without-gpu", severity="info", scope=CONTAINER, tags=("images", "gpu"))
def check(container: Container, ctx):
    workload = container.pod.workload
    if workload is None or not workload.is_training or container.is_ephemeral or container.resources_from_trainjob:
        return
    why = cuda_image(container.image)
    if why is None or _runtime_image(container) or holds_gpu(workload):
        return  # a runtime's image is its author's default for the TrainJobs that use it
    yield Finding(
        container.image_span,
        f"{container.kind_label} `{container.name}` of training {workload.kind} `{workload.obj.name}` runs "
        f"`{container.image}`, which {why}, but no pod of the {workload.kind} requests a GPU: either the GPU request "
        "is missing and it trains on the CPU, or CPU work pulls gigabytes of CUDA libraries onto every node",
        node=container.path + ("image",),
        fix="request the GPU the image is built for, or use a CPU variant of the image",
    )
