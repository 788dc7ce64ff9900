"""Time-dependent scores of right-censored survival predictions, weighted by the inverse
probability of censoring (IPCW).

* :func:`brier_score` and :func:`integrated_brier_score`: the Brier score of the predicted
  survival probability ``S(t | x)`` at fixed times, each observation weighted by the
  Kaplan-Meier estimate ``G`` of the censoring distribution (Graf, Schmoor, Sauerbrei &
  Schumacher 1999); the integrated score is its trapezoidal mean over the times.
* :func:`cumulative_dynamic_auc`: the cumulative/dynamic AUC at time ``t`` (Uno et al. 2007;
  Hung & Chiang 2010; Lambert & Chevret 2016): how well the predicted risk ``F(t | x)``
  separates the rows with an event by ``t`` (cases, IPCW-weighted) from the rows still at
  risk after ``t`` (controls), and its mean weighted by the Kaplan-Meier estimate of the
  event distribution.

Both follow scikit-survival's ``sksurv.metrics`` conventions (same estimators, ties and
weights), so they agree with it to rounding on the same inputs (``tests/metrics``).  The
censoring distribution is estimated from ``y_train`` when given (scikit-survival's
``survival_train``), else from the scored rows themselves.
"""

from __future__ import annotations

import numpy as np
from scipy.integrate import trapezoid  # numpy's np.trapezoid is numpy >= 2 only

__all__ = ["brier_score", "integrated_brier_score", "cumulative_dynamic_auc"]


def _right_censored(y, n: int | None = None, name: str = "y") -> tuple[np.ndarray, np.ndarray]:
    """``(time, event)`` of right-censored ``(n, 2)`` bounds ``[t, t]`` / ``[t, inf]``."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 2 or y.shape[1] != 2 or (n is not None and y.shape[0] != n):
        want = "(n, 2)" if n is None else f"({n}, 2)"
        raise ValueError(f"{name} must be right-censored bounds of shape {want} "
                         f"(db.censored.right(time, event)); got shape {y.shape}.")
    time, upper = y[:, 0], y[:, 1]
    event = upper == time
    bad = ~(np.isfinite(time) & (event | (upper == np.inf)))
    if bad.any():
        raise ValueError(f"{name} has {int(bad.sum())} of {len(y)} rows that are not exact or "
                         "right-censored ([t, t] or [t, inf] with a finite t); these scores "
                         "need right-censored data.")
    return time, event


def _kaplan_meier(time, event, reverse: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Kaplan-Meier estimate at the unique times: of the event times, or with
    ``reverse`` of the censoring times (events at a tied time leave the risk set first,
    as in scikit-survival's ``kaplan_meier_estimator(reverse=True)``).

    Returns
    -------
    times : ndarray of shape (u,)
    prob : ndarray of shape (u,)
        ``P(T > t)`` (or ``P(C > t)``) just after each time.
    """
    uniq, inv = np.unique(time, return_inverse=True)
    d = np.bincount(inv, weights=event.astype(np.float64), minlength=uniq.size)
    c = np.bincount(inv, weights=(~event).astype(np.float64), minlength=uniq.size)
    at_risk = np.cumsum(np.bincount(inv, minlength=uniq.size)[::-1])[::-1].astype(np.float64)
    if reverse:
        at_risk, d = at_risk - d, c
    ratio = np.divide(d, at_risk, out=np.zeros(uniq.size), where=d != 0)
    return uniq, np.cumprod(1.0 - ratio)


def _step(times, prob, t) -> np.ndarray:
    """The right-continuous step function ``prob`` of ``times`` at ``t`` (1 before the
    first time, 0 after the last when the estimate reached 0)."""
    idx = np.searchsorted(times, t, side="right") - 1
    out = np.where(idx >= 0, prob[np.clip(idx, 0, None)], 1.0)
    return np.where(t > times[-1], np.where(prob[-1] > 0, prob[-1], 0.0), out)


