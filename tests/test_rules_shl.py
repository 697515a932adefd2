"""SHL rules beyond their fixtures: how kubectl's command line is read (global and verb
options, resource forms, removals, dry runs), positions, and the severity the profile gives."""

from __future__ import annotations

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.engine.selection import enabled_rules
from mlops_lint.registry import load_registry

REGISTRY = load_registry()


def run(script: str, config: Config | None = None, tmp_path=None) -> list:
    report = lint(LintRequest(paths=[], config=config or Config(), registry=REGISTRY, select=["SHL001"],
                              stdin=("deploy.sh", ("#!/bin/bash\n" + script).encode())))
    return report.active


@pytest.mark.parametrize("command, fires", [
    ("kubectl label nodes -l accelerator=nvidia nvidia.com/mig.config=all-1g.10gb --overwrite", True),
    ("kubectl label node aks-gpu-0 workload=training", True),
    ("kubectl label no aks-gpu-0 workload=training", True),
    ("kubectl label nodes/aks-gpu-0 workload=training", True),
    ("kubectl taint nodes aks-gpu-0 sku=gpu:NoSchedule", True),
    ("kubectl taint nodes --all sku=gpu:NoSchedule", True),
    ("kubectl -n kube-system --kubeconfig ~/.kube/prod label nodes aks-gpu-0 a=b", True),
    ("kubectl --context=prod label --overwrite=true nodes aks-gpu-0 a=b", True),
    ("/usr/local/bin/kubectl label nodes aks-gpu-0 a=b", True),
    ("kubectl label nodes aks-gpu-0 a=b c-", True),  # sets one, removes another
    ("kubectl label nodes aks-gpu-0 a-", False),  # only a removal
    ("kubectl taint nodes aks-gpu-0 sku=gpu:NoSchedule-", False),
    ("kubectl label nodes aks-gpu-0 a=b --dry-run=client -o yaml", False),
    ("kubectl label -f node.yaml a=b", False),
    ("kubectl label pods p a=b", False),
    ("kubectl label namespace ml a=b", False),
    ("kubectl get nodes -l accelerator=nvidia", False),
    ("kubectl annotate nodes aks-gpu-0 a=b", False),
    ("kubectl cordon aks-gpu-0", False),
    ("echo kubectl label nodes aks-gpu-0 a=b", False),
])
def test_shl001_reads_kubectl_command_lines(command: str, fires: bool) -> None:
    assert [r.rule for r in run(command + "\n")] == (["SHL001"] if fires else [])


def test_shl001_points_at_the_verb_and_names_the_change() -> None:
    (finding,) = run("NODE=aks-gpu-0\nif true; then\n  kubectl taint node $NODE sku=gpu:NoSchedule\nfi\n")
    assert (finding.line, finding.column) == (4, 11)
    assert finding.message.startswith("`kubectl taint node` sets taints (`sku=gpu:NoSchedule`) on today's nodes only")
    assert finding.severity == "warning" and "--node-taints" in finding.fix


def test_shl001_is_an_error_in_the_aks_automatic_profile_and_stays_on() -> None:
    automatic = Config(profile="aks-automatic")
    assert "SHL001" in [m.code for m in enabled_rules(REGISTRY, automatic, ["ALL"])]
    (finding,) = run("kubectl label nodes aks-gpu-0 a=b\n", config=automatic)
    assert finding.severity == "error" and "Deployment Safeguards deny editing nodes" in finding.message
    override = Config(profile="aks-automatic", severity={"SHL001": "info"})
    assert [r.severity for r in run("kubectl label nodes aks-gpu-0 a=b\n", config=override)] == ["info"]


def test_shl001_the_articles_mig_step() -> None:
    script = "kubectl label nodes \\\n  -l accelerator=nvidia \\\n  nvidia.com/mig.config=hptuning-1g10gb \\\n  --overwrite\n"
    (finding,) = run(script)
    assert (finding.line, finding.column) == (2, 9)
    assert "`nvidia.com/mig.config=hptuning-1g10gb`" in finding.message
