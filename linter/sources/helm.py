"""Helm charts linted as they deploy: rendered (by Helm's SDK in a worker, :mod:`linter.sources.helm_sdk`,
else by ``helm template``), and each finding mapped back to the template line to edit.

Rendered output (the SDK's, assembled as ``helm template`` prints it, or ``helm template … |
mlops-lint -`` on stdin) carries a ``# Source: CHART/templates/FILE.yaml`` comment before each
object. A finding on such an object is reported at that template (its path joined to the chart's
folder: the project's chart, or the one ``--stdin-filename`` names), at the line with the same
key path within the object (:class:`HelmMapper`): list items told apart by their ``name``, so a
multi-container template maps each container's finding to its own lines; a node the template
does not spell (``toYaml``, ``include``, ``range``) is at the line that inserts it. A template's
line numbers are not the rendered output's, and its expressions may render to several lines or
none: the key path is what both share.

The project's charts (:func:`find_charts`, :func:`plan`): one render per ``values.yaml`` and per
``ci/*-values.yaml``, with the config's values files (confined to the chart and the project),
``set``, release name and namespace; the config never chooses the program (:func:`renderer`).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from typing import Any

from msgspec import Struct
from msgspec.structs import replace

from mlops_lint.model.position import Span

_SOURCE = re.compile(r"^# Source: (\S[^\r\n]*?)\s*$")
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")  # what else str.splitlines ends a line at


def _only_newlines(text: str) -> bool:
    """Whether ``str.splitlines`` would end the text's lines only at \\n (an ASCII text is
    looked at by a few scans for a character, faster than the pattern's)."""
    if "\r" in text or "\v" in text or "\f" in text or "\x1c" in text or "\x1d" in text or "\x1e" in text:
        return False
    return text.isascii() or _OTHER_BREAKS.search(text) is None
_KEY = re.compile(r"^\s*(?:-\s+)?((?:\"[^\"]*\"|'[^']*'|[^:#\s][^:#]*?)):(?:\s|$)")


@lru_cache(maxsize=4096)
def _template_place(chart: str | None, cwd: str, source: str) -> tuple[str, str]:
    """:meth:`HelmMapper.template_path`, worked out once for every render of a chart (each of
    its values files' renders names the same templates)."""
    return HelmMapper("", chart, cwd).template_path(source)


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
    """Where a position of the rendered output is in the chart's templates.

    By path, not by text: the rendered line's document (its ``# Source:``), then its key path
    within the object (``spec.template.spec.containers[…].image``), list items told apart by
    their ``name`` (a template's ``- name: {{ .Chart.Name }}-ctr`` matches ``trainer-ctr``),
    else by their place. The template's line with the same path is the one to edit; a node the
    template does not spell (inserted by ``toYaml``, ``include`` or a ``range``) is at its
    deepest ancestor the template spells, which is where the insertion is written."""

    def __init__(self, text: str, chart: str | None, cwd: str, display: str | None = None,
                 values: str | None = None):
        self._text = text
        self._lines: list[str] | None = None  # split when a position is looked for (a warm run's may never be)
        self.sources: list[tuple[int, str]] = []  # (1-based line of the comment, template path)
        if _only_newlines(text):  # lines end only at \n: found without splitting the text
            self.count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
            at, number = 0, 1
            start = 0 if text.startswith("# Source: ") else text.find("\n# Source: ") + 1
            while start > 0 or (start == 0 and text.startswith("# Source: ")):
                number += text.count("\n", at, start)
                at = start
                end = text.find("\n", start)
                match = _SOURCE.match(text[start:end] if end >= 0 else text[start:])
                if match:
                    self.sources.append((number, match.group(1)))
                start = text.find("\n# Source: ", start) + 1
                if start == 0:
                    break
        else:
            self.count = len(self.lines)
            for number, line in enumerate(self.lines, 1):
                if line.startswith("# Source: "):
                    match = _SOURCE.match(line)
                    if match:
                        self.sources.append((number, match.group(1)))
        self.chart = chart
        self.cwd = cwd
        self.display = display  # the chart's folder as shown (a render of the project's chart)
        self.values = values  # the values file a render of the project's chart is named by
        self._templates: dict[str, list[str] | None] = {}
        self._template_paths: dict[str, "_Paths"] = {}
        self._rendered: "_Paths | None" = None
        self._shown: dict[str, str] = {}  # a template's display path -> its absolute path
        self._places: dict[str, tuple[str, str]] = {}  # a # Source: path -> (display, absolute)
        # rendered line -> (template shown, span there, values its line inserts): found once per
        # line, and kept in the cache with the render (use_memo)
        self._found: dict[int, tuple[str, Span, tuple[str, ...]] | None] = {}
        self._memo: Memo | None = None
        self._unread = False  # a memo given, its positions not read yet (use_memo)
        self.render: Render | None = None  # the render of a project's chart this output is
        self.output: bytes | None = None  # its bytes (a render of a project's chart: kept in its ChartRecord)

    @property
    def lines(self) -> list[str]:
        """The rendered output's lines (``str.splitlines``)."""
        if self._lines is None:
            self._lines = self._text.splitlines()
        return self._lines

    def __bool__(self) -> bool:
        return bool(self.sources)

    def place(self, source: str) -> tuple[str, str]:
        """(display path, absolute path) of a ``# Source:`` path, worked out once."""
        found = self._places.get(source)
        if found is None:
            found = self._places[source] = _template_place(self.chart, self.cwd, source)
        return found

    def template_path(self, source: str) -> tuple[str, str]:
        """(display path, absolute path) of a ``# Source:`` path."""
        from pathlib import Path

        from mlops_lint.discover import display_path, shown as shown_text

        parts = source.replace("\\", "/").split("/")
        if self.chart is not None and len(parts) > 1:  # CHART/templates/… or CHART/charts/SUB/templates/…
            absolute = os.path.join(self.chart, *parts[1:])
        else:
            absolute = os.path.join(self.cwd, *parts)
        if (os.sep == "/" and absolute.startswith(self.cwd + "/") and os.path.normpath(absolute) == absolute
                and os.path.normpath(self.cwd) == self.cwd != "/"):
            return shown_text(absolute[len(self.cwd) + 1:]), absolute  # what display_path gives, without Paths
        return display_path(Path(absolute), Path(self.cwd)), absolute

    def _template(self, absolute: str) -> list[str] | None:
        if absolute not in self._templates:
            lines, paths, shown = _read_template(absolute, self.cwd)
            self._templates[absolute] = lines
            self._template_paths[absolute] = paths
            self._shown[shown] = absolute
        return self._templates[absolute]

    def line_above(self, shown: str, line: int, text: str, reach: int = 50) -> int | None:
        """The nearest line above ``line`` of the template shown as ``shown`` that reads ``text``
        (stripped), within ``reach`` lines; None when there is none or the template is not read."""
        absolute = self._shown.get(shown)
        lines = self._templates.get(absolute) if absolute is not None else None
        if not lines or not text:
            return None
        for number in range(min(line, len(lines) + 1) - 1, max(0, line - reach), -1):
            if lines[number - 1].strip() == text:
                return number
        return None

    def inserted(self, found: tuple[str, Span]) -> list[str]:
        """The values a template line inserts (``.Values.image.tag``), as it spells them."""
        absolute = self._shown.get(found[0])
        lines = self._templates.get(absolute) if absolute is not None else None
        if not lines or not 0 < found[1].line <= len(lines):
            return []
        return list(dict.fromkeys(_VALUES.findall(lines[found[1].line - 1])))

    def template_lines(self, shown: str) -> list[str] | None:
        """The lines of the template a finding was mapped to (read now if a warm run's map came
        from the cache)."""
        absolute = self._shown.get(shown)
        if absolute is None:
            for _, source in self.sources:
                if self.place(source)[0] == shown:
                    absolute = self.place(source)[1]
                    break
        return self._template(absolute) if absolute is not None else None

    def template_file(self, shown: str) -> str | None:
        """The absolute path of a template read by :meth:`template_lines`."""
        return self._shown.get(shown)

    def use_memo(self, memo: "Memo") -> None:
        """Positions found by an earlier run on the same render of the same chart files (the
        cache's, checked by :meth:`Memo.load` when a position is first looked for: a warm run
        reads no template, a run whose project finished as before looks for none)."""
        self._memo = memo
        self._unread = True
        if memo.record is not None:
            memo.record.mappers.append(self)

    def found(self, span: Span) -> tuple[str, Span, tuple[str, ...]] | None:
        """:meth:`locate`, with the values the template line inserts; once per rendered line."""
        if self._unread:
            self._unread = False
            self._found.update(self._memo.load(self))  # type: ignore[union-attr]
        if span.line in self._found:
            return self._found[span.line]
        located = self._locate(span)
        entry = (located[0], located[1], tuple(self.inserted(located))) if located is not None else None
        self._found[span.line] = entry
        if self._memo is not None and entry is not None:
            self._memo.dirty = True
        return entry

    def locate(self, span: Span) -> tuple[str, Span] | None:
        """The template and the span there of a rendered position (None: not under a Source)."""
        entry = self.found(span)
        return (entry[0], entry[1]) if entry is not None else None

    def source_at(self, line: int) -> int | None:
        """The index in :attr:`sources` of the ``# Source:`` a rendered line is under."""
        from bisect import bisect_right

        index = bisect_right(self.sources, (line, "\U0010ffff")) - 1
        return index if index >= 0 else None

    def _locate(self, span: Span) -> tuple[str, Span] | None:
        source = None
        start = 0
        for number, path in self.sources:
            if number > span.line:
                break
            source, start = path, number
        if source is None:
            return None
        shown, absolute = self.place(source)
        template = self._template(absolute)
        if not template:
            return shown, Span(1, 1, 1, 2)
        if self._rendered is None:
            self._rendered = _paths(self.lines)
        wanted = self._rendered[span.line - 1] if 0 < span.line <= len(self._rendered) else None
        if wanted is None:  # a line with no key (a document's start): the first key after it
            for number in range(span.line, len(self._rendered)):
                if self._rendered[number] is not None:
                    wanted = self._rendered[number][:1]
                    break
        best: tuple[int, int] | None = None  # (path components matched, line)
        if wanted is not None:
            # the template's first line whose whole path matches the longest prefix of the
            # rendered path: looked up by the prefix's keys (list items as "-")
            paths = self._template_paths[absolute]
            index = _index(absolute, paths)
            signature = _signature(wanted)  # a prefix's is the prefix of the whole path's
            for length in range(len(wanted), 0, -1):
                for number in index.get(signature[:length], ()):
                    if _matched(wanted, paths[number - 1]) == length:  # type: ignore[arg-type]
                        best = (length, number)
                        break
                if best is not None:
                    break
        if best is not None:
            line = template[best[1] - 1]
            key = self._template_paths[absolute][best[1] - 1]
            word = str(key[-1][0]) if key and key[-1][0] != "-" else "-"
            column = line.find(word) + 1 if word != "-" and word in line else len(line) - len(line.lstrip()) + 1
            if best[0] < len(wanted):  # inserted under this key: the insertion's line, if it follows
                inserted = _insertion(template, best[1])
                if inserted is not None:
                    line = template[inserted - 1]
                    column = len(line) - len(line.lstrip()) + 1
                    return shown, Span(inserted, column, inserted, len(line.rstrip()) + 1)
            return shown, Span(best[1], column, best[1], column + max(1, len(word)))
        for number, line in enumerate(template, 1):
            if line.startswith("kind:"):
                return shown, Span(number, 1, number, len(line) + 1)
        return shown, Span(1, 1, 1, 2)