def _times(times, time) -> np.ndarray:
    """Sorted unique evaluation times inside the follow-up ``[min time, max time)``."""
    times = np.unique(np.asarray(times, dtype=np.float64).reshape(-1))
    if times.size == 0 or not np.isfinite(times).all():
        raise ValueError("times must be a non-empty array of finite times.")
    if times.min() < time.min() or times.max() >= time.max():
        raise ValueError(f"times must lie within the follow-up of y, [{time.min():g}, "
                         f"{time.max():g}); got [{times.min():g}, {times.max():g}].")
    return times


def _censoring(y_train, time, event):
    if y_train is None:
        return _kaplan_meier(time, event, reverse=True)
    t_tr, e_tr = _right_censored(y_train, name="y_train")
    return _kaplan_meier(t_tr, e_tr, reverse=True)


def brier_score(dist, y, times, y_train=None) -> tuple[np.ndarray, np.ndarray]:
    """IPCW Brier score of the predicted survival probabilities at each of ``times``.

    ``BS(t) = mean_i [ S_i(t)^2 1(t_i <= t, event_i) / G(t_i) + (1 - S_i(t))^2 1(t_i > t)
    / G(t) ]`` with ``G`` the Kaplan-Meier estimate of the censoring survival function
    (Graf et al. 1999, eq. 6); rows censored before ``t`` weigh nothing.

    Parameters
    ----------
    dist : Predictive of length n
        Predicted (latent) survival times; ``S_i(t) = dist.sf(t)``.
    y : array_like of shape (n, 2)
        Right-censored bounds (``db.censored.right(time, event)``).
    times : array_like of shape (m,)
        Evaluation times inside the follow-up ``[min t_i, max t_i)`` (sorted, duplicates
        dropped).
    y_train : array_like of shape (n_train, 2), optional
        Right-censored bounds to estimate ``G`` from (the training rows); default ``y``.

    Returns
    -------
    times : ndarray of shape (m,)
    scores : ndarray of shape (m,)

    References
    ----------
    Graf, E., Schmoor, C., Sauerbrei, W. & Schumacher, M. (1999). Assessment and comparison
    of prognostic classification schemes for survival data. *Statistics in Medicine*
    18(17-18), 2529-2545.
    """
    time, event = _right_censored(y, len(dist))
    times = _times(times, time)
    g_times, g_prob = _censoring(y_train, time, event)
    g_t = _step(g_times, g_prob, times)  # (m,)
    g_y = _step(g_times, g_prob, time)  # (n,)
    with np.errstate(divide="ignore"):
        w_t = np.where(g_t > 0, 1.0 / g_t, 0.0)
        w_y = np.where(g_y > 0, 1.0 / g_y, 0.0)
    surv = dist.sf(np.broadcast_to(times, (len(dist), times.size)))  # (n, m)
    case = (time[:, None] <= times[None, :]) & event[:, None]
    control = time[:, None] > times[None, :]
    per_row = surv**2 * case * w_y[:, None] + (1.0 - surv) ** 2 * control * w_t[None, :]
    return times, per_row.mean(axis=0)


def integrated_brier_score(dist, y, times, y_train=None) -> float:
    """Integrated IPCW Brier score: the trapezoidal mean of :func:`brier_score` over
    ``times``, ``int BS(t) dt / (t_m - t_1)`` (Graf et al. 1999, eq. 8).  Lower is better;
    0.25 is the score of ``S = 0.5`` everywhere.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n, 2)
        Right-censored bounds.
    times : array_like of shape (m,), m >= 2
        Evaluation times inside the follow-up; a fine grid (e.g. 100 times between the
        10 % and 90 % quantiles of the observed times) approximates the integral.
    y_train : array_like of shape (n_train, 2), optional
        Rows to estimate the censoring distribution from; default ``y``.

    Returns
    -------
    float

    References
    ----------
    Graf, E., Schmoor, C., Sauerbrei, W. & Schumacher, M. (1999). *Statistics in Medicine*
    18(17-18), 2529-2545.
    """
    times, scores = brier_score(dist, y, times, y_train)
    if times.size < 2:
        raise ValueError("integrated_brier_score needs at least two distinct times.")
    return float(trapezoid(scores, times) / (times[-1] - times[0]))


