"""Count families (targets in {0, 1, 2, ...}): poisson, negative_binomial.

torch has no cdf for either; it comes from scipy.special (``pdtr``, ``betainc``) at
prediction time.  Quantiles are the smallest integer ``k`` with ``cdf(k) >= q`` (integer
bisection in :mod:`distboost._inversion`).
"""

from __future__ import annotations

import numpy as np
import scipy.special as sc
import torch
import torch.distributions as D

from ._stats import scipy_elementwise, weighted_mean_var
from .base import Family
from .registry import register
from .support import COUNTS

__all__ = ["Poisson", "NegativeBinomial", "RATE_FLOOR"]

#: Smallest start value of a Poisson rate (an all-zero target would give rate 0, log -inf).
RATE_FLOOR = 1e-8


@register
class Poisson(Family):
    """Poisson family with mean ``rate``."""

    name = "poisson"
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
    torch_class = D.NegativeBinomial
    param_names = ("total_count", "probs")
    support = COUNTS
    discrete = True
    default_links = {"total_count": "exp", "probs": "sigmoid"}

    def distribution(self, params):
        return D.NegativeBinomial(total_count=params["total_count"], probs=params["probs"],
                                  validate_args=False)

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
