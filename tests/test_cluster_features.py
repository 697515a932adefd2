"""The cluster-wide features the cluster model reads (linter.model.cluster.features) and the rules
that join them with manifests (AKS008, AKS009, KAI006), on each source and on the article."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.model.cluster import build_cluster
from mlops_lint.model.cluster.features import (AI_TOOLCHAIN, NETWORK_POLICY, OIDC_ISSUER, WORKLOAD_IDENTITY,
                                               clusters_without)
from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.sources import shell
from test_trust_precision import ARTICLE, article_blocks, article_script, lint

NEW_RULES = "AKS008,AKS009,GPU014,KAI006"


def features(text: str) -> dict[tuple[str, str], list]:
    cluster = build_cluster([shell.load_text("#!/bin/bash\n" + text, "setup.sh").shell])
    found: dict[tuple[str, str], list] = {}
    for setting in cluster.features:
        found.setdefault((str(setting.cluster), setting.feature), []).append(setting.value)
    return found


def test_az_create_defaults_and_flags() -> None:
    found = features("az aks create -g rg -n a\n"
                     "az aks create -g rg -n b --enable-oidc-issuer --enable-workload-identity "
                     "--enable-ai-toolchain-operator --network-policy Calico\n"
                     "az aks create -g rg -n c --network-dataplane cilium $EXTRA\n"
                     "az aks create -g rg -n d --sku automatic\n")
    assert found[("a", WORKLOAD_IDENTITY)] == [False] and found[("a", OIDC_ISSUER)] == [UNKNOWN]
    assert found[("a", AI_TOOLCHAIN)] == [False] and found[("a", NETWORK_POLICY)] == [False]
    assert [found[("b", f)] for f in (WORKLOAD_IDENTITY, OIDC_ISSUER, AI_TOOLCHAIN, NETWORK_POLICY)] == [
        [True], [True], [True], ["calico"]]
    # words of unknown value may hold any flag; the Cilium dataplane is an engine whatever they say
    assert found[("c", WORKLOAD_IDENTITY)] == [UNKNOWN] and found[("c", NETWORK_POLICY)] == ["cilium"]
    assert [found[("d", f)] for f in (WORKLOAD_IDENTITY, OIDC_ISSUER, AI_TOOLCHAIN, NETWORK_POLICY)] == [
        [True], [True], [False], ["cilium"]]


def test_az_update_says_only_what_it_writes() -> None:
    found = features("az aks update -g rg -n a --enable-blob-driver\n"
                     "az aks update -g rg -n a --disable-workload-identity --network-policy none\n")
    assert found == {("a", WORKLOAD_IDENTITY): [False], ("a", NETWORK_POLICY): [False]}


def test_a_later_update_turns_a_cluster_on_whatever_the_file_order() -> None:
    for text in ("az aks create -g rg -n a\naz aks update -g rg -n a --enable-workload-identity\n",
                 "az aks update -g rg -n a --enable-workload-identity\naz aks create -g rg -n a\n"):
        cluster = build_cluster([shell.load_text("#!/bin/bash\n" + text, "s.sh").shell])
        assert clusters_without(cluster.features, WORKLOAD_IDENTITY) == []
    # an update of a cluster whose name is not known may be this one
    cluster = build_cluster([shell.load_text("#!/bin/bash\naz aks create -g rg -n a\n"
                                             "az aks update -g rg -n $(pick) --enable-workload-identity\n", "s.sh").shell])
    assert clusters_without(cluster.features, WORKLOAD_IDENTITY) == []


def test_the_articles_blocks_give_no_false_alarm_of_the_cluster_feature_rules(tmp_path: Path) -> None:
    """The article never creates its cluster (its `az aks update`s say nothing of these features and
    its pool keeps the AKS driver): its Workspace, NetworkPolicy and GPU pool are not judged. Given
    an `az aks create` without the flags, the rules do judge them."""
    if not ARTICLE.is_file():
        pytest.skip(f"{ARTICLE} is not on this machine")
    script = article_script()
    assert "az aks create" not in script and "az aks update" in script
    together = tmp_path / "together"
    together.mkdir()
    (together / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (together / "cluster.sh").write_text(script)
    for n, block in enumerate(article_blocks(), 1):
        (together / f"block{n:02d}.yaml").write_text(block)
    assert lint(together, "--select", NEW_RULES) == []
    for n, block in enumerate(article_blocks(), 1):
        alone = tmp_path / f"alone{n:02d}"
        alone.mkdir()
        (alone / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
        (alone / "cluster.sh").write_text(script)
        (alone / "block.yaml").write_text(block)
        assert lint(alone, "--select", NEW_RULES) == [], n
    created = script.replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\naz aks create --resource-group rg "
                             "--name \"$AKS_CLUSTER\" --generate-ssh-keys\n", 1)
    (together / "cluster.sh").write_text(created.replace("--node-taints sku=gpu:NoSchedule",
                                                         "--node-taints sku=gpu:NoSchedule --gpu-driver none"))
    assert sorted(f["rule"] for f in lint(together, "--select", NEW_RULES)) == ["AKS009", "GPU014", "KAI006"]


def test_clusters_only_updated_are_reported_once_at_their_first_disable() -> None:
    cluster = build_cluster([shell.load_text(
        "#!/bin/bash\naz aks update -g rg -n old --disable-workload-identity\n"
        "az aks update -g rg -n old --disable-workload-identity\n"
        "az aks create -g rg -n new\n", "s.sh").shell])
    found = clusters_without(cluster.features, WORKLOAD_IDENTITY)
    assert [(a.cluster, a.origin.span.line, a.creates) for a, _ in found] == [("old", 2, False), ("new", 4, True)]
    # a cluster created under a name the script does not determine may be either: judged only
    # when every cluster is off, and then once
    cluster = build_cluster([shell.load_text("#!/bin/bash\naz aks create -g rg -n $(name)\n"
                                             "az aks create -g rg -n b --enable-workload-identity\n", "s.sh").shell])
    assert clusters_without(cluster.features, WORKLOAD_IDENTITY) == []


ARM = """{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "contentVersion": "1.0.0.0",
  "resources": [
    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "arm-aks",
      "properties": {
        "networkProfile": {"networkPlugin": "azure", "networkPolicy": "none"},
        "aiToolchainOperatorProfile": {"enabled": false}
      }
    }
  ]
}
"""
WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: ws
resource:
  instanceType: Standard_NC24ads_A100_v4
inference:
  preset:
    name: phi-3-mini-4k-instruct
"""
POLICY = "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: deny\nspec:\n  podSelector: {}\n"


def test_arm_templates_are_reported_at_their_properties_with_json_hints(tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    (tmp_path / "azuredeploy.json").write_text(ARM)
    (tmp_path / "ws.yaml").write_text(WORKSPACE)
    (tmp_path / "policy.yaml").write_text(POLICY)
    found = {f["rule"]: f for f in lint(tmp_path, "--select", "AKS009,KAI006")}
    assert (found["AKS009"]["path"], found["AKS009"]["line"]) == ("azuredeploy.json", 10)
    assert '(`networkProfile.networkPolicy: "none"`)' in found["AKS009"]["message"]
    assert '`"networkProfile": {"networkPolicy": "azure"}`' in found["AKS009"]["fix"]
    assert (found["KAI006"]["path"], found["KAI006"]["line"]) == ("azuredeploy.json", 11)
    assert '`"aiToolchainOperatorProfile": {"enabled": true}`' in found["KAI006"]["fix"]
