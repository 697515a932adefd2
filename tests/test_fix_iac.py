"""``--fix`` of node pool attributes written in Terraform, Bicep and ARM templates (linter/fix/iac.py,
the InsertLine intent of linter/fix/resolve.py, AKS001-AKS004): the fixed file is the original with
exactly the intended edit (one line added, or one literal value replaced; every other byte kept,
CRLF and tabs included), and values written as variables or parameters are never fixed (the hint
says so)."""

from __future__ import annotations

import difflib
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.fix import InsertLine, Plan
from mlops_lint.fix.iac import string, value_text
from mlops_lint.fix.resolve import resolve
from mlops_lint.model.position import Span

CLUSTER_TF = '''resource "azurerm_kubernetes_cluster" "aks" {
  name       = "ml-aks"
  dns_prefix = "mlaks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v5"
  }
}

'''
GPU_TF = '''resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "tfgpu"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  vm_size               = "Standard_NC4as_T4_v3" # T4 for inference
  node_labels           = { accelerator = "nvidia" }
  mode                  = "System"
}
'''
BICEP = '''resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {
  name: 'ml-aks'
  properties: {
    dnsPrefix: 'mlaks'
    agentPoolProfiles: [
      {
        name: 'system'
        vmSize: 'Standard_D4s_v5'
        mode: 'System'
      }
      {
        name: 'gpu'
        vmSize: 'Standard_NC4as_T4_v3'
        nodeLabels: { accelerator: 'nvidia' }
        mode: 'System'
      }
    ]
  }
}
'''
ARM = {
    "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
    "resources": [{
        "type": "Microsoft.ContainerService/managedClusters", "apiVersion": "2024-02-01", "name": "ml-aks",
        "properties": {"agentPoolProfiles": [
            {"name": "system", "vmSize": "Standard_D4s_v5", "mode": "System"},
            {"name": "gpu", "vmSize": "Standard_NC4as_T4_v3", "nodeLabels": {"accelerator": "nvidia"}, "mode": "User"},
        ]},
    }],
}


def fix(tmp_path: Path, name: str, text: str | bytes, select: str, *extra: str) -> tuple[bytes, dict]:
    """``mlops-lint check --fix --unsafe-fixes --select <select>`` on one file; its bytes after, and
    the JSON report of what is left."""
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["check", "--no-cache", "--jobs", "1", "--format", "json", "--fix",
                                           "--unsafe-fixes", "--select", select, *extra, name], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code in (0, 1), result.output
    return path.read_bytes(), json.loads(result.stdout)


def changes(before: str, after: str) -> list[str]:
    """The lines removed (``-``) and added (``+``), nothing else of the diff."""
    return [line for line in difflib.ndiff(before.splitlines(True), after.splitlines(True)) if line[:1] in "+-"]


