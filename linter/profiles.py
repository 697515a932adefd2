"""The cluster profiles (``aks-standard``, ``aks-automatic``) and how a project's config gave its
own: read by the profile inference (:mod:`linter.engine.profile`) before the rules are chosen,
and by LNT005, which reports a given profile the project's cluster contradicts."""

from __future__ import annotations

from typing import Any

AUTOMATIC_PROFILE = "aks-automatic"
STANDARD_PROFILE = "aks-standard"
INFERRED = "inferred"  # Config.profile_from of a profile the project's files implied


def explicit(config: Any) -> bool:
    """The profile is given (``--profile``, the config's ``profile:``, or an API caller's
    non-default value), not the default."""
    source = getattr(config, "profile_from", None)
    return source not in (None, INFERRED) or config.profile != STANDARD_PROFILE


def given_by(config: Any) -> str:
    """How the profile was given, for messages: ``--profile``, or the config file's key."""
    source = getattr(config, "profile_from", None)
    if source == "--profile":
        return "--profile"
    path = getattr(config, "path", None)
    return f"`profile:` in {path.name}" if path is not None else "the config"
