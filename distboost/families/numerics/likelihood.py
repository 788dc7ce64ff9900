"""Closed-form per-row negative log-likelihood and its gradient on the natural scale.

The boosting engine needs, every round, the per-row loss, its gradient with respect to the
raw scores and the expected Fisher information (:meth:`Family.raw_derivatives`).  Autograd
gives them for any family; for the families below they are written out here, so that a round
costs a few elementwise passes instead of building and running an autograd graph.

Each formula takes ``y`` and the natural-scale parameters in the family's parameter order
(float64 tensors of shape (n,)) and returns ``(nll, (d nll / d theta_1, ..., d nll /
d theta_K))``, the same values as autograd of the family's ``nll`` (its own arithmetic: the
tests compare them to 1e-10 on every family of the case table).  A family points at its
formula with ``score_formula`` (as ``crps_formula`` for the CRPS); :func:`chain_rule`
carries the gradient through the links and the raw floors and adds the family's closed-form
Fisher information (:meth:`Family.fisher_information`, the information the autograd path
uses).  Location-scale laws share one form (:func:`location_scale`): with ``z = (y - loc) /
s`` and ``nll = log s + rho(z)``, ``d nll / d loc = -rho'(z) / s`` and ``d nll / d s = (1 - z
rho'(z)) / s``.

Densities: Johnson, Kotz & Balakrishnan (1994, 1995), the chapters cited by each family's
Fisher information; each derivative below is the elementary one of the density written in
its docstring.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ...links import RAW_BOUND
from .information import raw_information
from .special import STIRLING_MIN, lgamma_ratio, log_factorial, remembered

__all__ = ["below_floor", "chain_rule", "floored", "link_value_and_derivative",
           "raw_nll_grad", "lgamma_ratio_dr", "location_scale",
           "normal", "lognormal", "laplace", "logistic", "gumbel", "cauchy", "studentt",
           "gamma", "weibull", "exponential", "half_normal", "inverse_gaussian", "loglogistic",
           "beta", "bernoulli", "poisson", "negative_binomial", "negative_binomial_raw",
           "zero_mixture_raw"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_HALF_LOG_PI = 0.5 * math.log(math.pi)
_LOG_PI = math.log(math.pi)
_LOG_2 = math.log(2.0)
_EPS = torch.finfo(torch.float64).eps


# ---------------------------------------------------------------------------- links
def _inside(raw: torch.Tensor, high: float = RAW_BOUND) -> torch.Tensor:
    """Where a clamp to ``[-RAW_BOUND, high]`` passes the gradient (bounds included, as
    autograd of ``clamp``)."""
    return (raw >= -RAW_BOUND) & (raw <= high)


#: The links :func:`link_value_and_derivative` has in closed form.
CLOSED_FORM_LINKS = ("identity", "exp", "softplus", "sigmoid")


def link_value_and_derivative(link, raw: torch.Tensor, inside: bool = False):
    """``(theta, d theta / d raw, link.derivative(raw))`` of a link at ``raw`` (shape (n,)):
    the second as autograd of :meth:`Link.forward` gives it (zero where the forward map
    clamps), the third as :meth:`Link.derivative` gives it (what the Fisher information's
    chain rule uses); None for a link without a closed form here (the family then uses
    autograd).  Both derivatives are None for the identity link (they are 1).  ``inside``:
    the caller knows every score lies within ``[-RAW_BOUND, RAW_BOUND]`` (no clamp, no
    mask)."""
    name = link.name
    if name == "identity":
        return raw, None, None
    r = raw if inside else raw.clamp(-RAW_BOUND, RAW_BOUND)
    if name == "exp":
        value = torch.exp(r)
        return value, value if inside else torch.where(_inside(raw), value, 0.0), value
    if name == "softplus":  # linear growth: clamped below only (links.SoftplusLink)
        r = raw if inside else raw.clamp_min(-RAW_BOUND)
        d = torch.sigmoid(r)
        return F.softplus(r), d if inside else torch.where(raw >= -RAW_BOUND, d, 0.0), d
    if name == "sigmoid":
        s = torch.sigmoid(r)
        d = s * (1.0 - s)
        keep = _inside(raw) & (s <= 1.0 - _EPS)
        return s.clamp(max=1.0 - _EPS), torch.where(keep, d, 0.0), d
    return None


def raw_nll_grad(family, formula, raw: torch.Tensor, y: torch.Tensor, fisher: bool = False,
                 natural_fisher: bool = False):
    """``(nll Tensor[n], grad Tensor[n, K])`` at (already floored) raw scores: the links map
    ``raw`` to ``theta``, ``formula(y, *theta)`` gives the NLL and ``d nll / d theta``, the
    links' derivatives carry it to ``raw``; None when a link has no closed form here.  With
    ``fisher``, a third entry: :meth:`Family.fisher_information` at ``raw`` (with
    ``natural_fisher``, when the family does not override it, from :meth:`fisher_natural` at
    the parameters and link derivatives already computed; None without a closed form)."""
    values, derivs, plain = [], [], []
    # The engine's scores are column-major (views of (K, n)): reduce over the contiguous
    # transpose (a fifth of the time on 20,000 rows), the same elements.
    low, high = torch.aminmax(raw.T if raw.T.is_contiguous() else raw)
    inside = bool(low > -RAW_BOUND) and bool(high < RAW_BOUND)  # one pass: no link clamps
    for k, p in enumerate(family.param_names):
        out = link_value_and_derivative(family.links[p], raw[:, k], inside)
        if out is None:
            return None
        values.append(out[0])
        derivs.append(out[1])
        plain.append(out[2])  # None: the identity's derivative, 1
    nll, scores = formula(y, *values)
    # (K, n): see info_matrix
    grad = torch.empty((len(values), raw.shape[0]), dtype=raw.dtype, device=raw.device)
    for k, (s, d) in enumerate(zip(scores, derivs, strict=True)):
        if d is None:
            grad[k] = s
        else:
            torch.mul(s, d, out=grad[k])
    if not fisher:
        return nll, grad.T
    if natural_fisher:
        info = family.fisher_natural(dict(zip(family.param_names, values, strict=True)))
        info = None if info is None else raw_information(info, plain)
    else:
        info = family.fisher_information(raw)
    return nll, grad.T, info


def floored(raw: torch.Tensor, floor: torch.Tensor | None) -> torch.Tensor:
    """``max(raw, floor)`` (``raw`` itself without a floor)."""
    return raw if floor is None else torch.maximum(raw, floor.to(raw.device, raw.dtype))


def below_floor(grad: torch.Tensor, raw: torch.Tensor, floor: torch.Tensor | None):
    """``grad`` with zeros where a raw score lies strictly below its floor (at the floor it
    keeps the one-sided derivative from above, as autograd of ``clamp(raw, min=floor)``).

    ``grad`` is changed in place, column by column, for the columns with a floor (the
    callers pass the gradient they have just computed; on 20,000 rows a fourth of the time
    of a masked copy of the whole array)."""
    if floor is None:
        return grad
    values = floor.tolist()
    if not any(math.isfinite(f) for f in values):
        return grad
    for k, f in enumerate(values):
        if f > -math.inf:
            grad[:, k].masked_fill_(raw[:, k] < f, 0.0)
    return grad


def chain_rule(family, formula, raw: torch.Tensor, y: torch.Tensor,
               floor: torch.Tensor | None = None, natural_fisher: bool = False):
    """``(nll, grad, fisher)`` on the raw scale from a natural-scale ``formula``.

    The raw scores are floored (``max(raw, floor)``, see :func:`below_floor` for the
    gradient there), mapped by the links, ``formula(y, *theta)`` gives the per-row NLL and
    ``d nll / d theta``, and the links' derivatives carry it to the raw scores
    (:func:`raw_nll_grad`).  The Fisher information is the family's
    :meth:`fisher_information` at the floored scores (what the autograd path uses).

    Parameters
    ----------
    family : Family
    formula : callable
        ``formula(y, *theta) -> (nll Tensor[n], tuple of K Tensor[n])``.
    raw : Tensor of shape (n, K), float64
    y : Tensor of shape (n,)
    floor : Tensor of shape (K,), optional
    natural_fisher : bool
        The family's :meth:`fisher_information` is the base one (:meth:`fisher_natural`
        and the links' chain rule): computed from the parameters at hand.

    Returns
    -------
    (Tensor[n], Tensor[n, K], Tensor[n, K] or Tensor[n, K, K]) or None
        None when a link has no closed form or the family no closed-form Fisher information.
    """
    out = raw_nll_grad(family, formula, floored(raw, floor), y, fisher=True,
                       natural_fisher=natural_fisher)
    if out is None or out[2] is None:
        return None
    return out[0], below_floor(out[1], raw, floor), out[2]


# ---------------------------------------------------------------------------- special functions
def lgamma_ratio_dr(r: torch.Tensor, y) -> torch.Tensor:
    """``d / dr [log Gamma(r + y) - log Gamma(r)]``, the derivative of
    :func:`~distboost.families.numerics.special.lgamma_ratio` branch by branch: ``psi(r + y) -
    psi(r)`` below ``STIRLING_MIN``, the derivative of its Stirling form (Abramowitz & Stegun
    1964, 6.1.41) from there on, ``log1p(y/r) - (r - 1/2) y / (r (r + y)) + y / (r + y) +
    tail'(r + y) - tail'(r)``."""
    r, y = torch.broadcast_tensors(r, torch.as_tensor(y, dtype=r.dtype, device=r.device))
    if not bool(y.any()):  # y = 0 everywhere: exactly 0 (NaN for a NaN or infinite r)
        return r * 0.0
    big = r >= STIRLING_MIN
    if not bool(big.any()):
        return torch.special.digamma(r + y) - torch.special.digamma(r)
    if bool(big.all()):  # the Stirling branch alone: the same values
        return _lgamma_ratio_dr_stirling(r, y)
    r_small = torch.where(big, torch.ones_like(r), r)
    r_big = torch.where(big, r, torch.full_like(r, STIRLING_MIN))
    direct = torch.special.digamma(r_small + y) - torch.special.digamma(r_small)
    return torch.where(big, _lgamma_ratio_dr_stirling(r_big, y), direct)


def _lgamma_ratio_dr_stirling(r: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """:func:`lgamma_ratio_dr`'s Stirling branch, for ``r >= STIRLING_MIN``."""
    return (torch.log1p(y / r) - (r - 0.5) * y / (r * (r + y)) + y / (r + y)
            + _stirling_tail_dr(r + y) - _stirling_tail_dr(r))


