"""``tuning="auto"``: the seeded, budgeted search of tree options (distboost.estimators.tuning)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import distboost as db
from distboost.estimators.tuning import MAX_CANDIDATES, _choose, candidates

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
    best = ta["score"].idxmin()
    # The best score wins only by more than one paired standard error over row 0.
    if row.name == 0:
        assert ta.loc[best, "score"] > ta.loc[0, "score"] - ta.loc[best, "se_vs_given"]
    else:
        assert row.name == best and row["score"] < ta.loc[0, "score"] - row["se_vs_given"]
    assert ta.attrs["rule"].startswith("one standard error")
    # The fitted model uses the chosen options (row 0 holds the estimator's own).
    if chosen["num_leaves"] != "auto":
        assert a.num_leaves_ == chosen["num_leaves"]
    assert (a.location_start_ is None) == (chosen["location_start"] is None)
    assert a.get_params()["tuning"] == "auto" and a.get_params()["num_leaves"] == "auto"


def test_a_candidate_replaces_the_given_options_only_beyond_one_standard_error():
    rng = np.random.default_rng(0)
    given = rng.normal(1.0, 0.5, size=400)
    noise = rng.normal(0.0, 0.5, size=400)  # the paired difference's spread: SE ~ 0.025
    slightly = given - 0.01 + noise  # better on average by less than one SE
    clearly = given - 0.2 + noise  # better by eight SEs
    best, scores, se = _choose([given, slightly], None)
    assert best == 0 and scores[1] < scores[0] and 0.02 < se[1] < 0.03 and se[0] == 0
    assert _choose([given, slightly, clearly], None)[0] == 2
    # Weights: rows of zero weight do not count; a non-finite given score is replaced.
    w = np.r_[np.ones(200), np.zeros(200)]
    skewed = np.r_[given[:200] - 0.2, given[200:] + 50.0]
    assert _choose([given, skewed], w)[0] == 1
    assert _choose([np.full(400, np.inf), slightly], None)[0] == 1


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


def test_larger_trees_are_searched_only_where_the_automatic_size_is_at_its_cap():
    from distboost.estimators.tuning import LARGE_LEAVES

    est = R()
    seen = {n: {c["num_leaves"] for seed in range(20)
                for c in candidates(est, "normal", seed, n)} for n in (500, 3000, 5000)}
    assert not seen[500] & set(LARGE_LEAVES) and not seen[3000] & set(LARGE_LEAVES)
    assert set(LARGE_LEAVES) <= seen[5000]
    assert candidates(est, "normal", 0, 500) == candidates(est, "normal", 0)


@pytest.mark.slow
def test_tuning_inside_grid_search():
    X, y = _data(300, seed=1)
    grid = GridSearchCV(R(tuning="auto", n_estimators=20, early_stopping="holdout",
                          random_state=0), {"learning_rate": [0.05]}, cv=2,
                        scoring=db.metrics.get_scorer("crps"))
    grid.fit(X, y)
    assert hasattr(grid.best_estimator_, "tuning_table_")
    assert np.isfinite(grid.best_score_)
