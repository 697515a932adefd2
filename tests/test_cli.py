"""The command line as users and CI see it: exit codes, config errors, stdin, jobs, baselines,
context vs targets."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from mlops_lint.cli import main

REPO = Path(__file__).resolve().parents[1]

# A hardened GPU training Job that passes every rule, but for its GPU limit (GPU001 at 17:13).
JOB = """\
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: ml
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3@sha256:{digest}
        resources:
          requests:
            cpu: "4"
            memory: 16Gi
            nvidia.com/gpu: 1
          limits:
            cpu: "4"
            memory: 16Gi
{gpu_limit}        volumeMounts:
        - name: dshm
          mountPath: /dev/shm
        securityContext:
          allowPrivilegeEscalation: false
          capabilities:
            drop: [ALL]
      nodeSelector:
        accelerator: nvidia
      tolerations:
      - {key: sku, operator: Equal, value: gpu, effect: NoSchedule}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1000
      volumes:
      - name: dshm
        emptyDir: {medium: Memory, sizeLimit: 4Gi}
""".replace("{digest}", "a" * 64)

VIOLATING = JOB.replace("{gpu_limit}", "")
CLEAN = JOB.replace("{gpu_limit}", "            nvidia.com/gpu: 1\n")


def run(args: list[str], cwd: Path, input: bytes | None = None):
    runner = CliRunner()
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return runner.invoke(main, args, input=input, catch_exceptions=False)
    finally:
        os.chdir(old)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy" / "job.yaml").write_text(VIOLATING)
    (tmp_path / "deploy" / "clean.yaml").write_text(CLEAN.replace("name: train", "name: clean"))
    return tmp_path


def test_clean_file_exits_0(project: Path) -> None:
    result = run(["deploy/clean.yaml"], project)
    assert result.exit_code == 0, result.output
    assert "All checks passed" in result.output


def test_findings_exit_1_with_exact_position(project: Path) -> None:
    result = run(["deploy/job.yaml", "--no-color"], project)
    assert result.exit_code == 1
    assert "deploy/job.yaml:17:13: ERROR GPU001 gpu-limit-missing: container `trainer` requests 1 nvidia.com/gpu" in result.output
    assert "[Job ml/train]" in result.output


def test_check_subcommand_is_the_default(project: Path) -> None:
    assert run(["check", "deploy/job.yaml"], project).output == run(["deploy/job.yaml"], project).output


def test_missing_path_exits_2(project: Path) -> None:
    result = run(["nope/"], project)
    assert result.exit_code == 2
    assert "path does not exist: nope/" in result.output


def test_unknown_selector_exits_2(project: Path) -> None:
    result = run(["--select", "GPU999", "deploy"], project)
    assert result.exit_code == 2
    assert "GPU999" in result.output


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ("fail-on: warn\n", ".mlops-lint.yaml:1:1: 'fail-on' is 'warn'; expected one of: error, warning, info, never"),
        ("profile: aks-standard\nselekt: [GPU]\n", ".mlops-lint.yaml:2:1: unknown key 'selekt' at the top level"),
        ("select:\n  - GPU\n  - BOGUS1\n", ".mlops-lint.yaml:3:5: 'select' names an unknown rule or prefix 'BOGUS1'"),
        ("severity: {GPU001: fatal}\n", ".mlops-lint.yaml:1:12: 'severity.GPU001' is 'fatal'; expected one of: error, warning, info"),
        ("rules: {GPU001: {colour: red}}\n", "unknown option 'colour' for rule GPU001"),
        ("node-pools:\n  - {name: gpu, vm-size: Standard_NC4as_T4_v3, min-count: 3, max-count: 1}\n",
         "node pool 'gpu' has min-count 3 > max-count 1"),
        ("a: [\n", ".mlops-lint.yaml:2:1: invalid YAML"),
    ],
)
def test_bad_config_exits_2_naming_key_and_line(project: Path, config: str, expected: str) -> None:
    (project / ".mlops-lint.yaml").write_text(config)
    result = run(["deploy"], project)
    assert result.exit_code == 2
    assert expected in result.output


def test_pyproject_config_is_used(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.mlops-lint]\nignore = ["GPU001"]\n')
    result = run(["deploy/job.yaml"], project)
    assert "GPU001" not in result.output
    (project / "pyproject.toml").write_text('[tool.mlops-lint]\nfail-on = "fatal"\n')
    assert run(["deploy/job.yaml"], project).exit_code == 2


def test_fail_on_thresholds(project: Path) -> None:
    warning_only = VIOLATING.replace("            nvidia.com/gpu: 1\n", "").replace("@sha256:" + "a" * 64, "")
    (project / "w.yaml").write_text(warning_only.replace("name: train\n", "name: w\n"))
    assert run(["w.yaml", "--no-color"], project).output.count("WARNING IMG002") == 1
    assert run(["w.yaml"], project).exit_code == 1
    assert run(["w.yaml", "--fail-on", "error"], project).exit_code == 0
    assert run(["--fail-on", "never", "deploy/job.yaml"], project).exit_code == 0
    assert run(["--fail-on", "error", "deploy/job.yaml"], project).exit_code == 1
    assert run(["--ignore", "GPU001", "--fail-on", "error", "deploy/job.yaml"], project).exit_code == 0


def test_severity_override_changes_exit(project: Path) -> None:
    (project / ".mlops-lint.yaml").write_text("severity: {GPU001: info}\nfail-on: warning\n")
    result = run(["deploy/job.yaml"], project)
    assert result.exit_code == 0
    assert "INFO GPU001" in result.output


def test_subcommand_name_wins_but_dot_slash_is_a_path(tmp_path: Path) -> None:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "job.yaml").write_text(VIOLATING)
    as_path = run(["./rules", "--no-color"], tmp_path)
    assert as_path.exit_code == 1 and "rules/job.yaml:17:13" in as_path.output
    catalogue = run(["rules"], tmp_path)
    assert catalogue.exit_code == 0 and "GPU001  gpu-limit-missing" in catalogue.output


def test_stdin_with_filename(project: Path) -> None:
    result = run(["-", "--stdin-filename", "deploy/piped.yaml", "--format", "json"], project, input=VIOLATING.encode())
    assert result.exit_code == 1
    findings = json.loads(result.output)["findings"]
    assert {(f["path"], f["rule"], f["line"]) for f in findings} == {("deploy/piped.yaml", "GPU001", 17)}


def test_json_report_matches_schema(project: Path) -> None:
    schema = json.loads((REPO / "schemas" / "findings.schema.json").read_text())
    result = run(["deploy", "--format", "json"], project)
    report = json.loads(result.output)
    jsonschema.validate(report, schema)
    assert report["summary"]["files"] == 2


def test_jobs_output_identical(tmp_path: Path) -> None:
    source = REPO / "fixtures"
    copies = tmp_path / "many"
    for index in range(6):
        shutil.copytree(source, copies / f"copy{index}", ignore=shutil.ignore_patterns("training-image"))
    outputs = {jobs: run(["many", "--jobs", jobs, "--format", "json", "--select", "ALL,LNT001"], tmp_path).output
               for jobs in ("1", "2")}
    assert len(list(copies.rglob("*.yaml"))) >= 48  # enough files to use the process pool
    assert outputs["1"] == outputs["2"]
    assert json.loads(outputs["1"])["findings"]


def test_baseline_survives_lines_moving(project: Path) -> None:
    baseline = project / "baseline.json"
    result = run(["deploy", "--write-baseline", str(baseline)], project)
    assert result.exit_code == 0
    recorded = json.loads(baseline.read_text())["findings"]
    assert {f["rule"] for f in recorded} == {"GPU001"}
    job = project / "deploy" / "job.yaml"
    job.write_text("# a comment\n# another\n" + job.read_text())
    assert run(["deploy", "--baseline", str(baseline)], project).exit_code == 0
    job.write_text(job.read_text().replace("image: nvcr.io/nvidia/pytorch:24.05-py3@sha256:" + "a" * 64,
                                           "image: nvcr.io/nvidia/pytorch:latest"))
    again = run(["deploy", "--baseline", str(baseline), "--no-color"], project)
    assert again.exit_code == 1
    assert "IMG001" in again.output and "GPU001" not in again.output


def test_context_is_project_root_targets_are_paths(tmp_path: Path) -> None:
    """A LimitRange elsewhere in the project defaults requests for the linted file (RES001)."""
    (tmp_path / ".mlops-lint.yaml").write_text("select: [RES001]\n")
    (tmp_path / "base").mkdir()
    (tmp_path / "apps").mkdir()
    (tmp_path / "base" / "limits.yaml").write_text(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: ml}\nspec:\n  limits:\n"
        "  - type: Container\n    defaultRequest: {cpu: 500m, memory: 1Gi}\n"
    )
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: NS}\nspec:\n  containers:\n"
           "  - name: c\n    image: x:1\n")
    (tmp_path / "apps" / "in-ml.yaml").write_text(pod.replace("NS", "ml"))
    (tmp_path / "apps" / "in-other.yaml").write_text(pod.replace("NS", "other"))
    result = run(["apps", "--no-color"], tmp_path)
    assert "apps/in-ml.yaml" not in result.output
    assert "apps/in-other.yaml:6:5: WARNING RES001" in result.output
    assert "base/limits.yaml" not in result.output  # context, not a target


def test_exclude_and_skipped_dirs(project: Path) -> None:
    (project / ".mlops-lint.yaml").write_text('exclude: ["deploy/job.yaml"]\n')
    (project / "node_modules").mkdir()
    (project / "node_modules" / "x.yaml").write_text(VIOLATING)
    result = run(["."], project)
    assert result.exit_code == 0, result.output


def test_helm_templates_skipped_with_note(tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "templates" / "job.yaml").write_text("{{- if .Values.x }}\nkind: Job\n{{- end }}\n")
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {enabled: never}\n")  # else rendered (tests/test_helm.py)
    result = run([".", "--no-color"], tmp_path)
    assert result.exit_code == 0
    assert "Helm chart templates skipped" in result.output


def test_template_outside_chart_gets_hint(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata:\n  name: {{ .Values.name }\n")
    result = run(["t.yaml", "--no-color"], tmp_path)
    assert result.exit_code == 1
    assert "SCH001 parse-error" in result.output and "helm template" in result.output


def test_parse_error_does_not_stop_other_files(project: Path) -> None:
    (project / "deploy" / "broken.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: [\n")
    result = run(["deploy", "--no-color"], project)
    assert "deploy/broken.yaml:4:1: ERROR SCH001 parse-error" in result.output
    assert "deploy/job.yaml:17:13: ERROR GPU001" in result.output


def test_dangling_link_is_a_finding_not_a_crash(project: Path) -> None:
    (project / "deploy" / "gone.yaml").symlink_to(project / "deploy" / "missing.yaml")
    result = run(["deploy/gone.yaml", "--no-color"], project)
    assert result.exit_code == 1
    assert "deploy/gone.yaml:1:1: ERROR SCH001 parse-error: cannot read the file" in result.output


def test_inline_suppression_and_show_suppressed(project: Path) -> None:
    job = project / "deploy" / "job.yaml"
    job.write_text(job.read_text().replace("            nvidia.com/gpu: 1\n",
                                           "            nvidia.com/gpu: 1  # mlops-lint: disable=gpu-limit-missing webhook\n", 1))
    assert run(["deploy/job.yaml"], project).exit_code == 0
    shown = run(["deploy/job.yaml", "--show-suppressed", "--no-color"], project)
    assert "GPU001" in shown.output and "webhook" in shown.output


def test_output_file_and_summary_on_stderr(project: Path) -> None:
    result = run(["deploy", "--format", "sarif", "-o", "out.sarif"], project)
    assert result.exit_code == 1
    sarif = json.loads((project / "out.sarif").read_text())
    assert sarif["version"] == "2.1.0"
    assert [r["ruleId"] for r in sarif["runs"][0]["results"]] == ["GPU001"]


def test_explain_rules_init_version(tmp_path: Path) -> None:
    explained = run(["explain", "gpu-limit-missing"], tmp_path)
    assert explained.exit_code == 0
    assert explained.output.startswith("# gpu-limit-missing (GPU001)\n")
    assert "## Why is this bad?" in explained.output
    assert run(["explain", "NOPE001"], tmp_path).exit_code == 2
    listing = json.loads(run(["rules", "--format", "json"], tmp_path).output)
    assert {"GPU001", "SCH001", "LNT001", "LNT002"} <= {r["code"] for r in listing}
    assert run(["init"], tmp_path).exit_code == 0
    assert (tmp_path / ".mlops-lint.yaml").exists()
    assert run(["init"], tmp_path).exit_code == 2  # never overwrites
    assert run(["tmp.yaml"], tmp_path).exit_code == 2  # written config is valid; the path is not
    assert run(["."], tmp_path).exit_code == 0
    assert run(["--version"], tmp_path).output.startswith("mlops-lint ")


def test_dockerfile_and_shell_parse_errors_and_inline_suppressions(tmp_path: Path) -> None:
    (tmp_path / "train.Dockerfile").write_text(
        "FROM pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime@sha256:"
        "0a3b9fedefe1f61ac4d5a9de9015c0863db27ca0fde2d4e37e6268147980b726\n"
        "# mlops-lint: disable=SCH001 our frontend knows RUNN\n"
        "RUNN echo hi\n"
        "RUNX echo again\n"
        "USER 1000\n"
    )
    (tmp_path / "pool.sh").write_text(
        "#!/usr/bin/env bash\n"
        "# mlops-lint: disable=parse-error nothing to suppress here\n"
        "az aks nodepool add --name gpunp --node-vm-size Standard_NC4as_T4_v3 --labels accelerator=nvidia --node-taints sku=gpu:NoSchedule"
        " --enable-cluster-autoscaler --min-count 0 --max-count 2\n"
        "echo 'never closed\n"
    )
    (tmp_path / "provision").write_text("#!/bin/sh\naz aks update --name c --enable-blob-driver\n")
    result = run([".", "--select", "ALL,LNT001", "--no-color"], tmp_path)
    lines = result.output.splitlines()
    assert lines[:2] == [
        # the directive governs line 3 only, not the error on line 4
        "pool.sh:2:1: INFO LNT001 unused-suppression: unused suppression: comment at line 2 suppressed no SCH001 finding",
        "pool.sh:4:6: ERROR SCH001 parse-error: unterminated single quote: no closing ' before the end of the file; "
        "this command was skipped and reading resumed on the next line",
    ]
    assert "train.Dockerfile:3:1" not in result.output  # suppressed by the comment on the line above
    assert "train.Dockerfile:4:1: ERROR SCH001 parse-error: unknown instruction: RUNX (did you mean RUN?)" in lines
    assert lines[-1] == ("Found 0 ML/AKS problems and 3 others (2 errors, 0 warnings, 1 info) in 2 files; 3 files linted; "
                         "1 suppressed.")  # shebang script read


def test_parallel_run_sees_cross_file_kinds_and_suppressions(tmp_path: Path) -> None:
    """The process pool shares the files that mention cross-file kinds (a LimitRange here) with
    every worker: findings, suppressions, LNT001 and the baseline are the same as in-process."""
    (tmp_path / "limits.yaml").write_text(
        "apiVersion: v1\nkind: LimitRange\nmetadata: {name: d, namespace: ns3}\nspec:\n  limits:\n"
        "  - type: Container\n    default: {memory: 1Gi}\n    defaultRequest: {cpu: 500m, memory: 1Gi}\n"
    )
    for index in range(60):
        pod = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p%d\n  namespace: ns%d\n"
               "  annotations: {mlops-lint.io/ignore: \"IMG002%s\"}\nspec:\n  containers:\n"
               "  - name: c  # mlops-lint: disable=RES002\n    image: x:%d\n") % (index, index % 5, ",GPU001" if index % 7 == 0 else "", index)
        (tmp_path / f"pod{index:02}.yaml").write_text(pod)
    baseline = tmp_path / "b.json"
    assert run([".", "--jobs", "1", "--write-baseline", str(baseline), "--select", "RES001"], tmp_path).exit_code == 0
    outputs = {jobs: run([".", "--jobs", jobs, "--format", "json", "--select", "ALL,LNT001", "--baseline", str(baseline)],
                         tmp_path).output for jobs in ("1", "2")}
    assert outputs["1"] == outputs["2"]
    findings = json.loads(outputs["1"])["findings"]
    res001 = [f for f in findings if f["rule"] == "RES001"]
    assert res001 and all(f["suppressed"] for f in res001)  # all in the baseline
    assert not any(f["path"].startswith("pod") and f["rule"] == "RES002" and not f["suppressed"] for f in findings)
    unused = [f for f in findings if f["rule"] == "LNT001"]
    # ns3 pods get their memory limit from the LimitRange, so their RES002 comment is unused
    assert {f["path"] for f in unused if "RES002" in f["message"]} == {f"pod{i:02}.yaml" for i in range(60) if i % 5 == 3}
    assert len([f for f in unused if "GPU001" in f["message"]]) == len([i for i in range(60) if i % 7 == 0])


def test_partial_index_refuses_kinds_it_does_not_hold() -> None:
    from mlops_lint.index import PartialIndexError, ProjectIndex

    index = ProjectIndex([], only_kinds=frozenset({"LimitRange"}))
    assert index.of_kind("LimitRange") == ()
    with pytest.raises(PartialIndexError, match="REFERENCE_KINDS"):
        index.get("StorageClass", "x")


def test_fifo_named_yaml_is_skipped_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    (tmp_path / "job.yaml").write_text(VIOLATING)
    result = run([".", "--no-color"], tmp_path)
    assert result.exit_code == 1
    assert "note: pipe.yaml: not read: not a regular file" in result.output
    assert "job.yaml:17:13: ERROR GPU001" in result.output
    assert "not a regular file" in run(["pipe.yaml"], tmp_path).output  # given directly: not read either


def test_the_command_ends_the_process_with_mains_exit_code_and_all_its_output(tmp_path: Path, monkeypatch) -> None:
    """``python -m mlops_lint`` (and the ``mlops-lint`` script) end with ``os._exit``, without
    freeing the run: the exit code is the one ``main`` gives, and a large report on stdout
    arrives whole, as the in-process command prints it; in-process runs keep nothing."""
    import subprocess
    import sys

    from mlops_lint import cli

    for index in range(150):  # findings enough for a stdout far beyond any pipe buffer
        (tmp_path / f"pod{index:03}.yaml").write_text(
            f"apiVersion: v1\nkind: Pod\nmetadata: {{name: p{index}}}\nspec:\n  containers:\n  - {{name: c, image: busybox}}\n")
    monkeypatch.chdir(tmp_path)
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-m", "mlops_lint", ".", "--no-cache", "--no-color", "--jobs", "1"]
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    inprocess = CliRunner().invoke(main, [".", "--no-cache", "--no-color", "--jobs", "1"])
    assert done.returncode == inprocess.exit_code == 1
    assert len(done.stdout) > 100_000 and done.stdout == inprocess.stdout
    assert cli._KEPT is None  # nothing kept by a process that goes on
    usage = subprocess.run([*command, "--bogus"], capture_output=True, text=True, env=env, check=False)
    assert usage.returncode == 2 and "No such option" in usage.stderr
    clean = subprocess.run([*command[:3], "--version"], capture_output=True, text=True, env=env, check=False)
    assert clean.returncode == 0 and clean.stdout.strip().endswith(cli.__version__)
