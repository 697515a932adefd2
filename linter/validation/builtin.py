"""The built-in kinds' schemas: the data files of the ``kubernetes-validate`` package.

The package ships, per Kubernetes minor version, the official OpenAPI definitions converted to
JSON Schema (``v1.N.0-local-strict/_definitions.json``, "strict": unknown fields are not allowed).
Only those data files are read; the package itself is never imported (its import pulls in more
than a lookup needs). A release is loaded the first time an object needs it, once per process.

Two definitions are adjusted to what Kubernetes' decoder accepts: ``IntOrString`` (an integer or
a string) and ``Quantity`` (a number, or a string in quantity syntax: ``500m``, ``8Gi``, ``1e3``),
which the package writes as a ``oneOf`` that a ``null`` would match twice.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from importlib.util import find_spec
from typing import Any

from msgspec import Struct, field


# The version validated against when `kubernetes-version` is not set: a minor version AKS
# supports in general availability; set `kubernetes-version` to the cluster's.
DEFAULT_KUBERNETES_VERSION = "1.35"

OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
# resource.Quantity's grammar (the pattern controller-gen writes into every CRD's quantities)
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_DIR = re.compile(r"^v(\d+)\.(\d+)\.\d+-local-strict$")


@lru_cache(maxsize=1)
def _schema_root() -> str | None:
    spec = find_spec("kubernetes_validate")
    if spec is None or not spec.submodule_search_locations:
        return None
    return os.path.join(list(spec.submodule_search_locations)[0], "kubernetes-json-schema")


@lru_cache(maxsize=1)
def _release_dirs() -> dict[str, str]:
    """``"1.30"`` -> its folder of strict schemas."""
    root = _schema_root()
    found: dict[str, str] = {}
    if root is None or not os.path.isdir(root):
        return found
    for name in os.listdir(root):
        match = _DIR.match(name)
        if match:
            found[f"{match.group(1)}.{match.group(2)}"] = os.path.join(root, name)
    return found


def version_key(version: str) -> tuple[int, int]:
    major, _, minor = version.partition(".")
    return int(major), int(minor or 0)


def shipped_versions() -> tuple[str, ...]:
    """Kubernetes minor versions whose schemas are installed, oldest first."""
    return tuple(sorted(_release_dirs(), key=version_key))


def version_problem(version: str) -> str | None:
    """Why ``version`` cannot be validated against, or None."""
    versions = shipped_versions()
    if not versions:
        return "the Kubernetes schemas are not installed (the kubernetes-validate package is missing)"
    if version not in _release_dirs():
        return (f"Kubernetes {version} is not supported: schemas are available for {versions[0]} to "
                f"{versions[-1]}")
    return None


def effective_version(config: Any) -> str:
    return getattr(config, "kubernetes_version", None) or DEFAULT_KUBERNETES_VERSION


class Release(Struct):
    """One Kubernetes minor version: its definitions and what it serves."""

    version: str
    defs: dict[str, Any]
    gvk: dict[tuple[str, str, str], str]  # (group, version, kind) -> definition name
    kinds: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (group, kind) -> versions
    groups: dict[str, set[str]] = field(default_factory=dict)  # group -> its versions

    def definition(self, group: str, version: str, kind: str) -> str | None:
        return self.gvk.get((group, version, kind))


def _adjust(defs: dict[str, Any]) -> dict[str, Any]:
    defs = dict(defs)
    defs[INT_OR_STRING] = {"type": ["string", "integer", "null"]}
    defs[QUANTITY] = {"type": ["string", "number", "null"], "pattern": QUANTITY_PATTERN}
    return defs


@lru_cache(maxsize=4)
def release(version: str) -> Release | None:
    folder = _release_dirs().get(version)
    if folder is None:
        return None
    with open(os.path.join(folder, "_definitions.json"), "rb") as handle:
        defs = _adjust(json.load(handle)["$defs"])
    gvk: dict[tuple[str, str, str], str] = {}
    kinds: dict[tuple[str, str], list[str]] = {}
    groups: dict[str, set[str]] = {}
    for name, schema in defs.items():
        entries = schema.get("x-kubernetes-group-version-kind") if isinstance(schema, dict) else None
        if not entries or len(entries) != 1:  # DeleteOptions, WatchEvent …: listed under every group
            continue
        entry = entries[0]
        key = (entry.get("group", ""), entry.get("version", ""), entry.get("kind", ""))
        if key[2].endswith("List") and "items" in schema.get("properties", {}):
            continue
        gvk[key] = name
        kinds.setdefault((key[0], key[2]), []).append(key[1])
        groups.setdefault(key[0], set()).add(key[1])
    return Release(version, defs, gvk, kinds, groups)


@lru_cache(maxsize=64)
def _listing(version: str) -> frozenset[str]:
    folder = _release_dirs().get(version)
    return frozenset(os.listdir(folder)) if folder else frozenset()


def first_served(group: str, version: str, kind: str, after: str) -> str | None:
    """The first shipped release newer than ``after`` with a schema for this apiVersion and kind
    (from file names only: ``cronjob-batch-v1.json``; nothing is parsed)."""
    prefix = group.split(".")[0] + "-" if group else ""
    name = f"{kind.lower()}-{prefix}{version}.json"
    for candidate in shipped_versions():
        if version_key(candidate) > version_key(after) and name in _listing(candidate):
            return candidate
    return None


def preferred_version(versions: list[str] | set[str]) -> str:
    """The version Kubernetes prefers among ``versions``: GA over beta over alpha, newest first."""
    return max(versions, key=api_version_rank)


_LEVEL = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def api_version_rank(version: str) -> tuple[int, int, int]:
    match = _LEVEL.match(version)
    if not match:
        return (-1, 0, 0)
    level = {"alpha": 0, "beta": 1, None: 2}[match.group(2)]
    return (level, int(match.group(1)), int(match.group(3) or 0))
