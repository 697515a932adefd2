"""What a loader produces for one source file: objects, comments and parse problems."""

from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable, TypeVar

import msgspec
from msgspec import Struct, field

from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap

T = TypeVar("T")

# Where an object is, as a value that survives pickling and the result cache: (file, document, node path)
ObjectKey = tuple[str, int, tuple[str | int, ...]]

K8S = "k8s"
DOCKERFILE = "dockerfile"
SHELL = "shell"
TERRAFORM = "terraform"  # *.tf and *.tfvars (linter.sources.terraform)
BICEP = "bicep"  # *.bicep and *.bicepparam (linter.sources.bicep)
CONFIG = "config"  # the project's .mlops-lint.yaml when it has node-pools (linter.sources.config_pools)


class Comment(Struct, frozen=True):
    """A comment's text (without the leading ``#``) and its 1-based position.

    ``own_line`` is true when nothing but white space precedes the comment on its line: such a
    directive also governs the next line that is not blank or a comment (``next_line``).
    """

    line: int
    col: int
    text: str
    own_line: bool = False
    next_line: int = 0
    width: int = 0  # the comment's length with its markers (``//``, ``/* */``); 0: ``#`` and its text


class ParseIssue(Struct, frozen=True):
    """A problem the loader met: becomes an SCH001 finding at ``span``."""

    span: Span
    message: str


