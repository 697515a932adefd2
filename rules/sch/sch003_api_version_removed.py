"""An apiVersion that the target Kubernetes version, or the installed CRD, does not serve (or deprecates).

## What it does
Reports the `apiVersion` of an object whose API is gone, and names the one to use instead. Each
case has its own slug, all SCH003: `api-version-removed` for a version that was served and is
not any more, `api-version-not-yet-served` for one the target release does not serve yet (first
served by a later one), `api-version-not-served` for one the release or CRD does not list at all
(never served, or dropped from the CRD's versions), and
`api-version-deprecated` (info) for one still served but marked deprecated. `--select` and
`--ignore` take any of them for the rule; an inline or annotation suppression by a case's slug
suppresses that case, by `SCH003` or `api-version-removed` every case. The cases:

- built-in APIs removed by the configured `kubernetes-version` (default 1.35), from the
  Kubernetes deprecation guide: `extensions/v1beta1` and `apps/v1beta1`/`v1beta2` workloads (1.16),
  `networking.k8s.io/v1beta1` Ingress, `rbac…/v1beta1`, `apiextensions.k8s.io/v1beta1` (1.22),
  `batch/v1beta1` CronJob, `policy/v1beta1` PodDisruptionBudget and PodSecurityPolicy,
  `autoscaling/v2beta1` (1.25), `autoscaling/v2beta2` (1.26), `storage.k8s.io/v1beta1`
  CSIStorageCapacity (1.27), `flowcontrol.apiserver.k8s.io` betas (1.26, 1.29, 1.32);
- any other version of a built-in kind that the target release does not serve (alpha versions
  long gone, `apps/v2`, or a version first served by a later release);
- a custom resource whose CustomResourceDefinition (in the project or under `crd-paths`)
  does not serve its version, or marks it `served: false`: the CRD's storage version is named;
- without such a CRD, versions the ML operators' current releases no longer serve:
  `kubeflow.org/v1alpha*`/`v1beta*` TFJob and PyTorchJob (use `kubeflow.org/v1`), MPIJob
  `v1alpha*` (use `v2beta1`), Kueue `v1alpha1`, kube-batch and Volcano alpha scheduling APIs;
- then, for the kinds whose CRDs are bundled with mlops-lint (Kueue, Kubeflow, KubeRay, Volcano,
  KAITO, JobSet, LeaderWorkerSet, KServe, Prometheus Operator, Karpenter/NAP, GPU Operator: see
  SCH002), any version the bundled CRD does not serve, naming the versions it serves (the MPI
  Operator's `kubeflow.org/v2beta1` MPIJob, not bundled, is accepted);
- as an **info**-level note, a version that is still served but that its CRD (the project's,
  `crd-paths`' or the bundled one) marks `deprecated`, with the CRD's deprecation warning and the
  version to move to (Kueue's `v1beta1`, KubeRay's `ray.io/v1alpha1`).

The config's `kubernetes-version` (e.g. `"1.30"`) is the release compared with; `crd-paths`
adds the cluster's CustomResourceDefinitions.

## Why is this bad?
The API server refuses an object whose apiVersion it does not serve ("no matches for kind"),
so the job is never created, often discovered only when a cluster upgrade lands. The article
asks to "install a Training Operator release compatible with your Kubernetes version" and "a
Volcano release compatible with the cluster before applying its CRDs": the manifests must use
the versions that those releases and the cluster serve.

## Example
```yaml
apiVersion: batch/v1beta1
kind: CronJob
metadata:
  name: nightly-eval
```

Use instead:
```yaml
apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-eval
```

## Fix safety
Safe, for the removed built-in versions whose replacement has the same fields and defaults:
`batch/v1beta1` CronJob (to `batch/v1`), `autoscaling/v2beta2` HorizontalPodAutoscaler (to
`autoscaling/v2`), `scheduling.k8s.io/v1beta1`/`v1alpha1` PriorityClass, `extensions/v1beta1`
NetworkPolicy (to `networking.k8s.io/v1`), `storage.k8s.io/v1beta1` StorageClass,
`coordination.k8s.io/v1beta1` Lease and the `rbac.authorization.k8s.io` betas and alphas: the fix
rewrites `apiVersion` only, and the API server stores the object as it would have. Every other
move has no fix, because the new version changes the object's fields or defaults: `apps/v1`
requires `spec.selector`, `networking.k8s.io/v1` Ingress renames its backends, `autoscaling/v2`
rewrites `v2beta1`'s metrics, `policy/v1` reads an empty PodDisruptionBudget selector as "every
pod", `apiextensions.k8s.io/v1` requires structural schemas, and a CRD's versions are its
operator's (Kueue, Kubeflow, Volcano convert between them differently).

## Known problems
- Deprecated built-in APIs removed only after the target version are not reported: the object
  still applies. A CRD's `deprecated` version is an info note, not an error (it still applies).
- A CRD in the project or under `crd-paths` overrides the built-in table of operator versions
  and the bundled CRDs (`bundled-crds: false` turns those off): if it serves the version, the
  version is fine (KAITO's `kaito.sh/v1alpha1` Workspace and
  KubeRay's `ray.io/v1alpha1` are still served by their CRDs, so they are not in the table).
- A built-in version that the target release does not serve yet is reported too (it does not
  apply either); set `kubernetes-version` to the cluster's version if it is newer.

## References
- Kubernetes deprecated API migration guide: https://kubernetes.io/docs/reference/using-api/deprecation-guide/
- CRD versions (served, storage, deprecated): https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definition-versioning/
- Kubeflow Training Operator: https://www.kubeflow.org/docs/components/trainer/legacy-v1/
"""

