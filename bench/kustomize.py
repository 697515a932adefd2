"""The cost of linting kustomizations as built: time per root.

    python bench/kustomize.py [--copies 10] [--repeat 3] [--jobs 1]

Writes ``--copies`` copies of ``fixtures/kustomize`` (a base, a component and three overlays:
three roots each) into a temporary folder, and times ``python -m mlops_lint DIR --no-cache`` with
``kustomize: {enabled: never}`` (every file raw), with the builds (``auto``: one ``kustomize
build`` or ``kubectl kustomize`` per root), and a repeat run with the result cache warm (no build:
each root's output is read from the cache). The difference over the number of roots is the time
per root. Wall and CPU times are the medians of ``--repeat`` runs; on a loaded machine compare ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "kustomize"
ROOTS_PER_COPY = 3


def timed(arguments: list[str], cwd: Path, repeat: int) -> tuple[float, float]:
    """The median wall time and CPU time (user + system, the linter and every process it ran)."""
    import resource

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("MLOPS_LINT_NO_CACHE", None)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "mlops_lint", *arguments], cwd=cwd, env=env, check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default="1")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from mlops_lint.engine.kustomize import find_command

    command = find_command()
    if command is None:
        print("neither kustomize nor kubectl is on PATH: nothing to build with")
        return 1
    with tempfile.TemporaryDirectory(prefix="mlops-lint-bench-kustomize-") as folder:
        top = Path(folder)
        for variant in ("raw", "built"):
            for index in range(options.copies):
                shutil.copytree(FIXTURE, top / variant / f"copy{index}")
        # the raw variant's own config turns the builds off; the built one has none (auto)
        (top / "raw" / ".mlops-lint.yaml").write_text("kustomize: {enabled: never}\n")
        (top / "built" / ".mlops-lint.yaml").write_text("kustomize: {enabled: auto}\n")
        roots = options.copies * ROOTS_PER_COPY
        common = [".", "-q", "--fail-on", "never", "--jobs", options.jobs]
        raw = timed([*common, "--no-cache"], top / "raw", options.repeat)
        built = timed([*common, "--no-cache"], top / "built", options.repeat)
        cache = top / "cache"
        timed([*common, "--cache-dir", str(cache)], top / "built", 1)  # fill the cache
        warm = timed([*common, "--cache-dir", str(cache)], top / "built", options.repeat)
    print(f"{roots} roots ({options.copies} copies of fixtures/kustomize), {' '.join(os.path.basename(c) if i == 0 else c for i, c in enumerate(command))}, --jobs {options.jobs}")
    print("                        wall      CPU    per root (wall, CPU)")
    print(f"raw (enabled: never)   {raw[0]:6.2f} s {raw[1]:6.2f} s")
    print(f"built (auto)           {built[0]:6.2f} s {built[1]:6.2f} s   "
          f"{1000 * (built[0] - raw[0]) / roots:5.0f} ms {1000 * (built[1] - raw[1]) / roots:5.0f} ms")
    print(f"built, cache warm      {warm[0]:6.2f} s {warm[1]:6.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
