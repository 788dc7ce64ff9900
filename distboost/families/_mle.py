"""Numerical weighted maximum likelihood of a family's marginal (unconditional) law.

Minimises the weighted mean negative log-likelihood over the raw (link) scale with
L-BFGS-B; the gradient is exact, from the family's closed form
(:meth:`Family.raw_derivatives`, without its Fisher information where the family's closed
form is the base chain rule) where it has one, else from torch autograd.  Above
:data:`SUBSAMPLE_ROWS` rows the search starts from the MLE of an evenly spaced subsample of
that many rows, so that the passes over every row are only the few that polish it: the
optimum is the full data's, to the same tolerances.  Used by every family without a
closed-form MLE, and by the censored and truncated variants.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize
import torch

__all__ = ["SUBSAMPLE_ROWS", "numerical_mle"]

#: Rows above which the search starts from the MLE of an evenly spaced subsample of this
#: many rows (each pass over 2,000,000 rows costs tens of milliseconds; an unseeded search
#: takes 30-60 of them).
SUBSAMPLE_ROWS = 50_000
#: L-BFGS-B's bound on the raw scores and its tolerance on the projected gradient.
BOUND = 50.0
GTOL = 1e-10


def numerical_mle(family, y, w: np.ndarray, start: dict[str, float]) -> dict[str, float]:
    """Weighted marginal MLE of ``family`` on targets ``y``.

    Parameters
    ----------
    family : Family
    y : ndarray of shape (n,) or (n, 2)
        Targets in the family's own format (bounds for censored families).
    w : ndarray of shape (n,)
        Non-negative weights summing to one.
    start : dict of str to float
        Natural-scale starting values.

    Returns
    -------
    dict of str to float
        Natural-scale parameters.
    """
    # Writable copies: a read-only array (a pandas copy-on-write view, a broadcast) would make
    # torch warn that it does not support non-writable tensors.
    y = np.array(y, dtype=np.float64, copy=True)
    w = np.array(w, dtype=np.float64, copy=True)
    x0 = np.asarray(family.raw_from_params(start), dtype=np.float64).reshape(-1)
    n = w.shape[0]
    fun = _objective(family, y, w)
    if n > 2 * SUBSAMPLE_ROWS:
        rows = np.linspace(0, n - 1, SUBSAMPLE_ROWS).round().astype(np.intp)
        if w[rows].sum() > 0:
            sub = _objective(family, y[rows], w[rows] / w[rows].sum())
            x_sub = _minimize(family, sub, x0)
            hess = _hessian(sub, x_sub)
            if hess is not None:
                x0 = _polish(fun, x_sub, hess)
    theta = _minimize(family, fun, x0)
    raw = torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1)
    params = family.params_from_raw(raw)
    return {p: float(v[0]) for p, v in params.items()}


def _loss_and_gradient(family):
    """``f(raw Tensor[n, K], y) -> (nll Tensor[n], grad Tensor[n, K])`` from the family's
    closed form, or None (autograd then)."""
    from .base import Family
    from .scores import raw_nll_grad

    if (type(family).raw_derivatives is Family.raw_derivatives
            and family.score_formula is not None):
        # The base closed form is the chain rule of the score formula: its Fisher
        # information (a third of a pass's cost) is not needed here.
        return lambda raw, y: raw_nll_grad(family, family.score_formula, raw, y)

    def own(raw, y):
        out = family.raw_derivatives(raw, y)
        return None if out is None else out[:2]
    return own


def _objective(family, y: np.ndarray, w: np.ndarray):
    """``fun(theta) -> (weighted NLL, its gradient)`` of ``y`` at the raw scores ``theta``
    (remembering the last few points, which L-BFGS and the checks around it ask for
    again)."""
    y_t = torch.from_numpy(y)
    w_t = torch.from_numpy(w)
    n = w_t.shape[0]
    closed = _loss_and_gradient(family)
    seen: dict[bytes, tuple] = {}

    def evaluate(theta: np.ndarray):
        nonlocal closed
        if closed is not None:  # the family's closed-form NLL and gradient
            raw = torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1).expand(n, -1)
            out = closed(raw, y_t)
            if out is None:
                closed = None
                return evaluate(theta)
            per_row, grad = out
            loss = float(torch.dot(per_row, w_t))
            if not np.isfinite(loss):
                return 1e300, np.zeros_like(theta)
            return loss, (w_t @ grad).numpy().astype(np.float64)
        raw = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        loss = (family.nll(raw.expand(n, -1), y_t) * w_t).sum()
        if not torch.isfinite(loss):
            return 1e300, np.zeros_like(theta)
        (grad,) = torch.autograd.grad(loss, raw)
        return float(loss.detach()), grad.numpy().astype(np.float64)

    def fun(theta: np.ndarray):
        key = np.asarray(theta, dtype=np.float64).tobytes()
        if key not in seen:
            if len(seen) >= 4:
                del seen[next(iter(seen))]
            seen[key] = evaluate(np.asarray(theta, dtype=np.float64))
        return seen[key]

    return fun


def _hessian(fun, x: np.ndarray, h: float = 1e-4) -> np.ndarray | None:
    """Central differences of ``fun``'s gradient at ``x``, symmetrised; None unless
    finite and positive definite."""
    k = x.size
    hess = np.empty((k, k))
    for j in range(k):
        e = np.zeros(k)
        e[j] = h
        hess[:, j] = (fun(x + e)[1] - fun(x - e)[1]) / (2.0 * h)
    hess = 0.5 * (hess + hess.T)
    if not np.isfinite(hess).all() or np.linalg.eigvalsh(hess)[0] <= 0:
        return None
    return hess


def _polish(fun, x: np.ndarray, hess: np.ndarray, steps: int = 8) -> np.ndarray:
    """Newton steps on ``fun`` with the fixed Hessian ``hess`` (the subsample's, close to
    the full data's: each step gains about two digits), while the loss falls."""
    f, g = fun(x)
    for _ in range(steps):
        if not np.isfinite(g).all() or np.max(np.abs(g)) <= GTOL:
            break
        x_new = np.clip(x - np.linalg.solve(hess, g), -BOUND, BOUND)
        f_new, g_new = fun(x_new)
        # Near the optimum the loss changes by its rounding error: a step is kept while
        # the gradient shrinks and the loss does not rise beyond that.
        if not (f_new <= f + 1e-13 * max(1.0, abs(f))
                and np.max(np.abs(g_new)) < np.max(np.abs(g))):
            break
        x, f, g = x_new, f_new, g_new
    return x


def _minimize(family, fun, x0: np.ndarray) -> np.ndarray:
    """The raw-scale optimum of ``fun`` from ``x0`` (kept where the search ends higher
    or not finite)."""
    f0 = fun(x0)[0]
    res = scipy.optimize.minimize(
        fun, x0, jac=True, method="L-BFGS-B", bounds=[(-BOUND, BOUND)] * x0.size,
        options={"maxiter": 500, "gtol": GTOL, "ftol": 1e-14},
    )
    if not res.success and res.fun > f0 + 1e-12:  # pragma: no cover - defensive
        warnings.warn(f"Marginal MLE of {family.name!r} did not converge: {res.message}",
                      RuntimeWarning, stacklevel=4)
    return res.x if np.isfinite(res.fun) and res.fun <= f0 else x0
