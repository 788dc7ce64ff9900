"""Per-row derivatives of a loss and the step rules that turn them into tree targets.

The engine boosts ``K`` raw outputs ``raw[n, K]`` against a per-row loss ``loss(raw, data)``.
Because rows are independent, one backward pass of ``loss.sum()`` gives every row's gradient,
and ``K`` more (of ``g[:, k].sum()``) give every row's Hessian row ``k``.  A family with
closed-form derivatives may skip autograd: ``derivatives(raw, data) -> (loss, grad, fisher)``
(see :func:`step_derivatives`).

A step rule returns the pair ``(grad, hess)`` that a second-order tree learner (LightGBM,
XGBoost, or a weighted least-squares fit) turns into leaf values
``-sum(grad) / (sum(hess) + lambda)``:

``gradient``
    ``hess = 1``: plain functional gradient descent (Friedman 2001).
``newton``
    ``hess`` = diagonal of the Hessian (Chen & Guestrin 2016, eq. 5), guarded: entries below
    ``NEWTON_FLOOR`` times the column's curvature scale (below) are raised to that floor,
    so that a non-convex region gives a short gradient step instead of a wild or reversed
    one; a column with no curvature at all at the start values (a piecewise-linear loss
    such as the absolute or pinball loss) gets ``hess = 1``, the gradient step.
``fisher``
    ``hess`` = diagonal of the expected Fisher information, positive by construction.
``natural``
    ``grad = (F + lambda diag F)^{-1} g`` with the full ``K x K`` Fisher matrix per row and
    ``hess = 1``: the natural gradient of NGBoost (Duan et al. 2020, Alg. 1), damped in the
    Levenberg-Marquardt way (``lambda = NATURAL_RIDGE = 0.1``) so that a nearly singular
    Monte Carlo Fisher estimate cannot blow the step up.  A diagonal Fisher is a division.

**Per-row purity.**  Every pair is multiplied by the sample weights and divided, column by
column, by a *curvature scale* ``c_k``: the mean over the training rows of ``w * curvature``
(``|hess|`` for newton, the Fisher diagonal for fisher, 1 for gradient and natural) at the
*start values*, computed once (:func:`curvature_scale`) and then fixed, so that LightGBM's
``min_sum_hessian_in_leaf`` and ``reg_lambda`` mean the same at any target scale.  The
sample weights are divided by their mean over the training rows once, too.  Leaf values
``-G / H`` are unchanged by the division.  With both fixed, a row's ``(grad, hess)`` in any
round depends on that row alone (:func:`step_derivatives` is a pure per-row function given
``curvature_scale``): a distributed worker that sees only its own rows computes the same
numbers, the scale and the weights' mean coming from one reduction before training.

**The one global option.**  ``clip_gradients=(lo, hi)`` (in-process
:class:`~distboost.Booster` only, not available to distributed training) clips each
column of the per-row gradient of the loss to its own ``lo`` and ``hi`` quantiles over the
rows, every round, before the step rule uses it: a few rows with huge gradients (outliers,
or a product of raw scores and data as in a varying-coefficient model) then cannot dominate
a round.  Curvatures are not clipped.  Quantiles over the rows depend on which rows sit
together, so :func:`step_derivatives` has no such option; :class:`StepComputer` has.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from .natural_step import NATURAL_RIDGE, divide, natural
from .row_blocks import columns, data_rows, row_aligned, row_blocks

__all__ = ["STEP_RULES", "NEWTON_FLOOR", "NATURAL_RIDGE", "NonFiniteLoss", "StepComputer",
           "check_clip_gradients", "curvature_scale", "step_derivatives"]

STEP_RULES = ("gradient", "newton", "fisher", "natural")
#: Newton curvature floor, relative to the column's curvature scale (its mean absolute
#: curvature at the start values).
NEWTON_FLOOR = 1e-2


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


def _check_step(step: str, fisher, derivatives) -> None:
    if step not in STEP_RULES:
        raise ValueError(f"Unknown step rule {step!r}; choose one of {list(STEP_RULES)}.")
    if step in ("fisher", "natural") and fisher is None and derivatives is None:
        raise ValueError(
            f"step={step!r} needs the expected Fisher information: pass `fisher=` "
            "(a callable raw, data -> Tensor[n, K, K]) or use step='newton' or 'gradient'."
        )


def _clip_columns(g: torch.Tensor, levels: tuple[float, float]) -> torch.Tensor:
    """Clip each column of ``g`` (n, K) to its own ``levels`` quantiles over the rows."""
    q = np.quantile(g.cpu().numpy(), levels, axis=0)  # (2, K), numpy's linear interpolation
    q = torch.as_tensor(q, dtype=g.dtype, device=g.device)
    return torch.clamp(g, min=q[0], max=q[1])


def _raw_tensor(raw) -> torch.Tensor:
    """``raw`` as a float64 tensor of shape (n, K), sharing memory where possible (a strided
    view of LightGBM's column-major score buffer, no copy)."""
    if isinstance(raw, torch.Tensor):
        return raw.detach().to(torch.float64)
    return torch.from_numpy(np.asarray(raw, dtype=np.float64))


def _empty(shape, dtype) -> torch.Tensor:
    """An uninitialised tensor on numpy's allocation (large torch allocations made every
    round are retained by the C allocator; numpy's are reused)."""
    return torch.from_numpy(np.empty(shape, dtype=dtype))


def _rule_pair(loss, raw_t, data, step, fisher=None, derivatives=None, clip=None,
               defer_division: bool = False):
    """The step rule's unweighted, unscaled ``(per_row_loss, grad, hess)``, float64 tensors
    (detached); ``hess`` is None for unit curvature (gradient, natural) and the plain
    Hessian diagonal (not yet floored) for newton.

    With ``defer_division`` the natural step of a diagonal Fisher comes back as
    ``(per_row_loss, g, None, F)`` (the caller divides, fused with its output), otherwise
    the fourth entry is None."""
    per_row, g, hess, info = _rule_parts(loss, raw_t, data, step, fisher, derivatives, clip)
    if step == "natural":
        if defer_division and info.dim() == 2:
            return per_row, g, None, info
        return per_row, natural(g, info), None, None
    if step == "fisher":
        hess = info if info.dim() == 2 else torch.diagonal(info, dim1=1, dim2=2)
    return per_row, g, hess, None


def _rule_parts(loss, raw_t, data, step, fisher, derivatives, clip):
    """``(per_row_loss, grad, hessian or None, fisher or None)`` as the rule needs them."""
    if derivatives is not None and step != "newton":
        # Closed form: no autograd graph.  Newton needs the Hessian, which ``derivatives``
        # does not give (its curvature is the Fisher information): autograd below.
        with torch.no_grad():
            per_row, g, info = derivatives(raw_t, data)
        if clip is not None:
            g = _clip_columns(g, clip)
        return per_row, g, None, None if step == "gradient" else info
    need_hessian = step == "newton"
    raw_t = raw_t.detach().requires_grad_(True)
    per_row = loss(raw_t, data)
    (g,) = torch.autograd.grad(per_row.sum(), raw_t, create_graph=need_hessian)
    per_row = per_row.detach()
    hess = None
    if need_hessian:
        k = raw_t.shape[1]
        cols = [
            torch.autograd.grad(g[:, j].sum(), raw_t, retain_graph=j < k - 1,
                                allow_unused=True)[0]
            for j in range(k)
        ]
        hess = torch.stack([torch.zeros_like(g[:, j]) if c is None else c[:, j]
                            for j, c in enumerate(cols)], dim=1).detach()
    g = g.detach()
    if clip is not None:
        g = _clip_columns(g, clip)
    if step in ("gradient", "newton"):
        return per_row, g, hess, None
    with torch.no_grad():
        info = fisher(raw_t.detach(), data)
    return per_row, g, None, info


def _scale_of(step: str, hess: torch.Tensor | None, weight: torch.Tensor | None,
              k: int) -> np.ndarray:
    """Column means of ``weight * curvature`` (see :func:`curvature_scale`)."""
    if hess is None:
        mean_w = 1.0 if weight is None else float(weight.mean())
        return np.full(k, mean_w)
    c = hess.abs() if step == "newton" else hess
    if weight is not None:
        c = c * weight[:, None]
    return c.mean(dim=0).cpu().numpy().astype(np.float64)


def curvature_scale(loss: Callable, raw, data: dict, step: str, *,
                    fisher: Callable | None = None, sample_weight=None,
                    derivatives: Callable | None = None) -> np.ndarray:
    """The per-column curvature scale ``c_k``: the mean over the rows of ``w * curvature``.

    ``curvature`` is the step rule's: ``|d^2 loss / d raw_k^2|`` (newton), the Fisher
    diagonal (fisher), 1 (gradient, natural).  The engine computes it once, at the start
    values, over the training rows with the weights already divided by their mean; a
    distributed driver gets the same number from one reduction (the sums of
    ``w * curvature`` and of the row counts over the workers).

    Parameters
    ----------
    loss, raw, data, step, fisher, sample_weight, derivatives
        As in :func:`step_derivatives`.

    Returns
    -------
    ndarray of shape (K,)
        Zero for a newton column without curvature (it gets ``hess = 1``).
    """
    _check_step(step, fisher, derivatives)
    raw_t = _raw_tensor(raw)
    _, _, hess, _ = _rule_pair(loss, raw_t, data, step, fisher, derivatives)
    w = None if sample_weight is None else torch.as_tensor(
        np.asarray(sample_weight, dtype=np.float64), device=raw_t.device)
    return _scale_of(step, hess, w, raw_t.shape[1])


def _finish_pair(step: str, g: torch.Tensor, hess: torch.Tensor | None,
                 weight: torch.Tensor | None, scale: np.ndarray):
    """Floor (newton), weight and divide by the curvature scale: float64 ``(grad, hess)``."""
    scale_t = torch.as_tensor(np.asarray(scale, dtype=np.float64), device=g.device)
    flat = scale_t <= 0
    divisor = torch.where(flat, torch.ones_like(scale_t), scale_t)
    if hess is None:
        hess = torch.ones_like(g)
    elif step == "newton":
        hess = torch.maximum(hess, NEWTON_FLOOR * scale_t)
        if bool(flat.any()):  # no curvature at the start values: the gradient step
            hess = torch.where(flat, torch.ones_like(hess), hess)
    factor = 1.0 / divisor
    if weight is not None:
        factor = weight[:, None] * factor
    return g * factor, hess * factor


def step_derivatives(loss: Callable, raw, data: dict, step: str, *,
                     fisher: Callable | None = None, sample_weight=None,
                     curvature_scale: np.ndarray | None = None,
                     derivatives: Callable | None = None):
    """The step rule's per-row ``(grad, hess)``: a pure function of each row.

    Given ``curvature_scale`` the result for a row depends on that row's raw scores, data
    and weight only: on any subset or permutation of the rows it equals the full batch's
    rows exactly (what a distributed worker needs).

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``, differentiable by torch.
    raw : ndarray or Tensor of shape (n, K)
    data : dict of str to Tensor
        Row-aligned tensors handed to ``loss``, ``fisher`` and ``derivatives``.
    step : str
        One of :data:`STEP_RULES`.
    fisher : callable, optional
        ``fisher(raw, data) -> Tensor[n, K]`` (diagonal) or ``Tensor[n, K, K]``; needed by
        ``fisher`` and ``natural`` unless ``derivatives`` is given.
    sample_weight : array_like of shape (n,), optional
        Per-row weights (the engine divides them by their mean over the training rows once).
    curvature_scale : array_like of shape (K,), optional
        The fixed per-column divisor (:func:`curvature_scale`); None: computed from these
        rows (what the engine does once, at the start values) -- then the result depends on
        the batch.
    derivatives : callable, optional
        Closed form ``derivatives(raw: Tensor[n, K] float64, data) -> (per_row_loss
        Tensor[n], grad Tensor[n, K], fisher Tensor[n, K] (diagonal) or Tensor[n, K, K])``
        replacing autograd and the ``fisher`` call for the gradient, fisher and natural
        rules.  The newton rule needs the Hessian, which is not the Fisher information: it
        differentiates ``loss`` by autograd whatever ``derivatives`` says.

    Returns
    -------
    per_row_loss : ndarray of shape (n,)
    grad, hess : ndarray of shape (n, K), float64
        Weighted and divided by the curvature scale.
    """
    _check_step(step, fisher, derivatives)
    raw_t = _raw_tensor(raw)
    per_row, g, hess, _ = _rule_pair(loss, raw_t, data, step, fisher, derivatives)
    w = None if sample_weight is None else torch.as_tensor(
        np.asarray(sample_weight, dtype=np.float64))
    if curvature_scale is None:
        curvature_scale = _scale_of(step, hess, w, raw_t.shape[1])
    g, hess = _finish_pair(step, g, hess, w, curvature_scale)
    return per_row.numpy(), g.numpy(), hess.numpy()


class StepComputer:
    """Compute ``(grad, hess)`` of shape (n, K) from raw scores, for one step rule.

    The curvature scale (see the module docstring) is computed at the first call (the
    engine's first call is at the start values) unless given, and then fixed.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``.
    data : dict of str to Tensor
        Row-aligned tensors handed to ``loss`` (and ``fisher``, ``derivatives``).
    step : str
        One of :data:`STEP_RULES`.
    fisher : callable, optional
        ``fisher(raw, data) -> Tensor[n, K, K]`` or ``Tensor[n, K]``; needed by ``fisher``
        and ``natural`` unless ``derivatives`` is given.
    sample_weight : ndarray of shape (n,), optional
        Divided by its mean once.
    clip_gradients : tuple (lo, hi), optional
        Clip each column of the loss gradient to its ``lo`` and ``hi`` quantiles over the
        rows, every round (the one option that is global per round; in-process only).
    curvature_scale : array_like of shape (K,), optional
        The fixed per-column divisor; default: computed at the first call.
    derivatives : callable, optional
        Closed-form ``(per_row_loss, grad, fisher)`` (see :func:`step_derivatives`).
    device : str or torch.device, default="cpu"
        Where ``data`` lives and the derivatives run.  Raw scores given as a tensor (a
        GPU backend's) give ``(grad, hess)`` as tensors on their device: no copy to the
        host.
    """

    def __init__(self, loss: Callable, data: dict, step: str, fisher: Callable | None = None,
                 sample_weight: np.ndarray | None = None,
                 clip_gradients: tuple[float, float] | None = None,
                 curvature_scale: np.ndarray | None = None,
                 derivatives: Callable | None = None, device="cpu"):
        _check_step(step, fisher, derivatives)
        self.loss = loss
        self.data = data
        self.step = step
        self.fisher = fisher
        self.derivatives = derivatives
        self.clip = check_clip_gradients(clip_gradients)
        self._w = None
        if sample_weight is not None:
            w = np.asarray(sample_weight, dtype=np.float64)
            self._w = torch.as_tensor(w / w.mean(), device=device)
            self._w_sum = float(self._w.sum())
        self.curvature_scale = (None if curvature_scale is None
                                else np.asarray(curvature_scale, dtype=np.float64))
        self.last_loss = np.nan
        self._coef_key = self._coef = None  # see _coefficients
        self._buffers: list = [None, None]  # two (grad, hess) output pairs (order "F")
        self._pinned = None
        self._rows = None  # the per-row loss of the blocks (see _per_row)
        self._block_data: dict = {}  # (start, stop) -> the data of those rows (_data_rows)

    def loss_value(self, raw: np.ndarray) -> float:
        """The (weighted) mean loss at ``raw``, ndarray of shape (n, K): a forward pass only,
        the number :attr:`last_loss` holds after :meth:`__call__` at the same scores."""
        raw_t = _raw_tensor(raw)
        blocks = self._blocks(raw, raw_t)
        with torch.no_grad():
            if blocks is None:
                return self._mean(self.loss(raw_t, self.data))
            per_row = self._per_row(raw_t.shape[0])
            for rows in blocks:
                per_row[rows] = self.loss(raw_t[rows], self._data_rows(rows))
        return self._mean(per_row)

    def _blocks(self, raw, raw_t: torch.Tensor) -> list[slice] | None:
        """Blocks of rows (:mod:`.row_blocks`) or None: only with a closed form (the family's
        word that rows are independent), host scores and row-aligned data."""
        if self.derivatives is None or isinstance(raw, torch.Tensor):
            return None
        n = raw_t.shape[0]
        blocks = row_blocks(n)
        return blocks if blocks is not None and row_aligned(self.data, n) else None

    def _data_rows(self, rows: slice) -> dict:
        """The data of a block of rows: the same views every round, so that what a family
        derives from its target alone (:func:`distboost.families.numerics.special.remembered`:
        ``log y!``, ``log y``, a censored target's row plan) is derived once per block, not
        every round."""
        key = (rows.start, rows.stop)
        got = self._block_data.get(key)
        if got is None:
            got = self._block_data[key] = data_rows(self.data, rows)
        return got

    def _per_row(self, n: int) -> torch.Tensor:
        """The blocks' per-row loss, kept across rounds (summed whole, as one call's)."""
        if self._rows is None or self._rows.shape[0] != n:
            self._rows = _empty((n,), np.float64)
        return self._rows

    def _mean(self, per_row: torch.Tensor) -> float:
        if self._w is None:
            return float(per_row.sum()) / per_row.shape[0]
        return float(torch.dot(per_row, self._w)) / self._w_sum

    def pin(self, pair) -> None:
        """Keep ``pair`` (returned by a call with ``order="F"``) from being overwritten by
        later calls until another pair is pinned: the backend grows (and may regrow) its
        trees from it while the engine evaluates shorter steps."""
        self._pinned = None if pair is None else pair[0]

    def __call__(self, raw: np.ndarray, dtype=np.float64, order: str = "C"):
        """Return ``(grad, hess)``, arrays of shape (n, K), ready for the trees.

        Parameters
        ----------
        raw : ndarray of shape (n, K)
            Current raw scores.
        dtype, order
            Of the returned arrays (LightGBM takes float32 in column-major order).  With
            ``order="F"`` the arrays are buffers reused by later calls (two alternate, and
            never the one :meth:`pin` holds): copy them to keep them; with a closed form
            they are written a block of rows at a time (:mod:`.row_blocks`).

        Raises
        ------
        NonFiniteLoss
            If the loss or its derivatives are not finite.
        """
        raw_t = _raw_tensor(raw)  # (newton, clipping, a fisher step's scale: every row)
        if (order == "F" and self.step != "newton" and self.clip is None and (
                self.curvature_scale is not None or self.step != "fisher")
                and (blocks := self._blocks(raw, raw_t)) is not None):
            n, k = raw_t.shape
            per_row = self._per_row(n)
            if self.curvature_scale is None:
                self.curvature_scale = _scale_of(self.step, None, self._w, k)

            def part(rows):
                loss, g, hess, denom = _rule_pair(
                    self.loss, raw_t[rows], self._data_rows(rows), self.step,
                    self.fisher, self.derivatives, defer_division=True)
                per_row[rows] = loss
                return g, hess, denom

            return self._to_buffers(part, blocks, n, k, dtype, per_row)
        per_row, g, hess, denom = _rule_pair(self.loss, raw_t, self.data, self.step,
                                             self.fisher, self.derivatives, self.clip,
                                             defer_division=order == "F")
        self._check_loss(per_row)
        if self.curvature_scale is None:
            scale = _scale_of(self.step, hess, self._w, raw_t.shape[1])
            if not np.isfinite(scale).all():
                raise NonFiniteLoss("gradient or curvature is not finite")
            self.curvature_scale = scale
        if order != "F":  # (no deferred division)
            g, hess = _finish_pair(self.step, g, hess, self._w, self.curvature_scale)
            tdtype = torch.float32 if dtype == np.float32 else torch.float64
            if isinstance(raw, torch.Tensor):  # a device backend's scores: stay there
                g, hess = g.to(tdtype).contiguous(), hess.to(tdtype).contiguous()
                if not bool(torch.isfinite(g.sum() + hess.sum())):
                    raise NonFiniteLoss("gradient or curvature is not finite")
                return g, hess
            g_np, h_np = g.to(tdtype).numpy(), hess.to(tdtype).numpy()
            if not (np.isfinite(g_np.sum()) and np.isfinite(h_np.sum())):
                raise NonFiniteLoss("gradient or curvature is not finite")
            return g_np, h_np
        return self._to_buffers(lambda rows: (g, hess, denom), [None], *g.shape, dtype)

    def _check_loss(self, per_row: torch.Tensor) -> None:
        self.last_loss = self._mean(per_row)
        if not np.isfinite(self.last_loss):
            raise NonFiniteLoss(f"loss is {self.last_loss}")

    def _to_buffers(self, part, blocks, n: int, k: int, dtype, per_row=None):
        """Weight, scale and write ``(grad, hess)`` into reused column-major buffers by
        blocks, ``part(rows) -> (g, hess, denom)``; a natural step not finite through the fused
        division by ``denom`` is written again through the clamped one
        (:func:`.natural_step.divide`)."""
        slot = 0 if self._buffers[0] is None or self._buffers[0][0] is not self._pinned else 1
        buf = self._buffers[slot]
        if buf is None or buf[0].shape != (n, k) or buf[0].dtype != dtype:
            g_t = _empty((k, n), dtype)  # (K, n) row-major is (n, K) column-major
            buf = self._buffers[slot] = (g_t.numpy().T, None, g_t, None)
        coef = self._coefficients(n, k, dtype)
        deferred = unit = False
        for rows in blocks:
            g, hess, denom = part(rows)
            deferred |= denom is not None
            unit = hess is None
            if not unit and buf[3] is None:
                h_t = _empty((k, n), dtype)
                buf = self._buffers[slot] = (buf[0], h_t.numpy().T, buf[2], h_t)
            self._write(g, hess, denom, rows, buf[2], buf[3], coef)
        if per_row is not None:
            self._check_loss(per_row)
        g_np, h_np, g_t, h_t = buf
        finite = np.isfinite(float(g_t.sum()))
        if deferred and not finite:
            for rows in blocks:
                g, _, denom = part(rows)
                factor = columns(coef["factor"], rows)
                torch.mul(divide(g, denom).T, factor, out=columns(g_t, rows))
            finite = np.isfinite(float(g_t.sum()))
        if not finite:
            raise NonFiniteLoss("gradient or curvature is not finite")
        if unit:
            return g_np, coef["unit"]  # w / c, the same array every round
        if not np.isfinite(float(h_t.sum())):
            raise NonFiniteLoss("gradient or curvature is not finite")
        return g_np, h_np

    def _write(self, g, hess, denom, rows: slice | None, g_t, h_t, coef: dict) -> None:
        """Write rows ``rows`` (None: all) of ``g_t``, ``h_t`` (K, n): ``g`` times ``w / c``,
        or ``g / ((1 + lambda) F)`` as one division into the output and a multiply in the
        output's type, and ``hess`` (newton: floored) times ``w / c``."""
        out = columns(g_t, rows)
        if denom is not None:
            torch.div(g.T, denom.T, out=out)
            out.mul_(columns(coef["natural"], rows))
        else:
            torch.mul(g.T, columns(coef["factor"], rows), out=out)
        if hess is None:
            return
        if self.step == "newton":
            hess = torch.maximum(hess, coef["floor"])
            if coef["flat"] is not None:
                hess = torch.where(coef["flat"], torch.ones_like(hess), hess)
        torch.mul(hess.T, columns(coef["factor"], rows), out=columns(h_t, rows))

    def _coefficients(self, n: int, k: int, dtype) -> dict:
        """The per-output (and, with weights, per-row) factors of :meth:`_to_buffers`, fixed
        once the curvature scale is: computed at the first call, then reused."""
        key = (n, k, np.dtype(dtype).str, self.curvature_scale.tobytes())
        if self._coef_key == key:
            return self._coef
        tdtype = torch.float32 if dtype == np.float32 else torch.float64
        scale = torch.from_numpy(self.curvature_scale)
        flat = scale <= 0
        inv = 1.0 / torch.where(flat, torch.ones_like(scale), scale)  # (K,)
        factor = inv[:, None] if self._w is None else self._w[None, :] * inv[:, None]
        unit = _empty((k, n), dtype)
        unit.copy_(factor.expand(k, n))
        self._coef = {
            "factor": factor.to(tdtype),  # (K, 1) or (K, n): w / c
            "natural": (factor / (1.0 + NATURAL_RIDGE)).to(tdtype),
            "unit": unit.numpy().T,  # (n, K) column-major: w / c
            "floor": NEWTON_FLOOR * scale,
            "flat": flat if bool(flat.any()) else None,
        }
        self._coef_key = key
        return self._coef
