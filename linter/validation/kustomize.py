"""Kustomize inputs: files a kustomization completes before anything reaches the API server.

A file listed by a ``kustomization.yaml`` (its ``resources``, ``patches``,
``patchesStrategicMerge``, ``components``, ``crds`` …) is not applied as it is: a strategic-merge
patch carries only the fields it changes, and a base may lack what an overlay adds (``labels``
with ``includeSelectors`` and ``commonLabels`` fill in a Deployment's ``selector``). For such files
SCH002 does not report missing required fields, nor strategic-merge directives (``$patch``,
``$setElementOrder/…``, ``$retainKeys``) as unknown fields; wrong types and unknown fields are
still reported, since kustomize passes them through.

A kustomization is looked for in the file's folder and up to three folders above it (patch files
often sit in a ``patches/`` subfolder); each one is read once per process. Files named as
kubebuilder and kustomize name patches (``manager_config_patch.yaml``, ``patches/…``,
``patch-deployment.yaml``) count as patches even when no kustomization lists them (a scaffold's
commented-out patch, a repository copied without its kustomization).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Any

KUSTOMIZATION_NAMES = ("kustomization.yaml", "kustomization.yml", "Kustomization")
LEVELS = 4  # the file's folder and three above
_LIST_FIELDS = ("resources", "bases", "patchesStrategicMerge", "components", "crds", "transformers", "generators",
                "validators", "configurations")
_PATH_FIELDS = ("patches", "patchesJson6902", "replacements")
_PATCH_NAME = re.compile(r"(^|[_.-])patch(es)?([_.-]|$)", re.IGNORECASE)


@lru_cache(maxsize=4096)
def _referenced(folder: str) -> frozenset[str]:
    """Absolute paths of the files the kustomization in ``folder`` names (empty without one)."""
    import yaml

    for name in KUSTOMIZATION_NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            break
    else:
        return frozenset()
    try:
        with open(path, "rb") as handle:
            data = yaml.load(handle, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except (OSError, yaml.YAMLError, UnicodeDecodeError):
        return frozenset()
    if not isinstance(data, dict):
        return frozenset()
    names: list[str] = []
    for key in _LIST_FIELDS:
        values = data.get(key)
        if isinstance(values, list):
            names.extend(v for v in values if isinstance(v, str) and "\n" not in v)  # not inline patches
    for key in _PATH_FIELDS:
        values = data.get(key)
        for value in values if isinstance(values, list) else ():
            if isinstance(value, dict) and isinstance(value.get("path"), str):
                names.append(value["path"])
    return frozenset(os.path.normpath(os.path.join(folder, name)) for name in names)


@lru_cache(maxsize=8192)
def is_input(path: str) -> bool:
    """Whether the file at ``path`` (as displayed: relative to the working folder) is named by a
    kustomization in its folder or one of the three above."""
    if not path or path.startswith("<"):
        return False
    parts = path.replace("\\", "/").split("/")
    if any(part.lower() in ("patch", "patches") for part in parts[-LEVELS:-1]) or _PATCH_NAME.search(parts[-1]):
        return True
    absolute = os.path.normpath(os.path.abspath(path))
    folder = os.path.dirname(absolute)
    for _ in range(LEVELS):
        if absolute in _referenced(folder):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    return False


def completed_later(issue: Any) -> bool:
    """An issue kustomize may resolve: a missing field, or a strategic-merge directive."""
    if issue.category == "required":
        return True
    return bool(issue.category == "unknown-field" and issue.path and str(issue.path[-1]).startswith("$"))