MEMO_FORMAT = 1


class Memo:
    """The template positions found on one render, kept in the cache folder: in its chart's
    record (:class:`ChartRecord`, every render of the chart keyed), else beside the render
    (``helmmap-<key>.out``), so a warm run maps its findings without reading a template.

    Its key holds the render's (every chart file's content, the values, the settings, the SDK's
    version), the code that maps (mlops-lint's version and this module's file) and where it is
    shown from (the working folder, the chart's folder and display). Like every cache entry it
    is untrusted (:mod:`linter.cache`): read only as a bounded regular file, JSON of one shape,
    and every row checked against what this run knows before it is used: its rendered line is
    in the render, its template is the one that line's ``# Source:`` names, its line is within
    that template as read for the render (:meth:`size`), its columns within the file's size, the
    values it names spelled as values are. One row that does not check makes the whole entry a
    miss (found again and written anew)."""

    def __init__(self, cache: Any, key: str, files: dict[str, bytes], record: "ChartRecord | None" = None):
        self.cache = cache
        self.key = key
        self.files = files  # a chart file's path within the chart -> its bytes as rendered
        self._sizes: dict[str, tuple[int, int]] = {}
        self.dirty = False
        # the chart's record, which holds this map (read and written with it) instead of an entry of its own
        self.record = record

    def size(self, name: str) -> tuple[int, int]:
        """A chart file's lines and bytes (1 and 0 for none), counted once, for the templates
        a render's rows name."""
        found = self._sizes.get(name)
        if found is None:
            data = self.files.get(name)
            found = self._sizes[name] = (data.count(b"\n") + 1, len(data)) if data is not None else (1, 0)
        return found

    @staticmethod
    def key_of(render_key: str, mapper: "HelmMapper") -> str:
        from mlops_lint.digest import digest_text

        return "helmmap-" + digest_text(MEMO_FORMAT, _mapping_code(), render_key, mapper.cwd, mapper.chart,
                                         mapper.display, mapper.values)

    def load(self, mapper: "HelmMapper") -> dict[int, tuple[str, Span, tuple[str, ...]]]:
        import msgspec

        if self.record is not None:
            loaded = self.record.maps.get(self.key) if self.record.maps is not None else None
            if loaded is None:
                return {}
            try:
                return self._checked(loaded, mapper)
            except (ValueError, TypeError, KeyError, IndexError, RecursionError):
                self.dirty = True  # written anew with the chart's record
                return {}
        data = self.cache.get(self.key) if self.cache is not None else None
        if data is None:
            return {}
        try:
            loaded = _memo_decoder().decode(data)  # the shape and the types (whole numbers, not bools)
            return self._checked(loaded, mapper)
        except (msgspec.DecodeError, ValueError, TypeError, KeyError, IndexError, RecursionError):
            return {}

    def _checked(self, loaded: "_MemoFile", mapper: "HelmMapper") -> dict[int, tuple[str, Span, tuple[str, ...]]]:
        if loaded.format != MEMO_FORMAT or loaded.key != self.key or len(loaded.lines) > mapper.count:
            raise ValueError("not a map of this render")
        out: dict[int, tuple[str, Span, tuple[str, ...]]] = {}
        count = mapper.count
        # per # Source: a row names, its display path, the lines it covers, its template's line
        # count and size (worked out for those the rows name, once)
        sources: dict[int, tuple[str, int, int, int, int]] = {}
        for rendered, source, line, column, end_line, end_column, names in loaded.lines:
            found = sources.get(source)
            if found is None:
                if type(source) is not int or not 0 <= source < len(mapper.sources):
                    raise ValueError(source)
                start, path = mapper.sources[source]
                end = mapper.sources[source + 1][0] - 1 if source + 1 < len(mapper.sources) else count
                parts = path.replace("\\", "/").split("/")
                lines, size = self.size("/".join(parts[1:])) if len(parts) > 1 else (1, 0)
                found = sources[source] = (mapper.place(path)[0], start, end, max(1, lines), size + 2)
            shown, start, end, lines, columns = found
            # a line this # Source: covers (the comment's own too), a span within its template
            if not (start <= rendered <= end and 1 <= line <= end_line <= lines and 0 < column <= columns
                    and 0 < end_column <= columns and len(names) <= 64):
                raise ValueError(rendered)
            for name in names:  # each spelled as a value is (a name checked once per run)
                if name not in _CHECKED_NAMES:
                    if type(name) is not str or not _VALUES.fullmatch(name):
                        raise ValueError(names)
                    if len(_CHECKED_NAMES) < 4096:
                        _CHECKED_NAMES.add(name)
            out[rendered] = (shown, Span(line, column, end_line, end_column), tuple(names))
        return out

    def rows(self, mapper: "HelmMapper") -> dict[str, Any]:
        """The map as it is kept: the positions found on the render, each with its ``# Source:``."""
        if mapper._unread:  # not looked at this run: the positions it held kept
            mapper._unread = False
            mapper._found.update(self.load(mapper))
        rows = []
        for rendered, entry in sorted(mapper._found.items()):
            source = mapper.source_at(rendered) if entry is not None else None
            if entry is None or source is None or mapper.place(mapper.sources[source][1])[0] != entry[0]:
                continue
            rows.append([rendered, source, *entry[1], list(entry[2])])
        return {"format": MEMO_FORMAT, "key": self.key, "lines": rows}

    def save(self, mapper: "HelmMapper") -> None:
        if not self.dirty or self.cache is None:
            return
        if self.record is not None:  # written with the chart's record (save_memos)
            self.record.dirty = True
            return
        self.cache.put(self.key, json.dumps(self.rows(mapper), separators=(",", ":")).encode())
        self.dirty = False


