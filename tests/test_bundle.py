"""The CRD schemas bundled with mlops-lint (linter/data/crds): every bundled kind and version is
checked out of the box, at the exact node, with the precedence project > crd-paths > bundle.

For each bundled kind and served version, a valid example passes, and three mutations of it (an
unknown field, a wrong type, a missing required field, chosen from the bundled schema itself)
each give exactly one SCH002 at the node a YAML parser independent of the linter places them.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from mlops_lint.config import Config, ConfigError, load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.validation import bundle
from mlops_lint.validation.crds import WEBHOOK_DEFAULTS
from mlops_lint.validation.messages import dotted

REPO = Path(__file__).resolve().parents[1]
SHARED_CRDS = REPO.parent / "shared" / "crds"
UPSTREAM_CRDS = REPO / "scripts" / "upstream-crds"  # the upstream CRDs ../shared/crds lacks (gzip'd, bytes kept)
needs_shared = pytest.mark.skipif(not SHARED_CRDS.is_dir(),
                                  reason=f"{SHARED_CRDS} is absent: the upstream CRDs live beside the repository")
REGISTRY = load_registry()

POD = {"spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}}
RAY = {"headGroupSpec": {"rayStartParams": {}, "template": POD},
       "workerGroupSpecs": [{"groupName": "gpu", "replicas": 1, "minReplicas": 0, "maxReplicas": 2,
                             "rayStartParams": {}, "template": POD}]}
QUEUE_GROUPS = [{"coveredResources": ["cpu"], "flavors": [{"name": "default", "resources": [
    {"name": "cpu", "nominalQuota": 8}]}]}]
SERVING = {"supportedModelFormats": [{"name": "sklearn", "version": "1", "autoSelect": True}],
           "containers": [{"name": "kserve-container", "image": "kserve/sklearnserver:v0.14.0"}]}
TRAINING_RUNTIME = {"mlPolicy": {"numNodes": 1},
                    "template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": POD}}}]}}}
MONITOR = {"selector": {"matchLabels": {"app": "trainer"}}}


def _kubeflow(replicas: str, *types: str) -> dict:
    return {"spec": {replicas: {t: {"replicas": 1, "restartPolicy": "OnFailure", "template": POD} for t in types}}}


# A valid body (everything but apiVersion, kind and metadata) per bundled kind.
def _dns_overrides(root_destination: str) -> list[dict[str, Any]]:
    return [{"zone": zone, "cacheDuration": "1h", "forwardDestination": destination, "forwardPolicy": "Sequential",
             "maxConcurrent": 1000, "protocol": "PreferUDP", "queryLogging": "Error", "serveStale": "Immediate",
             "serveStaleDuration": "1h"} for zone, destination in ((".", root_destination), ("cluster.local", "ClusterCoreDNS"))]


VALID: dict[str, dict[str, Any]] = {
    "PodMonitor": {"spec": {**MONITOR, "podMetricsEndpoints": [{"port": "metrics", "path": "/metrics"}]}},
    "ServiceMonitor": {"spec": {**MONITOR, "endpoints": [{"port": "web", "interval": "30s"}]}},
    "PrometheusRule": {"spec": {"groups": [{"name": "gpu", "rules": [{"alert": "GpuDown", "expr": "up == 0"}]}]}},
    "Job": {"spec": {"minAvailable": 1, "schedulerName": "volcano", "queue": "default",
                     "tasks": [{"name": "worker", "replicas": 1, "template": POD,
                                "partitionPolicy": {"totalPartitions": 1, "partitionSize": 1}}]}},
    # failurePolicy.rules[].name is required by the schema, filled in by JobSet's webhook
    "JobSet": {"spec": {"replicatedJobs": [{"name": "workers", "replicas": 1, "template": {"spec": {"template": POD}}}],
                        "failurePolicy": {"maxRestarts": 1, "rules": [{"action": "FailJobSet"}]}}},
    "Workspace": {"resource": {"instanceType": "Standard_NC12s_v3", "labelSelector": {"matchLabels": {"apps": "falcon"}}},
                  "inference": {"preset": {"name": "falcon-7b"}}},
    # both override lists must hold the zones '.' and 'cluster.local', the VNet's root zone going to VnetDNS
    # (the CRD's CEL rules: empty lists fail them)
    "AKSNodeClass": {"spec": {"imageFamily": "Ubuntu2204", "osDiskSizeGB": 128,
                              "localDNS": {"mode": "Disabled", "kubeDNSOverrides": _dns_overrides("ClusterCoreDNS"),
                                           "vnetDNSOverrides": _dns_overrides("VnetDNS")}}},
    "NodePool": {"spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
        "requirements": [{"key": "karpenter.azure.com/sku-family", "operator": "In", "values": ["NC"]}]}},
        "limits": {"cpu": "100"}}},
    "PyTorchJob": _kubeflow("pytorchReplicaSpecs", "Master", "Worker"),
    "TFJob": _kubeflow("tfReplicaSpecs", "Worker"),
    "MPIJob": {"spec": {"slotsPerWorker": 1, **_kubeflow("mpiReplicaSpecs", "Launcher", "Worker")["spec"]}},
    "XGBoostJob": _kubeflow("xgbReplicaSpecs", "Master", "Worker"),
    "PaddleJob": _kubeflow("paddleReplicaSpecs", "Worker"),
    "JAXJob": _kubeflow("jaxReplicaSpecs", "Worker"),
    "ClusterQueue": {"spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                              "resourceGroups": QUEUE_GROUPS}},
    "Cohort": {"spec": {"resourceGroups": QUEUE_GROUPS}},
    "LocalQueue": {"spec": {"clusterQueue": "team-a"}},
    "ResourceFlavor": {"spec": {"nodeLabels": {"accelerator": "nvidia"},
                                "nodeTaints": [{"key": "sku", "value": "gpu", "effect": "NoSchedule"}]}},
    "WorkloadPriorityClass": {"value": 1000, "description": "production training"},
    # Kueue writes Workloads for the jobs it queues; one written by hand must still fit the CRD
    "Workload": {"spec": {"queueName": "team-a", "podSets": [{"name": "main", "count": 2, "template": POD}]}},
    "Topology": {"spec": {"levels": [{"nodeLabel": "cloud.provider.com/topology-block"},
                                     {"nodeLabel": "kubernetes.io/hostname"}]}},
    # networkConfig.subdomainPolicy is required by the schema, filled in by LeaderWorkerSet's webhook
    "LeaderWorkerSet": {"spec": {"replicas": 1, "networkConfig": {"subdomainPolicy": "Shared"},
                                 "leaderWorkerTemplate": {"size": 2, "workerTemplate": POD}}},
    "ClusterPolicy": {"spec": {"operator": {"defaultRuntime": "containerd"}, "daemonsets": {"priorityClassName": "x"},
                               "driver": {"enabled": True}, "toolkit": {"enabled": True},
                               "devicePlugin": {"enabled": True}, "dcgm": {"enabled": True},
                               "dcgmExporter": {"enabled": True}, "gfd": {"enabled": True},
                               "nodeStatusExporter": {"enabled": False}}},
    "RayCluster": {"spec": {"rayVersion": "2.9.0", **RAY}},
    "RayJob": {"spec": {"entrypoint": "python train.py", "rayClusterSpec": RAY}},
    "RayService": {"spec": {"serveConfigV2": "applications: []", "rayClusterConfig": RAY}},
    "PodGroup": {"spec": {"minMember": 2, "queue": "default", "subGroupPolicy": [
        {"name": "workers", "labelSelector": {"matchExpressions": [{"key": "role", "operator": "Exists"}]}}]}},
    "Queue": {"spec": {"weight": 1, "reclaimable": True, "parent": "root"}},
    "ServingRuntime": {"spec": SERVING},
    "ClusterServingRuntime": {"spec": SERVING},
    "InferenceService": {"spec": {"predictor": {"model": {"modelFormat": {"name": "sklearn"},
                                                          "storageUri": "gs://models/iris"}}}},
    "TrainJob": {"spec": {"runtimeRef": {"name": "torch-distributed"}, "trainer": {"numNodes": 2}}},
    "TrainingRuntime": {"spec": TRAINING_RUNTIME},
    "ClusterTrainingRuntime": {"spec": TRAINING_RUNTIME},
    # the 2026 AI kinds (scripts/upstream-crds)
    "LLMInferenceService": {"spec": {"model": {"uri": "hf://Qwen/Qwen2.5-7B-Instruct", "name": "qwen"},
                                     "replicas": 1, "template": POD["spec"]}},
    "InferencePool": {"spec": {"selector": {"matchLabels": {"app": "vllm"}}, "targetPorts": [{"number": 8000}],
                               "endpointPickerRef": {"name": "vllm-epp", "port": {"number": 9002}}}},
    "InferenceSet": {"spec": {"replicas": 1, "labelSelector": {"matchLabels": {"apps": "phi-4"}},
                              "template": {"inference": {"preset": {"name": "phi-4-mini-instruct"}},
                                           "resource": {"instanceType": "Standard_NC24ads_A100_v4"}}}},
    "RAGEngine": {"spec": {"compute": {"instanceType": "Standard_NC6s_v3",
                                       "labelSelector": {"matchLabels": {"apps": "rag"}}},
                           "embedding": {"local": {"modelID": "BAAI/bge-small-en-v1.5"}}}},
    "DynamoGraphDeployment": {"spec": {"backendFramework": "vllm", "services": {"VllmWorker": {
        "componentType": "worker", "replicas": 1, "envs": [{"name": "LOG_LEVEL", "value": "info"}],
        "resources": {"limits": {"gpu": "1"}},
        "extraPodSpec": {"mainContainer": {"image": "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6.1"}}}}}},
    # a singleton: its CEL rule wants the name gpu-cluster
    "GPUCluster": {"metadata": {"name": "gpu-cluster"}, "spec": {"draDriver": {"repository": "registry.k8s.io/dra-driver-nvidia",
                                          "image": "dra-driver-nvidia-gpu", "version": "v0.4.0"}}},
}

CASES = [(k["group"], k["kind"], version) for k in bundle.kinds() for version, entry in sorted(k["versions"].items())
         if entry.get("served") and entry.get("file")]


def _document(group: str, kind: str, version: str, body: dict) -> dict:
    return {"apiVersion": f"{group}/{version}", "kind": kind, "metadata": {"name": "example", "namespace": "ml"}, **body}


def _lint(tmp_path: Path, documents: list[dict] | str, *, select: str = "SCH002", config: Config | None = None,
          name: str = "manifest.yaml") -> tuple[str, list]:
    text = documents if isinstance(documents, str) else yaml.safe_dump_all(documents, sort_keys=False)
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[path], config=config or Config(), registry=REGISTRY, select=select.split(","),
                              cwd=tmp_path))
    return text, [(r.rule, r.severity, r.line, r.column, r.message) for r in report.active]


# --- an oracle for positions: PyYAML's own node marks, not the linter's tree -------------------


def _node(text: str, path: tuple) -> tuple[Any, Any]:
    """(key node, value node) at ``path`` (the key node is None for a list item)."""
    node, key = yaml.compose(text), None
    for step in path:
        if isinstance(step, int):
            node, key = node.value[step], None
        else:
            key, node = next((k, v) for k, v in node.value if k.value == step)
    return key, node


def _where_key(text: str, path: tuple) -> tuple[int, int]:
    key, node = _node(text, path)
    if key is None:  # a list item: its first key
        key = node.value[0][0]
    return key.start_mark.line + 1, key.start_mark.column + 1


def _where_value(text: str, path: tuple) -> tuple[int, int]:
    _, node = _node(text, path)
    return node.start_mark.line + 1, node.start_mark.column + 1


# --- mutations chosen from the bundled schema ---------------------------------------------------


def _schema_at(schema: dict, path: tuple) -> dict | None:
    node: Any = schema
    for step in path:
        if not isinstance(node, dict):
            return None
        if isinstance(step, int):
            node = node.get("items")
        elif step in (node.get("properties") or {}):
            node = node["properties"][step]
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
        else:
            return None
    return node if isinstance(node, dict) else None


def _walk(value: Any, path: tuple = ()) -> Any:
    yield path, value
    if isinstance(value, dict):
        for key, sub in value.items():
            yield from _walk(sub, path + (key,))
    elif isinstance(value, list):
        for index, sub in enumerate(value):
            yield from _walk(sub, path + (index,))


def _defaulted(group: str, kind: str, path: tuple) -> bool:
    shape = tuple("[]" if isinstance(step, int) else step for step in path)
    return shape in WEBHOOK_DEFAULTS.get((group, kind), ())


def _mutations(group: str, kind: str, schema: dict, body: dict) -> dict[str, tuple]:
    """A wrong-typed string and a missing required field of ``body`` (paths), found in ``schema``."""
    found: dict[str, tuple] = {}
    for path, value in _walk(body):
        if path and path[0] in ("metadata", "apiVersion", "kind"):
            continue
        node = _schema_at(schema, path)
        if node is None:
            continue
        if ("wrong" not in found and isinstance(value, str) and node.get("type") == "string"
                and not node.get("x-kubernetes-int-or-string") and "anyOf" not in node):
            found["wrong"] = path
        if "missing" not in found and isinstance(value, dict):
            for name in node.get("required") or []:
                sub = (node.get("properties") or {}).get(name) or {}
                if (name in value and name not in ("apiVersion", "kind", "metadata") and sub.get("default") is None
                        and not _defaulted(group, kind, path + (name,))):
                    found["missing"] = path + (name,)
                    break
    return found


def _set(body: dict, path: tuple, value: Any) -> None:
    node: Any = body
    for step in path[:-1]:
        node = node[step]
    if value is _DELETE:
        del node[path[-1]]
    else:
        node[path[-1]] = value


_DELETE = object()


def test_every_bundled_kind_has_an_example() -> None:
    assert {kind for _, kind, _ in CASES} == set(VALID)
    assert len(CASES) == 57


@pytest.mark.parametrize("group, kind, version", CASES)
def test_bundled_kind_valid_passes_and_each_mistake_is_one_finding_at_its_node(
        tmp_path: Path, group: str, kind: str, version: str) -> None:
    schema = bundle.load_schema(next(k for k in bundle.kinds() if (k["group"], k["kind"]) == (group, kind))
                                ["versions"][version]["file"])
    valid = _document(group, kind, version, copy.deepcopy(VALID[kind]))
    _, found = _lint(tmp_path, [valid])
    assert found == [], (kind, version)

    cases = {"unknown": ("spec", "bogusField") if "spec" in valid else ("bogusField",)}
    cases.update(_mutations(group, kind, schema, valid))
    # LocalQueue and Volcano's Queue require nothing outside status (which is never validated)
    expected = {"unknown", "wrong"} if kind in ("LocalQueue", "Queue") else {"unknown", "wrong", "missing"}
    assert set(cases) == expected, (kind, version, cases)
    for mistake, path in cases.items():
        broken = copy.deepcopy(valid)
        _set(broken, path, {"unknown": 7, "wrong": 987654321, "missing": _DELETE}[mistake])
        text, found = _lint(tmp_path, [broken], name=f"{mistake}.yaml")
        assert len(found) == 1, (kind, version, mistake, found)
        rule, severity, line, column, message = found[0]
        assert (rule, severity) == ("SCH002", "error")
        if mistake == "unknown":
            assert (line, column) == _where_key(text, path)
            assert message == f'unknown field "{dotted(path)}"'
        elif mistake == "wrong":
            assert (line, column) == _where_value(text, path)
            assert message.startswith(f"{dotted(path)}: expected ") and message.endswith("got integer 987654321")
        else:  # at the key of the mapping that lacks it; at the top level, the object's kind
            assert (line, column) == _where_key(text, path[:-1] if len(path) > 1 else ("kind",))
            assert message == f'missing required field "{dotted(path)}"'


# --- the article's Kueue manifest -----------------------------------------------------------------

ARTICLE_KUEUE = """\
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata:
  name: nvidia-gpu
