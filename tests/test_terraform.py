"""Terraform node pools in the cluster model (linter/sources/terraform.py,
linter/model/cluster/from_terraform.py): values, expansion, positions, the rules on them,
placement of workloads on them, the same pools written as ``az`` commands, and hostile input."""

from __future__ import annotations

import gc
import time
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.cluster import build_cluster
from mlops_lint.model.position import Span
from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.registry import load_registry
from mlops_lint.sources import shell, terraform

CLUSTER_TF = '''resource "azurerm_kubernetes_cluster" "aks" {
  name                = "ml-aks"
  dns_prefix          = "mlaks"

  default_node_pool {
    name       = "system"
    vm_size    = "Standard_D4s_v5"
    node_count = 3
  }
}
'''


def files(**texts: str):
    """{name: text} -> the TfFile of each (``main_tf`` is ``mod/main.tf``)."""
    out = []
    for name, text in sorted(texts.items()):
        path = "mod/" + name.replace("_tf", ".tf").replace("_auto", ".auto")
        document = terraform.load(text.encode(), path)
        assert not document.errors, document.errors
        out.append(document.iac)
    return out


def pools(**texts: str):
    return {p.display: p for p in build_cluster([], None, files(**texts)).pools}


def test_cluster_default_pool_and_node_pool_with_literals_and_positions() -> None:
    found = pools(main_tf=CLUSTER_TF + '''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC24ads_A100_v4"
  node_taints           = ["sku=gpu:NoSchedule"]
  node_labels           = { accelerator = "nvidia", "workload" = "training" }
  auto_scaling_enabled  = true
  min_count             = 0
  max_count             = 4
  priority              = "Spot"
  gpu_instance          = "MIG1g"
}
''')
    system, gpu = found["system"], found["gpunp"]
    assert system.is_system is True and system.vm_size == "Standard_D4s_v5" and system.node_count == 3
    assert gpu.is_system is False and gpu.cluster == "ml-aks" and gpu.cluster_key == system.cluster_key
    assert [str(t.taint) for t in gpu.effective_taints] == ["sku=gpu:NoSchedule",
                                                            "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"]
    assert gpu.labels == {"accelerator": "nvidia", "workload": "training"}
    assert (gpu.autoscaler, gpu.min_count, gpu.max_count, gpu.spot, gpu.gpu_instance_profile) == (True, 0, 4, True, "MIG1g")
    # the attribute's name, and its value, in the .tf file (1-based, end exclusive)
    assert gpu.vm_origin.path == "mod/main.tf"
    assert gpu.vm_origin.span == Span(15, 3, 15, 10) and gpu.vm_origin.value_span == Span(15, 27, 15, 53)
    assert gpu.count_origin["min_count"].value_span == Span(19, 27, 19, 28)


def test_variables_locals_interpolation_and_tfvars() -> None:
    main = '''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "${local.prefix}gpu"
  kubernetes_cluster_id = var.cluster_id
  vm_size               = var.gpu_size
  node_labels           = { accelerator = local.accelerator, team = var.team }
  node_taints           = ["sku=${var.sku}:NoSchedule"]
  max_pods              = var.pods
}
locals {
  prefix      = "ml"
  accelerator = "nvidia"
}
'''
    variables = '''
variable "cluster_id" {}
variable "gpu_size" { default = "Standard_NC6s_v3" }
variable "team" { default = "a" }
variable "sku" { default = "gpu" }
variable "pods" { default = 30 }
'''
    gpu = pools(main_tf=main, variables_tf=variables)["mlgpu"]
    assert (gpu.vm_size, gpu.labels, gpu.max_pods) == ("Standard_NC6s_v3", {"accelerator": "nvidia", "team": "a"}, 30)
    assert [str(t.taint) for t in gpu.taints] == ["sku=gpu:NoSchedule"]
    assert gpu.cluster is UNKNOWN  # kubernetes_cluster_id from a variable: a cluster not in the project
    # terraform.tfvars overrides the default; another *.tfvars is a -var-file a run may pass: a
    # value it gives that differs makes the variable unknown, never a guess
    gpu = pools(main_tf=main, variables_tf=variables, terraform_tfvars='gpu_size = "Standard_NC24ads_A100_v4"\n')["mlgpu"]
    assert gpu.vm_size == "Standard_NC24ads_A100_v4"
    gpu = pools(main_tf=main, variables_tf=variables, prod_tfvars='team = "b"\n')["mlgpu"]
    assert gpu.labels == {"accelerator": "nvidia", "team": UNKNOWN}
    gpu = pools(main_tf=main, variables_tf=variables, prod_tfvars='team = "a"\n')["mlgpu"]
    assert gpu.labels["team"] == "a"


