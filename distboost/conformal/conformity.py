"""Conformity scores and the order statistics that make conformal intervals exact.

Three scores of a calibration row ``(x_i, y_i)`` under the model that did not see it:

* ``"cps"``: the PIT ``a_i = F_i(y_i)`` (randomised for a discrete family), the conformity
  score of a conformal predictive system built on the model's whole predictive law (Vovk et
  al. 2017, 2020);
* ``"split"``: the standardised residual ``(y_i - mu_i) / sigma_i`` of the model's mean and
  standard deviation (the normalised split-conformal score, Lei et al. 2018, sec. 5.2), kept
  as ``Phi((y_i - mu_i) / sigma_i)`` so that both share one calibration map;
* ``"cqr"``: ``E_i = max(q_lo(x_i) - y_i, y_i - q_hi(x_i))`` of the model's quantiles at the
  requested level (conformalized quantile regression, Romano, Patterson & Candes 2019, eq. 6).

A new row's interval at level ``1 - alpha`` keeps its score between the order statistics
``k_lo = floor((n + 1) alpha / 2)`` and ``k_hi = ceil((n + 1)(1 - alpha / 2))`` of the ``n``
calibration scores (``-inf`` / ``+inf`` when ``k`` falls outside ``1 .. n``): by
exchangeability each tail holds at most ``alpha / 2`` (Vovk et al. 2005, Prop. 2.3).  With
``K`` fold models (cross-conformal, CV+; Barber, Candes, Ramdas & Tibshirani 2021) the bounds
are order statistics of ``z_i(x) = F_{k(i)}^{-1}(a_i | x)`` over all calibration rows, found
here by bisection on ``y`` of the count ``#{i : a_i <= F_{k(i)}(y | x)}``.

References
----------
Lei, J., G'Sell, M., Rinaldo, A., Tibshirani, R. J. & Wasserman, L. (2018). Distribution-free
predictive inference for regression. JASA 113(523).  Romano, Y., Patterson, E. & Candes, E.
(2019). Conformalized quantile regression. NeurIPS 32.  Barber, R. F., Candes, E. J., Ramdas, A.
& Tibshirani, R. J. (2021). Predictive inference with the jackknife+. Ann. Statist. 49(1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from scipy.special import ndtr

from ..predictive import Predictive

__all__ = ["order_index", "order_statistic", "count_below", "fold_bisection",
           "calibration_scores"]

#: Bisection steps of a cross-conformal bound (a bracket shrinks 2**-80: float64 exact).
_BISECT = 80


def order_index(n: int, level: float, upper: bool) -> int:
    """The 1-based order statistic of ``n`` scores that bounds a two-sided interval at
    ``level``: ``floor((n + 1)(1 - level) / 2)`` below, ``ceil((n + 1)(1 + level) / 2)``
    above; 0 and ``n + 1`` stand for ``-inf`` and ``+inf``."""
    alpha = 1.0 - level
    if upper:
        return min(int(math.ceil((n + 1) * (1.0 - alpha / 2.0) - 1e-9)), n + 1)
    return max(int(math.floor((n + 1) * alpha / 2.0 + 1e-9)), 0)


def order_statistic(sorted_scores: np.ndarray, k: int) -> float:
    """The ``k``-th smallest (1-based) of sorted scores; ``-inf`` for 0, ``inf`` for n + 1."""
    if k <= 0:
        return -math.inf
    if k > sorted_scores.size:
        return math.inf
    return float(sorted_scores[k - 1])


def count_below(tables: Sequence[torch.Tensor], values: Sequence[torch.Tensor]) -> torch.Tensor:
    """``sum_k #{a in tables[k] : a <= values[k]}``, elementwise over the rows of ``values``.

    Parameters
    ----------
    tables : sequence of Tensor
        Sorted calibration scores of each fold.
    values : sequence of Tensor of shape (n,)
        Each fold model's score of the candidate value at every row.
    """
    total = torch.zeros_like(values[0])
    for table, value in zip(tables, values, strict=True):
        total = total + torch.searchsorted(table, value.contiguous(), right=True)
    return total


def fold_bisection(score_at, tables, k: int, low: torch.Tensor, high: torch.Tensor,
                   integer: bool) -> torch.Tensor:
    """The ``k``-th smallest ``z_i(x)`` per row, by bisection on ``y`` in ``[low, high]``.

    Parameters
    ----------
    score_at : callable
        ``score_at(y) -> list of Tensor (n,)``: each fold model's score of ``y`` per row
        (non-decreasing in ``y``).
    tables : sequence of Tensor
        Sorted calibration scores per fold.
    k : int
        1-based order (between 1 and the number of scores).
    low, high : Tensor of shape (n,)
        Brackets with ``count(low) < k <= count(high)``.
    integer : bool
        Search the integers (a discrete target): the smallest integer with count >= k.

    Returns
    -------
    Tensor of shape (n,)
    """
    lo, hi = low.clone(), high.clone()
    for _ in range(_BISECT):
        mid = 0.5 * (lo + hi)
        if integer:
            mid = torch.floor(mid)
        enough = count_below(tables, score_at(mid)) >= k
        hi = torch.where(enough, mid, hi)
        lo = torch.where(enough, lo, mid)
        if integer and bool(((hi - lo) <= 1).all()):
            break
    return hi


def calibration_scores(method: str, dist: Predictive, y: np.ndarray, seed: int) -> np.ndarray:
    """The calibration scores of rows ``y`` under their predictive laws ``dist``."""
    if method == "cps":
        return dist.pit(y, random_state=seed)  # randomised for a discrete family
    if method == "split":
        sd = np.maximum(dist.stddev, 1e-300)
        return ndtr((y - dist.mean) / sd)
    return np.empty(len(y))
