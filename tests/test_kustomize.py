"""Kustomize roots linted as built (fixtures/kustomize), findings mapped back to the line to edit.

The build needs `kustomize` or `kubectl` on PATH (kubectl is on the project's machines and CI);
the tests that build skip, saying so, only where neither is found. The raw fallback is tested
with PATH emptied."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.engine import kustomize as kb
from mlops_lint.sources import kustomize as kz

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "fixtures" / "kustomize"
COMMAND = kb.find_command()
needs_build = pytest.mark.skipif(COMMAND is None, reason="neither kustomize nor kubectl is on PATH: nothing to build with")


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


@pytest.fixture
def project(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "k")
    return tmp_path


def tree_digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_roots_are_the_kustomizations_nothing_names() -> None:
    files = [(str(p), str(p.relative_to(REPO))) for p in sorted(FIXTURE.rglob("*")) if p.is_file()]
    roots = kz.find_roots(files)
    assert [root.display for root in roots] == [f"fixtures/kustomize/overlays/{name}/kustomization.yaml"
                                               for name in ("dev", "prod", "staging")]
    prod = roots[1]
    assert [Path(k.path).parent.name for k in prod.chain] == ["base", "gpu-pool", "prod"]
    assert {Path(p).name for p in prod.inputs} == {"kustomization.yaml", "job.yaml", "gpu-placement.yaml",
                                                    "gpu-limit.yaml"}


@needs_build
def test_overlays_are_linted_as_built(project: Path) -> None:
    before = tree_digest(project)
    code, report = lint(project, "k", "--no-cache")
    # staging: the component adds the toleration and selector the base lacks, so nothing; dev:
    # the inline JSON 6902 patch removes the GPU; prod: its patch limits 2 GPUs against 1 requested
    assert where(report) == [("k/overlays/prod/gpu-limit.yaml", 12, 29, "GPU003")]
    finding = report["findings"][0]
    assert finding["message"].endswith("(after overlay k/overlays/prod)")
    assert finding["built_from"] == "k/overlays/prod/kustomization.yaml"
    assert finding["object"] == {"kind": "Job", "namespace": "ml-training", "name": "prod-train"}
    assert code == 1
    assert tree_digest(project) == before  # nothing written into the user's tree
    # the base and its patches are not also read as whole objects (so not "defined differently")
    assert report["notes"] == []


@needs_build
def test_a_base_alone_warns_where_the_overlay_fixes_it(tmp_path: Path) -> None:
    shutil.copytree(FIXTURE / "base", tmp_path / "base")
    _, report = lint(tmp_path, "base", "--no-cache")
    assert where(report) == [("base/job.yaml", 11, 5, "GPU006"), ("base/job.yaml", 35, 13, "GPU005")]
    assert all(f["message"].endswith("(as kustomize builds base)") for f in report["findings"])


@needs_build
def test_a_base_in_its_project_gets_the_findings_of_the_overlays(project: Path) -> None:
    # the project is the whole copy: the base is built through the overlays that pull it in
    _, report = lint(project, "k/base", "--no-cache")
    assert where(report) == [("k/overlays/prod/gpu-limit.yaml", 12, 29, "GPU003")]


@needs_build
def test_a_staged_base_file_gets_the_findings_of_the_roots_that_pull_it_in(project: Path) -> None:
    (project / ".mlops-lint.yaml").write_text("profile: aks-standard\n")
    _, report = lint(project, "k/overlays/prod/gpu-limit.yaml", "--no-cache")
    assert where(report) == [("k/overlays/prod/gpu-limit.yaml", 12, 29, "GPU003")]


@needs_build
def test_suppression_comments_in_the_source_files_apply(project: Path) -> None:
    patch = project / "k" / "overlays" / "prod" / "gpu-limit.yaml"
    patch.write_text(patch.read_text().replace("nvidia.com/gpu: 2",
                                               "nvidia.com/gpu: 2  # mlops-lint: disable=GPU003 two for the test"))
    _, report = lint(project, "k", "--no-cache")
    assert where(report) == []
    assert [(f["rule"], f["suppressed"]) for f in report["findings"]] == [("GPU003", True)]


@needs_build
def test_sarif_names_the_root(project: Path) -> None:
    old = Path.cwd()
    os.chdir(project)
    try:
        result = CliRunner().invoke(main, ["k", "--no-cache", "--format", "sarif"], catch_exceptions=False)
    finally:
        os.chdir(old)
    (found,) = json.loads(result.output)["runs"][0]["results"]
    assert found["ruleId"] == "GPU003"
    assert found["properties"]["builtFrom"] == "k/overlays/prod/kustomization.yaml"
    assert found["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "k/overlays/prod/gpu-limit.yaml"


def test_never_lints_raw(project: Path) -> None:
    (project / ".mlops-lint.yaml").write_text("kustomize: {enabled: never}\n")
    _, report = lint(project, "k", "--no-cache")
    found = where(report)
    assert ("k/base/job.yaml", 11, 5, "GPU006") in found and ("k/base/job.yaml", 35, 13, "GPU005") in found
    assert ("k/overlays/prod/gpu-limit.yaml", 12, 13, "GPU002") in found  # the patch read as a whole object
    assert not [n for n in report["notes"] if "kustomize" in n["message"]]
    assert not any("built_from" in f for f in report["findings"])


def test_without_a_command_files_are_linted_raw_with_a_note_per_root(project: Path) -> None:
    env = {**os.environ, "PATH": str(project / "no-such-folder"), "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "mlops_lint", "k", "--no-cache", "--format", "json"], cwd=project,
                          env=env, capture_output=True, check=False)
    report = json.loads(done.stdout)
    notes = [n for n in report["notes"] if n["message"].startswith("kustomize")]
    assert [(n["path"], n["message"].split(":")[0]) for n in notes] == [
        (f"k/overlays/{name}/kustomization.yaml", "kustomize build not run") for name in ("dev", "prod", "staging")]
    assert "no kustomize or kubectl found on PATH" in notes[0]["message"]
    assert ("k/base/job.yaml", 35, 13, "GPU005") in where(report)
    # a patch is not a whole object: linted as one, every field it leaves to its base was a finding
    patches = ("k/components/gpu-pool/gpu-placement.yaml", "k/overlays/prod/gpu-limit.yaml")
    assert not [f for f in where(report) if f[0] in patches]
    assert notes[1]["message"].endswith(f", except its patch files ({', '.join(patches)}) are not linted "
                                        "as whole objects: a patch sets only what it changes")


SMP = ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n"
       "      containers:\n      - name: web\n        env: [{name: A, value: b}]\n")


@needs_build
def test_the_patches_of_a_failed_build_are_not_linted_as_whole_objects(tmp_path: Path) -> None:
    # kubeflow/kueue-style overlays whose build fails here: their strategic merge patches used to
    # be linted as Deployments of their own (RES001, RES002, SEC001-SEC003 on a patch that sets an
    # env var) and indexed as second definitions of the base's object
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text(
        "resources:\n- missing.yaml\n- deploy.yaml\npatches:\n- path: env.yaml\n")
    (tmp_path / "app" / "env.yaml").write_text(SMP)
    (tmp_path / "app" / "deploy.yaml").write_text(SMP.replace("  template:", "  replicas: 1\n  template:"))
    code, report = lint(tmp_path, "app", "--no-cache")
    found = {(path, rule) for path, _, _, rule in where(report)}
    assert ("app/kustomization.yaml", "SCH001") in found  # the failed build
    assert not [f for f in found if f[0] == "app/env.yaml"], found
    assert {"RES001", "SEC001"} <= {rule for path, rule in found if path == "app/deploy.yaml"}  # a resource: as written
    (note,) = [n for n in report["notes"] if "patch files" in n["message"]]
    assert (note["path"], note["message"].split(",")[0]) == ("app/kustomization.yaml", "the build failed")
    assert "(app/env.yaml)" in note["message"]
    assert not [n for n in report["notes"] if "defined differently" in n["message"]]  # not a second definition
    assert code == 1


def test_always_without_a_command_is_an_error_per_root(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(project / "no-such-folder"))
    (project / ".mlops-lint.yaml").write_text("kustomize: {enabled: always}\n")
    code, report = lint(project, "k", "--no-cache")
    errors = [(f["path"], f["rule"]) for f in report["findings"] if "kustomize.enabled is always" in f["message"]]
    assert errors == [(f"k/overlays/{name}/kustomization.yaml", "SCH001") for name in ("dev", "prod", "staging")]
    assert code == 1


@needs_build
def test_a_failed_build_is_one_sch001_with_kustomizes_message(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text("resources:\n- missing.yaml\n")
    code, report = lint(tmp_path, "app", "--no-cache")
    (finding,) = report["findings"]
    assert (finding["path"], finding["line"], finding["rule"]) == ("app/kustomization.yaml", 1, "SCH001")
    assert finding["message"].startswith("kustomize build failed: ")
    assert "missing.yaml" in finding["message"] and "mlops-lint-kustomize" not in finding["message"]
    assert code == 1


def test_a_remote_base_is_not_built(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "kustomization.yaml").write_text(
        "resources:\n- https://github.com/example/repo//deploy?ref=v1.0.0\n- job.yaml\n")
    shutil.copy(FIXTURE / "base" / "job.yaml", tmp_path / "app" / "job.yaml")
    _, report = lint(tmp_path, "app", "--no-cache")
    (note,) = report["notes"]
    assert note["path"] == "app/kustomization.yaml"
    assert "remote base (https://github.com/example/repo//deploy?ref=v1.0.0)" in note["message"]
    assert ("app/job.yaml", 35, 13, "GPU005") in where(report)  # linted as it is


@needs_build
def test_builds_are_cached_by_their_inputs(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = project / "calls.log"
    (project / "bin").mkdir()
    stand_in = project / "bin" / "kustomize"  # a kustomize that counts its calls
    stand_in.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\nshift\nexec {' '.join(COMMAND)} \"$@\"\n")
    stand_in.chmod(0o755)
    monkeypatch.setenv(kb.PROGRAM_VARIABLE, str(stand_in))  # the user's choice of program, not the tree's
    cache = project / "cache"
    first = lint(project, "k", "--cache-dir", str(cache))
    assert len(log.read_text().splitlines()) == 3  # one build per root
    again = lint(project, "k", "--cache-dir", str(cache))
    assert len(log.read_text().splitlines()) == 3  # nothing built again
    assert again == first
    patch = project / "k" / "overlays" / "prod" / "gpu-limit.yaml"
    patch.write_text(patch.read_text().replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1"))
    _, changed = lint(project, "k", "--cache-dir", str(cache))
    assert len(log.read_text().splitlines()) == 4  # only the root whose input changed
    assert where(changed) == []


@needs_build
def test_output_is_the_same_across_jobs(project: Path) -> None:
    for index in range(8):
        shutil.copytree(FIXTURE, project / f"copy{index}")
    outputs = {jobs: lint(project, ".", "--no-cache", "--jobs", jobs) for jobs in ("1", "2")}
    assert outputs["1"] == outputs["2"]
    # the builds overlap the parse only without a cache: a cold cache's run gives the same report
    assert lint(project, ".", "--cache-dir", str(project / "cache"), "--jobs", "2") == outputs["1"]
    assert len(where(outputs["1"][1])) == 9


def held_stand_in(folder: Path, log: Path, gate: Path) -> Path:
    """A kustomize that logs when each build starts and ends, and holds each build until
    ``gate`` exists (10 s at most, then logs that it gave up)."""
    program = folder / "kustomize"
    program.write_text("#!/bin/sh\n"
                       f"echo start >> {log}\n"
                       f"i=0; while [ ! -e {gate} ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done\n"
                       f"if [ -e {gate} ]; then echo end >> {log}; else echo gave-up >> {log}; fi\n"
                       f"shift\nexec {' '.join(COMMAND)} \"$@\"\n")
    program.chmod(0o755)
    return program


def held_builds(project: Path, log: Path, gate: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[list, "Config"]:
    """The items of ``project``'s ``k`` folder and a config; the builds run :func:`held_stand_in`."""
    from mlops_lint.config import Config
    from mlops_lint.discover import SourceFile

    monkeypatch.setenv(kb.PROGRAM_VARIABLE, str(held_stand_in(project, log, gate)))
    config = Config()
    return [(SourceFile(p, "k8s"), str(p.relative_to(project))) for p in sorted((project / "k").rglob("*.yaml"))], config


