"""Hostile surroundings (issue 21, items 1-6, and issue 17's shared cache): nothing from the linted
tree runs, nothing is written where it should not be, and nothing printed can forge a line.

Every test that is about the process runs the real command (``mlops-lint`` and ``python -m
mlops_lint``) in a subprocess, in a tree under tmp_path laid out as an attacker would.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
       "  - name: c\n    image: nginx:latest\n")


def environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MLOPS_LINT_")}
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def command(module: bool = False) -> list[str]:
    """The console script (as installed), else the same entry point through ``-c``."""
    if module:
        return [sys.executable, "-m", "mlops_lint"]
    script = shutil.which("mlops-lint")
    return [script] if script else [sys.executable, "-c", "from mlops_lint.cli import run; run()"]


def mlops(cwd: Path, *args: str, module: bool = False, timeout: float = 120, **env: str):
    return subprocess.run([*command(module), *args], cwd=cwd, env=environment(**env), capture_output=True,
                          text=True, timeout=timeout, check=False)


# --- 1. code from the linted tree is never imported -------------------------------------------


def plant_code(tree: Path) -> list[Path]:
    """A plugin declared by a dist-info in the tree, a `rules` package and a `yaml` module: each
    leaves a mark when imported. Returns the marks' paths."""
    marks = [tree / "PWNED-plugin", tree / "PWNED-rules", tree / "PWNED-yaml"]
    (tree / "evil-1.0.dist-info").mkdir(parents=True)
    (tree / "evil-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n")
    (tree / "evil-1.0.dist-info" / "entry_points.txt").write_text("[mlops_lint.rules]\nevil = evil\n")
    (tree / "evil.py").write_text(f"open({str(marks[0])!r}, 'w').close()\n")
    (tree / "rules").mkdir()
    (tree / "rules" / "__init__.py").write_text(f"open({str(marks[1])!r}, 'w').close()\n")
    (tree / "yaml.py").write_text(f"open({str(marks[2])!r}, 'w').close()\n")
    (tree / "pod.yaml").write_text(POD)
    return marks


@pytest.mark.parametrize("module", [True, False], ids=["python -m mlops_lint", "mlops-lint with PYTHONPATH=."])
def test_nothing_from_the_linted_tree_is_imported(tmp_path: Path, module: bool) -> None:
    marks = plant_code(tmp_path)
    extra = {} if module else {"PYTHONPATH": f"{REPO}{os.pathsep}.{os.pathsep}"}
    done = subprocess.run([*command(module), "pod.yaml", "--no-cache", "--no-color"], cwd=tmp_path,
                          env=environment(**extra), capture_output=True, text=True, timeout=120, check=False)
    assert not [m.name for m in marks if m.exists()]
    assert done.returncode == 1, done.stderr  # the real rules ran: findings, not "All checks passed"
    assert "pod.yaml:6:5: WARNING RES001" in done.stdout


def test_third_party_linter_and_rules_packages_earlier_on_the_path_change_nothing(tmp_path: Path) -> None:
    other = tmp_path / "site"
    for package in ("linter", "rules"):
        (other / package).mkdir(parents=True)
        (other / package / "__init__.py").write_text(f'"""someone else\'s {package}"""\nraise ImportError("not ours")\n')
    (tmp_path / "pod.yaml").write_text(POD)
    plain = mlops(tmp_path, "pod.yaml", "--no-cache", "--format", "json")
    shadowed = mlops(tmp_path, "pod.yaml", "--no-cache", "--format", "json", PYTHONPATH=f"{other}{os.pathsep}{REPO}")
    assert shadowed.returncode == plain.returncode == 1
    assert shadowed.stdout == plain.stdout and json.loads(plain.stdout)["findings"]


# --- 2. a shared cache folder: nothing written through a link ---------------------------------


def run_file(cache: Path) -> Path:
    [file] = cache.glob("run-*.cache")
    return file


