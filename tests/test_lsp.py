"""`mlops-lint server` through the Language Server Protocol: pygls's own client drives ``python -m
mlops_lint server`` over its stdio, as an editor does (issue 39 item 2).

Diagnostics on open, change and save (the buffer's text, not the disk's); a cross-file finding
(QUE010: a PriorityClass of another file) updated when the other file changes; code actions (a
fix applied to the text, the unsafe ones marked, the disable comment); hover (the rule's page);
the config read again when it changes; UTF-16 columns on a line with non-ASCII text; the
server's incremental model equal to a whole run of the engine.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import BaseLanguageClient  # noqa: E402

from test_cli import VIOLATING, run  # noqa: E402

TIMEOUT = 30.0

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: runner
  namespace: ml
spec:
  priorityClassName: high-gpu
  containers:
    - {name: "é🚀x", image: "myregistry.azurecr.io/trainer:1.0", resources: {requests: {cpu: "1", memory: 1Gi}, limits: {cpu: "1", memory: 1Gi}}}
"""
PRIORITY = """\
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: high-gpu
value: 1000
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".mlops-lint.yaml").write_text("fail-on: warning\n")
    (root / "job.yaml").write_text(VIOLATING)
    (root / "pod.yaml").write_text(POD)
    (root / "pc.yaml").write_text(PRIORITY)
    return root


class Editor:
    """An editor: a pygls client on the server's stdio, keeping what was published per file."""

    def __init__(self, root: Path, cache: Path):
        self.root = root
        self.cache = cache
        self.client = BaseLanguageClient("test-editor", "1")
        self.diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}
        self.arrived = asyncio.Event()
        self.messages: list[str] = []

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def shown(params: lsp.ShowMessageParams) -> None:
            self.messages.append(params.message)
            self.arrived.set()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = params.diagnostics
            self.arrived.set()

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    async def __aenter__(self) -> "Editor":
        env = {**os.environ, "MLOPS_LINT_CACHE_DIR": str(self.cache)}
        env.pop("MLOPS_LINT_NO_CACHE", None)
        await self.client.start_io(sys.executable, "-m", "mlops_lint", "server", cwd=str(self.root), env=env)
        await self.client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), root_uri=self.root.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(uri=self.root.as_uri(), name="proj")]))
        self.client.initialized(lsp.InitializedParams())
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 10)
            self.client.exit(None)
        finally:
            await self.client.stop()

    async def until(self, name: str, check, what: str) -> list[lsp.Diagnostic]:
        """Wait until ``name``'s diagnostics satisfy ``check``."""
        uri = self.uri(name)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while uri not in self.diagnostics or not check(self.diagnostics[uri]):
            self.arrived.clear()
            left = deadline - loop.time()
            if left <= 0:
                raise AssertionError(f"{name}: {what}; last published: {self.codes(name)}")
            try:
                await asyncio.wait_for(self.arrived.wait(), left)
            except asyncio.TimeoutError:
                pass
        return self.diagnostics[uri]

    def codes(self, name: str) -> list[str]:
        return sorted(str(d.code) for d in self.diagnostics.get(self.uri(name), []))

    def open(self, name: str, text: str | None = None) -> None:
        text = (self.root / name).read_text() if text is None else text
        self.versions[name] = 1
        self.texts[name] = text
        self.client.text_document_did_open(lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=self.uri(name), language_id="yaml", version=1, text=text)))

    def change(self, name: str, text: str) -> None:
        """The whole text replaced (one incremental change over the whole old range)."""
        old = self.texts[name]
        lines = old.split("\n")
        end = lsp.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
        self.versions[name] += 1
        self.texts[name] = text
        self.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=self.uri(name), version=self.versions[name]),
            content_changes=[lsp.TextDocumentContentChangeEvent_Type1(
                range=lsp.Range(start=lsp.Position(line=0, character=0), end=end), text=text)]))

    def save(self, name: str) -> None:
        (self.root / name).write_text(self.texts[name])
        self.client.text_document_did_save(lsp.DidSaveTextDocumentParams(
            text_document=lsp.TextDocumentIdentifier(uri=self.uri(name))))

    async def actions(self, name: str, diagnostic: lsp.Diagnostic) -> list[lsp.CodeAction]:
        return await self.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=self.uri(name)), range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic])))


