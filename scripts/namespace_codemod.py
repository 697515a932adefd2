"""Move mlops-lint's import names into one namespace, ``mlops_lint`` (issue 39 item 1).

The repository keeps its folders (``linter/`` is the package ``mlops_lint``, ``rules/`` is
``mlops_lint.rules``, mapped by setuptools' ``package-dir`` in pyproject.toml); what changes is
every name by which code, tests, benches and documented command lines reach them:

- import statements (``from linter.x import``, ``import linter.x``, ``from rules.gpu import``),
  found with ast and rewritten token by token (nothing else on the line moves); where a plain
  ``import linter.x`` binds the name ``linter``, that name's uses in the file follow;
- string literals that name a module (``"linter.sources.helm_sdk"``, ``"rules."`` prefixes,
  ``f"rules.{domain}.{stem}"``, code given to ``python -c``), ``"-m", "linter"`` in argument
  lists and ``resources.files("linter")``; a dotted name is rewritten only when it names a real
  module of the tree (``rules.GPU001.x`` is a config path and stays);
- command lines users run (``python -m linter``), in strings, comments, docstrings and the
  README, docs, CI and pre-commit files; other prose is left alone;
- pyproject.toml (the package-dir mapping and the package list, regenerated from the folders on
  every run, the console script, the plugin entry point, the package data);
- two anchored edits (PATCHES below): the rules package's opening comment and the test extra's
  build tools. The other edits where a name was logic rather than a spelling (how the built-in
  rules are found, which cached classes may be built, the plugin error, the layout test's
  module names) were made once, by the run that converted the repository (0aca678), and live in
  that code now: a copy of it here would only fail the next run once that code changed.

It is re-runnable and idempotent: on a converted tree it changes nothing (tests/test_namespace.py
checks that on the repository itself), so it can be run again after merging branches written
against the old names. An anchored edit whose old and new text are both missing is reported and
the run fails (exit 1) without writing anything: that code changed, convert it by hand.

    python scripts/namespace_codemod.py            # convert the checkout this script lives in
    python scripts/namespace_codemod.py --check    # list what would change; exit 1 if anything
    python scripts/namespace_codemod.py PATH       # another checkout

After a conversion, reinstall (``pip install -e .``) so the environment maps ``mlops_lint``.
"""

from __future__ import annotations

import argparse
import ast
import io
import os
import re
import sys
import tokenize
from pathlib import Path

NEW = "mlops_lint"
SKIP_DIRS = {".git", ".venv", "venv", ".tox", "build", "dist", "node_modules", ".tools", "__pycache__", "fixtures",
             ".pytest_cache", ".hypothesis"}
SELF = {"scripts/namespace_codemod.py", "tests/test_namespace.py"}  # hold the old names on purpose
TEXT_FILES = ("README.md", "CONTRIBUTING.md", ".pre-commit-hooks.yaml", ".ci", "docs", ".github", "Makefile",
              "tox.ini", "setup.cfg")
TEXT_SUFFIXES = {".md", ".yaml", ".yml", ".txt", ".sh", ".cfg", ".ini", ".toml", ""}

COMMAND = re.compile(r"(?<![\w-])(-m\s+)linter(?![\w/-])")  # python -m linter, -m linter.docs


def _children(folder: Path) -> set[str]:
    """The names a dotted module path may continue with after the package ``folder``."""
    if not folder.is_dir():
        return set()
    return {p.stem if p.suffix == ".py" else p.name for p in folder.iterdir()
            if (p.suffix == ".py" or p.is_dir()) and p.name != "__pycache__" and p.stem.isidentifier()}


