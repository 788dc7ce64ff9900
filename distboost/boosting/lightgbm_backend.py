"""LightGBM tree backend: one booster with ``num_class=K`` fed our gradients each round.

All ``K`` trees of a round are grown by LightGBM from the ``(grad, hess)`` pair of the step
rule (its public ``Booster.update(fobj=...)``); the data are binned once, and LightGBM keeps
the training and validation raw scores up to date itself (``init_score`` holds the start
values).  Text models (``model_to_string``) make saving safe: no pickle.

The training raw scores are read from LightGBM's own buffer (``Booster.eval_train`` hands
them to a custom metric; public API, no prediction): the engine evaluates the loss and the
step rule there, and ``update`` reuses the same buffer within the iteration.  A round that
the engine's descent check rejects is taken back (``rollback_one_iter``, which subtracts its
trees from the kept scores) and grown again from the same ``(grad, hess)`` with a smaller
learning rate (``reset_parameter``); the rate is set back for the next round.
"""

from __future__ import annotations

import threading

import lightgbm as lgb
import numpy as np

from .backend import check_importance_type
from .threads import SINGLE_THREAD_ROWS, num_threads

__all__ = ["LightGBMBackend", "LightGBMModel", "SINGLE_THREAD_ROWS"]

#: LightGBM's ``Booster.predict`` sets the booster's number of rounds to predict with before
#: it predicts, under a lock that lets other predictions run at the same time: two threads
#: asking one booster for different rounds (per-parameter stopping reads each output at its
#: own round) could read each other's (tests/test_robustness.py: 7 of 80 concurrent
#: quantile predictions differed).  Predictions with a round count are taken one at a time;
#: each still runs on LightGBM's own threads.
_PREDICT_LOCK = threading.Lock()


def _lgb_params(params, k: int, n: int) -> dict:
    out = {
        "objective": "none",
        "learning_rate": params.learning_rate,
        "num_leaves": params.num_leaves,
        "max_depth": params.max_depth,
        "min_data_in_leaf": params.min_child_samples,
        "min_sum_hessian_in_leaf": 1e-3,
        "lambda_l2": params.reg_lambda,
        "feature_fraction": params.colsample,
        "bagging_fraction": params.subsample,
        "bagging_freq": 1 if params.subsample < 1.0 else 0,
        "max_bin": params.max_bin,
        "boost_from_average": False,
        "metric": "None",
        "verbosity": -1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": 0 if params.random_state is None else int(params.random_state),
    }
    # LightGBM's own options, passed through (its names on the right).
    if getattr(params, "monotone_constraints", None) is not None:
        out["monotone_constraints"] = list(params.monotone_constraints)
    if getattr(params, "interaction_constraints", None) is not None:
        out["interaction_constraints"] = [list(g) for g in params.interaction_constraints]
    out["min_gain_to_split"] = getattr(params, "min_split_gain", 0.0)
    out["extra_trees"] = bool(getattr(params, "extra_trees", False))
    out["path_smooth"] = getattr(params, "path_smooth", 0.0)
    out["max_cat_to_onehot"] = getattr(params, "max_cat_to_onehot", 4)
    threads = num_threads(params.n_jobs, n)
    if threads is not None:
        out["num_threads"] = threads
    if k > 1:
        out["num_class"] = k
    return out


def _init_score(init_raw: np.ndarray, n: int) -> np.ndarray:
    """The start values of every row in LightGBM's own layout: class-major, 1-D (n * K), so
    LightGBM copies it once without reordering."""
    return np.repeat(np.asarray(init_raw, dtype=np.float64), n)


class LightGBMBackend:
    """Grows the trees of each round with LightGBM."""

    name = "lightgbm"

    def __init__(self, params, init_raw: np.ndarray, X, sample_weight, X_val):
        self.k = init_raw.size
        self.n = X.shape[0]
        self._base_rate = self._rate = params.learning_rate  # the booster's current rate
        self._last = None  # the (grad, hess) of the last round, for retry()
        dataset_params = {"max_bin": params.max_bin, "verbosity": -1,
                          "feature_pre_filter": False}
        threads = num_threads(params.n_jobs, self.n)
        if threads is not None:
            dataset_params["num_threads"] = threads
        self.train = lgb.Dataset(
            X, label=np.zeros(self.n, dtype=np.float32), init_score=_init_score(init_raw, self.n),
            params=dataset_params, categorical_feature="auto", free_raw_data=True,
        )
        self.booster = lgb.Booster(params=_lgb_params(params, self.k, self.n),
                                   train_set=self.train)
        self._has_valid = X_val is not None
        if X_val is not None:
            n_val = X_val.shape[0]
            # The validation set inherits binning and categorical columns from the reference.
            valid = lgb.Dataset(
                X_val, label=np.zeros(n_val, dtype=np.float32),
                init_score=_init_score(init_raw, n_val),
                reference=self.train, params=dataset_params, free_raw_data=True,
            )
            self.booster.add_valid(valid, "valid")
            valid.init_score = valid.label = None
        # LightGBM keeps its own copies of the start values and labels; the Python-side
        # copies (n * K floats) are not needed again (``get_init_score`` would fetch them).
        self.train.init_score = self.train.label = None

    #: dtype and memory order of the ``(grad, hess)`` arrays LightGBM copies without
    #: conversion (float32, column-major ``(n, K)``).
    layout = (np.float32, "F")

    def train_scores(self) -> np.ndarray:
        """Current raw scores of the training rows (init included), shape (n, K).

        A view of LightGBM's buffer, valid until the booster changes: copy it to keep it.
        """
        captured = {}

        def feval(preds, _dataset):
            captured["raw"] = preds
            return "none", 0.0, False

        self.booster.eval_train(feval)
        return np.reshape(captured["raw"], (self.n, self.k))

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        """One round of ``K`` trees from ``(grad, hess)`` (shape (n, K)) with shrinkage
        ``learning_rate``."""
        if learning_rate != self._rate:
            self.booster.reset_parameter({"learning_rate": learning_rate})
            self._rate = learning_rate
        self._last = (grad, hess)
        if self.k == 1:
            grad, hess = grad[:, 0], hess[:, 0]
        try:
            self.booster.update(fobj=lambda _preds, _dataset: (grad, hess))
        except lgb.basic.LightGBMError as err:
            if "num_features()" not in str(err):
                raise
            raise ValueError(
                f"Every feature is constant on these {self.n} training rows (LightGBM found "
                "nothing to split on): give at least one feature that varies across the "
                "rows (on small data, or with a rare category, a cross-validation fold can "
                "see a single value; early_stopping='holdout' or False avoids the folds)."
            ) from None

    def retry(self, learning_rate: float) -> None:
        """Take the last round back and grow it again from its ``(grad, hess)`` with
        ``learning_rate``.  Without ``subsample`` / ``colsample`` the trees are the same,
        their leaf values scaled by the ratio of the rates; with them, a new bag is drawn."""
        self.booster.rollback_one_iter()
        self.grow(*self._last, learning_rate)

    def rollback(self) -> None:
        """Remove the last round (its trees and their share of the kept scores)."""
        self.booster.rollback_one_iter()

    def valid_raw(self) -> np.ndarray | None:
        """Current raw scores of the validation rows (init included), shape (n_val, K);
        None without validation rows."""
        if not self._has_valid:
            return None
        captured = {}

        def feval(preds, _dataset):
            captured["raw"] = preds
            return "none", 0.0, False

        self.booster.eval_valid(feval)
        return np.reshape(captured["raw"], (-1, self.k))

    def finish(self) -> LightGBMModel:
        self._last = None
        if self._rate != self._base_rate:  # a retried last round: the saved parameters
            self.booster.reset_parameter({"learning_rate": self._base_rate})
        self.booster.free_dataset()
        return LightGBMModel(self.booster, self.k)


