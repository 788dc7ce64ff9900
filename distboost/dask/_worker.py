"""What runs on the Dask workers inside ``xgboost.dask.train``: objective, metric, guard.

Each worker holds some partitions of the training (and validation) rows in its own
``DMatrix``.  XGBoost calls the custom objective with the worker's rows only; everything
global is either fixed before training (start values, curvature scale, mean weight) or one
all-reduce of a few numbers (``xgboost.collective.allreduce``): the training loss, the
validation loss and the dispersion shift's grid of losses.

The target travels in XGBoost's float32 fields as exact float32 pairs (``hi = float32(y)``,
``lo = float32(y - hi)``, see :func:`pack_target`), so that a target offset by 1e9 keeps its
float64 precision.  Losses recorded in a round go into a module-level table of the worker
process, keyed by the fit, where the :class:`DescentGuard` callback (same process) reads
them.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import xgboost

from ..boosting.derivatives import NonFiniteLoss, step_derivatives
from ..estimators import DispersionSearch

__all__ = ["pack_target", "unpack_target", "WorkerObjective", "WorkerMetric",
           "make_guard", "make_rate", "pop_state", "TRAIN", "VALID", "DESCENT_RTOL"]

#: A round is accepted when the training loss after it is at most the loss before it plus this
#: relative tolerance: XGBoost hands the objective float32 margins, whose rounding (about
#: 6e-8 of each raw score) moves the loss by far more than the in-process engine's float64
#: tolerance (``DESCENT_RTOL``, 1e-9) allows.
DESCENT_RTOL = 1e-6

#: fit key -> {"train": [loss before each round], "valid": [...], "shift": [...]}
_STATE: dict[str, dict[str, list]] = {}
TRAIN, VALID = "train", "valid"


def _split(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    hi = v.astype(np.float32)
    with np.errstate(invalid="ignore"):
        lo = (v - hi.astype(np.float64)).astype(np.float32)
    lo[~np.isfinite(v)] = 0.0
    return hi, lo


def slots(k: int) -> int:
    """Float32 columns XGBoost carries per row for a target: the label (``K`` columns when
    ``K >= 2``, else 1) and the two interval bounds."""
    return (k if k >= 2 else 1) + 2


def pack_target(y: np.ndarray, k: int) -> dict[str, np.ndarray]:
    """XGBoost's fields holding ``y`` (shape (n,) or (n, 2) bounds) as float32 pairs.

    XGBoost refuses infinite labels but not infinite interval bounds, so the parts that may be
    infinite go to the bounds: a target ``y`` is ``hi`` in the label's first column and ``lo``
    in its second (or, with ``K = 1``, in the lower bound); censoring bounds ``(l, u)`` put
    ``hi(l)`` and ``hi(u)`` in the two bound fields and ``lo(l)``, ``lo(u)`` in the label
    (with ``K = 1`` the one label column holds ``lo(l)``, and ``u`` keeps float32 precision, a
    relative error below 6e-8).

    Returns ``{"label": (n, L), "label_lower_bound": (n,), "label_upper_bound": (n,)}``.
    """
    y = np.asarray(y, dtype=np.float64)
    n = y.shape[0]
    n_label = slots(k) - 2
    label = np.zeros((n, n_label), dtype=np.float32)
    lower = np.zeros(n, dtype=np.float32)
    upper = np.zeros(n, dtype=np.float32)
    if y.ndim == 1:
        hi, lo = _split(y)
        label[:, 0] = hi
        if n_label > 1:
            label[:, 1] = lo
        else:
            lower[:] = lo
    else:
        (hi_l, lo_l), (hi_u, lo_u) = _split(y[:, 0]), _split(y[:, 1])
        lower[:], upper[:] = hi_l, hi_u
        label[:, 0] = lo_l
        if n_label > 1:
            label[:, 1] = lo_u
    return {"label": label if n_label > 1 else label[:, 0],
            "label_lower_bound": lower, "label_upper_bound": upper}


def unpack_target(dmatrix, k: int, censored: bool) -> np.ndarray:
    """The float64 target of a worker's ``DMatrix`` (inverse of :func:`pack_target`)."""
    label = np.asarray(dmatrix.get_label(), dtype=np.float32).reshape(  # 0 rows: no -1
        dmatrix.num_row(), slots(k) - 2)
    label = label.astype(np.float64)
    lower = np.asarray(dmatrix.get_float_info("label_lower_bound"), dtype=np.float64)
    upper = np.asarray(dmatrix.get_float_info("label_upper_bound"), dtype=np.float64)
    two = label.shape[1] > 1
    if not censored:
        return label[:, 0] + (label[:, 1] if two else lower)
    with np.errstate(invalid="ignore"):
        lo = lower + label[:, 0]
        hi = upper + (label[:, 1] if two else 0.0)
    return np.column_stack([lo, hi])


def _weights(dmatrix, weight_mean: float) -> np.ndarray | None:
    w = np.asarray(dmatrix.get_weight(), dtype=np.float64)
    return None if w.size == 0 else w / weight_mean


def _allreduce(values) -> np.ndarray:
    from xgboost import collective

    return collective.allreduce(np.asarray(values, dtype=np.float64), collective.Op.SUM)


