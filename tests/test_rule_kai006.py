"""KAI006 kaito-not-enabled: cases beyond the fixtures (fixtures/rules/KAI006/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

WORKSPACE = """\
apiVersion: kaito.sh/v1beta1
kind: Workspace
metadata:
  name: workspace-phi-3-mini
resource:
  instanceType: Standard_NC24ads_A100_v4
  labelSelector:
    matchLabels:
      apps: phi-3-mini
inference:
  preset:
    name: phi-3-mini-4k-instruct
"""
RAGENGINE = """\
apiVersion: kaito.sh/v1beta1
kind: RAGEngine
metadata:
  name: ragengine
spec:
  compute:
    instanceType: Standard_NC4as_T4_v3
    labelSelector:
      matchLabels:
        apps: ragengine
"""
CREATE = "#!/bin/bash\naz aks create --resource-group rg --name ml-aks --generate-ssh-keys FLAGS\n"
CRD = """\
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: workspaces.kaito.sh
spec:
  group: kaito.sh
  names:
    kind: Workspace
    plural: workspaces
  scope: Namespaced
  versions: []
"""


def run(tmp_path: Path, files: dict[str, str], config: Config | None = None) -> list[tuple[str, int, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=config or Config(), registry=load_registry(),
                              select=["KAI006"], cwd=tmp_path))
    return [(Path(r.path).name, r.line, r.column, r.message) for r in report.active]


def test_reported_at_the_create_naming_the_object(tmp_path: Path) -> None:
    found = run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", ""), "rag.yaml": RAGENGINE, "ws.yaml": WORKSPACE})
    assert [(n, line, col) for n, line, col, _ in found] == [("cluster.sh", 2, 1)]
    assert "cluster `ml-aks` is created without the AI toolchain operator (KAITO) add-on" in found[0][3]
    assert "RAGEngine `ragengine` (rag.yaml:2) and 1 more" in found[0][3]


@pytest.mark.parametrize("flags, extra", [
    ("--enable-ai-toolchain-operator", {}),
    ("$EXTRA_ARGS", {}),
    ("", {"later.sh": "#!/bin/bash\naz aks update -g rg -n ml-aks --enable-ai-toolchain-operator\n"}),
    ("", {"kaito.sh": "#!/bin/bash\nhelm install kaito-workspace kaito/workspace -n kaito-workspace\n"}),
    ("", {"kaito.sh": "#!/bin/bash\nhelm install workspace ./charts/kaito/workspace --namespace kaito\n"}),
    ("", {"kaito.sh": "#!/bin/bash\nhelm install ws workspace --repo https://kaito-project.github.io/kaito/charts/kaito\n"}),
    ("", {"crd.yaml": CRD}),
])
def test_near_misses(tmp_path: Path, flags: str, extra: dict) -> None:
    assert run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", flags), "ws.yaml": WORKSPACE, **extra}) == []


def test_another_projects_workspace_chart_is_not_kaito(tmp_path: Path) -> None:
    files = {"cluster.sh": CREATE.replace("FLAGS", ""), "ws.yaml": WORKSPACE,
             "other.sh": "#!/bin/bash\nhelm install workspace bitnami/workspace\n"}
    assert [(n, line) for n, line, _, _ in run(tmp_path, files)] == [("cluster.sh", 2)]


def test_no_cluster_or_another_top_folder_is_not_judged(tmp_path: Path) -> None:
    assert run(tmp_path / "one", {"ws.yaml": WORKSPACE}) == []
    files = {"repo-a/cluster.sh": CREATE.replace("FLAGS", ""), "repo-b/ws.yaml": WORKSPACE}
    assert run(tmp_path / "two", files) == []


def test_bicep_profile_written_off(tmp_path: Path) -> None:
    bicep = ("resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {\n  name: 'b'\n  properties: {\n"
             "    aiToolchainOperatorProfile: {\n      enabled: false\n    }\n  }\n}\n")
    found = run(tmp_path, {"main.bicep": bicep, "ws.yaml": WORKSPACE})
    assert [(n, line, col) for n, line, col, _ in found] == [("main.bicep", 5, 16)]
    assert "turns the AI toolchain operator (KAITO) add-on off (`aiToolchainOperatorProfile.enabled: false`)" in found[0][3]


def test_kaito_installed_by_terraform(tmp_path: Path) -> None:
    tf = ('resource "helm_release" "kaito" {\n  name       = "kaito-workspace"\n'
          '  repository = "https://kaito-project.github.io/kaito/charts/kaito"\n  chart      = "workspace"\n}\n')
    files = {"cluster.sh": CREATE.replace("FLAGS", ""), "ws.yaml": WORKSPACE, "kaito.tf": tf}
    assert run(tmp_path, files) == []
    files["kaito.tf"] = tf.replace("kaito-project.github.io/kaito/charts/kaito", "charts.example.com/tools")
    assert [(n, line) for n, line, _, _ in run(tmp_path / "other", files)] == [("cluster.sh", 2)]