def _stirling_tail_dr(x: torch.Tensor) -> torch.Tensor:
    """Derivative of ``special._stirling_tail``: ``-1/(12 x^2) + 1/(120 x^4) - 1/(252 x^6)``."""
    inv2 = 1.0 / (x * x)
    return inv2 * (-1.0 / 12.0 + inv2 * (1.0 / 120.0 - inv2 / 252.0))


# ---------------------------------------------------------------------------- location-scale
def location_scale(rho, drho):
    """The formula of a location-scale law with density ``exp(-rho(z)) / s``, ``z = (y -
    loc) / s``: ``nll = log s + rho(z)``, ``d/d loc = -rho'(z) / s``, ``d/d s = (1 - z
    rho'(z)) / s``."""

    def formula(y, loc, scale):
        z = (y - loc) / scale
        dz = drho(z)
        return rho(z) + torch.log(scale), (-dz / scale, (1.0 - z * dz) / scale)

    return formula


#: Normal: ``rho = z^2 / 2 + log(2 pi) / 2``.
normal = location_scale(lambda z: 0.5 * z * z + _HALF_LOG_2PI, lambda z: z)
#: Laplace: ``rho = |z| + log 2`` (``rho' = sign z``, 0 at 0 as autograd of ``abs``).
laplace = location_scale(lambda z: z.abs() + _LOG_2, torch.sign)
#: Logistic: ``rho = |z| + 2 softplus(-|z|)``, ``rho' = tanh(z / 2)``.
logistic = location_scale(lambda z: z.abs() + 2.0 * F.softplus(-z.abs()),
                          lambda z: torch.tanh(0.5 * z))
