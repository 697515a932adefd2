"""The cluster model: VM sizes, node pools merged from scripts and config, placement of pods.

Unit tests of ``linter.model.vmsizes`` and ``linter.model.cluster`` (the semantics the AKS and
XPL rules and DST005 rest on), then end-to-end runs over ``fixtures/cluster/``: the article's
scripts with manifests that fit them give no finding, the violating variants give every rule,
and a set of realistic scripts in the forms public AKS docs use lints without a rule error.
"""

from __future__ import annotations

import msgspec
import json
import shutil
from collections import Counter
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.index import ProjectIndex
from mlops_lint.model.azcli import UNKNOWN
from mlops_lint.model.cluster import (DEFAULT_MAX_GRACEFUL_TERMINATION_SEC, build_cluster, cluster_of, label_verdict,
                                  node_capacity, parse_duration, pod_requests, profile_value_problem)
from mlops_lint.model.k8s import workload_of
from mlops_lint.model.mig import profiles_for
from mlops_lint.model.selectors import Placement, Requirement
from mlops_lint.model.vmsizes import GIB, gpu_sizes, lookup, reserved_cpu_millis, reserved_memory_bytes
from mlops_lint.registry import load_registry
from mlops_lint.report import render
from mlops_lint.sources.shell import load_text
from mlops_lint.sources.yaml_k8s import load as load_yaml

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "fixtures" / "cluster"
OWN = ("AKS001", "AKS002", "AKS003", "AKS004", "AKS005", "AKS006", "AKS007",
       "XPL001", "XPL002", "XPL003", "XPL004", "XPL005", "DST005")


def own_codes() -> list[str]:
    registry = load_registry()
    return [code for code in (*OWN, "XPL006") if registry.get(code) is not None]


def scripts(**texts: str):
    return [load_text(text, f"{name}.sh").shell for name, text in sorted(texts.items())]


def pod(yaml_text: str, index: int = 0):
    document = load_yaml(yaml_text.encode(), "pod.yaml")
    assert not document.errors, document.errors
    return workload_of(document.objects[0]).pods[index]


def run(paths: list[Path], cwd: Path, select=None, config: Config | None = None, jobs: int = 1):
    return lint(LintRequest(paths=paths, config=config or Config(), registry=load_registry(),
                            select=list(select or own_codes()), cwd=cwd, jobs=jobs))


# ---------------------------------------------------------------------------------------------
# VM sizes


@pytest.mark.parametrize("spelling", ["Standard_NC24ads_A100_v4", "standard_nc24ads_a100_v4", "NC24ads_A100_v4",
                                      "STANDARD_NC24ADS_A100_V4", " Standard_NC24ads_A100_v4_Promo "])
def test_lookup_is_case_insensitive_with_optional_prefix(spelling: str) -> None:
    size = lookup(spelling)
    assert size is not None and size.name == "Standard_NC24ads_A100_v4"
    assert (size.gpus, size.gpu_key, size.vcpus, size.memory_bytes) == (1, "A100-80GB", 24, 220 * GIB)
    assert size.mig_capable and not size.rdma and size.gpu_resource == "nvidia.com/gpu"


def test_gpu_facts() -> None:
    t4 = lookup("Standard_NC4as_T4_v3")
    assert (t4.gpus, t4.gpu_model, t4.vcpus, t4.memory_bytes, t4.rdma, t4.mig_capable) == (
        1, "NVIDIA Tesla T4", 4, 28 * GIB, False, False)
    h100 = lookup("Standard_ND96isr_H100_v5")
    assert (h100.gpus, h100.gpu_key, h100.gpu_memory_gb, h100.rdma, h100.mig_capable) == (8, "H100-80GB", 80, True, True)
    assert lookup("Standard_NC24rs_v3").rdma and lookup("Standard_NC24rs_v3").retired
    assert lookup("Standard_ND96isr_MI300X_v5").gpu_resource == "amd.com/gpu"
    assert not lookup("Standard_ND96isr_MI300X_v5").mig_capable
    partition = lookup("Standard_NV6ads_A10_v5")
    assert partition.gpus == 1 and partition.gpu_fraction == Fraction(1, 6)
    unverified = lookup("Standard_ND96is_H100_v5")  # AKS's GPU list: no InfiniBand, memory not read
    assert unverified.is_gpu and not unverified.rdma and unverified.memory_bytes is None and not unverified.verified


