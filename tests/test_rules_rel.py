"""REL rules and the serving model they share (linter.model.serving): which workloads serve a
model, probes (REL001), spread (REL002) and disruption budgets (REL003) beyond their fixtures."""

from __future__ import annotations

import textwrap

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import load_bytes, run_rules
from mlops_lint.index import ProjectIndex
from mlops_lint.model.document import K8S
from mlops_lint.model.serving import serving_sign
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

DEPLOYMENT = """\
apiVersion: apps/v1
kind: KIND
metadata: {name: llm, namespace: serving}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: llm}}
  template:
    metadata: {labels: {app: llm}}
    spec:
      SPEC
      containers:
      - name: server
        image: IMAGE
        START
"""


def deployment(image: str = "vllm/vllm-openai:v0.6.3", *, start: str = "", spec: str = "", replicas: str = "2",
               kind: str = "Deployment") -> str:
    return (DEPLOYMENT.replace("KIND", kind).replace("REPLICAS", replicas).replace("IMAGE", image)
            .replace("START", start).replace("SPEC", spec))


def documents(*texts: str) -> list:
    docs = []
    for i, text in enumerate(texts):
        doc = load_bytes(textwrap.dedent(text).encode(), f"f{i}.yaml", K8S)
        assert not doc.errors, doc.errors
        docs.append(doc)
    return docs


def lint(*texts: str, select: tuple[str, ...]) -> list:
    docs = documents(*texts)
    results = run_rules(docs, {d.path for d in docs}, [REGISTRY.get(c) for c in select], Config())
    return sorted((r for r, _ in results), key=lambda r: (r.path, r.line, r.column, r.rule))


def sign(text: str) -> str | None:
    index = ProjectIndex(documents(text))
    return serving_sign(index.workload(index.objects[0]))


@pytest.mark.parametrize("image, start, serving", [
    ("vllm/vllm-openai:v0.6.3", "", True),
    ("myacr.azurecr.io/mirror/nvidia/tritonserver:24.05-py3", "", True),
    ("ghcr.io/huggingface/text-generation-inference:2.3.1", "", True),
    ("nvcr.io/nim/meta/llama-3.1-8b-instruct:1.1.2", "", True),
    ("us-docker.pkg.dev/cloud-tpu-images/inference/torchserve-tpu:v0.8.2", "", True),  # a server's variant
    ("myacr.azurecr.io/vllm-rocm:0.6.3", "", True),
    ("myacr.azurecr.io/vllmx:1", "", False), ("myacr.azurecr.io/my-torchserve:1", "", False),
    ("myacr.azurecr.io/llm:1", "command: [vllm, serve, m]", True),
    ("myacr.azurecr.io/llm:1", "command: [python3, -m, vllm.entrypoints.openai.api_server]", True),
    ("myacr.azurecr.io/llm:1", "command: [bash, -c, 'pip list; exec tritonserver --model-repository=/m']", True),
    ("myacr.azurecr.io/llm:1", "command: [python, app.py]", False),
    ("python:3.12-slim", "command: [python, /app/server.py]", False),  # the article's metrics demo
    ("nginx:1.27", "", False),
    ("myacr.azurecr.io/llm:1", "command: [vllm, bench, m]", False),
])
def test_serving_sign(image: str, start: str, serving: bool) -> None:
    assert (sign(deployment(image, start=start)) is not None) is serving


def test_serving_kinds() -> None:
    assert sign("apiVersion: serving.kserve.io/v1beta1\nkind: InferenceService\nmetadata: {name: m}\n"
                "spec: {predictor: {model: {modelFormat: {name: sklearn}, storageUri: 'gs://x'}}}\n") is not None
    job = deployment(kind="Job").replace("apps/v1", "batch/v1").replace("  replicas: 2\n", "")
    assert sign(job) is None  # a batch run of a server image is not serving
    assert sign(deployment(kind="DaemonSet")) is None


@pytest.mark.parametrize("start, missing", [
    ("", ["readinessProbe", "livenessProbe"]),
    ("readinessProbe: {httpGet: {path: /health, port: 8000}}", ["livenessProbe"]),
    ("livenessProbe: {httpGet: {path: /health, port: 8000}}", ["readinessProbe"]),
    ("startupProbe: {httpGet: {path: /health, port: 8000}}", ["readinessProbe", "livenessProbe"]),
])
def test_rel001_names_the_missing_probes_at_the_container(start: str, missing: list[str]) -> None:
    results = lint(deployment(start=start), select=("REL001",))
    assert [(r.rule, r.line, r.column) for r in results] == [("REL001", 12, 9)]
    for probe in ("readinessProbe", "livenessProbe"):
        assert (f"`{probe}`" in results[0].message.split(":")[0]) is (probe in missing)
    assert "`/health`, port 8000" in results[0].fix


