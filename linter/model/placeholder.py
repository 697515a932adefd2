"""The one placeholder test: which values stand for a value someone fills in later.

Manifests, Dockerfiles and scripts copied from documentation and templates carry values that are
not values yet: ``$IMAGE``, ``{{ .Values.image }}``, ``<your-registry>``, ``REPLACE_ME``. A rule that
needs a value treats such a value as *unknown* and stays quiet; a rule that flags the presence of
something (a secret in an env var, a mutable tag) does not count a placeholder as present. Every
rule, the cluster model and SCH002 ask the two questions here, so that they agree.

Two questions, answered for a *value* (an image reference, an object name, a quantity, a VM size,
a URL, an option's argument) and never for free text or a whole shell command line, where ``$HOME``
or ``a<b`` are ordinary text (a command is split into words first; each word's value may then be
asked):

:func:`is_placeholder` -- the whole value is a stand-in, nothing of its final text is known:

* a substitution filling the whole value: ``$VAR``, ``${VAR}``, ``${VAR:-default}``, ``$(VAR)``
  (Kubernetes' env expansion, ``$(cmd)`` in shell), ``{{ … }}`` (Helm, Jinja, Go templates);
* ``<anything>`` (``<your-image>``, ``<digest>``, ``<pool name>``);
* ``[A|B]`` alternatives (``[gloo|nccl]``, ``[true|false]``);
* an ellipsis: ``...`` (three dots or more) or ``…``;
* a value that begins with a marker word, in any case: ``REPLACE_ME`` / ``replace-me`` / ``REPLACE_WITH_…``, ``CHANGEME`` /
  ``change-me``, ``fixme``; upper-case ``TODO`` and ``TBD``, alone or as the first word (``TODO: set
  me``); lower-case ``todo`` and ``todo-app`` are real names (demo apps) and are not placeholders;
* a value that begins ``your-…`` / ``your_…`` / ``YOUR_…`` / ``Your …`` (``your-acr.azurecr.io/x``);
* an all-capitals name (letters, digits, ``_``, ``-``, spaces) holding ``PLACEHOLDER``, ``FILLED``,
  ``FILL_IN``/``FILL_ME``, ``REPLACE``, ``CHANGE_ME``/``CHANGEME``, ``SET_ME``/``SETME``,
  ``YOUR``, ``TODO`` or ``TBD``: ``IMG_PLACEHOLDER``, ``FILLED_BY_THE_VALIDATOR``, ``FILLED BY THE OPERATOR``;
* with ``arg_default=True`` only (the default of a Dockerfile ``ARG``): ``undefined`` and
  ``unknown`` in any case, which say "set me with ``--build-arg``" rather than naming a value. An
  empty default (``ARG SUFFIX=``) is a value: ``FROM python:3.12${SUFFIX}`` is ``python:3.12``.

:func:`has_placeholder` -- some part of the value is a stand-in, so its final text is unknown
(``myacr.azurecr.io/trainer:${TAG}``, ``<registry>/trainer:1.0``, ``your-acr.azurecr.io/x``,
``nvcr.io/nvidia/pytorch@sha256:…``): a substitution (``$`` followed by a name, ``{`` or ``(``;
``{{``), an ``<…>`` part that starts with a letter, ``_`` or an ellipsis, an ``[A|B]`` part, an
ellipsis, or a part between ``/ : @ = , ;`` separators, dots or blanks that is a whole placeholder
by the list above. Every whole placeholder has one. ``a<b`` (no closing ``>``), ``$5``, ``../x``
and ``todo-list:1.0`` have none.

Both take any object and answer False for what is not a string (a number is a value).
"""

from __future__ import annotations

import re
from functools import lru_cache

