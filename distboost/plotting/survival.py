"""Figures of survival predictions (re-exported by :mod:`distboost.plotting` as ``db.plot``).

* :func:`survival_curves`: ``S(t | x)`` of several rows on one time axis whose range comes
  from the data (the observed times), not from the predicted tails.
* :func:`d_calibration`: the D-calibration histogram of right-censored data (Haider, Hoehn,
  Davis & Greiner 2020), the calibration plot of survival models: flat at ``1 / bins``
  when the predicted survival probabilities at the observed times are uniform.
"""

from __future__ import annotations

import numpy as np

from ._axes import axes

__all__ = ["survival_curves", "d_calibration"]




def _time_grid(dist, rows, times, y, points: int) -> np.ndarray:
    """The times to draw: given, else from 0 (the support's start) to the largest observed
    time, else to the largest predicted 95% quantile of the rows drawn."""
    if times is not None:
        grid = np.sort(np.asarray(times, dtype=np.float64).reshape(-1))
        if grid.size == 0 or not np.isfinite(grid).all():
            raise ValueError("times must be a non-empty array of finite times.")
        return grid
    low = max(float(dist.family.support.low), 0.0)
    if y is not None:
        obs = np.asarray(y, dtype=np.float64)
        obs = obs[np.isfinite(obs)]
        if obs.size == 0:
            raise ValueError("y holds no finite time to take the time axis from.")
        high = float(obs.max())
    else:
        high = float(np.max(dist[rows].quantile(0.95)))
    return np.linspace(low, high, points)


def survival_curves(dist, rows=(0, 1, 2), times=None, y=None, ax=None, points: int = 200):
    """Survival curves ``S(t) = P(T > t)`` of several rows.

    Parameters
    ----------
    dist : Predictive of length n
        A censored family's predictive distributions (the latent time) or any family with
        a support starting at 0.
    rows : sequence of int, default=(0, 1, 2)
        Positions of the rows to draw.
    times : array_like of shape (m,), optional
        The times to evaluate ``S`` at.  Default: ``points`` times from 0 to the largest
        finite observed time of ``y``, else to the largest predicted 95% quantile of the
        rows drawn.
    y : array_like of shape (n,) or (n, 2), optional
        Observed times (or censored bounds) of the data, for the time axis.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
        One line per row, labelled by the Predictive's ``index`` (else ``row <i>``).
    """
    rows = [int(r) for r in np.atleast_1d(rows)]
    n = len(dist)
    bad = [r for r in rows if not -n <= r < n]
    if bad:
        raise ValueError(f"rows {bad} are outside the {n} rows of the Predictive.")
    grid = _time_grid(dist, rows, times, y, points)
    surv = dist[rows].sf(np.broadcast_to(grid, (len(rows), grid.size)))  # (rows, m)
    ax = axes(ax)
    for k, (r, s) in enumerate(zip(rows, surv, strict=True)):
        label = f"row {dist.index[r]}" if dist.index is not None else f"row {r}"
        ax.plot(grid, s, color=f"C{k % 10}", label=label)
    ax.set_xlim(grid[0], grid[-1])
    ax.set_ylim(0.0, 1.02)
    ax.set_xlabel(str(getattr(y, "name", None) or "time"))
    ax.set_ylabel("survival probability S(t)")
    ax.set_title(f"Predicted survival curves ({dist.family.name})")
    ax.legend(loc="best", fontsize="small")
    return ax


def d_calibration(dist, y, bins: int = 10, ax=None):
    """D-calibration histogram of right-censored data (Haider et al. 2020).

    Bar ``j`` is the share of rows whose predicted survival probability at their observed
    time, ``S(t_i)``, falls in ``[(j - 1) / bins, j / bins)``; a censored row spreads its
    unit uniformly over the bins below ``S(c_i)``
    (:func:`distboost.metrics.d_calibration`).  Calibrated predictions give ``1 / bins``
    in every bin (the dashed line); the title gives the chi-square test's p-value.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n, 2)
        Censored bounds (``db.censored.right(time, event)``).
    bins : int
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes

    References
    ----------
    Haider, H., Hoehn, B., Davis, S. & Greiner, R. (2020). Effective ways to build and
    evaluate individual survival distributions. *Journal of Machine Learning Research*
    21(85), 1-63.
    """
    from ..metrics import d_calibration as _d_calibration

    res = _d_calibration(dist, y, bins=bins)
    ax = axes(ax)
    edges = np.linspace(0.0, 1.0, bins + 1)
    ax.bar(edges[:-1], res["histogram"], width=1.0 / bins, align="edge", color="C0",
           alpha=0.8, edgecolor="white", zorder=2)
    ax.axhline(1.0 / bins, color="k", lw=1, ls="--", label="calibrated", zorder=3)
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("predicted survival probability at the observed time, S(t)")
    ax.set_ylabel("share of rows")
    ax.set_title(f"D-calibration ({len(dist)} rows; chi-square p = {res['pvalue']:.3g})")
    ax.legend(loc="best", fontsize="small")
    return ax