def test_a_shared_cache_folder_writes_through_no_link(tmp_path: Path) -> None:
    tree, cache, victim = tmp_path / "tree", tmp_path / "cache", tmp_path / "victim"
    tree.mkdir()
    (tree / "pod.yaml").write_text(POD)
    cache.mkdir()
    (cache / "CACHEDIR.TAG").symlink_to(tmp_path / "tag-victim")  # dangling: a write would create it
    assert mlops(tree, ".", "--cache-dir", str(cache)).returncode == 1
    assert not (tmp_path / "tag-victim").exists() and (cache / "CACHEDIR.TAG").is_symlink()
    entry = run_file(cache)
    victim.write_text("precious")
    entry.unlink()
    entry.symlink_to(victim)  # another user's link where the next run writes its entry
    stale = cache / ".run-0.1.0-dead.cache.tmp"
    stale.write_text("left by a run that died")
    os.utime(stale, (time.time() - 7200, time.time() - 7200))
    fresh = cache / ".run-0.1.0-busy.cache.tmp"
    fresh.write_text("a run writing now")
    old = cache / "run-0.0.1-0123456789abcdef.cache"  # an older version's entry
    old.write_text("{}")
    newer = cache / "run-99.0.0-0123456789abcdef.cache"  # a newer version's, sharing the folder
    newer.write_text("{}")
    pickled = cache / "run-0123456789abcdef.pickle"  # the pickle format: never read again
    pickled.write_bytes(b"\x80\x05N.")
    assert mlops(tree, ".", "--cache-dir", str(cache)).returncode == 1
    assert victim.read_text() == "precious"
    assert not entry.is_symlink() and stat.S_ISREG(entry.lstat().st_mode)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600  # made by mkstemp
    assert not stale.exists() and fresh.exists() and not old.exists() and newer.exists() and not pickled.exists()


# --- 3. cache entries that are not regular files, too large, or of the wrong shape -------------


@pytest.mark.parametrize("kind", ["fifo", "link to /dev/zero", "sparse file past the bound", "wrong shape",
                                  "planted class", "fraction bomb"])
def test_a_hostile_cache_entry_is_a_miss(tmp_path: Path, kind: str) -> None:
    from mlops_lint.cache import MAX_BYTES

    tree, cache = tmp_path / "tree", tmp_path / "cache"
    tree.mkdir()
    (tree / "pod.yaml").write_text(POD)
    (tree / "job.yaml").write_text(POD.replace("name: p,", "name: q,"))
    plain = mlops(tree, ".", "--no-cache", "--format", "json").stdout
    assert mlops(tree, ".", "--cache-dir", str(cache), "--format", "json").stdout == plain
    entry = run_file(cache)
    payload = json.loads(entry.read_text())
    entry.unlink()
    if kind == "fifo":
        os.mkfifo(entry)  # opened blocking, this would hang the run
    elif kind == "link to /dev/zero":
        entry.symlink_to("/dev/zero")  # followed and read whole, gigabytes
    elif kind == "sparse file past the bound":
        with open(entry, "wb") as handle:
            handle.truncate(MAX_BYTES + 1)
    else:
        if kind == "wrong shape":
            payload["results"]["results"][1]["span"][0] = "1"  # a line that is a string: sorting findings would crash
        elif kind == "planted class":
            first = next(iter(payload["files"]))
            payload["files"][first][4] = [{"C": "os:system", "V": ["touch PLANTED"]}]
        else:
            first = next(iter(payload["files"]))
            payload["files"][first][5] = {"OBS001": [{"R": [10 ** 400, 3]}]}
        entry.write_text(json.dumps(payload))
    start = time.monotonic()
    warm = mlops(tree, ".", "--cache-dir", str(cache), "--format", "json", timeout=60)
    assert time.monotonic() - start < 50
    assert warm.returncode == 1 and warm.stdout == plain, warm.stderr
    assert not (tree / "PLANTED").exists()


def test_a_crafted_value_builds_no_class_outside_mlops_lint_and_checks_every_field() -> None:
    from mlops_lint import cachedata
    from mlops_lint.model.document import ObjectStub
    from mlops_lint.model.position import Span

    for planted in ({"C": "os:system", "V": ["true"]}, {"C": "subprocess:Popen", "G": [["true"]]},
                    {"C": "mlops_lint.__main__:run", "V": []}, {"C": "builtins:eval", "V": ["1"]},
                    {"R": [2 ** 70, 1]}, {"X": 1}, {"T": [1], "D": []}):
        with pytest.raises(cachedata.Invalid):
            cachedata.decode(json.loads(json.dumps(planted, default=str)))
    assert "mlops_lint.__main__" not in sys.modules
    stub = ObjectStub("v1", "Pod", "p", "ml", "a.yaml", 0, ("spec",), Span(1, 2, 3, 4))
    data = cachedata.encode(stub)
    assert cachedata.decode(json.loads(json.dumps(data))) == stub
    data["V"][5] = "0"  # doc_index: int
    with pytest.raises(cachedata.Invalid):
        cachedata.decode(data)
    data["V"][5] = 0
    data["V"][7] = [1, 2, 3]  # a span of three
    with pytest.raises(cachedata.Invalid):
        cachedata.decode(data)


# --- 4. nothing printed can forge a line ------------------------------------------------------

