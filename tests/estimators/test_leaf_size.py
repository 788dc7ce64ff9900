"""Tests of distboost.estimators.leaf_size: the location's fine leaves on near-deterministic
small data."""

from __future__ import annotations

import numpy as np
import pytest

import distboost as db
from distboost.estimators.leaf_size import (
    FINE_MIN_CHILD_SAMPLES,
    NEAR_DETERMINISTIC_R2,
    out_of_fold_r2,
)
from distboost.families import get

#: A large learning rate and few rounds keep the fits short (the rule depends on neither).
LR = 0.2


def _model(**options):
    return db.DistributionalRegressor(**{"random_state": 0, "learning_rate": LR,
                                         "n_estimators": 150, **options})


def _design(n, noise, seed=0):
    """A designed experiment (as UCI's energy and yacht): four features on a grid of 96
    cells, the target a function of the cell with main effects, an interaction and a
    value per cell, plus ``noise``."""
    rng = np.random.default_rng(seed)
    levels = (3, 4, 4, 2)
    X = np.column_stack([rng.integers(0, k, size=n) for k in levels]).astype(float)
    cell = np.random.default_rng(42).normal(size=levels)
    f = 10.0 * X[:, 0] + 2.0 * X[:, 1] * X[:, 2] + cell[tuple(X.T.astype(int))]
    return X, f + noise * rng.normal(size=n)


@pytest.fixture(scope="module")
def near_deterministic():
    X, y = _design(300, 0.05)
    return X, y, _model().fit(X, y)


def test_near_deterministic_target_gives_the_location_fine_leaves(near_deterministic):
    X, y, model = near_deterministic
    assert model.early_stopping_ == "cv"
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    # The scale keeps the "auto" size: a variance from two rows is noise.
    assert model.min_child_samples_ == 9
    # The same fit as asking for those leaves explicitly.
    explicit = _model(param_options={"loc": {"min_child_samples": 2}}).fit(
        X, y)
    assert explicit.location_min_child_samples_ == 2
    np.testing.assert_allclose(model.predict_raw(X), explicit.predict_raw(X), rtol=1e-12)


def test_fine_leaves_follow_the_function_better_on_fresh_rows(near_deterministic):
    X, y, model = near_deterministic
    X_new, y_new = _design(3000, 0.05, seed=1)
    coarse = _model(param_options={"loc": {"min_child_samples": 9}}).fit(
        X, y)

    def rmse(m):
        return float(np.sqrt(np.mean((m.predict(X_new) - y_new) ** 2)))

    assert rmse(model) < 0.9 * rmse(coarse)


def test_noisy_target_keeps_the_auto_leaves():
    X, y = _design(300, 3.0)
    model = _model().fit(X, y)
    assert model.location_min_child_samples_ == model.min_child_samples_ == 9


@pytest.mark.parametrize("options, expected", [
    ({"min_child_samples": 12}, 12),
    ({"param_options": {"loc": {"min_child_samples": 7}}}, 7),
])
def test_a_users_leaf_size_is_never_changed(options, expected):
    X, y = _design(300, 0.05)
    model = _model(**options).fit(X, y)
    assert model.location_min_child_samples_ == expected


def test_families_without_a_location_have_none():
    X, y = _design(300, 0.05)
    model = _model(family="gamma", n_estimators=20).fit(X, np.exp(y / 10))
    assert model.location_min_child_samples_ is None


def test_lognormal_judges_the_location_of_log_y():
    X, y = _design(300, 0.05)
    model = _model(family="lognormal").fit(X, np.exp(y / 10))
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES


def test_out_of_fold_r2_is_weighted_and_on_the_locations_scale():
    y = np.array([1.0, 2.0, 4.0, 8.0])
    raw = np.column_stack([np.log(y) + [0.1, -0.1, 0.1, -0.1], np.zeros(4)])
    log_r2 = 1 - 0.01 / np.var(np.log(y))
    assert out_of_fold_r2(get("lognormal"), raw, y, None, 0) == pytest.approx(log_r2)
    raw = np.column_stack([np.zeros(4), y + [1.0, 0.0, 0.0, 0.0]])
    w = np.array([0.0, 1.0, 1.0, 1.0])  # the row with the error counts for nothing
    assert out_of_fold_r2(get("normal"), raw, y, w, 1) == pytest.approx(1.0)
    assert out_of_fold_r2(get("normal"), raw, np.ones(4), None, 1) == -np.inf
    assert 0.9 < NEAR_DETERMINISTIC_R2 < 1.0


def test_saved_and_loaded(near_deterministic, tmp_path):
    X, _, model = near_deterministic
    model.save(tmp_path / "m.json")
    loaded = db.load(tmp_path / "m.json")
    assert loaded.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    np.testing.assert_allclose(loaded.predict_raw(X), model.predict_raw(X))
