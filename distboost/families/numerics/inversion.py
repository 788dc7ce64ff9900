"""Vectorised numerical inversion of a cumulative distribution function.

Used for every quantile that has no closed form (torch's ``Gamma`` has no ``icdf``; censored,
truncated and user-registered families rarely do).  All rows are solved at once: a bracket is
found by geometric expansion from the support, then bisection (in log space on a positive
support, so that the accuracy is relative) runs until every row has converged.  Discrete
families get the smallest integer ``k`` with ``cdf(k) >= q`` by integer bisection.

Values follow torch's broadcasting convention: ``q`` has shape ``(..., n)`` and broadcasts
against a batch of ``n`` distributions.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from ..support import Support

__all__ = ["invert_cdf"]

_MAX_EXPAND = 2100  # doublings: enough to span the float64 range from any start
_MAX_BISECT = 200


def invert_cdf(
    cdf: Callable[[torch.Tensor], torch.Tensor],
    q: torch.Tensor,
    support: Support,
    *,
    rtol: float = 1e-10,
    atol: float = 1e-300,
) -> torch.Tensor:
    """Solve ``cdf(x) = q`` for ``x``, row by row but vectorised.

    Parameters
    ----------
    cdf : callable
        Maps a float64 tensor of shape ``q.shape`` to the cdf values at those points.
        Must be non-decreasing in its argument.
    q : Tensor of shape (..., n)
        Probability levels in ``[0, 1]``.
    support : Support
        The support, which bounds the search.  For an integer support the result is the
        smallest integer ``k`` with ``cdf(k) >= q``.
    rtol, atol : float
        Stop when the bracket width is below ``atol + rtol * |x|``.

    Returns
    -------
    Tensor of shape ``q.shape``
        The quantiles; ``q = 0`` gives the support's lower end and ``q = 1`` its upper end.
    """
    q = torch.as_tensor(q, dtype=torch.float64)
    if support.integer:
        return _invert_integer(cdf, q, support)
    positive = support.low >= 0.0 and math.isfinite(support.low)
    if positive:
        # Work on t = log(x - low): relative accuracy, and no negative trial points.
        low = support.low

        def g(t):
            return cdf(low + torch.exp(t))

        t_lo, t_hi = _bracket(g, q, -math.inf, math.log(support.high - low)
                              if math.isfinite(support.high) else math.inf, start=0.0)
        t = _bisect(g, q, t_lo, t_hi, rtol=0.0, atol=rtol)
        x = low + torch.exp(t)
    else:
        lo, hi = _bracket(cdf, q, support.low, support.high, start=0.0)
        x = _bisect(cdf, q, lo, hi, rtol=rtol, atol=atol)
    x = torch.where(q <= 0.0, torch.full_like(x, support.low), x)
    x = torch.where(q >= 1.0, torch.full_like(x, support.high), x)
    return x


def _bracket(cdf, q, low: float, high: float, start: float):
    """Find ``lo < hi`` with ``cdf(lo) < q <= cdf(hi)`` for every element."""
    shape = q.shape
    lo = torch.full(shape, start, dtype=torch.float64)
    hi = torch.full(shape, start, dtype=torch.float64)
    if math.isfinite(low):
        lo = torch.full(shape, low, dtype=torch.float64)
    if math.isfinite(high):
        hi = torch.full(shape, high, dtype=torch.float64)
    step = 1.0
    # Expand downwards where cdf(lo) >= q, upwards where cdf(hi) < q.
    for _ in range(_MAX_EXPAND):
        none = torch.zeros_like(q, dtype=torch.bool)
        need_lo = (cdf(lo) >= q) & (q > 0) if not math.isfinite(low) else none
        need_hi = (cdf(hi) < q) if not math.isfinite(high) else none
        if not bool(need_lo.any() or need_hi.any()):
            break
        # The old lo is a valid upper end for a row that still needs a lower one, and vice versa.
        hi = torch.where(need_lo, torch.minimum(hi, lo), hi)
        lo = torch.where(need_hi, torch.maximum(lo, hi), lo)
        lo = torch.where(need_lo, lo - step, lo)
        hi = torch.where(need_hi, hi + step, hi)
        step *= 2.0
        if not math.isfinite(step):
            break
    return lo, hi


def _bisect(cdf, q, lo, hi, *, rtol: float, atol: float):
    for _ in range(_MAX_BISECT):
        width = hi - lo
        scale = torch.maximum(lo.abs(), hi.abs())
        mid = lo + 0.5 * width
        # also done where the bracket holds no float between its ends (far from zero, e.g.
        # a target offset by 1e9, a relative tolerance below float64's spacing)
        done = (width <= atol + rtol * scale) | (mid <= lo) | (mid >= hi)
        if bool(done.all()):
            break
        below = cdf(mid) < q
        lo = torch.where(below & ~done, mid, lo)
        hi = torch.where(~below & ~done, mid, hi)
    return 0.5 * (lo + hi)


def _invert_integer(cdf, q, support: Support):
    low = support.low if math.isfinite(support.low) else -1.0
    lo = torch.full(q.shape, low - 1.0, dtype=torch.float64)  # cdf(lo) = 0 < q
    hi = torch.full(q.shape, max(low, 0.0), dtype=torch.float64)
    step = 1.0
    for _ in range(_MAX_EXPAND):
        need = cdf(hi) < q
        if not bool(need.any()):
            break
        lo = torch.where(need, hi, lo)
        hi = torch.where(need, hi + step, hi)
        step *= 2.0
        if not math.isfinite(step):
            break
    for _ in range(_MAX_BISECT):
        gap = hi - lo
        if bool((gap <= 1.0).all()):
            break
        mid = torch.floor(lo + 0.5 * gap)
        below = cdf(mid) < q
        active = gap > 1.0
        lo = torch.where(below & active, mid, lo)
        hi = torch.where(~below & active, mid, hi)
    hi = torch.where(q >= 1.0, torch.full_like(hi, support.high), hi)
    return hi
