"""The CRD schemas shipped with mlops-lint (``linter/data/crds``): the AI ecosystem's kinds out of the box.

``index.json`` lists each bundled group/kind, its versions (served, storage, deprecated) and its
upstream; it is read once, the first time a custom resource of a bundled group is looked up. The
schema of one version is its own gzip'd JSON file, read the first time an object of that kind
and version is validated (``scripts/bundle_crds.py`` writes the bundle, and says its format).

A bundled kind is the lowest-precedence CRD: the project's own CRDs, then ``crd-paths``, then this
(:func:`candidates`); ``bundled-crds: false`` in the config turns it off.
"""

from __future__ import annotations

import json
from collections import Counter
from functools import lru_cache
from importlib import resources
from typing import Any

from msgspec import field

from mlops_lint.validation import crds
from mlops_lint.validation.crds import Crd, CrdVersion, Table

WHERE = "bundled with mlops-lint"


def _folder() -> Any:
    return resources.files("mlops_lint") / "data" / "crds"


@lru_cache(maxsize=1)
def index() -> dict[str, Any]:
    return json.loads((_folder() / "index.json").read_text("utf-8"))


def load_schema(file: str) -> Any:
    """One version's schema, its shared subtrees linked back in (the same objects, never copied)."""
    import gzip  # only for a custom resource whose CRD is bundled (a run on built-in kinds never reads one)

    data = json.loads(gzip.decompress((_folder() / file).read_bytes()))
    shared: list[Any] = data["shared"]

    def link(node: Any) -> Any:
        if isinstance(node, dict):
            if "$bundle" in node and len(node) == 1:
                return shared[node["$bundle"]]
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    node[key] = link(value)
        elif isinstance(node, list):
            for i, value in enumerate(node):
                if isinstance(value, (dict, list)):
                    node[i] = link(value)
        return node

    for number, body in enumerate(shared):  # a shared subtree refers only to those before it
        shared[number] = link(body)
    return link(data["schema"])


class BundledVersion(CrdVersion):
    """A :class:`CrdVersion` whose schema is read from the bundle when first asked for."""

    file: str | None = None  # the bundle's file of the schema

    @classmethod
    def of(cls, name: str, entry: dict[str, Any]) -> BundledVersion:
        return cls(name=name, served=entry.get("served", True), storage=entry.get("storage", False), schema=None,
                   deprecated=entry.get("deprecated", False), warning=entry.get("warning"), file=entry.get("file"))

    def openapi_schema(self) -> Any:
        if self.schema is None and self.file is not None:
            self.schema = load_schema(self.file)
        return self.schema


class BundledCrd(Crd):
    """A bundled kind: where it comes from, and the versions other upstream projects serve."""

    source: dict[str, Any] = field(default_factory=dict)
    elsewhere: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, record: dict[str, Any], source: dict[str, Any]) -> BundledCrd:
        versions: dict[str, CrdVersion] = {name: BundledVersion.of(name, entry)
                                           for name, entry in record["versions"].items()}
        return cls(record["group"], record["kind"], f"{record['kind'].lower()}s.{record['group']}", WHERE,
                   f"<bundled>/{record['upstream_file']}", versions, source=source,
                   elsewhere=dict(record.get("elsewhere") or {}))

    @property
    def origin(self) -> str:
        return f"the CRD of {self.source['repository'].split(' ')[0]} {_short(self.source['ref'])} (bundled)"


@lru_cache(maxsize=1)
def table() -> Table:
    data = index()
    found: Table = {}
    for record in data["kinds"]:
        crd = BundledCrd.of(record, data["sources"][record["source"]])
        found.setdefault((crd.group, crd.kind.lower()), []).append(crd)
    return found


def enabled(config: Any) -> bool:
    return getattr(config, "bundled_crds", True) is not False


def candidates(index: Any, config: Any, group: str, kind: str) -> list[Crd]:
    """The CRDs that define ``group``/``kind`` for this run: the project's win over ``crd-paths``,
    which win over the bundle (unless the config says ``bundled-crds: false``). A project CRD that
    defines a kind differently from the bundle is what its cluster runs: it is used, silently."""
    found = crds.candidates(index, config, group, kind)
    if found or not enabled(config):
        return found
    return table().get((group, kind.lower()), [])


def find(index: Any, config: Any, group: str, kind: str, version: str, path: str) -> Crd | None:
    """The CRD that serves ``group/version`` ``kind`` for an object of file ``path`` (see :func:`candidates`)."""
    return crds.nearest(candidates(index, config, group, kind), version, path)


def kinds() -> list[dict[str, Any]]:
    """The bundled kinds as listed in the index (for docs and ``explain``)."""
    return list(index()["kinds"])


def _short(ref: str) -> str:
    return ref[:10] if len(ref) == 40 and all(c in "0123456789abcdef" for c in ref) else ref


def cel_summary() -> list[str]:
    """One line per bundled kind and version with CEL rules: how many SCH002 checks, and why the
    others are not (transition rules need the stored object; ``status`` is never validated)."""
    from mlops_lint.validation.celrules import inventory

    lines = []
    for record in sorted(index()["kinds"], key=lambda r: (r["group"], r["kind"])):
        for version, entry in sorted(record["versions"].items()):
            if not entry.get("file"):
                continue
            total, skipped = inventory(load_schema(entry["file"]))
            if not total:
                continue
            why = Counter(reason.split(":", 1)[0] for _, _, reason in skipped)
            detail = "; ".join(f"{count} {reason}" for reason, count in sorted(why.items()))
            lines.append(f"- `{record['group']}` {record['kind']} {version}: {total - len(skipped)} of {total} "
                         f"checked" + (f" (not checked: {detail})" if detail else ""))
    return lines


def summary() -> list[str]:
    """One line per upstream and group: the kinds, their versions and where they come from (SCH002's
    docs hold these lines; tests/test_bundle.py keeps them equal)."""
    data = index()
    lines = []
    for name, source in data["sources"].items():
        groups: dict[tuple[str, str], list[str]] = {}
        for record in data["kinds"]:
            if record["source"] != name:
                continue
            versions = ", ".join(v + (" deprecated" if e.get("deprecated") else "") + ("" if e.get("served") else
                                                                                      " not served")
                                 for v, e in sorted(record["versions"].items()))
            versions += "".join(f", {v} served by {who} (not bundled)" for v, who in record.get("elsewhere", {}).items())
            groups.setdefault((record["group"], versions), []).append(record["kind"])
        shown = "; ".join(f"`{group}` {', '.join(kinds)} ({versions})" for (group, versions), kinds in groups.items())
        repository = source["repository"].split(" ")[0]
        lines.append(f"- {shown}: {repository} `{_short(source['ref'])}`")
    return lines
