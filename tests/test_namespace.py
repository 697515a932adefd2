"""One import namespace (issue 39 item 1): the wheel installs ``mlops_lint`` (the folders ``linter/``
and ``rules/``, mapped by pyproject.toml's ``package-dir``) and nothing named ``linter`` or
``rules``, so it installs beside a distribution that has top-level modules of those names; a rule
plugin written against the old names gets a clear error; scripts/namespace_codemod.py, which
converted the code, changes nothing on the converted tree (it is re-run after merging code
written against the old names).

The wheel test builds the wheel offline (``pip wheel --no-deps --no-build-isolation``: setuptools
and wheel come with the ``test`` extra) and installs it into a new virtual environment. The
dependencies cannot all be installed there offline, so the new environment borrows them from
this interpreter's site-packages folders, listed as plain paths in a ``.pth`` file: a folder
named that way is only appended to ``sys.path`` (its own ``.pth`` files, such as a development
install's editable finder, are not run), and the new environment's own site-packages comes
first, so ``mlops_lint``, ``linter`` and ``rules`` are found there.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CODEMOD = REPO / "scripts" / "namespace_codemod.py"
POD = ("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
       "  - name: c\n    image: nginx:latest\n")

DECOY_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "decoy-linter-rules"
version = "1.0"

[tool.setuptools]
py-modules = ["linter"]
packages = ["rules"]
"""


def run(args: list, cwd: Path, env: dict | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout,
                          check=False)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MLOPS_LINT_", "PYTHON", "VIRTUAL_ENV", "PIP_REQUIRE"))}
    env.update(NO_COLOR="1", MLOPS_LINT_NO_CACHE="1", **extra)
    return env


def build(project: Path, out: Path) -> Path:
    out.mkdir()
    done = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q",
                "-w", out, project], cwd=out, env=clean_env(), timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr
    [wheel] = out.glob("*.whl")
    return wheel


def test_the_wheel_installs_one_namespace_beside_top_level_linter_and_rules(tmp_path: Path) -> None:
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info beside pyproject.toml
    for name in ("linter", "rules", "schemas"):
        shutil.copytree(REPO / name, source / name, symlinks=True, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    ours = build(source, tmp_path / "ours")
    names = zipfile.ZipFile(ours).namelist()
    assert {n.split("/")[0] for n in names} == {"mlops_lint", ours.name.split("-py3")[0] + ".dist-info"}, \
        sorted({n.split("/")[0] for n in names})
    assert {"mlops_lint/__main__.py", "mlops_lint/rules/__init__.py", "mlops_lint/rules/gpu/__init__.py",
            "mlops_lint/schemas/config.schema.json", "mlops_lint/data/crds/index.json"} <= set(names)
    info = ours.name.split("-py3")[0] + ".dist-info"
    entry_points = zipfile.ZipFile(ours).read(f"{info}/entry_points.txt").decode()
    assert "mlops-lint = mlops_lint.cli:run" in entry_points and "builtin = mlops_lint.rules" in entry_points

    decoy = tmp_path / "decoy-linter-rules"
    (decoy / "rules").mkdir(parents=True)
    (decoy / "pyproject.toml").write_text(DECOY_PYPROJECT)
    (decoy / "linter.py").write_text('"""someone else\'s linter"""\nWHO = "decoy"\n')
    (decoy / "rules" / "__init__.py").write_text('"""someone else\'s rules (django-rules has one)"""\nWHO = "decoy"\n')
    other = build(decoy, tmp_path / "other")

    env_dir = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path).stdout.strip()
    borrowed = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if os.path.isdir(p)]
    Path(purelib, "zz_borrowed_dependencies.pth").write_text("".join(f"{p}\n" for p in borrowed))
    install = [sys.executable, "-m", "pip", "--python", python, "install", "-q", "--no-deps", "--no-index"]

    done = run([*install, ours], tmp_path, clean_env())
    assert done.returncode == 0, done.stderr
    alone = run([python, "-c", "import linter"], tmp_path, clean_env())
    assert alone.returncode == 1 and "No module named 'linter'" in alone.stderr, alone.stderr  # nothing of ours
    alone = run([python, "-c", "import rules"], tmp_path, clean_env())
    assert alone.returncode == 1 and "No module named 'rules'" in alone.stderr, alone.stderr

    done = run([*install, other], tmp_path, clean_env())
    assert done.returncode == 0, done.stderr
    where = run([python, "-c", "import linter, rules, mlops_lint, mlops_lint.rules as r; "
                 "print(linter.WHO, rules.WHO, mlops_lint.__file__, r.__file__, sep='\\n')"], tmp_path, clean_env())
    assert where.returncode == 0, where.stderr
    who_linter, who_rules, ours_file, rules_file = where.stdout.splitlines()
    assert who_linter == who_rules == "decoy"  # the other distribution's modules, nothing of ours
    assert Path(ours_file) == Path(purelib, "mlops_lint", "__init__.py")
    assert Path(rules_file) == Path(purelib, "mlops_lint", "rules", "__init__.py")

    version = run([python, "-m", "mlops_lint", "--version"], tmp_path, clean_env())
    assert version.returncode == 0 and version.stdout.strip() == "mlops-lint 0.1.0", version.stdout + version.stderr
    (tmp_path / "pod.yaml").write_text(POD)
    linted = run([env_dir / "bin" / "mlops-lint", "pod.yaml", "--no-color"], tmp_path, clean_env())
    assert linted.returncode == 1, linted.stdout + linted.stderr
    assert "pod.yaml:6:5: WARNING RES001" in linted.stdout  # the built-in rules ran
    here = run([sys.executable, "-m", "mlops_lint", "pod.yaml", "--no-color"], tmp_path, clean_env())
    assert linted.stdout == here.stdout  # the same report as this checkout's


