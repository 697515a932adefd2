"""A workload queued to Kueue whose integration the project's Kueue Configuration does not enable.

## What it does
Reads the project's Kueue manager `Configuration` (`apiVersion: config.kueue.x-k8s.io/v1beta1`
or `v1beta2`, `kind: Configuration`): as a document of its own (Kueue's
`controller_manager_config.yaml`, which kustomize turns into a ConfigMap), or as a string value of
a ConfigMap (`data.controller_manager_config.yaml`, the installed manifests' `kueue-manager-config`).
Its `integrations.frameworks` lists the job types Kueue manages; when it lists none (no
`integrations`, or an empty list), Kueue enables only `batch/job`. `integrations.externalFrameworks`
(`Kind.version.group`) counts too.

Then flags every workload that carries the `kueue.x-k8s.io/queue-name` label (or the older
annotation) and whose framework, under Kueue's own integration name, is not enabled:
`batch/job` (a Job, and a CronJob's Jobs), `kubeflow.org/pytorchjob`, `kubeflow.org/tfjob`,
`kubeflow.org/mpijob`, `kubeflow.org/xgboostjob`, `kubeflow.org/paddlejob`, `kubeflow.org/jaxjob`,
`trainer.kubeflow.org/trainjob`, `jobset.x-k8s.io/jobset`, `ray.io/rayjob`, `ray.io/raycluster`,
`workload.codeflare.dev/appwrapper`, `pod`, `deployment`, `statefulset`,
`leaderworkerset.x-k8s.io/leaderworkerset`. The finding points at the queue-name value and names
the Configuration's file and line.

Judged only when the project holds a Configuration: without one, which integrations the
installed Kueue enables is not known here. A Configuration whose frameworks are templated or not
a list is not judged. With several Configurations (overlays, test setups), those of the
workload's own file, else of its folder, else all of them are used, and each must leave the
framework out. In a folder of unrelated repositories (no config file, no `.git`), a Configuration
governs only the workloads of its own top-level folder (`linter.model.locality`).

## Why is this bad?
Kueue only manages the job types whose integration is enabled: for any other kind its webhook
does nothing with the queue-name label. A job created with `suspend: true`, as Kueue asks, is
never un-suspended and waits forever; one created running starts at once, outside the team's
ClusterQueue quota, ahead of the queued jobs and without gang admission. The article says to
"install a Kueue version compatible with the Kubernetes version and enable integrations for the
workload types you use" before allocating multi-tenant GPU quota with Kueue.

## Example
```yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: kueue-manager-config
  namespace: kueue-system
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    integrations:
      frameworks:
      - "batch/job"
      - "jobset.x-k8s.io/jobset"
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: bert-finetune
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: team-a-queue
spec:
  runPolicy:
    suspend: true
  pytorchReplicaSpecs:
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - name: trainer
            image: myacr.azurecr.io/bert:1.4.2
            resources:
              limits:
                nvidia.com/gpu: 1
```

Use instead:
```yaml
data:
  controller_manager_config.yaml: |
    apiVersion: config.kueue.x-k8s.io/v1beta1
    kind: Configuration
    integrations:
      frameworks:
      - "batch/job"
      - "jobset.x-k8s.io/jobset"
      - "kubeflow.org/pytorchjob"
```

## Fix safety
No automatic fix: the Configuration belongs to the Kueue installation (often another team's, and
enabling an integration needs that operator's CRDs installed and the Kueue controller restarted).
The hint names the framework to add.

## Known problems
- A Configuration given only as Helm values (`managerConfig.controllerManagerConfigYaml` of the
  Kueue chart) is not read: the rule then stays silent.
- A Configuration read from a ConfigMap value is reported at the line of `frameworks:` inside the
  value when the value is a literal block, else at the value's key.
- Integrations that depend on another (`deployment`, `statefulset` and `leaderworkerset` on
  `pod`) are Kueue's own start-up check, not this rule's.

## References
- Kueue, Installation (the manager configuration): https://kueue.sigs.k8s.io/docs/installation/
- Kueue, Configuration API (`integrations`): https://kueue.sigs.k8s.io/docs/reference/kueue-config.v1beta1/
- Kueue, Run a Kubeflow PyTorchJob: https://kueue.sigs.k8s.io/docs/tasks/run/kubeflow/pytorchjobs/
"""

from __future__ import annotations

from mlops_lint.model.kueue import QUEUE_NAME_KEY, queue_ref
from mlops_lint.model.kueueconfig import (CONFIG_GROUP, FRAMEWORKS, GATED, KueueConfiguration, QueuedWorkload,
                                          configmap_configurations, configuration, left_out)
from mlops_lint.model.locality import unit_of
from mlops_lint.rule import PROJECT, Finding, rule


def integration_facts(obj, ctx):
    """The facts QUE019 collects from every file: Kueue Configurations (their own documents, or
    inside a ConfigMap's value) and the workloads queued to Kueue."""
    if obj.kind == "Configuration":
        if obj.group == CONFIG_GROUP:
            found = configuration(obj.body, "Kueue Configuration", obj.path, lambda span: span.line)
            if found is not None:
                yield found
        return
    if obj.kind == "ConfigMap":
        if obj.group == "":
            yield from configmap_configurations(obj)
        return
    framework = FRAMEWORKS.get((obj.group, obj.kind))
    if framework is None:
        return
    ref = queue_ref(obj)
    if ref is not None:
        yield QueuedWorkload(obj.stub(), ref.span, ref.node, framework, obj.group, ref.name)


def _shown(configs: tuple[KueueConfiguration, ...]) -> str:
    shown = "; ".join(c.where for c in configs[:2])
    return shown + (f"; and {len(configs) - 2} more" if len(configs) > 2 else "")


@rule(code="QUE019", name="kueue-integration-disabled", severity="error", scope=PROJECT, collect=integration_facts,
      tags=("queues", "kueue"))
def check(found, ctx):
    configs = [fact for fact in found if isinstance(fact, KueueConfiguration)]
    if not configs:
        return
    queued = sorted((f for f in found if isinstance(f, QueuedWorkload)),
                    key=lambda w: (w.obj.path, w.span.line, w.span.col))
    if not queued:
        return
    unit = unit_of(ctx.index, ctx.config, [*(w.obj.path for w in queued), *(c.path for c in configs)])
    for workload in queued:
        governing = left_out(configs, unit, workload.obj.path, workload.obj.kind, workload.group, workload.framework)
        if not governing:
            continue
        kind = workload.obj.kind
        effect = "its pods start at once" if workload.framework in GATED else \
            "created suspended it never starts, else it starts at once"
        yield Finding(
            workload.span,
            f"{kind} `{workload.obj.name}` is queued to LocalQueue `{workload.queue}` ({QUEUE_NAME_KEY}), but "
            f"Kueue's `{workload.framework}` integration is not enabled: {_shown(governing)}; Kueue ignores the "
            f"{kind}: {effect}, outside the queue's quota",
            obj=workload.obj, node=workload.node,
            fix=f'add "{workload.framework}" to `integrations.frameworks` of the Kueue Configuration',
        )
