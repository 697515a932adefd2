"""SCH002 and SCH003 against real schemas: the Kubernetes OpenAPI schemas of kubernetes-validate
and the upstream CRDs in ../shared/crds (Kueue, Kubeflow, Volcano, KAITO, Prometheus Operator).

Valid objects pass, broken ones fail at the exact node with the expected words; the CRD
conversion keeps the API server's semantics (pruning, nullable, int-or-string, embedded
resources, list types, defaults); the fast check agrees with jsonschema; config settings are
validated; kustomize inputs are treated as partial.
"""

from __future__ import annotations

import copy
import json
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config, ConfigError, load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.validation import builtin, removed
from mlops_lint.validation.checker import compile_check
from mlops_lint.validation.convert import convert, convert_root
from mlops_lint.validation.crds import load_paths

REPO = Path(__file__).resolve().parents[1]
SHARED_CRDS = REPO.parent / "shared" / "crds"
needs_shared = pytest.mark.skipif(not SHARED_CRDS.is_dir(),
                                  reason=f"{SHARED_CRDS} is absent: the upstream CRDs live beside the repository")
REGISTRY = load_registry()


def run(tmp_path: Path, text: str, *, select: str = "SCH002", name: str = "manifest.yaml",
        config: Config | None = None, crds: bool = False) -> list:
    """Lint ``text`` as one file and return the findings (rule, line, column, message)."""
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    if config is None:
        config = Config(crd_paths=(str(SHARED_CRDS),)) if crds else Config()
    report = lint(LintRequest(paths=[path], config=config, registry=REGISTRY, select=select.split(","), cwd=tmp_path))
    return [(r.rule, r.line, r.column, r.message) for r in report.active]


def messages(found: list) -> list[str]:
    return [m for _, _, _, m in found]


# ---------------------------------------------------------------------------------------------
# Built-in kinds


def test_built_in_errors_are_positioned_and_worded(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: apps/v1
        kind: Deployment
        metadata:
          name: triton
        spec:
          replicas: "3"
          selector:
            matchLabels: {app: triton}
          tempate:
            spec:
              containers: []
    """)
    assert found == [
        ("SCH002", 6, 13, 'spec.replicas: expected integer, got string "3"'),
        ("SCH002", 9, 3, 'unknown field "spec.tempate" (did you mean "template"?)'),
    ]


def test_missing_field_points_at_the_parent_key(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: batch/v1
        kind: Job
        metadata:
          name: train
        spec:
          template:
            spec:
              restartPolicy: Never
    """)
    assert found == [("SCH002", 7, 5, 'missing required field "spec.template.spec.containers"')]


