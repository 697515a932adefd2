"""Monitor semantics beyond the fixtures: namespace selection, labels only the cluster knows,
operator-created pods, Service port indirection, and the required-labels option."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.monitoring import ByNamespace, Namespaces, Target, map_may_select, services_selected, targets_selected
from mlops_lint.model.selectors import label_value, labels_of
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: trainer-metrics, namespace: ml}
spec:
  selector: {matchLabels: {app: trainer}}
  template:
    metadata:
      labels: {app: trainer, tier: train}
    spec:
      containers:
      - name: metrics
        image: python:3.12-slim
        ports:
        - {name: metrics, containerPort: 8000}
"""


def pod_monitor(selector: str, namespace: str = "ml", namespace_selector: str = "", port: str = "metrics") -> str:
    return textwrap.dedent(f"""\
    apiVersion: monitoring.coreos.com/v1
    kind: PodMonitor
    metadata: {{name: m, namespace: {namespace}}}
    spec:
      {namespace_selector}
      selector: {selector}
      podMetricsEndpoints:
      - port: {port}
    """)


def run(tmp_path: Path, files: dict[str, str], select: str, config: Config | None = None) -> list:
    for name, text in files.items():
        (tmp_path / name).write_text(textwrap.dedent(text), encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / n for n in files], config=config or Config(root=tmp_path),
                              registry=REGISTRY, select=[select], cwd=tmp_path))
    return report.active


@pytest.mark.parametrize("selector, fires", [
    ("{matchLabels: {app: trainer}}", False),
    ("{matchLabels: {app: trainer, tier: serve}}", True),
    ("{matchExpressions: [{key: tier, operator: In, values: [train, eval]}]}", False),
    ("{matchExpressions: [{key: tier, operator: NotIn, values: [train]}]}", True),
    ("{matchExpressions: [{key: gpu, operator: DoesNotExist}]}", False),
    ("{matchExpressions: [{key: app, operator: Exists}]}", False),
    ("{}", False),
    # a label only the cluster knows, set by the Deployment's controller: taken to hold
    ("{matchLabels: {app: trainer, pod-template-hash: 5d8f7c}}", False),
    # ... but a Deployment never sets a Job's labels
    ("{matchLabels: {app: trainer, job-name: trainer}}", True),
])
def test_pod_monitor_selectors(tmp_path: Path, selector: str, fires: bool) -> None:
    found = run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": pod_monitor(selector)}, "OBS001")
    assert bool(found) is fires
    if fires:
        assert (found[0].path, found[0].line, found[0].obj.kind) == ("m.yaml", 6, "PodMonitor")  # `selector:`


def test_a_template_copied_into_several_files_is_counted_once(tmp_path: Path) -> None:
    """Per-environment copies of one Deployment are one pod template to the monitor's reader; a
    second workload is a second."""
    files = {"dev.yaml": DEPLOYMENT, "prod.yaml": DEPLOYMENT, "m.yaml": pod_monitor("{matchLabels: {app: eval}}")}
    (found,) = run(tmp_path, files, "OBS001")
    assert "(1 pod template there)" in found.message
    files["other.yaml"] = DEPLOYMENT.replace("trainer-metrics", "eval-metrics")
    (found,) = run(tmp_path, files, "OBS001")
    assert "(2 pod templates there)" in found.message
    ports = {"dev.yaml": DEPLOYMENT, "prod.yaml": DEPLOYMENT,
             "m.yaml": pod_monitor("{matchLabels: {app: trainer}}", port="http")}
    (tmp_path / "ports").mkdir()
    (found,) = run(tmp_path / "ports", ports, "OBS002")
    assert "the pod template it selects does not declare it" in found.message, found.message


@pytest.mark.parametrize("namespace, namespace_selector, fires", [
    ("ml", "", False),
    ("monitoring", "", None),  # no pod template in `monitoring`: not judged
    ("monitoring", "namespaceSelector: {matchNames: [ml]}", False),
    ("monitoring", "namespaceSelector: {any: true}", False),
    ("ml", "namespaceSelector: {matchNames: [ml-other]}", None),
])
def test_namespace_selector(tmp_path: Path, namespace: str, namespace_selector: str, fires) -> None:
    found = run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": pod_monitor("{matchLabels: {app: trainer}}", namespace,
                                                                       namespace_selector)}, "OBS001")
    assert found == []
    # and with a label nobody has: judged only when the watched namespaces hold pod templates
    found = run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": pod_monitor("{matchLabels: {app: nobody}}", namespace,
                                                                       namespace_selector)}, "OBS001")
    assert bool(found) is (fires is not None)


