"""Scaling by the window: one global model sees every series, and every stretch of it, in
comparable units.

A global model over series of very different size (a store's department selling tens a day
beside one selling thousands, a tourism series that doubled over twenty years) learns in the
units of the largest values unless the values are normalised; the strong global models of
the M4 and M5 competitions normalise each input window (Salinas et al. 2020's DeepAR divides
by the window's mean; Smyl 2020; Montero-Manso & Hyndman 2021 on local scaling of global
models).  Here every forecast, and every training row, divides by the level of the values its
lags read at its origin, the *scale window* (the last ``memory`` values: the longest lag or
rolling window):

* ``"mean"`` (continuous families): the features and the target are divided by the window's
  mean absolute value ``s`` (1 for an all-zero window), and the forecast of ``Z`` goes back as
  the law of ``s Z`` (:class:`~distboost.families.Affine` with shift 0): a positive value
  stays positive, an exact zero stays zero, the family's support is kept;
* ``"features"`` (count families): the target keeps its counts (a count law is not
  scale-free); the lag and rolling features are divided by ``1 + s`` (DeepAR's scale), and
  the feature ``log_scale = log(1 + s)`` tells the trees the level;
* ``"standard"`` (``scale="standard"``, families on the real line): the features and the
  target less the window's mean, divided by its standard deviation (1 where it is 0), and the
  forecast of ``Z`` goes back as the law of ``mean + sd Z``: a series offset by ``1e9``
  keeps its resolution, where the division by its level would flatten it;
* ``"none"``: the values as they are (one series, or ``scale=False``, or a censored family,
  whose bounds keep their units).

A series whose values vary by less than :data:`MIN_SPREAD` of their level (a level offset
by ``1e9``, readings in Kelvin) keeps almost none of its variation after the division: the
trees' splits cannot resolve it, and its forecasts come out far too wide or off-centre.
:func:`flat_series` finds such series: ``scale="auto"`` then takes ``"standard"`` for a family
on the real line, and otherwise the forecaster warns naming them (constant series are exact
and not named).

Nothing is fitted: the scale of a row is a function of its window, the same in training,
in a backtest and in a forecast from any ``y_hist``, and a recursive path rescales at every
step from its own window.  Scaling is exact: a series multiplied by 1,000 gives every row the
same features and its forecast is the original forecast times 1,000
(``tests/forecasting/test_scaling.py``).
"""

from __future__ import annotations

import numpy as np

from ..families import Censored

__all__ = ["scaling_kind", "on_real_line", "factor_of", "window_factors", "window_scales",
           "flat_series", "SCALES", "MIN_SPREAD", "SHIFTED"]

#: The values of ``Forecaster(scale=...)``: "auto" (scaling by the window for a panel of two
#: or more series, none for one), True (always), False or None (never).
SCALES = ("auto", "standard", True, False, None)
#: The kinds whose forecast goes back as the law of ``shift + factor * Z`` (the target is in
#: the window's units).
SHIFTED = ("mean", "standard")
#: A series whose standard deviation is below this share of its mean absolute value (and
#: above 0) is named by :func:`flat_series` (M3's flattest monthly series: 0.012).
MIN_SPREAD = 1e-3


def on_real_line(family) -> bool:
    """Whether ``scale="standard"`` applies: a continuous, uncensored family whose support is
    the whole real line."""
    censored = isinstance(family, Censored) or getattr(family, "kind", "") == "censored"
    s = family.support
    return not (censored or family.discrete or np.isfinite(s.low) or np.isfinite(s.high))


def scaling_kind(family, asked=None) -> str:
    """How a family's forecasts are scaled: "mean", "standard", "features" or "none" (module
    docstring); ``asked="standard"`` raises ValueError for a family not on the real line."""
    censored = isinstance(family, Censored) or getattr(family, "kind", "") == "censored"
    if isinstance(asked, str) and asked == "standard":
        s = family.support
        if not on_real_line(family):
            raise ValueError(
                f"scale='standard' subtracts each window's mean, which only a continuous "
                f"family on the whole real line keeps in its support; family "
                f"{family.name!r} has the support {s}: use scale='auto' (division by the "
                "window's level) or a family such as 'normal' or 'studentt'.")
        return "standard"
    if censored:
        return "none"
    return "features" if family.discrete else "mean"


def factor_of(kind: str, level: np.ndarray) -> np.ndarray:
    """The factor of windows whose mean absolute value is ``level``: ``level`` (1 where it
    is 0) under "mean", ``1 + level`` under "features", 1 under "none"."""
    level = np.asarray(level, dtype=np.float64)
    if kind == "mean":
        return np.where(level > 0.0, level, 1.0)
    if kind == "features":
        return 1.0 + level
    return np.ones_like(level)


def window_factors(kind: str, values: np.ndarray, origins: np.ndarray, window: int,
                   starts: np.ndarray | None = None) -> np.ndarray:
    """The factor of every origin (flat indices into ``values``), from the mean absolute value
    of the ``window`` values ending at it (cumulative sums: no loop over rows).

    ``starts``: the flat index of each origin's series start (the window is cut there)."""
    if kind == "none":
        return np.ones(len(origins))
    c = np.r_[0.0, np.cumsum(np.abs(values))]
    lo = origins + 1 - window
    if starts is not None:
        lo = np.maximum(lo, starts)
    level = (c[origins + 1] - c[lo]) / (origins + 1 - lo)
    return factor_of(kind, level)


def window_scales(kind: str, values: np.ndarray, origins: np.ndarray, window: int,
                  starts: np.ndarray, centre: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(shift, factor)`` of every origin: 0 and :func:`window_factors` but under
    "standard", the mean and standard deviation (1 where 0) of the ``window`` values ending
    at it, cut at its series' start ``starts`` (cumulative sums of the values less
    ``centre``, each value's series' first value: no cancellation for a large offset)."""
    if kind != "standard":
        return (np.zeros(len(origins)),
                window_factors(kind, values, origins, window, starts))
    c = values - centre
    s1 = np.r_[0.0, np.cumsum(c)]
    s2 = np.r_[0.0, np.cumsum(c * c)]
    lo = np.maximum(origins + 1 - window, starts)
    n = origins + 1 - lo
    mean = (s1[origins + 1] - s1[lo]) / n
    sd = np.sqrt(np.maximum((s2[origins + 1] - s2[lo]) / n - mean * mean, 0.0))
    return mean + centre[origins], np.where(sd > 0.0, sd, 1.0)


def flat_series(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Positions of the series (``values[offsets[s]:offsets[s + 1]]``) whose standard
    deviation lies in ``(0, MIN_SPREAD x mean |value|)``, and each one's relative spread:
    ``(positions, spreads)``."""
    n = np.diff(offsets)
    starts = offsets[:-1]
    mean = np.add.reduceat(values, starts) / n
    level = np.add.reduceat(np.abs(values), starts) / n
    var = np.add.reduceat((values - np.repeat(mean, n)) ** 2, starts) / n
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.sqrt(var) / level
    flat = np.flatnonzero((var > 0.0) & (spread < MIN_SPREAD))
    return flat, spread[flat]