def test_every_error_is_reported_not_just_the_first(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: v1
        kind: Pod
        metadata:
          name: train
          labels: {epoch: 3}
        spec:
          containers:
          - name: a
            image: x
            imagePullPolicy: 1
            resources: {limits: {cpu: one}}
          - image: y
          nodeSelecter: {accelerator: nvidia}
    """)
    assert messages(found) == [
        "metadata.labels.epoch: expected string, got integer 3",
        "spec.containers[0].imagePullPolicy: expected string, got integer 1",
        "spec.containers[0].resources.limits.cpu: expected a quantity such as 500m, 2 or 8Gi, got string \"one\"",
        'missing required field "spec.containers[1].name"',
        'unknown field "spec.nodeSelecter" (did you mean "nodeSelector"?)',
    ]
    assert [(line, col) for _, line, col, _ in found] == [(5, 19), (10, 22), (11, 31), (12, 5), (13, 3)]


def test_kubernetes_decoding_quirks_pass(tmp_path: Path) -> None:
    assert run(tmp_path, """
        apiVersion: v1
        kind: Service
        metadata: {name: svc, creationTimestamp: null}
        spec:
          ports:
          - {port: 80, targetPort: http}
          - {port: 81, targetPort: 8081}
        ---
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          containers:
          - name: c
            resources: {requests: {cpu: 0.5, memory: 1e9}, limits: {cpu: "2", memory: 8Gi}}
        status:
          phase: Running
    """) == []


def test_kubernetes_version_selects_the_schema(tmp_path: Path) -> None:
    """Native sidecars (an init container's restartPolicy) appeared in 1.28; pod-level resources
    (spec.resources) later: the configured version decides which fields exist."""
    text = """
        apiVersion: v1
        kind: Pod
        metadata: {name: p}
        spec:
          resources: {limits: {cpu: "4"}}
          containers: [{name: c}]
    """
    old = run(tmp_path, text, config=Config(kubernetes_version="1.29"))
    new = run(tmp_path, text, config=Config(kubernetes_version="1.35"))
    assert messages(old) == ['unknown field "spec.resources" (did you mean "resourceClaims"?)']
    assert new == []


def test_unknown_kind_of_a_built_in_group(tmp_path: Path) -> None:
    assert messages(run(tmp_path, """
        apiVersion: batch/v1
        kind: CronJobs
        metadata: {name: x}
    """)) == ['batch/v1 has no kind "CronJobs" (did you mean "CronJob"?)']


def test_kinds_without_a_schema_are_skipped(tmp_path: Path) -> None:
    assert run(tmp_path, """
        apiVersion: kustomize.config.k8s.io/v1beta1
        kind: Kustomization
        resources: [job.yaml]
        ---
        apiVersion: networking.istio.io/v1
        kind: DestinationRule
        metadata: {name: x}
        spec: {anything: 1}
        ---
        apiVersion: v1
        kind: Config
        clusters: []
    """) == []


# ---------------------------------------------------------------------------------------------
# Real CRDs (../shared/crds)


ARTICLE_PYTORCHJOB = """
    apiVersion: kubeflow.org/v1
    kind: PyTorchJob
    metadata:
      name: pytorch-nccl-example
      namespace: ml-training
    spec:
      pytorchReplicaSpecs:
        Master:
          replicas: 1
          restartPolicy: OnFailure
          template:
            metadata:
              labels: {training-job: pytorch-nccl-example}
            spec:
              containers:
              - name: pytorch
                image: nvcr.io/nvidia/pytorch:24.05-py3
                env:
                - {name: NCCL_SOCKET_IFNAME, value: eth0}
                resources:
                  limits: {nvidia.com/gpu: 1}
        Worker:
          replicas: 1
          restartPolicy: OnFailure
          template:
            spec:
              containers:
              - name: pytorch
                image: nvcr.io/nvidia/pytorch:24.05-py3
                resources:
                  limits: {nvidia.com/gpu: 1}
"""


@needs_shared
def test_real_crds_accept_valid_objects(tmp_path: Path) -> None:
    found = run(tmp_path, ARTICLE_PYTORCHJOB + """
    ---
    apiVersion: kubeflow.org/v1
    kind: TFJob
    metadata: {name: tf, namespace: ml-training}
    spec:
      tfReplicaSpecs:
        Worker:
          replicas: 2
          template:
            spec:
              containers: [{name: tensorflow, image: tensorflow/tensorflow:2.16.1-gpu}]
    ---
    apiVersion: kubeflow.org/v1
    kind: MPIJob
    metadata: {name: mpi, namespace: ml-training}
    spec:
      slotsPerWorker: 1
      mpiReplicaSpecs:
        Launcher:
          replicas: 1
          template:
            spec:
              containers: [{name: launcher, image: mpioperator/mpi-pi:openmpi}]
    ---
    apiVersion: batch.volcano.sh/v1alpha1
    kind: Job
    metadata: {name: vj, namespace: ml-training}
    spec:
      minAvailable: 2
      schedulerName: volcano
      queue: default
      tasks:
      - replicas: 2
        name: worker
        template:
          spec:
            containers: [{name: w, image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime}]
    ---
    apiVersion: kueue.x-k8s.io/v1beta1
    kind: ClusterQueue
    metadata: {name: team-a-gpu}
    spec:
      namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: team-a}}
      queueingStrategy: BestEffortFIFO
      resourceGroups:
      - coveredResources: [cpu, memory, nvidia.com/gpu]
        flavors:
        - name: nvidia-gpu
          resources:
          - {name: cpu, nominalQuota: "64"}
          - {name: memory, nominalQuota: 256Gi}
          - {name: nvidia.com/gpu, nominalQuota: 4}
    ---
    apiVersion: kueue.x-k8s.io/v1beta2
    kind: LocalQueue
    metadata: {name: gpu-queue, namespace: team-a}
    spec: {clusterQueue: team-a-gpu}
    ---
    apiVersion: kaito.sh/v1alpha1
    kind: Workspace
    metadata: {name: workspace-tuning-phi-3-mini}
    resource:
      instanceType: Standard_NC24ads_A100_v4
      labelSelector: {matchLabels: {apps: phi-3-mini-tuning}}
    tuning:
      preset: {name: phi-3-mini-4k-instruct}
      method: qlora
      input:
        urls: [https://huggingface.co/datasets/yahma/alpaca-cleaned/resolve/main/alpaca_data_cleaned.json]
      output:                          # required by the CRD (the article's example omits it)
        image: myacr.azurecr.io/adapters/phi-3-mini:0.1.0
        imagePushSecret: acr-push
    ---
    apiVersion: monitoring.coreos.com/v1
    kind: PodMonitor
    metadata: {name: dcgm-exporter, namespace: gpu-operator}
    spec:
      selector: {matchLabels: {app: nvidia-dcgm-exporter}}
      podMetricsEndpoints:
      - {port: metrics, interval: 30s}
    """, select="SCH002,SCH003", crds=True)
    # Kueue's v1beta1 is still served, deprecated by its CRD: an info-level note, nothing else
    assert [(rule, message.split(" is still served")[0]) for rule, _, _, message in found] == [
        ("SCH003", "kueue.x-k8s.io/v1beta1 ClusterQueue")]


@needs_shared
def test_real_crds_reject_broken_objects_at_the_node(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        metadata: {name: broken, namespace: ml-training}
        spec:
          pytorchReplicaSpecs:
            Worker:
              replicas: "2"
              restartPolicy: OnFailure
              tempalte:
                spec:
                  containers: [{name: pytorch}]
        ---
        apiVersion: kueue.x-k8s.io/v1beta2
        kind: ClusterQueue
        metadata: {name: team-a-gpu}
        spec:
          admissionChecksStrategy:
            admissionChecks:
            - {name: provisioning, onFlavors: [nvidia-gpu, nvidia-gpu]}
          resourceGroups:
          - coveredResources: [cpu]
            flavors:
            - name: nvidia-gpu
              resources:
              - {name: cpu, nominalQuota: four}
            - name: nvidia-gpu
              resources: []
        ---
        apiVersion: kaito.sh/v1beta1
        kind: Workspace
        metadata: {name: ws}
        resource:
          instanceType: 4
        tunning: {}
        ---
        apiVersion: monitoring.coreos.com/v1
        kind: PodMonitor
        metadata: {name: dcgm}
        spec:
          selector: {}
          podMetricsEndpoints:
          - {port: metrics, interval: 30, honorLabel: true}
    """, crds=True)
    assert [(line, col, message) for _, line, col, message in found] == [
        (7, 17, 'spec.pytorchReplicaSpecs.Worker.replicas: expected integer, got string "2"'),
        (9, 7, 'unknown field "spec.pytorchReplicaSpecs.Worker.tempalte" (did you mean "template"?)'),
        (19, 52, ('spec.admissionChecksStrategy.admissionChecks[0].onFlavors[1]: duplicate item string "nvidia-gpu" '
                 '(the items must be unique)')),
        (25, 35, ("spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: expected a quantity such as 500m, 2 or "
                 '8Gi, got string "four"')),
        (26, 13, ('spec.resourceGroups[0].flavors[1]: duplicate entry with name "nvidia-gpu" (first at '
                 "spec.resourceGroups[0].flavors[0]; the list is keyed by name)")),
        (27, 7, "spec.resourceGroups[0].flavors[1].resources: expected at least 1 item, got 0"),
        (32, 1, 'missing required field "resource.labelSelector"'),
        (33, 17, "resource.instanceType: expected string, got integer 4"),
        (34, 1, 'unknown field "tunning" (did you mean "tuning"?)'),
        (42, 31, "spec.podMetricsEndpoints[0].interval: expected string, got integer 30"),
        (42, 35, 'unknown field "spec.podMetricsEndpoints[0].honorLabel" (did you mean "honorLabels"?)'),
    ]


