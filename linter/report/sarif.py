"""SARIF 2.1.0 for GitHub code scanning, built from ``sarif_om`` objects (the results, most of a
log, written directly as the data those objects give: :func:`result_data`).

Paths are repo-relative URIs under ``%SRCROOT%``, the top of the files' git work tree (else their
project root; files of several give the deepest folder holding them all), wherever the command
runs; ``primaryLocationLineHash`` is the result's line-independent fingerprint plus an occurrence
counter, so alerts survive lines moving above them.
"""

from __future__ import annotations

from collections import Counter
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import quote

from msgspec.structs import replace
import sarif_om as om

from mlops_lint.report.common import (
    INFORMATION_URI,
    SARIF_LEVEL,
    TOOL_NAME,
    RenderOptions,
    annotation_span,
    ordered,
    ordered_notes,
    run_note,
    tool_version,
)
from mlops_lint.discover import raw_name
from mlops_lint.report.jsontext import dumps
from mlops_lint.report.ruledoc import clip, plain_text, sections, unwrap
from mlops_lint.report.sarif_json import to_json
from mlops_lint.result import Note, Result, RunReport
from mlops_lint.rule import ENGINE, RuleMeta

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
SRCROOT = "%SRCROOT%"
DESCRIPTION_LIMIT = 1024  # GitHub: shortDescription / fullDescription text
MAX_TAGS = 20  # GitHub: tags per rule


def _text(text: str, markdown: str | None = None) -> om.MultiformatMessageString:
    return om.MultiformatMessageString(text=text, markdown=markdown or None)


def precision(doc_sections: dict[str, str]) -> str:
    """``medium`` when the docs admit false positives (a ``Known problems`` section), else ``high``."""
    return "medium" if "Known problems" in doc_sections else "high"


def rule_tags(meta: RuleMeta) -> list[str]:
    """The domain (``gpu``) then the rule's own tags, without duplicates, at most 20."""
    return list(dict.fromkeys([meta.domain.lower(), *meta.tags]))[:MAX_TAGS]


def rule_descriptor(meta: RuleMeta) -> om.ReportingDescriptor:
    """``tool.driver.rules[]`` entry: the same metadata as ``mlops-lint explain``."""
    short = meta.summary or f"{meta.name} ({meta.code})."
    found = sections(meta.doc)
    what = found.get("What it does", "")
    properties: dict[str, object] = {"tags": rule_tags(meta), "precision": precision(found)}
    if meta.security_severity:
        properties["security-severity"] = str(meta.security_severity)
    return om.ReportingDescriptor(
        id=meta.code,
        name=meta.name,
        short_description=_text(clip(short, DESCRIPTION_LIMIT)),
        full_description=_text(clip(unwrap(plain_text(what)) if what else short, DESCRIPTION_LIMIT)),
        help=_text(plain_text(meta.doc) if meta.doc else short, meta.doc),
        help_uri=None if is_stub(meta) else meta.help_uri,
        default_configuration=om.ReportingConfiguration(level=SARIF_LEVEL[meta.severity]),
        properties=properties,
    )


def stub_meta(result: Result) -> RuleMeta:
    """Minimal metadata for a result whose rule is not in ``report.rules``."""
    return RuleMeta(
        code=result.rule, name=result.slug, severity=result.severity, scope=ENGINE, func=None, doc="", summary=""
    )


def is_stub(meta: RuleMeta) -> bool:
    """A descriptor made up by :func:`stub_meta`: no docs page to point at."""
    return meta.func is None and not meta.doc


def rule_table(report: RunReport, results: list[Result] | None = None) -> list[RuleMeta]:
    """Every rule that ran plus any rule only seen in results, sorted by code (``ruleIndex`` order).

    ``results``: the report's results in report order, when the caller has them already."""
    table: dict[str, RuleMeta] = {}
    for meta in report.rules:
        table.setdefault(meta.code, meta)
    for result in ordered(report.results) if results is None else results:
        if result.rule not in table:  # the first such result's slug and severity
            table[result.rule] = stub_meta(result)
    return [table[code] for code in sorted(table)]


def artifact_location(path: str) -> om.ArtifactLocation:
    """A repo-relative, percent-encoded URI under ``%SRCROOT%`` (absolute paths become file URIs)."""
    uri, base = _uri(path)
    return om.ArtifactLocation(uri=uri, uri_base_id=base)


