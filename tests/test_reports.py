"""Report formats over hand-built runs: exact text and annotations, schema-valid JSON and SARIF."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from msgspec.structs import replace
from report_samples import JOB, RULES, SPACED, random_results, sample_report, shifted
from strategies import FUZZ

from mlops_lint.model.position import Span
from mlops_lint.report import FORMATS, render, summary_line
from mlops_lint.report.github import escape_data, escape_property
from mlops_lint.report.ruledoc import clip, plain_text, sections, unwrap
from mlops_lint.report.sarif import build_log, result_data, sarif_result
from mlops_lint.report.sarif import document as sarif_document
from mlops_lint.report.sarif_json import to_json
from mlops_lint.result import ObjectRef, Result, RunReport

SARIF_SCHEMA = Path(__file__).resolve().parents[1].parent / "shared" / "sarif" / "sarif-schema-2.1.0.json"


def empty_report(**changes) -> RunReport:
    return replace(sample_report(), results=[], notes=[], **changes)


# ---- text ------------------------------------------------------------------------------------

EXPECTED_TEXT = """\
broken.yaml:1:1: ERROR SCH001 parse-error: could not parse YAML: mapping values are not allowed here

deploy/train job.yaml:12:9: ERROR GPU001 gpu-limit-missing: container `trainer` requests 2 nvidia.com/gpu but sets no limit — ünïcødé ✓ [Job ml/train]
    fix: add limits: {nvidia.com/gpu: 2}
deploy/train job.yaml:30:5: WARNING RES004 shm-missing: 50% of runs, a:b, c second line [PyTorchJob bert]

images/Dockerfile:3:5: INFO DKR004 pip-cache-kept: `pip install` keeps its cache

ünï/café.yaml:2:1: WARNING ORG001 cost-center-label-missing: label `cost-center` missing [Deployment web/api]

