"""The aks-automatic profile inferred from the project's own cluster (issue 37, "AKS Automatic as
it behaves"), the note that says so, an explicit profile winning, and LNT005 (profile-mismatch)
when the given profile contradicts the project's cluster."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

GPU_JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
      containers:
      - name: trainer
        image: trainer:1
        resources:
          requests: {nvidia.com/gpu: 1}
          limits: {nvidia.com/gpu: 1}
"""

# a Standard GPU pool without a taint or label: AKS001 and AKS002 fire in aks-standard only
GPU_POOL = ("az aks nodepool add -g rg --cluster-name ml -n gpunp --node-vm-size Standard_NC4as_T4_v3 "
            "--enable-cluster-autoscaler --min-count 0 --max-count 4\n")


def project(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    (tmp_path / ".mlops-lint.yaml").write_text("# defaults\n")
    return tmp_path


def run(root: Path, overrides: dict | None = None, select: list[str] | None = None):
    return lint(LintRequest(paths=[root], config=None, registry=REGISTRY, cwd=root, select=select,
                            overrides=overrides or {}))


def rules_of(report) -> set[str]:
    return {r.rule for r in report.active}


@pytest.mark.parametrize("name, text, line, how", [
    ("cluster.sh", "#!/bin/bash\naz aks create -g rg -n ml \\\n  --sku automatic\n" + GPU_POOL, 3,
     "an AKS Automatic cluster (`az aks create --sku automatic`)"),
    ("cluster.sh", "#!/bin/bash\naz aks create -g rg -n ml --node-provisioning-mode Auto\n" + GPU_POOL, 2,
     "a node auto-provisioning cluster (`az aks create --node-provisioning-mode Auto`)"),
    ("cluster.sh", "#!/bin/bash\naz aks create -g rg -n ml\naz aks update -g rg -n ml --node-provisioning-mode Auto\n"
     + GPU_POOL, 3, "a node auto-provisioning cluster (`az aks update --node-provisioning-mode Auto`)"),
    ("infra/main.tf", 'resource "azurerm_kubernetes_cluster" "aks" {\n  name = "ml"\n'
     '  node_provisioning_profile {\n    mode = "Auto"\n  }\n}\n', 4,
     'a node auto-provisioning cluster (`node_provisioning_profile { mode = "Auto" }`)'),
    ("infra/main.tf", 'variable "tier" {\n  default = "Automatic"\n}\n'
     'resource "azurerm_kubernetes_cluster" "aks" {\n  name     = "ml"\n  sku_tier = var.tier\n}\n', 6,
     'an AKS Automatic cluster (`sku_tier = "Automatic"`)'),
    ("infra/main.bicep", "resource aks 'Microsoft.ContainerService/managedClusters@2025-05-01' = {\n"
     "  name: 'ml'\n  sku: {\n    name: 'Automatic'\n  }\n  properties: {}\n}\n", 4,
     "an AKS Automatic cluster (`sku: { name: 'Automatic' }`)"),
])
def test_profile_inferred_from_the_projects_cluster(tmp_path: Path, name: str, text: str, line: int, how: str) -> None:
    root = project(tmp_path, {name: text, "job.yaml": GPU_JOB})
    report = run(root)
    notes = [n for n in report.notes if "inferred" in n.message]
    assert [(n.path, n.message) for n in notes] == [(
        name, f"profile aks-automatic inferred: line {line} makes {how}; "
              "--profile aks-standard or `profile:` in the config overrides it")]
    # the profile is in force: the AKS rules and GPU006 are off, and the script's pools are not the cluster's
    assert not {r for r in rules_of(report) if r.startswith("AKS") or r == "GPU006"}
    assert "LNT005" not in rules_of(report)


def test_without_an_automatic_cluster_nothing_is_inferred(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml\n" + GPU_POOL, "job.yaml": GPU_JOB})
    report = run(root)
    assert not report.notes
    assert {"AKS001", "AKS002"} <= rules_of(report)


def test_an_undetermined_sku_infers_nothing(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": '#!/bin/bash\n# sku: base or automatic\naz aks create -g rg -n ml --sku "$SKU"\n'
                              + GPU_POOL, "job.yaml": GPU_JOB})
    report = run(root)
    assert not report.notes
    assert "AKS001" in rules_of(report)


def test_an_automatic_and_a_standard_cluster_keep_the_default_with_a_note(tmp_path: Path) -> None:
    root = project(tmp_path, {"a.sh": "#!/bin/bash\naz aks create -g rg -n auto --sku automatic\n",
                              "b.sh": "#!/bin/bash\naz aks create -g rg -n std\n" + GPU_POOL.replace("ml", "std"),
                              "job.yaml": GPU_JOB})
    report = run(root)
    assert [(n.path, n.message) for n in report.notes] == [(
        "a.sh", "profile not inferred: line 2 makes an AKS Automatic or node auto-provisioning cluster "
                "(`az aks create --sku automatic`) but b.sh:2 a Standard one (`az aks create` without `--sku automatic` "
                "or `--node-provisioning-mode Auto`); linted as aks-standard (--profile or `profile:` in the config chooses)")]
    assert "AKS001" in rules_of(report)


def test_explicit_profile_wins_and_a_mismatch_is_lnt005(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml \\\n  --sku automatic\n" + GPU_POOL,
                              "job.yaml": GPU_JOB})
    report = run(root, {"profile": "aks-standard", "profile_from": "--profile"})
    assert not report.notes
    assert "AKS001" in rules_of(report)  # the standard profile is in force
    found = [r for r in report.active if r.rule == "LNT005"]
    assert [(r.path, r.line, r.column, r.severity) for r in found] == [("cluster.sh", 3, 9, "warning")]
    assert found[0].message.startswith("`az aks create --sku automatic` makes an AKS Automatic cluster but the "
                                       "profile is aks-standard (--profile)")


