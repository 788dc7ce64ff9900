"""The checked settings of a forecaster and what its "auto" options choose on a panel.

:func:`check_settings` validates the options (clear errors naming the option) before any
work, :func:`check_panel_family` the family against the training values; :func:`make_plan`
resolves ``lags="auto"``, ``rolling="auto"``, ``season_length=None``,
``date_features="auto"`` and ``scale="auto"`` on the training panel (:mod:`.defaults`,
:mod:`.scaling`) into a :class:`ForecastPlan`, which every fit of the forecaster (the final
one and those of its backtests) then follows.  ``family="auto"`` starts the plan with the
first of :func:`family_candidates`; the end-of-history backtest may replace it
(:mod:`.end_backtest`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import pandas as pd

from ..estimators import is_auto
from ..families import Censored, Family, StudentT, get
from .data import FILLS, Panel
from .defaults import (
    auto_lags,
    auto_windows,
    detect_season,
    longest_lag,
    scale_window,
    season_of_freq,
    uses_series_id,
)
from .features import CALENDAR, auto_calendar
from .scaling import MIN_SPREAD, SCALES, flat_series, on_real_line, scaling_kind

__all__ = ["ForecastPlan", "check_settings", "make_plan", "warn_flat", "STRATEGIES", "NESTED",
           "check_history", "check_lengths", "static_rows", "tail_rows",
           "regressor_kwargs", "family_candidates", "check_panel_family", "AUTO_MIN_DF"]

STRATEGIES = ("auto", "recursive", "direct")
#: ``family="auto"``'s Student-t keeps ``df >= AUTO_MIN_DF``: a finite mean, CRPS and
#: recursive mixture where a free ``df`` falls below 1 (docs/forecasting.md, "The family").
AUTO_MIN_DF = 2.0


def family_candidates(family) -> tuple[Family, ...]:
    """The families a forecaster's fit may use, the first its plan's until the
    end-of-history backtest chooses (:mod:`.end_backtest`): for ``family="auto"`` the Normal
    and a Student-t with ``df`` floored at :data:`AUTO_MIN_DF`, else ``family`` alone."""
    if is_auto(family):
        return get("normal"), StudentT(min_df=AUTO_MIN_DF)
    return (get(family),)


def ints(value, name: str, low: int) -> tuple[int, ...]:
    """Sorted distinct integers ``>= low`` from an int or a sequence (ValueError else)."""
    values = [value] if isinstance(value, Integral) else list(value or ())
    bad = [v for v in values if isinstance(v, bool) or not isinstance(v, Integral) or v < low]
    if bad:
        raise ValueError(f"{name} takes integers >= {low} (or 'auto'); got {value!r}.")
    return tuple(sorted({int(v) for v in values}))


@dataclass(frozen=True)
class ForecastPlan:
    """What a forecaster's fits use (module docstring).

    Attributes
    ----------
    horizon : int
    lags, windows : tuple of int
    calendar : tuple of str
    season_length : int
        1 without a season.
    scale : {"mean", "features", "none"}
        The scaling by the window (:mod:`distboost.forecasting.scaling`).
    scale_window : int
        The values behind a row's scale factor (:func:`~distboost.forecasting.defaults.
        scale_window`).
    series_id : bool
        Whether the series' id is a categorical feature.
    family : Family or None
        The family every fit of the plan uses (:func:`family_candidates`).
    """

    horizon: int
    lags: tuple[int, ...]
    windows: tuple[int, ...]
    calendar: tuple[str, ...]
    season_length: int
    scale: str
    scale_window: int
    series_id: bool = False
    family: Family | None = None

    @property
    def memory(self) -> int:
        return max(max(self.lags), max(self.windows, default=0))


def check_settings(fc) -> dict:
    """The forecaster's options checked (ValueError naming the option): ``horizon``,
    ``lags``, ``windows`` (tuples or "auto"), ``calendar`` ("auto", a tuple or ()),
    ``season_length`` (int or None)."""
    h = fc.horizon
    if isinstance(h, bool) or not isinstance(h, Integral) or h < 1:
        raise ValueError(f"horizon must be an integer >= 1 (the number of steps to "
                         f"forecast); got {h!r}.")
    lags = "auto" if isinstance(fc.lags, str) and fc.lags == "auto" else ints(fc.lags,
                                                                              "lags", 1)
    if not lags:
        raise ValueError("lags needs at least one lag (e.g. lags=[1]) or 'auto'.")
    windows = ("auto" if isinstance(fc.rolling, str) and fc.rolling == "auto"
               else ints(fc.rolling, "rolling", 2))
    m = fc.season_length
    if m is not None and (isinstance(m, bool) or not isinstance(m, Integral) or m < 1):
        raise ValueError(f"season_length must be an integer >= 1 (steps in one season, 1 for "
                         f"none) or None (from the frequency or the data); got {m!r}.")
    if fc.strategy not in STRATEGIES:
        raise ValueError(f"strategy must be one of {list(STRATEGIES)}; got {fc.strategy!r}.")
    if not (isinstance(fc.calibrate, bool | np.bool_)
            or (isinstance(fc.calibrate, str) and fc.calibrate == "auto")):
        raise ValueError(f"calibrate must be True, False or 'auto'; got {fc.calibrate!r}.")
    if not any(fc.scale is s or (isinstance(s, str) and fc.scale == s) for s in SCALES):
        raise ValueError(f"scale must be 'auto', 'standard', True or False; got {fc.scale!r}.")
    if not (isinstance(fc.series_id, bool | np.bool_)
            or (isinstance(fc.series_id, str) and fc.series_id == "auto")):
        raise ValueError(f"series_id must be True, False or 'auto'; got {fc.series_id!r}.")
    if fc.fill not in FILLS:
        raise ValueError(f"fill must be one of {list(FILLS)}; got {fc.fill!r}.")
    n = fc.n_paths
    if isinstance(n, bool) or not isinstance(n, Integral) or n < 2:
        raise ValueError(f"n_paths must be an integer >= 2; got {n!r}.")
    cal = fc.date_features
    if cal in (None, False):
        cal = ()
    elif cal != "auto":
        cal = tuple(cal)
        unknown = [c for c in cal if c not in CALENDAR]
        if unknown:
            raise ValueError(f"Unknown date_features {unknown}; use 'auto' or names from "
                             f"{list(CALENDAR)}.")
    return {"horizon": int(h), "lags": lags, "windows": windows, "calendar": cal,
            "season_length": None if m is None else int(m)}


def check_panel_family(fc, panel: Panel) -> None:
    """ValueError where ``fc``'s family cannot model the training ``panel``: censored values
    for a family of exact values, a value outside its support (a negative count: naming the
    series, how many values and the first time), ``difference=True`` without a location on
    the real line.  For ``family="auto"``, the checks of its first candidate."""
    family = family_candidates(fc.family)[0]
    censored = isinstance(family, Censored)
    named = ("family='auto' (the Normal or a Student-t)" if is_auto(fc.family)
             else f"family {family.name!r}")
    if panel.bounds is not None and not censored:
        n_cens = int((panel.bounds[:, 0] < panel.bounds[:, 1]).sum())
        if n_cens:
            raise ValueError(
                f"y has {n_cens} censored value(s) (lower < upper) of {len(panel.values)}; "
                f"{named} takes exact values: use a censored family, e.g. "
                f"family='censored_{family.name}'.")
    bad = np.zeros(0, dtype=bool) if censored else ~family.support.contains(panel.values)
    if bad.any():
        first = int(np.argmax(bad))
        n_series = len(np.unique(panel.series_of[bad]))
        raise ValueError(
            f"y has {int(bad.sum())} value(s) outside the support {family.support} of family "
            f"{family.name!r} in {n_series} series (first: "
            f"{panel.label(int(panel.series_of[first]))} at {panel.times[first]}, value "
            f"{panel.values[first]:g}); choose a family whose support holds them (e.g. "
            "'normal'), or clean the values.")
    if fc.difference:
        inner = family.inner if censored else family
        if "loc" not in inner.param_names or not on_real_line(inner):
            raise ValueError(
                f"difference=True needs a location family on the real line (a 'loc' "
                f"parameter: normal, studentt, laplace, logistic, ...); family "
                f"{family.name!r} is not one.")


def make_plan(fc, panel: Panel) -> ForecastPlan:
    """The plan of ``fc``'s options on the training ``panel`` (module docstring).

    Raises ValueError when the season is longer than the shortest history allows, or a
    series is shorter than the lags asked for."""
    s = check_settings(fc)
    horizon = s["horizon"]
    limit = longest_lag(panel.lengths, horizon)
    season = s["season_length"]
    if season is None:
        season = season_of_freq(panel.freq)
        if season is None:
            season = detect_season(panel.values, panel.offsets)
    elif season > 1 and season > int(panel.lengths.min()) // 2:
        raise ValueError(
            f"season_length={season} is longer than half the shortest series "
            f"({int(panel.lengths.min())} values): a season must repeat in every history; "
            "give a shorter season_length, or season_length=1 for none.")
    lags = s["lags"] if s["lags"] != "auto" else auto_lags(panel.freq, season, limit)
    windows = (s["windows"] if s["windows"] != "auto"
               else auto_windows(panel.freq, season, limit))
    cal = s["calendar"]
    if cal == "auto":
        cal = auto_calendar(panel.freq)
    if cal and not panel.datetime:
        raise ValueError(f"date_features {list(cal)} need dates; y has integer times.")
    family = family_candidates(fc.family)[0]
    kind = scaling_kind(family, fc.scale)
    on = (fc.scale is True or (isinstance(fc.scale, str) and panel.n_series > 1)
          or kind == "standard")
    if kind == "standard" and fc.difference:
        raise ValueError("scale='standard' and difference=True both take each series' level "
                         "out of its values: use one of them.")
    if fc.scale is True and kind == "none":
        raise ValueError(f"scale=True cannot rescale the bounds of censored family "
                         f"{family.name!r}; use scale=False.")
    memory = max(max(lags), max(windows, default=0))
    if (kind == "mean" and on and isinstance(fc.scale, str) and not fc.difference
            and on_real_line(family)
            and flat_series(np.asarray(panel.values, np.float64), panel.offsets)[0].size):
        kind = "standard"  # a series far from 0 would lose its resolution (.scaling)
    scaled = on and kind != "none"
    ids = (uses_series_id(panel.n_series, scaled) if isinstance(fc.series_id, str)
           else bool(fc.series_id) and panel.n_series > 1)
    return ForecastPlan(horizon=horizon, lags=tuple(lags), windows=tuple(windows),
                        calendar=tuple(cal), season_length=int(season),
                        scale=kind if on else "none",
                        scale_window=scale_window(panel.freq, memory, limit),
                        series_id=ids, family=family)


def check_lengths(panel: Panel, need: int, what: str, why: str) -> None:
    """ValueError naming the first series of ``panel`` (called ``what``) with fewer than
    ``need`` values, and how many are short; ``why`` ends the message."""
    short = np.flatnonzero(panel.lengths < need)
    if short.size:
        s = int(short[0])
        raise ValueError(
            f"{what}: {short.size} of {panel.n_series} series have fewer than {need} values "
            f"({panel.label(s)} has {int(panel.lengths[s])}); {why}")


def check_history(panel: Panel, plan: ForecastPlan) -> None:
    """ValueError naming the first series too short for one training row under ``plan``
    (its largest lag or rolling window, plus the value to forecast)."""
    need = plan.memory + 1
    check_lengths(panel, need, "y", (
        f"the largest lag or rolling window is {plan.memory} (lags {list(plan.lags)}, "
        f"rolling {list(plan.windows)}), so a series needs at least {need} values to give "
        "one training row."))


def static_rows(static: pd.DataFrame | None, ids) -> pd.DataFrame | None:
    """The rows of ``static`` (indexed by series id) of the series ``ids``, in their order
    (a ValueError naming a series without one); None without ``static``."""
    if static is None:
        return None
    missing = [i for i in ids if i not in static.index]
    if missing:
        raise ValueError(f"static lacks a row for {len(missing)} series (first "
                         f"{missing[0]!r}); index it by the series ids.")
    return static.loc[list(ids)].reset_index(drop=True)


def tail_rows(panel: Panel, rows: np.ndarray, share: float) -> np.ndarray:
    """Mask of the training rows whose target (flat index ``rows`` of ``panel``) lies in
    the last ``share`` of its series: the validation rows of a forecaster's fit."""
    cut = np.floor((1.0 - share) * panel.lengths)[panel.series_of[rows]]
    return panel.position[rows] >= cut


def warn_flat(panel: Panel) -> None:
    """Warn about the series the division by the window's level cannot resolve
    (:mod:`.scaling`; called by a fit that kept that scaling)."""
    flat, spread = flat_series(np.asarray(panel.values, np.float64), panel.offsets)
    if not flat.size:
        return
    names = [panel.ids[i] for i in flat[:5]]
    warnings.warn(
        f"Forecaster: scaling by the window divides every series by its level, and "
        f"{flat.size} of the {panel.n_series} series ({names}{' ...' if flat.size > 5 else ''})"
        f" {'varies' if flat.size == 1 else 'vary'} by less than {MIN_SPREAD:.1%} of it "
        f"(standard deviation {float(spread[0]):.1e} of the mean absolute value for "
        f"{names[0]!r}): the trees cannot resolve "
        "that variation, and their forecasts come out far too wide or off-centre.  Use "
        "scale='standard' (less the window's mean, over its standard deviation), or subtract "
        "each series' offset before fitting.", UserWarning, stacklevel=4)


#: The prefix of a regressor option the forecaster shadows (``regressor__calibrate``).
NESTED = "regressor__"


def regressor_kwargs(options: dict) -> dict:
    """The regressor's options of a forecaster, ``regressor__<name>`` given as ``<name>``
    (a ValueError for an option given both ways)."""
    out = {}
    for key, value in options.items():
        name = key.removeprefix(NESTED)
        if name in out:
            raise ValueError(f"The regressor's option {name!r} is given twice ({name!r} and "
                             f"{NESTED + name!r}); give it once.")
        out[name] = value
    return out
