"""The everyday flows, driven as a user drives them: the ``mlops-lint`` command (``python -m
mlops_lint``, the console script's own entry point ``linter.cli:run``) in a temporary project.

Pre-commit itself (the hook on a git repository) is in tests/test_precommit.py.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CRDS = REPO.parent / "shared" / "crds"

# A hardened GPU training Job that passes every rule (the one tests/test_precommit.py uses).
DIGEST = "b" * 64
GOOD = """\
apiVersion: batch/v1
kind: Job
metadata: {name: NAME, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3@sha256:%s
        resources:
          requests: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
          limits: {cpu: "4", memory: 16Gi, nvidia.com/gpu: 1}
        volumeMounts: [{name: dshm, mountPath: /dev/shm}]
        securityContext: {allowPrivilegeEscalation: false, capabilities: {drop: [ALL]}}
      nodeSelector: {accelerator: nvidia}
      tolerations: [{key: sku, operator: Equal, value: gpu, effect: NoSchedule}]
      securityContext: {runAsNonRoot: true, runAsUser: 1000}
      volumes: [{name: dshm, emptyDir: {medium: Memory, sizeLimit: 4Gi}}]
""" % DIGEST
# A bare Pod: findings from several rules wherever it is linted
BARE_POD = "apiVersion: v1\nkind: Pod\nmetadata: {name: bare}\nspec:\n  containers:\n  - {name: c, image: busybox}\n"
CHART_NOTE = "note: chart/templates: Helm chart templates skipped (the config says helm: {enabled: never})"
TEMPLATE_NOTE = ("not linted; lint the rendered output through stdin, e.g. `… | mlops-lint - --stdin-filename NAME` "
                 "(the name gives the kind)")


def mlops_lint(*args: str, cwd: Path, stdin: bytes | None = None, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **env}
    return subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=cwd, input=stdin, capture_output=True,
                          env=environment, timeout=300)


def text(done: subprocess.CompletedProcess) -> tuple[str, str]:
    return done.stdout.decode(), done.stderr.decode()


def no_traceback(done: subprocess.CompletedProcess) -> None:
    err = done.stderr.decode()
    assert "Traceback" not in err and "internal error" not in err, err


# ---- pre-commit sees what a full run sees -----------------------------------------------------

# Files a full run does not lint, each of which gives findings when read as what its name suggests
TRAPS = {
    "chart/templates/job.yaml": BARE_POD,  # a Helm chart's template (Chart.yaml beside templates/)
    "chart/templates/nested/pod.yaml": BARE_POD,
    "vendor/pod.yaml": BARE_POD,  # excluded by the config
    "deploy/job.yaml.j2": BARE_POD,  # templates
    "deploy/Dockerfile.j2": "FROM python:latest\n",
    "deploy/pod.gotmpl": BARE_POD,
    "docs/Dockerfile.md": "# Our image\n\nFROM python:latest\n",  # not Dockerfiles
    "linter/sources/dockerfile.py": '"""FROM lines."""\nFROM = "FROM python:latest"\n',
    ".vscode/settings.json": '{\n  // editor settings\n  "editor.tabSize": 2,\n}\n',  # a tool folder
    ".vscode/pod.yaml": BARE_POD,
    "env/pod.yaml": BARE_POD,  # a virtual environment whatever its name (pyvenv.cfg)
    "tsconfig.json": '{\n  /* comments */\n  "compilerOptions": {"strict": true,},\n}\n',  # JSON, no manifest
}


@pytest.fixture
def repository(tmp_path: Path) -> Path:
    # charts not rendered (the helm extra renders them by default): their templates are skipped
    (tmp_path / ".mlops-lint.yaml").write_text('exclude: ["vendor/**"]\nhelm: {enabled: never}\n')
    (tmp_path / "chart").mkdir()
    (tmp_path / "chart" / "Chart.yaml").write_text("apiVersion: v2\nname: chart\nversion: 0.1.0\n")
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    for name, content in TRAPS.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(content)
    (tmp_path / "deploy" / "train.yaml").write_text(GOOD.replace("NAME", "train"))
    (tmp_path / "deploy" / "Dockerfile.gpu").write_text("FROM python:latest\n")  # a real Dockerfile: findings
    return tmp_path


def every_file(root: Path) -> list[str]:
    """What pre-commit names with --all-files (every file of the repository, by relative path)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_named_files_give_what_the_full_run_gives(repository: Path) -> None:
    full = mlops_lint(".", cwd=repository)
    named = mlops_lint(*every_file(repository), cwd=repository)
    no_traceback(full)
    no_traceback(named)
    assert full.returncode == named.returncode == 1
    out = text(full)[0]
    assert text(named)[0] == out
    findings = [line for line in out.splitlines() if re.match(r"\S+:\d+:\d+: ", line)]
    assert findings and {line.split(":")[0] for line in findings} == {"deploy/Dockerfile.gpu"}, out
    assert CHART_NOTE in out.splitlines()
    assert (f"note: deploy: 3 templates (Dockerfile.j2, job.yaml.j2, pod.gotmpl) {TEMPLATE_NOTE}"
            in out.splitlines()), out


@pytest.mark.parametrize("name", sorted(TRAPS))
def test_each_skipped_file_named_alone_is_skipped(repository: Path, name: str) -> None:
    done = mlops_lint(name, "--format", "json", cwd=repository)
    no_traceback(done)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["findings"] == [], report
    notes = {(n["path"], n["message"]) for n in report["notes"] if n["path"]}
    if name.startswith("chart/templates/"):
        assert notes == {("chart/templates", CHART_NOTE.split("chart/templates: ", 1)[1])}
    elif name.startswith("deploy/"):
        assert notes == {(name, f"template {Path(name).name} {TEMPLATE_NOTE}")}
    else:  # skipped silently, as a full run skips them
        assert notes == set()
    why = report["notes"][0]  # the run-level note: nothing was linted
    assert why["path"] == "" and why["message"].startswith("No files linted: 1 file skipped (1 ")
    assert text(mlops_lint(name, cwd=repository))[0].splitlines()[-1] == why["message"] + "."


def test_real_dockerfile_names_are_still_dockerfiles(tmp_path: Path) -> None:
    names = ["Dockerfile", "Dockerfile.gpu", "Dockerfile.cuda12", "train.Dockerfile", "Containerfile"]
    for name in names:
        (tmp_path / name).write_text("FROM python:latest\n")
    done = mlops_lint(".", "--select", "DKR001", cwd=tmp_path)
    assert {line.split(":")[0] for line in text(done)[0].splitlines() if "DKR001" in line} == set(names)


# ---- stdin without a name -------------------------------------------------------------------

@pytest.mark.parametrize("content,rule,note", [
    (b"# syntax=docker/dockerfile:1\nFROM python:latest\n", "DKR001",
     "note: <stdin>: read as a Dockerfile (its first instruction is FROM); --stdin-filename NAME gives the kind by "
     "its name"),
    (b"#!/usr/bin/env bash\naz aks nodepool add -g rg --cluster-name c -n gpu --node-vm-size Standard_NC6s_v3\n",
     "AKS001", "note: <stdin>: read as a shell script (its first line is a shell shebang); --stdin-filename NAME "
               "gives the kind by its name"),
    (b"az aks nodepool add -g rg --cluster-name c -n gpu --node-vm-size Standard_NC6s_v3\n", "AKS001",
     "note: <stdin>: read as a shell script (it runs `az` commands); --stdin-filename NAME gives the kind by its name"),
    (b"replicas: 3\nimage: x\n", None,
     "note: <stdin>: read as YAML (no Dockerfile instruction or shell script found); it holds no Kubernetes object; "
     "--stdin-filename NAME gives the kind by its name"),
    (BARE_POD.encode(), "IMG001", None),  # a manifest: linted, nothing assumed to say
])
def test_stdin_without_a_name_is_sniffed_and_says_so(tmp_path: Path, content: bytes, rule: str | None,
                                                     note: str | None) -> None:
    done = mlops_lint("-", cwd=tmp_path, stdin=content)
    no_traceback(done)
    out = text(done)[0]
    rules = {line.split()[2] for line in out.splitlines() if line.startswith("<stdin>:")}
    assert (rule in rules) if rule else not rules, out
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    assert notes == ([note] if note else []), out


# ---- the first run tells a person what to do --------------------------------------------------

def test_statistics_counts_per_rule_most_frequent_first() -> None:
    report = json.loads(mlops_lint("fixtures/violating", "--format", "json", cwd=REPO).stdout)
    expected = Counter((f["rule"], f["slug"], f["severity"]) for f in report["findings"] if not f["suppressed"])
    done = mlops_lint("fixtures/violating", "--statistics", cwd=REPO)
    assert done.returncode == 1
    lines = text(done)[0].splitlines()
    found = re.match(r"Found (\d+) ML/AKS problems and (\d+) others \(", lines[-1])
    assert found and int(found[1]) + int(found[2]) == sum(expected.values()), lines[-1]
    assert lines[-2] == ""
    rows = [re.fullmatch(r" *(\d+)  ([A-Z]{3}\d{3})  (ERROR|WARNING|INFO) * {2}(\S+)", line) for line in lines[:-2]]
    assert all(rows), lines
    got = Counter({(m[2], m[4], m[3].lower()): int(m[1]) for m in rows})  # type: ignore[index]
    assert got == expected
    counts = [int(m[1]) for m in rows]  # type: ignore[index]
    assert counts == sorted(counts, reverse=True) and counts[0] > counts[-1]
    as_json = json.loads(mlops_lint("fixtures/violating", "--statistics", "--format", "json", cwd=REPO).stdout)
    assert [(r["rule"], r["slug"], r["severity"], r["count"]) for r in as_json] == [
        (m[2], m[4], m[3].lower(), int(m[1])) for m in rows]  # type: ignore[index]
    refused = mlops_lint("fixtures/violating", "--statistics", "--format", "sarif", cwd=REPO)
    assert refused.returncode == 2 and "--statistics gives text or json" in refused.stderr.decode()


def _on_a_terminal(*args: str, cwd: Path, lines: int) -> tuple[int, str]:
    """The command with its stdout on a pseudo-terminal of ``lines`` lines: exit status, stderr."""
    import pty

    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=cwd, stdout=follower,
                              stderr=subprocess.PIPE, timeout=300,
                              env={**os.environ, "PYTHONPATH": str(REPO), "LINES": str(lines), "COLUMNS": "80"})
    finally:
        os.close(follower)
        os.close(leader)
    return done.returncode, done.stderr.decode()