def drive(root: Path, cache: Path, scenario) -> None:
    async def main() -> None:
        async with Editor(root, cache) as editor:
            await scenario(editor)

    asyncio.run(main())


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """LSP text edits applied to ``text`` (positions in UTF-16 units, as the protocol's)."""
    lines = text.split("\n")

    def offset(position: lsp.Position) -> int:
        before = sum(len(line) + 1 for line in lines[:position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        units, chars = 0, 0
        while units < position.character and chars < len(line):
            units += len(line[chars].encode("utf-16-le")) // 2
            chars += 1
        return before + chars

    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]
    return text


def has(code: str):
    return lambda found: any(d.code == code for d in found)


def lacks(code: str):
    return lambda found: not any(d.code == code for d in found)


# ---- diagnostics ----------------------------------------------------------------------------


def test_open_change_save_and_buffer_not_disk(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        found = await editor.until("job.yaml", has("GPU001"), "GPU001 on open")
        gpu = next(d for d in found if d.code == "GPU001")
        assert (gpu.range.start.line, gpu.range.start.character) == (16, 12)  # 17:13, 1-based
        assert gpu.severity == lsp.DiagnosticSeverity.Error and gpu.source == "mlops-lint"
        assert "sets no nvidia.com/gpu limit" in gpu.message
        assert gpu.code_description is not None and gpu.code_description.href.endswith("GPU001.md")
        # an unsaved edit is linted from the buffer: the limit added, GPU001 gone (the disk still lacks it)
        fixed = VIOLATING.replace("          limits:\n", "          limits:\n            nvidia.com/gpu: 1\n", 1)
        assert fixed != VIOLATING
        editor.change("job.yaml", fixed)
        await editor.until("job.yaml", lacks("GPU001"), "GPU001 gone after the change")
        assert "nvidia.com/gpu: 1\n          limits:\n            cpu" in (project / "job.yaml").read_text()
        # back to the violating text, then saved: GPU001 again, on save too
        editor.change("job.yaml", VIOLATING)
        await editor.until("job.yaml", has("GPU001"), "GPU001 back after the change")
        editor.diagnostics.clear()
        editor.save("job.yaml")
        await editor.until("job.yaml", has("GPU001"), "diagnostics on save")

    drive(project, tmp_path / "cache", scenario)
    assert any((tmp_path / "cache").iterdir())  # the result cache the CLI uses (MLOPS_LINT_CACHE_DIR)


def test_cross_file_finding_follows_the_other_file(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("pod.yaml")
        await editor.until("pod.yaml", has("IMG002"), "the pod's findings")
        assert "QUE010" not in editor.codes("pod.yaml")
        editor.open("pc.yaml")
        # the PriorityClass renamed in its (unsaved) buffer: the pod in the other file now names none
        editor.change("pc.yaml", PRIORITY.replace("high-gpu", "low-gpu"))
        found = await editor.until("pod.yaml", has("QUE010"), "QUE010 after the other file changed")
        que = next(d for d in found if d.code == "QUE010")
        assert que.range.start.line == 6 and "low-gpu" in que.message
        editor.change("pc.yaml", PRIORITY)
        await editor.until("pod.yaml", lacks("QUE010"), "QUE010 gone once the name is back")

    drive(project, tmp_path / "cache", scenario)


def test_columns_are_utf16_on_a_non_ascii_line(project, tmp_path):
    line = POD.splitlines()[8]
    code_points = line.index('"myregistry')  # 0-based, in code points: what our column counts (27)
    units = len(line[:code_points].encode("utf-16-le")) // 2  # the emoji is two UTF-16 units
    assert units == code_points + 1

    async def scenario(editor: Editor) -> None:
        editor.open("pod.yaml")
        found = await editor.until("pod.yaml", has("IMG002"), "IMG002")
        img = next(d for d in found if d.code == "IMG002")
        assert (img.range.start.line, img.range.start.character) == (8, units)
        end = line.index('"', code_points + 1) + 1
        assert img.range.end.character == len(line[:end].encode("utf-16-le")) // 2

    drive(project, tmp_path / "cache", scenario)


# ---- code actions and hover -----------------------------------------------------------------


def test_code_action_applies_the_fix(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        found = await editor.until("job.yaml", has("GPU001"), "GPU001")
        gpu = next(d for d in found if d.code == "GPU001")
        actions = await editor.actions("job.yaml", gpu)
        fix = next(a for a in actions if a.title.startswith("GPU001: ") and "disable" not in a.title.lower())
        assert fix.kind == lsp.CodeActionKind.QuickFix and fix.is_preferred and "unsafe" not in fix.title
        edits = fix.edit.changes[editor.uri("job.yaml")]
        fixed = apply(VIOLATING, edits)
        assert fixed == VIOLATING.replace("            memory: 16Gi\n        volumeMounts:",
                                          "            memory: 16Gi\n            nvidia.com/gpu: 1\n        volumeMounts:", 1)
        # what `mlops-lint --fix` writes
        copy = tmp_path / "copy"
        copy.mkdir()
        (copy / "job.yaml").write_text(VIOLATING)
        run(["job.yaml", "--fix", "--select", "GPU001", "--no-cache"], copy)
        assert (copy / "job.yaml").read_text() == fixed
        assert (project / "job.yaml").read_text() == VIOLATING  # the server wrote nothing
        editor.change("job.yaml", fixed)
        await editor.until("job.yaml", lacks("GPU001"), "GPU001 gone once the fix is applied")

    drive(project, tmp_path / "cache", scenario)


def test_unsafe_fix_is_marked(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("pod.yaml")
        found = await editor.until("pod.yaml", has("SEC001"), "SEC001")
        sec = next(d for d in found if d.code == "SEC001")
        actions = await editor.actions("pod.yaml", sec)
        unsafe = [a for a in actions if a.title.startswith("SEC001: ")]
        assert unsafe and all("(unsafe" in a.title and not a.is_preferred for a in unsafe)

    drive(project, tmp_path / "cache", scenario)


def test_disable_quick_fix(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        found = await editor.until("job.yaml", has("GPU001"), "GPU001")
        gpu = next(d for d in found if d.code == "GPU001")
        actions = await editor.actions("job.yaml", gpu)
        disable = next(a for a in actions if a.title.startswith("Disable GPU001"))
        text = apply(VIOLATING, disable.edit.changes[editor.uri("job.yaml")])
        assert text.splitlines()[16] == "            nvidia.com/gpu: 1  # mlops-lint: disable=GPU001"
        assert text.replace("  # mlops-lint: disable=GPU001", "", 1) == VIOLATING
        editor.change("job.yaml", text)
        await editor.until("job.yaml", lacks("GPU001"), "GPU001 suppressed by the comment")
        # a line that holds a comment already: the directive goes on its own line above it
        commented = VIOLATING.replace("nvidia.com/gpu: 1\n", "nvidia.com/gpu: 1  # one GPU\n", 1)
        editor.change("job.yaml", commented)
        gpu = next(d for d in await editor.until("job.yaml", has("GPU001"), "GPU001 back") if d.code == "GPU001")
        disable = next(a for a in await editor.actions("job.yaml", gpu) if a.title.startswith("Disable GPU001"))
        above = apply(commented, disable.edit.changes[editor.uri("job.yaml")])
        assert above.splitlines()[16:18] == ["            # mlops-lint: disable=GPU001",
                                             "            nvidia.com/gpu: 1  # one GPU"]
        editor.change("job.yaml", above)
        await editor.until("job.yaml", lacks("GPU001"), "GPU001 suppressed by the comment above it")
        # a second rule on a line that holds a directive: its id is added to that directive
        editor.open("pod.yaml")
        sec = next(d for d in await editor.until("pod.yaml", has("SEC001"), "SEC001") if d.code == "SEC001")
        disable = next(a for a in await editor.actions("pod.yaml", sec) if a.title.startswith("Disable SEC001"))
        pod = apply(POD, disable.edit.changes[editor.uri("pod.yaml")])
        assert pod.splitlines()[8].endswith("}}}  # mlops-lint: disable=SEC001")
        editor.change("pod.yaml", pod)
        await editor.until("pod.yaml", lacks("SEC001"), "SEC001 suppressed")
        sec2 = next(d for d in editor.diagnostics[editor.uri("pod.yaml")] if d.code == "SEC002")
        more = next(a for a in await editor.actions("pod.yaml", sec2) if a.title.startswith("Disable SEC002"))
        both = apply(pod, more.edit.changes[editor.uri("pod.yaml")])
        assert both.splitlines()[8].endswith("}}}  # mlops-lint: disable=SEC001,SEC002")
        editor.change("pod.yaml", both)
        await editor.until("pod.yaml", lambda found: lacks("SEC002")(found) and has("IMG002")(found),
                           "SEC002 suppressed by the same comment")

    drive(project, tmp_path / "cache", scenario)


def test_disable_comment_placement():
    """Where the disable comment goes (linter.lsp.convert.disable_edit), by kind of file."""
    from mlops_lint.lsp.convert import Text, disable_edit
    from mlops_lint.model.document import DOCKERFILE, K8S, TERRAFORM

    script = "spec:\n  command:\n    - |\n      pip install x\n  image: y\n"
    text = Text(script)
    assert disable_edit("DKR004", 4, text, K8S, "job.yaml") is None  # inside a block scalar: its text
    assert disable_edit("IMG002", 5, text, K8S, "job.yaml").new_text == "  # mlops-lint: disable=IMG002"
    assert disable_edit("IMG002", 5, text, K8S, "job.json") is None  # JSON has no comments
    assert disable_edit("AKS001", 1, Text("resource x {}\n"), TERRAFORM, "main.tf") is None
    docker = Text("FROM python:3.12\nRUN pip install torch  \\\n    numpy\n")
    edit = disable_edit("DKR004", 2, docker, DOCKERFILE, "Dockerfile")  # a Dockerfile's `#` after an instruction is its text
    assert edit.new_text == "# mlops-lint: disable=DKR004\n" and edit.range.start.line == 1
    crlf = Text("a: 1\r\n  b: 2 # x\r\n")
    assert disable_edit("X1", 2, crlf, K8S, "a.yaml").new_text == "  # mlops-lint: disable=X1\r\n"


def test_hover_shows_the_rules_page(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        found = await editor.until("job.yaml", has("GPU001"), "GPU001")
        gpu = next(d for d in found if d.code == "GPU001")
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=editor.uri("job.yaml")), position=gpu.range.start))
        assert hover is not None and hover.contents.kind == lsp.MarkupKind.Markdown
        assert hover.contents.value.startswith("# gpu-limit-missing (GPU001)")
        assert "Severity: error" in hover.contents.value
        nothing = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=editor.uri("job.yaml")), position=lsp.Position(line=0, character=0)))
        assert nothing is None

    drive(project, tmp_path / "cache", scenario)


# ---- configuration --------------------------------------------------------------------------


def test_config_node_pools_get_their_diagnostics(project, tmp_path):
    """A config with node-pools is a linted file: its AKS findings are published for it, as the
    last run read it (the config is read again when saved)."""
    pools = ("fail-on: warning\nnode-pools:\n  - name: gpunp\n    vm-size: Standard_NC4as_T4_v3\n"
             "    labels: {accelerator: nvidia}\n")

    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        await editor.until("job.yaml", has("GPU001"), "GPU001")
        editor.open(".mlops-lint.yaml", "fail-on: warning\n")
        editor.change(".mlops-lint.yaml", pools)
        editor.save(".mlops-lint.yaml")
        found = await editor.until(".mlops-lint.yaml", has("AKS001"), "AKS001 on the config's GPU pool")
        aks001 = next(d for d in found if d.code == "AKS001")
        assert (aks001.range.start.line, aks001.range.start.character) == (3, 4)  # vm-size, 0-based
        editor.change(".mlops-lint.yaml", pools + "    taints: [sku=gpu:NoSchedule]\n")
        editor.save(".mlops-lint.yaml")
        await editor.until(".mlops-lint.yaml", lacks("AKS001"), "AKS001 gone once the config taints the pool")

    drive(project, tmp_path / "cache", scenario)


def test_config_reloaded_when_it_changes(project, tmp_path):
    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        await editor.until("job.yaml", has("GPU001"), "GPU001")
        (project / ".mlops-lint.yaml").write_text("fail-on: warning\nignore: [GPU001]\n")
        editor.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(changes=[
            lsp.FileEvent(uri=editor.uri(".mlops-lint.yaml"), type=lsp.FileChangeType.Changed)]))
        await editor.until("job.yaml", lacks("GPU001"), "GPU001 ignored by the new config")
        # saving the config in the editor reloads it too
        editor.open(".mlops-lint.yaml", "fail-on: warning\n")
        editor.texts[".mlops-lint.yaml"] = "fail-on: warning\n"
        editor.save(".mlops-lint.yaml")
        await editor.until("job.yaml", has("GPU001"), "GPU001 back once the config is saved without the ignore")
        assert editor.diagnostics.get(editor.uri(".mlops-lint.yaml"), []) == []  # the config is not linted as a manifest
        # an invalid config: said once, the file's diagnostics cleared, no traceback; fixed: linted again
        editor.texts[".mlops-lint.yaml"] = "fail-on: sometimes\n"
        editor.save(".mlops-lint.yaml")
        await editor.until("job.yaml", lambda found: found == [], "diagnostics cleared under an invalid config")
        assert len(editor.messages) == 1 and "fail-on" in editor.messages[0] and ".mlops-lint.yaml" in editor.messages[0]
        editor.change("job.yaml", VIOLATING + "# edited\n")
        editor.texts[".mlops-lint.yaml"] = "fail-on: warning\n"
        editor.save(".mlops-lint.yaml")
        await editor.until("job.yaml", has("GPU001"), "GPU001 once the config is valid again")
        assert len(editor.messages) == 1

    drive(project, tmp_path / "cache", scenario)


