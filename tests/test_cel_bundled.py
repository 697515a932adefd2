"""Every checked CEL rule of the bundled Kueue, JobSet, Trainer and KubeRay CRDs, broken once.

Each row of :data:`CASES` is a minimal object, valid for the structural schema, that breaks exactly
one ``x-kubernetes-validations`` rule: linted, it gets exactly one SCH002, the rule's message at the
rule's node. The position expected is read from the object's text by PyYAML (an independent parser):
the node's value, or the ``kind`` key for a rule at the root. :func:`test_every_checked_rule_is_covered`
keeps the table equal to the rules :func:`linter.validation.celrules.rules` lists as checked in those
bundled schemas, so a rule a new upstream release adds fails here until it has its row.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any, NamedTuple

import pytest
import yaml

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.validation import bundle
from mlops_lint.validation.celrules import rules

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()
KINDS = ("ClusterQueue", "Cohort", "ResourceFlavor", "JobSet", "TrainJob", "TrainingRuntime", "ClusterTrainingRuntime",
         "RayCluster", "RayJob", "RayService")


class Case(NamedTuple):
    kind: str
    versions: tuple[str, ...]  # the apiVersions (group/version) the row is linted with
    node: str  # the rule's schema path, as celrules.rules names it
    spec: str  # the object's spec (YAML, indented as under `spec:`), or the whole object after metadata
    path: tuple  # where the finding is: the node of the object
    message: str  # the rule's message

    def key(self, api_version: str) -> tuple[str, str, str, str]:
        return (self.kind, api_version.split("/")[-1], self.node, self.message)


KUEUE = ("kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2")
JOBSET = ("jobset.x-k8s.io/v1alpha2",)
TRAINER = ("trainer.kubeflow.org/v1alpha1",)
RAY = ("ray.io/v1",)

GROUP = """\
resourceGroups:
- coveredResources: ["cpu"]
  flavors:
  - name: default
    resources:
    - name: cpu
      nominalQuota: 8
"""
QUEUE = "namespaceSelector: {}\n" + GROUP
POD = """\
template:
  spec:
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: main
          image: busybox:1.36
"""
JOBS_IN_ORDER = """\
startupPolicy:
  startupPolicyOrder: InOrder
replicatedJobs:
- name: prepare
""" + textwrap.indent(POD, "  ") + """\
- name: train
  dependsOn:
  - name: prepare
    status: Complete
""" + textwrap.indent(POD, "  ")
CLAIM_IN_NAMESPACE = """\
replicatedJobs:
- name: train
""" + textwrap.indent(POD, "  ") + """\
volumeClaimPolicies:
- templates:
  - metadata:
      name: data
      namespace: other
    spec:
      accessModes: ["ReadWriteOnce"]
      resources:
        requests:
          storage: 1Gi
"""
RUNTIME_JOBS = "template:\n  spec:\n" + textwrap.indent("replicatedJobs:\n- name: node\n" + textwrap.indent(POD, "  "),
                                                        "    ")
RAY_CLUSTER = """\
headGroupSpec:
  rayStartParams: {}
  template:
    spec:
      containers:
      - name: ray-head
        image: rayproject/ray:2.41.0