class Rewriter:
    def __init__(self, root: Path):
        self.root = root
        linter, rules = _children(root / "linter"), _children(root / "rules")
        alt = lambda names: "|".join(sorted(map(re.escape, names), key=len, reverse=True)) or "(?!)"  # noqa: E731
        # inside a string: a dotted module name, a prefix ("rules." alone) or an f-string's start
        self.subs = [
            (re.compile(rf"(?<![\w./-])linter\.(?=(?:{alt(linter)})\b|\{{|[\"']+$)"), f"{NEW}."),
            (re.compile(rf"(?<![\w./-])rules\.(?=(?:{alt(rules)})\b|\{{|[\"']+$)"), f"{NEW}.rules."),
            (re.compile(r"(?<![\w.])from linter import\b"), f"from {NEW} import"),
            (re.compile(r"(?<![\w.])from rules import\b"), f"from {NEW}.rules import"),
            (re.compile(r"(?<![\w.`])import linter\b(?![./-])"), f"import {NEW}"),
            (COMMAND, rf"\g<1>{NEW}"),
            (re.compile(r"(builtin\s*=\s*)rules(?![\w.])"), rf"\g<1>{NEW}.rules"),  # entry_points.txt text
        ]

    # --- Python ---------------------------------------------------------------------------------

    def python(self, path: Path, text: str) -> str:
        try:
            tree = ast.parse(text)
            tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
        except (SyntaxError, tokenize.TokenError) as error:
            raise SystemExit(f"{path}: cannot parse ({error}); convert it by hand") from None
        lines = text.splitlines(keepends=True)

        def char_col(lineno: int, col: int) -> int:  # ast's byte offset -> tokenize's character offset
            return len(lines[lineno - 1].encode("utf-8")[:col].decode("utf-8", "replace"))

        edits: dict[tuple[int, int], tuple[str, str]] = {}  # token start -> (old, new)
        prose: set[tuple[int, int]] = set()  # docstrings and other bare string statements
        renamed = False
        for node in ast.walk(tree):
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                prose.add((node.lineno, char_col(node.lineno, node.col_offset)))
            if isinstance(node, ast.ImportFrom) and not node.level and node.module:
                root = node.module.split(".")[0]
                if root in ("linter", "rules"):
                    start = (node.lineno, char_col(node.lineno, node.col_offset))
                    token = self._after(tokens, start, "from")
                    edits[token.start] = (root, NEW if root == "linter" else f"{NEW}.rules")
            elif isinstance(node, ast.Import):
                start = (node.lineno, char_col(node.lineno, node.col_offset))
                end = (node.end_lineno, char_col(node.end_lineno, node.end_col_offset))
                names = [t for t in tokens if start <= t.start < end]
                expect_name = False
                for t in names:
                    if t.type == tokenize.NAME and t.string == "import" or t.type == tokenize.OP and t.string == ",":
                        expect_name = True
                    elif t.type == tokenize.NAME and expect_name:
                        expect_name = False
                        if t.string in ("linter", "rules"):
                            edits[t.start] = (t.string, NEW if t.string == "linter" else f"{NEW}.rules")
                for alias in node.names:
                    root = alias.name.split(".")[0]
                    if alias.asname is None and root == "linter":
                        renamed = True
                    elif alias.asname is None and root == "rules":
                        raise SystemExit(f"{path}:{node.lineno}: `import {alias.name}` binds `rules`; convert by hand")
        if renamed:  # `import linter.x` bound the name `linter`: its uses follow
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id == "linter":
                    if not isinstance(node.ctx, ast.Load):
                        raise SystemExit(f"{path}:{node.lineno}: `linter` is also assigned; convert by hand")
                    edits[(node.lineno, char_col(node.lineno, node.col_offset))] = ("linter", NEW)
                elif isinstance(node, (ast.arg, ast.FunctionDef, ast.ClassDef)) and getattr(
                        node, "arg", getattr(node, "name", None)) == "linter":
                    raise SystemExit(f"{path}:{node.lineno}: `linter` is also a local name; convert by hand")
        significant = [t for t in tokens if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT,
                                                           tokenize.INDENT, tokenize.DEDENT)]
        for i, t in enumerate(significant):
            if t.type != tokenize.STRING or t.start in edits:
                continue
            if t.start in prose:
                new = COMMAND.sub(rf"\g<1>{NEW}", t.string)
            elif _literal(t.string) == "linter":
                before = [s.string for s in significant[max(0, i - 3):i]]
                if len(before) >= 2 and before[-1] == "," and _literal(before[-2]) == "-m":
                    new = t.string.replace("linter", NEW)  # [sys.executable, "-m", "linter", ...]
                elif len(before) >= 2 and before[-1] == "(" and before[-2] == "files":
                    new = t.string.replace("linter", NEW)  # importlib.resources.files("linter")
                else:
                    new = t.string
            elif t.string.lstrip("rRuUfF").startswith(("b", "B")):
                new = t.string
            else:
                new = t.string
                for pattern, replacement in self.subs:
                    new = pattern.sub(replacement, new)
            if new != t.string:
                edits[t.start] = (t.string, new)
        for t in tokens:  # comments: command lines only
            if t.type == tokenize.COMMENT:
                new = COMMAND.sub(rf"\g<1>{NEW}", t.string)
                if new != t.string:
                    edits[t.start] = (t.string, new)
        return _apply(text, lines, edits)

    @staticmethod
    def _after(tokens: list[tokenize.TokenInfo], start: tuple[int, int], keyword: str) -> tokenize.TokenInfo:
        for i, t in enumerate(tokens):
            if t.start >= start and t.type == tokenize.NAME and t.string == keyword:
                return tokens[i + 1]
        raise AssertionError(f"no {keyword!r} after {start}")

    # --- other files ------------------------------------------------------------------------------

    def text(self, text: str) -> str:
        return COMMAND.sub(rf"\g<1>{NEW}", text)