OLD_PLUGIN = '''"""A plugin written before mlops-lint's one namespace."""

from linter.rule import Kind, Finding, rule
'''


@pytest.mark.parametrize("decoy", [False, True], ids=["no linter module", "someone else's linter module"])
def test_a_plugin_written_against_the_old_names_gets_a_clear_error(tmp_path: Path, decoy: bool) -> None:
    site_dir = tmp_path / "site"
    (site_dir / "old_rules").mkdir(parents=True)
    (site_dir / "old_rules" / "__init__.py").write_text('"""old rules"""\n')
    (site_dir / "old_rules" / "old001_thing.py").write_text(OLD_PLUGIN)
    (site_dir / "old_rules" / "__init__.py").write_text("from old_rules import old001_thing  # noqa: F401\n")
    info = site_dir / "old_rules-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: old-rules\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[mlops_lint.rules]\nold = old_rules\n")
    if decoy:
        (site_dir / "linter.py").write_text("WHO = 'decoy'\n")
    (tmp_path / "pod.yaml").write_text(POD)
    done = run([sys.executable, "-m", "mlops_lint", "pod.yaml"], tmp_path, clean_env(PYTHONPATH=str(site_dir)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "the rule plugin 'old' (old_rules, entry point group mlops_lint.rules) cannot import `linter" in done.stderr
    assert "`from mlops_lint.rule import rule`" in done.stderr


def test_the_codemod_changes_nothing_on_the_converted_tree() -> None:
    """Idempotent: the tree is what the codemod makes of it (imports, module strings, commands,
    pyproject's package list from the folders, the anchored edits)."""
    done = run([sys.executable, CODEMOD, "--check", REPO], REPO, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stderr.strip() == "0 file(s) would change"


def test_the_codemod_converts_old_names_and_leaves_prose_and_paths(tmp_path: Path) -> None:
    """On a small tree written against the old names: converted once, then stable."""
    for folder in ("linter/sources", "rules/gpu"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "linter" / "__init__.py").write_text("")
    (tmp_path / "linter" / "cli.py").write_text("")
    (tmp_path / "rules" / "__init__.py").write_text(  # an anchored edit of the codemod's
        "# mlops-lint loads this package from beside `linter` (linter.origin.rules_package) and checks this\n"
        "# mark, so a third-party top-level `rules` package is never taken for it\n")
    (tmp_path / "pyproject.toml").write_text(
        '[project.optional-dependencies]\ntest = [\n    "pytest>=8",\n]\n\n'
        '[project.scripts]\nmlops-lint = "linter.cli:run"\n\n[project.entry-points."mlops_lint.rules"]\n'
        'builtin = "rules"\n\n[tool.setuptools.packages.find]\ninclude = ["linter", "linter.*", "rules", "rules.*"]\n\n'
        '[tool.setuptools.package-data]\n"linter" = ["schemas/*.json"]\n')
    source = '''"""Docs: ``linter.cli`` stays prose; run ``python -m linter.docs``."""
import sys
import linter.cli
from linter.sources import files  # see linter.sources (prose)
from rules.gpu import thing
from importlib import resources

NAME = "linter.sources.yaml"
PREFIX = "rules."
CONFIG_PATH = "rules.GPU001.option"
FOLDER = "linter/sources"
CODE = "from linter.cli import run; run()"
command = [sys.executable, "-m", "linter", "."]
data = resources.files("linter")
word = "linter"
main = linter.cli.main  # python -m linter
'''
    (tmp_path / "tool.py").write_text(source)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "usage.md").write_text("Run `python -m linter .` with the linter.\n")
    assert run([sys.executable, CODEMOD, tmp_path], tmp_path).returncode == 0
    converted = (tmp_path / "tool.py").read_text()
    assert converted == '''"""Docs: ``linter.cli`` stays prose; run ``python -m mlops_lint.docs``."""
import sys
import mlops_lint.cli
from mlops_lint.sources import files  # see linter.sources (prose)
from mlops_lint.rules.gpu import thing
from importlib import resources

NAME = "mlops_lint.sources.yaml"
PREFIX = "mlops_lint.rules."
CONFIG_PATH = "rules.GPU001.option"
FOLDER = "linter/sources"
CODE = "from mlops_lint.cli import run; run()"
command = [sys.executable, "-m", "mlops_lint", "."]
data = resources.files("mlops_lint")
word = "linter"
main = mlops_lint.cli.main  # python -m mlops_lint
'''
    assert (tmp_path / "docs" / "usage.md").read_text() == "Run `python -m mlops_lint .` with the linter.\n"
    assert (tmp_path / "rules" / "__init__.py").read_text().startswith("# installed as mlops_lint.rules")
    project = (tmp_path / "pyproject.toml").read_text()
    assert 'mlops-lint = "mlops_lint.cli:run"' in project and 'builtin = "mlops_lint.rules"' in project
    assert 'package-dir = { "mlops_lint" = "linter", "mlops_lint.rules" = "rules" }' in project
    assert '"mlops_lint.rules.gpu",\n' in project and '"mlops_lint.sources",\n' in project
    assert '    "setuptools>=68",\n    "wheel",\n' in project
    assert "packages.find" not in project and '"mlops_lint" = ["schemas/*.json"]' in project
    again = run([sys.executable, CODEMOD, "--check", tmp_path], tmp_path)
    assert again.returncode == 0 and again.stdout == "", again.stdout  # a second run changes nothing