def test_aks001_terraform_adds_one_line_aligned_below_vm_size(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF.replace('  mode                  = "System"\n', "")
    after, report = fix(tmp_path, "main.tf", text, "AKS001")
    assert changes(text, after.decode()) == ['+   node_taints           = ["sku=gpu:NoSchedule"]\n']
    # below the VM size line, its trailing comment kept where it was
    assert '= "Standard_NC4as_T4_v3" # T4 for inference\n  node_taints           = ["sku=gpu:NoSchedule"]\n' \
        in after.decode()
    assert [f["rule"] for f in report["findings"]] == []


def test_aks001_keeps_crlf_and_tabs(tmp_path: Path) -> None:
    text = (CLUSTER_TF + GPU_TF.replace('  mode                  = "System"\n', "")).replace("\n  ", "\n\t").replace("\n", "\r\n")
    after, _ = fix(tmp_path, "main.tf", text, "AKS001")
    added = after.decode()
    assert changes(text, added) == ['+ \tnode_taints           = ["sku=gpu:NoSchedule"]\r\n']
    assert added.count("\r\n") == text.count("\r\n") + 1 and "\n" not in added.replace("\r\n", "")


def test_aks001_bicep_and_arm(tmp_path: Path) -> None:
    text = BICEP.replace("        mode: 'System'\n      }\n    ]", "        mode: 'User'\n      }\n    ]")
    after, report = fix(tmp_path, "main.bicep", text, "AKS001")
    assert changes(text, after.decode()) == ["+         nodeTaints: ['sku=gpu:NoSchedule']\n"]
    assert report["findings"] == []
    template = json.dumps(ARM, indent=2) + "\n"
    after, report = fix(tmp_path, "azuredeploy.json", template, "AKS001")
    # ARM: the line goes above "vmSize" (a key added before another needs no comma moved)
    assert changes(template, after.decode()) == ['+             "nodeTaints": ["sku=gpu:NoSchedule"],\n']
    assert json.loads(after)["resources"][0]["properties"]["agentPoolProfiles"][1]["nodeTaints"] == ["sku=gpu:NoSchedule"]
    assert report["findings"] == []
    # a pool written on one line: the key does not start its line, so no fix (the finding stays)
    one_line = template.split('"agentPoolProfiles": [')[0] + '"agentPoolProfiles": [\n' + ",\n".join(
        json.dumps(p) for p in ARM["resources"][0]["properties"]["agentPoolProfiles"]) + "\n]}}]}\n"
    json.loads(one_line)
    after, report = fix(tmp_path, "azuredeploy.json", one_line, "AKS001")
    assert after.decode() == one_line and [f["rule"] for f in report["findings"]] == ["AKS001"]


def test_aks001_empty_literal_list_is_filled_but_a_variable_is_not(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF.replace('  mode                  = "System"\n', '  node_taints           = []\n')
    after, _ = fix(tmp_path, "main.tf", text, "AKS001")
    assert changes(text, after.decode()) == ['-   node_taints           = []\n',
                                             '+   node_taints           = ["sku=gpu:NoSchedule"]\n']
    text = CLUSTER_TF + GPU_TF.replace('  mode                  = "System"\n', '  node_taints           = var.taints\n') \
        + 'variable "taints" {\n  default = []\n}\n'
    after, report = fix(tmp_path, "main.tf", text, "AKS001")
    assert after.decode() == text
    (finding,) = report["findings"]
    assert finding["rule"] == "AKS001" and "(written as `var.taints`, not a literal: --fix leaves it to you)" in finding["fix"]


def test_aks002_adds_the_labels_when_the_pool_writes_none(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF.replace('  node_labels           = { accelerator = "nvidia" }\n', "") \
        .replace('  mode                  = "System"\n', '  node_taints           = ["sku=gpu:NoSchedule"]\n')
    after, report = fix(tmp_path, "main.tf", text, "AKS002")
    assert changes(text, after.decode()) == ['+   node_labels           = { accelerator = "nvidia" }\n']
    assert report["findings"] == []


def test_aks003_literal_mode_becomes_user(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF
    after, report = fix(tmp_path, "main.tf", text, "AKS003")
    assert changes(text, after.decode()) == ['-   mode                  = "System"\n', '+   mode                  = "User"\n']
    assert report["findings"] == []
    after, report = fix(tmp_path, "main.bicep", BICEP, "AKS003")
    assert changes(BICEP, after.decode()) == ["-         mode: 'System'\n", "+         mode: 'User'\n"]


def test_aks003_variable_mode_and_the_only_system_pool_are_not_fixed(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF.replace('"System"', "var.pool_mode") + 'variable "pool_mode" {\n  default = "System"\n}\n'
    after, report = fix(tmp_path, "main.tf", text, "AKS003")
    assert after.decode() == text
    (finding,) = report["findings"]
    assert finding["fix"] == 'mode = "User" (written as `var.pool_mode`, not a literal: --fix leaves it to you)'
    # the cluster's only System pool: making it a User pool would leave the cluster without one
    only = BICEP.replace("        vmSize: 'Standard_D4s_v5'\n        mode: 'System'\n", "        vmSize: 'Standard_D4s_v5'\n        mode: 'User'\n")
    after, report = fix(tmp_path, "main.bicep", only, "AKS003")
    assert after.decode() == only and [f["rule"] for f in report["findings"]] == ["AKS003"]


def test_aks004_parameter_min_count_is_not_fixed(tmp_path: Path) -> None:
    text = ("param systemMin int = 0\n" + BICEP.replace(
        "        vmSize: 'Standard_D4s_v5'\n        mode: 'System'\n",
        "        vmSize: 'Standard_D4s_v5'\n        mode: 'System'\n        enableAutoScaling: true\n"
        "        minCount: systemMin\n        maxCount: 3\n"))
    after, report = fix(tmp_path, "main.bicep", text, "AKS004")
    assert after.decode() == text
    (finding,) = report["findings"]
    assert finding["fix"] == "minCount: 1 (written as `systemMin`, not a literal: --fix leaves it to you)"


# -- the intent and the syntax helpers ------------------------------------------------------------


def _insert(text: str, anchor: Span, line: str, after: bool = True, align: str = "") -> str | None:
    from mlops_lint.fix.apply import apply_edits

    fixed = resolve(Plan("t", (InsertLine(anchor, line, after, align),)), text, "f")
    return apply_edits(text, list(fixed.edits)) if fixed is not None else None


def test_insert_line_needs_the_anchor_first_on_its_line_and_nothing_after_it() -> None:
    assert _insert("  a = 1\n", Span(1, 3, 1, 8), "b = 2") == "  a = 1\n  b = 2\n"
    assert _insert("  a = 1 # c\n", Span(1, 3, 1, 8), "b = 2") == "  a = 1 # c\n  b = 2\n"
    assert _insert("  a = 1 // c\n", Span(1, 3, 1, 8), "b = 2") == "  a = 1 // c\n  b = 2\n"
    assert _insert("x { a = 1 }\n", Span(1, 5, 1, 10), "b = 2") is None  # code before the anchor
    assert _insert("  a = 1 }\n", Span(1, 3, 1, 8), "b = 2") is None  # code after it
    assert _insert("  a = 1 /* c\n  */\n", Span(1, 3, 1, 8), "b = 2") is None  # a comment that goes on
    assert _insert('    "a": 1,\n', Span(1, 5, 1, 11), '"b": 2,', after=False) == '    "b": 2,\n    "a": 1,\n'
    assert _insert("  a   = 1\n", Span(1, 3, 1, 10), "b = 2", align="=") == "  a   = 1\n  b   = 2\n"
    assert _insert("  a = 1\n", Span(1, 3, 1, 8), "bbbb = 2", align="=") == "  a = 1\n  bbbb = 2\n"  # no room
    assert _insert("  a = 1\n", Span(1, 3, 1, 8), "b = 2\nc = 3") is None


def test_strings_in_each_syntax() -> None:
    assert string("terraform", 'a"${x}%{y}') == '"a\\"$${x}%%{y}"'
    assert string("bicep", "it's ${x} \\") == "'it\\'s \\${x} \\\\'"
    assert string("arm", 'a"b') == '"a\\"b"'
    assert value_text("terraform", {"accelerator": "nvidia", "nvidia.com/gpu.present": "true"}) == \
        '{ accelerator = "nvidia", "nvidia.com/gpu.present" = "true" }'
    assert value_text("bicep", {"accelerator": "nvidia", "a.b/c": "x"}) == "{ accelerator: 'nvidia', 'a.b/c': 'x' }"
    assert value_text("arm", {"a": "b"}) == '{"a": "b"}'
    assert value_text("bicep", ["sku=gpu:NoSchedule"]) == "['sku=gpu:NoSchedule']"


@pytest.mark.parametrize("source, name", [("terraform", "main.tf"), ("bicep", "main.bicep")])
def test_fixed_values_read_back_as_written(tmp_path: Path, source: str, name: str) -> None:
    """A label value with quotes, backslashes and ${ } comes back from the reader unchanged."""
    from mlops_lint.sources import bicep, terraform

    value = 'it\'s "${x}" \\ %{y}'
    line = ("a = " if source == "terraform" else "a: ") + value_text(source, {"k": value})
    loader = terraform if source == "terraform" else bicep
    text = (f'locals {{\n  {line}\n}}\n' if source == "terraform" else f"var x = {{\n  {line}\n}}\n")
    document = loader.load(text.encode(), name)
    assert not document.errors, document.errors
    block = document.iac.blocks[0]
    expr = block.attrs["a"].expr if source == "terraform" else block.attrs["x"].expr[1][0][1]
    assert expr[0] == "object" and expr[1][0][1] == ("lit", value)


def test_aks002_adds_the_label_before_the_first_pair_of_a_literal_map(tmp_path: Path) -> None:
    text = CLUSTER_TF + GPU_TF.replace('{ accelerator = "nvidia" }', '{ workload = "training" }') \
        .replace('  mode                  = "System"\n', '  node_taints           = ["sku=gpu:NoSchedule"]\n')
    after, report = fix(tmp_path, "main.tf", text, "AKS002")
    assert changes(text, after.decode()) == [
        '-   node_labels           = { workload = "training" }\n',
        '+   node_labels           = { accelerator = "nvidia", workload = "training" }\n']
    assert report["findings"] == []
    # a Terraform map over several lines: the reader keeps no key position, so no fix
    spread = text.replace('{ workload = "training" }', '{\n    workload = "training"\n  }')
    after, report = fix(tmp_path, "main.tf", spread, "AKS002")
    assert after.decode() == spread and [f["rule"] for f in report["findings"]] == ["AKS002"]
    # a Bicep map over several lines: a line above its first key
    bicep = BICEP.replace("        nodeLabels: { accelerator: 'nvidia' }\n", "        nodeLabels: {\n          team: 'ml'\n"
                          "        }\n        nodeTaints: ['sku=gpu:NoSchedule']\n").replace(
        "        mode: 'System'\n      }\n    ]", "        mode: 'User'\n      }\n    ]")
    after, report = fix(tmp_path, "main.bicep", bicep, "AKS002")
    assert changes(bicep, after.decode()) == ["+           accelerator: 'nvidia'\n"]
    assert after.decode().index("accelerator: 'nvidia'") < after.decode().index("team: 'ml'")
    assert report["findings"] == []
    # an ARM map: the line above its first key ends with a comma
    template = json.dumps(ARM, indent=2) + "\n"
    template = template.replace('"accelerator": "nvidia"', '"team": "ml"')
    after, report = fix(tmp_path, "azuredeploy.json", template, "AKS002")
    indent = next(line for line in template.splitlines() if '"team"' in line).split('"')[0]
    assert changes(template, after.decode()) == [f'+ {indent}"accelerator": "nvidia",\n']
    assert json.loads(after)["resources"][0]["properties"]["agentPoolProfiles"][1]["nodeLabels"] == {
        "accelerator": "nvidia", "team": "ml"}


def test_aks003_without_a_cpu_system_pool_the_first_gpu_one_stays(tmp_path: Path) -> None:
    """Each GPU System pool would see the other as the cluster's System pool; fixing both would
    leave the cluster without one: the first stays a System pool, the others become User pools."""
    text = BICEP.replace("'Standard_D4s_v5'", "'Standard_NC6s_v3'")
    after, report = fix(tmp_path, "main.bicep", text, "AKS003")
    assert changes(text, after.decode()) == ["-         mode: 'System'\n", "+         mode: 'User'\n"]
    assert after.decode().index("mode: 'System'") < after.decode().index("mode: 'User'")
    assert [(f["rule"], f["line"]) for f in report["findings"]] == [("AKS003", 9)]
