"""Start-up: a one-file run imports only what it needs, and costs little more than its own
dependencies' import (issue 6: ``mlops-lint one.yaml`` <= 1.5x ``import click, ruamel.yaml,
jsonschema``; guarded here loosely, as ratios from the same test, never absolute times).

Imports are read from ``python -X importtime`` of the real CLI in a subprocess and compared with
the bare interpreter's (so what ``site`` imports in a given environment does not count).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlops_lint import ruleindex
from mlops_lint.cachedata import decode, encode
from mlops_lint.registry import RegistryError, load_registry
from mlops_lint.rule import RuleMeta

REPO = Path(__file__).resolve().parents[1]
POD = REPO / "fixtures" / "conforming" / "gpu-pod" / "pod.yaml"
CLI = "import sys; sys.argv[0] = 'mlops-lint'; from mlops_lint.cli import main; sys.exit(main())"
BASELINE = "import click, ruamel.yaml, jsonschema"

# What a one-file YAML run never needs (each was imported before, see the git log):
NEVER = {
    "importlib.metadata",  # plugins are found from the metadata files (linter.plugins)
    "sarif_om", "attr",  # the SARIF object model: --format sarif only
    "orjson",  # the JSON text of --format json and sarif only
    "jsonschema", "referencing",  # SCH002 lists errors with jsonschema only where .explain cannot
    "mlops_lint.validation.explain",  # ... and lists them itself only for an invalid object
    "concurrent.futures", "multiprocessing",  # --jobs N with enough files only
    "tomllib",  # no pyproject.toml that can name mlops-lint
    "email", "csv",
    "dataclasses",  # records are msgspec Structs: a dataclass execs its methods (0.5 ms a class)
}


def environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("MLOPS_LINT_")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # bytecode kept outside the tree, as an installed wheel has it (without it every run compiles
    # ~1 MB of source, which the dependencies of the baseline never do: they come with .pyc files)
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    env["PYTHONPATH"] = str(REPO)
    env.update(extra)
    return env


def imported(args: list[str], cwd: Path, env: dict[str, str]) -> set[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)
    names = set()
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "self [us]" not in line:
            names.add(line.rsplit("|", 1)[1].strip())
    return names


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "one.yaml").write_bytes(POD.read_bytes())
    return folder


def own_imports(tmp_path: Path, project: Path, *cli_args: str, **extra: str) -> set[str]:
    env = environment(tmp_path, **extra)
    bare = imported(["-c", "pass"], project, env)
    return imported(["-c", CLI, *cli_args], project, env) - bare


def test_a_one_file_run_imports_none_of_what_it_does_not_need(tmp_path: Path, project: Path) -> None:
    for mode in ({"MLOPS_LINT_NO_CACHE": "1"}, {"MLOPS_LINT_CACHE_DIR": str(tmp_path / "cache")}):
        names = own_imports(tmp_path, project, "one.yaml", **mode)
        assert "mlops_lint.engine" in names and "click" in names  # it did run
        assert not {n for n in names if n in NEVER or n.split(".")[0] in NEVER}, mode


def test_with_the_rule_index_only_called_rules_are_imported(tmp_path: Path, project: Path) -> None:
    cache = str(tmp_path / "cache")
    first = own_imports(tmp_path, project, "one.yaml", MLOPS_LINT_CACHE_DIR=cache)  # crawls, writes the index
    assert "mlops_lint.model.docker" in first and Path(ruleindex.path(tmp_path / "cache")).is_file()
    (project / "one.yaml").write_bytes(b"# changed: the result cache misses\n" + POD.read_bytes())
    missed = own_imports(tmp_path, project, "one.yaml", MLOPS_LINT_CACHE_DIR=cache)
    assert "mlops_lint.model.docker" not in missed and "mlops_lint.sources.yaml_k8s" in missed  # no Dockerfile rule ran
    # a Pod in a project with no NetworkPolicy, no script and no custom resource: DST007/DST008 never
    # load the NetworkPolicy model, the cluster model never loads the script model, and no schema
    # pattern of a CRD needs RE2 (each ~3-8 ms of a ~250 ms run); no misspelt MIG profile asks
    # difflib for suggestions, and no bundled CRD schema is read (gzip)
    assert not {"mlops_lint.model.netpol", "mlops_lint.model.azcli", "re2", "difflib", "gzip"} & missed, \
        sorted({"mlops_lint.model.netpol", "mlops_lint.model.azcli", "re2", "difflib", "gzip"} & missed)
    assert {"mlops_lint.model.cluster", "mlops_lint.model.kueue", "mlops_lint.validation.regex"} <= missed  # the rules did run
    warm = own_imports(tmp_path, project, "one.yaml", MLOPS_LINT_CACHE_DIR=cache)
    assert not {n for n in warm if n.startswith("mlops_lint.rules.")}  # no rule module at all
    assert not {"mlops_lint.model.cluster", "mlops_lint.model.kueue", "mlops_lint.model.netpol", "mlops_lint.model.docker"} & warm
    assert "yaml" not in warm  # the outcome came from the result cache: nothing parsed
    # ... and nothing indexed: no index, no model it is built from, no CRD schema (no crd-paths)
    assert not {"mlops_lint.index", "mlops_lint.model.k8s", "mlops_lint.model.selectors", "mlops_lint.validation.crds"} & warm


def test_output_is_the_same_with_and_without_the_rule_index(tmp_path: Path) -> None:
    env = environment(tmp_path, MLOPS_LINT_CACHE_DIR=str(tmp_path / "cache"))
    runs = []
    for extra in (["--no-cache"], [], [], ["--format", "json", "--no-cache"], ["--format", "json"]):
        done = subprocess.run([sys.executable, "-c", CLI, "fixtures/violating", "fixtures/conforming",
                               "--jobs", "1", *extra], cwd=REPO, env=env, capture_output=True, timeout=300)
        runs.append((done.returncode, done.stdout, done.stderr))
    assert runs[0] == runs[1] == runs[2] and runs[3] == runs[4]
    listed = [subprocess.run([sys.executable, "-c", CLI, *args], cwd=REPO, env=env, capture_output=True,
                             timeout=120).stdout for args in (["rules", "--format", "json"], ["explain", "DKR004"])]
    uncached = environment(tmp_path, MLOPS_LINT_NO_CACHE="1")
    assert listed == [subprocess.run([sys.executable, "-c", CLI, *args], cwd=REPO, env=uncached, capture_output=True,
                                     timeout=120).stdout for args in (["rules", "--format", "json"], ["explain", "DKR004"])]


DATA = [name for name in RuleMeta.__struct_fields__ if name not in ("func", "collect")]


@pytest.fixture
def fresh_registry():
    load_registry.cache_clear()
    yield
    load_registry.cache_clear()


def test_the_index_gives_the_crawled_metadata_and_resolves_on_first_call(tmp_path: Path, fresh_registry) -> None:
    crawled = load_registry()
    load_registry.cache_clear()
    load_registry(str(tmp_path))  # writes
    load_registry.cache_clear()
    indexed = load_registry(str(tmp_path))
    assert [m.code for m in indexed.rules] == [m.code for m in crawled.rules]
    for a, b in zip(indexed.rules, crawled.rules):
        assert [getattr(a, n) for n in DATA] == [getattr(b, n) for n in DATA]
        assert [type(getattr(a, n)) for n in DATA] == [type(getattr(b, n)) for n in DATA]
        assert (a.collect is None) == (b.collect is None)
    meta = next(m for m in indexed.rules if m.collect is not None)
    assert isinstance(meta.func, ruleindex._Deferred) and isinstance(meta.collect, ruleindex._Deferred)
    original = next(m for m in crawled.rules if m.code == meta.code)
    ruleindex._resolve(meta, meta.func.attr)
    assert meta.func is original.func and meta.collect is original.collect and meta == original


def test_a_stale_foreign_or_tampered_index_is_never_used(tmp_path: Path, fresh_registry, monkeypatch) -> None:
    import pickle

    load_registry(str(tmp_path))
    key = ruleindex.signature()
    assert ruleindex.read(tmp_path, key) is not None
    assert ruleindex.read(tmp_path, key[:3] + (key[3][1:],)) is None  # a file changed, added or removed
    index = Path(ruleindex.path(tmp_path))
    good = index.read_bytes()

    class Evil:
        def __reduce__(self):
            return (os.system, ("true",))

    index.write_bytes(pickle.dumps({"key": key, "rules": [Evil()]}))
    assert ruleindex.read(tmp_path, key) is None  # a pickle is no index at all
    index.write_bytes(b"not JSON")
    assert ruleindex.read(tmp_path, key) is None
    payload = json.loads(good)
    planted = json.loads(good)
    planted["rules"][0] = {"C": "os:system", "V": ["true"]}  # a class outside mlops-lint: never built
    index.write_text(json.dumps(planted))
    assert ruleindex.read(tmp_path, key) is None

    entry = next(e for e in decode(payload["rules"]) if e["code"] == "DKR001")
    entry["severity"] = "info"  # metadata the module does not have
    rules = decode(payload["rules"])
    rules[[e["code"] for e in rules].index("DKR001")] = entry
    payload["rules"] = encode(rules)
    index.write_text(json.dumps(payload))
    metas = {m.code: m for m in ruleindex.read(tmp_path, key)}
    with pytest.raises(RegistryError, match="no longer matches the rule index"):
        metas["DKR001"].func(None, None)


def best_of_turns(commands: tuple, cwd: Path, turns: int = 7) -> list[float]:
    """The fastest of ``turns`` runs of each (command, environment), the commands taking turns."""
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(turns):
        for number, (command, env) in enumerate(commands):
            start = time.perf_counter()
            subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=120)
            times[number].append(time.perf_counter() - start)
    return [min(each) for each in times]


def test_a_one_file_run_costs_little_more_than_importing_its_dependencies(tmp_path: Path, project: Path) -> None:
    """Ratios with slack (issue 6's target is 1.5x with the result cache warm, here ~1.0x;
    without any cache every rule module is imported to build the index, ~2.0x on a quiet
    machine): a noisy 2-core machine must not make this flaky, so the three commands take
    turns (a load that comes and goes falls on all of them) and each keeps its fastest run."""
    env = environment(tmp_path, MLOPS_LINT_CACHE_DIR=str(tmp_path / "cache"))
    uncached = environment(tmp_path, MLOPS_LINT_NO_CACHE="1")
    lint = [sys.executable, "-c", CLI, "one.yaml"]
    baseline = [sys.executable, "-c", BASELINE]
    commands = ((baseline, env), (lint, env), (lint, uncached))
    for command, environ in commands:  # bytecode and caches written
        subprocess.run(command, env=environ, cwd=project, capture_output=True, timeout=120)
    floor, cached, cold = best_of_turns(commands, project)
    assert cached <= 1.5 * floor
    assert cold <= 2.5 * floor
