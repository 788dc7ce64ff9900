"""Proper scores and calibration diagnostics of a :class:`~distboost.Predictive`.

Per-observation scores return arrays of shape (n,); the ``mean_*`` helpers and the
diagnostics take ``sample_weight``.  Lower is better for every score here (CRPS, NLL,
interval score, pinball loss, calibration error, sharpness); coverage is a fraction.
"""

from __future__ import annotations

import numpy as np

from .closed_form import CLOSED_FORMS
from .numerical import crps_numerical

__all__ = [
    "crps", "nll", "pit", "coverage", "interval_score", "pinball", "calibration_error",
    "sharpness", "mean_crps", "mean_nll", "mean_interval_score", "mean_pinball",
]


def _y(dist, y) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 0:
        y = np.full(len(dist), float(y))
    if y.ndim != 1 or y.shape[0] != len(dist):
        raise ValueError(
            f"y has shape {y.shape} but the Predictive holds {len(dist)} distributions; "
            "give one observation per distribution."
        )
    n_bad = int((~np.isfinite(y)).sum())
    if n_bad:
        raise ValueError(f"y has {n_bad} of {y.size} rows that are NaN or infinite.")
    return y


def _level(level: float, name: str = "level") -> float:
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"{name} must lie in (0, 1); got {level}.")
    return level


def _mean(values: np.ndarray, sample_weight) -> float:
    if sample_weight is None:
        return float(np.mean(values, axis=0)) if values.ndim == 1 else np.mean(values, axis=0)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (values.shape[0],):
        raise ValueError(f"sample_weight has shape {w.shape}; expected ({values.shape[0]},).")
    if (w < 0).any() or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValueError("sample_weight must be finite, non-negative and not all zero.")
    return np.average(values, axis=0, weights=w)


def crps(dist, y, method: str = "auto") -> np.ndarray:
    """Continuous ranked probability score per observation, shape (n,).

    Parameters
    ----------
    dist : Predictive
    y : array_like of shape (n,)
    method : {"auto", "closed", "numerical"}
        "auto" uses the family's closed form when it has one (see ``CLOSED_FORMS``;
        Student's t with ``df <= 1`` has an infinite CRPS), else the numerical path.
    """
    y = _y(dist, y)
    name = dist.family.name
    known = name in CLOSED_FORMS and type(dist.family) is type(_registered(name))
    if method == "closed" and not known:
        raise ValueError(f"Family {name!r} has no closed-form CRPS; use method='numerical'.")
    if method not in ("auto", "closed", "numerical"):
        raise ValueError(f"Unknown method {method!r}; use 'auto', 'closed' or 'numerical'.")
    if method != "numerical" and known:
        params = dist.params
        return CLOSED_FORMS[name](y, *(params[p] for p in dist.family.param_names))
    return crps_numerical(dist.family, dist.params, y)


def _registered(name):
    from ..families import get

    return get(name)


def nll(dist, y) -> np.ndarray:
    """Negative log-likelihood (density or mass) per observation, shape (n,)."""
    return -dist.log_prob(_y(dist, y))


def pit(dist, y, random_state=0) -> np.ndarray:
    """Probability integral transform ``F(y)`` per observation, shape (n,).

    For discrete families the randomised PIT ``F(y - 1) + U (F(y) - F(y - 1))`` with
    ``U ~ Uniform(0, 1)`` drawn from ``random_state`` (Czado, Gneiting & Held 2009), which is
    uniform when the forecast is calibrated.
    """
    y = _y(dist, y)
    upper = dist.cdf(y)
    if not dist.family.discrete:
        return upper
    lower = dist.cdf(y - 1.0)
    u = np.random.default_rng(random_state).uniform(size=y.shape[0])
    return lower + u * (upper - lower)


def coverage(dist, y, level: float = 0.9, sample_weight=None) -> float:
    """Share of observations inside the central ``level`` interval (ends included)."""
    y = _y(dist, y)
    lo, hi = dist.interval(_level(level)).T
    return float(_mean(((y >= lo) & (y <= hi)).astype(np.float64), sample_weight))


def interval_score(dist, y, level: float = 0.9) -> np.ndarray:
    """Interval score of the central ``level`` interval per observation (Gneiting & Raftery
    2007, eq. 43): ``(u - l) + (2/alpha)(l - y) 1{y < l} + (2/alpha)(y - u) 1{y > u}``
    with ``alpha = 1 - level``."""
    y = _y(dist, y)
    alpha = 1.0 - _level(level)
    lo, hi = dist.interval(1.0 - alpha).T
    return (hi - lo) + 2.0 / alpha * np.maximum(lo - y, 0.0) + 2.0 / alpha * np.maximum(y - hi, 0.0)


def pinball(dist, y, q) -> np.ndarray:
    """Pinball (quantile) loss ``(1{y < x_q} - q)(x_q - y)`` per observation: shape (n,)
    for a scalar level, (n, m) for m levels (Koenker & Bassett 1978)."""
    y = _y(dist, y)
    q_arr = np.asarray(q, dtype=np.float64)
    for level in np.atleast_1d(q_arr):
        _level(level, "quantile level")
    x = dist.quantile(q_arr)
    yy = y if q_arr.ndim == 0 else y[:, None]
    return ((yy < x).astype(np.float64) - q_arr) * (x - yy)


def calibration_error(dist, y, levels=None, sample_weight=None) -> float:
    """Mean absolute gap between nominal levels and the observed share of ``y`` below the
    predicted quantile of each level (levels 0.05, 0.10, ..., 0.95 by default)."""
    y = _y(dist, y)
    levels = np.arange(0.05, 0.951, 0.05) if levels is None else np.asarray(levels, float)
    for level in levels:
        _level(level)
    below = (y[:, None] <= dist.quantile(levels)).astype(np.float64)
    observed = _mean(below, sample_weight)
    return float(np.mean(np.abs(np.asarray(observed) - levels)))


def sharpness(dist, level: float = 0.9, sample_weight=None) -> float:
    """Mean width of the central ``level`` interval."""
    lo, hi = dist.interval(_level(level)).T
    return float(_mean(hi - lo, sample_weight))


def mean_crps(dist, y, sample_weight=None) -> float:
    """Weighted mean of :func:`crps`."""
    return float(_mean(crps(dist, y), sample_weight))


def mean_nll(dist, y, sample_weight=None) -> float:
    """Weighted mean of :func:`nll`."""
    return float(_mean(nll(dist, y), sample_weight))


def mean_interval_score(dist, y, level: float = 0.9, sample_weight=None) -> float:
    """Weighted mean of :func:`interval_score`."""
    return float(_mean(interval_score(dist, y, level), sample_weight))


def mean_pinball(dist, y, q, sample_weight=None):
    """Weighted mean of :func:`pinball` (a float, or one value per level)."""
    return _mean(pinball(dist, y, q), sample_weight)


