"""Hostile input and hostile surroundings, bounded (issue #21, items 7 and 9-18): expansion
bombs, super-linear loaders, hostile config, odd numbers, the per-file time budget, workers and
signals, environment errors, output encodings, cache folders and baselines.

Inputs are generated here (nothing checked in is large). Anything that could eat memory runs in
a subprocess under an address-space limit (``sandbox.run`` sets ``RLIMIT_AS``), so a regression
fails the test instead of taking the machine down. Items about the process drive the real CLI.
Speed is asserted as a ratio between sizes N and 4N, never as an absolute time.
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import pytest
from sandbox import run

from mlops_lint.model.bounds import MAX_VALUE_CHARS

POD = b"""\
apiVersion: v1
kind: Pod
metadata:
  name: p
  namespace: ml
spec:
  containers:
  - name: c
    image: nvcr.io/nvidia/pytorch:24.05-py3
"""


def _findings(outcome) -> list[dict]:
    assert "Traceback" not in outcome.err and "internal error" not in outcome.err, outcome.err
    return json.loads(outcome.stdout)["findings"]


# -- 7. expansion bombs ---------------------------------------------------------------------------


def _docker_bomb(levels: int = 40) -> str:
    lines = ["ARG A0=xxxxxxxxxxxxxxxx"] + [f"ARG A{i}=${{A{i - 1}}}${{A{i - 1}}}" for i in range(1, levels + 1)]
    lines += [f"FROM alpine:${{A{levels}}}", "ENV B0=yyyyyyyyyyyyyyyy"]
    lines += [f"ENV B{i}=${{B{i - 1}}}${{B{i - 1}}}" for i in range(1, levels + 1)]
    return "\n".join(lines + [f"RUN pip install $B{levels}", ""])


def _shell_bomb(levels: int = 40) -> str:
    lines = ["#!/bin/bash", 'A0="xxxxxxxxxxxxxxxx"'] + [f'A{i}="${{A{i - 1}}}${{A{i - 1}}}"' for i in range(1, levels + 1)]
    lines += ['B=""'] + ['B+="$A12"'] * 40
    return "\n".join(lines + [f'az aks create -g rg -n "$A{levels}" --node-vm-size "$B"', ""])


def test_expansion_bombs_are_bounded_and_the_value_past_the_bound_is_unknown(tmp_path: Path) -> None:
    """A 1.5 KB Dockerfile and shell script doubling a value forty times (2^44 characters): the
    run that targets another file reads them for context under a 1 GiB address-space limit
    (measured before: OOM-killed at 23.7 GB; after: ~0.6 s, ~40 MiB). Values up to the bound are
    known, the first past it unknown."""
    from mlops_lint.sources import dockerfile, shell

    (tmp_path / "Dockerfile").write_text(_docker_bomb())
    (tmp_path / "setup.sh").write_text(_shell_bomb())
    (tmp_path / "pod.yaml").write_bytes(POD)
    outcome = run(["pod.yaml", "--format", "json", "--jobs", "1"], tmp_path, address_space_mib=1024, timeout=60)
    assert outcome.returncode in (0, 1) and outcome.peak_mib < 200, (outcome.returncode, outcome.peak_mib, outcome.text[:3000])
    assert {f["path"] for f in _findings(outcome)} <= {"pod.yaml"}
    outcome = run(["Dockerfile", "setup.sh", "--format", "json", "--jobs", "1"], tmp_path, address_space_mib=1024,
                  timeout=60)
    assert outcome.returncode in (0, 1) and outcome.peak_mib < 200, (outcome.returncode, outcome.peak_mib, outcome.text[:3000])
    assert not [f for f in _findings(outcome) if f["rule"] == "LNT002"], outcome.text

    # in the model: 16 * 2^12 = 64 KiB is the last known value
    doc = dockerfile.load_text(_docker_bomb(14), "Dockerfile").dockerfile
    values = {arg.name: arg.value for arg in doc.args}
    assert len(values["A12"]) == MAX_VALUE_CHARS and values["A13"] is None and values["A14"] is None
    assert doc.stages[0].base_resolved is None
    env = doc.env_before(doc.stages[0])
    assert len(env["B12"]) == MAX_VALUE_CHARS and env["B13"] is None and env["B14"] is None
    script = shell.load_text(_shell_bomb(14), "setup.sh").shell
    assigned = {a.name: a.value for a in script.assignments if a.name.startswith("A")}
    assert len(assigned["A12"]) == MAX_VALUE_CHARS and not isinstance(assigned["A13"], str)
    appended = [a.value for a in script.assignments if a.name == "B"]
    assert appended[1] == "x" * MAX_VALUE_CHARS and not any(isinstance(v, str) for v in appended[2:])


# -- 9. every loader and the cluster model are linear -----------------------------------------


def _yaml_documents(n: int) -> bytes:  # over 256 KiB from n = 5,000: the file is read as one stream
    return "".join(f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: c{i}}}\ndata: {{k: v}}\n"
                   for i in range(n)).encode()


def _yaml_items(n: int) -> bytes:
    return ("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata:\n"
            + "".join(f"  k{i}: &a{i} v{i}\n" for i in range(n))).encode()


def _chained_stages(n: int) -> bytes:
    return ("FROM alpine AS s0\n" + "".join(f"FROM alpine AS s{i}\nCOPY --from=s{i - 1} /a /a\n"
                                           for i in range(1, n))).encode()


def _long_dockerfile(n: int) -> bytes:
    return ("FROM python:3.11\n" + "".join(f"ENV V{i}=$V{i - 1}x\nRUN <<EOF{i} pip install a{i}\n" for i in range(1, n))
            ).encode()


def _unterminated_heredocs(n: int) -> bytes:
    return ("#!/bin/bash\n" + "".join(f"cat <<EOF{i}\n" for i in range(n))).encode()


def _az_creates(n: int) -> bytes:
    return ("#!/bin/bash\n" + "".join(f"az aks create -g rg -n c{i} --node-count 1\n" for i in range(n))).encode()


def _az_pools(n: int) -> bytes:
    return ("#!/bin/bash\naz aks create -g rg -n c\n" + "".join(
        f"az aks nodepool update -g rg --cluster-name c -n p{i} --labels a=b\n"
        f"az aks nodepool add -g rg --cluster-name c -n p{i} --node-count 1\n"
        f"az aks nodepool add -g rg --cluster-name c -n same\n" for i in range(n))).encode()


def _load_yaml(data: bytes) -> None:
    from mlops_lint.sources import yaml_k8s

    assert not yaml_k8s.load(data, "a.yaml").errors


def _load_dockerfile(data: bytes) -> None:
    from mlops_lint.sources import dockerfile

    doc = dockerfile.load(data, "Dockerfile").dockerfile
    doc.shipped_stages  # noqa: B018 - every stage's sources looked up
    doc.env_before(doc.stages[-1])


def _load_shell(data: bytes) -> None:
    from mlops_lint.sources import shell

    shell.load(data, "setup.sh")


def _cluster(data: bytes) -> None:
    from mlops_lint.model.cluster import build_cluster
    from mlops_lint.sources import shell

    assert build_cluster([shell.load(data, "setup.sh").shell]).pools


LINEAR = {
    "yaml: many documents in one stream": (_yaml_documents, _load_yaml, 5_000),
    "yaml: many anchored keys": (_yaml_items, _load_yaml, 20_000),
    "dockerfile: stages chained by COPY --from": (_chained_stages, _load_dockerfile, 2_000),
    "dockerfile: ENV chain and heredoc RUNs": (_long_dockerfile, _load_dockerfile, 1_000),
    "shell: unterminated heredocs": (_unterminated_heredocs, _load_shell, 2_000),
    "cluster: az aks create lines": (_az_creates, _cluster, 1_000),
    "cluster: node pools added and updated": (_az_pools, _cluster, 300),
}


def _cpu_seconds(action: Callable[[], None]) -> float:
    """The least of three CPU times (another process's load is not counted), with the cyclic
    collector paused as the engine pauses it while loading."""
    best = float("inf")
    gc.disable()
    try:
        for _ in range(3):
            start = time.process_time()
            action()
            best = min(best, time.process_time() - start)
    finally:
        gc.enable()
    return best


@pytest.mark.parametrize("scenario", LINEAR)
def test_loaders_and_the_cluster_model_are_linear(scenario: str) -> None:
    """Size 4N costs about 4 times size N (6 leaves room for noise; quadratic code gives 16).
    Before: an unterminated heredoc 5k/10k/20k lines 3.4/15/54 s, 2k/16k `az aks create`
    0.8/44.6 s, 10k/100k YAML documents 0.7/12.9 s, 2k/16k chained stages 0.86/26.3 s."""
    make, action, n = LINEAR[scenario]
    small, large = make(n), make(4 * n)
    action(small)  # imports and first-use caches out of the measurement
    # the best of three tries: a busy machine (the other core's cache and memory traffic) only
    # inflates a ratio, to 6.5x once in a full run beside other work; quadratic code stays at 16x
    ratio = float("inf")
    for _ in range(3):
        ratio = min(ratio, _cpu_seconds(lambda: action(large)) / max(_cpu_seconds(lambda: action(small)), 1e-3))
        if ratio < 6:
            break
    assert ratio < 6, f"{scenario}: 4x the input took {ratio:.1f}x the time"


# -- 10. hostile config ---------------------------------------------------------------------------


def _alias_bomb_config() -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol"]']
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    return "\n".join(lines) + "\n"


def test_config_alias_bomb_is_refused_without_expanding_it(tmp_path: Path) -> None:
    """A ~400-byte config whose aliases stand for 2 x 10^8 values (before: 60-92 s and 3.1 GB;
    after: one line, exit 2, under a 512 MiB address-space limit). Nesting 5,000 deep, in YAML or
    in pyproject.toml, is one line too."""
    (tmp_path / "pod.yaml").write_bytes(POD)
    (tmp_path / ".mlops-lint.yaml").write_text(_alias_bomb_config())
    outcome = run(["pod.yaml"], tmp_path, address_space_mib=512, timeout=60)
    assert outcome.returncode == 2, outcome.err
    assert outcome.err.strip().splitlines() == [
        f"mlops-lint: error: {tmp_path / '.mlops-lint.yaml'}: aliases expand the config by more than 100,000 "
        "values (an alias bomb?); it was not read"]
    (tmp_path / ".mlops-lint.yaml").write_text("rules: " + "[" * 5000 + "]" * 5000 + "\n")
    outcome = run(["pod.yaml"], tmp_path, timeout=60)
    assert outcome.returncode == 2 and outcome.err.strip().splitlines() == [
        f"mlops-lint: error: {tmp_path / '.mlops-lint.yaml'}: invalid YAML: nested too deeply to be read"], outcome.err
    (tmp_path / ".mlops-lint.yaml").unlink()
    (tmp_path / "pyproject.toml").write_text("[tool.mlops-lint]\nrules = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n")
    outcome = run(["pod.yaml"], tmp_path, timeout=60)
    assert outcome.returncode == 2 and outcome.err.strip().splitlines() == [
        f"mlops-lint: error: {tmp_path / 'pyproject.toml'}: invalid TOML: nested too deeply to be read"], outcome.err


def test_exclude_patterns_match_in_linear_time(tmp_path: Path) -> None:
    """Twenty stars against a long name of x's: Python's regex engine backtracks through every way
    of splitting the name among the stars (a raw `[^/]*` x12 regex: 8 s at 20 characters);
    RE2 answers in microseconds, with git's semantics."""
    from mlops_lint.discover import exclude_spec

    spec = exclude_spec(["*" * 20 + "x", "a/**/b", "!a/keep/b", "/build/"])
    start = time.perf_counter()
    assert not spec.match_file("x" * 200 + "y.yaml")
    assert spec.match_file("dir/" + "x" * 200)
    assert time.perf_counter() - start < 1
    assert spec.match_file("a/q/r/b") and not spec.match_file("a/keep/b")
    assert spec.match_file("build/") and not spec.match_file("src/build/")

    folder = tmp_path / ("x" * 60 + "y")
    folder.mkdir()
    (folder / ("x" * 80 + "y.yaml")).write_bytes(POD)
    (tmp_path / "skipped-x").mkdir()
    (tmp_path / "skipped-x" / "pod.yaml").write_bytes(POD)
    (tmp_path / ".mlops-lint.yaml").write_text('exclude: ["' + "*" * 20 + 'x"]\n')
    outcome = run([".", "--format", "json", "--jobs", "1"], tmp_path, timeout=60)
    assert outcome.returncode == 1
    assert {f["path"] for f in _findings(outcome)} == {f"{folder.name}/{'x' * 80}y.yaml"}


def test_crd_paths_walk_is_bounded_with_a_note(tmp_path: Path) -> None:
    """`crd-paths` naming a huge folder (before: `["/"]` walked the whole file system): the walk
    stops after MAX_WALK_ENTRIES files and folders with one note, and the run goes on with the
    CRDs found before the bound."""
    from mlops_lint.validation.crds import MAX_WALK_ENTRIES

    crds = tmp_path / "crds"
    crds.mkdir()
    crd = Path(__file__).resolve().parents[2] / "shared" / "crds" / "jobset.x-k8s.io_jobsets.yaml"
    if not crd.exists():
        pytest.skip("../shared/crds is not here")
    (crds / "jobset.yaml").write_bytes(crd.read_bytes())
    for i in range(MAX_WALK_ENTRIES + 10):
        (crds / f"n{i}.txt").touch()
    (crds / "z").mkdir()
    (crds / "z" / "later.yaml").write_text("not: a crd\n")  # past the bound: never read
    (tmp_path / ".mlops-lint.yaml").write_text('crd-paths: ["crds"]\n')
    (tmp_path / "pod.yaml").write_bytes(POD)
    outcome = run(["pod.yaml", "--format", "json", "--jobs", "1"], tmp_path, timeout=120)
    assert outcome.returncode in (0, 1), outcome.err
    assert outcome.err.splitlines() == [
        f"mlops-lint: note: crd-paths folder {crds}: stopped after {MAX_WALK_ENTRIES:,} files and folders; "
        "the CRDs past that were not read (name a smaller folder)"]
    _findings(outcome)


# -- 11. odd values: huge numbers, deep JSON -------------------------------------------------------


def _numbers_everywhere(number: str, name: str) -> str:
    quoted = f'"{number}"'
    return f"""\
apiVersion: batch/v1
kind: Job
metadata: {{name: {name}, namespace: ml, labels: {{app: a}}}}
spec:
  parallelism: {number}
  completions: {number}
  backoffLimit: {number}
  activeDeadlineSeconds: {number}
  template:
    metadata: {{labels: {{app: a}}}}
    spec:
      restartPolicy: Never
      terminationGracePeriodSeconds: {number}
      nodeSelector: {{kubernetes.azure.com/accelerator: nvidia}}
      containers:
      - name: trainer
        image: nvcr.io/nvidia/pytorch:24.05-py3
        ports: [{{containerPort: {number}}}]
        env: [{{name: WORLD_SIZE, value: {quoted}}}, {{name: NCCL_NSOCKS_PERTHREAD, value: {quoted}}}]
        command: [torchrun, --nproc_per_node={number}, --nnodes={number}, train.py]
        resources:
          requests: {{cpu: {number}, memory: {number}, nvidia.com/gpu: {number}, ephemeral-storage: {quoted}}}
          limits: {{cpu: {quoted}, memory: {quoted}, nvidia.com/gpu: {number}}}
        volumeMounts: [{{name: shm, mountPath: /dev/shm}}]
      volumes:
      - name: shm
        emptyDir: {{medium: Memory, sizeLimit: {quoted}}}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {{name: {name}}}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, cpu, memory]
    flavors:
    - name: f
      resources:
      - {{name: nvidia.com/gpu, nominalQuota: {number}, borrowingLimit: {number}}}
      - {{name: cpu, nominalQuota: {quoted}}}
      - {{name: memory, nominalQuota: {number}}}
---
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {{name: {name}, namespace: ml}}
spec:
  pytorchReplicaSpecs:
    Worker:
      replicas: {number}
      template:
        spec:
          containers:
          - name: pytorch
            image: nvcr.io/nvidia/pytorch:24.05-py3
            resources: {{limits: {{nvidia.com/gpu: {number}}}}}
"""


def test_huge_numbers_and_deep_json_never_make_a_rule_raise(tmp_path: Path) -> None:
    """Integers past Python's 4,300-digit conversion limit (and hex ones that convert but cannot
    be printed) in manifests and `az` flags, and ENTRYPOINT/CMD arrays nested 5,000 deep: every
    rule runs and none raises (before: RES007, GPU003, RES004, DST001, QUE006, GPU002, AKS004 and
    DKR006 raised LNT002)."""
    numbers = {"long": "9" * 5000, "just-convertible": "9" * 4290, "hex": "0x" + "f" * 4000}
    files = {f"{key}.yaml": _numbers_everywhere(value, key) for key, value in numbers.items()}
    for key, value in numbers.items():
        files[f"{key}.sh"] = (f"az aks create -g rg -n c --node-count {value} --max-pods {value} "
                              "--node-vm-size Standard_NC24ads_A100_v4\n"
                              f"az aks nodepool add -g rg --cluster-name c -n gpu{key.replace('-', '')} "
                              f"--node-count {value} --min-count {value} --max-count {value} "
                              f"--enable-cluster-autoscaler --node-vm-size Standard_NC24ads_A100_v4 --max-pods {value}\n")
    files["Dockerfile"] = ("FROM python:3.11\nENTRYPOINT " + "[" * 5000 + '"a"' + "]" * 5000 + "\nCMD "
                           + "[" * 3000 + "]" * 3000 + "\n")
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    outcome = run([".", "--select", "ALL", "--format", "json", "--jobs", "1"], tmp_path, timeout=120)
    findings = _findings(outcome)
    assert outcome.returncode == 1
    assert [f["message"] for f in findings if f["rule"] in ("LNT001", "LNT002")] == []
    rules = {f["rule"] for f in findings}
    assert {"AKS004", "DKR006"} <= rules, rules
    (entrypoint,) = [f for f in findings if f["rule"] == "DKR006" and f["line"] == 2]
    assert "in shell form" in entrypoint["message"]
    for key in numbers:
        bounds = [f for f in findings if f["path"] == f"{key}.sh" and f["rule"] == "AKS004"]
        assert {f["message"].split(" must ")[0] for f in bounds if "must be" in f["message"]} == {
            "`az aks nodepool add` --min-count", "`az aks nodepool add` --max-count"}, (key, bounds)


# -- the console script, for the items about the process -------------------------------------------


def _command() -> list[str]:
    found = shutil.which("mlops-lint")
    return [found] if found else [sys.executable, "-m", "mlops_lint"]


def _cli(args: list[str], cwd: Path, *, preexec: Callable[[], None] | None = None, stdin: bytes = b"",
         env: dict[str, str] | None = None, timeout: float = 120, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([*_command(), *args], cwd=cwd, input=stdin, capture_output=True, timeout=timeout,
                          preexec_fn=preexec, env={**os.environ, **(env or {})}, **kwargs)


def _one_line(completed: subprocess.CompletedProcess, code: int = 2) -> str:
    err = completed.stderr.decode("utf-8", "replace")
    assert completed.returncode == code, (completed.returncode, err)
    assert "Traceback" not in err and "internal error" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def _file_size_limit(size: int) -> Callable[[], None]:
    def limit() -> None:
        import resource

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
    return limit


def _tree(tmp_path: Path) -> Path:
    (tmp_path / "pod.yaml").write_bytes(POD)
    return tmp_path


# -- 16. environment errors -----------------------------------------------------------------------


def test_environment_errors_are_one_line_exit_2_and_leave_no_partial_file(tmp_path: Path) -> None:
    """Each failure of the surroundings is one line on stderr and exit 2, never "internal error",
    and leaves the target as it was (before: tracebacks, exit 1, an empty .mlops-lint.yaml)."""
    tree = _tree(tmp_path)
    assert _one_line(_cli(["pod.yaml", "-o", "/dev/full"], tree)) == \
        "mlops-lint: error: cannot write /dev/full: No space left on device"
    assert _one_line(_cli(["pod.yaml", "--write-baseline", "/dev/full"], tree)).startswith(
        "mlops-lint: error: cannot write /dev/full")

    # a full disk (a file-size limit): the old report is left whole, no temporary file beside it
    (tree / "report.json").write_text("old report\n")
    line = _one_line(_cli(["pod.yaml", "--format", "json", "-o", "report.json"], tree, preexec=_file_size_limit(512)))
    assert line == "mlops-lint: error: cannot write report.json: File too large"
    assert (tree / "report.json").read_text() == "old report\n"
    line = _one_line(_cli(["init"], tree, preexec=_file_size_limit(64)))
    assert line.startswith("mlops-lint: error:") and "File too large" in line
    assert not (tree / ".mlops-lint.yaml").exists()
    assert sorted(p.name for p in tree.iterdir()) == ["pod.yaml", "report.json"]

    # a read-only folder (even root is refused: CAP_DAC_OVERRIDE dropped in the child)
    locked = tree / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        outcome = run(["pod.yaml", "-o", "locked/report.txt"], tree, drop_dac=True)
        assert outcome.returncode == 2 and outcome.err.strip().splitlines() == [
            "mlops-lint: error: cannot write locked/report.txt: Permission denied"], outcome.err
        outcome = run(["init", "locked"], tree, drop_dac=True)
        assert outcome.returncode == 2 and "Permission denied" in outcome.err and "Traceback" not in outcome.err
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o755)

    # names over the system's limit
    long_name = "a" * 300
    assert _one_line(_cli([long_name], tree)).endswith(": File name too long")
    line = _one_line(_cli(["-", "--stdin-filename", f"{long_name}.yaml"], tree, stdin=POD))
    assert line.startswith("mlops-lint: error: File name too long: ") and "..." in line

    # a baseline nested 5,000 deep, a baseline that is a FIFO: reported before anything is linted
    (tree / "deep.json").write_text("[" * 5000 + "]" * 5000)
    assert _one_line(_cli(["pod.yaml", "--baseline", "deep.json"], tree)) == \
        "mlops-lint: error: deep.json: cannot read the baseline: nested too deeply"
    os.mkfifo(tree / "fifo.json")
    assert _one_line(_cli(["pod.yaml", "--baseline", "fifo.json"], tree, timeout=30)) == \
        "mlops-lint: error: fifo.json: cannot read the baseline: not read: not a regular file"

    # standard output closed: one line, exit 2; with -o the report is still written
    closed = subprocess.run([*_command(), "pod.yaml"], cwd=tree, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=lambda: os.close(1), timeout=120)
    assert _one_line(closed) == "mlops-lint: error: cannot write to standard output: it is closed"
    written = subprocess.run([*_command(), "pod.yaml", "-q", "-o", "out.txt"], cwd=tree, stdin=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, preexec_fn=lambda: os.close(1), timeout=120)
    assert written.returncode == 1 and "IMG002" in (tree / "out.txt").read_text(), written.stderr


# -- 17. output encodings -------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["latin-1", "cp437", "cp850", "iso-8859-15", "koi8-r"])
def test_every_format_and_explain_write_to_any_stdout_encoding(tmp_path: Path, encoding: str) -> None:
    """IMG002's message holds "…": on a stdout that cannot encode it every format and `explain`
    crashed (exit 2, internal error). Now the symbol is written as its ASCII fallback."""
    tree = _tree(tmp_path)
    env = {"PYTHONIOENCODING": encoding}
    for fmt in ("text", "json", "sarif", "github"):
        completed = _cli(["pod.yaml", "--format", fmt], tree, env=env)
        assert completed.returncode == 1 and b"Traceback" not in completed.stderr, (fmt, completed.stderr)
        out = completed.stdout.decode(encoding)
        assert "IMG002" in out and "(@sha256:...)" in out and "…" not in out, (fmt, out)
        if fmt in ("json", "sarif"):
            json.loads(out)
    explained = _cli(["explain", "IMG002"], tree, env=env)
    assert explained.returncode == 0 and b"Traceback" not in explained.stderr, explained.stderr
    assert "image-not-pinned" in explained.stdout.decode(encoding)
    # UTF-8 is written as it is
    utf8 = _cli(["pod.yaml"], tree, env={"PYTHONIOENCODING": "utf-8"})
    assert "(@sha256:…)" in utf8.stdout.decode("utf-8")


# -- 18. cache folders and baselines --------------------------------------------------------------


def test_cache_dir_option_and_variable_behave_the_same_on_a_file_or_an_unusable_folder(tmp_path: Path) -> None:
    """Before: `--cache-dir FILE` was a usage error (exit 2) while MLOPS_LINT_CACHE_DIR=FILE
    linted silently. Now both lint uncached with the same note."""
    tree = _tree(tmp_path)
    (tree / "a-file").write_text("x")
    locked = tree / "locked"
    locked.mkdir()
    locked.chmod(0)
    env = {"MLOPS_LINT_NO_CACHE": ""}
    try:
        for target, problem in (("a-file", "is not a folder"), ("locked", "cannot be read and written")):
            by_option = run(["pod.yaml", "--format", "json", "--cache-dir", target], tree, env=env, drop_dac=True)
            by_variable = run(["pod.yaml", "--format", "json"], tree, env={**env, "MLOPS_LINT_CACHE_DIR": target},
                              drop_dac=True)
            for outcome, source in ((by_option, "--cache-dir"), (by_variable, "MLOPS_LINT_CACHE_DIR")):
                assert outcome.returncode == 1, outcome.err
                assert outcome.err.strip().splitlines() == [
                    f"mlops-lint: note: the cache folder {target} ({source}) {problem}; linting without the "
                    "result cache"], outcome.err
            assert json.loads(by_option.stdout)["findings"] == json.loads(by_variable.stdout)["findings"]
        assert (tree / "a-file").read_text() == "x"
    finally:
        locked.chmod(0o755)
    assert list(locked.iterdir()) == []


def test_a_bad_baseline_is_reported_before_the_lint_runs(tmp_path: Path) -> None:
    """Before: the whole tree was linted (and its results cached), then the baseline refused. Now
    it is read first: the result cache stays empty, as nothing was linted."""
    tree = _tree(tmp_path)
    for name, content, reason in (("missing.json", None, "cannot read the file: No such file or directory"),
                                  ("broken.json", "{", "Expecting property name enclosed in double quotes"),
                                  ("wrong.json", "[]", "not an mlops-lint baseline")):
        if content is not None:
            (tree / name).write_text(content)
        line = _one_line(_cli(["pod.yaml", "--baseline", name, "--cache-dir", "cache"], tree,
                              env={"MLOPS_LINT_NO_CACHE": ""}))
        assert line.startswith(f"mlops-lint: error: {name}") and reason in line, line
        assert not list((tree / "cache").glob("run-*"))  # the rule index may be there; no run's results
    (tree / "good.json").write_text('{"findings": []}')
    linted = _cli(["pod.yaml", "--baseline", "good.json", "--cache-dir", "cache"], tree, env={"MLOPS_LINT_NO_CACHE": ""})
    assert linted.returncode == 1 and list((tree / "cache").glob("run-*")), linted.stderr


# -- 12-15. the engine: time budget, workers, Ctrl-C, --jobs ---------------------------------------

REPO = Path(__file__).resolve().parents[1]

SLOW_RULE = '''\
"""A test-only rule that never ends on a Pod whose name starts with `slow`.

## What it does
Spins.
"""

from mlops_lint.rule import Kind, Finding, rule


@rule(code="TST001", name="slow-rule", severity="warning", scope=Kind("Pod"))
def check(obj, ctx):
    if obj.name.startswith("slow"):
        while True:  # busy in Python: only the file's time budget stops it
            pass
    yield Finding(obj.span, "a quick finding")
'''


def _slow_plugin(root: Path) -> dict[str, str]:
    """A rule plugin (an installed distribution on PYTHONPATH) with the slow rule; the
    environment that makes the CLI load it."""
    site = root / "site"
    (site / "slow_rules").mkdir(parents=True)
    (site / "slow_rules" / "__init__.py").write_text('"""Test-only rules."""\n')
    (site / "slow_rules" / "tst001_slow_rule.py").write_text(SLOW_RULE)
    info = site / "slow_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: slow_rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[mlops_lint.rules]\nslow = slow_rules\n")
    return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO)])}


