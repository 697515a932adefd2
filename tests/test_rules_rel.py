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
