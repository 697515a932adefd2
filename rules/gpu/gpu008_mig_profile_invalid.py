"""A MIG profile, or a mig-parted layout, that no supported GPU can provide.

## What it does
Checks MIG profiles against NVIDIA's catalogue (`linter/data/mig_profiles.json`: the profiles of
A100 40GB/80GB, A30, H100 80GB/NVL/96GB, H200, RTX PRO 6000, GB200 and GB300, each with the most
instances one GPU holds, and every other profile name NVIDIA's mig-parted ships):

- **pod resources**: a container requesting or limiting `nvidia.com/mig-<profile>` whose profile
  is not a MIG profile name, is a name no GPU offers (`nvidia.com/mig-2g.15gb`), or is written
  with `+` (`nvidia.com/mig-1g.10gb+me`: the device plugin advertises `nvidia.com/mig-1g.10gb.me`);
- **mig-parted layouts** in ConfigMaps (a data value holding a mig-parted `config.yaml` with
  `mig-configs`, which MIG Manager applies): for each device group with `mig-enabled: true`,
  a `mig-devices` key that is no profile name or one no GPU offers, a count that is not a whole
  number, and a layout no GPU can hold: profiles of different GPU models mixed, more instances
  of a profile than one GPU holds, more than one media-extension (`+me`) instance, or more
  compute slices than the GPU has (7; 4 on A30 and RTX PRO 6000). A group with a
  `device-filter` is checked against the GPU models of those PCI device IDs; without one,
  against every model offering its profiles (it is valid if one of them can hold it).

## Why is this bad?
"The exact profile names and number of instances depend on the GPU model and memory capacity"
(the article). A pod asking for a profile no node advertises stays Pending forever; a layout
the GPU cannot hold makes MIG Manager fail the reconfiguration (the node's
`nvidia.com/mig.config.state` becomes `failed`) after it has already drained the GPU, so every
pod waiting for the layout's profiles stays Pending too.

## Example
```yaml
data:
  config.yaml: |
    version: v1
    mig-configs:
      hptuning-1g10gb:
      - devices: all
        mig-enabled: true
        mig-devices:
          "1g.10gb": 8
```

Use instead:
```yaml
        mig-devices:
          "1g.10gb": 7
```

## Known problems
- Placement rules beyond the compute-slice sum (which memory slices each instance occupies) are
  not in the catalogue: a layout that passes may still be refused by the GPU. Profiles NVIDIA
  ships for GPUs the catalogue does not model (B200, B300, GH200 144G) are accepted unchecked.
- Positions inside a ConfigMap value assume it is a literal block (`|`) indented two spaces
  more than its key (as `kubectl create configmap` and Helm write it); other value styles are
  reported at the data key.
- Whether a pool's GPUs offer a requested profile is XPL005's business; a pod may request
  several MIG devices, so pod counts are not compared with one GPU's.

## References
- NVIDIA MIG User Guide, supported profiles: https://docs.nvidia.com/datacenter/tesla/mig-user-guide/supported-mig-profiles.html
- NVIDIA mig-parted (config format, default catalogue): https://github.com/NVIDIA/mig-parted
- NVIDIA k8s-device-plugin (MIG resource names): https://github.com/NVIDIA/k8s-device-plugin
"""

from functools import lru_cache

from mlops_lint.model.k8s import is_templated
from mlops_lint.model.mig import (
    MIG_GPUS,
    gpu_models_offering,
    is_known_profile,
    is_mig_resource,
    layout_problems,
    mig_parted_configs,
    models_for_device_id,
    normalise_profile,
)
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.rule import OBJECT, Finding, rule
from mlops_lint.suggest import close_matches

_ALL_PROFILES = sorted({p for profiles in MIG_GPUS.values() for p in profiles})


@lru_cache(maxsize=1024)  # a pure function of the name: the profiles are a constant catalogue
def _suggest(name: str) -> str:
    close = close_matches(name, _ALL_PROFILES, n=3, cutoff=0.6)
    return f" (did you mean {', '.join(close)}?)" if close else ""


@lru_cache(maxsize=1024)  # a pure function of the resource name
def _resource_problem(name: str) -> str | None:
    body = name[len("nvidia.com/mig-"):]
    profile = normalise_profile(name)
    if profile is None:
        return f"`{name}` is not a MIG resource: the device plugin names them nvidia.com/mig-<n>g.<m>gb{_suggest(body)}"
    if "+" in body:
        return f"`{name}` can never be advertised: the device plugin writes `+` as `.` (nvidia.com/mig-{profile.replace('+', '.')})"
    if not is_known_profile(profile):
        return f"no supported GPU offers the MIG profile {profile} (`{name}`){_suggest(profile)}"
    return None


def _pod_findings(workload):
    for pod in workload.pods:
        if not pod.uses_gpu:
            continue  # a MIG resource is a GPU resource: decided once per pod
        for container in pod.containers:
            seen = set()
            for section, entries in (("requests", container.requests), ("limits", container.limits)):
                for name, resource in entries.items():
                    if not is_mig_resource(name) or name in seen or is_templated(name):
                        continue
                    seen.add(name)
                    problem = _resource_problem(name)
                    if problem:
                        yield Finding(resource.key_span, f"{container.kind_label} `{container.name}`: {problem}",
                                      node=container.path + ("resources", section, name))


