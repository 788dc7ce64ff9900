"""Dispersion calibration: one constant shift of the dispersion parameter's raw score.

Trees fitted to the training rows see residuals smaller than new rows will have, so a boosted
scale is too small by a common factor (10-25 % on the UCI data).  One number fitted on rows
the trees did not see removes that optimism: the constant ``delta`` added to the raw score of
``Family.dispersion_param`` (e.g. the Normal's log scale) that minimises the validation loss,
the regression analogue of temperature scaling.  :class:`DispersionSearch` finds it cheaply
enough to judge every boosting round after its own calibration; the estimators store the
shift (``dispersion_shift_``) and add it at prediction time.

References
----------
Guo, Pleiss, Sun & Weinberger (2017), On calibration of modern neural networks, ICML
(temperature scaling); Levi, Gispan, Giladi & Fetaya (2022), Evaluating and calibrating
uncertainty prediction in regression tasks, Sensors 22 (std scaling); Brophy & Lowd (2022),
Instance-based uncertainty estimation for gradient-boosted regression trees, NeurIPS (a scalar
variance factor tuned on validation data).
"""

from __future__ import annotations

import math

import numpy as np
import torch

__all__ = ["MAX_DISPERSION_SHIFT", "DispersionSearch", "best_dispersion_shift",
           "apply_shift"]

#: Bound of the dispersion calibration's raw shift (a factor of 20 on a log-linked scale).
MAX_DISPERSION_SHIFT = 3.0


#: Offsets of the batched grid around the current guess in :class:`DispersionSearch`.
_SHIFT_GRID = np.linspace(-0.2, 0.2, 9)