def test_unknown_values_are_placeholders_never_guesses() -> None:
    found = pools(main_tf='''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = data.azurerm_kubernetes_cluster.aks.id
  vm_size               = var.size
  node_taints           = concat(["sku=gpu:NoSchedule"], var.extra)
  node_labels           = merge(local.labels, { a = "b" })
  mode                  = var.mode == "" ? "User" : var.mode
  auto_scaling_enabled  = module.settings.autoscale
}
variable "size" {}
''')
    gpu = found["gpunp"]
    assert gpu.vm_size is UNKNOWN and gpu.vm is None
    assert gpu.taints_open and gpu.labels_open and gpu.mode is UNKNOWN and gpu.autoscaler is UNKNOWN


def test_count_and_for_each_over_literals_expand_one_pool_each() -> None:
    found = pools(main_tf='''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  for_each              = { t4 = "Standard_NC4as_T4_v3", a100 = "Standard_NC24ads_A100_v4" }
  name                  = each.key
  kubernetes_cluster_id = var.cluster_id
  vm_size               = each.value
}
resource "azurerm_kubernetes_cluster_node_pool" "cpu" {
  count                 = 2
  name                  = "cpu${count.index}"
  kubernetes_cluster_id = var.cluster_id
  vm_size               = "Standard_D4s_v5"
}
resource "azurerm_kubernetes_cluster_node_pool" "many" {
  for_each              = var.pools
  name                  = each.key
  kubernetes_cluster_id = var.cluster_id
  vm_size               = "Standard_D4s_v5"
}
''')
    assert found["t4"].vm_size == "Standard_NC4as_T4_v3" and found["a100"].vm_size == "Standard_NC24ads_A100_v4"
    assert {"cpu0", "cpu1"} <= set(found)
    many = [p for p in found.values() if p.name is UNKNOWN]  # for_each over an unknown map: one pool for all
    assert len(many) == 1 and many[0].display == "many.name"


def test_parse_error_is_one_sch001_at_its_line(tmp_path: Path) -> None:
    (tmp_path / "main.tf").write_text('resource "azurerm_kubernetes_cluster_node_pool" "gpu" {\n  name = \n}\n')
    result = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), cwd=tmp_path, jobs=1))
    found = [(f.rule, f.path, f.line, f.message) for f in result.active]
    assert found == [("SCH001", "main.tf", 2, "not valid Terraform (HCL) syntax here; the file was not read")], found
    # another provider's module the parser cannot read is no finding of the user's: skipped, with a note
    (tmp_path / "main.tf").write_text('resource "aws_instance" "x" {\n  ami = \n}\n')
    result = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), cwd=tmp_path, jobs=1))
    assert result.active == []
    assert result.file_status == {"main.tf": "skipped: python-hcl2 cannot read it (line 2) and it defines no AKS "
                                             "cluster or node pool"}, result.file_status


def _lint(tmp_path: Path, select: list[str]):
    result = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=select,
                              cwd=tmp_path, jobs=1))
    return sorted((f.rule, f.path, f.line, f.column, f.message) for f in result.active)


