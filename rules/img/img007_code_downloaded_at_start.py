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

A shell script the container runs from a file (`bash /scripts/start.sh`, `command:
[/scripts/start.sh]`, or `bash`, `sh`, `source` or `.` of it in a `sh -c` script) is read too
when the file is a key of a ConfigMap of the project mounted there (a `configMap` volume at the
script's folder, through its `items` if it lists them, or at the script's path with `subPath`):
the finding points at the item that names the script and names the ConfigMap's key.

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
- A script the container runs from its image (a `COPY` of the Dockerfile), a Secret or a
  projected volume is not read, nor a script that a script runs.
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


def _script_runs(container: Container) -> list[tuple[str, object, tuple]]:
    """(path, span, node) of each shell script file the container's command runs: ``bash
    /scripts/start.sh`` or ``/scripts/start.sh`` as the command, or a statement of its ``sh -c``
    script that runs one (``bash``/``sh``, ``source``, ``.`` or the path itself)."""
    found = []
    start = shell_c(container)
    if start is not None:
        for words, _ in statements(start.script):
            words = _strip_wrappers(words)
            path = _script_word(words)
            if path is not None:
                found.append((path, start.span, start.node))
        return found
    strings = container.command_strings
    path = _script_word(tuple(strings))
    if path is None:
        return found
    for field in ("command", "args"):
        seq = container.body.get_seq(field)
        for index, item in enumerate(seq or ()):
            if item == path:
                return [(path, seq.item_span(index), container.path + (field, index))]
    return found


def _script_word(words: tuple[str, ...]) -> str | None:
    """The script file a command runs (a word ending in ``.sh``/``.bash``), else None."""
    if not words:
        return None
    program = posixpath.basename(words[0])
    if program in POSIX_SHELLS or program in ("source", "."):
        rest = [w for w in words[1:] if not w.startswith("-")]
        if words[1:2] and words[1].startswith("-") and "c" in words[1][1:]:
            return None  # `bash -c …`: inline code, read as such elsewhere
        candidate = rest[0] if rest else None
    else:
        candidate = words[0]
    if candidate is not None and candidate.endswith((".sh", ".bash")) and "$" not in candidate:
        return candidate
    return None


def _mounted_script(container: Container, path: str, ctx) -> tuple[object, str] | None:
    """(ConfigMap, key) whose text the container sees at ``path``: a ``configMap`` volume
    mounted at its folder (through ``items`` when listed) or at the path itself (``subPath``)."""
    working = container.body.get("workingDir")
    if not path.startswith("/"):
        if not isinstance(working, str) or not working.startswith("/"):
            return None
        path = posixpath.join(working, path)
    path = posixpath.normpath(path)
    volumes = {v.get("name"): v for _, v in container.pod.volumes}
    for _, mount in container.volume_mounts:
        where, sub = mount.get("mountPath"), mount.get("subPath")
        volume = volumes.get(mount.get("name"))
        source = volume.get("configMap") if volume is not None else None
        if not isinstance(where, str) or not isinstance(source, dict) or not isinstance(source.get("name"), str):
            continue
        where = posixpath.normpath(where)
        if isinstance(sub, str) and sub:
            relative = sub if path == where else None
        else:
            relative = path[len(where) + 1:] if path.startswith(where.rstrip("/") + "/") else None
        if not relative:
            continue
        items = source.get("items")
        if isinstance(items, list):
            key = next((i.get("key") for i in items if isinstance(i, dict) and i.get("path") == relative), None)
        else:
            key = relative if "/" not in relative else None
        if not isinstance(key, str):
            continue
        namespace = container.obj.namespace
        for config in ctx.index.named("ConfigMap", source["name"]):
            if config.group == "" and (not namespace or not config.namespace or config.namespace == namespace):
                return config, key
    return None


def _script_download(config, key: str, ctx) -> str | None:
    data = config.body.get("data")
    text = data.get(key) if isinstance(data, dict) else None
    if not isinstance(text, str):
        return None
    return ctx.index.memo(("IMG007-script", config.key, key), lambda: downloads(statements(text), text))


@rule(code="IMG007", name="code-downloaded-at-start", severity="warning", scope=CONTAINER, tags=("images", "supply-chain"))
def check(container: Container, ctx):
    strings = container.command_strings
    if not strings:
        return
    inline = list(_inline(container, strings))
    if inline:
        yield from inline
    elif container.body.get("volumeMounts") and any(".sh" in s or ".bash" in s for s in strings):
        yield from _from_scripts(container, ctx)  # cheap: a script file, and a mounted volume, are named first


def _inline(container: Container, strings: list[str]):
    """The finding of a download the command or its ``sh -c`` script makes itself."""
    if not any(("pip" in s or "curl" in s or "wget" in s) for s in strings):
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


def _from_scripts(container: Container, ctx):
    for path, span, node in _script_runs(container):
        found = _mounted_script(container, path, ctx)
        if found is None:
            continue
        config, key = found
        what = _script_download(config, key, ctx)
        if what is None:
            continue
        data = config.body.get_map("data")
        line = data.key_span(key).line if data is not None else config.span.line
        yield Finding(
            span,
            f"{container.kind_label} `{container.name}` runs `{path}` (key `{key}` of ConfigMap `{config.name}`, "
            f"{config.path}:{line}), which downloads code when it starts ({what}): every replica, restart and retry "
            "after preemption fetches it again, gets whatever is served that day, and fails to start when the source "
            "is down; install it in the image instead",
            node=node,
            fix="move the install into the image's Dockerfile (`RUN python -m pip install --no-cache-dir -r "
                "requirements.txt`) and run the script's remaining steps directly",
        )
        return
