"""The NVIDIA MIG catalogue: which GPU models offer which Multi-Instance GPU profiles, and how many.

Data: ``linter/data/mig_profiles.json``, carried over from ``shared/facts/nvidia-mig-profiles.md``
(table 1: the largest count of each profile one GPU can hold alone, the ``all-balanced`` mixed
layout per model) and ``mig-parted-config-default.yaml`` (NVIDIA/mig-parted's shipped catalogue:
every profile name it knows, some of them, for B200, B300 and GH200 144G, not attributed to a GPU
here). GPU model keys are those of ``linter/data/vm_sizes.json`` (``VmSize.gpu_key``) where Azure
sells the GPU: ``A100-40GB``, ``A100-80GB``, ``H100-80GB``, ``H100-NVL-94GB``, ``H200-141GB``,
``RTXPRO6000-BSE``, ``GB200``, ``GB300``; plus ``A30-24GB`` and ``H100-96GB`` (no Azure size).

Profile names are NVIDIA's, ``<compute slices>g.<memory>gb`` with an optional suffix: ``+me``
(media extensions: one per GPU), ``+gfx``, ``-me``, ``+me.all`` (RTX PRO 6000). The NVIDIA device
plugin's mixed strategy advertises a profile as ``nvidia.com/mig-<profile>`` with ``+`` replaced
by ``.`` (``1g.10gb+me`` -> ``nvidia.com/mig-1g.10gb.me``); :func:`normalise_profile` reads both
forms back to the profile name.

API (used by GPU008 and XPL005):

* ``MIG_GPUS``: GPU model -> {profile name -> :class:`MigProfile`};
* :func:`profiles_for`, :func:`gpu_models_offering`, :func:`normalise_profile`;
* :func:`is_mig_resource` (``nvidia.com/mig-…``, valid or not), :func:`compute_slices` (7, or 4
  on A30 and RTX PRO 6000), :func:`is_known_profile` (a name in NVIDIA's catalogue, attributed to
  a GPU here or not), :func:`is_mig_capable`, :func:`balanced_layout`,
  :func:`aks_instance_profile` (what ``--gpu-instance-profile MIG<n>g`` gives on a model),
  :func:`layout_problems` (a mig-parted ``mig-devices`` layout checked against one GPU model),
  :func:`models_for_device_id` (a mig-parted ``device-filter`` PCI ID);
* :func:`parse_embedded_yaml` / :func:`is_mig_parted_config` for mig-parted configs carried in
  ConfigMap values.

The catalogue is loaded once, at import.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from types import MappingProxyType
from typing import Mapping

from msgspec import Struct


class MigProfile(Struct, frozen=True):
    """One MIG profile on one GPU model."""

    name: str  # "1g.10gb", "1g.10gb+me", "1g.24gb+me.all"
    compute_slices: int  # the "<n>g" part: GPU-instance compute slices
    memory_gb: int  # the "<m>gb" part, as NVIDIA names it (rounded)
    max_instances: int  # the most instances of this profile one GPU holds (alone)

    @property
    def media_extensions(self) -> bool:
        """Carries the GPU's media engines (``+me``/``+me.all``): at most one such instance per GPU."""
        return "+me" in self.name

    @property
    def resource(self) -> str:
        """The extended resource the device plugin's mixed strategy advertises it as."""
        return "nvidia.com/mig-" + self.name.replace("+", ".")


# <n>g.<m>gb, then an optional suffix: "+me", "+gfx", "+me.all", "-me" (NVIDIA's names) or the
# resource spelling of the "+" forms (".me", ".gfx", ".me.all").
_PROFILE = re.compile(r"([1-9]\d*)g\.([1-9]\d*)gb(?:([+.])(me|gfx|me\.all)|(-me))?")
_RESOURCE_PREFIX = "nvidia.com/"


def _load() -> dict:
    text = resources.files("mlops_lint").joinpath("data/mig_profiles.json").read_text(encoding="utf-8")
    return json.loads(text)


def _parse(name: str) -> tuple[int, int, str] | None:
    match = _PROFILE.fullmatch(name)
    if match is None:
        return None
    g, m, _sep, suffix, minus = match.groups()
    tail = f"+{suffix}" if suffix else (minus or "")
    return int(g), int(m), f"{g}g.{m}gb{tail}"


