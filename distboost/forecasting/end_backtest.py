"""The backtest on the end of the history behind a forecaster's "auto" choices.

One backtest serves three choices.  Each series is cut ``k + horizon - 1`` values before its
end, a model of each candidate strategy is fitted on what remains, and it forecasts from the
last ``k`` origins of every series (one value apart; :func:`end_origins`):

* ``strategy="auto"``: the candidate with the lower CRPS, each series' CRPS divided by the
  mean absolute one-step change of its history (the MASE scale, so that no series counts
  by its size), on the same contexts.  The recursive strategy's paths cost ``paths x
  horizon`` predictions a context, so it is scored on a seeded subset of at most
  :data:`PATH_CONTEXTS` contexts, with :data:`BACKTEST_PATHS` paths;
* ``calibrate``: the chosen strategy's PIT values by step (:mod:`.calibration`);
  ``"auto"`` applies the maps only when the backtest's 90 % coverage lies outside
  :data:`~.calibration.AUTO_COVERAGE`;
* the direct strategy's copula over the steps (:mod:`.copula`), from the PIT values of its
  (calibrated) forecasts;
* ``series_id="auto"`` on a scaled panel: the chosen strategy fitted again with the id
  feature flipped, and the lower scaled CRPS on the same contexts kept (the id learns each
  series' own pattern on M5's 70 store x department series, WSPL 0.153 against 0.163 on
  their last 400 days, but fits the noise of Tourism's and M3's short series: MASE 1.73
  against 1.66, 0.96 against 0.90; docs/forecasting.md, "The series' id");
* ``family="auto"``: the chosen strategy and id fitted again with each further candidate
  family (:func:`~.plan.family_candidates`: a Student-t with ``df >= 2`` beside the
  Normal), and the lowest scaled CRPS on the same contexts kept (docs/forecasting.md,
  "The family").

What it costs: one fit per candidate on the recent half of each cut history (at least
:data:`MIN_RECENT` values of it), at :data:`BACKTEST_RATE` times the learning rate when
early stopping chooses the rounds (:func:`coarser`), and the forecasts of its contexts, so
that on long histories the two candidates of ``strategy="auto"`` cost about half a fit of the
whole history (the id's choice and each further family a quarter fit more).
"""

from __future__ import annotations

import copy
import dataclasses
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..estimators import DistributionalRegressor
from .backtest import forecast_origins, truncate_exog
from .calibration import (
    MAX_CONTEXTS,
    MIN_ORIGINS,
    backtest_coverage,
    calibrate_scores,
    check_family,
    needs_calibration,
    step_tables,
)
from .copula import step_correlation
from .data import Panel
from .plan import NESTED, family_candidates, regressor_kwargs

__all__ = ["EndBacktest", "calibratable", "end_origins", "run_end_backtest", "PATH_CONTEXTS",
           "BACKTEST_PATHS", "BACKTEST_RATE", "BACKTEST_MAX_RATE", "coarser"]

#: Most contexts of the recursive strategy's backtest, and its paths per context (stratified
#: paths, :mod:`.strategies`: on M5, 50 of them gave the choices and scores of 100 at half
#: the cost of its forecasts, docs/forecasting.md).
PATH_CONTEXTS = 200
BACKTEST_PATHS = 50
#: The backtest's fits see the last ``1 / RECENT`` of each series' values, but at least
#: ``MIN_RECENT`` of them (all of a shorter series) and what the backtest needs.
RECENT, MIN_RECENT = 2, 500
#: The backtest's fits learn this many times faster than the forecaster's own (a coarser
#: fit ranks the candidates as the final one would, at a fraction of the rounds), but not
#: faster than ``BACKTEST_MAX_RATE`` (nor slower than the forecaster's own): a large step
#: overshoots, and the backtest's model must stay like the final one.
BACKTEST_RATE, BACKTEST_MAX_RATE = 2.0, 0.5


@dataclass
class EndBacktest:
    """What the end-of-history backtest decided (module docstring).

    Attributes
    ----------
    strategy : {"recursive", "direct"}
    scores : dict or None
        Scaled CRPS of each candidate on the common contexts (None: one candidate).
    tables : list of ndarray or None
        The step calibration maps' PIT values, when applied.
    coverage : float
        The chosen strategy's backtest 90 % coverage (before any map).
    copula : ndarray (H, H) or None
        The direct strategy's correlation over the steps.
    series_id : bool
        Whether the series' id is a feature (the plan's, or the backtest's choice).
    id_scores : dict or None
        Scaled CRPS with (True) and without (False) the id, when it was chosen.
    family : Family or None
        The family of the chosen fit.
    family_scores : dict or None
        Scaled CRPS of each candidate family by name, when ``family="auto"`` chose.
    """

    strategy: str
    scores: dict | None
    tables: list | None
    coverage: float
    copula: np.ndarray | None
    series_id: bool = False
    id_scores: dict | None = None
    family: object = None
    family_scores: dict | None = None