"""


def _runtime(policy: str) -> str:
    return "mlPolicy:\n" + textwrap.indent(policy, "  ") + RUNTIME_JOBS


CASES = [
    # Kueue ClusterQueue (v1beta1 names the cohort `cohort`, v1beta2 `cohortName`: neither is set here)
    Case("ClusterQueue", KUEUE, ".spec", QUEUE.replace("nominalQuota: 8\n", "nominalQuota: 8\n      borrowingLimit: 2\n"),
         ("spec",), "borrowingLimit must be nil when cohort is empty"),
    Case("ClusterQueue", KUEUE, ".spec.flavorFungibility",
         QUEUE + "flavorFungibility:\n  whenCanBorrow: MayStopSearch\n  preference: BorrowingOverPreemption\n",
         ("spec", "flavorFungibility"),
         "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor"),
    Case("ClusterQueue", KUEUE, ".spec.preemption",
         QUEUE + "preemption:\n  reclaimWithinCohort: Never\n  borrowWithinCohort:\n    policy: LowerPriority\n",
         ("spec", "preemption"), "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"),
    Case("ClusterQueue", KUEUE, ".spec.resourceGroups[]", QUEUE.replace('["cpu"]', '["cpu", "memory"]'),
         ("spec", "resourceGroups", 0), "flavors must have the same number of resources as the coveredResources"),
    # Kueue Cohort
    Case("Cohort", KUEUE, ".spec.resourceGroups[]", GROUP.replace('["cpu"]', '["cpu", "memory"]'),
         ("spec", "resourceGroups", 0), "flavors must have the same number of resources as the coveredResources"),
    # Kueue ResourceFlavor
    Case("ResourceFlavor", KUEUE, ".spec", "nodeLabels: {}\ntopologyName: default\n", ("spec",),
         "at least one nodeLabel is required when topology is set"),
    Case("ResourceFlavor", KUEUE, ".spec.nodeTaints", "nodeTaints:\n- key: sku\n  value: gpu\n  effect: NoEvict\n",
         ("spec", "nodeTaints"), "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
    Case("ResourceFlavor", KUEUE, ".spec.tolerations", "tolerations:\n- operator: Equal\n  value: gpu\n",
         ("spec", "tolerations"),
         "operator must be Exists when 'key' is empty, which means 'match all values and all keys'"),
    Case("ResourceFlavor", KUEUE, ".spec.tolerations",
         "tolerations:\n- key: sku\n  operator: Exists\n  effect: NoSchedule\n  tolerationSeconds: 60\n",
         ("spec", "tolerations"), "effect must be 'NoExecute' when 'tolerationSeconds' is set"),
    Case("ResourceFlavor", KUEUE, ".spec.tolerations", "tolerations:\n- key: sku\n  operator: In\n",
         ("spec", "tolerations"), "supported toleration values: 'Equal'(default), 'Exists'"),
    Case("ResourceFlavor", KUEUE, ".spec.tolerations", "tolerations:\n- key: sku\n  operator: Exists\n  value: gpu\n",
         ("spec", "tolerations"), "a value must be empty when 'operator' is 'Exists'"),
    Case("ResourceFlavor", KUEUE, ".spec.tolerations", "tolerations:\n- key: sku\n  operator: Exists\n  effect: NoEvict\n",
         ("spec", "tolerations"), "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'"),
    # JobSet
    Case("JobSet", JOBSET, ".spec", JOBS_IN_ORDER, ("spec",), "StartupPolicy and DependsOn APIs are mutually exclusive"),
    Case("JobSet", JOBSET, ".spec.volumeClaimPolicies[]", CLAIM_IN_NAMESPACE, ("spec", "volumeClaimPolicies", 0),
         "namespace cannot be set for VolumeClaimPolicies templates"),
    # Trainer TrainJob
    Case("TrainJob", TRAINER, ".", "runtimeRef:\n  name: torch-distributed\n", (),
         "metadata.name must match RFC 1035 DNS label format"),
    Case("TrainJob", TRAINER, ".", "runtimeRef:\n  name: torch-distributed\n", (),
         "metadata.name must be no more than 63 characters"),
    Case("TrainJob", TRAINER, ".spec.initializer.dataset.storageUri",
         "runtimeRef:\n  name: torch-distributed\ninitializer:\n  dataset:\n    storageUri: datasets/tiny\n",
         ("spec", "initializer", "dataset", "storageUri"),
         "storageUri may be empty, or it must be a valid URI (scheme://...)"),
    Case("TrainJob", TRAINER, ".spec.initializer.model.storageUri",
         "runtimeRef:\n  name: torch-distributed\ninitializer:\n  model:\n    storageUri: models/llama\n",
         ("spec", "initializer", "model", "storageUri"),
         "storageUri may be empty, or it must be a valid URI (scheme://...)"),
    Case("TrainJob", TRAINER, ".spec.managedBy", "runtimeRef:\n  name: torch-distributed\nmanagedBy: example.com/mine\n",
         ("spec", "managedBy"),
         "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"),
    Case("TrainJob", TRAINER, ".spec.trainer.numProcPerNode",
         "runtimeRef:\n  name: torch-distributed\ntrainer:\n  numProcPerNode: 0\n",
         ("spec", "trainer", "numProcPerNode"), "numProcPerNode must be greater than or equal to 1"),
]
for _runtime_kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
    CASES += [
        Case(_runtime_kind, TRAINER, ".spec.mlPolicy", _runtime("torch: {}\nmpi: {}\n"), ("spec", "mlPolicy"),
             "Only one of the policy can be configured"),
        Case(_runtime_kind, TRAINER, ".spec.mlPolicy.flux.numProcPerNode", _runtime("flux:\n  numProcPerNode: 0\n"),
             ("spec", "mlPolicy", "flux", "numProcPerNode"), "NumProcPerNode in fluxPolicy must be >= 1"),
        Case(_runtime_kind, TRAINER, ".spec.mlPolicy.mpi.numProcPerNode", _runtime("mpi:\n  numProcPerNode: 0\n"),
             ("spec", "mlPolicy", "mpi", "numProcPerNode"), "NumProcPerNode in mpiPolicy must be >= 1"),
        Case(_runtime_kind, TRAINER, ".spec.mlPolicy.torch.envInjection.targets[].containerNames",
             _runtime("torch:\n  envInjection:\n    targets:\n    - jobName: node\n      containerNames: [node]\n"),
             ("spec", "mlPolicy", "torch", "envInjection", "targets", 0, "containerNames"),
             "containerNames must not include the main node container because PET_* envs are always injected into it"),
        Case(_runtime_kind, TRAINER, ".spec.template.spec", "template:\n  spec:\n" + textwrap.indent(JOBS_IN_ORDER, "    "),
             ("spec", "template", "spec"), "StartupPolicy and DependsOn APIs are mutually exclusive"),
        Case(_runtime_kind, TRAINER, ".spec.template.spec.volumeClaimPolicies[]",
             "template:\n  spec:\n" + textwrap.indent(CLAIM_IN_NAMESPACE, "    "),
             ("spec", "template", "spec", "volumeClaimPolicies", 0),
             "namespace cannot be set for VolumeClaimPolicies templates"),
    ]
MANAGED = "the managedBy field value must be either 'ray.io/kuberay-operator' or 'kueue.x-k8s.io/multikueue'"
CASES += [
    # KubeRay
    Case("RayCluster", RAY, ".spec.managedBy", RAY_CLUSTER + "managedBy: example.com/mine\n", ("spec", "managedBy"),
         MANAGED),
    Case("RayJob", RAY, ".spec.managedBy", "entrypoint: python train.py\nmanagedBy: example.com/mine\n",
         ("spec", "managedBy"), MANAGED),
    Case("RayJob", RAY, ".spec.rayClusterSpec.managedBy",
         "entrypoint: python train.py\nrayClusterSpec:\n" + textwrap.indent(RAY_CLUSTER + "managedBy: example.com/mine\n",
                                                                           "  "),
         ("spec", "rayClusterSpec", "managedBy"), MANAGED),
    Case("RayJob", RAY, ".spec.deletionStrategy",
         "entrypoint: python train.py\ndeletionStrategy:\n  onSuccess:\n    policy: DeleteCluster\n"
         "  deletionRules:\n  - policy: DeleteCluster\n    condition:\n      jobStatus: SUCCEEDED\n",
         ("spec", "deletionStrategy"),
         "legacy policies (onSuccess/onFailure) and deletionRules cannot be used together within the same "
         "deletionStrategy"),
    Case("RayJob", RAY, ".spec.deletionStrategy",
         "entrypoint: python train.py\ndeletionStrategy:\n  onSuccess:\n    policy: DeleteCluster\n",
         ("spec", "deletionStrategy"),
         "deletionStrategy requires either BOTH onSuccess and onFailure, OR the deletionRules field (cannot be empty)"),
    Case("RayJob", RAY, ".spec.deletionStrategy.deletionRules[].condition",
         "entrypoint: python train.py\ndeletionStrategy:\n  deletionRules:\n  - policy: DeleteCluster\n    condition:\n"
         "      jobStatus: FAILED\n      jobDeploymentStatus: Failed\n",
         ("spec", "deletionStrategy", "deletionRules", 0, "condition"),
         "JobStatus and JobDeploymentStatus cannot be used together within the same deletion condition."),
    Case("RayJob", RAY, ".spec.deletionStrategy.deletionRules[].condition",
         "entrypoint: python train.py\ndeletionStrategy:\n  deletionRules:\n  - policy: DeleteCluster\n    condition:\n"
         "      ttlSeconds: 60\n",
         ("spec", "deletionStrategy", "deletionRules", 0, "condition"),
         "the deletion condition requires either the JobStatus or the JobDeploymentStatus field."),
    Case("RayService", RAY, ".spec.managedBy",
         "rayClusterConfig:\n" + textwrap.indent(RAY_CLUSTER, "  ") + "managedBy: example.com/mine\n", ("spec", "managedBy"), MANAGED),
    Case("RayService", RAY, ".spec.rayClusterConfig.managedBy",
         "rayClusterConfig:\n" + textwrap.indent(RAY_CLUSTER + "managedBy: example.com/mine\n", "  "),
         ("spec", "rayClusterConfig", "managedBy"), MANAGED),
]
ROWS = [(case, api_version) for case in CASES for api_version in case.versions]


def _name(case: Case) -> str:
    if case.message == "metadata.name must match RFC 1035 DNS label format":
        return "Llama_Finetune"
    if case.message == "metadata.name must be no more than 63 characters":
        return "l" * 64
    return "breaks-one-rule"


def _text(case: Case, api_version: str) -> str:
    return (f"apiVersion: {api_version}\nkind: {case.kind}\nmetadata:\n  name: {_name(case)}\n"
            f"spec:\n{textwrap.indent(case.spec, '  ')}")


def _expected_position(text: str, path: tuple) -> tuple[int, int]:
    """Where PyYAML puts the node at ``path``, 1-based, as mlops-lint reports a node: a scalar at
    its value, a collection under a key at its key, a list item at its first key, the root at its ``kind`` key."""
    node = yaml.compose(text)
    mark = None
    if not path:
        mark = next(k for k, _ in node.value if k.value == "kind").start_mark
    for step in path:
        if isinstance(step, int):
            node = node.value[step]
            mark = node.start_mark
        else:
            key, node = next((k, v) for k, v in node.value if k.value == step)
            collection = isinstance(node, (yaml.MappingNode, yaml.SequenceNode))
            mark = key.start_mark if collection else node.start_mark
    return mark.line + 1, mark.column + 1


def _dotted(path: tuple) -> str:
    text = ""
    for step in path:
        text += f"[{step}]" if isinstance(step, int) else (f".{step}" if text else step)
    return text or "the object"


@pytest.fixture(scope="module")
def findings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Any]]:
    """One lint of every row's object (a file each): the SCH002 findings by file."""
    root = tmp_path_factory.mktemp("cel-bundled")
    for number, (case, api_version) in enumerate(ROWS):
        (root / f"row{number:02d}.yaml").write_text(_text(case, api_version), encoding="utf-8")
    report = lint(LintRequest(paths=[root], config=Config(), registry=REGISTRY, select=["SCH002"], cwd=root, jobs=1))
    found: dict[str, list[Any]] = {f"row{number:02d}.yaml": [] for number in range(len(ROWS))}
    for finding in report.active:
        found[Path(finding.path).name].append(finding)
    return found