def _build() -> tuple[Mapping[str, Mapping[str, MigProfile]], dict[str, dict], frozenset[str], frozenset[str],
                      dict[str, frozenset[str]]]:
    data = _load()
    gpus: dict[str, Mapping[str, MigProfile]] = {}
    meta: dict[str, dict] = {}
    for model, spec in data["gpus"].items():
        profiles = {}
        for name, count in spec["profiles"].items():
            parsed = _parse(name)
            assert parsed is not None and parsed[2] == name, name
            profiles[name] = MigProfile(name, parsed[0], parsed[1], int(count))
        gpus[model] = MappingProxyType(profiles)
        meta[model] = spec
    known = frozenset(p for profiles in gpus.values() for p in profiles) | frozenset(data["unattributed_profiles"])
    device_ids = {key.lower(): frozenset(models) for key, models in data["device_ids"].items()}
    return MappingProxyType(gpus), meta, known, frozenset(data["not_mig_capable"]), device_ids


MIG_GPUS, _META, _KNOWN, _NOT_MIG, _DEVICE_IDS = _build()

_OFFERING: dict[str, frozenset[str]] = {}
for _model, _profiles in MIG_GPUS.items():
    for _name in _profiles:
        _OFFERING[_name] = _OFFERING.get(_name, frozenset()) | {_model}
del _model, _profiles, _name


def normalise_profile(resource_or_profile_name: str) -> str | None:
    """The MIG profile a resource or profile name denotes, in NVIDIA's spelling, else None.

    ``nvidia.com/mig-1g.10gb``, ``mig-1g.10gb`` and ``1g.10gb`` give ``1g.10gb``;
    ``nvidia.com/mig-1g.10gb.me`` and ``1g.10gb+me`` give ``1g.10gb+me``. Names are
    case-sensitive, as Kubernetes resource names are (``nvidia.com/mig-1G.10GB`` is no MIG
    resource the device plugin advertises: None). Only the shape is checked: whether a GPU offers
    the profile is :func:`gpu_models_offering`'s business.
    """
    if not isinstance(resource_or_profile_name, str):
        return None
    name = resource_or_profile_name.strip()
    if name.startswith(_RESOURCE_PREFIX):
        name = name[len(_RESOURCE_PREFIX):]
        if not name.startswith("mig-"):
            return None
    name = name.removeprefix("mig-")
    parsed = _parse(name)
    return None if parsed is None else parsed[2]


def is_mig_resource(resource: str) -> bool:
    """``nvidia.com/mig-<anything>``: the device plugin's mixed-strategy namespace (valid or not)."""
    return isinstance(resource, str) and resource.startswith("nvidia.com/mig-")


def profiles_for(gpu_model: str) -> dict[str, MigProfile]:
    """The MIG profiles a GPU model offers (empty for a model without MIG or not in the catalogue)."""
    return dict(MIG_GPUS.get(gpu_model, {}))


def gpu_models_offering(profile: str) -> frozenset[str]:
    """The GPU models that offer a profile (a profile or resource name; empty if none)."""
    name = normalise_profile(profile)
    return _OFFERING.get(name, frozenset()) if name else frozenset()


def models_for_device_id(device_id: str) -> frozenset[str] | None:
    """The GPU models a PCI device ID (a mig-parted ``device-filter`` value, ``0x20B010DE``)
    stands for; an empty set for a GPU the catalogue knows by ID but does not model (B200,
    B300, GH200 144G), None for an ID it does not know."""
    if not isinstance(device_id, str):
        return None
    return _DEVICE_IDS.get(device_id.strip().lower())


def is_known_profile(profile: str) -> bool:
    """A profile name NVIDIA's catalogue (mig-parted) ships, whether attributed to a GPU here or not."""
    name = normalise_profile(profile)
    return name is not None and name in _KNOWN


def is_mig_capable(gpu_model: str) -> bool | None:
    """True for a model in ``MIG_GPUS``, False for a known non-MIG model (T4, V100, A10, MI300X), else None."""
    if gpu_model in MIG_GPUS:
        return True
    if gpu_model in _NOT_MIG:
        return False
    return None


def compute_slices(gpu_model: str) -> int | None:
    """Compute slices of one GPU of the model (7; 4 on A30 and RTX PRO 6000), None if unknown."""
    spec = _META.get(gpu_model)
    return None if spec is None else int(spec["compute_slices"])


