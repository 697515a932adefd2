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

## Fix safety
What the fix does depends on the command:

- A plain command, a list of words with no shell syntax (no `$`, backticks, pipes, `&&`, `;`,
  redirections, globs, `~`, braces, backslashes; quotes only around text that needs no shell):
  the exec form with the same words, JSON-escaped (`CMD python train.py --lr 0.1` gives
  `CMD ["python", "train.py", "--lr", "0.1"]`). Each word is rewritten where it stands, so
  continuation lines and the comments between them stay. Safe for a CMD with no ENTRYPOINT in
  the file: the same program gets the same arguments, only without `/bin/sh` in between.
  Unsafe for a CMD behind an exec-form ENTRYPOINT (the entrypoint receives the words instead of
  `/bin/sh -c "…"`: right for a wrapper such as `tini --` that runs its arguments, different for
  one that reads them) and for an ENTRYPOINT with no CMD in the file (in exec form it no longer
  ignores a pod's `args:` or `docker run` arguments, which are then appended). An ENTRYPOINT
  with a CMD in effect gets `exec ` instead (below), so that the CMD stays ignored.
- `['python', 'train.py']` (single quotes): the JSON array it was meant to be, with the same
  safety as above.
- A command that needs the shell but is a chain of simple commands joined by `&&` (variables,
  redirections, globs), in an ENTRYPOINT or in a CMD with no ENTRYPOINT, and an ENTRYPOINT
  with a CMD in effect: `exec ` before its last command (`CMD cd /app && exec python train.py
  --lr "$LR"`), so the shell expands the words and then hands PID 1 to the program. Unsafe: the
  linter does not run the shell, and a last command that is a shell function or alias would
  stop working. `["/bin/sh", "-c", "…"]` is never offered: it keeps the shell as PID 1, the very
  thing the rule reports.
- Anything else (pipes, `;`, `||`, `&`, subshells, command substitution, backslashes,
  assignments before the command, a shell builtin as the program, a `SHELL` that is not a POSIX
  shell, the `` ` `` escape of Windows images, an exec form that is not JSON in another way than
  its quotes, such as a missing `]`): no fix.

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
import re

from mlops_lint.fix import Plan, Replace
from mlops_lint.model.bounds import json_too_deep
from mlops_lint.model.docker import Dockerfile, Instruction, execs, node_path, start_command
from mlops_lint.model.position import Span
from mlops_lint.model.shellc import POSIX_SHELLS
from mlops_lint.rule import DOCKERFILE, Finding, rule

# programs that only a shell runs (builtins and reserved words): no exec form, no `exec` before them
SHELL_ONLY = frozenset({
    "cd", "export", "source", ".", "set", "unset", "ulimit", "umask", "exit", "return", "trap", "wait", "eval",
    "exec", "shift", "alias", "read", "readonly", "local", "declare", "typeset", ":", "break", "continue",
    "getopts", "hash", "type", "command", "builtin", "jobs", "fg", "bg", "times", "let", "shopt", "pushd", "popd",
    "dirs", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while", "until", "for", "in",
    "function", "select", "time", "{", "}", "!", "[[", "]]", "coproc",
})
_REDIRECT = re.compile(r"\d*(?:>&(?:\d+|-)|<&(?:\d+|-)|>>|>|<)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9@*#?]")
_GLOB = frozenset("*?[]~{}!#")


def _lex(args: str) -> list[tuple[str, str, bool]] | None:
    """The shell command ``args`` as (kind, text, shelly) items: ``word`` (quotes removed,
    ``$NAME`` kept as written), ``&&`` and ``redirect``; ``shelly`` marks a word the shell still
    changes (``$``, globs). None for anything beyond that (pipes, ``;``, ``(``, backslashes,
    backticks, ``$(…)``, unclosed quotes): the fixes below do not guess at such commands."""
    items: list[tuple[str, str, bool]] = []
    pos, end = 0, len(args)
    while pos < end:
        ch = args[pos]
        if ch in " \t":
            pos += 1
            continue
        if args.startswith("&&", pos):
            items.append(("&&", "&&", True))
            pos += 2
            continue
        redirect = _REDIRECT.match(args, pos)
        if redirect is not None:
            items.append(("redirect", redirect.group(), True))
            pos = redirect.end()
            continue
        if ch in "|;&()`\\#":
            return None
        out: list[str] = []
        shelly = False
        while pos < end and args[pos] not in " \t|;&()<>":
            ch = args[pos]
            if ch == "'":
                close = args.find("'", pos + 1)
                if close < 0:
                    return None
                out.append(args[pos + 1:close])
                pos = close + 1
            elif ch == '"':
                close = args.find('"', pos + 1)
                if close < 0:
                    return None
                inner = args[pos + 1:close]
                if "`" in inner or "\\" in inner or "$(" in inner:
                    return None
                shelly = shelly or "$" in inner
                out.append(inner)
                pos = close + 1
            elif ch in "`\\":
                return None
            elif ch == "$":
                if args.startswith("$(", pos):
                    return None
                if args.startswith("${", pos):
                    close = args.find("}", pos)
                    if close < 0 or not _NAME.fullmatch(args[pos + 2:close]):
                        return None
                    out.append(args[pos:close + 1])
                    pos = close + 1
                else:
                    name = _NAME.match(args, pos + 1)
                    if name is None:
                        return None
                    out.append(args[pos:name.end()])
                    pos = name.end()
                shelly = True
            else:
                shelly = shelly or ch in _GLOB
                out.append(ch)
                pos += 1
        items.append(("word", "".join(out), shelly))
    return items


def _shell_ok(dockerfile: Dockerfile) -> bool:
    """Whether the shell form runs in a POSIX shell (no other SHELL, not a Windows file)."""
    if dockerfile.escape != "\\":
        return False
    for ins in dockerfile.instructions:
        shell = ins.effective
        if shell.keyword == "SHELL" and (not shell.exec_args or shell.exec_args[0].rsplit("/", 1)[-1] not in POSIX_SHELLS):
            return False
    return True


def autofix(ins: Instruction, safe: bool, prefix: bool, exec_ok: bool = True) -> Plan | None:
    """With ``exec_ok`` the exec form of a plain command (``safe`` as the caller judged it), else
    or for other commands with ``prefix`` ``exec`` before the last command of an ``&&`` chain
    (unsafe); None when neither fits (see Fix safety)."""
    if _invalid_array(ins.args):
        if not exec_ok:
            return None
        suggestion = exec_form(ins)
        if suggestion is None or "\\" in ins.args or ins.args_span is None or ins.args_span.line != ins.args_span.end_line:
            return None
        text = json.dumps(json.loads(ins.args.replace("'", '"')), ensure_ascii=False)
        return Plan(f"use the exec form: `{ins.keyword} {text}`", (Replace(ins.args_span, text),), safe)
    items = _lex(ins.args)
    if not items or not ins.commands:
        return None
    chain: list[list[tuple[str, str, bool]]] = [[]]
    for item in items:
        if item[0] == "&&":
            chain.append([])
        else:
            chain[-1].append(item)
    if len(chain) != len(ins.commands) or any(not part or part[0][0] != "word" for part in chain):
        return None
    last, command = chain[-1], ins.commands[-1]
    if command.assignments or not command.words or last[0][1] != command.words[0].text or last[0][1] in SHELL_ONLY:
        return None
    if exec_ok and len(chain) == 1 and all(kind == "word" and not shelly for kind, _, shelly in last):
        words = command.words
        if [text for _, text, _ in last] != [w.text for w in words]:
            return None
        literals = [json.dumps(w.text, ensure_ascii=False) for w in words]
        edits = [Replace(w.span, ("[" if i == 0 else "") + literal + ("]" if i == len(words) - 1 else ","))
                 for i, (w, literal) in enumerate(zip(words, literals))]
        shown = f"{ins.keyword} [{', '.join(literals)}]"
        return Plan(f"use the exec form: `{shown}`", tuple(edits), safe)
    if not prefix or ins.args.startswith("["):
        return None  # `exec` before a mangled exec form (`CMD ["python", "t.py"`) helps nobody
    start = command.words[0].span
    return Plan.unsafe_fix("start the last command with `exec`, so that it replaces the shell",
                           Replace(Span(start.line, start.col, start.line, start.col), "exec "))


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
    shell_ok = _shell_ok(dockerfile)
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
            # safe only for a CMD that nothing runs through (no ENTRYPOINT in the file); `exec …` only
            # where the shell is PID 1 (behind an exec-form ENTRYPOINT it is that entrypoint's argument)
            # an ENTRYPOINT with a CMD in effect keeps ignoring it: `exec …`, not the exec form
            autofix=autofix(ins, ins.keyword == "CMD" and entry is None, ins.keyword == "ENTRYPOINT" or entry is None,
                            exec_ok=ins.keyword == "CMD" or cmd is None) if shell_ok else None,
        )