from mlops_lint.fix.plans import plan, set_path
from mlops_lint.rule import OBJECT, Finding, rule
from mlops_lint.validation.versions import check as served

# Removed built-in versions whose replacement has the same schema and defaults: the version is
# all that changes ((old apiVersion, kind) -> new apiVersion). Every other move changes fields or
# defaults (apps/v1 requires spec.selector, networking.k8s.io/v1 Ingress renames its backends,
# autoscaling/v2 rewrites v2beta1's metrics, policy/v1 reads an empty PDB selector differently,
# CRD versions are the operators' own) and gets no fix.
DROP_IN = {
    ("batch/v1beta1", "CronJob"): "batch/v1",
    ("autoscaling/v2beta2", "HorizontalPodAutoscaler"): "autoscaling/v2",
    ("scheduling.k8s.io/v1beta1", "PriorityClass"): "scheduling.k8s.io/v1",
    ("scheduling.k8s.io/v1alpha1", "PriorityClass"): "scheduling.k8s.io/v1",
    ("extensions/v1beta1", "NetworkPolicy"): "networking.k8s.io/v1",
    ("storage.k8s.io/v1beta1", "StorageClass"): "storage.k8s.io/v1",
    ("coordination.k8s.io/v1beta1", "Lease"): "coordination.k8s.io/v1",
    **{("rbac.authorization.k8s.io/" + version, kind): "rbac.authorization.k8s.io/v1"
       for version in ("v1beta1", "v1alpha1") for kind in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
}


def _autofix(obj, replacement: str | None):
    wanted = DROP_IN.get((obj.api_version, obj.kind))
    if wanted is None or wanted != replacement or not isinstance(obj.body.get("apiVersion"), str):
        return None
    return plan(f"set `apiVersion: {wanted}`", set_path(obj.body, ("apiVersion",), wanted))


# each case's slug (the rule's own, api-version-removed, is the "removed" case's)
SLUGS = {"removed": None, "not-yet-served": "api-version-not-yet-served", "not-served": "api-version-not-served",
         "deprecated": "api-version-deprecated"}


@rule(code="SCH003", name="api-version-removed", severity="error", scope=OBJECT, tags=("schema", "upgrade"),
      slugs=tuple(slug for slug in SLUGS.values() if slug))
def check(obj, ctx):
    problem = served(obj, ctx.index, ctx.config)
    if problem is not None:
        fix = f"apiVersion: {problem.replacement}" if problem.replacement else None
        yield Finding(obj.body.value_span("apiVersion"), problem.message, node=("apiVersion",), fix=fix,
                      severity=problem.severity, autofix=_autofix(obj, problem.replacement), slug=SLUGS[problem.case])