@needs_build
def test_builds_beside_the_parse_run_while_the_caller_goes_on(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.engine import builds

    log, gate = project / "calls.log", project / "gate"
    items, config = held_builds(project, log, gate, monkeypatch)
    targets = {display for _, display in items}
    pending = builds.start(items, config, project, 2, None, targets, beside=True)
    deadline = time.monotonic() + 10
    while (log.read_text().split() if log.exists() else []) != ["start", "start"] and time.monotonic() < deadline:
        time.sleep(0.02)  # start returned; the two builds --jobs allows get under way, held
    assert log.read_text().split() == ["start", "start"]  # two at once, none done: the caller went on
    gate.touch()  # only now may they finish
    done = pending.result()
    calls = log.read_text().split()
    assert sorted(calls) == ["end"] * 3 + ["start"] * 3  # none gave up: all were held until the gate opened
    running = [calls[:i].count("start") - calls[:i].count("end") for i in range(len(calls) + 1)]
    assert max(running) == 2  # as many at once as --jobs
    assert sorted(done.mappers) == sorted(kb.virtual_path(root) for root in kz.find_roots(
        (str(source.path), display) for source, display in items))
    assert pending.result() is done  # waited for once


@needs_build
def test_builds_not_beside_are_done_when_start_returns(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.engine import builds

    log, gate = project / "calls.log", project / "gate"
    gate.touch()
    items, config = held_builds(project, log, gate, monkeypatch)
    builds.start(items, config, project, 2, None, {display for _, display in items})
    assert sorted(log.read_text().split()) == ["end"] * 3 + ["start"] * 3


# -- mapping back, piece by piece ---------------------------------------------------------------

def mapped(tmp_path: Path, files: dict[str, str], root: str, rule_line: str) -> tuple[str, int]:
    """Build ``root`` and map the position of the first built line holding ``rule_line``."""
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    listed = [(str(p), str(p.relative_to(tmp_path))) for p in sorted(tmp_path.rglob("*")) if p.is_file()]
    (found,) = [r for r in kz.find_roots(listed) if r.display == root]
    built = kb.build(found, COMMAND, 60)
    assert built.error is None, built.error
    from mlops_lint.sources.files import load_bytes

    document = load_bytes(built.output, "<built>", "k8s")
    origins = kb.strip_origins(document, built.wrapper)
    mapper = kb.Mapper(found, document, origins, {os.path.realpath(a): d for a, d in listed})
    lines = built.output.decode().splitlines()
    # the built text still holds the origin annotations: find the line in what was parsed
    number = next(i for i, line in enumerate(lines, 1) if rule_line in line)
    column = lines[number - 1].index(rule_line.strip()) + 1
    path, span = mapper.locate(kz.Span(number, column, number, column + 1))
    return path, span.line


JOB = (FIXTURE / "base" / "job.yaml").read_text()


@needs_build
def test_an_inline_json_patch_maps_into_the_kustomization(tmp_path: Path) -> None:
    kustomization = ("resources:\n- job.yaml\npatches:\n- target: {kind: Job}\n  patch: |-\n"
                     "    - op: add\n      path: /spec/activeDeadlineSeconds\n      value: 7\n")
    assert mapped(tmp_path, {"a/kustomization.yaml": kustomization, "a/job.yaml": JOB}, "a/kustomization.yaml",
                  "activeDeadlineSeconds: 7") == ("a/kustomization.yaml", 8)


@needs_build
def test_an_image_set_by_the_kustomization_maps_to_its_images_entry(tmp_path: Path) -> None:
    kustomization = ("resources:\n- job.yaml\nimages:\n- name: nvidia/cuda\n  newName: myacr.azurecr.io/cuda\n"
                     "  newTag: latest\n")
    assert mapped(tmp_path, {"a/kustomization.yaml": kustomization, "a/job.yaml": JOB}, "a/kustomization.yaml",
                  "image: myacr.azurecr.io/cuda:latest") == ("a/kustomization.yaml", 6)  # newTag


@needs_build
def test_a_generated_object_maps_to_its_generator(tmp_path: Path) -> None:
    kustomization = ("resources:\n- job.yaml\nconfigMapGenerator:\n- name: settings\n  literals: [A=1]\n")
    assert mapped(tmp_path, {"a/kustomization.yaml": kustomization, "a/job.yaml": JOB}, "a/kustomization.yaml",
                  "name: settings-") == ("a/kustomization.yaml", 4)


@needs_build
def test_a_node_the_base_has_maps_to_the_base(tmp_path: Path) -> None:
    files = {"base/kustomization.yaml": "resources:\n- job.yaml\n", "base/job.yaml": JOB,
             "prod/kustomization.yaml": "resources:\n- ../base\nnamePrefix: prod-\n"}
    assert mapped(tmp_path, files, "prod/kustomization.yaml", "memory: 16Gi") == ("base/job.yaml", 38)  # limits: first as built


# -- Helm: rendered output on stdin, mapped back to the chart's templates -------------------------

HELM = REPO / "fixtures" / "helm"


def lint_stdin(cwd: Path, data: bytes, *args: str) -> dict:
    old = Path.cwd()
    os.chdir(cwd)
    try:
        result = CliRunner().invoke(main, ["-", *args, "--format", "json", "--no-cache"], input=data,
                                    catch_exceptions=False)
    finally:
        os.chdir(old)
    return json.loads(result.output)


def test_rendered_helm_output_is_reported_at_the_templates(tmp_path: Path) -> None:
    shutil.copytree(HELM, tmp_path / "helm")
    rendered = (HELM / "helm-template-output.txt").read_bytes()  # `helm template trainer` as Helm prints it
    report = lint_stdin(tmp_path, rendered, "--stdin-filename", "helm/trainer")
    # the templated limit ({{ .Values.gpu.limit }}) is found by its key under `limits`; the
    # request's line is the template's own text
    assert where(report) == [("helm/trainer/templates/job.yaml", 33, 13, "GPU005"),
                             ("helm/trainer/templates/job.yaml", 37, 13, "GPU003")]
    assert report["findings"][1]["object"]["name"] == "release-name-trainer"


def test_rendered_helm_output_without_the_chart_names_the_source_path(tmp_path: Path) -> None:
    report = lint_stdin(tmp_path, (HELM / "helm-template-output.txt").read_bytes())
    assert {(path, line) for path, line, _, _ in where(report)} == {("trainer/templates/job.yaml", 1)}


def test_a_suppression_in_a_template_applies_to_the_rendered_object(tmp_path: Path) -> None:
    shutil.copytree(HELM, tmp_path / "helm")
    template = tmp_path / "helm" / "trainer" / "templates" / "job.yaml"
    comment = "  # mlops-lint: disable=GPU003 the test's own"
    template.write_text(template.read_text().replace("{{ .Values.gpu.limit }}", "{{ .Values.gpu.limit }}" + comment))
    rendered = (HELM / "helm-template-output.txt").read_text().replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 2" + comment)
    report = lint_stdin(tmp_path, rendered.encode(), "--stdin-filename", "helm/trainer")
    assert [(f["rule"], f["suppressed"]) for f in report["findings"]] == [("GPU005", False), ("GPU003", True)]


def stand_in_helm(folder: Path, log: Path) -> Path:
    """A `helm` that prints the recorded `helm template` output (Helm cannot be installed on the
    project's machines: this is how the rendering plumbing is tested)."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "helm"
    program.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\ncat {HELM / 'helm-template-output.txt'}\n")
    program.chmod(0o755)
    return program


def test_charts_are_rendered_with_helm_when_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the binary path: without Helm's SDK (the helm extra), a `helm` on PATH renders the chart
    from mlops_lint.sources import helm_sdk

    shutil.copytree(HELM / "trainer", tmp_path / "charts" / "trainer")
    (tmp_path / "charts" / "trainer" / "values-prod.yaml").write_text("gpu: {limit: 2}\n")
    (tmp_path / ".mlops-lint.yaml").write_text("helm: {enabled: auto, values: [values-prod.yaml], namespace: ml}\n")
    log = tmp_path / "helm.log"
    bin_folder = tmp_path / "bin"
    stand_in_helm(bin_folder, log)
    monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == [("charts/trainer/templates/job.yaml", 33, 13, "GPU005"),
                             ("charts/trainer/templates/job.yaml", 37, 13, "GPU003")]
    assert not report["notes"]  # the templates were linted: no "skipped" note, no "No files linted"
    assert report["summary"]["files"] >= 1
    chart = tmp_path / "charts" / "trainer"
    arguments = log.read_text().split()
    apis = [arguments[i + 1] for i, word in enumerate(arguments) if word == "--api-versions"]  # the bundled CRDs'
    assert "kueue.x-k8s.io/v1beta1" in apis
    assert [word for word in arguments if word != "--api-versions" and word not in apis] == [
        "template", "trainer", str(chart), "--namespace", "ml", "--skip-tests", "--values", str(chart / "values-prod.yaml")]


VALUES_JOB = ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  template:\n    spec:\n"
              "      containers:\n      - name: a\n        image: {{ .Values.image }}\n        env:\n"
              "        - name: NCCL_DEBUG\n          value: {{ .Values.nccl.debug }}\n")
# a `helm template NAME CHART ...` rendering VALUES_JOB from the chart folder's values.yaml as it is on disk
VALUES_HELM = (
    "#!/bin/sh\n"
    "debug=$(sed -n 's/^  debug: *\\([A-Za-z]*\\).*/\\1/p' \"$3/values.yaml\")\n"
    "printf -- '---\\n# Source: c/templates/job.yaml\\napiVersion: batch/v1\\nkind: Job\\nmetadata:\\n  name: c\\n"
    "spec:\\n  template:\\n    spec:\\n      containers:\\n      - name: a\\n        image: mcr.microsoft.com/x:1.0\\n"
    "        env:\\n        - name: NCCL_DEBUG\\n          value: %s\\n' \"$debug\"\n")


@pytest.mark.parametrize("cache", [False, True])
def test_a_values_fix_is_what_the_binarys_next_render_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            cache: bool) -> None:
    """--fix with `helm template` (no SDK): the values.yaml fix of the first pass, held in the fix
    overlay until the run ends, is what the next pass renders (a copy of the chart as the fixes
    left it), so the fixed finding is gone from the report; and the render cached under the fixed
    chart's key is the fixed chart's, so the next run does not bring the finding back."""
    from mlops_lint.sources import helm_sdk

    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 0.1.0\n")
    (chart / "values.yaml").write_text("nccl:\n  debug: INFO\nimage: mcr.microsoft.com/x:1.0\n")
    (chart / "templates" / "job.yaml").write_text(VALUES_JOB)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "helm").write_text(VALUES_HELM)
    (bin_folder / "helm").chmod(0o755)
    monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    options = ["--cache-dir", str(tmp_path / "cache")] if cache else ["--no-cache"]
    [finding] = lint(tmp_path, "c", "--select", "DST006", *options)[1]["findings"]
    assert (finding["path"], finding["line"], finding["autofix"]["edits"][0]["path"]) == (
        "c/templates/job.yaml", 13, "c/values.yaml")
    code, report = lint(tmp_path, "c", "--select", "DST006", "--fix", *options)
    assert (chart / "values.yaml").read_text() == "nccl:\n  debug: WARN\nimage: mcr.microsoft.com/x:1.0\n"
    assert (code, report["findings"]) == (0, [])
    assert lint(tmp_path, "c", "--select", "DST006", *options)[1]["findings"] == []


def test_without_helm_the_templates_are_skipped_with_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.sources import helm_sdk

    shutil.copytree(HELM / "trainer", tmp_path / "charts" / "trainer")
    monkeypatch.setattr(helm_sdk, "available", lambda: False)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    code, report = lint(tmp_path, "charts", "--no-cache")
    assert where(report) == []
    chart_notes = [n for n in report["notes"] if n["path"]]
    assert [n["message"].split(";")[0] for n in chart_notes] == ["Helm chart templates skipped"]
    assert 'pip install "mlops-lint[helm]"' in chart_notes[0]["message"]
    assert report["summary"]["files"] == 0 and any(n["path"] == "" for n in report["notes"])  # nothing linted, said


@needs_build
def test_a_hostile_kustomization_is_a_finding_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    shutil.copy(FIXTURE / "base" / "job.yaml", tmp_path / "a" / "job.yaml")
    (tmp_path / "a" / "kustomization.yaml").write_text(
        'resources: [job.yaml, 5, {x: 1}]\nimages: "x"\nnamespace: [1]\n'
        'patches:\n- {path: 5}\n- "str"\n- patch: "{{{"\n  target: {kind: Job, name: "(["}\n'
        'patchesStrategicMerge: [{}, "kind: Job"]\n'
        'configMapGenerator: [5, {files: [7, "a=nope"]}]\n')
    code, report = lint(tmp_path, "a", "--no-cache")
    errors = [(f["path"], f["line"], f["rule"]) for f in report["findings"] if f["rule"] == "SCH001"]
    assert errors == [("a/kustomization.yaml", 10, "SCH001")]  # at the field kustomize names
    assert "configMapGenerator" in report["findings"][0]["message"] or any(
        "configMapGenerator" in f["message"] for f in report["findings"])
    assert ("a/job.yaml", 35, 13, "GPU005") in where(report)  # not built: linted as it is
    assert code == 1


@needs_build
def test_an_annotation_in_the_base_suppresses_on_every_built_object(project: Path) -> None:
    job = project / "k" / "base" / "job.yaml"
    job.write_text(job.read_text().replace("  name: train\n", "  name: train\n  annotations:\n"
                                           "    ignore-check.mlops-lint.io/GPU003: the test's own\n", 1))
    _, report = lint(project, "k", "--no-cache")
    assert [(f["path"], f["line"], f["rule"], f["suppressed"]) for f in report["findings"]] == [
        ("k/overlays/prod/gpu-limit.yaml", 12, "GPU003", True)]


@pytest.mark.parametrize("command", [["sh", "-c", "touch pwned"], ["kubectl", "apply", "-k"],
                                     ["kustomize", "build", "--enable-exec"], ["./bin/kustomize", "build"],
                                     ["/usr/bin/kustomize", "build"], ["/proc/self/cwd/bin/kubectl", "kustomize"],
                                     ["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsNone"],
                                     ["kustomize", "build", "--load-restrictor=LoadRestrictionsNone"]])
def test_a_config_cannot_make_the_linter_run_another_program(project: Path, command: list[str]) -> None:
    (project / ".mlops-lint.yaml").write_text(f"kustomize: {{command: {json.dumps(command)}}}\n")
    code, report = lint(project, "k", "--no-cache")
    refused = [f for f in report["findings"] if f["message"].startswith("kustomize.command not run: ")]
    assert [f["path"] for f in refused] == [f"k/overlays/{name}/kustomization.yaml" for name in ("dev", "prod", "staging")]
    assert not (project / "pwned").exists()
    assert code == 1
