"""Fixes of node pool attributes written in Terraform, Bicep and ARM templates (the AKS rules).

A fix here edits one attribute of one pool, and only where the file writes what it changes:

* a value is replaced only when the attribute is a literal in the file (``mode = "System"``,
  ``minCount: 0``): a value that comes from a variable, a parameter, a local or an expression
  (``var.pool_mode``, ``poolMode``, ``each.value.mode``) may be shared by other pools or given at
  deployment time, so it is never fixed (:func:`not_literal` says why, for the finding's hint);
* a missing attribute is added as one new line beside an attribute the pool writes
  (:class:`linter.fix.InsertLine`: below it in Terraform and Bicep, above it in ARM's JSON, where
  a line added before a key needs no comma juggling), in the file's syntax (:func:`attribute`);
* a key is added to a literal map before its first pair (:func:`add_to_map`).

Every byte outside the edit stays as it is: the resolver copies the neighbour's indentation and
inserts the line at the end of the neighbour's line, before its line break.

A ``node-pools`` entry of the config (``.mlops-lint.yaml``, when the run lints it) is YAML: its
fixes are :class:`linter.fix.SetKey` on the entry's mapping (:func:`config_set`), which the YAML
resolver writes in the entry's own style (block or flow).
"""

from __future__ import annotations

import json
import re
from typing import Any

from mlops_lint.fix import InsertLine, Replace, SetKey
from mlops_lint.model.position import Span

NAMES = {  # a pool setting's name in each source
    "terraform": {"taints": "node_taints", "labels": "node_labels", "mode": "mode", "min_count": "min_count",
                  "max_count": "max_count", "autoscaler": "auto_scaling_enabled"},
    "bicep": {"taints": "nodeTaints", "labels": "nodeLabels", "mode": "mode", "min_count": "minCount",
              "max_count": "maxCount", "autoscaler": "enableAutoScaling"},
    "arm": {"taints": "nodeTaints", "labels": "nodeLabels", "mode": "mode", "min_count": "minCount",
            "max_count": "maxCount", "autoscaler": "enableAutoScaling"},
}
IAC = frozenset(NAMES)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HCL_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\Z")


def is_literal(origin: Any) -> bool:
    """The attribute is written as a literal (a string, number, ``true``/``false``) in the file."""
    written = getattr(origin, "written", None)
    return isinstance(written, tuple) and len(written) == 2 and written[0] == "lit"


def is_empty_list(origin: Any) -> bool:
    """The attribute is written as ``[]``."""
    written = getattr(origin, "written", None)
    return isinstance(written, tuple) and len(written) == 2 and written[0] == "tuple" and written[1] == ()


def _all_literal(written: Any, depth: int = 0) -> bool:
    if not isinstance(written, tuple) or not written or depth > 8:
        return False
    if written[0] == "lit":
        return True
    if written[0] == "tuple":
        return all(_all_literal(item, depth + 1) for item in written[1])
    if written[0] == "object":
        return all(_all_literal(k, depth + 1) and _all_literal(v, depth + 1) for k, v in written[1])
    return False


def not_literal(source: str, origin: Any) -> str:
    """Why a setting is not fixed, for the finding's hint: `` (written as `var.pool_mode`, not a
    literal: --fix leaves it to you)`` ('' when the attribute is written as literals, is not
    written, or the source is no IaC file)."""
    if source not in IAC or origin is None or _all_literal(getattr(origin, "written", None)):
        return ""
    written = getattr(origin, "written", None)
    shown = ".".join(written[1]) if isinstance(written, tuple) and written and written[0] == "ref" else "an expression"
    return f" (written as `{shown}`, not a literal: --fix leaves it to you)"


def string(source: str, value: str) -> str:
    """``value`` as a string literal of ``source``."""
    if source == "bicep":
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'").replace("${", "\\${") + "'"
    text = json.dumps(value, ensure_ascii=False)
    return text.replace("${", "$${").replace("%{", "%%{") if source == "terraform" else text