note: charts/web: Helm chart skipped: render it with `helm template` first
Found 2 ML/AKS problems and 3 others (2 errors, 2 warnings, 1 info) in 4 files; 12 files linted; 2 suppressed.
"""


def test_text_lines_grouped_by_file_then_notes_and_summary():
    assert render(sample_report(), "text") == EXPECTED_TEXT


def test_text_show_suppressed_marks_the_reason():
    lines = render(sample_report(), "text", show_suppressed=True).splitlines()
    assert (
        "deploy/train job.yaml:20:11: ERROR SEC004 privileged-container: container `trainer` sets privileged: true"
        " [Job ml/train] (suppressed: device plugin needs it)"
    ) in lines
    # a suppression without justification falls back to where it came from
    assert (
        "images/Dockerfile:7:5: INFO DKR004 pip-cache-kept: `pip install` keeps its cache"
        " (suppressed: baseline .mlops-lint-baseline.json)"
    ) in lines


def test_text_summary_counts_and_plurals():
    # the ML and AKS findings (GPU001, RES004) first, the files with findings, then the files linted
    assert summary_line(sample_report()) == ("Found 2 ML/AKS problems and 3 others (2 errors, 2 warnings, 1 info) "
                                             "in 4 files; 12 files linted; 2 suppressed.")
    one = replace(sample_report(), results=[r for r in sample_report().results if r.rule == "GPU001"])
    assert summary_line(one) == "Found 1 ML/AKS problem (1 error, 0 warnings, 0 info) in 1 file; 12 files linted."
    k8s = replace(sample_report(), results=[r for r in sample_report().results if r.rule in ("SCH001", "DKR004")])
    assert summary_line(k8s) == ("Found 0 ML/AKS problems and 2 others (1 error, 0 warnings, 1 info) in 2 files; "
                                 "12 files linted; 1 suppressed.")
    nothing = empty_report(files_linted=0, nothing_linted="2 files skipped (2 Helm chart template)")
    assert summary_line(nothing) == "No files linted: 2 files skipped (2 Helm chart template)."
    assert summary_line(empty_report()) == "All checks passed (12 files)."
    assert summary_line(empty_report(files_linted=1)) == "All checks passed (1 file)."
    only_suppressed = replace(sample_report(), results=[r for r in sample_report().results if r.suppressed])
    assert summary_line(only_suppressed) == "All checks passed (12 files); 2 suppressed."


def test_text_clean_run_is_just_the_summary():
    assert render(empty_report(), "text") == "All checks passed (12 files).\n"


def test_text_colour_only_when_asked():
    plain = render(sample_report(), "text")
    coloured = render(sample_report(), "text", color=True)
    assert "\x1b[" not in plain
    assert "\x1b[1;31mERROR\x1b[0m" in coloured
    assert "\x1b[1;33mWARNING\x1b[0m" in coloured
    assert "\x1b[1;36mINFO\x1b[0m" in coloured


def test_text_sorts_whatever_order_results_come_in():
    report = sample_report()
    assert render(replace(report, results=report.results[::-1]), "text") == EXPECTED_TEXT


# ---- json ------------------------------------------------------------------------------------


def findings_schema() -> dict:
    return json.loads((resources.files("mlops_lint") / "schemas" / "findings.schema.json").read_text("utf-8"))


def test_findings_schema_is_valid_2020_12():
    jsonschema.Draft202012Validator.check_schema(findings_schema())


def test_json_validates_and_has_exact_values():
    out = render(sample_report(), "json")
    assert out.endswith("}\n")
    data = json.loads(out)
    jsonschema.Draft202012Validator(findings_schema()).validate(data)
    assert data["version"] == "0.1.0"
    assert data["summary"] == {"files": 12, "skipped": 2, "errors": 2, "warnings": 2, "info": 1, "suppressed": 2}
    assert data["notes"] == [{"path": "charts/web", "message": "Helm chart skipped: render it with `helm template` first"}]
    assert [f["rule"] for f in data["findings"]] == ["SCH001", "GPU001", "SEC004", "RES004", "DKR004", "DKR004", "ORG001"]
    assert data["findings"][0] == {
        "rule": "SCH001", "slug": "parse-error", "severity": "error",
        "message": "could not parse YAML: mapping values are not allowed here", "path": "broken.yaml",
        "line": 1, "column": 1, "end_line": 1, "end_column": 2,
        "object": None, "fix": None, "autofix": None, "suppressed": False, "suppressions": [],
    }
    assert data["findings"][1] == {
        "rule": "GPU001", "slug": "gpu-limit-missing", "severity": "error",
        "message": "container `trainer` requests 2 nvidia.com/gpu but sets no limit — ünïcødé ✓",
        "path": SPACED, "line": 12, "column": 9, "end_line": 12, "end_column": 18,
        "object": {"kind": "Job", "namespace": "ml", "name": "train"},
        "fix": "add limits: {nvidia.com/gpu: 2}", "autofix": None, "suppressed": False, "suppressions": [],
    }
    suppressed = data["findings"][2]
    assert suppressed["suppressed"] is True
    assert suppressed["suppressions"] == [{"kind": "inSource", "justification": "device plugin needs it"}]
    assert data["findings"][5]["suppressions"] == [{"kind": "external", "justification": ""}]
    assert data["findings"][3]["object"] == {"kind": "PyTorchJob", "namespace": "", "name": "bert"}
    assert "ünïcødé ✓" in out  # ensure_ascii=False


def test_json_key_order_is_the_contract():
    data = json.loads(render(sample_report(), "json"))
    assert list(data) == ["version", "findings", "summary", "notes"]
    assert list(data["findings"][0]) == [
        "rule", "slug", "severity", "message", "path", "line", "column", "end_line", "end_column",
        "object", "fix", "autofix", "suppressed", "suppressions",
    ]


def test_findings_schema_rejects_what_it_should():
    validator = jsonschema.Draft202012Validator(findings_schema())
    good = json.loads(render(sample_report(), "json"))
    bad_severity = json.loads(json.dumps(good))
    bad_severity["findings"][0]["severity"] = "fatal"
    extra = json.loads(json.dumps(good))
    extra["findings"][0]["extra"] = 1
    inconsistent = json.loads(json.dumps(good))
    inconsistent["findings"][0]["suppressed"] = True  # but no suppressions
    missing = json.loads(json.dumps(good))
    del missing["summary"]["info"]
    for data in (bad_severity, extra, inconsistent, missing):
        assert not validator.is_valid(data)


def test_json_empty_run_validates():
    data = json.loads(render(empty_report(version=""), "json"))
    jsonschema.Draft202012Validator(findings_schema()).validate(data)
    assert data["findings"] == [] and data["version"]  # falls back to linter.__version__


# ---- sarif -----------------------------------------------------------------------------------


def sarif(report: RunReport | None = None) -> dict:
    return json.loads(render(report or sample_report(), "sarif"))


@pytest.fixture(scope="module")
def sarif_validator():
    if not SARIF_SCHEMA.is_file():
        pytest.skip(f"official SARIF schema not found at {SARIF_SCHEMA} (../shared is absent)")
    return jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text("utf-8")))


def test_sarif_validates_against_the_official_schema(sarif_validator):
    errors = sorted(sarif_validator.iter_errors(sarif()), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors]
    sarif_validator.validate(sarif(empty_report()))


def test_sarif_log_and_driver():
    log = sarif()
    assert list(log)[:3] == ["$schema", "version", "runs"]
    assert log["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json"
    assert log["version"] == "2.1.0"
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "mlops-lint"
    assert driver["semanticVersion"] == driver["version"] == "0.1.0"
    assert driver["informationUri"].startswith("https://")
    assert run["columnKind"] == "unicodeCodePoints"
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": "file:///work/repo%20with%20space/"}}
    assert run["invocations"][0]["executionSuccessful"] is True
    assert run["invocations"][0]["toolExecutionNotifications"][0]["message"]["text"].startswith("Helm chart skipped")


def test_sarif_rules_carry_the_rule_metadata():
    rules = {r["id"]: r for r in sarif()["runs"][0]["tool"]["driver"]["rules"]}
    assert sorted(rules) == ["DKR004", "GPU001", "ORG001", "RES004", "SCH001", "SEC004"]
    gpu = rules["GPU001"]
    assert gpu["name"] == "gpu-limit-missing"
    assert gpu["shortDescription"] == {"text": "A GPU requested without the matching limit."}
    assert gpu["fullDescription"] == {"text": "Checks `gpu-limit-missing` (GPU001)."}
    assert gpu["help"]["markdown"] == RULES[1].doc
    help_lines = gpu["help"]["text"].splitlines()
    assert "Why is this bad?" in help_lines and "## Why is this bad?" not in help_lines
    assert "    ## not a section: a YAML comment inside a fence" in help_lines  # code stays code
    assert gpu["helpUri"] == RULES[1].help_uri
    assert gpu["defaultConfiguration"] == {"level": "error"}
    assert gpu["properties"] == {"tags": ["gpu", "scheduling"], "precision": "high"}
    assert rules["DKR004"]["defaultConfiguration"] == {"level": "note"}
    assert rules["RES004"]["defaultConfiguration"] == {"level": "warning"}
    assert rules["RES004"]["properties"]["precision"] == "medium"  # its docs have Known problems
    assert rules["SEC004"]["properties"] == {"tags": ["sec", "security"], "precision": "high", "security-severity": "8.8"}
    assert "security-severity" not in gpu["properties"]


def test_sarif_result_for_a_rule_that_did_not_run_gets_a_minimal_descriptor():
    rules = {r["id"]: r for r in sarif()["runs"][0]["tool"]["driver"]["rules"]}
    org = rules["ORG001"]
    assert org["name"] == "cost-center-label-missing"
    for key in ("shortDescription", "fullDescription", "help"):
        assert org[key]["text"]
    assert org["defaultConfiguration"] == {"level": "warning"}
    assert "helpUri" not in org


def test_sarif_rule_index_points_at_the_rule():
    run = sarif()["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len(run["results"]) == 7
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]


def test_sarif_results_locations_and_levels():
    results = sarif()["runs"][0]["results"]
    parse_error, gpu, sec, shm, pip, pip_baselined, org = results
    assert parse_error["level"] == "error"
    assert parse_error["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 1, "startColumn": 1, "endLine": 1, "endColumn": 2
    }
    location = gpu["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "deploy/train%20job.yaml", "uriBaseId": "%SRCROOT%"}
    assert location["region"] == {"startLine": 12, "startColumn": 9, "endLine": 12, "endColumn": 18}
    assert gpu["message"] == {"text": "container `trainer` requests 2 nvidia.com/gpu but sets no limit — ünïcødé ✓"}
    assert gpu["properties"] == {"object": {"kind": "Job", "namespace": "ml", "name": "train"}}
    assert shm["level"] == "warning"  # written even though it is the SARIF default
    assert shm["properties"] == {"object": {"kind": "PyTorchJob", "name": "bert"}}
    assert shm["message"]["text"] == "50% of runs, a:b, c\nsecond line\r"  # kept as is
    assert pip["level"] == "note" and "properties" not in pip
    assert org["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "%C3%BCn%C3%AF/caf%C3%A9.yaml"


def test_sarif_suppressions_kept_with_kind():
    results = sarif()["runs"][0]["results"]
    assert results[2]["suppressions"] == [{"kind": "inSource", "justification": "device plugin needs it"}]
    assert results[5]["suppressions"] == [{"kind": "external"}]
    assert [r for r in results if "suppressions" in r] == [results[2], results[5]]


def test_sarif_fingerprints_ignore_lines_and_count_occurrences():
    def hashes(report: RunReport) -> list[str]:
        return [r["partialFingerprints"]["primaryLocationLineHash"] for r in sarif(report)["runs"][0]["results"]]

    before = hashes(sample_report())
    assert before == hashes(shifted(sample_report(), 5))
    results = sample_report().results
    assert before == [f"{r.fingerprint()}:{2 if i == 5 else 1}" for i, r in enumerate(results)]
    assert before[4].endswith(":1") and before[5].endswith(":2")  # same rule, file, node
    assert before[4].split(":")[0] == before[5].split(":")[0]


def test_sarif_without_root_or_notes_is_still_valid(sarif_validator):
    log = sarif(replace(sample_report(), root="", notes=[]))
    sarif_validator.validate(log)
    run = log["runs"][0]
    assert "originalUriBaseIds" not in run
    assert run["invocations"] == [{"executionSuccessful": True}]


def test_sarif_absolute_path_becomes_a_file_uri(sarif_validator):
    outside = Result("GPU001", "gpu-limit-missing", "error", "m", "/abs/dir x/job.yaml", Span(1, 1, 1, 2), JOB)
    log = sarif(replace(sample_report(), results=[outside]))
    sarif_validator.validate(log)
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "file:///abs/dir%20x/job.yaml"}


def test_sarif_empty_span_is_widened_to_one_column():
    empty = Result("SCH001", "parse-error", "error", "m", "a.yaml", Span(4, 7, 4, 7))
    region = sarif(replace(sample_report(), results=[empty]))["runs"][0]["results"][0]["locations"][0]
    assert region["physicalLocation"]["region"] == {"startLine": 4, "startColumn": 7, "endLine": 4, "endColumn": 8}


def test_sarif_serialiser_maps_names_and_drops_defaults():
    import sarif_om as om

    data = to_json(om.Result(message=om.Message(text="x"), rule_id="A001", rule_index=0))
    assert data == {"message": {"text": "x"}, "level": "warning", "ruleId": "A001", "ruleIndex": 0}
    assert to_json(om.SarifLog(runs=[], version="2.1.0", schema_uri="s")) == {"runs": [], "version": "2.1.0", "$schema": "s"}
    assert to_json(om.Run(tool=om.Tool(driver=om.ToolComponent(name="t")), results=[])) == {
        "tool": {"driver": {"name": "t"}}, "results": []
    }


def as_text(data) -> str:
    """JSON text, so that comparing two values compares their key order too."""
    return json.dumps(data, ensure_ascii=False)


@FUZZ
@given(st.lists(random_results(), max_size=12))
def test_sarif_results_written_as_data_are_what_the_sarif_om_objects_give(found):
    report = replace(sample_report(), results=sorted(found, key=Result.sort_key))
    objects = to_json(build_log(report))
    assert as_text(sarif_document(report)) == as_text({"$schema": objects.pop("$schema"),
                                                      "version": objects.pop("version"), **objects})


@pytest.mark.parametrize("odd", [{"message": None}, {"message": ["a", 1]}, {"span": Span(None, 1, None, 2)},
                                 {"path": "/abs/ünï x.yaml"}, {"obj": ObjectRef("Pod", "", "")}])
def test_sarif_result_of_odd_values_is_what_the_objects_give(odd):
    result = replace(Result("GPU001", "gpu-limit-missing", "error", "m", "a.yaml", Span(1, 2, 1, 3)), **odd)
    assert as_text(result_data(result, 3, "ab:1")) == as_text(to_json(sarif_result(result, 3, "ab:1")))


# ---- github ----------------------------------------------------------------------------------

EXPECTED_GITHUB = """\
::error file=broken.yaml,line=1,col=1,endLine=1,endColumn=2,title=SCH001 parse-error::could not parse YAML: mapping values are not allowed here
::error file=deploy/train job.yaml,line=12,col=9,endLine=12,endColumn=18,title=GPU001 gpu-limit-missing::container `trainer` requests 2 nvidia.com/gpu but sets no limit — ünïcødé ✓
::warning file=deploy/train job.yaml,line=30,endLine=32,title=RES004 shm-missing::50%25 of runs, a:b, c%0Asecond line%0D
::notice file=images/Dockerfile,line=3,col=5,endLine=3,endColumn=40,title=DKR004 pip-cache-kept::`pip install` keeps its cache
::warning file=ünï/café.yaml,line=2,col=1,endLine=2,endColumn=5,title=ORG001 cost-center-label-missing::label `cost-center` missing
::notice title=mlops-lint note::charts/web: Helm chart skipped: render it with `helm template` first
"""


def test_github_annotations_exact_without_suppressed():
    assert render(sample_report(), "github") == EXPECTED_GITHUB


def test_github_escaping():
    assert escape_data("100%\r\nok: a,b") == "100%25%0D%0Aok: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    odd = Result("GPU001", "gpu-limit-missing", "error", "m", "dir,x/a:b%.yaml", Span(1, 2, 1, 3))
    assert render(replace(sample_report(), results=[odd], notes=[]), "github") == (
        "::error file=dir%2Cx/a%3Ab%25.yaml,line=1,col=2,endLine=1,endColumn=3,title=GPU001 gpu-limit-missing::m\n"
    )


def test_github_clean_run_is_empty():
    assert render(empty_report(), "github") == ""


# ---- every format ----------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS)
def test_deterministic(fmt, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1764950400")  # junit's timestamp
    assert render(sample_report(), fmt) == render(sample_report(), fmt)
    report = sample_report()
    assert render(replace(report, results=report.results[::-1], notes=report.notes[::-1]), fmt) == render(report, fmt)


def test_unknown_format_is_a_value_error():
    with pytest.raises(ValueError, match="unknown report format 'xml'"):
        render(sample_report(), "xml")


def test_formats_tuple():
    from mlops_lint.formats import FORMATS as LISTED

    assert FORMATS == LISTED == ("text", "json", "sarif", "github", "junit", "gitlab")


# ---- rule docs -------------------------------------------------------------------------------


def test_doc_sections_ignore_headings_inside_fences():
    found = sections(RULES[1].doc)
    assert list(found) == ["What it does", "Why is this bad?", "Example", "Use instead", "References"]
    assert found["What it does"] == "Checks `gpu-limit-missing` (GPU001)."
    assert "## not a section" in found["Example"]


def test_plain_text_and_clip():
    assert plain_text("## Title\nSee [docs](https://x.y).\n```yaml\na: 1\n```") == "Title\nSee docs (https://x.y).\n    a: 1"
    assert clip("abcdef", 4) == "abc…" and len(clip("x" * 2000, 1024)) == 1024
    assert clip("abc", 4) == "abc"


def test_unwrap_joins_prose_but_keeps_lists_and_code():
    assert unwrap("Flags containers\nthat request GPUs.\n\nSecond\nparagraph.") == (
        "Flags containers that request GPUs.\n\nSecond paragraph."
    )
    assert unwrap("- one\n- two") == "- one\n- two"
    assert unwrap("Code:\n    a: 1\n    b: 2") == "Code:\n    a: 1\n    b: 2"

