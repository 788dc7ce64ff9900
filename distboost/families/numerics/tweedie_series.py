"""The Tweedie density's series ``W(y, phi, p)`` and its derivatives in ``phi`` and ``p``.

``log W = log sum_{j >= 1} exp(t_j)`` with ``t_j = j log z - lgamma(j + 1) - lgamma(j a)``,
``a = (2 - p) / (p - 1)``, ``log z = -alpha log y + alpha log(p - 1) - (1 - alpha) log phi -
log(2 - p)``, ``alpha = (2 - p) / (1 - p) = -a`` (Dunn & Smyth 2005, eq. 4), summed over a
window of ``j`` around the largest term (:mod:`distboost.families.tweedie`).

Its derivatives are moments of ``j`` under the weights ``w_j = exp(t_j - log W)``: with
``B_j = j psi(j a)`` and ``C_j = j^2 psi'(j a)``, ``d t_j / d phi = j c_phi`` and ``d t_j / d p
= j L_p + alpha' B_j`` (``c_phi``, ``L_p``, ``alpha'`` the derivatives of ``log z`` and
``alpha``, below), so

    d log W = E_w[d t],    d^2 log W = E_w[d^2 t] + Cov_w(d t, d t)

(the gradient and Hessian of a log-sum-exp).  :func:`log_w` computes them in the same pass
over the window as the value, and hands them to autograd through a custom function: a Newton
step's Hessian (autograd of the gradient) then costs two more special functions per term
instead of autograd's second pass through the whole series graph.  Third derivatives are
refused (``once_differentiable``).  Tested against autograd of the plain series
(``tests/families/test_tweedie.py``).
"""

from __future__ import annotations

import math

import torch
from torch.autograd.function import once_differentiable

__all__ = ["CHUNK", "log_w"]

#: Largest number of (row, term) pairs evaluated at once by the series: the chunk's arrays
#: stay in cache (a Newton round's derivatives at 200,000 rows: 507 ms with 2,000,000 pairs,
#: 434 ms with 100,000; at 20,000 rows 51 -> 40 ms).
CHUNK = 100_000
#: Half-width of the series' window: ``_SDS`` standard deviations of ``j`` plus ``_MARGIN``
#: terms (:mod:`distboost.families.tweedie`).
_SDS, _MARGIN = 8.0, 6.0
#: Most terms on each side of the largest one: a wider window is summed at a stride of
#: ``ceil(half-width / MAX_HALF)`` terms, each standing for the stride's terms (the
#: trapezoid rule of a sum whose terms vary on the scale of the window's standard
#: deviation, at least 64 strides; its error is far below float64's).  Without it a tiny
#: dispersion, as a line search or L-BFGS tries, made windows of 10^8 terms per row (a
#: 30-row fit asked for 7.7 GB).
MAX_HALF = 512


