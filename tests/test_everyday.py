"""Issue 33 items 1, 10 and 11, issue 32 items 14 and 23: the everyday flows agree with each
other. Rule families and selectors, config keys, what a run that linted nothing says, the
pre-commit hook's files and arguments, files named on the command line."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from mlops_lint.cli import main
from mlops_lint.families import FAMILIES
from mlops_lint.registry import load_registry

REPO = Path(__file__).resolve().parents[1]
# ../shared/repros/trust/nothing-linted (a chart's files only), written out so that the test
# runs wherever the repository is checked out
CHART = {
    # a chart nothing renders here (with the Helm SDK installed, `auto` would render and lint it)
    ".mlops-lint.yaml": "profile: aks-standard\nhelm: {enabled: never}\n",
    "chart/Chart.yaml": "apiVersion: v2\nname: trainer\nversion: 0.1.0\n",
    "chart/templates/job.yaml": ("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n"
                                 "  template:\n    spec:\n      containers:\n      - name: t\n"
                                 "        image: {{ .Values.image }}\n"),
    "chart/values.yaml": "image: nvcr.io/nvidia/pytorch:24.05-py3\n",
}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root

POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
       "  - name: c\n    image: mcr.microsoft.com/x:1\n    resources:\n      requests: {nvidia.com/gpu: 1}\n")


def cli(args: list[str], cwd: Path, stdin: bytes | None = None) -> tuple[int, str, str]:
    """The command in ``cwd`` (``rules`` and ``explain`` without --no-cache): status, stdout, stderr."""
    import os

    old = os.getcwd()
    os.chdir(cwd)
    try:
        args = args if args[:1] in (["rules"], ["explain"]) else ["--no-cache", *args]
        result = CliRunner().invoke(main, args, input=stdin, catch_exceptions=False)
    finally:
        os.chdir(old)
    return result.exit_code, result.stdout, result.stderr


# --- item 11: families ------------------------------------------------------------------------

def test_every_built_in_rule_has_a_documented_family() -> None:
    registry = load_registry()
    families = {meta.code: meta.family for meta in registry.rules}
    assert set(families.values()) == set(FAMILIES)
    assert families["GPU001"] == "ml" and families["AKS001"] == "aks" and families["XPL001"] == "aks"
    assert families["SEC001"] == "k8s" and families["IMG002"] == "k8s" and families["RES001"] == "k8s"
    assert families["RES004"] == "ml" and families["IMG003"] == "ml" and families["DKR005"] == "ml"
    for meta in registry.rules:  # the page and explain name it
        page = (REPO / "docs" / "rules" / f"{meta.code}.md").read_text("utf-8")
        assert f"Family: {meta.family}" in page.splitlines()[2], meta.code


def test_select_and_ignore_take_families(tmp_path: Path) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    (tmp_path / "pod.yaml").write_text(POD)
    code, out, _ = cli(["--format", "json", "pod.yaml"], tmp_path)
    every = {f["rule"] for f in json.loads(out)["findings"]}
    assert {"GPU001", "SEC001", "IMG002"} <= every
    registry = load_registry()
    family = {meta.code: meta.family for meta in registry.rules}
    _, out, _ = cli(["--format", "json", "--select", "ml,aks", "pod.yaml"], tmp_path)
    signal = {f["rule"] for f in json.loads(out)["findings"]}
    assert signal == {rule for rule in every if family[rule] in ("ml", "aks")} and "GPU001" in signal
    _, out, _ = cli(["--format", "json", "--ignore", "k8s", "pod.yaml"], tmp_path)
    assert {f["rule"] for f in json.loads(out)["findings"]} == signal
    (tmp_path / ".mlops-lint.yaml").write_text("ignore: [ml]\n")
    _, out, _ = cli(["--format", "json", "pod.yaml"], tmp_path)
    assert {f["rule"] for f in json.loads(out)["findings"]} == every - signal


@pytest.mark.parametrize("where", ["cli", "config"])
def test_a_cut_short_id_is_an_error_with_a_suggestion(tmp_path: Path, where: str) -> None:
    """`ignore: [GPU01]` once ignored GPU010 silently (a prefix of ids)."""
    (tmp_path / "pod.yaml").write_text(POD)
    if where == "config":
        (tmp_path / ".mlops-lint.yaml").write_text("ignore: [GPU01]\n")
        code, _, err = cli(["pod.yaml"], tmp_path)
        assert ".mlops-lint.yaml:1:10: 'ignore' names an unknown rule or prefix 'GPU01'" in err
    else:
        (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
        code, _, err = cli(["--ignore", "GPU01", "pod.yaml"], tmp_path)
        assert "unknown rule or prefix 'GPU01' in --select/--ignore" in err
    assert code == 2
    # the closest ids (GPU010 first, then neighbours that change as rules are added), then the letters
    assert re.search(r"\(did you mean GPU010( or GPU0\d\d)*, or GPU for every GPU rule\?\)", err), err


def test_letters_of_ids_and_slugs_still_select() -> None:
    registry = load_registry()
    assert {m.code for m in registry.resolve("GPU")} == {m.code for m in registry.rules if m.code.startswith("GPU")}
    assert [m.code for m in registry.resolve("gpu-limit-missing")] == ["GPU001"]
    assert registry.resolve("GPU01") == [] and registry.resolve("GP") == []
    assert "did you mean gpu-limit-missing" in registry.selector_hint("gpu-limit-mising")


@pytest.mark.parametrize(("key", "meant"), [("fail_on", "fail-on"), ("trusted_registries", "trusted-registries"),
                                             ("failon", "fail-on")])
def test_misspelt_config_key_gets_did_you_mean(tmp_path: Path, key: str, meant: str) -> None:
    (tmp_path / ".mlops-lint.yaml").write_text(f"{key}: never\n")
    (tmp_path / "pod.yaml").write_text(POD)
    code, _, err = cli(["pod.yaml"], tmp_path)
    assert code == 2
    assert f".mlops-lint.yaml:1:1: unknown key '{key}' at the top level (did you mean '{meant}'?)" in err


def test_rules_json_and_explain_name_the_family(tmp_path: Path) -> None:
    code, out, _ = cli(["rules", "--format", "json"], tmp_path)
    assert {row["code"]: row["family"] for row in json.loads(out)}["AKS003"] == "aks"
    code, out, _ = cli(["explain", "SEC004"], tmp_path)
    assert "Family: k8s" in out.splitlines()[2]


# --- item 1 and issue 32 item 14: nothing linted is never a pass ------------------------------

@pytest.mark.parametrize("target", ["chart", "."])
def test_chart_templates_only_say_no_files_linted(tmp_path: Path, target: str) -> None:
    """Repro trust/nothing-linted: a folder of chart templates printed "All checks passed"."""
    code, out, _ = cli([target], write(tmp_path, CHART))
    assert code == 0
    assert "All checks passed" not in out
    assert out.splitlines()[-1] == ("No files linted: 3 files skipped (2 no Kubernetes object (apiVersion and kind), "
                                    "1 Helm chart template).")


def test_no_files_linted_is_a_run_level_note_in_json_and_sarif(tmp_path: Path) -> None:
    import jsonschema

    write(tmp_path, CHART)
    code, out, _ = cli(["--format", "json", "chart"], tmp_path)
    report = json.loads(out)
    jsonschema.validate(report, json.loads((REPO / "schemas" / "findings.schema.json").read_text()))
    assert report["summary"]["files"] == 0 and report["summary"]["skipped"] == 3
    assert report["notes"][0] == {"path": "", "message": "No files linted: 3 files skipped (2 no Kubernetes object "
                                  "(apiVersion and kind), 1 Helm chart template)"}
    code, out, _ = cli(["--format", "sarif", "chart"], tmp_path)
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert notes[0] == {"message": {"text": report["notes"][0]["message"]}, "level": "warning"}
    # the log stays valid against the official schema (../shared/sarif, beside the checkout or a worktree's)
    schemas = [root / "shared" / "sarif" / "sarif-schema-2.1.0.json" for root in (REPO.parent, REPO.parents[1])]
    schema = next((path for path in schemas if path.is_file()), None)
    if schema is None:
        pytest.skip("../shared/sarif is absent: the SARIF schema is not at hand")
    jsonschema.validate(json.loads(out), json.loads(schema.read_text()))


def test_fail_on_empty_makes_nothing_linted_exit_1(tmp_path: Path) -> None:
    assert cli(["--fail-on-empty", "chart"], write(tmp_path / "repro", CHART))[0] == 1
    own = tmp_path / "own"
    write(own, {"values.yaml": "replicas: 1\n", ".mlops-lint.yaml": "fail-on-empty: true\n"})
    code, out, _ = cli(["."], own)
    assert (code, out) == (1, "No files linted: 1 file skipped (1 no Kubernetes object (apiVersion and kind)).\n")
    (own / "pod.yaml").write_text(POD)  # something linted: findings decide, as without the setting
    assert cli(["--fail-on", "never", "."], own)[0] == 0
    (own / ".mlops-lint.yaml").write_text("{}\n")
    (own / "pod.yaml").unlink()
    assert cli(["."], own)[0] == 0


def test_empty_folder_and_empty_stdin(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    code, out, _ = cli(["empty"], tmp_path)
    assert (code, out) == (0, "No files linted: no YAML or JSON manifest, Dockerfile or shell script found in empty "
                              "(tool folders, such as .git and .venv, and `exclude` patterns are not read).\n")
    code, out, _ = cli(["-"], tmp_path, stdin=b"")
    assert code == 0
    assert out.splitlines()[-1] == ("No files linted: stdin was empty (did the command before the pipe, such as "
                                    "`helm template`, fail?).")
    assert cli(["--fail-on-empty", "-"], tmp_path, stdin=b"\n")[0] == 1


def test_summary_counts_files_with_findings_and_files_linted_apart(tmp_path: Path) -> None:
    """"in N files" once counted every file read, skipped ones (a values file, a baseline) too."""
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    (tmp_path / "pod.yaml").write_text(POD)
    (tmp_path / "ok.yaml").write_text("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: ml}\n")
    (tmp_path / "values.yaml").write_text("replicas: 1\n")
    code, out, _ = cli(["--write-baseline", "baseline.yaml", "--select", "SEC001", "."], tmp_path)
    code, out, _ = cli(["--format", "json", "."], tmp_path)
    report = json.loads(out)
    signal = sum(1 for f in report["findings"] if f["rule"][:3] in ("GPU", "AKS", "XPL", "DST", "QUE", "KAI", "STO"))
    others = len(report["findings"]) - signal
    assert signal and others
    severities = {s: sum(1 for f in report["findings"] if f["severity"] == s) for s in ("error", "warning", "info")}
    assert report["summary"]["files"] == 2 and report["summary"]["skipped"] == 2  # values.yaml, baseline.yaml
    code, out, _ = cli(["--baseline", "baseline.yaml", "."], tmp_path)
    assert out.splitlines()[-1].split(". [*]")[0] == (
        f"Found {signal} ML/AKS problems and {others - 1} others ({severities['error']} error"
        f"{'s' if severities['error'] != 1 else ''}, {severities['warning'] - 1} warnings, {severities['info']} info) "
        "in 1 file; 2 files linted; 1 suppressed")


def test_overlay_run_does_not_say_nothing_linted(tmp_path: Path) -> None:
    """Issue 32 item 14: an overlay folder (its kustomization its only file) printed the built
    findings and "nothing was linted"."""
    import shutil
    import subprocess

    if shutil.which("kustomize") is None and shutil.which("kubectl") is None:
        pytest.skip("no kustomize")
    (tmp_path / ".mlops-lint.yaml").write_text("{}\n")
    (tmp_path / "b").mkdir()
    (tmp_path / "o").mkdir()
    (tmp_path / "b" / "pod.yaml").write_text(POD)
    (tmp_path / "b" / "kustomization.yaml").write_text("resources: [pod.yaml]\n")
    (tmp_path / "o" / "kustomization.yaml").write_text("resources: [../b]\n")
    done = subprocess.run(["mlops-lint", "--no-cache", "o"], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 1 and "(after overlay o)" in done.stdout
    assert "nothing was linted" not in done.stderr + done.stdout and "No files linted" not in done.stdout
    assert done.stdout.splitlines()[-1].endswith("in 1 file; 1 file linted.")
    report = json.loads(subprocess.run(["mlops-lint", "--no-cache", "--format", "json", "o"], cwd=tmp_path,
                                       capture_output=True, text=True).stdout)
    assert report["summary"]["files"] == 1 and report["notes"] == []


# --- item 10: the everyday flows agree ----------------------------------------------------------

def test_non_manifest_yaml_gets_no_sch001(tmp_path: Path) -> None:
    """Repro trust/non-manifest-yaml: a values file's duplicate key and a CI file's syntax error
    were SCH001 ERRORs; neither is a manifest. A broken manifest keeps its SCH001."""
    write(tmp_path, {".mlops-lint.yaml": "profile: aks-standard\n", "ci.yaml": "a: [1, 2\n",
                     "values.yaml": "replicas: 1\nimage: foo\nreplicas: 2\n"})
    code, out, _ = cli(["--format", "json", "."], tmp_path)
    report = json.loads(out)
    assert (code, report["findings"], report["summary"]["files"], report["summary"]["skipped"]) == (0, [], 0, 2)
    write(tmp_path, {"pod.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: x\n",
                     "dup.yaml": "kind: Pod\nmetadata: {name: x}\nmetadata: {name: y}\n",
                     "list.yaml": "items:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: x\n"})
    code, out, _ = cli(["--format", "json", "--select", "SCH001", "."], tmp_path)
    found = {(f["path"], f["line"], f["message"].split(":")[0]) for f in json.loads(out)["findings"]}
    assert found == {("pod.yaml", 4, "invalid YAML"), ("dup.yaml", 3, 'duplicate key "metadata" (first at line 2); '
                                                                       "the last value wins"),
                     ("list.yaml", 5, "invalid YAML")}, found
    assert code == 1


def test_a_named_file_of_no_lintable_kind_is_skipped_with_a_note(tmp_path: Path) -> None:
    write(tmp_path, {".mlops-lint.yaml": "{}\n", "notes.txt": POD, "train.py": "import torch\nx = {1: 2\n",
                     "README.md": "# t\n\nkey: [unclosed\n"})
    code, out, _ = cli(["notes.txt", "train.py", "README.md"], tmp_path)
    assert code == 0
    lines = out.splitlines()
    assert "note: train.py: not read: a `.py` file is not a manifest, Dockerfile or shell script (a .yaml, .yml or " \
           ".json manifest, a Dockerfile name, a .sh script, or a script with a shell shebang)" in lines
    assert {line.split(":")[1].strip() for line in lines if line.startswith("note:")} == {
        "notes.txt", "train.py", "README.md"}
    assert lines[-1] == "No files linted: 3 files skipped (3 name of no lintable kind)."


def test_github_paths_are_under_the_repository_as_sarifs(tmp_path: Path) -> None:
    import subprocess

    repo = tmp_path / "repo"
    write(repo, {".mlops-lint.yaml": "{}\n", "deploy/pod.yaml": POD})
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True)
    _, out, _ = cli(["--format", "github", "."], repo / "deploy")
    _, sarif, _ = cli(["--format", "sarif", "."], repo / "deploy")
    files = {line.split("file=", 1)[1].split(",", 1)[0] for line in out.splitlines() if "file=" in line}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
            for r in json.loads(sarif)["runs"][0]["results"]}
    assert files == uris == {"deploy/pod.yaml"}
    _, out, _ = cli(["--format", "github", "."], write(tmp_path / "chartrepo", CHART))
    assert out.splitlines()[0] == ("::warning title=mlops-lint::No files linted: 3 files skipped (2 no Kubernetes "
                                   "object (apiVersion and kind), 1 Helm chart template)")


# the hook's `files:` pattern, as pre-commit matches it (re.search on the path from the repository's top)
def hook(name: str = "mlops-lint") -> dict:
    import yaml

    return {h["id"]: h for h in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}[name]


NAMES = ["job.yaml", "deploy/Job.YML", "x.json", "Dockerfile", "deploy/Dockerfile-gpu", "Dockerfile_cuda",
         "Dockerfile.gpu", "train.Dockerfile", "Containerfile", "containerfile.dev", "scripts/aks.sh", "a.bash",
         "README.md", "train.py", "notes.txt", "Dockerfile.md", "docs/dockerfile.py", "values.yaml.j2",
         "Chart.lock", "setup.cfg", "x.toml"]


@pytest.mark.parametrize("hook_id", ["mlops-lint", "mlops-lint-fix"])
def test_the_hooks_take_the_files_a_full_run_reads_by_name(hook_id: str) -> None:
    """pre-commit's `types_or: [yaml, json, dockerfile, shell]` left out Dockerfile-gpu, which
    `mlops-lint .` lints: the hooks name files by the discovery's own rules."""
    import re

    from mlops_lint.discover import classify_name, is_template_name

    pattern = re.compile(hook(hook_id)["files"])
    for name in NAMES:
        base = name.rsplit("/", 1)[-1]
        lintable = classify_name(base) is not None
        taken = pattern.search(name) is not None
        # the hook may pass more (mlops-lint skips it with a note: Dockerfile.md), never less
        assert taken or not lintable, name
        if lintable or is_template_name(base):
            continue
        assert not taken or base.lower().startswith(("dockerfile", "containerfile")), name
    assert pattern.search("scripts/provision") is not None  # no suffix: a script, by its shebang
    assert "types_or" not in hook(hook_id) and hook(hook_id)["types"] == ["text"]


