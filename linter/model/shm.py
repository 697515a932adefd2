"""Shared memory (``/dev/shm``) of a pod: which volume a container mounts there, and what it is.

Used by RES004-RES006. Container runtimes give every container a small ``/dev/shm`` (64 MiB in
containerd and Docker); the way to enlarge it on Kubernetes is a ``medium: Memory`` emptyDir
mounted at ``/dev/shm``. A pod with ``hostIPC: true`` shares the node's IPC namespace and gets
the node's ``/dev/shm`` instead. KubeRay mounts one itself in the Ray container of the head and
worker pods it builds (``operator_shm``).
"""

from __future__ import annotations

import posixpath
from typing import Any, Iterator

from mlops_lint.model.tree import YMap

SHM_PATH = "/dev/shm"


def is_shm_path(path: Any) -> bool:
    """``/dev/shm`` as the kubelet resolves a mountPath (``/dev/shm/``, ``/dev//shm`` too)."""
    return isinstance(path, str) and path.startswith("/") and posixpath.normpath(path) == SHM_PATH


def volume_named(pod: Any, name: Any) -> YMap | None:
    for _, volume in pod.volumes:
        if volume.get("name") == name:
            return volume
    return None


def memory_empty_dir(volume: YMap | None) -> YMap | None:
    """The ``emptyDir`` of a memory-backed (tmpfs) emptyDir volume, else None."""
    empty_dir = volume.get_map("emptyDir") if volume is not None else None
    if empty_dir is not None and empty_dir.get("medium") == "Memory":
        return empty_dir
    return None


def is_host_shm(volume: YMap | None) -> bool:
    host = volume.get_map("hostPath") if volume is not None else None
    return host is not None and is_shm_path(host.get("path"))


def shm_mounts(container: Any) -> Iterator[tuple[int, YMap, YMap | None]]:
    """(index, volumeMount, volume) of each mount of a container at ``/dev/shm``."""
    for index, mount in container.volume_mounts:
        if is_shm_path(mount.get("mountPath")) and not mount.get("subPath") and not mount.get("subPathExpr"):
            yield index, mount, volume_named(container.pod, mount.get("name"))


def shm_volumes(pod: Any) -> Iterator[tuple[int, YMap, list[tuple[Any, int, YMap]]]]:
    """(index, volume, [(container, mount index, mount)]) of each pod volume mounted at ``/dev/shm``."""
    for index, volume in pod.volumes:
        users = [
            (container, mount_index, mount)
            for container in pod.containers if not container.is_ephemeral
            for mount_index, mount, target in shm_mounts(container) if target is volume
        ]
        if users:
            yield index, volume, users


# KubeRay's pod builder (ray-operator/controllers/ray/common/pod.go) adds a ``medium: Memory``
# emptyDir at /dev/shm, sized to the memory limit, to the Ray container (utils.RayContainerIndex,
# the first app container) of every head and worker group pod, unless that container already
# mounts something there; the RayJob submitter is a plain Job and gets nothing.
_KUBERAY_GROUPS = ("headGroupSpec", "workerGroupSpecs")


def operator_shm(container: Any) -> bool:
    """Whether the operator that builds the container's pod gives it a memory-backed /dev/shm
    (KubeRay's Ray container; the caller checks that the container mounts nothing there)."""
    pod = container.pod
    return (pod.obj.group == "ray.io" and container.field == "containers" and container.index == 0
            and any(key in pod.path for key in _KUBERAY_GROUPS))
