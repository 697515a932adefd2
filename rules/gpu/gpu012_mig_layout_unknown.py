"""A pod selects a MIG layout the project's mig-parted config does not define, or one without the profile it requests.

## What it does
When the project holds a mig-parted config (a ConfigMap value that is a `config.yaml` with
`mig-configs:`, the file MIG Manager applies), reads the layouts it defines and, for each, the MIG
profiles its enabled device groups create (`mig-devices` with a count above 0; none for a layout
with `mig-enabled: false`). It then flags a pod template that selects
`nvidia.com/mig.config: <layout>` (in `nodeSelector`, or in a required node-affinity `In`
expression of every term) when

- no mig-parted config of the project defines `<layout>`, or
- the layout is defined, but creates no instance of a MIG profile the pod's containers request
  or limit (`nvidia.com/mig-<profile>`).

The finding points at the selected value (or at `affinity`) and lists the layouts the project
defines. Layout names starting with `all-` that the project does not define (NVIDIA's default
catalogue: `all-disabled`, `all-balanced`, `all-1g.10gb` …) and templated values are not judged,
nor a layout a device group of which cannot be read (a templated or non-numeric count).

## Why is this bad?
MIG Manager partitions a node's GPUs only into a layout its config defines: a node labelled with
an unknown layout gets `nvidia.com/mig.config.state: failed` and no MIG devices, and a pod that
selects that label, or a layout without its profile, finds no node with
`nvidia.com/mig-<profile>` allocatable and stays `Pending`. The article's MIG section defines
`hptuning-1g10gb` in the `mig-parted-config` ConfigMap and selects exactly that layout in the
trial Job that requests `nvidia.com/mig-1g.10gb`, and says to "confirm that the requested profile
exists in node allocatable resources before submitting jobs".

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: mig-parted-config
  namespace: gpu-operator
data:
  config.yaml: |
    version: v1
    mig-configs:
      hptuning-1g10gb:
      - devices: all
        mig-enabled: true
        mig-devices:
          "1g.10gb": 7
---
apiVersion: batch/v1
kind: Job
metadata:
  name: mig-hyperparameter-trial
spec:
  template:
    spec:
      nodeSelector:
        nvidia.com/mig.config: hptuning-1g10gb-v2
      containers:
      - name: trial
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/mig-1g.10gb: 1
```

Use instead:
```yaml
      nodeSelector:
        nvidia.com/mig.config: hptuning-1g10gb
```

## Known problems
Every mig-parted config of the project counts, whichever one the ClusterPolicy's
`migManager.config.name` names (a project may keep one per cluster). NVIDIA's default layouts
(`all-…`) are taken to exist, although a custom config replaces the default one. A pod that
requests no MIG profile is only checked for the layout's name. `nvidia.com/mig.config` given as
a preferred affinity is not read. A project whose root is neither a git work tree nor holds a
config file (repositories copied side by side and linted by path) is judged one top-level folder
at a time: a config governs the pods of its folder only (see `linter.model.locality`).

## References
- NVIDIA GPU Operator, MIG Manager and custom configs: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
- NVIDIA mig-parted, config format: https://github.com/NVIDIA/mig-parted
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.mig import is_mig_resource, mig_parted_configs, normalise_profile
from mlops_lint.model.position import Span
from mlops_lint.rule import PROJECT, Finding, rule
from mlops_lint.suggest import close_matches

LABEL = "nvidia.com/mig.config"
LISTED = 5


class Layouts(Struct, frozen=True):
    """The layouts of one mig-parted config: name -> profiles it creates (None: not readable)."""

    where: str
    layouts: dict
    path: str  # the file that holds it (linter.model.locality: which pods it governs)


class Selection(Struct, frozen=True):
    """A pod template selecting MIG layouts, and the MIG profiles its containers ask for."""

    obj: ObjectStub
    span: Span
    node: tuple
    values: tuple
    profiles: tuple


def _profiles(groups) -> frozenset[str] | None:
    if not isinstance(groups, list):
        return None
    found: set[str] = set()
    for group in groups:
        if not isinstance(group, dict):
            return None
        enabled = group.get("mig-enabled")
        if enabled is False:
            continue
        devices = group.get("mig-devices")
        if enabled is not True or not isinstance(devices, dict):
            return None
        for key, count in devices.items():
            profile = normalise_profile(str(key))
            if profile is None or isinstance(count, bool) or not isinstance(count, int):
                return None
            if count > 0:
                found.add(profile)
    return frozenset(found)


def _config_layouts(obj):
    for data, key, _, tree in mig_parted_configs(obj):
        layouts = {str(name): _profiles(groups) for name, groups in tree["mig-configs"].items()}
        yield Layouts(f"ConfigMap `{obj.name}` ({obj.path}:{data.key_span(key).line})", layouts, obj.path)


def _selection(pod) -> tuple[tuple, Span, tuple] | None:
    """(values, span, node) of the pod's ``nvidia.com/mig.config`` selection, or None."""
    selector = pod.spec.get_map("nodeSelector")
    if selector is not None and isinstance(selector.get(LABEL), str):
        return (selector[LABEL],), selector.value_span(LABEL), pod.path + ("nodeSelector", LABEL)
    terms = pod.placement.terms
    if not terms or pod.placement.unknown_terms:
        return None
    values: list[str] = []
    for term in terms:
        found = [r for r in term if r.key == LABEL and r.operator == "In"]
        if not found:
            return None  # a term that does not pin the layout: the pod may land elsewhere
        values.extend(v for v in found[0].values if v not in values)
    return tuple(values), pod.spec.key_span("affinity"), pod.path + ("affinity",)


