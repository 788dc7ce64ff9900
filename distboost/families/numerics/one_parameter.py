"""Closed-form raw derivatives of the one-parameter families with a log link.

The exponential, half-normal and Poisson families have one parameter ``v = exp(r)`` and a
loss, gradient and Fisher information of a few passes in ``r`` (LightGBM grows one tree a
round for them, so the derivatives' fixed cost per operation weighs twice as much as for a
two-parameter family).  Below :data:`~distboost.families.continuous.NUMPY_ROWS` rows on the
CPU they are computed here in numpy, as the Normal's are, and in torch with the same
formulas above it or on a GPU; for other links the family's
:attr:`~distboost.families.base.Family.score_formula` and the chain rule
(:func:`distboost.families.numerics.likelihood.chain_rule`) give the same values.

The raw score is floored (``max(r, floor)``) and the link clamps it to ``[-RAW_BOUND,
RAW_BOUND]``; the gradient is zero strictly below the floor and outside the clamp, as
autograd of the floored, clamped loss gives (``tests/families/test_raw_derivatives.py``
compares them with autograd to 1e-10 on both case rows of each family).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ...links import RAW_BOUND
from ..continuous import NUMPY_ROWS
from . import likelihood as _scores
from .special import log_factorial

__all__ = ["OneParameterNumpy", "one_parameter_derivatives"]

_HALF_LOG_2_OVER_PI = 0.5 * math.log(2.0 / math.pi)


def one_parameter_derivatives(family, raw: torch.Tensor, y: torch.Tensor, floor=None):
    """``(nll Tensor[n], grad Tensor[n, 1], fisher Tensor[n, 1])`` of ``family`` (the
    exponential, half-normal or Poisson law, recognised by its ``score_formula``: a subclass
    that changes the law resets it) with its log link, or None where this path does not
    apply (another law or link).  In numpy up to ``NUMPY_ROWS`` rows on the CPU, in torch
    (:func:`_torch_derivatives`, the same formulas) elsewhere."""
    kind = _KINDS.get(family.score_formula)
    (name,) = family.param_names
    n = raw.shape[0]
    if kind is None or family.links[name].name != "exp":
        return None
    lo = -RAW_BOUND if floor is None else max(-RAW_BOUND, float(floor[0]))
    if raw.device.type != "cpu" or n > NUMPY_ROWS:
        return _torch_derivatives(kind, raw[:, 0].detach(), y, lo)
    r = raw.detach().numpy()[:, 0]
    y_np = y.detach().numpy()
    rc = np.clip(r, lo, RAW_BOUND)
    v = np.exp(rc)
    if kind == "exponential":
        nll = v * y_np - rc
        grad = v * y_np - 1.0
        fisher = np.ones(n)
    elif kind == "half_normal":
        z2 = np.square(y_np) * np.exp(-2.0 * rc)
        nll = rc + 0.5 * z2 - _HALF_LOG_2_OVER_PI
        grad = 1.0 - z2
        fisher = np.full(n, 2.0)
    else:  # poisson (the only other kind)
        nll = v - y_np * rc + log_factorial(y).numpy()
        grad = v - y_np
        fisher = v
    outside = (r < lo) | (r > RAW_BOUND)
    if outside.any():
        grad[outside] = 0.0
    return (torch.from_numpy(nll), torch.from_numpy(grad)[:, None],
            torch.from_numpy(fisher)[:, None])


def _torch_derivatives(kind: str, r: torch.Tensor, y: torch.Tensor, lo: float):
    """:func:`one_parameter_derivatives`' formulas in torch, a few passes over preallocated
    vectors (no chain rule through the generic link code)."""
    n = r.shape[0]
    low, high = torch.aminmax(r)
    inside = bool(low >= lo) and bool(high <= RAW_BOUND)  # one pass: no clamp, no mask
    rc = r if inside else r.clamp(lo, RAW_BOUND)
    nll = torch.empty_like(rc)
    grad = torch.empty((n, 1), dtype=rc.dtype, device=rc.device)
    if kind == "exponential":
        vy = torch.exp(rc).mul_(y)
        torch.sub(vy, rc, out=nll)
        torch.sub(vy, 1.0, out=grad[:, 0])
        fisher = torch.ones((n, 1), dtype=rc.dtype, device=rc.device)
    elif kind == "half_normal":
        z2 = torch.mul(rc, -2.0).exp_().mul_(y).mul_(y)
        torch.add(rc, z2, alpha=0.5, out=nll).sub_(_HALF_LOG_2_OVER_PI)
        torch.sub(1.0, z2, out=grad[:, 0])
        fisher = torch.full((n, 1), 2.0, dtype=rc.dtype, device=rc.device)
    else:  # poisson
        v = torch.exp(rc)
        torch.sub(v, y * rc, out=nll).add_(log_factorial(y))
        torch.sub(v, y, out=grad[:, 0])
        fisher = v[:, None]
    if not inside:
        grad[:, 0].masked_fill_((r < lo) | (r > RAW_BOUND), 0.0)
    return nll, grad, fisher


_KINDS = {_scores.exponential: "exponential", _scores.half_normal: "half_normal",
          _scores.poisson: "poisson"}


class OneParameterNumpy:
    """Mixin of the exponential, half-normal and Poisson families: their
    :meth:`~distboost.families.base.Family.raw_derivatives` from
    :func:`one_parameter_derivatives` where it applies, else the family's chain rule."""

    def raw_derivatives(self, raw, y, floor=None):
        fast = one_parameter_derivatives(self, raw, y, floor)
        return fast if fast is not None else super().raw_derivatives(raw, y, floor)
