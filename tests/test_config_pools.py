"""Config ``node-pools`` linted where the config writes them (issue 36): a ``.mlops-lint.yaml``
under the PATHs is a file of the run, and the AKS rules report on its pools at its own line and
column, with hints in the config's syntax and ``--fix`` as SetKey on the entry; suppression
comments work there as in a manifest;
every report format names it; a config that is only context, excluded or a ``pyproject.toml``
keeps its pools as cluster facts without findings; the cache sees the config change.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from invariants import check_report, every_rule
from mlops_lint.cli import main
from mlops_lint.config import load_config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from mlops_lint.report import render

REGISTRY = load_registry()

CONFIG = """\
# the cluster
node-pools:
  - name: system
    vm-size: Standard_D4s_v5
    mode: System
    enable-cluster-autoscaler: true
    min-count: 0
    max-count: 3
  - name: gpunp
    vm-size: Standard_NC24ads_A100_v4
    mode: System
    max-count: 2
  - {name: gpu2, vm-size: Standard_NC99zz_v9, enable-cluster-autoscaler: true, max-count: 2}
  - name: gpu3
    vm-size: Standard_NC4as_T4_v3
    labels: {workload: training}
    taints: ["sku=gpu:PreferNoSchedule"]
    enable-cluster-autoscaler: false
    min-count: 1
    max-count: 1001
"""

JOB = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      nodeSelector: {workload: serving}
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        resources: {limits: {nvidia.com/gpu: 1}}
"""


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")


def run(root: Path, paths: list[str] | None = None, select=("AKS", "XPL"), cache: Path | None = None,
        config=None):
    return lint(LintRequest(paths=[root / p for p in (paths or ["."])], config=config, registry=REGISTRY,
                            select=list(select), cwd=root, cache_dir=cache))


def found(report) -> list[tuple]:
    return [(r.rule, r.path, r.line, r.column) for r in report.active]


def test_each_aks_rule_at_the_config_entry_setting(tmp_path: Path) -> None:
    write(tmp_path, {".mlops-lint.yaml": CONFIG})
    report = run(tmp_path)
    assert found(report) == [
        ("AKS004", ".mlops-lint.yaml", 7, 16),  # min-count 0 on a System pool: at the value
        ("AKS001", ".mlops-lint.yaml", 10, 5),  # no NoSchedule taint: at the VM size
        ("AKS002", ".mlops-lint.yaml", 10, 5),  # no accelerator label: at the VM size (no labels written)
        ("AKS003", ".mlops-lint.yaml", 11, 5),  # a GPU pool in System mode: at `mode:`
        ("AKS005", ".mlops-lint.yaml", 13, 27),  # an unknown VM size: at the value
        ("AKS004", ".mlops-lint.yaml", 13, 47),  # the switch written without min-count: at the switch
        ("AKS001", ".mlops-lint.yaml", 15, 5),  # only PreferNoSchedule: at the VM size
        ("AKS002", ".mlops-lint.yaml", 16, 5),  # labels without accelerator: at `labels:`
        ("AKS004", ".mlops-lint.yaml", 19, 5),  # bounds with the autoscaler off: at min-count
        ("AKS004", ".mlops-lint.yaml", 20, 16),  # over 1000: at the value
    ]
    lines = CONFIG.splitlines()
    assert [lines[line - 1][column - 1:].split(":")[0].split(",")[0] for _, _, line, column in found(report)] == [
        "0", "vm-size", "vm-size", "mode", "Standard_NC99zz_v9", "enable-cluster-autoscaler", "vm-size", "labels",
        "min-count", "1001"]
    by_line = {(r.rule, r.line): r for r in report.active}
    assert by_line["AKS001", 10].fix == 'taints: ["sku=gpu:NoSchedule"]'
    assert "add `taints: [\"sku=gpu:NoSchedule\"]`" in by_line["AKS001", 10].message
    assert by_line["AKS002", 16].fix == "labels: {accelerator: nvidia}"
    assert by_line["AKS002", 16].message.endswith("add it to `labels`")
    assert "give the GPU pool `mode: User` in `node-pools`" in by_line["AKS003", 11].message
    assert by_line["AKS004", 13].message == ("node pool `gpu2` turns the cluster autoscaler on without min-count; the "
                                             "AKS API requires both bounds")
    assert by_line["AKS004", 19].message.startswith("node pool `gpu3` sets min-count and max-count without "
                                                    "`enable-cluster-autoscaler: true`")
    fixes = {(r.rule, r.line): (r.autofix.title, r.autofix.safe) for r in report.active if r.autofix is not None}
    assert fixes == {("AKS004", 7): ("raise min-count to 1", True),  # a User GPU pool's taints, a label, a mode
                     ("AKS003", 11): ("make the GPU pool a User pool: `mode: User`", False),  # keeping `system`
                     ("AKS002", 10): ("add the GPU node label accelerator=nvidia", True),
                     ("AKS002", 16): ("add the GPU node label accelerator=nvidia", True)}
    # no fix: gpunp's taint (a System pool: AKS003 first), gpu3's other taint, bounds over 1000
    assert report.file_status == {".mlops-lint.yaml": "linted"} and report.files_linted == 1


