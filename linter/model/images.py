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
