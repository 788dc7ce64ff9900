"""Scores of censored observations, ``(n, 2)`` bounds ``[lower, upper]`` (see
:mod:`distboost.censored`), for :class:`~distboost.Predictive` and :mod:`distboost.metrics`.

* :func:`censored_log_likelihood`: ``log f(y)`` for an exact row (``lower == upper``),
  ``log(F(upper) - F(lower))`` otherwise; the training likelihood of a ``censored_<family>``
  (:meth:`distboost.families.Censored.nll`, computed in log space in either tail).

The CRPS of bounds is not scored here: the survival CRPS (Avati et al. 2020,
:func:`distboost.metrics.survival_crps`) is a different score, not proper under censoring
(Rindt, Hu, Steinsaltz & Sejdinovic 2022, AISTATS), so ``Predictive.crps`` refuses bounds by
name rather than answer it under the name "crps".

:func:`bounds_of` says when an array is such bounds for a Predictive: the family is a
censored one (``family.kind == "censored"``) and ``y`` has shape ``(n, 2)``.
"""

from __future__ import annotations

import numpy as np
import torch

from ..families import Censored

__all__ = ["bounds_of", "censored_log_likelihood"]


def is_censored(family) -> bool:
    """Whether ``family`` models censored ``(n, 2)`` bounds."""
    return getattr(family, "kind", None) == "censored"


def bounds_of(family, n: int, y) -> np.ndarray | None:
    """``y`` as float64 bounds of shape (n, 2) when ``family`` is censored and ``y`` has that
    shape (a ValueError for NaN bounds, ``lower > upper`` or bounds outside the support, from
    the family's ``validate_y``), else None."""
    if not is_censored(family) or isinstance(y, int | float) or np.ndim(y) != 2:
        return None
    arr = np.asarray(y.detach().cpu().numpy() if isinstance(y, torch.Tensor) else y,
                     dtype=np.float64)
    if arr.shape != (n, 2):
        return None
    return family.validate_y(arr)


def censored_log_likelihood(family, params: dict, bounds: np.ndarray) -> np.ndarray:
    """Log-likelihood of censored bounds per row, shape (n,).

    Parameters
    ----------
    family : Family
        A censored family, or the latent family of the bounds (wrapped in
        :class:`~distboost.families.Censored`).
    params : dict of str to ndarray of shape (n,)
        Natural-scale parameters.
    bounds : ndarray of shape (n, 2)
        ``[lower, upper]``; equal bounds are an exact observation (its log density).

    Returns
    -------
    ndarray of shape (n,)
        ``log f(y)`` for exact rows, ``log(F(upper) - F(lower))`` for the others (0 for
        uninformative ``(-inf, inf)`` rows).
    """
    censored = family if is_censored(family) else Censored(family)
    bounds = censored.validate_y(bounds)
    torch_params = {k: torch.from_numpy(np.array(v, dtype=np.float64))
                    for k, v in params.items()}
    raw = torch.as_tensor(censored.raw_from_params(torch_params))
    with torch.no_grad():
        return -censored.nll(raw, torch.from_numpy(bounds.copy())).numpy()
