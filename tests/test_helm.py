"""Helm charts rendered by Helm's own SDK (the ``helm`` extra, which the ``test`` extra installs)
and mapped back to the template lines (linter.sources.helm, linter.sources.helm_sdk); the
config's confinement (issue 32 items 01 and 18). The stand-in ``helm`` binary of
tests/test_kustomize.py covers only the binary path."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.sources import helm_sdk

REPO = Path(__file__).resolve().parent.parent
HELM = REPO / "fixtures" / "helm"

pytestmark = pytest.mark.skipif(not helm_sdk.available(), reason="the helm extra (helm-python-sdk) is not installed")


def lint(cwd: Path, *args: str) -> tuple[int, dict]:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, [*args, "--format", "json"], catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, json.loads(result.output)


def where(report: dict) -> list[tuple[str, int, int, str]]:
    return [(f["path"], f["line"], f["column"], f["rule"]) for f in report["findings"] if not f["suppressed"]]


def chart(tmp_path: Path, name: str, config: str = "") -> Path:
    shutil.copytree(HELM / name, tmp_path / "charts" / name)
    if config:
        (tmp_path / ".mlops-lint.yaml").write_text(config)
    return tmp_path / "charts" / name


# -- issue 32 item 01: the tree's config does not choose the program -----------------------------

@pytest.mark.parametrize("sdk", [True, False])
@pytest.mark.parametrize("command", ["[/proc/self/cwd/helm, template]", "[PROGRAM, template]", "[./helm, template]",
                                     "[helm, template, --post-renderer, ./helm]"])
def test_the_trees_config_never_makes_the_linter_run_its_program(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  sdk: bool, command: str) -> None:
    ran = tmp_path / "PWNED"
    program = tmp_path / "helm"
    program.write_text(f"#!/bin/sh\ntouch {ran}\n")
    program.chmod(0o755)
    (tmp_path / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    (tmp_path / ".mlops-lint.yaml").write_text(f"helm:\n  enabled: auto\n  command: {command.replace('PROGRAM', str(program))}\n")
    if not sdk:
        monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no helm: only the tree's program could run
    code, report = lint(tmp_path, ".", "--no-cache")
    assert not ran.exists()
    [refused] = [n for n in report["notes"] if "helm.command" in n["message"]]
    assert refused["path"] == ".mlops-lint.yaml" and "not run" in refused["message"]


# -- issue 32 item 18: values files stay inside the chart or the project -------------------------

@pytest.mark.parametrize("spelled", ["ABSOLUTE", "../outside/token.json", "../../outside/token.json", "link.yaml"])
def test_values_files_outside_the_project_are_not_read(tmp_path: Path, spelled: str) -> None:
    secret = tmp_path / "outside" / "token.json"
    secret.parent.mkdir()
    secret.write_text('{"AccessToken": {"k": {"secret": "FAKE-AZURE-ACCESS-TOKEN-123"}}}\n')
    repo = tmp_path / "repo"
    (repo / "chart" / "templates").mkdir(parents=True)
    (repo / "chart" / "link.yaml").symlink_to(secret)
    (repo / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (repo / "chart" / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n"
        "  - name: {{ .Values | toJson | quote }}\n    image: mcr.microsoft.com/x:1\n")
    name = str(secret) if spelled == "ABSOLUTE" else spelled
    (repo / ".mlops-lint.yaml").write_text(f"helm:\n  enabled: auto\n  values: [{name}]\n")
    code, report = lint(repo, ".", "--no-cache")
    assert "FAKE-AZURE-ACCESS-TOKEN-123" not in json.dumps(report)
    assert report["findings"]  # the chart was rendered (without that file)
    [note] = [n for n in report["notes"] if "helm values file" in n["message"]]
    assert note["path"] == "chart" and "not used" in note["message"]


def test_a_values_file_of_the_project_outside_the_chart_is_used(tmp_path: Path) -> None:
    folder = chart(tmp_path, "trainer", "helm: {values: [../../env/prod.yaml]}\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "prod.yaml").write_text("gpu: {limit: 1}\n")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert folder.is_dir() and [f["rule"] for f in report["findings"]] == ["GPU005"]  # the limit now equals the request


# -- renders at the template lines ---------------------------------------------------------------

def test_a_gpu_training_chart_is_rendered_and_mapped(tmp_path: Path) -> None:
    chart(tmp_path, "trainer")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert code == 1
    assert where(report) == [("charts/trainer/templates/job.yaml", 33, 13, "GPU005"),
                             ("charts/trainer/templates/job.yaml", 37, 13, "GPU003")]
    assert report["findings"][1]["message"].endswith("(Helm values: values.yaml)")
    assert report["findings"][1]["object"] == {"kind": "Job", "namespace": "", "name": "trainer-trainer"}
    assert not report["notes"]  # nothing skipped


def test_each_container_and_volume_of_a_template_gets_its_own_line(tmp_path: Path) -> None:
    chart(tmp_path, "inference")
    code, report = lint(tmp_path, "charts", "--no-cache")
    template = "charts/inference/templates/deployment.yaml"
    found = {(f["line"], f["column"], f["rule"], f["message"].split(" ")[1]) for f in report["findings"]
             if f["path"] == template}
    # the init container's and the sidecar's `privileged: true`, each at its own line
    assert (22, 11, "SEC004", "container") in {(line, col, rule, word) for line, col, rule, word in found}
    assert {(f["path"][len("charts/inference/templates/"):], f["line"], f["column"]) for f in report["findings"]
            if f["rule"] == "SEC004"} == {("deployment.yaml", 22, 11), ("deployment.yaml", 41, 11), ("batch.yaml", 13, 11)}
    # the images: the init container's at 19, the templated server's at 28, the sidecar's at 39
    assert {(f["line"], f["rule"]) for f in report["findings"] if f["rule"].startswith("IMG") and f["path"] == template} == {
        (19, "IMG002"), (28, "IMG001"), (39, "IMG002")}
    # two hostPath volumes, each at its own hostPath
    assert sorted((f["path"][len("charts/inference/templates/"):], f["line"], f["column"]) for f in report["findings"]
                  if f["rule"] == "SEC005") == [("batch.yaml", 24, 11), ("deployment.yaml", 49, 11),
                                                ("deployment.yaml", 52, 11)]
    # another template's items (batch.yaml's second volume) are told apart by their own names, not
    # by the names the same positions have in deployment.yaml
    # a value inserted by `toYaml .Values.resources`: at the line that inserts it
    [mismatch] = [f for f in report["findings"] if f["rule"] == "GPU003"]
    assert (mismatch["path"], mismatch["line"], mismatch["column"]) == (template, 32, 11)
    assert mismatch["message"].endswith("(this line inserts .Values.resources) (Helm values: ci/two-gpu-values.yaml)")
    [tag] = [f for f in report["findings"] if f["rule"] == "IMG001"]  # the values the line inserts are named
    assert "(this line inserts .Values.image.repository, .Values.image.tag)" in tag["message"]
    [shared] = [f for f in report["findings"] if f["rule"] == "SEC004" and f["line"] == 41]
    assert shared["message"].endswith("(Helm values: values.yaml, ci/two-gpu-values.yaml)")  # both renders: one finding
    # the test hook (helm.sh/hook: test) is not a workload: its busybox image gives nothing
    assert not [f for f in report["findings"] if "busybox" in f["message"] or "tests/" in f["path"]]
    # the two renders are alternatives, not two definitions of one Deployment
    assert not [n for n in report["notes"] if "defined differently" in n["message"]]


def test_a_subchart_comes_from_charts_and_a_missing_dependency_is_a_note(tmp_path: Path) -> None:
    chart(tmp_path, "stack")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [("charts/stack/charts/cache/templates/deployment.yaml", 22, 9, "IMG002")]
    assert "cache:2.0.0" in report["findings"][0]["message"]  # the parent's values reach the subchart
    assert [(n["path"], n["message"].split(":")[0]) for n in report["notes"]] == [
        ("charts/stack/Chart.yaml", "dependency 'redis' is not in charts/")]


def test_a_dependency_name_that_leaves_charts_is_never_looked_up(tmp_path: Path) -> None:
    """A Chart.yaml's dependency name is the tree's text: `../../../outside/dep` must not make the
    linter look for a Chart.yaml outside the chart (it would find this one and stay silent)."""
    outside = tmp_path / "outside" / "dep"
    outside.mkdir(parents=True)
    (outside / "Chart.yaml").write_text("apiVersion: v2\nname: dep\nversion: 0.1.0\n")
    chart_folder = tmp_path / "repo" / "chart"
    (chart_folder / "templates").mkdir(parents=True)
    (chart_folder / "charts").mkdir()
    (chart_folder / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\ndependencies:\n"
                                             "- name: ../../../outside/dep\n  version: 0.1.0\n")
    (chart_folder / "templates" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
    code, report = lint(tmp_path / "repo", ".", "--no-cache")
    assert [(n["path"], n["message"].split(":")[0]) for n in report["notes"] if "dependency" in n["message"]] == [
        ("chart/Chart.yaml", "dependency '../../../outside/dep' is not in charts/")]


def test_a_warm_run_names_a_missing_dependency_without_parsing_chart_yaml(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The dependencies a Chart.yaml lists are kept in the build cache for its bytes: a warm run
    gives the same note without parsing it; an entry that is not a list of plain names is a miss."""
    from mlops_lint.sources import helm

    chart(tmp_path, "stack")
    parsed: list[int] = []
    real = helm._chart_metadata

    def counted(data: bytes | None) -> dict:
        parsed.append(1)
        return real(data)

    monkeypatch.setattr(helm, "_chart_metadata", counted)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    expected = [("charts/stack/Chart.yaml", "dependency 'redis' is not in charts/")]
    counts = []
    for _ in range(2):
        report = lint(tmp_path, "charts", *cache)[1]
        assert [(n["path"], n["message"].split(":")[0]) for n in report["notes"]] == expected
        counts.append(len(parsed))
    assert counts[0] > 0 and counts[1] == counts[0]  # the warm run parsed no Chart.yaml
    [entry] = (tmp_path / "cache" / "kustomize").glob("helmdeps-*.out")
    assert json.loads(entry.read_bytes()) == ["cache", "redis"]
    entry.write_text('["../../../etc", "cache"]')  # planted: not a plain name, so parsed again
    report = lint(tmp_path, "charts", *cache)[1]
    assert [(n["path"], n["message"].split(":")[0]) for n in report["notes"]] == expected
    assert len(parsed) == counts[1] + 1 and json.loads(entry.read_bytes()) == ["cache", "redis"]