def test_more_than_a_screen_of_findings_points_at_statistics(tmp_path: Path) -> None:
    for index in range(4):
        (tmp_path / f"pod{index}.yaml").write_text(BARE_POD.replace("bare", f"p{index}"))
    total = len(json.loads(mlops_lint(".", "--format", "json", cwd=tmp_path).stdout)["findings"])
    hint = (f"mlops-lint: {total} findings, more than a screen: `--statistics` counts them per rule, "
            "`--select RULE` shows one rule's")
    assert _on_a_terminal(".", cwd=tmp_path, lines=total - 1) == (1, hint + "\n")
    for args, lines in (([], total), (["-q"], 3), (["--statistics"], 3)):
        assert _on_a_terminal(".", *args, cwd=tmp_path, lines=lines) == (1, ""), args
    # not on a terminal (a pipe, a file, a CI log): the output is the report's alone
    assert mlops_lint(".", cwd=tmp_path, LINES="3").stderr == b""


def test_text_shows_the_fix_hint_under_the_finding(tmp_path: Path) -> None:
    (tmp_path / "job.yaml").write_text(GOOD.replace("NAME", "t").replace(", capabilities: {drop: [ALL]}", "")
                                       .replace("      tolerations: [{key: sku, operator: Equal, value: gpu, "
                                                "effect: NoSchedule}]\n", ""))
    (tmp_path / "Dockerfile").write_text("FROM python:3.11@sha256:" + DIGEST + "\nUSER 1000\nRUN pip install torch\n")
    findings = json.loads(mlops_lint(".", "--format", "json", cwd=tmp_path).stdout)["findings"]
    fixes = {f["rule"]: f["fix"] for f in findings}
    # `[*]` before `fix:` where --fix applies the finding's fix by itself (a safe one)
    marks = {f["rule"]: "[*] " if f["autofix"] and f["autofix"]["safe"] else "" for f in findings}
    assert {"DKR004", "GPU005", "SEC002"} <= set(fixes) and all(fixes.values()), fixes
    assert fixes["SEC002"] == 'capabilities:\n  drop: ["ALL"]'
    flow = {"SEC002": "capabilities: {drop: [ALL]}"}  # a multi-line YAML fix is one line, in flow style
    for args in ([], ["-q"]):
        lines = text(mlops_lint(".", *args, cwd=tmp_path))[0].splitlines()
        for rule, fix in fixes.items():
            at = next(i for i, line in enumerate(lines) if f" {rule} " in line)
            assert lines[at + 1] == f"    {marks[rule]}fix: {flow.get(rule, ' '.join(fix.split()))}", lines


