"""KAITO Workspace rules beyond the fixtures: which sizes are GPU sizes, which hosts are public."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.rules.kai.kai002_kaito_input_public_url import public_host

REGISTRY = load_registry()


def workspace(resource: str = "", tuning: str = "", api: str = "kaito.sh/v1beta1") -> str:
    head = (f"apiVersion: {api}\nkind: Workspace\nmetadata: {{name: ws, namespace: ml}}\nresource:\n"
            f"  labelSelector: {{matchLabels: {{apps: ws}}}}\n  {resource}\n")
    return head + tuning


def run(tmp_path: Path, text: str, select: str) -> list:
    (tmp_path / "ws.yaml").write_text(text, encoding="utf-8")
    return lint(LintRequest(paths=[tmp_path / "ws.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                            select=[select], cwd=tmp_path)).active


@pytest.mark.parametrize("size, fires", [
    ("Standard_NC24ads_A100_v4", False), ("standard_nc24ads_a100_v4", False), ("Standard_NC6s_v3", False),
    ("Standard_ND96isr_MI300X_v5", False), ("Standard_NV36ads_A10_v5", False), ("Standard_NC4as_T4_v3_promo", False),
    ("Standard_NC999ads_X1_v9", False),  # an N-series name the catalogue does not list yet
    ("Standard_D8s_v5", True), ("Standard_E16as_v5", True), ("Standard_F8s_v2", True), ("Standard_DS3_v2", True),
    ("Standard_L8s_v3", True), ("m5.xlarge", True),
    ("<your-vm-sku>", False), ("${GPU_NODE_SIZE}", False), ("GPU_SKU_HERE", False), ('""', False),
])
def test_instance_types(tmp_path: Path, size: str, fires: bool) -> None:
    found = run(tmp_path, workspace(f"instanceType: {size}"), "KAI001")
    assert bool(found) is fires
    if fires:
        assert (found[0].line, found[0].column) == (6, 17) and found[0].fix == "instanceType: Standard_NC24ads_A100_v4"


def test_other_groups_named_workspace_are_ignored(tmp_path: Path) -> None:
    assert run(tmp_path, workspace("instanceType: Standard_D8s_v5", api="example.com/v1"), "KAI001") == []


@pytest.mark.parametrize("url, host", [
    ("https://huggingface.co/datasets/x/y.json", "huggingface.co"),
    ("HTTPS://Example.COM/data.parquet", "example.com"),
    ("http://20.81.111.85/d.jsonl", "20.81.111.85"),
    ("http://10.0.0.4/d.jsonl", None), ("http://192.168.1.9/d", None), ("http://127.0.0.1:8080/d", None),
    ("http://svc.ns.svc.cluster.local/d", None), ("http://minio.data.svc/d", None), ("http://dataset-cache/d", None),
    ("https://acct.privatelink.blob.core.windows.net/c/d", None), ("http://localhost/d", None),
    ("s3://bucket/key", None), ("file:///data/x", None), ("not a url", None),
])
def test_public_hosts(url: str, host) -> None:
    assert public_host(url) == host


def test_sas_token_is_called_a_credential(tmp_path: Path) -> None:
    tuning = textwrap.dedent("""\
    tuning:
      input:
        urls: ["https://acct.blob.core.windows.net/c/d.json?sv=2022-11-02&sig=abc"]
      output: {image: myacr.azurecr.io/a:1}
    """)
    found = run(tmp_path, workspace("instanceType: Standard_NC24ads_A100_v4", tuning), "KAI002")
    assert len(found) == 1 and "SAS token" in found[0].message


@pytest.mark.parametrize("output, fires", [
    ("output: {image: myacr.azurecr.io/a:1}", False),
    ("output: {volumeSource: {persistentVolumeClaim: {claimName: out}}}", False),
    ("output: {image: '  '}", True), ("output: {}", True),
    ("", False),  # KAITO's CRD requires `output`: SCH002's error, one cause one finding
])
def test_output_destination(tmp_path: Path, output: str, fires: bool) -> None:
    tuning = f"tuning:\n  input: {{image: myacr.azurecr.io/d:1}}\n  {output}\n"
    assert bool(run(tmp_path, workspace("instanceType: Standard_NC24ads_A100_v4", tuning), "KAI003")) is fires


@pytest.mark.parametrize("api", ["kaito.sh/v1alpha1", "kaito.sh/v1beta1"])
def test_a_missing_output_is_one_finding(tmp_path: Path, api: str) -> None:
    """`tuning` without `output`: the schema's required field (SCH002, at `tuning:`), not KAI003 too."""
    tuning = "tuning:\n  preset: {name: phi-3-mini-4k-instruct}\n  method: qlora\n  input: {image: myacr.azurecr.io/d:1}\n"
    (tmp_path / "ws.yaml").write_text(workspace("instanceType: Standard_NC24ads_A100_v4", tuning, api), encoding="utf-8")
    found = lint(LintRequest(paths=[tmp_path / "ws.yaml"], config=Config(root=tmp_path), registry=REGISTRY,
                             select=["SCH002", "KAI003"], cwd=tmp_path)).active
    assert [(r.rule, r.line, r.message) for r in found] == [("SCH002", 7, 'missing required field "tuning.output"')]