def test_a_chart_that_refuses_the_default_namespace(tmp_path: Path) -> None:
    chart(tmp_path, "serving")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [("charts/serving/templates/deployment.yaml", 2, 4, "SCH001")]
    assert "not installed into the default namespace" in report["findings"][0]["message"]
    (tmp_path / ".mlops-lint.yaml").write_text("helm:\n  charts:\n    charts/serving: {namespace: ml-serving, "
                                               "release-name: llm}\n")
    code, report = lint(tmp_path, "charts", "--no-cache")
    # the pod spec (18: `spec:`) and the GPU request (35), as rendered in ml-serving
    assert where(report) == [("charts/serving/templates/deployment.yaml", 18, 5, "GPU006"),
                             ("charts/serving/templates/deployment.yaml", 35, 13, "GPU005")]
    assert {f["object"]["namespace"] + "/" + f["object"]["name"] for f in report["findings"]} == {"ml-serving/llm"}


def test_kube_version_set_and_release_name_reach_the_render(tmp_path: Path) -> None:
    folder = chart(tmp_path, "trainer", "kubernetes-version: '1.30'\nhelm: {set: [gpu.limit=1], release-name: r1}\n")
    (folder / "templates" / "cm.yaml").write_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-kube\n"
        "  labels:\n    kube: {{ .Capabilities.KubeVersion.Version | quote }}\n")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert [f["rule"] for f in report["findings"]] == ["GPU005"]  # --set gpu.limit=1: no mismatch
    assert report["findings"][0]["object"]["name"] == "r1-trainer"
    from mlops_lint.sources import helm

    plan = helm.plan(str(folder), "charts/trainer", {"set": ["gpu.limit=1"], "release-name": "r1"}, "1.30",
                     str(tmp_path))
    [(output, error)] = helm.render_plan(plan, ("sdk", None), 60, None)
    assert error is None and b'kube: "v1.30.0"' in output and b"name: r1-kube" in output


