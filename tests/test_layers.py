"""The layers of docs/DESIGN.md hold in the code: one package per layer, no import cycle inside
``distboost``, no module importing a module of a higher layer, and no module importing a private
module (a name starting with ``_``) of another package.

Every module under ``distboost/`` is parsed with :mod:`ast`; every ``import`` and
``from ... import`` counts, at module level and inside functions or classes alike (a lazy
import is still a dependency), relative and absolute.  An edge goes to the module named: ``from
.families import get`` is an edge to ``distboost.families``, ``from . import metrics`` one to
``distboost.metrics``.  The parent packages Python runs on the way (``distboost/__init__.py``
before any submodule) are not counted: the package ``distboost`` itself is the public facade
above every layer, and no module may import it.

Edges that break the rules today are listed in ``KNOWN_VIOLATIONS``, each with the reason and
the fix that removes it (issue 14, "One house").  The list may only shrink: a new violation
fails :func:`test_no_module_imports_a_higher_layer` or :func:`test_no_import_cycle`, and a
listed edge that no longer exists fails :func:`test_known_violations_are_not_stale`, so the
entry is deleted when its fix lands.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "distboost"

# Bottom up; a module may import modules of its own layer or of a lower one.  A key names a
# module or a package (all modules under it); the longest matching key decides.  The order is
# that of the layers table of docs/DESIGN.md, with the helper modules placed by what they use
# and what uses them.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    # leaves: depend on no other distboost module.  `_validation` checks X, y and weights for
    # the estimators; `censored` builds (n, 2) bound arrays; `datasets` loads and draws data
    # (the DESIGN table lists datasets last, but it imports nothing and the CLI demo uses it,
    # so it is a leaf here).
    ("leaves", ("distboost._validation", "distboost.censored", "distboost.datasets",
                "distboost._version")),
    ("links", ("distboost.links",)),
    ("families", ("distboost.families",)),
    ("predictive", ("distboost.predictive",)),
    ("metrics", ("distboost.metrics",)),
    ("boosting", ("distboost.boosting",)),
    ("objective", ("distboost.objective",)),
    ("persistence", ("distboost.persistence",)),
    # the estimators and the machinery of their fit: options, rounds, linear start,
    # calibration, progress bars, explanations (one package, one layer)
    ("estimators", ("distboost.estimators",)),
    ("selection", ("distboost.selection",)),
    # wrappers and workflows above the estimators, using them through their public names:
    # conformal calibration, forecasting (issues 29 and 27)
    ("conformal", ("distboost.conformal",)),
    ("forecasting", ("distboost.forecasting",)),
    # the regressor and the forecaster on a cluster (issue 49): DESIGN's table lists dask
    # beside the estimators, from before the forecaster had a distributed form, which
    # builds its rows with the in-process forecasting code; nothing below imports dask.
    ("dask", ("distboost.dask",)),
    ("plotting", ("distboost.plotting",)),
    ("cli", ("distboost.cli", "distboost.__main__")),
    ("package", ("distboost",)),  # distboost/__init__.py: the public facade
]

# (importer, imported): the edges that break the layers today, each to be removed by its fix.
KNOWN_VIOLATIONS: dict[tuple[str, str], str] = {}


def _modules(package: Path) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package ``__init__``) for every module of the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


def _targets(node, module: str, is_pkg: bool, modules) -> list[str]:
    """The distboost modules an import node names (a ``from`` import of a submodule names
    the submodule, of anything else the module it comes from)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = module.split(".") if is_pkg else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join(base + ([node.module] if node.module else []))
        else:
            source = node.module or ""
        names = [f"{source}.{a.name}" if f"{source}.{a.name}" in modules else source
                 for a in node.names]
    out = []
    for name in names:
        if name.split(".")[0] != "distboost":
            continue
        while name not in modules and "." in name:  # an attribute path: its module
            name = name.rsplit(".", 1)[0]
        out.append(name)
    return out


def import_graph(package: Path = PACKAGE) -> dict[str, dict[str, list[int]]]:
    """importer -> {imported: [line numbers]} over every import statement of the package."""
    modules = _modules(package)
    graph: dict[str, dict[str, list[int]]] = {m: {} for m in modules}
    for module, (path, is_pkg) in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                for target in _targets(node, module, is_pkg, modules):
                    lines = graph[module].setdefault(target, []) if target != module else None
                    if lines is not None and node.lineno not in lines:
                        lines.append(node.lineno)
    return graph