# --- KAI004: the deprecated fields are the KAITO CRDs' own -----------------------------------------


def _deprecated_in_crd(node, path=()) -> list[tuple[str, ...]]:
    found = []
    if isinstance(node, dict):
        if str(node.get("description", "")).lstrip().startswith("Deprecated"):
            found.append(path)
        for key, sub in (node.get("properties") or {}).items():
            found.extend(_deprecated_in_crd(sub, path + (key,)))
    return found


def test_kai004_fields_are_those_the_kaito_crds_mark_deprecated() -> None:
    """Every field whose description in the bundled KAITO CRDs (their upstream bytes) starts with
    `Deprecated`, per kind and version, is KAI004's, and nothing else is."""
    import gzip

    import yaml

    from mlops_lint.rules.kai.kai004_kaito_field_deprecated import DEPRECATED

    repo = Path(__file__).resolve().parents[1]
    sources = [repo / "scripts" / "upstream-crds" / name for name in ("kaito.sh_inferencesets.yaml.gz",
                                                                      "kaito.sh_ragengines.yaml.gz")]
    texts = [gzip.decompress(p.read_bytes()).decode() for p in sources]
    shared = repo.parent / "shared" / "crds" / "kaito.sh_workspaces.yaml"
    if shared.is_file():
        texts.append(shared.read_text("utf-8"))
    seen = {}
    for text in texts:
        for crd in yaml.safe_load_all(text):
            if not crd:
                continue
            for version in crd["spec"]["versions"]:
                fields = tuple(sorted(_deprecated_in_crd(version["schema"]["openAPIV3Schema"])))
                if fields:
                    seen[(crd["spec"]["names"]["kind"], version["name"])] = fields
    expected = {key: tuple(sorted(paths)) for key, paths in DEPRECATED.items()
                if key[0] != "Workspace" or shared.is_file()}
    assert seen == expected


@pytest.mark.parametrize("api, fires", [("kaito.sh/v1beta1", True), ("kaito.sh/v1alpha1", False)])
def test_kai004_reports_deprecated_workspace_fields_of_v1beta1_at_their_key(tmp_path: Path, api: str,
                                                                           fires: bool) -> None:
    text = workspace("count: 2", api=api)
    found = [(r.rule, r.line, r.column, r.node) for r in run(tmp_path, text, "KAI004")]
    assert found == ([("KAI004", 6, 3, ("resource", "count"))] if fires else [])


# --- KAI005: GPU partitions KAITO's webhook refuses --------------------------------------------------