class LightGBMModel:
    """Prediction side of the LightGBM backend."""

    name = "lightgbm"

    def __init__(self, booster: lgb.Booster, k: int):
        self.booster = booster
        self.k = k

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        if num_iteration <= 0:
            return np.zeros((X.shape[0], self.k))
        with _PREDICT_LOCK:
            out = self.booster.predict(X, raw_score=True, num_iteration=num_iteration)
        return np.reshape(out, (X.shape[0], self.k))

    def predict_raw_rounds(self, X, rounds) -> np.ndarray:
        """Output ``k`` read at round ``rounds[k]`` (per-parameter stopping), shape (n, K):
        the rounds up to each distinct count predicted once, as consecutive ranges whose
        sums accumulate, so every tree is evaluated once (one call per distinct count
        reads its rounds from the start: ``r_1 + r_2`` rounds instead of ``r_2``)."""
        rounds = np.asarray(rounds, dtype=int)
        n = X.shape[0]
        out, total, start = np.zeros((n, self.k)), np.zeros((n, self.k)), 0
        for r in np.unique(rounds[rounds > 0]):
            with _PREDICT_LOCK:
                part = self.booster.predict(X, raw_score=True, start_iteration=start,
                                            num_iteration=int(r) - start)
            total += np.reshape(part, (n, self.k))
            cols = rounds == r
            out[:, cols] = total[:, cols]
            start = int(r)
        return out

    def to_text(self, num_iteration: int) -> str:
        """The first ``num_iteration`` rounds as LightGBM text; none of the trees for
        ``num_iteration <= 0`` (LightGBM would save every round)."""
        if num_iteration <= 0:
            return self.booster.model_to_string(
                num_iteration=1, start_iteration=self.booster.current_iteration())
        return self.booster.model_to_string(num_iteration=num_iteration)

    @classmethod
    def from_text(cls, text: str, k: int) -> LightGBMModel:
        return cls(lgb.Booster(model_str=text), k)

    def predict_contrib(self, X, num_iteration: int) -> np.ndarray:
        """LightGBM's exact TreeSHAP (``pred_contrib``), shape (n, K, p + 1), the last
        column the trees' expected value (start values excluded)."""
        n, p = X.shape[0], self.booster.num_feature()
        if num_iteration <= 0:
            return np.zeros((n, self.k, p + 1))
        with _PREDICT_LOCK:
            out = self.booster.predict(X, pred_contrib=True, num_iteration=num_iteration)
        return np.reshape(np.asarray(out, dtype=np.float64), (n, self.k, p + 1))

    def feature_importances(self, num_iteration: int,
                            importance_type: str = "gain") -> np.ndarray:
        """Gain or split count per output and feature over the first ``num_iteration``
        rounds, shape (K, p): zeros for ``num_iteration <= 0`` (LightGBM's ``dump_model``
        and ``feature_importance`` read 0 as *every* round, which would describe trees
        that early stopping discarded)."""
        check_importance_type(importance_type)
        if num_iteration <= 0:
            return np.zeros((self.k, self.booster.num_feature()))
        dump = self.booster.dump_model(num_iteration=num_iteration)
        p = len(dump["feature_names"])
        out = np.zeros((self.k, p))
        gain = importance_type == "gain"
        for tree in dump["tree_info"]:
            stack = [tree["tree_structure"]]
            while stack:
                node = stack.pop()
                if "split_feature" in node:
                    out[tree["tree_index"] % self.k, node["split_feature"]] += (
                        node["split_gain"] if gain else 1.0)
                    stack.extend((node["left_child"], node["right_child"]))
        return out
