"""Tests of distboost.estimators.linear_start: the design, the penalised fit, the choice by CV."""

import numpy as np
import pandas as pd
import pytest
import torch

import distboost as db
from distboost.estimators.linear_start import LinearStart, choose_linear_start, fit_linear_start
from distboost.estimators.rounds import cv_folds
from distboost.objective import FamilyObjective


def _normal_loss(raw, data):
    return db.families.get("normal").nll(raw, data["y"])


def test_design_standardises_numeric_imputes_nan_and_centres_one_hot():
    X = pd.DataFrame({"a": [1.0, 2.0, 3.0, np.nan], "const": [1.0] * 4,
                      "g": pd.Categorical(["x", "y", "x", "x"])})
    design = LinearStart.design_of(X)
    Z = design.design(X)
    assert Z.shape == (4, 3)  # a, g=x, g=y; the constant column is left out
    finite = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(Z[:3, 0], (finite - 2.0) / finite.std())
    assert Z[3, 0] == 0.0
    np.testing.assert_allclose(Z[:, 1], [0.25, -0.75, 0.25, 0.25])
    new = pd.DataFrame({"a": [2.0], "const": [1.0], "g": pd.Categorical([np.nan],
                                                                         categories=["x", "y"])})
    np.testing.assert_allclose(design.design(new), [[0.0, -0.75, -0.25]])
    back = LinearStart.from_dict(design.to_dict())
    np.testing.assert_array_equal(back.design(X), Z)


def test_penalised_normal_fit_solves_the_ridge_equations():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(200, 3))
    y = 1.0 + Z @ np.array([0.5, -1.0, 0.0]) + rng.normal(0, 0.7, 200)
    init = db.families.get("normal").init_raw(y)
    penalty = 0.05
    icpt, coef = fit_linear_start(_normal_loss, init, Z, {"y": torch.tensor(y)}, None,
                                  penalty, mask=np.array([1.0, 0.0]))
    assert np.all(coef[:, 1] == 0.0)  # the scale gets no slopes
    s2 = np.exp(2 * icpt[1])
    # Stationarity of mean (y - a - Z b)^2 / (2 s^2) + penalty I |b|^2 in a and b, where
    # I = 1 / var(y) is the loc's information at the marginal start.
    zc = Z - Z.mean(0)
    expected = np.linalg.solve(zc.T @ zc / 200 + 2 * s2 / y.var() * penalty * np.eye(3),
                               zc.T @ (y - y.mean()) / 200)
    np.testing.assert_allclose(coef[:, 0], expected, atol=1e-5)
    resid = y - icpt[0] - Z @ coef[:, 0]
    np.testing.assert_allclose(s2, np.mean(resid**2), rtol=1e-4)


def test_fit_is_equivariant_to_the_units_of_y():
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(150, 2))
    y = 2.0 + Z @ np.array([0.8, 0.0]) + rng.laplace(0, 0.5, 150)
    family = db.families.get("laplace")

    def fit(c):
        def loss(raw, data):
            return family.nll(raw, data["y"])
        return fit_linear_start(loss, family.init_raw(y * c), Z, {"y": torch.tensor(y * c)},
                                None, 0.1, mask=np.array([1.0, 0.0]))

    (i1, c1), (i2, c2) = fit(1.0), fit(1e-6)
    np.testing.assert_allclose(c2[:, 0], c1[:, 0] * 1e-6, rtol=1e-5, atol=1e-12)
    np.testing.assert_allclose(i2[0], i1[0] * 1e-6, rtol=1e-6)


def test_choice_prefers_the_constant_for_noise_and_a_slope_for_signal():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 3))
    folds = cv_folds(80, 0)

    def make_loss(y_rows):
        return _normal_loss, db.families.get("normal").init_raw(y_rows), None

    noise = rng.normal(size=80)
    assert choose_linear_start(make_loss, X, noise, None, folds, LinearStart.design_of) is None
    signal = 2.0 * X[:, 0] + rng.normal(size=80)
    assert choose_linear_start(make_loss, X, signal, None, folds,
                               LinearStart.design_of) is not None


def test_design_clips_numeric_columns_to_their_training_range():
    X = pd.DataFrame({"a": [1.0, 2.0, 4.0], "b": [0.0, 10.0, 5.0]})
    design = LinearStart.design_of(X)
    far = pd.DataFrame({"a": [-100.0, 1e9, np.inf, np.nan], "b": [5.0, 1e12, -np.inf, 0.0]})
    edge = pd.DataFrame({"a": [1.0, 4.0, 4.0, np.nan], "b": [5.0, 10.0, 0.0, 0.0]})
    np.testing.assert_array_equal(design.design(far), design.design(edge))
    back = LinearStart.from_dict(design.to_dict())
    np.testing.assert_array_equal(back.design(far), design.design(edge))
    # A model saved before the clip (no "min" / "max") still loads, unclipped.
    old = LinearStart.from_dict({"columns": [{k: v for k, v in c.items()
                                              if k not in ("min", "max")}
                                             for c in design.columns],
                                 "coef": design.coef.tolist()})
    assert old.design(far)[0, 0] == (-100.0 - design.columns[0]["center"]) / (
        design.columns[0]["scale"])


def test_log_link_linear_start_does_not_extrapolate(tmp_path):
    """Issue 25: a lognormal's linear start is linear on the log scale; beyond the training
    range it grew the mean exponentially (engel: 14,284 predicted for 1,827 spent).  Now
    a row far outside predicts within the range of the training rows' predictions, also
    after saving and loading."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0.0, 1.0, 120)
    y = np.exp(1.0 + 2.0 * x + rng.normal(0.0, 0.3, 120))
    model = db.DistributionalRegressor(family="lognormal", n_estimators=10,
                                       random_state=0).fit(x[:, None], y)
    assert model.linear_start_ is not None
    inside = model.predict_dist(np.linspace(0.0, 1.0, 50)[:, None]).mean
    far = np.array([[-5.0], [10.0], [1e6]])
    mean = model.predict_dist(far).mean
    assert np.all(mean <= inside.max() * (1 + 1e-9)) and np.all(mean >= inside.min() * (1 - 1e-9))
    path = tmp_path / "m.json"
    model.save(path)
    np.testing.assert_allclose(db.load(path).predict_dist(far).mean, mean, rtol=1e-12)


@pytest.mark.parametrize("family, make_y", [
    ("normal", lambda f, e: 1.0 + f + 0.7 * e),
    ("gamma", lambda f, e: np.exp(0.5 * f) * (1.0 + 0.2 * e) ** 2),
    ("poisson", lambda f, e: np.floor(np.exp(0.5 * f) * (1.5 + e) ** 2)),
    ("studentt", lambda f, e: f + 0.5 * e ** 3),
])
def test_closed_form_derivatives_give_the_autograd_fit(family, make_y):
    rng = np.random.default_rng(4)
    Z = rng.normal(size=(300, 3))
    y = make_y(Z @ np.array([0.6, -0.4, 0.0]), rng.normal(size=300))
    objective = FamilyObjective(db.families.get(family), y)
    derivatives = objective.derivatives()
    assert derivatives is not None
    data = {"y": torch.tensor(y)}
    w = rng.uniform(0.5, 2.0, 300)
    slow = fit_linear_start(objective.loss, objective.init_raw, Z, data, w, 0.03)
    fast = fit_linear_start(objective.loss, objective.init_raw, Z, data, w, 0.03,
                            derivatives=derivatives)
    for a, b in zip(slow, fast, strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-6, atol=1e-8)