@pytest.mark.parametrize(("size", "vcpus", "gib"), [
    ("Standard_D4s_v5", 4, 16), ("Standard_D8as_v5", 8, 32), ("Standard_D16ds_v5", 16, 64),
    ("Standard_D4ls_v5", 4, 8), ("Standard_D8pls_v5", 8, 16), ("Standard_E8s_v5", 8, 64),
    ("Standard_E16as_v5", 16, 128), ("Standard_F8s_v2", 8, 16), ("Standard_DS2_v2", 2, 7),
    ("Standard_DS3_v2", 4, 14), ("Standard_D2_v3", 2, 8), ("Standard_E8-4s_v5", 4, 64),
    ("D96ads_v6", 96, 384),
    # confidential, storage and the confidential-containers _cc sizes (azure-vm-sizes.md section B)
    ("Standard_DC4as_v5", 4, 16), ("Standard_DC8ads_v5", 8, 32), ("Standard_DC8as_cc_v5", 8, 32),
    ("Standard_EC8as_v5", 8, 64), ("Standard_EC96as_v5", 96, 672), ("Standard_EC8as_cc_v5", 8, 64),
    ("Standard_L8s_v3", 8, 64), ("Standard_L16as_v3", 16, 128),
])
def test_cpu_sizes_follow_the_naming_convention(size: str, vcpus: int, gib: int) -> None:
    found = lookup(size)
    assert found is not None and not found.is_gpu and found.gpus == 0 and found.source == "naming"
    assert (found.vcpus, found.memory_bytes) == (vcpus, gib * GIB)


def test_families_whose_memory_varies_give_only_vcpus() -> None:
    assert (lookup("Standard_B2s").vcpus, lookup("Standard_B2s").memory_bytes) == (2, None)
    assert (lookup("Standard_M32ms").vcpus, lookup("Standard_M32ms").memory_bytes) == (32, None)


@pytest.mark.parametrize("size", ["Standard_NC6", "Standard_NC4as_T4_v4", "Standard_HB120rs_v3", "Standard_D4s_v7",
                                  "Standard_DC4as_v4", "Standard_D0s_v5", "Standard_E8-9s_v5", "", "nonsense",
                                  "Standard_", "Standard_NC24ads_A100", "$(VM_SIZE)"])
def test_unknown_sizes(size: str) -> None:
    assert lookup(size) is None


def test_every_mig_capable_size_names_a_gpu_of_the_mig_catalogue() -> None:
    for size in gpu_sizes():
        if size.mig_capable and size.gpu_key is not None:
            assert profiles_for(size.gpu_key), f"{size.name}: {size.gpu_key} has no MIG profiles"


def test_node_reservations() -> None:
    assert [reserved_cpu_millis(n) for n in (1, 2, 4, 8, 16, 32, 64)] == [60, 100, 140, 180, 260, 420, 740]
    assert reserved_cpu_millis(24) == 340 and reserved_cpu_millis(96) == 1060
    # 1.29+: min(20 MB x 30 pods + 50 MB, 25 %) + 100 Mi
    assert reserved_memory_bytes(28 * GIB) == 650 * 10**6 + 100 * 2**20
    assert reserved_memory_bytes(2 * GIB, max_pods=250) == GIB // 2 + 100 * 2**20  # the 25 % cap
    # before 1.29: 25 % of 4 GB + 20 % of 4 GB + 10 % of 8 GB + 6 % of the rest, + 750 Mi
    expected = int(Fraction(4 * 10**9) / 4 + Fraction(4 * 10**9) / 5 + Fraction(8 * 10**9) / 10
                   + (28 * GIB - 16 * 10**9) * Fraction(6, 100)) + 750 * 2**20
    assert reserved_memory_bytes(28 * GIB, before_1_29=True) == expected


# ---------------------------------------------------------------------------------------------
# Autoscaler profile values


@pytest.mark.parametrize(("text", "seconds"), [("10s", 10), ("10m", 600), ("1h30m", 5400), ("0", 0), ("1.5m", 90),
                                               ("600s", 600), ("250ms", Fraction(1, 4))])
def test_durations(text: str, seconds) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["30", "10 m", "-10s", "10min", "", "m", "1d"])
def test_unparsable_durations(text: str) -> None:
    assert parse_duration(text) is None


