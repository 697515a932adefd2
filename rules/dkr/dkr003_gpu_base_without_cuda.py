"""A Dockerfile meant for GPUs whose final image is built on a CPU-only base.

## What it does
Decides from the file itself whether it is meant for GPUs, and if so flags a final stage (the
image `docker build` produces) whose base image is a known CPU-only build. The evidence, named
in the message:

- the file name, its folder's name or the final stage's name says `gpu`, `cuda`, `cu121`,
  `nvidia` (`Dockerfile.gpu`, `gpu/Dockerfile`, `FROM … AS gpu`);
- ENV or ARG variables of the NVIDIA container runtime, CUDA or NCCL (`NVIDIA_VISIBLE_DEVICES`,
  `NVIDIA_DRIVER_CAPABILITIES`, `CUDA_VISIBLE_DEVICES`, `CUDA_HOME`, `TORCH_CUDA_ARCH_LIST`,
  `NCCL_*`, `HOROVOD_GPU_*`), unless the value hides the GPUs (`""`, `none`, `void`, `-1`);
- labels that say GPU or CUDA (`com.nvidia.*`, `accelerator=gpu`; free-text labels such as
  descriptions are not read);
- GPU wheels in `pip install`: local versions `+cu121`, a CUDA package index
  (`--index-url https://download.pytorch.org/whl/cu121`, `pypi.nvidia.com`), `nvidia-*-cu12`,
  `cupy-cuda12x`, `*-gpu` packages, `flash-attn`, `tensorrt`, extras such as `jax[cuda12]`;
- CUDA packages from apt, yum, dnf or conda (`cuda-toolkit-12-4`, `libcudnn9-cuda-12`,
  `libnccl2`, `pytorch-cuda=12.1`, the `nvidia` conda channel).

Evidence is read from the final stage, the stages it is built on and the stages it copies
from. A `cpu` in the file, folder or final stage name means the CPU variant: nothing is flagged.

CPU-only bases: the official `python`, `ubuntu`, `debian`, `alpine` … images, the conda bases,
`tensorflow/tensorflow` and `rayproject/ray` tags without `gpu` or a CUDA version, Jupyter's
`*-notebook` images without a `cuda` tag, Azure ML's `openmpi` images without `cuda`, and any tag
or repository with a `cpu` part (`pytorch/pytorch:2.1.0-cpu`). A base the linter does not know
(your own `myacr.azurecr.io/base:1`) is not judged. The finding points at the final stage's
base image (the `FROM` that pulls it, when the final stage is built on an earlier stage).

## Why is this bad?
A CPU image on a GPU node does not fail: the framework quietly runs on the CPU while the pod
holds the GPU, or it finds a CUDA runtime that pip resolved at build time instead of the one the
team validated. The article: "Use an explicit, CUDA-enabled base image tag for GPU training
workloads", "The image contains the CUDA runtime and PyTorch libraries, while the compatible
NVIDIA driver remains on the AKS GPU node", and "Maintain separate CPU and GPU image variants so
scheduler placement and runtime dependencies stay explicit".

## Example
```dockerfile
FROM python:3.11-slim
ENV NVIDIA_VISIBLE_DEVICES=all
RUN pip install --no-cache-dir torch==2.3.1+cu121 --index-url https://download.pytorch.org/whl/cu121
```

Use instead:
```dockerfile
FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726
```
and keep the CPU build in its own file (`Dockerfile.cpu`, built `FROM python:3.12-slim`).

## Known problems
- PyTorch's CUDA wheels bring the CUDA user-space libraries with them, and CUDA can be installed
  with apt onto `ubuntu`: such images do run on a GPU. They are flagged all the same, as the
  article asks for a CUDA base whose runtime version is pinned with the image rather than
  assembled by a package resolve; suppress with a reason if that is deliberate.
- A plain `pip install torch` (PyPI's Linux wheels are CUDA builds) is not taken as evidence:
  most such files are CPU images that pull CUDA by accident.
- ROCm (AMD) images and wheels are not judged.
- `FROM $VAR` without a default, or a base the linter does not know, is not judged.

## References
- PyTorch, install a CUDA build with pip: https://pytorch.org/get-started/locally/
- NVIDIA Container Toolkit, environment variables: https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
- AKS, Use GPUs for compute-intensive workloads: https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from mlops_lint.model.docker import Dockerfile, base_accelerator, gpu_evidence, node_path
from mlops_lint.rule import DOCKERFILE, Finding, rule

SUGGESTION = "pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime or nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04"


@rule(code="DKR003", name="gpu-base-without-cuda", severity="warning", scope=DOCKERFILE, tags=("dockerfile", "images", "gpu"))
def check(dockerfile: Dockerfile, ctx):
    final = dockerfile.final_stage
    if final is None:
        return
    root = dockerfile.chain(final)[0]
    if not root.is_image or root.base_span is None:
        return
    kind = base_accelerator(root.base_resolved)
    if kind is None or kind[0] != "cpu":
        return
    intent, evidence = gpu_evidence(dockerfile)
    if intent != "gpu":
        return
    shown = ", ".join(e.describe() for e in evidence[:3]) + (f" and {len(evidence) - 3} more" if len(evidence) > 3 else "")
    stage = "the final stage" if root is final else f"the final stage (through stage `{root.name or root.index}`)"
    yield Finding(
        root.base_span,
        f"this Dockerfile is meant for GPUs ({shown}) but {stage} is built on `{root.base_resolved.split('@')[0]}`, a CPU-only "
        f"base ({kind[1]}): the CUDA runtime is then whatever pip or apt resolved, or the GPU sits idle",
        node=node_path(root, root.from_instruction, "image"),
        fix=f"build the GPU variant on a CUDA base such as {SUGGESTION}, and keep the CPU variant in its own Dockerfile",
    )