FORGED = "x.yaml\n::error file=README.md,line=1::forged \u202elmay.yaml"


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_a_file_name_cannot_forge_a_workflow_command(tmp_path: Path, fmt: str) -> None:
    (tmp_path / FORGED).write_text(POD)
    done = mlops(tmp_path, ".", "--no-cache", "--format", fmt, "--no-color")
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert not [line for line in lines if line.startswith("::error file=README.md")]
    assert "\u202e" not in done.stdout and "\\u202e" in done.stdout
    if fmt == "text":
        assert any(line.startswith("x.yaml\\x0a::error file=README.md,line=1::forged \\u202elmay.yaml:6:5: ")
                   for line in lines)
    else:
        assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in lines)


def test_a_stdin_filename_cannot_forge_a_line(tmp_path: Path) -> None:
    done = subprocess.run([*command(), "-", "--stdin-filename", FORGED, "--no-cache", "--no-color"], input=POD,
                          cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1 and done.stdout.strip()
    assert not [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert "x.yaml\\x0a::error file=README.md" in done.stdout


# --- 5. init changes no effective config silently, and writes through no link ----------------


@pytest.mark.parametrize("source", [".mlops-lint.yml", "pyproject.toml", "dangling link", "parent folder"])
def test_init_refuses_when_a_config_applies(tmp_path: Path, source: str) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    victim = tmp_path / "victim"
    if source == ".mlops-lint.yml":
        (folder / source).write_text("select: [SCH001]\n")
    elif source == "pyproject.toml":
        (folder / source).write_text('[tool.mlops-lint]\nselect = ["SCH001"]\n')
    elif source == "dangling link":
        (folder / ".mlops-lint.yaml").symlink_to(victim)
    else:
        (tmp_path / ".mlops-lint.yaml").write_text("select: [SCH001]\n")
    done = mlops(tmp_path, "init", str(folder))
    assert done.returncode == 2 and "a config already applies here" in done.stderr and "--force" in done.stderr
    assert not victim.exists()
    assert source == "dangling link" or not (folder / ".mlops-lint.yaml").exists()
    forced = mlops(tmp_path, "init", str(folder), "--force")
    assert forced.returncode == 0, forced.stderr
    target = folder / ".mlops-lint.yaml"
    assert not target.is_symlink() and target.read_text().strip() and not victim.exists()


# --- 6. a config in a folder others can write is not used ------------------------------------


def test_a_config_in_a_world_writable_folder_is_ignored_with_a_note(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "project").mkdir(parents=True)
    shared.chmod(0o777)  # like /tmp without its sticky bit: anyone may put or replace a file here
    (shared / ".mlops-lint.yaml").write_text("select: [SCH001]\n")  # would silence every rule
    (shared / "project" / "pod.yaml").write_text(POD)
    done = mlops(shared / "project", ".", "--no-cache", "--no-color")
    assert done.returncode == 1 and "IMG001" in done.stdout
    assert (f"note: {shared / '.mlops-lint.yaml'}: config not used: in {shared}, which every user can write to"
            in done.stdout)
    trusted = mlops(shared / "project", ".", "--no-cache", "--config", str(shared / ".mlops-lint.yaml"))
    assert trusted.returncode == 0  # named by the user: used


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a file away")
def test_a_config_another_user_put_in_a_sticky_folder_is_ignored(tmp_path: Path) -> None:
    sticky = tmp_path / "tmp"
    (sticky / "project").mkdir(parents=True)
    sticky.chmod(0o1777)  # like /tmp
    config = sticky / ".mlops-lint.yaml"
    config.write_text("select: [SCH001]\n")
    (sticky / "project" / "pod.yaml").write_text(POD)
    os.chown(config, 65534, 65534)  # put there by someone else
    done = mlops(sticky / "project", ".", "--no-cache", "--no-color")
    assert done.returncode == 1 and "config not used: owned by another user (uid 65534)" in done.stdout
    os.chown(config, 0, 0)  # one's own (root's) file in a sticky folder: nobody else can replace it
    assert mlops(sticky / "project", ".", "--no-cache").returncode == 0


def test_a_cache_folder_inside_the_project_is_not_linted(tmp_path: Path) -> None:
    """A cache kept in the checkout (``--cache-dir lint-cache``, as bench/run.py does beside its
    corpus): its files are JSON, but not named so, and a warm run reads its entries instead of
    linting them (named .json, every run saw a changed file and missed)."""
    (tmp_path / "pod.yaml").write_text(POD)
    plain = mlops(tmp_path, ".", "--no-cache", "--format", "json").stdout
    cold = mlops(tmp_path, ".", "--cache-dir", "lint-cache", "--format", "json").stdout
    [entry] = (tmp_path / "lint-cache").glob("run-*")
    written = entry.read_bytes()
    warm = mlops(tmp_path, ".", "--cache-dir", "lint-cache", "--format", "json").stdout
    assert cold == warm == plain
    assert entry.read_bytes() == written  # every entry a hit, nothing rewritten: the cache file was no new input
