"""Per-rule cost and how it grows: each rule's time per file at N files, against its time per
file at the smallest N.

    python bench/scaling.py [--files 1000,2000,5000,10000] [--corpus perf|fixtures] [--json FILE] [--check]

For each size N a corpus of N files is made once (``perf``: ../shared/perf's generator, the
article's own manifests replicated with unique names, when ../shared is there; ``fixtures``:
``bench/corpus.py``), then linted at ``--jobs 1`` with no cache (in a process of its own for each
size and repeat, started from the corpus's folder), with every call
of a rule (per view, per file's facts, per PROJECT reduction) timed and added to the rule's
total. What a rule spends building a shared view the first time it asks (a pod's requests, its
placement) is counted to that rule: the sum is the run's rule time, whichever rule pays.

A rule is **linear** when its time per file at every N is at most ``--limit`` (1.3) times its
time per file at the smallest N. On a loaded machine, or past the CPU caches, every rule slows
per file alike; the last column divides each rule's growth by the median rule's, which is what
the rule's own algorithm adds (a rule that scans the project per view shows there at any load). Rules that cost less than ``--floor-ms`` (20 ms) at the largest
N are shown but not judged: their totals are dominated by timer and machine noise. Each size is
timed ``--repeat`` times and the median per rule kept (a minimum would flatter a noisy machine).
``--check`` exits 1 when a judged rule is not linear.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED_PERF = ROOT.parent / "shared" / "perf"
SEED = ROOT.parent / "shared" / "seed" / "mlops-aks-best-practices.txt"


def make_corpus(kind: str, base: Path, sizes: list[int]) -> dict[int, Path]:
    """One folder of N files per size."""
    folders = {}
    if kind == "perf":
        if not (SHARED_PERF / "make_corpus.py").exists():
            raise SystemExit(f"bench/scaling.py: {SHARED_PERF} is not there; use --corpus fixtures")
        seeds = base / "seed-manifests"
        subprocess.run([sys.executable, str(SHARED_PERF / "extract_seeds.py"), str(SEED), str(seeds)],
                       check=True, stdout=subprocess.DEVNULL)
        subprocess.run([sys.executable, str(SHARED_PERF / "make_corpus.py"), *map(str, sizes)], check=True,
                       stdout=subprocess.DEVNULL, env={**os.environ, "PERF_DIR": str(base)})
        for n in sizes:
            folders[n] = base / f"corpus-{n}"
    else:
        for n in sizes:
            folders[n] = base / f"fixtures-{n}"
            subprocess.run([sys.executable, str(HERE / "corpus.py"), str(n), str(folders[n])], check=True,
                           stdout=subprocess.DEVNULL)
    return folders


def rule_times(folder: Path, extra: dict | None = None, *, rules: bool = True) -> tuple[dict[str, float], float, int]:
    """Seconds per rule code for one in-process lint of ``folder``, the run's wall time, and the
    number of files linted. With ``extra``, also the seconds spent evaluating CRDs' CEL rules
    (``linter.validation.celrules.cel_issues``, SCH002's part that runs ``x-kubernetes-validations``)
    as ``extra["cel"]``; ``rules=False`` leaves the rules untimed (no timer's cost in the wall)."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # this checkout's code, as the bench's commands run it
    from msgspec.structs import force_setattr

    from mlops_lint.cli import main
    from mlops_lint.engine import runner as runner_module

    totals: dict[str, float] = defaultdict(float)
    clock = time.perf_counter
    Runner = runner_module.Runner
    real_call_all, real_collect = Runner.call_all, Runner.collect

    def call_all(self, rules, view, path, obj, where, route=None):  # each rule of a view timed apart
        for meta in rules:
            start = clock()
            try:
                real_call_all(self, (meta,), view, path, obj, where, route)
            finally:
                totals[meta.code] += clock() - start

    def collect(self, document):
        wrapped = []
        for meta in self.collectors:  # each collect function timed under the first rule that has it
            function = meta.collect
            if getattr(function, "_timed", False):
                continue

            def timed(obj, context, function=function, code=meta.code):
                start = clock()
                try:
                    return function(obj, context)
                finally:
                    totals[code] += clock() - start
            timed._timed = True  # type: ignore[attr-defined]
            wrapped.append((meta, function))
            force_setattr(meta, "collect", timed)
        try:
            return real_collect(self, document)
        finally:
            for meta, function in wrapped:
                force_setattr(meta, "collect", function)

    from mlops_lint.validation import celrules

    real_cel = celrules.cel_issues
    cel = [0.0]

    def cel_issues(body, schema, known):
        begun = clock()
        try:
            return real_cel(body, schema, known)
        finally:
            cel[0] += clock() - begun

    if rules:
        Runner.call_all, Runner.collect = call_all, collect
    if extra is not None:
        celrules.cel_issues = cel_issues
    out = Path(tempfile.mkdtemp()) / "report.json"
    start = clock()
    try:
        main([str(folder), "--jobs", "1", "--no-cache", "-q", "--fail-on", "never", "--format", "json", "-o", str(out)])
    except SystemExit:
        pass
    finally:
        Runner.call_all, Runner.collect = real_call_all, real_collect
        celrules.cel_issues = real_cel
    wall = clock() - start
    if extra is not None:
        extra["cel"] = cel[0]
    import gc

    gc.unfreeze()  # the engine froze the run's objects (as the command does, which then exits):
    gc.collect()  # in this process the next size would otherwise run beside every earlier one's heap
    files = json.loads(out.read_text())["summary"].get("files", 0)
    shutil.rmtree(out.parent, ignore_errors=True)
    return dict(totals), wall, files


def cel_share_apart(folder: Path) -> dict[str, float]:
    """One ``--jobs 1`` lint of ``folder`` in a process of its own, the rules untimed: its wall
    time, the seconds spent evaluating CRDs' CEL rules, and their share of the run."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--cel", str(folder)], cwd=folder,
                          check=True, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    data = json.loads(done.stdout.splitlines()[-1])
    return {"seconds": data["cel"], "wall": data["wall"], "share": data["cel"] / data["wall"] if data["wall"] else 0.0}


def rule_times_apart(folder: Path) -> tuple[dict[str, float], float, int]:
    """:func:`rule_times` in a process of its own, started from ``folder`` (its project root, as
    the CLI would find it): every size starts from the same empty heap, as each command does.
    One process for all sizes kept every earlier size's caches alive (the run's weak and
    memoised views, the frozen objects): at 10,000 files it held about 5 GB and ran 20 minutes."""
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--one", str(folder)], cwd=folder,
                          check=True, stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(ROOT)})
    data = json.loads(done.stdout.splitlines()[-1])  # the last line: the lint itself prints nothing (-q, -o)
    return data["rules"], data["wall"], data["files"]


def measure(folders: dict[int, Path], repeat: int) -> dict[int, dict]:
    results = {}
    for n, folder in folders.items():
        runs: dict[str, list[float]] = {}
        walls = []
        for _ in range(repeat):
            totals, wall, files = rule_times_apart(folder)
            walls.append(wall)
            for code, seconds in totals.items():
                runs.setdefault(code, []).append(seconds)
        results[n] = {"files": n, "wall": statistics.median(walls),
                      "rules": {code: statistics.median(values) for code, values in runs.items()}}
    return results


def verdicts(results: dict[int, dict], limit: float, floor_ms: float) -> list[dict]:
    sizes = sorted(results)
    first, last = sizes[0], sizes[-1]
    codes = sorted({c for r in results.values() for c in r["rules"]},
                   key=lambda c: -results[last]["rules"].get(c, 0.0))
    rows = []
    growth = {}  # the median rule's per-file growth at each N: what the machine and memory add to every rule
    for n in sizes:
        ratios = sorted(results[n]["rules"][c] / n / (results[first]["rules"][c] / first) for c in codes
                        if results[first]["rules"].get(c) and results[n]["rules"].get(c)
                        and results[last]["rules"].get(c, 0.0) * 1000 >= floor_ms)
        growth[n] = ratios[len(ratios) // 2] if ratios else 1.0
    for code in codes:
        per_file = {n: results[n]["rules"].get(code, 0.0) / n for n in sizes}
        base = per_file[first]
        ratios = {n: (per_file[n] / base if base > 0 else None) for n in sizes}
        judged = results[last]["rules"].get(code, 0.0) * 1000 >= floor_ms
        worst = max((r for r in ratios.values() if r is not None), default=None)
        ok = None if not judged else (worst is not None and worst <= limit)
        relative = {n: (r / growth[n] if r is not None else None) for n, r in ratios.items()}
        rows.append({"rule": code, "ms": {n: results[n]["rules"].get(code, 0.0) * 1000 for n in sizes},
                     "ratio": ratios, "relative": relative, "judged": judged, "ok": ok,
                     "ok_relative": None if not judged else max((r for r in relative.values() if r is not None),
                                                                default=0.0) <= limit})
    return rows


def table(results: dict[int, dict], rows: list[dict], limit: float) -> str:
    sizes = sorted(results)
    head = "| rule | " + " | ".join(f"ms at {n:,}" for n in sizes) + " | " + \
        " | ".join(f"per file {n:,} / {sizes[0]:,}" for n in sizes[1:]) + " | linear | against the median rule |"
    lines = [head, "|" + "---|" * (3 + 2 * len(sizes) - 1)]
    total = {n: sum(results[n]["rules"].values()) * 1000 for n in sizes}
    for row in rows:
        ms = " | ".join(f"{row['ms'][n]:.0f}" for n in sizes)
        ratios = " | ".join("-" if row["ratio"][n] is None else f"{row['ratio'][n]:.2f}" for n in sizes[1:])
        verdict = "" if row["ok"] is None else ("PASS" if row["ok"] else f"FAIL (> {limit})")
        worst = max((r for r in row["relative"].values() if r is not None), default=None)
        relative = "" if row["ok_relative"] is None else f"{worst:.2f} " + ("PASS" if row["ok_relative"] else "FAIL")
        lines.append(f"| {row['rule']} | {ms} | {ratios} | {verdict} | {relative} |")
    lines.append("| all rules | " + " | ".join(f"{total[n]:.0f}" for n in sizes) + " | " +
                 " | ".join(f"{(total[n] / n) / (total[sizes[0]] / sizes[0]):.2f}" for n in sizes[1:]) + " | | |")
    lines.append("| whole run (wall) | " + " | ".join(f"{results[n]['wall'] * 1000:.0f}" for n in sizes) + " | " +
                 " | ".join(f"{(results[n]['wall'] / n) / (results[sizes[0]]['wall'] / sizes[0]):.2f}"
                            for n in sizes[1:]) + " | | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="1000,2000,5000,10000")
    parser.add_argument("--corpus", choices=("perf", "fixtures"), default="perf" if SHARED_PERF.exists() else "fixtures")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--limit", type=float, default=1.3)
    parser.add_argument("--floor-ms", type=float, default=20.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep", type=Path, help="make the corpora here and keep them")
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)  # one size, in this process: JSON out
    parser.add_argument("--cel", type=Path, help=argparse.SUPPRESS)  # CEL's share of one lint, in this process
    args = parser.parse_args(argv)
    if args.cel is not None:
        extra: dict = {}
        _, wall, files = rule_times(args.cel.resolve(), extra, rules=False)
        print(json.dumps({"cel": extra["cel"], "wall": wall, "files": files}))
        return 0
    if args.one is not None:
        rules, wall, files = rule_times(args.one.resolve())
        print(json.dumps({"rules": rules, "wall": wall, "files": files}))
        return 0
    sizes = sorted(int(n) for n in args.files.split(","))
    base = args.keep or Path(tempfile.mkdtemp(prefix="mlops-lint-scaling-"))
    base.mkdir(parents=True, exist_ok=True)
    try:
        results = measure(make_corpus(args.corpus, base, sizes), args.repeat)
    finally:
        if args.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    rows = verdicts(results, args.limit, args.floor_ms)
    print(f"Per-rule cost on the {args.corpus} corpus (--jobs 1, no cache, min of {args.repeat}):\n")
    print(table(results, rows, args.limit))
    failed = [r["rule"] for r in rows if r["ok"] is False]
    outgrown = [r["rule"] for r in rows if r["ok_relative"] is False]
    print(f"\nlinear (per file within {args.limit}x of {sizes[0]:,} files, rules over {args.floor_ms:g} ms): "
          + ("PASS" if not failed else "FAIL: " + ", ".join(failed)))
    print(f"growing faster than the median rule by over {args.limit}x (what a rule's own algorithm adds): "
          + ("none, PASS" if not outgrown else "FAIL: " + ", ".join(outgrown)))
    if args.json:
        args.json.write_text(json.dumps({"results": results, "rows": rows}, indent=2, default=str))
    return 1 if failed and args.check else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())
