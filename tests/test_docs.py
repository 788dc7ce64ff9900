"""The documentation runs: every ```python block of README.md and docs/*.md, in order.

Each page's blocks are executed top to bottom in one namespace, as a notebook would run
them, so a later block may use what an earlier one defined and the docs cannot drift from
the code.  A block that is deliberately not runnable starts with the comment line
``# not run: <why>``; keep those rare.  Pages whose code fits many models run in
the slow tier only (``SLOW_PAGES``); the fast tier still compiles every page's blocks, runs
their imports, looks up every attribute they read from an imported module and binds the
arguments of the calls of those (``test_page_compiles_and_its_names_and_arguments_resolve``),
so a renamed function, module or keyword fails fast.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import re
import warnings
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# The pages that fit several models on a thousand rows or more (4-6 s each on one core), or
# cross-validate their rounds and linear starts on every fold (4-15 s): their code paths have
# fast unit tests, so the pages themselves run in the slow tier.
# - multivariate.md: tests/estimators/test_regressor_multivariate.py;
# - explain.md: tests/estimators/test_explain.py;
# - censoring.md: tests/families/test_censored.py, tests/metrics;
# - families.md (a boosted two-component Normal mixture): tests/families/test_mixture.py
#   (test_boosted_mixture_on_bimodal_data and the family's unit tests);
# - scoring.md (cross_val_score, GridSearchCV with one scorer, with a dict of them and
#   refit="crps", over a Pipeline; metrics.predict_dist of a search): tests/metrics/
#   test_scorers.py, tests/metrics/test_scorer_names.py.
# - forecasting.md (9 s: four Forecaster fits on 500 months, one a backtest of 125 origins):
#   tests/forecasting (test_forecast_strategies.py: recursive paths, sample_paths;
#   test_forecast_calibration.py: calibrate=True and "auto"; test_backtest.py,
#   test_forecaster.py: backtest and backtest_summary; test_forecast_plots.py: plot.fan);
# - booster.md (2-3 s: 200 rounds of a Huber loss through autograd): tests/estimators/
#   test_booster.py (test_regression_losses_beat_the_constant_model[huber-newton] fits the
#   same loss, written alike, 150 rounds).
# - classification.md (2-3 s: the default classifier of 10 classes on the 1,797 digits, a
#   held-out split and a refit): tests/estimators/test_classifier.py (the same methods on 2
#   to 4 classes, save and load; digits itself: its slow tier).
# quickstart.md (5 s) stays in the fast tier: the page every user runs first.
# Every page, these included, is compiled, its imports and the attributes it reads from them
# resolved and the arguments of their calls bound in the fast tier
# (test_page_compiles_and_its_names_and_arguments_resolve).
SLOW_PAGES: set[str] = {"multivariate.md", "explain.md", "censoring.md", "families.md",
                        "scoring.md", "forecasting.md", "booster.md", "classification.md"}

_FENCE = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """The runnable ```python blocks of a markdown page, with their first line numbers.

    Parameters
    ----------
    text : str
        The page's markdown.

    Returns
    -------
    list of (int, str)
        The 1-based line of each block's opening fence and the block's code; blocks whose
        first line is a ``# not run`` comment are left out.
    """
    blocks = []
    for match in _FENCE.finditer(text):
        if match.group(1).lstrip().startswith("# not run"):
            continue
        line = text.count("\n", 0, match.start()) + 1
        blocks.append((line, match.group(1)))
    return blocks


def _params(slow_marks: bool = True):
    for page in PAGES:
        if not python_blocks(page.read_text()):
            continue
        marks = [pytest.mark.slow] if slow_marks and page.name in SLOW_PAGES else []
        yield pytest.param(page, id=page.relative_to(ROOT).as_posix(), marks=marks)


def api_problems(blocks: list[tuple[int, str]]) -> list[str]:
    """Compile a page's blocks, run their import statements, look up every attribute chain
    read from an imported name (``db.metrics.mean_crps``, ``sm.datasets.co2``) and bind the
    arguments of every call of such a chain to its signature, without running the rest of
    the code.

    Parameters
    ----------
    blocks : list of (int, str)
        :func:`python_blocks` of a page.

    Returns
    -------
    list of str
        The chains that do not resolve (an attribute missing from a module is imported as
        its submodule before it counts as missing), and the calls whose positional count or
        keyword names the callable's signature refuses.  A syntax error or a failed import
        raises.
    """
    trees = [ast.parse(code, f"<block at line {line}>") for line, code in blocks]
    namespace: dict = {}
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import | ast.ImportFrom):
                exec(compile(ast.Module([node], []), "<docs import>", "exec"), namespace)
    nodes = [node for tree in trees for node in ast.walk(tree)]
    rebound = {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    rebound |= {n.name for n in nodes if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    rebound |= {n.arg for n in nodes if isinstance(n, ast.arg)}
    problems: list[str] = []

    def resolve(node):  # the object an imported name's chain names, or None
        chain, root = [], node
        while isinstance(root, ast.Attribute):
            chain.insert(0, root.attr)
            root = root.value
        if not isinstance(root, ast.Name) or root.id not in namespace or root.id in rebound:
            return None
        obj = namespace[root.id]
        for i, attr in enumerate(chain):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                try:
                    obj = importlib.import_module(f"{getattr(obj, '__name__', '?')}.{attr}")
                except ImportError:
                    problems.append(".".join([root.id, *chain[:i + 1]]))
                    return None
        return obj

    for node in nodes:
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
            resolve(node)
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name | ast.Attribute):
            continue
        func = resolve(node.func)
        if func is None or any(isinstance(a, ast.Starred) for a in node.args) or any(
                k.arg is None for k in node.keywords):
            continue
        try:
            signature = inspect.signature(func)
        except (TypeError, ValueError):  # a builtin without one
            continue
        try:
            signature.bind_partial(*node.args, **{k.arg: k.value for k in node.keywords})
        except TypeError as err:
            problems.append(f"{ast.unparse(node.func)}(): {err}")
    return sorted(set(problems))


@pytest.mark.parametrize("page", list(_params(slow_marks=False)))
def test_page_compiles_and_its_names_and_arguments_resolve(page):
    """The fast tier's check of every page, those run only in the slow tier included."""
    assert api_problems(python_blocks(page.read_text())) == []


@pytest.fixture
def registry_restored():
    """A page may register a family (writing-a-family.md): undo it after the page, so later
    tests see the package's own registry."""
    from distboost.families import registry

    saved = {name: dict(table) for name, table in vars(registry).items()
             if name in ("_REGISTRY", "_PREFIXES", "_WRAPPERS")}
    yield
    for name, table in saved.items():
        current = getattr(registry, name)
        current.clear()
        current.update(table)


@pytest.mark.parametrize("page", list(_params()))
def test_page_runs(page, tmp_path, monkeypatch, registry_restored):
    import matplotlib.pyplot as plt

    # A page that writes files writes them here; "../shared" (the benchmark data beside the
    # checkout, as a page written from the repository's root refers to it) resolves too.
    work = tmp_path / "work"
    work.mkdir()
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        (tmp_path / "shared").symlink_to(shared, target_is_directory=True)
    monkeypatch.chdir(work)
    namespace: dict = {"__name__": "__docs__"}
    try:
        for line, code in python_blocks(page.read_text()):
            with warnings.catch_warnings():
                warnings.simplefilter("error", UserWarning)  # e.g. torch's non-writable array
                try:
                    exec(compile(code, f"{page.name}:{line}", "exec"), namespace)
                except Exception as exc:  # name the block that failed
                    raise AssertionError(
                        f"{page.name}, block at line {line} failed: {exc!r}") from exc
    finally:
        plt.close("all")


def test_fences_are_found():
    text = ("a\n```python\nx = 1\n```\n\n```python\n# not run: needs a GPU\nraise\n```\n"
            "```bash\nls\n```\n")
    assert python_blocks(text) == [(2, "x = 1\n")]


def test_api_problems_are_reported():
    blocks = [(1, "import distboost as db\nfrom distboost import metrics\n"),
              (5, "db.metrics.mean_crps\nmetrics.no_such_score(1)\nx = db.nope\n"
                  "m = db.DistributionalRegressor(famly='normal')\n"
                  "db.DistributionalRegressor('normal', 'crps', 3, 4, 5)\n"
                  "db.metrics.coverage(m, x, level=0.9)\n")]
    assert api_problems(blocks) == [  # the coverage call binds
        "db.DistributionalRegressor(): got an unexpected keyword argument 'famly'",
        "db.DistributionalRegressor(): too many positional arguments", "db.nope",
        "metrics.no_such_score"]
    with pytest.raises(ModuleNotFoundError):
        api_problems([(1, "import distboost.no_such_module\n")])
    with pytest.raises(SyntaxError):
        api_problems([(1, "x = (\n")])
