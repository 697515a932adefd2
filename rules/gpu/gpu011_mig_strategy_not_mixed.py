"""A pod requests a named MIG profile while the project runs the device plugin with another MIG strategy than `mixed`.

## What it does
Collects, across the project, the MIG strategy the project states for the NVIDIA device plugin:

- a GPU Operator `ClusterPolicy` (`nvidia.com/v1`) with `spec.mig.strategy`;
- a device-plugin DaemonSet (the standalone plugin, or the operator's rendered one) whose plugin
  container passes `--mig-strategy=<value>` (or `--mig-strategy <value>`) or sets the
  `MIG_STRATEGY` environment variable to a literal value;

and flags every workload whose container requests or limits a named MIG profile
(`nvidia.com/mig-<profile>`) when a stated strategy is `single` or `none` and none is `mixed`.
A project that states no strategy is not judged (the operator's default is `single`, but a
project without a ClusterPolicy may install the plugin with Helm elsewhere). The finding points
at the first `nvidia.com/mig-…` resource of each workload and names where the strategy is set.

## Why is this bad?
Only the device plugin's `mixed` strategy advertises each MIG profile as its own resource,
`nvidia.com/mig-1g.10gb`. With `single` every MIG instance of a node is advertised as
`nvidia.com/gpu`, and with `none` MIG devices are not advertised at all: no node ever has
`nvidia.com/mig-<profile>` in its allocatable resources, so the pod stays `Pending` for good
(`Insufficient nvidia.com/mig-1g.10gb`). The article's MIG section says to "use the mixed MIG
strategy when workloads request named MIG profiles", and to "confirm that the requested profile
exists in node allocatable resources before submitting jobs".

## Example
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  mig:
    strategy: single
---
apiVersion: batch/v1
kind: Job
metadata:
  name: mig-hyperparameter-trial
spec:
  template:
    spec:
      containers:
      - name: trial
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/mig-1g.10gb: 1
```

Use instead:
```yaml
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata:
  name: cluster-policy
spec:
  mig:
    strategy: mixed
```

## Known problems
The strategy given as Helm values (`migStrategy` of the device-plugin chart, `mig.strategy` of
the GPU Operator chart) or in the device plugin's config file is read only once the chart is
rendered into the ClusterPolicy or the DaemonSet. A project that states `mixed` in one place and
`single` in another is not judged (the files may be alternatives). A cluster running two
strategies on different nodes (one plugin DaemonSet per node group) is not modelled: any stated
`mixed` silences the rule. AKS-managed MIG node pools (`--gpu-instance-profile`) do not state a
strategy and are not read. A project is one cluster to the rule when its root is a git work tree or holds a config file;
a folder that is neither (repositories copied side by side and linted by path) is judged one
top-level folder at a time: a strategy stated in one of them governs only the requests of that
folder (one stated in a file directly in the top governs all), see `linter.model.locality`.

## References
- NVIDIA GPU Operator, MIG support (`mig.strategy`): https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-mig.html
- NVIDIA k8s-device-plugin, MIG strategies (`--mig-strategy`, `MIG_STRATEGY`): https://github.com/NVIDIA/k8s-device-plugin#configuration-option-details
- AKS, MIG node pools: https://learn.microsoft.com/azure/aks/gpu-multi-instance
"""

from __future__ import annotations

from msgspec import Struct

from mlops_lint.model.document import ObjectStub
from mlops_lint.model.k8s import is_templated
from mlops_lint.model.locality import together, unit_of
from mlops_lint.model.mig import is_mig_resource
from mlops_lint.model.nvidia import device_plugin_containers, gpu_operator_policies, is_device_plugin
from mlops_lint.model.position import Span
from mlops_lint.rule import PROJECT, Finding, rule

STRATEGIES = ("none", "single", "mixed")
FLAG = "--mig-strategy"


class MigRequest(Struct, frozen=True):
    """A workload's first named MIG profile: where it is, and which resource."""

    obj: ObjectStub
    span: Span
    node: tuple
    resource: str
    container: str


class StatedStrategy(Struct, frozen=True):
    """A MIG strategy the project states: the value, and where (for the message)."""

    value: str
    where: str
    path: str  # the file that states it (linter.model.locality: which requests it governs)


def _strategy(text) -> str | None:
    if not isinstance(text, str):
        return None
    value = text.strip().strip("'\"").lower()
    return value if value in STRATEGIES else None