#: Gumbel (maxima): ``rho = z + exp(-z)``, ``rho' = 1 - exp(-z)``.
gumbel = location_scale(lambda z: z + torch.exp(-z), lambda z: -torch.expm1(-z))
#: Cauchy: ``rho = log pi + log1p(z^2)``, ``rho' = 2 z / (1 + z^2)``.
cauchy = location_scale(lambda z: _LOG_PI + torch.log1p(z * z), lambda z: 2.0 * z / (1.0 + z * z))


def _log(y: torch.Tensor) -> torch.Tensor:
    """``log y``, remembered per target (:func:`~distboost.families.numerics.special.remembered`):
    the positive families' formulas take it every round."""
    return remembered(y, "log", torch.log)


def lognormal(y, loc, scale):
    """The Normal's formula at ``log y`` plus the Jacobian term ``log y``."""
    log_y = _log(y)
    nll, grads = normal(log_y, loc, scale)
    return nll + log_y, grads


def half_normal(y, scale):
    """``nll = log s + z^2 / 2 - log(2 / pi) / 2``, ``z = y / s``: ``d/ds = (1 - z^2) / s``."""
    z = y / scale
    return (torch.log(scale) + 0.5 * z * z - 0.5 * math.log(2.0 / math.pi),
            ((1.0 - z * z) / scale,))


