"""Calibration of multi-step forecasts by step: the PIT values of a backtest on the history's
end recalibrate each step's predictive law (``Forecaster(calibrate=True)``).

A one-step model can be calibrated while its forecasts several steps ahead are not: recursive
paths carry the model's errors forward, and a direct model sees each step's target through
rows it was trained on.  The remedy is the one of a conformal predictive system (Vovk et al.
2017), applied step by step: a copy of the forecaster, fitted on the history before its last
``n_origins + horizon - 1`` values, forecasts from every one of the last ``n_origins`` origins
(one value apart; :func:`calibration_origins`); the PIT values ``F_h(y)`` of step ``h`` over
those origins and all series
give the empirical law ``G_h`` (piecewise linear, :class:`~distboost.families.Calibrated`),
pooled with neighbouring steps until at least ``MIN_PITS`` values; the forecast of step ``h``
becomes ``G_h(F_h(y))``.

* Direct strategy: the family's exact marginals composed with ``G_h`` (a Predictive of the
  :class:`~distboost.families.Calibrated` family, one calibration group per step).
* Recursive strategy: every path's value at step ``h`` moves from its rank level ``u`` among
  the paths to the paths' quantile at ``G_h^{-1}(u)``: the marginals become ``G_h(F_h)`` and
  the ranks of each path at every step, hence the paths' dependence across steps (their
  copula), stay as they were.

``calibrate="auto"`` runs the same backtest and applies the maps only when the forecasts
need them: when the share of the backtest's values inside their central 90 % interval lies
outside :data:`AUTO_COVERAGE` (:func:`needs_calibration`).  A map fitted on a well-covered
backtest mostly reshapes the middle of the law after a few dozen windows of one series, and
that shape need not hold in the future (measured in ``docs/forecasting.md``).  Where the
backtest cannot run (too short a history, a censored family or a point mass beside a
density), "auto" leaves the forecasts as they are.

This is the split-conformal idea with a time series' own caveat: the guarantee of
exchangeable rows does not hold for the values of one series, so the calibration is as good
as the end of the history is representative of the future (the same assumption as
mlforecast's conformal intervals, which calibrate on the last windows).
"""

from __future__ import annotations

import numpy as np
import torch

from ..families import Calibrated
from ..predictive import Predictive

__all__ = ["MIN_PITS", "MIN_ORIGINS", "MAX_CONTEXTS", "AUTO_COVERAGE", "check_family",
           "calibration_origins", "backtest_coverage", "needs_calibration", "step_tables",
           "calibrate_paths", "calibrate_direct", "calibrate_scores"]

#: Fewest PIT values behind each step's calibration map (neighbouring steps are pooled).
MIN_PITS = 50
#: Fewest and most origins of the calibration backtest over all series.
MIN_ORIGINS, MAX_CONTEXTS = 20, 2000
#: ``calibrate="auto"`` applies the maps when the backtest's 90 % coverage is outside this.
AUTO_COVERAGE = (0.85, 0.95)


def check_family(family) -> None:
    """Refuse the families whose PIT values cannot calibrate: censored ones (the backtest
    scores exact values only) and continuous laws with a point mass (``zero_adjusted_*``,
    ``tweedie``: the PIT of a value on the atom is the atom's whole probability, not a
    uniform draw within it, so the calibration map would move mass off the atom)."""
    name = getattr(family, "name", str(family))
    if getattr(family, "kind", "") == "censored" or name.startswith("censored_"):
        raise ValueError(
            f"calibrate=True scores the PIT values of exact values; family {name!r} is "
            "censored, and no calibration of censored forecasts is built: use "
            "calibrate=False.")
    if family.point_mass is not None and not family.discrete:
        raise ValueError(
            f"calibrate=True is not built for family {name!r}: a law with a point mass at "
            f"{family.point_mass:g} beside a density has no uniform PIT on its atom, so the "
            "step-wise calibration would move mass off the atom; use calibrate=False.")