def test_bounds_without_the_switch_say_the_pool_autoscales(tmp_path: Path) -> None:
    """SPEC's `max-count: 4` alone: an autoscaled pool whose min-count is not known, no AKS004."""
    write(tmp_path, {".mlops-lint.yaml": "node-pools:\n  - {name: gpunp, vm-size: Standard_NC24ads_A100_v4, labels: "
                                         "{accelerator: nvidia}, taints: ['sku=gpu:NoSchedule'], max-count: 4}\n"})
    assert found(run(tmp_path)) == []


def test_a_suppression_comment_in_the_config(tmp_path: Path) -> None:
    text = CONFIG.replace("  - {name: gpu2,", "  # mlops-lint: disable=AKS005 a size of our preview\n  - {name: gpu2,")
    write(tmp_path, {".mlops-lint.yaml": text})
    report = run(tmp_path, select=("AKS", "XPL", "LNT001"))
    suppressed = [(r.rule, r.line) for r in report.results if r.suppressions]
    assert suppressed == [("AKS005", 14)]
    assert [r.suppressions[0].justification for r in report.results if r.suppressions] == ["a size of our preview"]
    assert ("AKS004", ".mlops-lint.yaml", 14, 47) in found(report)  # the other finding on that line stays
    assert not any(r.rule == "LNT001" for r in report.active)
    write(tmp_path, {".mlops-lint.yaml": text.replace("AKS005", "AKS001")})  # suppresses nothing there
    assert [(r.rule, r.line) for r in run(tmp_path, select=("AKS", "LNT001")).active if r.rule == "LNT001"] == [("LNT001", 13)]


@pytest.mark.parametrize("fmt", ["json", "sarif", "text", "github", "junit", "gitlab"])
def test_every_format_names_the_config(tmp_path: Path, fmt: str) -> None:
    """A run with only the config, no manifest: the config is the run's one file, in every format
    (SARIF against the official schema, positions inside the config's text)."""
    write(tmp_path, {".mlops-lint.yaml": CONFIG})
    report = run(tmp_path, select=every_rule())
    assert report.files_linted == 1 and not report.nothing_linted
    rendered = check_report(report, {".mlops-lint.yaml": CONFIG.encode()})  # json, sarif, text, github
    text = rendered.get(fmt) or render(report, fmt)
    if fmt == "sarif":
        results = json.loads(text)["runs"][0]["results"]
        places = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                   r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in results}
        assert ("AKS003", ".mlops-lint.yaml", 11) in places
    elif fmt == "json":
        assert {(f["rule"], f["path"], f["line"], f["column"]) for f in json.loads(text)["findings"]} >= {
            ("AKS003", ".mlops-lint.yaml", 11, 5)}
    elif fmt == "junit":
        cases = {(case.get("classname"), case.get("name")): case for case in ET.fromstring(text).iter("testcase")}
        failure = cases[".mlops-lint.yaml", "AKS003 gpu-pool-system-mode"].find("failure")
        assert failure is not None and failure.text.startswith(".mlops-lint.yaml:11:5: ERROR AKS003")
    elif fmt == "gitlab":
        assert {(e["check_name"], e["location"]["path"], e["location"]["lines"]["begin"]) for e in json.loads(text)} >= {
            ("AKS003", ".mlops-lint.yaml", 11)}
    elif fmt == "github":
        assert "file=.mlops-lint.yaml,line=11,col=5" in text
    else:
        assert ".mlops-lint.yaml:11:5: ERROR AKS003" in text