def mig_layout_facts(obj, ctx):
    """The facts GPU012 collects from every file: mig-parted configs, pods that select a layout."""
    if obj.kind == "ConfigMap":
        yield from _config_layouts(obj)
        return
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    for pod in workload.pods:
        selection = _selection(pod)
        if selection is None:
            continue
        values, span, node = selection
        profiles = []
        for container in pod.containers:
            for entries in (container.requests, container.limits):
                for name in entries:
                    if is_mig_resource(name) and (profile := normalise_profile(name)) and profile not in profiles:
                        profiles.append(profile)
        yield Selection(obj.stub(), span, node, values, tuple(profiles))


def _names(names: list[str]) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:LISTED])
    return shown + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")


@rule(code="GPU012", name="mig-layout-unknown", severity="error", scope=PROJECT, collect=mig_layout_facts,
      tags=("gpu", "mig"))
def check(found, ctx):
    every = [fact for fact in found if isinstance(fact, Layouts)]
    if not every:
        return
    selections = sorted((f for f in found if isinstance(f, Selection)),
                        key=lambda s: (s.obj.path, s.span.line, s.span.col))
    unit = unit_of(ctx.index, ctx.config, [*(s.obj.path for s in selections), *(c.path for c in every)])
    judged: dict[str, tuple | None] = {}  # a selection's unit -> its configs' layouts (None: no config there)
    for selection in selections:
        key = unit(selection.obj.path)
        if key not in judged:
            configs = [config for config in every if together(unit, config.path, selection.obj.path)]
            judged[key] = _merged(configs) if configs else None
        if judged[key] is not None:
            yield from _judge(selection, *judged[key])


def _merged(configs: list[Layouts]) -> tuple[dict, str]:
    """The layouts of ``configs`` together (a layout one of them cannot read: None), and where they are."""
    layouts: dict[str, frozenset | None] = {}
    for config in configs:
        for name, profiles in config.layouts.items():
            if name in layouts and (layouts[name] is None or profiles is None):
                layouts[name] = None  # one definition not readable: the layout is not judged
            else:
                layouts[name] = profiles if name not in layouts else layouts[name] | profiles
    return layouts, "; ".join(sorted({c.where for c in configs})[:3])


def _judge(selection: Selection, layouts: dict, where: str):
    """GPU012's findings on one pod selection, against the layouts of the configs that govern it."""
    defined = sorted(layouts)
    values = [v for v in selection.values if isinstance(v, str)]
    if not values or any(is_templated(v) or (v.startswith("all-") and v not in layouts) for v in values):
        return
    known = [v for v in values if v in layouts]
    shown = " or ".join(f"`{v}`" for v in values)
    if not known:
        fitting = [n for n in defined if layouts[n] is not None and set(selection.profiles) <= layouts[n]]
        close = close_matches(values[0], fitting, n=1, cutoff=0.6)
        affinity = selection.node[-1] == "affinity"
        hint = (f"values: [{close[0]}]" if affinity else f"{LABEL}: {close[0]}") if close else None
        yield Finding(selection.span,
                      f"pods select MIG layout {shown} (`{LABEL}`), which no mig-parted config of the project "
                      f"defines ({where}: {_names(defined)}): MIG Manager fails on such a node and no "
                      "MIG device is created, so the pods stay Pending",
                      obj=selection.obj, node=selection.node,
                      fix=hint or f"select a layout of the config ({_names(defined)})")
        return
    if any(layouts[v] is None for v in known):
        return
    offered = frozenset().union(*(layouts[v] for v in known))
    missing = [p for p in selection.profiles if p not in offered]
    if missing:
        creates = ("only " + ", ".join(f"`{p}`" for p in sorted(offered)) + " instances") if offered \
            else "no MIG instance"
        yield Finding(selection.span,
                      f"pods select MIG layout {shown}, which creates {creates}, but request "
                      + ", ".join(f"`nvidia.com/mig-{p.replace('+', '.')}`" for p in missing)
                      + f" ({where}): no node with this layout offers it, so the pods stay Pending",
                      obj=selection.obj, node=selection.node,
                      fix="select a layout that creates the profile, or request a profile of this layout")
