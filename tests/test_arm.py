"""ARM templates (linter.sources.arm): recognised by content among .json files, read into the
Bicep reader's blocks (parameters with defaults, variables, agentPoolProfiles and agentPools),
unknown values never guessed, positions at the JSON key."""

from __future__ import annotations

from pathlib import Path

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.cluster import build_cluster
from mlops_lint.model.position import Span
from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.registry import load_registry
from mlops_lint.sources import arm
from mlops_lint.sources.files import load_bytes

SCHEMA = "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"
TEMPLATE = """{
  "$schema": "%s",
  "contentVersion": "1.0.0.0",
  "parameters": {
    "clusterName": {"type": "string", "defaultValue": "ml-aks"},
    "gpuVmSize": {"type": "string", "defaultValue": "Standard_NC24ads_A100_v4"},
    "noDefault": {"type": "int"}
  },
  "variables": {"prefix": "ml", "poolName": "[concat(variables('prefix'), 'gpu')]"},
  "resources": [
    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "[parameters('clusterName')]",
      "properties": {
        "agentPoolProfiles": [
          {"name": "system", "vmSize": "Standard_D4s_v5", "count": 3, "mode": "System"}
        ]
      }
    },
    {
      "type": "Microsoft.ContainerService/managedClusters/agentPools",
      "apiVersion": "2024-02-01",
      "name": "[concat(parameters('clusterName'), '/', variables('poolName'))]",
      "properties": {
        "vmSize": "[parameters('gpuVmSize')]",
        "enableAutoScaling": true,
        "minCount": 0,
        "maxCount": "[parameters('noDefault')]",
        "count": "[add(1, 2)]",
        "scaleSetPriority": "Spot",
        "gpuInstanceProfile": "MIG1g",
        "nodeTaints": ["sku=gpu:NoSchedule"],
        "nodeLabels": {"accelerator": "nvidia", "team": "[variables('prefix')]"}
      }
    }
  ]
}
""" % SCHEMA


def load(text: str, path: str = "mod/azuredeploy.json"):
    document = load_bytes(text.encode(), path, "k8s")
    assert not document.errors, document.errors
    return document


def pools(**texts: str):
    return {p.display: p for p in build_cluster([], None, [], [load(t, "mod/" + n).iac for n, t in sorted(texts.items())]).pools}


def test_a_json_file_is_an_arm_template_by_its_schema() -> None:
    assert arm.is_template(TEMPLATE.encode(), "x/azuredeploy.json")
    assert not arm.is_template(TEMPLATE.encode(), "x/azuredeploy.yaml")
    assert not arm.is_template(b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}', "cm.json")
    document = load(TEMPLATE)
    assert document.kind == "bicep" and document.objects == [] and isinstance(document.iac, arm.ArmFile)
    manifest = load_bytes(b'{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}}', "cm.json", "k8s")
    assert manifest.kind == "k8s" and [o.kind for o in manifest.objects] == ["ConfigMap"]


def test_pools_parameters_variables_and_positions() -> None:
    found = pools(**{"azuredeploy.json": TEMPLATE})
    system, gpu = found["system"], found["mlgpu"]
    assert system.is_system is True and system.node_count == 3 and system.source == "arm"
    assert gpu.cluster == "ml-aks" == system.cluster and gpu.cluster_key == system.cluster_key
    assert (gpu.vm_size, gpu.is_system, gpu.autoscaler, gpu.min_count, gpu.spot, gpu.gpu_instance_profile) == (
        "Standard_NC24ads_A100_v4", False, True, 0, True, "MIG1g")
    assert gpu.max_count is UNKNOWN and gpu.node_count is UNKNOWN  # no default; an expression not read
    assert gpu.labels == {"accelerator": "nvidia", "team": "ml"}
    assert [str(t.taint) for t in gpu.taints] == ["sku=gpu:NoSchedule"]
    assert gpu.vm_origin.path == "mod/azuredeploy.json"
    assert gpu.vm_origin.span == Span(26, 9, 26, 17) and gpu.vm_origin.value_span == Span(26, 19, 26, 46)


