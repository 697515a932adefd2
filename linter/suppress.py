"""Suppressions: inline comments, object annotations, and the baseline; unused ones are LNT001.

Forms (SPEC section 3):

- ``# mlops-lint: disable=GPU001,shm-missing reason…`` on the finding's line, or on its own line
  above it (stacked directives above one line all apply to it);
- ``# mlops-lint: disable-file=IMG002`` anywhere in a file;
- in Terraform the same after ``//`` or in a one-line ``/* */``, in Bicep after ``//`` or in
  ``/* */``, in an ARM template in a whole-line ``//`` (the readers' comments:
  :mod:`linter.sources.comments`);
- annotations ``mlops-lint.io/ignore: "GPU001,shm-missing"`` and
  ``ignore-check.mlops-lint.io/GPU001: "reason"`` on the object;
- a baseline file of earlier findings, matched by rule, file, object and node path (never the
  line), so it survives lines moving.

Governed (issue 39): a comment's or ``ignore-check`` annotation's reason may start with an expiry,
``until=2027-03-01`` (:func:`govern`): after that day (UTC) the suppression no longer applies and
LNT003 says so at it, as it does for an ``until=`` that is no date; with ``require-reason: true``
in the config a suppression that gives no reason is LNT004 (it still applies: the finding gates);
``--no-inline-suppressions`` (``Config.inline_suppressions``) drops every comment and annotation,
leaving the config's ignores and the baseline. Expiry is judged on each run, never cached.

A regular expression reads only a comment's body, never the file.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Any, Iterable

from msgspec import Struct, field
from msgspec.structs import replace

from mlops_lint.model.document import Comment, Document, K8sObject
from mlops_lint.model.position import Span
from mlops_lint.result import ObjectRef, Result, Suppression

DIRECTIVE = re.compile(r"^mlops-lint:\s*(disable-file|disable)\s*=\s*([A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)\s*(.*)$")
ANNOTATION_LIST = "mlops-lint.io/ignore"
ANNOTATION_PREFIX = "ignore-check.mlops-lint.io/"
BASELINE_VERSION = 1
UNTIL = re.compile(r"until=(\S*)\s*")  # at the start of a reason
DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
EXPIRED_SUPPRESSION, SUPPRESSION_WITHOUT_REASON = "LNT003", "LNT004"


class Directive(Struct):
    """One rule token of one suppression, and whether it suppressed anything."""

    token: str
    reason: str
    span: Span
    where: str
    path: str
    lines: frozenset[int] = frozenset()  # empty: the whole file / the whole object
    obj: ObjectRef | None = None  # an annotation's object
    key: tuple | None = None  # and where it is (K8sObject.key): what findings on it are matched by
    used: bool = False


class FileSuppressions(Struct):
    line: list[Directive] = field(default_factory=list)
    file: list[Directive] = field(default_factory=list)


def parse_comment(comment: Comment, path: str) -> list[Directive]:
    match = DIRECTIVE.match(comment.text)
    if match is None:
        return []
    kind, tokens, reason = match.groups()
    span = Span(comment.line, comment.col, comment.line, comment.col + (comment.width or 1 + len(comment.text)))
    if kind == "disable-file":
        lines: frozenset[int] = frozenset()
    else:
        lines = frozenset({comment.line} | ({comment.next_line} if comment.own_line and comment.next_line else set()))
    where = f"comment at line {comment.line}"
    return [
        Directive(token.strip(), reason.strip(), span, where, path, lines)
        for token in tokens.split(",")
        if token.strip()
    ]


def file_suppressions(document: Document) -> FileSuppressions:
    found = FileSuppressions()
    for comment in document.comments:
        for directive in parse_comment(comment, document.path):
            (found.file if not directive.lines else found.line).append(directive)
    return found


def annotation_suppressions(obj: K8sObject) -> list[Directive]:
    meta = obj.metadata
    annotations = meta.get("annotations")
    if not isinstance(annotations, dict):
        return []
    spans = getattr(annotations, "kspans", {})
    ref, where = ObjectRef(obj.kind, obj.namespace, obj.name), obj.key
    found: list[Directive] = []
    for key, value in annotations.items():
        span = spans.get(key, meta.span)
        if key == ANNOTATION_LIST and isinstance(value, str):
            for token in value.split(","):
                if token.strip():
                    found.append(Directive(token.strip(), "", span, f"annotation {key}", obj.path, obj=ref, key=where))
        elif isinstance(key, str) and key.startswith(ANNOTATION_PREFIX):
            token = key[len(ANNOTATION_PREFIX):]
            found.append(Directive(token, str(value or ""), span, f"annotation {key}", obj.path, obj=ref, key=where))
    return found


def _matches(token: str, result: Result, registry: Any = None) -> bool:
    """A directive's token names the result: its code, its slug, or its rule's own slug (a rule
    with several cases, SCH003, gives some findings a case's slug: the case's slug suppresses that
    case, the rule's slug and code every case)."""
    if token.upper() == result.rule or token.lower() == result.slug:
        return True
    meta = registry.get(result.rule) if registry is not None and result.slug != token.lower() else None
    return meta is not None and meta.code == result.rule and meta.name == token.lower()


class Baseline(Struct):
    entries: Counter
    where: str

    @staticmethod
    def key(result: Result, base: Path, cwd: Path) -> tuple:
        rule, path, obj, node = result.identity()
        absolute = (cwd / path).resolve() if not Path(path).is_absolute() else Path(path)
        try:
            path = absolute.relative_to(base).as_posix()
        except ValueError:
            path = absolute.as_posix()
        return (rule, path, tuple(obj), tuple(node))

    @classmethod
    def load(cls, file: Path, cwd: Path) -> "Baseline":
        from mlops_lint.sources.files import Unreadable, read_source

        try:  # a regular file only, size-bounded (a FIFO or /dev/zero named as the baseline never hangs)
            data = json.loads(read_source(file, limit=256 * 1024 * 1024).decode("utf-8"))
        except Unreadable as exc:
            raise ValueError(f"{file}: cannot read the baseline: {exc.reason}") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{file}: cannot read the baseline: {exc}") from None
        except RecursionError:
            raise ValueError(f"{file}: cannot read the baseline: nested too deeply") from None
        if not isinstance(data, dict) or not isinstance(data.get("findings"), list):
            raise ValueError(f"{file}: not an mlops-lint baseline (expected an object with a 'findings' list)")
        entries: Counter = Counter()
        for entry in data["findings"]:
            try:
                obj = entry.get("object") or {}
                entries[(entry["rule"], entry["path"], (obj.get("kind", ""), obj.get("namespace", ""),
                         obj.get("name", "")), tuple(str(p) for p in entry.get("node", [])))] += 1
            except (AttributeError, KeyError, TypeError):
                raise ValueError(f"{file}: malformed baseline entry {entry!r}") from None
        return cls(entries, str(file))


def write_baseline(results: Iterable[Result], file: Path, cwd: Path) -> int:
    base = file.resolve().parent
    findings = []
    for result in results:
        rule, path, obj, node = Baseline.key(result, base, cwd)
        findings.append({
            "rule": rule,
            "path": path,
            "object": {"kind": obj[0], "namespace": obj[1], "name": obj[2]},
            "node": list(node),
            "message": result.message,
        })
    findings.sort(key=lambda f: (f["path"], f["rule"], json.dumps(f["object"]), f["node"]))
    payload = {"version": BASELINE_VERSION, "tool": "mlops-lint", "findings": findings}
    from mlops_lint.output import write_file

    write_file(file, json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return len(findings)


def directives_of(document: Document) -> list[Directive]:
    """Every suppression a file holds: its comments' and its objects' annotations'."""
    found = [d for comment in document.comments for d in parse_comment(comment, document.path)]
    for obj in document.objects:
        found.extend(annotation_suppressions(obj))
    return found


def apply(
    pairs: Iterable[tuple[Result, tuple | None]],
    directives: Iterable[Directive],
    *,
    enabled_codes: set[str],
    registry: Any,
) -> tuple[list[Result], list[Directive]]:
    """Mark results suppressed by comments and annotations; return them with every directive
    that suppressed nothing. A result is paired with the key (:attr:`K8sObject.key`) of the
    object it is on. (The baseline comes after, over the whole run: :func:`apply_baseline`.)"""
    per_file: dict[str, FileSuppressions] = {}
    per_object: dict[tuple, list[Directive]] = {}
    every: list[Directive] = []
    for directive in directives:
        every.append(directive)
        if directive.key is not None:
            per_object.setdefault(directive.key, []).append(directive)
        else:
            fs = per_file.setdefault(directive.path, FileSuppressions())
            (fs.line if directive.lines else fs.file).append(directive)
    out: list[Result] = []
    for result, key in pairs:
        marks: list[Suppression] = []
        fs = per_file.get(result.path)
        if fs is not None:
            for directive in fs.file + [d for d in fs.line if result.span.line in d.lines]:
                if _matches(directive.token, result, registry):
                    directive.used = True
                    marks.append(Suppression("inSource", directive.reason, directive.where))
        if key is not None:
            for directive in per_object.get(key, ()):
                if _matches(directive.token, result, registry):
                    directive.used = True
                    marks.append(Suppression("inSource", directive.reason, directive.where))
        out.append(replace(result, suppressions=tuple(marks)) if marks else result)
    unused = [d for d in every if not d.used and _reportable(d, enabled_codes, registry)]
    return out, unused


def apply_baseline(results: list[Result], baseline: Baseline, base: Path, cwd: Path) -> list[Result]:
    """Mark the results recorded in ``baseline`` (each entry matches one result at most)."""
    remaining = Counter(baseline.entries)
    out = []
    for result in results:
        if not result.suppressions:
            key = Baseline.key(result, base, cwd)
            if remaining[key] > 0:
                remaining[key] -= 1
                result = replace(result, suppressions=(
                    Suppression("external", "recorded in the baseline", f"baseline {baseline.where}"),))
        out.append(result)
    return out


def unused_results(unused: list[Directive], registry: Any, severity: dict[str, str]) -> list[Result]:
    """LNT001 findings for directives that suppressed nothing."""
    meta = registry.get("LNT001")
    found = []
    for directive in unused:
        known = registry.get(directive.token)
        what = f"names no rule {directive.token!r}" if known is None else f"suppressed no {known.code} finding"
        found.append(Result(
            meta.code, meta.name, severity.get(meta.code, meta.severity),
            f"unused suppression: {directive.where} {what}", directive.path, directive.span, directive.obj,
            ("suppression", directive.where, directive.token),
        ))
    return found


def split_reason(reason: str) -> tuple[str | None, str]:
    """``(until, reason)``: the ``until=`` value a reason starts with (None without one) and the
    reason after it."""
    match = UNTIL.match(reason)
    if match is None:
        return None, reason
    return match.group(1), reason[match.end():].strip()


def today_utc() -> date:
    """The day (UTC) an ``until=`` expiry is judged against."""
    return datetime.now(timezone.utc).date()


def govern(directives: Iterable[Directive], *, registry: Any, severity: dict[str, str], enabled: set[str],
           require_reason: bool, today: date | None = None) -> tuple[list[Directive], list[Result]]:
    """The directives that apply (an expired one, or one whose ``until=`` is no date, does not)
    and the LNT003/LNT004 findings on them, for the rules of those that run."""
    today = today or today_utc()
    kept: list[Directive] = []
    found: list[Result] = []

    def report(code: str, message: str, directive: Directive) -> None:
        if code in enabled:
            meta = registry.get(code)
            found.append(Result(meta.code, meta.name, severity.get(meta.code, meta.severity), message, directive.path,
                                directive.span, directive.obj, ("suppression", directive.where, directive.token)))

    for directive in directives:
        until, reason = split_reason(directive.reason)
        what = f"of {directive.token} ({directive.where})"
        if until is not None:
            try:
                expiry = date.fromisoformat(until) if DATE.fullmatch(until) else None
            except ValueError:
                expiry = None
            if expiry is None:
                report(EXPIRED_SUPPRESSION, f"suppression {what}: until={until!r} is not a date (YYYY-MM-DD), so "
                       "it does not apply", directive)
                continue
            if today > expiry:
                report(EXPIRED_SUPPRESSION, f"suppression {what} expired on {expiry.isoformat()}: it no longer "
                       "applies", directive)
                continue
        if require_reason and not reason:
            report(SUPPRESSION_WITHOUT_REASON, f"suppression {what} gives no reason (require-reason: true); "
                   "say why after the rule", directive)
        kept.append(directive)
    return kept, found


def _reportable(directive: Directive, enabled_codes: set[str], registry: Any) -> bool:
    """Unused only counts for rules that ran (a disabled rule cannot use its suppression)."""
    meta = registry.get(directive.token)
    return meta is None or meta.code in enabled_codes
