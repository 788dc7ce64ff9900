"""Real-valued location-scale families: normal, laplace, logistic, gumbel, studentt."""

from __future__ import annotations

import numpy as np
import torch
import torch.distributions as D

from .base import Family, _normalise_weights
from .registry import register
from .support import REAL

__all__ = ["Normal"]


def _weighted_mean_var(y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    mean = float(np.sum(w * y))
    var = float(np.sum(w * (y - mean) ** 2))
    return mean, var


@register
class Normal(Family):
    """Normal (Gaussian) family, ``N(loc, scale^2)``; links identity and exp by default."""

    name = "normal"
    torch_class = D.Normal
    param_names = ("loc", "scale")
    support = REAL

    def init(self, y, sample_weight=None):
        """Closed-form weighted MLE: weighted mean and (biased) weighted standard deviation."""
        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.size)
        mean, var = _weighted_mean_var(y, w)
        return {"loc": mean, "scale": float(np.sqrt(var))}

    def start_values(self, y, w):
        mean, var = _weighted_mean_var(y, w)
        return {"loc": mean, "scale": float(np.sqrt(var))}

    def fisher_natural(self, params):
        """``diag(1 / scale^2, 2 / scale^2)`` (e.g. Lehmann & Casella 1998, ex. 2.6.8)."""
        inv_var = params["scale"].pow(-2)
        return torch.stack([inv_var, 2.0 * inv_var], dim=-1)  # diagonal
