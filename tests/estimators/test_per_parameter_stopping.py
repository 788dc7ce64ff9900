"""``per_parameter_stopping``: each parameter keeps its own round (issue 31)."""

from __future__ import annotations

import numpy as np
import pytest

import distboost as db


def _smooth(n, seed):
    """A near-deterministic target: a smooth function plus tiny noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    return X, np.sin(2 * X[:, 0]) + X[:, 1] ** 2 + 0.001 * rng.normal(size=n)


@pytest.fixture(scope="module")
def fitted():
    X, y = _smooth(400, 0)
    X_val, y_val = _smooth(200, 10)
    # min_child_samples: the "auto" size of 400 rows, set so that the location's fine leaves
    # on near-deterministic data (distboost.estimators.leaf_size) stay out of this test.
    kw = {"random_state": 0, "n_estimators": 400, "learning_rate": 0.3,
          "n_iter_no_change": 10, "min_child_samples": 10}
    shared = db.DistributionalRegressor(per_parameter_stopping=False, **kw).fit(
        X, y, eval_set=(X_val, y_val))
    own = db.DistributionalRegressor(**kw).fit(X, y, eval_set=(X_val, y_val))  # the default
    return shared, own


def test_the_location_keeps_more_rounds_and_a_better_mean(fitted):
    shared, own = fitted
    X_te, _ = _smooth(1000, 2)
    f = np.sin(2 * X_te[:, 0]) + X_te[:, 1] ** 2
    assert set(shared.best_iterations_.values()) == {shared.best_iteration_}
    assert own.best_iterations_["scale"] == shared.best_iteration_  # the joint rule's
    assert own.best_iterations_["loc"] > own.best_iterations_["scale"]
    assert own.best_iteration_ == own.best_iterations_["loc"]

    def rmse(m):
        return np.sqrt(np.mean((m.predict(X_te) - f) ** 2))

    assert rmse(own) < 0.95 * rmse(shared)


def test_frozen_trees_add_nothing_and_staged_predictions_follow_each_round(fitted):
    _, own = fitted
    X_te, _ = _smooth(50, 3)
    loc, scale = own.best_iterations_["loc"], own.best_iterations_["scale"]
    ens = own.ensemble_
    booster = ens.model.booster  # LightGBM itself, every tree it grew

    def lgb_raw(t):
        return booster.predict(X_te, raw_score=True, num_iteration=t).reshape(50, 2)

    # The scale's trees after the joint stop are single leaves of value 0.
    assert scale < ens.joint_rounds_ < loc
    np.testing.assert_allclose(lgb_raw(loc)[:, 1], lgb_raw(ens.joint_rounds_)[:, 1],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(ens.predict_raw(X_te) - ens.init_raw,
                               np.column_stack([lgb_raw(loc)[:, 0], lgb_raw(scale)[:, 1]]),
                               atol=1e-12)
    t = scale // 2  # before both rounds: every output at t
    np.testing.assert_allclose(ens.predict_raw(X_te, num_iteration=t),
                               lgb_raw(t) + ens.init_raw)
    np.testing.assert_allclose(own.predict_raw(X_te, iteration=own.best_iteration_),
                               own.predict_raw(X_te))


def test_shap_and_importances_follow_each_parameter_round(fitted):
    _, own = fitted
    X_te, _ = _smooth(20, 4)
    e = own.explain(X_te)
    np.testing.assert_allclose(e.base_values + e.values.sum(-1), own.predict_raw(X_te),
                               atol=1e-8)
    trees = own.ensemble_.model.booster.trees_to_dataframe()
    gains = own.feature_importances("gain")
    for k, name in enumerate(("loc", "scale")):
        kept = trees[(trees.tree_index % 2 == k)
                     & (trees.tree_index < 2 * own.best_iterations_[name])]
        expected = kept.groupby("split_feature").split_gain.sum()  # "Column_<j>"
        columns = [int(c.rsplit("_", 1)[1]) for c in expected.index]
        np.testing.assert_allclose(gains.loc[name].to_numpy()[columns],
                                   expected.to_numpy(), rtol=1e-6)


def test_save_load_round_trip(fitted, tmp_path):
    _, own = fitted
    X_te, _ = _smooth(30, 5)
    own.save(tmp_path / "m")
    back = db.load(tmp_path / "m")
    assert back.best_iterations_ == own.best_iterations_
    np.testing.assert_array_equal(back.predict_raw(X_te), own.predict_raw(X_te))
    np.testing.assert_array_equal(back.predict_raw(X_te, iteration=5),
                                  own.predict_raw(X_te, iteration=5))


def test_cross_validated_refit_and_a_family_without_dispersion():
    X, y = _smooth(150, 6)
    m = db.DistributionalRegressor(random_state=0, n_estimators=100, learning_rate=0.3,
                                   linear_start=False, n_iter_no_change=5).fit(X, y)
    assert m.early_stopping_ == "cv"
    assert m.best_iterations_["loc"] >= m.best_iterations_["scale"] >= 1
    assert np.isfinite(m.predict_dist(X[:10]).crps(y[:10])).all()
    counts = np.random.default_rng(0).poisson(3.0, size=150)
    p = db.DistributionalRegressor(family="poisson", per_parameter_stopping=True,
                                   n_estimators=20, early_stopping="holdout",
                                   random_state=0).fit(X, counts)
    assert set(p.best_iterations_) == {"rate"}
    assert p.best_iterations_["rate"] == p.best_iteration_