@needs_shared
def test_crd_versions_decide_what_is_served(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: kubeflow.org/v1beta1
        kind: PyTorchJob
        metadata: {name: old}
        ---
        apiVersion: kueue.x-k8s.io/v1beta1
        kind: LocalQueue
        metadata: {name: deprecated-but-served, namespace: team-a}
        spec: {clusterQueue: q}
    """, select="SCH003", crds=True)
    assert len(found) == 2
    rule, line, column, message = found[0]
    assert (rule, line, column) == ("SCH003", 1, 13)
    assert message.startswith("the CustomResourceDefinition pytorchjobs.kubeflow.org (")
    assert message.endswith("does not serve kubeflow.org/v1beta1; use kubeflow.org/v1 (its storage version)")
    rule, line, column, message = found[1]  # deprecated but served: a note naming the version to move to
    assert (rule, line, column) == ("SCH003", 5, 13)
    assert message.startswith("kueue.x-k8s.io/v1beta1 LocalQueue is still served but deprecated by the "
                              "CustomResourceDefinition localqueues.kueue.x-k8s.io (")
    assert message.endswith('("This version is deprecated. Use v1beta2 instead."); move to kueue.x-k8s.io/v1beta2')


@needs_shared
def test_every_shared_crd_converts_to_a_valid_json_schema() -> None:
    """Each version of each upstream CRD converts to a schema that jsonschema accepts as a schema,
    and the fast check and jsonschema agree on a bare object of that kind."""
    from jsonschema import Draft202012Validator

    from mlops_lint.validation.convert import Lazy, deep
    from mlops_lint.validation.validate import _full_validator

    release = builtin.release(builtin.DEFAULT_KUBERNETES_VERSION)
    crds = load_paths([str(SHARED_CRDS)], REPO)
    assert {crd.kind.lower() for crd in crds} >= {"pytorchjob", "tfjob", "mpijob", "clusterqueue", "localqueue",
                                                   "workspace", "job", "podgroup", "queue", "podmonitor"}
    for crd in crds:
        for name, version in crd.versions.items():
            schema = convert_root(version.schema)
            plain = deep(schema)
            # a valid schema (patterns are RE2, which the metaschema's Python `regex` format would refuse)
            assert not list(Draft202012Validator(Draft202012Validator.META_SCHEMA).iter_errors(plain)), (crd.name, name)
            instance = {"apiVersion": f"{crd.group}/{name}", "kind": crd.kind, "metadata": {"name": "x"}, "spec": {}}
            schema["$defs"] = release.defs
            slow = not list(_full_validator()(Lazy(schema)).iter_errors(instance))
            assert compile_check(schema)(instance) == slow, (crd.name, name)


# ---------------------------------------------------------------------------------------------
# Conversion semantics


def test_conversion_follows_structural_schema_rules() -> None:
    schema = convert({
        "type": "object",
        "required": ["name", "replicas"],
        "properties": {
            "name": {"type": "string"},
            "replicas": {"type": "integer", "default": 1, "minimum": 0, "exclusiveMinimum": True},
            "port": {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "note": {"type": "string", "nullable": True},
            "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "rule": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]},
            "either": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
                       "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
        },
    })
    assert schema["required"] == ["name"]  # replicas has a default
    props = schema["properties"]
    assert props["replicas"]["exclusiveMinimum"] == 0 and "minimum" not in props["replicas"]
    assert props["port"]["type"] == ["integer", "string", "null"] and "anyOf" not in props["port"]
    assert props["note"]["type"] == ["string", "null"]
    assert props["tags"]["uniqueItems"] is True
    assert "additionalProperties" not in props["free"]
    assert props["labels"]["additionalProperties"]["type"] == ["string", "null"]
    assert schema["additionalProperties"] is False
    either = props["either"]["anyOf"][1]  # optional, so null is allowed around the value validation
    assert either["oneOf"] == [{"required": ["a"]}, {"required": ["b"]}]  # no pruning inside logic
    assert props["name"] == {"type": "string"}  # required: null is an error


def test_embedded_resources_carry_api_version_and_kind() -> None:
    schema = convert({"type": "object", "x-kubernetes-embedded-resource": True,
                      "x-kubernetes-preserve-unknown-fields": True})
    assert schema["required"] == ["apiVersion", "kind"]
    assert schema["properties"]["metadata"] == {"$ref": "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
    assert "additionalProperties" not in schema


# ---------------------------------------------------------------------------------------------
# The fast check agrees with jsonschema


def _valid_deployment() -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "triton", "labels": {"app": "triton"}},
        "spec": {
            "replicas": 2, "selector": {"matchLabels": {"app": "triton"}},
            "template": {"metadata": {"labels": {"app": "triton"}}, "spec": {
                "containers": [{"name": "triton", "image": "nvcr.io/nvidia/tritonserver:24.05-py3",
                                "ports": [{"containerPort": 8000, "name": "http"}],
                                "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "16Gi"}}}],
                "tolerations": [{"key": "sku", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}],
            }},
        },
    }


_ODD_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False, width=16),
                        st.sampled_from(["", "3", "8Gi", "500m", "x y", "Always"]), st.just([]), st.just({}),
                        st.just([1, 1]), st.just({"unknown": 1}))


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, prefix + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, prefix + (index,))


@st.composite
def _mutated(draw, base):
    obj = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(obj) if p]
        path = draw(st.sampled_from(paths))
        parent = obj
        for step in path[:-1]:
            parent = parent[step]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "spec", "name", "$patch", "limits"]))] = copy.deepcopy(draw(_ODD_VALUES))
        else:
            parent[path[-1]] = copy.deepcopy(draw(_ODD_VALUES))
    return obj


def _deployment_schema() -> dict:
    """The built-in Deployment's schema as a validator is given it (its definitions beside it)."""
    release = builtin.release(builtin.DEFAULT_KUBERNETES_VERSION)
    return {"$defs": release.defs, "$ref": "#/$defs/io.k8s.api.apps.v1.Deployment"}


def _cluster_queue_schema() -> dict:
    """Kueue's ClusterQueue v1beta2 schema from ../shared/crds, converted, with the built-in definitions."""
    crd = next(c for c in load_paths([str(SHARED_CRDS / "kueue.x-k8s.io_clusterqueues.yaml")], REPO))
    schema = convert_root(crd.versions["v1beta2"].schema)
    schema["$defs"] = builtin.release(builtin.DEFAULT_KUBERNETES_VERSION).defs
    return schema


@settings(max_examples=300, deadline=None)
@given(_mutated(_valid_deployment()))
def test_fast_check_agrees_with_jsonschema_on_built_ins(instance) -> None:
    from jsonschema import Draft202012Validator

    schema = _deployment_schema()
    assert compile_check(schema)(instance) == (not list(Draft202012Validator(schema).iter_errors(instance)))


def _valid_cluster_queue() -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": "q"},
            "spec": {"namespaceSelector": {}, "resourceGroups": [{
                "coveredResources": ["cpu", "nvidia.com/gpu"],
                "flavors": [{"name": "gpu", "resources": [{"name": "cpu", "nominalQuota": "8"},
                                                          {"name": "nvidia.com/gpu", "nominalQuota": 2}]}]}]}}


