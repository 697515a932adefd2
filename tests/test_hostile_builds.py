"""Hostile repositories, round 2 (issue 32): kustomize builds confined and bounded.

The tree's config chooses no program and cannot lift kustomize's load restrictor; nothing outside
the project is read because the tree asks (a base out of the project, a named link); remote
addresses are found as kustomize reads its fields (keys in any case, UTF-16 text, every field that
names a path) and the build has no network; the build cache neither writes nor reads through a
link and leaves no temporary; builds count against file-timeout and one budget per run, and die
with the linter (SIGTERM, Ctrl-C) leaving nothing in TMPDIR.

Tests about the process run the real command in a subprocess, in a tree laid out as an attacker
would; those that need a build skip where neither kustomize nor kubectl is on PATH.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mlops_lint.engine import kustomize as kb
from mlops_lint.sources import kustomize as kz

REPO = Path(__file__).resolve().parents[1]
COMMAND = kb.find_command()
needs_build = pytest.mark.skipif(COMMAND is None, reason="neither kustomize nor kubectl is on PATH: nothing to build with")
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n"
       "  - {name: c, image: \"mcr.microsoft.com/x:1\"}\n")
SECRET = "s3cr3t-value-42"


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLOPS_LINT_")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def mlops(cwd: Path, *args: str, timeout: float = 120, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mlops_lint", *args], cwd=cwd, env=environment(**env),
                          capture_output=True, text=True, timeout=timeout, check=False)


def report(cwd: Path, *args: str, **env: str) -> dict:
    done = mlops(cwd, *args, "--format", "json", **env)
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)


def write(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


def exponential(root: Path, levels: int = 22) -> None:
    """A 44-file kustomization tree whose build takes hours (two bases per level)."""
    for i in range(levels):
        for side in "xy":
            resources = "[cm.yaml]" if i == levels - 1 else f"[../../L{i + 1}/x, ../../L{i + 1}/y]"
            write(root, {f"L{i}/{side}/kustomization.yaml": f"namePrefix: {side}-\nresources: {resources}\n"})
            if i == levels - 1:
                write(root, {f"L{i}/{side}/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
    write(root, {"kustomization.yaml": "resources: [L0/x, L0/y]\n"})


# --- the program: chosen by the user, never by the tree (02, 05) -----------------------------


@pytest.mark.parametrize("program", ["{tree}/tools/kustomize", "/proc/self/cwd/tools/kustomize", "tools/kustomize"])
def test_the_trees_config_cannot_choose_the_program_even_by_an_absolute_path(tmp_path: Path, program: str) -> None:
    tree = tmp_path / "repo"
    mark = tmp_path / "PWNED"
    write(tree, {"tools/kustomize": f"#!/bin/sh\ntouch {mark}\n", "kustomization.yaml": "resources: [cm.yaml]\n",
                 "cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n",
                 ".mlops-lint.yaml": f"kustomize:\n  command: [{program.format(tree=tree)}, build]\n"})
    (tree / "tools" / "kustomize").chmod(0o755)
    found = report(tree, ".", "--no-cache")
    assert not mark.exists()
    (refused,) = [f for f in found["findings"] if f["message"].startswith("kustomize.command not run: ")]
    assert (refused["path"], refused["rule"]) == ("kustomization.yaml", "SCH001")
    assert "may only name kustomize or kubectl" in refused["message"]


def test_the_user_chooses_a_program_outside_the_tree_by_the_environment(tmp_path: Path) -> None:
    chosen = tmp_path / "bin" / "kustomize"
    write(tmp_path, {"bin/kustomize": "#!/bin/sh\nexit 0\n"})
    chosen.chmod(0o755)
    os.environ[kb.PROGRAM_VARIABLE] = str(chosen)
    try:
        assert kb.find_command(("kustomize", "build", "--load-restrictor=LoadRestrictionsRootOnly")) == [
            str(chosen), "build", "--load-restrictor=LoadRestrictionsRootOnly"]
        assert kb.find_command() == [str(chosen), "build"]
        os.environ[kb.PROGRAM_VARIABLE] = "bin/kustomize"  # relative: refused
        with pytest.raises(kb.CommandRefused, match="must be an absolute path"):
            kb.find_command()
    finally:
        del os.environ[kb.PROGRAM_VARIABLE]


@pytest.mark.parametrize("flags", [["--load-restrictor", "LoadRestrictionsNone"],
                                   ["--load-restrictor=LoadRestrictionsNone"], ["--load_restrictor=LoadRestrictionsNone"]])
def test_the_trees_config_cannot_lift_the_load_restrictor(flags: list[str]) -> None:
    with pytest.raises(kb.CommandRefused, match="only --load-restrictor LoadRestrictionsRootOnly"):
        kb.check_command(["kubectl", "kustomize", *flags])
    kb.check_command(["kubectl", "kustomize", "--load-restrictor", "LoadRestrictionsRootOnly"])  # the default


# --- confinement: every escape a tree could try, in one run (05, 06, 11) -----------------------


@needs_build
def test_a_build_with_the_trees_config_reads_nothing_outside_the_project(tmp_path: Path) -> None:
    tree, outside = tmp_path / "repo", tmp_path / "elsewhere"
    write(outside, {"kustomization.yaml": "resources: [s.yaml]\n", "p.yaml": "kind: Pod\nmetadata: {name: p}\n",
                    "s.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: private-pod}\nspec:\n  containers:\n"
                              "  - {name: c, image: \"private.internal/secret-image:1\"}\n"})
    generator = ("resources: [pod.yaml]\nconfigMapGenerator:\n- {name: leak, files: [secret=%s]}\nreplacements:\n"
                 "- source: {kind: ConfigMap, name: leak, fieldPath: data.secret}\n  targets:\n"
                 "  - select: {kind: Pod, name: p}\n    fieldPaths: [spec.containers.0.name]\n")
    write(tree, {
        # the config tries to lift the load restrictor: refused, so nothing is built with it
        ".mlops-lint.yaml": "kustomize:\n  command: [kubectl, kustomize, --load-restrictor, LoadRestrictionsNone]\n",
        "environ/kustomization.yaml": generator % "/proc/self/environ", "environ/pod.yaml": POD,
        "relative/kustomization.yaml": generator % "../../../elsewhere/s.yaml", "relative/pod.yaml": POD,
        "base/kustomization.yaml": "namespace: a\nresources:\n- ../../elsewhere\n",
        "bases/kustomization.yaml": "bases: [../../elsewhere]\n",
        "component/kustomization.yaml": "resources: [pod.yaml]\ncomponents:\n- ../../elsewhere\n",
        "component/pod.yaml": POD,
        "upper/kustomization.yaml": "RESOURCES: [../../elsewhere]\n",
        "generators/kustomization.yaml": "generators: [../../elsewhere]\n",
        "patch/kustomization.yaml": "resources: [pod.yaml]\npatches:\n- path: ../../elsewhere/p.yaml\n",
        "patch/pod.yaml": POD,
        "utf16/kustomization.yaml": "resources: [inner]\n",
        "utf16/inner/kustomization.yaml": "resources:\n- ../../../elsewhere\n".encode("utf-16"),
        "named.yaml": "",
    })
    (tree / "linked").symlink_to(outside)  # a link in the tree to the folder outside
    write(tree, {"via-link/kustomization.yaml": "resources: [../linked]\n",
                 "via-file/kustomization.yaml": "resources: [../linked-file]\n"})
    (tree / "linked-file").mkdir()  # a folder of the tree whose kustomization is a link out
    (tree / "linked-file" / "kustomization.yaml").symlink_to(outside / "kustomization.yaml")
    (tree / "named.yaml").unlink()
    (tree / "named.yaml").symlink_to(outside / "s.yaml")  # a file named on the command line: a link out
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    done = mlops(tree, ".", "named.yaml", "--no-cache", "--format", "json", CI_DEPLOY_TOKEN=SECRET)
    assert SECRET not in done.stdout + done.stderr
    assert "secret-image" not in done.stdout + done.stderr and "private-pod" not in done.stdout
    found = json.loads(done.stdout)
    refused = [f["path"] for f in found["findings"] if f["message"].startswith("kustomize.command not run")]
    assert refused and "--load-restrictor" not in json.dumps(found["notes"])
    # with the config's command gone, the same tree: every root that leads out is not built
    (tree / ".mlops-lint.yaml").unlink()
    done = mlops(tree, ".", "named.yaml", "--no-cache", "--format", "json", CI_DEPLOY_TOKEN=SECRET)
    assert SECRET not in done.stdout + done.stderr
    assert "secret-image" not in done.stdout + done.stderr and "private-pod" not in done.stdout
    found = json.loads(done.stdout)
    notes = {n["path"]: n["message"] for n in found["notes"]}
    outside_notes = {path: message.split(": ")[1] for path, message in notes.items() if "outside the project" in message}
    assert outside_notes == {
        "base/kustomization.yaml": "base/kustomization.yaml:3", "bases/kustomization.yaml": "bases/kustomization.yaml:1",
        "component/kustomization.yaml": "component/kustomization.yaml:3",
        "upper/kustomization.yaml": "upper/kustomization.yaml:1",
        "generators/kustomization.yaml": "generators/kustomization.yaml:1",
        "patch/kustomization.yaml": "patch/kustomization.yaml:3",
        "relative/kustomization.yaml": "relative/kustomization.yaml:3",
        "utf16/kustomization.yaml": "utf16/inner/kustomization.yaml:2",
        "via-link/kustomization.yaml": "via-link/kustomization.yaml:1",
        "via-file/kustomization.yaml": "via-file/kustomization.yaml:1",
        "linked-file/kustomization.yaml": "the link points outside the project (%s)" % (outside / "kustomization.yaml"),
        "environ/kustomization.yaml": "environ/kustomization.yaml:3",  # /proc/self/environ
        "named.yaml": "the link points outside the project (%s)" % (outside / "s.yaml"),
    }
    assert "'/proc/self/environ', which leads outside the project" in notes["environ/kustomization.yaml"]
    assert not [f for f in found["findings"] if "kustomize" in f["message"]]  # nothing built, nothing failed


def test_a_named_link_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "repo"
    write(tmp_path, {"outside.yaml": POD.replace("name: p", "name: outside-pod")})
    tree.mkdir()
    subprocess.run(["git", "init", "-q", str(tree)], check=True)
    (tree / "link.yaml").symlink_to("../outside.yaml")
    write(tree, {"sub/inside.yaml": POD.replace("name: p", "name: inside-pod")})
    (tree / "sub" / "link.yaml").symlink_to("inside.yaml")  # a link inside the project is read
    done = mlops(tree, "link.yaml", "sub/link.yaml", "--no-cache", "--format", "json")
    assert "outside-pod" not in done.stdout
    found = json.loads(done.stdout)
    assert [n["path"] for n in found["notes"] if "link points outside the project" in n["message"]] == ["link.yaml"]
    assert {f["path"] for f in found["findings"]} == {"sub/link.yaml"}


# --- the network: every field as kustomize reads it (07, 08) ---------------------------------


REMOTE = "http://127.0.0.1:9/x.yaml"


@pytest.mark.parametrize("text", [
    f"Resources:\n- {REMOTE}\n", f"RESOURCES: [{REMOTE}]\n", f"re\u017fources: [{REMOTE}]\n",  # Go's case folding
    f"resources: [a.yaml]\nResources: [{REMOTE}]\n", f"bases: [{REMOTE}]\n", f"Components: [{REMOTE}]\n",
    f"generators: [{REMOTE}]\n", f"transformers: [{REMOTE}]\n", f"validators: [{REMOTE}]\n",
    f"crds: [{REMOTE}]\n", f"configurations: [{REMOTE}]\n", f"patchesStrategicMerge: [{REMOTE}]\n",
    f"patches:\n- Path: {REMOTE}\n", f"patchesJson6902:\n- path: {REMOTE}\n  target: {{kind: Pod}}\n",
    f"configMapGenerator:\n- name: x\n  Files: [k={REMOTE}]\n", f"secretGenerator:\n- name: x\n  envs: [{REMOTE}]\n",
    f"replacements:\n- path: {REMOTE}\n", f"openapi: {{path: {REMOTE}}}\n",
    f"transformers:\n- |\n  apiVersion: builtin\n  kind: PatchTransformer\n  metadata: {{name: p}}\n  path: {REMOTE}\n",
])
def test_every_field_that_can_fetch_is_checked_as_kustomize_reads_it(tmp_path: Path, text: str) -> None:
    for name, data in (("utf8", text.encode()), ("utf16", text.encode("utf-16")),
                       ("utf16be", b"\xfe\xff" + text.encode("utf-16-be")), ("bom", b"\xef\xbb\xbf" + text.encode())):
        write(tmp_path, {f"{name}/base/kustomization.yaml": data, f"{name}/kustomization.yaml": "resources: [base]\n"})
    listed = [(str(p), str(p.relative_to(tmp_path))) for p in sorted(tmp_path.rglob("*.yaml"))]
    roots = kz.find_roots(listed, str(tmp_path))
    assert [root.display for root in roots] == [f"{n}/kustomization.yaml" for n in ("bom", "utf16", "utf16be", "utf8")]
    assert all(REMOTE in " ".join(root.remote) for root in roots), [(r.display, r.remote) for r in roots]


def test_a_transformer_file_naming_a_remote_path_is_remote(tmp_path: Path) -> None:
    write(tmp_path, {"kustomization.yaml": "transformers: [t.yaml]\n",
                     "t.yaml": f"apiVersion: builtin\nkind: PatchTransformer\nmetadata: {{name: p}}\npath: {REMOTE}\n"})
    (root,) = kz.find_roots([(str(tmp_path / "kustomization.yaml"), "kustomization.yaml")], str(tmp_path))
    assert root.remote == [REMOTE]


@pytest.mark.parametrize("name, remote", [("example.org/team/repo.git", True), ("git::example.org/team/repo", True),
                                          ("gh:team/repo", True), ("v1.0/base", False)])
def test_a_base_kustomize_would_clone_is_remote_unless_a_local_path_has_its_name(tmp_path: Path, name: str,
                                                                                 remote: bool) -> None:
    write(tmp_path, {"kustomization.yaml": f"resources: [{name!r}]\n",
                     "v1.0/base/kustomization.yaml": "resources: []\n"})
    (root,) = kz.find_roots([(str(tmp_path / "kustomization.yaml"), "kustomization.yaml")], str(tmp_path))
    assert root.remote == ([name] if remote else [])


def test_a_plugin_configuration_is_read_in_linear_time_and_its_label_keys_are_no_address(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    write(tmp_path, {"kustomization.yaml": "transformers: [labels.yaml, bomb.yaml]\n", "bomb.yaml": bomb,
                     "labels.yaml": "apiVersion: builtin\nkind: LabelTransformer\nmetadata: {name: l}\n"
                                    "labels: {app.kubernetes.io/name: trainer}\nfieldSpecs: [{path: metadata/labels}]\n"})
    started = time.monotonic()
    (root,) = kz.find_roots([(str(tmp_path / "kustomization.yaml"), "kustomization.yaml")], str(tmp_path))
    assert time.monotonic() - started < 2  # 10**9 leaves if every alias were walked again
    assert root.remote == [] and root.refused is None


def test_a_base_mlops_lint_cannot_read_is_not_built(tmp_path: Path) -> None:
    write(tmp_path, {"kustomization.yaml": "resources: [base]\n", "base/kustomization.yaml": b"\xff\xfe\x00\xd8"})
    (root,) = kz.find_roots([(str(tmp_path / "kustomization.yaml"), "kustomization.yaml")], str(tmp_path))
    assert root.refused == (str(tmp_path / "base" / "kustomization.yaml"), 1, "it is not UTF-8 or UTF-16 text")
    write(tmp_path, {"base/kustomization.yaml": "# nothing yet\n"})  # empty: read fully, built (to nothing)
    (root,) = kz.find_roots([(str(tmp_path / "kustomization.yaml"), "kustomization.yaml")], str(tmp_path))
    assert root.refused is None


@needs_build
def test_the_build_itself_cannot_reach_the_network(tmp_path: Path) -> None:
    if not any("unshare" in part for part in kb.isolation()):
        pytest.skip("no network namespace here (unshare --net does not work): the checks are the only guard")
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the server's name
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        write(tmp_path, {"kustomization.yaml": f"resources:\n- http://127.0.0.1:{server.server_port}/x.yaml\n"})
        root = kz.Root(str(tmp_path / "kustomization.yaml"), "kustomization.yaml", [], [], [], False)
        built = kb.build(root, COMMAND, 30)  # straight to the build, past the linter's own check
    finally:
        server.shutdown()
    assert hits == [] and built.output is None and built.error


# --- the build cache: no link followed, no temporary left (03, 04, 29) ------------------------


def test_the_build_cache_writes_through_no_planted_link(tmp_path: Path) -> None:
    cache = kb.BuildCache(tmp_path / "cache")
    os.makedirs(cache.folder)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for pid in range(os.getpid() - 5, os.getpid() + 300):  # the names a predictable temporary would take
        os.symlink(victim, os.path.join(cache.folder, f".key.{pid}.tmp"))
    os.symlink(victim, os.path.join(cache.folder, "key.out"))
    cache.put("key", b"/tmp\nbuilt")
    assert victim.read_text() == "precious"
    assert not os.path.islink(os.path.join(cache.folder, "key.out"))  # the link replaced, not written through
    assert cache.get("key") == b"/tmp\nbuilt"


def test_the_build_cache_reads_no_link(tmp_path: Path) -> None:
    cache = kb.BuildCache(tmp_path / "cache")
    os.makedirs(cache.folder)
    planted = tmp_path / "elsewhere.out"
    planted.write_bytes(b"/tmp\nkind: Pod\nmetadata: {name: planted}\n")
    os.symlink(planted, os.path.join(cache.folder, "key.out"))
    assert cache.get("key") is None
    os.mkfifo(os.path.join(cache.folder, "fifo.out"))
    assert cache.get("fifo") is None  # nor blocks on a FIFO


def test_the_build_cache_leaves_no_temporary_when_the_disk_is_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    cache = kb.BuildCache(tmp_path / "cache")

    def full(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    cache.put("key", b"/tmp\nbuilt")
    assert os.listdir(cache.folder) == []


# --- time and signals (09, 10, 27, 36) --------------------------------------------------------


@needs_build
def test_builds_count_against_file_timeout_not_the_trees_hour(tmp_path: Path) -> None:
    exponential(tmp_path)
    write(tmp_path, {".mlops-lint.yaml": "file-timeout: 2\nkustomize: {timeout: 3600}\n"})
    started = time.monotonic()
    found = report(tmp_path, ".", "--no-cache")
    assert time.monotonic() - started < 30
    (finding,) = [f for f in found["findings"] if f["path"] == "kustomization.yaml"]
    assert finding["rule"] == "SCH001" and finding["message"].endswith("did not finish in 2 s")


@needs_build
def test_builds_share_one_budget_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.config import Config
    from mlops_lint.discover import SourceFile
    from mlops_lint.engine import builds

    exponential(tmp_path / "slow")
    write(tmp_path, {"fast/kustomization.yaml": "resources: [cm.yaml]\n",
                     "fast/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"})
    monkeypatch.setattr(kb, "BUILDS_BUDGET", 1.0)
    items = [(SourceFile(p, "k8s"), str(p.relative_to(tmp_path))) for p in sorted(tmp_path.rglob("*.yaml"))]
    builds.new_run()
    started = time.monotonic()
    done = builds.start(items, Config(), tmp_path, 1, None, {d for _, d in items}).result()
    assert time.monotonic() - started < 10
    messages = {result.path: result.message for result, _ in done.errors}
    # in the roots' order: fast is built; slow/ is cut at the budget's end (with --jobs 1 after fast)
    assert list(messages) == ["slow/kustomization.yaml"]
    assert "(the run's time for builds ran out)" in messages["slow/kustomization.yaml"] or \
        "the run's time for builds (1 s) was spent" in messages["slow/kustomization.yaml"]
    assert len(done.mappers) == 1
    done = builds.start(items, Config(), tmp_path, 1, None, {d for _, d in items}).result()  # the same run: spent
    assert all("the run's time for builds (1 s) was spent" in r.message for r, _ in done.errors)
    assert len(done.errors) == 2
    builds.end_run()  # outside a run, a start has the budget to itself
    done = builds.start(items, Config(), tmp_path, 1, None, {d for _, d in items}).result()
    assert [r.path for r, _ in done.errors] == ["slow/kustomization.yaml"] and len(done.mappers) == 1


def test_a_nan_kustomize_timeout_is_a_config_error(tmp_path: Path) -> None:
    write(tmp_path, {".mlops-lint.yaml": "kustomize: {timeout: .nan}\n", "kustomization.yaml": "resources: []\n"})
    done = mlops(tmp_path, ".", "--no-cache")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"mlops-lint: error: {tmp_path / '.mlops-lint.yaml'}:1:13: 'kustomize.timeout' is nan: numbers in the config "
        "must be finite")  # the config's general check (every number finite), before the kustomize section's own


def _build_of(linter: subprocess.Popen, seconds: float = 30) -> int:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        children = subprocess.run(["pgrep", "-P", str(linter.pid)], capture_output=True, text=True).stdout.split()
        if children:
            return int(children[0])
        time.sleep(0.1)
    raise AssertionError("no build process seen")


def _gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:  # a zombie of ours is gone too
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except OSError:
            return True
        time.sleep(0.1)
    return False


@needs_build
@pytest.mark.skipif(not sys.platform.startswith("linux") or not os.path.exists("/usr/bin/pgrep"), reason="Linux, pgrep")
@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, -signal.SIGTERM), (signal.SIGINT, 130)])
def test_a_build_dies_with_the_linter_and_leaves_nothing_in_tmpdir(tmp_path: Path, signum: int, status: int) -> None:
    exponential(tmp_path / "repo")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    linter = subprocess.Popen([sys.executable, "-m", "mlops_lint", ".", "--no-cache", "-q"], cwd=tmp_path / "repo",
                              env=environment(TMPDIR=str(scratch)), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        build = _build_of(linter)
        time.sleep(0.5)
        assert list(scratch.glob("mlops-lint-kustomize-*"))  # the wrapper, while it builds
        linter.send_signal(signum)  # to the linter only, not its group
        assert linter.wait(timeout=20) == status
        assert _gone(build), "the build outlived the linter"
        assert list(scratch.iterdir()) == []
    finally:
        linter.kill()
        linter.wait()