def log_w(y: torch.Tensor, phi: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    """``log W(y, phi, p)`` for ``y > 0``, shape of the broadcast inputs (1-D), differentiable
    twice in ``phi`` and ``p`` (and once in ``y``, by autograd of the plain series, when
    ``y`` requires a gradient).

    Rows are taken in groups of similar window widths (within 25 %), so that a few rows far
    in the tail do not widen every row's window."""
    y, phi, p = torch.broadcast_tensors(y, phi, p)
    if y.requires_grad:
        return _series(y, phi, p, moments=False)[0]
    if torch.is_grad_enabled() and (phi.requires_grad or p.requires_grad):
        return _LogW.apply(phi, p, y)
    with torch.no_grad():
        return _series(y, phi, p, moments=False)[0]


class _LogW(torch.autograd.Function):
    """``log W`` with its first and second derivatives in ``(phi, p)`` from one pass."""

    @staticmethod
    def forward(ctx, phi, p, y):
        value, grad, hess = _series(y.detach(), phi.detach(), p.detach(), moments=True)
        ctx.save_for_backward(phi, p, grad, hess)
        return value

    @staticmethod
    def backward(ctx, out):
        phi, p, grad, hess = ctx.saved_tensors
        g = _Gradient.apply(phi, p, grad, hess)  # differentiable in (phi, p): the Hessian
        return out * g[:, 0], out * g[:, 1], None


class _Gradient(torch.autograd.Function):
    """The gradient ``(d log W / d phi, d log W / d p)``, shape (n, 2), whose derivative
    in ``(phi, p)`` is the Hessian ``hess = (H_phiphi, H_phip, H_pp)`` of shape (n, 3)."""

    @staticmethod
    def forward(ctx, phi, p, grad, hess):
        ctx.save_for_backward(hess)
        return grad.clone()

    @staticmethod
    @once_differentiable
    def backward(ctx, out):
        (hess,) = ctx.saved_tensors
        g_phi = out[:, 0] * hess[:, 0] + out[:, 1] * hess[:, 1]
        g_p = out[:, 0] * hess[:, 1] + out[:, 1] * hess[:, 2]
        return g_phi, g_p, None, None


def _series(y, phi, p, moments: bool):
    """``(log W, grad (n, 2) or None, hess (n, 3) or None)`` of 1-D ``y, phi, p``."""
    alpha = (2.0 - p) / (1.0 - p)
    log_phi, log_pm1, log_y = torch.log(phi), torch.log(p - 1.0), torch.log(y)
    log_z = -alpha * log_y + alpha * log_pm1 - (1.0 - alpha) * log_phi - torch.log(2.0 - p)
    with torch.no_grad():
        j_max = (y ** (2.0 - p) / (phi * (2.0 - p))).clamp_min(1.0)
        half = torch.ceil(_SDS * torch.sqrt(j_max * (p - 1.0)) + _MARGIN)
        centre = torch.round(j_max)
        order = torch.argsort(half)
        group = torch.floor(torch.log(half[order]) / math.log(1.25))
        cuts = (torch.nonzero(group[1:] != group[:-1]).flatten() + 1).tolist()
    parts = []
    for rows in torch.tensor_split(order, cuts) if y.shape[0] else ():
        width = int(half[rows].max().item())
        stride = -(-width // MAX_HALF)  # 1 but for windows wider than 2 MAX_HALF + 1 terms
        points = -(-width // stride)
        offsets = torch.arange(-points, points + 1, dtype=torch.float64,
                               device=centre.device)[:, None]
        if stride > 1:
            offsets = offsets * stride
        log_stride = math.log(stride)
        for sub in torch.split(rows, max(1, CHUNK // (2 * points + 1))):
            j = centre[None, sub] + offsets
            valid = j >= 1.0
            js = torch.where(valid, j, torch.ones_like(j))
            ja = -js * alpha[None, sub]
            terms = js * log_z[None, sub] - torch.lgamma(js + 1.0) - torch.lgamma(ja)
            terms = torch.where(valid, terms, torch.full_like(terms, -math.inf))
            lse = torch.logsumexp(terms, dim=0)
            parts.append((lse + log_stride if stride > 1 else lse,
                          *(_moments(js, ja, terms, lse) if moments else ())))
    if not parts:
        empty = torch.zeros(0, dtype=torch.float64, device=y.device)
        return empty, (empty.reshape(0, 2) if moments else None), \
            (empty.reshape(0, 3) if moments else None)
    back = torch.argsort(order)
    value = torch.cat([part[0] for part in parts])[back]
    if not moments:
        return value, None, None
    m_j, m_b, v_j, c_jb, v_b, m_c = (torch.cat([part[k] for part in parts])[back]
                                     for k in range(1, 7))
    # Derivatives of log z and alpha (module docstring).
    d_alpha = (1.0 - p) ** -2
    dd_alpha = 2.0 * (1.0 - p) ** -3
    c_phi = -(1.0 - alpha) / phi
    c_phiphi = (1.0 - alpha) / (phi * phi)
    c_phip = d_alpha / phi
    l_p = (-d_alpha * log_y + d_alpha * log_pm1 + alpha / (p - 1.0) + d_alpha * log_phi
           + 1.0 / (2.0 - p))
    l_pp = (dd_alpha * (log_pm1 + log_phi - log_y) + 2.0 * d_alpha / (p - 1.0)
            - alpha / (p - 1.0) ** 2 + (2.0 - p) ** -2)
    grad = torch.stack([c_phi * m_j, l_p * m_j + d_alpha * m_b], dim=1)
    h_phiphi = c_phiphi * m_j + c_phi * c_phi * v_j
    h_phip = c_phip * m_j + c_phi * (l_p * v_j + d_alpha * c_jb)
    h_pp = (l_pp * m_j + dd_alpha * m_b - d_alpha * d_alpha * m_c
            + l_p * l_p * v_j + 2.0 * l_p * d_alpha * c_jb + d_alpha * d_alpha * v_b)
    return value, grad, torch.stack([h_phiphi, h_phip, h_pp], dim=1)


def _moments(js, ja, terms, lse):
    """Per row (column): ``E[j], E[B], Var(j), Cov(j, B), Var(B), E[C]`` under the weights
    ``exp(terms - lse)`` (invalid terms have weight 0), ``B = j psi(j a)``, ``C = j^2
    psi'(j a)``; central moments from the means (no cancellation of large ``j``)."""
    w = torch.exp(terms - lse[None, :])
    b = js * torch.special.digamma(ja)
    m_j = (w * js).sum(dim=0)
    m_b = (w * b).sum(dim=0)
    dj = js - m_j[None, :]
    db = b - m_b[None, :]
    wdj = w * dj
    return (m_j, m_b, (wdj * dj).sum(dim=0), (wdj * db).sum(dim=0), (w * db * db).sum(dim=0),
            (w * js * js * torch.special.polygamma(1, ja)).sum(dim=0))
