"""Closed-form CRPS of the families, written once, in torch (float64, differentiable).

``CRPS(F, y) = int (F(x) - 1{x >= y})^2 dx`` (Matheson & Winkler 1976; Gneiting & Raftery
2007, eq. 20).  Each function takes ``y`` and the natural-scale parameters in the family's
parameter order (tensors that broadcast) and returns the per-row score; gradients with
respect to the parameters come from autograd, through the differentiable special functions of
:mod:`distboost.families.numerics.special` where torch has none.  The families' ``crps`` methods
call these (``closed_form_crps = True``); :mod:`distboost.metrics.closed_form` wraps them for numpy;
a training objective with ``scoring_rule="crps"`` differentiates them (NGBoost's CRPScore).

The formulas follow the references in each docstring; the arithmetic mirrors the numpy forms
they replaced, so the public numpy functions kept their values (to about 1e-12).
"""

from __future__ import annotations

import math

import torch

from .special import (
    EULER_GAMMA,
    betainc_ad,
    betaln_ad,
    exp1_of_exp,
    gammainc_ad,
    gammaincc_ad,
    hyp2f1_half_two,
    lgamma_ratio,
    stdtr_ad,
)

__all__ = ["normal", "lognormal", "gamma", "laplace", "logistic", "studentt", "exponential",
           "gumbel", "beta", "poisson", "negative_binomial", "half_normal", "normal_mixture"]

_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_LGAMMA_HALF = 0.5 * math.log(math.pi)  # log Gamma(1/2)


def _t(*args) -> list[torch.Tensor]:
    """Float64 tensors, broadcast against each other."""
    device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
    return list(torch.broadcast_tensors(*(torch.as_tensor(a, dtype=torch.float64,
                                                          device=device) for a in args)))


def _ndtr(z):
    return torch.special.ndtr(z)


def normal(y, loc, scale):
    """``s [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)]``, ``z = (y - loc) / s`` (Gneiting,
    Raftery, Westveld & Goldman 2005, eq. 5)."""
    y, loc, scale = _t(y, loc, scale)
    z = (y - loc) / scale
    pdf = torch.exp(-0.5 * z * z) * _INV_SQRT_2PI
    return scale * (z * (2.0 * _ndtr(z) - 1.0) + 2.0 * pdf - _INV_SQRT_PI)


def lognormal(y, loc, scale):
    """``y [2 Phi(w) - 1] - 2 exp(loc + s^2/2) [Phi(w - s) + Phi(s/sqrt 2) - 1]``,
    ``w = (log y - loc) / s`` (``-inf`` for ``y <= 0``) (Baran & Lerch 2015, eq. 5)."""
    y, loc, scale = _t(y, loc, scale)
    pos = y > 0
    w = torch.where(pos, (torch.log(torch.where(pos, y, torch.ones_like(y))) - loc) / scale,
                    torch.full_like(y, -math.inf))
    mean = torch.exp(loc + 0.5 * scale**2)
    return y * (2.0 * _ndtr(w) - 1.0) - 2.0 * mean * (
        _ndtr(w - scale) + _ndtr(scale / math.sqrt(2.0)) - 1.0)


def gamma(y, concentration, rate):
    """``y [2 F_a(y) - 1] - (a/b) [2 F_{a+1}(y) - 1] - 1 / (b B(1/2, a))`` (Scheuerer &
    Moeller 2015, eq. 9; Taillardat et al. 2016, app. A)."""
    y, a, b = _t(y, concentration, rate)
    x = (b * y).clamp_min(0.0)
    return (y * (2.0 * gammainc_ad(a, x) - 1.0) - a / b * (2.0 * gammainc_ad(a + 1.0, x) - 1.0)
            - torch.exp(-betaln_ad(torch.full_like(a, 0.5), a)) / b)


def laplace(y, loc, scale):
    """``b [|z| + exp(-|z|) - 3/4]`` (Jordan, Krueger & Lerch 2019, app. A)."""
    y, loc, scale = _t(y, loc, scale)
    az = torch.abs((y - loc) / scale)
    return scale * (az + torch.exp(-az) - 0.75)


def logistic(y, loc, scale):
    """``s [z - 2 log F(z) - 1]``, ``-log F(z) = softplus(-z)`` (Jordan, Krueger & Lerch
    2019, app. A)."""
    y, loc, scale = _t(y, loc, scale)
    z = (y - loc) / scale
    return scale * (z + 2.0 * torch.logaddexp(torch.zeros_like(z), -z) - 1.0)


