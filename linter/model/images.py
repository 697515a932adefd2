"""What is known about public base images, for the Kubernetes image rules and the Dockerfile rules
alike: where an image lives on its registry, and which images are CPU-only builds."""

from __future__ import annotations

from linter.model.k8s import image_registry

# Docker Hub's official OS and language images (``library/…``): none of them ships CUDA.
LIBRARY_CPU_IMAGES = frozenset({
    "python", "ubuntu", "debian", "alpine", "busybox", "centos", "rockylinux", "almalinux", "fedora",
    "amazonlinux", "oraclelinux", "buildpack-deps", "pypy",
})
# Conda base images: CPU builds (CUDA comes from packages installed on top).
CONDA_CPU_IMAGES = frozenset({"continuumio/miniconda3", "continuumio/anaconda3", "condaforge/miniforge3",
                              "condaforge/mambaforge", "mambaorg/micromamba"})
DOCKER_HUB_HOSTS = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def repository_path(name: str) -> str:
    """The repository path without the registry host; Docker Hub's official images get ``library/``."""
    if image_registry(name) != "docker.io":
        return name.split("/", 1)[1]
    for prefix in DOCKER_HUB_HOSTS:
        name = name.removeprefix(prefix)
    return name if "/" in name else f"library/{name}"


# Tags that registries move to every new build: a branch (`main`, `master`, `dev`), a channel
# (`nightly`, `stable`, `edge`), or `latest` with a variant (`latest-gpu`, `nightly-cu121`,
# `main-latest`). `latest` alone is IMG001's.
MOVING_TAGS = frozenset({"main", "master", "nightly", "stable", "edge", "dev", "devel", "develop", "development",
                         "canary", "unstable", "head", "trunk", "rolling", "testing"})
_MOVING_PREFIXES = ("latest-", "nightly-")
_MOVING_SUFFIXES = ("-latest", "-nightly")


def is_moving_tag(tag: str | None) -> bool:
    """Whether ``tag`` names a branch or channel that moves with every build (see MOVING_TAGS)."""
    if not tag:
        return False
    tag = tag.lower()
    return tag in MOVING_TAGS or tag.startswith(_MOVING_PREFIXES) or tag.endswith(_MOVING_SUFFIXES)