CHART_FORMAT = 1
_CHART_ENTRY = b"mlops-lint helm chart %d\n" % CHART_FORMAT


class ChartRecord:
    """One chart's renders and their template maps (:class:`Memo`) as one build cache entry
    (``helmchart-<key>.out``): a warm run of an unchanged chart reads it instead of one entry per
    render and one per map. Its key is made of every render's key (each the content of every
    file the render reads: the chart's files as given to Helm, its subcharts in ``charts/``,
    ``.helmignore``, every values file; the render's settings: values, ``set``, release name,
    namespace, kube-version, API versions; the renderer and its version), the code that maps,
    and where the findings are shown from (the working folder, the chart's folder and display,
    each render's values label): any change of those is another key, never a stale record.

    Untrusted as every entry (:class:`linter.engine.kustomize.BuildCache`: a regular file opened
    without following a link, bounded): a header naming its key and the hash of the rest, a JSON
    line of the renders' sizes and maps (one shape, decoded strictly), then the outputs; a record
    whose header, key, hash, count, sizes or shape do not check is a miss (rendered or read again
    and written anew), and each map's rows are checked as :meth:`Memo.load` checks them."""

    def __init__(self, cache: Any, key: str, count: int):
        self.cache = cache
        self.key = key
        self.count = count  # the chart's renders
        self.maps: dict[str, _MemoFile] | None = None  # a map's key -> its rows, as the record held them
        self.outputs: list[bytes] | None = None  # as read (None: a miss, written when the run ends)
        self.mappers: list[HelmMapper] = []  # the renders' mappers, in order (their maps, :meth:`save`)
        self.dirty = False

    @staticmethod
    def key_of(plan: "Plan", place: str, keys: list[str]) -> str:
        from mlops_lint.digest import digest_text

        return "helmchart-" + digest_text(CHART_FORMAT, _mapping_code(), place, plan.folder, plan.display,
                                          *(render.label for render in plan.renders), *keys)

    def load(self) -> list[bytes] | None:
        """The renders' outputs the record holds (its maps kept for :meth:`Memo.load`), or None."""
        import msgspec

        from mlops_lint.digest import digest
        from mlops_lint.sources.text import MAX_FILE_BYTES

        data = self.cache.get(self.key) if self.cache is not None else None
        if data is None or not data.startswith(_CHART_ENTRY):
            return None
        parts = data[len(_CHART_ENTRY):].split(b"\n", 2)
        if len(parts) != 3 or parts[0] != self.key.encode("ascii") or parts[1] != digest(parts[2]).encode("ascii"):
            return None
        meta, _, rest = parts[2].partition(b"\n")
        try:
            loaded = _record_decoder().decode(meta)
        except (msgspec.DecodeError, ValueError, TypeError, RecursionError):
            return None
        sizes = loaded.sizes
        if (len(sizes) != self.count or len(loaded.maps) > self.count or sum(sizes) != len(rest)
                or any(not 0 <= size <= MAX_FILE_BYTES for size in sizes)):
            return None
        outputs, at = [], 0
        for size in sizes:
            outputs.append(rest[at:at + size])
            at += size
        self.maps = {found.key: found for found in loaded.maps if found.format == MEMO_FORMAT}
        self.outputs = outputs
        return outputs

    def save(self, outputs: list[bytes]) -> None:
        """Written when it was not read, or when a map found positions it did not hold."""
        if self.cache is None or (self.outputs is not None and not self.dirty):
            return
        if len(outputs) != self.count or len(self.mappers) != self.count:
            return  # a render failed, or was not mapped: each render's own entries stand
        from mlops_lint.digest import digest

        maps = [mapper._memo.rows(mapper) for mapper in self.mappers if mapper._memo is not None]
        body = b"%s\n%s" % (json.dumps({"sizes": [len(output) for output in outputs], "maps": maps},
                                        separators=(",", ":")).encode(), b"".join(outputs))
        self.cache.put(self.key, b"%s%s\n%s\n%s" % (_CHART_ENTRY, self.key.encode("ascii"),
                                                      digest(body).encode("ascii"), body))
        self.outputs, self.dirty = outputs, False
        for mapper in self.mappers:
            if mapper._memo is not None:
                mapper._memo.dirty = False


class _MemoFile(Struct):
    """A cached map as :meth:`Memo.save` writes it: each row (rendered line, index of its
    ``# Source:``, line, column, end line, end column, the values the line inserts)."""

    format: int
    key: str
    lines: list[tuple[int, int, int, int, int, int, list[str]]]


@lru_cache(maxsize=1)
def _memo_decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(_MemoFile)


class _RecordFile(Struct):
    """A :class:`ChartRecord`'s JSON line: each render's output size, in order, and the maps."""

    sizes: list[int]
    maps: list[_MemoFile]


@lru_cache(maxsize=1)
def _record_decoder() -> Any:
    import msgspec

    return msgspec.json.Decoder(_RecordFile)


@lru_cache(maxsize=1)
def _mapping_code() -> str:
    """The code that maps, as a map's key holds it: mlops-lint's version and this module's file."""
    from mlops_lint import __version__

    try:
        info = os.stat(__file__)
        return f"{__version__}:{info.st_size}:{info.st_mtime_ns}"
    except OSError:
        return __version__


def save_memos(mappers: dict[str, "HelmMapper"]) -> None:
    """Every render's newly found positions written to the cache (after the run's mapping): in
    its chart's record (:class:`ChartRecord`, with the renders) where it has one."""
    records: dict[int, ChartRecord] = {}
    for mapper in mappers.values():
        if mapper._memo is not None:
            mapper._memo.save(mapper)
            if mapper._memo.record is not None:
                records[id(mapper._memo.record)] = mapper._memo.record
    for record in records.values():
        record.save([mapper.output for mapper in record.mappers])


_INDEXES: dict[int, tuple[Any, dict[tuple, list[int]]]] = {}


def _signature(path: tuple) -> tuple:
    return tuple("-" if part[0] == "-" else part[0] for part in path)


def _index(absolute: str, paths: "_Paths") -> dict[tuple, list[int]]:
    """A template's line numbers by their path's keys, in line order (built once per parsed
    template; a line's named path is asked of ``paths`` when it is a candidate)."""
    found = _INDEXES.get(id(paths))
    if found is not None and found[0] is paths:
        return found[1]
    index: dict[tuple, list[int]] = {}
    for number, path in enumerate(paths.raw, 1):
        if path is not None:
            index.setdefault(_signature(path), []).append(number)
    if len(_INDEXES) > 4096:
        _INDEXES.clear()
    _INDEXES[id(paths)] = (paths, index)
    return index


_READ: dict[tuple[str, str, str], tuple[list[str] | None, "_Paths", str]] = {}


def _read_template(absolute: str, cwd: str) -> tuple[list[str] | None, "_Paths", str]:
    """A template's lines, their key paths and its display path, read and parsed once per
    process (every render of a chart, every values file, maps to the same templates)."""
    try:
        info = os.stat(absolute)
        stamp = f"{info.st_mtime_ns}:{info.st_size}:{info.st_ino}"
    except OSError:
        stamp = ""
    key = (absolute, cwd, stamp)  # an edited template is read again
    if key not in _READ:
        from pathlib import Path

        from mlops_lint.discover import display_path
        from mlops_lint.sources.files import Unreadable, read_source

        try:
            lines: list[str] | None = read_source(absolute).decode("utf-8", "replace").splitlines()
        except Unreadable:
            lines = None
        if len(_READ) > 4096:
            _READ.clear()
        _READ[key] = (lines, _paths(lines or [], template=True), display_path(Path(absolute), Path(cwd)))
    return _READ[key]


