"""The CI reports (issue 39): JUnit XML validated against the common JUnit schema that Azure
Pipelines' PublishTestResults reads, GitLab Code Quality JSON validated against GitLab's format,
and several reports in one run (``--output FORMAT:FILE``)."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from hypothesis import given, settings
from hypothesis import strategies as st
from msgspec.structs import replace
from report_samples import SPACED, random_results, sample_report, shifted
from test_cli import VIOLATING, run

from mlops_lint import formats
from mlops_lint.model.position import Span
from mlops_lint.report import FORMATS, render
from mlops_lint.result import Result

DATA = Path(__file__).resolve().parent / "data"
JUNIT = xmlschema.XMLSchema(DATA / "junit.xsd")
GITLAB = jsonschema.Draft202012Validator(json.loads((DATA / "gitlab-codequality.schema.json").read_text()))
STATUS = {"broken.yaml": "parse error", SPACED: "linted", "images/Dockerfile": "linted", "ünï/café.yaml": "linted",
          "clean.yaml": "linted", "charts/web/templates/x.yaml": "skipped: Helm chart template"}


@pytest.fixture(autouse=True)
def fixed_time(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764950400")  # 2025-12-05T16:00:00


def junit(report) -> ET.Element:
    text = render(report, "junit")
    JUNIT.validate(text)
    return ET.fromstring(text)


def suites(root: ET.Element) -> dict[str, ET.Element]:
    return {suite.get("name"): suite for suite in root}


def cases(suite: ET.Element) -> dict[tuple[str, str], ET.Element]:
    return {(case.get("classname"), case.get("name")): case for case in suite.iter("testcase")}


# ---- the list of formats ---------------------------------------------------------------------


def test_formats_are_listed_once():
    from mlops_lint.cli import check

    choices = next(p for p in check.params if p.name == "fmt").type.choices
    assert tuple(choices) == FORMATS == formats.FORMATS
    assert {"junit", "gitlab"} <= set(FORMATS)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    for fmt in FORMATS:  # the README's list of formats names every one
        assert f"`{fmt}`" in readme, fmt


# ---- junit -----------------------------------------------------------------------------------


def test_junit_one_suite_per_family_with_a_case_per_file_and_rule():
    root = junit(sample_report(file_status=STATUS))
    found = suites(root)
    assert list(found) == ["ml", "aks", "k8s"]
    ml = cases(found["ml"])
    # GPU001 (error) fails at the default fail-on (warning); RES004's finding too
    assert ml[(SPACED, "GPU001 gpu-limit-missing")].find("failure") is not None
    failure = ml[(SPACED, "RES004 shm-missing")].find("failure")
    assert failure.get("type") == "RES004"
    assert failure.text == f"{SPACED}:30:5: WARNING RES004 shm-missing: 50% of runs, a:b, c\\x0asecond line\\x0d"
    # a linted file with no ml finding is one passing case; the suppressed SEC004 is no test
    assert ml[("clean.yaml", "no ml findings")].find("failure") is None
    assert not any("SEC004" in name for _, name in ml)
    assert found["ml"].get("tests") == str(len(ml)) and found["ml"].get("failures") == "2"
    # no aks rule ran: no case in it; the files not linted are skipped cases of k8s, with the reason
    assert found["aks"].get("tests") == "0"
    k8s = cases(found["k8s"])
    assert k8s[("broken.yaml", "not linted")].find("skipped").get("message") == "parse error"
    assert k8s[("charts/web/templates/x.yaml", "not linted")].find("skipped") is not None
    assert found["k8s"].get("skipped") == "2"
    assert k8s[("images/Dockerfile", "DKR004 pip-cache-kept")].find("failure") is None  # info < warning
    assert "charts/web: Helm chart skipped" in found["k8s"].find("system-out").text
    assert found["ml"].get("timestamp") == "2025-12-05T16:00:00"


def test_junit_failure_follows_fail_on():
    root = junit(sample_report(file_status=STATUS, fail_on="error"))
    ml = cases(suites(root)["ml"])
    assert ml[(SPACED, "RES004 shm-missing")].find("failure") is None
    gpu = ml[(SPACED, "GPU001 gpu-limit-missing")].find("failure")
    assert gpu.get("message").startswith("1 finding of GPU001 at or above --fail-on error: container `trainer`")
    assert gpu.text.startswith(f"{SPACED}:12:9: ERROR GPU001")
    never = junit(sample_report(file_status=STATUS, fail_on="never"))
    assert all(suite.get("failures") == "0" for suite in never)


def test_junit_several_findings_of_a_rule_in_a_file_are_one_case():
    base = sample_report().results[1]  # GPU001
    results = [base, replace(base, span=Span(40, 3, 40, 9), message="second one")]
    root = junit(sample_report(results=results, file_status={SPACED: "linted"}))
    ml = cases(suites(root)["ml"])
    failure = ml[(SPACED, "GPU001 gpu-limit-missing")].find("failure")
    assert failure.get("message").startswith("2 findings of GPU001")
    assert failure.text.splitlines()[1] == f"{SPACED}:40:3: ERROR GPU001 gpu-limit-missing: second one"


def test_junit_characters_xml_cannot_hold_are_escaped():
    odd = Result("GPU001", "gpu-limit-missing", "error", "a\x00b\x1b[31m\ufffe & <x> \"q\"",
                 "bad\udcffname\x01.yaml", Span(1, 1, 1, 2))
    text = render(sample_report(results=[odd], file_status={odd.path: "linted"}), "junit")
    JUNIT.validate(text)
    failure = ET.fromstring(text).find(".//failure")
    assert failure.text == "bad\\udcffname\\x01.yaml:1:1: ERROR GPU001 gpu-limit-missing: a\\x00b\\x1b[31m\\ufffe & <x> \"q\""


def test_junit_nothing_linted_is_a_skipped_case():
    report = sample_report(results=[], notes=[], files_linted=0, nothing_linted="no YAML found")
    k8s = cases(suites(junit(report))["k8s"])
    assert k8s[("mlops-lint", "no files linted")].find("skipped").get("message") == "no YAML found"


@settings(max_examples=60, deadline=None)
@given(st.lists(random_results(), max_size=8))
def test_junit_valid_for_any_results(results):
    report = sample_report(results=sorted(results, key=Result.sort_key),
                           file_status={r.path: "linted" for r in results})
    root = junit(report)
    assert sum(int(s.get("failures")) for s in root) == len(root.findall(".//failure"))


# ---- gitlab ----------------------------------------------------------------------------------


def gitlab(report) -> list[dict]:
    data = json.loads(render(report, "gitlab"))
    GITLAB.validate(data)
    return data


def test_gitlab_issues_severities_and_paths():
    report = sample_report(uris={SPACED: "repo/" + SPACED})
    issues = gitlab(report)
    assert sorted(i["check_name"] for i in issues) == sorted(r.rule for r in report.active)
    by_rule = {i["check_name"]: i for i in issues}
    assert by_rule["GPU001"]["severity"] == "critical"
    assert by_rule["RES004"]["severity"] == "major"
    assert by_rule["DKR004"]["severity"] == "info"
    assert by_rule["GPU001"]["location"] == {"path": "repo/" + SPACED, "lines": {"begin": 12}}
    assert by_rule["GPU001"]["description"].startswith("GPU001 gpu-limit-missing: container `trainer`")
    assert by_rule["RES004"]["description"].endswith("c\\x0asecond line\\x0d")
    assert "SEC004" not in by_rule  # suppressed


def test_gitlab_fingerprints_stable_and_unique():
    report = sample_report()
    before = [i["fingerprint"] for i in gitlab(report)]
    assert [i["fingerprint"] for i in gitlab(shifted(report, 7))] == before  # lines moved: same issues
    twin = report.results[1]
    twice = gitlab(sample_report(results=[twin, replace(twin, span=Span(50, 9, 50, 18))]))
    assert len({i["fingerprint"] for i in twice}) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(random_results(), max_size=8))
def test_gitlab_valid_for_any_results(results):
    report = sample_report(results=sorted(results, key=Result.sort_key))
    assert len(gitlab(report)) == len(report.active)


# ---- several reports in one run --------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()  # the repository's top: report paths are relative to it
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "job.yaml").write_text(VIOLATING)
    return tmp_path


def test_output_several_reports_beside_the_text(project: Path):
    result = run(["deploy", "--no-color", "--output", "sarif:reports/x.sarif", "--output", "junit:reports/x.xml",
                  "--output", "gitlab:reports/gl.json", "--output", "json:reports/x.json"], project)
    assert result.exit_code == 1
    assert "deploy/job.yaml:17:13: ERROR GPU001 gpu-limit-missing" in result.output  # text on stdout
    sarif = json.loads((project / "reports/x.sarif").read_text())
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GPU001"]
    assert [f["rule"] for f in json.loads((project / "reports/x.json").read_text())["findings"]] == ["GPU001"]
    JUNIT.validate(str(project / "reports/x.xml"))
    ml = cases(suites(ET.parse(project / "reports/x.xml").getroot())["ml"])
    assert ml[("deploy/job.yaml", "GPU001 gpu-limit-missing")].find("failure").text.startswith("deploy/job.yaml:17:13:")
    issues = json.loads((project / "reports/gl.json").read_text())
    GITLAB.validate(issues)
    assert [(i["check_name"], i["location"]) for i in issues] == [
        ("GPU001", {"path": "deploy/job.yaml", "lines": {"begin": 17}})]


def test_output_plain_file_keeps_working_with_others(project: Path):
    result = run(["deploy", "--format", "json", "-o", "main.json", "--output", "junit:x.xml"], project)
    assert result.exit_code == 1
    assert [f["rule"] for f in json.loads((project / "main.json").read_text())["findings"]] == ["GPU001"]
    JUNIT.validate(str(project / "x.xml"))


@pytest.mark.parametrize("args, message", [
    (["-o", "a.txt", "-o", "b.txt"], "-o/--output FILE given 2 times"),
    (["--output", "sarif:x", "--output", "junit:x"], "--output names x twice"),
    (["--output", "junit:"], "no file after the format"),
    (["--output", "junit:x.xml", "--diff"], "--diff and --write-baseline write none"),
])
def test_output_usage_errors(project: Path, args, message):
    result = run(["deploy", *args], project)
    assert result.exit_code == 2
    assert message in result.output
    assert not (project / "x").exists() and not (project / "x.xml").exists()


def test_output_report_through_a_link_is_refused(project: Path, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "victim.xml"
    outside.write_text("keep")
    (project / "x.xml").symlink_to(outside)
    result = run(["deploy", "--output", "junit:x.xml"], project)
    assert result.exit_code == 2
    assert "symbolic link" in result.output
    assert outside.read_text() == "keep"


def test_gitlab_run_that_linted_nothing_says_so_on_stderr(tmp_path: Path):
    (tmp_path / "empty").mkdir()
    result = run(["empty", "--format", "gitlab", "--no-cache"], tmp_path)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == []
    assert "mlops-lint: no files linted: " in result.stderr
