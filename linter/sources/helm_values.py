"""``--fix`` of a finding in a rendered Helm template, made on the chart's ``values.yaml``.

A template is never edited (its text is Go template code, and one line renders many objects). A
finding whose rule's fix replaces one scalar of the render (``value: INFO`` -> ``WARN``) is
fixed in ``values.yaml`` only when that literal is the one source of the rendered scalar, which
is checked, not guessed; every condition below holds, else the finding has no fix and its
message says why (``no values.yaml fix: …``; a rule's fix that adds something elsewhere, such as
a toleration, is no fix of the inserted value: dropped, as every template fix, without a word):

- the rule's fix is one replacement of a whole plain scalar that is a key's value on its
  rendered line (``key: value``), and the new text is a plain scalar Helm prints as written
  (``true``/``false``, an integer of at most six digits, a word that YAML 1.1 reads as a string);
- the template line (found by :class:`linter.sources.helm.HelmMapper`) is that key with nothing
  but one value as its value: ``key: {{ .Values.a.b }}`` (``{{-``/``-}}`` and ``$.Values`` too);
- the template is the chart's own (not a subchart's), and the value is not ``global`` nor a
  subchart's;
- no file of the chart (outside ``charts/``) names ``.Values.a.b`` elsewhere, nor a part of it
  (``.Values.a``, ``.Values`` whole, ``index .Values …``): changing it changes that line only;
- ``values.yaml`` sets ``a.b`` once, as a plain scalar (no anchor, alias, tag, quotes, merge
  key on the way) whose text is the rendered text;
- no other values source of any render the finding comes from (the config's values files, the
  ``ci/*-values.yaml`` file, ``set:``) sets ``a.b`` or a part of it.

The edit replaces that scalar's text and nothing else; ``--fix`` then checks it as any fix (the
file's data changes only at that path, :mod:`linter.fix.invariant`) and renders the chart again.
"""

from __future__ import annotations

import os
import re
from typing import Any

from mlops_lint.fix import Edit, Fix
from mlops_lint.model.position import Span

_TEMPLATE_LINE = re.compile(r"^\s*(?:-\s+)?(?P<key>[A-Za-z0-9_./-]+):[ \t]+\{\{-?[ \t]*\$?\.Values(?P<path>(?:\.[A-Za-z_]\w*)+)"
                            r"[ \t]*-?\}\}[ \t]*(?:#.*)?$")
_RENDERED_LINE = re.compile(r"^(?P<lead>\s*(?:-\s+)?(?P<key>[A-Za-z0-9_./-]+):[ \t]+)(?P<value>[^\s#][^#]*?)[ \t]*$")
_REFERENCE = re.compile(r"\.Values((?:\.[A-Za-z_]\w*)*)")
_PLAIN_NEW = re.compile(r"true|false|-?(?:0|[1-9][0-9]{0,5})|[A-Za-z_][A-Za-z0-9_./-]*")
# words YAML 1.1 (Helm's values reader) does not read as strings
_YAML11 = re.compile(r"(?i:y|n|yes|no|on|off|true|false|null|~|\.nan|\.inf)")


class NoFix(Exception):
    """Why a finding has no values.yaml fix (a phrase for its message)."""


def values_fix(result: Any, found: tuple[str, Span, tuple[str, ...]], mappers: list[Any]) -> Fix | None:
    """The finding's fix moved to ``values.yaml`` (see the module's conditions); raises
    :class:`NoFix` with the reason when it cannot be. None (nothing to say) when the rule's fix
    does not replace text on the finding's own rendered line: it adds something elsewhere (a
    toleration, a request), so it is no fix of the value the line inserts."""
    mapper = mappers[0]
    fix = result.autofix
    if fix is None or not any(edit.span.line == result.span.line and edit.span[:2] != edit.span[2:]
                              for edit in fix.edits):
        return None
    if len(fix.edits) != 1 or fix.edits[0].path != result.path:
        raise NoFix("the rule's fix is more than one value")
    edit = fix.edits[0]
    span = edit.span
    if span.line != span.end_line or span.col == span.end_col or not 0 < span.line <= len(mapper.lines):
        raise NoFix("the rule's fix is more than one value")
    rendered = _RENDERED_LINE.match(mapper.lines[span.line - 1])
    if (rendered is None or span.col != len(rendered.group("lead")) + 1
            or span.end_col != span.col + len(rendered.group("value"))):
        raise NoFix("the rule's fix is more than one value")
    old, new = rendered.group("value"), edit.text
    chart = mapper.chart
    if chart is None or mapper.display is None:
        raise NoFix("the chart's folder is not known")
    lines = mapper.template_lines(found[0])
    absolute = mapper.template_file(found[0])
    if not lines or absolute is None or not 0 < found[1].line <= len(lines):
        raise NoFix("its template line could not be read")
    template = _TEMPLATE_LINE.match(lines[found[1].line - 1])
    if template is None or template.group("key") != rendered.group("key"):
        raise NoFix("the template line does more than insert one value")
    if not _PLAIN_NEW.fullmatch(new) or (_YAML11.fullmatch(new) and new not in ("true", "false")):
        raise NoFix(f"the new value {new!r} is not a plain scalar Helm prints as written")
    path = tuple(template.group("path")[1:].split("."))
    dotted = ".Values." + ".".join(path)
    relative = os.path.relpath(absolute, chart).replace(os.sep, "/")
    if not relative.startswith("templates/"):
        raise NoFix(f"{dotted} is a subchart's value")
    subcharts = _subcharts(chart)
    if path[0] == "global" or path[0] in subcharts:
        raise NoFix(f"{dotted} is shared with subcharts")
    uses = _references(chart)
    if uses.get(path, 0) != 1 or any(path[:length] in uses for length in range(len(path))):
        raise NoFix(f"{dotted} is used elsewhere in the chart")
    for other in mappers:
        render = getattr(other, "render", None)
        if render is None:
            raise NoFix("the render's values are not known")
        for name, where in render.values:
            if _sets(where, path):
                raise NoFix(f"{name} sets {dotted} too")
        for expression in render.set:
            if _set_names(expression, path):
                raise NoFix(f"helm set {expression!r} sets {dotted} too")
    values = os.path.join(chart, "values.yaml")
    text = _text(values)
    if text is None:
        raise NoFix("values.yaml could not be read")
    place = _literal(text, path, old)
    if place is None:
        raise NoFix(f"values.yaml does not set {dotted} as the plain value {old}")
    shown = f"{mapper.display}/values.yaml" if mapper.display not in (".", "") else "values.yaml"
    return Fix(f"{fix.title}: set {dotted} to `{new}` in values.yaml", (Edit(shown, place, new),), fix.safe)


