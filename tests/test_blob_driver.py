"""The cluster record says whether the Blob CSI driver is enabled (True, False or UNKNOWN) and
where, whichever source made the cluster (issue 36: storage profile, for STO010)."""

from __future__ import annotations

import pytest

from mlops_lint.model.cluster import build_cluster
from mlops_lint.model.unknown import UNKNOWN
from mlops_lint.sources import bicep, shell, terraform
from mlops_lint.sources.files import load_bytes


def from_script(text: str):
    return build_cluster([shell.load_text("#!/bin/bash\n" + text, "setup.sh").shell]).blob_driver


def named(records: dict, name: str):
    """The last record of the cluster ``name`` (records are keyed by name, resource group, file)."""
    (setting,) = [setting for key, setting in records.items() if key[0] == name][-1:]
    return setting


@pytest.mark.parametrize("text, value, line, col", [
    ("az aks create -g rg -n ml-aks --enable-blob-driver\n", True, 2, 31),
    ("az aks create -g rg -n ml-aks\n", False, 2, 1),  # AKS's default: off, said by the create
    ("az aks create -g rg -n ml-aks $EXTRA\n", UNKNOWN, 2, 1),
    ("az aks create -g rg -n ml-aks\naz aks update -g rg -n ml-aks --enable-blob-driver\n", True, 3, 31),
    ("az aks create -g rg -n ml-aks --enable-blob-driver\naz aks update -g rg -n ml-aks --disable-blob-driver -y\n",
     False, 3, 31),
    ("az aks create -g rg -n ml-aks --enable-blob-driver\naz aks update -g rg -n ml-aks --enable-oidc-issuer\n",
     True, 2, 31),  # an update that says nothing of it changes nothing
    ("az aks create -g rg -n ml-aks --enable-blob-driver --disable-blob-driver\n", UNKNOWN, 2, 52),
])
def test_az_enable_and_disable_blob_driver(text: str, value, line: int, col: int) -> None:
    setting = named(from_script(text), "ml-aks")
    assert setting.value is value or setting.value == value and type(setting.value) is type(value)
    assert (setting.origin.path, setting.origin.span.line, setting.origin.span.col) == ("setup.sh", line, col)


TF = '''variable "blob" {
  default = true
}
resource "azurerm_kubernetes_cluster" "aks" {
  name = "ml-aks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v5"
  }
%s}
'''


@pytest.mark.parametrize("storage, value, line", [
    ("  storage_profile {\n    blob_driver_enabled = true\n  }\n", True, 11),
    ("  storage_profile {\n    blob_driver_enabled = var.blob\n  }\n", True, 11),
    ("  storage_profile {\n    blob_driver_enabled = var.undeclared\n  }\n", UNKNOWN, 11),
    ("  storage_profile {\n    disk_driver_enabled = true\n  }\n", False, 4),
    ("", False, 4),
])
def test_terraform_storage_profile(storage: str, value, line: int) -> None:
    tf = terraform.load((TF % storage).encode(), "mod/main.tf").iac
    setting = named(build_cluster([], None, [tf]).blob_driver, "ml-aks")
    assert setting.value is value and setting.origin.path == "mod/main.tf" and setting.origin.span.line == line


BICEP = """param blob bool = false
resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {
  name: 'ml-aks'
  properties: {
%s  }
}
"""


@pytest.mark.parametrize("storage, value, line", [
    ("    storageProfile: {\n      blobCSIDriver: {\n        enabled: true\n      }\n    }\n", True, 7),
    ("    storageProfile: {\n      blobCSIDriver: {\n        enabled: blob\n      }\n    }\n", False, 7),
    ("    storageProfile: {\n      blobCSIDriver: {\n        enabled: other\n      }\n    }\n", UNKNOWN, 7),
    ("    storageProfile: {\n      diskCSIDriver: {\n        enabled: true\n      }\n    }\n", False, 5),
    ("    storageProfile: profile\n", UNKNOWN, 5),
    ("", False, 2),
])
def test_bicep_and_arm_storage_profile(storage: str, value, line: int) -> None:
    source = bicep.load((BICEP % storage).encode(), "mod/main.bicep").iac
    setting = named(build_cluster([], None, [], [source]).blob_driver, "ml-aks")
    assert setting.value is value and setting.origin.span.line == line


def test_arm_storage_profile() -> None:
    template = """{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "parameters": {"blob": {"type": "bool", "defaultValue": true}},
  "resources": [{
    "type": "Microsoft.ContainerService/managedClusters",
    "name": "ml-aks",
    "properties": {"storageProfile": {"blobCSIDriver": {
      "enabled": "[parameters('blob')]"}}}
  }]
}"""
    source = load_bytes(template.encode(), "mod/azuredeploy.json", "k8s").iac
    setting = named(build_cluster([], None, [], [source]).blob_driver, "ml-aks")
    assert setting.value is True and (setting.origin.span.line, setting.origin.span.col) == (8, 7)
    off = load_bytes(template.replace("[parameters('blob')]", "false").replace('"enabled": "false"', '"enabled": false')
                     .encode(), "mod/azuredeploy.json", "k8s").iac
    assert named(build_cluster([], None, [], [off]).blob_driver, "ml-aks").value is False


def test_clusters_of_the_same_name_keep_a_record_each() -> None:
    """Clusters of one name in other resource groups or other files are other records: keyed by
    name alone, the last one read replaced the others (two repositories that each make `ml-aks`)."""
    one = shell.load_text("#!/bin/bash\naz aks create -g rg -n ml-aks\n"
                          "az aks create -g rg2 -n ml-aks --enable-blob-driver\n", "a/setup.sh").shell
    other = shell.load_text("#!/bin/bash\naz aks create -g rg -n ml-aks --enable-blob-driver\n", "b/setup.sh").shell
    records = build_cluster([one, other]).blob_driver
    assert [(key, setting.value, setting.origin.span.line) for key, setting in records.items()] == [
        (("ml-aks", "rg", "a/setup.sh"), False, 2), (("ml-aks", "rg2", "a/setup.sh"), True, 3),
        (("ml-aks", "rg", "b/setup.sh"), True, 2)]
    tf = terraform.load((TF % "").replace('  name = "ml-aks"', '  name = "ml-aks"\n  resource_group_name = "rg"')
                        .encode(), "c/main.tf").iac
    assert list(build_cluster([one], None, [tf]).blob_driver)[-1] == ("ml-aks", "rg", "c/main.tf")
