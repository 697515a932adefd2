"""GitLab Code Quality (``--format gitlab``): the JSON array GitLab reads from a job's
``artifacts:reports:codequality`` and shows in merge requests (a subset of the Code Climate
issue format; tests/data/gitlab-codequality.schema.json holds it, with its source).

One issue per active finding: ``description`` the rule and message, ``check_name`` the rule id,
``fingerprint`` a hash of SARIF's ``primaryLocationLineHash`` (the line-independent fingerprint
plus its occurrence), so that GitLab keeps an issue's identity when lines move, as code
scanning does; ``severity`` info -> info, warning -> major, error -> critical; ``location.path``
relative to the repository (SARIF's ``%SRCROOT%``, ``report.uris``), where GitLab looks for the
file, and ``location.lines.begin``. Suppressed findings are left out (GitLab has no field for
them), as are notes: a run that linted nothing is said on stderr and in the text report.
"""

from __future__ import annotations

import hashlib
from typing import Any

from mlops_lint.report.common import RenderOptions, ordered, printable
from mlops_lint.report.jsontext import dumps
from mlops_lint.result import Result, RunReport

SEVERITY = {"info": "info", "warning": "major", "error": "critical"}


def issue(result: Result, line_hash: str) -> dict[str, Any]:
    return {
        "description": printable(f"{result.rule} {result.slug}: {result.message}"),
        "check_name": result.rule,
        "fingerprint": hashlib.sha256(line_hash.encode("utf-8")).hexdigest()[:32],
        "severity": SEVERITY[result.severity],
        "location": {"path": result.path, "lines": {"begin": result.span.line}},
    }


def emit(report: RunReport, options: RenderOptions) -> str:
    from msgspec.structs import replace

    from mlops_lint.report.sarif import line_hashes

    uris = report.uris
    results = ordered([replace(r, path=uris[r.path]) if r.path in uris else r for r in report.active])
    return dumps([issue(r, h) for r, h in zip(results, line_hashes(results))]) + "\n"