def _pods(folder: Path, names: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for name in names:
        (folder / f"{name}.yaml").write_bytes(POD.replace(b"name: p\n", f"name: {name}\n".encode()))


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_file_out_of_time_is_one_finding_and_the_run_goes_on(tmp_path: Path, jobs: str) -> None:
    """`file-timeout: 1` and a rule that never returns on one file of 60 (enough for workers):
    that file is one LNT002 naming the rule and the budget, every other file is linted, in the
    parent and in workers alike (before: the run never ended)."""
    env = _slow_plugin(tmp_path)
    tree = tmp_path / "tree"
    _pods(tree, ["slow-one", *(f"ok-{i}" for i in range(59))])
    (tree / ".mlops-lint.yaml").write_text("file-timeout: 1\n")
    completed = _cli([".", "--select", "TST001,LNT002,IMG", "--format", "json", "--jobs", jobs], tree, env=env,
                     timeout=300)
    assert completed.returncode == 1, completed.stderr
    findings = json.loads(completed.stdout)["findings"]
    slow = [f for f in findings if f["path"] == "slow-one.yaml"]
    assert [(f["rule"], f["line"], f["message"]) for f in slow] == [(
        "LNT002", 1, "rule TST001 (slow-rule) ran out of this file's time budget (1 s, `file-timeout`); the file "
        "was not linted further and its other findings are not reported")]
    quick = {f["path"] for f in findings if f["rule"] == "TST001"}
    assert quick == {f"ok-{i}.yaml" for i in range(59)}
    assert sum(f["rule"] == "IMG002" for f in findings) == 59


def test_file_timeout_is_validated_and_documented(tmp_path: Path) -> None:
    from mlops_lint.config import DEFAULT_FILE_TIMEOUT, INIT_TEMPLATE, config_schema

    assert config_schema()["properties"]["file-timeout"]["exclusiveMinimum"] == 0
    assert "# file-timeout:" in INIT_TEMPLATE and "file-timeout:" in (REPO / "README.md").read_text()
    assert DEFAULT_FILE_TIMEOUT >= 60
    tree = _tree(tmp_path)
    (tree / ".mlops-lint.yaml").write_text("file-timeout: 0\n")
    line = _one_line(_cli(["pod.yaml"], tree))
    assert line.startswith("mlops-lint: error:") and "file-timeout" in line


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _busy_run(tmp_path: Path) -> tuple[subprocess.Popen, list[int]]:
    """`--jobs 2` on 60 files whose rule never ends: the parent and its worker both busy."""
    env = {**os.environ, **_slow_plugin(tmp_path)}
    tree = tmp_path / "tree"
    _pods(tree, [f"slow-{i}" for i in range(60)])
    process = subprocess.Popen([*_command(), ".", "--select", "TST001", "--jobs", "2"], cwd=tree, env=env,
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        workers = _children(process.pid)
        if workers:
            time.sleep(0.5)  # the worker is into its first chunk
            return process, workers
        time.sleep(0.1)
    process.kill()
    raise AssertionError("no worker was started")


def _gone(pids: list[int], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(_alive(pid) for pid in pids):
            return True
        time.sleep(0.1)
    return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_workers_die_with_their_parent(tmp_path: Path) -> None:
    """Only the parent is killed: its busy worker dies too, and a reader of the output gets EOF
    (before: the worker blocked forever and so did the reader)."""
    process, workers = _busy_run(tmp_path)
    try:
        process.kill()
        out, _ = process.communicate(timeout=30)  # EOF: no worker holds the output open
        assert _gone(workers), "a worker outlived its parent"
        assert out == b""
    finally:
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_dying_with_the_chunk_lock_cannot_deadlock_the_parent() -> None:
    import multiprocessing
    import threading

    from mlops_lint.engine.workers import Counter, _claim

    counter = Counter(multiprocessing.get_context("fork"))
    pid = os.fork()
    if pid == 0:  # a worker killed while it holds the lock
        counter.locked().__enter__()
        os._exit(0)
    os.waitpid(pid, 0)
    claimed: list[int | None] = []
    thread = threading.Thread(target=lambda: claimed.extend([_claim(counter, 3), _claim(counter, 3)]), daemon=True)
    thread.start()
    thread.join(10)
    assert claimed == [0, 1], "the parent waits forever on a dead worker's lock"
    counter.close()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_during_jobs_2_is_exit_130_and_one_line(tmp_path: Path) -> None:
    """SIGINT to the whole process group, as a terminal sends it (before: ~50 lines of worker
    tracebacks and exit 1, which reads as "findings")."""
    process, workers = _busy_run(tmp_path)
    try:
        os.killpg(process.pid, signal.SIGINT)
        out, err = process.communicate(timeout=30)
        assert process.returncode == 130
        assert err.decode() == "mlops-lint: interrupted\n" and out == b""
        assert _gone(workers)
    finally:
        for pid in [process.pid, *workers]:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def _open_files(limit: int) -> Callable[[], None]:
    def set_limit() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))
    return set_limit


def test_jobs_are_capped_by_cpus_and_the_open_file_limit(tmp_path: Path) -> None:
    """`--jobs 100000` under `ulimit -n 1024` (before: EMFILE, exit 1): capped, with a note,
    and the findings are those of --jobs 1."""
    from mlops_lint.engine.workers import default_jobs

    tree = tmp_path / "tree"
    _pods(tree, [f"pod-{i}" for i in range(60)])
    alone = _cli([".", "--format", "json", "--jobs", "1"], tree)
    cpus = default_jobs()
    many = _cli([".", "--format", "json", "--jobs", "100000"], tree, preexec=_open_files(1024))
    assert many.returncode == alone.returncode == 1
    assert json.loads(many.stdout)["findings"] == json.loads(alone.stdout)["findings"]
    plural = "s" if cpus != 1 else ""
    assert many.stderr.decode().splitlines() == [
        f"mlops-lint: note: --jobs 100000 capped to {min(cpus, 240)}: the {cpus} CPU{plural} this process may use"]
    tight = _cli([".", "--format", "json", "--jobs", "100000"], tree, preexec=_open_files(70))
    assert tight.returncode == 1 and json.loads(tight.stdout)["findings"] == json.loads(alone.stdout)["findings"]
    assert tight.stderr.decode().splitlines() == [
        "mlops-lint: note: --jobs 100000 capped to 1: what the open-file limit (70) leaves room for"]
