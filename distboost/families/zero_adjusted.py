"""Zero-adjusted (hurdle) families for positive targets with exact zeros:
``zero_adjusted_gamma`` and ``zero_adjusted_lognormal`` (GAMLSS's ZAGA and ZALN; Rigby &
Stasinopoulos 2005).

A zero has probability ``gate``; a positive value has the density ``(1 - gate) g(y)`` of the
gamma (``concentration``, ``rate``) or log-normal (``loc``, ``scale``) law.  The likelihood
mixes a probability (zeros) and a density (positive values): its values are comparable with
another zero-adjusted family's, not with a density's or a probability mass function's, so
:func:`distboost.compare_families` ranks them by CRPS against other kinds (``family_kind`` is
``"mixed"``).  The likelihood factorises: the weighted MLE is the share of zeros and the
base's MLE on the positive rows.  Closed-form CRPS (from the base's) and Fisher information:
:mod:`distboost.families.zero_mixture`.
"""

from __future__ import annotations

from .numerics import crps as _crps
from .positive import Gamma, LogNormal
from .registry import register
from .support import NONNEGATIVE
from .zero_mixture import ZeroMixture, ZeroMixtureDistribution, zero_mixture_crps

__all__ = ["ZeroAdjustedGamma", "ZeroAdjustedLogNormal"]


@register
class ZeroAdjustedGamma(ZeroMixture):
    """``gate delta_0 + (1 - gate) Gamma(concentration, rate)`` (GAMLSS ZAGA, with torch's
    gamma parametrisation instead of GAMLSS's mean and coefficient of variation)."""

    name = "zero_adjusted_gamma"
    reference = "GAMLSS `ZAGA` (other parametrisation)"
    base_family = Gamma
    inflated = False
    point_mass = 0.0
    closed_form_crps = True
    crps_formula = staticmethod(zero_mixture_crps(_crps.gamma))
    torch_class = ZeroMixtureDistribution
    param_names = ("concentration", "rate", "gate")
    default_links = {"concentration": "exp", "rate": "exp", "gate": "sigmoid"}
    support = NONNEGATIVE


@register
class ZeroAdjustedLogNormal(ZeroMixture):
    """``gate delta_0 + (1 - gate) LogNormal(loc, scale)`` (GAMLSS ZALN)."""

    name = "zero_adjusted_lognormal"
    reference = "GAMLSS `ZALN`"
    base_family = LogNormal
    inflated = False
    point_mass = 0.0
    closed_form_crps = True
    crps_formula = staticmethod(zero_mixture_crps(_crps.lognormal))
    torch_class = ZeroMixtureDistribution
    param_names = ("loc", "scale", "gate")
    default_links = {"loc": "identity", "scale": "exp", "gate": "sigmoid"}
    support = NONNEGATIVE
