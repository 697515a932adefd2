"""AKS009 network-policy-engine-missing: cases beyond the fixtures (fixtures/rules/AKS009/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

POLICY = """\
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
  namespace: ml-training
spec:
  podSelector: {}
  policyTypes:
  - Ingress
"""
CREATE = "#!/bin/bash\naz aks create --resource-group rg --name ml-aks --network-plugin azure FLAGS\n"


def run(tmp_path: Path, files: dict[str, str], config: Config | None = None) -> list[tuple[str, int, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=config or Config(), registry=load_registry(),
                              select=["AKS009"], cwd=tmp_path))
    return [(Path(r.path).name, r.line, r.column, r.message) for r in report.active]


def test_reported_at_the_create_naming_the_policy(tmp_path: Path) -> None:
    found = run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", ""), "policy.yaml": POLICY})
    assert [(n, line, col) for n, line, col, _ in found] == [("cluster.sh", 2, 1)]
    assert "cluster `ml-aks` is created without a network policy engine" in found[0][3]
    assert "NetworkPolicy `default-deny` (policy.yaml:2)" in found[0][3]


def test_policy_none_is_reported_at_its_value(tmp_path: Path) -> None:
    script = CREATE.replace("FLAGS", "--network-policy none")
    found = run(tmp_path, {"cluster.sh": script, "policy.yaml": POLICY})
    col = script.splitlines()[1].index(" none") + 2
    assert [(n, line, c) for n, line, c, _ in found] == [("cluster.sh", 2, col)]
    assert "has no network policy engine (`az aks create --network-policy none`)" in found[0][3]


@pytest.mark.parametrize("flags, extra", [
    ("--network-policy azure", {}),
    ("--network-policy Calico", {}),  # enum values are case-insensitive
    ("--network-plugin-mode overlay --network-dataplane cilium", {}),
    ("--network-policy $POLICY", {}),  # not determined
    ("$EXTRA_ARGS", {}),  # words of unknown value may hold the flag
    ("--sku automatic", {}),  # AKS Automatic runs Cilium
    ("", {"later.sh": "#!/bin/bash\naz aks update -g rg -n ml-aks --network-policy cilium\n"}),
    ("--network-plugin none", {}),  # bring your own CNI: it may enforce policies
    ("", {"cni.tf": 'resource "helm_release" "cilium" {\n  chart = "cilium"\n  repository = "https://helm.cilium.io/"\n}\n'}),
    ("", {"cni.sh": "#!/bin/bash\nhelm install cilium cilium/cilium --namespace kube-system\n"}),
    ("", {"cni.sh": "#!/bin/bash\nhelm install calico projectcalico/tigera-operator -n tigera-operator\n"}),
])
def test_near_misses(tmp_path: Path, flags: str, extra: dict) -> None:
    assert run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", flags), "policy.yaml": POLICY, **extra}) == []


def test_no_policy_or_no_cluster_is_not_judged(tmp_path: Path) -> None:
    assert run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", "")}) == []
    assert run(tmp_path / "other", {"policy.yaml": POLICY}) == []


def test_a_cluster_of_another_top_folder_does_not_govern(tmp_path: Path) -> None:
    files = {"repo-a/cluster.sh": CREATE.replace("FLAGS", ""), "repo-b/policy.yaml": POLICY}
    assert run(tmp_path, files) == []
    files["repo-a/policy.yaml"] = POLICY
    assert [(n, line) for n, line, _, _ in run(tmp_path, files)] == [("cluster.sh", 2)]


@pytest.mark.parametrize("profile, fires", [
    ('  network_profile {\n    network_plugin = "azure"\n  }\n', True),
    ('  network_profile {\n    network_policy = "calico"\n  }\n', False),
    ('  network_profile {\n    ebpf_data_plane = "cilium"\n  }\n', False),
    ('  network_profile {\n    network_policy = var.policy\n  }\n', False),
    ('  network_profile {\n    network_plugin = "none"\n  }\n', False),
])
def test_terraform_network_profile(tmp_path: Path, profile: str, fires: bool) -> None:
    tf = f'variable "policy" {{}}\nresource "azurerm_kubernetes_cluster" "aks" {{\n  name = "tf-aks"\n{profile}}}\n'
    found = run(tmp_path, {"main.tf": tf, "policy.yaml": POLICY})
    assert [(n, line) for n, line, _, _ in found] == ([("main.tf", 2)] if fires else [])


def test_aks_automatic_profile_judges_nothing(tmp_path: Path) -> None:
    files = {"cluster.sh": CREATE.replace("FLAGS", ""), "policy.yaml": POLICY}
    assert run(tmp_path, files, Config(profile="aks-automatic")) == []