def test_missing_selector_is_left_to_the_schema(tmp_path: Path) -> None:
    monitor = pod_monitor("{}").replace("  selector: {}\n", "")
    assert run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": monitor}, "OBS001") == []


def test_operator_domain_selector_is_not_judged(tmp_path: Path) -> None:
    monitor = pod_monitor("{matchLabels: {kaito.sh/workspace: workspace-phi-4}}")
    assert run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": monitor}, "OBS001") == []
    assert run(tmp_path, {"d.yaml": DEPLOYMENT, "m.yaml": monitor}, "OBS002") == []


POLICY = """\
apiVersion: nvidia.com/v1
kind: ClusterPolicy
metadata: {name: cluster-policy}
spec:
  dcgmExporter: {enabled: %s}
"""


@pytest.mark.parametrize("enabled, fires", [("true", False), ("false", True), ("null", False)])
def test_gpu_operator_dcgm_exporter_counts_as_present(tmp_path: Path, enabled: str, fires: bool) -> None:
    operator = DEPLOYMENT.replace("namespace: ml", "namespace: gpu-operator")
    monitor = pod_monitor("{matchLabels: {app: nvidia-dcgm-exporter}}", "gpu-operator")
    found = run(tmp_path, {"d.yaml": operator, "m.yaml": monitor, "p.yaml": POLICY % enabled}, "OBS001")
    assert bool(found) is fires


SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  name: trainer-metrics
  namespace: ml
  labels: {app.kubernetes.io/component: metrics}
spec:
  selector: {app: trainer}
  ports:
  - {name: web, port: 80, targetPort: %s}
"""
SERVICE_MONITOR = """\
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: sm, namespace: ml}
spec:
  selector: {matchLabels: {app.kubernetes.io/component: metrics}}
  endpoints:
  - port: %s
"""


@pytest.mark.parametrize("target_port, port, fires", [
    ("metrics", "web", False), ("8000", "web", False), ("9999", "web", False),  # a number: the Service decides
    ("http", "web", True),  # the Service's targetPort names no container port
    ("metrics", "metrics", True),  # the container port's name, not the Service port's
])
def test_service_monitor_ports(tmp_path: Path, target_port: str, port: str, fires: bool) -> None:
    files = {"d.yaml": DEPLOYMENT, "s.yaml": SERVICE % target_port, "m.yaml": SERVICE_MONITOR % port}
    found = run(tmp_path, files, "OBS002")
    assert bool(found) is fires
    if fires:
        assert (found[0].path, found[0].line) == ("m.yaml", 7)


def test_service_monitor_behind_service_selects_no_pod(tmp_path: Path) -> None:
    files = {"d.yaml": DEPLOYMENT, "s.yaml": (SERVICE % "metrics").replace("{app: trainer}", "{app: trainr}"),
             "m.yaml": SERVICE_MONITOR % "web"}
    found = run(tmp_path, files, "OBS001")
    assert [(r.path, r.line) for r in found] == [("m.yaml", 5)]
    assert "no pod template of the project matches the Service's selector" in found[0].message


PORT_NAMES = ["metrics", "http", "grpc", "prom"]


@settings(max_examples=30, deadline=None)
@given(port=st.sampled_from(PORT_NAMES), declared=st.sets(st.sampled_from(PORT_NAMES)))
def test_pod_monitor_port_is_found_iff_declared(tmp_path_factory, port: str, declared: set[str]) -> None:
    tmp_path = tmp_path_factory.mktemp("obs002")
    ports = "".join(f"        - {{name: {name}, containerPort: {8000 + i}}}\n" for i, name in enumerate(sorted(declared)))
    deployment = DEPLOYMENT.replace("        - {name: metrics, containerPort: 8000}\n", ports or "        []\n")
    if not declared:
        deployment = deployment.replace("        ports:\n        []\n", "")
    found = run(tmp_path, {"d.yaml": deployment, "m.yaml": pod_monitor("{matchLabels: {app: trainer}}", port=port)}, "OBS002")
    assert bool(found) is (port not in declared)


JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: bert
  namespace: ml
  labels: {team: nlp}
spec:
  template:
    metadata:
      labels: {app.kubernetes.io/name: bert}
    spec:
      restartPolicy: Never
      containers:
      - {name: t, image: python:3.12-slim}
"""


@pytest.mark.parametrize("required, missing", [
    ((), None), (("team",), None), (("app.kubernetes.io/name",), None),  # on the only pod template
    (("team", "run-id"), ["run-id"]), (("owner", "run-id"), ["owner", "run-id"]),
])
def test_required_labels(tmp_path: Path, required: tuple, missing) -> None:
    found = run(tmp_path, {"j.yaml": JOB}, "OBS004", Config(root=tmp_path, required_labels=required))
    if missing is None:
        assert found == []
        return
    assert [(r.line, r.severity) for r in found] == [(6, "info")]
    assert all(f"`{key}`" in found[0].message for key in missing)
    assert found[0].fix == "labels:\n" + "\n".join(f"  {key}: <value>" for key in missing)