@given(st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["h", "m", "s", "ms"])), min_size=1, max_size=4))
def test_durations_add_up(parts) -> None:
    unit = {"h": 3600, "m": 60, "s": 1, "ms": Fraction(1, 1000)}
    assert parse_duration("".join(f"{n}{u}" for n, u in parts)) == sum(n * unit[u] for n, u in parts)


@pytest.mark.parametrize(("key", "value", "ok"), [
    ("max-graceful-termination-sec", "120", True), ("max-graceful-termination-sec", "600s", False),
    ("scan-interval", "20s", True), ("scan-interval", "20", False), ("expander", "least-waste", True),
    ("expander", "fastest", False), ("scale-down-utilization-threshold", "0.65", True),
    ("scale-down-utilization-threshold", "2", False), ("balance-similar-node-groups", "True", True),
    ("max-total-unready-percentage", "101", False), ("skip-nodes-with-system-pods", "no", False),
])
def test_profile_values(key: str, value: str, ok: bool) -> None:
    assert (profile_value_problem(key, value) is None) is ok


# ---------------------------------------------------------------------------------------------
# Node pools from scripts


ADD = """az aks nodepool add -g rg --cluster-name c --name gpunp --node-vm-size Standard_NC4as_T4_v3 \\
  --enable-cluster-autoscaler --min-count 0 --max-count 4 --node-count 0 \\
  --labels accelerator=nvidia workload=training --node-taints sku=gpu:NoSchedule
"""


def test_update_in_a_file_sorted_before_the_add_applies_to_the_added_pool() -> None:
    cluster = build_cluster(scripts(
        a_autoscaler="az aks nodepool update -g rg --cluster-name c --name gpunp -u --min-count 1 --max-count 8\n",
        b_pools=ADD))
    (pool,) = cluster.pools
    assert (pool.name, pool.created, pool.min_count, pool.max_count, pool.node_count) == ("gpunp", True, 1, 8, 0)
    assert pool.labels == {"accelerator": "nvidia", "workload": "training"}
    assert [str(t.taint) for t in pool.taints] == ["sku=gpu:NoSchedule"]


def test_create_makes_a_system_pool_and_completes_the_cluster() -> None:
    cluster = build_cluster(scripts(
        a="az aks create -g rg -n c --node-vm-size Standard_D4s_v5 --nodepool-labels tier=system\n",
        b="az aks create -g rg -n d --nodepool-name sys --nodepool-taints CriticalAddonsOnly=true:NoSchedule\n"))
    first, second = cluster.pools
    assert (first.name, first.mode, first.node_count, first.labels) == ("nodepool1", "System", 3, {"tier": "system"})
    assert (second.name, second.vm_size, [str(t.taint) for t in second.taints]) == (
        "sys", None, ["CriticalAddonsOnly=true:NoSchedule"])
    assert cluster.complete and cluster.elsewhere is None
    view = first.label_view()
    assert view.state("kubernetes.azure.com/mode") == ("known", "system")
    assert view.state("agentpool") == ("known", "nodepool1")
    assert view.state("node.kubernetes.io/instance-type") == ("known", "Standard_D4s_v5")
    assert view.state("kubernetes.azure.com/accelerator") == ("absent", None)
    assert view.state("nvidia.com/gpu.product") == ("unknown", None)
    assert view.state("team") == ("absent", None)