def _plugin_strategies(workload, obj):
    for container in device_plugin_containers(workload):
        stated = None
        words = container.command_strings
        for position, word in enumerate(words):
            if word == FLAG and position + 1 < len(words):
                stated = _strategy(words[position + 1]) or stated
            elif word.startswith(FLAG + "="):
                stated = _strategy(word[len(FLAG) + 1:]) or stated
        where = f"`{FLAG}` of DaemonSet `{obj.name}` ({obj.path}:{obj.span.line})"
        if stated is None:  # the plugin reads its flags from the environment when no flag is given
            var = container.env_value("MIG_STRATEGY")
            stated = _strategy(var.value) if var is not None and not var.from_ref else None
            where = f"`MIG_STRATEGY` of DaemonSet `{obj.name}` ({obj.path}:{var.value_span.line if var else obj.span.line})"
        if stated is not None:
            yield StatedStrategy(stated, where, obj.path)


def mig_facts(obj, ctx):
    """The facts GPU011 collects from every file: device plugins' strategies, workloads' MIG requests."""
    workload = ctx.index.workload(obj)
    if workload is None:
        return
    if is_device_plugin(workload):
        yield from _plugin_strategies(workload, obj)
        return
    for pod in workload.pods:
        if not pod.uses_gpu:
            continue  # a MIG resource is a GPU resource: decided once per pod
        for container in pod.containers:
            for section, entries in (("requests", container.requests), ("limits", container.limits)):
                for name, resource in entries.items():
                    if is_mig_resource(name) and not is_templated(name):
                        yield MigRequest(obj.stub(), resource.key_span, container.path + ("resources", section, name),
                                         name, container.name)
                        return  # one finding per workload: its first MIG resource


def _policy_strategies(index):
    for policy in gpu_operator_policies(index):
        spec = policy.body.get_map("spec")
        mig = spec.get_map("mig") if spec is not None else None
        value = _strategy(mig.get("strategy")) if mig is not None else None
        if value is not None:
            line = mig.value_span("strategy").line
            yield StatedStrategy(value, f"`spec.mig.strategy` of ClusterPolicy `{policy.name}` ({policy.path}:{line})",
                                 policy.path)


@rule(code="GPU011", name="mig-strategy-not-mixed", severity="error", scope=PROJECT, collect=mig_facts,
      tags=("gpu", "mig", "device-plugin"))
def check(found, ctx):
    requests = [fact for fact in found if isinstance(fact, MigRequest)]
    if not requests:
        return
    every = [fact for fact in found if isinstance(fact, StatedStrategy)] + list(_policy_strategies(ctx.index))
    if not every:
        return
    unit = unit_of(ctx.index, ctx.config, [*(r.obj.path for r in requests), *(f.path for f in every)])
    said_in: dict[str, str | None] = {}  # a request's unit -> what the strategies there say (None: nothing to report)
    for request in sorted(requests, key=lambda r: (r.obj.path, r.span.line, r.span.col)):
        key = unit(request.obj.path)
        if key not in said_in:
            said_in[key] = _said([fact for fact in every if together(unit, fact.path, request.obj.path)])
        said = said_in[key]
        if said is None:
            continue
        yield Finding(request.span,
                      f"container `{request.container}` asks for `{request.resource}`, but the project sets the device "
                      f"plugin's MIG strategy to {said}: only the `mixed` strategy advertises named MIG profiles, so "
                      "no node ever offers this resource and the pod stays Pending",
                      obj=request.obj, node=request.node,
                      fix="set the MIG strategy to `mixed` (ClusterPolicy `spec.mig.strategy`, the plugin's "
                          "`--mig-strategy`/`MIG_STRATEGY`), or request `nvidia.com/gpu` on single-strategy nodes")


def _said(stated: list[StatedStrategy]) -> str | None:
    """How a message names the strategies that govern a request, or None when none is stated or
    one says `mixed` (alternatives: not judged)."""
    if not stated or any(fact.value == "mixed" for fact in stated):
        return None
    values = " and ".join(f"`{value}`" for value in sorted({fact.value for fact in stated}, key=STRATEGIES.index))
    wheres = sorted({fact.where for fact in stated})
    return f"{values} ({'; '.join(wheres[:3])}{f'; {len(wheres) - 3} more' if len(wheres) > 3 else ''})"
