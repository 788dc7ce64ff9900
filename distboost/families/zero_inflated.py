"""Zero-inflated count families: ``zero_inflated_poisson`` and
``zero_inflated_negative_binomial``.

``gate`` is the probability of a structural zero (Pyro's ``ZeroInflatedPoisson`` /
``ZeroInflatedNegativeBinomial`` names and parametrisation): ``P(0) = gate + (1 - gate) G(0)``
and ``P(k) = (1 - gate) G(k)`` for ``k >= 1``, with ``G`` the Poisson (``rate``) or torch's
negative binomial (``total_count``, ``probs``).  statsmodels' ``zipoisson(mu=rate,
w=gate)`` and ``zinegbin(mu=total_count probs / (1 - probs), alpha=1 / total_count, p=2,
w=gate)`` are the same laws.  Likelihood in log space, closed-form CRPS and Fisher
information: :mod:`distboost.families.zero_mixture`.
"""

from __future__ import annotations

from .discrete import NegativeBinomial, Poisson
from .numerics import crps as _crps
from .registry import register
from .support import COUNTS
from .zero_mixture import ZeroMixture, ZeroMixtureDistribution, zero_mixture_crps

__all__ = ["ZeroInflatedPoisson", "ZeroInflatedNegativeBinomial"]


@register
class ZeroInflatedPoisson(ZeroMixture):
    """Zero-inflated Poisson (Lambert 1992): ``gate delta_0 + (1 - gate) Poisson(rate)``.

    Its CRPS is the exact sum ``sum_k (F(k) - 1{k >= y})^2`` in closed form,
    ``gate y + (1 - gate) CRPS_P(y) - gate (1 - gate) CRPS_P(0)`` with the Poisson closed form
    ``CRPS_P`` (Wei & Held 2014); tests compare it with the summation.
    """

    name = "zero_inflated_poisson"
    reference = "statsmodels `zipoisson(mu=rate, w=gate)`"
    base_family = Poisson
    inflated = True
    closed_form_crps = True
    crps_formula = staticmethod(zero_mixture_crps(_crps.poisson))
    torch_class = ZeroMixtureDistribution
    param_names = ("rate", "gate")
    default_links = {"rate": "exp", "gate": "sigmoid"}
    support = COUNTS
    discrete = True


@register
class ZeroInflatedNegativeBinomial(ZeroMixture):
    """Zero-inflated negative binomial: ``gate delta_0 + (1 - gate) NB(total_count, probs)``
    with torch's ``probs`` (the mean of the NB part is ``total_count probs / (1 - probs)``).
    Closed-form CRPS from the negative binomial's (Wei & Held 2014)."""

    name = "zero_inflated_negative_binomial"
    reference = ("statsmodels `zinegbin(mu=total_count probs / (1 - probs), alpha=1 / total_count, "
                 "p=2, w=gate)`")
    base_family = NegativeBinomial
    inflated = True
    closed_form_crps = True
    crps_formula = staticmethod(zero_mixture_crps(_crps.negative_binomial))
    torch_class = ZeroMixtureDistribution
    param_names = ("total_count", "probs", "gate")
    default_links = {"total_count": "exp", "probs": "sigmoid", "gate": "sigmoid"}
    support = COUNTS
    discrete = True
