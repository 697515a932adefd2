"""A container downloads code or packages when it starts instead of carrying them in its image.

## What it does
Flags a container (init and sidecar containers included) whose `command`/`args` fetch code at
start-up:

- `pip install` of packages or requirement files (`pip`, `pip3`, `python -m pip`, `uv pip`,
  through `sudo`, `env` or `exec`): not a local path or wheel only, not `--no-index`;
- a download piped into an interpreter that runs it: `curl -sSL https://… | bash`, `… | sh -s --
  args`, `wget -qO- … | python3 -`, and `bash -c "$(curl …)"`, `bash <(curl …)` (not an
  interpreter that reads it as data: `… | python3 -c '…json.load(sys.stdin)…'`, `… | python -m
  json.tool`, `… | bash parse.sh`);
- a download of a script (`curl -O https://…/setup.sh`, `wget https://…/train.py`: a URL whose
  path ends in `.sh`, `.bash`, `.py` or `.pl`).

The command is read directly (`command: [pip, install, …]`) or as the script of a `sh -c` /
`bash -c` start, split into its statements (`;`, `&&`, `|`, lines). The finding points at the
command or script item that holds the download.

## Why is this bad?
The article packages "model weights, metadata, and configurations in container images to enable
portability, simplified versioning", builds its training image with the requirements installed
(`RUN python -m pip install --no-cache-dir -r requirements.txt`), and pins it "by digest in
production to ensure reproducible builds". A container that installs at start throws that away:
every replica, restart and retry after a preemption downloads again (minutes of GPU time idle per
start, multiplied by the gang), the versions it gets change from one start to the next, a PyPI or
GitHub outage stops the job from starting, and code from the internet runs with the pod's
credentials without ever being scanned with the image.

## Example
```yaml
      containers:
      - name: trainer
        image: pytorch/pytorch:2.4.1-cuda12.4-cudnn9-runtime
        command: ["bash", "-c", "pip install transformers datasets && python train.py"]
```

Use instead (the packages installed in the image's Dockerfile):
```yaml
      containers:
      - name: trainer
        image: myacr.azurecr.io/ml/trainer:1.4.0
        command: ["python", "train.py"]
```

## Known problems
- Scripts the container runs from a file (`bash /scripts/start.sh`) are not read.
- `apt-get install`, `conda install` and `git clone` at start are not flagged.
- Moving the install into the image is a change of the image: there is no automatic fix.

## References
- Kubernetes, Images: https://kubernetes.io/docs/concepts/containers/images/
- pip, Repeatable installs: https://pip.pypa.io/en/stable/topics/repeatable-installs/
"""

import posixpath
import re

from mlops_lint.model.k8s import Container
from mlops_lint.model.shellc import POSIX_SHELLS, shell_c, statements
from mlops_lint.rule import CONTAINER, Finding, rule

_PIP = re.compile(r"pip\d*(?:\.\d+)?$")
_PYTHON = re.compile(r"python\d*(?:\.\d+)?$")
_WRAPPERS = frozenset({"sudo", "env", "exec", "command", "nohup", "time"})
INTERPRETERS = frozenset({*POSIX_SHELLS, "python", "python3", "perl", "ruby", "node"})
DOWNLOADERS = frozenset({"curl", "wget"})
_SCRIPT_URL = re.compile(r"(?:https?|ftp)://\S+\.(?:sh|bash|py|pl)(?:[?#]\S*)?$", re.I)
# an interpreter running a download substituted in: `bash -c "$(curl …)"`, `bash <(curl …)`
_SUBSTITUTED = re.compile(r"\b(?:ba|z|da)?sh\s+(?:-\w+\s+)*(?:\"?\$\(|<\()\s*(?:curl|wget)\b|"
                          r"\bpython\d*(?:\.\d+)?\s+(?:-c\s+)?\"?\$\(\s*(?:curl|wget)\b")
_LOCAL = (".", "/", "~")
_ARCHIVES = (".whl", ".tar.gz", ".zip")
_PIP_VALUE_OPTIONS = frozenset({"-t", "--target", "--prefix", "--root", "--cache-dir", "-i", "--index-url",
                                "--extra-index-url", "-f", "--find-links", "--trusted-host", "--log", "--timeout",
                                "--retries", "--proxy", "-c", "--constraint"})


def _strip_wrappers(words: tuple[str, ...]) -> tuple[str, ...]:
    while words and (posixpath.basename(words[0]) in _WRAPPERS or "=" in words[0] and not words[0].startswith("-")):
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[1:]
    return words