class WorkerObjective:
    """``obj(predt, dtrain) -> (grad, hess)`` of ``xgboost.dask.train`` for a family.

    ``predt`` is the sum of the trees (``base_score`` 0); the start values are added here.
    The pair is the engine's (:func:`~distboost.boosting.derivatives.step_derivatives`
    with the fixed curvature scale), and the round's global training loss is recorded.
    The ``frozen`` outputs' gradients are zero: their trees are one leaf of value zero
    (phase 2 of per-parameter stopping, :mod:`distboost.boosting.output_stopping`).
    """

    def __init__(self, objective, step: str, curvature_scale, weight_mean: float,
                 key: str, censored: bool, frozen=None):
        self.frozen = None if frozen is None or not np.any(frozen) else np.asarray(frozen)
        self.objective = objective
        self.step = step
        self.curvature_scale = np.asarray(curvature_scale, dtype=np.float64)
        self.weight_mean = float(weight_mean)
        self.key = key
        self.k = objective.n_outputs
        self.censored = bool(censored)
        self._callables = None

    def __call__(self, predt, dtrain):
        raw = np.asarray(predt, dtype=np.float64).reshape(-1, self.k) + self.objective.init_raw
        y = unpack_target(dtrain, self.k, self.censored)
        w = _weights(dtrain, self.weight_mean)
        data = self.objective.data(None, y)
        if self._callables is None:  # once per worker, not every round
            self._callables = self.objective.engine_callables(self.step, 0)
        callables = self._callables
        try:
            per_row, grad, hess = step_derivatives(
                callables["loss"], raw, data, self.step, fisher=callables.get("fisher"),
                sample_weight=w, curvature_scale=self.curvature_scale,
                derivatives=callables.get("derivatives"))
            total = float(np.sum(per_row if w is None else per_row * w))
        except NonFiniteLoss:
            grad = np.zeros_like(raw)
            hess = np.ones_like(raw)
            total = math.nan
        if self.frozen is not None:
            grad[:, self.frozen] = 0.0
        weight = float(len(y) if w is None else np.sum(w))
        s = _allreduce([total, weight])
        _STATE.setdefault(self.key, {}).setdefault(TRAIN, []).append(float(s[0] / s[1]))
        return grad.astype(np.float32), hess.astype(np.float32)


class _AllReducedSearch(DispersionSearch):
    """The dispersion search with the weighted mean loss all-reduced over the workers."""

    def __init__(self, loss, data, weight, k, total_weight):
        super().__init__(loss, data, None, k)
        n = len(next(iter(data.values())))
        w = np.ones(n) if weight is None else np.asarray(weight, dtype=np.float64)
        self.w = torch.as_tensor(w)
        self.total = total_weight

    def _mean_loss(self, raw, deltas):
        local = super()._mean_loss(raw, deltas)  # sum_i w_i loss_i (w unnormalised)
        local = np.where(np.isfinite(local), local, np.inf)
        return _allreduce(local) / self.total


class WorkerMetric:
    """``custom_metric(predt, dvalid)``: the global weighted mean validation loss, after
    the round's best dispersion shift when calibrating (then also ``"shift"``)."""

    def __init__(self, objective, name: str, key: str, dispersion_column: int | None,
                 censored: bool):
        self.objective = objective
        self.name = name
        self.key = key
        self.column = dispersion_column
        self.k = objective.n_outputs
        self.censored = bool(censored)
        self._center = 0.0

    def __call__(self, predt, dvalid):
        raw = np.asarray(predt, dtype=np.float64).reshape(-1, self.k) + self.objective.init_raw
        y = unpack_target(dvalid, self.k, self.censored)
        w = _weights(dvalid, 1.0)
        data = self.objective.data(None, y)
        total_w = float(_allreduce([len(y) if w is None else np.sum(w)])[0])
        state = _STATE.setdefault(self.key, {})
        if self.column is None:
            with torch.no_grad():
                per_row = self.objective.loss(torch.as_tensor(raw), data).numpy()
            local = float(np.sum(per_row if w is None else per_row * w))
            value = float(_allreduce([local])[0] / total_w)
            state.setdefault(VALID, []).append(value)
            return self.name, value
        search = _AllReducedSearch(self.objective.loss, data, w, self.column, total_w)
        shift, value = search(raw, center=self._center)
        self._center = shift
        state.setdefault(VALID, []).append(float(value))
        state.setdefault("shift", []).append(float(shift))
        return [(self.name, float(value)), ("shift", float(shift))]


def pop_state(key: str) -> dict:
    """The exact (float64) losses a fit recorded on this worker, removed from the table
    (``client.run(pop_state, key)`` after training; every worker holds the same numbers)."""
    return _STATE.pop(key, {})


class DescentGuard(xgboost.callback.TrainingCallback):
    """Stops training when the training loss is not finite or rises (the driver then keeps
    the rounds before the rise and continues them at half the step), or the validation loss
    is not finite.

    A module-level class, so that a worker unpickles it by reference and reads the worker's
    own loss table (a class defined inside a function would be pickled by value, with a
    copy of the table).
    """

    def __init__(self, key: str, descent: bool = True):
        self.key = key
        self.descent = descent

    def after_iteration(self, model, epoch, evals_log):
        state = _STATE.get(self.key, {})
        train = state.get(TRAIN, [])
        if not train:
            return False
        last = train[-1]
        if not math.isfinite(last):
            return True
        if (self.descent and len(train) >= 2
                and last > train[-2] + DESCENT_RTOL * abs(train[-2])):
            return True
        return bool(VALID in state and not math.isfinite(state[VALID][-1]))


def make_guard(key: str, descent: bool = True) -> DescentGuard:
    """The :class:`DescentGuard` of the fit ``key``."""
    return DescentGuard(key, descent)


def make_rate(start: int, first: float, rate: float):
    """A ``TrainingCallback`` that grows round ``start`` (the first of a restarted run) at
    learning rate ``first`` and every later round at ``rate``: the distributed form of the
    engine's step halving."""
    import xgboost

    class FirstRoundRate(xgboost.callback.TrainingCallback):
        def before_iteration(self, model, epoch, evals_log):
            model.set_param({"eta": float(first if epoch == start else rate)})
            return False

    return FirstRoundRate()
