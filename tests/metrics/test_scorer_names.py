"""scikit-learn's spelling of negated losses (``neg_crps``) and multi-metric searches with the
scorer objects (issue 25 item 7): scikit-learn registers no new string names, so the docs show
the objects; these run as documented."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV

import distboost as db
from distboost.metrics import get_scorer


def test_neg_names_are_the_loss_scorers_and_a_grid_search_takes_a_dict_of_them():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(80, 1))
    y = X[:, 0] + rng.normal(size=80) * (0.3 + 0.3 * np.abs(X[:, 0]))
    for bad in ("neg_concordance_index", "neg_coverage_90", "neg_loglik"):
        with pytest.raises(ValueError, match="known scorers"):
            get_scorer(bad)
    grid = GridSearchCV(db.DistributionalRegressor(n_estimators=3, early_stopping=False),
                        {"learning_rate": [0.01, 0.3]}, cv=2, refit="crps",
                        scoring={"crps": get_scorer("neg_crps"),
                                 "coverage_90": get_scorer("coverage_90")}).fit(X, y)
    crps = grid.cv_results_["mean_test_crps"]
    assert crps.shape == (2,) and np.all(crps < 0)
    assert grid.best_params_["learning_rate"] == 0.3  # 3 rounds: the larger step is better
    assert np.all(grid.cv_results_["mean_test_coverage_90"] <= 0)
    model = grid.best_estimator_
    d = model.predict_dist(X)
    assert get_scorer("neg_crps")(model, X, y) == -db.metrics.mean_crps(d, y)
    assert get_scorer("neg_nll")(model, X, y) == get_scorer("nll")(model, X, y)
    assert (get_scorer("neg_interval_score_90")(model, X, y)
            == -db.metrics.mean_interval_score(d, y, 0.9))
