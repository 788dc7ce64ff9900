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
    that a non-convex region gives a short gradient step instead of a wild or reversed one.
``fisher``
    ``hess`` = diagonal of the expected Fisher information, positive by construction.
``natural``
    ``grad = F^{-1} g`` with the full ``K x K`` Fisher matrix per row (a small ridge of
    ``NATURAL_RIDGE`` times its mean diagonal keeps the solve stable) and ``hess = 1``: the
    natural gradient of NGBoost (Duan et al. 2020, Alg. 1).

Every pair is then multiplied by the sample weights and each column is rescaled so that its
mean curvature is one; leaf values ``-G / H`` are unchanged by that rescaling, and LightGBM's
``min_sum_hessian_in_leaf`` behaves the same whatever the scale of the target.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

__all__ = ["STEP_RULES", "NEWTON_FLOOR", "NATURAL_RIDGE", "StepComputer"]

STEP_RULES = ("gradient", "newton", "fisher", "natural")
#: Newton curvature floor, relative to the column's mean absolute curvature.
NEWTON_FLOOR = 1e-2
#: Ridge added to the Fisher matrix of the natural step, relative to its mean diagonal.
NATURAL_RIDGE = 1e-8


class NonFiniteLoss(FloatingPointError):
    """Raised when the loss or its derivatives are not finite in a round."""


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
    """

    def __init__(self, loss: Callable, data: dict, step: str, fisher: Callable | None = None,
                 sample_weight: np.ndarray | None = None):
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
        self.weight = None if sample_weight is None else np.asarray(sample_weight, np.float64)
        self.last_loss = np.nan

    def __call__(self, raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(grad, hess)``, float64 arrays of shape (n, K), ready for the trees.

        Raises
        ------
        NonFiniteLoss
            If the loss or its derivatives are not finite.
        """
        raw_t = torch.from_numpy(np.ascontiguousarray(raw, dtype=np.float64))
        raw_t.requires_grad_(True)
        need_hessian = self.step == "newton"
        per_row = self.loss(raw_t, self.data)
        w = self.weight
        total = per_row.sum()
        self.last_loss = (
            float(total.detach()) / per_row.shape[0] if w is None
            else float((per_row.detach().numpy() * w).sum() / w.sum())
        )
        if not np.isfinite(self.last_loss):
            raise NonFiniteLoss(f"loss is {self.last_loss}")
        (g,) = torch.autograd.grad(total, raw_t, create_graph=need_hessian)
        k = raw_t.shape[1]
        if self.step == "gradient":
            grad, hess = g.detach(), torch.ones_like(g)
        elif self.step == "newton":
            cols = [
                torch.autograd.grad(g[:, j].sum(), raw_t, retain_graph=j < k - 1)[0][:, j]
                for j in range(k)
            ]
            hess = torch.stack(cols, dim=1)
            grad = g.detach()
            scale = hess.abs().mean(dim=0, keepdim=True).clamp_min(1e-300)
            hess = torch.maximum(hess, NEWTON_FLOOR * scale)
        else:
            with torch.no_grad():
                fisher = self.fisher(raw_t.detach(), self.data)
            if self.step == "fisher":
                grad, hess = g.detach(), torch.diagonal(fisher, dim1=1, dim2=2)
            else:
                diag_mean = torch.diagonal(fisher, dim1=1, dim2=2).mean(dim=1)
                ridge = NATURAL_RIDGE * diag_mean.clamp_min(1e-300)
                eye = torch.eye(k, dtype=fisher.dtype)
                nat = torch.linalg.solve(fisher + ridge[:, None, None] * eye, g.detach()[..., None])
                grad, hess = nat[..., 0], torch.ones_like(g)
        grad = grad.numpy().astype(np.float64, copy=True)
        hess = hess.detach().numpy().astype(np.float64, copy=True)
        if not (np.isfinite(grad).all() and np.isfinite(hess).all()):
            raise NonFiniteLoss("gradient or curvature is not finite")
        if w is not None:
            grad *= w[:, None]
            hess *= w[:, None]
        # Column rescaling to unit mean curvature (leaf values -G/H unchanged).
        scale = hess.mean(axis=0)
        scale[~(scale > 0)] = 1.0
        grad /= scale
        hess /= scale
        return grad, hess
