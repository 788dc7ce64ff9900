"""Per-row derivatives of a torch loss and the step rules that turn them into tree targets.

The engine boosts ``K`` raw outputs ``raw[n, K]`` against a per-row loss ``loss(raw, data)``.
Because rows are independent, one backward pass of ``loss.sum()`` gives every row's gradient,
and ``K`` more (of ``g[:, k].sum()``) give every row's Hessian row ``k``.

A step rule returns the pair ``(grad, hess)`` that a second-order tree learner (LightGBM, or
a weighted least-squares fit) turns into leaf values ``-sum(grad) / (sum(hess) + lambda)``:

``gradient``
    ``hess = 1``: plain functional gradient descent (Friedman 2001).
``newton``
    ``hess`` = diagonal of the Hessian (Chen & Guestrin 2016, eq. 5), guarded: entries below
    ``NEWTON_FLOOR`` times the column's mean absolute curvature are raised to that floor, so
    that a non-convex region gives a short gradient step instead of a wild or reversed one;
    a column with no curvature at all (a piecewise-linear loss such as the absolute or
    pinball loss) gets ``hess = 1``, the gradient step.
``fisher``
    ``hess`` = diagonal of the expected Fisher information, positive by construction.
``natural``
    ``grad = (F + lambda diag F)^{-1} g`` with the full ``K x K`` Fisher matrix per row and
    ``hess = 1``: the natural gradient of NGBoost (Duan et al. 2020, Alg. 1), damped in the
    Levenberg-Marquardt way (``lambda = NATURAL_RIDGE = 0.1``) so that a nearly singular
    Monte Carlo Fisher estimate cannot blow the step up.

Optionally (``clip_gradients=(lo, hi)``), each column of the per-row gradient of the loss is
first clipped to its own ``lo`` and ``hi`` quantiles over the rows, every round, before the
step rule uses it: a few rows with huge gradients (outliers, or a product of raw scores
and data as in a varying-coefficient model) then cannot dominate a round.  Curvatures are
not clipped.

Every pair is then multiplied by the sample weights and each column is rescaled so that its
mean curvature is one; leaf values ``-G / H`` are unchanged by that rescaling, and LightGBM's
``min_sum_hessian_in_leaf`` behaves the same whatever the scale of the target.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

__all__ = ["STEP_RULES", "NEWTON_FLOOR", "NATURAL_RIDGE", "StepComputer",
           "check_clip_gradients"]

STEP_RULES = ("gradient", "newton", "fisher", "natural")
#: Newton curvature floor, relative to the column's mean absolute curvature.
NEWTON_FLOOR = 1e-2
#: Levenberg-Marquardt damping of the natural step: ``F + NATURAL_RIDGE * diag(F)``.
NATURAL_RIDGE = 0.1


class NonFiniteLoss(FloatingPointError):
    """Raised when the loss or its derivatives are not finite in a round."""


def check_clip_gradients(clip_gradients) -> tuple[float, float] | None:
    """Validate ``clip_gradients``: None or a pair of quantile levels ``0 <= lo < hi <= 1``.

    Returns
    -------
    tuple of two floats, or None
    """
    if clip_gradients is None:
        return None
    try:
        lo, hi = (float(q) for q in clip_gradients)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"clip_gradients must be None or a pair of quantile levels (lo, hi), "
            f"got {clip_gradients!r}."
        ) from err
    if not (0.0 <= lo < hi <= 1.0):
        raise ValueError(
            f"clip_gradients={clip_gradients!r} must satisfy 0 <= lo < hi <= 1 "
            "(e.g. (0.05, 0.95))."
        )
    return lo, hi


def _clip_columns(g: torch.Tensor, levels: tuple[float, float]) -> torch.Tensor:
    """Clip each column of ``g`` (n, K) to its own ``levels`` quantiles over the rows."""
    q = np.quantile(g.numpy(), levels, axis=0)  # (2, K), numpy's linear interpolation
    return torch.clamp(g, min=torch.from_numpy(q[0]), max=torch.from_numpy(q[1]))


class StepComputer:
    """Compute ``(grad, hess)`` of shape (n, K) from raw scores, for one step rule.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``.
    data : dict of str to Tensor
        Row-aligned tensors handed to ``loss`` (and ``fisher``).
    step : str
        One of :data:`STEP_RULES`.
    fisher : callable, optional
        ``fisher(raw, data) -> Tensor[n, K, K]``; needed by ``fisher`` and ``natural``.
    sample_weight : ndarray of shape (n,), optional
    clip_gradients : tuple (lo, hi), optional
        Clip each column of the loss gradient to its ``lo`` and ``hi`` quantiles over the
        rows, every round (see the module docstring).
    """

    def __init__(self, loss: Callable, data: dict, step: str, fisher: Callable | None = None,
                 sample_weight: np.ndarray | None = None,
                 clip_gradients: tuple[float, float] | None = None):
        if step not in STEP_RULES:
            raise ValueError(f"Unknown step rule {step!r}; choose one of {list(STEP_RULES)}.")
        if step in ("fisher", "natural") and fisher is None:
            raise ValueError(
                f"step={step!r} needs the expected Fisher information: pass `fisher=` "
                "(a callable raw, data -> Tensor[n, K, K]) or use step='newton' or 'gradient'."
            )
        self.loss = loss
        self.data = data
        self.step = step
        self.fisher = fisher
        self.clip = check_clip_gradients(clip_gradients)
        self._w = None
        if sample_weight is not None:
            self._w = torch.as_tensor(np.asarray(sample_weight, dtype=np.float64))
            self._w_sum = float(self._w.sum())
        self.last_loss = np.nan
        self._ones = None  # the unit curvature handed to LightGBM, reused every round

    def loss_value(self, raw: np.ndarray) -> float:
        """The (weighted) mean loss at ``raw``, ndarray of shape (n, K): a forward pass only,
        the number :attr:`last_loss` holds after :meth:`__call__` at the same scores."""
        with torch.no_grad():
            per_row = self.loss(torch.from_numpy(np.asarray(raw, dtype=np.float64)), self.data)
        if self._w is None:
            return float(per_row.sum()) / per_row.shape[0]
        return float((per_row * self._w).sum() / self._w_sum)

    def __call__(self, raw: np.ndarray, dtype=np.float64, order: str = "C"):
        """Return ``(grad, hess)``, arrays of shape (n, K), ready for the trees.

        Parameters
        ----------
        raw : ndarray of shape (n, K)
            Current raw scores.
        dtype, order
            Of the returned arrays (LightGBM takes float32 in column-major order).

        Raises
        ------
        NonFiniteLoss
            If the loss or its derivatives are not finite.
        """
        raw_t = torch.from_numpy(np.asarray(raw, dtype=np.float64))  # strided view, no copy
        raw_t.requires_grad_(True)
        per_row = self.loss(raw_t, self.data)
        total = per_row.sum()
        if self._w is None:
            self.last_loss = float(total.detach()) / per_row.shape[0]
        else:
            self.last_loss = float((per_row.detach() * self._w).sum() / self._w_sum)
        if not np.isfinite(self.last_loss):
            raise NonFiniteLoss(f"loss is {self.last_loss}")
        grad, hess = self._step(raw_t, total)
        if hess is None and self._w is None and order == "F":
            # Unit curvature (natural, gradient) and no weights: the rescaling is the
            # identity, and the curvature is the same array of ones every round.
            g_out = torch.empty(grad.shape[::-1],
                                dtype=torch.float32 if dtype == np.float32 else torch.float64)
            g_out.copy_(grad.T)  # (K, n) row-major is (n, K) column-major
            if not np.isfinite(float(g_out.sum())):
                raise NonFiniteLoss("gradient or curvature is not finite")
            if self._ones is None or self._ones.shape != grad.shape or self._ones.dtype != dtype:
                self._ones = np.ones(grad.shape, dtype=dtype, order="F")
            return g_out.numpy().T, self._ones
        if hess is None:
            hess = torch.ones_like(grad)
        if self._w is not None:
            grad = grad * self._w[:, None]
            hess = hess * self._w[:, None]
        # Column rescaling to unit mean curvature (leaf values -G/H unchanged), fused with
        # the cast to the output type and layout: (K, n) row-major is (n, K) column-major.
        scale = hess.mean(dim=0)
        inv = torch.where(scale > 0, 1.0 / scale, torch.ones_like(scale))
        tdtype = torch.float32 if dtype == np.float32 else torch.float64
        if order == "F":
            g_out = torch.empty(grad.shape[::-1], dtype=tdtype)
            h_out = torch.empty(grad.shape[::-1], dtype=tdtype)
            torch.mul(grad.T, inv[:, None], out=g_out)
            torch.mul(hess.T, inv[:, None], out=h_out)
            g_np, h_np = g_out.numpy().T, h_out.numpy().T
        else:
            g_np = (grad * inv).to(tdtype).numpy()
            h_np = (hess * inv).to(tdtype).numpy()
        if not (np.isfinite(float(scale.sum())) and np.isfinite(float(g_out.sum() if order == "F"
                                                                      else grad.sum()))):
            raise NonFiniteLoss("gradient or curvature is not finite")
        return g_np, h_np

    def _step(self, raw_t: torch.Tensor, total: torch.Tensor):
        """The step rule's ``(grad, hess)`` as float64 tensors of shape (n, K); ``hess`` is
        None for unit curvature (the natural and gradient rules)."""
        need_hessian = self.step == "newton"
        (g,) = torch.autograd.grad(total, raw_t, create_graph=need_hessian)
        k = raw_t.shape[1]
        if self.step == "gradient":
            return self._clipped(g), None
        if self.step == "newton":
            cols = [
                torch.autograd.grad(g[:, j].sum(), raw_t, retain_graph=j < k - 1)[0][:, j]
                for j in range(k)
            ]
            hess = torch.stack(cols, dim=1).detach()
            curvature = hess.abs().mean(dim=0, keepdim=True)
            guarded = torch.maximum(hess, NEWTON_FLOOR * curvature.clamp_min(1e-300))
            flat = curvature == 0  # piecewise-linear loss: the gradient step
            if bool(flat.any()):
                guarded = torch.where(flat, torch.ones_like(hess), guarded)
            return self._clipped(g.detach()), guarded
        g = self._clipped(g)
        with torch.no_grad():
            fisher = self.fisher(raw_t.detach(), self.data)
        diagonal = fisher.dim() == 2
        if self.step == "fisher":
            return g, fisher if diagonal else torch.diagonal(fisher, dim1=1, dim2=2)
        if diagonal:
            return g / (fisher.clamp_min(1e-300) * (1.0 + NATURAL_RIDGE)), None
        # Levenberg-Marquardt damping F + lambda diag(F): bounds the condition number by
        # about 1 / lambda (a Monte Carlo Fisher of nearly redundant parameters is close to
        # singular) and leaves a diagonal Fisher's step unchanged up to 1 / (1 + lambda).
        diag = torch.diagonal(fisher, dim1=1, dim2=2).clamp_min(1e-300)
        nat = torch.linalg.solve(fisher + torch.diag_embed(NATURAL_RIDGE * diag), g[..., None])
        return nat[..., 0], None

    def _clipped(self, g: torch.Tensor) -> torch.Tensor:
        """The gradient, each column clipped to its quantiles when ``clip_gradients`` is set."""
        if self.clip is None:
            return g
        return _clip_columns(g, self.clip)