def test_aks_labels_of_gpu_and_spot_pools() -> None:
    (pool,) = build_cluster(scripts(a=ADD.replace("--node-count 0", "--priority Spot"))).pools
    view = pool.label_view()
    assert view.state("kubernetes.azure.com/accelerator") == ("known", "nvidia")
    assert view.state("kubernetes.azure.com/scalesetpriority") == ("known", "spot")
    assert [str(t.taint) for t in pool.effective_taints] == [
        "sku=gpu:NoSchedule", "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]


def test_unknown_values_and_unknown_words_are_never_guessed() -> None:
    cluster = build_cluster(scripts(a='EXTRA=$(cat args)\nPOOL=$(pick)\n'
                                      'az aks nodepool add --cluster-name c --name gpunp -s Standard_NC4as_T4_v3 $EXTRA\n'
                                      'az aks nodepool add --cluster-name c --name cpu -s Standard_D4s_v5 '
                                      '--labels team=$TEAM --node-taints "$TAINTS"\n'
                                      'az aks nodepool update --cluster-name c --name "$POOL" --labels x=y\n'))
    gpunp, cpu = cluster.pools
    assert gpunp.labels_open and not gpunp.taints_known and gpunp.autoscaler is UNKNOWN
    assert cpu.labels == {"team": UNKNOWN} and not cpu.taints_known
    assert cpu.label_view().state("team") == ("unknown", None)
    assert gpunp.labels_open  # the update of "$POOL" may have changed either pool's labels


def test_config_pools_and_profiles() -> None:
    config = Config(node_pools=({"name": "gpunp", "vm-size": "Standard_NC24ads_A100_v4", "labels": {"accelerator": "nvidia"},
                                 "taints": ["sku=gpu:NoSchedule"], "max-count": 4},))
    cluster = build_cluster(scripts(a="az aks nodepool add --cluster-name c --name cpu -s Standard_D4s_v5\n"), config)
    assert [(p.name, p.source) for p in cluster.pools] == [("cpu", "script"), ("gpunp", "config")]
    assert cluster.pools[1].autoscaler is True and cluster.pools[1].max_nodes() == 4
    automatic = msgspec.structs.replace(config, profile="aks-automatic")
    assert [p.name for p in build_cluster(scripts(a=ADD), automatic).pools] == ["gpunp"]


def test_cluster_is_built_once_per_index() -> None:
    document = load_text(ADD, "pools.sh")
    index = ProjectIndex([document])
    config = Config()
    assert cluster_of(index, config) is cluster_of(index, config)
    assert cluster_of(ProjectIndex([document]), config) is not cluster_of(index, config)


def test_autoscaler_profile_per_cluster() -> None:
    cluster = build_cluster(scripts(
        a=ADD + "az aks update -g rg -n c --cluster-autoscaler-profile scan-interval=20s,max-graceful-termination-sec=120\n",
        b=ADD.replace("--cluster-name c", "--cluster-name other")))
    ours, other = cluster.pools
    assert [v for v, _ in cluster.max_graceful_termination(ours)] == ["120"]
    assert [v for v, _ in cluster.max_graceful_termination(other)] == [str(DEFAULT_MAX_GRACEFUL_TERMINATION_SEC)]
    reset = build_cluster(scripts(a=ADD + 'az aks update -n c --ca-profile max-graceful-termination-sec=60\n'
                                          'az aks update -n c --ca-profile ""\n'))
    assert [v for v, _ in reset.max_graceful_termination(reset.pools[0])] == ["600"]


# ---------------------------------------------------------------------------------------------
# Placement


def _view(**labels):
    from mlops_lint.model.cluster import LabelView

    return LabelView(known=dict(labels))


def test_label_verdicts_follow_node_affinity_semantics() -> None:
    view = _view(accelerator="nvidia", agentpool="gpunp")
    assert label_verdict(Placement({"accelerator": "nvidia"}), view)[0] == "yes"
    assert label_verdict(Placement({"accelerator": "amd"}), view)[0] == "no"
    not_in = Placement(terms=((Requirement("team", "NotIn", ("x",)),),))
    assert label_verdict(not_in, view)[0] == "yes"  # an absent key satisfies NotIn
    exists = Placement(terms=((Requirement("nvidia.com/gpu.product", "Exists", ()),),))
    assert label_verdict(exists, view)[0] == "maybe"  # prefixed keys may be set outside the scripts
    two_terms = Placement(terms=((Requirement("agentpool", "In", ("cpu",)),), (Requirement("accelerator", "Exists", ()),)))
    assert label_verdict(two_terms, view)[0] == "yes"
    verdict, reason = label_verdict(Placement({"accelerator": "nvidia", "workload": "x"}), view)
    assert verdict == "no" and reason == "nodeSelector workload=x does not match (the pool has no label workload)"


POD = """apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      {selector}
      tolerations: [{key: sku, operator: Exists}]
      containers:
      - name: trainer
        image: x
        resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize(("selector", "possible"), [
    ("nodeSelector: {accelerator: nvidia}", {"gpunp"}),  # accelerator is the project's key: not elsewhere
    ("nodeSelector: {agentpool: cpupool}", {"(pools not in the project)"}),  # maybe the system pool
    ("nodeSelector: {}", {"gpunp", "(pools not in the project)"}),
])
def test_a_cluster_made_elsewhere_keeps_pools_the_project_does_not_describe(selector: str, possible: set) -> None:
    cluster = build_cluster(scripts(a=ADD))
    placement = cluster.placement(pod(POD.replace("{selector}", selector)))
    assert {v.pool.display for v in placement.candidates} == possible


def test_node_auto_provisioning_can_take_any_pod() -> None:
    cluster = build_cluster(scripts(a="az aks create -n c -s Standard_D4s_v5 --node-provisioning-mode Auto\n" + ADD))
    placement = cluster.placement(pod(POD.replace("{selector}", "nodeSelector: {accelerator: nvidia-h100}")))
    assert [v.pool.display for v in placement.candidates] == ["(pools not in the project)"]


def test_placement_is_memoised_per_pod() -> None:
    cluster = build_cluster(scripts(a=ADD))
    view = pod(POD.replace("{selector}", ""))
    assert cluster.placement(view) is cluster.placement(view)


# ---------------------------------------------------------------------------------------------
# Pod requests


def _pod_with(init: list[tuple[str, bool]], app: list[str]):
    """A Pod whose init containers (cpu, is a native sidecar) and app containers request cpu."""
    def item(name: str, cpu: str, sidecar: bool = False) -> str:
        policy = ", restartPolicy: Always" if sidecar else ""
        return f'  - {{name: {name}, image: x{policy}, resources: {{requests: {{cpu: "{cpu}"}}}}}}\n'

    text = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n"
    if init:
        text += "  initContainers:\n" + "".join(item(f"init{i}", cpu, side) for i, (cpu, side) in enumerate(init))
    text += "  containers:\n" + "".join(item(f"app{i}", cpu) for i, cpu in enumerate(app))
    return pod(text)


def test_pod_requests_follow_the_scheduler() -> None:
    view = _pod_with([("1", True), ("3", False)], ["1"])
    assert pod_requests(view)["cpu"].amount == 4  # the init container runs beside the sidecar before it
    assert pod_requests(view)["cpu"].container.name == "init1"
    assert pod_requests(_pod_with([("3", False), ("1", True)], ["1"]))["cpu"].amount == 3
    assert pod_requests(_pod_with([("2", False)], ["1", "2"]))["cpu"].amount == 3


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 16), st.booleans()), max_size=3), st.lists(st.integers(1, 16), min_size=1, max_size=3))
def test_pod_request_is_at_least_every_container_and_the_app_sum(init, app) -> None:
    view = _pod_with([(str(c), side) for c, side in init], [str(c) for c in app])
    amount = pod_requests(view)["cpu"].amount
    sidecars = sum(c for c, side in init if side)
    assert amount >= sum(app) + sidecars
    assert all(amount >= c for c, _ in init)


def test_node_capacity_subtracts_aks_reservations() -> None:
    (pool,) = build_cluster(scripts(a=ADD)).pools
    capacity = node_capacity(pool)
    assert capacity.cpu == Fraction(386, 100) and capacity.vm_cpu == 4
    assert capacity.memory == 28 * GIB - (650 * 10**6 + 100 * 2**20)
    assert node_capacity(pool, subtract_reserved=False).memory == 28 * GIB
    older = node_capacity(pool, kubernetes_version="1.28")
    assert older.memory < capacity.memory


# ---------------------------------------------------------------------------------------------
# End to end over fixtures/cluster


def test_article_scripts_with_fitting_manifests_are_clean() -> None:
    report = run([CLUSTER / "conforming"], REPO)
    assert report.active == [], render(report, "text", color=False)
    assert set(report.file_status.values()) == {"linted"}


@pytest.mark.parametrize("folder", ["conforming", "violating"])
def test_the_cluster_sets_select_the_cluster_rules(folder: str) -> None:
    """Each set is a project of its own whose config selects the rules these tests run on it, so
    `mlops-lint fixtures/cluster/<set>` gives what the tests check."""
    from mlops_lint.config import load_config

    assert sorted(load_config(CLUSTER / folder / ".mlops-lint.yaml", load_registry()).select) == sorted(own_codes())


def test_violating_variants_fire_every_rule(update_golden: bool) -> None:
    report = run([CLUSTER / "violating"], REPO)
    assert {r.rule for r in report.active} == set(own_codes())
    golden = CLUSTER / "violating" / "expected.txt"
    text = render(report, "text", color=False)
    if update_golden:
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_realistic_scripts_lint_without_rule_errors(update_golden: bool) -> None:
    folder = CLUSTER / "scripts"
    files = sorted(folder.glob("*.sh"))
    assert len(files) >= 30
    report = run([folder], REPO, select=["ALL"])
    assert [r for r in report.results if r.rule in ("LNT002", "SCH001")] == []
    assert {status for path, status in report.file_status.items() if path.endswith(".sh")} == {"linted"}
    for path in files:  # every script holds an az aks command the reader found
        document = load_text(path.read_text(encoding="utf-8"), path.name)
        assert document.errors == [] and document.shell.az_commands, path.name
    counts = dict(sorted(Counter(r.rule for r in report.active if r.rule in own_codes()).items()))
    golden = folder / "expected-counts.json"
    if update_golden:
        golden.write_text(json.dumps(counts, indent=1) + "\n", encoding="utf-8")
    assert counts == json.loads(golden.read_text(encoding="utf-8"))


def test_parallel_run_sees_the_scripts_of_the_project(tmp_path: Path) -> None:
    for source in (CLUSTER / "violating").iterdir():
        if source.suffix in (".sh", ".yaml"):
            shutil.copy(source, tmp_path / source.name)
    for index in range(50):  # enough files for the engine to fork workers
        (tmp_path / f"cm-{index:02d}.yaml").write_text(
            f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: cm-{index}}}\ndata: {{a: b}}\n", encoding="utf-8")
    serial = run([tmp_path], tmp_path, jobs=1)
    parallel = run([tmp_path], tmp_path, jobs=2)
    assert {r.rule for r in serial.active} == set(own_codes())
    assert [(r.rule, r.path, r.span, r.message) for r in parallel.active] == [
        (r.rule, r.path, r.span, r.message) for r in serial.active]


def test_aks_automatic_uses_config_pools_only(tmp_path: Path) -> None:
    shutil.copy(CLUSTER / "violating" / "cluster.sh", tmp_path / "cluster.sh")
    shutil.copy(CLUSTER / "violating" / "workloads.yaml", tmp_path / "workloads.yaml")
    from mlops_lint.engine import enabled_rules

    automatic = Config(profile="aks-automatic")
    assert not [m for m in enabled_rules(load_registry(), automatic, own_codes()) if m.code.startswith("AKS")]
    report = run([tmp_path], tmp_path, config=automatic)
    assert {r.rule for r in report.active} == {"DST005"}  # its pod half needs no pools
    pools = msgspec.structs.replace(automatic, node_pools=(
        {"name": "gpu", "vm-size": "Standard_NC4as_T4_v3", "labels": {"accelerator": "nvidia", "workload": "training"},
         "taints": ["sku=gpu:NoSchedule"], "max-count": 2},))
    report = run([tmp_path], tmp_path, config=pools)
    assert {r.rule for r in report.active} == {"DST005", "XPL001", "XPL002", "XPL003", "XPL004", "XPL005", "XPL006"}
    assert all(r.path == "workloads.yaml" for r in report.active)



def test_every_view_rules_memoise_on_keeps_a_memo() -> None:
    """linter.model.memo.once computes again each time for an object without a memo (a _memo or
    _sections field, else a __dict__): the read-only views and answers rules derive things from
    must each keep one, or every rule asking pays the work again."""
    from mlops_lint.model import memo

    view = pod(POD.replace("{selector}", ""))
    cluster = build_cluster(scripts(a=ADD))
    for thing in (Config(), view, view.workload, view.containers[0], cluster, cluster.placement(view)):
        assert memo._store(thing) is not None, type(thing).__name__


def test_a_pods_placement_goes_with_its_view_and_is_shared_by_equal_pods() -> None:
    """The cluster keeps nothing per pod view (the answer lives in the view's own memo, so a
    long run does not grow with its pods), and pods with the same constraints share one answer."""
    from mlops_lint.model import memo

    cluster = build_cluster(scripts(a=ADD))
    views = [pod(POD.replace("{selector}", "")) for _ in range(3)]
    answers = [cluster.placement(view) for view in views]
    assert answers[0] is answers[1] is answers[2] and len(cluster._by_signature) == 1
    assert all(any(value is answers[0] for value in memo._store(view).values()) for view in views)
    assert not any(isinstance(value, dict) and len(value) >= 3 for value in vars(cluster).values()
                   if value is not cluster._by_signature)