def test_github_format_keeps_notes_as_notices(repository: Path) -> None:
    done = mlops_lint("chart", "deploy/train.yaml", "--format", "github", cwd=repository)
    assert done.returncode == 0
    assert text(done)[0] == ("::notice title=mlops-lint note::chart/templates: Helm chart templates skipped (the config "
                             "says helm: {enabled: never})\n")


def test_a_run_that_lints_nothing_says_why(tmp_path: Path, repository: Path) -> None:
    (tmp_path / "empty").mkdir()
    for fail_on in ("warning", "info"):
        done = mlops_lint("empty", "--fail-on", fail_on, cwd=tmp_path)
        assert done.returncode == 0
        assert text(done) == (  # on stdout, never "All checks passed"
            "No files linted: no YAML or JSON manifest, Dockerfile or shell script found in empty "
            "(tool folders, such as .git and .venv, and `exclude` patterns are not read).\n", "")
    done = mlops_lint("chart/templates/job.yaml", "vendor/pod.yaml", "tsconfig.json", "-q", cwd=repository)
    assert done.returncode == 0  # -q prints no summary: stderr says it
    assert text(done)[1].splitlines() == [
        "mlops-lint: no files linted: 3 files skipped (1 Helm chart template, 1 excluded by the config, "
        "1 not Kubernetes JSON (it does not parse and names no apiVersion))"]
    done = mlops_lint("deploy/train.yaml", cwd=repository)
    assert "linted" not in text(done)[1] and text(done)[0].endswith("All checks passed (1 file).\n")