def scalar(source: str, value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return string(source, str(value))


def _key(source: str, key: str) -> str:
    if source == "terraform":
        return key if _HCL_IDENTIFIER.match(key) else string(source, key)
    if source == "bicep":
        return key if _IDENTIFIER.match(key) else string(source, key)
    return string(source, key)


def value_text(source: str, value: Any) -> str:
    """A value (a scalar, a list of scalars, a dict of them) in ``source``'s syntax, on one line:
    ``["a"]`` / ``['a']``, ``{ k = "v" }`` / ``{ k: 'v' }`` / ``{"k": "v"}``."""
    if isinstance(value, list):
        return "[" + ", ".join(value_text(source, v) for v in value) + "]"
    if isinstance(value, dict):
        sep = " = " if source == "terraform" else ": "
        pairs = ", ".join(f"{_key(source, k)}{sep}{value_text(source, v)}" for k, v in value.items())
        return "{" + pairs + "}" if source == "arm" else "{ " + pairs + " }"
    return scalar(source, value)


def attribute(source: str, name: str, value: Any) -> str:
    """``node_taints = ["sku=gpu:NoSchedule"]``, ``nodeTaints: ['sku=gpu:NoSchedule']``,
    ``"nodeTaints": ["sku=gpu:NoSchedule"],`` (ARM's line goes above a key: it ends with a comma)."""
    if source == "terraform":
        return f"{name} = {value_text(source, value)}"
    if source == "bicep":
        return f"{name}: {value_text(source, value)}"
    return f"{string(source, name)}: {value_text(source, value)},"


def add_beside(source: str, neighbour: Any, name: str, value: Any) -> InsertLine | None:
    """The attribute ``name`` added on a new line beside the attribute ``neighbour`` (an Origin
    the pool writes: its key's span to its value's end)."""
    if source not in IAC or neighbour is None:
        return None
    end = neighbour.value_span or neighbour.span
    anchor = type(neighbour.span)(neighbour.span.line, neighbour.span.col, end.end_line, end.end_col)
    return InsertLine(anchor, attribute(source, name, value), after=source != "arm",
                      align="=" if source == "terraform" else "")


def pair_text(source: str, key: str, value: Any) -> str:
    """One ``key = value`` / ``key: value`` / ``"key": value`` pair of a map, in ``source``'s syntax."""
    return f"{_key(source, key)}{' = ' if source == 'terraform' else ': '}{value_text(source, value)}"


def add_to_map(source: str, origin: Any, pairs: dict) -> Any:
    """``pairs`` added to the literal map written at ``origin`` (before its first pair, so no
    comma after a last pair is needed): filled when it is ``{}``; right after the ``{`` of a map
    written on one line (`` k = "v",``); on a line of its own above the first key of a Bicep or
    ARM map written over several lines. None for anything else (a map from a variable, a
    Terraform map over several lines, whose keys' positions the reader does not keep)."""
    written, span = getattr(origin, "written", None), getattr(origin, "value_span", None)
    if source not in IAC or span is None or not _all_literal(written) or written[0] != "object" or not pairs:
        return None
    if not written[1]:
        return Replace(span, value_text(source, pairs))
    if span.line == span.end_line:
        text = " " + ", ".join(pair_text(source, k, v) for k, v in pairs.items()) + ","
        return Replace(Span(span.line, span.col + 1, span.line, span.col + 1), text)
    if source == "terraform" or len(written) < 3 or not written[2]:
        return None
    first = written[2][0][0]
    line = ", ".join(pair_text(source, k, v) for k, v in pairs.items()) + ("," if source == "arm" else "")
    return InsertLine(first, line, after=False)


def replace_value(source: str, origin: Any, value: Any) -> Replace | None:
    """The literal value of the attribute at ``origin`` replaced by ``value`` (None when it is
    not a literal, or an empty list when a list is asked for)."""
    if source not in IAC or origin is None or origin.value_span is None:
        return None
    if not (is_literal(origin) or isinstance(value, list) and is_empty_list(origin)):
        return None
    return Replace(origin.value_span, value_text(source, value))


def config_set(pool: Any, key: str, value: Any) -> SetKey | None:
    """``key: value`` set on the config ``node-pools`` entry that defines ``pool`` (None when the
    pool is no placed config entry)."""
    entry = getattr(pool, "entry", None)
    if getattr(pool, "source", None) != "config" or entry is None:
        return None
    return SetKey(entry, (key,), value)
