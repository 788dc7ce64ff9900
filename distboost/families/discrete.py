"""Count families (targets in {0, 1, 2, ...}): poisson, negative_binomial.

The negative binomial likelihood is computed in log space from the logits of ``probs``
(``log p = logsigmoid(logits)``, ``log(1 - p) = logsigmoid(-logits)``) with a cancellation-free
``log Gamma(r + y) - log Gamma(r)``, and its expected Fisher information is in closed form up
to one quadrature (:func:`~distboost.families.numerics.special.nb_information`): a Monte Carlo
estimate of this nearly singular 2 x 2 matrix (``total_count`` and ``probs`` move the mean
together) made the natural step diverge.

torch has no cdf for either; it comes from scipy.special (``pdtr``, ``betainc``) at
prediction time.  Quantiles are the smallest integer ``k`` with ``cdf(k) >= q`` (integer
bisection in :mod:`distboost.families.numerics.inversion`).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import torch
import torch.distributions as D

from ..links import RAW_BOUND
from .base import Family, info_matrix
from .numerics import crps as _crps
from .numerics import likelihood as _scores
from .numerics.nb_table import nb_orth_information
from .numerics.one_parameter import OneParameterNumpy
from .numerics.special import lgamma_ratio
from .numerics.stats import scipy_elementwise, weighted_mean_var
from .registry import register
from .support import COUNTS

__all__ = ["Poisson", "NegativeBinomial", "RATE_FLOOR"]

#: Smallest start value of a Poisson rate (an all-zero target would give rate 0, log -inf).
RATE_FLOOR = 1e-8
#: Largest logit of ``probs`` the sigmoid link reaches (it stops at ``1 - eps``).
_MAX_LOGIT = math.log((1.0 - np.finfo(np.float64).eps) / np.finfo(np.float64).eps)


def _nb_log_pmf(r: torch.Tensor, logits: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``log P(y)`` of torch's negative binomial (``total_count`` ``r``, ``probs`` =
    ``sigmoid(logits)``): ``log C(y + r - 1, y) + r log(1 - p) + y log p`` in log space."""
    y = torch.as_tensor(y, dtype=r.dtype, device=r.device)
    return (lgamma_ratio(r, y) - torch.lgamma(y + 1.0)
            + r * torch.nn.functional.logsigmoid(-logits)
            + y * torch.nn.functional.logsigmoid(logits))


@register
class Poisson(OneParameterNumpy, Family):
    """Poisson family with mean ``rate``."""

    name = "poisson"
    reference = "`poisson(mu=rate)`"
    closed_form_crps = True
    crps_formula = staticmethod(_crps.poisson)
    score_formula = staticmethod(_scores.poisson)
    torch_class = D.Poisson
    param_names = ("rate",)
    support = COUNTS
    discrete = True
    default_links = {"rate": "exp"}

    #: Closed-form weighted MLE: the weighted mean, floored at :data:`RATE_FLOOR`.
    closed_form_mle = True

    def start_values(self, y, w):
        return {"rate": max(float(np.sum(w * y)), RATE_FLOOR)}

    def fisher_natural(self, params):
        """``1 / rate``."""
        return params["rate"].reciprocal().unsqueeze(-1)

    def cdf(self, params, y):
        k = torch.floor(torch.as_tensor(y, dtype=torch.float64))
        out = scipy_elementwise(sc.pdtr, k.clamp_min(0.0), params["rate"])
        return torch.where(k < 0, torch.zeros_like(out), out)


