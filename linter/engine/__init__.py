"""The engine: load each file once, index the project, dispatch rules by scope, stamp findings.

    discover -> survey -> cache -> index -> rules (per file) -> PROJECT rules -> suppress -> report

Findings are reported only for target files, but every rule sees the whole project through the
index. Output is byte-identical across ``--jobs`` and with or without the cache. The rooms, in
the order a run passes through them:

- :mod:`linter.engine.run`: one whole run (:class:`LintRequest` -> :func:`lint` -> ``RunReport``;
  :func:`lint_run` with :class:`Wants` also gives what the run built, each project's
  :class:`Part`, and the fix run's :class:`FixTarget` of each target): each project linted on its
  own, as a pipeline of named steps (survey, cache keys, first pass, builds, lint, project pass,
  cache write), stdin, the baseline, the merged report;
- :mod:`linter.engine.projects`: which projects a run has (:mod:`linter.roots`) and the target and
  context files of each;
- :mod:`linter.engine.selection`: which rules run (selectors and profile);
- :mod:`linter.engine.survey`: every file read once up front (size, hash, whether other files
  may look something up in it);
- :mod:`linter.engine.passes`: the first pass (the shared files parsed, the index built) and
  the second (every file linted and let go);
- :mod:`linter.engine.runner`: calling rules by scope and stamping findings (:class:`Runner`,
  :class:`FileOutcome`, :func:`run_rules` for tests and tools);
- :mod:`linter.engine.workers`: ``--jobs N``, forked workers sharing the second pass;
- :mod:`linter.engine.memory`: the garbage collector's part in a run;
- :mod:`linter.engine.builds`: the build room, every kustomize build and Helm render of a run,
  with :mod:`linter.engine.kustomize` (a root built, confined and cached, its findings and fixes
  mapped back; :mod:`linter.sources.kustomize` only reads the kustomizations);
- :mod:`linter.engine.profile`: the cluster profile a project's own files imply.

Reading a file and choosing its loader is :mod:`linter.sources.files`; display paths are
:func:`linter.discover.display_path`. No room imports another's private name, and the rooms
import one way (run -> workers -> passes -> survey/runner/memory), which ``tests/test_layout.py``
checks.
"""

from mlops_lint.discover import display_path
from mlops_lint.engine.run import FixTarget, LintRequest, LintRun, Part, Wants, lint, lint_run
from mlops_lint.engine.runner import PARSE_ERROR, RULE_ERROR, UNUSED_SUPPRESSION, FileOutcome, Job, Runner, run_rules
from mlops_lint.engine.selection import enabled_rules
from mlops_lint.engine.workers import PARALLEL_MIN_FILES, cap_jobs, default_jobs
from mlops_lint.sources.files import load_bytes, load_file, read_source

__all__ = [
    "PARALLEL_MIN_FILES", "PARSE_ERROR", "RULE_ERROR", "UNUSED_SUPPRESSION", "FileOutcome", "FixTarget", "Job",
    "LintRequest", "LintRun", "Part", "Runner", "Wants", "cap_jobs", "default_jobs", "display_path", "enabled_rules", "lint", "lint_run", "load_bytes", "load_file", "read_source",
    "run_rules",
]