def test_required_labels_skip_long_running_workloads(tmp_path: Path) -> None:
    assert run(tmp_path, {"d.yaml": DEPLOYMENT}, "OBS004", Config(root=tmp_path, required_labels=("owner",))) == []


EXPORTER = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm-exporter, namespace: monitoring}
spec:
  selector: {matchLabels: {app: dcgm}}
  template:
    metadata: {labels: {app: dcgm}}
    spec:
      %s
      containers:
      - name: exporter
        image: nvcr.io/nvidia/k8s/dcgm-exporter:3.3.8-3.6.0-ubuntu22.04
"""


@pytest.mark.parametrize("policy, placement, fires", [
    (None, "", False),  # no GPU Operator in the project
    ("{}", "", True),  # dcgmExporter unset: the operator deploys it
    ("{enabled: true}", "nodeSelector: {accelerator: nvidia}", True),
    ("{enabled: false}", "", False),
    ('{enabled: "false"}', "", False),
    ("{}", 'nodeSelector: {nvidia.com/gpu.deploy.dcgm-exporter: "false"}', False),  # not on the operator's nodes
    ("{}", 'nodeSelector: {nvidia.com/gpu.deploy.dcgm-exporter: "true"}', False),  # the operator's own DaemonSet
])
def test_duplicate_dcgm_exporter(tmp_path: Path, policy, placement: str, fires: bool) -> None:
    files = {"ds.yaml": EXPORTER % placement}
    if policy is not None:
        files["policy.yaml"] = POLICY.replace("{enabled: %s}", policy)
    found = run(tmp_path, files, "OBS003")
    assert [(r.path, r.line) for r in found] == ([("ds.yaml", 12)] if fires else [])


# ---------------------------------------------------------------------------------------------
# The label index the monitors look pod templates and Services up by (issue 20: OBS001 and
# OBS002 scanned every pod template of a monitor's namespaces per monitor, 1.9x per file at
# 10,000 files): a look-up must select exactly what the full scan selects, in the same order.

KEYS = ("app", "tier", "job-name", "controller-uid", "batch.kubernetes.io/job-name", "ray.io/node-type")
VALUES = ("a", "b", "1", "true")
UNKNOWN = ("controller-uid", "job-name", "batch.kubernetes.io/", "ray.io/")
NAMESPACES = ("ml", "default", "other", "*")

labels = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
terms = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES + (1, True)), max_size=2)
targets = st.lists(st.builds(lambda ns, lab, unknown: Target(ns, lab, [], "", tuple(unknown)),
                             st.sampled_from(NAMESPACES), labels, st.lists(st.sampled_from(UNKNOWN), max_size=2)),
                   max_size=12)
expressions = st.lists(st.fixed_dictionaries({"key": st.sampled_from(KEYS),
                                              "operator": st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
                                              "values": st.lists(st.sampled_from(VALUES), max_size=2)}), max_size=2)
selectors = st.one_of(st.none(), st.builds(lambda m, e: {k: v for k, v in (("matchLabels", m), ("matchExpressions", e)) if v},
                                           terms, expressions))
scopes = st.one_of(st.just(Namespaces(True)),
                   st.frozensets(st.sampled_from(NAMESPACES[:3]), min_size=1).map(lambda names: Namespaces(False, names)))


class _Service:
    def __init__(self, namespace, labels, selector):
        self.namespace, self.labels, self.body = namespace, labels, {"spec": {"selector": selector}}


@settings(max_examples=300, deadline=None)
@given(found=targets, selector=selectors, namespaces=scopes)
def test_the_label_index_selects_what_a_scan_of_the_namespaces_selects(found, selector, namespaces) -> None:
    by = ByNamespace(found)
    assert targets_selected(selector, namespaces, by.selectable(namespaces, selector)) == \
        targets_selected(selector, namespaces, by.within(namespaces))
    assert by.count_within(namespaces) == len(by.within(namespaces))
    assert sorted(map(id, by.each_within(namespaces))) == sorted(map(id, by.within(namespaces)))


@settings(max_examples=300, deadline=None)
@given(found=targets, plain=terms, namespace=st.sampled_from(NAMESPACES[:3]),
       services=st.lists(st.tuples(st.sampled_from(NAMESPACES[:3]), labels), max_size=8), selector=selectors)
def test_the_label_index_finds_what_a_service_selects(found, plain, namespace, services, selector) -> None:
    # the pods behind a Service (its plain spec.selector map), and the Services a ServiceMonitor selects
    by, scope = ByNamespace(found), Namespaces(False, frozenset({namespace}))
    assert [t for t in by.selectable(scope, plain, plain=True) if map_may_select(plain, t)] == \
        [t for t in by.of(namespace) if map_may_select(plain, t)]
    held = ByNamespace([_Service(ns, lab, None) for ns, lab in services], lambda s: s.namespace or "default")
    assert services_selected(selector, scope, held.selectable(scope, selector)) == \
        services_selected(selector, scope, held.within(scope))
    assert all(label_value(k) in labels_of(s.labels) for s in held.selectable(scope, {"matchLabels": plain})
               for k in list(plain)[:1])


def test_monitors_cost_a_look_up_each_not_a_scan_of_their_namespace(tmp_path: Path) -> None:
    """Many PodMonitors, each selecting its own Deployment, in one namespace: with the index the
    label matcher is asked about each monitor's own pods, not about every pod of the namespace."""
    from mlops_lint.model import monitoring

    count = 60
    text = "---\n".join(
        DEPLOYMENT.replace("trainer-metrics", f"trainer-{i}").replace("app: trainer", f"app: trainer-{i}")
        + "---\n" + pod_monitor(f"{{matchLabels: {{app: trainer-{i}}}}}").replace("name: m,", f"name: monitor-{i},")
        for i in range(count))
    asked = []
    real = monitoring.may_select

    def counted(selector, target):
        asked.append(target)
        return real(selector, target)

    monitoring.may_select = counted
    try:
        for code in ("OBS001", "OBS002"):
            assert run(tmp_path, {"all.yaml": text}, code) == []  # each monitor selects its pods, port declared
    finally:
        monitoring.may_select = real
    assert 2 * count <= len(asked) <= 4 * count  # a scan of the namespace per monitor: 2 * count * count (7,200)


