"""Rule plugins: distributions that declare an ``mlops_lint.rules`` entry point.

The registry skips importlib.metadata when ``linter.plugins`` proves from the metadata files that
no distribution declares a plugin; these tests hold that proof to importlib.metadata's own answer
and run a real plugin through the CLI.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from mlops_lint import plugins

REPO = Path(__file__).resolve().parents[1]

PLUGIN_RULE = '''\
"""A Pod named `forbidden`.

## What it does
Flags it.
"""

from mlops_lint.rule import Kind, Finding, rule


@rule(code="ACM001", name="forbidden-pod", severity="warning", scope=Kind("Pod"))
def check(obj, ctx):
    if obj.name == "forbidden":
        yield Finding(obj.span, "this Pod is forbidden")
'''

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: forbidden
spec:
  containers:
    - {name: c, image: "busybox@sha256:%s"}
""" % ("0" * 64)


def dist(root: Path, name: str, entry_points_txt: str | bytes | None, suffix: str = ".dist-info") -> Path:
    info = root / f"{name}-1.0{suffix}"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8")
    if entry_points_txt is not None:
        data = entry_points_txt if isinstance(entry_points_txt, bytes) else textwrap.dedent(entry_points_txt).encode()
        (info / "entry_points.txt").write_bytes(data)
    return info


def plugin_package(root: Path) -> None:
    package = root / "acme_rules"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""ACME rules."""\n', encoding="utf-8")
    (package / "acm001_forbidden_pod.py").write_text(PLUGIN_RULE, encoding="utf-8")


def importlib_plugins() -> list[str]:
    return [ep.value for ep in entry_points(group=plugins.GROUP) if ep.value != plugins.BUILTIN]


@pytest.fixture
def path_of(monkeypatch: pytest.MonkeyPatch):
    """Put exactly these folders on sys.path (and drop importlib.metadata's path cache)."""

    def put(*folders: os.PathLike | str) -> None:
        monkeypatch.setattr(sys, "path", [os.fspath(f) for f in folders])
        import importlib

        importlib.invalidate_caches()

    yield put
    import importlib

    importlib.invalidate_caches()


CASES = {
    "nothing": [],
    "builtin only": [("mlops_lint", "[mlops_lint.rules]\nbuiltin = mlops_lint.rules\n")],
    "builtin, spaced": [("mlops_lint", "[console_scripts]\nx = y:z\n\n[mlops_lint.rules]\n  builtin   =   mlops_lint.rules  \n# c\n")],
    "other groups": [("other", "[console_scripts]\nmlops_lint.rules = a.b:c\n"), ("mlops_lint", "[mlops_lint.rules]\nbuiltin = mlops_lint.rules\n")],
    "a plugin": [("mlops_lint", "[mlops_lint.rules]\nbuiltin = mlops_lint.rules\n"), ("acme", "[mlops_lint.rules]\nacme = acme_rules\n")],
    "a plugin, egg-info": [("acme", "[mlops_lint.rules]\nacme = acme_rules\n", ".egg-info")],
    "a plugin next to builtin": [("acme", "[mlops_lint.rules]\nbuiltin = mlops_lint.rules\nacme = acme_rules\n")],
    "commented out": [("acme", "[mlops_lint.rules]\n# acme = acme_rules\n")],
    "group named in a comment": [("acme", "# see [mlops_lint.rules]\n[other]\nacme = acme_rules\n")],
    "no entry_points.txt": [("acme", None)],
}


@pytest.mark.parametrize("case", CASES)
def test_the_proof_agrees_with_importlib_metadata(case: str, tmp_path: Path, path_of) -> None:
    for spec in CASES[case]:
        dist(tmp_path, *spec)
    path_of(tmp_path)
    found = importlib_plugins()
    assert plugins.may_have_plugins() or not found  # never "no plugin" when importlib finds one
    assert plugins.may_have_plugins() == bool(found)  # and exact for these plain layouts


def test_unprovable_layouts_defer_to_importlib_metadata(tmp_path: Path, path_of) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("acme-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: acme\nVersion: 1.0\n")
        bundle.writestr("acme-1.0.dist-info/entry_points.txt", "[mlops_lint.rules]\nacme = acme_rules\n")
    path_of(archive)
    assert importlib_plugins() == ["acme_rules"]
    assert plugins.may_have_plugins()

    (tmp_path / "x.egg").mkdir()
    path_of(tmp_path / "x.egg")
    assert plugins.may_have_plugins()

    bad = tmp_path / "bad"
    dist(bad, "acme", b"[mlops_lint.rules]\nacme = \xff\n")
    path_of(bad)
    assert plugins.may_have_plugins()

    broken = tmp_path / "broken"
    dist(broken, "acme", "[mlops_lint.rules]\nno equals sign\n")
    path_of(broken)
    assert plugins.may_have_plugins()


def test_a_finder_with_its_own_distributions_defers_to_importlib_metadata(tmp_path: Path, path_of,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    class Finder:
        @staticmethod
        def find_spec(*args, **kwargs):
            return None

        @staticmethod
        def find_distributions(*args, **kwargs):
            return iter(())

    path_of(tmp_path)
    assert not plugins.may_have_plugins()
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert plugins.may_have_plugins()


def test_this_environment_has_no_plugin_and_the_registry_agrees() -> None:
    assert plugins.may_have_plugins() == bool(importlib_plugins())


def cli(args: list[str], cwd: Path, extra_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(extra_path), str(REPO)])}
    return subprocess.run([sys.executable, "-c", "from mlops_lint.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_a_plugin_rule_is_listed_explained_and_run(tmp_path: Path) -> None:
    site = tmp_path / "site"
    plugin_package(site)
    dist(site, "acme_rules", "[mlops_lint.rules]\nacme = acme_rules\n")
    work = tmp_path / "work"
    work.mkdir()
    (work / "pod.yaml").write_text(POD, encoding="utf-8")

    listed = cli(["rules"], work, site)
    assert listed.returncode == 0, listed.stderr
    assert "ACM001  forbidden-pod" in listed.stdout
    assert "GPU001" in listed.stdout

    explained = cli(["explain", "ACM001"], work, site)
    assert explained.returncode == 0 and "A Pod named `forbidden`." in explained.stdout

    linted = cli(["pod.yaml", "--select", "ACM001"], work, site)
    assert linted.returncode == 1, linted.stderr
    assert "ACM001" in linted.stdout and "this Pod is forbidden" in linted.stdout

    without = cli(["rules"], work, tmp_path / "empty")
    assert "ACM001" not in without.stdout
