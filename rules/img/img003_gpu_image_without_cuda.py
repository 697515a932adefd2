"""A GPU container whose image is a known CPU-only build.

## What it does
Flags containers (init and sidecar containers included) that request or limit a GPU
(`nvidia.com/gpu`, `nvidia.com/mig-*`, `amd.com/gpu`; not zero) and run an image known to carry
no CUDA runtime:

- `tensorflow/tensorflow` and `tensorflow/serving` with a tag that does not say `gpu` (the
  untagged `latest` is the CPU build);
- `rayproject/ray` with a tag that says neither `gpu` nor a CUDA version (`-cu121`): Ray's
  unsuffixed tags are its CPU images;
- a tag or repository name with a `cpu` part (`2.3.0-cpu`, `vllm-cpu`, `py310-cpu-inference`);
- Azure ML's `azureml/openmpi…` base images without `cuda` in the name;
- plain OS and language images from Docker Hub's official library (`python`, `ubuntu`,
  `debian`, `alpine`, `busybox`, `centos`, `rockylinux`, `almalinux`, `fedora`, `amazonlinux`,
  `oraclelinux`, also through mirrors that keep the `library/` path) and the conda bases
  `continuumio/miniconda3`, `continuumio/anaconda3`, `condaforge/miniforge3`,
  `mambaorg/micromamba`.

Repositories other than the official library ones match at any registry (a mirror such as
`myacr.azurecr.io/tensorflow/tensorflow:2.16.1` is the same image). Templated and placeholder
images are skipped. The finding points at the image.

{{pod-views}}

{{dra-gpus}}

## Why is this bad?
The article: "Use an explicit, CUDA-enabled base image tag for GPU training workloads" and
"Maintain separate CPU and GPU image variants so scheduler placement and runtime dependencies
stay explicit." A CPU build on a GPU node does not fail: TensorFlow and Ray quietly run on the
CPU, so the job holds an expensive GPU for hours at a fraction of the speed, and nothing in the
logs says why unless someone reads the device placement lines.

## Example
```yaml
      containers:
      - name: trainer
        image: tensorflow/tensorflow:2.16.1
        resources:
          limits: {nvidia.com/gpu: 1}
```

Use instead:
```yaml
      containers:
      - name: trainer
        image: tensorflow/tensorflow:2.16.1-gpu
        resources:
          limits: {nvidia.com/gpu: 1}
```

## Known problems
- An image built `FROM python:3.12` that installs CUDA wheels (PyTorch's PyPI wheels bring the
  CUDA runtime with them) does use the GPU, but its reference is then your own image, not
  `python:*`; a pod running `python:*` itself and installing wheels at start-up is flagged.
- A container that only runs `nvidia-smi`, `sleep`, `echo` and the like (a smoke test) is not
  flagged: the NVIDIA container toolkit mounts the driver's tools into any image, and nothing
  computes. One that runs a script the linter cannot read (`bash run.sh`) is judged by its image.
- The list is of known CPU-only builds, not a proof that other images carry CUDA.

## References
- TensorFlow Docker images (`-gpu` tags): https://www.tensorflow.org/install/docker
- Ray Docker images (`-cpu`, `-gpu`, `-cuXXX` tags): https://docs.ray.io/en/latest/ray-overview/installation.html#docker-source-images
- NVIDIA CUDA images: https://catalog.ngc.nvidia.com/orgs/nvidia/containers/cuda
"""

import re
from functools import lru_cache

from mlops_lint.model.dra import claimed_gpus
from mlops_lint.model.images import CONDA_CPU_IMAGES, LIBRARY_CPU_IMAGES, repository_path
from mlops_lint.model.k8s import Container, gpu_resources, idle_programs, image_reference
from mlops_lint.rule import CONTAINER, Finding, rule

GPU_TAGGED = {"tensorflow/tensorflow": "tensorflow", "tensorflow/serving": "tensorflow", "rayproject/ray": "ray"}
_PARTS = re.compile(r"[-_.]")
_CUDA_PART = re.compile(r"cu\d+|cuda\d*")
SUGGESTION = "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime or nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04"


@lru_cache(maxsize=4096)  # a pure function of the image reference; a project reuses a few images
def cpu_only(image: str | None) -> tuple[str, str | None] | None:
    """(why the image is a CPU-only build, a GPU variant to use) for a known one, else None."""
    reference = image_reference(image)
    if reference is None:
        return None
    name, tag, _ = reference
    tag = tag or "latest"
    path = repository_path(name)
    tag_parts = set(_PARTS.split(tag.lower()))
    repository = path.rsplit("/", 1)[-1]
    for family, kind in GPU_TAGGED.items():
        if path == family or path.endswith("/" + family):
            if "gpu" in tag_parts or (kind == "ray" and any(_CUDA_PART.fullmatch(p) for p in tag_parts)):
                return None
            if "cpu" in tag_parts:
                variant_tag = tag.replace("cpu", "gpu")
            elif tag.endswith("-jupyter"):
                variant_tag = tag[: -len("-jupyter")] + "-gpu-jupyter"
            else:
                variant_tag = f"{tag}-gpu"
            variant = f"{name}:{variant_tag}"
            return f"is {family}'s CPU build (tag `{tag}` has no `-gpu`)", variant
    if "cpu" in tag_parts:
        return f"is a CPU build (tag `{tag}`)", None
    if "cpu" in _PARTS.split(repository.lower()):
        return f"is a CPU build (repository `{repository}`)", None
    if path.startswith("azureml/openmpi") and "cuda" not in path:
        return "is an Azure ML CPU base image (no `cuda` in its name)", None
    library = path.rsplit("library/", 1)[-1] if path.startswith("library/") or "/library/" in path else None
    if library in LIBRARY_CPU_IMAGES:
        return f"is the plain `{library}` image", None
    if path in CONDA_CPU_IMAGES:
        return f"is the plain `{path}` image", None
    return None


@rule(code="IMG003", name="gpu-image-without-cuda", severity="warning", scope=CONTAINER, tags=("images", "gpu"))
def check(container: Container, ctx):
    gpus = [r for section in (container.requests, container.limits) for r in gpu_resources(section).values()
            if r.value is None or r.value > 0] + claimed_gpus(container)
    if not gpus or idle_programs(container) is not None:
        return  # a smoke test (`nvidia-smi`): the toolkit mounts it into any image, nothing computes
    found = cpu_only(container.image)
    if found is None:
        return
    why, variant = found
    yield Finding(
        container.image_span,
        f"{container.kind_label} `{container.name}` uses {gpus[0].name} but its image `{container.image}` {why}: "
        "without the GPU runtime (CUDA, ROCm) the framework runs on the CPU while the GPU sits idle",
        node=container.path + ("image",),
        fix=f"use `{variant}`" if variant else f"use a CUDA image, e.g. {SUGGESTION}",
    )