_VALUES = re.compile(r"\.Values(?:\.[A-Za-z_][\w-]*)+")
_CHECKED_NAMES: set[str] = set()  # values' names a cached map gave that _VALUES matched (Memo._checked)
_ITEM = re.compile(r"^(\s*)-(?:\s+|$)")
_BLOCK = re.compile(r":\s*[|>][-+0-9]*\s*(?:#.*)?$")
_ACTION = re.compile(r"^\s*\{\{.*\}\}\s*$")


def _paths(lines: list[str], template: bool = False) -> "_Paths":
    """Each line's key path (None: no key of its own): a tuple of ``(key,)`` and, for a list
    item, ``("-", index, name)`` (the item's ``name:`` value, a template's with its
    ``{{ … }}``). One pass over the lines (the open keys kept as a stack); a path is named when
    it is asked for (:class:`_Paths`), once, from its parent's naming."""
    out: list[tuple | None] = [None] * len(lines)
    indents: list[int] = []  # the open keys' and items' columns (an item's: its dash's + 1)
    comps: list[tuple] = []  # and their components
    counters: dict[tuple, int] = {}
    block: int | None = None  # the indent of a key whose block scalar the lines are in
    names: dict[tuple, str] = {}  # (document, an item's path) -> its name
    documents: list[int] = [0] * len(lines)
    document = 0
    for index, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            continue
        indent = len(line) - len(line.lstrip(" "))
        if block is not None:
            if indent > block:
                continue
            block = None
        if stripped[0] == "#" or (template and (stripped.startswith("{{") or _ACTION.match(line))):
            continue
        if stripped.startswith("---") or stripped.startswith("..."):
            indents, comps, counters = [], [], {}
            document += 1
            continue
        documents[index] = document
        rest, column = line, indent
        while stripped[0] == "-":
            item = _ITEM.match(rest)
            if not item:
                break
            while indents and indents[-1] > column:
                indents.pop()
                comps.pop()
            parent = tuple(comps)
            position = counters.get(parent, 0)
            counters[parent] = position + 1
            indents.append(column + 1)
            comps.append(("-", position))
            column = item.end()
            rest = " " * column + rest[item.end():]
            stripped = rest.strip()
            if not stripped:
                break
        key = _KEY.match(rest) if stripped else None
        if key is None:
            if comps and comps[-1][0] == "-" and stripped:
                out[index] = tuple(comps)
            continue
        name = key.group(1).strip("\"'")
        while indents and (indents[-1] > column or indents[-1] == column and comps[-1][0] != "-"):
            indents.pop()
            comps.pop()
        if counters:  # a key met again: the lists under its last value are counted anew
            counters.pop((*comps, (name,)), None)
        indents.append(column)
        comps.append((name,))
        path = tuple(comps)
        out[index] = path
        if name == "name" and len(path) > 1 and path[-2][0] == "-":
            names[(document, path[:-1])] = rest[key.end():].split(" #")[0].strip().strip("\"'")
        if ("|" in rest or ">" in rest) and _BLOCK.search(rest):  # the search only where it can match
            block = column
    return _Paths(out, documents, names)


class _Paths:
    """Each line's key path (:func:`_paths`), its list items completed with their names (what
    matches across render and template) when a line's path is first asked for: a mapping asks
    for the few lines its findings are on, and the candidates of the template's index."""

    __slots__ = ("raw", "_documents", "_names", "_done", "_lines")

    def __init__(self, raw: list[tuple | None], documents: list[int], names: dict[tuple, str]):
        self.raw = raw  # the paths, items as ("-", position): what their keys' signature needs
        self._documents = documents
        self._names = names
        self._done: dict[tuple, tuple] = {}  # (document, raw path) -> named path
        self._lines: dict[int, tuple | None] = {}

    def __len__(self) -> int:
        return len(self.raw)

    def __getitem__(self, index: int) -> tuple | None:
        found = self._lines.get(index, self)
        if found is self:
            path = self.raw[index]
            found = self._lines[index] = self._named(self._documents[index], path) if path is not None else None
        return found  # type: ignore[return-value]

    def _named(self, document: int, path: tuple) -> tuple:
        found = self._done.get((document, path))
        if found is None:
            head = self._named(document, path[:-1]) if len(path) > 1 else ()
            part = path[-1]
            found = (*head, ("-", part[1], self._names.get((document, path))) if part[0] == "-" else part)
            self._done[(document, path)] = found
        return found


def _matched(wanted: tuple, have: tuple) -> int:
    """How many leading components of a rendered path a template path matches."""
    count = 0
    for a, b in zip(wanted, have):
        if a[0] == "-" and b[0] == "-":
            if a[2] is not None and b[2] is not None:
                if not _name_matches(b[2], a[2]):
                    break
            elif a[1] != b[1]:
                break
        elif a != b:
            break
        count += 1
    return count


def _name_matches(template: str, rendered: str) -> bool:
    if "{{" not in template:
        return template == rendered
    return _name_pattern(template).fullmatch(rendered) is not None


@lru_cache(maxsize=4096)
def _name_pattern(template: str) -> "re.Pattern[str]":
    """A template's list item name as a pattern (each ``{{ … }}`` any text), made once per name."""
    return re.compile("".join(".*" if part.startswith("{{") else re.escape(part)
                              for part in re.split(r"(\{\{.*?\}\})", template)), re.DOTALL)


def _insertion(template: list[str], number: int) -> int | None:
    """The line after a key's that inserts its content (``{{ toYaml … | nindent N }}``,
    ``{{- include … }}``), if the key's own value is empty."""
    line = template[number - 1]
    if line.split(":", 1)[-1].strip() not in ("", "|", "|-", ">"):
        if "{{" in line:
            return number
        return None
    for following in range(number, min(number + 3, len(template))):
        text = template[following].strip()
        if not text:
            continue
        return following + 1 if text.startswith("{{") else None
    return None


def remap(pairs: list[tuple[Any, Any]], mappers: dict[str, HelmMapper]) -> list[tuple[Any, Any]]:
    """Results on rendered output moved to the templates. A template is never edited by
    ``--fix`` (the fix stays a hint); a fix of a value the template line inserts from the
    chart's ``values.yaml`` is made there when that literal is its one source, else the message
    says why not (:mod:`linter.sources.helm_values`). A render of a project's chart names its
    values file in the message; the same finding at the same place from several renders is one,
    naming each."""
    out: list[tuple[Any, Any]] = []
    # (rule, place, message) -> (its index in out, values files, renders' mappers, the result on the render, place)
    merged: dict[tuple, tuple[int, list[str], list[HelmMapper], Any, Any]] = {}
    for result, key in pairs:
        mapper = mappers.get(result.path)
        found = mapper.found(result.span) if mapper is not None else None
        if found is None:  # a render's own fix (on its text) is never one to apply
            out.append((replace(result, autofix=None) if mapper is not None and result.autofix is not None else result, key))
            continue
        if mapper.values is None:
            out.append((replace(result, path=found[0], span=found[1], autofix=None), key))
            continue
        inserted = found[2]
        message = f"{result.message} (this line inserts {', '.join(inserted)})" if inserted else result.message
        same = (result.rule, found[0], found[1], message)
        if same in merged:  # another render's: named in the first one's message (made below, once)
            merged[same][1].append(mapper.values)
            merged[same][2].append(mapper)
            continue
        merged[same] = (len(out), [mapper.values], [mapper], result, found)
        out.append((result, key))
    helper: Any = None
    for (_, _, _, message), (position, values, renders, original, found) in merged.items():
        key = out[position][1]
        values.sort(key=lambda label: (label != "values.yaml", label))
        message = f"{message} (Helm values: {', '.join(values)})"
        fix = None
        if original.autofix is not None and found[2]:
            if helper is None:
                from mlops_lint.sources import helm_values as helper

                helper.USES.clear()  # the charts' files are read again each run
            try:
                fix = helper.values_fix(original, found, renders)
            except helper.NoFix as why:
                message = f"{message} (no values.yaml fix: {why})"
        out[position] = (replace(original, path=found[0], span=found[1], message=message, autofix=fix), key)
    return out


