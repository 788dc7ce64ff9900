"""scikit-learn tree backend: any regressor as the base learner (the write-ups' choice).

Each round and parameter, a clone of ``base_learner`` is fitted by weighted least squares to
``-grad / hess`` with weights ``hess`` (a Newton step; for the ``gradient`` rule ``hess = 1``
so the target is the negative gradient, Friedman 2001).  Rows and columns are subsampled with
a seeded numpy Generator.  Models are kept in memory only (pickle them to save).

Each round keeps its own shrinkage: when the engine's descent check halves a round's step,
the round's trees are kept and only their rate changes (the training and validation scores
are the scores before the round plus the new rate times the trees' predictions).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

from .backend import check_importance_type

__all__ = ["SklearnBackend", "SklearnModel"]


class SklearnBackend:
    """Grows the trees of each round with a scikit-learn regressor."""

    name = "sklearn"

    def __init__(self, params, init_raw: np.ndarray, X, sample_weight, X_val):
        if hasattr(X, "to_numpy"):
            X = X.to_numpy(dtype=np.float64)
        if X_val is not None and hasattr(X_val, "to_numpy"):
            X_val = X_val.to_numpy(dtype=np.float64)
        self.X, self.X_val = X, X_val
        self.params = params
        self.rng = np.random.default_rng(params.random_state)
        self.k = init_raw.size
        self.raw = np.tile(init_raw, (X.shape[0], 1))
        self.raw_val = None if X_val is None else np.tile(init_raw, (X_val.shape[0], 1))
        self.rounds: list[list[tuple[object, np.ndarray]]] = []
        self.rates: list[float] = []  # each round's shrinkage
        self._before = self._delta = None  # the last round's undo information

    def _learner(self):
        est = clone(self.params.base_learner)
        if "random_state" in est.get_params():
            est.set_params(random_state=int(self.rng.integers(2**31 - 1)))
        return est

    #: dtype and memory order of the ``(grad, hess)`` arrays the step rule returns.
    layout = (np.float64, "C")

    def train_scores(self) -> np.ndarray:
        """Current raw scores of the training rows (init included), shape (n, K); the
        backend's own array (copy it to keep it)."""
        return self.raw

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        """One round: per parameter, a clone of the base learner fitted to ``-grad / hess``
        with weights ``hess`` on the round's rows and columns, shrunk by ``learning_rate``."""
        n, p = self.X.shape
        rows = np.arange(n)
        if self.params.subsample < 1.0:
            rows = np.sort(self.rng.choice(n, max(1, int(round(self.params.subsample * n))),
                                           replace=False))
        trees = []
        delta = np.empty((n, self.k))
        delta_val = None if self.raw_val is None else np.empty_like(self.raw_val)
        for j in range(self.k):
            cols = np.arange(p)
            if self.params.colsample < 1.0:
                cols = np.sort(self.rng.choice(p, max(1, int(round(self.params.colsample * p))),
                                               replace=False))
            hj = hess[rows, j]
            target = -grad[rows, j] / hj
            est = self._learner().fit(self.X[np.ix_(rows, cols)], target, sample_weight=hj)
            delta[:, j] = est.predict(self.X[:, cols])
            if delta_val is not None:
                delta_val[:, j] = est.predict(self.X_val[:, cols])
            trees.append((est, cols))
        self._before = (self.raw.copy(), None if self.raw_val is None else self.raw_val.copy())
        self._delta = (delta, delta_val)
        self.rounds.append(trees)
        self.rates.append(learning_rate)
        self._apply(learning_rate)

    def _apply(self, learning_rate: float) -> None:
        """Scores = scores before the last round + ``learning_rate`` x its trees."""
        np.multiply(self._delta[0], learning_rate, out=self.raw)
        self.raw += self._before[0]
        if self.raw_val is not None:
            np.multiply(self._delta[1], learning_rate, out=self.raw_val)
            self.raw_val += self._before[1]

    def retry(self, learning_rate: float) -> None:
        """The last round with its trees kept and its rate set to ``learning_rate``."""
        self.rates[-1] = learning_rate
        self._apply(learning_rate)

    def rollback(self) -> None:
        """Remove the last round: its trees, and the scores back to those before it."""
        self.rounds.pop()
        self.rates.pop()
        self.raw[...] = self._before[0]
        if self.raw_val is not None:
            self.raw_val[...] = self._before[1]

    def valid_raw(self) -> np.ndarray:
        return self.raw_val

    def finish(self) -> SklearnModel:
        return SklearnModel(self.rounds, self.k, self.params.learning_rate, self.rates)


class SklearnModel:
    """Prediction side of the scikit-learn backend."""

    name = "sklearn"

    def __init__(self, rounds, k: int, learning_rate: float, rates=None):
        self.rounds = rounds
        self.k = k
        self.learning_rate = learning_rate
        self.rates = [learning_rate] * len(rounds) if rates is None else list(rates)

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        if hasattr(X, "to_numpy"):
            X = X.to_numpy(dtype=np.float64)
        out = np.zeros((X.shape[0], self.k))
        for trees, rate in zip(self.rounds[:max(num_iteration, 0)], self.rates, strict=False):
            for j, (est, cols) in enumerate(trees):
                out[:, j] += rate * est.predict(X[:, cols])
        return out

    def to_text(self, num_iteration: int) -> str:
        raise ValueError(
            "A model with a scikit-learn base_learner cannot be saved in the safe text format; "
            "use pickle or joblib (scikit-learn's convention) instead."
        )

    @classmethod
    def from_text(cls, text: str, k: int) -> SklearnModel:
        """Not available: scikit-learn models have no safe text format (see :meth:`to_text`)."""
        raise ValueError("A scikit-learn base_learner model cannot be loaded from text; "
                         "pickle or joblib saved it.")

    def predict_contrib(self, X, num_iteration: int) -> np.ndarray:
        """Not available: the scikit-learn backend has no exact TreeSHAP."""
        raise NotImplementedError(
            "The 'sklearn' tree backend (a scikit-learn base_learner) has no exact TreeSHAP "
            "contributions; explain() needs the 'lightgbm' backend (base_learner=None), or "
            "use shap.Explainer on model.predict_raw.")

    def feature_importances(self, num_iteration: int,
                            importance_type: str = "gain") -> np.ndarray:
        check_importance_type(importance_type)
        if importance_type == "split":
            return self._split_counts(num_iteration)
        p = max((int(c.max()) + 1 for trees in self.rounds for _, c in trees), default=0)
        out = np.zeros((self.k, p))
        for trees in self.rounds[:max(num_iteration, 0)]:
            for j, (est, cols) in enumerate(trees):
                imp = getattr(est, "feature_importances_", None)
                if imp is not None:
                    out[j, cols] += imp
        return out

    def _split_counts(self, num_iteration: int) -> np.ndarray:
        """Splits on each feature per output (learners with a fitted ``tree_``)."""
        p = max((int(c.max()) + 1 for trees in self.rounds for _, c in trees), default=0)
        out = np.zeros((self.k, p))
        for trees in self.rounds[:max(num_iteration, 0)]:
            for j, (est, cols) in enumerate(trees):
                tree = getattr(est, "tree_", None)
                if tree is None:
                    raise ValueError(
                        f"importance_type='split' needs tree learners with a tree_ "
                        f"attribute; the base_learner {type(est).__name__} has none.")
                used = tree.feature[tree.feature >= 0]
                np.add.at(out[j], cols[used], 1.0)
        return out