# ---- the incremental model against a whole run ----------------------------------------------


def test_incremental_model_equals_a_whole_run(project):
    """An edit to a file other files look things up in, once the others are linted again, gives
    what a whole run of the engine gives on the same texts; an unchanged file is not linted again."""
    from mlops_lint.lsp.workspace import Workspace
    from mlops_lint.registry import load_registry

    workspace = Workspace(load_registry(), None, [project])
    try:
        model = workspace.project(str(project / "pod.yaml"))
        part = model.part("pc.yaml")
        assert part is not None and not part.whole
        assert [r.rule for r in model.results(str(project / "pod.yaml"))].count("QUE010") == 0
        renamed = PRIORITY.replace("high-gpu", "low-gpu").encode()
        workspace.open(str(project / "pc.yaml"), renamed)
        assert part.update("pc.yaml", renamed) is True  # the index changed
        assert part.stale == set(part.outcomes) - {"pc.yaml"}
        list(part.relint(["pod.yaml"]))
        assert not part.stale
        assert findings(part) == findings(workspace.lint(project).parts[0])
        assert "QUE010" in [r.rule for r in model.results(str(project / "pod.yaml"))]
        outcome = part.outcomes["pc.yaml"]
        assert part.update("pc.yaml", renamed) is False and part.outcomes["pc.yaml"] is outcome  # unchanged: not linted
        # a comment added to a line: what other files look up is as it was, to the positions (the
        # index stands, nothing is stale), and the file is linted with the index's own objects
        commented = renamed.replace(b"value: 1000", b"value: 1000  # a note")
        workspace.open(str(project / "pc.yaml"), commented)
        index = part.index
        assert part.update("pc.yaml", commented) is False and part.index is index and not part.stale
        assert findings(part) == findings(workspace.lint(project).parts[0])
        # a line added above it moves it: the index is rebuilt
        moved = b"# a note\n" + renamed
        workspace.open(str(project / "pc.yaml"), moved)
        assert part.update("pc.yaml", moved) is True and part.index is not index
        list(part.relint([]))
        assert findings(part) == findings(workspace.lint(project).parts[0])
        # an edit to a file no other file looks into (the pod): the PROJECT rules' facts stay, and
        # the findings are a whole run's
        pod = POD.replace("cpu: \"1\", memory: 1Gi}, limits", "cpu: \"2\", memory: 1Gi}, limits").encode()
        workspace.open(str(project / "pod.yaml"), pod)
        assert part.update("pod.yaml", pod) is False and not part.stale
        assert findings(part) == findings(workspace.lint(project).parts[0])
    finally:
        workspace.close(str(project / "pc.yaml"))
        workspace.close(str(project / "pod.yaml"))