def studentt(y, df, loc, scale):
    """Student's t as :func:`~distboost.families.numerics.special.studentt_log_prob`: with
    ``v = df``, ``z = (y - loc) / s``,
    ``nll = -[log G((v+1)/2) - log G(v/2)] + log(pi v) / 2 + log s + (v+1)/2 log1p(z^2 / v)``;
    ``d/d loc = -(v+1) z / (s (v + z^2))``, ``d/ds = (1 - (v+1) z^2 / (v + z^2)) / s``,
    ``d/dv = -psi-difference / 2 + 1 / (2v) + log1p(z^2/v) / 2 - (v+1) z^2 / (2 v (v + z^2))``.
    """
    z = (y - loc) / scale
    z2 = z * z
    half = 0.5 * df
    w = torch.log1p(z2 / df)
    nll = (-lgamma_ratio(half, torch.full_like(half, 0.5)) + 0.5 * torch.log(df) + _HALF_LOG_PI
           + torch.log(scale) + (half + 0.5) * w)
    ratio = (df + 1.0) / (df + z2)
    d_df = (-0.5 * lgamma_ratio_dr(half, 0.5) + 0.5 / df + 0.5 * w
            - 0.5 * ratio * z2 / df)
    return nll, (d_df, -ratio * z / scale, (1.0 - ratio * z2) / scale)


# ---------------------------------------------------------------------------- positive
def gamma(y, conc, rate):
    """``nll = lgamma(a) - a log b - (a - 1) log y + b y``: ``d/da = psi(a) - log b - log y``,
    ``d/db = y - a / b``."""
    log_y, log_b = _log(y), torch.log(rate)
    nll = torch.lgamma(conc) - conc * log_b - (conc - 1.0) * log_y + rate * y
    return nll, (torch.special.digamma(conc) - log_b - log_y, y - conc / rate)


def weibull(y, scale, conc):
    """``nll = -log k + log l - (k - 1) L + t`` with ``L = log(y / l)``, ``t = (y / l)^k``:
    ``d/dl = k (1 - t) / l``, ``d/dk = -1/k - L + t L``."""
    L = _log(y) - torch.log(scale)
    t = torch.exp(conc * L)
    nll = -torch.log(conc) + torch.log(scale) - (conc - 1.0) * L + t
    return nll, (conc * (1.0 - t) / scale, -1.0 / conc + (t - 1.0) * L)


def exponential(y, rate):
    """``nll = -log b + b y``: ``d/db = y - 1 / b``."""
    return rate * y - torch.log(rate), (y - 1.0 / rate,)


