"""JUnit XML (``--format junit``), as Azure Pipelines' PublishTestResults, GitLab and Jenkins read
it: one ``<testsuite>`` per rule family (``linter.families``: ml, aks, k8s), each holding

- one ``<testcase>`` per (file, rule) with active findings: ``classname`` the file (relative to
  the repository, as SARIF's), ``name`` the rule; it fails (``<failure>``) when a finding of it
  is at or above the file's ``--fail-on`` level, the failure's message and text giving each
  finding's ``path:line:col`` and message; findings below that level leave it passing;
- one passing ``<testcase>`` per linted file and family with no findings there (``name`` "no
  <family> findings"), so that the suite's count of tests means the files checked;
- a skipped ``<testcase>`` per file that was not linted (skipped, a parse error), and one for a
  run that linted nothing, in the ``k8s`` suite, with the reason: nothing is silent.

Suppressed findings are not tests. The layout is the one of the Apache Ant JUnit schema
(tests/data/junit.xsd), the strictest of the common ones: ``properties``, ``system-out`` and
``system-err`` always present, ``timestamp`` (``$SOURCE_DATE_EPOCH`` when set, for reproducible
reports, else now, in UTC) and ``hostname`` (``localhost``: the report never names the machine).
Characters XML 1.0 cannot hold (control characters, lone surrogates of an undecodable file name,
U+FFFE/U+FFFF) are written as ``\\xNN``/``\\uNNNN`` text, as the text report shows them.
"""

from __future__ import annotations

import os
import re
import time
from collections import defaultdict

from mlops_lint.report.common import TOOL_NAME, RenderOptions, ordered, printable, tool_version
from mlops_lint.result import Result, RunReport

# what XML 1.0 cannot hold once ``printable`` has shown the control characters: lone surrogates
# (an undecodable byte of a file name) and the two noncharacters U+FFFE and U+FFFF
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """``text`` escaped for an XML attribute or element: control characters and what XML cannot
    hold shown as escapes, ``& < > "`` as entities."""
    text = _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", printable(text))
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def timestamp() -> str:
    """``YYYY-MM-DDTHH:MM:SS`` in UTC (the schema allows no zone): ``$SOURCE_DATE_EPOCH`` if set."""
    try:
        seconds = int(os.environ["SOURCE_DATE_EPOCH"])
    except (KeyError, ValueError):
        seconds = int(time.time())
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))


def location(result: Result) -> str:
    return f"{result.path}:{result.span.line}:{result.span.col}"


def _case(classname: str, name: str, inner: str = "") -> str:
    head = f'    <testcase name="{xml_text(name)}" classname="{xml_text(classname)}" time="0"'
    return f"{head}>\n{inner}    </testcase>\n" if inner else f"{head}/>\n"


def _failure(results: list[Result], level: str) -> str:
    first = results[0]
    count = f"{len(results)} findings" if len(results) > 1 else "1 finding"
    message = f"{count} of {first.rule} at or above --fail-on {level}: {first.message}"
    text = "\n".join(xml_text(f"{location(r)}: {r.severity.upper()} {r.rule} {r.slug}: {r.message}") for r in results)
    return f'      <failure type="{xml_text(first.rule)}" message="{xml_text(message)}">{text}</failure>\n'


def emit(report: RunReport, options: RenderOptions) -> str:
    from msgspec.structs import replace

    from mlops_lint.families import FAMILIES, family_of
    from mlops_lint.rule import SEVERITY_RANK

    uris = report.uris
    families = {meta.code: meta.family for meta in report.rules}
    ran = {families[code] for code in families}  # the families with a rule that ran
    # per family: file -> rule -> its active findings (on the repository-relative path)
    found: dict[str, dict[str, dict[str, list[Result]]]] = {family: defaultdict(dict) for family in FAMILIES}
    levels: dict[str, str] = {}  # shown path -> its fail-on level
    for result in ordered(report.active):
        shown = uris.get(result.path, result.path)
        levels[shown] = report.fail_on_paths.get(result.path, report.fail_on)
        family = families.get(result.rule) or family_of(result.rule)
        found[family][shown].setdefault(result.rule, []).append(replace(result, path=shown))
    linted = sorted(uris.get(path, path) for path, status in report.file_status.items() if status == "linted")
    not_linted = sorted((uris.get(path, path), status) for path, status in report.file_status.items()
                        if status != "linted")
    stamp = timestamp()
    suites = []
    for index, family in enumerate(FAMILIES):
        cases, failures, skipped = [], 0, 0
        files = sorted(set(linted) | set(found[family]))
        for path in files:
            rules = found[family].get(path)
            if not rules:
                if family in ran and path in linted:
                    cases.append(_case(path, f"no {family} findings"))
                continue
            level = levels[path]
            for rule, results in sorted(rules.items()):
                failing = [r for r in results if level != "never"
                           and SEVERITY_RANK[r.severity] >= SEVERITY_RANK[level]]
                name = f"{rule} {results[0].slug}"
                if failing:
                    failures += 1
                    cases.append(_case(path, name, _failure(failing, level)))
                else:
                    cases.append(_case(path, name))
        if family == "k8s":
            for path, status in not_linted:
                skipped += 1
                cases.append(_case(path, "not linted", f'      <skipped message="{xml_text(status)}"/>\n'))
            if report.nothing_linted:
                skipped += 1
                cases.append(_case(TOOL_NAME, "no files linted",
                                   f'      <skipped message="{xml_text(report.nothing_linted)}"/>\n'))
        notes = "".join(xml_text(f"{uris.get(n.path, n.path)}: {n.message}") + "\n" for n in report.notes
                        ) if family == "k8s" else ""
        suites.append(
            f'  <testsuite name="{family}" package="{TOOL_NAME}.{family}" id="{index}" timestamp="{stamp}" '
            f'hostname="localhost" tests="{len(cases)}" failures="{failures}" errors="0" skipped="{skipped}" '
            f'time="0">\n'
            f'    <properties>\n'
            f'      <property name="tool" value="{TOOL_NAME} {xml_text(tool_version(report))}"/>\n'
            f'      <property name="fail-on" value="{xml_text(report.fail_on)}"/>\n'
            f'    </properties>\n'
            + "".join(cases)
            + (f"    <system-out>{notes}</system-out>\n" if notes else "    <system-out/>\n")
            + "    <system-err/>\n"
            "  </testsuite>\n")
    return '<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n' + "".join(suites) + "</testsuites>\n"
