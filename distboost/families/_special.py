"""Differentiable special functions torch lacks, as custom autograd functions.

* :func:`gammainc_ad`: the regularised lower incomplete gamma ``P(a, x)`` with gradients in
  both arguments (torch's ``gammainc`` has none for ``a``).  ``dP/dx`` is the gamma density;
  ``dP/da`` is a central finite difference of ``P`` in ``a`` (step ``1e-5 * max(a, 1)``), whose
  relative accuracy of about ``1e-8`` is tested against an mpmath-free series reference.
* :func:`stdtr_ad`: the Student-t cdf ``F_df(t)`` (scipy's ``stdtr``) with gradients in ``t``
  (the density) and ``df`` (central finite difference).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import torch

__all__ = ["gammainc_ad", "gammaincc_ad", "stdtr_ad"]


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


class _GammaInc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, x, upper: bool):
        a_b, x_b = torch.broadcast_tensors(a, x)
        fn = sc.gammaincc if upper else sc.gammainc
        out = torch.from_numpy(np.asarray(fn(_np(a_b), np.maximum(_np(x_b), 0.0)), np.float64))
        ctx.save_for_backward(a_b, x_b)
        ctx.upper = upper
        ctx.shapes = (a.shape, x.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        sign = -1.0 if ctx.upper else 1.0
        an, xn = _np(a), np.maximum(_np(x), 0.0)
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in log space.
        with np.errstate(divide="ignore"):
            dens = np.exp((an - 1.0) * np.log(xn) - xn - sc.gammaln(an))
        dens = np.where(xn > 0, dens, 0.0)
        h = 1e-5 * np.maximum(an, 1.0)
        fn = sc.gammaincc if ctx.upper else sc.gammainc
        da = (fn(an + h, xn) - fn(an - h, xn)) / (2.0 * h)
        ga = grad * torch.from_numpy(da)
        gx = grad * torch.from_numpy(sign * dens)
        return (_reduce(ga, ctx.shapes[0]), _reduce(gx, ctx.shapes[1]), None)


class _StdTr(torch.autograd.Function):
    @staticmethod
    def forward(ctx, df, t):
        df_b, t_b = torch.broadcast_tensors(df, t)
        ctx.save_for_backward(df_b, t_b)
        ctx.shapes = (df.shape, t.shape)
        return torch.from_numpy(np.asarray(sc.stdtr(_np(df_b), _np(t_b)), np.float64))

    @staticmethod
    def backward(ctx, grad):
        df, t = ctx.saved_tensors
        dn, tn = _np(df), _np(t)
        logpdf = (sc.gammaln((dn + 1) / 2) - sc.gammaln(dn / 2) - 0.5 * np.log(dn * math.pi)
                  - (dn + 1) / 2 * np.log1p(tn * tn / dn))
        h = 1e-5 * np.maximum(dn, 1.0)
        ddf = (sc.stdtr(dn + h, tn) - sc.stdtr(dn - h, tn)) / (2.0 * h)
        return (_reduce(grad * torch.from_numpy(ddf), ctx.shapes[0]),
                _reduce(grad * torch.from_numpy(np.exp(logpdf)), ctx.shapes[1]))


def _reduce(g: torch.Tensor, shape) -> torch.Tensor:
    """Sum a broadcast gradient back to the input's shape."""
    while g.dim() > len(shape):
        g = g.sum(dim=0)
    for i, s in enumerate(shape):
        if s == 1 and g.shape[i] != 1:
            g = g.sum(dim=i, keepdim=True)
    return g


def gammainc_ad(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Regularised lower incomplete gamma ``P(a, x)``, differentiable in ``a`` and ``x``."""
    return _GammaInc.apply(a, x, False)


def gammaincc_ad(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Regularised upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``, differentiable."""
    return _GammaInc.apply(a, x, True)


def stdtr_ad(df: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Student-t cdf with ``df`` degrees of freedom at ``t``, differentiable in both."""
    return _StdTr.apply(df, t)
