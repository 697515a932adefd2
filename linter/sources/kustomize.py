"""Kustomize, read: each kustomization *root* of a project and everything its build reads.

A root is a kustomization (``kustomization.yaml``, ``kustomization.yml``, ``Kustomization``) of
the project that no other kustomization of the project names in ``resources``, ``bases`` or
``components`` (a ``kind: Component`` is never a root: it cannot be built alone).

Kustomizations are read as kustomize reads them (:func:`read_kustomization`: keys in any case,
UTF-16 text, every field that names a path or an address). A root whose closure names a remote
address or inflates Helm charts is not built, nor one naming a path out of the project, nor one
with a kustomization mlops-lint cannot read fully (:attr:`Root.refused`); each says so in a note.

This module only reads. Building a root (the program, its confinement, the build cache) and
mapping the built objects' findings and fixes back to the files the user edits are the build
room's: :mod:`linter.engine.kustomize`, beside the runs of every build (:mod:`linter.engine.builds`).
"""

from __future__ import annotations

import os
import re
from typing import Any, Iterable

from msgspec import Struct, field

from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq

from mlops_lint.validation.kustomize import KUSTOMIZATION_NAMES as NAMES  # noqa: E402 - the one list of names
# a base kustomize would fetch: a URL, an scp-like git address, a forge host, a ?ref= or a //subdir
_REMOTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*://|[\w.-]+@[\w.-]+:|(?:github|gitlab|bitbucket)\.(?:com|org)/)|\?ref=|//",
                     re.IGNORECASE)
_LIST_INPUTS = ("crds", "configurations", "transformers", "generators", "validators")
GENERATORS = ("configMapGenerator", "secretGenerator")  # the generators of objects (linter.engine.kustomize too)
_HELM = ("helmCharts", "helmChartInflationGenerator", "helmGlobals")


def kustomization_in(folder: str) -> str | None:
    for name in NAMES:
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            return path
    return None


# ---------------------------------------------------------------------------------------------
# Reading kustomizations


class Patch(Struct):
    """One patch entry of a kustomization: a file, or inline text placed in the kustomization."""

    kustomization: str  # absolute path of the kustomization naming it
    entry: Span  # the entry in the kustomization
    file: str | None = None  # absolute path of the patch file
    text: str | None = None  # inline patch
    offset: tuple[int, int] = (0, 0)  # (lines, columns) to add to positions inside inline text
    target: dict | None = None


class Kustomization(Struct):
    path: str  # absolute, real
    folder: str
    tree: YMap | None
    children: list[str] = field(default_factory=list)  # kustomization files it builds on
    inputs: set[str] = field(default_factory=set)  # files it reads itself (absolute, real)
    patches: list[Patch] = field(default_factory=list)
    remote: list[str] = field(default_factory=list)
    helm: bool = False
    component: bool = False
    # why kustomize must not build it (it could not be read fully as kustomize reads it), or None
    unread: str | None = None
    # (line, name) of every path it names that leads out of the project (checked in find_roots)
    named: list[tuple[int, str, str]] = field(default_factory=list)  # (line, as written, absolute real)


def _strings(value: Any) -> list[tuple[int, str]]:
    if not isinstance(value, list):
        return []
    return [(index, item) for index, item in enumerate(value) if isinstance(item, str)]


def _inline_offset(text: str, value_span: Span) -> tuple[int, int]:
    """Where an inline patch's first line sits: a block scalar's text starts on the next line, at
    its indentation; a quoted or plain one where its value starts (the best available)."""
    lines = text.splitlines()
    line_text = lines[value_span.line - 1] if 0 < value_span.line <= len(lines) else ""
    rest = line_text[value_span.col - 1:].lstrip()
    if rest[:1] in ("|", ">"):
        following = lines[value_span.line] if value_span.line < len(lines) else ""
        indent = len(following) - len(following.lstrip(" "))
        return value_span.line, indent
    return value_span.line - 1, value_span.col - 1


def _fields(tree: Any, name: str) -> list[tuple[str, Any]]:
    """Every key of ``tree`` that kustomize takes for the field ``name``, with its value: Go's
    encoding/json matches field names without regard to case (``Resources``, ``RESOURCES``,
    and Unicode folds such as ``reſources``), so a check of the exact key alone misses them."""
    if not isinstance(tree, dict):
        return []
    wanted = name.casefold()
    return [(key, value) for key, value in tree.items() if isinstance(key, str) and key.casefold() == wanted]


