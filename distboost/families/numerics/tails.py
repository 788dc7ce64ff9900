"""Closed-form censored tails: ``-log S(x)`` and ``-log F(x)`` and their gradients.

A right-censored row contributes ``-log S(x)`` to the NLL, ``S = 1 - F`` the survival
function at its lower bound; a left-censored row ``-log F(x)`` at its upper bound.  For the
families below both are elementary, and so are their derivatives: the censored twin
(:class:`~distboost.families.censored.Censored`) evaluates them as the exact rows'
:attr:`~distboost.families.base.Family.score_formula`, without an autograd graph, and keeps
autograd for interval-censored rows and for families without a formula here.

A family points at its formulas with ``sf_formula`` (right censoring) and ``cdf_formula``
(left censoring), optional class attributes read with ``getattr`` (a family without them,
a user's family included, keeps autograd).  Each formula takes the bound ``x`` and the
natural-scale parameters in the family's parameter order (float64 tensors of shape (n,)) and
returns ``(nll, (d nll / d theta_1, ..., d nll / d theta_K))``, the values autograd of the
family's own ``log_sf`` / ``log_cdf`` gives (``tests/families/test_raw_derivatives.py``
compares them to 1e-10 on every censorable family of the case table).

Location-scale laws share one form: with ``z = (x - loc) / s`` and ``nll = m(z)``,
``d nll / d loc = -m'(z) / s`` and ``d nll / d s = -m'(z) z / s``.  The normal tails use
``d/dz log Phi(z) = phi(z) / Phi(z)``, evaluated as ``exp(log phi(z) - log Phi(z))`` with
``log Phi`` from ``torch.special.log_ndtr`` (accurate far in both tails).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["normal_sf", "normal_cdf", "lognormal_sf", "lognormal_cdf", "logistic_sf",
           "logistic_cdf", "gumbel_sf", "gumbel_cdf", "weibull_sf", "weibull_cdf",
           "exponential_sf", "exponential_cdf", "loglogistic_sf", "loglogistic_cdf"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
#: The Gumbel family clamps ``z`` at this value before ``exp(-z)`` (no overflow).
_GUMBEL_LOW = -700.0


# ---------------------------------------------------------------------------- standard tails
def _normal_upper(z):
    """``m = -log Phi(-z)`` (the Normal's ``-log S``) and ``m'(z) = phi(z) / Phi(-z)``."""
    m = -torch.special.log_ndtr(-z)
    return m, torch.exp(m - 0.5 * z * z - _HALF_LOG_2PI)


def _normal_lower(z):
    """``m = -log Phi(z)`` (the Normal's ``-log F``) and ``m'(z) = -phi(z) / Phi(z)``."""
    m = -torch.special.log_ndtr(z)
    return m, -torch.exp(m - 0.5 * z * z - _HALF_LOG_2PI)


def _logistic_upper(z):
    """``m = -log sigmoid(-z)``, ``m' = sigmoid(z)``."""
    return -F.logsigmoid(-z), torch.sigmoid(z)


def _logistic_lower(z):
    """``m = -log sigmoid(z)``, ``m' = -sigmoid(-z)``."""
    return -F.logsigmoid(z), -torch.sigmoid(-z)


def _location_scale(tail):
    def formula(x, loc, scale):
        z = (x - loc) / scale
        m, dm = tail(z)
        d_loc = -dm / scale
        return m, (d_loc, d_loc * z)

    return formula


normal_sf = _location_scale(_normal_upper)
normal_cdf = _location_scale(_normal_lower)
logistic_sf = _location_scale(_logistic_upper)
logistic_cdf = _location_scale(_logistic_lower)


def lognormal_sf(x, loc, scale):
    """The Normal's upper tail of ``log x``."""
    return normal_sf(torch.log(x), loc, scale)


def lognormal_cdf(x, loc, scale):
    """The Normal's lower tail of ``log x``."""
    return normal_cdf(torch.log(x), loc, scale)


# ---------------------------------------------------------------------------- Gumbel
def _gumbel_u(z):
    """``u = exp(-z)`` at ``z`` clamped as the family clamps it, and where the clamp passes
    the gradient."""
    return torch.exp(-z.clamp(min=_GUMBEL_LOW)), z >= _GUMBEL_LOW


def _gumbel_upper(z):
    """``m = -log(1 - exp(-u))``, ``m'(z) = u / expm1(u)``."""
    u, inside = _gumbel_u(z)
    return -torch.log(-torch.expm1(-u)), torch.where(inside, u / torch.expm1(u), 0.0)


def _gumbel_lower(z):
    """``m = u``, ``m'(z) = -u``."""
    u, inside = _gumbel_u(z)
    return u, torch.where(inside, -u, 0.0)


gumbel_sf = _location_scale(_gumbel_upper)
gumbel_cdf = _location_scale(_gumbel_lower)


# ---------------------------------------------------------------------------- positive laws
def weibull_sf(x, scale, conc):
    """``t = (x / scale)^conc``: ``d t / d scale = -conc t / scale``, ``d t / d conc =
    t log(x / scale)``."""
    t = (x / scale) ** conc
    return t, (-conc * t / scale, t * torch.log(x / scale))


def weibull_cdf(x, scale, conc):
    """``-log(1 - exp(-t))``, derivative ``-1 / expm1(t)`` in ``t``."""
    t = (x / scale) ** conc
    dt = -1.0 / torch.expm1(t)
    return -torch.log(-torch.expm1(-t)), (-conc * t / scale * dt, t * torch.log(x / scale) * dt)


def exponential_sf(x, rate):
    """``rate x``."""
    return rate * x, (x,)


def exponential_cdf(x, rate):
    """``-log(1 - exp(-rate x))``, derivative ``-x / expm1(rate x)``."""
    rx = rate * x
    return -torch.log(-torch.expm1(-rx)), (-x / torch.expm1(rx),)


def _loglogistic(tail, x, scale, conc):
    log_ratio = torch.log(x) - torch.log(scale)
    m, dm = tail(conc * log_ratio)
    return m, (-dm * conc / scale, dm * log_ratio)


def loglogistic_sf(x, scale, conc):
    """The logistic upper tail of ``z = conc (log x - log scale)``."""
    return _loglogistic(_logistic_upper, x, scale, conc)


def loglogistic_cdf(x, scale, conc):
    """The logistic lower tail of ``z = conc (log x - log scale)``."""
    return _loglogistic(_logistic_lower, x, scale, conc)