class DispersionSearch:
    """Finds the constant shift of raw column ``k`` that minimises the weighted mean loss.

    Each call first evaluates ``mean_w loss(raw + delta e_k, data)`` at ``center``, its two
    neighbours (spacing 0.0125) and ``delta = 0`` in one batched torch call; when the centre
    has the least loss of the three (the usual case when ``center`` is the previous round's
    shift) the vertex of the parabola through them is the answer (the loss is smooth in
    ``delta``; convex for the location-scale families, so that the fine grid's minimum would
    be the same point).  Otherwise nine shifts around ``center`` are evaluated; when they
    bracket the minimum, the vertex through the best and its neighbours, else a grid four
    times coarser moves until it brackets the minimum and the fine grid is laid around it.
    The tiled data are built once, so a call costs little more than one batched loss: cheap
    enough for every boosting round.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``.
    data : dict of str to Tensor
        Row-aligned tensors.
    weight : ndarray of shape (n,) or None
    k : int or list of int
        Column of the dispersion parameter (columns shifted together, e.g. the log-diagonal
        of a Cholesky factor).
    max_shift : float
        Bound of ``|delta|``.
    profile : callable, optional
        ``profile(raw: Tensor[n, K], data)``: the loss as a closed-form function of the
        shift (:meth:`distboost.families.Family.dispersion_profile`, through
        :meth:`distboost.objective.FamilyObjective.dispersion_profile`), or None where it
        does not hold.  When given and it holds, the shift is the exact minimiser, from one
        pass over the rows, and the grid is not evaluated.
    """

    def __init__(self, loss, data: dict, weight, k: int,
                 max_shift: float = MAX_DISPERSION_SHIFT, profile=None):
        self.loss, self.data, self.k, self.max_shift = loss, data, k, max_shift
        self.profile = profile
        n = len(next(iter(data.values())))
        w = (np.full(n, 1.0 / max(n, 1)) if weight is None  # a worker may hold 0 rows
             else np.asarray(weight, dtype=np.float64) / np.sum(weight))
        self.w = torch.as_tensor(w)
        self._tiled: dict[int, dict] = {}

    def _mean_loss(self, raw: torch.Tensor, deltas: np.ndarray) -> np.ndarray:
        m = len(deltas)
        if m not in self._tiled:
            self._tiled[m] = {key: v.repeat(m, *([1] * (v.dim() - 1)))
                              for key, v in self.data.items()}
        shifted = raw.repeat(m, 1)
        step = torch.from_numpy(np.repeat(deltas, raw.shape[0]))
        shifted[:, self.k] += step if isinstance(self.k, int) else step[:, None]
        with torch.no_grad():
            values = (self.loss(shifted, self._tiled[m]).reshape(m, raw.shape[0]) @ self.w).numpy()
        return np.where(np.isfinite(values), values, np.inf)

    def __call__(self, raw, center: float = 0.0) -> tuple[float, float]:
        """Return ``(delta, value)``: the shift (0.0 when no shift lowers the loss) and the
        loss it gives.  ``raw``: ndarray or Tensor of shape (n, K)."""
        raw = torch.as_tensor(np.asarray(raw, dtype=np.float64))
        if self.profile is not None:
            exact = self._exact(raw)
            if exact is not None:
                return exact
        g, h, top = len(_SHIFT_GRID), _SHIFT_GRID[1] - _SHIFT_GRID[0], self.max_shift
        center = min(max(float(center), -top), top)
        fine = np.clip(center + _SHIFT_GRID / 4.0, -top, top)
        mid = g // 2
        if abs(center) + h / 4.0 < top:  # the centre and its two neighbours first
            three = self._mean_loss(raw, np.append(fine[mid - 1:mid + 2], 0.0))
            if int(np.argmin(three[:3])) == 1:  # bracketed: the fine grid's minimum too
                return self._vertex(fine[mid - 1:mid + 2], three[:3], float(three[-1]))
        values = self._mean_loss(raw, np.append(fine, 0.0))
        fine_values, at_zero = values[:g], float(values[-1])
        j = int(np.argmin(fine_values))
        if not 0 < j < g - 1:  # the minimum is outside the fine window: search coarsely
            coarse = np.clip(center + _SHIFT_GRID, -top, top)
            coarse_values = self._mean_loss(raw, coarse)
            i = int(np.argmin(coarse_values))
            for _ in range(int(2 * top / (h * (g - 1))) + 2):  # move the coarse window
                if 0 < i < g - 1 or abs(coarse[i]) >= top:
                    break
                coarse = np.clip(coarse[i] + _SHIFT_GRID, -top, top)
                coarse_values = self._mean_loss(raw, coarse)
                i = int(np.argmin(coarse_values))
            for _ in range(3):  # the fine window, moved until it brackets the minimum
                fine = np.clip((coarse[i] if _ == 0 else fine[j]) + _SHIFT_GRID / 4.0,
                               -top, top)
                fine_values = self._mean_loss(raw, fine)
                j = int(np.argmin(fine_values))
                if 0 < j < g - 1 or abs(fine[j]) >= top:
                    break
        if 0 < j < g - 1:
            return self._vertex(fine[j - 1:j + 2], fine_values[j - 1:j + 2], at_zero)
        best, value = float(fine[j]), float(fine_values[j])
        if np.isfinite(value) and value < at_zero:
            return best, value
        return 0.0, at_zero

    @staticmethod
    def _vertex(shifts: np.ndarray, values: np.ndarray, at_zero: float) -> tuple[float, float]:
        """The vertex of the parabola through three equally spaced shifts whose middle one
        has the least loss (the middle point itself where the curvature is not positive),
        or ``(0, at_zero)`` when no shift beats none."""
        left, mid, right = values
        best, value = float(shifts[1]), float(mid)
        curvature = left - 2.0 * mid + right
        if np.isfinite(curvature) and curvature > 0:
            best += 0.5 * (shifts[1] - shifts[0]) * (left - right) / curvature
            value = mid - (left - right) ** 2 / (8.0 * curvature)
        if np.isfinite(value) and value < at_zero:
            return best, value
        return 0.0, at_zero


    def _exact(self, raw: torch.Tensor) -> tuple[float, float] | None:
        """The closed-form minimiser of ``mean_w [nll + delta + rho (exp(-p delta) - 1) / p]``
        over ``|delta| <= max_shift``: ``log(mean_w rho) / p``, clipped to the bound (the
        mean is convex in ``delta``).  None where the profile does not hold, or its
        minimiser lies where a row's raw scale would reach its floor or bound (the grid
        search then decides)."""
        with torch.no_grad():
            out = self.profile(raw, self.data)
        if out is None:
            return None
        nll, rho, p, (low, high) = out
        if isinstance(nll, np.ndarray):  # (no BLAS call: its threads cost more than the sum)
            w = self.w.numpy()
            at_zero, r = float(np.sum(nll * w)), float(np.sum(rho * w))
        else:
            w = self.w.to(nll.device)
            at_zero, r = float(nll @ w), float(rho @ w)
        if not (np.isfinite(at_zero) and np.isfinite(r) and r > 0.0):
            return None
        delta = min(max(math.log(r) / p, -self.max_shift), self.max_shift)
        if not low <= delta <= high:
            return None
        value = at_zero + delta + r * math.expm1(-p * delta) / p
        return (delta, value) if value < at_zero else (0.0, at_zero)


def best_dispersion_shift(loss, raw, data: dict, weight, k: int, center: float = 0.0,
                          max_shift: float = MAX_DISPERSION_SHIFT,
                          profile=None) -> tuple[float, float]:
    """One :class:`DispersionSearch`: the shift of raw column ``k`` (of ``raw``, shape
    (n, K)) minimising the weighted mean ``loss``, and that loss (``profile``: its closed
    form, see :class:`DispersionSearch`)."""
    return DispersionSearch(loss, data, weight, k, max_shift, profile)(raw, center)


def apply_shift(raw: np.ndarray, column: int | list[int] | None, shift: float) -> np.ndarray:
    """``raw`` (n, K) with ``shift`` added to ``column`` (or to each of a list of columns; a
    copy; ``raw`` itself when there is nothing to add)."""
    if column is None or shift == 0.0:
        return raw
    out = np.array(raw, dtype=np.float64, copy=True)
    out[:, column] += shift
    return out
