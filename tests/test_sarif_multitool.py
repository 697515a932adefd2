"""GitHub's ingestion rules: ``Sarif.Multitool validate --rule-kind "Gh;Sarif"`` finds no error.

The multitool is a self-contained .NET binary shipped through npm. Install it once (works offline
from the npm cache) with::

    npm install --prefix .tools @microsoft/sarif-multitool
    chmod u+x .tools/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool

or point ``SARIF_MULTITOOL`` at the binary. Its exit code is 0 even when it reports errors, so
the tests read the SARIF log it writes.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from report_samples import sample_report

from mlops_lint.report import render

REPO = Path(__file__).resolve().parents[1]
BUNDLED = REPO / ".tools" / "node_modules" / "@microsoft" / "sarif-multitool-linux" / "Sarif.Multitool"
INSTALL_HINT = (
    "SARIF multitool not found: run `npm install --prefix .tools @microsoft/sarif-multitool && chmod u+x "
    f"{BUNDLED.relative_to(REPO)}` in the repository, or set SARIF_MULTITOOL to the Sarif.Multitool binary"
)
# Multitool warnings we accept, by rule id, each with the reason. None today.
ACCEPTED_WARNINGS: dict[str, str] = {}


def multitool() -> Path:
    configured = os.environ.get("SARIF_MULTITOOL")
    binary = Path(configured) if configured else BUNDLED
    if not binary.is_file():
        pytest.skip(INSTALL_HINT)
    if not os.access(binary, os.X_OK):  # npm skips the package's postinstall that sets the bit
        binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def validate(sarif_text: str, folder: Path) -> list[dict]:
    """The multitool's findings on ``sarif_text`` (a missing level means ``warning``)."""
    target = folder / "report.sarif"
    out = folder / "validation.sarif"
    target.write_text(sarif_text, encoding="utf-8")
    # the rule fixtures' log is over the tool's default 10,000 KB (it would skip the file and fail)
    command = [str(multitool()), "validate", str(target), "--rule-kind", "Gh;Sarif", "-o", str(out),
               "--log", "ForceOverwrite", "--max-file-size-in-kb", "102400"]
    completed = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    assert out.is_file(), f"multitool wrote no log:\n{completed.stdout}\n{completed.stderr}"
    (run,) = json.loads(out.read_text("utf-8"))["runs"]
    for invocation in run.get("invocations", []):
        assert invocation.get("executionSuccessful", True), invocation
        tool_errors = [n for n in invocation.get("toolExecutionNotifications", []) if n.get("level") == "error"]
        assert not tool_errors, tool_errors
    return [{**r, "level": r.get("level", "warning")} for r in run.get("results", [])]


def describe(found: list[dict]) -> list[str]:
    return [f"{r['level']} {r['ruleId']}: {r['message'].get('id')} {r['message'].get('arguments')}" for r in found]


@pytest.fixture(scope="module")
def findings(tmp_path_factory) -> list[dict]:
    return validate(render(sample_report(), "sarif"), tmp_path_factory.mktemp("multitool"))


def test_report_passes_github_ingestion_rules(findings):
    errors = [r for r in findings if r["level"] == "error"]
    assert not errors, describe(errors)


def test_report_has_no_multitool_warnings(findings):
    warnings = [r for r in findings if r["level"] == "warning" and r["ruleId"] not in ACCEPTED_WARNINGS]
    assert not warnings, describe(warnings)


def test_multitool_does_flag_a_bad_log(tmp_path):
    """Guards the two tests above: with the rule kinds applied, a rule without descriptions fails."""
    bad = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "x", "rules": [{"id": "A001"}]}}, "results": []}],
    }
    errors = [r for r in validate(json.dumps(bad), tmp_path) if r["level"] == "error"]
    assert any(r["ruleId"].startswith("GH") for r in errors), describe(errors)


def test_real_run_with_findings_suppressions_and_parse_errors(tmp_path):
    """End to end: the CLI's SARIF for the rule fixtures (parse errors, inline and annotation
    suppressions, every rule firing) passes the official schema and GitHub's rules."""
    import jsonschema
    from click.testing import CliRunner

    from mlops_lint.cli import main

    old = Path.cwd()
    os.chdir(REPO)
    try:
        result = CliRunner().invoke(main, ["fixtures/rules", "--select", "ALL,LNT001", "--format", "sarif"],
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 1
    log = json.loads(result.output)
    (run,) = log["runs"]
    rules_hit = {r["ruleId"] for r in run["results"]}
    assert {"SCH001", "GPU001", "LNT001"} <= rules_hit
    assert any(r.get("suppressions") for r in run["results"])
    schema = REPO.parent / "shared" / "sarif" / "sarif-schema-2.1.0.json"
    if schema.is_file():
        jsonschema.Draft4Validator(json.loads(schema.read_text())).validate(log)
    found = validate(result.output, tmp_path)
    errors = [r for r in found if r["level"] == "error"]
    assert not errors, describe(errors)
