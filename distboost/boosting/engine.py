"""The boosting engine: grows ``K`` tree ensembles against any per-row torch loss.

``fit_boosting(loss, init_raw, X, data, params=...)`` runs the rounds (derivatives by autograd,
a step rule, one tree per parameter, shrinkage, early stopping on the validation loss) and
returns a :class:`FittedEnsemble` whose ``predict_raw(X)`` gives the raw scores ``(n, K)``.
The engine knows nothing about distributions: families, varying-coefficient models or any
other torch objective plug in through ``loss`` (and ``fisher`` for Fisher-based steps).

Between rounds an optional ``callback(round, raw)`` sees the training raw scores after the
round's trees; it may update parameters of the user's own (a torch optimiser step on a
network whose output the loss reads from ``data``) and stop training by returning True.

Tree growing is delegated to a backend: LightGBM histogram trees (one booster with
``num_class=K`` and a callable objective, so all ``K`` trees of a round share the binned
data; the same objective is what ``lightgbm.dask`` accepts), or any scikit-learn regressor.
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np
import torch

from .derivatives import STEP_RULES, NonFiniteLoss, StepComputer

__all__ = ["EngineParams", "fit_boosting", "FittedEnsemble", "STEP_RULES"]


@dataclass
class EngineParams:
    """Options of the boosting engine (see :class:`~distboost.DistributionalRegressor`).

    ``early_stopping_rounds=None`` records the validation loss without stopping (every round
    is kept).  ``clip_gradients=(lo, hi)`` clips each column of the loss gradient to its
    ``lo`` and ``hi`` quantiles over the rows every round (see
    :mod:`distboost.boosting.derivatives`); None (default) leaves gradients as they are.
    """

    n_estimators: int = 1000
    learning_rate: float = 0.05
    step: str = "fisher"
    num_leaves: int = 31
    max_depth: int = -1
    min_child_samples: int = 20
    subsample: float = 1.0
    colsample: float = 1.0
    reg_lambda: float = 0.0
    max_bin: int = 255
    early_stopping_rounds: int | None = 50
    random_state: int | None = None
    n_jobs: int | None = None
    verbose: int = 0
    base_learner: object | None = None
    categorical_features: list | str = "auto"
    clip_gradients: tuple[float, float] | None = None


class _EarlyStopper:
    def __init__(self, patience: int | None):
        self.patience = math.inf if patience is None else patience
        self.best = math.inf
        self.best_round = 0

    def update(self, value: float, round_: int) -> bool:
        """Record the validation loss of a round (1-based); True when training should stop."""
        if not math.isfinite(self.best) or value < self.best - 1e-12 * abs(self.best):
            self.best, self.best_round = value, round_
        return round_ - self.best_round >= self.patience


def _loss_value(raw: np.ndarray, data, weight, loss) -> float:
    with torch.no_grad():
        per_row = loss(torch.from_numpy(np.ascontiguousarray(raw, np.float64)), data).numpy()
    if weight is None:
        return float(per_row.mean())
    return float((per_row * weight).sum() / weight.sum())


def fit_boosting(
    loss: Callable,
    init_raw,
    X,
    data: dict,
    *,
    params: EngineParams,
    sample_weight=None,
    X_val=None,
    data_val: dict | None = None,
    sample_weight_val=None,
    fisher: Callable | None = None,
    callback: Callable | None = None,
    valid_score: Callable | None = None,
) -> FittedEnsemble:
    """Grow one ensemble per raw output against ``loss``.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``, differentiable by torch.
    init_raw : array_like of shape (K,)
        Starting raw scores (e.g. the marginal MLE on the link scale).
    X : ndarray or DataFrame of shape (n, p)
    data : dict of str to Tensor
        Row-aligned tensors the loss needs (``y`` and anything else).
    params : EngineParams
    sample_weight : ndarray of shape (n,), optional
    X_val, data_val, sample_weight_val : optional
        Validation rows for early stopping.
    fisher : callable, optional
        ``fisher(raw, data) -> Tensor[n, K, K]``, for ``step`` "fisher" and "natural".
    callback : callable, optional
        ``callback(round, raw) -> bool | None``, called after each round's trees are added
        with the 1-based round number and the training raw scores, ndarray of shape (n, K)
        (``init_raw`` included; a copy, equal to ``predict_raw(X, num_iteration=round)``).
        It may update torch parameters of its own and mutate the tensors in ``data`` and
        ``data_val`` in place: the next round's derivatives and this round's validation loss
        (computed after the callback) see the change.  Returning True stops training
        (``stopped_reason`` "callback").

    valid_score : callable, optional
        ``valid_score(raw, data_val, sample_weight_val) -> float``: the number early stopping
        minimises, from the validation raw scores (ndarray of shape (n_val, K)).  Default:
        the weighted mean of ``loss``.

    Returns
    -------
    FittedEnsemble
    """
    if valid_score is None:
        valid_score = functools.partial(_loss_value, loss=loss)
    init_raw = np.asarray(init_raw, dtype=np.float64).reshape(-1)
    step = StepComputer(loss, data, params.step, fisher, sample_weight,
                        clip_gradients=params.clip_gradients)
    has_val = X_val is not None
    if params.base_learner is None:
        from .lightgbm_backend import LightGBMBackend as Backend
    else:
        from .sklearn_backend import SklearnBackend as Backend
    backend = Backend(params, init_raw, X, sample_weight, X_val)
    stopper = _EarlyStopper(params.early_stopping_rounds)
    evals: dict[str, dict[str, list]] = {"train": {"loss": []}}
    if has_val:
        evals["valid"] = {"loss": []}
    stopped = "n_estimators"
    t0 = time.perf_counter()
    rounds = 0
    for it in range(1, params.n_estimators + 1):
        try:
            backend.boost_one_round(step)
        except NonFiniteLoss as err:
            warnings.warn(
                f"Boosting stopped at round {it}: {err}; keeping the {rounds} finite rounds "
                "before it.", RuntimeWarning, stacklevel=2,
            )
            stopped = "non_finite_loss"
            break
        rounds = it
        evals["train"]["loss"].append(step.last_loss)  # loss before this round's trees
        halt = callback is not None and bool(callback(it, backend.train_raw()))
        if has_val:
            val = valid_score(backend.valid_raw(), data_val, sample_weight_val)
            if not np.isfinite(val):
                warnings.warn(f"Validation loss is {val} at round {it}; stopping.",
                              RuntimeWarning, stacklevel=2)
                stopped = "non_finite_loss"
                evals["valid"]["loss"].append(val)
                break
            evals["valid"]["loss"].append(val)
            if stopper.update(val, it):
                stopped = "early_stopping"
                break
        if halt:
            stopped = "callback"
            break
        if params.verbose and (it % params.verbose == 0 or it == 1):
            msg = f"[{it:>5}] train loss {step.last_loss:.5f}"
            if has_val:
                msg += f"  valid loss {evals['valid']['loss'][-1]:.5f}"
            print(msg + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    if has_val and stopper.best_round > 0 and params.early_stopping_rounds is not None:
        best = stopper.best_round
    else:
        best = rounds
    return FittedEnsemble(backend.finish(), init_raw, best, rounds, evals, stopped)


class FittedEnsemble:
    """The fitted ensembles of a boosting run.

    Attributes
    ----------
    n_params : int
        ``K``, the number of raw outputs.
    init_raw : ndarray of shape (K,)
    best_iteration_ : int
        Rounds kept by :meth:`predict_raw` (the best validation round under early stopping).
    n_iter_ : int
        Rounds run.
    evals_result_ : dict
        ``{"train": {"loss": [...]}, "valid": {"loss": [...]}}``: the weighted mean loss per
        round (train: before the round's trees are added; valid: after).
    stopped_reason : str
        "n_estimators", "early_stopping", "non_finite_loss" or "callback".
    """

    def __init__(self, model, init_raw, best_iteration, n_iter, evals, stopped_reason):
        self.model = model
        self.init_raw = np.asarray(init_raw, dtype=np.float64)
        self.n_params = self.init_raw.size
        self.best_iteration_ = int(best_iteration)
        self.n_iter_ = int(n_iter)
        self.evals_result_ = evals
        self.stopped_reason = stopped_reason

    def predict_raw(self, X, num_iteration: int | None = None) -> np.ndarray:
        """Raw scores, ndarray of shape (n, K), including ``init_raw``.

        Parameters
        ----------
        X : ndarray or DataFrame of shape (n, p)
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``).
        """
        k = self.best_iteration_ if num_iteration is None else int(num_iteration)
        return self.model.predict_raw(X, k) + self.init_raw[None, :]

    def feature_importances(self) -> np.ndarray:
        """Total gain of each feature in each parameter's ensemble, shape (K, p)."""
        return self.model.feature_importances(self.best_iteration_)

    def to_dict(self) -> dict:
        """JSON-safe description (LightGBM backend only)."""
        return {
            "backend": self.model.name,
            "model": self.model.to_text(self.best_iteration_),
            "init_raw": self.init_raw.tolist(),
            "best_iteration": self.best_iteration_,
            "n_iter": self.n_iter_,
            "evals_result": self.evals_result_,
            "stopped_reason": self.stopped_reason,
        }

    @classmethod
    def from_dict(cls, d: dict) -> FittedEnsemble:
        """Rebuild from :meth:`to_dict` output."""
        if d.get("backend") != "lightgbm":
            raise ValueError(f"Cannot load a {d.get('backend')!r} ensemble from text.")
        from .lightgbm_backend import LightGBMModel

        model = LightGBMModel.from_text(d["model"], len(d["init_raw"]))
        return cls(model, d["init_raw"], d["best_iteration"], d["n_iter"], d["evals_result"],
                   d["stopped_reason"])


def engine_params_dict(params: EngineParams) -> dict:
    """EngineParams as a plain dict without the (unserialisable) base learner."""
    out = asdict(params)
    out.pop("base_learner")
    return out