def calibration_origins(lengths: np.ndarray, memory: int, horizon: int) -> int:
    """Origins per series of the calibration backtest: a quarter of the shortest series
    (a few dozen origins of one series are a few independent windows, whose coverage swings
    by 0.1 from one window to the next), leaving ``memory + 2 * horizon`` values to fit on,
    and at most ``MAX_CONTEXTS`` origins in all.

    Raises ValueError when the series give fewer than ``MIN_ORIGINS`` origins in all."""
    shortest, n_series = int(np.min(lengths)), len(lengths)
    room = shortest - (memory + 2 * horizon) - (horizon - 1)
    n = min(shortest // 4, room, max(1, MAX_CONTEXTS // n_series))
    if n < 1 or n * n_series < MIN_ORIGINS:
        raise ValueError(
            f"calibrate=True backtests the end of every series from at least {MIN_ORIGINS} "
            f"origins in all: with horizon {horizon} and largest lag or window {memory}, "
            f"{n_series} series of at least {shortest} values give {max(n, 0) * n_series} "
            f"(origins in the last quarter of the shortest series, {memory + 2 * horizon} "
            "values kept to fit on); use calibrate=False or longer histories.")
    return int(n)


def backtest_coverage(table) -> float:
    """Share of a backtest table's values inside their central 90 % interval (its
    ``hit_90`` column, as ``backtest_summary``'s ``coverage_90``), over every series,
    origin and step."""
    return float(table["hit_90"].mean())


def needs_calibration(coverage: float) -> bool:
    """``calibrate="auto"``'s rule: the backtest's 90 % coverage outside
    :data:`AUTO_COVERAGE`."""
    return not AUTO_COVERAGE[0] <= coverage <= AUTO_COVERAGE[1]


def step_tables(table, horizon: int) -> list[np.ndarray]:
    """Per step, the PIT values of a backtest table (its ``step`` and ``pit`` columns) pooled
    over series, origins and the nearest steps until at least ``MIN_PITS`` values."""
    by_step = [table["pit"].to_numpy()[table["step"].to_numpy() == h + 1]
               for h in range(horizon)]
    out = []
    for h in range(horizon):
        lo = hi = h
        while (sum(by_step[k].size for k in range(lo, hi + 1)) < MIN_PITS
               and (lo > 0 or hi < horizon - 1)):
            lo, hi = max(lo - 1, 0), min(hi + 1, horizon - 1)
        values = np.concatenate(by_step[lo:hi + 1])
        out.append(np.sort(values[np.isfinite(values)]))
    return out


def _family(inner, tables: list[np.ndarray]) -> Calibrated:
    return Calibrated(inner, [[t] for t in tables])


def calibrate_paths(paths: np.ndarray, inner, tables: list[np.ndarray]) -> np.ndarray:
    """Paths (C, P, H) with each step's marginal recalibrated and the ranks kept (module
    docstring)."""
    P, H = paths.shape[1:]
    fam = _family(inner, tables)
    order = np.argsort(paths, axis=1, kind="stable")
    ordered = np.take_along_axis(paths, order, axis=1)
    level = (np.argsort(order, axis=1) + 0.5) / P  # each path's rank level, (C, P, H)
    out = np.empty_like(paths)
    for h in range(H):  # a loop over the horizon's steps, not over rows
        with torch.no_grad():
            v = fam.pit_map_inverse(level[:, :, h], group=h if H > 1 else 0).numpy()
        pos = np.clip(v * P - 0.5, 0.0, P - 1.0)
        if inner.discrete:  # a path value, not a value between two counts
            pos = np.rint(pos)
        lo = np.floor(pos).astype(np.int64)
        hi = np.minimum(lo + 1, P - 1)
        frac = pos - lo
        col = ordered[:, :, h]
        out[:, :, h] = (np.take_along_axis(col, lo, axis=1) * (1.0 - frac)
                        + np.take_along_axis(col, hi, axis=1) * frac)
    return out


def calibrate_direct(dist: Predictive, tables: list[np.ndarray], n_contexts: int,
                     index=None) -> Predictive:
    """The direct strategy's Predictive (``n_contexts * H`` rows, context after context)
    composed with each step's map."""
    H = len(tables)
    params = dict(dist.params)
    if H > 1:
        params["group"] = np.tile(np.arange(H, dtype=np.float64), n_contexts)
    return Predictive(_family(dist.family, tables), params, index=index)


def calibrate_scores(pit: np.ndarray, nll: np.ndarray, inner,
                     tables: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The PIT ``G_h(u)`` and NLL ``nll - log g_h(u)`` of the calibrated law from the raw
    law's PIT ``u`` and NLL, arrays (C, H)."""
    fam = _family(inner, tables)
    H = len(tables)
    new_pit, new_nll = np.empty_like(pit), np.empty_like(nll)
    for h in range(H):
        g = h if H > 1 else 0
        with torch.no_grad():
            new_pit[:, h] = fam.pit_map(pit[:, h], group=g).numpy()
            dens = fam.pit_map(pit[:, h], group=g, density=True).numpy()
        with np.errstate(divide="ignore"):
            new_nll[:, h] = nll[:, h] - np.log(dens)
    return new_pit, new_nll