JOB = '''apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector:
        accelerator: nvidia-a100
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources:
          limits: {nvidia.com/gpu: 1}
'''


def test_workloads_are_placed_on_terraform_pools(tmp_path: Path) -> None:
    """XPL001 names the Terraform pools a selector misses; XPL002 their untolerated taint."""
    (tmp_path / "main.tf").write_text(CLUSTER_TF + '''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3"
  node_labels           = { accelerator = "nvidia" }
  node_taints           = ["sku=gpu:NoSchedule"]
}
''')
    (tmp_path / "job.yaml").write_text(JOB)
    found = _lint(tmp_path, ["XPL001", "XPL002"])
    assert [(c, p, line) for c, p, line, _, _ in found] == [("XPL001", "job.yaml", 9)], found
    assert "gpunp: nodeSelector accelerator=nvidia-a100 does not match" in found[0][4]
    (tmp_path / "job.yaml").write_text(JOB.replace("nvidia-a100", "nvidia"))
    found = _lint(tmp_path, ["XPL001", "XPL002"])
    assert [c for c, *_ in found] == ["XPL002"] and "gpunp: taint sku=gpu:NoSchedule not tolerated" in found[0][4]


SCRIPT = '''#!/bin/bash
az aks create -g rg -n ml-aks --nodepool-name system --node-vm-size {system} --node-count 3
az aks nodepool add -g rg --cluster-name ml-aks -n gpunp --node-vm-size {size} --mode {mode}{labels}{taints}
'''
TF = CLUSTER_TF.replace("{", "{{").replace("}", "}}").replace("Standard_D4s_v5", "{system}") + '''
resource "azurerm_kubernetes_cluster_node_pool" "gpu" {{
  name                  = "gpunp"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "{size}"
  mode                  = "{mode}"{labels}{taints}
}}
'''


BICEP = """resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {{
  name: 'ml-aks'
  properties: {{
    agentPoolProfiles: [
      {{
        name: 'system'
        vmSize: '{system}'
        count: 3
      }}
    ]
  }}
}}
resource gpu 'Microsoft.ContainerService/managedClusters/agentPools@2024-02-01' = {{
  parent: aks
  name: 'gpunp'
  properties: {{
    vmSize: '{size}'
    mode: '{mode}'{labels}{taints}
  }}
}}
"""


ARM = """{{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "contentVersion": "1.0.0.0",
  "parameters": {{"clusterName": {{"type": "string", "defaultValue": "ml-aks"}}}},
  "resources": [
    {{
      "type": "Microsoft.ContainerService/managedClusters",
      "name": "[parameters('clusterName')]",
      "properties": {{
        "agentPoolProfiles": [
          {{"name": "system", "vmSize": "{system}", "count": 3}}
        ]
      }}
    }},
    {{
      "type": "Microsoft.ContainerService/managedClusters/agentPools",
      "name": "[concat(parameters('clusterName'), '/gpunp')]",
      "properties": {{
        "vmSize": "{size}",
        "mode": "{mode}"{labels}{taints}
      }}
    }}
  ]
}}
"""