def _example_blocks(template: str) -> list[list[int]]:
    """Line numbers of each commented example: `# key: …` and the `#   …` lines under it."""
    lines = template.splitlines()
    blocks: list[list[int]] = []
    for number, line in enumerate(lines):
        if re.match(r"# [a-z-]+:( |$)", line):
            blocks.append([number])
        elif line.startswith("#  ") and blocks and blocks[-1][-1] == number - 1:
            blocks[-1].append(number)
    return blocks


@pytest.mark.skipif(not CRDS.is_dir(), reason="../shared/crds is absent (the crd-paths example needs a CRD)")
def test_init_template_lists_every_key_each_example_valid_when_uncommented(tmp_path: Path) -> None:
    done = mlops_lint("init", cwd=tmp_path)
    assert done.returncode == 0 and text(done)[1] == "mlops-lint: wrote .mlops-lint.yaml\n"
    template = (tmp_path / ".mlops-lint.yaml").read_text()
    blocks = _example_blocks(template)
    keys = [template.splitlines()[block[0]][2:].split(":")[0] for block in blocks]
    schema = json.loads((REPO / "schemas" / "config.schema.json").read_text())
    assert sorted(keys) == sorted(schema["properties"]), keys  # every key, once
    (tmp_path / "crds").mkdir()
    (tmp_path / "crds" / "jobs.yaml").write_text((CRDS / "batch.volcano.sh_jobs.yaml").read_text())
    (tmp_path / "job.yaml").write_text(GOOD.replace("NAME", "t"))
    lines = template.splitlines()
    for chosen in [*([block] for block in blocks), blocks]:  # each example alone, then all of them
        edited = list(lines)
        for block in chosen:
            for number in block:
                edited[number] = edited[number][2:]
        (tmp_path / "try.yaml").write_text("\n".join(edited) + "\n")
        done = mlops_lint("--config", "try.yaml", "job.yaml", cwd=tmp_path)
        assert done.returncode in (0, 1) and "error" not in text(done)[1], (chosen, text(done))
    # an existing file is kept, --force overwrites it
    (tmp_path / ".mlops-lint.yaml").write_text("fail-on: never\n")
    kept = mlops_lint("init", cwd=tmp_path)
    assert kept.returncode == 2 and "(it already exists; --force overwrites it)" in text(kept)[1]
    assert (tmp_path / ".mlops-lint.yaml").read_text() == "fail-on: never\n"
    assert mlops_lint("init", "--force", cwd=tmp_path).returncode == 0
    assert (tmp_path / ".mlops-lint.yaml").read_text() == template


# ---- no traceback, ever --------------------------------------------------------------------

SUBCOMMANDS = {  # what writes to stdout, with the exit status it gives on the violating fixtures
    "check text": (["fixtures/violating"], 1),
    "check json": (["fixtures/violating", "--format", "json"], 1),
    "check sarif": (["fixtures/violating", "--format", "sarif"], 1),
    "check github": (["fixtures/violating", "--format", "github"], 1),
    "check statistics": (["fixtures/violating", "--statistics"], 1),
    "check quiet": (["fixtures/violating", "-q"], 1),
    "rules": (["rules"], 0),
    "rules json": (["rules", "--format", "json"], 0),
    "explain": (["explain", "GPU001"], 0),
    "version": (["--version"], 0),
    "help": (["check", "--help"], 0),
}
NAMES = {"-o": "'-o' / '--output'", "--write-baseline": "'--write-baseline'"}
FILE_OPTIONS = {  # what writes to a file: the option and the exit status
    "-o": (["fixtures/violating", "--format", "sarif", "-o"], 1),
    "--write-baseline": (["fixtures/violating", "--write-baseline"], 0),
}


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_stdout_into_a_closed_pipe_ends_quietly(name: str) -> None:
    args, status = SUBCOMMANDS[name]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the first byte: every write meets EPIPE
    try:
        done = subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=REPO, stdout=write,
                              stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    finally:
        os.close(write)
    assert done.returncode == status and done.stderr.decode() == "", done.stderr.decode()


