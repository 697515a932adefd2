"""The language server's latency: how long after an edit its diagnostics are published.

    python bench/lsp.py [FOLDER] [--files 1000] [--edits 30] [--json FILE]

``mlops-lint server`` is started as an editor starts it (``python -m mlops_lint server`` on stdio,
driven by pygls's own client, which ``pip install -e ".[test]"`` brings), with a result cache of
its own, on FOLDER (default: ../shared/perf's generator's corpus of ``--files`` files, made as
``bench/run.py`` makes it). Then, for ``--edits`` files picked with a fixed seed
(``random.Random(20261205)``), one after another: the file is opened (its diagnostics awaited),
edited three times: a comment line appended (its text changes, its objects do not), then its
first object renamed (a letter added to the first ``name:``: for a file other files look things
up in, a queue, a PriorityClass, a NetworkPolicy, most of the perf corpus, the index is rebuilt
and every other file's relint starts in the background, which the next edits meet), then its
text as it was; each edit timed from sending ``textDocument/didChange`` to receiving the
``publishDiagnostics`` of that version; then it is closed. Also timed: the first
diagnostics (the whole project's run, with an empty cache).

Target (issue 39): the median edit's diagnostics within 150 ms on the perf corpus's 1,000 files.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEED = 20261205
TARGET_MS = 150.0


async def _measure(folder: Path, edits: int, cache: Path) -> dict:
    from lsprotocol import types as lsp
    from pygls.lsp.client import BaseLanguageClient

    client = BaseLanguageClient("bench", "1")
    arrived: dict[str, asyncio.Event] = {}
    seen: dict[tuple[str, int | None], float] = {}

    @client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def published(params: lsp.PublishDiagnosticsParams) -> None:
        seen.setdefault((params.uri, params.version), time.perf_counter())
        event = arrived.get(params.uri)
        if event is not None:
            event.set()

    async def version(uri: str, number: int) -> float:
        while (uri, number) not in seen:
            event = arrived.setdefault(uri, asyncio.Event())
            event.clear()
            await asyncio.wait_for(event.wait(), 120)
        return seen[(uri, number)]

    env = {**os.environ, "MLOPS_LINT_CACHE_DIR": str(cache),
           "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("MLOPS_LINT_NO_CACHE", None)
    await client.start_io(sys.executable, "-m", "mlops_lint", "server", cwd=str(folder), env=env)
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(), root_uri=folder.as_uri(),
        workspace_folders=[lsp.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)]))
    client.initialized(lsp.InitializedParams())
    names = sorted(p.name for p in folder.iterdir() if p.suffix in (".yaml", ".yml"))
    picked = random.Random(SEED).sample(names, min(edits, len(names)))
    latencies: list[tuple[str, float]] = []
    first = None
    try:
        for name in picked:
            uri = (folder / name).as_uri()
            text = (folder / name).read_text(encoding="utf-8")
            start = time.perf_counter()
            client.text_document_did_open(lsp.DidOpenTextDocumentParams(
                text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)))
            opened = await version(uri, 1) - start
            if first is None:
                first = opened
            lines = text.split("\n")
            end = lsp.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
            edits_of = (("comment", text + "# edited\n"), ("rename", text.replace("name: ", "name: e", 1)),
                        ("back", text))
            for number, (kind, new) in enumerate(edits_of, 2):
                await asyncio.sleep(0.1)  # a typist's pause
                start = time.perf_counter()
                client.text_document_did_change(lsp.DidChangeTextDocumentParams(
                    text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=number),
                    content_changes=[lsp.TextDocumentContentChangeEvent_Type1(
                        range=lsp.Range(start=lsp.Position(line=0, character=0), end=end), text=new)]))
                latencies.append((name, kind, (await version(uri, number) - start) * 1000))
                lines = new.split("\n")
                end = lsp.Position(line=len(lines) - 1, character=len(lines[-1].encode("utf-16-le")) // 2)
            client.text_document_did_close(lsp.DidCloseTextDocumentParams(
                text_document=lsp.TextDocumentIdentifier(uri=uri)))
    finally:
        await asyncio.wait_for(client.shutdown_async(None), 30)
        client.exit(None)
        await client.stop()
    values = sorted(ms for _, _, ms in latencies)
    kinds = {kind: statistics.median(ms for _, k, ms in latencies if k == kind) for _, kind, _ in latencies}
    return {"files": len(names), "edits": len(values), "median_ms": statistics.median(values),
            "p90_ms": values[int(0.9 * (len(values) - 1))], "max_ms": values[-1], "min_ms": values[0],
            "first_diagnostics_s": first, "target_ms": TARGET_MS,
            "median_ms_by_edit": kinds,
            "slowest": [[name, kind, round(ms, 1)] for name, kind, ms in sorted(latencies, key=lambda item: -item[2])[:5]]}


def edit_latency(folder: Path, edits: int = 30) -> dict:
    """The figures of one measurement on ``folder`` (see the module's docstring)."""
    cache = Path(tempfile.mkdtemp(prefix="mlops-lint-lsp-cache-"))
    try:
        return asyncio.run(_measure(folder.resolve(), edits, cache))
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def available() -> bool:
    try:
        import pygls  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, help="the project (default: the perf corpus, made here)")
    parser.add_argument("--files", type=int, default=1000, help="the perf corpus's size when no folder is given")
    parser.add_argument("--edits", type=int, default=30, help="files edited (each three times, the last back as it was)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    if not available():
        raise SystemExit('bench/lsp.py: pygls is not installed (pip install -e ".[test]")')
    base = None
    folder = args.folder
    if folder is None:
        sys.path.insert(0, str(HERE))
        import scaling

        base = Path(tempfile.mkdtemp(prefix="mlops-lint-lsp-"))
        folder = scaling.make_corpus("perf", base, [args.files])[args.files]
    try:
        figures = edit_latency(folder, args.edits)
    finally:
        if base is not None:
            shutil.rmtree(base, ignore_errors=True)
    verdict = "PASS" if figures["median_ms"] <= TARGET_MS else "FAIL"
    print(f"language server, {figures['files']:,} files: diagnostics after an edit, median {figures['median_ms']:.0f} ms "
          f"(p90 {figures['p90_ms']:.0f} ms, max {figures['max_ms']:.0f} ms, {figures['edits']} edits; by edit: "
          + ", ".join(f"{kind} {ms:.0f} ms" for kind, ms in figures["median_ms_by_edit"].items()) + "; "
          f"target <= {TARGET_MS:.0f} ms: {verdict}); first diagnostics (the whole project's run, cache empty) "
          f"{figures['first_diagnostics_s']:.2f} s")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
