"""Hand-built runs for the report tests (no engine, no files), and random results (hypothesis)."""

from __future__ import annotations

from msgspec.structs import replace

from hypothesis import strategies as st

from mlops_lint.model.position import FILE_START, Span
from mlops_lint.result import Note, ObjectRef, Result, RunReport, Suppression
from mlops_lint.rule import CONTAINER, ENGINE, RuleMeta

ROOT = "/work/repo with space"


def doc(summary: str, what: str, *, known_problems: bool = False) -> str:
    known = "\n## Known problems\nMay fire on operator-managed objects.\n" if known_problems else ""
    return f"""{summary}

## What it does
{what}

## Why is this bad?
Pods land on nodes without GPUs. See [the article](https://learn.microsoft.com/azure/aks/gpu-cluster).

## Example
```yaml
## not a section: a YAML comment inside a fence
resources:
  requests: {{nvidia.com/gpu: 1}}
```

## Use instead
```yaml
resources:
  limits: {{nvidia.com/gpu: 1}}
```
{known}
## References
- https://learn.microsoft.com/azure/aks/gpu-cluster
"""


def meta(code: str, slug: str, severity: str, summary: str, **extra) -> RuleMeta:
    scope = extra.pop("scope", CONTAINER)
    known = extra.pop("known_problems", False)
    text = doc(summary, f"Checks `{slug}` ({code}).", known_problems=known)
    return RuleMeta(
        code=code, name=slug, severity=severity, scope=scope, func=lambda *a: iter(()),
        doc=text.strip(), summary=summary, **extra,
    )


RULES = [
    meta("DKR004", "pip-cache-kept", "info", "pip install without --no-cache-dir."),
    meta("GPU001", "gpu-limit-missing", "error", "A GPU requested without the matching limit.", tags=("gpu", "scheduling")),
    meta("RES004", "shm-missing", "warning", "Training container without /dev/shm.", known_problems=True),
    meta("SCH001", "parse-error", "error", "A file that cannot be parsed.", scope=ENGINE),
    meta("SEC004", "privileged-container", "error", "A privileged container.", tags=("security",),
         security_severity="8.8"),
]

JOB = ObjectRef("Job", "ml", "train")
BERT = ObjectRef("PyTorchJob", "", "bert")
SPACED = "deploy/train job.yaml"

RESULTS = [
    Result("SCH001", "parse-error", "error", "could not parse YAML: mapping values are not allowed here",
           "broken.yaml", FILE_START),
    Result("GPU001", "gpu-limit-missing", "error",
           "container `trainer` requests 2 nvidia.com/gpu but sets no limit — ünïcødé ✓",
           SPACED, Span(12, 9, 12, 18), JOB, ("spec", "template", "spec", "containers", 0, "resources"),
           fix="add limits: {nvidia.com/gpu: 2}"),
    Result("SEC004", "privileged-container", "error", "container `trainer` sets privileged: true",
           SPACED, Span(20, 11, 20, 21), JOB, ("spec", "template", "spec", "containers", 0, "securityContext"),
           suppressions=(Suppression("inSource", "device plugin needs it", "comment line 19"),)),
    Result("RES004", "shm-missing", "warning", "50% of runs, a:b, c\nsecond line\r",
           SPACED, Span(30, 5, 32, 3), BERT, ("spec", "pytorchReplicaSpecs", "Worker")),
    Result("DKR004", "pip-cache-kept", "info", "`pip install` keeps its cache", "images/Dockerfile", Span(3, 5, 3, 40),
           node=("RUN", 3)),
    Result("DKR004", "pip-cache-kept", "info", "`pip install` keeps its cache", "images/Dockerfile", Span(7, 5, 7, 40),
           node=("RUN", 3), suppressions=(Suppression("external", "", "baseline .mlops-lint-baseline.json"),)),
    Result("ORG001", "cost-center-label-missing", "warning", "label `cost-center` missing",
           "ünï/café.yaml", Span(2, 1, 2, 5), ObjectRef("Deployment", "web", "api")),
]


def sample_report(**changes) -> RunReport:
    report = RunReport(
        results=sorted(RESULTS, key=Result.sort_key),
        rules=list(RULES),
        files_linted=12,
        files_skipped=2,
        notes=[Note("charts/web", "Helm chart skipped: render it with `helm template` first")],
        root=ROOT,
        version="0.1.0",
    )
    return replace(report, **changes)


def shifted(report: RunReport, lines: int) -> RunReport:
    """The same run with every span moved down by ``lines``."""
    def move(r: Result) -> Result:
        s = r.span
        return replace(r, span=Span(s.line + lines, s.col, s.end_line + lines, s.end_col))

    return replace(report, results=[move(r) for r in report.results])


# ---- random results --------------------------------------------------------------------------

# Text a finding can hold: any character but a lone surrogate (paths are escaped, sources decoded
# strictly), with the ones a report must escape or keep as they are drawn often.
REPORT_TEXT = st.text(
    st.characters(exclude_categories=("Cs",)) | st.sampled_from([*map(chr, range(0x20)), "\x7f", "\x85", "\u2028",
                                                                  "\u2029", "\ufeff", '"', "\\", "%", " ", "é", "🚀"]),
    max_size=30,
)
PATHS = st.one_of(REPORT_TEXT, st.sampled_from(["a.yaml", SPACED, "ünï/café.yaml", "/abs/x y.yaml", "dir/%41.yaml"]))
LINES = st.integers(1, 10**6)


@st.composite
def random_results(draw) -> Result:
    """A result of a rule of :data:`RULES` or of one that did not run, anywhere, maybe suppressed."""
    code, slug, severity = draw(st.sampled_from([(m.code, m.name, m.severity) for m in RULES] + [
        ("XYZ999", "unknown-rule", "warning"), ("LNT002", "rule-error", "error")]))
    line, col = draw(LINES), draw(LINES)
    obj = draw(st.none() | st.builds(ObjectRef, REPORT_TEXT, REPORT_TEXT, REPORT_TEXT))
    suppressions = draw(st.lists(st.builds(Suppression, st.sampled_from(["inSource", "external"]), REPORT_TEXT,
                                           REPORT_TEXT), max_size=2).map(tuple))
    return Result(code, slug, severity, draw(REPORT_TEXT), draw(PATHS),
                  Span(line, col, line + draw(st.integers(-1, 3)), draw(LINES)), obj,
                  tuple(draw(st.lists(REPORT_TEXT | st.integers(0, 50), max_size=3))), draw(st.none() | REPORT_TEXT),
                  suppressions)
