"""Families for targets in the open unit interval: beta."""

from __future__ import annotations

import scipy.special as sc
import torch
import torch.distributions as D

from .base import Family, info_matrix
from .numerics import crps as _crps
from .numerics import likelihood as _scores
from .numerics.stats import scipy_elementwise, weighted_mean_var
from .registry import register
from .support import UNIT_INTERVAL

__all__ = ["Beta"]


@register
class Beta(Family):
    """Beta family on (0, 1) with ``concentration1`` (scipy's ``a``) and ``concentration0``
    (scipy's ``b``).  torch has no ``Beta.cdf``: the cdf and the exact quantile function come
    from ``scipy.special.betainc`` / ``betaincinv`` (prediction time, no gradient)."""

    name = "beta"
    reference = "`beta(a=concentration1, b=concentration0)`"
    closed_form_crps = True
    crps_formula = staticmethod(_crps.beta)
    score_formula = staticmethod(_scores.beta)
    torch_class = D.Beta
    param_names = ("concentration1", "concentration0")
    support = UNIT_INTERVAL

    def start_values(self, y, w):
        mean, var = weighted_mean_var(y, w)
        common = mean * (1.0 - mean) / var - 1.0 if var > 0 else 10.0
        common = max(common, 1e-2)
        return {"concentration1": mean * common, "concentration0": (1.0 - mean) * common}

    def fisher_natural(self, params):
        """``[[psi'(a) - psi'(a+b), -psi'(a+b)], [-psi'(a+b), psi'(b) - psi'(a+b)]]``
        (Johnson, Kotz & Balakrishnan 1995, ch. 25, eq. 25.34)."""
        a, b = params["concentration1"], params["concentration0"]
        tab = torch.special.polygamma(1, a + b)
        return info_matrix([[torch.special.polygamma(1, a) - tab, -tab],
                            [-tab, torch.special.polygamma(1, b) - tab]])

    def cdf(self, params, y):
        y = torch.as_tensor(y, dtype=torch.float64).clamp(0.0, 1.0)
        return scipy_elementwise(sc.betainc, params["concentration1"], params["concentration0"], y)

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        return scipy_elementwise(
            sc.betaincinv, params["concentration1"], params["concentration0"], q
        )