def test_fix_never_edits_a_template(tmp_path: Path) -> None:
    folder = chart(tmp_path, "inference")
    before = {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()}
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, ["charts", "--fix", "--unsafe-fixes", "--no-cache"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.exit_code == 1
    assert {p: p.read_bytes() for p in folder.rglob("*") if p.is_file()} == before
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert all(f.get("autofix") is None for f in report["findings"])


def test_never_and_always(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart(tmp_path, "trainer", "helm: {enabled: never}\n")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [] and [n["message"] for n in report["notes"] if n["path"]] == [
        "Helm chart templates skipped (the config says helm: {enabled: never})"]
    assert report["notes"][0]["message"].startswith("No files linted: ")  # nothing else was there to lint
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {enabled: always}\n")
    monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [("charts/trainer/Chart.yaml", 1, 1, "SCH001")]
    assert 'pip install "mlops-lint[helm]"' in report["findings"][0]["message"]
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {enabled: auto}\n")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [] and any('pip install "mlops-lint[helm]"' in n["message"] for n in report["notes"])


# -- safe on untrusted charts ----------------------------------------------------------------------

def hostile(tmp_path: Path, template: str, files: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "c"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (folder / "templates" / "cm.yaml").write_text(template)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n"
# 10^10 empty iterations: time, not memory
SLOW = '{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n  a: "1"\n'


def test_files_are_read_only_inside_the_chart(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("CI-SECRET-42\n")
    folder = hostile(tmp_path, CM + '  a: {{ .Files.Get "../../secret.txt" | quote }}\n'
                                    '  b: {{ .Files.Get "/etc/hostname" | quote }}\n'
                                    '  c: {{ .Files.Get "linked.txt" | quote }}\n'
                                    '  d: {{ .Files.Glob "**" | len | quote }}\n')
    (folder / "linked.txt").symlink_to(secret)
    code, report = lint(tmp_path, "c", "--no-cache", "--select", "SCH001")
    assert "CI-SECRET-42" not in json.dumps(report) and report["findings"] == []
    assert [(n["path"], n["message"]) for n in report["notes"]] == [
        ("c", "chart files not given to Helm: linked.txt (a link)")]
    from mlops_lint.sources import helm

    plan = helm.plan(str(folder), "c", {}, None, str(tmp_path))
    [(output, error)] = helm.render_plan(plan, ("sdk", None), 60, None)
    assert error is None and b"CI-SECRET-42" not in output
    assert b'a: ""' in output and b'b: ""' in output and b'c: ""' in output and b'd: "0"' in output


def test_lookup_finds_nothing_and_says_so(tmp_path: Path) -> None:
    hostile(tmp_path, CM + '  a: {{ lookup "v1" "Secret" "kube-system" "" | toJson | quote }}\n')
    code, report = lint(tmp_path, "c", "--no-cache")
    assert report["findings"] == []
    assert [n["message"] for n in report["notes"]] == ["templates call `lookup`: rendered offline, where it finds nothing"]


def test_recursion_is_one_finding(tmp_path: Path) -> None:
    hostile(tmp_path, '{{- define "loop" }}{{ include "loop" . }}{{ end }}\n' + CM + '  a: {{ include "loop" . }}\n')
    code, report = lint(tmp_path, "c", "--no-cache")
    assert where(report) == [("c/templates/cm.yaml", 7, 8, "SCH001")]  # where Helm says
    assert "recursion" in report["findings"][0]["message"] or "nested" in report["findings"][0]["message"]


def test_a_render_of_100_mb_is_one_finding_and_bounded(tmp_path: Path) -> None:
    hostile(tmp_path, CM + '{{- range $i := until 1000000 }}\n  k{{ $i }}: "{{ repeat 90 "x" }}"\n{{- end }}\n')
    started = time.monotonic()
    code, report = lint(tmp_path, "c", "--no-cache")
    assert time.monotonic() - started < 60
    [finding] = report["findings"]
    assert (finding["path"], finding["rule"]) == ("c/Chart.yaml", "SCH001")
    assert "MB" in finding["message"]


def test_a_render_over_the_time_limit_is_one_finding(tmp_path: Path) -> None:
    hostile(tmp_path, CM + SLOW)
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {timeout: 1}\n")
    started = time.monotonic()
    code, report = lint(tmp_path, "c", "--no-cache")
    assert time.monotonic() - started < 30
    assert [f["rule"] for f in report["findings"]] == ["SCH001"]


def test_a_deep_chart_yaml_is_a_finding_not_a_crash(tmp_path: Path) -> None:
    """libyaml's composer recurses in C: a Chart.yaml nested 200,000 deep crashed the run
    (segmentation fault) where the chart's metadata was read for its release name."""
    import subprocess
    import sys

    folder = hostile(tmp_path, CM)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\nx: " + "[" * 200000 + "]" * 200000 + "\n")
    done = subprocess.run([sys.executable, "-m", "mlops_lint", "c", "--no-cache", "--format", "json"], cwd=tmp_path,
                          capture_output=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 1, done.stderr[-500:]
    report = json.loads(done.stdout)
    assert {(f["path"], f["rule"]) for f in report["findings"]} == {("c/Chart.yaml", "SCH001")}


# -- cached like kustomize builds ----------------------------------------------------------------

def test_an_unchanged_chart_is_not_rendered_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = chart(tmp_path, "trainer")
    calls: list[int] = []
    real = helm_sdk.render_many

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(helm_sdk, "render_many", counted)
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts", *cache)[1]
    second = lint(tmp_path, "charts", *cache)[1]
    assert len(calls) == 1 and where(first) == where(second)
    (folder / "values.yaml").write_text((folder / "values.yaml").read_text().replace("limit: 2", "limit: 1"))
    third = lint(tmp_path, "charts", *cache)[1]
    assert len(calls) == 2 and [f["rule"] for f in third["findings"]] == ["GPU005"]
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {namespace: other}\n")  # a setting: another render
    lint(tmp_path, "charts", *cache)
    assert len(calls) == 3


def test_a_warm_run_maps_its_findings_without_reading_a_template(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.sources import helm

    chart(tmp_path, "inference")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts", *cache)[1]
    # values.yaml and ci/two-gpu-values.yaml: a render each, and the chart's record (both, and their maps)
    assert sorted(p.name.split("-")[0] for p in (tmp_path / "cache" / "kustomize").iterdir()) == [
        "helm", "helm", "helmchart"]
    read: list[str] = []
    real = helm._read_template

    def counted(absolute: str, cwd: str):
        read.append(absolute)
        return real(absolute, cwd)

    monkeypatch.setattr(helm, "_read_template", counted)
    monkeypatch.setattr(helm, "_READ", {})
    second = lint(tmp_path, "charts", *cache)[1]
    assert read == [] and second == first and where(first)


def test_the_render_cache_is_pruned_as_the_result_cache_is(tmp_path: Path) -> None:
    """A render and its map stay while a run file the result cache keeps was saved by a run that
    used them; a run that writes an entry removes the others, and temporaries of runs that died."""
    folder = chart(tmp_path, "trainer")
    cache = tmp_path / "cache"
    renders = cache / "kustomize"

    def entries() -> set[str]:
        return {path.name for path in renders.iterdir()}

    def run(select: str, limit: int) -> None:
        values = folder / "values.yaml"
        values.write_text(re.sub(r"limit: \d+", f"limit: {limit}", values.read_text()))
        lint(tmp_path, "charts", "--cache-dir", str(cache), "--select", select)

    run("GPU003", 2)  # run key A
    first = entries()
    for path in cache.rglob("*"):  # that run 10 s ago (however coarse the file system's times)
        if path.is_file():
            info = path.stat()
            os.utime(path, ns=(info.st_atime_ns - 10**10, info.st_mtime_ns - 10**10))
    assert {name.split("-")[0] for name in first} == {"helm", "helmchart"}
    stale, fresh = renders / ".died.tmp", renders / ".running.tmp"
    for path in (stale, fresh):
        path.write_text("")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    run("GPU005", 3)  # run key B: A's run file is kept, so are the renders A used
    second = entries()
    assert first | {".running.tmp"} < second and not stale.exists()
    run("GPU003", 4)  # A again: no run file kept was saved by a run that used the first renders
    third = entries()
    assert third.isdisjoint(first) and (second - first) < third


def test_an_edited_template_is_mapped_again(tmp_path: Path) -> None:
    folder = chart(tmp_path, "trainer")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    before = where(lint(tmp_path, "charts", *cache)[1])
    job = folder / "templates" / "job.yaml"
    job.write_text("{{- /* the output does not change; the template's lines do */}}\n" + job.read_text())
    after = where(lint(tmp_path, "charts", *cache)[1])
    assert after == [(path, line + 1, column, rule) for path, line, column, rule in before] and before


@pytest.mark.parametrize("tamper", ["line", "column", "source", "rendered", "values", "key", "shape", "junk", "bool"])
def test_a_cached_map_is_checked_before_it_is_used(tmp_path: Path, tamper: str) -> None:
    chart(tmp_path, "inference")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts", *cache)[1]
    [entry] = (tmp_path / "cache" / "kustomize").glob("helmchart-*.out")
    meta, outputs = record(entry)
    for data in [found for found in meta["maps"] if found["lines"]][:1]:
        row = data["lines"][0]
        if tamper == "line":
            row[2] = row[4] = 9999  # past the template's end
        elif tamper == "column":
            row[3] = 10 ** 7
        elif tamper == "source":
            row[1] = 50  # no such # Source: in the render
        elif tamper == "rendered":
            row[0] = 1 if row[1] else 10 ** 6  # a line its # Source: does not cover
        elif tamper == "values":
            row[6] = ["$(curl evil)"]
        elif tamper == "key":
            data["key"] = "helmmap-" + "0" * 32
        elif tamper == "shape":
            row.append(1)
        elif tamper == "bool":
            row[3] = True  # a column of 1 spelled as JSON true: not a whole number
    # the record's hash made right again: only the rows' own checks stand between them and the run
    write_record(entry, b"not json {" if tamper == "junk" else json.dumps(meta).encode(), outputs)
    for run in (tmp_path / "cache").glob("run-*.cache"):
        run.unlink()  # the findings found and mapped again (a finished run's would not look at a map)
    again = lint(tmp_path, "charts", *cache)[1]
    assert again == first and where(first)
    meta = record(entry)[0]  # written anew: every map of this render's
    assert len(meta["maps"]) == 2 and all(found["key"] != "helmmap-" + "0" * 32 and found["lines"]
                                          for found in meta["maps"])


def record(entry: Path) -> tuple[dict, bytes]:
    """A chart record's JSON line and its outputs (linter.sources.helm.ChartRecord), its header checked."""
    header, key, hashed, body = entry.read_bytes().split(b"\n", 3)
    from mlops_lint.digest import digest

    assert header == b"mlops-lint helm chart 1" and key.decode() == entry.stem and hashed == digest(body).encode()
    meta, _, outputs = body.partition(b"\n")
    return json.loads(meta), outputs


def write_record(entry: Path, meta: bytes, outputs: bytes, key: str | None = None) -> None:
    """A record written as the linter writes one (its hash right), of any content."""
    from mlops_lint.digest import digest

    body = meta + b"\n" + outputs
    entry.write_bytes(b"mlops-lint helm chart 1\n%s\n%s\n%s" % ((key or entry.stem).encode(), digest(body).encode(),
                                                                 body))


@pytest.mark.parametrize("tamper", ["output", "truncated", "renamed", "no header"])
def test_a_cached_render_that_does_not_check_is_rendered_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                tamper: str) -> None:
    folder = chart(tmp_path, "trainer")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts", *cache)[1]
    for found in (tmp_path / "cache" / "kustomize").glob("helmchart-*.out"):
        found.unlink()  # each render's own entry read (the chart's record is the next test's)
    [entry] = (tmp_path / "cache" / "kustomize").glob("helm-*.out")
    data = entry.read_bytes()
    if tamper == "output":  # a privileged container slipped in: the header's hash no longer matches
        entry.write_bytes(data.replace(b"allowPrivilegeEscalation: false", b"privileged: true"))
    elif tamper == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif tamper == "renamed":  # another chart's render under this key
        (folder / "values.yaml").write_text((folder / "values.yaml").read_text().replace("limit: 2", "limit: 1"))
        lint(tmp_path, "charts", *cache)
        [other] = [e for e in (tmp_path / "cache" / "kustomize").glob("helm-*.out") if e != entry]
        (folder / "values.yaml").write_text((HELM / "trainer" / "values.yaml").read_text())
        entry.write_bytes(other.read_bytes())
    else:
        entry.write_bytes(data.split(b"\n", 3)[3])  # the bare output, as entries were kept before
    calls: list[int] = []
    real = helm_sdk.render_many
    monkeypatch.setattr(helm_sdk, "render_many", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = lint(tmp_path, "charts", *cache)[1]
    assert calls == [1] and again == first


# -- the chart record: an unchanged chart's renders and maps in one read ---------------------------

def test_a_warm_run_of_an_unchanged_chart_reads_its_record_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.sources import helm

    chart(tmp_path, "inference")
    chart(tmp_path, "stack")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts", *cache)[1]
    read: list[str] = []
    monkeypatch.setattr(helm, "from_cache", lambda key, data: read.append(key))  # a render's own entry
    monkeypatch.setattr(helm_sdk, "render_many", lambda *a, **k: read.append("rendered"))
    monkeypatch.setattr(helm, "_read_template", lambda *a: read.append("template"))
    monkeypatch.setattr(helm, "_READ", {})
    assert lint(tmp_path, "charts", *cache)[1] == first and read == [] and where(first)


CHANGES = {  # what a render reads, or how it is made: each change is another record
    "template": ("charts/inference/templates/deployment.yaml", lambda t: "{{- /* moved */}}\n" + t),
    "helper": ("charts/guarded/templates/_helpers.tpl", lambda t: t.replace("Version }}", "Version }}-x")),
    "values": ("charts/inference/values.yaml", lambda t: t.replace("tag: latest", "tag: 1.2.3")),
    "ci values": ("charts/inference/ci/two-gpu-values.yaml", lambda t: t.replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 3")),
    "subchart": ("charts/stack/charts/cache/templates/deployment.yaml", lambda t: "{{- /* moved */}}\n" + t),
    "Chart.yaml": ("charts/inference/Chart.yaml", lambda t: t.replace("name: inference", "name: server")),
    ".helmignore": ("charts/inference/.helmignore", lambda t: "templates/batch.yaml\n"),
    "namespace": (".mlops-lint.yaml", lambda t: "helm: {namespace: serving}\n"),
    "release name": (".mlops-lint.yaml", lambda t: "helm: {release-name: other}\n"),
    "set": (".mlops-lint.yaml", lambda t: "helm: {set: [image.tag=2.0.0]}\n"),
    "values file": (".mlops-lint.yaml", lambda t: "helm: {values: [../../extra.yaml]}\n"),
    "kubernetes-version": (".mlops-lint.yaml", lambda t: "kubernetes-version: '1.29'\n"),
    "project CRD": ("crds/widget.yaml", lambda t: WIDGET_CRD),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_any_change_to_what_a_render_reads_is_linted_fresh(tmp_path: Path, change: str) -> None:
    """Each change of a file a chart's render reads, or of its settings, gives the findings a
    run without the cache gives (never the chart's record of before), and changes them."""
    chart(tmp_path, "inference")
    chart(tmp_path, "stack")
    widgets = gated(tmp_path / "charts")  # renders its privileged Pod when the cluster serves Widgets
    shutil.move(widgets, tmp_path / "charts" / "widgets")
    guarded = tmp_path / "charts" / "guarded"  # its image names the release, its namespace and the cluster's version
    (guarded / "templates").mkdir(parents=True)
    (guarded / "Chart.yaml").write_text("apiVersion: v2\nname: guarded\nversion: 0.1.0\n")
    (guarded / "templates" / "_helpers.tpl").write_text(
        '{{- define "guarded.tag" -}}{{ .Capabilities.KubeVersion.Version }}{{- end -}}\n')
    (guarded / "templates" / "pod.yaml").write_text(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: a\n"
        '    image: "myacr.azurecr.io/{{ .Release.Name }}/{{ .Release.Namespace }}:{{ include \"guarded.tag\" . }}"\n')
    (tmp_path / "extra.yaml").write_text("image:\n  tag: 3.0.0\n")
    (tmp_path / ".mlops-lint.yaml").write_text("")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    before = lint(tmp_path, ".", *cache)[1]
    assert lint(tmp_path, ".", *cache)[1] == before  # warm
    name, edit = CHANGES[change]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(edit(path.read_text() if path.exists() else ""))
    after = lint(tmp_path, ".", *cache)[1]
    assert after == lint(tmp_path, ".", "--no-cache")[1]
    assert [(f["path"], f["line"], f["rule"], f["message"]) for f in after["findings"]] != [
        (f["path"], f["line"], f["rule"], f["message"]) for f in before["findings"]]
    assert lint(tmp_path, ".", *cache)[1] == after  # and warm again


def test_a_rule_selection_is_another_run(tmp_path: Path) -> None:
    chart(tmp_path, "inference")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    every = lint(tmp_path, "charts", *cache)[1]
    only = lint(tmp_path, "charts", *cache, "--select", "SEC004")[1]
    assert {f["rule"] for f in only["findings"]} == {"SEC004"} < {f["rule"] for f in every["findings"]}
    assert only == lint(tmp_path, "charts", "--no-cache", "--select", "SEC004")[1]


@pytest.mark.parametrize("tamper", ["flipped", "truncated", "empty", "renamed", "sizes", "count", "meta", "link",
                                    "folder"])
def test_a_chart_record_that_does_not_check_is_a_miss(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      tamper: str) -> None:
    """A corrupt, truncated, misnamed or ill-shaped record, or a link (whatever it points at), is
    a miss: the renders come from their own entries, and nothing of the record is used."""
    folder = chart(tmp_path, "inference")
    other = chart(tmp_path, "trainer")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, "charts/inference", *cache)[1]
    [entry] = (tmp_path / "cache" / "kustomize").glob("helmchart-*.out")
    meta, outputs = record(entry)
    lint(tmp_path, "charts/trainer", "--cache-dir", str(tmp_path / "elsewhere"))
    [moved] = (tmp_path / "elsewhere" / "kustomize").glob("helmchart-*.out")
    data = entry.read_bytes()
    privileged = outputs.replace(b"privileged: true", b"privileged: false")  # a finding less, were it used
    assert privileged != outputs
    if tamper == "flipped":  # the hash no longer matches
        entry.write_bytes(data.replace(b"privileged: true", b"privileged: fals", 1))
    elif tamper == "truncated":
        entry.write_bytes(data[:len(data) // 2])
    elif tamper == "empty":
        entry.write_bytes(b"")
    elif tamper == "renamed":  # another chart's record under this key
        entry.write_bytes(moved.read_bytes())
    elif tamper == "sizes":  # sizes that do not add up to the outputs' (a byte more)
        write_record(entry, json.dumps({**meta, "sizes": [meta["sizes"][0] + 1, meta["sizes"][1]]}).encode(), outputs)
    elif tamper == "count":  # one render for two
        write_record(entry, json.dumps({**meta, "sizes": [len(outputs)]}).encode(), outputs)
    elif tamper == "meta":
        write_record(entry, b'{"sizes": "all", "maps": []}', outputs)
    elif tamper == "link":  # a record that would pass every check, reached through a link: never followed
        target = tmp_path / "planted" / entry.name
        target.parent.mkdir()
        sizes = [size - (len(outputs) - len(privileged)) if number == 0 else size
                 for number, size in enumerate(meta["sizes"])]
        write_record(target, json.dumps({**meta, "sizes": sizes}).encode(), privileged)
        entry.unlink()
        entry.symlink_to(target)
    else:  # a folder under the record's name
        entry.unlink()
        entry.mkdir()
    calls: list[int] = []
    real = helm_sdk.render_many
    monkeypatch.setattr(helm_sdk, "render_many", lambda *a, **k: calls.append(1) or real(*a, **k))
    again = lint(tmp_path, "charts/inference", *cache)[1]
    assert again == first and calls == []  # each render's own entry checked and used
    if tamper == "link":  # the planted file left as it was: never written through
        assert record(target)[1] == privileged and (entry.is_symlink() or record(entry)[1] == outputs)
    assert lint(tmp_path, "charts/inference", "--no-cache")[1] == first
    assert folder.exists() and other.exists()


def test_a_project_that_finished_as_before_is_not_mapped_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fully warm run of charts, each with its record, restores the project's finished run (the
    findings at the template lines, after suppressions, the notes and statuses) in one read."""
    from mlops_lint.sources import helm

    chart(tmp_path, "inference")
    chart(tmp_path, "stack")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    first = lint(tmp_path, ".", *cache)[1]
    mapped: list[int] = []
    real = helm.remap
    monkeypatch.setattr(helm, "remap", lambda *a: mapped.append(1) or real(*a))
    assert lint(tmp_path, ".", *cache)[1] == first and mapped == []
    assert first == lint(tmp_path, ".", "--no-cache")[1] and where(first) and first["notes"]
    # a template whose output is the same, its lines moved: another record, so another finished run
    job = tmp_path / "charts" / "inference" / "templates" / "deployment.yaml"
    job.write_text("{{- /* moved */}}\n" + job.read_text())
    moved = lint(tmp_path, ".", *cache)[1]
    assert mapped and moved == lint(tmp_path, ".", "--no-cache")[1] != first


def test_a_finished_run_is_not_kept_past_the_day_a_suppression_expires(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """What a finished run keeps is after its suppressions, and an `until=` one stops applying
    after its day: the next day's warm run must not restore yesterday's suppressed finding."""
    from datetime import date

    from mlops_lint import suppress

    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "chart" / "values.yaml").write_text("image: nginx:1.27\n")
    (tmp_path / "chart" / "templates" / "pod.yaml").write_text(
        POD_TEMPLATE.format(comment="# mlops-lint: disable=IMG002 until=2027-03-01 pinned by the release pipeline"))
    args = ["chart", "--select", "IMG002,LNT003", "--cache-dir", str(tmp_path / "cache")]
    monkeypatch.setattr(suppress, "today_utc", lambda: date(2027, 3, 1))
    assert where(lint(tmp_path, *args)[1]) == [] and where(lint(tmp_path, *args)[1]) == []  # cold, then finished
    monkeypatch.setattr(suppress, "today_utc", lambda: date(2027, 3, 2))
    assert sorted(where(lint(tmp_path, *args)[1])) == [("chart/templates/pod.yaml", 8, 5, "LNT003"),
                                                       ("chart/templates/pod.yaml", 9, 5, "IMG002")]


@pytest.mark.parametrize("tamper", ["statuses", "status", "findings"])
def test_a_finished_run_that_does_not_check_is_a_miss(tmp_path: Path, tamper: str) -> None:
    from mlops_lint import cachedata

    chart(tmp_path, "inference")
    cache = tmp_path / "cache"
    first = lint(tmp_path, ".", "--cache-dir", str(cache))[1]
    [entry] = cache.glob("run-*.cache")
    payload = cachedata.loads(entry.read_bytes())
    [key] = [key for key in payload["projects"] if key.startswith("finished-")]
    if tamper == "statuses":
        payload["projects"][key]["statuses"] = ["linted"]
    elif tamper == "status":
        payload["projects"][key]["statuses"]["charts/inference/values.yaml"] = 1
    else:
        payload["projects"][key]["findings"] = {"results": []}
    entry.write_bytes(cachedata.dumps(payload))
    assert lint(tmp_path, ".", "--cache-dir", str(cache))[1] == first


def test_a_finished_run_decodes_no_outcome_and_keeps_every_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A finished project's files' outcomes are neither decoded nor dropped: the run file stays
    as it is, and when another project of the run changes, they are written with its new ones."""
    from mlops_lint import cache as result_cache, cachedata

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".mlops-lint.yaml").write_text("helm: {enabled: auto}\n")
        (tmp_path / name / "cm.yaml").write_text(f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n")
    shutil.copytree(HELM / "inference", tmp_path / "a" / "inference")
    decoded: list[int] = []
    real = result_cache._decode_outcomes
    monkeypatch.setattr(result_cache, "_decode_outcomes", lambda *a: decoded.append(1) or real(*a))
    alone = tmp_path / "alone"
    first = lint(tmp_path, "a", "--cache-dir", str(alone))[1]
    [run] = alone.glob("run-*.cache")
    data, decoded[:] = run.read_bytes(), []
    assert lint(tmp_path, "a", "--cache-dir", str(alone))[1] == first and decoded == [] and run.read_bytes() == data

    cache = tmp_path / "cache"
    args = ["a", "b", "--cache-dir", str(cache)]

    def entries() -> set[str]:
        [run] = cache.glob("run-*.cache")
        return set(cachedata.loads(run.read_bytes())["files"])

    lint(tmp_path, *args)
    kept = entries()
    (tmp_path / "b" / "cm.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: changed\n")
    changed = lint(tmp_path, *args)[1]  # a finished as before, b linted again: the run file written anew
    assert changed == lint(tmp_path, "a", "b", "--no-cache")[1]
    after = entries()
    assert len(after) == len(kept) and len(kept - after) == 1  # b's file under its new key, a's all kept
    assert lint(tmp_path, *args)[1] == changed


MONITOR = ("apiVersion: monitoring.coreos.com/v1\nkind: PodMonitor\nmetadata:\n  name: servers\n  namespace: default\n"
           "spec:\n  selector:\n    matchLabels:\n      app.kubernetes.io/name: server\n"
           "  podMetricsEndpoints:\n  - port: metrics\n")


def test_a_project_rule_sees_the_rendered_objects_warm(tmp_path: Path) -> None:
    """OBS001 (a PROJECT rule) judges a plain PodMonitor against the pods a chart renders: its
    finding stays on a warm run, on one that lints another file again (the index then holds the
    renders, from the chart's record), and goes when the chart's pods take the selected label."""
    folder = chart(tmp_path, "inference")
    (tmp_path / "monitor.yaml").write_text(MONITOR)
    cache = ["--cache-dir", str(tmp_path / "cache")]

    def monitors(report: dict) -> list[tuple[str, int]]:
        return [(f["path"], f["line"]) for f in report["findings"] if f["rule"] == "OBS001"]

    cold = lint(tmp_path, ".", *cache)[1]
    assert monitors(cold) == [("monitor.yaml", 7)]
    assert lint(tmp_path, ".", *cache)[1] == cold
    (tmp_path / "other.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
    assert monitors(lint(tmp_path, ".", *cache)[1]) == [("monitor.yaml", 7)]
    chart_yaml = folder / "Chart.yaml"
    chart_yaml.write_text(chart_yaml.read_text().replace("name: inference", "name: server"))
    assert monitors(lint(tmp_path, ".", *cache)[1]) == [] == monitors(lint(tmp_path, ".", "--no-cache")[1])


# -- the project's CRDs are API versions of the render ------------------------------------------

WIDGET_CRD = ("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
              "  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n"
              "  scope: Namespaced\n  versions:\n  - name: v1alpha1\n    served: false\n    storage: false\n"
              "  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n")
GATED = ('{{- if .Capabilities.APIVersions.Has "@API@" }}\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n'
         "  containers:\n  - name: a\n    image: mcr.microsoft.com/x:1.0\n    securityContext:\n"
         "      privileged: true\n{{- end }}\n")


def gated(tmp_path: Path, api: str = "example.com/v1/Widget") -> Path:
    folder = tmp_path / "c"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (folder / "templates" / "pod.yaml").write_text(GATED.replace("@API@", api))
    return folder


@pytest.mark.parametrize("api", ["example.com/v1/Widget", "example.com/v1"])
@pytest.mark.parametrize("place", ["project", "chart", "subchart", "crd-paths", "nowhere", "served false",
                                   "a template", "values"])
def test_the_projects_crds_are_api_versions_of_the_render(tmp_path: Path, api: str, place: str) -> None:
    folder = gated(tmp_path, "example.com/v1alpha1" if place == "served false" else api)
    target = {"project": tmp_path / "deploy" / "crds.yaml", "chart": folder / "crds" / "widget.yaml",
              "subchart": folder / "charts" / "sub" / "crds" / "widget.yaml",
              "crd-paths": tmp_path / "cluster" / "widget.yaml", "served false": tmp_path / "deploy" / "crds.yaml",
              "a template": folder / "templates" / "crd.yaml", "values": folder / "values.yaml"}.get(place)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("---\n" + WIDGET_CRD if place != "values" else "crd:\n" + "".join(
            "  " + line + "\n" for line in WIDGET_CRD.splitlines()))
    if place == "subchart":
        (folder / "charts" / "sub" / "Chart.yaml").write_text("apiVersion: v2\nname: sub\nversion: 0.1.0\n")
    if place == "crd-paths":
        (tmp_path / ".mlops-lint.yaml").write_text("crd-paths: [cluster/]\nexclude: ['^cluster/']\n")
    code, report = lint(tmp_path, ".", "--no-cache", "--select", "SEC004")
    seen = place in ("project", "chart", "subchart", "crd-paths")
    assert where(report) == ([("c/templates/pod.yaml", 11, 7, "SEC004")] if seen else [])


def test_a_charts_own_crds_reach_its_render_when_the_project_does_not_list_them(tmp_path: Path) -> None:
    from mlops_lint.sources import helm

    folder = gated(tmp_path)
    (folder / "crds").mkdir()
    (folder / "crds" / "widget.yaml").write_text(WIDGET_CRD)
    plan = helm.plan(str(folder), "c", {}, None, str(tmp_path), [])
    [(output, error)] = helm.render_plan(plan, ("sdk", None), 60, None)
    assert error is None and b"privileged: true" in output


def test_a_new_project_crd_renders_the_chart_again(tmp_path: Path) -> None:
    gated(tmp_path)
    cache = ["--cache-dir", str(tmp_path / "cache"), "--select", "SEC004"]
    assert where(lint(tmp_path, ".", *cache)[1]) == []
    (tmp_path / "crds.yaml").write_text(WIDGET_CRD)
    assert where(lint(tmp_path, ".", *cache)[1]) == [("c/templates/pod.yaml", 11, 7, "SEC004")]


def test_a_finding_naming_a_rendered_object_names_its_template_line(tmp_path: Path) -> None:
    folder = tmp_path / "crds-chart"
    (folder / "templates").mkdir(parents=True)
    (folder / "Chart.yaml").write_text("apiVersion: v2\nname: crds-chart\nversion: 0.1.0\n")
    (folder / "templates" / "crd.yaml").write_text(
        "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n"
        "  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n"
        "  scope: Namespaced\n  versions:\n  - name: v1alpha1\n    served: true\n    storage: false\n"
        "    deprecated: true\n    schema: {openAPIV3Schema: {type: object}}\n"
        "  - name: v1\n    served: true\n    storage: true\n    schema: {openAPIV3Schema: {type: object}}\n")
    (tmp_path / "widget.yaml").write_text("apiVersion: example.com/v1alpha1\nkind: Widget\nmetadata:\n  name: w\n")
    code, report = lint(tmp_path, ".", "--no-cache")
    [finding] = [f for f in report["findings"] if f["rule"] == "SCH003"]
    assert finding["path"] == "widget.yaml"
    assert "(crds-chart/templates/crd.yaml:3)" in finding["message"] and "<helm" not in finding["message"]


def test_a_chart_past_its_time_does_not_stop_the_others(tmp_path: Path) -> None:
    slow = hostile(tmp_path, CM + SLOW)
    slow.rename(tmp_path / "a-slow")
    chart(tmp_path, "trainer", "helm: {timeout: 1}\n")
    code, report = lint(tmp_path, ".", "--no-cache")
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [
        ("a-slow/Chart.yaml", "SCH001"), ("charts/trainer/templates/job.yaml", "GPU005"),
        ("charts/trainer/templates/job.yaml", "GPU003")]
    assert "did not finish in 1 s" in report["findings"][0]["message"]


def test_one_changed_template_renders_only_its_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    chart(tmp_path, "trainer")
    chart(tmp_path, "inference")
    rendered: list[str] = []
    real = helm_sdk.render_many

    def recorded(charts, *args, **kwargs):
        rendered.extend(files.folder for files, _ in charts)
        return real(charts, *args, **kwargs)

    monkeypatch.setattr(helm_sdk, "render_many", recorded)
    code, report = lint(tmp_path, "charts/trainer/templates/job.yaml", "--no-cache")
    assert [os.path.basename(folder) for folder in rendered] == ["trainer"]
    assert where(report) == [("charts/trainer/templates/job.yaml", 33, 13, "GPU005"),
                             ("charts/trainer/templates/job.yaml", 37, 13, "GPU003")]


def test_the_readme_shows_a_real_output(tmp_path: Path) -> None:
    readme = (REPO / "README.md").read_text()
    command = "mlops-lint charts/inference --select SEC004,GPU003"
    shown = readme.split(f"{command}\n```\n\n```text\n", 1)[1].split("```", 1)[0]
    chart(tmp_path, "inference")
    old = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = CliRunner().invoke(main, [*command.split()[1:], "--no-cache", "--no-color"], catch_exceptions=False)
    finally:
        os.chdir(old)
    assert result.output == shown


@pytest.mark.parametrize("bundled", [True, False])
def test_the_bundled_crds_are_api_versions_the_render_sees(tmp_path: Path, bundled: bool) -> None:
    folder = hostile(tmp_path, '{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1/ServiceMonitor" }}\n'
                               "apiVersion: monitoring.coreos.com/v1\nkind: ServiceMonitor\nmetadata:\n  name: m\n"
                               "spec:\n  selector: {}\n  endpoints: [{port: metrics}]\n{{- end }}\n")
    from mlops_lint.sources import helm

    plan = helm.plan(str(folder), "c", {}, None, str(tmp_path), helm.api_versions(bundled))
    [(output, error)] = helm.render_plan(plan, ("sdk", None), 60, None)
    assert error is None and (b"kind: ServiceMonitor" in output) is bundled


def test_helmignore_leaves_files_out_as_helm_does(tmp_path: Path) -> None:
    folder = hostile(tmp_path, CM + '  a: {{ .Files.Get "data/big.bin" | len | quote }}\n'
                                    '  b: {{ .Files.Get "keep.txt" | quote }}\n')
    (folder / "data").mkdir()
    (folder / "data" / "big.bin").write_bytes(b"x" * 1000)
    (folder / "keep.txt").write_text("kept")
    (folder / "templates" / "ignored.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    (folder / "templates" / ".hidden.yaml").write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: h}\n")
    (folder / ".helmignore").write_text("# comment\ndata/\ntemplates/ignored.yaml\n*.txt\n!keep.txt\n")
    from mlops_lint.sources import helm

    plan = helm.plan(str(folder), "c", {}, None, str(tmp_path))
    [(output, error)] = helm.render_plan(plan, ("sdk", None), 60, None)
    assert error is None and b'a: "0"' in output and b'b: "kept"' in output
    assert b"kind: Pod" not in output  # templates/ignored.yaml by the rule, .hidden.yaml by Helm's default


def test_the_binary_does_not_render_a_chart_with_links(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = hostile(tmp_path, CM + '  a: "1"\n')
    (folder / "linked.txt").symlink_to("/etc/hostname")
    ran = tmp_path / "ran"
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "helm").write_text(f"#!/bin/sh\ntouch {ran}\n")
    (bin_folder / "helm").chmod(0o755)
    monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}/usr/bin:/bin")
    code, report = lint(tmp_path, "c", "--no-cache")
    assert not ran.exists()
    assert [(f["path"], f["rule"]) for f in report["findings"]] == [("c/Chart.yaml", "SCH001")]
    assert "would follow its links (linked.txt)" in report["findings"][0]["message"]


def test_a_render_s_sources_are_found_on_the_lines_splitlines_gives() -> None:
    """HelmMapper finds each ``# Source:`` without splitting the render when its lines end only at
    \\n; a render with another line break (\\r\\n, U+2028 inside a value) is numbered as
    ``str.splitlines`` numbers it, which is what the YAML reader's positions are checked against."""
    from mlops_lint.sources.helm import HelmMapper

    plain = HelmMapper("---\n# Source: c/templates/a.yaml  \nkind: A\n---\n# Source: c/templates/b.yaml\nkind: B", None, "/")
    assert (plain.sources, plain.count) == ([(2, "c/templates/a.yaml"), (5, "c/templates/b.yaml")], 6)
    crlf = HelmMapper("---\r\n# Source: c/templates/a.yaml\r\nkind: A\r\n", None, "/")
    assert (crlf.sources, crlf.count) == ([(2, "c/templates/a.yaml")], 3)
    separator = HelmMapper("a: \u2028b\n# Source: c/templates/a.yaml\nkind: A\n", None, "/")
    assert (separator.sources, separator.count) == ([(3, "c/templates/a.yaml")], 4)
    assert separator.count == len(separator.lines)


def test_the_templates_folders_rendered_are_told_by_the_chart_files(tmp_path: Path) -> None:
    """The subcharts whose templates a render covers come from the files given to Helm (no
    folder looked at again); a subchart whose Chart.yaml is a link is not given to Helm, so its
    templates are not counted as rendered."""
    from mlops_lint.sources.helm import templates_folders

    chart = tmp_path / "stack"
    shutil.copytree(HELM / "stack", chart)
    folder = os.fspath(chart)
    assert sorted(templates_folders(folder, helm_sdk.ChartFiles(folder))) == sorted(templates_folders(folder)) == [
        os.path.join(folder, "charts", "cache", "templates"), os.path.join(folder, "templates")]
    outside = tmp_path / "Chart.yaml"
    outside.write_bytes((chart / "charts" / "cache" / "Chart.yaml").read_bytes())
    (chart / "charts" / "cache" / "Chart.yaml").unlink()
    (chart / "charts" / "cache" / "Chart.yaml").symlink_to(outside)
    assert templates_folders(folder, helm_sdk.ChartFiles(folder)) == [os.path.join(folder, "templates")]


# -- suppression comments in templates -------------------------------------------------------------

POD_TEMPLATE = """\
apiVersion: v1
kind: Pod
metadata:
  name: p
spec:
  containers:
  - name: c
    {comment}
    image: {{{{ .Values.image }}}}
"""


@pytest.mark.parametrize("cache", [["--no-cache"], []])
def test_a_suppression_on_its_own_line_above_a_template_line_applies(tmp_path: Path, cache: list[str]) -> None:
    # an own-line comment covers the next line: in a render it was placed by the first key after
    # it (`spec:`), so it covered the wrong template line and suppressed nothing; an unused or
    # expired one was reported at `spec:` (5:1) naming the render's line
    (tmp_path / "chart" / "templates").mkdir(parents=True)
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (tmp_path / "chart" / "values.yaml").write_text("image: nginx:1.27\n")
    pod = tmp_path / "chart" / "templates" / "pod.yaml"
    args = ["--cache-dir", str(tmp_path / "cache")] if not cache else cache
    pod.write_text(POD_TEMPLATE.format(comment="# mlops-lint: disable=IMG002 pinned by the release pipeline"))
    _, report = lint(tmp_path, "chart", "--select", "IMG002,LNT001", *args)
    assert where(report) == []
    assert [(f["line"], f["rule"]) for f in report["findings"] if f["suppressed"]] == [(9, "IMG002")]
    pod.write_text(POD_TEMPLATE.format(comment="# mlops-lint: disable=GPU001 no GPU here"))
    _, report = lint(tmp_path, "chart", "--select", "GPU001,LNT001", *args)
    assert where(report) == [("chart/templates/pod.yaml", 8, 5, "LNT001")]
    assert "comment at line 8 suppressed no GPU001 finding" in report["findings"][0]["message"]
    pod.write_text(POD_TEMPLATE.format(comment="# mlops-lint: disable=IMG002 until=2020-01-01 old"))
    _, report = lint(tmp_path, "chart", "--select", "IMG002,LNT003", *args)
    assert sorted(where(report)) == [("chart/templates/pod.yaml", 8, 5, "LNT003"),
                                     ("chart/templates/pod.yaml", 9, 5, "IMG002")]
