"""``--fix`` of a rendered template's finding made in the chart's values.yaml, only where that
literal is the value's one source (linter.sources.helm_values); otherwise no fix, and the
message says why. Real renders by Helm's SDK (the ``helm`` extra)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.sources import helm_sdk

pytestmark = pytest.mark.skipif(not helm_sdk.available(), reason="the helm extra (helm-python-sdk) is not installed")

VALUES = "# NCCL settings\nnccl:\n  debug: INFO   # verbose while we debug\n  socket: eth0\nimage: mcr.microsoft.com/x:1.0\n"
JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n"
       "      containers:\n      - name: a\n        image: {{ .Values.image }}\n        env:\n"
       "        - name: NCCL_DEBUG\n          value: {{ .Values.nccl.debug }}\n")


def run(cwd: Path, *args: str) -> tuple[int, dict]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*args, "--format", "json"], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, json.loads(result.output)


def chart(tmp_path: Path, values: str = VALUES, job: str = JOB, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "c"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (folder / "values.yaml").write_text(values)
    (folder / "templates" / "job.yaml").write_text(job)
    for name, text in (files or {}).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def dst006(report: dict) -> list[dict]:
    return [f for f in report["findings"] if f["rule"] == "DST006"]


@pytest.mark.parametrize("cache", [False, True])
def test_a_value_from_a_values_yaml_literal_is_fixed_there_and_nowhere_else(tmp_path: Path, cache: bool) -> None:
    folder = chart(tmp_path)
    before = snapshot(folder)
    options = ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
    if cache:  # a warm run maps from the cache without reading the template: the fix still reads it
        run(tmp_path, "c", "--select", "DST006", *options)
    [finding] = dst006(run(tmp_path, "c", "--select", "DST006", *options)[1])
    assert (finding["path"], finding["line"], finding["column"]) == ("c/templates/job.yaml", 13, 11)
    assert finding["autofix"]["edits"] == [{"path": "c/values.yaml", "line": 3, "column": 10, "end_line": 3,
                                            "end_column": 14, "text": "WARN"}]
    assert "no values.yaml fix" not in finding["message"]
    code, report = run(tmp_path, "c", "--select", "DST006", "--fix", *options)
    after = snapshot(folder)
    assert code == 0 and dst006(report) == []
    assert after["values.yaml"] == before["values.yaml"].replace(b"debug: INFO ", b"debug: WARN ")
    assert {k: v for k, v in after.items() if k != "values.yaml"} == {
        k: v for k, v in before.items() if k != "values.yaml"}  # the template and the rest: as they were


def test_an_unsafe_fix_waits_for_unsafe_fixes(tmp_path: Path) -> None:
    job = JOB.replace("        env:\n        - name: NCCL_DEBUG\n          value: {{ .Values.nccl.debug }}\n",
                      "        securityContext:\n          allowPrivilegeEscalation: {{ .Values.escalate }}\n")
    folder = chart(tmp_path, "escalate: true\nimage: mcr.microsoft.com/x:1.0\n", job)
    run(tmp_path, "c", "--select", "SEC001", "--fix", "--no-cache")
    assert (folder / "values.yaml").read_text() == "escalate: true\nimage: mcr.microsoft.com/x:1.0\n"
    code, report = run(tmp_path, "c", "--select", "SEC001", "--fix", "--unsafe-fixes", "--no-cache")
    assert (folder / "values.yaml").read_text() == "escalate: false\nimage: mcr.microsoft.com/x:1.0\n"
    assert [f for f in report["findings"] if f["rule"] == "SEC001"] == []


NO_FIX = {
    "quoted in the template": ({"job": JOB.replace("value: {{ .Values.nccl.debug }}", 'value: "{{ .Values.nccl.debug }}"')},
                               "the template line does more than insert one value"),
    "a default": ({"job": JOB.replace("{{ .Values.nccl.debug }}", '{{ .Values.nccl.debug | default "INFO" }}')},
                  "the template line does more than insert one value"),
    "used twice": ({"files": {"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n"
                                                   "  debug: {{ .Values.nccl.debug | quote }}\n"}},
                   ".Values.nccl.debug is used elsewhere in the chart"),
    "its parent inserted whole": ({"files": {"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                                                                  "  name: x\ndata:\n  {{- toYaml .Values.nccl | nindent 2 }}\n"}},
                                  ".Values.nccl.debug is used elsewhere in the chart"),
    "all values": ({"files": {"templates/_helpers.tpl": '{{- define "all" }}{{ index .Values "nccl" }}{{ end }}\n'}},
                   ".Values.nccl.debug is used elsewhere in the chart"),
    "a ci values file": ({"files": {"ci/debug-values.yaml": "nccl:\n  debug: INFO\n"}},
                         "ci/debug-values.yaml sets .Values.nccl.debug too"),
    "a configured set": ({"config": "helm: {set: [nccl.debug=INFO]}\n"},
                         "helm set 'nccl.debug=INFO' sets .Values.nccl.debug too"),
    "quoted in values.yaml": ({"values": VALUES.replace("debug: INFO", 'debug: "INFO"')},
                              "values.yaml does not set .Values.nccl.debug as the plain value INFO"),
    "an anchor": ({"values": VALUES.replace("debug: INFO", "debug: &level INFO") + "other: *level\n"},
                  "values.yaml does not set .Values.nccl.debug as the plain value INFO"),
    "global": ({"values": "global:\n  debug: INFO\nimage: mcr.microsoft.com/x:1.0\n",
                "job": JOB.replace(".Values.nccl.debug", ".Values.global.debug")},
               ".Values.global.debug is shared with subcharts"),
}


@pytest.mark.parametrize("case", sorted(NO_FIX))
def test_no_values_fix_unless_the_literal_is_the_one_source_and_the_message_says_why(tmp_path: Path,
                                                                                     case: str) -> None:
    given, why = NO_FIX[case]
    folder = chart(tmp_path, given.get("values", VALUES), given.get("job", JOB), given.get("files"))
    if "config" in given:
        (tmp_path / ".mlops-lint.yaml").write_text(given["config"])
    before = snapshot(folder)
    findings = dst006(run(tmp_path, "c", "--select", "DST006", "--no-cache")[1])
    assert findings and all(f["autofix"] is None for f in findings)
    assert all(f["message"].endswith(f"(no values.yaml fix: {why})") or f"(no values.yaml fix: {why})" in f["message"]
               for f in findings if f["path"] == "c/templates/job.yaml")
    assert any(f["path"] == "c/templates/job.yaml" for f in findings)
    run(tmp_path, "c", "--select", "DST006", "--fix", "--unsafe-fixes", "--no-cache")
    assert snapshot(folder) == before


def test_a_fix_adding_something_elsewhere_is_dropped_without_a_word(tmp_path: Path) -> None:
    """GPU005's fix adds tolerations to the pod: no fix of the value the finding's line inserts."""
    job = JOB.replace("        env:\n        - name: NCCL_DEBUG\n          value: {{ .Values.nccl.debug }}\n",
                      "        resources:\n          limits:\n            nvidia.com/gpu: {{ .Values.gpus }}\n"
                      "          requests:\n            nvidia.com/gpu: {{ .Values.gpus }}\n")
    folder = chart(tmp_path, "gpus: 1\nimage: mcr.microsoft.com/x:1.0\n", job)
    (tmp_path / "taint.yaml").write_text(
        "apiVersion: v1\nkind: Node\nmetadata:\n  name: gpu-0\n  labels: {accelerator: nvidia}\nspec:\n"
        "  taints:\n  - {key: sku, value: gpu, effect: NoSchedule}\n")
    before = snapshot(folder)
    report = run(tmp_path, ".", "--select", "GPU005", "--no-cache")[1]
    [finding] = [f for f in report["findings"] if f["rule"] == "GPU005"]
    assert finding["path"] == "c/templates/job.yaml" and "this line inserts .Values.gpus" in finding["message"]
    assert finding["autofix"] is None and "values.yaml fix" not in finding["message"]
    run(tmp_path, ".", "--select", "GPU005", "--fix", "--unsafe-fixes", "--no-cache")
    assert snapshot(folder) == before


def test_a_template_literal_has_no_fix_and_no_values_note(tmp_path: Path) -> None:
    folder = chart(tmp_path, job=JOB.replace("{{ .Values.nccl.debug }}", "INFO"))
    before = snapshot(folder)
    [finding] = dst006(run(tmp_path, "c", "--select", "DST006", "--no-cache")[1])
    assert finding["autofix"] is None and "values.yaml fix" not in finding["message"]
    run(tmp_path, "c", "--select", "DST006", "--fix", "--no-cache")
    assert snapshot(folder) == before
