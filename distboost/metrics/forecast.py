"""Scaled forecast scores of the forecasting competitions (M4, M5) and the seasonal naive
reference forecast.

- :func:`mase`: Mean Absolute Scaled Error (Hyndman & Koehler 2006; the M4 competition).
- :func:`msis`: Mean Scaled Interval Score (the M4 competition).
- :func:`scaled_pinball` and :func:`wspl`: the scaled and weighted scaled pinball losses of
  the M5 Uncertainty competition.
- :func:`crps_skill`: the CRPS skill score against a reference forecast.
- :func:`seasonal_naive`: the seasonal naive point forecast, the usual reference.

Each score takes one series (``y`` of shape (h,), ``y_train`` of shape (n,)) and returns a
float, or many series at once (``y`` of shape (S, h), ``y_train`` a sequence of S training
series whose lengths may differ) and returns an ndarray of shape (S,), one score per series.
Arrays may be lists, numpy arrays or pandas objects.  Lower is better for every score except
:func:`crps_skill` (higher is better, 1 is perfect, 0 is the reference's skill).

References
----------
Hyndman, R. J. & Koehler, A. B. (2006). Another look at measures of forecast accuracy.
International Journal of Forecasting 22(4), 679-688.
M4 Team (2018). M4 competitor's guide: prizes and rules.
Makridakis, S., Spiliotis, E. & Assimakopoulos, V. (2020). The M4 competition: 100,000 time
series and 61 forecasting methods. International Journal of Forecasting 36(1), 54-74.
Makridakis, S., Spiliotis, E., Assimakopoulos, V., Chen, Z., Gaba, A., Tsetlin, I. &
Winkler, R. L. (2022). The M5 uncertainty competition: results, findings and conclusions.
International Journal of Forecasting 38(4), 1365-1385.
Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
estimation. Journal of the American Statistical Association 102(477), 359-378.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

__all__ = ["mase", "msis", "scaled_pinball", "wspl", "crps_skill", "seasonal_naive"]


def _positive_int(value, name: str, score: str) -> int:
    """``value`` as an int >= 1 (``name`` and ``score`` for the error)."""
    if isinstance(value, bool):
        raise ValueError(f"{score}: {name} must be a positive integer; got {value!r}.")
    try:
        value = operator.index(value)
    except TypeError:
        raise ValueError(f"{score}: {name} must be a positive integer; got {value!r}.") from None
    if value < 1:
        raise ValueError(f"{score}: {name} must be a positive integer; got {value}.")
    return value


def _array(x, name: str, score: str) -> np.ndarray:
    """``x`` as a finite float64 array."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{score}: {name} is not a numeric array ({err}).") from None
    if a.size and not np.isfinite(a).all():
        raise ValueError(f"{score}: {name} has {int((~np.isfinite(a)).sum())} NaN or "
                         "infinite values.")
    return a


def _targets(score: str, y, **others) -> tuple[np.ndarray, ...]:
    """``y`` of shape (h,) or (S, h) and the ``others`` of that same shape, as float arrays."""
    y = _array(y, "y", score)
    if y.ndim not in (1, 2) or y.shape[-1] == 0:
        raise ValueError(f"{score}: y has shape {y.shape}; expected (h,) for one series or "
                         "(S, h) for S series, with a horizon h >= 1.")
    out = [y]
    for name, value in others.items():
        a = _array(value, name, score)
        if a.shape != y.shape:
            raise ValueError(f"{score}: {name} has shape {a.shape} but y has shape {y.shape}; "
                             "they must match.")
        out.append(a)
    return tuple(out)


