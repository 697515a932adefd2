"""The reference manifests: the article's examples, corrected, lint clean; their broken variants
make every rule of the catalogue fire.

What is pinned where, so that adding or changing one rule changes only its own snapshots:

- each rule's findings on the whole violating tree (linted at once, as a user would, with its
  config and every rule) are a slice of the three reports in the rule's own folder,
  ``fixtures/rules/<ID>/expected-violating.json``: the rule's text report lines (each with its ``fix:``
  line), its JSON findings and its SARIF results (exact positions, messages, fixes,
  fingerprints), in report order; ``ruleIndex`` is left out of the slice (it moves when a rule
  is added before it) and checked here instead: it points at the descriptor of the result's rule;
- the formats are pinned by ``fixtures/reports/violating.{txt,json,sarif}``: the CLI on a fixed
  choice of the tree's files (FORMAT_FILES) with a fixed choice of rules (FORMAT_SELECT): the
  grouping by file, ``fix:`` lines, notes, the summary line, the JSON report exactly as printed,
  the SARIF log's shape (driver, descriptors, ``ruleIndex``, regions, fixes, fingerprints,
  notifications). Its descriptors keep their keys but not their docs, which are pinned once, in
  ``fixtures/rules/<ID>/expected.sarif`` (tests/test_rule_fixtures.py); a new rule or a new
  violating file changes none of them;
- the whole tree's reports are checked to hold together: every text line is a finding, a note
  or the summary; the three formats give the same findings in the same order; the summary counts
  them; the SARIF log is valid against ../shared/sarif's schema and each of its descriptors equals
  the one pinned in the rule's own snapshot (a rule with no fixture folder, LNT002: in
  ``fixtures/reports/engine-only-rules.sarif``); the run's notes are
  ``fixtures/reports/violating.notes.txt``.

``pytest --update-golden`` rewrites all of them (and removes the slice of a rule that no longer
fires on the tree); review the diff. For one new or changed rule,
``pytest --update-golden tests/test_rule_fixtures.py tests/test_reference_fixtures.py -k <ID>``
writes its four snapshots and nothing else.

``fixtures/conforming/`` is linted exactly as a user would (`mlops-lint fixtures/conforming`, default
settings: its ``.mlops-lint.yaml`` holds only a comment and makes it a project root of its own);
``fixtures/violating/`` carries its own ``.mlops-lint.yaml`` (trusted registries, required labels),
found the usual way, upward from the PATH. Every fixture set is a project, so `mlops-lint fixtures/`
lints each set apart from the others.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.config import Config
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry
from snapshots import RULES, SARIF_SCHEMA, check_golden, descriptors_owned_by, dump, stable_json, stable_sarif

REPO = Path(__file__).resolve().parents[1]
CONFORMING = REPO / "fixtures" / "conforming"
VIOLATING = REPO / "fixtures" / "violating"
REPORTS = REPO / "fixtures" / "reports"

# One file set per example of the article (issue 3's list), by folder.
ARTICLE_EXAMPLES = {
    "gpu-pod": "Schedule GPU workloads",
    "node-pool-job": "Isolate GPU workloads with taints and tolerations",
    "cluster": "Provision an AKS GPU node pool / Configure cluster autoscaling",
    "device-plugin": "Verify or install the NVIDIA device plugin",
    "mig": "Partition A100 and H100 GPUs with MIG",
    "pytorchjob": "Run a PyTorchJob / Configure NCCL communication with AKS CNI",
    "tfjob": "Run a TFJob",
    "kaito": "Fine-tune a model with KAITO",
    "kueue": "Allocate multi-tenant GPU quota with Kueue",
    "volcano": "Use Volcano as an alternative",
    "priorities": "Configure training and inference priorities",
    "shm": "Increase /dev/shm for ML data loaders",
    "blob-dataset": "Access large datasets with the Azure Blob CSI driver",
    "azure-files": "Share training data with Azure Files",
    "checkpointed-job": "Checkpoint to persistent storage",
    "monitoring": "Collect NVIDIA GPU metrics / Export training throughput metrics",
}
# Produced by the engine or opt-in: no manifest makes them fire at default settings.
# the suppression stage's (unused, expired, without a reason) and a rule's crash: their own fixtures show them
# LNT005 needs a profile given against the project's own cluster (its fixtures and
# tests/test_profile_inference.py): a reference set's config gives none, or the one it makes
NOT_BY_MANIFESTS = {"LNT001", "LNT002", "LNT003", "LNT004", "LNT005"}

# The format goldens' run: files of the violating tree that give every kind of line (a Dockerfile,
# scripts, a parse error, manifests with objects, a note: the profile inferred from
# automatic/cluster.sh), and rules chosen for what their findings show (error, warning, info; with
# and without a fix, safe and unsafe; with and without an object; several in one file). Fixed
# lists: a new rule or a new violating file does not change these goldens; changing one of these
# rules' messages or positions does (pick another rule here rather than growing the list).
FORMAT_FILES = ("fixtures/violating/Dockerfile", "fixtures/violating/broken.yaml", "fixtures/violating/cluster.sh",
                "fixtures/violating/gpu-training.yaml", "fixtures/violating/automatic/cluster.sh")
FORMAT_SELECT = ("AKS001", "AKS002", "DKR001", "DKR004", "GPU001", "IMG004", "RES004", "SCH001", "SEC001", "SEC003")
# `path:line:col: SEVERITY ID slug: message`, the first line of a finding in the text report
FINDING_LINE = re.compile(r"^\S.*?:\d+:\d+: [A-Z]+ (?P<rule>[A-Z]{2,4}[0-9]{3}) ")


def run_cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, [*args, "--no-color", "--jobs", "1"], catch_exceptions=False)
    return result.exit_code, result.stdout


@lru_cache(maxsize=None)
def violating_report(fmt: str) -> tuple[int, str]:
    return run_cli("fixtures/violating", "--format", fmt)


@lru_cache(maxsize=None)
def format_report(fmt: str) -> tuple[int, str]:
    return run_cli(*FORMAT_FILES, "--select", ",".join(FORMAT_SELECT), "--format", fmt)


def text_blocks(text: str) -> tuple[list[list[str]], list[str]]:
    """The text report's findings (each its first line and the indented lines below it, in report
    order) and its other non-blank lines (notes, the summary)."""
    blocks: list[list[str]] = []
    others: list[str] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        if FINDING_LINE.match(line):
            blocks.append([line])
        elif line.startswith(" ") and blocks and not others:
            blocks[-1].append(line)
        else:
            others.append(line)
    return blocks, others


@lru_cache(maxsize=None)
def violating_slices() -> dict[str, dict]:
    """Per rule that fires on the whole violating tree: its text lines, JSON findings and SARIF
    results (without ``ruleIndex``), each in report order."""
    blocks, _ = text_blocks(violating_report("text")[1])
    findings = json.loads(violating_report("json")[1])["findings"]
    results = json.loads(violating_report("sarif")[1])["runs"][0]["results"]
    slices: dict[str, dict] = {}
    for block in blocks:
        rule = FINDING_LINE.match(block[0])["rule"]
        slices.setdefault(rule, {"text": [], "json": [], "sarif": []})["text"].append("\n".join(block))
    for finding in findings:
        slices.setdefault(finding["rule"], {"text": [], "json": [], "sarif": []})["json"].append(finding)
    for result in results:
        kept = {key: value for key, value in result.items() if key != "ruleIndex"}
        slices.setdefault(result["ruleId"], {"text": [], "json": [], "sarif": []})["sarif"].append(kept)
    return slices


@pytest.fixture(autouse=True)
def at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)


@pytest.mark.parametrize("folder", sorted(ARTICLE_EXAMPLES))
def test_every_article_example_has_a_file_set(folder: str) -> None:
    files = [p for p in (CONFORMING / folder).iterdir() if p.is_file()]
    assert files, f"fixtures/conforming/{folder} ({ARTICLE_EXAMPLES[folder]}) is empty"


def test_conforming_manifests_are_clean_at_default_settings() -> None:
    code, out = run_cli("fixtures/conforming", "--format", "json")
    report = json.loads(out)
    shown = "\n".join(f"{f['path']}:{f['line']}:{f['column']} {f['rule']} {f['message']}" for f in report["findings"])
    assert report["findings"] == [], f"the conforming manifests gave findings:\n{shown}"
    assert code == 0
    assert report["summary"]["files"] >= len(ARTICLE_EXAMPLES)


def test_every_conforming_set_is_clean_when_all_fixtures_are_linted_at_once() -> None:
    """`mlops-lint fixtures/`: each fixture set is a project of its own (a root), so the conforming
    sets borrow nothing from the violating sets beside them (a PriorityClass marked globalDefault,
    a default-deny NetworkPolicy, another set's node pools), and each set keeps its own config."""
    code, out = run_cli("fixtures", "--format", "json", "--no-cache")
    report = json.loads(out)
    conforming = [f for f in report["findings"]
                  if f["path"].startswith(("fixtures/conforming/", "fixtures/cluster/conforming/"))]
    assert conforming == [] and code == 1
    alone = json.loads(violating_report("json")[1])["findings"]
    together = [f for f in report["findings"] if f["path"].startswith("fixtures/violating/")]
    assert together == alone  # the violating set's own config (IMG004, OBS004) applies in both runs


def test_conforming_files_are_all_linted_not_skipped() -> None:
    report = lint(LintRequest(paths=[CONFORMING], config=Config(), registry=load_registry(), cwd=REPO))
    linted = {path for path, status in report.file_status.items() if status == "linted"}
    expected = {p.relative_to(REPO).as_posix() for p in CONFORMING.rglob("*")
                if p.is_file() and p.suffix in (".yaml", ".sh") and p.name != ".mlops-lint.yaml"}
    assert expected <= linted, f"not linted: {sorted(expected - linted)}"


def test_violating_manifests_make_every_rule_fire() -> None:
    code, out = violating_report("json")
    assert code == 1
    fired = {f["rule"] for f in json.loads(out)["findings"]}
    catalogue = {meta.code for meta in load_registry().rules if meta.status != "removed"}
    missing = sorted(catalogue - NOT_BY_MANIFESTS - fired)
    assert not missing, f"no violating manifest makes these rules fire: {missing}"


def test_violating_findings_stay_in_the_violating_files() -> None:
    _, out = violating_report("json")
    for finding in json.loads(out)["findings"]:
        assert finding["path"].startswith("fixtures/violating/"), finding


@pytest.mark.parametrize("fmt,name", [("text", "violating.txt"), ("json", "violating.json"), ("sarif", "violating.sarif")])
def test_format_reports_match_goldens(fmt: str, name: str, update_golden: bool) -> None:
    code, out = format_report(fmt)
    assert code == 1
    if fmt == "json":
        fired = {f["rule"] for f in json.loads(out)["findings"]}
        assert fired == set(FORMAT_SELECT), (
            f"FORMAT_SELECT rules that no longer fire on FORMAT_FILES: {sorted(set(FORMAT_SELECT) - fired)}")
        out = stable_json(out)
    if fmt == "sarif":
        out = dump(descriptors_owned_by(stable_sarif(out), None))
    check_golden(REPORTS / name, out, update_golden)  # outside the linted folder: a golden never lints itself


def rule_folders() -> list[str]:
    return sorted(p.name for p in RULES.iterdir() if p.is_dir())


@pytest.mark.parametrize("rule", rule_folders())
def test_violating_findings_of_each_rule_match_its_slice(rule: str, update_golden: bool) -> None:
    golden = RULES / rule / "expected-violating.json"
    found = violating_slices().get(rule)
    if found is None:
        if update_golden:
            golden.unlink(missing_ok=True)
        assert not golden.exists(), f"{golden.relative_to(REPO)}: {rule} no longer fires on fixtures/violating"
        return
    check_golden(golden, dump(found), update_golden)


def test_every_rule_firing_on_the_violating_tree_has_a_folder_for_its_slice() -> None:
    assert set(violating_slices()) <= set(rule_folders())


def test_violating_reports_hold_together() -> None:
    """The whole tree's three reports: the same findings in the same order, counted by the
    summary; every text line a finding, a note or the summary; notes pinned."""
    blocks, others = text_blocks(violating_report("text")[1])
    report = json.loads(violating_report("json")[1])
    findings = report["findings"]
    (run,) = json.loads(violating_report("sarif")[1])["runs"]
    assert len(blocks) == len(findings) == len(run["results"]) > 0
    for block, finding, result in zip(blocks, findings, run["results"]):
        where = f"{finding['path']}:{finding['line']}:{finding['column']}: "
        assert block[0].startswith(where) and f" {finding['rule']} {finding['slug']}: " in block[0], (block, finding)
        location = result["locations"][0]["physicalLocation"]
        at = (location["artifactLocation"]["uri"], location["region"]["startLine"], location["region"]["startColumn"])
        assert (result["ruleId"], *at) == (finding["rule"], finding["path"], finding["line"], finding["column"])
        assert result["message"]["text"] == finding["message"]
    *notes, summary = others
    assert summary.startswith("Found ") and all(line.startswith("note: ") for line in notes), others
    counts = report["summary"]
    assert f"({counts['errors']} errors, {counts['warnings']} warnings, {counts['info']} info)" in summary
    by_severity = {level: sum(f["severity"] == level for f in findings) for level in ("error", "warning", "info")}
    assert by_severity == {"error": counts["errors"], "warning": counts["warnings"], "info": counts["info"]}
    assert notes == [f"note: {n['path']}: {n['message']}" for n in report["notes"]]


def test_violating_notes_golden(update_golden: bool) -> None:
    """The notes of the whole run (nothing silent): the engine's, no rule's."""
    _, others = text_blocks(violating_report("text")[1])
    check_golden(REPORTS / "violating.notes.txt", "\n".join(others[:-1]) + "\n", update_golden)


def test_violating_sarif_is_valid_and_its_descriptors_are_the_rules_own(update_golden: bool) -> None:
    """Schema-valid; ``ruleIndex`` points at the result's rule; each descriptor, docs included,
    is the one pinned in ``fixtures/rules/<ID>/expected.sarif`` (a rule with no fixture folder,
    LNT002 which only a crashing rule produces: in ``fixtures/reports/engine-only-rules.sarif``)."""
    import jsonschema

    log = json.loads(violating_report("sarif")[1])
    if SARIF_SCHEMA.is_file():
        jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))).validate(log)
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    ids = [rule["id"] for rule in rules]
    assert ids == sorted(set(ids))
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"], result
    folderless = [rule for rule in rules if not (RULES / rule["id"]).is_dir()]
    check_golden(REPORTS / "engine-only-rules.sarif", dump(folderless), update_golden)
    for rule in rules:
        if rule in folderless:
            continue
        own = RULES / rule["id"] / "expected.sarif"
        assert own.is_file(), f"{rule['id']} has no fixtures/rules/{rule['id']}/expected.sarif to pin its docs"
        pinned = {r["id"]: r for r in json.loads(own.read_text(encoding="utf-8"))["runs"][0]["tool"]["driver"]["rules"]}
        assert pinned.get(rule["id"]) == rule, f"{rule['id']}'s descriptor differs from {own.relative_to(REPO)}"
