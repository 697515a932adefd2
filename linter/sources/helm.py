"""Rendered Helm output (``helm template … | mlops-lint -``) mapped back to the chart's templates.

``helm template`` prints each object after a ``# Source: CHART/templates/FILE.yaml`` comment. A
finding on such an object is reported at that template: its path joined to the chart's folder
when ``--stdin-filename`` names the chart's folder or a file inside it (the nearest folder upward
holding ``Chart.yaml``), else as Helm prints it. The line is the template's line whose text is
the rendered line's (the key and its value, as the template spells it when it holds no
``{{ … }}``), else the first template line with the rendered line's key, else the template's
``kind:`` line: a template's line numbers are not the rendered output's, and its expressions may
render to several lines or none, so the text is what can be matched.
"""

from __future__ import annotations

import os
import re
from typing import Any

from msgspec.structs import replace

from linter.model.position import Span

_SOURCE = re.compile(r"^# Source: (\S[^\r\n]*?)\s*$")
_KEY = re.compile(r"^\s*(?:-\s+)?((?:\"[^\"]*\"|'[^']*'|[^:#\s][^:#]*?)):(?:\s|$)")


def chart_folder(name: str | None, cwd: str) -> str | None:
    """The chart folder ``--stdin-filename`` names (itself, or the nearest one above a file)."""
    if not name or name in ("-", ""):
        return None
    path = os.path.abspath(os.path.join(cwd, name))
    folder = path if os.path.isdir(path) else os.path.dirname(path)
    for _ in range(8):
        if os.path.isfile(os.path.join(folder, "Chart.yaml")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return None


class HelmMapper:
    """Where a position of the rendered output is in the chart's templates."""

    def __init__(self, text: str, chart: str | None, cwd: str):
        self.lines = text.splitlines()
        self.sources: list[tuple[int, str]] = []  # (1-based line of the comment, template path)
        for number, line in enumerate(self.lines, 1):
            match = _SOURCE.match(line)
            if match:
                self.sources.append((number, match.group(1)))
        self.chart = chart
        self.cwd = cwd
        self._templates: dict[str, list[str] | None] = {}

    def __bool__(self) -> bool:
        return bool(self.sources)

    def template_path(self, source: str) -> tuple[str, str]:
        """(display path, absolute path) of a ``# Source:`` path."""
        from pathlib import Path

        from linter.discover import display_path

        parts = source.replace("\\", "/").split("/")
        if self.chart is not None and len(parts) > 1:
            absolute = os.path.join(self.chart, *parts[1:])
        else:
            absolute = os.path.join(self.cwd, *parts)
        return display_path(Path(absolute), Path(self.cwd)), absolute

    def _template(self, absolute: str) -> list[str] | None:
        if absolute not in self._templates:
            from linter.sources.files import Unreadable, read_source

            try:
                self._templates[absolute] = read_source(absolute).decode("utf-8", "replace").splitlines()
            except Unreadable:
                self._templates[absolute] = None
        return self._templates[absolute]

    def locate(self, span: Span) -> tuple[str, Span] | None:
        """The template and the span there of a rendered position (None: not under a Source)."""
        source = None
        for number, path in self.sources:
            if number > span.line:
                break
            source = path
        if source is None:
            return None
        shown, absolute = self.template_path(source)
        template = self._template(absolute)
        if not template:
            return shown, Span(1, 1, 1, 2)
        rendered = self.lines[span.line - 1] if 0 < span.line <= len(self.lines) else ""
        text = rendered.strip()
        if text:
            for number, line in enumerate(template, 1):
                if line.strip() == text:
                    column = line.index(text) + 1
                    return shown, Span(number, column, number, column + len(text))
        key = _KEY.match(rendered)
        if key:
            wanted, context = key.group(1), _parents(self.lines, span.line)
            best: tuple[int, int] | None = None  # (keys shared with the rendered line's parents, line)
            for number, line in enumerate(template, 1):
                found = _KEY.match(line)
                if found and found.group(1) == wanted:
                    shared = _shared(context, _parents(template, number))
                    if best is None or shared > best[0]:
                        best = (shared, number)
            if best is not None:
                line = template[best[1] - 1]
                column = line.index(wanted) + 1
                return shown, Span(best[1], column, best[1], column + len(wanted))
        for number, line in enumerate(template, 1):
            if line.startswith("kind:"):
                return shown, Span(number, 1, number, len(line) + 1)
        return shown, Span(1, 1, 1, 2)


def _parents(lines: list[str], number: int) -> list[str]:
    """The keys of the lines a line is nested in (by indentation), nearest first (a few)."""
    out: list[str] = []
    line = lines[number - 1]
    indent = len(line) - len(line.lstrip(" -"))
    for above in range(number - 2, -1, -1):
        text = lines[above]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        own = len(text) - len(text.lstrip(" -"))
        if own < indent:
            match = _KEY.match(text)
            if match:
                out.append(match.group(1))
            indent = own
            if len(out) == 4 or own == 0:
                break
    return out


def _shared(a: list[str], b: list[str]) -> int:
    count = 0
    for x, y in zip(a, b):
        if x != y:
            break
        count += 1
    return count


def remap(pairs: list[tuple[Any, Any]], mappers: dict[str, HelmMapper]) -> list[tuple[Any, Any]]:
    out = []
    for result, key in pairs:
        mapper = mappers.get(result.path)
        found = mapper.locate(result.span) if mapper is not None else None
        out.append((replace(result, path=found[0], span=found[1]), key) if found is not None else (result, key))
    return out


def remap_directive(directive: Any, mappers: dict[str, HelmMapper]) -> Any:
    """A suppression comment of the rendered output moved to its template line (the lines it
    covers move with it)."""
    mapper = mappers.get(directive.path)
    found = mapper.locate(directive.span) if mapper is not None else None
    if found is None:
        return directive
    shift = found[1].line - directive.span.line
    return replace(directive, path=found[0], span=found[1], lines=frozenset(line + shift for line in directive.lines))


# ---------------------------------------------------------------------------------------------
# Rendering the project's charts (config ``helm: {enabled: auto}`` and a ``helm`` on PATH)


def find_charts(files: Any) -> list[tuple[str, str]]:
    """The charts among a project's files, ``(absolute folder, display folder)``: each folder
    whose ``Chart.yaml`` is a file of the project and that holds ``templates/`` (a subchart under
    another chart's ``charts/`` is rendered with its parent)."""
    found = []
    for absolute, display in files:
        if os.path.basename(absolute) == "Chart.yaml" and os.path.isdir(os.path.join(os.path.dirname(absolute),
                                                                                       "templates")):
            found.append((os.path.dirname(absolute), os.path.dirname(display) or "."))
    folders = {folder for folder, _ in found}

    def nested(folder: str) -> bool:
        parent = os.path.dirname(folder)
        return os.path.basename(parent) == "charts" and os.path.dirname(parent) in folders

    return sorted((c for c in found if not nested(c[0])), key=lambda c: c[1])


def chart_inputs(folder: str) -> list[str]:
    """Every file of a chart (what its rendering may read), sorted."""
    out = []
    for inner, dirs, names in os.walk(folder, followlinks=False):
        dirs.sort()
        out.extend(os.path.join(inner, name) for name in sorted(names))
    return out


def render(folder: str, command: list[str], values: list[str], timeout: float) -> tuple[bytes | None, str | None]:
    """``helm template`` of one chart with its values files (output, or the error's message)."""
    import subprocess

    from linter.sources.kustomize import MAX_OUTPUT, build_environment

    arguments = [*command, folder]
    for name in values:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            arguments += ["--values", path]
    try:
        done = subprocess.run(arguments, cwd=folder, env=build_environment(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, f"helm template did not finish in {timeout:g} s"
    except OSError as exc:
        return None, f"could not run {command[0]}: {exc.strerror or exc}"
    if done.returncode != 0:
        text = " ".join(done.stderr.decode("utf-8", "replace").split()) or "no message"
        return None, text if len(text) <= 600 else text[:599] + "…"
    if len(done.stdout) > MAX_OUTPUT:
        return None, f"the rendered output is over {MAX_OUTPUT >> 20} MB: not linted"
    return done.stdout, None
