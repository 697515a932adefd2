"""Which program a build runs (kustomize, kubectl; Helm may use it too): never one the linted
tree chooses.

A project's config comes with the tree it lints, so it may only *name* a program from a fixed
list (``kustomize``, ``kubectl``), which is then looked up on PATH's absolute folders; a path
(``tools/kustomize``, or an absolute one such as ``/proc/self/cwd/kustomize`` or the checkout's
predictable CI workspace) is refused. Another program is chosen by the person who runs the
linter, outside the tree: an environment variable (``MLOPS_LINT_KUSTOMIZE=/opt/bin/kustomize``)
naming an absolute path whose file name is one of the fixed names.
"""

from __future__ import annotations

import os


class ProgramRefused(ValueError):
    """A configured program mlops-lint will not run (the message says why)."""


def on_path(name: str) -> str | None:
    """``name`` found on PATH's absolute folders only (a relative entry such as ``.`` would let
    the linted tree supply the program)."""
    import shutil

    folders = [entry for entry in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(entry)]
    return shutil.which(name, path=os.pathsep.join(folders)) if folders else None


def named(configured: str, names: tuple[str, ...] | list[str], setting: str, variable: str) -> None:
    """Refuse a program a config names other than by one of ``names``."""
    if configured not in names:
        what = "a path" if os.sep in configured or (os.altsep and os.altsep in configured) else "not one of them"
        raise ProgramRefused(f"{setting} may only name {' or '.join(names)} (found on PATH); {configured!r} is {what}: "
                             f"the config comes with the tree and may not choose the program (set {variable} to an "
                             "absolute path to run another)")


def chosen(names: tuple[str, ...] | list[str], variable: str) -> tuple[str, str] | None:
    """(name, absolute program) given by the environment variable ``variable`` (the user's, not
    the tree's); None when unset. A value that is not an absolute path to an executable file
    whose name is one of ``names`` is refused."""
    value = os.environ.get(variable)
    if not value:
        return None
    name = os.path.basename(value)
    if not os.path.isabs(value) or name not in names:
        raise ProgramRefused(f"{variable}={value!r} must be an absolute path to {' or '.join(names)}")
    if not (os.path.isfile(value) and os.access(value, os.X_OK)):
        raise ProgramRefused(f"{variable}={value!r} is not an executable file")
    return name, value


MAX_OUTPUT = 64 << 20  # the most a build or a render may print (kustomize, Helm)


def build_environment() -> dict[str, str]:
    """A build's (or a render's) environment: no network of its own (proxies that lead nowhere), no prompts."""
    env = {key: value for key, value in os.environ.items() if not key.upper().endswith("_PROXY")}
    nowhere = "http://127.0.0.1:9"
    env.update({"HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "ALL_PROXY": nowhere, "http_proxy": nowhere,
                "https_proxy": nowhere, "NO_PROXY": "", "no_proxy": "", "GIT_TERMINAL_PROMPT": "0",
                "GIT_ALLOW_PROTOCOL": "file"})
    return env