def _training(score: str, y_train, n_series: int | None) -> list[np.ndarray]:
    """The training series as a list of finite 1-D float arrays: ``[y_train]`` for one series
    (``n_series`` None) or the ``n_series`` rows of a sequence or 2-D array."""
    if n_series is None:
        try:
            a = np.asarray(y_train, dtype=np.float64)
        except (TypeError, ValueError):
            a = None
        if a is None or a.ndim != 1:
            shape = "ragged" if a is None else a.shape
            raise ValueError(
                f"{score}: y has shape (h,), one series, so y_train must be one 1-D training "
                f"series; got shape {shape}.  For S series pass y of shape (S, h) and y_train "
                "a sequence of S 1-D arrays.")
        return [_array(a, "y_train", score)]
    if getattr(y_train, "ndim", None) == 2 and hasattr(y_train, "to_numpy"):
        y_train = y_train.to_numpy()  # a DataFrame: one row per series
    if isinstance(y_train, np.ndarray) and y_train.dtype != object:
        if y_train.ndim != 2:
            raise ValueError(
                f"{score}: y has shape (S, h) with S = {n_series} series, so y_train must be a "
                f"sequence of {n_series} 1-D training series (or an array of shape "
                f"({n_series}, n)); got an array of shape {y_train.shape}.")
        rows = list(y_train)
    else:
        try:
            rows = list(y_train)
        except TypeError:
            raise ValueError(f"{score}: y_train must be a sequence of {n_series} 1-D training "
                             f"series; got {type(y_train).__name__}.") from None
    if len(rows) != n_series:
        raise ValueError(f"{score}: y has {n_series} series (shape (S, h) with S = {n_series}) "
                         f"but y_train holds {len(rows)} training series.")
    out = []
    for i, row in enumerate(rows):
        a = _array(row, f"y_train[{i}]", score)
        if a.ndim != 1:
            raise ValueError(f"{score}: y_train[{i}] (series {i}) has shape {a.shape}; every "
                             "training series must be 1-D.")
        out.append(a)
    return out


def _label(i: int, single: bool) -> str:
    return "y_train" if single else f"y_train[{i}] (series {i})"


def _seasonal_scale(score: str, train: np.ndarray, m: int, label: str) -> float:
    """``mean_{t > m} |train[t] - train[t - m]|``, the in-sample MAE of the seasonal naive
    forecast (Hyndman & Koehler 2006, Section 4; M4 guide)."""
    if train.size <= m:
        raise ValueError(f"{score}: {label} has {train.size} values; the seasonal naive scale "
                         f"with season_length={m} needs more than {m}.")
    scale = float(np.mean(np.abs(train[m:] - train[:-m])))
    if not scale > 0:
        raise ValueError(
            f"{score}: the scale of {label} is zero: every in-sample seasonal naive error "
            f"|y_train[t] - y_train[t - {m}]| is 0 (the series repeats itself exactly with "
            f"season_length={m}, e.g. a constant series), so the scaled score would divide "
            "by zero.")
    return scale


def _m5_scale(score: str, train: np.ndarray, label: str) -> float:
    """``mean_{t >= 2} |train[t] - train[t - 1]|`` over the training series from its first
    non-zero value on (the M5 rule: the zeros before a product was first sold are dropped)."""
    nonzero = np.flatnonzero(train)
    if nonzero.size == 0:
        raise ValueError(f"{score}: the scale of {label} is undefined: the series is all zeros, "
                         "and the M5 rule drops the zeros before the first non-zero value, so "
                         "nothing is left.")
    kept = train[nonzero[0]:]
    if kept.size < 2:
        raise ValueError(f"{score}: the scale of {label} is undefined: from its first non-zero "
                         "value on (the M5 rule drops the leading zeros) only one value is "
                         "left, so it has no one-step naive error.")
    scale = float(np.mean(np.abs(np.diff(kept))))
    if not scale > 0:
        raise ValueError(f"{score}: the scale of {label} is zero: from its first non-zero value "
                         "on the series is constant, every in-sample naive error is 0, so the "
                         "scaled pinball loss would divide by zero.")
    return scale


def _scales(score: str, y_train, y: np.ndarray,
            scale: Callable[[np.ndarray, str], float]) -> np.ndarray:
    """One scale per series, shape (S,) (shape (1,) for one series)."""
    single = y.ndim == 1
    trains = _training(score, y_train, None if single else y.shape[0])
    return np.array([scale(t, _label(i, single)) for i, t in enumerate(trains)])


def _finish(values: np.ndarray, single: bool) -> float | np.ndarray:
    return float(values[0]) if single else values


