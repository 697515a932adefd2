"""The parse floor: the fastest way available here to parse a tree's files into nodes with line marks.

``python bench/floor.py DIR`` walks DIR as the linter does (the same file names: ``*.yaml``,
``*.yml``, ``*.json``, Dockerfiles, ``*.sh``/``*.bash``), reads every file once, and

- composes every YAML/JSON document with libyaml (PyYAML's C parser and composer, ``CSafeLoader``:
  nodes with start and end marks), a parse error ending that file as it ends the linter's;
- tokenises Dockerfiles and shell scripts with the standard library's ``shlex`` (tokens with
  line numbers), the fastest line-marked tokeniser the standard library has.

``--build COMMAND ROOT…`` also runs a kustomize build (``kubectl kustomize``, the command the
linter runs) on each kustomization root, one after another, and composes what it prints: the
floor of a tree with kustomizations, whose built objects no linter can see without building them.

Nothing is converted, resolved, indexed or checked, so this is a lower bound for any linter that
reports positions: mlops-lint does all of that and runs 84 rules on top. It prints the number
of files and documents, and its own wall time from its first import to its exit.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time

START = time.perf_counter()

import yaml  # noqa: E402 - timed with the rest

YAML = (".yaml", ".yml", ".json")
SHELL = (".sh", ".bash")
SKIP = {".git", "node_modules", ".venv", "__pycache__"}


def is_dockerfile(name: str) -> bool:
    """The linter's rule (linter.discover.is_dockerfile_name), restated to keep its import out."""
    lower = name.lower()
    if lower.endswith(".dockerignore"):
        return False
    return (lower in ("dockerfile", "containerfile")
            or lower.startswith(("dockerfile.", "dockerfile-", "dockerfile_", "containerfile."))
            or lower.endswith((".dockerfile", ".containerfile")))


def main(root: str, build: list[str] | None = None, roots: list[str] = ()) -> None:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    files = documents = tokens = 0
    for folder in roots:
        built = subprocess.run([*build, folder], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False).stdout
        try:
            documents += sum(1 for _ in yaml.compose_all(built, Loader=loader))
        except yaml.YAMLError:
            pass
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP)
        for name in sorted(names):
            path = os.path.join(folder, name)
            if name.lower().endswith(YAML):
                with open(path, "rb") as handle:
                    data = handle.read()
                files += 1
                try:
                    for _ in yaml.compose_all(data, Loader=loader):
                        documents += 1
                except yaml.YAMLError:
                    pass
            elif name.lower().endswith(SHELL) or is_dockerfile(name):
                with open(path, "rb") as handle:
                    text = handle.read().decode("utf-8", "replace")
                files += 1
                lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
                lexer.whitespace_split = True
                try:
                    for _ in lexer:
                        tokens += 1
                except ValueError:  # an unclosed quote ends the file, as a parse error would
                    pass
    print(f"{files} files, {documents} YAML documents, {tokens} tokens in {time.perf_counter() - START:.3f} s")


if __name__ == "__main__":
    if len(sys.argv) > 3 and sys.argv[2] == "--build":
        main(sys.argv[1], sys.argv[3].split(), sys.argv[4:])
    else:
        main(sys.argv[1])