def test_expressions_simple_forms_only() -> None:
    assert arm.expression_of("plain") == ("lit", "plain")
    assert arm.expression_of("[[escaped]") == ("lit", "[escaped]")
    assert arm.expression_of("[parameters('a')]") == ("ref", ("param:a",))
    assert arm.expression_of("[variables('a')]") == ("ref", ("var:a",))
    assert arm.expression_of("[concat('a', parameters('b'), 'c')]") == ("tpl", ("a", ("ref", ("param:b",)), "c"))
    for unread in ("[parameters('a').b]", "[format('{0}', 'a')]", "[resourceGroup().location]", "[parameters(]",
                   "[concat('a', resourceId('x'))]", "[" + "concat(" * 300 + "]"):
        assert arm.expression_of(unread)[0] in ("other", "tpl"), unread
        assert arm.expression_of(unread) != ("lit", unread)
    assert arm.expression_of("[concat('a', resourceId('x'))]") == arm.OTHER  # a part not read: all unknown


def test_a_parameters_file_is_an_alternative() -> None:
    params = """{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
 "parameters": {"gpuVmSize": {"value": "Standard_NC6s_v3"}}}"""
    assert pools(**{"azuredeploy.json": TEMPLATE, "prod.parameters.json": params})["mlgpu"].vm_size is UNKNOWN
    same = params.replace("Standard_NC6s_v3", "Standard_NC24ads_A100_v4")
    assert pools(**{"azuredeploy.json": TEMPLATE, "prod.parameters.json": same})["mlgpu"].vm_size == "Standard_NC24ads_A100_v4"


def test_a_pool_of_a_cluster_made_elsewhere_and_a_compiled_bicep_file() -> None:
    text = TEMPLATE.replace('''    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "[parameters('clusterName')]",
      "properties": {
        "agentPoolProfiles": [
          {"name": "system", "vmSize": "Standard_D4s_v5", "count": 3, "mode": "System"}
        ]
      }
    },
''', "")
    cluster = build_cluster([], None, [], [load(text).iac])
    assert not cluster.complete and [p.display for p in cluster.pools] == ["mlgpu"]
    assert cluster.pools[0].cluster is UNKNOWN
    compiled = TEMPLATE.replace('"contentVersion"', '"metadata": {"_generator": {"name": "bicep"}},\n  "contentVersion"')
    from mlops_lint.sources import bicep

    source = bicep.load(b"param x string = 'a'\n", "mod/azuredeploy.bicep").iac
    assert [p.display for p in build_cluster([], None, [], [source, load(compiled).iac]).pools] == []
    assert len(build_cluster([], None, [], [load(compiled).iac]).pools) == 2  # no source beside it: read


def test_rules_report_at_the_json_key_and_bad_json_is_one_error(tmp_path: Path) -> None:
    (tmp_path / "azuredeploy.json").write_text(TEMPLATE.replace('"nodeTaints": ["sku=gpu:NoSchedule"],\n', "")
                                               .replace('// ', ''))
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["AKS001"],
                              cwd=tmp_path, jobs=1))
    assert [(f.rule, f.path, f.line, f.column) for f in report.active] == [("AKS001", "azuredeploy.json", 26, 9)]
    assert '"nodeTaints": ["sku=gpu:NoSchedule"]' in report.active[0].message
    (tmp_path / "azuredeploy.json").write_text('{"$schema": "%s", "resources": [\n' % SCHEMA)
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["SCH001"],
                              cwd=tmp_path, jobs=1))
    assert [(f.rule, f.path, f.line) for f in report.results] == [("SCH001", "azuredeploy.json", 2)]
    assert "ARM template is not valid JSON" in report.results[0].message


def test_whole_line_comments_keep_positions() -> None:
    text = TEMPLATE.replace('        "vmSize": "[parameters', '        // the GPU size\n        "vmSize": "[parameters')
    gpu = pools(**{"azuredeploy.json": text})["mlgpu"]
    assert gpu.vm_origin.span.line == 27 and gpu.vm_size == "Standard_NC24ads_A100_v4"


def test_script_rules_run_on_iac_files_see_no_commands(tmp_path: Path) -> None:
    """The SHELL-scope rules are called with Terraform, Bicep and ARM files too (the AKS rules
    report there): one that reads a script's commands (SHL001) found none, instead of raising
    (an LNT002 at 1:1 of every IaC file)."""
    (tmp_path / "azuredeploy.json").write_text(TEMPLATE)
    (tmp_path / "main.tf").write_text('variable "x" {\n  default = "a"\n}\n')
    (tmp_path / "main.bicep").write_text("param x string = 'a'\n")
    report = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(), select=["SHL001", "LNT002"],
                              cwd=tmp_path, jobs=1))
    assert [(f.rule, f.path, f.message) for f in report.results] == []