@pytest.mark.parametrize("hook_id", ["mlops-lint", "mlops-lint-fix"])
def test_the_hooks_entry_ends_option_parsing(hook_id: str) -> None:
    """Issue 32 item 23: pre-commit appends the staged names to the entry; without `--` a
    committed file named `--fail-on=never` was an option that turned the gate green."""
    assert hook(hook_id)["entry"].split()[-1] == "--"


def test_an_option_that_is_also_a_file_here_is_refused(tmp_path: Path) -> None:
    """A hand-written hook without `--` (as the repro's `repo: local` one): refused, exit 2."""
    write(tmp_path, {".mlops-lint.yaml": "{}\n", "pod.yaml": POD, "--fail-on=never": "#!/bin/sh\n"})
    import subprocess

    done = subprocess.run(["mlops-lint", "--no-cache", "--fail-on=never", "pod.yaml"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("mlops-lint: error: the option '--fail-on=never' is also the name of a file here")
    done = subprocess.run(["mlops-lint", "--no-cache", "--", "--fail-on=never", "pod.yaml"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "pod.yaml:" in done.stdout  # after `--` it is a file (a script: linted)
    done = subprocess.run(["mlops-lint", "--no-cache", "--", "--fail-on=error"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 2 and "after `--` every argument is a path" in done.stderr


@pytest.mark.skipif(__import__("shutil").which("git") is None, reason="git is not installed")
def test_pre_commit_try_repo_lints_what_a_full_run_lints(tmp_path: Path) -> None:
    """The packaged hook, as users install it (`pre-commit try-repo` on this repository): a
    Dockerfile-gpu is linted, and a staged `--fail-on=never` is a file, not an option."""
    import os
    import subprocess
    import sys

    pytest.importorskip("pre_commit")
    sample = write(tmp_path / "sample", {"deploy/Dockerfile-gpu": "FROM python:latest\n", "--fail-on=never": "x\n",
                                         "README.md": "sample\n"})
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "home"), "PRE_COMMIT_COLOR": "never",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "sample"]):
        subprocess.run(["git", *args], cwd=sample, check=True, capture_output=True, env=env)
    done = subprocess.run([sys.executable, "-m", "pre_commit", "try-repo", str(REPO), "mlops-lint", "--all-files"],
                          cwd=sample, capture_output=True, text=True, timeout=900, env=env)
    if "Could not" in done.stdout + done.stderr and "pip" in done.stdout + done.stderr:
        pytest.skip("pre-commit could not install the hook (no package index)")
    full = subprocess.run(["mlops-lint", "--no-cache", "."], cwd=sample, capture_output=True, text=True)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "deploy/Dockerfile-gpu:1:6: ERROR DKR001" in done.stdout, done.stdout
    hooked = sorted(line for line in done.stdout.splitlines() if ": ERROR " in line or ": WARNING " in line)
    assert hooked == sorted(line for line in full.stdout.splitlines() if ": ERROR " in line or ": WARNING " in line)
