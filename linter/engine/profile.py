"""The cluster profile a project's own files imply (issue 37, "AKS Automatic as it behaves").

A project whose scripts or IaC make its cluster AKS Automatic (``az aks create --sku automatic``,
Terraform ``sku_tier = "Automatic"`` or ``sku { name = "Automatic" }``, Bicep/ARM ``sku: { name:
'Automatic' }``) or turn on node auto-provisioning (``--node-provisioning-mode Auto``,
``node_provisioning_profile { mode = "Auto" }``, ``nodeProvisioningProfile.mode: 'Auto'``, unless
a later ``az aks update --node-provisioning-mode Manual`` of that cluster turns NAP off again:
the records are read in order, :func:`linter.model.cluster.modes.live`) is linted in the
``aks-automatic`` profile unless its profile is given: by ``--profile`` or by
``profile:`` in its config (an explicit profile always wins; LNT005 reports one the project's
cluster contradicts). A note names the file and line the profile was inferred from; a project
making both an Automatic and a Standard cluster keeps ``aks-standard``, with a note saying why.

Run before the rules are chosen (the profile turns rules off and decides what the cluster model
reads), so it reads the project's files itself: only scripts and IaC files (``.sh``, ``.tf``,
``.bicep``; not ARM ``.json`` templates, which would read every JSON file of the project twice:
LNT005 still judges them), and only when one of them mentions ``automatic`` or
``provisioning`` at all (a byte search) are they parsed, with the loaders the run uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec.structs import replace

from mlops_lint.model.document import BICEP, SHELL, TERRAFORM
from mlops_lint.profiles import AUTOMATIC_PROFILE, INFERRED, explicit

_HINTS = (b"automatic", b"provisioning", b"autoprovision")


def _candidates(files: list[Any]) -> list[tuple[Any, bytes]]:
    """The project's scripts and IaC files, with their bytes (unreadable ones left out: the run
    reports them)."""
    from mlops_lint.sources.files import Unreadable, read_source

    found = []
    for source in files:
        if source.kind in (SHELL, TERRAFORM, BICEP):  # not every .json (an ARM template's sku: LNT005 reads it)
            try:
                found.append((source, read_source(source.path)))
            except Unreadable:
                continue
    return found


def infer(project: Any, cwd: Path) -> Any | None:
    """Set ``project.config``'s profile to ``aks-automatic`` when its files make an Automatic or
    NAP cluster and no profile is given; the note to show (a :class:`~linter.result.Note`), or None."""
    from mlops_lint.discover import display_path
    from mlops_lint.result import Note

    config = project.config
    if explicit(config):
        return None
    files = _candidates(project.context)
    if not any(hint in data.lower() for _, data in files for hint in _HINTS):
        return None
    from mlops_lint.engine.survey import mentions
    from mlops_lint.model.cluster.modes import AUTOMATIC, MIXED, project_kind, documents_modes
    from mlops_lint.sources.files import load_bytes

    shown = {}
    documents = []
    for source, data in files:
        if not mentions(data, source.kind):
            continue
        display = display_path(source.path, cwd)
        shown[display] = source.path
        documents.append(load_bytes(data, display, source.kind))
    found = project_kind(documents_modes(documents))
    if found is None or found.kind not in (AUTOMATIC, MIXED):
        return None
    where = f"line {found.evidence.origin.target.line}"
    if found.kind == MIXED:
        other = found.other
        return Note(found.evidence.origin.path,
                    f"profile not inferred: {where} makes an AKS Automatic or node auto-provisioning cluster "
                    f"({found.evidence.how}) but {other.origin.path}:{other.origin.target.line} a Standard one "
                    f"({other.how}); linted as aks-standard (--profile or `profile:` in the config chooses)")
    project.config = replace(config, profile=AUTOMATIC_PROFILE, profile_from=INFERRED)
    what = "an AKS Automatic" if found.evidence.kind == AUTOMATIC else "a node auto-provisioning"
    return Note(found.evidence.origin.path,
                f"profile aks-automatic inferred: {where} makes {what} cluster ({found.evidence.how}); "
                f"--profile aks-standard or `profile:` in the config overrides it")


def infer_all(projects: list[Any], cwd: Path) -> list[Any]:
    """:func:`infer` for every project (the stdin document is not read: it names no cluster the
    run can tell before reading it); the notes."""
    return [note for project in projects if (note := infer(project, cwd)) is not None]

