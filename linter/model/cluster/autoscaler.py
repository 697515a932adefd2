"""The cluster autoscaler profile (``--cluster-autoscaler-profile``): its keys, their values'
types, and the entries of one option (aks-platform.md section B)."""

from __future__ import annotations

import json
import re
from fractions import Fraction
from functools import lru_cache
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterator

from msgspec import Struct

from mlops_lint.model.position import Span
from mlops_lint.model.unknown import UNKNOWN, Value, resolved

if TYPE_CHECKING:  # the script model is read only when a script exists (see linter.model.unknown)
    from mlops_lint.model.azcli import AzFlag, FlagValue


@lru_cache(maxsize=1)
def autoscaler_profile_keys() -> dict[str, dict[str, Any]]:
    """``--cluster-autoscaler-profile`` keys: {key: {type, default, ...}} (aks-platform.md section B)."""
    text = resources.files("mlops_lint").joinpath("data/autoscaler_profile.json").read_text(encoding="utf-8")
    return json.loads(text)["keys"]


_DURATION = re.compile(r"(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+")


def parse_duration(text: str) -> Fraction | None:
    """A Go duration (``10s``, ``10m``, ``1h30m``, ``0``) in seconds; None when unparsable.

    The cluster autoscaler reads these flags with Go's ``time.ParseDuration``: a unit is required
    on every number except a lone ``0``. Negative durations are rejected.
    """
    text = text.strip()
    if text == "0":
        return Fraction(0)
    if not _DURATION.fullmatch(text):
        return None
    units = {"ns": Fraction(1, 10**9), "us": Fraction(1, 10**6), "µs": Fraction(1, 10**6),
             "ms": Fraction(1, 1000), "s": 1, "m": 60, "h": 3600}
    total = Fraction(0)
    for number, unit in re.findall(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text):
        total += Fraction(number) * units[unit]
    return total


def profile_value_problem(key: str, value: str) -> str | None:
    """Why ``value`` is not valid for autoscaler-profile ``key`` (None when it is)."""
    spec = autoscaler_profile_keys().get(key)
    if spec is None:
        return None
    kind = spec["type"]
    text = value.strip()
    if kind == "duration":
        seconds = parse_duration(text)
        if seconds is None:
            hint = f" (a number needs a unit: `{text}s`)" if re.fullmatch(r"\d+", text) else ""
            return f"`{text}` is not a duration{hint}; use a Go duration such as `{spec['default']}`"
        return None
    if kind == "integer":
        if not re.fullmatch(r"\d+", text):
            unitless = re.fullmatch(r"(\d+)s", text)
            hint = f" (write `{unitless.group(1)}`, without a unit)" if unitless and key.endswith("-sec") else ""
            return f"`{text}` is not a whole number{hint}"
        number = int(text)
        if "min" in spec and number < spec["min"] or "max" in spec and number > spec["max"]:
            return f"`{text}` is outside {spec.get('min', 0)}..{spec.get('max', '')}".rstrip(".")
        return None
    if kind == "float":
        try:
            number = float(text)
        except ValueError:
            return f"`{text}` is not a number"
        if number != number or "min" in spec and number < spec["min"] or "max" in spec and number > spec["max"]:
            return f"`{text}` is outside {spec['min']}..{spec['max']}"
        return None
    if kind == "bool":
        return None if text.lower() in ("true", "false") else f"`{text}` is not `true` or `false`"
    if kind == "enum":
        return None if text.lower() in spec["values"] else f"`{text}` is not one of {', '.join(spec['values'])}"
    return None


class ProfileEntry(Struct, frozen=True):
    """One ``key=value`` of a ``--cluster-autoscaler-profile`` (value UNKNOWN when unresolved)."""

    key: str | None  # None: the text is not key=value (or its key is unknown to the reader)
    value: Value
    text: str  # the entry as written after expansion
    span: Span  # the entry (narrowed to it inside a comma-separated token when possible)
    flag_value: FlagValue


def profile_entries(flag: AzFlag) -> Iterator[ProfileEntry]:
    """The entries of one ``--cluster-autoscaler-profile`` option: each value token may itself be
    a comma-separated list (as the CLI splits it). ``""`` (reset to defaults) yields nothing."""
    for token in flag.values:
        value = token.value
        if value is UNKNOWN:
            yield ProfileEntry(None, UNKNOWN, token.raw, token.span, token)
            continue
        assert isinstance(value, str)
        offset = _literal_offset(token)
        position = 0
        for part in value.split(","):
            start = position
            position += len(part) + 1
            text = part.strip()
            if not text:
                continue
            lead = len(part) - len(part.lstrip())
            span = token.span
            if offset is not None:
                col = token.span.col + offset + start + lead
                span = Span(token.span.line, col, token.span.line, col + len(text))
            key, eq, rest = text.partition("=")
            value = resolved(rest.strip()) if eq else UNKNOWN  # key=<placeholder>: not determined
            yield ProfileEntry(key.strip() if eq else None, value, text, span, token)


def _literal_offset(token: FlagValue) -> int | None:
    """Columns from the token's start to its value's text, when the raw text is the value itself
    (optionally quoted) on one line; None otherwise (the whole token's span is used)."""
    raw, value = token.raw, token.value
    if token.span.line != token.span.end_line or not isinstance(value, str):
        return None
    if raw == value:
        return 0
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"" and raw[1:-1] == value:
        return 1
    return None
