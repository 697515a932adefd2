"""``mlops-lint server``: the Language Server, over stdio (pygls; ``pip install "mlops-lint[lsp]"``).

- Diagnostics on open, change and save, for every open file, from its whole project's model
  (:mod:`linter.lsp.workspace`: the engine's run, then the edited file alone; the other files
  again in the background when it changed what they look up).
- Code actions: each finding's fix (unsafe ones say so in their title, and are never the
  preferred action) and ``# mlops-lint: disable=ID`` (:func:`linter.lsp.convert.disable_edit`).
  Both are edits the editor applies (a ``WorkspaceEdit``): the server never writes a file.
- Hover on a finding: its rule's page, as ``mlops-lint explain`` prints it.
- The config (``.mlops-lint.yaml``, ``.mlops-lint.yml``, ``pyproject.toml``) read again when it is
  saved or changes on disk (``workspace/didChangeWatchedFiles``, watched where the editor lets the
  server ask for it); so is every project when a lintable file is created or deleted.

Only ``file:`` documents are linted (an untitled buffer has no project); a file of no project
(excluded by the config, not a manifest, Dockerfile or script) gets no diagnostics, and is looked
for again only when saved. A project whose builds read several files (kustomize, Helm) is linted
whole again once the edits pause (:data:`RELINT_DELAY`), and at once on save. An invalid config is
said once (``window/showMessage``); its project waits for the config's next save or change.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path

from mlops_lint import __version__
from mlops_lint.config import ConfigError
from mlops_lint.lsp.convert import Text, diagnostic, disable_edit, text_edits
from mlops_lint.lsp.workspace import Part, Project, Workspace
from mlops_lint.roots import CONFIG_NAMES

CONFIG_FILES = (*CONFIG_NAMES, "pyproject.toml")
RELINT_DELAY = 0.3  # seconds without an edit before the other files are linted again (see Part.relint)
WATCHED = ("**/.mlops-lint.yaml", "**/.mlops-lint.yml", "**/pyproject.toml", "**/*.{yaml,yml,json}",
           "**/Dockerfile*", "**/*.sh", "**/*.{tf,tfvars,bicep,bicepparam}")

log = logging.getLogger("mlops-lint.server")


class Server(LanguageServer):
    """The protocol's side: which documents are open, what was published, the background work."""

    def __init__(self) -> None:
        super().__init__("mlops-lint", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self.state: Workspace | None = None
        self.published: dict[str, tuple] = {}  # uri -> the results last published for it
        self.pending: dict[Any, Any] = {}  # id(Part), or ("whole", root) -> its scheduled or running background work
        self.generation = 0  # bumped by every edit: a background relint stops when it changes
        self.failed: set[Path] = set()  # roots whose config is invalid: linted again once a config changes

    # -- the workspace ------------------------------------------------------------------------

    def model(self) -> Workspace:
        if self.state is None:
            from mlops_lint.cache import default_dir
            from mlops_lint.engine.memory import collector_paused
            from mlops_lint.registry import load_registry

            folders = [Path(to_fs_path(f.uri)) for f in self.workspace.folders.values()] if self.workspace else []
            if not folders and self.workspace is not None and self.workspace.root_path:
                folders = [Path(self.workspace.root_path)]
            cache = None if os.environ.get("MLOPS_LINT_NO_CACHE") else default_dir()  # the CLI's result cache
            with collector_paused():
                registry = load_registry(str(cache) if cache is not None else None)
            self.state = Workspace(registry, cache, folders)
        return self.state

    def open_paths(self) -> dict[str, str]:
        """Every open ``file:`` document: path -> uri."""
        found = {}
        for uri in list(self.workspace.text_documents):
            path = to_fs_path(uri) if uri.startswith("file:") else None
            if path:
                found[path] = uri
        return found

    # -- linting --------------------------------------------------------------------------------

    def lint(self, path: str, uri: str, saved: bool = False) -> None:
        """``path`` linted as its editor holds it; its diagnostics published (and those of other
        open files of its project whose findings changed). A file the project's last run did
        not lint (excluded by the config, not a manifest, new) waits for its save."""
        if os.path.basename(path) in CONFIG_FILES:  # read on save (a reload); its node pools' findings
            project = self.model().projects.get(self.model().root(path))  # as the last run read it
            if project is not None and os.path.basename(path) in CONFIG_NAMES:
                self.publish(path, uri, project)
            return
        document = self.workspace.get_text_document(uri)
        data = document.source.encode("utf-8", "surrogateescape")
        model = self.model()
        model.open(path, data)
        self.generation += 1
        folder = model.root(path)
        project = model.projects.get(folder)
        if project is None and folder in self.failed:
            return  # said once (window/showMessage); the config's save or change lints it again
        if project is None:
            self.whole(folder)
            project = model.projects.get(folder)
            if project is not None and project.part(project.display(path)) is None:
                project.outside.add(project.display(path))
            return
        display = project.display(path)
        part = project.part(display)
        if part is None and display in project.outside and not saved:
            return
        if part is not None and part.whole and not saved:  # a build reads it: the project again, once typing pauses
            self.later_whole(folder)
            return
        if part is None or part.whole:  # a new file, or one a build reads: the project again
            self.whole(folder)
            again = self.model().projects.get(folder)
            if again is not None and again.part(display) is None:
                again.outside.add(display)
            return
        part.update(display, data)
        self.publish(path, uri, project, force=True)
        self.publish_open(project, skip=path)
        if part.stale:  # this edit changed the index, or stopped the relint an earlier one started
            self.later(project, part)

    def whole(self, folder: Path) -> None:
        """A project linted whole by the engine, then every open file of it published."""
        model = self.model()
        try:
            project = model.projects[folder] = model.lint(folder)
        except ConfigError as exc:
            model.projects.pop(folder, None)
            self.failed.add(folder)
            self.show_message(f"mlops-lint: {exc}; nothing is linted under {folder} until the config is fixed",
                              lsp.MessageType.Error)
            for path, uri in self.open_paths().items():
                if model.root(path) == folder:
                    self.clear(uri)
            return
        for note in project.report.notes:
            log.info("%s: %s", note.path, note.message)
        self.publish_open(project)

    def later(self, project: Project, part: Part) -> None:
        """The files linted against the old index, linted again once the edits pause: the open
        ones first (published at once), then the rest (then every open file's findings again)."""
        previous = self.pending.pop(id(part), None)
        if previous is not None:
            previous.cancel()
        self.pending[id(part)] = self.loop.create_task(self.relint(project, part, self.generation))

    def later_whole(self, folder: Path) -> None:
        """A project whose builds read several files (kustomize, Helm) linted whole again once the
        edits pause (each keystroke would otherwise cost a whole run)."""
        previous = self.pending.pop(("whole", folder), None)
        if previous is not None:
            previous.cancel()
        self.pending[("whole", folder)] = self.loop.create_task(self.whole_later(folder, self.generation))

    async def whole_later(self, folder: Path, generation: int) -> None:
        try:
            await asyncio.sleep(RELINT_DELAY)
            if generation == self.generation:
                self.whole(folder)
        except asyncio.CancelledError:
            pass

    async def relint(self, project: Project, part: Part, generation: int) -> None:
        try:
            await asyncio.sleep(RELINT_DELAY)
            opened = [project.display(path) for path in self.open_paths() if self.model().root(path) == project.folder]
            for reduced in part.relint(opened):
                if generation != self.generation:
                    return
                if reduced:
                    self.publish_open(project)
                await asyncio.sleep(0)  # the messages that came meanwhile
        except asyncio.CancelledError:
            pass
        finally:
            if self.pending.get(id(part)) is asyncio.current_task():
                self.pending.pop(id(part), None)

    def reload(self) -> None:
        """The config changed (or files came and went): every project of an open file again."""
        model = self.model()
        for task in self.pending.values():
            task.cancel()
        self.pending.clear()
        self.failed.clear()
        model.forget()
        self.generation += 1
        for folder in dict.fromkeys(model.root(path) for path in self.open_paths()):
            self.whole(folder)

    # -- publishing -----------------------------------------------------------------------------

    def publish_open(self, project: Project, skip: str | None = None) -> None:
        for path, uri in self.open_paths().items():
            # a .mlops-lint.yaml is linted for its node-pools (linter.sources.config_pools); a pyproject.toml never
            if path != skip and os.path.basename(path) != "pyproject.toml" \
                    and self.model().root(path) == project.folder:
                self.publish(path, uri, project)

    def publish(self, path: str, uri: str, project: Project, force: bool = False) -> None:
        results = project.results(path)
        key = tuple(results)
        if not force and self.published.get(uri) == key:
            return
        self.published[uri] = key
        document = self.workspace.get_text_document(uri)
        text = Text(document.source)
        self.publish_diagnostics(uri, [diagnostic(result, text, self.href(result.rule)) for result in results],
                                 version=document.version)

    def href(self, code: str) -> str | None:
        """The rule's docs page (as SARIF's helpUri), for the editor's link on the code."""
        meta = self.model().registry.get(code)
        return meta.help_uri if meta is not None and meta.doc else None

    def clear(self, uri: str) -> None:
        self.published.pop(uri, None)
        self.publish_diagnostics(uri, [])

    # -- what the editor asks ----------------------------------------------------------------

    def findings_at(self, uri: str, start: lsp.Position, end: lsp.Position) -> tuple[Project | None, list, Text]:
        """The findings of ``uri`` whose range meets ``start``-``end`` (LSP positions)."""
        path = to_fs_path(uri)
        document = self.workspace.get_text_document(uri)
        text = Text(document.source)
        project = self.model().projects.get(self.model().root(path)) if path else None
        if project is None:
            return None, [], text
        found = []
        for result in project.results(path):
            where = text.range(result.span)
            if _before(where.end, start) or _before(end, where.start):
                continue
            found.append(result)
        return project, found, text

    def actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        project, found, text = self.findings_at(uri, params.range.start, params.range.end)
        if project is None:
            return []
        display = project.display(to_fs_path(uri))
        part = project.part(display)
        kind = part.sources[display].kind if part is not None else ""
        out: list[lsp.CodeAction] = []
        offered: set[tuple[str, int]] = set()
        for result in found:
            shown = diagnostic(result, text, self.href(result.rule))
            fix = result.autofix
            if fix is not None and fix.edits:
                edits = self.workspace_edit(project, fix.edits)
                if edits is not None:
                    title = f"{result.rule}: {fix.title}" + ("" if fix.safe else " (unsafe: changes behaviour beyond the rule)")
                    out.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[shown],
                                              edit=edits, is_preferred=fix.safe))
            if (result.rule, result.span.line) in offered:
                continue
            offered.add((result.rule, result.span.line))
            edit = disable_edit(result.rule, result.span.line, text, kind, display)
            if edit is not None:
                out.append(lsp.CodeAction(
                    title=f"Disable {result.rule} for this line (# mlops-lint: disable={result.rule})",
                    kind=lsp.CodeActionKind.QuickFix, diagnostics=[shown],
                    edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
        return out

    def workspace_edit(self, project: Project, edits: Any) -> lsp.WorkspaceEdit | None:
        """A fix's edits, by file, against each file's text as the editor (else the disk) has it."""
        by_file: dict[str, list] = {}
        for edit in edits:
            by_file.setdefault(edit.path, []).append(edit)
        changes = {}
        opened = {project.display(path): (path, uri) for path, uri in self.open_paths().items()}
        for display, own in by_file.items():
            path, uri = opened.get(display) or (os.fspath(project.folder / display), None)
            uri = uri or from_fs_path(path)
            if uri is None:
                return None
            source = self.text_of(path, uri)
            if source is None:
                return None
            changes[uri] = text_edits(own, Text(source))
        return lsp.WorkspaceEdit(changes=changes)

    def text_of(self, path: str, uri: str) -> str | None:
        if uri in self.workspace.text_documents:
            return self.workspace.get_text_document(uri).source
        try:
            return Path(path).read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        from mlops_lint.report.ruledoc import explain_text

        project, found, _ = self.findings_at(params.text_document.uri, params.position, params.position)
        pages = []
        for code in dict.fromkeys(result.rule for result in found):
            meta = self.model().registry.get(code)
            if meta is not None:
                pages.append(explain_text(meta))
        if not pages:
            return None
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value="\n\n---\n\n".join(pages)))


