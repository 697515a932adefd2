"""An object of a known kind that breaks its schema: a wrong type, an unknown field, a missing required field.

## What it does
Validates every Kubernetes object whose schema is known and reports **every** error, each at
the offending node:

- built-in kinds (`apps/v1 Deployment`, `batch/v1 Job`, `v1 ConfigMap` …) against the official
  Kubernetes OpenAPI schemas of the configured `kubernetes-version`, shipped by the
  `kubernetes-validate` package;
- custom resources (PyTorchJob, TFJob, MPIJob, Kueue, Volcano, KAITO, Prometheus Operator …)
  against the CustomResourceDefinition that serves their version: one in the linted project, or
  one under the `crd-paths` of the config.

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
  a key (defaulted keys, such as a port's protocol, are not filled in). CEL rules
  (`x-kubernetes-validations`) cannot be evaluated without an API server and are skipped, as are
  `format`s and the validation that only Go code does (name syntax, duplicate container names).
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

from linter.rule import OBJECT, Finding, rule
from linter.validation.validate import object_issues, span_of


@rule(code="SCH002", name="schema-violation", severity="error", scope=OBJECT, tags=("schema",))
def check(obj, ctx):
    for issue in object_issues(obj, ctx.index, ctx.config):
        yield Finding(span_of(obj, issue), issue.message, node=issue.path, severity=issue.severity)