def mase(y, y_hat, y_train, season_length: int = 1) -> float | np.ndarray:
    """Mean Absolute Scaled Error (Hyndman & Koehler 2006, Section 4; the MASE of the M4
    competition, Makridakis, Spiliotis & Assimakopoulos 2020).

    ``MASE = mean_t |y_t - y_hat_t| / mean_{t > m} |y_train[t] - y_train[t - m]|`` with
    ``m = season_length``: the forecast's mean absolute error over the horizon divided by the
    in-sample mean absolute error of the seasonal naive forecast.

    Parameters
    ----------
    y, y_hat : array_like of shape (h,) or (S, h)
        Observations and point forecasts of one series over the horizon h, or of S series.
    y_train : array_like of shape (n,), or a sequence of S arrays
        The training series (n > season_length); for S series a sequence (list, tuple,
        pandas Series of arrays) of S 1-D arrays whose lengths may differ, or an array or
        DataFrame of shape (S, n), one row per series.
    season_length : int, default 1
        The seasonal period m (1 non-seasonal, 4 quarterly, 12 monthly, ...).

    Returns
    -------
    float, or ndarray of shape (S,)
        One MASE, or the MASE of every series for 2-D ``y``.

    Raises
    ------
    ValueError
        On mismatched shapes, non-finite values, a training series of at most m values, or a
        zero scale (a series that repeats itself exactly with period m; the error names it).
    """
    m = _positive_int(season_length, "season_length", "mase")
    y, y_hat = _targets("mase", y, y_hat=y_hat)
    scales = _scales("mase", y_train, y, lambda t, lab: _seasonal_scale("mase", t, m, lab))
    error = np.atleast_2d(np.mean(np.abs(y - y_hat), axis=-1)).ravel()
    return _finish(error / scales, y.ndim == 1)


def msis(y, lower, upper, y_train, season_length: int = 1,
         alpha: float = 0.05) -> float | np.ndarray:
    """Mean Scaled Interval Score (M4 competitor's guide; Makridakis, Spiliotis &
    Assimakopoulos 2020, IJF 36(1)).

    ``MSIS = mean_t [(u_t - l_t) + 2/alpha (l_t - y_t) 1{y_t < l_t}
    + 2/alpha (y_t - u_t) 1{y_t > u_t}] / mean_{t > m} |y_train[t] - y_train[t - m]|``:
    the interval score of Gneiting & Raftery (2007, eq. 43) of the central
    ``(1 - alpha)`` interval ``[l, u]``, averaged over the horizon and divided by the
    in-sample mean absolute error of the seasonal naive forecast (the scale of :func:`mase`).

    Parameters
    ----------
    y, lower, upper : array_like of shape (h,) or (S, h)
        Observations and the bounds of the forecast intervals (bounds are not required to be
        ordered; crossed bounds are scored by the same formula).
    y_train : array_like of shape (n,), or a sequence of S arrays
        The training series, as in :func:`mase`.
    season_length : int, default 1
        The seasonal period m of the scale.
    alpha : float, default 0.05
        One minus the nominal coverage of the interval, in (0, 1) (M4: 0.05, 95% intervals).

    Returns
    -------
    float, or ndarray of shape (S,)
        One MSIS, or the MSIS of every series for 2-D ``y``.

    Raises
    ------
    ValueError
        On ``alpha`` outside (0, 1), mismatched shapes, non-finite values or a zero scale.
    """
    m = _positive_int(season_length, "season_length", "msis")
    alpha = float(alpha)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"msis: alpha must lie in (0, 1); got {alpha}.")
    y, lower, upper = _targets("msis", y, lower=lower, upper=upper)
    scales = _scales("msis", y_train, y, lambda t, lab: _seasonal_scale("msis", t, m, lab))
    score = ((upper - lower) + 2.0 / alpha * np.maximum(lower - y, 0.0)
             + 2.0 / alpha * np.maximum(y - upper, 0.0))
    score = np.atleast_2d(np.mean(score, axis=-1)).ravel()
    return _finish(score / scales, y.ndim == 1)