@register
class NegativeBinomial(Family):
    """Negative binomial family with ``total_count`` (r > 0) and ``probs`` (p in (0, 1)).

    torch's parametrisation: ``P(k) = C(k + r - 1, k) p^k (1 - p)^r``, mean ``r p / (1 - p)``,
    variance ``r p / (1 - p)^2``.  **torch's ``probs`` is 1 - scipy's ``p``**:
    ``scipy.stats.nbinom(n=total_count, p=1 - probs)`` is the same law.
    """

    name = "negative_binomial"
    reference = "`nbinom(n=total_count, p=1 - probs)`"
    doc_notes = {
        "fisher": "closed form (one 48-node quadrature)",
    }
    closed_form_crps = True
    crps_formula = staticmethod(_crps.negative_binomial)
    score_formula = staticmethod(_scores.negative_binomial)
    torch_class = D.NegativeBinomial
    param_names = ("total_count", "probs")
    support = COUNTS
    discrete = True
    default_links = {"total_count": "exp", "probs": "sigmoid"}

    def distribution(self, params):
        return D.NegativeBinomial(total_count=params["total_count"], probs=params["probs"],
                                  validate_args=False)

    def _default_links(self) -> bool:
        return (self.links["total_count"].name == "exp"
                and self.links["probs"].name == "sigmoid")

    def log_prob(self, params, y):
        """Log mass in log space (see :func:`_nb_log_pmf`); ``probs`` is kept inside
        ``[tiny, 1 - eps]`` as the sigmoid link keeps it."""
        p = params["probs"].clamp(torch.finfo(torch.float64).tiny,
                                  1.0 - torch.finfo(torch.float64).eps)
        return _nb_log_pmf(params["total_count"], torch.log(p) - torch.log1p(-p), y)

    def nll(self, raw, y):
        """With the default links, straight from the raw scores: ``r = exp(raw_0)`` and the
        logits of ``probs`` are ``raw_1`` itself (no round trip through ``p``, whose
        ``1 - p`` loses its digits as ``p -> 1``); both clamped as the links clamp them."""
        if not self._default_links():
            return super().nll(raw, y)
        r = torch.exp(raw[:, 0].clamp(-RAW_BOUND, RAW_BOUND))
        logits = raw[:, 1].clamp(-RAW_BOUND, _MAX_LOGIT)
        return -_nb_log_pmf(r, logits, y)

    def raw_derivatives(self, raw, y, floor=None):
        """With the default links, the NLL and gradient straight from the raw scores as
        :meth:`nll` computes them
        (:func:`distboost.families.numerics.likelihood.negative_binomial_raw`),
        the Fisher information of :meth:`fisher_information`; other links take the general
        chain rule."""
        if not self._default_links():
            return super().raw_derivatives(raw, y, floor)
        r = _scores.floored(raw, floor)
        nll, grad = _scores.negative_binomial_raw(r, y, _MAX_LOGIT)
        return nll, _scores.below_floor(grad, raw, floor), self.fisher_information(r)

    def fisher_natural(self, params):
        """Expected information of ``(total_count r, probs p)`` (Lawless 1987, sec. 2):
        ``I_rr = E[psi'(r) - psi'(r + Y)]``
        (:func:`~distboost.families.numerics.special.nb_information`; its part at a fixed mean
        from the table of :func:`~distboost.families.numerics.nb_table.nb_orth_information`),
        ``I_rp = 1 / (1 - p)``, ``I_pp = r / (p (1 - p)^2)``."""
        r, p = params["total_count"], params["probs"]
        odds = p / (1.0 - p)
        # I_rr = I_rr|mean + p / r (nb_information), I_rr|mean from the table.
        i_rr = nb_orth_information(r, odds) + odds / (r * (1.0 + odds))
        i_rp = 1.0 / (1.0 - p)
        i_pp = r / (p * (1.0 - p) ** 2)
        return info_matrix([[i_rr, i_rp], [i_rp, i_pp]])

    def fisher_information(self, raw):
        """On the raw scale with the default links (exp, sigmoid): ``[[A + r p, r p],
        [r p, r p]]`` with ``A = r^2 I_rr|mean``
        (:func:`~distboost.families.numerics.special.nb_information`), the chain rule of
        :meth:`fisher_natural` in closed form (no ``1 / (1 - p)``, which overflows as
        ``p -> 1``).  ``r p`` is ``r`` times the mean over ``r + mean``; ``A``, the
        information about ``log r`` at a fixed mean, is computed directly, so the matrix is
        positive semi-definite even in the Poisson limit, where ``A`` is about
        ``mean^2 / (2 r^2)``, far below ``r p``; it is read from a lazily filled table of
        the quadrature (:func:`~distboost.families.numerics.nb_table.nb_orth_information`, 8 x
        cheaper per row).  Other links take the general path."""
        if not self._default_links():
            return super().fisher_information(raw)
        a = raw[:, 0].clamp(-RAW_BOUND, RAW_BOUND)
        b = raw[:, 1].clamp(-RAW_BOUND, _MAX_LOGIT)
        r = torch.exp(a)
        orth = nb_orth_information(r, torch.exp(b))
        rp = r * torch.sigmoid(b)
        return info_matrix([[r * r * orth + rp, rp], [rp, rp]])

    def start_values(self, y, w):
        mean, var = weighted_mean_var(y, w)
        mean = max(mean, RATE_FLOOR)
        # Method of moments; under-dispersed data (var <= mean) have no NB moment fit:
        # start near the Poisson limit (large r).
        r = mean * mean / (var - mean) if var > mean * (1 + 1e-6) else 1e4
        r = min(max(r, 1e-3), 1e6)
        return {"total_count": r, "probs": mean / (mean + r)}

    def cdf(self, params, y):
        k = torch.floor(torch.as_tensor(y, dtype=torch.float64))
        r, p = params["total_count"], params["probs"]
        out = scipy_elementwise(sc.betainc, r, k.clamp_min(0.0) + 1.0, 1.0 - p)
        return torch.where(k < 0, torch.zeros_like(out), out)