def test_config_profile_wins_and_is_named(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n"})
    (tmp_path / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    report = run(root)
    assert not report.notes
    assert [r.message.split(": the")[0] for r in report.active if r.rule == "LNT005"] == [
        "`az aks create --sku automatic` makes an AKS Automatic cluster but the profile is aks-standard "
        "(`profile:` in .mlops-lint.yaml)"]


def test_lnt005_a_standard_cluster_under_an_explicit_aks_automatic(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\nset -e\naz aks create -g rg -n ml\n",
                              "main.tf": 'resource "azurerm_kubernetes_cluster" "aks" {\n  name = "other"\n}\n'})
    report = run(root, {"profile": "aks-automatic", "profile_from": "--profile"}, select=["LNT005"])
    assert [(r.path, r.line, r.column) for r in report.active] == [("cluster.sh", 3, 1), ("main.tf", 1, 1)]
    assert report.active[0].message.startswith(
        "`az aks create` without `--sku automatic` or `--node-provisioning-mode Auto` makes an AKS Standard cluster "
        "but the profile is aks-automatic (--profile)")


def test_lnt005_a_cluster_switched_to_nap_is_no_standard_one(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml\n"
                                            "az aks update -g rg -n ml --node-provisioning-mode Auto\n"})
    report = run(root, {"profile": "aks-automatic", "profile_from": "--profile"}, select=["LNT005"])
    assert report.active == []


NAP_THEN_MANUAL = ("#!/bin/bash\naz aks create -g rg -n ml --node-provisioning-mode Auto\n"
                   "az aks update -g rg -n ml --node-provisioning-mode Manual\n")


