"""A checkpointing trainer started by a shell that keeps SIGTERM to itself.

## What it does
Flags a training container whose `command` starts a POSIX shell with `-c` (`sh`, `bash`, `dash`
… with `-c`, `-ec`, `-lc`) and a script of several statements that runs the trainer without
`exec` and without a `trap` on TERM, when the container writes checkpoints (a writable mount,
env var or flag that names checkpoints: the evidence STO002 and STO005 use): the last one is
what a lost SIGTERM costs.

A preemptible pod (queued by Kueue, gang-scheduled by Volcano, on Spot nodes, with a PriorityClass
that a higher one may preempt) without checkpoint evidence is not judged: the article handles
SIGTERM "so preemption can preserve recent progress", and progress is preserved only by a
checkpoint; a trainer that saves none loses the same work whether it hears the signal or is
killed at the end of the grace period (that it saves none is STO002's and STO005's concern).

The trainer is the script's last statement that runs `python` (not `python -m pip`),
`torchrun`, `deepspeed`, `accelerate`, `horovodrun`, `mpirun` or `mpiexec`, `composer`, `tune`, a `.py`
file or a program whose name says `train`. A script that runs none is not judged (a
`sleep`/`nvidia-smi` demo), nor one whose only statement is the trainer (`bash` and `dash`
replace themselves with a script's single command), nor a TensorFlow parameter server's pods
(a replica type or task named `PS`: the chief and the workers save the checkpoints). The
finding points at the script. The fix is `exec` before the trainer when it is the script's last
statement; when statements follow it (`python train.py; sleep 3600`), `exec` would drop them, so
the fix is a `trap` on TERM that forwards the signal to the trainer.

## Why is this bad?
Kubernetes stops a pod (preemption, eviction, scale-down, a node upgrade) by sending SIGTERM to
the container's PID 1 and SIGKILL when the grace period ends. Here PID 1 is the shell: a
process 1 has no default action for SIGTERM, and a shell waiting for its child neither dies nor
passes the signal on, so the trainer runs on until SIGKILL and never saves its last checkpoint.
The article's checkpointing Job "handles SIGTERM so preemption can preserve recent progress",
and "Training workloads that can be preempted must write checkpoints to persistent storage":
that handler only runs if the trainer receives the signal. This is DKR006's shell form, written
in the pod spec instead of the Dockerfile.

## Example
```yaml
      containers:
      - name: trainer
        command:
        - /bin/bash
        - -c
        - |
          set -e
          pip install -r requirements.txt
          python train.py --checkpoint-dir /checkpoints
```

Use instead:
```yaml
      containers:
      - name: trainer
        command:
        - /bin/bash
        - -c
        - |
          set -e
          pip install -r requirements.txt
          exec python train.py --checkpoint-dir /checkpoints
```

## Known problems
- Recent shells replace themselves with the last command of a `-c` script in some cases (bash
  5.1 and later when no trap is set, dash since 0.5.11), so a script whose last statement is
  the trainer may deliver the signal on some images. No shell documents it, a statement after
  the trainer or a pipeline (`python train.py | tee log`) defeats it, and `exec` costs nothing:
  the rule flags the script all the same.
- A script that forwards the signal without `trap` (a supervisor such as `tini -g` before the
  shell, which signals the process group) is not seen when the supervisor is started by the
  image's ENTRYPOINT; a `command` that does not start with the shell is not judged.
- Statements inside `$(…)`, functions and here-documents are not read.

## References
- Kubernetes, termination of pods: https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination
- Docker, ENTRYPOINT (shell form and signals): https://docs.docker.com/reference/dockerfile/#entrypoint
- Bash manual, `exec`: https://www.gnu.org/software/bash/manual/bash.html#index-exec
"""

from __future__ import annotations

import re

from mlops_lint.model.shellc import shell_c, statements
from mlops_lint.model.storage import checkpoint_mounts, checkpoint_paths
from mlops_lint.rule import POD, Finding, rule

