"""Figures of forecasts (``db.plot.fan`` and ``db.plot.pit_by_horizon``): the forecast fan chart
behind ``db.plot.fan(dist_or_paths, history=...)`` and the PIT histogram by forecast step.

A forecast is a :class:`~distboost.Predictive` of the future steps (``Forecaster.predict_dist``:
its index holds the future times, and the series ids for several series) or an array of
sample paths of shape (n_paths, horizon) or (n_paths, n_series, horizon)
(``Forecaster.sample_paths``), whose per-step marginals are the paths' empirical laws.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..families import Empirical
from ..predictive import Predictive
from ._axes import axes

__all__ = ["forecast_fan", "pit_by_horizon"]

#: Central interval levels of a forecast fan chart.
FORECAST_LEVELS = (0.5, 0.8, 0.95)


def _name(values, default: str) -> str:
    """A pandas Series' (or Index's) name, else ``default``."""
    name = getattr(values, "name", None)
    return str(name) if name is not None else default


def _one_series(dist, series, paths):
    """(Predictive of the H steps, their x positions or None, the drawn paths (P, H) or
    None) of the series to draw."""
    if not hasattr(dist, "family"):
        draws = np.asarray(dist, dtype=np.float64)
        if draws.ndim == 3:
            if series is None and draws.shape[1] > 1:
                raise ValueError(f"The paths hold {draws.shape[1]} series (shape "
                                 f"{draws.shape}); choose one with series=<position>.")
            draws = draws[:, 0 if series is None else int(series), :]
        if draws.ndim != 2 or draws.shape[0] < 1:
            raise ValueError("fan takes a Predictive or sample paths of shape (n_paths, "
                             f"horizon) or (n_paths, n_series, horizon); got {draws.shape}.")
        fam = Empirical(draws.shape[0])
        return Predictive(fam, Empirical.params_of(draws)), None, draws
    index = dist.index
    if isinstance(index, pd.MultiIndex):
        ids = index.get_level_values(0)
        if series is None:
            if len(pd.unique(ids)) > 1:
                raise ValueError(f"The forecast holds {len(pd.unique(ids))} series; choose one "
                                 f"with series=<id> (e.g. series={ids[0]!r}).")
            series = ids[0]
        rows = np.flatnonzero(np.asarray(ids == series))
        if rows.size == 0:
            raise ValueError(f"series={series!r} is not in the forecast; its series are "
                             f"{list(pd.unique(ids))[:10]}.")
        part = dist[rows]
        return part, index.get_level_values(1)[rows], None
    return dist, index, None


def _positions(x, n: int, history):
    """x positions of the steps: given, the forecast's index, or continuing the history."""
    if x is not None:
        return np.asarray(x)
    if history is None:
        return np.arange(1, n + 1)
    idx = history.index
    freq = getattr(idx, "freq", None) or (pd.infer_freq(idx) if isinstance(
        idx, pd.DatetimeIndex) and len(idx) >= 3 else None)
    if isinstance(idx, pd.DatetimeIndex):
        if freq is None:
            raise ValueError("Cannot place the forecast after the history: its DatetimeIndex "
                             "has no frequency; pass x= (the future times).")
        return np.asarray(pd.date_range(idx[-1], periods=n + 1, freq=freq)[1:])
    step = int(idx[-1] - idx[-2]) if len(idx) > 1 else 1
    return np.asarray(idx[-1] + step * np.arange(1, n + 1))