def findings(part) -> dict:
    return {display: part.findings(display) for display in part.results}


def test_position_conversion():
    """Our 1-based code-point columns to LSP's 0-based UTF-16 ones (linter.lsp.convert.Text)."""
    from mlops_lint.lsp.convert import Text
    from mlops_lint.model.position import Span

    text = Text("a: é🚀b\r\nc: d\n")
    assert text.utf16(1, 1) == lsp.Position(line=0, character=0)
    assert text.utf16(1, 4) == lsp.Position(line=0, character=3)  # é: one code point, one unit
    assert text.utf16(1, 6) == lsp.Position(line=0, character=6)  # after 🚀: one code point, two units
    assert text.utf16(1, 40) == lsp.Position(line=0, character=7)  # past the line's end: its end (no \r)
    assert text.utf16(9, 1) == lsp.Position(line=2, character=0)  # past the text: its end
    assert text.range(Span(2, 4, 2, 5)) == lsp.Range(start=lsp.Position(line=1, character=3),
                                                     end=lsp.Position(line=1, character=4))
    # a byte-order mark is not in our columns, and is one UTF-16 unit in the editor's
    assert Text("\ufeffkind: Pod\n").utf16(1, 7) == lsp.Position(line=0, character=7)
    assert Text("\ufeffkind: Pod\n").utf16(2, 1) == lsp.Position(line=1, character=0)