def test_rel001_both_probes_pass() -> None:
    both = "readinessProbe: {httpGet: {path: /health, port: 8000}}\n        livenessProbe: {tcpSocket: {port: 8000}}"
    assert lint(deployment(start=both), select=("REL001",)) == []
    assert lint(deployment("nginx:1.27"), select=("REL001",)) == []


@pytest.mark.parametrize("replicas, spec, fires", [
    ("2", "", True), ("1", "", False), ("'3'", "", False), ("${REPLICAS}", "", False),
    ("3", "topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, "
          "whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: llm}}}]", False),
    ("3", "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: "
          "[{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: llm}}}]}}", False),
    ("3", "affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
          "[{matchExpressions: [{key: gpu, operator: Exists}]}]}}}", True),  # node affinity spreads nothing
    ("3", "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: []}}", True),  # no term
    ("3", "affinity: {podAntiAffinity: {}}", True),
    ("3", "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, "
          "podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: llm}}}}]}}", False),
])
def test_rel002(replicas: str, spec: str, fires: bool) -> None:
    results = lint(deployment(replicas=replicas, spec=spec), select=("REL002",))
    assert [(r.rule, r.line, r.column) for r in results] == ([("REL002", 5, 13)] if fires else [])


PDB = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: b, NAMESPACE}\nspec: {maxUnavailable: 1, SELECTOR}\n"


@pytest.mark.parametrize("namespace, selector, fires", [
    ("namespace: serving", "selector: {matchLabels: {app: llm}}", False),
    ("namespace: serving", "selector: {matchExpressions: [{key: app, operator: In, values: [llm, web]}]}", False),
    ("namespace: serving", "selector: {}", False),  # an empty selector selects every pod of the namespace
    ("labels: {}", "selector: {matchLabels: {app: llm}}", False),  # namespace not written: applied beside it
    ("namespace: other", "selector: {matchLabels: {app: llm}}", True),
    ("namespace: serving", "selector: {matchLabels: {app: web}}", True),
    ("namespace: serving", "minAvailable: 1", True),  # no selector selects nothing
])
def test_rel003(namespace: str, selector: str, fires: bool) -> None:
    pdb = PDB.replace("NAMESPACE", namespace).replace("SELECTOR", selector)
    results = lint(deployment(), pdb, select=("REL003",))
    assert [(r.rule, r.path, r.line, r.column) for r in results] == ([("REL003", "f0.yaml", 5, 13)] if fires else [])
    if fires:
        assert "`selector: {matchLabels: {app: llm}}`" in results[0].fix
    assert lint(deployment(replicas="1"), select=("REL003",)) == []


LWS = """\
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: vllm, namespace: serving}
spec:
  replicas: 2
  leaderWorkerTemplate:
    size: 2
    LEADER
    workerTemplate:
      metadata: {labels: {app: vllm}}
      spec:
        containers:
        - name: worker
          image: vllm/vllm-openai:v0.8.5
"""
LEADER = """leaderTemplate:
      spec:
        containers:
        - name: leader
          image: vllm/vllm-openai:v0.8.5"""


def test_rel001_judges_a_leaderworkerset_on_its_leader() -> None:
    # with a leader template only the leader serves requests: the worker's server image is not judged
    results = lint(LWS.replace("LEADER", LEADER), select=("REL001",))
    assert [(r.rule, r.line, r.column) for r in results] == [("REL001", 11, 11)]
    assert "`leader` of LeaderWorkerSet `vllm`" in results[0].message
    # without one every pod runs the worker template, which then serves
    results = lint(LWS.replace("    LEADER\n", ""), select=("REL001",))
    assert [(r.rule, r.line, r.column) for r in results] == [("REL001", 12, 11)]
    assert "`worker` of LeaderWorkerSet `vllm`" in results[0].message


PREDICTOR = """\
apiVersion: serving.kserve.io/v1beta1
kind: InferenceService
metadata: {name: llm, namespace: serving, labels: {team: nlp}}
spec:
  predictor:
    minReplicas: MIN
    SPEC
    model:
      modelFormat: {name: huggingface}
      storageUri: hf://org/model
"""