def inverse_gaussian(y, mean, conc):
    """``nll = -(log l - log(2 pi) - 3 log y) / 2 + l (y - m)^2 / (2 m^2 y)`` (Chhikara & Folks
    1989, eq. 2.1): ``d/dm = -l (y - m) / m^3``, ``d/dl = -1 / (2 l) + (y - m)^2 / (2 m^2 y)``."""
    d = y - mean
    q = d * d / (2.0 * mean * mean * y)
    nll = -0.5 * (torch.log(conc) - math.log(2.0 * math.pi) - 3.0 * _log(y)) + conc * q
    return nll, (-conc * d / mean**3, -0.5 / conc + q)


def loglogistic(y, scale, conc):
    """``nll = -log c + log y + |z| + 2 softplus(-|z|)``, ``z = c (log y - log s)``:
    ``d/dz = tanh(z / 2)``, ``dz/ds = -c / s``, ``dz/dc = z / c``."""
    log_y = _log(y)
    z = conc * (log_y - torch.log(scale))
    dz = torch.tanh(0.5 * z)
    nll = -torch.log(conc) + log_y + z.abs() + 2.0 * F.softplus(-z.abs())
    return nll, (-dz * conc / scale, (z * dz - 1.0) / conc)


def beta(y, a, b):
    """``nll = -(a-1) log y - (b-1) log(1-y) - lgamma(a+b) + lgamma(a) + lgamma(b)``:
    ``d/da = psi(a) - psi(a+b) - log y``, ``d/db = psi(b) - psi(a+b) - log(1-y)``."""
    log_y, log_1my = _log(y), remembered(y, "log1m", lambda t: torch.log(1.0 - t))
    nll = (-(a - 1.0) * log_y - (b - 1.0) * log_1my - torch.lgamma(a + b) + torch.lgamma(a)
           + torch.lgamma(b))
    dab = torch.special.digamma(a + b)
    return nll, (torch.special.digamma(a) - dab - log_y, torch.special.digamma(b) - dab - log_1my)


# ---------------------------------------------------------------------------- classes
def bernoulli(y, logits):
    """torch's ``Bernoulli(logits=l).log_prob`` (binary cross-entropy with logits): ``nll =
    max(l, 0) - l y + log1p(exp(-|l|))``, ``d/dl = sigmoid(l) - y``."""
    nll = F.binary_cross_entropy_with_logits(logits, y, reduction="none")
    return nll, (torch.sigmoid(logits) - y,)


# ---------------------------------------------------------------------------- counts
def poisson(y, rate):
    """``nll = b - y log b + lgamma(y + 1)`` (``0 log b = 0``): ``d/db = 1 - y / b``."""
    return rate - torch.xlogy(y, rate) + log_factorial(y), (1.0 - y / rate,)


def negative_binomial(y, r, p):
    """The negative binomial as its ``log_prob`` (``probs`` clamped to ``[tiny, 1 - eps]``,
    logits ``l = log p - log1p(-p)``): ``nll = -[lgamma_ratio(r, y) - lgamma(y + 1) + r
    logsigmoid(-l) + y logsigmoid(l)]``; ``d/dr = -[lgamma_ratio_dr(r, y) + logsigmoid(-l)]``,
    ``d/dp = (r sigmoid(l) - y sigmoid(-l)) / (p (1 - p))`` (zero where the clamp holds)."""
    tiny = torch.finfo(torch.float64).tiny
    pc = p.clamp(tiny, 1.0 - _EPS)
    logits = torch.log(pc) - torch.log1p(-pc)
    ls_neg = F.logsigmoid(-logits)
    nll = -(lgamma_ratio(r, y) - log_factorial(y) + r * ls_neg + y * F.logsigmoid(logits))
    d_p = (r * torch.sigmoid(logits) - y * torch.sigmoid(-logits)) / (pc * (1.0 - pc))
    d_p = torch.where((p >= tiny) & (p <= 1.0 - _EPS), d_p, 0.0)
    return nll, (-(lgamma_ratio_dr(r, y) + ls_neg), d_p)


