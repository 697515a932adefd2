"""A device-plugin DaemonSet that may miss GPU nodes, be evicted first, or run with more privilege than it needs.

## What it does
Checks DaemonSets that run the NVIDIA device plugin (image `…/k8s-device-plugin` started as the
plugin, see `linter.model.nvidia`) for what the article's DaemonSet sets, one finding each:

- no toleration `{operator: Exists}` (no key, no effect), which tolerates every taint (not in
  the `aks-automatic` profile, see below);
- `priorityClassName` other than `system-node-critical`;
- a plugin container without `securityContext.allowPrivilegeEscalation: false` (Kubernetes
  allows escalation when it is unset);
- a plugin container whose `securityContext.capabilities.drop` does not hold `ALL`.

A privileged plugin container (`privileged: true`) gets neither of the last two: privileged
overrides escalation and capabilities, and SEC004 reports it, with the advice for node agents,
once for the one cause.

The findings point at the offending value, else the missing field's parent (`tolerations:`,
`securityContext:`, the container's `name:`, the pod template's `spec:`).

In the `aks-automatic` profile (given, or inferred from the project's cluster) the catch-all
toleration is not demanded: `kube-system`, where the article installs the plugin, is managed and
write-protected on AKS Automatic, and its Deployment Safeguards restrict wildcard tolerations;
a plugin there tolerates the GPU NodePools' own taints (NAP002 judges the GPU pods against them).
The other three checks stay.

## Why is this bad?
The device plugin is what makes a node's GPUs schedulable ("Confirm that nvidia.com/gpu appears
under each GPU node's allocatable resources"). If it does not tolerate a pool's taints it never
runs there, and the GPUs of that pool are invisible: the article asks that platform DaemonSets,
"the device plugin" among them, "tolerate the GPU taint", and its DaemonSet tolerates every
taint (`- operator: Exists`), including the `NoExecute` taints that would evict it.
`system-node-critical` keeps it from being preempted or evicted before the workloads that
depend on it. It needs only the kubelet's device-plugin socket directory, so the article runs it
with `allowPrivilegeEscalation: false` and every capability dropped.

## Example
```yaml
    spec:
      tolerations:
      - key: sku
        operator: Exists
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
```

Use instead:
```yaml
    spec:
      priorityClassName: system-node-critical
      tolerations:
      - operator: Exists
      containers:
      - name: nvidia-device-plugin
        image: nvcr.io/nvidia/k8s-device-plugin:v0.17.1
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: ["ALL"]
```

## Fix safety
Each finding has its own fix.

- Missing toleration: safe. The fix appends `{operator: Exists}` to the pod's `tolerations`
  (creating the list), the article's toleration; the nodeSelector still decides which nodes
  run the plugin, and tolerating their taints is the finding's intent.
- Priority class: safe. The fix sets `priorityClassName: system-node-critical` (adding it or
  replacing another class), the article's value for a DaemonSet without which the node's GPUs
  are invisible.
- Privilege escalation and capabilities: unsafe, as SEC001's and SEC002's fixes are
  (`allowPrivilegeEscalation: false`; `ALL` added to `capabilities.drop`): the article's plugin
  needs neither, but a plugin build that manages MIG or CDI devices may (see Known problems).

## Known problems
- DaemonSets the GPU Operator renders itself (they select `nvidia.com/gpu.deploy.device-plugin`)
  are configured through the ClusterPolicy (`daemonsets.tolerations`,
  `daemonsets.priorityClassName`) and are not checked here.
- Plugins that manage MIG or CDI devices on some hosts need more privilege; suppress the
  security findings with a reason there.

## References
- NVIDIA k8s-device-plugin, deployment manifest: https://github.com/NVIDIA/k8s-device-plugin
- Kubernetes, Guaranteed scheduling for critical add-on pods: https://kubernetes.io/docs/tasks/administer-cluster/guaranteed-scheduling-critical-addon-pods/
- Kubernetes, Security context: https://kubernetes.io/docs/tasks/configure-pod-container/security-context/
"""

from mlops_lint.fix import AppendItem
from mlops_lint.fix.plans import drop_all_capabilities, no_privilege_escalation, plan, set_path
from mlops_lint.model.nvidia import device_plugin_containers, is_device_plugin, is_operator_operand
from mlops_lint.model.security import is_privileged
from mlops_lint.rule import Finding, Kind, rule