def test_the_config_is_context_when_only_other_files_are_linted(tmp_path: Path) -> None:
    """Linting a folder below the root, or one file, reports on those (the config's pools still
    place the job); naming the config lints it."""
    write(tmp_path, {".mlops-lint.yaml": CONFIG, "k8s/job.yaml": JOB})
    for paths in (["k8s"], ["k8s/job.yaml"]):
        report = run(tmp_path, paths)
        assert found(report) == [("XPL001", "k8s/job.yaml", 8, 22)]  # no config pool has workload=serving
        assert ".mlops-lint.yaml" not in report.file_status
    report = run(tmp_path, [".mlops-lint.yaml"])
    assert report.file_status == {".mlops-lint.yaml": "linted"}
    assert {r.path for r in report.active} == {".mlops-lint.yaml"} and len(report.active) == 10


def test_excluded_or_pyproject_config_pools_are_cluster_facts(tmp_path: Path) -> None:
    write(tmp_path, {".mlops-lint.yaml": "exclude: ['.mlops-lint.yaml']\n" + CONFIG, "job.yaml": JOB})
    report = run(tmp_path)
    assert found(report) == [("XPL001", "job.yaml", 8, 22)] and ".mlops-lint.yaml" not in report.file_status
    (tmp_path / ".mlops-lint.yaml").unlink()
    toml = ('[tool.mlops-lint]\nnode-pools = [{name = "gpunp", vm-size = "Standard_NC24ads_A100_v4", '
            'mode = "System", labels = {workload = "training"}}]\n')
    write(tmp_path, {"pyproject.toml": toml})
    report = run(tmp_path)  # a System GPU pool without taint: no AKS finding (a pyproject's text is not placed)
    assert found(report) == [("XPL001", "job.yaml", 8, 22)] and set(report.file_status) == {"job.yaml"}


def test_an_explicit_config_outside_the_paths_is_context(tmp_path: Path) -> None:
    write(tmp_path, {"cfg/.mlops-lint.yaml": CONFIG, "app/job.yaml": JOB})
    config = load_config(tmp_path / "cfg" / ".mlops-lint.yaml", REGISTRY)
    report = run(tmp_path, ["app"], config=config)
    assert [r.path for r in report.active] == ["app/job.yaml"]
    report = run(tmp_path, ["cfg", "app"], config=config)
    assert {r.path for r in report.active} == {"app/job.yaml", "cfg/.mlops-lint.yaml"}


def test_the_cache_sees_the_config_change(tmp_path: Path) -> None:
    project, cache = tmp_path / "p", tmp_path / "cache"
    write(project, {".mlops-lint.yaml": CONFIG})
    cold = found(run(project, cache=cache))
    assert found(run(project, cache=cache)) == cold
    write(project, {".mlops-lint.yaml": "# a line above moves every finding\n" + CONFIG})
    assert found(run(project, cache=cache)) == [(rule, path, line + 1, col) for rule, path, line, col in cold]
    write(project, {".mlops-lint.yaml": CONFIG.replace("    mode: System\n    max-count: 2", "    mode: User\n    max-count: 2")})
    assert ("AKS003", ".mlops-lint.yaml", 11, 5) not in found(run(project, cache=cache))
    assert found(run(project, cache=cache)) == found(run(project))


FIX_BEFORE = """\
# the cluster
node-pools:
  - name: system
    vm-size: Standard_D4s_v5   # CPU
    mode: System
    enable-cluster-autoscaler: true
    min-count: 0
    max-count: 3
  - name: gpunp
    vm-size: Standard_NC24ads_A100_v4
    mode: system
    max-count: 2
  - {name: gpu2, vm-size: Standard_NC4as_T4_v3, labels: {workload: x}, enable-cluster-autoscaler: false, min-count: 1, max-count: 2}
  - name: gpu3
    vm-size: Standard_NC4as_T4_v3
    labels:
      workload: training
    taints: []
"""
FIX_AFTER = """\
# the cluster
node-pools:
  - name: system
    vm-size: Standard_D4s_v5   # CPU
    mode: System
    enable-cluster-autoscaler: true
    min-count: 1
    max-count: 3
  - name: gpunp
    vm-size: Standard_NC24ads_A100_v4
    mode: User
    max-count: 2
    labels:
      accelerator: nvidia
    taints:
      - sku=gpu:NoSchedule
  - {name: gpu2, vm-size: Standard_NC4as_T4_v3, labels: {workload: x, accelerator: nvidia}, enable-cluster-autoscaler: true, \
min-count: 1, max-count: 2, taints: ['sku=gpu:NoSchedule']}
  - name: gpu3
    vm-size: Standard_NC4as_T4_v3
    labels:
      workload: training
      accelerator: nvidia
    taints:
      - sku=gpu:NoSchedule
"""


