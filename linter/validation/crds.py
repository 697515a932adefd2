"""The CustomResourceDefinitions a run knows: the project's own, the config's ``crd-paths``, the bundle.

A custom resource is validated against the CRD of its group and kind that serves its version.
The project's CRDs (``ctx.index``) are what gets applied with the manifests, so when the project
defines a group/kind, only its CRDs count; ``crd-paths`` (CRDs of the cluster, files or folders
relative to the config file's folder) fill in the rest, and the schemas bundled with mlops-lint
(:mod:`.bundle`) the kinds neither defines. With several candidates, the one nearest
to the object's file wins (same file, then the longest common folder).

``crd-paths`` files are read once per process and cached by path: YAML or JSON CRDs
(``apiextensions.k8s.io/v1`` or ``v1beta1``, ``kind: List`` too), or a JSON Schema file of one
version in the CRDs-catalog form ``<group>_<kind>_<version>.json`` (as kubeconform and datree's
catalog name them). A file that cannot be read or holds neither is a :class:`CrdPathError`.
"""

from __future__ import annotations

import json
import os
import re
import weakref
from pathlib import Path
from typing import Any, Callable, Iterable

from msgspec import Struct, field

from mlops_lint.validation.convert import convert_root

CRD_SUFFIXES = (".yaml", ".yml", ".json")
_CATALOG_NAME = re.compile(r"^(?P<group>[^_]+)_(?P<kind>[^_]+)_(?P<version>v[0-9]+(?:(?:alpha|beta)[0-9]+)?)\.json$")


class CrdPathError(Exception):
    """A ``crd-paths`` entry that cannot be used; ``str()`` says why."""


class CrdVersion(Struct):
    name: str
    served: bool
    storage: bool
    schema: Any  # the openAPIV3Schema, None when the version has none
    preserve_unknown: bool = False
    deprecated: bool = False
    warning: str | None = None  # the CRD's deprecationWarning

    def openapi_schema(self) -> Any:
        """The version's ``openAPIV3Schema`` (a bundled one is read when first asked for)."""
        return self.schema


class Crd(Struct, eq=False):
    group: str
    kind: str
    name: str  # metadata.name (plural.group), or the file name of a catalog schema
    where: str  # "path:line", for messages
    path: str  # file the CRD came from (for the nearest-file choice)
    versions: dict[str, CrdVersion]
    _validators: dict[tuple[str, str], Any] = field(default_factory=dict)

    @property
    def served(self) -> list[str]:
        return [v.name for v in self.versions.values() if v.served]

    @property
    def storage(self) -> str | None:
        for version in self.versions.values():
            if version.storage:
                return version.name
        return None

    def serves(self, version: str) -> bool:
        entry = self.versions.get(version)
        return entry is not None and entry.served

    def replacement(self) -> str | None:
        """The version to move to: the storage version if served, else the preferred served one."""
        from mlops_lint.validation.builtin import preferred_version

        if self.storage and self.serves(self.storage):
            return self.storage
        served = self.served
        return preferred_version(served) if served else None

    def validator(self, version: str, release: Any, build: Callable[[dict], Any]) -> Any:
        """The validator of ``version`` (None without a schema), built once per Kubernetes release
        by ``build`` (linter.validation.validate.Validator, passed in so the two modules do not
        import each other)."""
        key = (version, release.version)
        if key not in self._validators:
            entry = self.versions.get(version)
            validator = None
            raw = entry.openapi_schema() if entry is not None else None
            if isinstance(raw, dict):
                raw = webhook_defaulted(self.group, self.kind, raw)
                schema = convert_root(raw, preserve_unknown=entry.preserve_unknown)
                schema["$defs"] = release.defs  # ObjectMeta and friends
                validator = build(schema)
            self._validators[key] = validator
        return self._validators[key]


