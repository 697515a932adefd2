"""What every run must satisfy, whatever it was given (shared by the fuzz, hostile-input and
file-system tests).

- no rule raised (no LNT002) and no loader broke (no "mlops-lint could not read this file");
- every rule of the registry ran, opt-in ones included (minus those the profile turns off);
- results sorted by (path, line, column, rule), and the same on a second run, in every format;
- every position inside its file: 1 <= line <= lines, 1 <= column <= length of the line + 1
  (in code points), the end not before the start;
- ``--format json`` valid against ``schemas/findings.schema.json``, ``--format sarif`` valid
  against the official SARIF 2.1.0 schema; text and github render.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import jsonschema
from msgspec.structs import replace

from mlops_lint.config import Config, load_config
from mlops_lint.engine import LintRequest, enabled_rules, lint
from mlops_lint.profiles import AUTOMATIC_PROFILE, INFERRED
from mlops_lint.registry import load_registry
from mlops_lint.report import render
from mlops_lint.result import RunReport
from mlops_lint.sources.text import DecodeError, decode

REPO = Path(__file__).resolve().parents[1]
SARIF_SCHEMA = REPO.parent / "shared" / "sarif" / "sarif-schema-2.1.0.json"
LOADER_CRASH = "mlops-lint could not read this file"
# Rule errors found by these tests in rules other helpers own, reported to the lead with a minimal
# input (each has a strict xfail in test_robustness.py that starts failing once it is fixed: then
# delete the entry here). (rule, exception type named in the LNT002 message.)
KNOWN_RULE_ERRORS: set[tuple[str, str]] = set()  # (rule, exception) pairs a known, reported bug raises


def _known(result) -> bool:
    return any(result.message.startswith(f"rule {code} (") and f" raised {kind}:" in result.message
               for code, kind in KNOWN_RULE_ERRORS)


def every_rule() -> list[str]:
    """Every code in the registry: ``ALL`` plus the opt-in rules (LNT001 and any added later)."""
    return [meta.code for meta in load_registry().rules]


@lru_cache(maxsize=1)
def validators():
    findings = jsonschema.Draft202012Validator(json.loads((REPO / "schemas" / "findings.schema.json").read_text()))
    sarif = jsonschema.Draft4Validator(json.loads(SARIF_SCHEMA.read_text())) if SARIF_SCHEMA.exists() else None
    return findings, sarif


def config_from(raw: dict, folder: Path) -> Config:
    """A config as a user would write it: ``raw`` saved as ``.mlops-lint.yaml`` and loaded (validated)."""
    import yaml

    path = folder / ".mlops-lint.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return load_config(path, load_registry())


def config_from_file(path: Path) -> Config:
    return load_config(path, load_registry())


def lint_bytes(data: bytes, name: str = "fuzz.yaml", config: Config | None = None, cwd: Path | None = None) -> RunReport:
    """Lint one document read from stdin as ``name``, with every rule."""
    return lint(LintRequest(paths=[], config=config or Config(), registry=load_registry(), select=every_rule(),
                            stdin=(name, data), jobs=1, cwd=cwd or Path("/nonexistent-fuzz-root")))


def lint_paths(paths: list[Path], cwd: Path, config: Config | None = None, jobs: int = 1) -> RunReport:
    return lint(LintRequest(paths=paths, config=config or Config(), registry=load_registry(), select=every_rule(),
                            jobs=jobs, cwd=cwd))


def _lines(data: bytes, path: str = "") -> list[str]:
    try:
        text = decode(data)
    except DecodeError:
        text = data.decode("utf-8", "replace")
    if text.startswith("\ufeff"):
        text = text[1:]
    # YAML, BuildKit and the shell reader all break lines at \n (a \r before it stays in the line);
    # a YAML file without a single \n (classic Mac OS line ends) is read in lines ended by \r
    if path.endswith((".yaml", ".yml", ".json")) and "\n" not in text and "\r" in text:
        return text.split("\r")
    return text.split("\n")


def check_positions(report: RunReport, files: dict[str, bytes]) -> None:
    """Every finding of a file in ``files`` (display path -> bytes) points inside that file."""
    lines_of = {path: _lines(data, path) for path, data in files.items()}
    for result in report.results:
        assert result.path in lines_of, f"finding for a file that was not linted: {result}"
        lines = lines_of[result.path]
        span = result.span
        assert 1 <= span.line <= len(lines), f"line outside the file ({len(lines)} lines): {result}"
        assert 1 <= span.col <= len(lines[span.line - 1]) + 1, f"column outside line {span.line}: {result}"
        assert (span.end_line, span.end_col) >= (span.line, span.col), f"span ends before it starts: {result}"
        assert span.end_line <= len(lines), f"end line outside the file: {result}"
        assert span.end_col <= len(lines[span.end_line - 1]) + 2, f"end column outside line {span.end_line}: {result}"


def ran_with(report: RunReport, config: Config) -> Config:
    """The configuration the run linted with: ``config``, in the aks-automatic profile when the run's
    notes say the project's files implied it (a NAP or Automatic cluster and no profile given)."""
    if any(note.message.startswith(f"profile {AUTOMATIC_PROFILE} inferred") for note in report.notes):
        return replace(config, profile=AUTOMATIC_PROFILE, profile_from=INFERRED)
    return config


