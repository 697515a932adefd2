"""A PyTorchJob whose Master replica type does not run exactly one replica.

## What it does
Flags a Kubeflow `PyTorchJob` (`kubeflow.org`) whose `Master` replica spec sets `replicas` to
anything but 1 (0, 2, …), or leaves `replicas` out. The finding points at the `replicas` value,
else at the `Master:` key. A PyTorchJob without a `Master` (an elastic job of Workers only) is
not flagged.

## Why is this bad?
The Master is rank 0: the training operator points every worker's `MASTER_ADDR` at the single
Master pod, where the rendezvous store listens. The article's PyTorchJob runs "one master and
one worker", and asks to "align replica counts with the number of GPUs and processes required by
the training framework". The training operator's admission webhook rejects a Master whose
`replicas` is not 1 (`spec.pytorchReplicaSpecs[Master].replicas: Forbidden: must be 1`), so the
job is never created; to scale out, add Workers.

## Example
```yaml
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 2
```

Use instead:
```yaml
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
    Worker:
      replicas: 1
```

## Fix safety
A missing `replicas` is safe to fix; a count other than 1 is unsafe.

- No `replicas` on the Master spec: the fix writes `replicas: 1`. Older training operators
  defaulted it to 1 and the current webhook requires it, so the job runs as the operator
  already understood it.
- Another count (`replicas: 2`): the fix sets it to 1. That changes the job's world size (one
  rank fewer per extra master), and the ranks that were meant may have to move to the Worker
  spec (raise its `replicas` by as many): review it, then apply with `--unsafe-fixes`.

## Known problems
A Master without `replicas` is flagged: the webhook of training-operator v1.8 and later rejects
it ("must be 1"), while releases up to v1.7 defaulted it to 1; write `replicas: 1` for both.
The replica type is matched case-insensitively (`master:`), as the operator's defaulting
converts replica type names to `Master`. A `replicas` value that is not an integer (a template
placeholder) is left to schema validation (SCH002).

## References
- Kubeflow Training Operator, PyTorchJob: https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/pytorch/
- training-operator webhook (`validatePyTorchReplicaSpecs`): https://github.com/kubeflow/training-operator/blob/master/pkg/webhooks/pytorch/pytorchjob_webhook.go
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.model.distributed import KUBEFLOW, replica_specs
from mlops_lint.rule import Finding, Kind, rule


@rule(code="DST001", name="pytorchjob-master-count", severity="error", scope=Kind("PyTorchJob"),
      tags=("distributed", "kubeflow"))
def check(obj, ctx):
    if obj.group != KUBEFLOW:
        return
    for replica in replica_specs(obj):
        if replica.role.lower() != "master":
            continue
        replicas = replica.body.get("replicas")
        if "replicas" not in replica.body or replicas is None:
            yield Finding(replica.key_span,
                          f"the {replica.role} replica spec sets no `replicas`: the training operator's webhook "
                          "requires exactly 1 (older operators defaulted it); write `replicas: 1`",
                          node=replica.path, fix="replicas: 1",
                          autofix=plan(f"set `replicas: 1` on the {replica.role} replica spec",
                                       set_path(replica.body, ("replicas",), 1)))
        elif isinstance(replicas, int) and not isinstance(replicas, bool) and replicas != 1:
            yield Finding(replica.body.value_span("replicas"),
                          f"the {replica.role} replica spec runs {replicas} replicas; a PyTorchJob has exactly one "
                          "Master (rank 0, the rendezvous host): set `replicas: 1` and scale with Workers",
                          node=replica.path + ("replicas",), fix="replicas: 1",
                          autofix=plan(f"set `replicas: 1` on the {replica.role} replica spec",
                                       set_path(replica.body, ("replicas",), 1), safe=False))
