"""Capacity: what one node of a pool offers pods (its GPUs, its allocatable cpu and memory), and
how messages write amounts."""

from __future__ import annotations

import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

from msgspec import Struct

from mlops_lint.model.cluster.pools import NodePool


def gpus_of(pool: NodePool, resource: str) -> int | None:
    """How many of ``resource`` (``nvidia.com/gpu``, ``amd.com/gpu``) one node of the pool has;
    None when the VM size (or its GPU count) is unknown."""
    vm = pool.vm
    if vm is None:
        return None
    if not vm.is_gpu or vm.gpu_resource != resource:
        return 0
    return vm.gpus


class Capacity(Struct, frozen=True):
    """What one node of a pool offers pods: the VM, less AKS's reservations when subtracted."""

    cpu: Fraction | None  # cores
    memory: Fraction | None  # bytes
    vm_cpu: int | None
    vm_memory: int | None
    reserved_cpu: Fraction = Fraction(0)
    reserved_memory: int = 0


def _before_1_29(version: Any) -> bool:
    match = re.match(r"v?(\d+)\.(\d+)", str(version or ""))
    return bool(match) and (int(match.group(1)), int(match.group(2))) < (1, 29)


def node_capacity(pool: NodePool, *, subtract_reserved: bool = True, kubernetes_version: Any = None) -> Capacity | None:
    """One node's allocatable cpu and memory (azure-vm-sizes.md section C), None when the VM is unknown.

    CPU: vCPUs less kube-reserved. Memory (Kubernetes 1.29+ unless ``kubernetes_version`` is older):
    the VM's memory less kube-reserved (20 MB per pod of ``--max-pods``, 30 when not given: the
    smallest CLI default, so the smallest reservation) and the 100 Mi eviction threshold.
    """
    vm = pool.vm
    if vm is None:
        return None
    max_pods = pool.max_pods if isinstance(pool.max_pods, int) and pool.max_pods > 0 else 30
    return _capacity(vm, max_pods, subtract_reserved, _before_1_29(kubernetes_version) if subtract_reserved else False)


@lru_cache(maxsize=4096)
def _capacity(vm: Any, max_pods: int, subtract_reserved: bool, before_1_29: bool) -> Capacity:
    """:func:`node_capacity` of a VM size (memoised: every pod asks it of every pool it may land on)."""
    from mlops_lint.model.vmsizes import reserved_cpu_millis, reserved_memory_bytes

    cpu = Fraction(vm.vcpus) if vm.vcpus is not None else None
    memory = Fraction(vm.memory_bytes) if vm.memory_bytes is not None else None
    if not subtract_reserved:
        return Capacity(cpu, memory, vm.vcpus, vm.memory_bytes)
    reserved_cpu = Fraction(reserved_cpu_millis(vm.vcpus), 1000) if vm.vcpus is not None else Fraction(0)
    reserved_memory = reserved_memory_bytes(vm.memory_bytes, max_pods=max_pods,
                                            before_1_29=before_1_29) if vm.memory_bytes else 0
    return Capacity(cpu - reserved_cpu if cpu is not None else None,
                    memory - reserved_memory if memory is not None else None,
                    vm.vcpus, vm.memory_bytes, reserved_cpu, reserved_memory)


def format_bytes(amount: Fraction | int) -> str:
    """``16Gi``, ``27.3Gi``, ``512Mi``."""
    value = Fraction(amount)
    for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
        if value >= size:
            shown = f"{float(value / size):.1f}".removesuffix(".0")
            return f"{shown}{unit}"
    return str(int(value))


def format_cpu(amount: Fraction) -> str:
    """``4``, ``3860m``."""
    if amount.denominator == 1:
        return str(amount.numerator)
    return f"{int(amount * 1000)}m"
