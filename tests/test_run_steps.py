"""The engine's run as named steps (issue 35 item 4): what a caller asks of a run besides its
report is an explicit argument (:class:`linter.engine.Wants`) and comes back in the returned
:class:`linter.engine.LintRun`, never on fields riding on the request; the cache keys are the
cache's (:class:`linter.cache.Keys`)."""

from __future__ import annotations

from pathlib import Path

from msgspec import Struct

from mlops_lint.cache import Keys
from mlops_lint.config import Config
from mlops_lint.digest import digest
from mlops_lint.engine import FixTarget, LintRequest, Part, Wants, lint, lint_run
from mlops_lint.registry import load_registry

REGISTRY = load_registry()

JOB = """apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: ml}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: trainer
          image: python:3.11
"""
CLAIM = """apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ml}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"""


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "job.yaml").write_text(JOB, encoding="utf-8")
    (folder / "claim.yaml").write_text(CLAIM, encoding="utf-8")
    (folder / ".mlops-lint.yaml").write_text("{}\n", encoding="utf-8")
    return folder


def _request(folder: Path, cache: Path | None = None) -> LintRequest:
    return LintRequest(paths=[folder], config=None, registry=REGISTRY, cwd=folder, cache_dir=cache)


def test_the_request_carries_no_hidden_outputs() -> None:
    assert not {"keep", "files", "indexed"} & set(LintRequest.__struct_fields__)


def test_a_run_gives_only_what_is_asked(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    plain = lint_run(_request(folder))
    assert plain.parts == [] and plain.targets == {}
    asked = lint_run(_request(folder), Wants(parts=True, targets=True))
    assert asked.report.results == plain.report.results == lint(_request(folder)).results
    assert sorted(asked.targets) == ["claim.yaml", "job.yaml"]
    target = asked.targets["job.yaml"]
    assert isinstance(target, FixTarget)
    assert (target.path, target.digest) == (str(folder / "job.yaml"), digest((folder / "job.yaml").read_bytes()))
    assert isinstance(target.config, Config)  # the project's, set once the project ran
    [part] = asked.parts
    assert isinstance(part, Part)
    assert sorted(part.outcomes) == ["claim.yaml", "job.yaml"] and part.job.targets >= {"claim.yaml", "job.yaml"}
    assert sorted(entry.display for entry in part.survey) == ["claim.yaml", "job.yaml"]


def test_a_warm_run_keeps_its_parts_only_when_indexed_is_asked(tmp_path: Path) -> None:
    folder, cache = _project(tmp_path), tmp_path / "cache"
    cold = lint_run(_request(folder, cache), Wants(parts=True))
    warm = lint_run(_request(folder, cache), Wants(parts=True))
    assert len(cold.parts) == 1 and warm.parts == []  # the cache answered for the whole project
    indexed = lint_run(_request(folder, cache), Wants(parts=True, indexed=True))  # the language server's
    assert len(indexed.parts) == 1 and sorted(indexed.parts[0].outcomes) == ["claim.yaml", "job.yaml"]
    assert warm.report.results == indexed.report.results == cold.report.results


class _Entry(Struct):
    display: str
    digest: str | None
    shared: bool = False


class _Builds(Struct):
    documents: list = []
    signature: str = ""
    inputs: dict = {}


def test_the_keys_follow_what_a_file_may_depend_on() -> None:
    survey = [_Entry("claim.yaml", "c1", shared=True), _Entry("job.yaml", "j1"), _Entry("big.yaml", None)]
    keys = Keys("project", survey, None, _Builds(), {"claim.yaml", "job.yaml"})
    assert sorted(keys.files) == ["claim.yaml", "job.yaml"]  # an unread file has no key
    assert keys.files["job.yaml"] == keys.file("job.yaml", "j1", True) != keys.file("job.yaml", "j1", False)
    # a shared file changed: every file's key changes (its findings may look it up)
    shared = Keys("project", [_Entry("claim.yaml", "c2", shared=True), *survey[1:]], None, _Builds(), {"job.yaml"})
    assert shared.files["job.yaml"] != keys.files["job.yaml"] and shared.project != keys.project
    # another file changed: only its own key (and the project's) change
    other = Keys("project", [survey[0], _Entry("job.yaml", "j2"), survey[2]], None, _Builds(),
                 {"claim.yaml", "job.yaml"})
    assert other.files["claim.yaml"] == keys.files["claim.yaml"]
    assert other.files["job.yaml"] != keys.files["job.yaml"] and other.project != keys.project
    # the stdin document and another project key change every key
    assert Keys("project", survey, b"x", _Builds(), set()).reference != keys.reference
    assert Keys("other", survey, None, _Builds(), set()).reference != keys.reference