def studentt(y, df, loc, scale):
    """``s [z (2 F(z) - 1) + 2 f(z) (df + z^2)/(df - 1) - 2 sqrt(df) B(1/2, df - 1/2) /
    ((df - 1) B(1/2, df/2)^2)]`` for ``df > 1`` (Jordan, Krueger & Lerch 2019, app. A); inf
    for ``df <= 1`` (a law without a mean has an infinite CRPS), with a zero gradient."""
    y, df, loc, scale = _t(y, df, loc, scale)
    ok = df > 1.0
    v = torch.where(ok, df, torch.full_like(df, 2.0))
    z = (y - loc) / scale
    half = torch.full_like(v, 0.5)
    # log[sqrt(v) B(1/2, v - 1/2) / ((v - 1) B(1/2, v/2)^2)] with B(1/2, x) = Gamma(1/2)
    # Gamma(x) / Gamma(x + 1/2) from the cancellation-free lgamma_ratio: exact for large df,
    # where the difference of betaln values loses ~1e-12 (scipy's t.pdf ~1e-12 as well).
    log_ratio = (0.5 * torch.log(v) - lgamma_ratio(v - 0.5, half) - torch.log(v - 1.0)
                 + 2.0 * lgamma_ratio(v / 2.0, half) - _LGAMMA_HALF)
    log_pdf = (lgamma_ratio(v / 2.0, half) - 0.5 * torch.log(v * math.pi)
               - (v + 1.0) / 2.0 * torch.log1p(z * z / v))
    out = scale * (z * (2.0 * stdtr_ad(v, z) - 1.0)
                   + 2.0 * torch.exp(log_pdf) * (v + z * z) / (v - 1.0)
                   - 2.0 * torch.exp(log_ratio))
    return torch.where(ok, out, torch.full_like(out, math.inf))


def exponential(y, rate):
    """``|y| - 2 F(y) / rate + 1 / (2 rate)`` (Jordan, Krueger & Lerch 2019, app. A)."""
    y, rate = _t(y, rate)
    cdf = -torch.expm1(-rate * y.clamp_min(0.0))
    return torch.abs(y) - 2.0 * cdf / rate + 0.5 / rate


def gumbel(y, loc, scale):
    """``s [-z + 2 E1(exp(-z)) + gamma - log 2]``, the GEV with shape 0 (Friederichs &
    Thorarinsdottir 2012, eq. 12)."""
    y, loc, scale = _t(y, loc, scale)
    z = (y - loc) / scale
    return scale * (-z + 2.0 * exp1_of_exp(z) + EULER_GAMMA - math.log(2.0))


def beta(y, concentration1, concentration0):
    """``y [2 F(y) - 1] + a/(a+b) [1 - 2 F_{a+1,b}(y)] - 2/(a+b) B(2a, 2b) / B(a, b)^2``
    (Taillardat et al. 2016, app. A; Jordan, Krueger & Lerch 2019)."""
    y, a, b = _t(y, concentration1, concentration0)
    yc = y.clamp(0.0, 1.0)
    spread = 2.0 / (a + b) * torch.exp(betaln_ad(2 * a, 2 * b) - 2.0 * betaln_ad(a, b))
    return (y * (2.0 * betainc_ad(a, b, yc) - 1.0)
            + a / (a + b) * (1.0 - 2.0 * betainc_ad(a + 1.0, b, yc)) - spread)


def poisson(y, rate):
    """``(y - l)(2 F(y) - 1) + 2 l f(floor y) - l exp(-2l) [I0(2l) + I1(2l)]`` (Wei & Held
    2014; Jordan, Krueger & Lerch 2019)."""
    y, lam = _t(y, rate)
    k = torch.floor(y)
    inside = k >= 0
    ks = k.clamp_min(0.0)
    cdf = torch.where(inside, gammaincc_ad(ks + 1.0, lam), torch.zeros_like(lam))
    log_pmf = torch.special.xlogy(ks, lam) - lam - torch.lgamma(ks + 1.0)
    pmf = torch.where(inside, torch.exp(log_pmf), torch.zeros_like(lam))
    return (y - lam) * (2.0 * cdf - 1.0) + 2.0 * lam * pmf - lam * (
        torch.special.i0e(2.0 * lam) + torch.special.i1e(2.0 * lam))