def remap_directive(directive: Any, mappers: dict[str, HelmMapper]) -> Any:
    """A suppression comment of the rendered output moved to its template line (the lines it
    covers move with it)."""
    mapper = mappers.get(directive.path)
    if mapper is None:
        return directive
    below = sorted(line for line in directive.lines if line > directive.span.line)
    if below:  # a comment on its own line covers the next: placed by that line's node, as findings are
        return _own_line_directive(directive, mapper, below[0]) or directive
    found = mapper.locate(directive.span)
    if found is None:
        return directive
    shift = found[1].line - directive.span.line
    return replace(directive, path=found[0], span=found[1], lines=frozenset(line + shift for line in directive.lines),
                   where=_comment_where(directive.where, found[1].line))


def _comment_where(where: str, line: int) -> str:
    """``comment at line N`` with the template's line (N was the render's)."""
    return f"comment at line {line}" if where.startswith("comment at line ") else where


def _own_line_directive(directive: Any, mapper: HelmMapper, covered: int) -> Any:
    """A suppression comment on its own line of a render, at the template: the line it covers is
    located as a finding on it is (a comment line has no key path of its own: located alone it
    landed on the first key after it, ``spec:``, so it covered the wrong line); the comment
    itself is the nearest line above that one in the template that holds its text."""
    lines = mapper.lines
    if not 0 < covered <= len(lines):
        return None
    text = lines[covered - 1]
    column = len(text) - len(text.lstrip()) + 1
    found = mapper.locate(Span(covered, column, covered, column + 1))
    if found is None:
        return None
    path, span = found
    comment = lines[directive.span.line - 1].strip() if 0 < directive.span.line <= len(lines) else ""
    line = max(1, mapper.line_above(path, span.line, comment) or span.line - 1)
    start, width = directive.span.col, directive.span.end_col - directive.span.col
    return replace(directive, path=path, span=Span(line, start, line, start + width),
                   lines=frozenset({line, span.line}), where=_comment_where(directive.where, line))


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


NOT_RENDERED = ('chart not rendered: neither Helm\'s SDK (pip install "mlops-lint[helm]") nor a `helm` on PATH '
                'is installed')
_TEST_HOOK = re.compile(r"^\s*[\"']?helm\.sh/hook[\"']?\s*:\s*[\"']?[^\n#]*\btest\b", re.MULTILINE)
_DOCUMENT = re.compile(r"^---[ \t]*(?:#[^\n]*)?$", re.MULTILINE)
_LOOKUP = re.compile(rb"\blookup\s+\(?\s*\"")


_ERROR_PLACE = re.compile(r"(?:at \(|template: )([\w.@+-]+(?:/[\w.@+-]+)*\.(?:yaml|yml|tpl|txt|json)):(\d+)(?::(\d+))?")


def error_place(error: str, folder: str, display: str, cwd: str) -> tuple[str, Span]:
    """Where a render error is: the template line Helm names (``execution error at
    (CHART/templates/x.yaml:2:4)``) when it is a file of the chart, else the chart's Chart.yaml."""
    match = _ERROR_PLACE.search(error)
    if match:
        shown, absolute = HelmMapper("", folder, cwd).template_path(match.group(1))
        if os.path.isfile(absolute) and os.path.realpath(absolute).startswith(os.path.realpath(folder) + os.sep):
            line, column = int(match.group(2)), int(match.group(3) or 1)
            return shown, Span(line, column, line, column + 1)
    from mlops_lint.model.position import FILE_START

    return chart_file(display), FILE_START


def templates_folders(folder: str, files: Any = None) -> list[str]:
    """The templates folders a render of a chart covers: its own and its subcharts' in charts/.
    ``files``: the chart's files as given to Helm (:class:`linter.sources.helm_sdk.ChartFiles`),
    whose names tell the subcharts without looking at the folders again (a subchart's Chart.yaml
    left out of them, a link or ignored, is no subchart Helm renders)."""
    if files is not None and files.error is None:
        names = {name for name, _ in files.files}
        out = [os.path.join(folder, "templates")]
        for name in sorted(names):
            parts = name.split("/")
            # charts/A/Chart.yaml, charts/A/charts/B/Chart.yaml (each chart on the way one too)
            if (parts[-1] == "Chart.yaml" and len(parts) >= 3 and len(parts) % 2 == 1
                    and all(part == "charts" for part in parts[0:-1:2])
                    and all("/".join(parts[:end]) + "/Chart.yaml" in names for end in range(2, len(parts) - 1, 2))):
                out.append(os.path.join(folder, *parts[:-1], "templates"))
        return out
    out = [os.path.join(folder, "templates")]
    charts = os.path.join(folder, "charts")
    if os.path.isdir(charts) and not os.path.islink(charts):
        for entry in sorted(os.listdir(charts)):
            if os.path.isfile(os.path.join(charts, entry, "Chart.yaml")):
                out.extend(templates_folders(os.path.join(charts, entry)))
    return out


def chart_file(display: str) -> str:
    return f"{display}/Chart.yaml" if display not in (".", "") else "Chart.yaml"


def renderer(section: dict) -> tuple[tuple[str, str | None] | None, str | None]:
    """What renders charts: ``("sdk", None)`` when the ``helm`` extra is installed, else
    ``("binary", path)`` for a ``helm`` found on PATH, else None; with the note for a
    ``helm.command`` refused. The config comes with the tree it lints: it never chooses the
    program (a path in it, even an absolute one such as ``/proc/self/cwd/helm``, names the
    tree's own file), so only ``[helm, template]`` is accepted, and ``helm`` is looked up on
    PATH's absolute folders."""
    from mlops_lint.sources import helm_sdk
    from mlops_lint.programs import on_path

    refused = None
    command = section.get("command")
    if command and list(command) != ["helm", "template"]:
        refused = (f"helm.command {list(command)!r} not run: the config comes with the tree it lints, so it does not "
                   "choose the program; Helm's SDK (pip install \"mlops-lint[helm]\") or `helm template` found on "
                   "PATH renders the charts")
    if helm_sdk.available():
        return ("sdk", None), refused
    program = on_path("helm")
    return (("binary", program) if program else None), refused


class Render(Struct):
    """One render of a chart: its values files (``(shown name, absolute path)``, after the
    chart's own ``values.yaml``), ``set`` expressions, release name and namespace."""

    label: str  # the values file the render is named by ("values.yaml", "ci/gpu-values.yaml")
    values: list[tuple[str, str]]
    set: list[str]
    name: str | None  # the release name; None: the chart's (:func:`chart_name`)
    namespace: str
    kube_version: str | None = None
    api_versions: list[str] = []

    def virtual(self, display: str) -> str:
        return f"<helm template {display}>" if self.label == "values.yaml" else f"<helm template {display} -f {self.label}>"

    @property
    def with_values(self) -> str:
        return "" if self.label == "values.yaml" else f" with {self.label}"


class Plan(Struct):
    folder: str
    display: str
    renders: list[Render]
    notes: list[Any]
    lookup: bool = False


def _confined(folder: str, name: str, root: str) -> tuple[str | None, str | None]:
    """A configured values file's path, relative to the chart, when it stays inside the chart or
    the project (else None and why): the tree's config must not make the linter read the
    machine's files (an absolute path, ``../`` out, or a link out)."""
    if os.path.isabs(name) or name.startswith("~"):
        return None, "an absolute path"
    path = os.path.normpath(os.path.join(folder, name))
    real = os.path.realpath(path)
    inside = [os.path.realpath(folder), os.path.realpath(root)]
    if not any(real == base or real.startswith(base.rstrip(os.sep) + os.sep) for base in inside):
        return None, "outside the chart and the project"
    if not os.path.isfile(real):
        return None, "not a file"
    return path, None


