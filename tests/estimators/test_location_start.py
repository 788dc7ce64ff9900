"""The location start (``location_start``): a LightGBM point model as the location's start.

References are independent: LightGBM's own L2 regressor fitted on the same rows (its early
stopping on the same validation rows), TreeSHAP additivity, and the saved model's
predictions.
"""

from __future__ import annotations

import json

import lightgbm as lgb
import numpy as np
import pytest

import distboost as db
from distboost.estimators.location_start import PATIENCE, POINT_DEFAULTS, cv_point_rounds

R = db.DistributionalRegressor


def _data(n, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 3))
    y = 2.0 * np.sin(2 * X[:, 0]) + X[:, 1] + (0.2 + 0.2 * np.abs(X[:, 2])) * rng.normal(
        size=n)
    return X, y


def _lgb_params(n, **extra):
    # min_child_samples "auto": clip(round(sqrt(n) / 2), 5, 20), the estimators' rule
    return {"objective": "regression", "learning_rate": POINT_DEFAULTS["learning_rate"],
            "num_leaves": POINT_DEFAULTS["num_leaves"],
            "min_data_in_leaf": int(np.clip(round(np.sqrt(n) / 2), 5, 20)), "verbosity": -1,
            "deterministic": True, "force_row_wise": True, "seed": 0, "num_threads": 1,
            "feature_pre_filter": False, **extra}


@pytest.fixture(scope="module")
def fitted():
    X, y = _data(400)
    model = R(location_start="gbm", n_estimators=30, random_state=0).fit(
        X[:300], y[:300], eval_set=(X[300:], y[300:]))
    return model, X, y


def test_start_is_lightgbms_own_early_stopped_regressor(fitted):
    model, X, y = fitted
    start = model.location_start_
    ref = lgb.train(_lgb_params(300), lgb.Dataset(X[:300], y[:300]), num_boost_round=5000,
                    valid_sets=[lgb.Dataset(X[300:], y[300:])],
                    callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])
    assert start.rounds == ref.best_iteration
    point = ref.predict(X, num_iteration=ref.best_iteration)
    # (the start fits the centred target: float32 labels round differently, ~1e-7)
    np.testing.assert_allclose(start.offset(X)[:, 0], point, atol=1e-6)
    np.testing.assert_array_equal(start.offset(X)[:, 1], 0.0)
    # Staged prediction: after 0 rounds the location is the point model plus the intercept
    # (the residuals' mean on the training rows: near 0 for an L2 fit).
    loc0 = model.predict_raw(X, iteration=0)[:, 0]
    np.testing.assert_allclose(loc0 - model.ensemble_.init_raw[0], point, atol=1e-6)
    assert abs(model.ensemble_.init_raw[0]) < 0.1 * np.std(y)
    for k in (1, 10, None):
        assert np.all(np.isfinite(model.predict_dist(X, iteration=k).mean))


def test_shap_adds_up_with_the_start_and_credits_its_features(fitted):
    model, X, _ = fitted
    e = model.explain(X[:50])
    np.testing.assert_allclose(e.base_values + e.values.sum(-1), model.predict_raw(X[:50]),
                               atol=1e-8)
    # The location depends on x0 and x1 through the point model: their SHAP values vary.
    assert e.values[:, 0, 0].std() > 0.5 and e.values[:, 0, 1].std() > 0.2


def test_save_load_round_trip_and_models_saved_before_it(fitted, tmp_path):
    model, X, _ = fitted
    path = tmp_path / "m.json"
    model.save(path)
    loaded = db.load(path)
    np.testing.assert_array_equal(loaded.predict_raw(X), model.predict_raw(X))
    assert loaded.location_start_.rounds == model.location_start_.rounds
    # A state without the key (a file written before location_start) loads as no start.
    state = json.loads(json.dumps(model._get_state()))
    state.pop("location_start_")
    old = R()
    old._set_state(state)
    assert old.location_start_ is None


def test_lognormal_start_is_on_log_y_and_counts_get_none():
    X, y = _data(200, seed=1)
    yp = np.exp(0.3 * y)
    m = R(family="lognormal", location_start={"n_estimators": 25}, early_stopping=False,
          n_estimators=5).fit(X, yp)
    ref = lgb.train(_lgb_params(200), lgb.Dataset(X, np.log(yp)), num_boost_round=25)
    np.testing.assert_allclose(m.location_start_.offset(X)[:, 0], ref.predict(X), atol=1e-6)
    counts = np.random.default_rng(0).poisson(np.exp(X[:, 0]))
    m = R(family="poisson", location_start="auto", n_estimators=5, early_stopping=False).fit(
        X, counts)
    assert m.location_start_ is None


def test_cv_rounds_are_the_argmin_of_the_padded_weighted_mean_curve():
    curves = [np.array([5.0, 3.0, 2.0, 2.5]), np.array([4.0, 1.0])]  # 2nd padded with 1.0
    # weighted means: [4.67, 2.33, 1.67, 2.0] with weights (1, 2): argmin round 3
    assert cv_point_rounds(curves, [1.0, 2.0]) == 3
    assert cv_point_rounds(curves, [1.0, 0.0]) == 3 and cv_point_rounds(curves, [0.0, 1.0]) == 2


def test_auto_keeps_the_start_only_where_it_wins_on_the_validation_rows():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(500, 2))
    steep = np.sin(3 * X[:, 0]) * 3 + 0.05 * rng.normal(size=500)
    noise = rng.normal(size=500)
    kw = {"location_start": "auto", "n_estimators": 30, "random_state": 0}
    kept = R(**kw).fit(X[:400], steep[:400], eval_set=(X[400:], steep[400:]))
    assert kept.location_start_ is not None
    dropped = R(**kw).fit(X[:400], noise[:400], eval_set=(X[400:], noise[400:]))
    assert dropped.location_start_ is None
