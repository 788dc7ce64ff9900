"""The features of a forecast: lags, rolling statistics, calendar, series id, exogenous and
static columns, built from the history alone (no value at or after the target time).

A row forecasts the value at time ``t = T + h`` from the origin ``T`` (the last time whose
value is known) and the step ``h >= 1``.  With ``y`` the series:

* ``lag_j = y[T + 1 - j]`` for each lag ``j`` (the recursive strategy has ``h = 1``, so
  ``lag_j = y[t - j]``: lag 1 is the previous value);
* ``target_lag_k = y[t - k]`` for each lag ``k >= 2`` of the direct strategy, where known at
  the origin (``k >= h``), else missing: the seasonal lag of the target itself;
* ``roll_mean_w``, ``roll_std_w``: mean and (population) standard deviation of the ``w``
  values ending at the origin, ``y[T - w + 1 .. T]``;
* ``step = h`` (direct strategy);
* calendar columns of the target time ``t`` (hour, day of week, ...), the series id (a
  categorical column, several series only), static columns of the series, and the exogenous
  columns at ``t`` (known in advance).

``difference=True`` models ``y[t] - y[T]``: every lag, target lag and rolling mean is taken
relative to ``y[T]`` (``lag_1`` is then 0 and left out), so trees, which cannot extrapolate,
follow a trend.  Training rows are gathered from the flat values by index arithmetic (no
Python loop over rows); rolling sums come from cumulative sums of values centred per series.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import Panel
from .scaling import SHIFTED, factor_of, window_scales

__all__ = ["FeatureSpec", "CALENDAR", "auto_calendar", "training_rows", "design",
           "window_features", "buffer_scales", "last_values"]

#: Calendar columns by name: a function of a DatetimeIndex.
CALENDAR = {
    "minute": lambda t: t.minute,
    "hour": lambda t: t.hour,
    "dayofweek": lambda t: t.day_of_week,
    "day": lambda t: t.day,
    "dayofyear": lambda t: t.day_of_year,
    "weekofyear": lambda t: t.isocalendar().week.to_numpy(),
    "month": lambda t: t.month,
    "quarter": lambda t: t.quarter,
    "year": lambda t: t.year,
}


def auto_calendar(freq) -> tuple[str, ...]:
    """The calendar columns ``date_features="auto"`` picks for a frequency: minute, hour
    and day of week below an hour; hour and day of week for hourly data; day of week and
    month for daily (the day of the year would name each row of a short history); week of
    year for weekly; month for monthly; quarter for quarterly; none for yearly (or integer
    time)."""
    if isinstance(freq, int | np.integer):
        return ()
    # one step between two points on the grid: an anchored offset (weekly on Sundays, year
    # end) first rolls a reference date forward to its anchor, a partial step
    first = pd.Timestamp("2001-01-01") + freq
    span = ((first + freq) - first) / pd.Timedelta(hours=1)
    if span < 1:
        return ("minute", "hour", "dayofweek")
    if span < 24:
        return ("hour", "dayofweek")
    if span < 24 * 7:
        return ("dayofweek", "month")
    if span < 24 * 25:
        return ("weekofyear",)
    if span < 24 * 80:
        return ("month",)
    if span < 24 * 300:
        return ("quarter",)
    return ()


@dataclass(frozen=True)
class FeatureSpec:
    """What the feature rows hold (module docstring).

    Attributes
    ----------
    lags, windows : tuple of int
    calendar : tuple of str
    strategy : {"recursive", "direct"}
    horizon : int
    difference : bool
    ids : list or None
        Categories of the series-id column (None: no id column).
    exog : tuple of str
        Exogenous columns, in order.
    static : DataFrame or None
        Static columns, one row per id (in the order of ``ids``).
    level : float
        Subtracted from the lag and rolling-mean columns (without ``difference``): the
        median of the training values, so that a series far from 0 (an offset of 1e9) keeps
        the resolution of its lags in the trees' histogram bins.
    scale : {"mean", "standard", "features", "none"}
        Scaling by the window (:mod:`distboost.forecasting.scaling`): each row's lag and
        rolling columns are divided by its factor (and, under "mean" and "standard", its
        target; "standard" subtracts the window's mean first); "features" adds the column
        ``log_scale``.
    scale_window : int
        The values behind a row's factor (0: the lags' reach, ``memory``).
    target_range : (float, float) or None
        The range of the training targets in the model's units: under scaling (``SHIFTED``) a
        recursive path's draws are kept inside it (:func:`~distboost.forecasting.strategies.
        simulate`).
    """

    lags: tuple[int, ...]
    windows: tuple[int, ...]
    calendar: tuple[str, ...]
    strategy: str
    horizon: int
    difference: bool
    ids: list | None
    exog: tuple[str, ...]
    static: pd.DataFrame | None
    level: float = 0.0
    scale: str = "none"
    scale_window: int = 0
    target_range: tuple[float, float] | None = None

    @property
    def memory(self) -> int:
        """How many past values a row needs: the largest lag or window."""
        return max(max(self.lags), max(self.windows, default=0))

    @property
    def context(self) -> int:
        """Past values a forecast reads: the lags' reach and the scale window."""
        return max(self.memory, self.scale_window if self.scale != "none" else 0)

    @property
    def factor_window(self) -> int:
        """The values behind a row's scale factor: ``scale_window``, or ``memory``."""
        return self.scale_window or self.memory

    @property
    def log_scale(self) -> bool:
        return self.scale == "features"

    @property
    def target_lags(self) -> tuple[int, ...]:
        return tuple(k for k in self.lags if k >= 2) if self.strategy == "direct" else ()

    @property
    def lag_columns(self) -> tuple[int, ...]:
        return tuple(j for j in self.lags if not (self.difference and j == 1))


def design(spec: FeatureSpec, *, lag, target_lag, rolls, step, times, series,
           exog: pd.DataFrame | None, factor: np.ndarray | None = None,
           shift: np.ndarray | None = None) -> pd.DataFrame:
    """The feature frame of ``R`` rows.

    Parameters
    ----------
    lag : callable ``j -> ndarray (R,)``
        ``y[T + 1 - j]`` of every row.
    target_lag : callable ``k -> ndarray (R,)``
        ``y[t - k]`` where known at the origin, else NaN (direct strategy).
    rolls : dict ``w -> (mean, std)``
    step : ndarray (R,) or None
    times : DatetimeIndex or integer Index of length R
        The target times.
    series : ndarray (R,) of int
        Series numbers (positions in ``spec.ids`` / ``spec.static``).
    exog : DataFrame of R rows or None
    factor, shift : ndarray (R,), optional
        Each row's scale factor and shift (:mod:`distboost.forecasting.scaling`; 1 and
        ``spec.level`` when None).
    """
    base = lag(1) if spec.difference else spec.level if shift is None else shift
    f = 1.0 if factor is None or spec.scale == "none" else np.asarray(factor, np.float64)
    cols: dict[str, object] = {}
    if spec.ids is not None:
        cols["series_id"] = pd.Categorical.from_codes(series, categories=pd.Index(spec.ids))
    for j in spec.lag_columns:
        cols[f"lag_{j}"] = (lag(j) - base) / f
    for k in spec.target_lags:
        cols[f"target_lag_{k}"] = (target_lag(k) - base) / f
    for w in spec.windows:
        mean, std = rolls[w]
        own = w == spec.factor_window and not spec.difference
        if not (spec.scale in SHIFTED and own):
            # (the mean of the scale window over its mean absolute value: 1 for a positive
            # series up to rounding, on which trees split and then extrapolate wildly; 0
            # under "standard", as the standard deviation is 1)
            cols[f"roll_mean_{w}"] = (mean - base) / f
        if not (spec.scale == "standard" and own):
            cols[f"roll_std_{w}"] = std / f
    if spec.strategy == "direct":
        cols["step"] = np.asarray(step, dtype=np.float64)
    for name in spec.calendar:
        cols[name] = np.asarray(CALENDAR[name](times), dtype=np.float64)
    if spec.log_scale:
        cols["log_scale"] = np.log(np.broadcast_to(f, (len(series),)))
    frame = pd.DataFrame(cols)
    if spec.static is not None:
        frame = pd.concat([frame, spec.static.iloc[series].reset_index(drop=True)], axis=1)
    if exog is not None:
        frame = pd.concat([frame, exog.reset_index(drop=True)], axis=1)
    return frame


def _rolling(values: np.ndarray, panel: Panel, origins: np.ndarray, windows) -> dict:
    """Mean and std of the ``w`` values ending at each origin (flat indices), from cumulative
    sums of the values centred on their series' first value (no cancellation for a large
    offset, and a row's statistics read no value after its origin, not even through a
    centre)."""
    if not windows:
        return {}
    centre = np.repeat(values[panel.offsets[:-1]], panel.lengths)
    c = values - centre
    s1 = np.r_[0.0, np.cumsum(c)]
    s2 = np.r_[0.0, np.cumsum(c * c)]
    out = {}
    for w in windows:
        a, b = origins + 1 - w, origins + 1
        mean = (s1[b] - s1[a]) / w
        var = np.maximum((s2[b] - s2[a]) / w - mean * mean, 0.0)
        out[w] = (mean + centre[origins], np.sqrt(var))
    return out


def training_rows(spec: FeatureSpec, panel: Panel, exog: pd.DataFrame | None,
                  max_rows: int | None = None, seed: int = 0):
    """Every (origin, step) row the history supports: features, target and target times.

    Parameters
    ----------
    spec : FeatureSpec
    panel : Panel
        The history, in its own units.
    exog : DataFrame or None
        The exogenous rows of every value of the panel.
    max_rows : int, optional
        Keep a seeded random share of the rows, about ``max_rows`` of them (the direct
        strategy: one row per origin and step would repeat every origin ``horizon`` times).
    seed : int
        Seed of that share.

    Returns
    -------
    X : DataFrame
    y : ndarray of shape (R,), or (R, 2) bounds of a censored history
        The target in the model's units (less the row's shift and divided by its factor
        under ``spec.scale`` "mean" or "standard").
    target : ndarray of shape (R,)
        The flat index (in ``panel``) of every row's target value.
    """
    pos = panel.position
    m = spec.memory
    steps = range(1, (spec.horizon if spec.strategy == "direct" else 1) + 1)
    target = np.concatenate([np.flatnonzero(pos >= m - 1 + h) for h in steps])
    step = np.concatenate([np.full(int((pos >= m - 1 + h).sum()), h) for h in steps])
    if max_rows is not None and target.size > max_rows:
        keep = np.random.default_rng(seed).random(target.size) < max_rows / target.size
        target, step = target[keep], step[keep]
    origin = target - step
    values = panel.values
    series = panel.series_of[target]
    centre = np.repeat(values[panel.offsets[:-1]], panel.lengths)
    shift, factor = window_scales(spec.scale, values, origin, spec.factor_window,
                                  panel.offsets[series], centre)

    def lag(j):
        return values[origin + 1 - j]

    def target_lag(k):
        out = np.full(target.size, np.nan)
        known = k >= step
        out[known] = values[target[known] - k]
        return out

    X = design(spec, lag=lag, target_lag=target_lag,
               rolls=_rolling(values, panel, origin, spec.windows), step=step,
               times=panel.times[target], series=series,
               exog=None if exog is None else exog.iloc[target], factor=factor,
               shift=shift if spec.scale == "standard" else None)
    y = (panel.values if panel.bounds is None else panel.bounds)[target]
    two = y.ndim == 2
    if spec.difference:
        y = y - (values[origin][:, None] if two else values[origin])
    if spec.scale in SHIFTED:
        y = (y - (shift[:, None] if two else shift)) / (factor[:, None] if two else factor)
    return X, y, target


def buffer_scales(spec: FeatureSpec, buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scale shift and factor of each row of a buffer ``buf`` (R, context) of raw values
    (the origin's value last; NaN before a series' start), as :func:`training_rows` computes
    them at an origin."""
    window = buf[:, buf.shape[1] - spec.factor_window:]
    if spec.scale == "standard":
        sd = np.nanstd(window, axis=1)
        return np.nanmean(window, axis=1), np.where(sd > 0.0, sd, 1.0)
    return (np.zeros(buf.shape[0]),
            factor_of(spec.scale, np.nanmean(np.abs(window), axis=1)))


def window_features(spec: FeatureSpec, buf: np.ndarray, *, step: int | np.ndarray,
                    times, series, exog, factor: np.ndarray | None = None,
                    shift: np.ndarray | None = None) -> pd.DataFrame:
    """Feature rows from the last ``memory`` values of each row, ``buf`` (R, M) (the origin's
    value in the last column), for steps ``step`` (an int, or one per row)."""
    m = buf.shape[1]
    step = np.broadcast_to(np.asarray(step), (buf.shape[0],))

    def lag(j):
        return buf[:, m - j]

    def target_lag(k):
        out = np.full(buf.shape[0], np.nan)
        known = k >= step
        out[known] = buf[known, m - 1 - (k - step[known])]
        return out

    rolls = {w: (buf[:, m - w:].mean(axis=1), buf[:, m - w:].std(axis=1))
             for w in spec.windows}
    return design(spec, lag=lag, target_lag=target_lag, rolls=rolls, step=step, times=times,
                  series=series, exog=exog, factor=factor,
                  shift=shift if spec.scale == "standard" else None)


def last_values(values: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int
                ) -> np.ndarray:
    """The ``width`` values before each ``ends`` (flat, exclusive) of series starting at
    ``starts``, shape (R, width), NaN where a series is shorter."""
    idx = ends[:, None] - width + np.arange(width)[None, :]
    out = values[np.maximum(idx, 0)]
    out[idx < starts[:, None]] = np.nan
    return out