def cumulative_dynamic_auc(dist, y, times, y_train=None,
                           tied_tol: float = 1e-8) -> tuple[np.ndarray, float]:
    """Cumulative/dynamic AUC of the predicted risk ``F_i(t) = 1 - S_i(t)`` at each time.

    At time ``t`` the cases are the rows with an event by ``t``, weighted by ``1 / G(t_i)``
    (IPCW), the controls the rows still at risk after ``t``; ``AUC(t)`` is the weighted
    share of case-control pairs whose case has the higher predicted risk (Uno et al. 2007,
    Hung & Chiang 2010).  Risks within ``tied_tol`` are tied (half a pair).

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n, 2)
        Right-censored bounds.
    times : array_like of shape (m,)
        Times inside the follow-up ``[min t_i, max t_i)``.
    y_train : array_like of shape (n_train, 2), optional
        Rows to estimate the censoring distribution from; default ``y``.
    tied_tol : float

    Returns
    -------
    auc : ndarray of shape (m,)
    mean_auc : float
        ``sum_j AUC(t_j) (S(t_{j-1}) - S(t_j)) / (1 - S(t_m))`` with ``S`` the Kaplan-Meier
        estimate of the scored rows' event distribution (Lambert & Chevret 2016).

    References
    ----------
    Uno, H., Cai, T., Tian, L. & Wei, L. J. (2007). Evaluating prediction rules for t-year
    survivors with censored regression models. *JASA* 102(478), 527-537.
    Hung, H. & Chiang, C. T. (2010). Estimation methods for time-dependent AUC models with
    survival data. *Canadian Journal of Statistics* 38(1), 8-26.
    Lambert, J. & Chevret, S. (2016). Summary measure of discrimination in survival models
    based on cumulative/dynamic time-dependent ROC curves. *Statistical Methods in Medical
    Research* 25(5), 2088-2102.
    """
    time, event = _right_censored(y, len(dist))
    times = _times(times, time)
    g_times, g_prob = _censoring(y_train, time, event)
    g_event = _step(g_times, g_prob, time[event])
    if (g_event == 0).any():
        raise ValueError("The censoring survival function is 0 at an event time: the IPCW "
                         "weights are infinite; give y_train with a longer follow-up.")
    ipcw = np.zeros(time.size)
    ipcw[event] = 1.0 / g_event
    risk = dist.cdf(np.broadcast_to(times, (len(dist), times.size)))  # (n, m)
    order = np.argsort(-risk, axis=0)
    risk = np.take_along_axis(risk, order, axis=0)
    t_sorted, e_sorted, w_sorted = time[order], event[order], ipcw[order]
    case = (t_sorted <= times[None, :]) & e_sorted
    control = t_sorted > times[None, :]
    tp = np.cumsum(case * w_sorted, axis=0)
    fp = np.cumsum(control, axis=0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        tp, fp = tp / tp[-1], fp / fp[-1]
    # keep the last row of every group of tied risks (one threshold per distinct risk)
    gap = np.abs(np.diff(np.concatenate([np.full((1, times.size), np.inf), risk]), axis=0))
    keep = np.ones_like(gap, dtype=bool)
    keep[:-1] = gap[1:] > tied_tol
    auc = np.array([trapezoid(np.r_[0.0, tp[keep[:, j], j]], np.r_[0.0, fp[keep[:, j], j]])
                    for j in range(times.size)])
    if times.size == 1:
        return auc, float(auc[0])
    km_times, km_prob = _kaplan_meier(time, event)
    s = _step(km_times, km_prob, times)
    weights = -np.diff(np.r_[1.0, s])
    return auc, float((auc * weights).sum() / (1.0 - s[-1]))
