"""XPL008 serving-pool-scales-to-zero: cases beyond the fixtures (fixtures/rules/XPL008/ holds the
fail and pass files): the pools as the config's `node-pools:` give them, which minimum counts, a
cluster the project does not define, servers that scale themselves to zero, the position."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
REGISTRY = load_registry()

SERVER = """apiVersion: apps/v1
kind: Deployment
metadata: {name: chat, namespace: serving}
spec:
  replicas: REPLICAS
  selector: {matchLabels: {app: chat}}
  template:
    metadata: {labels: {app: chat}}
    spec:
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      containers:
      - name: vllm
        image: IMAGE
        resources: {limits: {nvidia.com/gpu: 1}}
"""
VLLM = "vllm/vllm-openai:v0.6.3"


def pool(name: str, **settings) -> dict:
    entry = {"name": name, "vm-size": "Standard_NC24ads_A100_v4", "labels": {"accelerator": "nvidia"},
             "taints": ["sku=gpu:NoSchedule"]}
    entry.update(settings)
    return entry


def findings(path: Path) -> list[tuple[int, str]]:
    report = lint(LintRequest(paths=[path], config=Config(), registry=REGISTRY, select=["XPL008"], cwd=REPO))
    return [(r.line, r.rule) for r in report.active]


def run(tmp_path: Path, pools, replicas: int = 2, image: str = VLLM) -> list:
    (tmp_path / "serve.yaml").write_text(SERVER.replace("REPLICAS", str(replicas)).replace("IMAGE", image), "utf-8")
    config = Config(root=tmp_path, node_pools=pools)
    report = lint(LintRequest(paths=[tmp_path / "serve.yaml"], config=config, registry=REGISTRY,
                              select=["XPL008"], cwd=tmp_path))
    return report.active


def test_the_fail_fixture_is_reported_at_its_expect_lines() -> None:
    folder = REPO / "fixtures" / "rules" / "XPL008"
    lines = (folder / "fail.yaml").read_text("utf-8").splitlines()
    expected = [(i + 2, "XPL008") for i, line in enumerate(lines) if line.strip() == "# expect: XPL008"]
    assert len(expected) == 3
    report = lint(LintRequest(paths=[folder], config=Config(), registry=REGISTRY, select=["XPL008"], cwd=REPO))
    got = sorted((Path(r.path).name, r.line) for r in report.active)
    assert got == [("fail.yaml", line) for line, _ in expected]


def test_a_pool_that_may_scale_to_zero_is_named_with_its_minimum(tmp_path: Path) -> None:
    (result,) = run(tmp_path, [pool("a100np", **{"min-count": 0, "max-count": 4})])
    assert (result.rule, result.line, result.column) == ("XPL008", 10, 7)  # the nodeSelector key
    assert result.message.startswith("pod template of Deployment `serving/chat`: this model server can land only on")
    assert "only on a GPU pool that scales to zero nodes when idle: `a100np` (minimum 0 at " in result.message


@pytest.mark.parametrize("settings", [
    {"min-count": 1, "max-count": 4},                         # kept warm
    {"enable-cluster-autoscaler": False, "node-count": 0},    # a fixed size, not the autoscaler's minimum
    {"enable-cluster-autoscaler": True, "max-count": 4},      # a minimum not written: not known
])
def test_a_pool_kept_warm_or_with_no_known_minimum_is_not_reported(tmp_path: Path, settings: dict) -> None:
    assert run(tmp_path, [pool("a100np", **settings)]) == []


def test_one_warm_pool_among_the_candidates_is_enough(tmp_path: Path) -> None:
    pools = [pool("a100np", **{"min-count": 0, "max-count": 4}), pool("t4np", **{"min-count": 1, "max-count": 2})]
    assert run(tmp_path, pools) == []
    # the warm pool is not reachable (its taint differs): the cold one is all the server has
    pools[1]["taints"] = ["dedicated=other:NoSchedule"]
    assert [r.rule for r in run(tmp_path, pools)] == ["XPL008"]


def test_servers_that_scale_themselves_to_zero_and_non_servers_are_not_reported(tmp_path: Path) -> None:
    pools = [pool("a100np", **{"min-count": 0, "max-count": 4})]
    assert run(tmp_path, pools, replicas=0) == []
    assert run(tmp_path, pools, image="quay.io/jupyter/pytorch-notebook:cuda12-2024-05-27") == []


def test_a_pool_described_elsewhere_that_may_take_the_pod_is_not_judged(tmp_path: Path) -> None:
    # only a nodepool add, no az aks create: the cluster has pools described elsewhere, and a server
    # that selects no label of the project's own pools may land on one of them
    (tmp_path / "pool.sh").write_text(
        "az aks nodepool add -g rg --cluster-name aks --name a100np --node-vm-size Standard_NC24ads_A100_v4 "
        "--labels accelerator=nvidia --node-taints sku=gpu:NoSchedule "
        "--enable-cluster-autoscaler --min-count 0 --max-count 4\n", "utf-8")
    text = SERVER.replace("REPLICAS", "2").replace("IMAGE", VLLM).replace("      nodeSelector: {accelerator: nvidia}\n", "")
    (tmp_path / "serve.yaml").write_text(text, "utf-8")

    def lint_it() -> list:
        report = lint(LintRequest(paths=[tmp_path], config=Config(root=tmp_path), registry=REGISTRY,
                                  select=["XPL008"], cwd=tmp_path))
        return [(Path(r.path).name, r.line, r.column) for r in report.active]

    assert lint_it() == []
    # with the cluster's creation in the project, its pools are all there are: a100np is the only GPU pool
    (tmp_path / "cluster.sh").write_text("az aks create -g rg --name aks --node-vm-size Standard_D4s_v5 "
                                         "--node-count 2\n", "utf-8")
    assert lint_it() == [("serve.yaml", 9, 5)]  # no selector: the pod template's spec


RAYSERVICE = """apiVersion: ray.io/v1
kind: RayService
metadata: {name: rs, namespace: serving}
spec:
  serveConfigV2: |
    applications: []
  rayClusterConfig:
    headGroupSpec:
      template:
        spec:
          containers:
          - {name: head, image: rayproject/ray:2.9.0}
    workerGroupSpecs:
    - groupName: gpu
      minReplicas: MIN
      maxReplicas: 4
      template:
        spec:
          tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
          containers:
          - name: worker
            image: rayproject/ray:2.9.0-gpu
            resources: {limits: {nvidia.com/gpu: 1}}
"""


@pytest.mark.parametrize("minimum, fires", [(0, False), (1, True)])
def test_a_ray_worker_group_that_scales_to_zero_is_the_authors_choice(tmp_path: Path, minimum: int, fires: bool) -> None:
    (tmp_path / "rs.yaml").write_text(RAYSERVICE.replace("MIN", str(minimum)), "utf-8")
    pools = [pool("a100np", **{"min-count": 0, "max-count": 4}),
             {"name": "cpu", "vm-size": "Standard_D4s_v5", "node-count": 2}]
    report = lint(LintRequest(paths=[tmp_path / "rs.yaml"], config=Config(root=tmp_path, node_pools=pools),
                              registry=REGISTRY, select=["XPL008"], cwd=tmp_path))
    assert [(r.line, r.column) for r in report.active] == ([(18, 9)] if fires else [])  # the worker template's spec
