"""An ENTRYPOINT or CMD in shell form: SIGTERM goes to `/bin/sh`, not to the trainer.

## What it does
Flags the ENTRYPOINT and the CMD that the final image starts with when they are in shell form
(`ENTRYPOINT python train.py` rather than `ENTRYPOINT ["python", "train.py"]`). Only what takes
effect is judged, as Docker applies it: the last ENTRYPOINT and the last CMD of the final stage
and of the stages it is built on; an ENTRYPOINT set in a later stage discards a CMD inherited
from an earlier one.

- A shell-form ENTRYPOINT is always flagged: it runs as `/bin/sh -c "…"`, and it ignores CMD and
  the pod's `args:`.
- A shell-form CMD is flagged when there is no ENTRYPOINT (it runs as `/bin/sh -c "…"`) and when
  the ENTRYPOINT is in exec form (the CMD is appended to it as `/bin/sh -c "…"`, so a wrapper
  such as `tini --` starts a shell, and `ENTRYPOINT ["python"]` gets `/bin/sh` as its script).
  With a shell-form ENTRYPOINT the CMD is ignored, so only the ENTRYPOINT is flagged.
- A command that looks like the exec form but is not valid JSON (`CMD ['python', 'train.py']`:
  single quotes) is the shell form to BuildKit and is flagged; a JSON array holding non-strings is
  a parse error (SCH001) instead.
- A shell form whose command is `exec …` (`CMD exec python train.py`) is not flagged: the shell
  replaces itself with the program, which then receives the signals.

The finding points at the command; the fix gives the exec form when the command is a plain
list of words.

## Why is this bad?
Kubernetes stops a pod (preemption, eviction, scale-down, a node upgrade) by sending SIGTERM to
the container's main process and SIGKILL after the grace period. In shell form that process is
`/bin/sh`, which does not pass SIGTERM on to its child ("the executable will not be the
container's PID 1, and will not receive Unix signals", Docker's reference), so the trainer never
gets the chance to save a checkpoint and the job loses everything since the last one. The
article's checkpointing example "handles SIGTERM so preemption can preserve recent progress",
and its training image uses `ENTRYPOINT ["python", "/workspace/train.py"]`.

## Example
```dockerfile
ENTRYPOINT torchrun --nproc-per-node=8 train.py
```

Use instead:
```dockerfile
ENTRYPOINT ["torchrun", "--nproc-per-node=8", "train.py"]
```

## Known problems
- Some shells run the last command of `sh -c` without forking (bash, and dash since 0.5.11), so
  a one-command shell form may in practice deliver signals on some base images; Docker documents
  no such guarantee, CMD and `args:` are still ignored by a shell-form ENTRYPOINT, and the rule
  flags it all the same.
- An ENTRYPOINT or CMD inherited from the base image is not known and not judged.
- A shell-form command that needs variable expansion has no one-to-one exec form: use an
  entrypoint script that ends with `exec "$@"`, or prefix the command with `exec`.

## References
- Dockerfile reference, ENTRYPOINT (exec and shell form): https://docs.docker.com/reference/dockerfile/#entrypoint
- Dockerfile reference, how CMD and ENTRYPOINT interact: https://docs.docker.com/reference/dockerfile/#understand-how-cmd-and-entrypoint-interact
- Kubernetes, termination of pods: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
"""

import json

from linter.model.bounds import json_too_deep
from linter.model.docker import Dockerfile, Instruction, execs, node_path, start_command
from linter.rule import DOCKERFILE, Finding, rule


def exec_form(ins: Instruction) -> str | None:
    """The exec form of a shell-form command that is one plain command, else None."""
    if _invalid_array(ins.args):  # ['python', 'train.py']: the same array with double quotes
        try:
            items = json.loads(ins.args.replace("'", '"'))
        except (ValueError, RecursionError):
            return None
        return f"{ins.keyword} {json.dumps(items)}" if all(isinstance(i, str) for i in items) else None
    if len(ins.commands) != 1 or ins.commands[0].assignments:
        return None
    words = [w.text for w in ins.commands[0].words]
    if any(c in w for w in words for c in "$`*?~") or len(words) != len(ins.args.split()):
        return None
    return f"{ins.keyword} {json.dumps(words)}"


def _invalid_array(args: str) -> bool | None:
    """For ``[…]`` text: True when it is not JSON (BuildKit falls back to the shell form), False
    when it is JSON (then it is an array of non-strings, a parse error); None for other text."""
    if not (args.startswith("[") and args.endswith("]")):
        return None
    if json_too_deep(args):  # as the loader reads it: not an exec form (json would exhaust the stack)
        return True
    try:
        json.loads(args)
    except ValueError:
        return True
    return False


@rule(code="DKR006", name="entrypoint-shell-form", severity="warning", scope=DOCKERFILE, tags=("dockerfile", "signals", "checkpoints"))
def check(dockerfile: Dockerfile, ctx):
    start = start_command(dockerfile)
    if start is None:
        return
    entry, cmd = start.entrypoint, start.cmd
    flagged = []
    if entry is not None and not entry.exec_form and entry.args and not execs(entry):
        flagged.append((entry, start.entrypoint_stage, "runs as `/bin/sh -c`, which does not pass SIGTERM on"))
    if cmd is not None and not cmd.exec_form and cmd.args and not execs(cmd) and (entry is None or entry.exec_form):
        how = ("is appended to the exec-form ENTRYPOINT as `/bin/sh -c …`" if entry is not None
               else "runs as `/bin/sh -c`, which does not pass SIGTERM on")
        flagged.append((cmd, start.cmd_stage, how))
    for ins, stage, how in flagged:
        if _invalid_array(ins.args) is False:
            continue  # a JSON array of non-strings: a parse error (SCH001), not a shell form
        if _invalid_array(ins.args):
            how = "(it looks like the exec form but is not a JSON array of double-quoted strings) " + how
        suggestion = exec_form(ins)
        command = ins.args if len(ins.args) <= 60 else ins.args[:57] + "…"
        inherited = f" (inherited from stage `{stage.name or stage.index}`)" if stage is not dockerfile.final_stage else ""
        yield Finding(
            ins.args_span or ins.keyword_span,
            f"{ins.keyword} `{command}`{inherited} in shell form {how}: the trainer never gets the signal, so it "
            "cannot checkpoint before the pod is killed",
            node=node_path(stage, ins),
            fix=f"use the exec form: `{suggestion}`" if suggestion else
                'use the exec form (an entrypoint script that ends with `exec "$@"` if it needs variables)',
        )