# ``$NAME``, ``${…}``, ``$(…)``, ``{{ … }}``: text filled in by a shell, Kubernetes or a template engine.
_SUBSTITUTION = r"\$[A-Za-z_][A-Za-z0-9_]*|\$\{[^{}\n]*\}|\$\([^()\n]*\)|\{\{.*?\}\}"
_WHOLE_SUBSTITUTION = re.compile(rf"(?:{_SUBSTITUTION})", re.S)
_ANY_SUBSTITUTION = re.compile(r"\$[A-Za-z_{(]|\{\{")
_ANGLE_WHOLE = re.compile(r"<[^<>\n]+>")
_ANGLE_PART = re.compile(r"<[A-Za-z_.…][^<>\n]*>")
_ALTERNATIVES = r"\[[^\[\]|\n]+(?:\|[^\[\]|\n]+)+\]"
_ALTERNATIVES_WHOLE = re.compile(_ALTERNATIVES)
_ALTERNATIVES_PART = re.compile(_ALTERNATIVES)
_ELLIPSIS_WHOLE = re.compile(r"\.{3,}|…")
_MARKER_WORD = re.compile(
    r"(?i:replace[-_ ]?(?:me|with|this)\b.*|change[-_ ]?me\b.*|fixme\b.*)"
    r"|(?:TODO|TBD)(?:[^-_.a-zA-Z0-9].*)?",
    re.S,
)
_YOUR = re.compile(r"(?:[Yy]our[-_]|YOUR[-_]|Your )\S.*", re.S)
_CAPITALS = re.compile(r"[A-Z0-9_ -]*[A-Z][A-Z0-9_ -]*")
_CAPITAL_MARKERS = re.compile(r"PLACEHOLDER|FILLED|FILL_IN|FILL_ME|REPLACE|CHANGE_?ME|SET_?ME|YOUR|TODO|TBD")
_ARG_DEFAULTS = frozenset({"undefined", "unknown"})
# Where a value is cut into parts for :func:`has_placeholder`.
_PARTS = re.compile(r"[/:@=,;.\s]+")


def _whole(text: str) -> bool:
    if (_WHOLE_SUBSTITUTION.fullmatch(text) or _ANGLE_WHOLE.fullmatch(text) or _ALTERNATIVES_WHOLE.fullmatch(text)
            or _ELLIPSIS_WHOLE.fullmatch(text) or _MARKER_WORD.fullmatch(text) or _YOUR.fullmatch(text)):
        return True
    return bool(_CAPITALS.fullmatch(text) and _CAPITAL_MARKERS.search(text))


def is_placeholder(value: object, *, arg_default: bool = False) -> bool:
    """Whether the whole value stands for one filled in later (see the module's list); with
    ``arg_default``, also ``undefined``/``unknown`` (a Dockerfile ARG's default)."""
    if not isinstance(value, str):
        return False
    text = value.strip()
    if arg_default and text.lower() in _ARG_DEFAULTS:
        return True
    return bool(text) and _whole(text)


def has_placeholder(value: object) -> bool:
    """Whether some part of the value is a stand-in, so that its final text is unknown."""
    if not isinstance(value, str):
        return False
    if len(value) <= _CACHED_CHARS:  # names, images, env values: the same few, asked by many rules
        return _has_placeholder_cached(value)
    return _has_placeholder(value)


_CACHED_CHARS = 256  # longer values (scripts, embedded files) are tested each time: never kept


def _has_placeholder(value: str) -> bool:
    if (_ANY_SUBSTITUTION.search(value) or _ANGLE_PART.search(value) or _ALTERNATIVES_PART.search(value)
            or "..." in value or "…" in value):
        return True
    text = value.strip()
    if text and _whole(text):
        return True
    return any(part and _whole(part) for part in _PARTS.split(text))


_has_placeholder_cached = lru_cache(maxsize=8192)(_has_placeholder)


# What :func:`masked` replaces: substitutions, ``<…>`` (``<<PROJECT>>`` too), ``[A|B]``, ellipses.
_SPANS = re.compile(rf"{_SUBSTITUTION}|<+[^<>\n]*>+|{_ALTERNATIVES}|\.{{3,}}|…", re.S)
MASK = "\0"


def masked(value: str) -> str:
    """The value with each substitution, ``<…>`` part, ``[A|B]`` part and ellipsis replaced by
    :data:`MASK`: the text around them keeps its meaning (the tag of ``${REGISTRY}/app:latest``)."""
    return _SPANS.sub(MASK, value)


def known(value: object) -> object:
    """The value, or None when it holds a placeholder (a rule that needs the value stays quiet)."""
    return None if has_placeholder(value) else value
