"""The engine's side of ``--fix``: rules' plans resolved into Result.autofix where each file's
text is at hand, carried through workers and the result cache unchanged."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from fixkit import MANIFEST, TEST_RULES, registry_with_test_rules
from mlops_lint.config import Config
from mlops_lint.fix import Edit, Fix
from mlops_lint.model.position import Span



def _run(documents, rules=TEST_RULES[:1]):
    from mlops_lint.engine import run_rules

    return [result for result, _ in run_rules(documents, {d.path for d in documents}, list(rules), Config())]


def test_a_plan_becomes_the_results_autofix_at_the_loaders_span() -> None:
    from mlops_lint.engine import load_bytes

    document = load_bytes(MANIFEST.encode(), "cm.yaml", "k8s")
    assert document.text == MANIFEST
    (result,) = _run([document])
    assert (result.rule, result.line, result.column) == ("TST001", 6, 12)
    assert result.autofix == Fix('set `fixme: "no"`', (Edit("cm.yaml", Span(6, 12, 6, 15), '"no"'),), True)


def test_the_text_a_plan_resolves_against_has_no_bom_and_keeps_crlf() -> None:
    from mlops_lint.engine import load_bytes

    data = b"\xef\xbb\xbf" + MANIFEST.replace("\n", "\r\n").encode()
    document = load_bytes(data, "cm.yaml", "k8s")
    assert document.text == MANIFEST.replace("\n", "\r\n")
    (result,) = _run([document])
    assert result.autofix.edits[0].span == Span(6, 12, 6, 15)


def test_a_plan_that_cannot_be_resolved_is_no_fix_and_no_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import types

    from mlops_lint.engine import load_bytes

    def broken(plan, text, path):
        raise KeyError("no such node")

    module = types.ModuleType("mlops_lint.fix.resolve")
    module.resolve = broken
    monkeypatch.setitem(sys.modules, "mlops_lint.fix.resolve", module)
    (result,) = _run([load_bytes(MANIFEST.encode(), "cm.yaml", "k8s")])
    assert result.rule == "TST001" and result.autofix is None
    module.resolve = lambda plan, text, path: Fix("elsewhere", (Edit("other.yaml", Span(1, 1, 1, 1), "x"),))
    (result,) = _run([load_bytes(MANIFEST.encode(), "cm.yaml", "k8s")])
    assert result.autofix is None  # an edit outside the file the plan was resolved against: refused


def test_a_plan_naming_another_file_is_resolved_against_that_files_text(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from msgspec.structs import replace

    from mlops_lint.engine import load_bytes
    from mlops_lint.rule import Finding

    monkeypatch.chdir(tmp_path)
    # the same object in another file (the plan's nodes must sit in the text it is resolved
    # against: the real resolver refuses spans that do not match), read without its BOM, CRLF kept
    (tmp_path / "other.yaml").write_bytes(b"\xef\xbb\xbf" + MANIFEST.replace("\n", "\r\n").encode())
    seen = []
    import mlops_lint.fix.resolve as resolve_module

    real = resolve_module.resolve
    monkeypatch.setattr(resolve_module, "resolve", lambda plan, text, path: seen.append((text, path)) or real(plan, text, path))

    def elsewhere(obj, ctx):
        for finding in TEST_RULES[0].func(obj, ctx):
            yield replace(finding, autofix=replace(finding.autofix, path="other.yaml"))

    rule = replace(TEST_RULES[0], func=elsewhere)
    (result,) = _run([load_bytes(MANIFEST.encode(), "cm.yaml", "k8s")], [rule])
    assert seen == [(MANIFEST.replace("\n", "\r\n"), "other.yaml")]
    assert result.path == "cm.yaml" and result.autofix.edits[0].path == "other.yaml"


def _tree(root: Path, count: int) -> None:
    for number in range(count):
        (root / f"cm{number:02}.yaml").write_text(MANIFEST.replace("settings", f"settings-{number}"))


def test_autofixes_are_the_same_across_jobs_and_the_cache(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from mlops_lint.engine import LintRequest, lint
    import mlops_lint.engine.workers as workers

    monkeypatch.setattr(workers, "PARALLEL_MIN_FILES", 4)
    project = tmp_path / "p"
    project.mkdir()
    _tree(project, 12)
    monkeypatch.chdir(project)
    registry = registry_with_test_rules()

    def results(jobs: int, cache: Path | None):
        request = LintRequest(paths=[Path(".")], config=None, registry=registry, select=["TST001"], jobs=jobs,
                              cwd=project, cache_dir=cache)
        return lint(request).results

    serial = results(1, None)
    assert len(serial) == 12 and all(r.autofix is not None and r.autofix.edits[0].text == '"no"' for r in serial)
    assert results(3, None) == serial
    cache = tmp_path / "cache"
    assert results(1, cache) == serial  # cold, written
    assert list(cache.glob("run-*.cache"))
    assert results(2, cache) == serial  # warm, read


@pytest.mark.parametrize("path", ["<kustomize build overlays/prod/kustomization.yaml>", "<stdin>"])
def test_built_or_streamed_output_gets_no_fix(path: str) -> None:
    """A kustomize build's objects are not the source file's nodes, and stdin is no file: their
    findings carry no fix (the hint stays)."""
    from mlops_lint.engine import load_bytes

    (result,) = _run([load_bytes(MANIFEST.encode(), path, "k8s")])
    assert (result.rule, result.fix, result.autofix) == ("TST001", "set it to no", None)


def test_a_helm_renders_fix_names_only_the_render_and_is_dropped_when_mapped() -> None:
    """A Helm render's own plan is resolved against the render's text (so that a fix of a value
    the chart's values.yaml gives can be moved there, linter.sources.helm_values); it names no
    file, and the mapping back to the templates drops it unless it was moved."""
    from mlops_lint.engine import load_bytes
    from mlops_lint.sources import helm

    path = "<helm template charts/x>"
    (result,) = _run([load_bytes(MANIFEST.encode(), path, "k8s")])
    assert (result.rule, result.fix) == ("TST001", "set it to no")
    assert result.autofix is not None and {edit.path for edit in result.autofix.edits} == {path}
    [(moved, _)] = helm.remap([(result, None)], {path: helm.HelmMapper("", None, "/")})
    assert moved.autofix is None