def layer_of(module: str) -> int:
    """Index of the module's layer in ``LAYERS`` (longest matching key)."""
    best, best_len = None, -1
    for index, (_, keys) in enumerate(LAYERS):
        for key in keys:
            if (module == key or module.startswith(key + ".")) and len(key) > best_len:
                best, best_len = index, len(key)
    if best is None or (best_len == len("distboost") and module != "distboost"):
        raise KeyError(module)
    return best


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


GRAPH = import_graph()


def _edges() -> set[tuple[str, str]]:
    return {(a, b) for a, targets in GRAPH.items() for b in targets}


def test_every_module_has_a_layer():
    missing = [m for m in GRAPH if _layer_or_none(m) is None]
    assert not missing, (
        f"Modules without a layer: {missing}. Add each to LAYERS in tests/test_layers.py "
        "(and to the layers table of docs/DESIGN.md).")


def _layer_or_none(module):
    try:
        return layer_of(module)
    except KeyError:
        return None


def test_no_module_imports_a_higher_layer():
    bad = []
    for a, b in sorted(_edges()):
        la, lb = _layer_or_none(a), _layer_or_none(b)
        if la is None or lb is None or lb <= la or (a, b) in KNOWN_VIOLATIONS:
            continue
        bad.append(f"{a} ({LAYERS[la][0]}) imports {b} ({LAYERS[lb][0]}) "
                   f"at line(s) {GRAPH[a][b]}")
    assert not bad, "Imports from a higher layer:\n" + "\n".join(bad)


def test_no_import_cycle():
    # The known violations are removed first: every cycle they close is already listed.
    graph = {a: {b for b in targets if (a, b) not in KNOWN_VIOLATIONS}
             for a, targets in GRAPH.items()}
    cycles = find_cycles(graph)
    assert not cycles, "Import cycles inside distboost (function-level imports count):\n" + (
        "\n".join(" <-> ".join(c) for c in cycles))


def test_known_violations_are_not_stale():
    edges = _edges()
    stale = sorted(edge for edge in KNOWN_VIOLATIONS if edge not in edges)
    assert not stale, (f"These edges no longer exist: delete them from KNOWN_VIOLATIONS in "
                       f"tests/test_layers.py: {stale}")
    cycles = find_cycles({a: set(t) for a, t in GRAPH.items()})
    legal = sorted((a, b) for a, b in KNOWN_VIOLATIONS
                   if _layer_or_none(a) is not None and _layer_or_none(b) is not None
                   and layer_of(b) <= layer_of(a)
                   and not any(a in c and b in c for c in cycles))
    assert not legal, f"These listed edges break no rule any more: delete them: {legal}"



def private_owner(module: str) -> str | None:
    """The package a private module belongs to, or None for a public module: for
    ``distboost.families.numerics.special`` that is ``distboost.families`` (the first component
    starting with ``_``, dunder names aside, makes the rest private to its parent)."""
    parts = module.split(".")
    for i, part in enumerate(parts[1:], start=1):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i])
    return None


def private_imports(graph) -> list[str]:
    """Edges into a private module from outside the package that owns it."""
    bad = []
    for a, targets in sorted(graph.items()):
        for b, lines in sorted(targets.items()):
            owner = private_owner(b)
            if owner is not None and not (a == owner or a.startswith(owner + ".")):
                bad.append(f"{a} imports {b} (private to {owner}) at line(s) {lines}")
    return bad


def test_no_module_imports_a_private_module_of_another_package():
    bad = private_imports(GRAPH)
    assert not bad, ("Other packages use a package through its public modules and names:\n"
                     + "\n".join(bad))


#: The rooms of the house (docs/architecture.md): one package per layer, and the few
#: top-level modules that are a layer of their own or a leaf every layer uses.
PACKAGES = {"boosting", "conformal", "dask", "estimators", "families", "forecasting", "metrics",
            "plotting", "predictive", "selection"}
TOP_LEVEL_MODULES = {"__init__", "__main__", "_validation", "_version", "censored", "cli",
                     "datasets", "links", "objective", "persistence"}


