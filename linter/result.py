"""A finding after the engine has stamped it: what every report and the baseline consume."""

from __future__ import annotations

from typing import Literal

from msgspec import Struct, field

from mlops_lint.fix import Fix
from mlops_lint.model.position import Span


class ObjectRef(Struct, frozen=True):
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


class Suppression(Struct, frozen=True):
    kind: str  # "inSource" (comment or annotation) | "external" (baseline)
    justification: str = ""
    where: str = ""  # "comment line 12", "annotation mlops-lint.io/ignore", "baseline FILE"


class Result(Struct, frozen=True):
    rule: str
    slug: str
    severity: Literal["error", "warning", "info"]  # linter.rule.SEVERITIES (after per-rule overrides)
    message: str
    path: str  # display path, "/" separated, relative to the working folder where possible
    span: Span
    obj: ObjectRef | None = None
    node: tuple[str | int, ...] = ()  # path of the node inside its document (for baselines)
    fix: str | None = None
    suppressions: tuple[Suppression, ...] = field(default=())
    built_from: str | None = None  # the kustomization root whose build the finding is on
    # the rule's repair as text edits (linter.fix), resolved against the text the run linted;
    # None when the rule knows none or it could not be resolved. ``fix`` above stays the hint
    autofix: Fix | None = None

    @property
    def line(self) -> int:
        return self.span.line

    @property
    def column(self) -> int:
        return self.span.col

    @property
    def suppressed(self) -> bool:
        return bool(self.suppressions)

    def sort_key(self) -> tuple:
        return (self.path, self.span.line, self.span.col, self.rule, self.message)

    def identity(self) -> tuple:
        """What stays the same when lines move: rule, file, object and node path (not the line)."""
        obj = (self.obj.kind, self.obj.namespace, self.obj.name) if self.obj else ("", "", "")
        node = self.node if self.node else (self.message,)
        return (self.rule, self.path, obj, tuple(str(part) for part in node))

    def fingerprint(self) -> str:
        """A stable hash of :meth:`identity` (SARIF ``primaryLocationLineHash``, baselines)."""
        rule, path, obj, node = self.identity()
        text = "\x1f".join([rule, path, *obj, *node])
        import hashlib  # here: a text or JSON run never needs OpenSSL's hashes

        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class Note(Struct):
    """Something the user should know that is not a finding (a Helm chart skipped, say)."""

    path: str
    message: str


class RunReport(Struct):
    """Everything a report needs: sorted results (suppressed ones included), the rules that ran."""

    results: list[Result]  # sorted by Result.sort_key(); suppressed results have .suppressions
    rules: list  # RuleMeta of every rule that ran, sorted by code
    files_linted: int
    files_skipped: int = 0
    notes: list[Note] = field(default_factory=list)
    root: str = ""  # absolute folder of SARIF's %SRCROOT%: the git top (or project root) of the files
    version: str = ""
    fail_on: str = "warning"
    file_status: dict[str, str] = field(default_factory=dict)  # target path -> linted | skipped: … | parse error
    # projects with different fail-on levels: each target path's own (else every path has fail_on)
    fail_on_paths: dict[str, str] = field(default_factory=dict)
    # a display path's path under ``root`` where the two differ (SARIF URIs; display paths are
    # relative to the working folder, URIs to the repository)
    uris: dict[str, str] = field(default_factory=dict)
    # a --fix run's: the fixes applied per rule (None: not a fix run)
    fixed: dict[str, int] | None = None
    # target paths whose project applies unsafe fixes with --fix (`fix: {unsafe: true}`)
    unsafe_fixing: set[str] = field(default_factory=set)
    # why no file was linted (every one skipped, none found, an empty stdin); "" when one was
    nothing_linted: str = ""
    fail_on_empty: bool = False  # --fail-on-empty or a project's `fail-on-empty: true`: exit 1 then

    def failing(self) -> bool:
        """Whether a finding is at or above the fail-on level of its project (the exit status 1),
        or nothing was linted where the run fails on that."""
        return self._failing_finding() or bool(self.fail_on_empty and self.nothing_linted)

    def _failing_finding(self) -> bool:
        from mlops_lint.rule import SEVERITY_RANK

        for result in self.active:
            level = self.fail_on_paths.get(result.path, self.fail_on)
            if level != "never" and SEVERITY_RANK[result.severity] >= SEVERITY_RANK[level]:
                return True
        return False

    @property
    def active(self) -> list[Result]:
        return [r for r in self.results if not r.suppressions]

    def counts(self) -> dict[str, int]:
        counts = {"error": 0, "warning": 0, "info": 0}
        for result in self.active:
            counts[result.severity] += 1
        return counts
