"""Tests of :mod:`distboost.boosting.xgboost_backend`: the protocol, rounds taken back,
text models, and the estimators with ``backend="xgboost"``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from boosting_cases import engine, sine

import distboost as db
from distboost.boosting.backend import FittedTrees, TreeBackend, get_backend, get_model_class

xgb = pytest.importorskip("xgboost")
from distboost.boosting.xgboost_backend import XGBoostBackend, XGBoostModel  # noqa: E402


def make_backend(n=300, k=2, **kw):
    X, _ = sine(n, 30)
    params = engine(**{"n_estimators": 10, "learning_rate": 0.1, "num_leaves": 4,
                             "random_state": 0, **kw})
    return XGBoostBackend(params, np.arange(k, dtype=float), X, None, X[:50]), X


def pair(n=300, k=2, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.normal(size=(n, k)).astype(np.float32)
    return g, np.ones_like(g)


def test_the_xgboost_backend_satisfies_the_protocols_and_is_registered():
    backend, X = make_backend()
    assert isinstance(backend, TreeBackend)
    assert get_backend("xgboost") is XGBoostBackend
    assert get_model_class("xgboost") is XGBoostModel
    backend.grow(*pair(), 0.1)
    model = backend.finish()
    assert isinstance(model, FittedTrees)


def test_scores_follow_the_trees_and_a_rollback_restores_them_exactly():
    backend, X = make_backend()
    start = backend.train_scores().copy()
    np.testing.assert_array_equal(start, np.tile([0.0, 1.0], (300, 1)))
    backend.grow(*pair(seed=1), 0.1)
    after_one = backend.train_scores().copy()
    backend.grow(*pair(seed=2), 0.1)
    assert not np.allclose(backend.train_scores(), after_one)
    backend.rollback()
    np.testing.assert_allclose(backend.train_scores(), after_one, atol=1e-6)
    # After a rollback each round is added by its own trees: still the model's scores.
    backend.grow(*pair(seed=3), 0.1)
    backend.grow(*pair(seed=4), 0.1)
    model = backend.finish()
    # The kept scores equal the model's predictions (start values excluded there).
    np.testing.assert_allclose(model.predict_raw(X, 3) + [0.0, 1.0], backend.train_scores(),
                               atol=1e-5)
    np.testing.assert_allclose(model.predict_raw(X, 1) + [0.0, 1.0], after_one, atol=1e-5)
    assert model.booster.num_boosted_rounds() == 3


def test_a_retry_at_half_the_rate_halves_the_round_without_subsampling():
    backend, X = make_backend()
    g, h = pair(seed=3)
    backend.grow(g, h, 0.1)
    full = backend.train_scores() - np.tile([0.0, 1.0], (300, 1))
    backend.retry(0.05)
    half = backend.train_scores() - np.tile([0.0, 1.0], (300, 1))
    np.testing.assert_allclose(half, 0.5 * full, atol=1e-6)
    backend.rollback()  # back to no rounds at all
    np.testing.assert_allclose(backend.train_scores(), np.tile([0.0, 1.0], (300, 1)))
    backend.grow(g, h, 0.1)
    np.testing.assert_allclose(backend.train_scores() - [0.0, 1.0], full, atol=1e-6)


def test_text_models_round_trip_and_keep_only_the_asked_rounds():
    backend, X = make_backend()
    for s in range(3):
        backend.grow(*pair(seed=s), 0.1)
    model = backend.finish()
    two = XGBoostModel.from_text(model.to_text(2), 2)
    np.testing.assert_allclose(two.predict_raw(X, 99), model.predict_raw(X, 2), atol=1e-6)
    none = XGBoostModel.from_text(model.to_text(0), 2)
    np.testing.assert_array_equal(none.predict_raw(X, 5), np.zeros((300, 2)))
    imp = model.feature_importances(3)
    assert imp.shape == (2, X.shape[1]) and np.all(imp >= 0) and imp.sum() > 0


def test_the_regressor_with_backend_xgboost_fits_saves_and_handles_categoricals(tmp_path):
    rng = np.random.default_rng(0)
    n = 600
    X = pd.DataFrame({"x": rng.uniform(-2, 2, n),
                      "c": pd.Categorical(rng.choice(["a", "b", "c"], n))})
    y = np.where(X["c"] == "a", 2.0, 0.0) + X["x"] + rng.normal(size=n) * (0.2 + 0.3 * (X["x"] > 0))
    options = {"n_estimators": 100, "early_stopping": False, "random_state": 0}
    model = db.DistributionalRegressor(backend="xgboost", **options).fit(X, y)
    light = db.DistributionalRegressor(**options).fit(X, y)
    assert model.ensemble_.model.name == "xgboost"
    # Both libraries find the same structure: similar held-in likelihoods.
    assert abs(model.score(X, y) - light.score(X, y)) < 0.15
    path = tmp_path / "m.json"
    model.save(path)
    back = db.load(path)
    Xn = X.head(20).copy()
    Xn.loc[Xn.index[:3], "c"] = np.nan  # NaN category at predict time
    np.testing.assert_allclose(back.predict_params(Xn), model.predict_params(Xn))
    assert np.isfinite(model.predict_params(Xn).to_numpy()).all()
    # Same random_state, same model.
    again = db.DistributionalRegressor(backend="xgboost", **options).fit(X, y)
    np.testing.assert_array_equal(again.predict_raw(X), model.predict_raw(X))


def test_an_unknown_backend_name_is_a_clear_error():
    with pytest.raises(ValueError, match="backend"):
        db.DistributionalRegressor(backend="catboost").fit(np.zeros((5, 1)), np.arange(5.0))


def test_explanations_add_up_and_options_pass_through_with_xgboost():
    rng = np.random.default_rng(1)
    n = 800
    X = pd.DataFrame({"price": rng.uniform(0, 1, n), "age": rng.uniform(0, 1, n),
                      "c": pd.Categorical(rng.choice(["a", "b"], n))})
    y = 2 * X["price"] + np.sin(6 * X["age"]) + rng.normal(size=n) * (0.2 + X["age"])
    # A held-out split: the model explained stops at its best round and is calibrated (the
    # default on 800 rows cross-validates, 6 x the time, and chose no linear start here).
    model = db.DistributionalRegressor(backend="xgboost", n_estimators=80, random_state=0,
                                       early_stopping="holdout",
                                       monotone_constraints={"price": 1}).fit(X, y)
    e = model.explain(X.head(50))
    np.testing.assert_allclose(e.base_values + e.values.sum(-1), model.predict_raw(X.head(50)),
                               atol=1e-5)
    grid = X.head(1).loc[[X.index[0]] * 21].reset_index(drop=True)
    grid["price"] = np.linspace(0, 1, 21)
    assert np.all(np.diff(model.predict_params(grid)["loc"]) >= -1e-9)
    imp = model.feature_importances("split")
    assert imp.shape == (2, 3) and imp.to_numpy().sum() > 0
    with pytest.raises(ValueError, match="extra_trees is a LightGBM option"):
        db.DistributionalRegressor(backend="xgboost", extra_trees=True,
                                   n_estimators=2).fit(X, y)


# ---------------------------------------------------------------- device="cuda"
import distboost.boosting.xgboost_backend as xgboost_backend  # noqa: E402

CUDA = pytest.mark.skipif(
    not __import__("torch").cuda.is_available()
    or not xgb.build_info().get("USE_CUDA", False),
    reason="needs a CUDA GPU, torch with CUDA and XGBoost with CUDA")


def _device_data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.exp(0.4 * X[:, 0] + 0.3 * rng.normal(size=n))
    w = rng.uniform(0.5, 2.0, size=n)
    return X, y, w


DEVICE_CASES = [
    ("normal", {}),  # closed-form derivatives
    ("gamma", {}),  # autograd
    ("studentt", {"step": "newton"}),  # autograd Hessian
    ("lognormal", {"param_options": {"scale": {"num_leaves": 4}}}),  # per-parameter backend
]


@pytest.mark.parametrize("family, options", DEVICE_CASES)
def test_the_device_path_equals_the_host_path(monkeypatch, family, options):
    """The GPU code path (scores and derivatives as torch tensors, gradients handed over
    as arrays of the device) run on the CPU's torch device: the same model as the NumPy
    path, with validation rows, weights and per-parameter stopping (one held-out run: the
    default's refit on all rows is one more run of the same path)."""
    X, y, w = _device_data()
    kw = {"family": family, "backend": "xgboost", "n_estimators": 40, "random_state": 0,
          "early_stopping": "holdout", **options}
    host = db.DistributionalRegressor(**kw).fit(X, y, sample_weight=w)
    seen = []
    plain, finish = xgboost_backend.xgb_params, XGBoostBackend.finish
    monkeypatch.setattr(xgboost_backend, "xgb_params",
                        lambda *a, **k: {**plain(*a, **k), "device": "cpu"})

    def record(self):
        seen.append(type(self._scores).__name__)
        return finish(self)

    monkeypatch.setattr(XGBoostBackend, "finish", record)
    tensors = db.DistributionalRegressor(**kw).fit(X, y, sample_weight=w)
    assert seen and set(seen) == {"Tensor"}
    assert tensors.best_iteration_ == host.best_iteration_
    np.testing.assert_allclose(tensors.predict_raw(X[:300]), host.predict_raw(X[:300]),
                               rtol=0, atol=1e-12)


@CUDA
@pytest.mark.parametrize("family, options", DEVICE_CASES)
def test_a_gpu_fit_matches_the_cpu_fit(family, options):
    """On a GPU: the scores and derivatives stay on the device, and the model is as good
    as the CPU's (XGBoost's GPU histograms are not bit-equal to its CPU ones)."""
    X, y, _ = _device_data(20_000)
    Xt, yt, _ = _device_data(5_000, seed=1)
    kw = {"family": family, "backend": "xgboost", "n_estimators": 100, "random_state": 0,
          **options}
    cpu = db.DistributionalRegressor(**kw).fit(X, y)
    gpu = db.DistributionalRegressor(device="cuda", **kw).fit(X, y)
    assert gpu.device == "cuda"
    nll_cpu = cpu.predict_dist(Xt).nll(yt).mean()
    nll_gpu = gpu.predict_dist(Xt).nll(yt).mean()
    assert abs(nll_gpu - nll_cpu) < 0.01 * abs(nll_cpu) + 0.005
    again = db.DistributionalRegressor(device="cuda", **kw).fit(X, y)
    np.testing.assert_allclose(again.predict_raw(Xt), gpu.predict_raw(Xt), atol=1e-5)