@pytest.mark.parametrize("name", sorted(SUBCOMMANDS))
def test_stdout_on_a_full_disk_is_one_line_and_exit_2(name: str) -> None:
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    args, _ = SUBCOMMANDS[name]
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=REPO, stdout=full, stderr=subprocess.PIPE,
                              env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    no_traceback(done)
    assert done.returncode == 2 and done.stderr.decode() == (
        "mlops-lint: error: cannot write to standard output: No space left on device\n")


@pytest.mark.parametrize("option", sorted(FILE_OPTIONS))
def test_output_files_into_missing_unwritable_and_full_targets(tmp_path: Path, option: str) -> None:
    args, status = FILE_OPTIONS[option]
    target = tmp_path / "reports" / "ci" / "out.json"  # a missing folder: created, as CI users expect
    done = mlops_lint(*args, str(target), cwd=REPO)
    no_traceback(done)
    assert done.returncode == status and json.loads(target.read_text())
    (tmp_path / "a-file").write_text("")
    for unwritable, reason in (
            (tmp_path / "reports", f"mlops-lint: error: --output {tmp_path / 'reports'}: is a folder, not a file"
             if option == "-o" else
             f"Error: Invalid value for {NAMES[option]}: File '{tmp_path / 'reports'}' is a directory."),
            (tmp_path / "a-file" / "out.json", f"mlops-lint: error: cannot create the folder {tmp_path / 'a-file'}: "
                                               "File exists"),
            (Path("/dev/full"), "mlops-lint: error: cannot write /dev/full: No space left on device")):
        if unwritable == Path("/dev/full") and not unwritable.exists():
            continue
        done = mlops_lint(*args, str(unwritable), cwd=REPO)
        no_traceback(done)
        assert done.returncode == 2 and text(done)[1].splitlines()[-1] == reason, text(done)


def test_init_into_missing_unwritable_and_full_targets(tmp_path: Path) -> None:
    # a folder that does not exist is not made up (init says where the project is): one line, exit 2
    done = mlops_lint("init", str(tmp_path / "new" / "project"), cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and text(done)[1] == (
        f"mlops-lint: error: {tmp_path / 'new' / 'project' / '.mlops-lint.yaml'}: cannot be written "
        "(No such file or directory)\n")
    (tmp_path / "piped").mkdir()
    (tmp_path / "a-file").write_text("")
    done = mlops_lint("init", str(tmp_path / "a-file"), cwd=tmp_path)
    no_traceback(done)
    assert done.returncode == 2 and text(done)[1].startswith("mlops-lint: error:") or "Error:" in text(done)[1]
    closed = subprocess.run([sys.executable, "-m", "mlops_lint", "init", str(tmp_path / "piped")], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, timeout=300)
    assert closed.returncode == 0 and (tmp_path / "piped" / ".mlops-lint.yaml").is_file()


# ---- set-up a user can follow ---------------------------------------------------------------

def test_install_never_pulls_torch_and_readme_says_how_to_get_the_cpu_build() -> None:
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert not [d for d in project["dependencies"] if re.match(r"(?i)torch\b", d)]  # `pip install .`: no torch
    extras = {name: [d for d in deps if re.match(r"(?i)torch\b", d)] for name, deps in
              project["optional-dependencies"].items()}
    assert [name for name, torch in extras.items() if torch] == ["image"]  # only the training image's extra
    readme = (REPO / "README.md").read_text()
    setup = readme.split("## Set-up and tests", 1)[1].split("\n## ", 1)[0]
    venv = setup.index("python3 -m venv .venv && . .venv/bin/activate")
    assert venv < setup.index('pip install -e ".[test,image]"')
    cpu = "--extra-index-url https://download.pytorch.org/whl/cpu"
    assert cpu in setup and "needs none" in setup
    # CI's machines reach only the package registries: its install must not wait on PyTorch's index
    assert "--extra-index-url" not in (REPO / ".ci" / "run").read_text()