def api_versions(bundled: bool, crds: Any = ()) -> list[str]:
    """The API versions a render is told the cluster serves beyond Kubernetes' own (what
    ``.Capabilities.APIVersions.Has`` sees): the served versions of ``crds`` (the project's:
    :func:`project_crds`) and of the CRDs bundled with mlops-lint, unless ``bundled-crds: false``,
    each as ``group/version`` and ``group/version/Kind``."""
    out: set[str] = set(crd_versions(crds))
    if bundled:
        for entry in _bundled_index().get("kinds", []):
            for version, about in (entry.get("versions") or {}).items():
                if about.get("served", True):
                    out.update((f"{entry['group']}/{version}", f"{entry['group']}/{version}/{entry['kind']}"))
    return sorted(out)


@lru_cache(maxsize=1)
def _bundled_index() -> dict:
    """The index of the bundled CRDs, as :func:`linter.validation.bundle.index` reads it, read
    here without importing the validation package (about 20 ms of start-up a warm run, which
    validates nothing, does not otherwise spend)."""
    from importlib import resources

    return json.loads((resources.files("mlops_lint") / "data" / "crds" / "index.json").read_text("utf-8"))


def crd_versions(crds: Any) -> set[str]:
    """``group/version`` and ``group/version/Kind`` of each served version of ``crds``."""
    out: set[str] = set()
    for crd in crds:
        for name in crd.served:
            out.update((f"{crd.group}/{name}", f"{crd.group}/{name}/{crd.kind}"))
    return out


def crds_in(data: bytes, name: str) -> list[Any]:
    """The CustomResourceDefinitions of one YAML or JSON file's bytes (none when it names none,
    is not valid, or is beyond the YAML reader's bounds)."""
    if b"CustomResourceDefinition" not in data:
        return []
    import yaml

    from mlops_lint.sources import yaml_k8s
    from mlops_lint.validation.crds import parse_crd

    try:
        text = data.decode("utf-8-sig")
        if yaml_k8s.check_bounds(text) is not None:  # libyaml's composer recurses in C: too deep a file would crash
            return []
        documents = [document for document in yaml.load_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
                     if document is not None]
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError, ValueError):
        return []
    found = []
    for document in documents:
        items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else [document]
        for item in items if isinstance(items, list) else []:
            crd = parse_crd(item, name)
            if crd is not None:
                found.append(crd)
    return found


_CRD_SUFFIXES = (".yaml", ".yml", ".json")


def project_crds(files: Any, charts: list[str], config: Any) -> list[Any]:
    """The CRDs the project knows, which a render is told the cluster serves (as ``helm install``
    applies a chart's ``crds/`` first, and the project's CRDs are applied with it): every CRD in
    the project's YAML and JSON files (``files``: absolute paths; a chart's ``templates/`` are
    Go templates, not read here; a file is read without following a link, within the file size
    limit, and parsed only when it names CustomResourceDefinition; of a chart's files, only
    those under a ``crds/`` folder: its templates are Go templates, its values and Chart.yaml
    are not applied) and in the config's ``crd-paths``."""
    from mlops_lint.sources.helm_sdk import read_no_link
    from mlops_lint.sources.text import MAX_FILE_BYTES

    folders = {folder.rstrip(os.sep) for folder in charts}
    found: list[Any] = []
    for path in files:
        if not path.endswith(_CRD_SUFFIXES):
            continue
        parent, parts = os.path.dirname(path), []  # the folders from the nearest chart above down to the file
        while parent not in folders:
            up = os.path.dirname(parent)
            if up == parent:
                parts = None
                break
            parts.append(os.path.basename(parent))
            parent = up
        if parts is not None:  # a chart's file: only under its (or a subchart's) crds/
            parts.reverse()
            if "crds" not in parts or "templates" in parts[:parts.index("crds")]:
                continue
        data, _ = read_no_link(path, MAX_FILE_BYTES)
        if data:
            found.extend(crds_in(data, path))
    if getattr(config, "crd_paths", ()):
        from mlops_lint.validation.crds import CrdPathError, configured_table

        try:
            found.extend(crd for crds in configured_table(config).values() for crd in crds)
        except CrdPathError:
            pass  # the config's own check names it
    return found


def plan(folder: str, display: str, section: dict, kubernetes_version: str | None, root: str,
         apis: list[str] | None = None, known: dict[str, tuple[bytes, str]] | None = None,
         cache: Any = None) -> Plan:
    """The renders of one chart the config asks for: its ``values.yaml`` (with the configured
    values files and ``set:``), plus one per ``ci/*-values.yaml`` (chart-testing's convention);
    per-chart settings under ``charts: {FOLDER: …}`` (the chart's folder as the project spells it).
    ``known``: the files the run read already (:class:`linter.sources.helm_sdk.ChartFiles`);
    ``cache``: the build cache, which keeps the dependencies Chart.yaml names (:func:`dependencies`)."""
    from mlops_lint.result import Note

    own = {}
    configured_charts = section.get("charts") or {}
    # the chart's folder as the project spells it, for the per-chart settings (none: not worked out)
    relative = os.path.relpath(folder, root).replace(os.sep, "/") if configured_charts else ""
    for key, value in configured_charts.items():
        if key.strip("/") in (relative, display.strip("/")) or (key in (".", "./") and relative == "."):
            own = dict(value)
    notes: list[Any] = []
    values: list[tuple[str, str]] = []
    for name in [*section.get("values", []), *own.get("values", [])]:
        path, why = _confined(folder, name, root)
        if path is None:
            notes.append(Note(display, f"helm values file {name!r} not used: {why}"))
        else:
            values.append((name, path))
    sets = [str(item) for item in [*section.get("set", []), *own.get("set", [])]]
    # the release name the config gives, else the chart's (its Chart.yaml's name, worked out by
    # prepare() only for a render the cache does not hold: its key holds Chart.yaml's content)
    configured = own.get("release-name") or section.get("release-name")
    name = str(configured) if configured else None
    data = _chart_yaml(folder, known)
    namespace = str(own.get("namespace") or section.get("namespace") or "default")
    if kubernetes_version and re.fullmatch(r"v?\d+\.\d+", kubernetes_version):  # as `helm --kube-version` spells it
        kubernetes_version = "v" + kubernetes_version.lstrip("v") + ".0"
    renders = [Render("values.yaml", values, sets, name, namespace, kubernetes_version, apis or [])]
    ci = os.path.join(folder, "ci")
    if os.path.isdir(ci) and not os.path.islink(ci):
        for entry in sorted(os.listdir(ci)):
            path = os.path.join(ci, entry)
            if entry.endswith("-values.yaml") and os.path.isfile(path) and not os.path.islink(path):
                renders.append(Render(f"ci/{entry}", [*values, (f"ci/{entry}", path)], sets, name, namespace,
                                      kubernetes_version, apis or []))
    for dependency in dependencies(data, cache):
        if not _has_subchart(folder, dependency):
            notes.append(Note(chart_file(display), f"dependency {dependency!r} is not in charts/: rendered "
                                                     "without it (no repository or registry is contacted)"))
    return Plan(folder, display, renders, notes)


def _chart_yaml(folder: str, known: dict[str, tuple[bytes, str]] | None = None) -> bytes | None:
    """Chart.yaml's bytes (at most 1 MB, never through a link); from ``known`` when the run read
    them already."""
    from mlops_lint.sources.helm_sdk import read_no_link

    path = os.path.join(folder, "Chart.yaml")
    found = known.get(path) if known else None
    if found is not None and len(found[0]) <= 1 << 20 and not os.path.islink(path):
        return found[0]
    return read_no_link(path, 1 << 20)[0]


DEPENDENCIES_FORMAT = 1


def dependencies(data: bytes | None, cache: Any = None) -> list[str]:
    """The names of the dependencies a Chart.yaml lists (its ``dependencies``' items' ``name``).
    A key is spelled in the text (plainly, or quoted with escapes): a Chart.yaml without the word
    or a backslash names none, unparsed. Else the build cache's answer for these bytes, when it
    is a list of plain names (an entry is untrusted: anything else is a miss); else parsed, and
    kept there, so a warm run neither parses Chart.yaml nor imports the YAML reader."""
    if data is None or (b"dependencies" not in data and b"\\" not in data):
        return []
    from mlops_lint.digest import digest, digest_text

    key = "helmdeps-" + digest_text(DEPENDENCIES_FORMAT, digest(data)) if cache is not None and cache.folder else None
    if key is not None:
        try:
            found = json.loads(cache.get(key) or b"null")
        except ValueError:
            found = None
        if isinstance(found, list) and all(_plain_name(name) for name in found):
            return found
    listed = _chart_metadata(data).get("dependencies")
    names = [str(item["name"]) for item in (listed if isinstance(listed, list) else [])
             if isinstance(item, dict) and item.get("name")]
    if key is not None and all(_plain_name(name) for name in names):
        cache.put(key, json.dumps(names).encode())
    return names