def test_obs001_and_obs002_share_one_scrape_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both rules collect the same facts: the second reuses the first's model (and the label-key
    indexes its monitors built), and the findings are each rule's alone."""
    from mlops_lint.model import monitoring

    built = []
    real = monitoring.ScrapeModel.__init__

    def counted(self, found, index):
        built.append(len(found))
        real(self, found, index)

    monkeypatch.setattr(monitoring.ScrapeModel, "__init__", counted)
    files = {"all.yaml": DEPLOYMENT + "---\n" + pod_monitor("{matchLabels: {app: trainer}}", port="web")
             + "---\n" + pod_monitor("{matchLabels: {app: nobody}}").replace("name: m,", "name: lost,")}
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    report = lint(LintRequest(paths=[tmp_path / "all.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                              select=["OBS001", "OBS002"], cwd=tmp_path))
    assert sorted(r.rule for r in report.active) == ["OBS001", "OBS002"]
    assert built == [1]  # one pod template: one model for both rules


def test_a_scrape_model_is_rebuilt_for_other_facts() -> None:
    from mlops_lint.model.monitoring import scrape_model

    class Index:
        def __init__(self):
            self._memo = {}

        def of_kind(self, kind):
            return []

    index = Index()
    first = [Target("ml", {"app": "a"}, [], "a")]
    model = scrape_model(first, index)
    assert scrape_model(list(first), index) is model  # equal facts (the other rule's list)
    other = scrape_model([Target("ml", {"app": "b"}, [], "b")], index)
    assert other is not model and [t.labels for t in other.targets.items] == [{"app": "b"}]


@pytest.mark.parametrize("script, fires", [
    ("helm install --wait --generate-name -n gpu-operator nvidia/gpu-operator\n", True),
    ("helm upgrade -i op nvidia/gpu-operator --set dcgmExporter.enabled=false\n", False),
    ("helm upgrade -i op nvidia/gpu-operator --values values.yaml\n", False),  # the file may turn it off
    ("helm upgrade op nvidia/gpu-operator\n", False),  # a plain upgrade installs nothing
])
def test_duplicate_dcgm_exporter_beside_an_operator_a_script_installs(tmp_path: Path, script: str, fires: bool) -> None:
    found = run(tmp_path, {"ds.yaml": EXPORTER % "", "install.sh": "#!/bin/sh\n" + script}, "OBS003")
    assert [(r.path, r.line) for r in found] == ([("ds.yaml", 12)] if fires else [])
    if fires:
        assert "the GPU Operator installed by Helm chart `nvidia/gpu-operator` (install.sh:2)" in found[0].message
        assert "`--set dcgmExporter.enabled=false`" in found[0].message
