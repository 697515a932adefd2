"""Suppressions that can be governed (issue 39): an ``until=`` expiry (LNT003), ``require-reason``
(LNT004) and ``--no-inline-suppressions``."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
from test_cli import VIOLATING, run

from mlops_lint.model.position import Span
from mlops_lint.registry import load_registry
from mlops_lint.suppress import Directive, govern, split_reason

REGISTRY = load_registry()
GPU_LINE = "            nvidia.com/gpu: 1\n"  # the request GPU001 reports on (17:13)


def directive(reason: str) -> Directive:
    return Directive("GPU001", reason, Span(4, 20, 4, 60), "comment at line 4", "job.yaml", frozenset({4, 5}))


def governed(reason: str, today: date, require_reason: bool = False):
    return govern([directive(reason)], registry=REGISTRY, severity={}, enabled={"LNT003", "LNT004", "GPU001"},
                  require_reason=require_reason, today=today)


def test_split_reason():
    assert split_reason("until=2027-03-01 the webhook sets it") == ("2027-03-01", "the webhook sets it")
    assert split_reason("the webhook sets it") == (None, "the webhook sets it")
    assert split_reason("until=2027-03-01") == ("2027-03-01", "")


def test_expiry_applies_through_its_day_then_stops():
    kept, found = governed("until=2027-03-01 webhook", date(2027, 3, 1))
    assert len(kept) == 1 and found == []
    kept, found = governed("until=2027-03-01 webhook", date(2027, 3, 2))
    assert kept == []
    assert [(f.rule, f.severity, f.path, f.span) for f in found] == [("LNT003", "warning", "job.yaml", Span(4, 20, 4, 60))]
    assert found[0].message == "suppression of GPU001 (comment at line 4) expired on 2027-03-01: it no longer applies"


@pytest.mark.parametrize("until", ["2027-02-30", "2027-13-01", "tomorrow", "", "2027-3-1"])
def test_an_until_that_is_no_date_never_applies(until):
    kept, found = governed(f"until={until} webhook", date(2000, 1, 1))
    assert kept == []
    assert [f.rule for f in found] == ["LNT003"]
    assert f"until={until!r} is not a date (YYYY-MM-DD)" in found[0].message


def test_require_reason():
    assert governed("", date(2027, 1, 1))[1] == []  # not required: no finding
    kept, found = governed("", date(2027, 1, 1), require_reason=True)
    assert len(kept) == 1  # still applies: the finding is what gates
    assert [f.rule for f in found] == ["LNT004"]
    assert found[0].message.startswith("suppression of GPU001 (comment at line 4) gives no reason")
    # an expiry is no reason
    assert [f.rule for f in governed("until=2999-01-01", date(2027, 1, 1), require_reason=True)[1]] == ["LNT004"]
    assert governed("until=2999-01-01 the webhook", date(2027, 1, 1), require_reason=True)[1] == []


def test_rules_not_run_report_nothing_but_expiry_still_counts():
    kept, found = govern([directive("until=2001-01-01 x")], registry=REGISTRY, severity={}, enabled={"GPU001"},
                         require_reason=True)
    assert kept == [] and found == []


# ---- through the command line ----------------------------------------------------------------


def project(tmp_path: Path, comment: str, config: str | None = None) -> Path:
    (tmp_path / "deploy").mkdir()
    text = VIOLATING.replace(GPU_LINE, GPU_LINE.rstrip("\n") + f"  # {comment}\n", 1)
    assert text != VIOLATING
    (tmp_path / "deploy" / "job.yaml").write_text(text)
    if config is not None:
        (tmp_path / ".mlops-lint.yaml").write_text(config)
    return tmp_path


def findings(result) -> list[tuple[str, int, int]]:
    return [(f["rule"], f["line"], f["column"]) for f in json.loads(result.output)["findings"] if not f["suppressed"]]


def test_cli_expired_suppression_gives_the_finding_back(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001 until=2020-06-30 quota webhook")
    result = run(["deploy", "--format", "json", "--no-cache"], root)
    assert result.exit_code == 1
    assert findings(result) == [("GPU001", 17, 13), ("LNT003", 17, 32)]
    quiet = run(["deploy", "--format", "json", "--no-cache", "--ignore", "LNT003"], root)
    assert findings(quiet) == [("GPU001", 17, 13)]  # ignoring LNT003 does not revive the suppression


def test_cli_suppression_not_yet_due_applies(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001 until=2999-12-31 quota webhook")
    result = run(["deploy", "--format", "json", "--no-cache"], root)
    assert result.exit_code == 0 and findings(result) == []


def test_cli_require_reason(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001", "require-reason: true\n")
    result = run(["deploy", "--format", "json", "--no-cache"], root)
    assert result.exit_code == 1
    assert findings(result) == [("LNT004", 17, 32)]
    assert run(["deploy", "--no-cache", "--fail-on", "error"], root).exit_code == 0  # LNT004 is a warning


def test_cli_reason_given_passes_require_reason(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001 the gpu-limits webhook sets it", "require-reason: true\n")
    assert run(["deploy", "--no-cache"], root).exit_code == 0


def test_cli_config_rejects_a_non_boolean_require_reason(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001", "require-reason: maybe\n")
    result = run(["deploy", "--no-cache"], root)
    assert result.exit_code == 2 and "require-reason" in result.output


def test_cli_no_inline_suppressions_leaves_config_and_baseline(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001 the webhook sets it")
    assert run(["deploy", "--no-cache"], root).exit_code == 0
    gate = run(["deploy", "--format", "json", "--no-cache", "--no-inline-suppressions"], root)
    assert gate.exit_code == 1 and findings(gate) == [("GPU001", 17, 13)]
    # an annotation is inline too
    job = root / "deploy" / "job.yaml"
    job.write_text(VIOLATING.replace("  namespace: ml\n", "  namespace: ml\n  annotations:\n"
                                     "    ignore-check.mlops-lint.io/GPU001: webhook\n", 1))
    assert run(["deploy", "--no-cache"], root).exit_code == 0
    assert run(["deploy", "--no-cache", "--no-inline-suppressions"], root).exit_code == 1
    # the config's ignore and the baseline still suppress
    assert run(["deploy", "--no-cache", "--no-inline-suppressions", "--ignore", "GPU001"], root).exit_code == 0
    job.write_text(VIOLATING)
    assert run(["deploy", "--no-cache", "--write-baseline", "base.json"], root).exit_code == 0
    assert run(["deploy", "--no-cache", "--no-inline-suppressions", "--baseline", "base.json"], root).exit_code == 0


def test_config_inline_suppressions_false_is_the_flag(tmp_path):
    """`inline-suppressions: false` in the config does what --no-inline-suppressions does."""
    root = project(tmp_path, "mlops-lint: disable=GPU001 the webhook sets it", "inline-suppressions: false\n")
    gate = run(["deploy", "--format", "json", "--no-cache"], root)
    assert gate.exit_code == 1 and findings(gate) == [("GPU001", 17, 13)]
    # the config's ignore still suppresses
    (root / ".mlops-lint.yaml").write_text("inline-suppressions: false\nignore: [GPU001]\n")
    assert run(["deploy", "--no-cache"], root).exit_code == 0
    # true (the default) keeps comments suppressing
    (root / ".mlops-lint.yaml").write_text("inline-suppressions: true\n")
    assert run(["deploy", "--format", "json", "--no-cache"], root).exit_code == 0


def test_cli_config_rejects_a_non_boolean_inline_suppressions(tmp_path):
    root = project(tmp_path, "mlops-lint: disable=GPU001", "inline-suppressions: sometimes\n")
    result = run(["deploy", "--no-cache"], root)
    assert result.exit_code == 2 and "inline-suppressions" in result.output