def test_a_file_the_project_does_not_lint_gets_no_diagnostics(project, tmp_path):
    """A file the config excludes is not linted, in the editor as on the command line."""
    (project / ".mlops-lint.yaml").write_text("fail-on: warning\nexclude: [skip/]\n")
    (project / "skip").mkdir()
    (project / "skip" / "job.yaml").write_text(VIOLATING)

    async def scenario(editor: Editor) -> None:
        editor.open("skip/job.yaml")
        editor.change("skip/job.yaml", VIOLATING + "# edited\n")
        editor.open("job.yaml")
        await editor.until("job.yaml", has("GPU001"), "GPU001 in the file the project lints")
        hover = await editor.client.text_document_hover_async(lsp.HoverParams(
            text_document=lsp.TextDocumentIdentifier(uri=editor.uri("skip/job.yaml")),
            position=lsp.Position(line=16, character=14)))
        assert hover is None
        assert editor.codes("skip/job.yaml") == []

    drive(project, tmp_path / "cache", scenario)


def test_a_workspace_opened_through_a_link(project, tmp_path):
    """An editor that names the files through a link to the folder (macOS's /tmp) gets the
    diagnostics and the fixes at the names it uses."""
    link = tmp_path / "link"
    link.symlink_to(project, target_is_directory=True)

    async def scenario(editor: Editor) -> None:
        editor.open("job.yaml")
        gpu = next(d for d in await editor.until("job.yaml", has("GPU001"), "GPU001 through the link")
                   if d.code == "GPU001")
        fix = next(a for a in await editor.actions("job.yaml", gpu) if a.title.startswith("GPU001: "))
        assert list(fix.edit.changes) == [editor.uri("job.yaml")] and editor.uri("job.yaml").startswith(link.as_uri())

    drive(link, tmp_path / "cache", scenario)


