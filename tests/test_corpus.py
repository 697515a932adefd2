"""Real-world YAML nobody here wrote: no crash, no rule error, every file accounted for.

Every rule runs (``ALL`` plus the opt-in ones, so rules added later are covered too). "Accounted
for": each file under the corpus is linted, skipped with a stated reason, or an SCH001, and each
file that is none of those is one discovery does not read by name (README.md, SOURCES.tsv).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from invariants import LOADER_CRASH, check_positions, every_rule, validate_sarif

from mlops_lint.config import Config
from mlops_lint.discover import classify
from mlops_lint.engine import LintRequest, lint
from mlops_lint.registry import load_registry

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
CORPUS = SHARED / "corpus"
pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="../shared/corpus is not present (user machine)")


def _lint(jobs: int):
    return lint(LintRequest(paths=[CORPUS], config=Config(), registry=load_registry(), select=every_rule(),
                            jobs=jobs, cwd=CORPUS))


@pytest.fixture(scope="module")
def corpus_report():
    return _lint(2)


def test_every_corpus_file_is_accounted_for(corpus_report) -> None:
    on_disk = {p.relative_to(CORPUS).as_posix() for p in CORPUS.rglob("*") if p.is_file()}
    readable = {path for path in on_disk if classify(CORPUS / path) is not None}
    assert readable, "discovery reads nothing in the corpus"
    assert set(corpus_report.file_status) == readable
    for path in on_disk - readable:  # the rest are not lintable by name
        assert not path.endswith((".yaml", ".yml", ".json", ".sh", "Dockerfile")), path
    parse_errors = {r.path for r in corpus_report.results if r.rule == "SCH001"}
    for path, status in corpus_report.file_status.items():
        assert status in ("linted", "parse error") or (status.startswith("skipped: ") and len(status) > 12), (path, status)
        if status == "parse error":
            assert path in parse_errors, path
        if "/testdata/" in f"/{path}":  # Go's test inputs (kube-linter's fixtures, gpu-operator's goldens)
            assert status == "skipped: test data (testdata/)", (path, status)
        elif "/templates/" in path and status.startswith("skipped"):
            assert status == "skipped: Helm chart template", (path, status)
    assert sum(1 for s in corpus_report.file_status.values() if s == "linted") > 1000


def test_no_rule_or_loader_errors_and_positions_inside_files(corpus_report) -> None:
    assert [r for r in corpus_report.results if r.rule == "LNT002"] == []
    assert [r for r in corpus_report.results if LOADER_CRASH in r.message] == []
    assert corpus_report.results, "the catalogue finds nothing on 1,356 real files: something is off"
    paths = {r.path for r in corpus_report.results}
    check_positions(corpus_report, {path: (CORPUS / path).read_bytes() for path in paths})
    assert {m.code for m in corpus_report.rules} == set(every_rule())


def test_corpus_parse_errors_are_real(corpus_report) -> None:
    """Only the broken Markdown excerpts (and no real manifest) fail to parse."""
    broken = {r.path for r in corpus_report.results if r.rule == "SCH001" and not r.message.startswith("duplicate key")
              and not r.message.startswith("kustomize build failed: ")}
    assert all(".mdblock-" in path for path in broken), sorted(broken)
    # the corpus holds a sample of each repository's files: a kustomization fails to build only
    # where it names a file or folder the sample left out
    missing = ("no such file or directory", "unable to find one of 'kustomization.yaml'")
    failed = [r for r in corpus_report.results if r.message.startswith("kustomize build failed: ")]
    assert all(any(reason in r.message for reason in missing) for r in failed), [r.message for r in failed]


def test_corpus_sarif_and_json_are_valid(corpus_report) -> None:
    from mlops_lint.report import render

    validate_sarif(json.loads(render(corpus_report, "sarif")))
    findings_schema = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "findings.schema.json").read_text())
    jsonschema.validate(json.loads(render(corpus_report, "json")), findings_schema)


def test_parallel_and_serial_runs_agree(corpus_report) -> None:
    serial = _lint(1)
    assert [(r.sort_key(), r.node, r.fingerprint()) for r in serial.results] == [
        (r.sort_key(), r.node, r.fingerprint()) for r in corpus_report.results]
    assert serial.file_status == corpus_report.file_status
    assert serial.notes == corpus_report.notes


def _image_containers(node, path=()):
    """(path, container map) of every item with an ``image`` in a ``containers`` list, anywhere."""
    from mlops_lint.model.tree import YMap, YSeq

    if isinstance(node, YMap):
        items = node.get("containers")
        if isinstance(items, YSeq):
            for index, item in enumerate(items):
                if isinstance(item, YMap) and isinstance(item.get("image"), str):
                    yield path + ("containers", index), item
        for key, child in node.items():
            yield from _image_containers(child, path + (key,))
    elif isinstance(node, YSeq):
        for index, child in enumerate(node):
            yield from _image_containers(child, path + (index,))


def test_every_container_with_an_image_is_in_a_view(corpus_report) -> None:
    """Walks every object of the corpus (not the views' own code paths): a container with an image
    that no pod view holds is a pod template mlops-lint never lints. Kinds read generically are
    named in the run's notes."""
    from mlops_lint.index import ProjectIndex
    from mlops_lint.sources.yaml_k8s import load

    unseen, generic = [], set()
    for path in sorted(CORPUS.rglob("*")):
        if path.suffix not in (".yaml", ".yml") or not path.is_file():
            continue
        document = load(path.read_bytes(), path.relative_to(CORPUS).as_posix())
        index = ProjectIndex([document])
        for obj in document.objects:
            if obj.kind == "CustomResourceDefinition":
                continue  # schemas, not pods
            workload = index.workload(obj)
            seen = {id(c.body) for pod in workload.pods for c in pod.containers} if workload is not None else set()
            if workload is not None and workload.generic:
                generic.add((obj.api_version, obj.kind))
            for where, container in _image_containers(obj.body):
                if id(container) not in seen:
                    unseen.append(f"{document.path}: {obj.kind} {'.'.join(map(str, where))}")
    assert unseen == []
    assert generic, "the corpus holds kinds mlops-lint does not model (AppWrapper, Sandbox …)"
    noted = {note.message.split(" is not a kind")[0] for note in corpus_report.notes if "read generically" in note.message}
    assert noted == {f"{kind} ({api_version})" for api_version, kind in generic}