def _field(tree: Any, name: str) -> Any:
    """The value kustomize reads for ``name`` (the last matching key, as encoding/json keeps)."""
    found = _fields(tree, name)
    return found[-1][1] if found else None


def decode_kustomization(data: bytes) -> str:
    """A kustomization's text as kustomize's YAML reader takes it: UTF-16 (either order) or
    UTF-8 after a byte order mark, else UTF-8. Raises UnicodeDecodeError."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return data.decode("utf-16")
    if data[:3] == b"\xef\xbb\xbf":
        return data[3:].decode("utf-8")
    return data.decode("utf-8")


def _plugin_remote(text: str) -> str | None:
    """A string of a generator's or transformer's configuration (inline or in its file) that
    kustomize could fetch (a plugin's ``path`` may be a URL); ``"?"`` when it cannot be read."""
    import yaml

    try:
        documents = list(yaml.safe_load_all(text))
    except (yaml.YAMLError, RecursionError, ValueError):
        return "?"
    stack: list[Any] = documents
    seen: set[int] = set()  # a node an alias shares is walked once (an alias bomb stays linear)
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if _REMOTE.search(value):  # a plugin's path is a file or an http(s) address
                return value
            continue
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None


_DIRECTORY_FIELDS = ("resources", "bases", "components")
_PLUGIN_FIELDS = ("generators", "transformers", "validators")
_FILE_FIELDS = ("crds", "configurations")


# what kustomize may take for a remote repository when no local path has the name: a forge host
# without its scheme (``example.org/org/repo.git``), go-getter's ``git::`` and ``gh:``
_HOSTLIKE = re.compile(r"^(?:git::|gh:|[\w-]+(?:\.[\w-]+)*\.[a-z]{2,}(?::\d+)?/)", re.IGNORECASE)


def read_kustomization(path: str, bound: str | None = None) -> Kustomization:
    """A kustomization as kustomize reads it: every field that can name a file, a folder or a
    remote address is looked up as kustomize looks it up (keys in any case, UTF-16 text); one
    that cannot be read fully (not text kustomize decodes, not a mapping, a plugin configuration
    that does not parse) has ``unread`` set, and is not built. A path it names outside ``bound``
    (the project's folder) is recorded in ``named`` and never looked at."""
    from mlops_lint.sources.files import Unreadable, read_source
    from mlops_lint.sources.yaml_k8s import compose_tree

    folder = os.path.dirname(path)
    try:
        text = decode_kustomization(read_source(path))
    except Unreadable as exc:
        return Kustomization(path, folder, None, unread=f"it cannot be read ({exc})")
    except UnicodeDecodeError:
        return Kustomization(path, folder, None, unread="it is not UTF-8 or UTF-16 text")
    tree = compose_tree(text)
    if tree is None and all(line.strip() in ("", "---") or line.lstrip().startswith("#")
                            for line in text.splitlines()):
        tree = YMap()  # an empty kustomization (comments at most): kustomize builds it, to nothing
    found = Kustomization(path, folder, tree if isinstance(tree, YMap) else None)
    if found.tree is None:
        found.unread = "it is not a YAML mapping mlops-lint can read"
        return found
    tree = found.tree
    found.component = _field(tree, "kind") == "Component"
    found.helm = any(_fields(tree, key) for key in _HELM)

    def local(name: str) -> str:
        return os.path.realpath(os.path.join(folder, name))

    def line_of(key: str, sequence: Any = None, index: int | None = None) -> int:
        try:
            if isinstance(sequence, YSeq) and index is not None:
                return sequence.item_span(index).line
            return tree.key_span(key).line
        except Exception:  # noqa: BLE001 - a position is a help, never a reason to fail
            return 1

    def names(key: str, name: str, line: int, repository: bool = False) -> str | None:
        """The local path ``name`` leads to (recorded for the project check), or None for a
        remote one (recorded) or an empty one."""
        if _REMOTE.search(name):
            found.remote.append(name)
            return None
        if not name:
            return None
        target = local(name)
        if repository and _HOSTLIKE.match(name) and not os.path.lexists(target):  # kustomize would clone it
            found.remote.append(name)
            return None
        found.named.append((line, name, target))
        return target if bound is None or _inside(target, bound) else None

    for field_name in (*_DIRECTORY_FIELDS, *_PLUGIN_FIELDS):
        for key, value in _fields(tree, field_name):
            for index, name in _strings(value):
                line = line_of(key, value, index)
                if "\n" in name:  # an inline plugin configuration
                    remote = _plugin_remote(name) if field_name in _PLUGIN_FIELDS else name
                    if remote == "?":
                        found.unread = f"its {key} entry on line {line} does not parse"
                    elif remote is not None:
                        found.remote.append(remote)
                    continue
                target = names(key, name, line, repository=True)
                if target is None:
                    continue
                if os.path.isdir(target):
                    child = kustomization_in(target)
                    if child is not None:
                        found.children.append(os.path.realpath(child))
                        if bound is not None and not _inside(found.children[-1], bound):  # a link out
                            found.named.append((line, name, found.children[-1]))
                elif os.path.isfile(target):
                    found.inputs.add(target)
                    if field_name in _PLUGIN_FIELDS:
                        try:
                            remote = _plugin_remote(decode_kustomization(read_source(target)))
                        except (Unreadable, UnicodeDecodeError):
                            remote = "?"
                        if remote == "?":
                            found.unread = f"the {key} file {name} on line {line} cannot be read"
                        elif remote is not None:
                            found.remote.append(remote)
    for field_name in _FILE_FIELDS:
        for key, value in _fields(tree, field_name):
            for index, name in _strings(value):
                target = names(key, name, line_of(key, value, index))
                if target is not None and os.path.isfile(target):
                    found.inputs.add(target)
    for field_name in GENERATORS:
        for key, value in _fields(tree, field_name):
            for index, item in enumerate(value) if isinstance(value, list) else ():
                if not isinstance(item, dict):
                    continue
                line = line_of(key, value, index)
                listed = [n for _, v in _fields(item, "files") for _, n in _strings(v)] + \
                    [n for _, v in _fields(item, "envs") for _, n in _strings(v)] + \
                    [v for _, v in _fields(item, "env") if isinstance(v, str)]
                for name in listed:
                    if _REMOTE.search(name):
                        found.remote.append(name)
                        continue
                    name = name.split("=", 1)[1] if "=" in name else name
                    target = names(key, name, line)
                    if target is not None and os.path.isfile(target):
                        found.inputs.add(target)
    for key, value in _fields(tree, "replacements"):
        for index, item in enumerate(value) if isinstance(value, list) else ():
            for _, name in _fields(item, "path"):
                if isinstance(name, str):
                    target = names(key, name, line_of(key, value, index))
                    if target is not None and os.path.isfile(target):
                        found.inputs.add(target)
    for key, openapi in _fields(tree, "openapi"):
        for _, name in _fields(openapi, "path"):
            if isinstance(name, str):
                target = names(key, name, line_of(key))
                if target is not None and os.path.isfile(target):
                    found.inputs.add(target)
    # patches, in the order kustomize applies them: patchesStrategicMerge, patchesJson6902, patches
    for _, smp in _fields(tree, "patchesStrategicMerge"):
        if not isinstance(smp, YSeq):
            continue
        for index, item in _strings(smp):
            span = smp.item_span(index)
            if "\n" not in item:
                target = names("patchesStrategicMerge", item, span.line)
                if target is None:
                    continue
            if "\n" in item or not os.path.isfile(local(item)):
                found.patches.append(Patch(path, span, text=item, offset=_inline_offset(text, span)))
            else:
                found.patches.append(Patch(path, span, file=local(item)))
                found.inputs.add(local(item))
    for field_name in ("patchesJson6902", "patches"):
        for _, entries in _fields(tree, field_name):
            if not isinstance(entries, YSeq):
                continue
            for index, item in entries.maps():
                target = _field(item, "target")
                target = target if isinstance(target, dict) else None
                paths = [(key, name) for key, name in _fields(item, "path") if isinstance(name, str)]
                for key, name in paths:
                    local_path = names(field_name, name, item.value_span(key).line)
                    if local_path is not None and os.path.isfile(local_path):
                        found.patches.append(Patch(path, item.value_span(key), file=local_path, target=target))
                        found.inputs.add(local_path)
                if not paths and isinstance(item.get("patch"), str):
                    span = item.value_span("patch")
                    found.patches.append(Patch(path, span, text=item["patch"], offset=_inline_offset(text, span),
                                               target=target))
    return found


class Root(Struct):
    """A kustomization to build, with every kustomization and file its build reads."""

    path: str  # absolute, real
    display: str
    chain: list[Kustomization]  # every kustomization of the closure, bases before what builds on them
    inputs: list[str]  # every file the build reads (kustomizations included), sorted
    remote: list[str]
    helm: bool
    # why it is not built though it is readable: (kustomization, line, reason) of the first of its
    # closure that names a path out of the project or cannot be read fully as kustomize reads it
    refused: tuple[str, int, str] | None = None

    @property
    def folder(self) -> str:
        return os.path.dirname(self.path)

    @property
    def folder_display(self) -> str:
        return os.path.dirname(self.display) or "."

    @property
    def built_as(self) -> str:
        """What a finding's message adds: the overlay (or plain kustomization) it was built by."""
        if len(self.chain) > 1:
            return f"after overlay {self.folder_display}"
        return f"as kustomize builds {self.folder_display}"


def _closure(path: str, known: dict[str, Kustomization], bound: str | None = None) -> list[Kustomization]:
    """The kustomizations ``path`` builds on, bases first (each once, cycles cut)."""
    out: list[Kustomization] = []
    seen: set[str] = set()
    stack: list[tuple[str, bool]] = [(path, False)]
    while stack:
        current, done = stack.pop()
        if done:
            out.append(known[current])
            continue
        if current in seen:
            continue
        seen.add(current)
        if current not in known:  # one out of the project (a link's target) is never opened
            known[current] = read_kustomization(current, bound) if bound is None or _inside(current, bound) \
                else Kustomization(current, os.path.dirname(current), None)
        stack.append((current, True))
        for child in reversed(known[current].children):
            if child not in seen:
                stack.append((child, False))
    return out


def _inside(path: str, bound: str) -> bool:
    return path == bound or path.startswith(bound.rstrip(os.sep) + os.sep)


def _refused(chain: list[Kustomization], bound: str | None) -> tuple[str, int, str] | None:
    """Why a closure must not be built: a kustomization kustomize would read otherwise than
    mlops-lint can, or one naming a path (a base, a file, a link's target) outside ``bound``."""
    for kustomization in reversed(chain):  # the root first: the line that leads out is named
        if kustomization.unread is not None:
            return kustomization.path, 1, kustomization.unread
        if bound is not None:
            for line, name, target in kustomization.named:
                if not _inside(target, bound):
                    return kustomization.path, line, f"it names {name!r}, which leads outside the project"
    for kustomization in chain:
        if bound is not None and not _inside(kustomization.path, bound):
            return kustomization.path, 1, "it is outside the project"
    return None


def find_roots(files: Iterable[tuple[str, str]], bound: str | None = None) -> list[Root]:
    """The roots among a project's files (``(absolute path, display path)`` pairs; a folder's
    ``Kustomization`` without a suffix is looked for beside them), sorted by display path. With
    ``bound`` (the project's folder, real), a root whose closure reads anything outside it, or
    that mlops-lint cannot read as kustomize would, says why in :attr:`Root.refused`."""
    display_of: dict[str, str] = {}
    folders: dict[str, str] = {}  # folder -> the display folder of a file in it
    for absolute, display in files:
        folders.setdefault(os.path.dirname(absolute), os.path.dirname(display))
        if os.path.basename(absolute) in NAMES:
            display_of.setdefault(os.path.realpath(absolute), display)
    for folder, shown in sorted(folders.items()):  # `Kustomization` has no suffix: not discovered
        plain = os.path.join(folder, "Kustomization")
        if os.path.isfile(plain) and os.path.realpath(plain) not in display_of:
            display_of[os.path.realpath(plain)] = f"{shown}/Kustomization" if shown else "Kustomization"
    bound = os.path.realpath(bound) if bound else None
    known: dict[str, Kustomization] = {path: read_kustomization(path, bound) for path in sorted(display_of)}
    referenced = {child for k in known.values() for child in k.children}
    roots = []
    for path in sorted(display_of):
        own = known[path]
        if path in referenced or own.tree is None or own.component:
            continue
        chain = _closure(path, known, bound)
        inputs = sorted({k.path for k in chain} | {f for k in chain for f in k.inputs})
        roots.append(Root(path, display_of[path], chain, inputs, [r for k in chain for r in k.remote],
                          any(k.helm for k in chain), _refused(chain, bound)))
    return sorted(roots, key=lambda root: root.display)


# ---------------------------------------------------------------------------------------------
# Building


# the builds a config may name: the program (by name only, found on PATH: linter.programs) and its
# subcommand, with nothing after them that would let the tree run code (exec plugins, Helm), reach
# a cluster or read outside the kustomization's folder: kustomize's build is read-only and local
# when given only a folder, and keeps each kustomization's files inside its folder (the default
# load restrictor, LoadRestrictionsRootOnly, which is the only one a config may spell out)