@pytest.mark.parametrize("resource, expected", [
    ("partition: {mode: mig, profile: 3g.40gb}", []),
    ("partition: {mode: accelerator, count: 2}", []),
    ("instanceType: Standard_NC24ads_A100_v4\n  partition: {mode: mig, profile: 3g.40gb}", [("resource", "partition")]),
    ("partition: {mode: mig, profile: 3g.45gb}", [("resource", "partition", "profile")]),
    ("partition: {mode: mig}", [("resource", "partition", "mode")]),
    ("partition: {mode: mig, profile: 1g.10gb, count: 1}", [("resource", "partition", "count")]),
    ("partition: {mode: accelerator}", [("resource", "partition", "mode")]),
    ("partition: {mode: accelerator, count: 1, profile: 1g.10gb}", [("resource", "partition", "profile")]),
])
def test_kai005_reports_the_partition_key_kaito_refuses(tmp_path: Path, resource: str, expected: list) -> None:
    text = workspace(resource, "inference:\n  preset: {name: phi-4-mini-instruct}\n")
    assert [r.node for r in run(tmp_path, text, "KAI005")] == expected


def test_kai005_a_partitioned_tuning_workspace_and_v1alpha1_is_not_judged(tmp_path: Path) -> None:
    tuning = "tuning:\n  method: qlora\n  preset: {name: phi-3-mini-4k-instruct}\n"
    found = run(tmp_path, workspace("partition: {mode: mig, profile: 3g.40gb}", tuning), "KAI005")
    assert [(r.node, "tuning" in r.message) for r in found] == [(("resource", "partition"), True)]
    assert run(tmp_path, workspace("partition: {mode: mig, profile: 3g.45gb}", api="kaito.sh/v1alpha1"), "KAI005") == []


def inference_set(resource: str, api: str = "kaito.sh/v1beta1") -> str:
    return (f"apiVersion: {api}\nkind: InferenceSet\nmetadata: {{name: set, namespace: ml}}\nspec:\n  replicas: 2\n"
            f"  labelSelector: {{matchLabels: {{apps: set}}}}\n  template:\n    resource:\n      {resource}\n"
            "    inference:\n      preset: {name: phi-4-mini-instruct}\n")


@pytest.mark.parametrize("resource, expected", [
    ("partition: {mode: mig, profile: 3g.40gb}", []),
    ("partition: {mode: accelerator, count: 2}", []),
    ("instanceType: Standard_NC24ads_A100_v4\n      partition: {mode: mig, profile: 3g.40gb}", [("partition", 10, 7)]),
    ("partition: {mode: mig, profile: 3g.45gb}", [("partition", "profile", 9, 39)]),
    ("partition: {mode: mig, profile: 1g.10gb, count: 1}", [("partition", "count", 9, 48)]),
    ("partition: {mode: accelerator}", [("partition", "mode", 9, 19)]),
])
def test_kai005_judges_the_workspaces_an_inference_set_would_create(tmp_path: Path, resource: str,
                                                                     expected: list) -> None:
    found = run(tmp_path, inference_set(resource), "KAI005")
    base = ("spec", "template", "resource")
    assert [(r.node, r.line, r.column) for r in found] == [(base + e[:-2], e[-2], e[-1]) for e in expected]
    assert all("InferenceSet `set`" in r.message and "rejects the InferenceSet" in r.message for r in found)
    # v1alpha1 has no partition (SCH002's business)
    assert run(tmp_path, inference_set("partition: {mode: mig, profile: 3g.45gb}", "kaito.sh/v1alpha1"), "KAI005") == []


def test_kai005_leaves_a_ragengine_partition(tmp_path: Path) -> None:
    text = ("apiVersion: kaito.sh/v1beta1\nkind: RAGEngine\nmetadata: {name: rag}\nspec:\n  compute:\n"
            "    instanceType: Standard_NC24ads_A100_v4\n    partition: {mode: mig, profile: 3g.45gb}\n"
            "  embedding: {local: {modelID: BAAI/bge-small-en-v1.5}}\n")
    assert run(tmp_path, text, "KAI005") == []
