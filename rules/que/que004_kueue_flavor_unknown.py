"""A ClusterQueue (or Cohort) gives quota to a ResourceFlavor the project does not define.

## What it does
Flags every `resourceGroups[].flavors[].name` of a Kueue `ClusterQueue` or `Cohort` that names
no `ResourceFlavor` of the project (ResourceFlavors are cluster-scoped: any of that name counts).
The finding points at the flavor's name and suggests the closest ResourceFlavor name.

This is a reference rule: it runs only when the project defines at least one ResourceFlavor.

## Why is this bad?
The flavor ties quota to nodes: the article's GPU quota sits on "a GPU ResourceFlavor associated
with nodes labeled accelerator=nvidia". When a flavor named in a ClusterQueue does not exist,
Kueue sets the ClusterQueue's `Active` condition to false (`FlavorNotFound`) and admits nothing
from it, so every team queue behind it stops, not only the jobs that wanted that flavor.

## Example
```yaml
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-gpu
spec:
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: nvidia-a100
```

Use instead:
```yaml
    flavors:
    - name: nvidia-gpu        # the ResourceFlavor of the project
```

## Known problems
ResourceFlavors created outside the project are unknown to the linter: add their manifests to
the project, or suppress the finding.

## References
- Kueue, ResourceFlavor: https://kueue.sigs.k8s.io/docs/concepts/resource_flavor/
- Kueue, ClusterQueue (flavors and resources): https://kueue.sigs.k8s.io/docs/concepts/cluster_queue/#flavors-and-resources
"""

from mlops_lint.model.kueue import flavor_refs, has_kueue_kind, is_kueue, kueue_name_set, kueue_names
from mlops_lint.rule import Finding, Kind, rule
from mlops_lint.suggest import close_matches


@rule(code="QUE004", name="kueue-flavor-unknown", severity="error", scope=Kind("ClusterQueue", "Cohort"),
      tags=("queues", "kueue"))
def check(obj, ctx):
    if not is_kueue(obj) or not has_kueue_kind(ctx.index, "ResourceFlavor"):
        return
    known = kueue_names(ctx.index, "ResourceFlavor")
    for ref in flavor_refs(obj):
        if ref.name in kueue_name_set(ctx.index, "ResourceFlavor"):
            continue
        close = ctx.index.memo(("QUE004-close", ref.name),  # once per name
                               lambda: close_matches(ref.name, known))
        hint = f"; did you mean `{close[0]}`?" if close else \
            f"; the project defines {', '.join(f'`{n}`' for n in known[:4])}"
        effect = ("Kueue marks the ClusterQueue inactive (FlavorNotFound) and admits nothing from it"
                  if obj.kind == "ClusterQueue" else "no workload can be assigned a flavor that does not exist, so "
                  "that quota is never usable")
        yield Finding(
            ref.span,
            f"{obj.kind} `{obj.name}` gives quota to ResourceFlavor `{ref.name}`, which the project does not "
            f"define: {effect}{hint}",
            node=ref.node,
            fix=f"name: {close[0]}" if close else None,
        )