@needs_shared
@settings(max_examples=300, deadline=None)
@given(_mutated(_valid_cluster_queue()))
def test_fast_check_agrees_with_jsonschema_on_a_crd(instance) -> None:
    from mlops_lint.validation.convert import Lazy
    from mlops_lint.validation.validate import _full_validator

    schema = _cluster_queue_schema()
    slow = _full_validator()(Lazy(schema))
    assert compile_check(schema)(instance) == (not list(slow.iter_errors(instance)))


# An invalid object's errors are listed per top-level member and kept per distinct member value
# (linter.validation.validate.Validator): one validator is shared by every example, so later
# examples hit what earlier ones left, and each must still equal the whole object's listing.
_SHARED_BUILTIN: dict = {}


@settings(max_examples=200, deadline=None)
@given(_mutated(_valid_deployment()), st.sampled_from(["web", "web-copy", "other"]))
def test_member_issues_kept_per_value_equal_the_whole_listing_on_built_ins(instance, name) -> None:
    from mlops_lint.validation.messages import translate
    from mlops_lint.validation.validate import Validator

    schema = _deployment_schema()
    validator = _SHARED_BUILTIN.setdefault("v", Validator(schema, shallow=False))
    if isinstance(instance.get("metadata"), dict):
        instance["metadata"]["name"] = name
    whole = translate(list(_full_deployment_validator(schema).iter_errors(instance)))
    assert validator.issues(instance) == whole
    assert validator.issues(copy.deepcopy(instance)) == whole  # the same again, from what was kept


