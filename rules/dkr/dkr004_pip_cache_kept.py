"""A `pip install` that leaves pip's download cache in the image.

## What it does
Flags `pip install` in RUN instructions (also `pip3`, `pip3.11`, `/opt/conda/bin/pip`,
`python -m pip`, `$PYTHON -m pip`, through `sudo`, `env` or `conda run`, in `&&` chains,
heredoc scripts and the exec form) that does not keep its cache out of the layer. The cache is
kept out by any of:

- `--no-cache-dir` on the command (pip also takes the abbreviation `--no-cache`);
- `PIP_NO_CACHE_DIR` set by `ENV` (in the stage or a stage it is built on), by `ARG` in the
  stage, by a `PIP_NO_CACHE_DIR=1 pip install` prefix or an earlier `export` in the same RUN.
  Any value counts: pip disables the cache for `PIP_NO_CACHE_DIR=false` too;
- a BuildKit cache mount on the cache folder: `RUN --mount=type=cache,target=/root/.cache/pip`
  (or `…/.cache`, or `PIP_CACHE_DIR`; a `tmpfs` mount as well): the cache then lives outside the
  image;
- the cache removed later in the same RUN: `pip cache purge`, `rm -rf /root/.cache/pip`.

`uv pip install` is judged too, with uv's own switches: `--no-cache`/`-n` (or pip's
`--no-cache-dir`, which uv accepts as an alias), `UV_NO_CACHE=1`, a cache mount on
`…/.cache/uv`, `uv cache clean`. Only stages whose layers end up in an image are
judged: the final stage, stages no other stage uses (other `--target`s) and the stages they are
built on; a builder stage that other stages only copy files from ships no layer. The finding
points at the `pip install` words.

## Why is this bad?
pip keeps every wheel it downloads under `~/.cache/pip`; in an image that is a second copy of
every package, hundreds of megabytes to gigabytes for CUDA wheels. Every node pulls those bytes
before the trainer starts, which adds to the image-pull latency the article lists among the costs
of scaling GPU pools from zero. The article's training image installs its requirements with
`python -m pip install --no-cache-dir -r requirements.txt`.

## Example
```dockerfile
RUN pip install -r requirements.txt
```

Use instead:
```dockerfile
RUN python -m pip install --no-cache-dir -r requirements.txt
```
or keep the cache for faster rebuilds, outside the image:
```dockerfile
RUN --mount=type=cache,target=/root/.cache/pip pip install -r requirements.txt
```

## Fix safety
Safe. The fix adds `--no-cache-dir` right after `install` (`pip install --no-cache-dir -r
requirements.txt`; in the exec form the element `"--no-cache-dir"` after `"install"`), and
`--no-cache` for `uv pip install`. pip installs the same packages with or without its cache; only
the copy of the downloaded wheels under `~/.cache/pip` is no longer written into the layer.
`PIP_NO_CACHE_DIR` is left alone: an install it already covers is not reported, so there is
nothing to fix.

## Known problems
- A `pip.conf` that sets `no-cache-dir` is not read.
- `pip install $PIP_ARGS …` where `$PIP_ARGS` has no known value may hold the option and is not
  flagged; commands hidden in `sh -c '…'` or `$(…)` are not seen.
- Install steps in ONBUILD triggers run in other images' builds and are not judged here.

## References
- pip, caching: https://pip.pypa.io/en/stable/topics/caching/
- Docker, cache mounts: https://docs.docker.com/build/cache/optimize/#use-cache-mounts
- uv, caching in Docker: https://docs.astral.sh/uv/guides/integration/docker/#caching
"""

from mlops_lint.fix import Plan, Replace
from mlops_lint.model.docker import Dockerfile, Instruction, PipInstall, node_path, pip_cache_avoided, pip_install
from mlops_lint.model.position import Span
from mlops_lint.rule import DOCKERFILE, Finding, rule


def no_cache(ins: Instruction, pip: PipInstall, flag: str) -> Plan | None:
    """Insert ``flag`` right after the ``install`` word (an element of its own in the exec form)."""
    if ins.exec_form:
        index = len(pip.command.words) - len(pip.words) + pip.install
        if index >= len(ins.exec_spans):
            return None  # the elements' positions are not known
        at, text = ins.exec_spans[index], f', "{flag}"'
    else:
        at, text = pip.words[pip.install].span, f" {flag}"
    end = Span(at.end_line, at.end_col, at.end_line, at.end_col)
    return Plan.safe_fix(f"add `{flag}` to `{pip.written}`", Replace(end, text))


@rule(code="DKR004", name="pip-cache-kept", severity="info", scope=DOCKERFILE, tags=("dockerfile", "images"))
def check(dockerfile: Dockerfile, ctx):
    for stage in dockerfile.shipped_stages:
        for ins in stage.instructions:
            if ins.keyword != "RUN" or not ins.commands:
                continue
            env = dockerfile.env_before(stage, ins)
            for index, command in enumerate(ins.commands):
                pip = pip_install(command, env)
                if pip is None or pip_cache_avoided(ins, index, pip, env) is not None:
                    continue
                flag, folder = ("--no-cache-dir", "~/.cache/pip") if pip.tool == "pip" else ("--no-cache", "~/.cache/uv")
                yield Finding(
                    pip.span,
                    f"`{pip.written}` keeps its download cache ({folder}) in the image layer: every node pulls a "
                    f"second copy of the packages",
                    node=node_path(stage, ins, index),
                    fix=f"add `{flag}`, or mount the cache: `RUN --mount=type=cache,target=/root/.cache/"
                        f"{'pip' if pip.tool == 'pip' else 'uv'} …`",
                    autofix=no_cache(ins, pip, flag),
                )