spec:
  nodeLabels:
    accelerator: nvidia
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a-gpu
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: team-a
  queueingStrategy: BestEffortFIFO
  resourceGroups:
  - flavors:
    - name: nvidia-gpu
      resources:
      - name: cpu
        nominalQuota: "64"
      - name: memory
        nominalQuota: 256Gi
      - name: nvidia.com/gpu
        nominalQuota: "4"
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata:
  name: gpu-queue
  namespace: team-a
spec:
  clusterQueue: team-a-gpu
---
apiVersion: batch/v1
kind: Job
metadata:
  name: team-a-two-gpu-training
  namespace: team-a
  labels:
    kueue.x-k8s.io/queue-name: gpu-queue
spec:
  suspend: true
  completions: 2
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: worker
        image: nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
"""


def test_the_articles_cluster_queue_is_one_sch002_naming_covered_resources_and_no_quota_findings(
        tmp_path: Path) -> None:
    _, found = _lint(tmp_path, ARTICLE_KUEUE, select="SCH002,QUE005,QUE006")
    assert found == [("SCH002", "error", 19, 5, 'missing required field "spec.resourceGroups[0].coveredResources"')]


def test_with_covered_resources_the_quota_rules_speak_again(tmp_path: Path) -> None:
    """The quiet QUE005/QUE006 above come from the malformed group, not from a lost capability."""
    covered = '  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]\n    flavors:\n'
    fixed = ARTICLE_KUEUE.replace("  - flavors:\n", covered).replace('nominalQuota: "4"', 'nominalQuota: "1"')
    _, found = _lint(tmp_path, fixed, select="SCH002,QUE005,QUE006")
    assert [rule for rule, *_ in found] == ["QUE006"], found


def test_covered_resources_that_do_not_match_the_flavors_break_kueues_cel_rule_once(tmp_path: Path) -> None:
    """Kueue's CRD rule: each flavor lists as many resources as the group covers. One SCH002 at the
    group (the CEL rule's node), and the quota rules stay quiet on it (one cause, one finding)."""
    half = ARTICLE_KUEUE.replace("  - flavors:\n", '  - coveredResources: ["cpu"]\n    flavors:\n')
    _, found = _lint(tmp_path, half, select="SCH002,QUE005,QUE006")
    assert found == [("SCH002", "error", 19, 5, "spec.resourceGroups[0]: flavors must have the same number of "
                                                "resources as the coveredResources")]


def test_bundled_crds_false_turns_the_bundle_off(tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("bundled-crds: false\n", encoding="utf-8")
    config = load_config(tmp_path / ".mlops-lint.yaml", REGISTRY)
    assert config.bundled_crds is False
    _, found = _lint(tmp_path, ARTICLE_KUEUE, select="SCH002,SCH003", config=config)
    assert found == []
    (tmp_path / ".mlops-lint.yaml").write_text("bundled-crds: 'no'\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="bundled-crds"):
        load_config(tmp_path / ".mlops-lint.yaml", REGISTRY)


_PROJECT_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: localqueues.kueue.x-k8s.io}
spec:
  group: kueue.x-k8s.io
  names: {kind: LocalQueue, plural: localqueues}
  scope: Namespaced
  versions:
  - name: v1beta2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              FIELD: {type: string}
"""


def test_project_crd_wins_over_crd_paths_which_win_over_the_bundle(tmp_path: Path) -> None:
    queue = ("apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q, namespace: a}\n"
             "spec: {clusterQueue: team-a, teamName: a}\n")
    _, found = _lint(tmp_path, queue)  # the bundle: teamName is no field of Kueue's LocalQueue
    assert [m for *_, m in found] == ['unknown field "spec.teamName"']
    (tmp_path / "cluster").mkdir()
    (tmp_path / "cluster" / "crd.yaml").write_text(_PROJECT_CRD.replace("FIELD", "teamName"), encoding="utf-8")
    config = Config(crd_paths=(str(tmp_path / "cluster"),))
    _, found = _lint(tmp_path, queue, config=config)  # crd-paths' CRD (no clusterQueue), silently
    assert [m for *_, m in found] == ['unknown field "spec.clusterQueue"']
    project = tmp_path / "project"
    project.mkdir()
    (project / "crd.yaml").write_text(_PROJECT_CRD.replace("FIELD", "clusterQueue"), encoding="utf-8")
    (project / "queue.yaml").write_text(queue, encoding="utf-8")
    report = lint(LintRequest(paths=[project], config=config, registry=REGISTRY, select=["SCH002", "SCH003"],
                              cwd=tmp_path))
    assert [r.message for r in report.active] == ['unknown field "spec.teamName"']  # the project's own


def test_sch003_names_the_bundled_served_versions_and_notes_deprecated_ones(tmp_path: Path) -> None:
    text = ("apiVersion: karpenter.sh/v1beta1\nkind: NodePool\nmetadata: {name: gpu}\nspec: {}\n---\n"
            "apiVersion: ray.io/v1alpha1\nkind: RayCluster\nmetadata: {name: r}\nspec: {}\n---\n"
            "apiVersion: kubeflow.org/v2beta1\nkind: MPIJob\nmetadata: {name: m}\nspec: {}\n---\n"
            "apiVersion: kubeflow.org/v1alpha2\nkind: PyTorchJob\nmetadata: {name: p}\nspec: {}\n")
    _, found = _lint(tmp_path, text, select="SCH003")
    ray = bundle.table()[("ray.io", "raycluster")][0]
    assert found == [
        ("SCH003", "error", 1, 13, "the CRD of Azure/karpenter-provider-azure 352646f599 (bundled) does not serve "
                                   "karpenter.sh/v1beta1 NodePool (it serves karpenter.sh/v1); use karpenter.sh/v1"),
        ("SCH003", "info", 6, 13, f"ray.io/v1alpha1 RayCluster is still served but deprecated by {ray.origin} "
                                  f"(\"{ray.versions['v1alpha1'].warning}\"); move to ray.io/v1"),
        # MPIJob v2beta1 is the MPI Operator's (not bundled): accepted. v1alpha2 PyTorchJob: the release table
        ("SCH003", "error", 16, 13, "kubeflow.org/v1alpha2 PyTorchJob is not served by the Kubeflow Training Operator "
                                    "any more; use kubeflow.org/v1"),
    ]


# --- RE2 patterns and references ----------------------------------------------------------------

_REDOS_CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: things.example.com}
spec:
  group: example.com
  names: {kind: Thing, plural: things}
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
            properties:
              name: {type: string, pattern: '^([a-z0-9]+-?)*[a-z0-9]$'}
              other: {type: string, pattern: '^(?!x)[a-z]+$'}
---
apiVersion: example.com/v1
kind: Thing
metadata: {name: t}
spec:
  name: NAME
  other: abc
"""


def test_a_redos_pattern_finishes_in_linear_time(tmp_path: Path) -> None:
    """Python's backtracking re needs hours for 40 a's and a '_' here; RE2 (the API server's
    semantics) answers at once, also for 100,000 characters."""
    for name in ("a" * 40 + "_", "a" * 100_000 + "_"):
        started = time.perf_counter()
        _, found = _lint(tmp_path, _REDOS_CRD.replace("NAME", name))
        assert time.perf_counter() - started < 20  # generous for a loaded machine; backtracking: hours
        assert [(r, s, line, col) for r, s, line, col, _ in found] == [("SCH002", "error", 26, 9),
                                                                      ("SCH002", "info", 27, 10)]
        assert found[0][4].startswith("spec.name: expected a value matching ^([a-z0-9]+-?)*[a-z0-9]$, got string")
        assert found[1][4].startswith('spec.other: not checked against the pattern "^(?!x)[a-z]+$" of its schema: '
                                      "RE2")
    _, found = _lint(tmp_path, _REDOS_CRD.replace("NAME", "a-b-c").replace("other: abc", "other: 7"))
    assert [(r, s, m) for r, s, _, _, m in found] == [("SCH002", "error", "spec.other: expected string, got integer 7")]


def test_re2_semantics_are_the_api_servers() -> None:
    from mlops_lint.validation.regex import matches, searcher

    assert matches("^(?i)(abort|warn)?$", "WARN")  # Go accepts a flag group here; Python's re refuses it
    assert not matches(r"^\d+$", "٣")  # \d is ASCII in RE2 and Go
    assert searcher("(?=a)") is None and searcher(r"(a)\1") is None


def test_refs_resolve_inside_the_schema_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket
    import urllib.request

    from mlops_lint.validation.validate import Validator

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a $ref was fetched")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for ref in ("http://127.0.0.1:9/schema.json", "file:///etc/passwd", "other.json#/x"):
        [issue] = Validator({"type": "object", "properties": {"a": {"$ref": ref}}}).issues({"a": 1})
        assert issue.message.startswith("the schema this object is checked against cannot be evaluated")


# --- the bundle itself ----------------------------------------------------------------------------


def test_schemas_load_lazily_per_kind_and_version(tmp_path: Path) -> None:
    code = textwrap.dedent(f"""
        import json, sys
        from pathlib import Path
        from mlops_lint.validation import bundle
        read = []
        original = bundle.load_schema
        bundle.load_schema = lambda file: read.append(file) or original(file)
        from mlops_lint.config import Config
        from mlops_lint.engine import LintRequest, lint
        from mlops_lint.registry import load_registry
        path = Path({str(tmp_path / 'q.yaml')!r})
        path.write_text("apiVersion: kueue.x-k8s.io/v1beta2\\nkind: LocalQueue\\nmetadata: {{name: q}}\\nspec: {{}}\\n")
        lint(LintRequest(paths=[path], config=Config(), registry=load_registry(), select=["SCH002"], cwd=path.parent))
        print(json.dumps(read))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == ["kueue.x-k8s.io_localqueue_v1beta2.json.gz"]


def test_sch002_docs_list_the_bundled_kinds_versions_and_sources() -> None:
    doc = REGISTRY.get("SCH002").doc
    block = doc.split("<!-- bundled kinds:", 1)[1].split("-->", 1)[1].split("<!-- end of bundled kinds -->")[0]
    assert block.strip().splitlines() == bundle.summary()
    for kind in VALID:
        assert kind in block
    explained = subprocess.run([sys.executable, "-m", "mlops_lint", "explain", "SCH002"], capture_output=True, text=True,
                               check=True).stdout
    assert "kubernetes-sigs/kueue `ff69552e79`" in explained and "LeaderWorkerSet (v1)" in explained


def test_sources_name_upstream_ref_and_licence() -> None:
    text = (REPO / "linter" / "data" / "crds" / "SOURCES.md").read_text("utf-8")
    for source in bundle.index()["sources"].values():
        assert source["repository"] in text and source["ref"] in text and source["licence"] == "Apache-2.0"


def test_upstream_copies_keep_their_bytes_and_name_source_commit_and_licence() -> None:
    """Each CRD of scripts/upstream-crds is listed in its SOURCES.md with repository, path, a 40-digit
    commit and Apache-2.0, and unpacks to the bytes whose sha256 the list gives."""
    import gzip
    import hashlib
    import re

    rows = {}
    for line in (UPSTREAM_CRDS / "SOURCES.md").read_text("utf-8").splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[0].endswith(".yaml.gz"):
            rows[cells[0]] = cells
    files = sorted(p.name for p in UPSTREAM_CRDS.glob("*.yaml.gz"))
    assert files and sorted(rows) == files
    for name, (_, repository, path, commit, licence, sha) in rows.items():
        data = gzip.decompress((UPSTREAM_CRDS / name).read_bytes())
        assert hashlib.sha256(data).hexdigest() == sha, name
        assert re.fullmatch(r"[0-9a-f]{40}", commit) and licence == "Apache-2.0", name
        assert path.split(" ")[0].endswith(name.removesuffix(".gz")) and "/" in repository, name
        assert b"kind: CustomResourceDefinition" in data[:1000], name  # after a licence header (Dynamo)


@needs_shared
def test_the_script_regenerates_the_shipped_bundle(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import bundle_crds
    finally:
        sys.path.remove(str(REPO / "scripts"))
    shipped = REPO / "linter" / "data" / "crds"
    out = tmp_path / "crds"
    out.mkdir()
    (out / "index.json").write_text((shipped / "index.json").read_text("utf-8"), "utf-8")  # the refs
    subprocess.run([sys.executable, str(REPO / "scripts" / "bundle_crds.py"), str(SHARED_CRDS), str(UPSTREAM_CRDS),
                    "--out", str(out)], check=True, capture_output=True)
    assert bundle_crds.digest(out) == bundle_crds.digest(shipped)


@needs_shared
def test_bundled_schemas_are_the_upstream_ones_compacted() -> None:
    """Loading a bundled version gives back the upstream schema with only the kept keywords."""
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import bundle_crds
    finally:
        sys.path.remove(str(REPO / "scripts"))
    for path in [*sorted(SHARED_CRDS.glob("*.yaml")), *sorted(UPSTREAM_CRDS.glob("*.yaml.gz"))]:
        for crd in bundle_crds._crds(path):
            record = next(k for k in bundle.kinds() if (k["group"], k["kind"]) == (crd["group"], crd["kind"]))
            for version in crd["versions"]:
                loaded = bundle.load_schema(record["versions"][version["name"]]["file"])
                assert loaded == bundle_crds.compact(version["schema"]), (crd["kind"], version["name"])


def test_kustomize_patches_of_bundled_kinds_stay_partial(tmp_path: Path) -> None:
    """A patch linted raw (kustomize builds off) carries only what it changes: no "missing
    required field" in it; wrong types still count."""
    (tmp_path / "kustomization.yaml").write_text("resources: [job.yaml]\npatches: [{path: patch.yaml}]\n", "utf-8")
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(_document("kubeflow.org", "PyTorchJob", "v1",
                                                                VALID["PyTorchJob"]), sort_keys=False), "utf-8")
    (tmp_path / "patch.yaml").write_text("apiVersion: kubeflow.org/v1\nkind: PyTorchJob\nmetadata: {name: example}\n"
                                         "spec:\n  runPolicy: {backoffLimit: three}\n", "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=Config(kustomize={"enabled": "never"}), registry=REGISTRY,
                              select=["SCH002"], cwd=tmp_path))
    assert [(r.path, r.line, r.message) for r in report.active] == [
        ("patch.yaml", 5, 'spec.runPolicy.backoffLimit: expected integer, got string "three"')]


def test_preserve_unknown_int_or_string_and_nullable_of_bundled_schemas(tmp_path: Path) -> None:
    # RayJob's rayClusterSpec.headGroupSpec.rayStartParams is a map of strings; KServe's
    # predictor.model.storageUri is a plain string; Volcano's minResources are quantities (int or string)
    job = _document("ray.io", "RayJob", "v1", copy.deepcopy(VALID["RayJob"]))
    job["spec"]["runtimeEnvYAML"] = "pip: [torch]"
    job["spec"]["rayClusterSpec"]["headGroupSpec"]["rayStartParams"] = {"num-cpus": "0", "dashboard-host": "0.0.0.0"}
    group = _document("scheduling.volcano.sh", "PodGroup", "v1beta1", copy.deepcopy(VALID["PodGroup"]))
    group["spec"]["minResources"] = {"cpu": 4, "memory": "16Gi", "nvidia.com/gpu": "2"}
    group["spec"]["priorityClassName"] = None  # an optional field set to null is pruned, not an error
    # KAITO keeps unknown fields in inference.template (x-kubernetes-preserve-unknown-fields)
    workspace = _document("kaito.sh", "Workspace", "v1beta1", copy.deepcopy(VALID["Workspace"]))
    workspace["inference"]["template"] = {"spec": {"containers": [{"name": "x", "anyField": 1}]}, "other": True}
    _, found = _lint(tmp_path, [job, group, workspace])
    assert found == []
    workspace["inference"]["preset"]["anyField"] = 1  # preset does not keep them
    _, found = _lint(tmp_path, [workspace])
    assert [m for *_, m in found] == ['unknown field "inference.preset.anyField"']
    group["spec"]["minResources"]["cpu"] = "four cores"
    _, found = _lint(tmp_path, [group])
    assert [m for *_, m in found] == ['spec.minResources.cpu: expected a quantity such as 500m, 2 or 8Gi, got string '
                                      '"four cores"']


def test_placeholder_text_of_documentation_manifests_is_no_violation(tmp_path: Path) -> None:
    text = """\
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  queueingStrategy: "[StrictFIFO|BestEffortFIFO]"
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default
      resources:
      - name: cpu
        nominalQuota: <integer>
  preemption: ...
  ...: ...
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: p}
spec:
  runPolicy: {backoffLimit: "<integer>", cleanPodPolicy: <string>}
  pytorchReplicaSpecs:
    Master:
      replicas: <integer>
      template:
        spec:
          containers: [{name: pytorch, image: <image>}]
"""
    _, found = _lint(tmp_path, text)
    assert found == []
    _, found = _lint(tmp_path, text.replace("nominalQuota: <integer>", "nominalQuota: four"))
    assert [m for *_, m in found] == ['spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: expected a '
                                      'quantity such as 500m, 2 or 8Gi, got string "four"']


def test_template_placeholders_and_docs_choice_lists_are_no_violation(tmp_path: Path) -> None:
    # an envsubst snippet (MicrosoftDocs node-auto-provisioning-networking.md): `$RESOURCE_GROUP` in
    # part of a pattern-checked string; the docs' `[Honor|Ignore]` choice notation, which YAML reads
    # as a list of one string; a Helm value in part of an enum
    text = """\
apiVersion: karpenter.azure.com/v1beta1
kind: AKSNodeClass
metadata: {name: backend-nodes}
spec:
  vnetSubnetID: "/subscriptions/xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx/resourceGroups/$RESOURCE_GROUP/providers/Microsoft.Network/virtualNetworks/$VNET_NAME/subnets/$BACKEND_SUBNET_NAME"
---
apiVersion: v1
kind: Pod
metadata: {name: example-pod}
spec:
  topologySpreadConstraints:
    - maxSkew: <integer>
      topologyKey: <string>
      whenUnsatisfiable: <string>
      nodeAffinityPolicy: [Honor|Ignore] # optional
  containers:
  - {name: c, image: "nginx:1.27", imagePullPolicy: "{{ .Values.pull }}Always"}
"""
    _, found = _lint(tmp_path, text)
    assert found == []
    # the same values without a placeholder are still judged
    _, found = _lint(tmp_path, text.replace("$RESOURCE_GROUP", "rg!").replace("$", "")
                     .replace("[Honor|Ignore]", "[Honor, Ignore]"))
    assert [(line, m.split(":")[0]) for _, _, line, _, m in found] == [
        (5, "spec.vnetSubnetID"), (15, "spec.topologySpreadConstraints[0].nodeAffinityPolicy")]


def test_sch002_docs_list_the_bundled_cel_rules_and_which_are_not_checked() -> None:
    doc = REGISTRY.get("SCH002").doc
    block = doc.split("<!-- bundled CEL rules:", 1)[1].split("-->", 1)[1].split("<!-- end of bundled CEL rules -->")[0]
    lines = block.strip().splitlines()
    assert lines == bundle.cel_summary()
    # every bundled kind that carries rules keeps them: the bundle must not drop x-kubernetes-validations
    assert any(line.startswith("- `kueue.x-k8s.io` ClusterQueue v1beta2: 4 of 4 checked") for line in lines)
    assert any("JobSet v1alpha2" in line and "transition rules" in line for line in lines)