# Required fields that a controller's mutating webhook fills in before the API server validates the
# object (admission runs before schema validation), so a manifest may leave them out. Each is the
# schema path of the field ("[]": the items of a list); they apply to every CRD of the kind, bundled
# or not, because the webhook comes with the controller. Listed in SCH002's docs.
WEBHOOK_DEFAULTS: dict[tuple[str, str], tuple[tuple[str, ...], ...]] = {
    # JobSet's webhook names each failure policy rule "failurePolicyRuleN" (N: its index)
    ("jobset.x-k8s.io", "JobSet"): (("spec", "failurePolicy", "rules", "[]", "name"),),
    # LeaderWorkerSet's webhook sets networkConfig.subdomainPolicy to Shared when it is unset
    ("leaderworkerset.x-k8s.io", "LeaderWorkerSet"): (("spec", "networkConfig", "subdomainPolicy"),),
}


def webhook_defaulted(group: str, kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with the :data:`WEBHOOK_DEFAULTS` of ``group``/``kind`` no longer required; the
    nodes on each path are copied, never changed (bundled schemas share subtrees)."""
    for path in WEBHOOK_DEFAULTS.get((group, kind), ()):
        schema = _not_required(schema, path)
    return schema


def _not_required(node: Any, path: tuple[str, ...]) -> Any:
    if not isinstance(node, dict):
        return node
    out = dict(node)
    step, rest = path[0], path[1:]
    if not rest:
        if isinstance(out.get("required"), list):
            out["required"] = [name for name in out["required"] if name != step]
        return out
    if step == "[]":
        if isinstance(out.get("items"), dict):
            out["items"] = _not_required(out["items"], rest)
    elif isinstance(out.get("properties"), dict) and step in out["properties"]:
        out["properties"] = {**out["properties"], step: _not_required(out["properties"][step], rest)}
    return out


def _bool(value: Any, default: bool) -> bool:
    return value if isinstance(value, bool) else default


def parse_crd(body: Any, path: str, line: int = 1) -> Crd | None:
    """A CRD object (plain or positioned data) as a :class:`Crd`; None when it names no group/kind."""
    if not isinstance(body, dict) or body.get("kind") != "CustomResourceDefinition":
        return None
    spec = body.get("spec")
    if not isinstance(spec, dict):
        return None
    names = spec.get("names") if isinstance(spec.get("names"), dict) else {}
    group, kind = spec.get("group"), names.get("kind")
    if not isinstance(group, str) or not isinstance(kind, str):
        return None
    meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
    legacy = str(body.get("apiVersion", "")).endswith("/v1beta1")
    preserve = _bool(spec.get("preserveUnknownFields"), legacy)  # v1beta1 kept unknown fields by default
    validation = spec.get("validation") if isinstance(spec.get("validation"), dict) else {}
    shared_schema = validation.get("openAPIV3Schema")
    versions: dict[str, CrdVersion] = {}
    entries = spec.get("versions") if isinstance(spec.get("versions"), list) else []
    if not entries and isinstance(spec.get("version"), str):
        entries = [{"name": spec["version"], "served": True, "storage": True}]
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        schema_holder = entry.get("schema") if isinstance(entry.get("schema"), dict) else {}
        schema = schema_holder.get("openAPIV3Schema", shared_schema)
        versions[entry["name"]] = CrdVersion(
            name=entry["name"], served=_bool(entry.get("served"), True), storage=_bool(entry.get("storage"), False),
            schema=schema if isinstance(schema, dict) else None, preserve_unknown=preserve,
            deprecated=_bool(entry.get("deprecated"), False),
            warning=entry["deprecationWarning"] if isinstance(entry.get("deprecationWarning"), str) else None,
        )
    name = meta.get("name") if isinstance(meta.get("name"), str) else f"{names.get('plural', kind.lower())}.{group}"
    return Crd(group, kind, name, f"{path}:{line}", path, versions)


def parse_catalog_schema(schema: Any, path: str) -> Crd | None:
    """A CRDs-catalog JSON Schema file (``monitoring.coreos.com_podmonitor_v1.json``) as a one-version CRD."""
    match = _CATALOG_NAME.match(os.path.basename(path))
    if match is None or not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict):
        return None
    version = CrdVersion(match.group("version"), True, True, schema)
    return Crd(match.group("group"), match.group("kind"), os.path.basename(path), f"{path}:1", path,
               {version.name: version})


# ---------------------------------------------------------------------------------------------
# crd-paths


_PATH_CACHE: dict[tuple[str, int, int], list[Crd]] = {}


# A crd-paths folder is walked up to these bounds (`crd-paths: ["/"]` walked the whole file
# system): entries (files and folders) seen, and bytes of the CRD files kept; past either the
# walk stops with a note on stderr, once per folder and process.
MAX_WALK_ENTRIES = 20_000
MAX_WALK_BYTES = 64 * 1024 * 1024
_WALKED: dict[str, list[Path]] = {}


def _files(target: Path) -> list[Path]:
    if not target.is_dir():
        return [target]
    key = str(target)
    if key in _WALKED:
        return _WALKED[key]
    found: list[Path] = []
    seen = size = 0
    stopped = ""
    for folder, dirs, names in os.walk(target, onerror=None, followlinks=False):
        dirs.sort()
        seen += len(dirs) + len(names)
        for name in sorted(names):
            if os.path.splitext(name)[1].lower() not in CRD_SUFFIXES:
                continue
            path = Path(folder, name)
            try:
                stat = path.stat()
            except OSError:
                continue
            if not os.path.isfile(path):
                continue
            size += stat.st_size
            if size > MAX_WALK_BYTES:
                stopped = f"{MAX_WALK_BYTES // (1024 * 1024)} MiB of CRD files"
                break
            found.append(path)
        if not stopped and seen > MAX_WALK_ENTRIES:
            stopped = f"{MAX_WALK_ENTRIES:,} files and folders"
        if stopped:
            import sys

            sys.stderr.write(f"mlops-lint: note: crd-paths folder {target}: stopped after {stopped}; the CRDs "
                             "past that were not read (name a smaller folder)\n")
            break
    _WALKED[key] = found = sorted(found)
    return found


def _documents(text: str, path: Path) -> list[Any]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    if path.suffix.lower() == ".json":
        try:
            return [json.loads(text)]
        except ValueError:
            pass  # JSON with comments or YAML in a .json file: try YAML
    from mlops_lint.sources import yaml_k8s

    beyond = yaml_k8s.check_bounds(text)  # libyaml's composer recurses in C: too deep a file would crash
    if beyond is not None:
        raise CrdPathError(f"{path}: {beyond}")
    try:
        return [doc for doc in yaml.load_all(text, Loader=loader) if doc is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise CrdPathError(f"{path}{where}: not valid YAML or JSON ({getattr(exc, 'problem', None) or exc})") from None


def load_file(path: Path) -> list[Crd]:
    """The CRDs of one file, cached by (path, size, mtime)."""
    try:
        stat = path.stat()
    except OSError as exc:
        raise CrdPathError(f"{path}: cannot read: {exc.strerror or exc}") from None
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    cached = _PATH_CACHE.get(key)
    if cached is not None:
        return cached
    from mlops_lint.sources.files import Unreadable, read_source

    try:  # non-blocking and size-checked: a FIFO or a device named in crd-paths is refused
        text = read_source(path).decode("utf-8-sig")
    except Unreadable as exc:
        raise CrdPathError(f"{path}: {exc.reason}") from None
    except UnicodeDecodeError as exc:
        raise CrdPathError(f"{path}: cannot read: {exc}") from None
    found: list[Crd] = []
    for document in _documents(text, path):
        items = document.get("items") if isinstance(document, dict) and document.get("kind") == "List" else [document]
        for item in items if isinstance(items, list) else []:
            crd = parse_crd(item, str(path)) or parse_catalog_schema(item, str(path))
            if crd is not None:
                found.append(crd)
    if not found:
        raise CrdPathError(f"{path}: holds no CustomResourceDefinition (nor a <group>_<kind>_<version>.json schema)")
    _PATH_CACHE[key] = found
    return found


def resolve_paths(entries: Iterable[str], base: Path) -> list[Path]:
    return [(base / entry).resolve() if not os.path.isabs(entry) else Path(entry) for entry in entries]


def load_paths(entries: Iterable[str], base: Path) -> list[Crd]:
    """Every CRD under ``entries`` (files or folders, relative to ``base``)."""
    found: list[Crd] = []
    for target in resolve_paths(entries, base):
        if not target.exists():
            raise CrdPathError(f"{target}: no such file or folder")
        files = _files(target)
        if target.is_dir() and not files:
            raise CrdPathError(f"{target}: the folder holds no .yaml, .yml or .json file")
        for file in files:
            try:
                found.extend(load_file(file))
            except CrdPathError:
                if not target.is_dir():
                    raise
                # inside a folder, files that are not CRDs (a kustomization, a README) are skipped
    return found


def configured_files(config: Any) -> list[Path]:
    """Every file the config's ``crd-paths`` name (what the result cache depends on)."""
    entries = tuple(getattr(config, "crd_paths", ()) or ())
    found: list[Path] = []
    for target in resolve_paths(entries, config_base(config)) if entries else ():
        if target.exists():
            found.extend(_files(target))
    return found


def config_base(config: Any) -> Path:
    path = getattr(config, "path", None)
    return Path(path).parent if path else Path.cwd()


# ---------------------------------------------------------------------------------------------
# What a run knows


Table = dict[tuple[str, str], list[Crd]]  # (group, kind lower-cased) -> CRDs


def _table(crds: Iterable[Crd]) -> Table:
    table: Table = {}
    for crd in crds:
        table.setdefault((crd.group, crd.kind.lower()), []).append(crd)
    return table


_PROJECT: "weakref.WeakKeyDictionary[Any, Table]" = weakref.WeakKeyDictionary()
_CONFIGURED: dict[tuple[str, tuple[str, ...]], Table] = {}


def project_table(index: Any) -> Table:
    table = _PROJECT.get(index)
    if table is None:
        crds = []
        for obj in index.of_kind("CustomResourceDefinition"):
            crd = parse_crd(obj.body, obj.path, obj.span.line)
            if crd is not None:
                crds.append(crd)
        table = _table(crds)
        _PROJECT[index] = table
    return table


def configured_table(config: Any) -> Table:
    entries = tuple(getattr(config, "crd_paths", ()) or ())
    if not entries:
        return {}
    base = config_base(config)
    key = (str(base), entries)
    table = _CONFIGURED.get(key)
    if table is None:
        table = _table(load_paths(entries, base))
        _CONFIGURED[key] = table
    return table


def candidates(index: Any, config: Any, group: str, kind: str) -> list[Crd]:
    """The CRDs of the project and of ``crd-paths`` that define ``group``/``kind`` (the project's
    win); :func:`linter.validation.bundle.candidates` adds the bundle after both."""
    key = (group, kind.lower())
    return project_table(index).get(key) or configured_table(config).get(key) or []


def _closeness(a: str, b: str) -> int:
    if a == b:
        return 1 << 20
    common = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1]):
        if x != y:
            break
        common += 1
    return common


def find(index: Any, config: Any, group: str, kind: str, version: str, path: str) -> Crd | None:
    """The CRD of the project or ``crd-paths`` that serves ``group/version`` ``kind`` for an
    object of file ``path``, nearest first."""
    return nearest(candidates(index, config, group, kind), version, path)


def nearest(found: list[Crd], version: str, path: str) -> Crd | None:
    """The CRD of ``found`` that serves ``version``, nearest to the file ``path`` first."""
    serving = [crd for crd in found if crd.serves(version)]
    if not serving:
        return None
    return max(serving, key=lambda crd: (_closeness(crd.path, path), -len(crd.path)))
