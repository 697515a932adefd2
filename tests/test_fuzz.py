"""Property tests: arbitrary and mutated input never crashes the linter, and every report stays
valid (JSON against its schema, SARIF against the official schema), sorted, deterministic, with
every position inside the file.

Examples per property: 60 locally, 300 when CI is set (`CI=true`, as `.ci/run` runs).
"""

from __future__ import annotations

import json
import os
from functools import lru_cache
from pathlib import Path

import jsonschema
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from linter.config import Config
from linter.engine import LintRequest, lint
from linter.registry import load_registry
from linter.report import render

REPO = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = REPO.parent / "shared" / "sarif" / "sarif-schema-2.1.0.json"
EXAMPLES = 300 if os.environ.get("CI") else 60
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@lru_cache(maxsize=1)
def validators():
    findings = jsonschema.Draft202012Validator(json.loads((REPO / "schemas" / "findings.schema.json").read_text()))
    sarif = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())) if SARIF_SCHEMA.exists() else None
    return findings, sarif


def lint_bytes(data: bytes, name: str = "fuzz.yaml"):
    return lint(LintRequest(paths=[], config=Config(), registry=load_registry(), select=["ALL", "LNT001"],
                            stdin=(name, data), jobs=1, cwd=Path("/nonexistent-fuzz-root")))


def check_invariants(data: bytes, name: str = "fuzz.yaml") -> None:
    report = lint_bytes(data, name)
    assert not [r for r in report.results if r.rule == "LNT002"], [r.message for r in report.results if r.rule == "LNT002"]
    keys = [r.sort_key() for r in report.results]
    assert keys == sorted(keys)
    lines = data.count(b"\n") + 1
    for result in report.results:
        assert 1 <= result.span.line <= max(lines, 1) + 1, result
        assert result.span.col >= 1
    findings_validator, sarif_validator = validators()
    as_json = render(report, "json")
    findings_validator.validate(json.loads(as_json))
    as_sarif = render(report, "sarif")
    if sarif_validator is not None:
        sarif_validator.validate(json.loads(as_sarif))
    assert render(lint_bytes(data, name), "json") == as_json  # deterministic


# -- strategies --------------------------------------------------------------------------------

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(10**20), max_value=10**20), st.floats(allow_nan=True),
    st.text(max_size=12), st.sampled_from(["500m", "1.5", "8Gi", "8G", "1e3", "-1", "0", "1", "Gi", "yes", "on", "latest"]),
)
json_like = st.recursive(
    scalars,
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=20,
)
quantities = st.one_of(st.sampled_from(["1", "2", "0.5", "500m", "1Gi", "16G", "abc", "", "1e3", "-2"]),
                       st.integers(-3, 9), st.floats(-2, 9), st.none(), json_like)
resource_maps = st.dictionaries(
    st.sampled_from(["cpu", "memory", "nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "amd.com/gpu", "ephemeral-storage", "x"]),
    quantities, max_size=4,
)
containers = st.fixed_dictionaries(
    {"name": st.one_of(st.text(max_size=8), st.integers(), st.none()),
     "image": st.one_of(st.sampled_from(["busybox", "nvcr.io/nvidia/cuda:12.4.1-runtime-ubuntu22.04", "x:latest",
                                         "host:5000/r", "r@sha256:" + "a" * 64, "$(IMG)", ""]), json_like)},
    optional={"resources": st.one_of(st.fixed_dictionaries({}, optional={"requests": resource_maps, "limits": resource_maps}),
                                     json_like),
              "env": st.one_of(st.lists(st.fixed_dictionaries({"name": st.text(max_size=6)}, optional={"value": scalars})), json_like),
              "extra": json_like},
)
pod_specs = st.fixed_dictionaries(
    {"containers": st.one_of(st.lists(containers, max_size=3), json_like)},
    optional={"initContainers": st.lists(containers, max_size=2), "ephemeralContainers": st.lists(containers, max_size=1),
              "nodeSelector": json_like, "tolerations": json_like},
)
template = pod_specs.map(lambda spec: {"metadata": {"labels": {"app": "x"}}, "spec": spec})


def _object(kind_and_spec):
    api, kind, spec = kind_and_spec
    return {"apiVersion": api, "kind": kind, "metadata": {"name": "fuzz", "namespace": "ml"}, "spec": spec}


workloads = st.one_of(
    st.tuples(st.just("v1"), st.just("Pod"), pod_specs),
    st.tuples(st.sampled_from(["apps/v1"]), st.sampled_from(["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"]),
              st.fixed_dictionaries({"template": template}, optional={"replicas": scalars})),
    st.tuples(st.just("batch/v1"), st.just("Job"), st.fixed_dictionaries({"template": template}, optional={"parallelism": scalars})),
    st.tuples(st.just("batch/v1"), st.just("CronJob"), template.map(lambda t: {"jobTemplate": {"spec": {"template": t}}})),
    st.tuples(st.just("kubeflow.org/v1"), st.sampled_from(["PyTorchJob", "TFJob", "MPIJob"]),
              st.dictionaries(st.sampled_from(["Master", "Worker", "Chief", "PS", "Launcher"]),
                              st.fixed_dictionaries({"template": template}, optional={"replicas": scalars}), max_size=3)
              .map(lambda specs: {"pytorchReplicaSpecs": specs, "tfReplicaSpecs": specs, "mpiReplicaSpecs": specs})),
    st.tuples(st.just("batch.volcano.sh/v1alpha1"), st.just("Job"),
              st.lists(st.fixed_dictionaries({"template": template}, optional={"name": scalars, "replicas": scalars}), max_size=2)
              .map(lambda tasks: {"tasks": tasks, "minAvailable": 1})),
    st.tuples(st.text(max_size=10), st.text(max_size=10), json_like),
).map(_object)


@FUZZ
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_never_crash(data: bytes) -> None:
    check_invariants(data)


@FUZZ
@given(st.lists(workloads, min_size=1, max_size=3), st.booleans())
def test_kubernetes_shaped_objects(objects, as_list: bool) -> None:
    if as_list:
        text = yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}, allow_unicode=True)
    else:
        text = yaml.safe_dump_all(objects, allow_unicode=True)
    check_invariants(text.encode("utf-8"))


@FUZZ
@given(st.lists(json_like, max_size=3))
def test_arbitrary_yaml_documents(documents) -> None:
    check_invariants(yaml.safe_dump_all(documents, allow_unicode=True).encode("utf-8"))


FIXTURE_TEXTS = sorted(p for p in (REPO / "fixtures").rglob("*.yaml"))


@FUZZ
@given(st.sampled_from(FIXTURE_TEXTS or [REPO / "pyproject.toml"]), st.data())
def test_mutated_fixtures(path: Path, data) -> None:
    text = path.read_bytes()
    operations = data.draw(st.lists(st.tuples(st.sampled_from(["delete", "insert", "duplicate-line", "swap"]),
                                              st.integers(0, max(len(text) - 1, 0)),
                                              st.sampled_from([b":", b"-", b" ", b"\n", b"[", b"&a ", b"*a", b"#", b"\t", b"\xff"])),
                                    max_size=4))
    for operation, position, piece in operations:
        if operation == "delete":
            text = text[:position] + text[position + 1:]
        elif operation == "insert":
            text = text[:position] + piece + text[position:]
        elif operation == "duplicate-line":
            lines = text.split(b"\n")
            index = position % max(len(lines), 1)
            lines.insert(index, lines[index] if lines else b"")
            text = b"\n".join(lines)
        else:
            text = text[position:] + text[:position]
    check_invariants(text, path.name if path.suffix == ".yaml" else "fuzz.yaml")