def predictor(minimum: str = "2", spec: str = "") -> str:
    return PREDICTOR.replace("MIN", minimum).replace("SPEC", spec)


@pytest.mark.parametrize("minimum, spec, fires", [
    ("2", "", True), ("1", "", False), ("0", "", False), ("'2'", "", False),
    ("2", "affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, "
          "podAffinityTerm: {topologyKey: kubernetes.io/hostname}}]}}", False),
    ("2", "workerSpec: {containers: [{name: worker, image: vllm/vllm-openai:v0.8.5}]}", False),  # multi-node
])
def test_rel002_on_a_kserve_predictor(minimum: str, spec: str, fires: bool) -> None:
    results = lint(predictor(minimum, spec), select=("REL002",))
    assert [(r.rule, r.line, r.column) for r in results] == ([("REL002", 6, 18)] if fires else [])
    if fires:
        assert "2 replicas (`minReplicas`)" in results[0].message and "on the predictor" in results[0].fix


def test_rel002_leaves_leaderworkerset_groups_and_rayservice_workers() -> None:
    assert lint(LWS.replace("    LEADER\n", ""), select=("REL002",)) == []
    ray = ("apiVersion: ray.io/v1\nkind: RayService\nmetadata: {name: s}\nspec:\n  rayClusterConfig:\n"
           "    workerGroupSpecs:\n    - groupName: g\n      replicas: 4\n      template:\n        spec:\n"
           "          containers: [{name: w, image: vllm/vllm-openai:v0.8.5}]\n")
    assert sign(ray) is not None  # it serves, but its replicas are Ray nodes
    assert lint(ray, select=("REL002", "REL003")) == []


@pytest.mark.parametrize("selector, fires", [
    ("{leaderworkerset.sigs.k8s.io/name: vllm}", False),  # the LWS controller's label
    ("{app: vllm}", False),  # the worker template's label
    ("{leaderworkerset.sigs.k8s.io/name: other}", True),
    ("{app: vllm, role: leader}", True),
])
def test_rel003_on_a_leaderworkerset(selector: str, fires: bool) -> None:
    pdb = PDB.replace("NAMESPACE", "namespace: serving").replace("SELECTOR", f"selector: {{matchLabels: {selector}}}")
    results = lint(LWS.replace("LEADER", LEADER), pdb, select=("REL003",))
    assert [(r.rule, r.line, r.column) for r in results] == ([("REL003", 5, 13)] if fires else [])
    if fires:
        assert "(groups of pods)" in results[0].message
        assert "`selector: {matchLabels: {leaderworkerset.sigs.k8s.io/name: vllm}}`" in results[0].fix


@pytest.mark.parametrize("selector, fires", [
    ("{serving.kserve.io/inferenceservice: llm}", False), ("{team: nlp}", False),  # KServe's, the object's
    ("{component: predictor, serving.kserve.io/inferenceservice: llm}", False),
    ("{serving.kserve.io/inferenceservice: other}", True), ("{component: transformer}", True),
])
def test_rel003_on_a_kserve_predictor(selector: str, fires: bool) -> None:
    pdb = PDB.replace("NAMESPACE", "namespace: serving").replace("SELECTOR", f"selector: {{matchLabels: {selector}}}")
    results = lint(predictor(), pdb, select=("REL003",))
    assert [(r.rule, r.line, r.column) for r in results] == ([("REL003", 6, 18)] if fires else [])
    if fires:
        assert "`selector: {matchLabels: {serving.kserve.io/inferenceservice: llm}}`" in results[0].fix
    assert lint(predictor("1"), select=("REL003",)) == []


@pytest.mark.parametrize("ports, hint", [
    ("", "(this server answers on `/health`, port 8000)"),  # vLLM's default
    ("ports: [{containerPort: 8000}, {containerPort: 9090}]", "(this server answers on `/health`, port 8000)"),
    ("ports: [{containerPort: 8080}]", "(this server answers on `/health`, port 8080)"),  # `--port 8080`
    ("ports: [{containerPort: 8080}, {containerPort: 9090}]", "(this server answers on `/health`)"),
])
def test_rel001_hint_names_the_port_the_container_declares(ports: str, hint: str) -> None:
    results = lint(deployment(start=ports), select=("REL001",))
    assert [r.rule for r in results] == ["REL001"]
    assert results[0].fix.endswith(hint)