@lru_cache(maxsize=4096)  # a file's results share its URI: parsed and quoted once, not per result
def _uri(path: str) -> tuple[str, str | None]:
    raw = raw_name(path)
    if raw is not None:  # a name that is not UTF-8: its bytes percent-encoded (``job%FF.yaml``), not its escapes
        return ("file://" if raw.startswith(b"/") else "") + quote(raw, safe="/"), None if raw.startswith(b"/") else SRCROOT
    pure = PurePosixPath(path)
    if pure.is_absolute():
        return pure.as_uri(), None
    return quote(pure.as_posix(), safe="/"), SRCROOT


def root_uri(root: str) -> str | None:
    """``file:///abs/root/`` (trailing slash, as SARIF requires for a base), or None if unknown."""
    if not root or not Path(root).is_absolute():
        return None
    return Path(root).as_uri().rstrip("/") + "/"


def region(result: Result) -> om.Region:
    span = annotation_span(result.span)
    return om.Region(start_line=span.line, start_column=span.col, end_line=span.end_line, end_column=span.end_col)


def line_hashes(results: list[Result]) -> list[str]:
    """``fingerprint:occurrence`` per result, counting identical fingerprints from 1."""
    seen: Counter[str] = Counter()
    hashes = []
    for result in results:
        fingerprint = result.fingerprint()
        seen[fingerprint] += 1
        hashes.append(f"{fingerprint}:{seen[fingerprint]}")
    return hashes


def object_properties(result: Result) -> dict[str, object] | None:
    if result.obj is None:
        return None if result.built_from is None else {"builtFrom": result.built_from}
    obj = {"kind": result.obj.kind, "namespace": result.obj.namespace, "name": result.obj.name}
    found: dict[str, object] = {"object": {key: value for key, value in obj.items() if value}}
    if result.built_from is not None:  # a finding on a kustomize build: the root it was built from
        found["builtFrom"] = result.built_from
    return found


def sarif_fixes(result: Result, uris: dict[str, str] | None = None) -> list[om.Fix] | None:
    """The result's resolved fix as SARIF ``fixes``: one artifact change per file, its edits as
    replacements (an insertion is an empty ``deletedRegion``); the title as the description,
    marked unsafe in its text where it is."""
    fix = result.autofix
    if fix is None:
        return None
    changes: dict[str, list[om.Replacement]] = {}
    for edit in fix.edits:
        span = edit.span
        deleted = om.Region(start_line=span.line, start_column=span.col, end_line=span.end_line, end_column=span.end_col)
        changes.setdefault(edit.path, []).append(om.Replacement(deleted_region=deleted,
                                                                inserted_content=om.ArtifactContent(text=edit.text)))
    return [om.Fix(description=om.Message(text=fix_description(result)), artifact_changes=[
        om.ArtifactChange(artifact_location=artifact_location((uris or {}).get(path, path)), replacements=replacements)
        for path, replacements in changes.items()])]


def fix_description(result: Result) -> str:
    fix = result.autofix
    return fix.title if fix.safe else f"{fix.title} (unsafe: applied with --unsafe-fixes)"


def distinct_suppressions(result: Result) -> list[tuple[str, str]]:
    """(kind, justification) of each suppression of ``result``, each once: SARIF's ``suppressions`` is
    a set (two inline comments without a reason, one on the line and one above it, are one)."""
    return list(dict.fromkeys((s.kind, s.justification or "") for s in result.suppressions))


def sarif_result(result: Result, rule_index: int, line_hash: str, uris: dict[str, str] | None = None) -> om.Result:
    location = om.PhysicalLocation(artifact_location=artifact_location(result.path), region=region(result))
    suppressions = [om.Suppression(kind=kind, justification=justification or None)
                    for kind, justification in distinct_suppressions(result)]
    return om.Result(
        fixes=sarif_fixes(result, uris),
        rule_id=result.rule,
        rule_index=rule_index,
        level=SARIF_LEVEL[result.severity],
        message=om.Message(text=result.message),
        locations=[om.Location(physical_location=location)],
        partial_fingerprints={"primaryLocationLineHash": line_hash},
        properties=object_properties(result),
        suppressions=suppressions or None,
    )


