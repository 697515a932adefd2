"""What is known about public base images, for the Kubernetes image rules and the Dockerfile rules
alike: where an image lives on its registry, and which images are CPU-only builds."""

from __future__ import annotations

from mlops_lint.model.k8s import REFERENCE, image_reference, image_registry, parse_image
from mlops_lint.model.placeholder import MASK, has_placeholder, is_placeholder, masked

# Docker Hub's official OS and language images (``library/…``): none of them ships CUDA.
LIBRARY_CPU_IMAGES = frozenset({
    "python", "ubuntu", "debian", "alpine", "busybox", "centos", "rockylinux", "almalinux", "fedora",
    "amazonlinux", "oraclelinux", "buildpack-deps", "pypy",
})
# Conda base images: CPU builds (CUDA comes from packages installed on top).
CONDA_CPU_IMAGES = frozenset({"continuumio/miniconda3", "continuumio/anaconda3", "condaforge/miniforge3",
                              "condaforge/mambaforge", "mambaorg/micromamba"})
DOCKER_HUB_HOSTS = ("docker.io/", "index.docker.io/", "registry-1.docker.io/")


def image_pin(image: str | None) -> tuple[str | None, str | None] | None:
    """(tag, digest) of an image reference, for the rules about tags and digests; ``None`` when
    they cannot be judged. A placeholder in one part leaves the others known: the tag of
    ``${REGISTRY}/app:latest``, ``gcr.io/<<PROJECT>>/app:latest`` and
    ``your-acr.azurecr.io/app:latest`` is ``latest``, and ``${REGISTRY}/app`` has none. A
    placeholder in the tag or the digest (``app:${TAG}``, ``app@sha256:<digest>``), a whole
    placeholder (``$IMAGE``, ``<your-image>``, ``REPLACE_ME``), and a reference with neither tag nor
    digest whose last path component holds one (``repo/${IMAGE}`` may carry its tag) or that is a
    stand-in as a whole (``your-acr.azurecr.io/trainer``, a name to fill in) are not judged."""
    if not image:
        return None
    reference = image_reference(image)
    if reference is not None:
        return reference[1], reference[2]
    if len(image) > 512 or not has_placeholder(image):
        return None
    text = masked(image.strip())
    if not text.strip(MASK) or not REFERENCE.match(text.replace(MASK, "x")):
        return None
    name, tag, digest = parse_image(text)
    if any(part is not None and (MASK in part or has_placeholder(part)) for part in (tag, digest)):
        return None
    last = name.rsplit("/", 1)[-1]
    if tag is None and digest is None and (MASK in last or has_placeholder(last) or is_placeholder(image)):
        return None
    return tag, digest


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