def _full_deployment_validator(schema: dict):
    from mlops_lint.validation.validate import _full_validator

    if "full" not in _SHARED_BUILTIN:
        _SHARED_BUILTIN["full"] = _full_validator()(schema)
    return _SHARED_BUILTIN["full"]


_SHARED_CRD: dict = {}


@needs_shared
@settings(max_examples=200, deadline=None)
@given(_mutated(_valid_cluster_queue()), st.sampled_from(["q", "q-copy"]))
def test_member_issues_kept_per_value_equal_the_whole_listing_on_a_crd(instance, name) -> None:
    from mlops_lint.validation.convert import Lazy
    from mlops_lint.validation.messages import translate
    from mlops_lint.validation.validate import Validator, _full_validator

    if not _SHARED_CRD:
        schema = _cluster_queue_schema()
        _SHARED_CRD.update(validator=Validator(schema), full=_full_validator()(Lazy(copy.deepcopy(schema))))
    if isinstance(instance.get("metadata"), dict):
        instance["metadata"]["name"] = name
    whole = translate(list(_SHARED_CRD["full"].iter_errors(instance)))
    assert _SHARED_CRD["validator"].issues(instance) == whole


def test_copies_of_an_invalid_object_list_their_shared_members_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Twenty copies of an invalid Deployment differing in their names: ``spec`` is listed
    once, ``metadata`` once per copy (and jsonschema is never needed for them)."""
    from mlops_lint.validation.explain import Lister
    from mlops_lint.validation.validate import Validator

    validator = Validator(_deployment_schema(), shallow=False)
    listed: list = []
    issues = []
    for number in range(20):
        obj = _valid_deployment()
        obj["metadata"]["name"] = f"web-{number}"
        obj["spec"]["replicas"] = "three"
        issues.append(validator.issues(obj))
        if number == 0:
            real = Lister.errors
            monkeypatch.setattr(Lister, "errors", lambda self, instance, schema, path=(): (
                listed.append(path[-1] if path else None), real(self, instance, schema, path))[1])
    assert all(found == issues[0] for found in issues)
    assert [i.message for i in issues[0]] == ['spec.replicas: expected integer, got string "three"']
    assert listed.count("metadata") == 19 and "spec" not in listed and "replicas" not in listed
    assert validator._full is None  # listed without jsonschema


# Nodes the fast check compiles into one closure (a type with the member check of an object, a
# map or a list, a type with a pattern, an enum of strings) and nodes it must not fuse.
_FUSED = [
    {"type": ["object", "null"], "properties": {"a": {"type": "string"}}, "additionalProperties": False},
    {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]},
    {"type": ["object", "string"], "additionalProperties": {"type": ["integer", "null"]}, "maxProperties": 1},
    {"type": "object", "additionalProperties": {"type": "string"}, "required": ["a"]},
    {"additionalProperties": {"type": "string"}},
    {"type": "integer", "properties": {"a": {"type": "string"}}},
    {"type": ["array", "null"], "items": {"type": "string"}},
    {"type": "array", "items": {"type": ["integer", "object"], "additionalProperties": False}},
    {"type": ["array", "object"], "items": {"type": "integer"}, "properties": {"a": {"type": "boolean"}}},
    {"type": ["string", "number", "null"], "pattern": "^[0-9]+$"},
    {"type": ["string", "integer"], "minLength": 1, "maxLength": 2},
    {"type": "string", "pattern": "b", "minLength": 2},
    {"type": ["integer", "null"], "pattern": "^a"},
    {"type": "string", "enum": ["a", "b"]},
    {"type": ["string", "null"], "enum": ["a", None]},
    {"type": ["integer", "null"], "enum": ["a", 1]},
    {"type": "boolean", "enum": ["a"]},
    {"type": "object", "properties": {"m": {"type": ["object", "null"], "additionalProperties": {"type": "string"}},
                                      "l": {"type": ["array", "null"], "items": {"type": "string", "enum": ["a"]}}}},
]
_ODD_SCALARS = [None, True, False, 0, 1, 1.0, 1.5, "", "a", "b", "12", "abc", "ab"]
_ODD_NODES = [*_ODD_SCALARS, [], ["a"], [1, 2], [None], {}, {"a": "x"}, {"a": 1}, {"a": True}, {"b": None},
              {"a": "x", "b": 1}, {"m": {"k": "v"}}, {"m": {"k": 1}}, {"m": None}, {"l": ["a"]}, {"l": ["b"]},
              {"l": None}, {"l": "a"}, {"m": "x"}]


@pytest.mark.parametrize("schema", _FUSED)
def test_fast_check_agrees_with_jsonschema_on_fused_nodes(schema) -> None:
    from jsonschema import Draft202012Validator

    check, slow = compile_check(schema), Draft202012Validator(schema)
    for value in _ODD_NODES:
        assert check(value) == slow.is_valid(value), value


# The errors of an invalid object are listed by linter.validation.explain, without jsonschema,
# for the keywords it evaluates; it must list what jsonschema lists (as issues), and say
# Unsupported (jsonschema then lists them) rather than anything else.
_EXPLAINED = [
    *_FUSED,
    {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1, "maximum": 3}}},
    {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 2, "multipleOf": 1},
    {"type": "array", "minItems": 1, "maxItems": 1, "uniqueItems": True},
    {"type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": {"const": "x"}},
    {"type": ["string", "integer"], "pattern": "^[0-9]+$", "minLength": 2},
    {"anyOf": [{"type": "integer"}, {"type": "string"}]},
    {"oneOf": [{"type": "integer"}, {"type": "number"}]},
    {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
    {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["a", "b"]}]},
    {"not": {"type": "string"}},
    {"allOf": [{"type": ["object", "string"]}, {"properties": {"a": {"enum": ["x", 1]}}}]},
    {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}, "x-list-map-keys": ["a"]},
    {"$defs": {"s": {"type": "string", "minLength": 1}}, "type": "object", "additionalProperties": {"$ref": "#/$defs/s"}},
    {"type": "object", "properties": {"m": {"type": "object"}}, "required": ["m", "a"], "additionalProperties": False},
    {"type": ["integer", "string"], "format": "int-or-string", "description": "d", "x-kubernetes-int-or-string": True},
]
_EXPLAINED_NODES = [*_ODD_NODES, 2, 2.0, 2.5, -1, 3.0, float("nan"), "1", "123", [1, 1], [{"a": "x"}, {"a": "x"}],
                    [{"a": "x"}, {"a": "y"}], {"a": "x", "b": "x"}, {"m": {}, "a": 1}]


def _issues_both_ways(schema: dict, value) -> tuple:
    from mlops_lint.validation.explain import Lister, Unsupported
    from mlops_lint.validation.messages import translate
    from mlops_lint.validation.validate import _full_validator

    slow = translate(list(_full_validator()(schema).iter_errors(value)))
    try:
        fast = translate(Lister(schema).errors(value, schema))
    except Unsupported:
        fast = None
    return fast, slow


@pytest.mark.parametrize("schema", _EXPLAINED)
def test_explained_errors_equal_jsonschemas(schema) -> None:
    listed = 0
    for value in _EXPLAINED_NODES:
        fast, slow = _issues_both_ways(schema, value)
        if fast is not None:
            listed += 1
            assert fast == slow, value
    assert listed == len(_EXPLAINED_NODES)  # every keyword of these is one .explain evaluates


@pytest.mark.parametrize("schema", [
    {"patternProperties": {"^a": {"type": "string"}}},
    {"if": {"type": "string"}, "then": {"minLength": 2}},
    {"anyOf": [{"type": "string", "minLength": 3}, {"type": "integer"}]},
    {"type": "array", "prefixItems": [{"type": "string"}]},
    {"type": "number", "multipleOf": 0.5},
    {"type": "object", "properties": {"a": {"$id": "https://x/", "$ref": "#/$defs/s", "$defs": {"s": {"type": "string"}}}}},
])
def test_what_explain_does_not_evaluate_goes_to_jsonschema(schema) -> None:
    """Where .explain meets a keyword it does not evaluate it says Unsupported, and the object
    is listed by jsonschema: the same issues either way."""
    from mlops_lint.validation.validate import Validator

    unsupported = 0
    for value in [{"a": 1}, 1.25, [1], "x", {"a": "x"}, 7, "ab"]:
        fast, slow = _issues_both_ways(schema, value)
        unsupported += fast is None
        assert fast is None or fast == slow, value
        assert Validator(schema, shallow=False).issues(value) == slow, value
    assert unsupported


@settings(max_examples=300, deadline=None)
@given(_mutated(_valid_deployment()))
def test_explained_errors_equal_jsonschemas_on_built_ins(instance) -> None:
    from jsonschema import Draft202012Validator

    from mlops_lint.validation.explain import Lister
    from mlops_lint.validation.messages import translate

    schema = _deployment_schema()
    slow = translate(list(Draft202012Validator(schema).iter_errors(instance)))
    assert translate(Lister(schema).errors(instance, schema)) == slow  # never Unsupported on a Deployment


@needs_shared
@settings(max_examples=300, deadline=None)
@given(_mutated(_valid_cluster_queue()))
def test_explained_errors_equal_jsonschemas_on_a_crd(instance) -> None:
    from mlops_lint.validation.convert import Lazy
    from mlops_lint.validation.explain import Lister, Unsupported
    from mlops_lint.validation.messages import translate
    from mlops_lint.validation.validate import _full_validator

    schema = _cluster_queue_schema()
    slow = translate(list(_full_validator()(Lazy(copy.deepcopy(schema))).iter_errors(instance)))
    root = Lazy(schema)
    try:
        fast = translate(Lister(root).errors(instance, root))
    except Unsupported:  # a ClusterQueue's CEL-free schema has anyOf/oneOf branches of other shapes
        return
    assert fast == slow


# ---------------------------------------------------------------------------------------------
# Configuration


def test_unsupported_kubernetes_version_is_a_config_error(tmp_path: Path) -> None:
    config = tmp_path / ".mlops-lint.yaml"
    config.write_text('profile: aks-standard\nkubernetes-version: "1.19"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config(config, REGISTRY)
    message = str(raised.value)
    assert f"{config}:2:1:" in message and "'kubernetes-version' is '1.19'" in message
    assert f"{builtin.shipped_versions()[0]} to {builtin.shipped_versions()[-1]}" in message


def test_crd_paths_are_checked_when_the_config_is_read(tmp_path: Path) -> None:
    (tmp_path / "notes.yaml").write_text("just: data\n", encoding="utf-8")
    config = tmp_path / ".mlops-lint.yaml"
    config.write_text("crd-paths:\n  - crds/missing\n  - notes.yaml\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r":2:5: 'crd-paths' entry 'crds/missing': .*no such file or folder"):
        load_config(config, REGISTRY)
    config.write_text("crd-paths:\n  - notes.yaml\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r":2:5: 'crd-paths' entry 'notes.yaml': .*holds no CustomResourceDefinition"):
        load_config(config, REGISTRY)


@needs_shared
def test_crd_paths_relative_to_the_config_folder(tmp_path: Path) -> None:
    config = tmp_path / ".mlops-lint.yaml"
    relative = Path("..") / Path(*[".."] * (len(tmp_path.parts) - 2)) / SHARED_CRDS.relative_to("/")
    config.write_text(f"crd-paths: ['{relative.as_posix()}']\n", encoding="utf-8")
    loaded = load_config(config, REGISTRY)
    found = run(tmp_path, """
        apiVersion: kubeflow.org/v1
        kind: TFJob
        metadata: {name: tf}
        spec: {tfReplicaSpecs: {Worker: {replicas: two}}}
    """, config=loaded)
    assert messages(found) == ["spec.tfReplicaSpecs.Worker.replicas: expected integer, got string \"two\""]


def test_catalog_json_schemas_are_crds(tmp_path: Path) -> None:
    folder = tmp_path / "schemas"
    folder.mkdir()
    (folder / "ml.contoso.com_modelcache_v1.json").write_text(json.dumps({
        "type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "string"}}}},
    }), encoding="utf-8")
    found = run(tmp_path, """
        apiVersion: ml.contoso.com/v1
        kind: ModelCache
        metadata: {name: c}
        spec: {size: 1, sise: 2Gi}
    """, config=Config(crd_paths=(str(folder),)))
    assert messages(found) == ["spec.size: expected string, got integer 1",
                               'unknown field "spec.sise" (did you mean "size"?)']


# ---------------------------------------------------------------------------------------------
# Kustomize inputs and SCH003 data


def test_kustomize_patches_are_partial_but_still_typed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # displayed paths are relative to the working folder, as on the command line
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(
        "resources: [../base]\npatches:\n- path: gpu.yaml\n", encoding="utf-8")
    text = """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: triton}
        spec:
          replicas: "2"
          template:
            spec:
              containers:
              - name: triton
                $patch: merge
    """
    assert messages(run(tmp_path, text, name="overlay/gpu.yaml")) == ['spec.replicas: expected integer, got string "2"']
    assert len(run(tmp_path, text, name="standalone/gpu.yaml")) == 3  # selector, the type, $patch


def test_removal_table_names_replacements_that_exist() -> None:
    release = builtin.release(builtin.shipped_versions()[-1])
    for entry in removed.BUILTIN:
        assert entry.removed_in in builtin.shipped_versions() or builtin.version_key(entry.removed_in) < (1, 25)
        if entry.replacement is None:
            assert entry.note
            continue
        group, _, version = entry.replacement.rpartition("/")
        for kind in entry.kinds:
            assert release.definition(group, version, kind) is not None, (entry, kind)


def test_removed_built_in_api_names_its_replacement(tmp_path: Path) -> None:
    found = run(tmp_path, """
        apiVersion: networking.k8s.io/v1beta1
        kind: Ingress
        metadata: {name: notebook}
    """, select="SCH002,SCH003")
    assert found == [("SCH003", 1, 13, ("networking.k8s.io/v1beta1 Ingress was removed in Kubernetes 1.22 (linting "
                                       f"for {builtin.DEFAULT_KUBERNETES_VERSION}); use networking.k8s.io/v1"))]


def test_deprecated_but_not_yet_removed_is_not_reported(tmp_path: Path) -> None:
    text = """
        apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
        kind: PriorityLevelConfiguration
        metadata: {name: training}
        spec: {type: Limited}
    """
    assert run(tmp_path, text, select="SCH003", config=Config(kubernetes_version="1.31")) == []
    assert messages(run(tmp_path, text, select="SCH003", config=Config(kubernetes_version="1.32"))) == [
        ("flowcontrol.apiserver.k8s.io/v1beta3 PriorityLevelConfiguration was removed in Kubernetes 1.32 (linting "
        "for 1.32); use flowcontrol.apiserver.k8s.io/v1")]


_CRD = """
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {{name: modelcaches.ml.contoso.com}}
spec:
  group: ml.contoso.com
  names: {{kind: ModelCache, plural: modelcaches}}
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
              {field}: {{type: string}}
