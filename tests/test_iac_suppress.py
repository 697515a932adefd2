"""Inline suppression comments in Terraform (``#``, ``//``, ``/* */``), Bicep (``//``, ``/* */``)
and ARM templates (whole-line ``//``): the same semantics as YAML's (linter/suppress.py): on the
finding's line or on their own line above it, a reason, ``until=`` expiry (LNT003),
``require-reason`` (LNT004), unused ones (LNT001), ``--no-inline-suppressions``. A ``#`` or ``//``
inside a string or a heredoc is no comment."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.model.document import Comment
from mlops_lint.registry import load_registry
from mlops_lint.sources import arm, bicep, terraform
from mlops_lint.sources.comments import bicep_comments

TF = '''resource "azurerm_kubernetes_cluster" "aks" {
  name       = "ml-aks"
  dns_prefix = "mlaks"
  default_node_pool {
    name    = "system"
    vm_size = "Standard_D4s_v5"
  }
}

resource "azurerm_kubernetes_cluster_node_pool" "gpu" {
  name                  = "tfgpu"
  kubernetes_cluster_id = azurerm_kubernetes_cluster.aks.id
  node_labels           = { accelerator = "nvidia" }
  vm_size               = "Standard_NC4as_T4_v3"
}
'''
TF_VM = '  vm_size               = "Standard_NC4as_T4_v3"\n'  # AKS001 is here: line 14

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
        mode: 'User'
        nodeLabels: { accelerator: 'nvidia' }
        vmSize: 'Standard_NC4as_T4_v3'
      }
    ]
  }
}
'''
BICEP_VM = "        vmSize: 'Standard_NC4as_T4_v3'\n"  # AKS001 is here: line 15


def _run(tmp_path: Path, name: str, text: str, **config) -> list[tuple]:
    (tmp_path / name).write_text(text)
    result = lint(LintRequest(paths=[tmp_path], config=Config(**config), registry=load_registry(),
                              select=["AKS001", "LNT001", "LNT003", "LNT004"], cwd=tmp_path, jobs=1))
    return sorted((f.rule, f.path, f.line, bool(f.suppressions), f.suppressions[0].justification if f.suppressions
                   else f.message) for f in result.results)


def _with(text: str, line: str, before: str = "", after: str = "") -> str:
    assert line in text
    indent = line[:len(line) - len(line.lstrip())]
    out = text.replace(line, (f"{indent}{before}\n" if before else "") + line.rstrip("\n") + (f" {after}" if after else "") + "\n")
    return out


def test_the_finding_without_a_comment(tmp_path: Path) -> None:
    found = _run(tmp_path, "main.tf", TF)
    assert [(r, p, line, s) for r, p, line, s, _ in found] == [("AKS001", "main.tf", 14, False)]


@pytest.mark.parametrize("before, after, line", [
    ("# mlops-lint: disable=AKS001 tainted by the cluster policy", "", 15),
    ("// mlops-lint: disable=AKS001 tainted by the cluster policy", "", 15),
    ("/* mlops-lint: disable=AKS001 tainted by the cluster policy */", "", 15),
    ("", "# mlops-lint: disable=AKS001 tainted by the cluster policy", 14),
    ("", "// mlops-lint: disable=gpu-pool-without-taint tainted by the cluster policy", 14),
], ids=["hash-above", "slashes-above", "block-above", "hash-same-line", "slug-same-line"])
def test_terraform_comment_above_or_on_the_line(tmp_path: Path, before: str, after: str, line: int) -> None:
    found = _run(tmp_path, "main.tf", _with(TF, TF_VM, before, after))
    assert found == [("AKS001", "main.tf", line, True, "tainted by the cluster policy")]


def test_stacked_directives_above_and_a_comment_between(tmp_path: Path) -> None:
    text = _with(TF, TF_VM, "# mlops-lint: disable=AKS001 reason one\n  # a plain comment\n"
                            "  # mlops-lint: disable=AKS002 reason two")
    found = _run(tmp_path, "main.tf", text)
    # AKS002 is not selected: its directive is not judged unused (the rule did not run)
    assert found == [("AKS001", "main.tf", 17, True, "reason one")]


def test_a_comment_two_lines_above_or_on_another_line_does_not_apply(tmp_path: Path) -> None:
    text = TF.replace('  node_labels', '  # mlops-lint: disable=AKS001 wrong line\n  node_labels')
    found = _run(tmp_path, "main.tf", text)
    assert [(r, line, s) for r, _, line, s, _ in found] == [("AKS001", 15, False), ("LNT001", 13, False)]
    lnt = found[1][4]
    assert lnt == "unused suppression: comment at line 13 suppressed no AKS001 finding"


@pytest.mark.parametrize("comment", ["# mlops-lint: disable=AKS002 x", "//  mlops-lint: disable=AKS002 x",
                                     "/* mlops-lint: disable=AKS002 x */"])
def test_an_unused_directive_is_reported_over_the_whole_comment(tmp_path: Path, comment: str) -> None:
    (tmp_path / "main.tf").write_text(_with(TF, TF_VM, after=comment))
    result = lint(LintRequest(paths=[tmp_path], config=Config(), registry=load_registry(),
                              select=["AKS001", "AKS002", "LNT001"], cwd=tmp_path, jobs=1))
    (unused,) = [f for f in result.results if f.rule == "LNT001"]
    start = TF_VM.rstrip("\n").__len__() + 2
    assert (unused.span.line, unused.span.col, unused.span.end_col) == (14, start, start + len(comment))


def test_disable_file(tmp_path: Path) -> None:
    found = _run(tmp_path, "main.tf", "# mlops-lint: disable-file=AKS001 GPU pools are tainted by policy\n" + TF)
    assert found == [("AKS001", "main.tf", 15, True, "GPU pools are tainted by policy")]


def test_hash_and_slashes_inside_strings_and_heredocs_are_no_comments(tmp_path: Path) -> None:
    text = TF.replace('  name                  = "tfgpu"\n', '  name                  = "tfgpu"\n'
                      '  tags = { note = "# mlops-lint: disable-file=AKS001 no" }\n'
                      '  description = <<EOT\n// mlops-lint: disable-file=AKS001 no\nEOT\n')
    document = terraform.load(text.encode(), "m/main.tf")
    assert not document.errors and document.comments == []
    found = _run(tmp_path, "main.tf", text)
    assert [(r, s) for r, _, _, s, _ in found] == [("AKS001", False)]


def test_expiry_and_require_reason(tmp_path: Path) -> None:
    expired = _run(tmp_path, "main.tf", _with(TF, TF_VM, after="# mlops-lint: disable=AKS001 until=2001-01-01 later"))
    assert [(r, line, s) for r, _, line, s, _ in expired] == [("AKS001", 14, False), ("LNT003", 14, False)]
    assert "expired on 2001-01-01" in expired[1][4]
    bare = _run(tmp_path, "main.tf", _with(TF, TF_VM, after="# mlops-lint: disable=AKS001"), require_reason=True)
    assert [(r, line, s) for r, _, line, s, _ in bare] == [("AKS001", 14, True), ("LNT004", 14, False)]


def test_no_inline_suppressions(tmp_path: Path) -> None:
    found = _run(tmp_path, "main.tf", _with(TF, TF_VM, after="# mlops-lint: disable=AKS001 x"),
                 inline_suppressions=False)
    assert [(r, line, s) for r, _, line, s, _ in found] == [("AKS001", 14, False)]


@pytest.mark.parametrize("before, after, line", [
    ("// mlops-lint: disable=AKS001 tainted by the cluster policy", "", 16),
    ("/* mlops-lint: disable=AKS001 tainted by the cluster policy */", "", 16),
    ("", "// mlops-lint: disable=AKS001 tainted by the cluster policy", 15),
], ids=["above", "block-above", "same-line"])
def test_bicep_comment_above_or_on_the_line(tmp_path: Path, before: str, after: str, line: int) -> None:
    found = _run(tmp_path, "main.bicep", _with(BICEP, BICEP_VM, before, after))
    assert found == [("AKS001", "main.bicep", line, True, "tainted by the cluster policy")]


def test_bicep_slashes_inside_strings_are_no_comments() -> None:
    text = ("var a = '${ {x: 'it\\'s // mlops-lint: disable=A1'}.x } // mlops-lint: disable=A2'\n"
            "var b = ''' // mlops-lint: disable=A3 ''' // mlops-lint: disable=A4 four\n"
            "var c = 'x' /* mlops-lint: disable=A5 */ // mlops-lint: disable=A6\n"
            "// mlops-lint: disable=A7 seven\n"
            "\n"
            "var d = 1\n")
    assert bicep_comments(text) == [
        Comment(2, 43, "mlops-lint: disable=A4 four", width=30),
        Comment(3, 13, "mlops-lint: disable=A5", width=28),
        Comment(3, 42, "mlops-lint: disable=A6", width=25),
        Comment(4, 1, "mlops-lint: disable=A7 seven", own_line=True, next_line=6, width=31),
    ]
    document = bicep.load(("resource aks 'Microsoft.ContainerService/managedClusters@2024-02-01' = {\n  name: 'x'\n}\n"
                           + text).encode(), "m/main.bicep")
    assert not document.errors and len(document.comments) == 4


def test_arm_whole_line_comment(tmp_path: Path) -> None:
    template = '''{
  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",
  "resources": [
    {
      "type": "Microsoft.ContainerService/managedClusters",
      "apiVersion": "2024-02-01",
      "name": "ml-aks",
      "properties": {
        "agentPoolProfiles": [
          {"name": "system", "vmSize": "Standard_D4s_v5", "mode": "System"},
          {"name": "gpu", "mode": "User", "nodeLabels": {"accelerator": "nvidia"},
           // mlops-lint: disable=AKS001 tainted by the cluster policy
           "vmSize": "Standard_NC4as_T4_v3"}
        ]
      }
    }
  ]
}
'''
    document = arm.load(template.encode(), "azuredeploy.json")
    assert not document.errors
    assert document.comments == [Comment(12, 12, "mlops-lint: disable=AKS001 tainted by the cluster policy",
                                         own_line=True, next_line=13, width=59)]
    found = _run(tmp_path, "azuredeploy.json", template)
    assert found == [("AKS001", "azuredeploy.json", 13, True, "tainted by the cluster policy")]


def test_files_that_never_say_mlops_lint_keep_no_comments() -> None:
    """The comment walk runs only when a directive can exist (no work on every file)."""
    assert terraform.load(("# a comment\n" + TF).encode(), "m/main.tf").comments == []
    assert bicep.load(("// a comment\n" + BICEP).encode(), "m/main.bicep").comments == []
