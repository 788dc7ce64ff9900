"""Joint sample paths from per-step marginals: a Gaussian copula over the steps.

The direct strategy forecasts each step's marginal law exactly but models no dependence
between the steps, so independent draws of the marginals make paths whose steps wander
independently (a week of sales that jumps up and down every day).  The dependence is taken
from the forecaster's own errors: the PIT values ``u = F_h(y)`` of a backtest on the end of
the history (the same backtest that chooses the strategy and calibrates the steps) are
turned into normal scores ``z = Phi^{-1}(u)``, and their correlation matrix over the steps,
pooled over series and origins, is the copula's (the Gaussian copula of multivariate
forecasting, Schefzik, Thorarinsdottir & Gneiting 2013's Gaussian copula approach; Wilks
2015).  A path draws ``z ~ N(0, R)`` and takes each step's marginal at ``Phi(z_h)``: the
marginals are the direct model's exactly, the steps move together as the history's errors
did.  Without a backtest, or with too few origins, the steps are independent (``R = I``).
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr, ndtri

from .keyed import seed_of, uniforms

__all__ = ["step_correlation", "copula_paths", "MIN_ORIGINS"]

#: Fewest backtest origins (over all series) behind a correlation matrix.
MIN_ORIGINS = 20


def step_correlation(pit: np.ndarray) -> np.ndarray | None:
    """The copula's correlation over the steps from backtest PIT values (contexts, H).

    Rows with a non-finite PIT are left out; PIT values are kept within
    ``[1e-6, 1 - 1e-6]`` before their normal scores.  The sample correlation is shrunk
    towards the identity, ``(1 - s) R + s I`` with ``s = min(1, H / n)`` for ``n`` origins and
    ``H`` steps (it is singular below ``n = H``; Ledoit & Wolf 2004's idea with a fixed
    intensity).  Returns None with fewer than :data:`MIN_ORIGINS` complete rows, or for one
    step.
    """
    pit = np.asarray(pit, dtype=np.float64)
    if pit.ndim != 2 or pit.shape[1] < 2:
        return None
    pit = pit[np.isfinite(pit).all(axis=1)]
    n, h = pit.shape
    if n < MIN_ORIGINS:
        return None
    z = ndtri(np.clip(pit, 1e-6, 1.0 - 1e-6))
    z = z - z.mean(axis=0)
    sd = np.sqrt((z * z).mean(axis=0))
    z = z / np.where(sd > 0.0, sd, 1.0)
    r = (z.T @ z) / n
    s = min(1.0, h / n)
    r = (1.0 - s) * r + s * np.eye(h)
    np.fill_diagonal(r, 1.0)
    return r


def copula_paths(dist, n_contexts: int, horizon: int, n_paths: int, correlation, rng,
                 keys: np.ndarray | None = None) -> np.ndarray:
    """Paths (C, P, H) whose step ``h`` of context ``c`` is row ``c * H + h`` of ``dist`` (a
    Predictive of ``C * H`` rows, context after context) at the copula's levels.

    ``correlation`` (H, H) or None (independent steps).  With the contexts' ``keys`` (C,),
    the normal scores of context ``c`` depend on ``rng``'s seed and its key only
    (:mod:`~distboost.forecasting.keyed`); without, they are ``rng``'s next draws."""
    C, H, P = n_contexts, horizon, int(n_paths)
    if keys is None:
        z = rng.standard_normal((C, P, H))
    else:
        base = seed_of(rng)
        z = np.stack([ndtri(uniforms(base, keys, P, h, 2)) for h in range(H)], axis=2)
    if correlation is not None:
        lower = np.linalg.cholesky(np.asarray(correlation, dtype=np.float64))
        z = z @ lower.T
    u = ndtr(z)  # (C, P, H)
    levels = u.transpose(0, 2, 1).reshape(C * H, P)  # row c * H + h: that step's P levels
    levels = np.clip(levels, 1e-12, 1.0 - 1e-12)
    x = dist.quantile(levels)  # (C * H, P)
    return x.reshape(C, H, P).transpose(0, 2, 1)
