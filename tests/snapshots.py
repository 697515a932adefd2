"""Golden snapshots shared by the rule fixtures (tests/test_rule_fixtures.py) and the reference
reports (tests/test_reference_fixtures.py): how a JSON or SARIF report is made stable (what moves
with the release or the machine is replaced), and how a golden is compared or rewritten.

Ownership, so that adding or changing one rule changes only its own snapshots:

- a rule's docs (its SARIF ``shortDescription``, ``fullDescription`` and ``help``) are pinned in
  one place only, ``fixtures/rules/<ID>/expected.sarif``; every other snapshot holding that rule's
  descriptor keeps its shape (which keys, text and markdown) with the text replaced by a pointer
  (:func:`docs_pointer`);
- a rule's findings are pinned in its own folder (``expected.*`` on its fixtures,
  ``expected-violating.json`` on the whole violating tree); the reference reports in fixtures/reports/ show
  the formats on a fixed choice of files and rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
RULES = REPO / "fixtures" / "rules"
SARIF_SCHEMA = REPO.parent / "shared" / "sarif" / "sarif-schema-2.1.0.json"
DOC_FIELDS = ("shortDescription", "fullDescription", "help")


def dump(data: Any) -> str:
    """Sorted keys, two-space indent, a final newline: diffs of a golden read line by line."""
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


JSON_VERSION = re.compile(r'^(  "version": )"[^"\n]*"(,?)$', re.MULTILINE)


def stable_json(out: str) -> str:
    """The JSON report exactly as printed (key order, indent, non-ASCII as is), its top-level
    version (which moves with every release) replaced."""
    text, count = JSON_VERSION.subn(r'\1"<version>"\2', out)
    assert count == 1 and json.loads(text)["version"] == "<version>", f"no top-level version in:\n{out[:300]}"
    return text


def stable_sarif(out: str) -> dict:
    """The SARIF log as data, without what moves with the release or the machine: the tool's
    version, the working directory and the absolute ``%SRCROOT%`` (the URIs under it stay)."""
    data = json.loads(out)
    for run in data["runs"]:
        run["tool"]["driver"]["version"] = "<version>"
        run["tool"]["driver"].pop("semanticVersion", None)
        for invocation in run.get("invocations", []):
            invocation.pop("workingDirectory", None)
        run.get("originalUriBaseIds", {}).pop("%SRCROOT%", None)
    return data


def docs_pointer(code: str) -> str:
    return f"<the docs of {code}: fixtures/rules/{code}/expected.sarif>"


def point_to_docs(descriptor: dict) -> dict:
    """``descriptor`` with its doc texts (short and full description, help text and markdown)
    replaced by a pointer to the one snapshot that pins them; the keys present stay."""
    out = dict(descriptor)
    for field in DOC_FIELDS:
        if isinstance(out.get(field), dict):
            out[field] = {key: docs_pointer(descriptor["id"]) for key in out[field]}
    return out


def descriptors_owned_by(data: dict, owner: str | None) -> dict:
    """Every rule descriptor's docs replaced by a pointer, except ``owner``'s (None: all of them)."""
    for run in data["runs"]:
        driver = run["tool"]["driver"]
        driver["rules"] = [rule if rule["id"] == owner else point_to_docs(rule) for rule in driver.get("rules", [])]
    return data


def check_golden(golden: Path, text: str, update: bool) -> None:
    """Compare ``text`` with ``golden`` (or rewrite it under ``pytest --update-golden``)."""
    if update:
        golden.write_text(text, encoding="utf-8")
        return
    name = golden.relative_to(REPO).as_posix()
    assert golden.is_file(), f"{name} is missing: run `pytest --update-golden` and review the diff"
    assert text == golden.read_text(encoding="utf-8"), f"{name} is out of date (pytest --update-golden)"