def result_data(result: Result, rule_index: int, line_hash: str, uris: dict[str, str] | None = None) -> dict[str, Any]:
    """``to_json(sarif_result(...))``, written as data directly: a log is mostly its results, and
    making each of them six ``sarif_om`` objects, then reading back their 60 fields, took most of
    the time of a large one. Every field here is one that :func:`sarif_result` sets, in the order
    ``to_json`` writes them (the classes' field order), left out where it leaves it out (None).
    A message that is not a str, or a span holding None (a plugin's doing), goes through the objects."""
    span = annotation_span(result.span)
    if type(result.message) is not str or None in span:
        return to_json(sarif_result(result, rule_index, line_hash, uris))
    uri, base = _uri(result.path)
    data: dict[str, Any] = {"message": {"text": result.message}}
    if result.autofix is not None:
        data["fixes"] = to_json(sarif_fixes(result, uris))
    data.update({
        "level": SARIF_LEVEL[result.severity],
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": uri} if base is None else {"uri": uri, "uriBaseId": base},
            "region": {"endColumn": span.end_col, "endLine": span.end_line, "startColumn": span.col,
                       "startLine": span.line},
        }}],
        "partialFingerprints": {"primaryLocationLineHash": line_hash},
    })
    properties = object_properties(result)
    if properties is not None:
        data["properties"] = properties
    data["ruleId"] = result.rule
    data["ruleIndex"] = rule_index
    if result.suppressions:
        data["suppressions"] = [
            {"kind": kind, "justification": justification} if justification else {"kind": kind}
            for kind, justification in distinct_suppressions(result)
        ]
    return data


def notification(note: Note) -> om.Notification:
    """A note as a tool execution notification; a run-level one (path "") has no location and is
    a warning (a run that linted nothing)."""
    if not note.path:
        return om.Notification(message=om.Message(text=note.message), level="warning")
    location = om.Location(physical_location=om.PhysicalLocation(artifact_location=artifact_location(note.path)))
    return om.Notification(message=om.Message(text=note.message), level="note", locations=[location])


def on_root(report: RunReport) -> tuple[list[Result], list[Note]]:
    """The results and notes with their paths under ``%SRCROOT%`` (``report.uris``): relative to the
    repository, wherever the command ran; fingerprints follow, so alerts keep their identity."""
    if not report.uris:
        return report.results, report.notes
    uris = report.uris
    results = [replace(r, path=uris[r.path]) if r.path in uris else r for r in report.results]
    notes = [Note(uris.get(n.path, n.path), n.message) for n in report.notes]
    return results, notes


def build_log(report: RunReport, *, with_results: bool = True) -> om.SarifLog:
    """The whole log: one run, one driver, every rule, every result (suppressed ones marked).
    ``with_results=False`` leaves the run's results empty, for :func:`document` to fill in."""
    located, located_notes = on_root(report)
    results = ordered(located)
    rules = rule_table(report, results)
    index = {meta.code: i for i, meta in enumerate(rules)}
    version = tool_version(report)
    driver = om.ToolComponent(
        name=TOOL_NAME,
        semantic_version=version,
        version=version,
        information_uri=INFORMATION_URI,
        rules=[rule_descriptor(meta) for meta in rules],
    )
    notes = [notification(n) for n in run_note(report) + ordered_notes(located_notes)]
    base = root_uri(report.root)
    entries = ([sarif_result(r, index[r.rule], h, report.uris) for r, h in zip(results, line_hashes(results))]
               if with_results else [])
    run = om.Run(
        tool=om.Tool(driver=driver),
        results=entries,
        invocations=[om.Invocation(execution_successful=True, tool_execution_notifications=notes or None)],
        original_uri_base_ids={SRCROOT: om.ArtifactLocation(uri=base)} if base else None,
        column_kind="unicodeCodePoints",
    )
    return om.SarifLog(runs=[run], version=SARIF_VERSION, schema_uri=SCHEMA_URI)


def document(report: RunReport) -> dict:
    """The log as plain JSON data, ``$schema`` and ``version`` first: ``to_json(build_log(report))``,
    with the results written as data directly (:func:`result_data`)."""
    data = to_json(build_log(report, with_results=False))
    run = data["runs"][0]
    index = {rule["id"]: i for i, rule in enumerate(run["tool"]["driver"]["rules"])}  # what ruleIndex points at
    results = ordered(on_root(report)[0])
    run["results"] = [result_data(r, index[r.rule], h, report.uris) for r, h in zip(results, line_hashes(results))]
    return {"$schema": data.pop("$schema"), "version": data.pop("version"), **data}


def emit(report: RunReport, options: RenderOptions) -> str:
    return dumps(document(report)) + "\n"
