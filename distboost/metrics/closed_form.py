"""Closed-form CRPS of the families, one public function each (numpy in, numpy out).

``CRPS(F, y) = int (F(x) - 1{x >= y})^2 dx`` (Matheson & Winkler 1976; Gneiting & Raftery
2007, eq. 20).  The formulas are written once, in torch, in :mod:`distboost.families.numerics.crps`
(where the families' differentiable ``crps`` methods take them); these functions broadcast
their numpy arguments, use torch's parameter names in the registry's order, and return numpy.
``CLOSED_FORMS`` maps the name of every registered family with ``closed_form_crps`` to its
function of ``(y, *params)``.
"""

from __future__ import annotations

import numpy as np
import torch

from ..families import available as _available
from ..families import get as _get
from ..families.numerics import crps as _crps

__all__ = [
    "crps_normal", "crps_lognormal", "crps_gamma", "crps_laplace", "crps_logistic",
    "crps_studentt", "crps_exponential", "crps_gumbel", "crps_beta", "crps_poisson",
    "crps_negative_binomial", "crps_half_normal", "crps_zero_inflated_poisson",
    "crps_zero_inflated_negative_binomial", "crps_zero_adjusted_gamma",
    "crps_zero_adjusted_lognormal", "CLOSED_FORMS",
]


def _numpy(formula, *args):
    """``formula`` on float64 tensors of the broadcast arguments, back to numpy."""
    arrays = np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))
    with torch.no_grad():
        out = formula(*(torch.from_numpy(np.array(a)) for a in arrays)).numpy()
    return out[()] if out.ndim == 0 else out


def crps_normal(y, loc, scale):
    """CRPS of ``N(loc, scale^2)``: ``s [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)]``,
    ``z = (y - loc) / s`` (Gneiting, Raftery, Westveld & Goldman 2005, eq. 5)."""
    return _numpy(_crps.normal, y, loc, scale)


def crps_lognormal(y, loc, scale):
    """CRPS of the log-normal law (Baran & Lerch 2015, eq. 5):
    ``y [2 Phi(w) - 1] - 2 exp(loc + scale^2/2) [Phi(w - scale) + Phi(scale/sqrt 2) - 1]``
    with ``w = (log y - loc) / scale`` (``w = -inf`` for ``y <= 0``)."""
    return _numpy(_crps.lognormal, y, loc, scale)


def crps_gamma(y, concentration, rate):
    """CRPS of ``Gamma(a, rate b)`` (Scheuerer & Moeller 2015, eq. 9; Taillardat et al.
    2016, app. A): ``y [2 F_a(y) - 1] - (a/b) [2 F_{a+1}(y) - 1] - 1 / (b B(1/2, a))``."""
    return _numpy(_crps.gamma, y, concentration, rate)


def crps_laplace(y, loc, scale):
    """CRPS of the Laplace law: ``b [|z| + exp(-|z|) - 3/4]`` (Jordan, Krueger & Lerch 2019,
    app. A)."""
    return _numpy(_crps.laplace, y, loc, scale)


def crps_logistic(y, loc, scale):
    """CRPS of the logistic law: ``s [z - 2 log F(z) - 1]`` with ``F`` the standard logistic
    cdf (Jordan, Krueger & Lerch 2019, app. A); ``-log F(z) = softplus(-z)``."""
    return _numpy(_crps.logistic, y, loc, scale)


def crps_studentt(y, df, loc, scale):
    """CRPS of Student's t with ``df > 1`` (Jordan, Krueger & Lerch 2019, app. A):
    ``s [z (2 F(z) - 1) + 2 f(z) (df + z^2)/(df - 1)
    - 2 sqrt(df) B(1/2, df - 1/2) / ((df - 1) B(1/2, df/2)^2)]``; inf for ``df <= 1``
    (no mean)."""
    return _numpy(_crps.studentt, y, df, loc, scale)


def crps_exponential(y, rate):
    """CRPS of ``Exp(rate)``: ``|y| - 2 F(y) / rate + 1 / (2 rate)`` (Jordan, Krueger &
    Lerch 2019, app. A), i.e. ``y + 2 exp(-rate y)/rate - 3/(2 rate)`` for ``y >= 0``."""
    return _numpy(_crps.exponential, y, rate)