def balanced_layout(gpu_model: str) -> dict[str, int]:
    """The model's mig-parted ``all-balanced`` layout on one GPU (empty if unknown)."""
    spec = _META.get(gpu_model)
    return dict(spec["balanced"]) if spec else {}


def aks_instance_profile(gpu_model: str, value: str) -> MigProfile | None:
    """The profile AKS's ``--gpu-instance-profile`` (``MIG1g`` ... ``MIG7g``) gives on a model.

    The ``<n>g`` profile with the most instances per GPU, without media extensions (for A100 40GB:
    MIG1g = 1g.5gb x7, documented; for the other models the same pattern is inferred, as the facts
    say). None for an unknown value, a model without MIG or one with no ``<n>g`` profile.
    """
    match = re.fullmatch(r"MIG([1-9])g", value or "")
    if match is None:
        return None
    g = int(match.group(1))
    candidates = [
        p for p in MIG_GPUS.get(gpu_model, {}).values()
        if p.compute_slices == g and "+" not in p.name and "-" not in p.name
    ]
    if not candidates:
        return None
    return max(candidates, key=lambda p: (p.max_instances, -p.memory_gb))


def layout_problems(gpu_model: str, devices: Mapping[str, int]) -> list[str]:
    """What makes a one-GPU layout (profile -> count) impossible on a model; empty when none found.

    Each problem reads after the model's name: ``"holds at most 7 x 1g.10gb, not 8"``,
    ``"offers no 3g.40gb"``, ``"has 7 compute slices, the layout uses 8"``.

    Checked: every profile is offered by the model; no profile exceeds its own maximum count; at
    most one media-extension (``+me``) instance; the compute slices add up to no more than the
    GPU's. These are necessary conditions, not sufficient ones: NVIDIA's placement rules (which
    memory slices each instance occupies) are not in the catalogue. Counts must be ints (callers
    report non-integers themselves); a zero count is ignored.
    """
    offered = MIG_GPUS.get(gpu_model)
    if offered is None:
        return ["is not a MIG GPU in the catalogue"]
    problems: list[str] = []
    slices = 0
    media = 0
    exceeded = False
    for raw, count in devices.items():
        name = normalise_profile(raw) or raw
        if count <= 0:
            continue
        profile = offered.get(name)
        if profile is None:
            problems.append(f"offers no {name}")
            continue
        if count > profile.max_instances:
            problems.append(f"holds at most {profile.max_instances} x {name}, not {count}")
            exceeded = True
        slices += profile.compute_slices * count
        if profile.media_extensions:
            media += count
    if media > 1:
        problems.append(f"holds at most one media-extension (+me) instance, not {media}")
    total = compute_slices(gpu_model)
    if total is not None and slices > total and not exceeded:
        problems.append(f"has {total} compute slices, the layout uses {slices}")
    return problems


# ---------------------------------------------------------------------------------------------
# mig-parted configs carried in ConfigMaps (the GPU Operator's MIG Manager reads them there)


def parse_embedded_yaml(text: str):
    """A YAML document held in a string (a ConfigMap value), as a positioned tree whose spans
    count from the string's first line; None when it is not one YAML document."""
    from mlops_lint.sources import yaml_k8s  # the project's one YAML reader: same scalars, same bounds

    return yaml_k8s.compose_tree(text)


def is_mig_parted_config(tree) -> bool:
    """A mig-parted config: a mapping with a ``mig-configs`` mapping."""
    return isinstance(tree, dict) and isinstance(tree.get("mig-configs"), dict)


def mig_parted_configs(obj) -> tuple:
    """``(data, key, text, tree)`` for each value of a ConfigMap ``obj`` that is a mig-parted
    config: parsed once per object and run (GPU008 checks the layouts, GPU012 looks pods'
    layouts up in them)."""
    from mlops_lint.model.memo import once

    def parse() -> tuple:
        data = obj.body.get_map("data")
        if data is None:
            return ()
        found = []
        for key, text in data.items():
            if not isinstance(text, str) or "mig-configs" not in text:
                continue
            tree = parse_embedded_yaml(text)
            if is_mig_parted_config(tree):
                found.append((data, key, text, tree))
        return tuple(found)

    return once(obj, "mig-parted-configs", parse)