CRITICAL = "system-node-critical"


def _tolerates_everything(pod) -> bool:
    return any(
        not t.get("key") and t.get("operator") == "Exists" and not t.get("effect") for _, t in pod.tolerations
    )


def _tolerate_all(pod):
    tolerations = pod.spec.get("tolerations")
    if tolerations is not None and not isinstance(tolerations, list):
        return None
    return plan("add `tolerations: [{operator: Exists}]`", AppendItem(pod.spec, "tolerations", {"operator": "Exists"}))


def _pod_findings(pod, automatic: bool):
    spec = pod.spec
    if not automatic and not _tolerates_everything(pod):
        span = spec.kspans.get("tolerations", pod.span)
        yield Finding(span, f"device-plugin DaemonSet `{pod.obj.name}` does not tolerate every taint: it does not run "
                      "on GPU nodes whose taints it misses, and their GPUs stay unschedulable",
                      node=pod.path + ("tolerations",), fix="add `tolerations: [{operator: Exists}]`",
                      autofix=_tolerate_all(pod))
    priority = pod.priority_class_name
    if priority != CRITICAL:
        span = spec.vspans["priorityClassName"] if "priorityClassName" in spec else pod.span
        has = f"runs at priority class `{priority}`" if priority else "has no priorityClassName"
        yield Finding(span, f"device-plugin DaemonSet `{pod.obj.name}` {has}: it can be preempted or evicted "
                      f"before the GPU pods that depend on it", node=pod.path + ("priorityClassName",),
                      fix=f"set `priorityClassName: {CRITICAL}`",
                      autofix=plan(f"set `priorityClassName: {CRITICAL}`",
                                   set_path(spec, ("priorityClassName",), CRITICAL)))


def _container_findings(container):
    who = f"device-plugin container `{container.name}`"
    context = container.security_context
    base = container.path + ("securityContext",)
    if is_privileged(container):
        return  # privileged overrides both fields below: SEC004's finding alone
    if context is None or context.get("allowPrivilegeEscalation") is not False:
        if context is not None and "allowPrivilegeEscalation" in context:
            span = context.value_span("allowPrivilegeEscalation")
        else:
            span = container.body.kspans.get("securityContext", container.span)
        setting = "true" if context is not None and context.get("allowPrivilegeEscalation") is True else "unset"
        yield Finding(span, f"{who} allows privilege escalation (allowPrivilegeEscalation is {setting}): a "
                      "process in it can gain more privileges than its parent (setuid binaries, file capabilities)",
                      node=base + ("allowPrivilegeEscalation",), fix="set `allowPrivilegeEscalation: false`",
                      autofix=no_privilege_escalation(container))
    capabilities = context.get_map("capabilities") if context is not None else None
    drop = capabilities.get("drop") if capabilities is not None else None
    if not (isinstance(drop, list) and any(str(c).upper() == "ALL" for c in drop)):
        if capabilities is not None and "drop" in capabilities:
            span = capabilities.value_span("drop")
        elif capabilities is not None:
            span = context.kspans["capabilities"]
        else:
            span = container.body.kspans.get("securityContext", container.span)
        kept = (f"drops only {', '.join(map(str, drop))}" if isinstance(drop, list) and drop
                else "drops no capabilities")
        yield Finding(span, f"{who} {kept}: it keeps the runtime's default capabilities, which it does not need",
                      node=base + ("capabilities", "drop"), fix="set `capabilities: {drop: [ALL]}`",
                      autofix=drop_all_capabilities(container))


@rule(code="GPU010", name="device-plugin-unhardened", severity="warning", scope=Kind("DaemonSet"),
      tags=("gpu", "device-plugin", "security"))
def check(obj, ctx):
    workload = ctx.index.workload(obj)
    if not is_device_plugin(workload) or is_operator_operand(workload):
        return
    automatic = getattr(ctx.config, "profile", None) == "aks-automatic"  # wildcard tolerations restricted there
    for pod in workload.pods:
        yield from _pod_findings(pod, automatic)
    for container in device_plugin_containers(workload):
        yield from _container_findings(container)
