"""The documentation runs: every ```python block of README.md and docs/*.md, in order.

Each page's blocks are executed top to bottom in one namespace, as a notebook would run
them, so a later block may use what an earlier one defined and the docs cannot drift from
the code.  A block that is deliberately not runnable starts with the comment line
``# not run: <why>``; keep those rare.  Pages whose code fits many models run in
the slow tier only (``SLOW_PAGES``).
"""

from __future__ import annotations

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
# forecasting.md (8-15 s) stays in the fast tier: the forecasting path users try first.
SLOW_PAGES: set[str] = {"multivariate.md", "explain.md", "censoring.md", "families.md",
                        "scoring.md"}

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


def _params():
    for page in PAGES:
        if not python_blocks(page.read_text()):
            continue
        marks = [pytest.mark.slow] if page.name in SLOW_PAGES else []
        yield pytest.param(page, id=page.relative_to(ROOT).as_posix(), marks=marks)


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

