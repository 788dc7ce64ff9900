"""Proper scores and calibration diagnostics of a :class:`~distboost.Predictive`.

Per-observation scores return arrays of shape (n,); the ``mean_*`` helpers and the
diagnostics take ``sample_weight``.  Lower is better for every score here (CRPS, NLL,
interval score, pinball loss, calibration error, sharpness); coverage is a fraction.
"""

from __future__ import annotations

import numpy as np

from ..predictive import SURVIVAL_SCORES, bounds_of, exact_observations  # noqa: F401

__all__ = [
    "crps", "nll", "pit", "pit_cdf", "coverage", "interval_score", "pinball", "calibration_error",
    "sharpness", "mean_crps", "mean_nll", "mean_interval_score", "mean_pinball",
]


def _y(dist, y, what: str = "This score") -> np.ndarray:
    """``y`` as a float64 array of shape (n,), one exact observation per distribution
    (:func:`distboost.predictive.exact_observations`; ``what`` names the score in errors)."""
    return exact_observations(len(dist), y, what)


def multivariate_observations(n: int, d: int, y, what: str = "This score",
                              parts=None) -> np.ndarray:
    """``y`` as a float64 array of shape (n, d), one observed d-vector per distribution of
    a multivariate Predictive (``what`` names the score).  A DataFrame's columns must be
    ``parts`` in order when given (the target's columns in fit, ``family.target_names``)."""
    columns = getattr(y, "columns", None)
    if parts and columns is not None and [str(c) for c in columns] != [str(p) for p in parts]:
        raise ValueError(
            f"{what}: y has the columns {[str(c) for c in columns]}, but the Predictive's parts "
            f"are {[str(p) for p in parts]} (the target's columns in fit); pass y[{list(parts)}]"
            " so that every column is scored against its own part.")
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (n, d):
        raise ValueError(
            f"{what}: y has shape {y.shape}; expected ({n}, {d}), one observed {d}-vector per "
            f"row of the multivariate Predictive ({n} rows of dimension {d}).")
    n_bad = int((~np.isfinite(y)).any(axis=1).sum())
    if n_bad:
        raise ValueError(f"{what}: y has {n_bad} of {n} rows with NaN or infinite values.")
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
        Exact observations (censored bounds: :func:`survival_crps`).
    method : {"auto", "closed", "numerical"}
        "auto" uses the family's closed form when it has one (``family.closed_form_crps``;
        Student's t with ``df <= 1`` has an infinite CRPS), else the numerical path.
    """
    return dist.crps(y, method=method)


def nll(dist, y) -> np.ndarray:
    """Negative log-likelihood (density or mass) per observation, shape (n,).

    For a multivariate Predictive (``family.multivariate``, e.g. ``multivariate_normal``,
    ``dirichlet``) ``y`` has shape (n, d), one observed vector per row, and the score is
    the negative joint log density.  For a censored family's Predictive, ``y`` may be the
    (n, 2) bounds of :mod:`distboost.censored` (the censored NLL, as :func:`censored_nll`)."""
    if bounds_of(dist.family, len(dist), y) is not None:
        return dist.nll(y)
    if getattr(dist.family, "multivariate", False):
        return -dist.log_prob(multivariate_observations(
            len(dist), dist.dim, y, "nll", getattr(dist.family, "target_names", None)))
    return -dist.log_prob(_y(dist, y, "nll"))


def _pit_bounds(dist, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(P(Y < y), P(Y <= y))`` per row: equal for a continuous family; for a count family
    ``(F(ceil(y) - 1), F(y))``, the ends of the PIT interval of Czado, Gneiting & Held
    (2009)."""
    upper = dist.cdf(y)
    if not dist.family.discrete:
        return upper, upper
    return dist.cdf(np.ceil(y) - 1.0), upper


def pit(dist, y, random_state=0) -> np.ndarray:
    """Probability integral transform ``F(y)`` per observation, shape (n,).

    For discrete families the randomised PIT ``F(y - 1) + V (F(y) - F(y - 1))`` with
    ``V ~ Uniform(0, 1)`` drawn from ``random_state`` (Czado, Gneiting & Held 2009, Biometrics
    65, Section 2.1), which is exactly uniform when the forecast is calibrated (the plain
    ``F(y)`` is not: it piles up near 1).  The default ``random_state=0`` makes repeated calls
    give the same values; :func:`pit_cdf` is the deterministic, non-randomised summary that
    :func:`calibration_error` and the plots use.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n,)
        Exact observations.
    random_state : None, int or numpy Generator
        Source of ``V`` (discrete families only).

    Returns
    -------
    ndarray of shape (n,), values in [0, 1]
    """
    return dist.pit(y, random_state=random_state)