def check_report(report: RunReport, files: dict[str, bytes], config: Config | None = None) -> dict[str, str]:
    """All the invariants of one run; returns the rendered formats (to compare runs)."""
    broken = [r for r in report.results
              if (r.rule == "LNT002" and not _known(r)) or (r.rule == "SCH001" and LOADER_CRASH in r.message)]
    assert not broken, "\n".join(f"{r.path}:{r.line}:{r.column}: {r.rule} {r.message}" for r in broken)
    expected = {m.code for m in enabled_rules(load_registry(), ran_with(report, config or Config()), every_rule())}
    assert {m.code for m in report.rules} == expected, "not every rule ran"
    keys = [r.sort_key() for r in report.results]
    assert keys == sorted(keys), "results are not sorted"
    check_positions(report, files)
    findings_validator, _ = validators()
    rendered = {fmt: render(report, fmt) for fmt in ("json", "sarif", "text", "github")}
    findings_validator.validate(json.loads(rendered["json"]))
    validate_sarif(json.loads(rendered["sarif"]))
    return rendered


_DRIVERS_SEEN: set[str] = set()


def validate_sarif(log: dict) -> None:
    """The whole log against the official schema; the rule descriptors (the same in every run
    with the same rules: most of the log and of the time) only the first time they are seen."""
    _, sarif_validator = validators()
    if sarif_validator is None:
        return
    driver = log["runs"][0]["tool"]["driver"]
    key = json.dumps(driver, sort_keys=True)
    if key not in _DRIVERS_SEEN:
        sarif_validator.validate(log)
        _DRIVERS_SEEN.add(key)
        return
    light = {**log, "runs": [{**run, "tool": {"driver": {**driver, "rules": driver["rules"][:1]}}} for run in log["runs"]]}
    sarif_validator.validate(light)


def identities(report: RunReport) -> list[tuple]:
    """What the text formats do not show but SARIF and baselines depend on."""
    return [(r.sort_key(), r.node, r.fingerprint(), r.obj) for r in report.results]


def check_bytes(data: bytes, name: str = "fuzz.yaml", config: Config | None = None, cwd: Path | None = None) -> RunReport:
    """Lint ``data`` twice: both runs satisfy every invariant and render byte for byte the same."""
    first = lint_bytes(data, name, config, cwd)
    shown = next(iter(first.file_status), name)
    rendered = check_report(first, {shown: data}, config)
    second = lint_bytes(data, name, config, cwd)
    assert render(second, "json") == rendered["json"], "a second run reported something else"
    assert identities(second) == identities(first), "a second run gave other node paths or fingerprints"
    return first