def _literal(token: str) -> object:
    try:
        return ast.literal_eval(token)
    except (ValueError, SyntaxError):
        return None


def _apply(text: str, lines: list[str], edits: dict[tuple[int, int], tuple[str, str]]) -> str:
    if not edits:
        return text
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out = text
    for (row, col), (old, new) in sorted(edits.items(), reverse=True):
        at = starts[row - 1] + col
        if out[at:at + len(old)] != old:
            raise AssertionError(f"line {row} col {col}: expected {old!r}")
        out = out[:at] + new + out[at + len(old):]
    return out


# --- pyproject.toml ---------------------------------------------------------------------------------

SETUPTOOLS_BLOCK = re.compile(r"(?ms)^\[tool\.setuptools(?:\.packages\.find)?\]\n.*?(?=^\[|\Z)")


def _packages(root: Path) -> list[str]:
    """Every folder of ``linter/`` and ``rules/`` as a package of the namespace (folders without
    ``__init__.py``, such as ``data``, are namespace packages holding package data, as
    ``packages.find`` listed them before)."""
    found = []
    for folder, name in (("linter", NEW), ("rules", f"{NEW}.rules")):
        base = root / folder
        seen = set()
        for current, dirs, _files in os.walk(base, followlinks=True):
            real = os.path.realpath(current)
            if real in seen:
                dirs[:] = []
                continue
            seen.add(real)
            dirs[:] = sorted(d for d in dirs if d != "__pycache__" and d.isidentifier())
            rel = Path(current).relative_to(base).parts
            found.append(".".join((name, *rel)))
    return sorted(found)


def pyproject(root: Path, text: str) -> str:
    packages = "".join(f'    "{p}",\n' for p in _packages(root))
    block = ("[tool.setuptools]\n"
             "# One import namespace (issue 39): the folders linter/ and rules/ install as the package\n"
             "# mlops_lint and its subpackage mlops_lint.rules, so nothing of ours is named `linter` or\n"
             "# `rules` in site-packages. The list is written by scripts/namespace_codemod.py from the\n"
             "# folders (tests/test_namespace.py keeps it current): re-run it after adding a package.\n"
             f'package-dir = {{ "{NEW}" = "linter", "{NEW}.rules" = "rules" }}\n'
             f"packages = [\n{packages}]\n\n")
    if not SETUPTOOLS_BLOCK.search(text):
        raise SystemExit("pyproject.toml: no [tool.setuptools] or [tool.setuptools.packages.find] table")
    text = SETUPTOOLS_BLOCK.sub(lambda _m: block, text, count=1)
    text = text.replace('mlops-lint = "linter.cli:run"', f'mlops-lint = "{NEW}.cli:run"')
    text = text.replace('builtin = "rules"', f'builtin = "{NEW}.rules"')
    text = text.replace('\n"linter" = ["schemas/', f'\n"{NEW}" = ["schemas/')
    text = text.replace("so the same files ship inside the wheel as package data of `linter`.",
                        f"so the same files ship inside the wheel as package data of `{NEW}`.")
    return text


