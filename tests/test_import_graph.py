"""The package's import graph, read from the source with ast: no cycles, no private imports, no
import of a layer above the importer's own (:data:`LAYERS`).

Every ``import`` and ``from ... import`` of a module counts, at module level, inside a
function (a deferred import is still a dependency) or under ``if TYPE_CHECKING:`` (what a type
checker reads is a dependency of the code's meaning, if not of its running) alike. Importing
``a.b.c`` also runs the packages ``a.b`` and ``a`` first: a module depends on every package above what it imports,
except the packages it lives in itself (they are initialised before it).
"""

import ast
from pathlib import Path

import pytest

import hpcswarm

PACKAGE = Path(hpcswarm.__file__).parent


def module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path, modules):
    """``(module, imported names)`` pairs of the hpcswarm modules ``path`` imports."""
    tree = ast.parse(path.read_text(), filename=str(path))
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            names = tuple(alias.name for alias in node.names)
            submodules = [f"{base}.{name}" for name in names if f"{base}.{name}" in modules]
            found += [(sub, ()) for sub in submodules]
            found.append((base, tuple(n for n in names if f"{base}.{n}" not in modules)))
    return [(name, names) for name, names in found if name in modules]


def enclosing_packages(name):
    """``a.b.c`` -> ``["a", "a.b"]``."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def import_graph():
    paths = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph = {name: {} for name in paths}
    for name, path in paths.items():
        own = set(enclosing_packages(name)) | {name}
        for target, names in imports_of(path, paths):
            for package in enclosing_packages(target):
                if package not in own:
                    graph[name].setdefault(package, set())
            if target != name:
                graph[name].setdefault(target, set()).update(names)
    return graph


def find_cycle(graph):
    """One import cycle as a list of modules (first repeated at the end), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                return stack[stack.index(target):] + [target]
            if target not in state:
                cycle = visit(target)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = "done"
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


@pytest.fixture(scope="module")
def graph():
    """The package's import graph, read once for the tests of this file."""
    return import_graph()


def test_the_package_has_no_import_cycle(graph):
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_importing_a_module_runs_the_packages_above_it(graph):
    # evaluation imports hpcswarm.fitness.*
    assert "hpcswarm.fitness" in graph["hpcswarm.swarm.engine.evaluation"]
    assert "hpcswarm.swarm" not in graph["hpcswarm.swarm.engine.evaluation"]  # its own package


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b": set()}, "b": {"c": set()}, "c": {"a": set()}, "d": {}}
    assert find_cycle(graph) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b": set()}, "b": {}}) is None


def test_no_module_imports_a_private_name_of_another(graph):
    private = sorted(f"{source} imports {target}.{name}"
                     for source, targets in graph.items()
                     for target, names in targets.items()
                     for name in names if name.startswith("_") and not name.startswith("__"))
    assert private == []



LAYERS = (
    ("hpcswarm.version", "hpcswarm.errors", "hpcswarm.termination", "hpcswarm.system",
     "hpcswarm.comm", "hpcswarm.node_array", "hpcswarm.inputs"),
    ("hpcswarm.store",),
    ("hpcswarm.fitness",),
    ("hpcswarm.params",),
    ("hpcswarm.datasets",),
    ("hpcswarm.data",),
    ("hpcswarm.swarm",),
    ("hpcswarm.baselines",),
    ("hpcswarm.signatures",),
    ("hpcswarm.results",),
    ("hpcswarm.selection",),
    ("hpcswarm.run",),
    ("hpcswarm.selector", "hpcswarm.api", "hpcswarm"),
    ("hpcswarm.cli", "hpcswarm.__main__"),
)
"""The layers of the package, bottom first (``hpcswarm/__init__.py`` lists them, each
package's docstring says why it sits where it does): a module may import its own layer and
those below, never one above. A unit is a root module or a whole package:
``hpcswarm.run.job`` belongs to ``hpcswarm.run``; ``hpcswarm`` is the root package itself,
which offers the public face (``select``, the selector) and so sits on its floor."""

LAYER = {unit: level for level, units in enumerate(LAYERS) for unit in units}


def unit_of(name):
    """``hpcswarm.run.job`` -> ``hpcswarm.run``; a root module or ``hpcswarm`` as it is."""
    return ".".join(name.split(".")[:2])


def upward_imports(graph):
    """``"source imports target"`` for every import of a unit in a layer above the
    source's own."""
    return sorted(f"{source} imports {target}"
                  for source, targets in graph.items() for target in targets
                  if LAYER[unit_of(target)] > LAYER[unit_of(source)])


def test_every_module_has_a_layer(graph):
    unplaced = sorted({unit_of(name) for name in graph} - set(LAYER))
    assert unplaced == [], "add each to LAYERS, and say why in its package's docstring"


def test_no_module_imports_a_layer_above_its_own(graph):
    assert upward_imports(graph) == []


def test_an_import_of_a_layer_above_is_found():
    graph = {"hpcswarm.store.records": {"hpcswarm.run.job": set()},
             "hpcswarm.run.job": {"hpcswarm.store.records": set(), "hpcswarm.run": set()},
             "hpcswarm.run": {}}
    assert upward_imports(graph) == ["hpcswarm.store.records imports hpcswarm.run.job"]


def test_every_package_says_what_it_may_import():
    """The layers are written where a reader looks first: each package's docstring."""
    silent = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py")
                    if "May import:" not in ast.get_docstring(ast.parse(path.read_text())))
    assert silent == []


def documented_layers():
    """The units each numbered item of ``hpcswarm/__init__.py``'s layer list names."""
    import re

    text = ast.get_docstring(ast.parse((PACKAGE / "__init__.py").read_text()))
    items = re.split(r"\n(?=\d+\. )", text.split("\n1. ", 1)[1].split("\n\n")[0])
    return [set(re.findall(r":mod:`~?(hpcswarm[\w.]*)`", item))
            | ({"hpcswarm"} if "this package" in item else set())
            | ({"hpcswarm.__main__"} if "``__main__``" in item else set())
            for item in items]


def test_the_layers_checked_are_the_layers_documented():
    """The package's docstring lists the floors this test checks, in the same order."""
    assert documented_layers() == [set(units) for units in LAYERS]