def negative_binomial(y, total_count, probs):
    """With torch's ``probs`` (scipy's ``p = 1 - probs``) and ``n = total_count``:
    ``y (2 F(y) - 1) - n (1-p)/p^2 [p (2 F_{n+1}(y - 1) - 1) + 2F1(n + 1, 1/2; 2;
    -4 (1-p)/p^2)]`` (Wei & Held 2014; Jordan, Krueger & Lerch 2019, app. A)."""
    y, n, probs = _t(y, total_count, probs)
    p = 1.0 - probs
    k = torch.floor(y)
    cdf = torch.where(k >= 0, betainc_ad(n, k.clamp_min(0.0) + 1.0, p), torch.zeros_like(p))
    cdf1 = torch.where(k - 1 >= 0, betainc_ad(n + 1.0, (k - 1.0).clamp_min(0.0) + 1.0, p),
                       torch.zeros_like(p))
    hyp = hyp2f1_half_two(n + 1.0, -4.0 * (1.0 - p) / p**2)
    return y * (2.0 * cdf - 1.0) - n * (1.0 - p) / p**2 * (p * (2.0 * cdf1 - 1.0) + hyp)


def half_normal(y, scale):
    """``y (2 F(y) - 1) + 4 s phi(y / s) - 2 s / sqrt(pi)`` with ``F(y) = 2 Phi(y / s) - 1``
    for ``y >= 0``: ``E|X - y| - E|X - X'| / 2`` with ``E[X 1{X < y}] = 2 s (phi(0) -
    phi(y / s))`` and ``E|X - X'| = 4 s (sqrt 2 - 1) phi(0)`` (the polar form of two
    independent half-normal draws); the truncated-normal CRPS of Gneiting & Thorarinsdottir
    (2010) at location 0 and truncation 0.  For ``y < 0``: ``|y| + E[X] - E|X - X'| / 2``."""
    y, s = _t(y, scale)
    yc = y.clamp_min(0.0)
    z = yc / s
    cdf = 2.0 * _ndtr(z) - 1.0
    pdf = torch.exp(-0.5 * z * z) * _INV_SQRT_2PI
    inside = yc * (2.0 * cdf - 1.0) + 4.0 * s * pdf - 2.0 * s * _INV_SQRT_PI
    below = -y + s * (2.0 * math.sqrt(2.0) - 2.0) * _INV_SQRT_PI
    return torch.where(y >= 0, inside, below)


def _abs_normal_mean(m, s):
    """``E|X|`` for ``X ~ N(m, s^2)``: ``2 s phi(m / s) + m (2 Phi(m / s) - 1)``."""
    z = m / s
    return 2.0 * s * torch.exp(-0.5 * z * z) * _INV_SQRT_2PI + m * (2.0 * _ndtr(z) - 1.0)


def normal_mixture(y, *params):
    """Mixture of ``K`` normals with parameters ``loc_0, scale_0, ..., loc_{K-1},
    scale_{K-1}, logits_1, ..., logits_{K-1}`` (weights ``softmax(0, logits)``):
    ``sum_i w_i A(y - mu_i, s_i^2) - 1/2 sum_ij w_i w_j A(mu_i - mu_j, s_i^2 + s_j^2)``
    with ``A(m, v) = E|N(m, v)|`` (Grimit, Gneiting, Berrocal & Johnson 2006, eq. 9)."""
    k = (len(params) + 1) // 3
    y = torch.as_tensor(y, dtype=torch.float64)
    loc = torch.stack(torch.broadcast_tensors(*params[0:2 * k:2]), dim=-1)
    scale = torch.stack(torch.broadcast_tensors(*params[1:2 * k:2]), dim=-1)
    logits = [torch.zeros_like(loc[..., 0])] + [torch.as_tensor(p, dtype=torch.float64)
                                                 for p in params[2 * k:]]
    w = torch.softmax(torch.stack(torch.broadcast_tensors(*logits), dim=-1), dim=-1)
    first = (w * _abs_normal_mean(y[..., None] - loc, scale)).sum(-1)
    dm = loc[..., :, None] - loc[..., None, :]
    ds = torch.sqrt(scale[..., :, None] ** 2 + scale[..., None, :] ** 2)
    second = (w[..., :, None] * w[..., None, :] * _abs_normal_mean(dm, ds)).sum((-1, -2))
    return first - 0.5 * second