def test_fix_sets_the_keys_of_the_config_entries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--fix edits the config's entries in their own style (block or flow), one key each, until
    the pools pass: each pass lints the text the fixes left, so a GPU pool made a User pool gets
    its taint in the next pass. Every other byte (comments, the CPU pool) stays."""
    write(tmp_path, {".mlops-lint.yaml": FIX_BEFORE})
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    safe = runner.invoke(main, ["--no-cache", "--select", "AKS", "--fix", "."])
    assert safe.exit_code == 1, safe.output  # the unsafe fixes are left: mode, the switch, taints
    text = (tmp_path / ".mlops-lint.yaml").read_text()
    assert "min-count: 1\n" in text and "mode: system" in text and "{workload: x, accelerator: nvidia}" in text
    done = runner.invoke(main, ["--no-cache", "--select", "AKS", "--fix", "--unsafe-fixes", "."])
    assert done.exit_code == 0, done.output
    assert (tmp_path / ".mlops-lint.yaml").read_text() == FIX_AFTER.replace("\\\n", "")
    assert load_config(tmp_path / ".mlops-lint.yaml", REGISTRY).node_pools[1]["taints"] == ["sku=gpu:NoSchedule"]


def test_no_fix_where_it_would_change_more_than_the_finding(tmp_path: Path) -> None:
    """The only System pool keeps its mode; a pool with other taints keeps them (the hint says the
    edit); a System GPU pool gets no taint."""
    text = ("node-pools:\n"
            "  - {name: gpunp, vm-size: Standard_NC24ads_A100_v4, mode: System, labels: {accelerator: nvidia}}\n"
            "  - {name: gpu2, vm-size: Standard_NC4as_T4_v3, labels: {accelerator: nvidia}, "
            "taints: ['sku=gpu:PreferNoSchedule']}\n")
    write(tmp_path, {".mlops-lint.yaml": text})
    report = run(tmp_path)
    assert [(r.rule, r.line, r.autofix) for r in report.active] == [
        ("AKS001", 2, None), ("AKS003", 2, None), ("AKS001", 3, None)]


def test_a_config_whose_pools_cannot_be_placed_says_so(tmp_path: Path) -> None:
    """Lines broken at a lone CR (classic Mac OS): the config reads, but the pools' places are
    not counted as the reports count lines; one SCH001 at the config says the AKS rules did not
    judge them, and they still place the job."""
    (tmp_path / ".mlops-lint.yaml").write_bytes(CONFIG.replace("\n", "\r").encode())
    write(tmp_path, {"job.yaml": JOB})
    report = run(tmp_path, select=("AKS", "XPL", "SCH001"))
    assert found(report) == [("SCH001", ".mlops-lint.yaml", 1, 1), ("XPL001", "job.yaml", 8, 22)]
    assert "did not judge them" in report.active[0].message
    assert report.file_status == {".mlops-lint.yaml": "linted", "job.yaml": "linted"}


def test_crlf_and_a_byte_order_mark_keep_the_positions(tmp_path: Path) -> None:
    (tmp_path / "lf").mkdir()
    (tmp_path / "crlf").mkdir()
    (tmp_path / "lf" / ".mlops-lint.yaml").write_text(CONFIG, encoding="utf-8")
    (tmp_path / "crlf" / ".mlops-lint.yaml").write_bytes(("\ufeff" + CONFIG).replace("\n", "\r\n").encode())
    lf, crlf = (found(run(tmp_path / name)) for name in ("lf", "crlf"))
    assert lf == crlf and len(lf) == 10