# ---------------------------------------------------------------------------------------------
# mig-parted layouts in ConfigMaps


class _Place:
    """Maps spans inside a ConfigMap value to the file (a literal block under its key)."""

    def __init__(self, data: YMap, key: str, text: str):
        self.key_span = data.key_span(key)
        value = data.vspans.get(key)
        height = value.end_line - value.line if value is not None else 0
        self.literal = value is not None and height >= 1 and text.count("\n") in (height - 1, height - 2, height)
        self.line, self.col = (value.line, self.key_span.col + 1) if value is not None and self.literal else (0, 0)

    def __call__(self, span: Span) -> Span:
        if not self.literal:
            return self.key_span
        return Span(span.line + self.line, span.col + self.col, span.end_line + self.line, span.end_col + self.col)


def _models(group: YMap) -> tuple[frozenset[str] | None, bool]:
    """(models the group's device-filter names, whether it has one); None: an ID not known."""
    ids = group.get("device-filter")
    if ids is None:
        return None, False
    ids = ids if isinstance(ids, list) else [ids]
    models: set[str] = set()
    for device_id in ids:
        found = models_for_device_id(str(device_id))
        if found is None or not found:
            return None, True
        models |= found
    return frozenset(models), True


def _layout_findings(layout: str, group: YMap, where: _Place, node: tuple):
    devices = group.get_map("mig-devices")
    if group.get("mig-enabled") is not True or devices is None:
        return
    counts: dict[str, int] = {}
    judged = True  # every profile is modelled: the layout as a whole can be checked
    for raw, count in devices.items():
        key = str(raw)
        profile = normalise_profile(key)
        at, key_span = node + ("mig-devices", key), where(devices.key_span(key))
        if profile is None:
            yield Finding(key_span, f"mig-parted layout `{layout}`: `{key}` is not a MIG profile name "
                          f"(<n>g.<m>gb){_suggest(key)}", node=at)
        elif profile != key:
            yield Finding(key_span, f"mig-parted layout `{layout}`: write `{key}` as `{profile}` (mig-parted "
                          "profile names use `+`)", node=at)
        elif not is_known_profile(profile):
            yield Finding(key_span, f"mig-parted layout `{layout}`: no supported GPU offers the MIG profile "
                          f"{profile}{_suggest(profile)}", node=at)
        elif isinstance(count, bool) or not isinstance(count, int) or count < 0:
            yield Finding(where(devices.value_span(key)), f"mig-parted layout `{layout}`: {key} count {count!r} "
                          "is not a whole number of instances", node=at)
        elif gpu_models_offering(profile):
            if count:
                counts[profile] = count
            continue
        judged = False
    if not judged or not counts:
        return
    span = where(devices.value_span(next(iter(counts)))) if len(counts) == 1 else where(group.key_span("mig-devices"))
    filtered, has_filter = _models(group)
    if has_filter:
        if filtered is None:
            return  # a device ID the catalogue does not know (or does not model): cannot judge
        candidates = sorted(filtered)
    else:
        candidates = [m for m in MIG_GPUS if all(p in MIG_GPUS[m] for p in counts)]
        if not candidates:
            owners = "; ".join(f"{p} on {', '.join(sorted(gpu_models_offering(p)))}" for p in counts)
            yield Finding(span, f"mig-parted layout `{layout}` mixes profiles of different GPU models ({owners}): "
                          "no GPU holds them together", node=node + ("mig-devices",))
            return
    problems = {m: layout_problems(m, counts) for m in candidates}
    if any(not found for found in problems.values()):
        return
    by_text: dict[tuple[str, ...], list[str]] = {}
    for model, found in problems.items():
        by_text.setdefault(tuple(found), []).append(model)
    shown = "; ".join(f"{' and '.join(models)}: {', '.join(found)}" for found, models in by_text.items())
    yield Finding(span, f"mig-parted layout `{layout}` does not fit one GPU: {shown}", node=node + ("mig-devices",))


def _configmap_findings(obj):
    for data, key, text, tree in mig_parted_configs(obj):
        where = _Place(data, key, text)
        configs = tree["mig-configs"]
        for layout, groups in configs.items():
            if not isinstance(groups, YSeq):
                continue
            for index, group in groups.maps():
                node = ("data", key, "mig-configs", str(layout), index)
                yield from _layout_findings(str(layout), group, where, node)


@rule(code="GPU008", name="mig-profile-invalid", severity="error", scope=OBJECT, tags=("gpu", "mig"))
def check(obj, ctx):
    if obj.kind == "ConfigMap" and obj.group == "":
        yield from _configmap_findings(obj)
        return
    workload = ctx.index.workload(obj)
    if workload is not None:
        yield from _pod_findings(workload)