def pip_download(words: tuple[str, ...]) -> str | None:
    """``pip install …`` (as written, shortened) when the statement installs from an index."""
    words = _strip_wrappers(words)
    if not words:
        return None
    program = posixpath.basename(words[0])
    if _PIP.match(program):
        rest = words[1:]
    elif _PYTHON.match(program) and len(words) > 2 and words[1] == "-m" and words[2] == "pip":
        rest = words[3:]
    elif program == "uv" and len(words) > 1 and words[1] == "pip":
        rest = words[2:]
    else:
        return None
    if not rest or rest[0] != "install" or "--no-index" in rest:
        return None
    remote, i = False, 1
    while i < len(rest):
        word = rest[i]
        if word in ("-r", "--requirement") or word.startswith("--requirement="):
            remote = True  # a requirements file names packages of the index
            i += 2
            continue
        if word.startswith("-"):
            i += 2 if word in _PIP_VALUE_OPTIONS else 1
            continue
        if not (word.startswith(_LOCAL) or word.lower().endswith(_ARCHIVES) and "://" not in word):
            remote = True
        i += 1
    if not remote:
        return None
    shown = " ".join(words)
    return shown if len(shown) <= 60 else shown[:57] + "…"


def runs_stdin(arguments: tuple[str, ...]) -> bool:
    """Whether an interpreter with these arguments runs the code it reads on stdin (``sh``,
    ``bash -s``, ``python3 -``), not a program of its own that reads the download as data
    (``python3 -c '…json.load(sys.stdin)…'``, ``python3 -m json.tool``, ``bash parse.sh``)."""
    for word in arguments:
        if word == "-":
            return True  # python: the program from stdin
        if word.startswith("--"):
            continue
        if word.startswith("-"):
            flags = word[1:]
            if flags.startswith("m") or "c" in flags:
                return False  # inline code (`-c`, `-ec`) or a module (`-m json.tool`)
            if "s" in flags:
                return True  # sh/bash `-s`: commands from stdin
            continue
        return False  # a script file of its own
    return True


def downloads(statements_: tuple[tuple[tuple[str, ...], str | None], ...], raw: str) -> str | None:
    """What the statements fetch at start, for the message, else None."""
    for position, (words, end) in enumerate(statements_):
        found = pip_download(words)
        if found is not None:
            return f"`{found}`"
        program = posixpath.basename(_strip_wrappers(words)[0]) if _strip_wrappers(words) else ""
        if program in DOWNLOADERS:
            if end in ("|", "|&") and position + 1 < len(statements_):
                follower = _strip_wrappers(statements_[position + 1][0])
                if follower and posixpath.basename(follower[0]) in INTERPRETERS and runs_stdin(follower[1:]):
                    return f"`{program} … | {posixpath.basename(follower[0])}`"
            url = next((w for w in words if _SCRIPT_URL.match(w)), None)
            if url is not None:
                return f"`{program}` of the script `{url if len(url) <= 60 else url[:57] + '…'}`"
    if _SUBSTITUTED.search(raw):
        return "an interpreter running a `curl`/`wget` download"
    return None


@rule(code="IMG007", name="code-downloaded-at-start", severity="warning", scope=CONTAINER, tags=("images", "supply-chain"))
def check(container: Container, ctx):
    strings = container.command_strings
    if not strings or not any(("pip" in s or "curl" in s or "wget" in s) for s in strings):
        return  # cheap: nothing that could download
    start = shell_c(container)
    if start is not None:
        what = downloads(statements(start.script), start.script)
        span, node = start.span, start.node
    elif posixpath.basename(strings[0]) not in POSIX_SHELLS and "command" in container.body:
        seq = container.body.get_seq("command")
        if not seq:
            return
        what = downloads(((tuple(strings), None),), "")
        span, node = seq.item_span(0), container.path + ("command", 0)
    else:
        return
    if what is None:
        return
    yield Finding(
        span,
        f"{container.kind_label} `{container.name}` downloads code when it starts ({what}): every replica, restart "
        "and retry after preemption fetches it again, gets whatever is served that day, and fails to start when the "
        "source is down; install it in the image instead",
        node=node,
        fix="move the install into the image's Dockerfile (`RUN python -m pip install --no-cache-dir -r "
            "requirements.txt`) and start the program directly",
    )