@pytest.mark.parametrize("number", range(len(ROWS)),
                         ids=[f"{case.kind}-{api_version.split('/')[-1]}-{case.node}-{case.message[:30]}"
                              for case, api_version in ROWS])
def test_an_object_breaking_one_bundled_rule_gets_one_sch002_at_the_rules_node(findings, number: int) -> None:
    case, api_version = ROWS[number]
    text = _text(case, api_version)
    line, column = _expected_position(text, case.path)
    got = [(f.rule, f.line, f.column, f.message) for f in findings[f"row{number:02d}.yaml"]]
    assert got == [("SCH002", line, column, f"{_dotted(case.path)}: {case.message}")], text


def _bundled_checked_rules() -> set[tuple[str, str, str, str]]:
    checked = set()
    for record in bundle.index()["kinds"]:
        if record["kind"] not in KINDS:
            continue
        for version, entry in record["versions"].items():
            if not entry.get("file"):
                continue
            for node, rule, why in rules(bundle.load_schema(entry["file"])):
                if why is None:
                    checked.add((record["kind"], version, node, rule.get("message") or rule["rule"]))
    return checked


def test_every_checked_rule_is_covered() -> None:
    covered = [(case.key(api_version)) for case, api_version in ROWS]
    assert len(covered) == len(set(covered)), "a rule has two rows"
    assert set(covered) == _bundled_checked_rules()