def _plain_name(name: Any) -> bool:
    return type(name) is str and 0 < len(name) <= 253 and not any(c in name for c in "/\\\0") and name not in (".", "..")


def chart_name(folder: str, files: Any) -> str:
    """A chart's name as a render's release name by default: its Chart.yaml's (as given to
    Helm: ``files``, :class:`linter.sources.helm_sdk.ChartFiles`), else its folder's."""
    data = next((data for name, data in files.files if name == "Chart.yaml"), None)
    metadata = _chart_metadata(data) if data is not None and len(data) <= 1 << 20 else {}
    return str(metadata.get("name") or os.path.basename(folder))


@lru_cache(maxsize=256)
def _chart_metadata(data: bytes | None) -> dict:
    """Chart.yaml's data (none when it is not a mapping, is broken, or is beyond the YAML
    reader's bounds: libyaml's composer recurses in C, and a deep enough file crashed the run);
    parsed once for the same bytes (a chart's dependencies and its name; read, never changed)."""
    from mlops_lint.sources import yaml_k8s

    text = (data or b"").decode("utf-8", "replace")
    if yaml_k8s.check_bounds(text) is not None:
        return {}
    try:
        import yaml

        loaded = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # noqa: BLE001 - a broken Chart.yaml is the render's error
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _has_subchart(folder: str, name: str) -> bool:
    if not _plain_name(name):
        return False  # `../x` or `/x` from the tree's Chart.yaml: nothing outside charts/ is looked up
    charts = os.path.join(folder, "charts")
    if os.path.isfile(os.path.join(charts, name, "Chart.yaml")):
        return True
    try:
        return any(entry.startswith(name + "-") and entry.endswith(".tgz") for entry in os.listdir(charts))
    except OSError:
        return False


def assemble(manifests: dict[str, str]) -> bytes:
    """The SDK's renders as ``helm template`` prints them: each document after its template's
    ``# Source:``; NOTES.txt, empty documents and test hooks (``helm.sh/hook: test``, run by
    ``helm test``, never deployed) left out."""
    out: list[str] = []
    for source in sorted(manifests):
        if source.endswith("NOTES.txt"):
            continue
        for document in _DOCUMENT.split(manifests[source]):
            if not document.strip() or all(not line.strip() or line.lstrip().startswith("#")
                                           for line in document.splitlines()):
                continue
            if _TEST_HOOK.search(document):
                continue
            out.append(f"---\n# Source: {source}\n{document.strip(chr(10))}\n")
    return "".join(out).encode()


_RENDER_ENTRY = b"mlops-lint helm render 1\n"


def for_cache(key: str, output: bytes) -> bytes:
    """A render as the cache keeps it: after a header naming its key and its content's hash."""
    from mlops_lint.digest import digest

    return b"%s%s\n%s\n%s" % (_RENDER_ENTRY, key.encode("ascii"), digest(output).encode("ascii"), output)


def from_cache(key: str, data: bytes | None) -> bytes | None:
    """A cached render, only when its header names this key and its content has the hash the
    header gives (a truncated, corrupt or renamed entry is a miss, rendered again), and it is
    within the file size limit."""
    from mlops_lint.digest import digest
    from mlops_lint.sources.text import MAX_FILE_BYTES

    if data is None or not data.startswith(_RENDER_ENTRY):
        return None
    parts = data[len(_RENDER_ENTRY):].split(b"\n", 2)
    if len(parts) != 3 or parts[0] != key.encode("ascii") or len(parts[2]) > MAX_FILE_BYTES:
        return None
    return parts[2] if parts[1] == digest(parts[2]).encode("ascii") else None


class Prepared:
    """A chart's renders before the renderer runs: what the cache had, and what is left to render."""

    def __init__(self, plan: Plan, files: Any):
        self.plan = plan
        self.files = files
        self.results: list[tuple[bytes | None, str | None]] = [(None, None)] * len(plan.renders)
        self.specs: list[dict[str, Any]] = []
        self.keys: list[str | None] = []
        self.todo: list[int] = []
        self.record: ChartRecord | None = None  # every render keyed, with a cache folder


def prepare(plan: Plan, renderer: tuple[str, str | None], cache: Any,
            known: dict[str, tuple[bytes, str]] | None = None, place: str | None = None) -> Prepared:
    """A chart's files and values read (confined, see :mod:`linter.sources.helm_sdk`; those the
    run read already taken from ``known``), each render's cache key (the content of every file it
    reads, its settings, the renderer and its version) and what the cache holds: with ``place``
    (the working folder its findings are shown from), the chart's :class:`ChartRecord` first,
    else each render's own entry."""
    from mlops_lint.digest import digest, digest_text
    from mlops_lint.sources import helm_sdk
    from mlops_lint.sources.files import Unreadable, read_source

    from mlops_lint.result import Note

    kind, program = renderer
    files = helm_sdk.ChartFiles(plan.folder, known)
    out = Prepared(plan, files)
    # the chart's own templates as given to Helm (a link is not), read once for the render and this
    if any(name.startswith("templates/") and _LOOKUP.search(data) for name, data in files.files):
        plan.lookup = True
        plan.notes.append(Note(plan.display, "templates call `lookup`: rendered offline, where it finds nothing"))
    if files.left_out:

        shown = ", ".join(f"{name} ({why})" for name, why in files.left_out[:5])
        more = f" and {len(files.left_out) - 5} more" if len(files.left_out) > 5 else ""
        plan.notes.append(Note(plan.display, f"chart files not given to Helm: {shown}{more}"))
    if files.error is not None:
        out.results = [(None, files.error)] * len(plan.renders)
        return out
    engine = f"sdk {helm_sdk.version()}" if kind == "sdk" else program or ""
    # the CRDs of the chart's crds/ folders (its own and its subcharts'), which Helm applies first
    own: set[str] = set()
    for name, data in files.files:
        parts = name.split("/")
        if name.endswith(_CRD_SUFFIXES) and "crds" in parts[:-1] and (
                parts[0] == "crds" or all(part == "charts" for part in parts[:parts.index("crds")][::2])):
            own.update(crd_versions(crds_in(data, os.path.join(plan.folder, *parts))))
    chart: str | None = None  # the chart's name, as a release name
    specs: list[tuple[int, dict[str, Any]]] = []  # (render's index, its settings) of those keyed
    for index, render in enumerate(plan.renders):
        texts = []
        try:
            for name, path in render.values:
                found = known.get(path) if known else None  # read by read_source too
                texts.append((name, (found[0] if found is not None else read_source(path)).decode("utf-8", "replace")))
        except Unreadable as why:
            out.results[index] = (None, f"values file {render.values[len(texts)][0]}: {why}")
            out.keys.append(None)
            continue
        spec = {"values": texts, "set": render.set, "name": render.name, "namespace": render.namespace,
                "kube_version": render.kube_version,
                "api_versions": sorted(own.union(render.api_versions)) if own else render.api_versions}
        # no release name configured: the chart's, which its Chart.yaml (in the files' key) and its
        # folder's name give
        named = render.name if render.name is not None else ["chart", os.path.basename(plan.folder)]
        # the API versions (the bundled CRDs' and the project's: a few thousand bytes, most often the
        # same list for every render of the run) by their hash, worked out once per list
        key = "helm-" + digest_text(kind, engine, json.dumps({**spec, "name": named, "api_versions": _listed(
            spec["api_versions"]), "values": [(n, digest(t.encode())) for n, t in texts]}),
                                     *files.key()) if cache is not None and cache.folder is not None else None
        out.keys.append(key)
        specs.append((index, spec))
    if place is not None and len(specs) == len(plan.renders) and all(key is not None for key in out.keys):
        # every render keyed: the chart's record (its renders and their template maps) in one read
        out.record = ChartRecord(cache, ChartRecord.key_of(plan, place, out.keys), len(plan.renders))  # type: ignore[arg-type]
        outputs = out.record.load()
        if outputs is not None:
            out.results = [(output, None) for output in outputs]
            return out
    for index, spec in specs:
        key = out.keys[index]
        found = from_cache(key, cache.get(key)) if key is not None else None
        if found is not None:
            out.results[index] = (found, None)
            continue
        if spec["name"] is None:
            if chart is None:  # once for the chart's renders
                chart = chart_name(plan.folder, files)
            spec["name"] = chart
        out.specs.append(spec)
        out.todo.append(index)
    return out