def coarser(fc):
    """A copy of forecaster ``fc`` whose regressor learns :data:`BACKTEST_RATE` times as
    fast, when early stopping chooses its rounds (the backtest's fits: about that many times
    fewer rounds to a model as good); ``fc`` itself when the rounds are fixed
    (``early_stopping=False``: the same rounds at another rate would be another model, and
    the calibration maps and copula must describe the final one)."""
    opts = regressor_kwargs(fc.regressor_options)
    rate = opts.get("learning_rate", DistributionalRegressor().learning_rate)
    stopping = opts.get("early_stopping", "auto")
    if (BACKTEST_RATE == 1 or (isinstance(stopping, bool | np.bool_) and not stopping)
            or not isinstance(rate, int | float)):
        return fc
    out = copy.copy(fc)
    out.regressor_options = {k: v for k, v in fc.regressor_options.items()
                             if k.removeprefix(NESTED) != "learning_rate"}
    out.regressor_options["learning_rate"] = max(float(rate), min(BACKTEST_RATE * float(rate),
                                                                  BACKTEST_MAX_RATE))
    return out


def end_origins(lengths: np.ndarray, memory: int, horizon: int) -> tuple[int, np.ndarray]:
    """Origins per series of the end-of-history backtest, ``k``, and the series long enough
    for it (a mask).  ``k`` spreads :data:`~.calibration.MAX_CONTEXTS` contexts over the
    series (at most a quarter of the longest); a series takes part when it keeps ``memory +
    2 * horizon`` values to fit on before its ``k`` origins.  ``k = 0`` when the series
    give fewer than :data:`~.calibration.MIN_ORIGINS` contexts in all."""
    lengths = np.asarray(lengths)
    k = max(1, min(MAX_CONTEXTS // len(lengths), int(lengths.max()) // 4))
    while True:
        ok = lengths >= memory + 2 * horizon + (horizon - 1) + k
        if k * int(ok.sum()) >= MIN_ORIGINS:
            return int(k), ok
        if k == 1:
            return 0, ok & False
        k = max(1, k // 2)  # fewer origins each: more series long enough


def _mase_scale(panel: Panel) -> np.ndarray:
    """Mean absolute one-step change of each series (1 where it never changes)."""
    d = np.abs(np.diff(panel.values))
    d[panel.offsets[1:-1] - 1] = 0.0  # no change across two series
    total = np.add.reduceat(np.r_[d, 0.0], panel.offsets[:-1])
    scale = total / np.maximum(panel.lengths - 1, 1)
    return np.where(scale > 0.0, scale, 1.0)


def run_end_backtest(fc, panel: Panel, exog, static, plan, candidates, calibrate
                     ) -> EndBacktest | None:
    """The end-of-history backtest of ``candidates`` (module docstring); None when the
    histories are too short for it."""
    H = plan.horizon
    k, ok = end_origins(panel.lengths, plan.memory, H)
    if not k:
        return None
    # The series long enough for it, each from the start of its recent half (at least what
    # the backtest needs): a candidate costs about half a fit of the whole history.
    series = np.flatnonzero(ok)
    need = plan.memory + 2 * H + (H - 1) + k
    lengths = panel.lengths[series]
    keep = np.minimum(np.maximum(-(-lengths // RECENT), max(need, MIN_RECENT)), lengths)
    rows = np.concatenate([np.arange(panel.offsets[s + 1] - n, panel.offsets[s + 1])
                           for s, n in zip(series, keep, strict=True)])
    exog = None if exog is None else exog.iloc[rows]
    panel = panel.rows(series, rows)
    firsts = panel.lengths - H - k + 1
    train = panel.truncate(firsts)
    train_exog = truncate_exog(panel, exog, firsts)
    every = [np.arange(f, f + k, dtype=np.int64) for f in firsts]
    rng = np.random.default_rng(0)
    n_ctx = k * panel.n_series
    pick = np.zeros(n_ctx, dtype=bool)
    pick[rng.choice(n_ctx, min(PATH_CONTEXTS, n_ctx), replace=False)] = True
    few = [o[pick[s * k:(s + 1) * k]] for s, o in enumerate(every)]

    coarse = coarser(fc)

    def backtest(strategy, plan):
        fitted = coarse._fit_panel(train, train_exog, static, strategy=strategy,
                                   calibrate=False, plan=plan, end=False)
        return forecast_origins(fitted, panel, exog, every if strategy == "direct" else few,
                                min(fc.n_paths, BACKTEST_PATHS))

    scale = pd.Series(_mase_scale(train), index=pd.Index(panel.ids, dtype=object))

    def scaled(table, keys) -> pd.Series:  # scaled CRPS of each row on the contexts of keys
        common = table.merge(keys, on=["series", "origin"])
        return (common["crps"] / common["series"].map(scale)).set_axis(
            pd.MultiIndex.from_frame(common[["series", "origin"]]))

    def score(table, keys) -> float:
        return float(scaled(table, keys).mean())

    def by_context(table, keys) -> pd.Series:  # each context's mean over its steps
        return scaled(table, keys).groupby(level=[0, 1]).mean()

    tables = {strategy: backtest(strategy, plan) for strategy in candidates}
    scores = None
    if len(candidates) > 1:
        keys = tables["recursive"][["series", "origin"]].drop_duplicates()
        scores = {strategy: score(table, keys) for strategy, table in tables.items()}
        strategy = min(scores, key=scores.get)
    else:
        strategy = candidates[0]
    table, series_id, id_scores = tables[strategy], plan.series_id, None
    if isinstance(fc.series_id, str) and plan.scale != "none" and panel.n_series > 1:
        flipped = backtest(strategy, dataclasses.replace(plan, series_id=not series_id))
        keys = table[["series", "origin"]].drop_duplicates()
        id_scores = {series_id: score(table, keys), not series_id: score(flipped, keys)}
        if id_scores[not series_id] < id_scores[series_id]:
            table, series_id = flipped, not series_id
    plan = dataclasses.replace(plan, series_id=series_id)
    family, family_scores = plan.family, None
    others = family_candidates(fc.family)[1:]
    if others:
        keys = table[["series", "origin"]].drop_duplicates()
        family_scores = {family.name: score(table, keys)}
        for other in others:
            with warnings.catch_warnings():  # a candidate's: the final fit repeats its own
                warnings.simplefilter("ignore", UserWarning)
                fitted = backtest(strategy, dataclasses.replace(plan, family=other))
            family_scores[other.name] = score(fitted, keys)
            if _clearly_lower(by_context(fitted, keys), by_context(table, keys)):
                table, family = fitted, other
    coverage = backtest_coverage(table)
    maps = None
    if calibrate is True or (calibrate == "auto" and needs_calibration(coverage)):
        maps = step_tables(table, H)
    copula = None
    if strategy == "direct":
        pit = np.array(table["pit"], dtype=np.float64).reshape(-1, H)  # a writable copy
        if maps is not None:
            pit = calibrate_scores(pit, np.zeros_like(pit), family, maps)[0]
        copula = step_correlation(pit)
    return EndBacktest(strategy, scores, maps, coverage, copula, series_id, id_scores, family,
                       family_scores)


def calibratable(family, calibrate, panel: Panel, plan) -> bool | str:
    """``calibrate`` where the calibration can run; True raises where it cannot, "auto"
    becomes False (a censored family, a point mass beside a density, too short histories)."""
    if not calibrate:
        return False
    try:
        check_family(family)
        if not end_origins(panel.lengths, plan.memory, plan.horizon)[0]:
            need = plan.memory + 3 * plan.horizon
            raise ValueError(
                f"calibrate=True backtests the end of the history from at least {MIN_ORIGINS} "
                f"origins in all: with horizon {plan.horizon} and largest lag or window "
                f"{plan.memory}, a series needs at least {need} values to take part ("
                f"{plan.memory + 2 * plan.horizon} to fit on, then its origins and a horizon), "
                f"and the {panel.n_series} series of {int(panel.lengths.min())}.."
                f"{int(panel.lengths.max())} values give fewer; use calibrate=False or longer "
                "histories.")
    except ValueError:
        if calibrate is True:
            raise
        return False
    return calibrate


def _clearly_lower(other: pd.Series, base: pd.Series) -> bool:
    """Whether the per-context scores ``other`` are lower than ``base`` by more than one
    standard error of their paired differences (the one-standard-error rule: a further
    family, dearer to fit and forecast, is kept only on evidence)."""
    d = (other - base.reindex(other.index)).to_numpy(dtype=np.float64)
    d = d[np.isfinite(d)]
    if d.size < 2:
        return False
    return bool(d.mean() + d.std(ddof=1) / np.sqrt(d.size) < 0.0)
