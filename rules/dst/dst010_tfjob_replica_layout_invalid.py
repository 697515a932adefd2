"""A TFJob whose replica types TensorFlow or the training operator cannot run together.

## What it does
Reads the replica types of a Kubeflow `TFJob` (`kubeflow.org`, `spec.tfReplicaSpecs`) and flags
the layouts that cannot start or cannot train, each at its replica type or count:

- both a `Chief` and a `Master` (or either twice): the training operator's webhook rejects the
  job ("must not have more than 1 Chief or Master role");
- a `Chief` with `replicas` above 1, or an `Evaluator` with `replicas` above 1:
  TensorFlow's cluster check refuses the `TF_CONFIG` the operator writes ("There must be at most
  one 'chief' job.", "… one 'evaluator' job.");
- `PS` replicas with no replica type that trains (no `Worker`, `Chief` or `Master` with a replica):
  parameter servers only hold variables and wait for workers, so the job never makes progress
  and never completes.

A `replicas` left out counts as 1 (the operator's default); a count that is not an integer (a
template placeholder) is not judged. Replica types are matched case-insensitively, as the
operator's defaulting normalises them (`chief` is `Chief`). Left alone: a job of Workers only
(MultiWorkerMirroredStrategy, the article's example), Chief and Workers without PS, and PS with a
Chief but no Worker (a TF1 Estimator's chief trains on its own).

## Why is this bad?
The article: "For parameter-server training, define Chief, Worker, and PS replica types
according to the TensorFlow distribution strategy." The strategy fixes the layout: at most one
chief (it coordinates, writes checkpoints and summaries), at most one evaluator, and workers that
compute while the parameter servers store variables. A layout outside it is refused when the
job is created (two coordinators) or when TensorFlow reads its cluster (two chiefs, two
evaluators), or it holds its pods and GPUs while nothing trains (parameter servers alone).

## Example
```yaml
apiVersion: kubeflow.org/v1
kind: TFJob
spec:
  tfReplicaSpecs:
    Chief:
      replicas: 2
    PS:
      replicas: 2
```

Use instead:
```yaml
apiVersion: kubeflow.org/v1
kind: TFJob
spec:
  tfReplicaSpecs:
    Chief:
      replicas: 1
    Worker:
      replicas: 4
    PS:
      replicas: 2
```

## Known problems
- Whether the code uses the strategy the layout is for (ParameterServerStrategy with PS,
  MultiWorkerMirroredStrategy without) is not judged: it lives in the training script.
- A replica count set by a template placeholder is not judged.
- A legacy `Master` with `replicas` above 1 is not flagged: the operator writes it into
  `TF_CONFIG` as a `master` job, which TensorFlow's cluster check does not count (an Estimator
  may still refuse it).

## References
- Kubeflow Training Operator, TFJob: https://www.kubeflow.org/docs/components/trainer/legacy-v1/user-guides/tensorflow/
- training-operator webhook (`validateTFReplicaSpecs`): https://github.com/kubeflow/training-operator/blob/master/pkg/webhooks/tensorflow/tfjob_webhook.go
- TensorFlow, Parameter server training: https://www.tensorflow.org/tutorials/distribute/parameter_server_training
"""

from mlops_lint.model.distributed import KUBEFLOW, replica_specs
from mlops_lint.rule import Finding, Kind, rule

COORDINATORS = ("chief", "master")
UNKNOWN = None


def _count(replica) -> int | None:
    """The replicas of a replica type: 1 when left out (the operator's default), None when not an integer."""
    if "replicas" not in replica.body:
        return 1
    value = replica.body.get("replicas")
    return value if isinstance(value, int) and not isinstance(value, bool) else UNKNOWN


def _runs(replica) -> bool:
    """The replica type may have a pod (a count not known may)."""
    count = _count(replica)
    return count is UNKNOWN or count > 0


@rule(code="DST010", name="tfjob-replica-layout-invalid", severity="error", scope=Kind("TFJob"),
      tags=("distributed", "kubeflow"))
def check(obj, ctx):
    if obj.group != KUBEFLOW:
        return
    replicas = replica_specs(obj)
    if not replicas:
        return
    coordinators = [r for r in replicas if r.role.lower() in COORDINATORS]
    for extra in coordinators[1:]:
        yield Finding(extra.key_span,
                      f"`{extra.role}` beside `{coordinators[0].role}`: a TFJob has at most one Chief or Master "
                      "(the coordinator); the training operator's webhook rejects the job. Keep one of them",
                      node=extra.path)
    for replica in replicas:
        role = replica.role.lower()
        count = _count(replica)
        if role in ("chief", "evaluator") and count is not UNKNOWN and count > 1:
            task = role
            yield Finding(replica.body.value_span("replicas"),
                          f"the {replica.role} replica type runs {count} replicas; TensorFlow allows at most one "
                          f"'{task}' task and refuses the cluster the operator writes into TF_CONFIG: set "
                          f"`replicas: 1`" + (" and scale with Workers" if task == "chief" else ""),
                          node=replica.path + ("replicas",))
    ps = [r for r in replicas if r.role.lower() == "ps" and _runs(r)]
    if ps and not any(r.role.lower() in ("worker", *COORDINATORS) and _runs(r) for r in replicas):
        yield Finding(ps[0].key_span,
                      f"`{ps[0].role}` replicas without a Worker, Chief or Master: parameter servers only hold "
                      "the variables and wait for the workers, so nothing trains and the job never completes; "
                      "add the Worker replica type (and a Chief) the parameter-server strategy computes on",
                      node=ps[0].path)