# --- anchored edits ---------------------------------------------------------------------------------
# (file, old, new): applied after the token rewrite, to its result; skipped when `new` is there
# (applied before; for a deletion, when `old` is gone); `old` not there exactly once fails the run.

PATCHES: list[tuple[str, str, str]] = [
    ("rules/__init__.py", '''# mlops-lint loads this package from beside `linter` (linter.origin.rules_package) and checks this
# mark, so a third-party top-level `rules` package is never taken for it
''', '''# installed as mlops_lint.rules (pyproject.toml's package-dir); mlops_lint.origin.rules_package
# checks this mark
'''),
    ("pyproject.toml", """test = [
    "pytest>=8",
""", """test = [
    "pytest>=8",
    # tests/test_namespace.py builds the wheel offline (pip wheel --no-build-isolation) and installs
    # it beside a distribution with top-level `linter` and `rules` modules: the build backend here
    "setuptools>=68",
    "wheel",
"""),
    # a plugin written against the old import names: a clear error, not a traceback
]


# --- the run ------------------------------------------------------------------------------------


def _files(root: Path):
    for current, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.endswith(".egg-info"))
        for name in sorted(files):
            yield Path(current, name)


def convert(root: Path) -> tuple[dict[Path, tuple[str, str]], list[str]]:
    """{file: (old text, new text)} for every file that changes, and the anchored edits that failed."""
    rewriter = Rewriter(root)
    changed: dict[Path, tuple[str, str]] = {}
    for path in _files(root):
        rel = path.relative_to(root).as_posix()
        if rel in SELF or path.is_symlink():
            continue
        if path.suffix == ".py":
            old = path.read_text(encoding="utf-8")
            new = rewriter.python(path, old)
        elif rel == "pyproject.toml":
            old = path.read_text(encoding="utf-8")
            new = pyproject(root, old)
        elif rel.split("/")[0] in TEXT_FILES and path.suffix in TEXT_SUFFIXES:
            try:
                old = path.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                continue
            new = rewriter.text(old)
        else:
            continue
        if new != old:
            changed[path] = (old, new)
    failed = []
    for rel, old_text, new_text in PATCHES:
        path = root / rel
        if not path.exists():
            print(f"namespace_codemod: {rel} is missing: its anchored edit skipped", file=sys.stderr)
            continue
        current = changed[path][1] if path in changed else path.read_text(encoding="utf-8")
        if (new_text in current) if new_text.strip() else (old_text not in current):
            continue  # applied before (a deletion: its text is gone)
        if current.count(old_text) != 1:
            failed.append(f"{rel}: the text to replace is not there once:\n{old_text}")
            continue
        changed[path] = (changed[path][0] if path in changed else current, current.replace(old_text, new_text))
    return changed, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--check", action="store_true", help="write nothing; list what would change, exit 1 if any")
    args = parser.parse_args(argv)
    changed, failed = convert(args.root.resolve())
    for message in failed:
        print(f"namespace_codemod: {message}", file=sys.stderr)
    if failed:
        print("namespace_codemod: nothing written; convert those by hand (or update PATCHES in scripts/namespace_codemod.py)",
              file=sys.stderr)
        return 1
    for path, (_old, new) in sorted(changed.items()):
        print(path.relative_to(args.root.resolve()).as_posix())
        if not args.check:
            path.write_text(new, encoding="utf-8")
    print(f"{len(changed)} file(s) {'would change' if args.check else 'changed'}", file=sys.stderr)
    return 1 if args.check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