def test_an_agent_pool_nested_in_its_cluster() -> None:
    text = TEMPLATE.replace('''        ]
      }
    },''', '''        ]
      },
      "resources": [
        {"type": "agentPools", "apiVersion": "2024-02-01", "name": "nested",
         "properties": {"vmSize": "Standard_NC6s_v3", "mode": "User"}}
      ]
    },''', 1)
    found = pools(**{"azuredeploy.json": text})
    nested, system = found["nested"], found["system"]
    assert nested.cluster == "ml-aks" and nested.cluster_key == system.cluster_key and nested.vm_size == "Standard_NC6s_v3"
    assert nested.vm_origin.span.line == text.split("\n").index(next(l for l in text.split("\n") if '"nested"' in l)) + 2


COPY = """{
  "$schema": "%s",
  "parameters": {
    "clusterName": {"type": "string", "defaultValue": "ml-aks"},
    "gpuPools": {"type": "int", "defaultValue": 3},
    "profiles": {"type": "int", "defaultValue": 2},
    "unknownCount": {"type": "int"}
  },
  "resources": [
    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "[parameters('clusterName')]",
      "properties": {
        "copy": [{
          "name": "agentPoolProfiles",
          "count": "[parameters('profiles')]",
          "input": {
            "name": "[concat('prof', copyIndex('agentPoolProfiles'))]",
            "vmSize": "Standard_D4s_v5",
            "count": "[copyIndex('agentPoolProfiles', 1)]"
          }
        }]
      }
    },
    {
      "type": "Microsoft.ContainerService/managedClusters/agentPools",
      "apiVersion": "2024-02-01",
      "name": "[concat(parameters('clusterName'), '/gpu', copyIndex(1))]",
      "copy": {"name": "gpuLoop", "count": "[parameters('gpuPools')]"},
      "properties": {
        "vmSize": "Standard_NC4as_T4_v3",
        "count": "[copyIndex('gpuLoop')]",
        "nodeTaints": ["sku=gpu:NoSchedule"]
      }
    },
    {
      "type": "Microsoft.ContainerService/managedClusters/agentPools",
      "apiVersion": "2024-02-01",
      "name": "[concat(parameters('clusterName'), '/many', copyIndex())]",
      "copy": {"name": "manyLoop", "count": "[parameters('unknownCount')]"},
      "properties": {"vmSize": "Standard_NC4as_T4_v3", "nodeTaints": ["sku=gpu:NoSchedule"]}
    },
    {
      "type": "Microsoft.ContainerService/managedClusters/agentPools",
      "apiVersion": "2024-02-01",
      "name": "[concat(parameters('clusterName'), '/none', copyIndex())]",
      "copy": {"name": "noneLoop", "count": 0},
      "properties": {"vmSize": "Standard_NC4as_T4_v3"}
    }
  ]
}
""" % SCHEMA


def test_copy_loops_expand_a_known_count_and_keep_an_unknown_one_unknown() -> None:
    """A resource copy of a known count is one pool per index (copyIndex() and its offset, by loop
    name or bare), a property loop over agentPoolProfiles likewise; an unknown count is one pool
    standing for all (its name unknown, never guessed); a count of 0 makes none."""
    found = pools(**{"azuredeploy.json": COPY})
    assert list(found) == ["prof0", "prof1", "gpu1", "gpu2", "gpu3", "?"]
    assert [(found[n].mode, found[n].node_count) for n in ("prof0", "prof1")] == [("System", 1), ("User", 2)]
    assert [found[n].node_count for n in ("gpu1", "gpu2", "gpu3")] == [0, 1, 2]
    assert found["gpu2"].vm_origin.span == found["gpu3"].vm_origin.span  # instances share positions
    many = found["?"]
    assert many.name is UNKNOWN and many.vm_size == "Standard_NC4as_T4_v3"
    assert all(p.cluster == "ml-aks" for p in found.values())


def test_a_copy_loop_over_the_instance_limit_is_one_pool() -> None:
    text = COPY.replace('"defaultValue": 3', '"defaultValue": 100000')
    cluster = build_cluster([], None, [], [load(text, "mod/azuredeploy.json").iac])
    assert [(p.display, p.name) for p in cluster.pools] == [("prof0", "prof0"), ("prof1", "prof1"), ("?", UNKNOWN),
                                                             ("?", UNKNOWN)]
