"""The Dirichlet family for compositions: ``y`` rows of ``d >= 2`` positive parts summing to 1.

``y ~ Dirichlet(alpha)`` with ``d`` boosted outputs ``concentration_0 .. concentration_{d-1}``
(``log`` of ``alpha_j``, ``exp`` links).  The density is taken with respect to the first
``d - 1`` parts (torch's and scipy's convention), so its log-likelihood is comparable with
that of any other density of those ``d - 1`` parts.

Closed forms: mean ``alpha / alpha_0`` (``alpha_0 = sum_j alpha_j``), covariance
``(diag(m) - m m^T) / (alpha_0 + 1)`` with ``m`` the mean, margins ``Beta(alpha_j,
alpha_0 - alpha_j)``, and the expected Fisher information in ``alpha``,
``diag(psi'(alpha)) - psi'(alpha_0) 1 1^T`` (``psi'`` the trigamma function; Minka 2000,
"Estimating a Dirichlet distribution", eq. 15), which the ``exp`` links turn into
``diag(alpha) I(alpha) diag(alpha)`` on the raw scale.  The start values are the numerical
weighted MLE from the moment estimates.
"""

from __future__ import annotations

import numpy as np
import torch

from .base import as_float64_tensor
from .multivariate import VectorFamily
from .numerics.stats import weighted_mean_var
from .registry import register
from .support import Support

__all__ = ["Dirichlet", "SIMPLEX_TOL"]

#: How far a row's sum may lie from 1 (absolute): rows of float64 shares summed in another
#: order differ from 1 by about 1e-16 per part.
SIMPLEX_TOL = 1e-9


@register
class Dirichlet(VectorFamily):
    """Dirichlet family for compositions (module docstring).

    Examples
    --------
    >>> import distboost as db
    >>> db.families.get("dirichlet").with_dim(3).param_names
    ('concentration_0', 'concentration_1', 'concentration_2')
    """

    name = "dirichlet"
    reference = "`dirichlet(alpha=concentration)`"
    doc_notes = {
        "parameters": "concentration_j (exp), y of shape (n, d)",
        "support": "rows of positive parts summing to 1",
        "crps": "none (energy and variogram scores)",
        "fisher": "closed form (trigamma)",
    }
    torch_class = torch.distributions.Dirichlet
    structured_names = ("concentration",)
    support = Support(low=0.0, high=1.0)

    def flat_names(self, d):
        return {f"concentration_{j}": "exp" for j in range(d)}

    def check_rows(self, y):
        """Rows must have positive parts summing to 1 within :data:`SIMPLEX_TOL`."""
        n = y.shape[0]
        nonpos = (y <= 0).any(axis=1)
        if nonpos.any():
            raise ValueError(
                f"Target y has {int(nonpos.sum())} of {n} rows with a part <= 0; family "
                "'dirichlet' needs every part positive (its density is 0 or infinite at a "
                "zero part): replace zeros first, e.g. by a small share taken from the others."
            )
        off = np.abs(y.sum(axis=1) - 1.0) > SIMPLEX_TOL
        if off.any():
            first = y.sum(axis=1)[off][:3].tolist()
            raise ValueError(
                f"Target y has {int(off.sum())} of {n} rows whose parts do not sum to 1 "
                f"(within {SIMPLEX_TOL:g}; sums e.g. {first}); family 'dirichlet' models "
                "compositions: divide each row by its sum."
            )

    def structure(self, params):
        d = self._require_dim()
        alpha = torch.stack([as_float64_tensor(params[f"concentration_{j}"])
                             for j in range(d)], dim=-1)
        return {"concentration": alpha}

    def flatten(self, structured):
        d = self._require_dim()
        alpha = np.asarray(structured["concentration"], dtype=np.float64)
        return {f"concentration_{j}": alpha[..., j] for j in range(d)}

    def log_prob(self, params, y):
        return self.distribution(params).log_prob(as_float64_tensor(y))

    def mean(self, params):
        alpha = self.structure(params)["concentration"]
        return alpha / alpha.sum(-1, keepdim=True)

    def covariance(self, params):
        alpha = self.structure(params)["concentration"]
        total = alpha.sum(-1, keepdim=True)
        m = alpha / total
        return (torch.diag_embed(m) - m.unsqueeze(-1) * m.unsqueeze(-2)) \
            / (total.unsqueeze(-1) + 1.0)

    def marginal(self, params, j):
        from .registry import get

        j = self.part_index(j)
        alpha = self.structure(params)["concentration"]
        a = alpha[..., j]
        return get("beta"), {"concentration1": a, "concentration0": alpha.sum(-1) - a}

    def fisher_natural(self, params):
        """``diag(psi'(alpha)) - psi'(alpha_0) 1 1^T``, shape (n, d, d)."""
        alpha = self.structure(params)["concentration"]
        total = torch.special.polygamma(1, alpha.sum(-1))
        return torch.diag_embed(torch.special.polygamma(1, alpha)) \
            - total[..., None, None] * torch.ones_like(alpha).unsqueeze(-1) \
            * torch.ones_like(alpha).unsqueeze(-2)

    def start_values(self, y, w):
        """Moment estimates: the weighted mean shares times ``alpha_0`` from the variance of
        the first part, ``m (1 - m) / v - 1`` (Minka 2000, eq. 21)."""
        m = w @ y
        _, v = weighted_mean_var(y[:, 0], w)
        total = m[0] * (1.0 - m[0]) / v - 1.0 if v > 0 else 10.0
        total = float(np.clip(total, 1e-2, 1e6))
        return {f"concentration_{j}": float(total * m[j]) for j in range(y.shape[1])}
