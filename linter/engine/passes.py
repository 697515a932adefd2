"""The two passes over the files of a run.

First pass (:func:`prepare`): each file is read once (or its bytes are taken from the survey);
those whose text mentions a reference kind (:func:`linter.engine.survey.mentions`) are parsed, and
of a YAML file only the documents that mention one. Their *skeletons* (the reference objects and
the scripts) make the :class:`~linter.index.ProjectIndex` every rule looks across files with.

Second pass (:func:`lint_files`): every file is linted, parsed now if the first pass did not, and
let go once linted, leaving its :class:`~linter.engine.runner.FileOutcome`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

from mlops_lint.discover import SourceFile
from mlops_lint.engine.budget import Clock, OutOfTime
from mlops_lint.engine.memory import after_file, collector_paused, freeze
from mlops_lint.engine.runner import FileOutcome, Job, Runner
from mlops_lint.engine.survey import content_digest, mentions, mentions_in
from mlops_lint.model.document import K8S, Document
from mlops_lint.sources.arm import is_template
from mlops_lint.sources.files import Unreadable, guarded, load_bytes, read_source, unread

if TYPE_CHECKING:  # a run whose results all come from the cache never builds an index
    from mlops_lint.index import ProjectIndex


def skeleton(entry: Any) -> Document | None:
    """What other files' rules may look up in a file (a Document, or a Stream from first_pass):
    its reference objects and its script."""
    from mlops_lint.refkinds import REFERENCE_KINDS

    shell = getattr(entry, "shell", None)
    iac = getattr(entry, "iac", None)
    parsed = entry.objects if isinstance(entry, Document) else entry.objects()
    objects = [obj for obj in parsed if obj.kind in REFERENCE_KINDS]
    if not objects and shell is None and iac is None:
        return None
    return Document(path=entry.path, kind=entry.kind, objects=objects, shell=shell, iac=iac)


def _mentions_reference(text: str) -> bool:
    """Whether one YAML document's text may hold an object of a reference kind (see
    :func:`linter.engine.survey.mentions_in`)."""
    return mentions_in(text)


def first_pass(data: bytes, display: str, kind: str) -> Any:
    """A shared file for the index: a YAML file as a Stream with the documents that mention a
    reference kind parsed (the rest wait for the second pass), any other file loaded whole."""
    if kind != K8S or is_template(data, display):  # an ARM template is not YAML to split
        return load_bytes(data, display, kind)
    from mlops_lint.sources import yaml_k8s

    loaded = guarded(yaml_k8s.stream, data, display, kind)
    if isinstance(loaded, yaml_k8s.Stream):
        parsed = guarded(lambda stream, _: stream.parse(_mentions_reference), loaded, display, kind)
        if isinstance(parsed, Document):  # a loader bug: the file is that SCH001
            return parsed
    return loaded


def second_pass(entry: Any, display: str) -> Document:
    """A file the first pass kept, whole."""
    if isinstance(entry, Document):
        return entry
    return guarded(lambda stream, _: stream.document(), entry, display, K8S)


def build_index(skeletons: Iterable[Document]) -> ProjectIndex:
    from mlops_lint.index import ProjectIndex
    from mlops_lint.refkinds import REFERENCE_KINDS

    return ProjectIndex(sorted(skeletons, key=lambda d: d.path), only_kinds=REFERENCE_KINDS)


def read_document(source: SourceFile, display: str) -> tuple[Document, str | None]:
    """A file loaded, and the hash of the bytes it was loaded from."""
    try:
        data = read_source(source.path)
    except Unreadable as exc:
        return unread(display, source.kind, exc.reason), None
    return load_bytes(data, display, source.kind), content_digest(data)


Work = list[tuple[SourceFile, str]]
Linted = list[tuple[str, str | None, FileOutcome]]  # (path, content hash, outcome)


Kept = dict[str, "tuple[Document, str | None] | bytes"]  # path -> parsed (with its hash), or its bytes


def prepare(work: Work, read: dict[str, bytes] | None = None, config: Any = None) -> tuple[Kept, list[Document]]:
    """First pass over some files, each read once (or taken from ``read``): those whose text
    mentions a reference kind are parsed; returns every file's parsed document or bytes, for the
    second pass, and the skeletons the index is built from."""
    kept: Kept = {}
    with collector_paused(), Clock(getattr(config, "file_timeout", None)) as clock:
        for source, display in work:
            data = read.pop(display, None) if read is not None else None
            if data is None:
                try:
                    data = read_source(source.path)
                except Unreadable:
                    continue  # reported by the second pass
            if mentions(data, source.kind):
                try:
                    clock.start()
                    try:
                        kept[display] = (first_pass(data, display, source.kind), content_digest(data))
                    finally:
                        clock.stop()
                except OutOfTime as exc:  # the second pass makes it the file's one finding
                    kept[display] = exc  # type: ignore[assignment]
            else:
                kept[display] = data
        skeletons = [found for entry in kept.values() if isinstance(entry, tuple)
                     and (found := skeleton(entry[0])) is not None]
        freeze()  # the kept files live until linted, the skeletons to the end
    return kept, skeletons


def lint_files(work: Work, kept: Kept, runner: Runner, job: Job,
               between: Callable[[], None] | None = None) -> Linted:
    """Second pass: every file linted, parsed now if the first pass did not (and let go once linted)."""
    out: Linted = []
    seconds = getattr(job.config, "file_timeout", None)
    with collector_paused(), Clock(seconds) as clock:
        for position, (source, display) in enumerate(work, 1):
            entry = kept.pop(display, None)
            runner.running = None  # loading, until the runner calls a rule
            try:
                clock.start()
                try:
                    if isinstance(entry, OutOfTime):  # the first pass ran out of time loading it
                        raise entry
                    if entry is None:
                        document, digest = read_document(source, display)
                    elif isinstance(entry, bytes):
                        document, digest = load_bytes(entry, display, source.kind), content_digest(entry)
                    else:
                        document, digest = second_pass(entry[0], display), entry[1]
                    if display in job.raw_only:  # linted through a kustomize build: only what needs the file
                        from mlops_lint.engine.kustomize import raw_part

                        document = raw_part(document)
                    outcome = runner.outcome(document, display in job.targets)
                finally:
                    clock.stop()
            except OutOfTime:
                digest, outcome = None, runner.out_of_time(display, source.kind, display in job.targets, seconds)
            out.append((display, digest, outcome))
            if between is not None:
                between()
            after_file(position)  # now and then a young collection (see linter.engine.memory)
    return out
