"""AKS008 workload-identity-disabled: cases beyond the fixtures (fixtures/rules/AKS008/ holds the fail and pass files)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]

JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: fine-tune
spec:
  template:
    metadata:
      labels:
        azure.workload.identity/use: "USE"
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: mlacr.azurecr.io/trainer:1.4.2
"""
CREATE = "#!/bin/bash\naz aks create --resource-group rg --name ml-aks --generate-ssh-keys FLAGS\n"


def run(tmp_path: Path, files: dict[str, str], config: Config | None = None) -> list[tuple[str, int, int, str]]:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, "utf-8")
    report = lint(LintRequest(paths=[tmp_path], config=config or Config(), registry=load_registry(),
                              select=["AKS008"], cwd=tmp_path))
    return [(Path(r.path).name, r.line, r.column, r.message) for r in report.active]


def test_the_fail_fixture_is_reported_at_its_expect_lines() -> None:
    folder = REPO / "fixtures" / "rules" / "AKS008"
    files = sorted(p for p in folder.glob("fail*") if p.suffix != ".fixed")
    report = lint(LintRequest(paths=files, config=Config(), registry=load_registry(), select=["AKS008"], cwd=REPO))
    got = sorted((Path(r.path).name, r.line) for r in report.active)
    expected = sorted((path.name, i + 2) for path in files
                      for i, line in enumerate(path.read_text("utf-8").splitlines())
                      if line.strip() in ("# expect: AKS008", "// expect: AKS008"))
    assert expected and got == expected


def test_reported_at_the_create_naming_the_workload(tmp_path: Path) -> None:
    found = run(tmp_path, {"cluster.sh": CREATE.replace("FLAGS", ""), "job.yaml": JOB.replace("USE", "true")})
    assert len(found) == 1
    name, line, col, message = found[0]
    assert (name, line, col) == ("cluster.sh", 2, 1)
    assert "cluster `ml-aks` is created without workload identity" in message
    assert "Job `fine-tune`" in message and "job.yaml:9" in message


@pytest.mark.parametrize("flags, use, extra", [
    ("--enable-oidc-issuer --enable-workload-identity", "true", {}),  # on
    ("", "false", {}),  # the label says no
    ("$EXTRA_ARGS", "true", {}),  # words of unknown value may hold the flag
    ("--sku automatic", "true", {}),  # AKS Automatic preconfigures it
    ("", "true", {"later.sh": "#!/bin/bash\naz aks update -g rg -n ml-aks --enable-workload-identity\n"}),
    ("", "true", {"webhook.sh": "#!/bin/bash\nhelm install workload-identity-webhook "
                                "azure-workload-identity/workload-identity-webhook -n azure-workload-identity-system\n"}),
])
def test_near_misses(tmp_path: Path, flags: str, use: str, extra: dict) -> None:
    files = {"cluster.sh": CREATE.replace("FLAGS", flags), "job.yaml": JOB.replace("USE", use), **extra}
    assert run(tmp_path, files) == []


def test_no_cluster_definition_is_not_judged(tmp_path: Path) -> None:
    assert run(tmp_path, {"job.yaml": JOB.replace("USE", "true"),
                          "ops.sh": "#!/bin/bash\nkubectl apply -f job.yaml\n"}) == []


def test_a_cluster_of_another_top_folder_does_not_govern(tmp_path: Path) -> None:
    """A folder of unrelated repositories (no .git, no config): each top folder is its own project."""
    files = {"repo-a/cluster.sh": CREATE.replace("FLAGS", ""), "repo-b/job.yaml": JOB.replace("USE", "true")}
    assert run(tmp_path, files) == []
    files["repo-a/job.yaml"] = JOB.replace("USE", "true")
    assert [(n, line) for n, line, _, _ in run(tmp_path, files)] == [("cluster.sh", 2)]


def test_terraform_variable_without_default_is_unknown(tmp_path: Path) -> None:
    tf = ('variable "wi" {}\nresource "azurerm_kubernetes_cluster" "aks" {\n  name = "tf-aks"\n'
          '  workload_identity_enabled = var.wi\n}\n')
    assert run(tmp_path, {"main.tf": tf, "job.yaml": JOB.replace("USE", "true")}) == []
    tf = tf.replace('variable "wi" {}', 'variable "wi" {\n  default = false\n}')
    found = run(tmp_path, {"main.tf": tf})
    assert [(n, line) for n, line, _, _ in found] == [("main.tf", 6)]
    assert "leaves workload identity off (`workload_identity_enabled = …`)" in found[0][3]


def test_oidc_issuer_written_off_is_reported_at_it(tmp_path: Path) -> None:
    tf = ('resource "azurerm_kubernetes_cluster" "aks" {\n  name = "tf-aks"\n  oidc_issuer_enabled = false\n'
          '  workload_identity_enabled = true\n}\n')
    found = run(tmp_path, {"main.tf": tf, "job.yaml": JOB.replace("USE", "true")})
    assert [(n, line, col) for n, line, col, _ in found] == [("main.tf", 3, 25)]
    assert "turns the OIDC issuer off" in found[0][3]


def test_arm_template_without_workload_identity(tmp_path: Path) -> None:
    arm = """{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "contentVersion": "1.0.0.0",
  "resources": [
    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "arm-aks",
      "properties": {"securityProfile": {"workloadIdentity": {"enabled": false}}}
    }
  ]
}
"""
    found = run(tmp_path, {"azuredeploy.json": arm, "job.yaml": JOB.replace("USE", "true")})
    assert [(n, line) for n, line, _, _ in found] == [("azuredeploy.json", 9)]
    assert "`securityProfile.workloadIdentity.enabled: false`" in found[0][3]


def test_aks_automatic_profile_judges_nothing(tmp_path: Path) -> None:
    files = {"cluster.sh": CREATE.replace("FLAGS", ""), "job.yaml": JOB.replace("USE", "true")}
    assert run(tmp_path, files, Config(profile="aks-automatic")) == []
