"""An NVIDIA driver installed into the image instead of left to the GPU node.

## What it does
Flags, in the stages that end up in the final image, every RUN command that installs NVIDIA
driver components:

- an OS package manager (`apt-get`, `apt`, `aptitude`, `yum`, `dnf`, `microdnf`, `tdnf`,
  `zypper`, `apk`) installing a driver package: `nvidia-driver`, `nvidia-driver-<version>`,
  `cuda-drivers`, `cuda-drivers-<version>`, `libnvidia-compute-*` and the other
  `libnvidia-<gl|decode|encode|extra|fbc1|cfg1|common|ifr1>-*` libraries, `nvidia-utils-*`,
  `nvidia-headless-*`, `nvidia-dkms-*`, `nvidia-kernel-*`, `nvidia-open*`, `kmod-nvidia*`,
  `xserver-xorg-video-nvidia-*`, Debian's `libcuda1` and `nvidia-smi`, and the CUDA
  metapackages that pull the driver in (`cuda`, `cuda-<major>-<minor>`, `cuda-runtime-<major>-<minor>`);
- an NVIDIA `.run` installer run as a program or by a shell (`./NVIDIA-Linux-*.run`,
  `sh cuda_*.run`): `NVIDIA-Linux-*.run`, or a CUDA runfile (`cuda_*.run`) without `--toolkit`
  (with it, the runfile installs the toolkit only). Downloading one is not flagged.

The finding points at the package name or the installer. Versions (`nvidia-driver-535=…`,
`cuda-drivers-550.54.15`) and variables (`nvidia-driver-${DRIVER}`) are read as the name they
start with. `cuda-toolkit-*`, `cuda-compat-*`, `cuda-cudart-*` and the other CUDA libraries are
what an image should carry and are not flagged.

## Why is this bad?
The driver belongs to the node: its kernel module is loaded by the host, and the NVIDIA
container runtime mounts the matching user-space libraries (`libcuda.so`, `nvidia-smi`) into
every GPU container. The article's training image "contains the CUDA runtime and PyTorch
libraries, while the compatible NVIDIA driver remains on the AKS GPU node", and "AKS GPU
configurations can provide managed GPU drivers". A driver baked into the image shadows the
node's libraries with another version: CUDA fails with "driver/library version mismatch" or
"forward compatibility was attempted on non supported HW" as soon as AKS (or the GPU Operator)
upgrades the node's driver, and the image grows by hundreds of megabytes.

## Example
```dockerfile
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
RUN apt-get update && apt-get install -y --no-install-recommends nvidia-driver-550 \
    && rm -rf /var/lib/apt/lists/*
```

Use instead:
```dockerfile
FROM nvidia/cuda:12.4.1-runtime-ubuntu22.04
# the driver comes from the AKS GPU node (or the GPU Operator's driver DaemonSet)
```

## Known problems
- An image that is itself a driver container (the GPU Operator's driver image, built to load the
  module on the node) installs the driver on purpose: suppress the rule in that Dockerfile.
- Packages installed by a script the image copies and runs, or listed in a file
  (`xargs apt-get install < packages.txt`), are not seen.

## References
- NVIDIA Container Toolkit, architecture (driver libraries mounted from the host): https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/arch-overview.html
- CUDA installation guide, metapackages: https://docs.nvidia.com/cuda/cuda-installation-guide-linux/#meta-packages
- AKS, use GPUs (driver installation on the node): https://learn.microsoft.com/azure/aks/use-nvidia-gpu
"""

from __future__ import annotations

import re

from mlops_lint.model.docker import Dockerfile, node_path
from mlops_lint.model.shellc import POSIX_SHELLS
from mlops_lint.rule import DOCKERFILE, Finding, rule

PACKAGE_MANAGERS = {"apt-get": ("install",), "apt": ("install",), "aptitude": ("install",), "yum": ("install",),
                    "dnf": ("install",), "microdnf": ("install",), "tdnf": ("install",), "zypper": ("install", "in"),
                    "apk": ("add",)}
DRIVER_PACKAGE = re.compile(
    r"(?:nvidia-driver(?:-.*)?|cuda-drivers(?:-.*)?"
    r"|libnvidia-(?:compute|gl|decode|encode|extra|fbc1|cfg1|common|ifr1)(?:-.*)?"
    r"|nvidia-(?:utils|headless|dkms|kernel|open)(?:-.*)?|kmod-nvidia.*|xserver-xorg-video-nvidia(?:-.*)?"
    r"|libcuda1|nvidia-smi|cuda|cuda-\d+-\d+|cuda-runtime-\d+-\d+)")
_DRIVER_RUNFILE = re.compile(r"NVIDIA-Linux-.*\.run", re.IGNORECASE)
_CUDA_RUNFILE = re.compile(r"cuda_.*\.run", re.IGNORECASE)


def _package_name(word: str) -> str:
    """``nvidia-driver-535=535.1`` and ``cuda-drivers-550.54.15`` give the package's name part."""
    name = re.split(r"[=<>~]", word, maxsplit=1)[0]
    return name.split(":", 1)[0]  # apt's `pkg:amd64`


def _findings(command):
    """(word, what) for each driver package or installer of one simple command."""
    words = command.words
    program = command.program
    verbs = PACKAGE_MANAGERS.get(program)
    if verbs is not None:
        texts = [w.text for w in words]
        if not any(v in texts for v in verbs):
            return
        after = texts.index(next(v for v in verbs if v in texts))
        for word in words[after + 1:]:
            text = word.text
            if text.startswith("-") or "/" in text:
                continue
            name = _package_name(text)
            if DRIVER_PACKAGE.fullmatch(name) or ("$" in name and DRIVER_PACKAGE.fullmatch(name.split("$", 1)[0] + "x")):
                yield word, f"`{program}` installs the NVIDIA driver package `{text}` into the image"
        return
    texts = [w.text for w in words]
    runner = words[0]  # `./NVIDIA-Linux-….run`, else `sh NVIDIA-Linux-….run` (a download is not a run)
    if program in POSIX_SHELLS:
        runner = next((w for w in words[1:] if not w.text.startswith("-")), None)
    if runner is None:
        return
    base = runner.text.rsplit("/", 1)[-1]
    if _DRIVER_RUNFILE.fullmatch(base):
        yield runner, f"the NVIDIA driver installer `{runner.text}` installs the driver into the image"
    elif _CUDA_RUNFILE.fullmatch(base) and "--toolkit" not in texts:
        yield runner, f"the CUDA runfile `{runner.text}` runs without `--toolkit`, so it installs its driver into the image"


@rule(code="DKR008", name="gpu-driver-in-image", severity="warning", scope=DOCKERFILE, tags=("dockerfile", "images", "gpu"))
def check(dockerfile: Dockerfile, ctx):
    for stage in dockerfile.shipped_stages:
        for ins in stage.instructions:
            if ins.keyword != "RUN" or not ins.commands:
                continue
            for index, command in enumerate(ins.commands):
                if not command.words:
                    continue
                for word, what in _findings(command):
                    yield Finding(
                        word.span,
                        f"{what}: the driver belongs to the GPU node, whose own driver the "
                        "container runtime mounts; a second copy breaks CUDA with a driver/library version "
                        "mismatch when the node's driver changes",
                        node=node_path(stage, ins, index),
                        fix="remove it: keep the CUDA runtime libraries in the image and the driver on the node",
                    )