def negative_binomial_raw(raw: torch.Tensor, y: torch.Tensor, max_logit: float):
    """NLL and raw gradient of the negative binomial with its default links, as its ``nll``:
    ``r = exp(a)``, logits ``b`` (``a`` clamped to ``+-RAW_BOUND``, ``b`` to ``[-RAW_BOUND,
    max_logit]``), ``nll = -[lgamma_ratio(r, y) - lgamma(y + 1) + r logsigmoid(-b) + y
    logsigmoid(b)]``; ``d/da = -r [lgamma_ratio_dr(r, y) + logsigmoid(-b)]``, ``d/db = r
    sigmoid(b) - y sigmoid(-b)``.

    Returns
    -------
    (Tensor[n], Tensor[n, 2])
    """
    a, b = raw[:, 0], raw[:, 1]
    r = torch.exp(a.clamp(-RAW_BOUND, RAW_BOUND))
    bc = b.clamp(-RAW_BOUND, max_logit)
    ls_neg = F.logsigmoid(-bc)
    nll = -(lgamma_ratio(r, y) - log_factorial(y) + r * ls_neg + y * F.logsigmoid(bc))
    g_a = torch.where(_inside(a), -r * (lgamma_ratio_dr(r, y) + ls_neg), 0.0)
    g_b = torch.where(_inside(b, max_logit),
                      r * torch.sigmoid(bc) - y * torch.sigmoid(-bc), 0.0)
    return nll, torch.stack([g_a, g_b], dim=0).T


# ---------------------------------------------------------------------------- zero mixtures
def zero_mixture_raw(base_nll_grad, raw_gate: torch.Tensor, y: torch.Tensor, inflated: bool):
    """NLL and gradient of ``g delta_0 + (1 - g) G`` from the base law's, with the gate's
    sigmoid link (``b`` its raw score, clamped to ``+-RAW_BOUND``; ``log g = logsigmoid(b)``).

    ``base_nll_grad(v) -> (nll Tensor[n], grad Tensor[n, K-1])`` is the base's NLL and raw
    gradient at the values ``v``.  Zero-adjusted (hurdle): a zero costs ``-log g`` (gradient
    ``g - 1`` in ``b``), a positive ``y`` costs ``-log(1 - g)`` plus the base's NLL (gradient
    ``g`` in ``b``).  Zero-inflated: a zero costs ``-log(g + (1 - g) q0)`` with ``q0 = G(0)``;
    with the posterior probability of a structural zero ``z = g / (g + (1 - g) q0)`` its
    gradient is ``(1 - z)`` times the base's at 0 and ``g - z`` in ``b`` (Lambert 1992, sec. 2).

    Returns
    -------
    (Tensor[n], Tensor[n, K])
    """
    b = raw_gate.clamp(-RAW_BOUND, RAW_BOUND)
    inside = _inside(raw_gate)
    log_g, log_1mg = F.logsigmoid(b), F.logsigmoid(-b)
    g = torch.sigmoid(b)
    # Derived from y alone, the same tensors every round (terms of the base that depend on y
    # only, such as log y!, are then remembered too).
    zero = remembered(y, "is_zero", lambda t: t == 0)
    nll_pos, grad_pos = base_nll_grad(
        remembered(y, "zero_to_one", lambda t: torch.where(t == 0, torch.ones_like(t), t)))
    if inflated:
        nll0, grad0 = base_nll_grad(remembered(y, "zeros", torch.zeros_like))
        lse = torch.logaddexp(log_g, log_1mg - nll0)
        post = torch.exp(log_g - lse)
        nll_zero, gate_zero, grad_zero = -lse, g - post, (1.0 - post) * grad0.T
    else:
        nll_zero, gate_zero, grad_zero = -log_g, g - 1.0, torch.zeros((), dtype=g.dtype,
                                                                   device=g.device)
    nll = torch.where(zero, nll_zero, nll_pos - log_1mg)
    g_gate = torch.where(zero & inside, gate_zero, torch.where(inside, g, 0.0))
    # The gradients as (K - 1, n) rows (the layout the base's come in): contiguous passes.
    out = torch.empty((grad_pos.shape[1] + 1, len(y)), dtype=nll.dtype, device=nll.device)
    torch.where(zero, grad_zero, grad_pos.T, out=out[:-1])
    out[-1] = g_gate
    return nll, out.T