def _pinball_inputs(score: str, y, quantiles, levels) -> tuple[np.ndarray, ...]:
    """``y`` (h,) or (S, h), ``quantiles`` (..., L) and ``levels`` (L,) in (0, 1); a scalar
    level goes with ``quantiles`` of the shape of ``y``."""
    (y,) = _targets(score, y)
    levels = _array(levels, "levels", score)
    quantiles = _array(quantiles, "quantiles", score)
    if levels.ndim == 0:
        levels, quantiles = levels[None], quantiles[..., None]
    if levels.ndim != 1 or levels.size == 0:
        raise ValueError(f"{score}: levels has shape {levels.shape}; expected (L,), L >= 1.")
    bad = levels[(levels <= 0.0) | (levels >= 1.0)]
    if bad.size:
        raise ValueError(f"{score}: levels must lie in (0, 1); got {bad.tolist()}.")
    if quantiles.shape != (*y.shape, levels.size):
        raise ValueError(f"{score}: quantiles has shape {quantiles.shape}; expected "
                         f"{(*y.shape, levels.size)} (the shape of y, {y.shape}, and one column "
                         f"per level, {levels.size}).")
    return y, quantiles, levels


def _spl(y: np.ndarray, quantiles: np.ndarray, levels: np.ndarray,
         scales: np.ndarray) -> np.ndarray:
    """Scaled pinball loss of S series, shape (S,), from ``y`` (S, h), ``quantiles``
    (S, h, L), ``levels`` (L,) and ``scales`` (S,)."""
    diff = y[..., None] - quantiles                      # (S, h, L)
    loss = np.where(diff >= 0.0, levels * diff, (levels - 1.0) * diff)
    return np.mean(np.mean(loss, axis=1) / scales[:, None], axis=1)


def scaled_pinball(y, quantiles, levels, y_train) -> float | np.ndarray:
    """Scaled pinball loss of the M5 Uncertainty competition (Makridakis, Spiliotis,
    Assimakopoulos et al. 2022, IJF 38(4); the M5 competitors' guide), averaged over
    the quantile levels.

    For each level ``tau``, ``SPL(tau) = mean_t [(y_t - q_t) tau 1{y_t >= q_t}
    + (q_t - y_t)(1 - tau) 1{y_t < q_t}] / mean_{t = 2..n'} |y'_t - y'_{t-1}|``, where ``y'``
    (of length ``n'``) is the training series from its first non-zero value on (the M5 rule:
    the zeros before the product was first sold are dropped).  The result is the mean of
    ``SPL(tau)`` over the L levels (M5: 9 levels, 0.005 to 0.995).

    Parameters
    ----------
    y : array_like of shape (h,) or (S, h)
        Observations of one series over the horizon h, or of S series.
    quantiles : array_like of shape (h, L) or (S, h, L)
        The forecast quantiles, one column per level (shape of ``y`` when ``levels`` is a
        scalar).
    levels : array_like of shape (L,)
        The quantile levels, each in (0, 1).
    y_train : array_like of shape (n,), or a sequence of S arrays
        The training series, as in :func:`mase`.

    Returns
    -------
    float, or ndarray of shape (S,)
        The level-averaged scaled pinball loss of the series, or of every series.

    Raises
    ------
    ValueError
        On levels outside (0, 1), mismatched shapes, non-finite values, or a scale that is
        zero or undefined (an all-zero series, or a constant one after its leading zeros).
    """
    y, quantiles, levels = _pinball_inputs("scaled_pinball", y, quantiles, levels)
    scales = _scales("scaled_pinball", y_train, y,
                     lambda t, lab: _m5_scale("scaled_pinball", t, lab))
    spl = _spl(np.atleast_2d(y), quantiles.reshape(-1, *quantiles.shape[-2:]), levels, scales)
    return _finish(spl, y.ndim == 1)


