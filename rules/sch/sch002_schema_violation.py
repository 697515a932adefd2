"""An object of a known kind that breaks its schema: a wrong type, an unknown field, a missing required field.

## What it does
Validates every Kubernetes object whose schema is known and reports **every** error, each at
the offending node:

- built-in kinds (`apps/v1 Deployment`, `batch/v1 Job`, `v1 ConfigMap` …) against the official
  Kubernetes OpenAPI schemas of the configured `kubernetes-version`, shipped by the
  `kubernetes-validate` package;
- custom resources against the CustomResourceDefinition that serves their version: one in the
  linted project, else one under the `crd-paths` of the config, else the schemas bundled with
  mlops-lint (below), so the AI ecosystem's kinds are checked with no set-up. A project CRD that
  defines a kind differently from the bundle is what its cluster runs: it is used, silently.
  `bundled-crds: false` in the config turns the bundle off.

A wrong type points at the value (`spec.replicas: expected integer, got string "3"`), an unknown
field at its key (`unknown field "spec.tempate" (did you mean "template"?)`), a missing required
field at the key of the mapping that lacks it (`missing required field
"spec.template.spec.containers"`). Enums, patterns (quantities: `500m`, `2`, `8Gi`), bounds, set
and map lists with duplicate keys, and `apiVersion`s of a built-in group that have no such kind
(`apps/v1 Deploymnet`) are reported the same way. Kinds with no known schema are skipped.

The config's `kubernetes-version` (default 1.35, a version AKS supports; 1.25 to 1.37 are
available) chooses the built-in schemas, and `crd-paths` (files or folders of
CustomResourceDefinitions, or `<group>_<kind>_<version>.json` schemas as the CRDs catalog names
them, relative to the config file) adds the cluster's CRDs; both are checked when the config is
read (an unknown version or an unreadable path is a config error).

Bundled schemas (every version of each upstream CRD, `linter/data/crds/SOURCES.md`; regenerated
by `python scripts/bundle_crds.py ../shared/crds scripts/upstream-crds`):

<!-- bundled kinds: generated from linter/data/crds/index.json, kept equal by tests/test_bundle.py -->
- `nvidia.com` DynamoGraphDeployment (v1alpha1): zxue2/dynamo `5d90e530bc`
- `inference.networking.k8s.io` InferencePool (v1): kubernetes-sigs/gateway-api-inference-extension `84436a96b9`
- `nvidia.com` ClusterPolicy (v1); `nvidia.com` GPUCluster (v1alpha1): NVIDIA/gpu-operator `a22dbf671f`
- `jobset.x-k8s.io` JobSet (v1alpha2): kubernetes-sigs/jobset `08dfbdfd68`
- `kaito.sh` InferenceSet, Workspace (v1alpha1, v1beta1); `kaito.sh` RAGEngine (v1alpha1 deprecated, v1beta1): kaito-project/kaito `056b8280b1`
- `karpenter.azure.com` AKSNodeClass (v1alpha2 deprecated, v1beta1); `karpenter.sh` NodePool (v1): Azure/karpenter-provider-azure `352646f599`
- `serving.kserve.io` ClusterServingRuntime, ServingRuntime (v1alpha1); `serving.kserve.io` InferenceService (v1beta1): kserve/kserve `aaac4e294d`
- `serving.kserve.io` LLMInferenceService (v1alpha1, v1alpha2): kserve/kserve `aaac4e294d`
- `ray.io` RayCluster, RayJob, RayService (v1, v1alpha1 deprecated): ray-project/kuberay `feeaf72fac`
- `kueue.x-k8s.io` ClusterQueue, Cohort, LocalQueue, ResourceFlavor, Topology, Workload, WorkloadPriorityClass (v1beta1 deprecated, v1beta2): kubernetes-sigs/kueue `ff69552e79`
- `leaderworkerset.x-k8s.io` LeaderWorkerSet (v1): kubernetes-sigs/lws `060ab4da17`
- `azmonitoring.coreos.com` PodMonitor, ServiceMonitor (v1); `monitoring.coreos.com` PodMonitor, PrometheusRule, ServiceMonitor (v1): datreeio/CRDs-catalog `7b1e26ef9d`
- `trainer.kubeflow.org` ClusterTrainingRuntime, TrainJob, TrainingRuntime (v1alpha1): kubeflow/trainer `8c0f5059bd`
- `kubeflow.org` JAXJob, PaddleJob, PyTorchJob, TFJob, XGBoostJob (v1); `kubeflow.org` MPIJob (v1, v2beta1 served by kubeflow/mpi-operator (not bundled)): kubeflow/training-operator `078ec30ff2`
- `batch.volcano.sh` Job (v1alpha1); `scheduling.volcano.sh` PodGroup, Queue (v1beta1): volcano-sh/volcano `unrecorded snapshot`
<!-- end of bundled kinds -->

**CEL rules.** A CRD's `x-kubernetes-validations` rules are evaluated as the API server evaluates
them (Kubernetes' CEL with its quantity, regex, list, string, URL, IP/CIDR and format libraries):
`self` is the object's value at the rule's node, after the schema's defaults are filled in, with
property names escaped as Kubernetes escapes them (`self.foo__dash__bar`). A false rule is its
`message` (or `messageExpression`) at the node, or at its `fieldPath`; a rule that fails to
evaluate (`no such key`) is an error there too, as the API server rejects the object with it. Not
checked: transition rules (they read `oldSelf`, the stored object a manifest does not have), rules
under `status`, rules the engine cannot compile (Kubernetes' optional syntax `self.?field`, which
common-expression-language lacks: for a project's CRD, an info finding at the rule in the CRD), and,
with an info finding, a rule whose estimated cost for the object at hand is over the API server's
per-call limit. The bundled CRDs' rules:

<!-- bundled CEL rules: generated from the bundle by linter.validation.bundle.cel_summary, kept equal by tests/test_bundle.py -->
- `inference.networking.k8s.io` InferencePool v1: 2 of 2 checked
- `jobset.x-k8s.io` JobSet v1alpha2: 2 of 8 checked (not checked: 6 transition rules (read oldSelf))
- `karpenter.azure.com` AKSNodeClass v1alpha2: 24 of 24 checked
- `karpenter.azure.com` AKSNodeClass v1beta1: 24 of 24 checked
- `karpenter.sh` NodePool v1: 27 of 30 checked (not checked: 3 transition rules (read oldSelf))
- `kubeflow.org` JAXJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kubeflow.org` MPIJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kubeflow.org` PaddleJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kubeflow.org` PyTorchJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kubeflow.org` TFJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kubeflow.org` XGBoostJob v1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` ClusterQueue v1beta1: 4 of 4 checked
- `kueue.x-k8s.io` ClusterQueue v1beta2: 4 of 4 checked
- `kueue.x-k8s.io` Cohort v1beta1: 1 of 1 checked
- `kueue.x-k8s.io` Cohort v1beta2: 1 of 1 checked
- `kueue.x-k8s.io` LocalQueue v1beta1: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` LocalQueue v1beta2: 0 of 1 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` ResourceFlavor v1beta1: 7 of 8 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` ResourceFlavor v1beta2: 7 of 8 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` Topology v1beta1: 2 of 3 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` Topology v1beta2: 2 of 3 checked (not checked: 1 transition rules (read oldSelf))
- `kueue.x-k8s.io` Workload v1beta1: 3 of 14 checked (not checked: 4 transition rules (read oldSelf); 7 under status (live state))
- `kueue.x-k8s.io` Workload v1beta2: 5 of 23 checked (not checked: 6 transition rules (read oldSelf); 12 under status (live state))
- `nvidia.com` DynamoGraphDeployment v1alpha1: 1 of 1 checked
- `nvidia.com` GPUCluster v1alpha1: 1 of 1 checked
- `ray.io` RayCluster v1: 1 of 3 checked (not checked: 2 transition rules (read oldSelf))
- `ray.io` RayJob v1: 6 of 9 checked (not checked: 3 transition rules (read oldSelf))
- `ray.io` RayService v1: 2 of 5 checked (not checked: 3 transition rules (read oldSelf))
- `serving.kserve.io` LLMInferenceService v1alpha1: 127 of 127 checked
- `serving.kserve.io` LLMInferenceService v1alpha2: 129 of 130 checked (not checked: 1 under status (live state))
- `trainer.kubeflow.org` ClusterTrainingRuntime v1alpha1: 6 of 12 checked (not checked: 6 transition rules (read oldSelf))
- `trainer.kubeflow.org` TrainJob v1alpha1: 6 of 20 checked (not checked: 13 transition rules (read oldSelf); 1 under status (live state))
- `trainer.kubeflow.org` TrainingRuntime v1alpha1: 6 of 12 checked (not checked: 6 transition rules (read oldSelf))
<!-- end of bundled CEL rules -->

## Why is this bad?
The API server rejects such an object (kubectl validates strictly by default: unknown and
duplicate fields are errors) or, for a custom resource whose CRD prunes unknown fields, silently
drops the misspelt field: a `tempate`, a `nodeSelecter` or a `tolerations` one level too deep
means a training job that runs without the placement, resources or GPU settings its author wrote.
The article asks to install operators "compatible with your Kubernetes version before applying
this manifest" and to "verify that the selected preset, VM SKU, and fine-tuning method are
supported by the installed KAITO version": validating against the schemas of the cluster's
version and of the installed CRDs is how a manifest is checked before it is applied.

## Example
```yaml
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  backoffLimit: "3"            # expected integer
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limit:               # unknown field (did you mean "limits"?)
            nvidia.com/gpu: 1
```

Use instead:
```yaml
spec:
  backoffLimit: 3
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits:
            nvidia.com/gpu: 1
```

## Known problems
- Kubernetes' decoding is followed: quantities and int-or-string fields take a number or a string
  (a quantity string must parse: `1 core` is an error), `status` is live state and never
  validated, `metadata` is checked as ObjectMeta for custom resources too (labels and annotation
  values must be strings), and `null` in an optional field of a custom resource is pruned by the
  API server (no finding) unless the field is required.
- Custom resources: unknown fields are reported only where the schema does not keep them
  (`x-kubernetes-preserve-unknown-fields`); `x-kubernetes-embedded-resource` objects must carry
  `apiVersion` and `kind`; `x-kubernetes-list-type: set`/`map` lists must not repeat an item or
  a key (defaulted keys, such as a port's protocol, are not filled in); `nullable` and
  `x-kubernetes-int-or-string` are honoured. `format`s and the validation that only Go code does
  (name syntax, duplicate container names) are not checked. CEL rules are (above), except the
  ones listed; a rule is not evaluated on a node the structural schema already reports malformed
  (one cause, one finding), nor in the files kustomize completes before applying them.
- `pattern`s are matched with RE2, as the API server matches them (linear time; digit and word
  classes are ASCII); a pattern RE2 cannot compile (a lookahead, a backreference) is not
  checked, and each string value it would have checked gets an info-level finding saying so.
- Fields a controller's mutating webhook fills in before validation are not missing: JobSet's
  `spec.failurePolicy.rules[].name` (`failurePolicyRuleN`), LeaderWorkerSet's
  `spec.networkConfig.subdomainPolicy` (`Shared`). The other bundled kinds' webhooks only fill in
  fields that their schemas do not require (Volcano's task names and queue, Kubeflow's replica
  counts and restart policies, JobSet's success and startup policies when the whole policy is
  unset), or the kinds have none (KubeRay, Karpenter, GPU Operator, KAITO).
- Placeholder values of documentation-style manifests (`<integer>`, `<string>`, `[Honor|Ignore]`
  quoted or not, `...`) and strings holding a placeholder in part (an `envsubst` snippet's
  `/resourceGroups/$RESOURCE_GROUP/…`, `{{ .Values.x }}-suffix`) are not violations: the value
  is unknown (the placeholder test the other rules use).
- One finding per cause: rules that read a node SCH002 reports as malformed stay quiet there (a
  ClusterQueue whose resource group lacks `coveredResources` is this rule's finding, not a
  QUE005/QUE006 quota finding on every job queued to it).
- When the project defines a group/kind's CRD, only the project's CRDs count for it (they are
  what is applied with the manifests); the nearest one to the object's file is used when there
  are several. Versions no CRD serves are SCH003's findings, not these.
- Kustomize: files named by a `kustomization.yaml` in their folder or up to three folders above
  (`resources`, `patches`, `patchesStrategicMerge`, …) are completed by kustomize before they are
  applied: a patch carries only what it changes and overlays add selectors. Missing required
  fields and strategic-merge directives (`$patch`) are therefore not reported in them; wrong
  types and unknown fields are. Render Helm charts first (`helm template … | mlops-lint -`).

## References
- Kubernetes API reference: https://kubernetes.io/docs/reference/kubernetes-api/
- Field validation (strict by default in kubectl): https://kubernetes.io/docs/reference/using-api/api-concepts/#field-validation
- Structural schemas, pruning and `x-kubernetes-*` extensions: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#specifying-a-structural-schema
- kubernetes-validate (the schema data): https://pypi.org/project/kubernetes-validate/
"""

from mlops_lint.rule import OBJECT, Finding, rule
from mlops_lint.validation.validate import object_issues, span_of


@rule(code="SCH002", name="schema-violation", severity="error", scope=OBJECT, tags=("schema",))
def check(obj, ctx):
    for issue in object_issues(obj, ctx.index, ctx.config):
        yield Finding(span_of(obj, issue), issue.message, node=issue.path, severity=issue.severity)
