"""Small weighted statistics and scipy bridges shared by the family definitions."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["weighted_mean_var", "weighted_quantile", "scipy_elementwise"]


def weighted_mean_var(y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted mean and (biased, MLE) variance; ``w`` sums to one."""
    mean = float(np.sum(w * y))
    return mean, float(np.sum(w * (y - mean) ** 2))


def weighted_quantile(y: np.ndarray, w: np.ndarray, q: float) -> float:
    """Weighted quantile: the smallest ``y`` whose cumulative weight reaches ``q``."""
    order = np.argsort(y, kind="stable")
    cum = np.cumsum(w[order])
    idx = int(np.searchsorted(cum, q * cum[-1], side="left"))
    return float(y[order][min(idx, y.size - 1)])


def scipy_elementwise(fn, *args) -> torch.Tensor:
    """Apply a vectorised scipy.special function to (broadcast) tensors; float64 tensor out.

    Used at prediction time for the distribution functions torch lacks (Student-t, beta,
    count cdfs); the result carries no gradient.
    """
    arrays = [a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
              for a in args]
    return torch.from_numpy(np.asarray(fn(*np.broadcast_arrays(*arrays)), dtype=np.float64))
