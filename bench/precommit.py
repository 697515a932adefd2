"""The pre-commit hook's own runtime: `pre-commit run` on one changed file in a git repository
of N manifests (bench/corpus.py's files, with a `.mlops-lint.yaml` at the top so the whole
repository is the project context), with the result cache warm and with it off.

    python bench/precommit.py [--files 1000] [--repeat 3]

The hook is installed the way users get it (`repo:` this repository at its HEAD commit, so commit
first); each measured run changes one manifest, stages it and runs `pre-commit run` (the staged
files only), as a commit does. Prints the median wall time of each over ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from corpus import generate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@example.com"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    rev = _git(ROOT, "rev-parse", "HEAD").strip()
    with tempfile.TemporaryDirectory(prefix="mlops-lint-precommit-") as scratch:
        base = Path(scratch)
        repo, home, cache = base / "repo", base / "pre-commit-home", base / "cache"
        generate(repo, args.files)
        (repo / ".mlops-lint.yaml").write_text("fail-on: never\n")  # the figure is the time, not the findings
        (repo / ".pre-commit-config.yaml").write_text(
            f"repos:\n  - repo: {ROOT}\n    rev: {rev}\n    hooks:\n      - id: mlops-lint\n")
        _git(repo, "init", "-q")
        _git(repo, "add", ".")
        _git(repo, "commit", "-qm", "manifests")
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLOPS_LINT_NO_CACHE")}
        env.update(PRE_COMMIT_HOME=str(home), PRE_COMMIT_COLOR="never", MLOPS_LINT_CACHE_DIR=str(cache))
        subprocess.run([sys.executable, "-m", "pre_commit", "install-hooks"], cwd=repo, env=env, check=True,
                       capture_output=True)
        group = next(p for p in sorted(repo.rglob("gpu-pod")) if p.is_dir()).parent
        # a workload manifest, and a file whose objects other files look up (a change to it
        # re-lints every file that may depend on it: see README, Result cache)
        targets = {"a Pod manifest": group / "gpu-pod" / "pod.yaml", "the Kueue quota file": group / "kueue" / "quota.yaml"}
        subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files"], cwd=repo, env=env,
                       capture_output=True)  # the first run fills the cache, as a first commit does

        def once(target: Path, extra: dict[str, str], number: int) -> float:
            target.write_text(target.read_text() + f"# change {number}\n")
            _git(repo, "add", str(target))
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pre_commit", "run"], cwd=repo, env={**env, **extra},
                                  capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            if done.returncode != 0 or "Passed" not in done.stdout:
                raise SystemExit(f"pre-commit run failed:\n{done.stdout}{done.stderr}")
            return elapsed

        count = sum(1 for p in repo.rglob("*") if p.is_file() and ".git" not in p.parts) - 2
        print(f"pre-commit run on 1 changed file of {count} (median of {args.repeat} runs):")
        for what, target in targets.items():
            assert target.is_file(), target
            rows = {label: statistics.median(once(target, extra, number) for number in range(args.repeat))
                    for label, extra in (("cache warm", {}), ("no cache", {"MLOPS_LINT_NO_CACHE": "1"}))}
            print(f"  {what} ({target.relative_to(repo)}): "
                  + ", ".join(f"{label} {seconds:.2f} s" for label, seconds in rows.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