def forecast_fan(dist, history=None, y=None, *, x=None, levels=None, paths: int = 0,
                 series=None, ax=None, color="C0"):
    """Fan chart of a forecast after its history (``db.plot.fan(..., history=...)``).

    Parameters
    ----------
    dist : Predictive or ndarray
        The forecast (module docstring).
    history : Series, optional
        The values before the forecast, drawn as a line (its index places the forecast when
        ``dist`` has no times).
    y : array_like or Series of shape (horizon,), optional
        The truth of the forecast steps, drawn as points.
    x : array_like, optional
        Positions of the steps (default: the forecast's times, else after the history).
    levels : sequence of float, default (0.5, 0.8, 0.95)
        Central interval levels, one band each (the widest the lightest).
    paths : int, default 0
        Sample paths to draw as thin lines (a paths array only).
    series : id or int, optional
        The series to draw from a forecast of several (an id of the Predictive's index, a
        position in a paths array).

    Returns
    -------
    matplotlib Axes
    """
    part, times, draws = _one_series(dist, series, paths)
    n = len(part)
    xs = _positions(x if x is not None else times, n, history)
    if xs.shape != (n,):
        raise ValueError(f"x has shape {xs.shape}; expected ({n},), one position per step.")
    levels = sorted(float(v) for v in (FORECAST_LEVELS if levels is None else levels))
    ax = axes(ax, figsize=(8, 4.5))
    if history is not None:
        hist = history if isinstance(history, pd.Series) else pd.Series(np.asarray(history))
        ax.plot(np.asarray(hist.index), hist.to_numpy(dtype=float), color="k", lw=1.0,
                label=_name(history, "history"))
    for i, level in enumerate(reversed(levels)):
        lo, hi = part.interval(level).T
        ax.fill_between(xs, lo, hi, color=color, lw=0, alpha=0.15 + 0.5 * (i + 1) /
                        (len(levels) + 1), label=f"{level:.0%} interval")
    if paths:
        if draws is None:
            raise ValueError("paths= draws sample paths: give the paths array "
                             "(Forecaster.sample_paths) instead of a Predictive.")
        for k in range(min(int(paths), draws.shape[0])):
            ax.plot(xs, draws[k], color=color, lw=0.6, alpha=0.5,
                    label="sample paths" if k == 0 else None)
    ax.plot(xs, part.median, color=color, lw=1.8, label="median")
    if y is not None:
        ax.plot(xs, np.asarray(y, dtype=float), "o", color="C3", ms=3.5, label="observed",
                zorder=3)
    if np.asarray(xs).dtype.kind == "M":
        import matplotlib.dates as mdates

        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel(_name(times, "time") if times is not None else "time")
    ax.set_ylabel(_name(history, "y"))
    shown = ", ".join(f"{v:.0%}" for v in levels)
    ax.set_title(f"Forecast: median and central {shown} intervals")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def pit_by_horizon(table, bins: int = 10, ax=None):
    """PIT histograms by forecast step, as one heat map: rows are PIT bins, columns steps,
    colour the density relative to the uniform (1 everywhere for a calibrated forecast;
    a U shape, bright at both ends, is overconfident, a hump underconfident).

    Parameters
    ----------
    table : DataFrame
        A backtest table with ``step`` and ``pit`` columns (``Forecaster.backtest``).
    bins : int, default 10

    Returns
    -------
    matplotlib Axes
    """
    missing = [c for c in ("step", "pit") if c not in getattr(table, "columns", ())]
    if missing:
        raise ValueError(f"pit_by_horizon takes a backtest table with 'step' and 'pit' "
                         f"columns; missing {missing}.")
    steps = np.sort(table["step"].unique())
    edges = np.linspace(0.0, 1.0, bins + 1)
    dens = np.empty((bins, steps.size))
    for j, s in enumerate(steps):  # one histogram per step
        pit = table.loc[table["step"] == s, "pit"].to_numpy(dtype=float)
        dens[:, j] = np.histogram(pit, edges)[0] / max(pit.size, 1) * bins
    from matplotlib.colors import TwoSlopeNorm

    ax = axes(ax, figsize=(8, 4.5))
    norm = TwoSlopeNorm(vmin=0.0, vcenter=1.0, vmax=max(2.0, float(dens.max())))
    image = ax.imshow(dens, origin="lower", aspect="auto", cmap="RdBu_r", norm=norm,
                      extent=(steps[0] - 0.5, steps[-1] + 0.5, 0.0, 1.0))
    ax.figure.colorbar(image, ax=ax, label="density / uniform")
    ax.set_xlabel("forecast step")
    ax.set_ylabel("PIT")
    ax.set_title(f"PIT by forecast step ({len(table) // max(steps.size, 1)} forecasts a step)")
    return ax