TRAINERS = frozenset({"torchrun", "deepspeed", "accelerate", "horovodrun", "mpirun", "mpiexec", "composer", "tune",
                      "llamafactory-cli", "axolotl"})
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?$")
PARAMETER_SERVERS = frozenset({"ps", "parameter-server", "parameterserver"})


def _is_trainer(words: tuple[str, ...]) -> bool:
    program = words[0].rsplit("/", 1)[-1]
    if _PYTHON.match(program):
        return not (len(words) > 2 and words[1] == "-m" and words[2] in ("pip", "ensurepip", "venv"))
    return program in TRAINERS or program.endswith(".py") or "train" in program.lower()


def _trainer(script: str) -> tuple[str, int, bool, bool, bool] | None:
    """(the trainer's command line, statements, whether the script hands it PID 1 or traps TERM,
    whether the trainer is piped into another command, whether it is the last statement) for a
    script that runs a trainer; None otherwise."""
    found = statements(script)
    trainer, handled, piped, at = None, False, False, -1
    for position, (words, end) in enumerate(found):
        if words[0] == "trap" and any(w.upper().removeprefix("SIG") in ("TERM", "15") for w in words[2:]):
            handled = True
        if words[0] == "exec":
            rest = [w for w in words[1:] if not w.startswith("-")]
            if rest and _is_trainer(tuple(rest)):
                handled = True
                trainer = " ".join(rest)
            continue
        if _is_trainer(words):
            trainer, piped, at = " ".join(words), end in ("|", "|&"), position
    if trainer is None:
        return None
    # the pipe's reader is a statement of its own: a piped trainer followed by it alone is last
    last = at == len(found) - 1 or (piped and at == len(found) - 2)
    return trainer, len(found), handled, piped, last


def _at_stake(container) -> str | None:
    """Why a SIGTERM lost matters for the container: the checkpoints it writes (without them
    there is no progress for the signal to preserve)."""
    mounts = checkpoint_mounts(container)
    if mounts:
        return f"writes checkpoints ({mounts[0].reason})"
    paths = checkpoint_paths(container)
    if paths:
        return f"writes checkpoints ({paths[0].describe()})"
    return None


@rule(code="STO006", name="sigterm-not-forwarded", severity="warning", scope=POD, tags=("storage", "checkpoints", "signals"))
def check(pod, ctx):
    if pod.workload is None or not pod.workload.is_training or (pod.role or "").lower() in PARAMETER_SERVERS:
        return  # a parameter server holds variables; the chief and the workers save the checkpoints
    for container in pod.app_containers:
        start = shell_c(container)
        if start is None or not any(c in start.script for c in ";&|\n()"):
            continue  # (one statement: nothing runs beside the trainer, decided without splitting)
        found = _trainer(start.script)
        if found is None:
            continue
        trainer, count, handled, piped, last = found
        if handled or count < 2:
            continue
        why = _at_stake(container)
        if why is None:
            continue
        shown = trainer if len(trainer) <= 60 else trainer[:57] + "…"
        if not last:  # `exec` would drop the statements after it
            fix = (f"trap TERM and forward it to the trainer (`trap 'kill -TERM $pid' TERM; {shown} & pid=$!; "
                   "wait $pid`): `exec` would drop the statements after it")
        elif piped:
            fix = f"run the trainer outside the pipeline and start it with `exec {shown}` (or trap TERM and forward it)"
        else:
            fix = f"start the trainer with `exec {shown}` (or trap TERM and forward it)"
        yield Finding(
            start.span,
            f"container `{container.name}` {why}, but runs `{shown}` from a `{start.shell} -c` script of {count} "
            "statements without `exec`: the shell is PID 1 and does not pass SIGTERM on, so the trainer "
            "is killed without saving a last checkpoint",
            node=start.node,
            fix=fix,
        )