@pytest.mark.parametrize("size", ["Standard_NC4as_T4_v3", "Standard_D8s_v5"])
@pytest.mark.parametrize("system", ["Standard_D4s_v5", "Standard_NC6s_v3"])
@pytest.mark.parametrize("mode", ["User", "System"])
@pytest.mark.parametrize("labelled", [False, True])
@pytest.mark.parametrize("tainted", [False, True])
def test_the_same_pools_as_az_commands_terraform_and_bicep_give_the_same_findings(
        tmp_path: Path, size: str, system: str, mode: str, labelled: bool, tainted: bool) -> None:
    """Ids, pools and messages but the fix hint agree; each points into its own file (an ARM
    template's findings are the Bicep file's, at its own lines)."""
    select = ["AKS001", "AKS002", "AKS003", "XPL001", "XPL002"]
    az, tf, bicep, arm = tmp_path / "az", tmp_path / "tf", tmp_path / "bicep", tmp_path / "arm"
    az.mkdir(), tf.mkdir(), bicep.mkdir(), arm.mkdir()
    (az / "setup.sh").write_text(SCRIPT.format(
        system=system, size=size, mode=mode, labels=" --labels accelerator=nvidia" if labelled else "",
        taints=" --node-taints sku=gpu:NoSchedule" if tainted else ""))
    (tf / "main.tf").write_text(TF.format(
        system=system, size=size, mode=mode, labels='\n  node_labels = { accelerator = "nvidia" }' if labelled else "",
        taints='\n  node_taints = ["sku=gpu:NoSchedule"]' if tainted else ""))
    (bicep / "main.bicep").write_text(BICEP.format(
        system=system, size=size, mode=mode, labels="\n    nodeLabels: {\n      accelerator: 'nvidia'\n    }" if labelled else "",
        taints="\n    nodeTaints: [\n      'sku=gpu:NoSchedule'\n    ]" if tainted else ""))
    (arm / "azuredeploy.json").write_text(ARM.format(
        system=system, size=size, mode=mode, labels=',\n        "nodeLabels": {"accelerator": "nvidia"}' if labelled else "",
        taints=',\n        "nodeTaints": ["sku=gpu:NoSchedule"]' if tainted else ""))
    for folder in (az, tf, bicep, arm):
        (folder / "job.yaml").write_text(JOB.replace("nvidia-a100", "nvidia"))

    def shape(found):
        return sorted((code, path.rsplit(".", 1)[-1] if path != "job.yaml" else path,
                       message.split(": add")[0].split("; add")[0].split("; keep")[0]) for code, path, _, _, message in found)

    from_az, from_tf, from_bicep = _lint(az, select), _lint(tf, select), _lint(bicep, select)
    assert [(c, p, m.replace("first agentPoolProfiles entry", "first pool")) for c, p, m in shape(from_bicep)] == [
        (c, "bicep" if p == "tf" else p, m.replace("default_node_pool", "first pool")) for c, p, m in shape(from_tf)]
    assert [(c, p) for c, p, *_ in shape(from_az)] == [(c, "sh" if p == "tf" else p) for c, p, *_ in shape(from_tf)]
    assert [m for *_, m in shape(from_az)] == [m.replace("default_node_pool", "first pool") for *_, m in shape(from_tf)]
    codes = {code for code, *_ in from_tf}
    assert ("AKS001" in codes) == (size != "Standard_D8s_v5" and not tainted or system == "Standard_NC6s_v3")  # not vacuous
    assert ("AKS003" in codes) == (system == "Standard_NC6s_v3" or mode == "System" and size != "Standard_D8s_v5")
    assert all(path == "main.tf" for code, path, *_ in from_tf if code.startswith("AKS"))
    assert all(path == "setup.sh" for code, path, *_ in from_az if code.startswith("AKS"))
    from_arm = _lint(arm, select)
    assert [(c, "bicep" if p == "json" else p, m) for c, p, m in shape(from_arm)] == shape(from_bicep)
    assert all(path == "azuredeploy.json" for code, path, *_ in from_arm if code.startswith("AKS"))


# -- hostile input --------------------------------------------------------------------------------


def _cpu_seconds(action) -> float:
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            start = time.process_time()
            action()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


def _pools_tf(n: int) -> bytes:
    return "".join(f'resource "azurerm_kubernetes_cluster_node_pool" "p{i}" {{ vm_size = "Standard_NC6s_v3" }}\n'
                   for i in range(n)).encode()


def _for_each_tf(n: int) -> bytes:
    items = ", ".join(f'"p{i}"' for i in range(n))
    return (f'resource "azurerm_kubernetes_cluster_node_pool" "p" {{\n  for_each = toset([{items}])\n'
            '  name = each.key\n  vm_size = "Standard_NC6s_v3"\n}\n').encode()


