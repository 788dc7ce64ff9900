"""Scores for censored targets (``(n, 2)`` bounds, see :mod:`distboost.censored`).

* :func:`censored_nll`: the training likelihood, ``-log f(y)`` for exact rows and
  ``-log(F(u) - F(l))`` otherwise.
* :func:`survival_crps`: the CRPS generalised to interval-censored observations
  (Avati et al. 2020, "Countdown regression", eq. 3).
* :func:`concordance_index`: Harrell's C (Harrell et al. 1982) between predicted and observed
  times over comparable pairs of right-censored data.
* :func:`d_calibration`: distribution calibration (Haider, Hoehn, Davis & Greiner 2020): the
  survival probabilities at the observed times are uniform when the model is calibrated;
  censored rows spread their mass uniformly over the bins below their survival probability.
"""

from __future__ import annotations

import numpy as np
import scipy.stats as st

from ..predictive import censored_log_likelihood
from .numerical import crps_interval_numerical

__all__ = ["censored_nll", "survival_crps", "concordance_index", "d_calibration"]


def _bounds(dist, y) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != 2 or y.shape[0] != len(dist):
        raise ValueError(
            f"Censored scores need (n, 2) bounds with n = {len(dist)}; got shape {y.shape}."
        )
    return y


def censored_nll(dist, y) -> np.ndarray:
    """Censored negative log-likelihood per row, shape (n,) (``-log f(y)`` for exact rows,
    ``-log(F(u) - F(l))`` otherwise; for a censored family's Predictive also
    ``dist.nll(y)``).  ``dist`` may hold the latent family (e.g. ``weibull``)."""
    y = _bounds(dist, y)
    return -censored_log_likelihood(dist.family, dist.params, y)


def survival_crps(dist, y) -> np.ndarray:
    """Survival CRPS per row (Avati et al. 2020): ``int_{-inf}^{l} F^2 + int_u^{inf} (1-F)^2``.

    Exact rows (``l == u``) get the ordinary CRPS; right-censored rows only the first term.
    """
    y = _bounds(dist, y)
    return crps_interval_numerical(dist.family, dist.params, y[:, 0], y[:, 1])


def concordance_index(dist, y, predicted: str = "median") -> float:
    """Harrell's concordance index of right-censored data.

    A pair ``(i, j)`` is comparable when row ``i`` has an observed event (``l == u``) before
    row ``j``'s time; it is concordant when the predicted time of ``i`` is shorter (ties count
    one half).  Computed in row blocks, vectorised.

    Parameters
    ----------
    dist : Predictive
    y : ndarray of shape (n, 2)
        Bounds from :func:`distboost.censored.right`.
    predicted : {"median", "mean"}
        The predicted time compared across rows.
    """
    y = _bounds(dist, y)
    time, event = y[:, 0], y[:, 0] == y[:, 1]
    pred = dist.median if predicted == "median" else dist.mean
    num = den = 0.0
    for start in range(0, len(time), 2048):
        sl = slice(start, start + 2048)
        comparable = event[sl, None] & (time[sl, None] < time[None, :])
        shorter = pred[sl, None] < pred[None, :]
        tie = pred[sl, None] == pred[None, :]
        num += float((comparable & shorter).sum() + 0.5 * (comparable & tie).sum())
        den += float(comparable.sum())
    if den == 0:
        raise ValueError("No comparable pairs: concordance needs at least one observed event.")
    return num / den


def d_calibration(dist, y, bins: int = 10) -> dict:
    """D-calibration test of survival predictions (Haider et al. 2020).

    Returns
    -------
    dict with ``statistic`` (chi-square), ``pvalue`` (high is calibrated), ``histogram``
    (share of rows per bin of the predicted survival probability, ideally ``1 / bins`` each).
    """
    y = _bounds(dist, y)
    time, event = y[:, 0], y[:, 0] == y[:, 1]
    s = np.clip(dist.sf(time), 0.0, 1.0)
    edges = np.linspace(0.0, 1.0, bins + 1)
    lo, hi = edges[:-1], edges[1:]
    # Events: one unit in the bin holding S(t).
    counts = np.zeros(bins)
    idx = np.clip(np.searchsorted(edges, s[event], side="right") - 1, 0, bins - 1)
    np.add.at(counts, idx, 1.0)
    # Censored rows: uniform over [0, S(c)].
    sc_ = s[~event][:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.clip(np.minimum(hi[None, :], sc_) - lo[None, :], 0.0, None) / sc_
    share = np.where(sc_ > 0, share, np.eye(1, bins, 0))
    counts += share.sum(axis=0)
    n = len(time)
    expected = n / bins
    statistic = float(((counts - expected) ** 2).sum() / expected)
    return {"statistic": statistic, "pvalue": float(st.chi2.sf(statistic, bins - 1)),
            "histogram": counts / n}
