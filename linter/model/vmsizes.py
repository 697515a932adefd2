"""The Azure VM size catalogue: what a node pool's ``--node-vm-size`` gives its nodes.

Data: ``linter/data/vm_sizes.json``, carried over from ``shared/facts/azure-gpu-vm-sizes.md``
(GPU sizes) and ``azure-vm-sizes.md`` (CPU sizes by Azure's naming convention, AKS node
reservations). Two kinds of entries:

* **GPU sizes** are tabulated: vCPUs, memory, GPU count, GPU model, GPU memory, RDMA/InfiniBand,
  MIG capability and the extended resource the GPUs appear as. Sizes AKS recognises as GPU sizes
  but whose size pages were not read (``verified=False``) carry what the family tells (the GPU
  model, the vCPUs from the name) and ``None`` for the rest: never a guess.
* **CPU sizes** are derived from the name, ``Standard_<family><vCPUs>[-<active>]<features>_v<n>``:
  the vCPUs are the number in the name (the ``-<active>`` part of a constrained-core size wins),
  the memory is vCPUs x the family's GiB per vCPU (``l`` in the feature letters = low memory).
  D/DS v2 are the exception: their number is a size step (DS3_v2 = 4 vCPUs), tabulated. Families
  whose memory ratio varies (M, B) give the vCPUs and ``memory_bytes=None``. Derived families:
  general purpose D (and Arm ``p``, low-memory ``l``), memory E and M, compute F, burstable B,
  confidential DC and EC (v5, also ``_cc_v5``), storage L (v3). Families AKS offers that stay
  unknown (their memory or accelerators are not a ratio of the name): FX, the HPC H, HB, HC and
  HX, NP (FPGA) and NG (:func:`unknown_family` names them).

A size that neither explains is unknown: :func:`lookup` returns ``None``.

Lookup is case-insensitive (AKS lower-cases size names before comparing and strips ``_promo``),
and the ``Standard_`` prefix is optional.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import Any

from msgspec import Struct

from mlops_lint.suggest import close_matches

GIB = 1 << 30
MIB = 1 << 20


class VmSize(Struct, frozen=True):
    """One VM size. ``None`` in a numeric field means the catalogue does not know it."""

    name: str  # canonical spelling, e.g. "Standard_NC24ads_A100_v4"
    vcpus: int | None
    memory_bytes: int | None
    gpus: int | None = 0  # GPUs a pod can request on one node (1 for a fractional vGPU size)
    gpu_model: str | None = None  # "NVIDIA A100 PCIe 80GB"; None for CPU sizes
    gpu_key: str | None = None  # model key: "A100-80GB", "H100-NVL-94GB", "T4", "A10", "MI300X"...
    gpu_memory_gb: int | None = None  # per GPU
    gpu_fraction: Fraction | None = None  # share of one physical GPU (NVads A10 v5 partitions)
    rdma: bool = False  # InfiniBand back-end network with GPUDirect RDMA
    mig_capable: bool = False  # the GPU model supports NVIDIA MIG
    gpu_resource: str | None = None  # "nvidia.com/gpu" | "amd.com/gpu"
    status: str = "current"  # current | retired | preview
    verified: bool = True  # False: an AKS-recognised GPU size whose size page was not read
    source: str = "table"  # "table" (GPU catalogue) | "naming" (derived from the name)

    @property
    def is_gpu(self) -> bool:
        return self.gpu_model is not None

    @property
    def retired(self) -> bool:
        return self.status == "retired"

    @property
    def memory_gib(self) -> Fraction | None:
        return None if self.memory_bytes is None else Fraction(self.memory_bytes, GIB)


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    text = resources.files("mlops_lint").joinpath("data/vm_sizes.json").read_text(encoding="utf-8")
    return json.loads(text)


def _gib(value: float | int | None) -> int | None:
    return None if value is None else int(Fraction(str(value)) * GIB)


@lru_cache(maxsize=1)
def _gpu_table() -> dict[str, VmSize]:
    table: dict[str, VmSize] = {}
    for row in _data()["gpu_sizes"]:
        size = VmSize(
            name=row["size"],
            vcpus=row["vcpus"],
            memory_bytes=_gib(row["memory_gib"]),
            gpus=row["gpus"],
            gpu_model=row["gpu_model"],
            gpu_key=row["gpu_key"],
            gpu_memory_gb=row["gpu_memory_gb"],
            gpu_fraction=Fraction(row["gpu_fraction"]) if row["gpu_fraction"] else None,
            rdma=bool(row["rdma"]),
            mig_capable=bool(row["mig"]),
            gpu_resource=row["resource"],
            status=row["status"],
            verified=row["verified"],
        )
        table[size.name.lower()] = size
    return table


@lru_cache(maxsize=1)
def _families() -> dict[str, dict[str, Any]]:
    return {f["family"].lower(): f for f in _data()["naming"]["families"]}


# family letters, size number, optional constrained (active) vCPUs, feature letters, version
_NAME = re.compile(r"([a-z]+?)(\d+)(?:-(\d+))?([a-z]*)(?:_v(\d+))?")


def _key(size: str) -> str:
    key = size.strip().lower()
    if key.endswith("_promo"):
        key = key[: -len("_promo")]
    if not key.startswith("standard_"):
        key = "standard_" + key
    return key


def _by_naming(key: str) -> VmSize | None:
    # ``_cc`` (confidential-child capable, for AKS confidential containers) before the version:
    # the same vCPUs and memory as the size without it (``Standard_DC8as_cc_v5``)
    confidential_child = "_cc_v" in key
    match = _NAME.fullmatch(key[len("standard_"):].replace("_cc_v", "_v"))
    if match is None:
        return None
    family, number, active, features, version_text = match.groups()
    version = int(version_text) if version_text else 1
    name = _canonical_cpu_name(family, number, active, features, version_text)
    if confidential_child and version_text:
        name = name[: -len(f"_v{version_text}")] + f"_cc_v{version_text}"
    if family in ("d", "ds") and version == 2 or family == "ds" and version == 1 and not features:
        step = _data()["naming"]["dv2"].get(number)
        if step is None or active:
            return None
        return VmSize(name=name, vcpus=step[0], memory_bytes=_gib(step[1]), source="naming")
    spec = _families().get(family)
    if spec is None or version not in spec["versions"]:
        return None
    vcpus = int(number)
    if vcpus == 0:
        return None
    ratio = spec["gib_per_vcpu"]
    if "l" in features and spec.get("low_memory_gib_per_vcpu") is not None:
        ratio = spec["low_memory_gib_per_vcpu"]
    memory = None if ratio is None else _gib(Fraction(str(ratio)) * vcpus)
    if number in spec.get("memory_gib", {}):
        memory = _gib(spec["memory_gib"][number])  # a size off the family's ratio (EC96as_v5)
    if active:
        if not 0 < int(active) < vcpus:
            return None
        vcpus = int(active)  # constrained-core sizes keep the memory of the full size
    return VmSize(name=name, vcpus=vcpus, memory_bytes=memory, source="naming")


def unknown_family(size: str) -> str | None:
    """The description of a family AKS offers whose sizes the catalogue does not derive (FX, the
    HPC H families, NP, NG), when ``size`` names one; else None."""
    match = _NAME.fullmatch(_key(size)[len("standard_"):].replace("_cc_v", "_v"))
    if match is None:
        return None
    return _data()["naming"].get("unknown_families", {}).get(match.group(1).upper())


def _canonical_cpu_name(family: str, number: str, active: str | None, features: str, version: str | None) -> str:
    name = f"Standard_{family.upper()}{number}" + (f"-{active}" if active else "") + features
    return name + (f"_v{version}" if version else "")


@lru_cache(maxsize=4096)
def lookup(size: str) -> VmSize | None:
    """The catalogue entry for a VM size (``Standard_NC24ads_A100_v4``, ``nc24ads_a100_v4``...), or None."""
    if not isinstance(size, str) or not size.strip():
        return None
    key = _key(size)
    found = _gpu_table().get(key)
    if found is not None:
        return found
    return _by_naming(key)


def gpu_sizes() -> tuple[VmSize, ...]:
    """Every tabulated GPU size, in catalogue order."""
    return tuple(_gpu_table().values())


def canonical_name(size: str) -> str | None:
    """The spelling Azure prints for a known size (``nc4as_t4_v3`` -> ``Standard_NC4as_T4_v3``)."""
    found = lookup(size)
    return found.name if found is not None else None


def suggest(size: str, limit: int = 2) -> list[str]:
    """Known GPU sizes whose names are close to ``size`` (for AKS005 messages)."""
    return list(_suggest(size, limit))


@lru_cache(maxsize=1024)  # a pure function of its arguments: the catalogue is constant
def _suggest(size: str, limit: int) -> tuple[str, ...]:
    names = {s.name.lower(): s.name for s in gpu_sizes()}
    return tuple(names[m] for m in close_matches(_key(size), names, n=limit, cutoff=0.85))


# ---------------------------------------------------------------------------------------------
# What a node can give pods: the VM minus AKS's kube-reserved and the kubelet eviction threshold.


@lru_cache(maxsize=1024)
def reserved_cpu_millis(vcpus: int) -> int:
    """AKS kube-reserved CPU for a node with ``vcpus`` cores (azure-vm-sizes.md section C).

    Between the tabulated core counts the reservation is interpolated linearly (the table grows
    by 10m per core from 4 cores on); above 64 cores it keeps growing by 10m per core.
    """
    table = sorted((int(k), v) for k, v in _data()["node_reservations"]["cpu_millicores_by_cores"].items())
    if vcpus <= table[0][0]:
        return table[0][1]
    for (c0, m0), (c1, m1) in zip(table, table[1:]):
        if vcpus <= c1:
            return m0 + (m1 - m0) * (vcpus - c0) // (c1 - c0)
    last_c, last_m = table[-1]
    return last_m + 10 * (vcpus - last_c)


@lru_cache(maxsize=4096)
def reserved_memory_bytes(memory_bytes: int, *, max_pods: int = 30, before_1_29: bool = False) -> int:
    """AKS kube-reserved memory plus the kubelet eviction threshold (azure-vm-sizes.md section C).

    Kubernetes 1.29 and later: min(20 MB x max pods + 50 MB, 25 % of memory) + 100 Mi. Before
    1.29: 25 % of the first 4 GB, 20 % of the next 4 GB, 10 % of the next 8 GB, 6 % of the next
    112 GB, 2 % above 128 GB, + 750 Mi.
    """
    data = _data()["node_reservations"]
    if not before_1_29:
        spec = data["memory_1_29"]
        kube = min(
            (spec["per_pod_mb"] * max_pods + spec["base_mb"]) * 10**6,
            int(Fraction(str(spec["max_fraction"])) * memory_bytes),
        )
        return kube + spec["eviction_mib"] * MIB
    spec = data["memory_before_1_29"]
    left, kube = Fraction(memory_bytes), Fraction(0)
    for size_gb, fraction in spec["tiers_gb"]:
        part = left if size_gb is None else min(left, Fraction(size_gb * 10**9))
        kube += part * Fraction(str(fraction))
        left -= part
        if left <= 0:
            break
    return int(kube) + spec["eviction_mib"] * MIB