def test_a_warm_result_cache_still_gives_the_model(project, tmp_path):
    """A project the CLI's result cache answers for whole is still indexed for the server
    (LintRequest.indexed), with the findings of a cold run."""
    from mlops_lint.lsp.workspace import Workspace
    from mlops_lint.registry import load_registry

    cache = tmp_path / "cache"
    cold = Workspace(load_registry(), cache, [project]).lint(project)
    warm = Workspace(load_registry(), cache, [project]).lint(project)
    assert findings(warm.parts[0]) == findings(cold.parts[0]) and "QUE010" not in str(findings(cold.parts[0]))
    part = warm.parts[0]
    assert any(d.path == "pc.yaml" for d in part.index.documents)  # the PriorityClass, indexed
    renamed = PRIORITY.replace("high-gpu", "low-gpu").encode()
    assert part.update("pc.yaml", renamed) is True
    list(part.relint([]))
    assert "QUE010" in [r.rule for r in part.findings("pod.yaml")]


@pytest.mark.skipif(not (shutil.which("kubectl") or shutil.which("kustomize")), reason="no kustomize to build with")
def test_a_kustomize_overlay_is_linted_as_built(tmp_path):
    """A file a kustomize build reads: its findings are the built output's, at the file the user
    edits, and an edit to it is linted (the project whole again, once typing pauses)."""
    root = tmp_path / "proj"
    root.mkdir()
    shutil.copytree(Path(__file__).resolve().parent.parent / "fixtures" / "kustomize", root / "k8s")
    name = "k8s/overlays/prod/gpu-limit.yaml"

    async def scenario(editor: Editor) -> None:
        editor.open(name)
        gpu = next(d for d in await editor.until(name, has("GPU003"), "GPU003 of the prod overlay") if d.code == "GPU003")
        assert (gpu.range.start.line, gpu.range.start.character) == (11, 28) and "after overlay k8s/overlays/prod" in gpu.message
        editor.change(name, editor.texts[name].replace("nvidia.com/gpu: 2", "nvidia.com/gpu: 1"))
        await editor.until(name, lacks("GPU003"), "GPU003 gone once the limit equals the request (unsaved)")

    drive(root, tmp_path / "cache", scenario)


def test_server_without_pygls_says_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pygls", None)  # import pygls raises ImportError
    result = run(["server"], tmp_path)
    assert result.exit_code == 2
    assert 'the language server needs pygls: pip install "mlops-lint[lsp]"' in result.output