"""


def test_the_nearest_project_crd_wins_and_project_crds_win_over_crd_paths(tmp_path: Path) -> None:
    for folder, field in (("team-a", "size"), ("team-b", "capacity"), ("cluster", "volume")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "crd.yaml").write_text(_CRD.format(field=field), encoding="utf-8")
    (tmp_path / "team-a" / "cache.yaml").write_text(
        "apiVersion: ml.contoso.com/v1\nkind: ModelCache\nmetadata: {name: c}\nspec: {size: 1Gi, capacity: 1Gi}\n",
        encoding="utf-8")
    config = Config(crd_paths=(str(tmp_path / "cluster"),))
    report = lint(LintRequest(paths=[tmp_path / "team-a", tmp_path / "team-b"], config=config, registry=REGISTRY,
                              select=["SCH002"], cwd=tmp_path))
    assert [(r.path, r.message) for r in report.active] == [
        ("team-a/cache.yaml", 'unknown field "spec.capacity"')]
    alone = lint(LintRequest(paths=[tmp_path / "team-a" / "cache.yaml"], config=config, registry=REGISTRY,
                             select=["SCH002"], cwd=tmp_path))  # the project is the file: crd-paths decide
    assert [r.message for r in alone.active] == ['unknown field "spec.size"', 'unknown field "spec.capacity"']


@pytest.mark.parametrize("schema, error", [
    ({"anyOf": [{"type": None}, {"type": "integer"}]}, "TypeError"),  # a CRD's `type: ~`
    ({"type": [{"a": 1}]}, "TypeError"),  # a type list holding no type's name
])
def test_a_schema_jsonschema_cannot_evaluate_is_one_issue_not_a_crash(schema: dict, error: str) -> None:
    """A broken CRD schema (the API server would reject the CRD) gives one worded issue on the
    object checked against it, never an exception that LNT002 would report as a rule bug."""
    from mlops_lint.validation.validate import Validator

    [issue] = Validator({"type": "object", "properties": {"size": schema}}).issues({"size": "200 gigs"})
    assert issue.path == () and issue.category == "other"
    assert issue.message.startswith("the schema this object is checked against cannot be evaluated (")
    assert f"{error}:" in issue.message and "CustomResourceDefinition" in issue.message


def test_built_in_kinds_not_searched_for_pods_have_no_pod_template_in_their_schema() -> None:
    """linter.model.k8s skips the generic pod search for these built-in kinds: right only while
    no served version's schema reaches a Container or a PodSpec (a pod-shaped map in one is an
    unknown field, SCH002's finding)."""
    import re

    from mlops_lint.model.k8s import _NO_POD_TEMPLATE

    release = builtin.release(builtin.DEFAULT_KUBERNETES_VERSION)

    def reached(name: str, seen: set) -> set:
        if name not in seen:
            seen.add(name)
            for ref in re.findall(r'#/\$defs/([^"]+)', json.dumps(release.defs[name])):
                reached(ref, seen)
        return seen

    assert reached(release.definition("apps", "v1", "Deployment"), set()) >= {"io.k8s.api.core.v1.PodSpec"}  # the test sees pods
    for group, kind in sorted(_NO_POD_TEMPLATE):
        versions = release.kinds.get((group, kind))
        assert versions, (group, kind)
        for version in versions:
            names = reached(release.definition(group, version, kind), set())
            assert not any(n.endswith((".Container", ".PodSpec", ".PodTemplateSpec")) for n in names), (group, kind, version)
