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
about (1.5x). Wall and CPU times are the medians of ``--repeat`` runs; on a loaded machine (others'
processes on its cores) wall times mislead, so the CPU ratio (the linter's and its render
worker's user + system time) is printed beside the wall one.

Measured 2026-12-05 on the shared 2-core machine (load 2-7), ``--jobs 1``, helm-python-sdk 0.2.2,
CPU (user + system of the linter and its render worker) as medians of 5 paired runs, the code
before and after interleaved, bytecode cached (this machine's PYTHONDONTWRITEBYTECODE unset: an
installed mlops-lint has its .pyc files); the charts' CPU over the plain files':

- ``--charts 1000`` (2,332 rendered objects): before (ac9d15b) cold 2.52x (4.68 s against
  1.86 s), warm 3.01x (1.11 s against 0.37 s); after (7c348a0) cold 2.18x (4.15 s against
  1.90 s), warm 2.44x (0.90 s against 0.37 s). ``--charts 300`` (700 objects): before cold
  2.08x, warm 2.07x; after cold 2.06x (1.48 s against 0.72 s), warm 1.71x (0.37 s against
  0.22 s). Another session of the same pairs gave ratios within 0.2x of these. The 1.5x target
  is not met.
- Where a warm run of 1,000 charts still spends its CPU beyond the plain files' (in-process,
  per function): the renders' keys, 0.17 s (every chart file walked, its templates read and
  hashed: ChartFiles 0.09 s; the cached render read and its hash checked), the cached template
  maps 0.06 s, the chart's ci/ and charts/ folders looked at 0.05 s, each render's lines split
  for its ``# Source:`` comments 0.02 s; the discovery of 5,666 files in 2,335 folders (walk and
  root finding, three config names looked for per folder) 0.1 s more than 1,333 files in 1,000
  folders; the result cache's 4,333 outcomes (the charts' Chart.yaml and values files are linted
  too) 0.05 s more; findings moved to template lines 0.06 s.
- After h43 (b844fd5 against 9bf840c, the same way: CPU medians of 5 interleaved pairs, load 1.5-2.5):
  ``--charts 1000`` warm 2.31x (0.77 s against 0.33 s; 9bf840c 2.44x, 0.85 s against 0.35 s),
  cold 2.24x (4.07 s against 1.81 s; 9bf840c 2.25x); ``--charts 300`` warm 1.76x (0.35 s against
  0.20 s; 9bf840c 1.76x, 0.37 s against 0.21 s), cold 1.91x (9bf840c 2.03x). The plain files' runs
  got faster too (the root finder's stats), which the ratio hides. What changed: a render's
  ``# Source:`` lines found without splitting it, each template's place once per chart, the
  templates folders rendered and the chart's relative folder without looking at folders again,
  the folders the walk listed without a config name or ``.git`` not looked at by the root finder
  (a warm run of 1,000 charts: 16,968 ``stat`` calls before, 8,242 after; 2.69 million Python
  calls before, 2.30 million after), one copy of a finding merged across a chart's renders,
  ``tarfile`` not imported. The 1.5x target is still not met warm: what is left is spread (process
  CPU of each step in-process, a warm 1,000-chart run: every chart file read to key its renders,
  ChartFiles, about 0.08 s; the rest of the renders' keys and their cache entries read and checked
  about 0.07 s; the cached maps read and checked about 0.05 s; the findings moved to templates
  0.04 s; the discovery of the charts' folders and templates about 0.08 s more than the plain
  files'); one cache record per chart, validated by the files' key, is the next step.
- A cold run of 1,000 charts: Helm's SDK in the worker (loading each chart archive and rendering:
  about 0.6 ms of Go per chart) 0.8 s, which alone is 0.44x of the plain files' run; findings
  moved to template lines 0.6 s (each render's and template's lines scanned for their key
  paths); reading the charts, the render requests and answers 0.5 s; linting the renders is the
  plain files' cost.
- After h46 (455c036 against be5fdf0, 2026-12-05, CPU medians of 5 interleaved pairs on the same
  generated trees, load 2-3; ratio of the medians): ``--charts 1000`` warm 1.96x (0.693 s
  against 0.353 s; be5fdf0 2.46x, 0.835 s against 0.340 s), cold 2.22x (4.21 s against 1.89 s;
  be5fdf0 2.20x, 4.20 s against 1.91 s: no change beyond noise); ``--charts 300`` warm 1.56x
  (0.310 s against 0.198 s, the median of the pairs' own ratios 1.52x; be5fdf0 1.73x, 0.334 s
  against 0.194 s), cold 1.90x (1.35 s against 0.71 s; be5fdf0 2.02x, 1.37 s against 0.68 s: the
  charts' runs 0.02 s apart, the rest the plain side's noise). The plain files' speed budget run
  (``--no-cache --jobs 1`` on the perf corpus of 1,000 files, 11 pairs): 1.173 s against 1.186 s.
  What changed: one build cache record per chart (``helmchart-<key>``: its renders and their
  template maps, keyed by every render's key) read instead of an entry per render and per map;
  the project's finished run (findings at the template lines after suppressions, notes,
  statuses) kept in the result cache under the project's key and every chart record's key, so a
  fully warm run neither checks a map, nor maps, nor suppresses, nor decodes a file's outcome
  again; the mapping's signatures and item-name patterns made once. The 1.5x target is not met,
  and cannot be by these means (in-process CPU of each step, 1,000 charts):
- Warm, what is left beyond the plain files' 0.35 s: the chart files read and hashed to key the
  renders (ChartFiles: every template, 5,665 files, about 0.09 s: the content check that makes a
  stale record impossible), the discovery of 2,335 folders and 5,666 files (templates skipped,
  Chart.yaml and values files surveyed, their 3,000 outcomes' keys in the result cache file,
  which the finished run makes 5.3 MB against the plain run's 2.8 MB (3.3 MB before it): about
  0.12 s more than 1,333 files in 1,000 folders), the
  renders' settings (plan: ci/ listed, Chart.yaml's dependencies) 0.03 s, the render keys and
  the records read and checked about 0.06 s, the charts found and the project's CRDs looked for
  0.03 s, the mappers and the finished run decoded about 0.03 s. The first two alone are about
  1.6x of the plain run.
- Cold, 4.15 s of CPU against 1.86 s: the render worker (Helm's SDK, Go, loading each chart
  archive and rendering) about 0.8 s, 0.43x of the plain run on its own; the renders parsed and
  linted 1.34 s (the plain files' cost); the charts' own Chart.yaml, values.yaml and ci values
  files linted as files (3,000 of them) 0.36 s, 0.19x; the findings mapped to template lines
  0.59 s (each render's and template's key paths: 0.27 s for the paths, 0.18 s reading and
  parsing the templates); the render bookkeeping in the linter (chart files read, Chart.yaml
  parsed for the release name, the request's archives, the answers assembled) about 0.5 s.
  With the mapping and the bookkeeping both free, the worker and the charts' own files still
  leave about 1.65x.
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

from kustomize import timed  # noqa: E402  (the same timing: median wall and CPU, the children included)


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
