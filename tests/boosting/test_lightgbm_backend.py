"""Tests of :mod:`distboost.boosting.lightgbm_backend` and the backend registry."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from boosting_cases import engine, fit, gaussian_fisher, gaussian_loss, heldout_nll, sine
from sklearn.tree import DecisionTreeRegressor

from distboost.boosting import FittedEnsemble, fit_boosting
from distboost.boosting.backend import (
    FittedTrees,
    TreeBackend,
    available_backends,
    backend_name,
    get_backend,
    get_model_class,
    register_backend,
)
from distboost.boosting.lightgbm_backend import LightGBMBackend, LightGBMModel


def make_backend(n=300, k=2, X_val=True, **kw):
    X, _ = sine(n, 30)
    params = engine(**{"n_estimators": 10, "learning_rate": 0.1, "num_leaves": 4,
                             "random_state": 0, **kw})
    return LightGBMBackend(params, np.arange(k, dtype=float), X, None,
                           X[:50] if X_val else None), X


def test_the_lightgbm_backend_satisfies_the_protocols():
    backend, X = make_backend()
    assert isinstance(backend, TreeBackend)
    assert backend.name == "lightgbm" and backend.layout == (np.float32, "F")
    rng = np.random.default_rng(0)
    g = np.asfortranarray(rng.normal(size=(300, 2)).astype(np.float32))
    backend.grow(g, np.ones_like(g), 0.1)
    model = backend.finish()
    assert isinstance(model, FittedTrees)
    assert isinstance(LightGBMModel.from_text(model.to_text(1), 2), FittedTrees)


def test_the_registry_names_both_backends_and_loads_them_lazily():
    assert {"lightgbm", "sklearn"} <= set(available_backends())
    assert get_backend("lightgbm") is LightGBMBackend
    assert get_model_class("lightgbm") is LightGBMModel
    assert backend_name(engine()) == "lightgbm"
    assert backend_name(engine(base_learner=DecisionTreeRegressor())) == "sklearn"
    assert backend_name(engine(backend="sklearn")) == "sklearn"
    with pytest.raises(ValueError, match="Unknown tree backend 'nope'"):
        get_backend("nope")


def test_a_registered_backend_is_used_by_the_engine_without_touching_its_loop():
    """A new backend (XGBoost in the next issue) plugs in by name."""
    grown = []

    class Recording(LightGBMBackend):
        name = "recording"

        def grow(self, grad, hess, learning_rate):
            grown.append(learning_rate)
            super().grow(grad, hess, learning_rate)

    register_backend("recording", Recording, LightGBMModel)
    try:
        X, y = sine(200, 31)
        fe = fit(X, y, n_estimators=4, backend="recording")
        assert grown == [0.1] * 4 and fe.n_iter_ == 4
        assert get_backend("recording") is Recording
    finally:
        from distboost.boosting import backend as registry

        registry._REGISTRY.pop("recording")


def test_retry_regrows_the_same_trees_at_the_new_rate_and_rollback_removes_them():
    backend, X = make_backend(X_val=False)
    start = backend.train_scores().copy()
    rng = np.random.default_rng(1)
    g = np.asfortranarray(rng.normal(size=(300, 2)).astype(np.float32))
    h = np.ones_like(g)
    backend.grow(g, h, 0.1)
    full = backend.train_scores() - start
    backend.retry(0.05)
    half = backend.train_scores() - start
    np.testing.assert_allclose(half, 0.5 * full, rtol=1e-5, atol=1e-7)
    backend.rollback()
    np.testing.assert_allclose(backend.train_scores(), start, atol=1e-12)
    assert backend.valid_raw() is None or backend.valid_raw().shape[1] == 2


def test_train_scores_are_a_column_major_view_of_lightgbms_buffer():
    backend, _ = make_backend()
    raw = backend.train_scores()
    assert raw.shape == (300, 2) and raw.flags.f_contiguous
    np.testing.assert_array_equal(raw, np.tile([0.0, 1.0], (300, 1)))
    np.testing.assert_array_equal(backend.valid_raw(), np.tile([0.0, 1.0], (50, 1)))


def test_text_round_trip_is_bit_identical():
    X, y = sine(400, 5)
    fe = fit(X, y, n_estimators=50)
    back = FittedEnsemble.from_dict(fe.to_dict())
    np.testing.assert_array_equal(back.predict_raw(X), fe.predict_raw(X))
    with pytest.raises(ValueError, match="pickle"):
        fit(X, y, n_estimators=2, base_learner=DecisionTreeRegressor(max_depth=2)).to_dict()
    with pytest.raises(ValueError, match="Cannot load a 'nope' ensemble"):
        FittedEnsemble.from_dict({**fe.to_dict(), "backend": "nope"})


def test_sample_weights_reach_lightgbm():
    """Weight 0 removes a row: same model as dropping it (bins aside, same data)."""
    X, y = sine(400, 8)
    w = np.ones(400)
    w[::2] = 0.0
    X_te, y_te = sine(2000, 9)
    a = fit(X, y, n_estimators=50)
    b = fit(X, y, n_estimators=50, min_child_samples=5)
    init = np.array([y.mean(), np.log(y.std())])
    c = fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)},
                     params=engine(n_estimators=50, learning_rate=0.1, random_state=0),
                     sample_weight=w, fisher=gaussian_fisher)
    assert not np.allclose(c.predict_raw(X), a.predict_raw(X))
    assert abs(heldout_nll(c, X_te, y_te) - heldout_nll(b, X_te, y_te)) < 0.5


def test_dataframe_with_category_and_missing_values():
    rng = np.random.default_rng(0)
    n = 1200
    g = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    x = rng.normal(size=n)
    x[::7] = np.nan
    y = np.asarray(pd.Series(g).map({"a": -3.0, "b": 0.0, "c": 3.0}), float)
    y = y + rng.normal(size=n) * 0.2
    X = pd.DataFrame({"g": g, "x": x})
    fe = fit(X, y, n_estimators=100, num_leaves=4)
    pred = fe.predict_raw(X)[:, 0]
    for level, mean in [("a", -3.0), ("b", 0.0), ("c", 3.0)]:
        assert pred[np.asarray(g == level)].mean() == pytest.approx(mean, abs=0.15)
    imp = fe.feature_importances()
    assert imp.shape == (2, 2) and imp[0, 0] > imp[0, 1]


def test_predict_contrib_adds_up_to_the_raw_scores_per_output():
    backend, X = make_backend(k=3, X_val=False)
    rng = np.random.default_rng(1)
    for _ in range(4):
        g = np.asfortranarray(rng.normal(size=(300, 3)).astype(np.float32))
        backend.grow(g, np.ones_like(g), 0.1)
    model = backend.finish()
    contrib = model.predict_contrib(X, 4)
    assert contrib.shape == (300, 3, X.shape[1] + 1)
    np.testing.assert_allclose(contrib.sum(-1), model.predict_raw(X, 4), atol=1e-12)
    np.testing.assert_array_equal(model.predict_contrib(X, 0), 0.0)
    split = model.feature_importances(4, "split")
    np.testing.assert_array_equal(split.sum(0), model.booster.feature_importance("split"))


def test_lightgbm_options_are_passed_through():
    backend, X = make_backend(monotone_constraints=(1,), min_split_gain=0.5, extra_trees=True,
                              path_smooth=2.0, max_cat_to_onehot=8,
                              interaction_constraints=((0,),))
    params = backend.booster.params
    assert params["monotone_constraints"] == [1] and params["min_gain_to_split"] == 0.5
    assert params["extra_trees"] and params["path_smooth"] == 2.0
    assert params["max_cat_to_onehot"] == 8 and params["interaction_constraints"] == [[0]]
