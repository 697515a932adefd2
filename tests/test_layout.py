"""The code's layout: the packages ``linter`` and ``rules`` import one way (no import circle, lazy
imports inside functions included), every import runs down the layers of :data:`LAYERS` (the
whiteboard) or is named, with why, in its module's opening comment, and no module uses another
module's private name (``from m import _x``, or ``m._x`` on an imported module ``m``). Read from
the source with ast, so the check needs no import and sees every import, wherever it stands."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("linter", "rules")
NAMES = {"linter": "mlops_lint", "rules": "mlops_lint.rules"}  # folder -> import name (pyproject's package-dir)

# The whiteboard: the layers, lowest first. A module imports from its own layer and the ones below;
# an import up the layers is named in the importing module's opening comment, in a paragraph
# starting "Up the layers:" (the module's ``name`` in double backquotes, with why). A module's
# layer is that of the longest name below that it is, or is under.
LAYERS: tuple[tuple[str, ...], ...] = (
    # the base: no knowledge of manifests, rules or runs
    ("mlops_lint", "mlops_lint.digest", "mlops_lint.docparts", "mlops_lint.families", "mlops_lint.formats", "mlops_lint.output",
     "mlops_lint.plugins", "mlops_lint.programs", "mlops_lint.refkinds", "mlops_lint.roots", "mlops_lint.suggest"),
    # what is read and what a rule is given: the loaders, the model, validation, CEL, the index, the
    # config, a rule's contract and its findings and fix plans
    ("mlops_lint.model", "mlops_lint.sources", "mlops_lint.validation", "mlops_lint.cel", "mlops_lint.index", "mlops_lint.discover",
     "mlops_lint.profiles", "mlops_lint.config", "mlops_lint.custom", "mlops_lint.rule", "mlops_lint.result", "mlops_lint.fix",
     "mlops_lint.fix.plans", "mlops_lint.fix.iac", "mlops_lint.cachedata", "mlops_lint.cachecolumns", "mlops_lint.origin"),
    # the rules and their catalogue, suppressions
    ("mlops_lint.rules", "mlops_lint.registry", "mlops_lint.ruleindex", "mlops_lint.suppress"),
    # the engine: a run, its builds and cache, and the fix runs that apply plans
    ("mlops_lint.engine", "mlops_lint.cache", "mlops_lint.fix.resolve", "mlops_lint.fix.apply", "mlops_lint.fix.run",
     "mlops_lint.fix.invariant"),
    # the reports
    ("mlops_lint.report",),
    # the front ends: the command line, the language server, the docs generator
    ("mlops_lint.cli", "mlops_lint.__main__", "mlops_lint.lsp", "mlops_lint.docs"),
)


def _modules(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    found = {}
    for package in packages:
        for file in sorted((root / package).rglob("*.py")):
            parts = (NAMES.get(package, package), *file.relative_to(root / package).with_suffix("").parts)
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
                if any(_private(part) for part in alias.name.split(".")) and alias.name.split(".")[0] == "mlops_lint":
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
    for room in ("run", "projects", "survey", "passes", "runner", "workers", "memory", "selection", "builds", "kustomize"):
        assert f"mlops_lint.engine.{room}" in modules
    assert "mlops_lint.sources.files" in modules
    graph, _ = _graph(modules)
    assert "mlops_lint.engine" not in graph["mlops_lint.validation.crds"]  # reading a file is the sources' job


def test_kustomize_is_read_in_sources_and_built_in_the_build_room() -> None:
    """``linter.sources.kustomize`` only reads kustomizations; running a build, its cache and
    mapping findings and fixes back are the build room's (``linter.engine.kustomize``, beside
    ``linter.engine.builds``)."""
    modules = _modules()
    reading = ast.parse(modules["mlops_lint.sources.kustomize"].read_text(encoding="utf-8"))
    names = {node.name for node in reading.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    imported = {alias.name.split(".")[0] for node in ast.walk(reading) if isinstance(node, (ast.Import, ast.ImportFrom))
                for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])}
    assert {"read_kustomization", "find_roots", "Root"} <= names
    assert not names & {"Mapper", "build", "BuildCache", "remap", "find_command", "isolation"}
    assert "subprocess" not in imported
    assert {"Mapper", "build", "BuildCache", "remap", "find_command"} <= {
        node.name for node in ast.parse(modules["mlops_lint.engine.kustomize"].read_text(encoding="utf-8")).body
        if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def _layer(module: str, layers: tuple[tuple[str, ...], ...] = LAYERS) -> int | None:
    found = [(len(name), index) for index, names in enumerate(layers) for name in names
             if module == name or module.startswith(name + ".")]
    return max(found)[1] if found else None


def _named_up(file: Path) -> set[str]:
    """The modules the opening comment of ``file`` names in its "Up the layers:" paragraph."""
    doc = ast.get_docstring(ast.parse(file.read_text(encoding="utf-8"), str(file)), clean=True) or ""
    names: set[str] = set()
    for paragraph in doc.split("\n\n"):
        if paragraph.startswith("Up the layers:"):
            names.update(re.findall(r"``([\w.]+)``", paragraph))
    return names


def _up_imports(modules: dict[str, Path], layers: tuple[tuple[str, ...], ...] = LAYERS) -> list[str]:
    """Each import up the layers its module's opening comment does not name, and each module
    named there that is not imported up (a stale entry); a module in no layer."""
    graph, _ = _graph(modules)
    problems = []
    for name in sorted(graph):
        own = _layer(name, layers)
        if own is None:
            problems.append(f"{name}: in no layer (tests/test_layout.py LAYERS)")
            continue
        up = {target for target in graph[name] if (_layer(target, layers) or 0) > own}
        named = _named_up(modules[name])
        problems.extend(f"{name} imports {target} up the layers" for target in sorted(up - named))
        problems.extend(f"{name} names {target} as up the layers, but does not import it so"
                        for target in sorted(named - up))
    return problems


def test_imports_run_down_the_layers() -> None:
    assert _up_imports(_modules()) == []


def test_every_layer_name_is_a_module() -> None:
    modules = _modules()
    assert [name for names in LAYERS for name in names if name not in modules] == []


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


def test_the_layer_check_finds_imports_up(tmp_path: Path) -> None:
    layers = (("pkg", "pkg.low"), ("pkg.high",))
    modules = _write(tmp_path, {
        "pkg/__init__.py": "", "pkg/high.py": "from pkg import low\n",
        "pkg/low.py": "def f():\n    from pkg.high import g\n",
        "pkg/named.py": '"""A module.\n\nUp the layers: ``pkg.high`` (why).\n"""\nimport pkg.high\n',
        "pkg/stale.py": '"""A module.\n\nUp the layers: ``pkg.high`` (no longer).\n"""\nimport pkg.low\n',
    })
    assert _up_imports(modules, layers) == [
        "pkg.low imports pkg.high up the layers",
        "pkg.stale names pkg.high as up the layers, but does not import it so",
    ]
    assert _up_imports({**modules, "other": modules["pkg.low"]}, layers)[0] == "other: in no layer (tests/test_layout.py LAYERS)"