def _text(path: str) -> str | None:
    from mlops_lint.sources.files import Unreadable, read_source

    if os.path.islink(path):
        return None
    try:
        data = read_source(path)
    except Unreadable:
        return None
    if data.startswith(b"\xef\xbb\xbf"):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _subcharts(chart: str) -> set[str]:
    """The names the chart's subcharts go by (folders and archives in charts/, dependencies and
    their aliases in Chart.yaml; a Chart.yaml that cannot be read gives none of its own)."""
    import yaml

    from mlops_lint.sources.helm_sdk import read_no_link

    names = set()
    folder = os.path.join(chart, "charts")
    if os.path.isdir(folder) and not os.path.islink(folder):
        for entry in os.listdir(folder):
            names.add(entry[:-4].rsplit("-", 1)[0] if entry.endswith(".tgz") else entry)
    from mlops_lint.sources import yaml_k8s

    data, _ = read_no_link(os.path.join(chart, "Chart.yaml"), 1 << 20)
    text = (data or b"").decode("utf-8", "replace")
    try:
        metadata = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) \
            if yaml_k8s.check_bounds(text) is None else None
    except (yaml.YAMLError, RecursionError):
        metadata = None
    for dependency in (metadata.get("dependencies") if isinstance(metadata, dict) else None) or []:
        if isinstance(dependency, dict):
            names.update(str(dependency[key]) for key in ("name", "alias") if dependency.get(key))
    return names


USES: dict[str, dict[tuple[str, ...], int]] = {}


def _references(chart: str) -> dict[tuple[str, ...], int]:
    """How often each ``.Values`` path is named in the chart's files outside ``charts/`` (the
    files Helm is given, read as for the render; once per chart and run: :func:`linter.sources.helm.remap`
    empties :data:`USES` first)."""
    found = USES.get(chart)
    if found is None:
        from mlops_lint.sources.helm_sdk import ChartFiles

        found = {}
        for name, data in ChartFiles(chart).files:
            if name.startswith("charts/"):
                continue
            for match in _REFERENCE.finditer(data.decode("utf-8", "replace")):
                key = tuple(match.group(1)[1:].split(".")) if match.group(1) else ()
                found[key] = found.get(key, 0) + 1
        USES[chart] = found
    return found


def _sets(path: str, wanted: tuple[str, ...]) -> bool:
    """Whether a values file sets ``wanted`` or a part of it (a file that cannot be read: yes)."""
    import yaml

    from mlops_lint.sources import yaml_k8s

    text = _text(path)
    if text is None or yaml_k8s.check_bounds(text) is not None:
        return True
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return True
    for part in wanted:
        if not isinstance(data, dict):
            return data is not None
        if part not in data:
            return False
        data = data[part]
    return True


def _set_names(expression: str, wanted: tuple[str, ...]) -> bool:
    """Whether a ``--set`` expression names ``wanted`` or a part of it (anything it cannot tell: yes)."""
    for assignment in expression.split(","):
        name = assignment.split("=", 1)[0].strip()
        if not re.fullmatch(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*", name):
            return True
        parts = tuple(name.split("."))
        if parts[:len(wanted)] == wanted[:len(parts)]:
            return True
    return False


def _literal(text: str, path: tuple[str, ...], old: str) -> Span | None:
    """The span of ``values.yaml``'s plain scalar at ``path`` whose text is ``old`` (None: not so)."""
    import yaml

    from mlops_lint.sources import yaml_k8s

    if yaml_k8s.check_bounds(text) is not None:
        return None
    try:
        nodes = list(yaml.compose_all(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))
    except yaml.YAMLError:
        return None
    if len(nodes) != 1:
        return None
    node = nodes[0]
    for part in path:
        if not isinstance(node, yaml.MappingNode):
            return None
        matches = [value for key, value in node.value
                   if isinstance(key, yaml.ScalarNode) and key.value == part and not key.style]
        if len(matches) != 1 or any(key.tag == "tag:yaml.org,2002:merge" or key.value == "<<" for key, _ in node.value):
            return None
        node = matches[0]
    if not isinstance(node, yaml.ScalarNode) or node.style:  # plain: None, or '' from libyaml
        return None
    start, end = node.start_mark, node.end_mark
    if start.line != end.line or text[start.index:end.index] != old:
        return None
    return Span(start.line + 1, start.column + 1, end.line + 1, end.column + 1)