def test_the_package_has_one_folder_per_layer_and_few_top_level_modules():
    folders = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    modules = {p.stem for p in PACKAGE.glob("*.py")}
    assert folders <= PACKAGES, f"New folders {sorted(folders - PACKAGES)}: add them here"
    assert {"estimators", "predictive", "plotting", "selection"} <= folders
    assert modules <= TOP_LEVEL_MODULES, (
        f"New top-level modules {sorted(modules - TOP_LEVEL_MODULES)}: put them in the package "
        "of their layer")


def test_no_module_is_over_600_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 600}
    assert not long, f"Modules over 600 lines (split them by job): {long}"

# ---------------------------------------------------------------------- the checker itself
def test_the_checker_sees_lazy_relative_and_absolute_imports(tmp_path):
    pkg = tmp_path / "distboost"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a\n")
    (pkg / "a.py").write_text("import numpy\nfrom .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text(
        "def f():\n    from ..a import thing\n    import distboost.sub.c\n")
    (pkg / "sub" / "c.py").write_text("class C:\n    def g(self):\n        from . import b\n")
    graph = import_graph(pkg)
    assert graph == {
        "distboost": {"distboost.a": [1]},
        "distboost.a": {"distboost.sub.b": [2]},
        "distboost.sub": {},
        "distboost.sub.b": {"distboost.a": [2], "distboost.sub.c": [3]},
        "distboost.sub.c": {"distboost.sub.b": [3]},
    }
    cycles = find_cycles({a: set(t) for a, t in graph.items()})
    assert cycles == [["distboost.a", "distboost.sub.b", "distboost.sub.c"]]


@pytest.mark.parametrize(("module", "layer"), [
    ("distboost.links", "links"), ("distboost.families.base", "families"),
    ("distboost.families.numerics.inversion", "families"), ("distboost.predictive", "predictive"),
    ("distboost.metrics.scorers", "metrics"), ("distboost.boosting.engine", "boosting"),
    ("distboost.estimators.varying", "estimators"), ("distboost", "package"),
])
def test_layer_lookup(module, layer):
    assert LAYERS[layer_of(module)][0] == layer


@pytest.mark.parametrize(("module", "owner"), [
    ("distboost.families._histogram_bins", "distboost.families"),
    ("distboost._validation", "distboost"),
    ("distboost.families.numerics.crps", None), ("distboost.dask._worker", "distboost.dask"),
    ("distboost.plotting._axes", "distboost.plotting"), ("distboost.__main__", None),
])
def test_private_owner(module, owner):
    assert private_owner(module) == owner


def test_the_private_rule_flags_an_import_from_another_package():
    graph = {"distboost.metrics.x": {"distboost.families._crps": [3], "distboost._validation": [4]},
             "distboost.families.y": {"distboost.families._crps": [5]}}
    assert private_imports(graph) == [
        "distboost.metrics.x imports distboost.families._crps (private to distboost.families) "
        "at line(s) [3]"]


def test_an_unplaced_module_has_no_layer():
    with pytest.raises(KeyError):
        layer_of("distboost.somewhere_new")


def test_test_modules_have_unique_basenames():
    """pytest's default import mode imports test modules by basename: two files named alike
    in different folders fail the collection of the whole suite (it happened twice)."""
    seen: dict[str, list[str]] = {}
    for path in sorted((PACKAGE.parent / "tests").rglob("test_*.py")):
        seen.setdefault(path.name, []).append(str(path.relative_to(PACKAGE.parent)))
    assert not {k: v for k, v in seen.items() if len(v) > 1}


def test_dir_of_the_package_shows_its_public_names_only():
    import distboost as db

    names = dir(db)
    assert names == sorted(db.__all__) and "Forecaster" in names and "plot" in names
    assert not {"estimators", "boosting", "objective", "_validation"} & set(names)
    assert all(hasattr(db, n) for n in names)


def test_the_layers_above_import_the_estimators_package_or_its_policy_only():
    """Outside ``distboost.estimators``, an import names the package (its ``__init__``
    gives the layers above what they use) or ``distboost.estimators.policy``."""
    bad = [(a, b, lines) for a, edges in import_graph().items()
           if not a.startswith("distboost.estimators")
           for b, lines in edges.items()
           if b.startswith("distboost.estimators.") and b != "distboost.estimators.policy"]
    assert not bad, bad