def crps_gumbel(y, loc, scale):
    """CRPS of the Gumbel (maxima) law, the GEV with shape 0 (Friederichs & Thorarinsdottir
    2012, eq. 12): ``s [-z + 2 E1(exp(-z)) + gamma - log 2]``, ``E1`` the exponential
    integral and gamma Euler's constant."""
    return _numpy(_crps.gumbel, y, loc, scale)


def crps_beta(y, concentration1, concentration0):
    """CRPS of ``Beta(a, b)`` (Taillardat et al. 2016, app. A; Jordan, Krueger & Lerch 2019):
    ``y [2 F(y) - 1] + a/(a+b) [1 - 2 F_{a+1,b}(y)] - 2/(a+b) B(2a, 2b) / B(a, b)^2``."""
    return _numpy(_crps.beta, y, concentration1, concentration0)


def crps_poisson(y, rate):
    """CRPS of ``Poisson(rate)`` (Wei & Held 2014; Jordan, Krueger & Lerch 2019):
    ``(y - l)(2 F(y) - 1) + 2 l f(floor y) - l exp(-2l) [I0(2l) + I1(2l)]``."""
    return _numpy(_crps.poisson, y, rate)


def crps_negative_binomial(y, total_count, probs):
    """CRPS of the negative binomial with torch's ``probs`` (scipy's ``p = 1 - probs``)
    (Wei & Held 2014; Jordan, Krueger & Lerch 2019, app. A): with ``n = total_count``,
    ``y (2 F(y) - 1) - n (1-p)/p^2 [p (2 F_{n+1}(y - 1) - 1)
    + 2F1(n + 1, 1/2; 2; -4 (1-p)/p^2)]``."""
    return _numpy(_crps.negative_binomial, y, total_count, probs)


def crps_half_normal(y, scale):
    """CRPS of the half-normal ``|N(0, scale^2)|``: ``y (2 F(y) - 1) + 4 s phi(y / s)
    - 2 s / sqrt(pi)`` for ``y >= 0`` (see :func:`distboost.families.numerics.crps.half_normal`)."""
    return _numpy(_crps.half_normal, y, scale)


def _zero_mixture(name, y, *params):
    return _numpy(_get(name).crps_formula, y, *params)


def crps_zero_inflated_poisson(y, rate, gate):
    """CRPS of ``gate delta_0 + (1 - gate) Poisson(rate)``: ``gate |y| + (1 - gate)
    CRPS_P(y) - gate (1 - gate) CRPS_P(0)`` (:mod:`distboost.families.zero_mixture`)."""
    return _zero_mixture("zero_inflated_poisson", y, rate, gate)


def crps_zero_inflated_negative_binomial(y, total_count, probs, gate):
    """CRPS of ``gate delta_0 + (1 - gate) NB(total_count, probs)`` (torch's ``probs``), from
    the negative binomial's closed form (:mod:`distboost.families.zero_mixture`)."""
    return _zero_mixture("zero_inflated_negative_binomial", y, total_count, probs, gate)


def crps_zero_adjusted_gamma(y, concentration, rate, gate):
    """CRPS of ``gate delta_0 + (1 - gate) Gamma(concentration, rate)``, from the gamma's
    closed form (:mod:`distboost.families.zero_mixture`)."""
    return _zero_mixture("zero_adjusted_gamma", y, concentration, rate, gate)


def crps_zero_adjusted_lognormal(y, loc, scale, gate):
    """CRPS of ``gate delta_0 + (1 - gate) LogNormal(loc, scale)``, from the log-normal's
    closed form (:mod:`distboost.families.zero_mixture`)."""
    return _zero_mixture("zero_adjusted_lognormal", y, loc, scale, gate)


def _closed_forms() -> dict:
    """Registered families with ``closed_form_crps`` -> their public numpy function."""
    out = {}
    for name in _available():
        family = _get(name)
        if family.closed_form_crps:
            out[name] = globals().get(f"crps_{name}") or (
                lambda y, *params, _f=family.crps_formula: _numpy(_f, y, *params))
    return out


#: Family name -> closed-form CRPS taking ``(y, *params)`` in the family's parameter order,
#: for every registered family whose ``closed_form_crps`` is True.
CLOSED_FORMS = _closed_forms()