class K8sObject(Struct, weakref=True):
    """One Kubernetes object: a YAML document, or one item of a ``kind: List``."""

    api_version: str
    kind: str
    name: str
    namespace: str  # "" when the manifest names none (cluster-scoped or default namespace)
    body: YMap
    path: str  # display path of the file it came from
    doc_index: int  # 0-based document index in the file
    node_path: tuple[str | int, ...] = ()  # where ``body`` sits in its document (List items)
    # the API group (``kubeflow.org``; "" for the core group), derived from ``api_version`` when the
    # object is made: rules ask for it some 50,000 times a run
    group: str = ""

    def __post_init__(self) -> None:
        api_version = self.api_version
        self.group = api_version.rpartition("/")[0] if "/" in api_version else ""

    @property
    def metadata(self) -> YMap:
        meta = self.body.get("metadata")
        return meta if isinstance(meta, YMap) else YMap(self.body.span)

    @property
    def labels(self) -> dict[str, Any]:
        labels = self.metadata.get("labels")
        return labels if isinstance(labels, dict) else {}

    @property
    def annotations(self) -> dict[str, Any]:
        annotations = self.metadata.get("annotations")
        return annotations if isinstance(annotations, dict) else {}

    @property
    def ref(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)

    @property
    def span(self) -> Span:
        """Where the object starts: its ``kind:`` key (the line a reader looks for)."""
        return self.body.kspans.get("kind", self.body.span)

    @property
    def key(self) -> ObjectKey:
        """Where the object is, as a value that survives pickling: (file, document, node path)."""
        return (self.path, self.doc_index, self.node_path)

    def describe(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"

    def stub(self) -> "ObjectStub":
        return ObjectStub(self.api_version, self.kind, self.name, self.namespace, self.path, self.doc_index,
                          self.node_path, self.span)


class ObjectStub(Struct, frozen=True):
    """What a finding needs of an object that lives in another process (a PROJECT rule's facts
    are collected where each file is linted and reduced in the parent): identity and position."""

    api_version: str
    kind: str
    name: str
    namespace: str
    path: str
    doc_index: int
    node_path: tuple[str | int, ...]
    span: Span

    @property
    def key(self) -> ObjectKey:
        return (self.path, self.doc_index, self.node_path)

    def describe(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


class Document(Struct):
    """One loaded source file."""

    path: str  # display path: relative to the working folder where possible, with /
    kind: str  # K8S | DOCKERFILE | SHELL | TERRAFORM | BICEP | CONFIG
    objects: list[K8sObject] = field(default_factory=list)
    dockerfile: Any = None  # linter.model.docker.Dockerfile
    shell: Any = None  # linter.model.azcli.ShellScript
    # node pools the cluster model reads: linter.sources.terraform.TfFile (of a .tf or .bicep file),
    # linter.sources.config_pools.ConfigPools (of the config)
    iac: Any = None
    comments: list[Comment] = field(default_factory=list)
    errors: list[ParseIssue] = field(default_factory=list)
    skipped: str | None = None  # why nothing in the file was linted (no apiVersion/kind, ...)
    # the decoded text the spans count in (no byte-order mark): what a rule's fix plan is resolved
    # against (linter.fix.resolve); None where no text was read (a skeleton, an unreadable file)
    text: str | None = None


def identity(obj: Any) -> tuple[str, str, str]:
    """What makes two objects one in a project: (kind, namespace, name), the namespace ``default``
    when unset (a cluster-scoped object's is ``default`` too: kinds never share names across
    scopes). An object written in several files of one project is one object to every counter."""
    return obj.kind, obj.namespace or "default", obj.name


def distinct(items: Iterable[T], key: Callable[[T], Hashable]) -> list[T]:
    """The first of each ``key`` in order (callers sort by path first, so the result does not
    depend on the order files were read in)."""
    seen: set = set()
    out = []
    for item in items:
        k = key(item)
        if k not in seen:
            seen.add(k)
            out.append(item)
    return out


# Facts key under which every file's outcome carries its objects' definitions (for the note below);
# not a rule code, so no PROJECT rule reads it.
DEFINITIONS = "#definitions"
# Kinds too large (and too often vendored in copies) to fingerprint: never counted by a rule.
_UNFINGERPRINTED = frozenset({"CustomResourceDefinition"})


def definitions(document: "Document") -> list[tuple[tuple[str, str, str], str, str, int]]:
    """(identity, fingerprint of the body, path, line) of each named object of the file."""
    import hashlib

    found = []
    for obj in document.objects:
        if not obj.name or obj.kind in _UNFINGERPRINTED:
            continue
        found.append((identity(obj), hashlib.blake2b(_canonical(obj.body), digest_size=12).hexdigest(), obj.path,
                      obj.span.line))
    return found


_SORTED = msgspec.json.Encoder(order="sorted", enc_hook=str)


def _canonical(body: Any) -> bytes:
    """``body`` as one JSON text, keys sorted: equal texts for equal bodies, different ones
    otherwise. msgspec writes it (a third of the time of ``json``), except where its text holds
    ``null``: it writes NaN and infinities as ``null`` too, so such a body, and one with keys
    other than strings, is written by ``json`` as before (``NaN`` and ``null`` apart; a text
    without ``null`` is never one of those)."""
    try:
        text = _SORTED.encode(body)
        if b"null" not in text:
            return text
    except TypeError:
        pass
    import json

    return json.dumps(body, sort_keys=True, default=str, separators=(",", ":")).encode()


def definition_notes(facts: Iterable[tuple[tuple[str, str, str], str, str, int]], targets: set[str]) -> list[tuple[str, str]]:
    """(path, message) for each object (kind, namespace, name) a project writes in several files
    with different bodies, reported at its first copy by path when a target holds one: counters
    count it once, from that copy. SPEC has no rule for two definitions of one object, so this is
    a note, not a finding. Identical copies (a file vendored twice) get no note."""
    copies: dict[tuple[str, str, str], list[tuple[str, int, str]]] = {}
    for ident, fingerprint, path, line in facts:
        copies.setdefault(tuple(ident), []).append((path, line, fingerprint))
    notes = []
    for (kind, namespace, name), seen in copies.items():
        if len({fingerprint for _, _, fingerprint in seen}) < 2 or not any(path in targets for path, _, _ in seen):
            continue
        seen.sort()
        where = ", ".join(f"{path}:{line}" for path, line, _ in seen[:3]) + (
            f" and {len(seen) - 3} more" if len(seen) > 3 else "")
        notes.append((seen[0][0], f"{kind} {namespace}/{name} is defined differently in {len(seen)} places ({where}): "
                                  f"rules that count objects count it once, from {seen[0][0]}:{seen[0][1]}"))
    return notes