def test_the_conforming_fixtures_get_no_cel_finding() -> None:
    report = lint(LintRequest(paths=[REPO / "fixtures" / "conforming"], config=Config(), registry=REGISTRY,
                              select=["SCH002"], cwd=REPO, jobs=1))
    assert report.files_linted > 0
    assert [(f.path, f.line, f.message) for f in report.active if f.rule == "SCH002"] == []


# Kubernetes' optional field syntax (`self.?field.orValue(x)`, CEL's optional library, in Kubernetes'
# environment since 1.29) is not in common-expression-language 0.10: a rule that uses it is not
# checked, and says so where it is written, once.
OPTIONAL_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: trainingbudgets.ml.example.com
spec:
  group: ml.example.com
  names:
    kind: TrainingBudget
    plural: trainingbudgets
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "self.?maxGPUs.orValue(0) <= 64"
              message: at most 64 GPUs
            - rule: "self.minGPUs <= self.maxGPUs"
              message: minGPUs must not exceed maxGPUs
            properties:
              minGPUs: {type: integer}
              maxGPUs: {type: integer}
---
apiVersion: ml.example.com/v1
kind: TrainingBudget
metadata:
  name: team-a
spec:
  minGPUs: 200
  maxGPUs: 128
"""


def test_a_project_crd_rule_the_engine_cannot_compile_is_one_info_finding_at_the_rule(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(OPTIONAL_CRD, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=REGISTRY, select=["SCH002"], cwd=tmp_path,
                              jobs=1))
    got = [(f.severity, f.line, f.column, f.message) for f in report.active]
    assert got == [
        ("info", 22, 21, "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-kubernetes-validations[0].rule: "
                         "the CEL rule `self.?maxGPUs.orValue(0) <= 64` is not checked on this CRD's objects: the "
                         "engine cannot compile it (ERROR: <input>:1:5: unsupported syntax '.?')"),
        # the object: the rule that compiles is checked (maxGPUs 128 > 64 is not judged)
        ("error", 34, 1, "spec: minGPUs must not exceed maxGPUs"),
    ]


def test_a_bundled_rule_the_engine_cannot_compile_is_listed_as_not_checked(monkeypatch) -> None:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.?replicas.orValue(1) > 0", "message": "positive"}, {"rule": "has(self.replicas)"}]}}}
    monkeypatch.setattr(bundle, "index", lambda: {"kinds": [
        {"group": "ml.example.com", "kind": "Budget", "versions": {"v1": {"file": "budget.json.gz"}}}]})
    monkeypatch.setattr(bundle, "load_schema", lambda file: schema)
    assert bundle.cel_summary() == ["- `ml.example.com` Budget v1: 1 of 2 checked (not checked: 1 not compiled by "
                                    "the engine)"]
    assert [(node, why) for node, _, why in rules(schema)] == [
        (".spec", "not compiled by the engine: ERROR: <input>:1:5: unsupported syntax '.?'"), (".spec", None)]


def test_no_bundled_rule_needs_what_the_engine_lacks() -> None:
    # today every rule of every bundled CRD compiles (none uses `.?`): SCH002's docs list none as
    # "not compiled"; a bundle update that brings one shows it there (cel_summary) and fails here
    missing = []
    for record in bundle.index()["kinds"]:
        for version, entry in record["versions"].items():
            if entry.get("file"):
                missing += [(record["kind"], version, node, rule["rule"]) for node, rule, why in
                            rules(bundle.load_schema(entry["file"])) if why and why.startswith("not compiled")]
    assert missing == []
