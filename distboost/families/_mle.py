"""Numerical weighted maximum likelihood of a family's marginal (unconditional) law.

Minimises the weighted mean negative log-likelihood over the raw (link) scale with
L-BFGS-B; the gradient is exact, from the family's closed form
(:meth:`Family.raw_derivatives`) where it has one, else from torch autograd.  Used by every
family without a closed-form MLE, and by the censored and truncated variants.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.optimize
import torch

__all__ = ["numerical_mle"]


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
    y_t = torch.from_numpy(np.array(y, dtype=np.float64, copy=True))
    w_t = torch.from_numpy(np.array(w, dtype=np.float64, copy=True))
    n = w_t.shape[0]
    x0 = np.asarray(family.raw_from_params(start), dtype=np.float64).reshape(-1)

    probe = torch.as_tensor(x0, dtype=torch.float64).reshape(1, -1)
    closed = family.raw_derivatives(probe, y_t[:1]) is not None

    def fun(theta: np.ndarray):
        if closed:  # the family's closed-form NLL and gradient (Family.raw_derivatives)
            raw = torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1).expand(n, -1)
            per_row, grad, _ = family.raw_derivatives(raw, y_t)
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

    res = scipy.optimize.minimize(
        fun, x0, jac=True, method="L-BFGS-B", bounds=[(-50.0, 50.0)] * x0.size,
        options={"maxiter": 500, "gtol": 1e-10, "ftol": 1e-14},
    )
    theta = res.x if np.isfinite(res.fun) and res.fun <= fun(x0)[0] else x0
    if not res.success and res.fun > fun(x0)[0] + 1e-12:  # pragma: no cover - defensive
        warnings.warn(f"Marginal MLE of {family.name!r} did not converge: {res.message}",
                      RuntimeWarning, stacklevel=3)
    raw = torch.as_tensor(theta, dtype=torch.float64).reshape(1, -1)
    params = family.params_from_raw(raw)
    return {p: float(v[0]) for p, v in params.items()}
