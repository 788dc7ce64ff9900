"""scikit-learn tree backend: any regressor as the base learner (the write-ups' choice).

Each round and parameter, a clone of ``base_learner`` is fitted by weighted least squares to
``-grad / hess`` with weights ``hess`` (a Newton step; for the ``gradient`` rule ``hess = 1``
so the target is the negative gradient, Friedman 2001).  Rows and columns are subsampled with
a seeded numpy Generator.  Models are kept in memory only (pickle them to save).
"""

from __future__ import annotations

import numpy as np
from sklearn.base import clone

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

    def _learner(self):
        est = clone(self.params.base_learner)
        if "random_state" in est.get_params():
            est.set_params(random_state=int(self.rng.integers(2**31 - 1)))
        return est

    def boost_one_round(self, step) -> None:
        g, h = step(self.raw)
        n, p = self.X.shape
        rows = np.arange(n)
        if self.params.subsample < 1.0:
            rows = np.sort(self.rng.choice(n, max(1, int(round(self.params.subsample * n))),
                                           replace=False))
        trees = []
        lr = self.params.learning_rate
        for j in range(self.k):
            cols = np.arange(p)
            if self.params.colsample < 1.0:
                cols = np.sort(self.rng.choice(p, max(1, int(round(self.params.colsample * p))),
                                               replace=False))
            hj = h[rows, j]
            target = -g[rows, j] / hj
            est = self._learner().fit(self.X[np.ix_(rows, cols)], target, sample_weight=hj)
            self.raw[:, j] += lr * est.predict(self.X[:, cols])
            if self.raw_val is not None:
                self.raw_val[:, j] += lr * est.predict(self.X_val[:, cols])
            trees.append((est, cols))
        self.rounds.append(trees)

    def train_raw(self) -> np.ndarray:
        """Current raw scores of the training rows (init included), shape (n, K), a copy."""
        return self.raw.copy()

    def valid_raw(self) -> np.ndarray:
        return self.raw_val

    def finish(self) -> SklearnModel:
        return SklearnModel(self.rounds, self.k, self.params.learning_rate)


class SklearnModel:
    """Prediction side of the scikit-learn backend."""

    name = "sklearn"

    def __init__(self, rounds, k: int, learning_rate: float):
        self.rounds = rounds
        self.k = k
        self.learning_rate = learning_rate

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        if hasattr(X, "to_numpy"):
            X = X.to_numpy(dtype=np.float64)
        out = np.zeros((X.shape[0], self.k))
        for trees in self.rounds[:num_iteration]:
            for j, (est, cols) in enumerate(trees):
                out[:, j] += self.learning_rate * est.predict(X[:, cols])
        return out

    def to_text(self, num_iteration: int) -> str:
        raise ValueError(
            "A model with a scikit-learn base_learner cannot be saved in the safe text format; "
            "use pickle or joblib (scikit-learn's convention) instead."
        )

    def feature_importances(self, num_iteration: int) -> np.ndarray:
        p = max((int(c.max()) + 1 for trees in self.rounds for _, c in trees), default=0)
        out = np.zeros((self.k, p))
        for trees in self.rounds[:num_iteration]:
            for j, (est, cols) in enumerate(trees):
                imp = getattr(est, "feature_importances_", None)
                if imp is not None:
                    out[j, cols] += imp
        return out