def wspl(y, quantiles, levels, y_train, weights) -> float:
    """Weighted scaled pinball loss of the M5 Uncertainty competition (Makridakis, Spiliotis,
    Assimakopoulos et al. 2022, IJF 38(4); the M5 competitors' guide):
    ``sum_i w_i SPL_i / sum_i w_i``, where ``SPL_i`` is the level-averaged
    :func:`scaled_pinball` of series i.

    M5 weighted each series by its dollar sales over the last 28 training days (each of its
    12 aggregation levels summing to one); here the caller gives the weights.  A series of
    weight 0 does not count, so its scale is not computed (it may be zero).

    Parameters
    ----------
    y : array_like of shape (S, h)
    quantiles : array_like of shape (S, h, L)
    levels : array_like of shape (L,)
        Quantile levels in (0, 1).
    y_train : sequence of S array_like
        The training series, as in the many-series form of :func:`scaled_pinball`.
    weights : array_like of shape (S,)
        Non-negative and not all zero.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On ``y`` not 2-D, mismatched shapes, negative, non-finite or all-zero weights, and the
        errors of :func:`scaled_pinball` for the series of positive weight.
    """
    y, quantiles, levels = _pinball_inputs("wspl", y, quantiles, levels)
    if y.ndim != 2:
        raise ValueError(f"wspl: y has shape {y.shape}; expected (S, h), S series (for one "
                         "series use scaled_pinball).")
    w = _array(weights, "weights", "wspl")
    if w.shape != (y.shape[0],):
        raise ValueError(f"wspl: weights has shape {w.shape}; expected ({y.shape[0]},), one "
                         f"weight per series of y (shape {y.shape}).")
    if (w < 0).any():
        raise ValueError(f"wspl: weights must be non-negative; series "
                         f"{np.flatnonzero(w < 0).tolist()} have negative weights.")
    if not w.sum() > 0:
        raise ValueError("wspl: weights are all zero; at least one series needs a positive "
                         "weight.")
    trains = _training("wspl", y_train, y.shape[0])
    used = np.flatnonzero(w > 0)
    scales = np.array([_m5_scale("wspl", trains[i], _label(i, False)) for i in used])
    spl = _spl(y[used], quantiles[used], levels, scales)
    return float(np.sum(w[used] * spl) / np.sum(w[used]))


def crps_skill(crps, crps_reference) -> float:
    """CRPS skill score ``1 - mean(crps) / mean(crps_reference)`` (Gneiting & Raftery 2007,
    Section 2.3, with the CRPS of eq. 20).

    1 is a perfect forecast, 0 the reference's skill, negative worse than the reference.  The
    usual reference is the seasonal naive forecast (:func:`seasonal_naive`): a point forecast
    ``x`` has ``CRPS = |y - x|``.

    Parameters
    ----------
    crps, crps_reference : array_like, of the same shape
        The CRPS of the forecast and of the reference at the same observations.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        On mismatched shapes, empty or non-finite arrays, or a reference whose mean CRPS is
        not positive (a perfect reference leaves the skill undefined).
    """
    crps = _array(crps, "crps", "crps_skill")
    ref = _array(crps_reference, "crps_reference", "crps_skill")
    if crps.shape != ref.shape:
        raise ValueError(f"crps_skill: crps has shape {crps.shape} but crps_reference has shape "
                         f"{ref.shape}; they must match.")
    if crps.size == 0:
        raise ValueError("crps_skill: crps and crps_reference are empty.")
    ref_mean = float(np.mean(ref))
    if not ref_mean > 0:
        raise ValueError(f"crps_skill: the reference's mean CRPS is {ref_mean}; it must be "
                         "positive (a perfect reference leaves the skill undefined).")
    return 1.0 - float(np.mean(crps)) / ref_mean


def seasonal_naive(y_train, horizon: int, season_length: int = 1) -> np.ndarray:
    """Seasonal naive point forecast ``y_hat[T + k] = y_train[T + k - m ceil(k / m)]``,
    k = 1..horizon, m = season_length (Hyndman & Athanasopoulos, Forecasting: Principles and
    Practice, 3rd ed., Section 5.2): each step repeats the last observed value of its season.

    Parameters
    ----------
    y_train : array_like of shape (T,)
        The training series, T >= season_length.
    horizon : int
        Number of steps h >= 1.
    season_length : int, default 1
        The seasonal period m (1 gives the naive forecast, the last value repeated).

    Returns
    -------
    ndarray of shape (horizon,)
    """
    h = _positive_int(horizon, "horizon", "seasonal_naive")
    m = _positive_int(season_length, "season_length", "seasonal_naive")
    train = _array(y_train, "y_train", "seasonal_naive")
    if train.ndim != 1 or train.size < m:
        raise ValueError(f"seasonal_naive: y_train has shape {train.shape}; expected (T,) with "
                         f"T >= season_length = {m}.")
    k = np.arange(1, h + 1)
    index = train.size - 1 + k - m * np.ceil(k / m).astype(np.int64)
    return train[index]
