"""scikit-learn scorers: signs, names, and use in cross_val_score / GridSearchCV."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

import distboost as db
from distboost.metrics import get_scorer


class _Fixed:
    """A stand-in estimator predicting N(0, scale) for every row."""

    def __init__(self, scale):
        self.scale = scale

    def predict_dist(self, X):
        n = len(X)
        return db.Predictive.from_params("normal", loc=np.zeros(n), scale=np.full(n, self.scale))


def test_higher_is_better():
    rng = np.random.default_rng(0)
    X, y = np.zeros((5000, 1)), rng.normal(size=5000)
    for name in ["crps", "nll", "interval_score_90", "coverage_90", "calibration_error",
                 "pinball_90", "pinball_10"]:
        scorer = get_scorer(name)
        good, bad = scorer(_Fixed(1.0), X, y), scorer(_Fixed(3.0), X, y)
        assert good > bad, name
    assert get_scorer("coverage_90")(_Fixed(1.0), X, y) == pytest.approx(0.0, abs=0.02)
    # The median of N(0, 1) and N(0, 3) is the same: equal pinball loss at level 0.5.
    pin50 = get_scorer("pinball_50")
    assert pin50(_Fixed(1.0), X, y) == pytest.approx(pin50(_Fixed(3.0), X, y))


def test_unknown_scorer_lists_names():
    with pytest.raises(ValueError, match="known scorers"):
        get_scorer("accuracy")
    with pytest.raises(ValueError, match="known scorers"):
        get_scorer("coverage_100")


def test_cross_val_and_grid_search_with_the_regressor():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = X[:, 0] + rng.normal(size=400) * (0.2 + 0.3 * np.abs(X[:, 1]))
    model = db.DistributionalRegressor(n_estimators=30, num_leaves=4, random_state=0)
    scores = cross_val_score(model, X, y, cv=3, scoring=get_scorer("crps"))
    assert scores.shape == (3,) and np.all(scores < 0)
    grid = GridSearchCV(model, {"learning_rate": [0.01, 0.1]}, cv=3,
                        scoring=get_scorer("nll")).fit(X, y)
    assert grid.best_params_["learning_rate"] == 0.1
