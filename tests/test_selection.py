"""compare_families: full conditional models cross-validated on the same folds."""

from __future__ import annotations

import numpy as np

import distboost as db


def test_picks_the_generating_family_and_explains_skips():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(1500, 2))
    y = rng.gamma(2.0, np.exp(0.5 * X[:, 0]))  # gamma with x-dependent scale
    table = db.compare_families(X, y, families=["gamma", "normal", "beta"], cv=3,
                                n_estimators=60, num_leaves=4, learning_rate=0.1)
    assert list(table["family"][:2]) == ["gamma", "normal"]
    assert table.loc[0, "nll_mean"] < table.loc[1, "nll_mean"]
    beta = table.set_index("family").loc["beta"]
    assert "outside the support" in beta["skipped"] and np.isnan(beta["nll_mean"])
    assert {"crps_mean", "crps_std", "coverage_90_mean", "fit_seconds"} <= set(table.columns)


def test_censored_targets():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(600, 2))
    t = np.exp(0.5 * X[:, 0] + 0.5 * rng.normal(size=600))
    c = rng.exponential(3.0, size=600)
    y = db.censored.right(np.minimum(t, c), t <= c)
    table = db.compare_families(X, y, families=["censored_lognormal", "censored_exponential"],
                                cv=3, metrics=("nll", "c_index"), n_estimators=40,
                                num_leaves=4)
    assert table.loc[0, "family"] == "censored_lognormal"
    assert (table["c_index_mean"] > 0.6).all()
