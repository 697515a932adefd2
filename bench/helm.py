"""The cost of linting Helm charts as rendered, per rendered object, against the same objects
as plain files.

    python bench/helm.py [--copies 10 | --charts 1000] [--repeat 3] [--jobs 1]

Writes ``--copies`` copies of the fixture charts ``fixtures/helm/{trainer,inference,stack}``
(or ``--charts`` charts, the fixtures taken in turn: the issue's Helm corpus is ``--charts
1000``; generated at each run, never committed), each copy's charts renamed, so no two
copies' objects share a name, into a temporary folder,
renders each once with Helm's SDK (the ``helm`` extra) and writes the rendered objects beside
them as plain files, then times ``python -m mlops_lint DIR`` on the charts (rendered in a worker:
``helm: {enabled: auto}``) and on the plain files, cold (``--no-cache``) and with the cache warm.
The charts' cost per rendered object over the plain files' is the ratio the issue's budget is
about (1.5x). Wall times are the minimum of ``--repeat`` runs; on a loaded machine (others'
processes on its cores) wall times mislead, so the CPU ratio (the linter's and its render
worker's user + system time) is printed beside the wall one.

Measured 2026-12-05 on the shared 2-core machine (load 7-10, so the CPU ratios are the ones to
read), ``--jobs 1``, helm-python-sdk 0.2.2:

- ``--charts 1000`` (2,332 rendered objects): before the render map cache (e38508e, 999 charts)
  cold 2.4x CPU (3.1x wall), warm 8.3x CPU (12.9x wall); now cold 2.2x CPU, warm 3.0x CPU
  (2.1x wall). The 1.5x target is not met at this size: a warm run still walks, reads and hashes
  every chart file (the render's key), parses each Chart.yaml and reads two cache entries per
  render, about 0.65 ms of CPU per chart; the same tree with ``helm: {enabled: never}`` costs
  1.13x the plain files (its 5,700 files against 1,333).
- ``--copies 100`` (300 charts, 700 objects): before, cold 2.2x CPU, warm 4.1x CPU; now cold
  1.9x CPU, warm 2.0x CPU (wall 1.41-1.63x, noisy).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHARTS = ("trainer", "inference", "stack")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from kustomize import timed  # noqa: E402  (the same timing: minimum wall, children's CPU)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=10)
    parser.add_argument("--charts", type=int, default=0, help="this many charts instead of --copies copies of the three")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jobs", default="1")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from mlops_lint.sources import helm, helm_sdk

    if not helm_sdk.available():
        print('Helm\'s SDK is not installed: pip install "mlops-lint[helm]"')
        return 1
    with tempfile.TemporaryDirectory(prefix="mlops-lint-bench-helm-") as folder:
        top = Path(folder)
        objects = 0
        count = options.charts or options.copies * len(CHARTS)
        for number in range(count):
            index, name = number // len(CHARTS), CHARTS[number % len(CHARTS)]
            chart = top / "charts" / f"copy{index}" / name
            shutil.copytree(ROOT / "fixtures" / "helm" / name, chart)
            metadata = chart / "Chart.yaml"
            metadata.write_text(metadata.read_text().replace(f"name: {name}\n", f"name: {name}{index}\n", 1))
        plans = [helm.plan(str(chart.parent), str(chart.parent), {}, None, str(top))
                 for chart in sorted((top / "charts").rglob("Chart.yaml")) if chart.parent.parent.name != "charts"]
        for plan, results in zip(plans, helm.render_plans(plans, ("sdk", None), 60, None)):
            for number, (output, error) in enumerate(results):
                if output is None:
                    print(f"{plan.display}: {error}")
                    return 1
                plain = top / "plain" / Path(plan.folder).relative_to(top / "charts") / f"render{number}.yaml"
                plain.parent.mkdir(parents=True, exist_ok=True)
                plain.write_bytes(output)
                objects += output.count(b"\n# Source: ")
        (top / "plain" / ".mlops-lint.yaml").write_text("helm: {enabled: never}\n")
        (top / "charts" / ".mlops-lint.yaml").write_text("helm: {enabled: auto}\n")
        common = [".", "-q", "--fail-on", "never", "--jobs", options.jobs]
        runs = {}
        for variant in ("plain", "charts"):
            runs[variant, "cold"] = timed([*common, "--no-cache"], top / variant, options.repeat)
            cache = top / f"cache-{variant}"
            timed([*common, "--cache-dir", str(cache)], top / variant, 1)  # fill the cache
            runs[variant, "warm"] = timed([*common, "--cache-dir", str(cache)], top / variant, options.repeat)
    print(f"{len(plans)} charts (fixtures/helm/{{{','.join(CHARTS)}}} in turn), {objects} rendered "
          f"objects, helm-python-sdk {helm_sdk.version()}, --jobs {options.jobs}")
    print("                   wall      CPU    per object (wall)   charts / plain (wall, CPU)")
    for state in ("cold", "warm"):
        for variant in ("plain", "charts"):
            wall, cpu = runs[variant, state]
            ratio = (f"   {wall / runs['plain', state][0]:.2f}x  {cpu / runs['plain', state][1]:.2f}x"
                     if variant == "charts" else "")
            print(f"{variant:6} {state:5}    {wall:6.2f} s {cpu:6.2f} s   {1000 * wall / objects:6.1f} ms{ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
