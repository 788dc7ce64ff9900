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

import contextlib
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


def numerical_mle(family, y, w: np.ndarray, start) -> dict[str, float]:
    """Weighted marginal MLE of ``family`` on targets ``y``.

    Parameters
    ----------
    family : Family
    y : ndarray of shape (n,) or (n, 2)
        Targets in the family's own format (bounds for censored families).
    w : ndarray of shape (n,)
        Non-negative weights summing to one.
    start : dict of str to float, or callable
        Natural-scale starting values, or ``start(y, w) -> dict`` computing them (on the
        subsample, when the search starts from one).

    Returns
    -------
    dict of str to float
        Natural-scale parameters.
    """
    # Writable copies: a read-only array (a pandas copy-on-write view, a broadcast) would make
    # torch warn that it does not support non-writable tensors.
    y = np.array(y, dtype=np.float64, copy=True)
    w = np.array(w, dtype=np.float64, copy=True)
    n = w.shape[0]
    rows = (np.linspace(0, n - 1, SUBSAMPLE_ROWS).round().astype(np.intp)
            if n > 2 * SUBSAMPLE_ROWS else None)
    if rows is not None and not w[rows].sum() > 0:
        rows = None

    def raw_start(yy, ww):
        values = start(yy, ww) if callable(start) else start
        return np.asarray(family.raw_from_params(values), dtype=np.float64).reshape(-1)

    fun = _objective(family, y, w)
    x0 = None
    if rows is not None:
        y_sub, w_sub = y[rows], w[rows] / w[rows].sum()
        sub = _objective(family, y_sub, w_sub)
        with _one_torch_thread():  # small passes: waking a pool costs more than it saves
            x_sub = _minimize(family, sub, raw_start(y_sub, w_sub))
            hess = _hessian(sub, x_sub)
        if hess is not None and np.isfinite(fun(x_sub)[0]):
            x0 = _polish(fun, x_sub, hess)
    if x0 is None:  # no subsample, or its optimum is no start for every row
        x0 = raw_start(y, w)
    theta = _minimize(family, fun, x0)
    raw = torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1)
    params = family.params_from_raw(raw)
    return {p: float(v[0]) for p, v in params.items()}


@contextlib.contextmanager
def _one_torch_thread():
    """Run the block on one torch thread (the count is the process's: set back after)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _loss_and_gradient(family):
    """``f(raw Tensor[1, K], y Tensor[n]) -> (nll, [d nll / d raw_k])`` from the family's
    closed form, each a Tensor of shape (n,) or (1,) (broadcast over the rows), or None
    (autograd then)."""
    from .likelihood import link_value_and_derivative

    # (The base class by name: this module is imported by .base, not the other way round.)
    if (type(family).raw_derivatives.__qualname__ == "Family.raw_derivatives"
            and family.score_formula is not None):
        # The base closed form is the chain rule of the score formula.  At one row of
        # parameters broadcast over the targets, the terms of the parameters alone (the
        # links, lgamma of a shape, ...) are computed once, and the Fisher information (a
        # third of a round's cost) not at all.
        broadcast = True  # until a formula asks for equal shapes (binary cross-entropy)

        def chain(raw, y):
            nonlocal broadcast
            values, derivs = [], []
            for k, p in enumerate(family.param_names):
                out = link_value_and_derivative(family.links[p], raw[:, k])
                if out is None:
                    return None
                values.append(out[0])
                derivs.append(out[1])
            if broadcast:
                try:
                    nll, scores = family.score_formula(y, *values)
                except (RuntimeError, ValueError):
                    broadcast = False
            if not broadcast:
                nll, scores = family.score_formula(y, *(v.expand(y.shape) for v in values))
            return nll, [s if d is None else s * d for s, d in zip(scores, derivs,
                                                                   strict=True)]
        return chain

    def own(raw, y):
        out = family.raw_derivatives(raw.expand(y.shape[0], -1), y)
        return None if out is None else (out[0], list(out[1].T))
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
            out = closed(torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1), y_t)
            if out is None:
                closed = None
                return evaluate(theta)
            per_row, grads = out
            loss = float(torch.dot(per_row.expand(n), w_t))
            if not np.isfinite(loss):
                return 1e300, np.zeros_like(theta)
            return loss, np.array([float(torch.dot(g.expand(n), w_t)) for g in grads])
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