def pit_cdf(dist, y, u=None, sample_weight=None) -> np.ndarray:
    """Mean cdf of the PIT at levels ``u``: the share of PIT values at or below each level.

    For a continuous family this is the (weighted) share of rows with ``F(y_i) <= u``, i.e.
    of observations at or below their predicted ``u``-quantile.  For a discrete family it is
    the non-randomised PIT of Czado, Gneiting & Held (2009, Biometrics 65, Section 2.1):
    row ``i`` contributes ``clip((u - F(y_i - 1)) / (F(y_i) - F(y_i - 1)), 0, 1)``, the
    probability that its randomised PIT (:func:`pit`) is at most ``u``, so the result is the
    expectation of the randomised version, deterministic, and equal to ``u`` in expectation
    for a calibrated forecast of either kind.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n,)
        Exact observations.
    u : array_like of shape (m,), optional
        Levels in [0, 1]; 0.05, 0.10, ..., 0.95 by default.
    sample_weight : array_like of shape (n,), optional

    Returns
    -------
    ndarray of shape (m,)
    """
    y = _y(dist, y, "pit_cdf")
    u = np.arange(0.05, 0.951, 0.05) if u is None else np.atleast_1d(np.asarray(u, float))
    if u.ndim != 1 or not ((u >= 0) & (u <= 1)).all():
        raise ValueError(f"PIT levels u must be a 1-D sequence in [0, 1]; got {u.tolist()}.")
    lower, upper = _pit_bounds(dist, y)
    width = (upper - lower)[:, None]
    step = (u[None, :] >= upper[:, None]).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = np.clip((u[None, :] - lower[:, None]) / width, 0.0, 1.0)
    return np.atleast_1d(_mean(np.where(width > 0, ramp, step), sample_weight))


def coverage(dist, y, level: float = 0.9, sample_weight=None) -> float:
    """Share of observations inside the central ``level`` interval (ends included)."""
    y = _y(dist, y, "coverage")
    lo, hi = dist.interval(_level(level)).T
    return float(_mean(((y >= lo) & (y <= hi)).astype(np.float64), sample_weight))


def interval_score(dist, y, level: float = 0.9) -> np.ndarray:
    """Interval score of the central ``level`` interval per observation (Gneiting & Raftery
    2007, eq. 43): ``(u - l) + (2/alpha)(l - y) 1{y < l} + (2/alpha)(y - u) 1{y > u}``
    with ``alpha = 1 - level``."""
    y = _y(dist, y, "interval_score")
    alpha = 1.0 - _level(level)
    lo, hi = dist.interval(1.0 - alpha).T
    return (hi - lo) + 2.0 / alpha * np.maximum(lo - y, 0.0) + 2.0 / alpha * np.maximum(y - hi, 0.0)


def pinball(dist, y, q) -> np.ndarray:
    """Pinball (quantile) loss ``(1{y < x_q} - q)(x_q - y)`` per observation: shape (n,)
    for a scalar level, (n, m) for m levels (Koenker & Bassett 1978)."""
    y = _y(dist, y, "pinball")
    q_arr = np.asarray(q, dtype=np.float64)
    for level in np.atleast_1d(q_arr):
        _level(level, "quantile level")
    x = dist.quantile(q_arr)
    yy = y if q_arr.ndim == 0 else y[:, None]
    return ((yy < x).astype(np.float64) - q_arr) * (x - yy)


def calibration_error(dist, y, levels=None, sample_weight=None) -> float:
    """Mean absolute gap between nominal levels and the observed share of PIT values at or
    below them (levels 0.05, 0.10, ..., 0.95 by default): ``mean_q |pit_cdf(q) - q|``.

    For a continuous family the observed share is that of ``y`` at or below its predicted
    ``q``-quantile.  For a discrete family it is the non-randomised PIT of Czado, Gneiting &
    Held (2009) (see :func:`pit_cdf`): the share of ``y`` at or below the ``q``-quantile
    would be biased upwards (``P(Y <= F^{-1}(q)) >= q`` for counts, so even the true model
    of a Poisson or Bernoulli target would score far from 0).  A calibrated forecast scores
    about ``0.33 / sqrt(n)`` (continuous) or less (discrete) on the default levels.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n,)
        Exact observations.
    levels : array_like of shape (m,), optional
        Nominal levels in (0, 1).
    sample_weight : array_like of shape (n,), optional

    Returns
    -------
    float
    """
    y = _y(dist, y, "calibration_error")
    levels = np.arange(0.05, 0.951, 0.05) if levels is None else np.asarray(levels, float)
    for level in np.atleast_1d(levels):
        _level(level)
    observed = pit_cdf(dist, y, np.atleast_1d(levels), sample_weight)
    return float(np.mean(np.abs(observed - np.atleast_1d(levels))))


def sharpness(dist, level: float = 0.9, sample_weight=None) -> float:
    """Mean width of the central ``level`` interval."""
    lo, hi = dist.interval(_level(level)).T
    return float(_mean(hi - lo, sample_weight))


def mean_crps(dist, y, sample_weight=None) -> float:
    """Weighted mean of :func:`crps`."""
    return float(_mean(crps(dist, y), sample_weight))


def mean_nll(dist, y, sample_weight=None) -> float:
    """Weighted mean of :func:`nll` (``y`` of shape (n, d) for a multivariate Predictive)."""
    return float(_mean(nll(dist, y), sample_weight))


def mean_interval_score(dist, y, level: float = 0.9, sample_weight=None) -> float:
    """Weighted mean of :func:`interval_score`."""
    return float(_mean(interval_score(dist, y, level), sample_weight))


def mean_pinball(dist, y, q, sample_weight=None):
    """Weighted mean of :func:`pinball` (a float, or one value per level)."""
    return _mean(pinball(dist, y, q), sample_weight)