def _model(data: bytes) -> None:
    document = terraform.load(data, "m/main.tf")
    build_cluster([], None, [document.iac] if document.iac is not None else [])


@pytest.mark.parametrize("make, n", [(_pools_tf, 250), (_for_each_tf, 2_000)], ids=["pools", "for_each"])
def test_terraform_reading_is_linear(make, n: int) -> None:
    """Size 4N costs about 4 times size N (6 leaves room for noise; quadratic code gives 16)."""
    small, large = make(n), make(4 * n)
    _model(small)
    ratio = _cpu_seconds(lambda: _model(large)) / max(_cpu_seconds(lambda: _model(small)), 1e-3)
    assert ratio < 6, f"4x the input took {ratio:.1f}x the time"


def test_hostile_terraform_files_are_bounded() -> None:
    """10,000 pools and a for_each over 100,000 literal items are over the size the parser reads
    (one SCH001 each, at once); a for_each of more than 256 items is one pool, not thousands;
    expressions nested 5,000 deep are read as unknown past 48 levels, without recursion."""
    for data in (_pools_tf(10_000), _for_each_tf(100_000)):
        start = time.process_time()
        document = terraform.load(data, "m/main.tf")
        assert time.process_time() - start < 1
        assert document.iac is None and "over the 512 KiB mlops-lint parses" in document.errors[0].message
    document = terraform.load(_for_each_tf(2_000), "m/main.tf")
    assert len(build_cluster([], None, [document.iac]).pools) == 1
    for deep in ("(" * 5000 + "1" + ")" * 5000, "[" * 5000 + "]" * 5000, "{a = " * 3000 + "1" + "}" * 3000):
        document = terraform.load(f'resource "azurerm_kubernetes_cluster_node_pool" "p" {{\n  vm_size = {deep}\n}}\n'.encode(),
                                  "m/main.tf")
        assert not document.errors
        (pool,) = build_cluster([], None, [document.iac]).pools
        assert pool.vm_size is UNKNOWN


def test_an_oversized_file_is_one_finding_naming_it_and_the_rest_is_linted(tmp_path: Path) -> None:
    """The hostile 10,000-pool file is not read, and the run says so at that file; the module's
    other files are still read (their pools found)."""
    (tmp_path / "big.tf").write_bytes(_pools_tf(10_000))
    (tmp_path / "main.tf").write_text('resource "azurerm_kubernetes_cluster_node_pool" "g" {\n  name = "gpunp"\n'
                                      '  kubernetes_cluster_id = var.c\n  vm_size = "Standard_NC6s_v3"\n}\n')
    start = time.process_time()
    result = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["SCH001", "AKS001"],
                              cwd=tmp_path, jobs=1))
    assert time.process_time() - start < 5
    found = sorted((f.rule, f.path, f.line, f.message) for f in result.active)
    assert found[0] == ("AKS001", "main.tf", 4, found[0][3]) and "`gpunp`" in found[0][3]
    assert found[1:] == [("SCH001", "big.tf", 1, "this Terraform file is 868 KiB, over the 512 KiB mlops-lint parses; it "
                                                "was not read, so the node pools it defines are unknown to the cluster model")]


def test_shell_and_terraform_pools_share_the_record() -> None:
    """Every source feeds the same NodePool record; only the source and origin tell them apart."""
    script = shell.load_text("az aks nodepool add --cluster-name c -n gpunp -s Standard_NC6s_v3\n", "a.sh").shell
    tf = files(main_tf='resource "azurerm_kubernetes_cluster_node_pool" "g" {\n  name = "tfgpu"\n'
                       '  kubernetes_cluster_id = var.c\n  vm_size = "Standard_NC6s_v3"\n}\n')
    cluster = build_cluster([script], None, tf)
    assert [(p.display, p.source, p.vm.name) for p in cluster.pools] == [
        ("gpunp", "script", "Standard_NC6s_v3"), ("tfgpu", "terraform", "Standard_NC6s_v3")]
