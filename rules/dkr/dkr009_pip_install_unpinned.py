"""A `pip install` in a Dockerfile installs packages at whatever version is newest.

## What it does
Flags `pip install` in RUN instructions (the same commands DKR004 reads: `pip3`, `python -m pip`,
`$PYTHON -m pip`, `uv pip install`, through `sudo`, `env` or `conda run`, in `&&` chains, heredoc
scripts and the exec form; in every stage, builders included) that names a package without an
exact version: `torch`, `transformers>=4.40`, `numpy~=1.26`, `vllm==0.6.*`. A requirement is
pinned by `==` (without a wildcard) or `===`, or by a direct reference (`pkg @ https://…`).

Not flagged:

- requirement files (`-r requirements.txt`: what they pin is theirs), local paths, archives and
  URLs (`pip install .`, `-e .`, `/tmp/wheels/*.whl`, `git+https://…`);
- a command with a constraints or overrides file (`-c constraints.txt`, uv's `--override`) or
  `--require-hashes`, or with `PIP_CONSTRAINT` set: the file decides the versions;
- the packaging tools themselves (`pip`, `setuptools`, `wheel`, `uv`: `pip install --upgrade pip`);
- words filled in at build time (`$PACKAGES`, `$(cat …)`).

The finding points at the first unpinned package and lists them.

## Why is this bad?
The article builds its training image from `requirements.txt` and wants "reproducible builds and
predictable CUDA/cuDNN behavior", versioned so that environments stay consistent. An unpinned
`pip install torch` gives each rebuild whatever PyPI serves that day: a new major version of
PyTorch, a wheel for another CUDA version, a transitive upgrade that changes numerics. Two images
built from the same Dockerfile a week apart then train differently, and a rebuild for a security
patch can break a job that ran yesterday.

## Example
```dockerfile
RUN pip install --no-cache-dir torch transformers>=4.40
```

Use instead:
```dockerfile
RUN pip install --no-cache-dir torch==2.4.1 transformers==4.44.2
```

## Known problems
- What a requirements file pins is not read.
- Which version to pin is the user's choice: there is no automatic fix.

## References
- pip, Repeatable installs: https://pip.pypa.io/en/stable/topics/repeatable-installs/
- PEP 440, version specifiers: https://peps.python.org/pep-0440/#version-specifiers
"""

import re

from mlops_lint.model.docker import Dockerfile, PipInstall, node_path, pip_install
from mlops_lint.rule import DOCKERFILE, Finding, rule

# `pip install` (and `uv pip install`) options that take a value
VALUE_OPTIONS = frozenset({
    "-r", "--requirement", "-c", "--constraint", "-e", "--editable", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--platform", "--python-version",
    "--implementation", "--abi", "--src", "--upgrade-strategy", "--progress-bar", "--trusted-host", "--cache-dir",
    "--log", "--proxy", "--retries", "--timeout", "--exists-action", "--global-option", "--install-option",
    "-C", "--config-settings", "--no-binary", "--only-binary", "--report", "--python", "-p", "--group",
    "--root-user-action", "--keyring-provider", "--cert", "--client-cert", "--use-feature", "--use-deprecated",
    "--build-option", "--index", "--default-index", "--override", "--extra", "--index-strategy", "--resolution",
    "--prerelease", "--exclude-newer", "--link-mode", "--python-platform", "--reinstall-package",
    "--upgrade-package", "-P", "--no-build-isolation-package", "--refresh-package", "--config-file",
})
# options that hand the versions to a file (or demand hashes, which pip accepts only for pinned ones)
PINNING_OPTIONS = frozenset({"-c", "--constraint", "--override", "--require-hashes", "--build-constraint"})
PACKAGING_TOOLS = frozenset({"pip", "setuptools", "wheel", "uv"})
_NAME = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)", re.S)
_ARCHIVES = (".whl", ".tar.gz", ".tgz", ".zip", ".tar.bz2", ".egg")


def unpinned(text: str) -> str | None:
    """The requirement's package name when ``text`` is a requirement without an exact version,
    else None (pinned, or not a requirement from an index: a path, URL, archive or variable)."""
    if not text or "$" in text or "`" in text or text.startswith((".", "/", "~")) or "/" in text or "@" in text:
        return None
    if text.lower().endswith(_ARCHIVES):
        return None
    match = _NAME.fullmatch(text.split(";", 1)[0].strip())
    if match is None:
        return None
    name, _, spec = match.groups()
    if name.lower().replace("_", "-") in PACKAGING_TOOLS:
        return None
    spec = spec.strip()
    if spec.startswith("===") or (spec.startswith("==") and "*" not in spec and "," not in spec):
        return None
    if spec and not spec.startswith(("==", ">", "<", "~", "!")):
        return None  # not a version specifier: not a requirement we can read
    return name


def unpinned_packages(pip: PipInstall, env) -> list | None:
    """The words of the install's unpinned requirements; None when a constraints file or
    ``PIP_CONSTRAINT`` decides the versions."""
    if env.get("PIP_CONSTRAINT") or env.get("UV_CONSTRAINT") or any(
            a.text.startswith(("PIP_CONSTRAINT=", "UV_CONSTRAINT=")) for a in pip.command.assignments):
        return None
    found = []
    words = pip.arguments
    i = 0
    while i < len(words):
        text = words[i].text
        if text.startswith("-"):
            option = text.split("=", 1)[0]
            if option in PINNING_OPTIONS:
                return None
            if option in VALUE_OPTIONS and "=" not in text:
                i += 2
                continue
            i += 1
            continue
        if unpinned(text) is not None:
            found.append(words[i])
        i += 1
    return found


@rule(code="DKR009", name="pip-install-unpinned", severity="info", scope=DOCKERFILE, tags=("dockerfile", "images"))
def check(dockerfile: Dockerfile, ctx):
    for stage in dockerfile.stages:
        for ins in stage.instructions:
            if ins.keyword != "RUN" or not ins.commands:
                continue
            env = None
            for index, command in enumerate(ins.commands):
                if not any("pip" in w.text for w in command.words[:6]):
                    continue  # cheap: no pip word near the start
                if env is None:
                    env = dockerfile.env_before(stage, ins)
                pip = pip_install(command, env)
                if pip is None:
                    continue
                found = unpinned_packages(pip, env)
                if not found:
                    continue
                shown = ", ".join(f"`{w.text}`" for w in found[:3]) + (f" and {len(found) - 3} more" if len(found) > 3 else "")
                span = found[0].span
                if ins.exec_form:  # every word carries the whole array's span: take the element's own
                    position = len(command.words) - len(pip.arguments) + pip.arguments.index(found[0])
                    span = ins.exec_spans[position] if position < len(ins.exec_spans) else span
                yield Finding(
                    span,
                    f"`{pip.written}` installs {shown} without an exact version: each rebuild of the image gets "
                    "whatever the index serves that day, so two builds of one Dockerfile can train differently",
                    node=node_path(stage, ins, index),
                    fix="pin each package (`torch==2.4.1`), or install from a requirements or constraints file "
                        "with exact versions",
                )
