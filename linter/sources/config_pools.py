"""The project's ``.mlops-lint.yaml`` as a linted file: where each ``node-pools:`` entry and its
settings are written, so that the AKS rules report on the config's pools at the config's own
line and column, as they do on the pools of a script or a ``.tf`` file (issue 36).

The settings' values are read from the text as the config reads them
(:func:`linter.sources.config_yaml.node_pools_in`: ruamel.yaml, YAML 1.2; the config was
validated before the run), so a fix run, which lints the text its fixes leave, judges the fixed
pools. Their places: the same text composed with the manifests' loader
(:func:`linter.sources.yaml_k8s.compose_tree`: exact positions, bounded depth and aliases),
keeping, for each item of ``node-pools:``, its mapping with the spans of its keys and values (the
nodes a fix's ``SetKey`` edits). Comments are read for suppressions (``# mlops-lint:
disable=AKS001``), as in a manifest. Never raises: a text whose pools cannot be placed (it does
not compose as one YAML document, or breaks lines at something other than LF/CRLF) is an SCH001
that says the AKS rules did not judge them.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct, field

from mlops_lint.model.document import CONFIG, Document, ParseIssue
from mlops_lint.model.position import Span
from mlops_lint.model.tree import YMap, YSeq
from mlops_lint.sources.text import load_decoded

NODE_POOLS = "node-pools"


class ConfigPools(Struct):
    """Where the config writes its node pools: ``entries[i]`` is the ``i``-th item of
    ``node-pools:`` (a mapping with its spans; None for an item that is not a mapping). Seen by
    the rules that read scripts and IaC files (the AKS rules): it has no commands and no blocks."""

    path: str  # the config's display path
    entries: list[Any] = field(default_factory=list)
    values: list[dict[str, Any]] | None = None  # the entries' data, as linter.config reads it (None: unread)
    az_commands: tuple = ()
    commands: tuple = ()
    blocks: tuple = ()


def load(data: bytes, path: str, kind: str = CONFIG) -> Document:
    return load_decoded(data, path, CONFIG, load_text)


def load_text(text: str, path: str) -> Document:
    from mlops_lint.sources import yaml_k8s
    from mlops_lint.sources.comments import place_comments

    body = text[1:] if text.startswith("\ufeff") else text
    pools = ConfigPools(path)
    document = Document(path=path, kind=CONFIG, iac=pools, text=body)
    tree = None if yaml_k8s.has_other_breaks(body) else yaml_k8s.compose_tree(body)
    if not isinstance(tree, YMap):
        document.errors.append(ParseIssue(Span(1, 1, 1, 2), "the config's node pools could not be placed in its text "
                                          "(it is not one YAML mapping with LF or CRLF line breaks here), so the AKS "
                                          "rules did not judge them; the pools are still cluster facts"))
        return document
    items = tree.get(NODE_POOLS)
    if isinstance(items, YSeq):
        pools.entries = [item if isinstance(item, YMap) else None for item in items]
        from mlops_lint.sources.config_yaml import node_pools_in

        pools.values = node_pools_in(body)
    if yaml_k8s.MARKER in body:
        document.comments = place_comments(yaml_k8s.read_comments(body), body.splitlines())
    return document
