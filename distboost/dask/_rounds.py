"""The driver's rounds on a cluster: the engine's descent rule and per-parameter stopping
as a sequence of ``xgboost.dask.train`` runs (each continuing the rounds kept before it).

XGBoost cannot take a round back inside a distributed run, nor change which outputs grow:
:func:`boost_with_halving` ends a run where a round raised the training loss and continues
from the rounds before it at half the step, and :func:`continue_alone` runs phase 2 of
per-parameter stopping (:mod:`distboost.boosting.output_stopping`) as one more sequence of
runs from the joint best round, the dispersion's gradients set to zero on the workers
(:class:`~distboost.dask._worker.WorkerObjective`'s ``frozen``).
"""

from __future__ import annotations

import functools

import numpy as np

from ..boosting.engine import MAX_HALVINGS
from ..boosting.output_stopping import SOLO_PATIENCE_SHARE
from ._worker import DESCENT_RTOL, TRAIN, VALID

__all__ = ["boost_with_halving", "continue_alone"]


def continue_alone(run, booster, history, n_estimators: int, learning_rate: float,
                   patience: int, frozen: np.ndarray):
    """Phase 2 of per-parameter stopping on the cluster
    (:class:`~distboost.boosting.output_stopping.ParameterStopper`): from the joint best
    round ``b``, the outputs not ``frozen`` grow alone (the frozen ones grow trees of value
    zero, so they stay at round ``b``) until the validation loss has not improved for
    ``max(patience, b)`` rounds; the joint rounds after ``b`` are dropped.

    Returns the booster and the history as :func:`boost_with_halving`, with the joint
    best round (``"joint_best"``) and the mask (``"frozen"``).
    """
    b = int(np.argmin(history["valid"])) + 1
    solo = max(int(patience), int(SOLO_PATIENCE_SHARE * b))
    start = {key: list(value[:b]) for key, value in history.items() if key != "stopped"}
    start["stopped"] = None
    booster, history = boost_with_halving(
        functools.partial(run, frozen=frozen, patience=solo), n_estimators, learning_rate,
        solo, booster=booster[:b], history=start)
    history.update(joint_best=b, frozen=frozen)
    return booster, history


def boost_with_halving(run, n_estimators: int, learning_rate: float,
                       patience: int | None, booster=None, history=None):
    """The engine's descent rule on a cluster: train until a round raises the training loss
    (or it is not finite), keep the rounds before it, and continue from them with that
    round grown again at half the step (1/2, 1/4, ... down to ``learning_rate /
    2**MAX_HALVINGS``, as :func:`distboost.boosting.fit_boosting`), the rounds after it at
    the full rate.  XGBoost cannot take a round back inside a distributed run, so each
    halving is a new ``xgboost.dask.train`` continuing the kept rounds (``xgb_model``).

    ``booster`` and ``history`` (as returned) continue an earlier run's kept rounds.

    Returns the booster (None for no rounds) and the history: the training loss before
    each kept round, the validation loss and dispersion shift after it, each round's step
    relative to ``learning_rate``, and why training stopped.
    """
    level = 0
    if history is None:
        history = {"train": [], "valid": [], "shift": [], "scales": [], "stopped": None}
    while history["stopped"] is None:
        done = len(history["scales"])
        if done >= n_estimators:
            history["stopped"] = "n_estimators"
            break
        grown, state = run(n_estimators - done, booster, learning_rate * 0.5 ** level)
        losses = state.get(TRAIN, [])
        seg = grown.num_boosted_rounds() - done
        bad = None
        if losses and not np.isfinite(losses[0]):
            bad = 0
        for j in range(1, len(losses)):
            if not np.isfinite(losses[j]) or losses[j] > losses[j - 1] + DESCENT_RTOL * abs(
                    losses[j - 1]):
                bad = j - 1  # round j - 1 of this run raised the loss
                break
        keep = seg if bad is None else bad
        history["train"] += losses[:keep]
        history["valid"] += state.get(VALID, [])[:keep]
        history["shift"] += state.get("shift", [])[:keep]
        history["scales"] += ([0.5 ** level] + [1.0] * (keep - 1)) if keep else []
        total = done + keep
        booster = None if total == 0 else (grown if keep == seg else grown[:total])
        if bad is not None:
            level = level + 1 if keep == 0 else 1
            if level > MAX_HALVINGS or (losses and not np.isfinite(losses[0])):
                history["stopped"] = ("non_finite_loss" if not all(np.isfinite(losses))
                                      else "no_descent")
            continue
        level = 0
        curve = history["valid"]
        if patience is not None and curve and len(curve) - (int(np.argmin(curve)) + 1) >= \
                patience:
            history["stopped"] = "early_stopping"
        elif len(history["scales"]) >= n_estimators:
            history["stopped"] = "n_estimators"
        elif curve and not np.isfinite(curve[-1]):
            history["stopped"] = "non_finite_loss"
        else:  # the run ended for no reason of ours: take it as the end
            history["stopped"] = "early_stopping" if curve else "n_estimators"
    return booster, history