@pytest.mark.parametrize("text, inferred", [
    (NAP_THEN_MANUAL + GPU_POOL, False),  # NAP turned off by a later line: a Standard cluster
    ("#!/bin/bash\naz aks create -g rg -n ml\naz aks update -g rg -n ml --node-provisioning-mode Auto\n"
     "az aks update -g rg -n ml --node-provisioning-mode manual\n" + GPU_POOL, False),
    # read in order: turned off, then on again
    (NAP_THEN_MANUAL + "az aks update -g rg -n ml --node-provisioning-mode Auto\n" + GPU_POOL, True),
    # AKS Automatic keeps NAP: a Manual update does not make it Standard
    ("#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n"
     "az aks update -g rg -n ml --node-provisioning-mode Manual\n", True),
])
def test_node_provisioning_mode_manual_turns_the_inference_off(tmp_path: Path, text: str, inferred: bool) -> None:
    root = project(tmp_path, {"cluster.sh": text, "job.yaml": GPU_JOB})
    report = run(root)
    assert bool([n for n in report.notes if "inferred" in n.message]) is inferred
    if not inferred:
        assert not report.notes
        assert {"AKS001", "AKS002"} <= rules_of(report)  # aks-standard is in force: the pool is the user's


def test_lnt005_nap_turned_off_is_judged_as_standard(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": NAP_THEN_MANUAL})
    # under aks-standard the NAP line turned off later is no mismatch
    assert run(root, {"profile": "aks-standard", "profile_from": "--profile"}, select=["LNT005"]).active == []
    report = run(root, {"profile": "aks-automatic", "profile_from": "--profile"}, select=["LNT005"])
    assert [(r.path, r.line, r.column) for r in report.active] == [("cluster.sh", 3, 52)]
    assert report.active[0].message.startswith(
        "`az aks update --node-provisioning-mode Manual` turns node auto-provisioning off, making an AKS Standard "
        "cluster, but the profile is aks-automatic (--profile)")


def test_api_config_with_a_profile_is_explicit() -> None:
    """An API caller's Config(profile=...) is a given profile (no inference, LNT005 judges it)."""
    from mlops_lint.profiles import explicit

    assert explicit(Config(profile="aks-automatic"))
    assert not explicit(Config())
    assert explicit(Config(profile_from="config"))


def test_cli_note_on_stdout_and_in_json(tmp_path: Path) -> None:
    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml --sku Automatic\n", "job.yaml": GPU_JOB})
    runner = CliRunner()
    text = runner.invoke(main, ["--no-cache", str(root)])
    assert "note: cluster.sh: profile aks-automatic inferred: line 2 makes an AKS Automatic cluster " \
           "(`az aks create --sku Automatic`)" in text.output.replace(str(root) + "/", "")
    data = json.loads(runner.invoke(main, ["--no-cache", "--format", "json", str(root)]).output)
    assert any("profile aks-automatic inferred" in n["message"] for n in data["notes"])
    given = runner.invoke(main, ["--no-cache", "--profile", "aks-standard", "--format", "json", str(root)])
    data = json.loads(given.output)
    assert not any("inferred" in n["message"] for n in data["notes"])
    assert [(f["rule"], Path(f["path"]).name, f["line"]) for f in data["findings"] if f["rule"] == "LNT005"] == [
        ("LNT005", "cluster.sh", 2)]


def test_no_hint_no_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `automatic` or `provisioning` in any script or IaC file, inference parses nothing."""
    import mlops_lint.sources.files as files

    calls = []
    real = files.load_bytes
    monkeypatch.setattr(files, "load_bytes", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    from mlops_lint.engine.profile import infer
    from mlops_lint.engine.projects import by_roots, loader

    root = project(tmp_path, {"cluster.sh": "#!/bin/bash\naz aks create -g rg -n ml\n", "job.yaml": GPU_JOB})
    (found,) = by_roots([root], root, loader(REGISTRY, {}))
    assert infer(found, root) is None and calls == []
    (root / "cluster.sh").write_text("#!/bin/bash\naz aks create -g rg -n ml --sku automatic\n")
    (found,) = by_roots([root], root, loader(REGISTRY, {}))
    assert infer(found, root) is not None and calls == ["cluster.sh"]
    assert found.config.profile == "aks-automatic" and found.config.profile_from == "inferred"