_LISTED: dict[int, tuple[list[str], str]] = {}


def _listed(items: list[str]) -> str:
    """The hash of a list of strings, worked out once for the same list object."""
    found = _LISTED.get(id(items))
    if found is None or found[0] is not items:
        from mlops_lint.digest import digest_text

        if len(_LISTED) > 256:
            _LISTED.clear()
        found = _LISTED[id(items)] = (items, digest_text(json.dumps(items)))
    return found[1]


def finish(prepared: Prepared, answers: list[dict[str, Any]], cache: Any) -> list[tuple[bytes | None, str | None]]:
    """The renderer's answers put in their places (and in the cache)."""
    from mlops_lint.sources.text import MAX_FILE_BYTES

    results = prepared.results
    for index, answer in zip(prepared.todo, answers):
        if "error" in answer:
            results[index] = (None, answer["error"])
            continue
        output = answer["output"] if "output" in answer else assemble(answer["manifests"])
        if len(output) > MAX_FILE_BYTES:
            results[index] = (None, f"the rendered output is over {MAX_FILE_BYTES >> 20} MB: not linted")
            continue
        results[index] = (output, None)
        if prepared.keys[index] is not None:
            cache.put(prepared.keys[index], for_cache(prepared.keys[index], output))
    return results


def render_plans(plans: list[Plan], renderer: tuple[str, str | None], timeout: float, cache: Any,
                 jobs: int = 1) -> list[list[tuple[bytes | None, str | None]]]:
    """Each chart's renders (output, or the error's message), from the cache where an equal
    render was kept; the SDK renders all the others in one worker, a ``helm`` binary one
    process per render (``jobs`` at a time)."""
    return [p.results for p in render_prepared(plans, renderer, timeout, cache, jobs)]


def render_prepared(plans: list[Plan], renderer: tuple[str, str | None], timeout: float, cache: Any,
                    jobs: int = 1, known: dict[str, tuple[bytes, str]] | None = None,
                    place: str | None = None) -> list[Prepared]:
    """:func:`render_plans`, each chart's :class:`Prepared` (its files, render keys and results);
    ``known``: the files the run read already, ``place``: the working folder, whose charts'
    records are read (:func:`prepare`)."""
    from mlops_lint.sources import helm_sdk
    from mlops_lint.sources.text import MAX_FILE_BYTES

    prepared = [prepare(plan, renderer, cache, known, place) for plan in plans]
    waiting = [p for p in prepared if p.todo]
    if renderer[0] == "sdk":
        answers = helm_sdk.render_many([(p.files, p.specs) for p in waiting], timeout, MAX_FILE_BYTES) if waiting else []
    else:
        from concurrent.futures import ThreadPoolExecutor

        def binary(p: Prepared) -> list[dict[str, Any]]:
            links = [name for name, why in p.files.left_out if why == "a link"]
            if links:  # `helm template` reads a chart folder's links, wherever they point
                return [{"error": f"not rendered by `helm template`, which would follow its links ({', '.join(links[:3])})"}
                        for _ in p.todo]
            if _overlaid(p):  # a --fix pass changed a file of it: `helm template` of the folder would not see it
                return _render_copy(p, renderer[1] or "helm", timeout)
            return [_render_binary(p.plan.folder, renderer[1] or "helm", spec, p.plan.renders[index], timeout)
                    for index, spec in zip(p.todo, p.specs)]

        with ThreadPoolExecutor(max_workers=max(1, min(jobs, len(waiting) or 1))) as pool:
            answers = list(pool.map(binary, waiting))
    for p, answer in zip(waiting, answers):
        finish(p, answer, cache)
    return prepared


def render_plan(plan: Plan, renderer: tuple[str, str | None], timeout: float,
                cache: Any) -> list[tuple[bytes | None, str | None]]:
    """One chart's renders (see :func:`render_plans`)."""
    return render_plans([plan], renderer, timeout, cache)[0]


def _overlaid(p: Prepared) -> bool:
    """Whether a ``--fix`` pass holds changed bytes of a chart's file or of a values file of its
    renders (:data:`linter.sources.files.OVERLAY`, written when the run ends)."""
    from mlops_lint.sources.files import OVERLAY

    if not OVERLAY:
        return False
    paths = [os.path.join(p.plan.folder, *relative.split("/")) for relative, _ in p.files.files]
    paths.extend(path for index in p.todo for _, path in p.plan.renders[index].values)
    return any(os.path.realpath(path) in OVERLAY for path in paths)


def _render_copy(p: Prepared, program: str, timeout: float) -> list[dict[str, Any]]:
    """``helm template`` of a temporary copy of the chart as its render's key was worked out on:
    its files as the fixes so far left them (:class:`linter.sources.helm_sdk.ChartFiles`, which
    reads through the fix overlay) and each values file's text, so the next pass of ``--fix``
    lints what the fix gives, and the render is cached under the key of what it rendered."""
    import shutil
    import tempfile

    top = os.path.realpath(tempfile.mkdtemp(prefix="mlops-lint-helm-"))  # 0700, ours alone
    chart = os.path.join(top, os.path.basename(p.plan.folder.rstrip(os.sep)) or "chart")
    try:
        for relative, data in p.files.files:
            parts = relative.split("/")
            if any(part in ("", ".", "..") for part in parts):  # a chart's own names never are
                raise OSError(f"a chart file named {relative!r} cannot be copied")
            path = os.path.join(chart, *parts)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            _write_new(path, data)
        answers = []
        for index, spec in zip(p.todo, p.specs):
            values = []
            for number, (name, text) in enumerate(spec["values"]):
                path = os.path.join(top, f"values-{index}-{number}.yaml")
                _write_new(path, text.encode("utf-8"))
                values.append((name, path))
            answer = _render_binary(chart, program, spec, replace(p.plan.renders[index], values=values), timeout)
            if "error" in answer:  # the chart as the user knows it, not the copy
                answer["error"] = answer["error"].replace(chart, p.plan.folder)
            answers.append(answer)
        return answers
    except OSError as exc:
        return [{"error": f"could not copy the chart to render it: {exc.strerror or exc}"} for _ in p.todo]
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _write_new(path: str, data: bytes) -> None:
    """A new file in :func:`_render_copy`'s own temporary folder: created, never opened through a
    link or over a file that exists (O_EXCL, O_NOFOLLOW)."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)


def _render_binary(folder: str, program: str, spec: dict, render: Render, timeout: float) -> dict[str, Any]:
    """``helm template NAME CHART`` by the ``helm`` on PATH, with the render's settings."""
    import subprocess

    from mlops_lint.programs import MAX_OUTPUT, build_environment

    arguments = [program, "template", spec["name"], folder, "--namespace", render.namespace, "--skip-tests"]
    for _, path in render.values:
        arguments += ["--values", path]
    for expression in render.set:
        arguments += ["--set", expression]
    if render.kube_version:
        arguments += ["--kube-version", render.kube_version]
    for api in spec.get("api_versions") or ():
        arguments += ["--api-versions", api]
    try:
        done = subprocess.run(arguments, cwd=folder, env=build_environment(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"helm template did not finish in {timeout:g} s"}
    except OSError as exc:
        return {"error": f"could not run {program}: {exc.strerror or exc}"}
    if done.returncode != 0:
        text = " ".join(done.stderr.decode("utf-8", "replace").split()) or "no message"
        return {"error": text if len(text) <= 600 else text[:599] + "…"}
    if len(done.stdout) > MAX_OUTPUT:
        return {"error": f"the rendered output is over {MAX_OUTPUT >> 20} MB: not linted"}
    return {"output": done.stdout}