def _before(a: lsp.Position, b: lsp.Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


def make() -> Server:
    server = Server()

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: Server, params: lsp.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watch = capabilities.did_change_watched_files if capabilities is not None else None
        if watch is not None and watch.dynamic_registration:
            options = lsp.DidChangeWatchedFilesRegistrationOptions(
                watchers=[lsp.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED])
            await ls.register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
                id="mlops-lint-watch", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES, register_options=options)]))

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Server, params: lsp.DidOpenTextDocumentParams) -> None:
        _lint_uri(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Server, params: lsp.DidChangeTextDocumentParams) -> None:
        _lint_uri(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Server, params: lsp.DidSaveTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri) if params.text_document.uri.startswith("file:") else None
        if path and os.path.basename(path) in CONFIG_FILES:
            ls.reload()
        elif path:
            ls.lint(path, params.text_document.uri, saved=True)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Server, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        path = to_fs_path(uri) if uri.startswith("file:") else None
        ls.clear(uri)
        if not path or ls.state is None:
            return
        ls.state.close(path)  # the file is what the disk holds again
        project = ls.state.projects.get(ls.state.root(path))
        if project is None:
            return
        display = project.display(path)
        part = project.part(display)
        try:
            data = Path(path).read_bytes()
        except OSError:
            data = None
        if part is None or part.whole or data is None:
            ls.whole(project.folder)
            return
        part.update(display, data)
        if part.stale:
            ls.later(project, part)
        ls.publish_open(project)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: Server, params: lsp.DidChangeWatchedFilesParams) -> None:
        opened = set(ls.open_paths().values())
        for change in params.changes:
            path = to_fs_path(change.uri) if change.uri.startswith("file:") else None
            if not path:
                continue
            if os.path.basename(path) in CONFIG_FILES or change.type != lsp.FileChangeType.Changed:
                ls.reload()  # the config, or the project's files came or went
                return
            if change.uri not in opened and ls.state is not None:  # changed on disk, not in an editor
                project = ls.state.projects.get(ls.state.root(path))
                if project is not None:
                    display = project.display(path)
                    part = project.part(display)
                    try:
                        data = Path(path).read_bytes()
                    except OSError:
                        ls.reload()
                        return
                    if part is None or part.whole:
                        ls.whole(project.folder)
                    else:
                        part.update(display, data)
                        if part.stale:
                            ls.later(project, part)
                    ls.publish_open(project)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    def code_action(ls: Server, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return ls.actions(params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    def hover(ls: Server, params: lsp.HoverParams) -> lsp.Hover | None:
        return ls.hover(params)

    return server


def _lint_uri(ls: Server, uri: str) -> None:
    if not uri.startswith("file:"):
        return
    path = to_fs_path(uri)
    if path:
        ls.lint(path, uri)


def serve() -> None:
    """The server on stdin and stdout (nothing else may write to stdout)."""
    logging.basicConfig(level=logging.WARNING, format="mlops-lint server: %(message)s")
    make().start_io()
