"""Tests of :mod:`distboost.boosting.sklearn_backend` (any scikit-learn regressor)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boosting_cases import engine, gaussian_fisher, gaussian_loss, sine
from sklearn.tree import DecisionTreeRegressor

from distboost.boosting import fit_boosting
from distboost.boosting.backend import FittedTrees, TreeBackend
from distboost.boosting.sklearn_backend import SklearnBackend, SklearnModel


def make_backend(subsample=1.0):
    X, _ = sine(200, 40)
    params = engine(learning_rate=0.1, subsample=subsample, random_state=0,
                          base_learner=DecisionTreeRegressor(max_depth=2))
    return SklearnBackend(params, np.array([0.0, 1.0]), X, None, X[:30]), X


def test_the_sklearn_backend_satisfies_the_protocols():
    backend, X = make_backend()
    assert isinstance(backend, TreeBackend)
    assert backend.name == "sklearn" and backend.layout == (np.float64, "C")
    g = np.random.default_rng(0).normal(size=(200, 2))
    backend.grow(g, np.ones_like(g), 0.1)
    model = backend.finish()
    assert isinstance(model, FittedTrees)
    assert model.predict_raw(X, 1).shape == (200, 2)
    assert model.feature_importances(1).shape == (2, 1)
    with pytest.raises(ValueError, match="pickle"):
        model.to_text(1)
    with pytest.raises(ValueError, match="pickle"):
        SklearnModel.from_text("", 2)


def test_retry_keeps_the_trees_and_rescales_them_and_rollback_restores_the_scores():
    backend, X = make_backend(subsample=0.7)
    start, start_val = backend.train_scores().copy(), backend.valid_raw().copy()
    g = np.random.default_rng(1).normal(size=(200, 2))
    backend.grow(g, np.ones_like(g), 0.1)
    full = backend.train_scores() - start
    backend.retry(0.025)
    np.testing.assert_allclose(backend.train_scores() - start, 0.25 * full, rtol=1e-12,
                               atol=1e-15)
    model_rates = backend.rates
    assert model_rates == [0.025]
    backend.rollback()
    np.testing.assert_array_equal(backend.train_scores(), start)
    np.testing.assert_array_equal(backend.valid_raw(), start_val)
    assert backend.finish().rounds == []


def test_sample_weights_equal_replication():
    """Exact with a scikit-learn tree (weighted impurity == replicated impurity)."""
    X, y = sine(300, 3)
    w = np.random.default_rng(0).integers(1, 4, size=300)
    init = np.array([y.mean(), np.log(y.std())])
    params = engine(n_estimators=20, learning_rate=0.1, random_state=0, step="fisher",
                          base_learner=DecisionTreeRegressor(max_depth=3))
    data = {"y": torch.as_tensor(y)}
    a = fit_boosting(gaussian_loss, init, X, data, params=params, sample_weight=w,
                     fisher=gaussian_fisher)
    rep = np.repeat(np.arange(300), w)
    b = fit_boosting(gaussian_loss, init, X[rep], {"y": torch.as_tensor(y[rep])},
                     params=params, fisher=gaussian_fisher)
    np.testing.assert_allclose(a.predict_raw(X), b.predict_raw(X), rtol=1e-9, atol=1e-9)
