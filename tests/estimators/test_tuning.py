"""``tuning="auto"``: the seeded, budgeted search of tree options (distboost.estimators.tuning)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import distboost as db
from distboost.estimators.tuning import MAX_CANDIDATES, candidates

R = db.DistributionalRegressor


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    return X, 2.0 * np.sin(2 * X[:, 0]) + X[:, 1] + 0.3 * rng.normal(size=n)


def test_search_is_reproducible_and_records_its_choice():
    X, y = _data(150)
    kw = {"tuning": "auto", "n_estimators": 5, "early_stopping": "holdout",
          "random_state": 3}
    a, b = R(**kw).fit(X, y), R(**kw).fit(X, y)
    ta, tb = a.tuning_table_, b.tuning_table_
    assert len(ta) == MAX_CANDIDATES and ta["chosen"].sum() == 1
    cols = [c for c in ta.columns if c != "seconds"]
    assert ta[cols].equals(tb[cols])
    np.testing.assert_array_equal(a.predict_raw(X), b.predict_raw(X))
    chosen = ta.attrs["chosen"]
    row = ta[ta["chosen"]].iloc[0]
    assert row["score"] == ta["score"].min()
    # The fitted model uses the chosen options (row 0 holds the estimator's own).
    if chosen["num_leaves"] != "auto":
        assert a.num_leaves_ == chosen["num_leaves"]
    assert (a.location_start_ is None) == (chosen["location_start"] is None)
    assert a.get_params()["tuning"] == "auto" and a.get_params()["num_leaves"] == "auto"


def test_candidates_are_seeded_distinct_and_skip_the_start_without_a_location():
    est = R()
    c1, c2 = candidates(est, "normal", 0), candidates(est, "normal", 0)
    assert c1 == c2 and len(c1) == MAX_CANDIDATES
    assert c1[0] == {"num_leaves": "auto", "min_child_samples": "auto",
                     "learning_rate": 0.05, "location_start": None}
    assert len({repr(sorted(c.items())) for c in c1}) == MAX_CANDIDATES
    assert candidates(est, "normal", 1) != c1
    assert all("location_start" not in c for c in candidates(est, "poisson", 0))
    assert "tuning" in clone(R(tuning="auto")).get_params()


@pytest.mark.slow
def test_tuning_inside_grid_search():
    X, y = _data(300, seed=1)
    grid = GridSearchCV(R(tuning="auto", n_estimators=20, early_stopping="holdout",
                          random_state=0), {"learning_rate": [0.05]}, cv=2,
                        scoring=db.metrics.get_scorer("crps"))
    grid.fit(X, y)
    assert hasattr(grid.best_estimator_, "tuning_table_")
    assert np.isfinite(grid.best_score_)
