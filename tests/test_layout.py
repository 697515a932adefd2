"""The code's layout: the packages ``linter`` and ``rules`` import one way (no import circle, lazy
imports inside functions included) and no module uses another module's private name
(``from m import _x``, or ``m._x`` on an imported module ``m``). Read from the source with ast,
so the check needs no import and sees every import, wherever it stands."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("linter", "rules")


def _modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for file in sorted((root / package).rglob("*.py")):
            parts = file.relative_to(root).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = file
    return found


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _imports(name: str, file: Path, modules: dict[str, Path]) -> tuple[set[str], list[str]]:
    """The modules of ``modules`` that ``name`` imports, and its uses of other modules' private names."""
    tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    edges: set[str] = set()
    private: list[str] = []
    aliases: dict[str, str] = {}  # a local name bound to one of the modules

    def add(target: str) -> None:
        if target in modules and target != name:
            edges.add(target)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
                if alias.asname and alias.name in modules:
                    aliases[alias.asname] = alias.name
                if any(_private(part) for part in alias.name.split(".")) and alias.name.split(".")[0] in PACKAGES:
                    private.append(f"{file.name}:{node.lineno} imports {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in modules:
                    add(full)
                    aliases[alias.asname or alias.name] = full
                else:
                    add(base)
                    if _private(alias.name) and base in modules:
                        private.append(f"{file.name}:{node.lineno} imports {alias.name} from {base}")
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases
                and _private(node.attr) and aliases[node.value.id] != name):
            private.append(f"{file.name}:{node.lineno} uses {aliases[node.value.id]}.{node.attr}")
    return edges, private


def _graph(modules: dict[str, Path]) -> tuple[dict[str, set[str]], list[str]]:
    graph, private = {}, []
    for name, file in modules.items():
        graph[name], found = _imports(name, file, modules)
        private.extend(f"{name} ({where})" for where in found)
    return graph, private


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    circles.append(sorted(component))
    return circles


def test_no_import_circle() -> None:
    graph, _ = _graph(_modules())
    assert _circles(graph) == []


def test_no_module_uses_another_modules_private_name() -> None:
    _, private = _graph(_modules())
    assert private == []


def test_the_engine_is_a_package_of_rooms() -> None:
    """What a newcomer looks for has one place: the run, the survey, the passes, the workers."""
    modules = _modules()
    for room in ("run", "projects", "survey", "passes", "runner", "workers", "memory", "selection"):
        assert f"linter.engine.{room}" in modules
    assert "linter.sources.files" in modules
    graph, _ = _graph(modules)
    assert "linter.engine" not in graph["linter.validation.crds"]  # reading a file is the sources' job


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return _modules(root, ("pkg",))


@pytest.mark.parametrize("files, circles", [
    ({"pkg/__init__.py": "", "pkg/a.py": "def f():\n    from pkg.b import g\n", "pkg/b.py": "from pkg import a\n"},
     [["pkg.a", "pkg.b"]]),  # a lazy import inside a function counts
    ({"pkg/__init__.py": "", "pkg/a.py": "from .b import g\n", "pkg/b.py": "import pkg.c\n",
      "pkg/c.py": "from pkg.a import f\n"}, [["pkg.a", "pkg.b", "pkg.c"]]),
    ({"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import g\n", "pkg/b.py": "x = 1\n"}, []),
])
def test_the_circle_check_finds_a_circle(tmp_path: Path, files: dict[str, str], circles: list) -> None:
    graph, _ = _graph(_write(tmp_path, files))
    assert _circles(graph) == circles


def test_the_private_check_finds_private_uses(tmp_path: Path) -> None:
    modules = _write(tmp_path, {
        "pkg/__init__.py": "", "pkg/a.py": "_x = 1\ndef _f():\n    pass\n",
        "pkg/b.py": "from pkg.a import _x\nfrom pkg import a\ny = a._f()\nfrom pkg.a import __doc__\n",
        "pkg/c.py": "from pkg.a import _x as x\n",
    })
    _, private = _graph(modules)
    assert private == ["pkg.b (b.py:1 imports _x from pkg.a)", "pkg.b (b.py:3 uses pkg.a._f)",
                       "pkg.c (c.py:1 imports _x from pkg.a)"]
