"""Tests of distboost.estimators.varying: the varying-coefficient regressor and its Fisher
information."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.utils.estimator_checks import parametrize_with_checks

import distboost as db
from distboost.estimators.varying import (
    VaryingCoefficientRegressor,
    chain_rule_fisher,
    family_raw,
    location_families,
)
from distboost.families.numerics.fisher import fisher_monte_carlo

NOISE = 0.25


def make_sine(n, seed):
    """The write-up's toy data: x ~ U(-3, 3), y = sin x + N(0, 0.25^2)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 1))
    return X, np.sin(X[:, 0]) + rng.normal(0, NOISE, n)


def make_varying(n, seed):
    """y = b0(s) + b1(s) x with b0 a step and b1 a smooth function of another feature s."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-2, 2, n)
    s = rng.uniform(-3, 3, n)
    b0 = np.where(s > 0, 1.0, -1.0)
    b1 = 1.5 + np.sin(s)
    y = b0 + b1 * x + rng.normal(0, 0.2, n)
    return pd.DataFrame({"x": x, "s": s}), y, b0, b1


@pytest.fixture(scope="module")
def varying_fit():
    X, y, _, _ = make_varying(3000, 0)
    # x enters linearly and the trees split on s only (x as a modifier too would make the
    # split b0 + b1 x non-unique: see the effect_modifiers docstring).
    model = VaryingCoefficientRegressor(linear_features=["x"], effect_modifiers=["s"],
                                        random_state=0).fit(X, y)
    return model


@pytest.mark.slow  # ~60 checks, each fitting with the small-data defaults
@parametrize_with_checks([VaryingCoefficientRegressor(n_estimators=20, random_state=0)])
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# The same checks in the fast tier, on one boosting run per fit (no cross-validation).
@parametrize_with_checks([VaryingCoefficientRegressor(n_estimators=5, early_stopping=False,
                                                      random_state=0)])
def test_sklearn_compatible_estimator_one_run(estimator, check):
    check(estimator)


def test_sine_toy_rmse_close_to_noise_level():
    X, y = make_sine(1000, 123)
    X_te, y_te = make_sine(10_000, 124)
    model = VaryingCoefficientRegressor(early_stopping=True, random_state=0).fit(X, y)
    rmse = np.sqrt(np.mean((model.predict(X_te) - y_te) ** 2))
    # The test RMSE is sqrt(noise^2 + e^2) with e the error of the fitted mean; from 1,000
    # noisy rows a smoother's e is about 0.05-0.08 (sklearn's GradientBoostingRegressor,
    # 300 rounds of depth 3: RMSE 0.27 here), so 6% above the noise allows e <= 0.087.  With
    # 10,000 test rows the RMSE of the true mean itself is 0.25 +- 0.002, hence the floor.
    assert 0.245 < rmse < NOISE * 1.06, rmse
    lo, hi = model.predict_interval(X_te, 0.9).T
    assert 0.85 < np.mean((y_te >= lo) & (y_te <= hi)) < 0.95  # boosted scale: calibrated


def test_recovers_step_and_smooth_coefficients(varying_fit):
    X_te, y_te, b0, b1 = make_varying(2000, 1)
    coef = varying_fit.coefficients(X_te)
    assert list(coef.columns) == ["intercept", "x"]
    # noise sd 0.2 and 2,700 training rows: mean errors of about 0.03 were measured; the
    # linear start alone (constant coefficients) is off by 0.66 on b1.
    assert np.mean(np.abs(coef["intercept"] - b0)) < 0.08
    assert np.mean(np.abs(coef["x"] - b1)) < 0.08
    assert np.corrcoef(coef["x"], b1)[0, 1] > 0.99
    start = varying_fit.init_coef_
    assert np.mean(np.abs(start[1] - b1)) > 0.5


def test_coefficients_reconstruct_predict_exactly():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({
        "a": rng.normal(5, 3, 400), "b": rng.uniform(-1, 1, 400),
        "c": pd.Categorical(rng.choice(["u", "v"], 400)), "d": rng.normal(size=400),
    })
    y = X["a"] * np.where(X["c"] == "u", 1.0, -1.0) + X["b"] + rng.normal(size=400)
    model = VaryingCoefficientRegressor(n_estimators=40, early_stopping=False,
                                        random_state=0).fit(X, y)
    assert model.linear_features_ == ["a", "b", "d"]  # categorical "c" is left to the trees
    coef = model.coefficients(X)
    assert list(coef.columns) == ["intercept", "a", "b", "d"]
    assert coef.index.equals(X.index)
    rebuilt = coef["intercept"] + (coef[["a", "b", "d"]] * X[["a", "b", "d"]]).sum(axis=1)
    np.testing.assert_allclose(model.predict(X), rebuilt, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("family", ["gumbel", "studentt"])
def test_coefficients_give_loc_for_other_location_families(family):
    X, y = make_sine(400, 5)
    model = VaryingCoefficientRegressor(family=family, n_estimators=30, early_stopping=False,
                                        random_state=0)
    model.fit(X, y)
    coef = model.coefficients(X)
    loc = model.predict_params(X)["loc"]
    np.testing.assert_allclose(loc, coef["intercept"] + coef["x0"] * X[:, 0], rtol=1e-12,
                               atol=1e-12)
    assert model.evals_result_["train"]["nll"][-1] < model.evals_result_["train"]["nll"][0]


def test_start_is_the_weighted_least_squares_fit():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 3)) * [1.0, 10.0, 0.1]
    y = X @ [1.0, -0.2, 5.0] + 3.0 + rng.normal(size=300)
    w = rng.uniform(0.5, 2.0, 300)
    model = VaryingCoefficientRegressor(n_estimators=1, early_stopping=False, random_state=0)
    model.fit(X, y, sample_weight=w)
    ols = LinearRegression().fit(X, y, sample_weight=w)
    np.testing.assert_allclose(model.init_coef_, np.r_[ols.intercept_, ols.coef_], rtol=1e-9)
    resid = y - ols.predict(X)
    np.testing.assert_allclose(model.init_params_["scale"],
                               np.sqrt(np.average(resid**2, weights=w)), rtol=1e-9)


@pytest.mark.parametrize("step", ["fisher", "natural", "newton", "gradient"])
def test_every_step_rule_improves_on_the_linear_start(step):
    X, y, _, _ = make_varying(1000, 2)
    lr = 0.01 if step == "gradient" else 0.1  # the plain gradient is not scale-aware
    # Every round (one run, no held-out split): the training loss fell by 0.52-0.56
    # (gradient) and 1.8-2.2 (the others) on data seeds 0-4.
    model = VaryingCoefficientRegressor(step=step, n_estimators=60, learning_rate=lr,
                                        early_stopping=False, linear_features=["x"],
                                        random_state=0).fit(X, y)
    nll = model.evals_result_["train"]["nll"]
    assert np.isfinite(nll).all() and nll[-1] < nll[0] - 0.3, (nll[0], nll[-1])


def test_eval_set_early_stopping_and_reproducibility():
    X, y = make_sine(600, 6)
    X_va, y_va = make_sine(300, 7)
    kw = dict(n_estimators=400, random_state=0)
    a = VaryingCoefficientRegressor(**kw).fit(X, y, eval_set=(X_va, y_va))
    b = VaryingCoefficientRegressor(**kw).fit(X, y, eval_set=(X_va, y_va))
    assert a.best_iteration_ < a.n_iter_ < 400
    np.testing.assert_array_equal(a.predict(X_va), b.predict(X_va))


def test_score_is_mean_log_likelihood():
    X, y = make_sine(300, 8)
    model = VaryingCoefficientRegressor(n_estimators=20, random_state=0).fit(X, y)
    want = np.mean(model.predict_dist(X).log_prob(y))
    assert model.score(X, y) == pytest.approx(want, rel=1e-12)
    q = model.predict_quantiles(X[:5], [0.1, 0.5, 0.9])
    np.testing.assert_allclose(q[:, 1], model.predict(X[:5]))  # Normal: median = mean


def test_constant_linear_feature_keeps_a_zero_coefficient():
    rng = np.random.default_rng(9)
    X = np.column_stack([rng.normal(size=300), np.full(300, 4.0)])
    y = 2.0 * X[:, 0] + rng.normal(size=300)
    model = VaryingCoefficientRegressor(n_estimators=20, random_state=0).fit(X, y)
    coef = model.coefficients(X)
    np.testing.assert_array_equal(coef["x1"], 0.0)
    assert abs(coef["x0"].mean() - 2.0) < 0.2


def test_nan_allowed_in_a_tree_only_feature():
    X, y, _, _ = make_varying(500, 10)
    X.loc[::7, "s"] = np.nan
    model = VaryingCoefficientRegressor(linear_features=["x"], n_estimators=20,
                                        random_state=0).fit(X, y)
    assert np.isfinite(model.predict(X)).all()


# ---------------------------------------------------------------------------- Fisher
class _ModelAsFamily:
    """The varying-coefficient model seen as a family of the model's raw scores, for the
    library's Monte Carlo Fisher estimator."""

    def __init__(self, family, z1, loc_index):
        self.family, self.z1, self.loc_index = family, z1, loc_index

    def params_from_raw(self, raw):
        return self.family.params_from_raw(family_raw(raw, self.z1, self.loc_index))

    def sample(self, params, m, seed):
        return self.family.sample(params, m, seed)

    def nll(self, raw, y):
        z1 = self.z1.repeat(raw.shape[0] // self.z1.shape[0], 1)  # draws are the outer axis
        return self.family.nll(family_raw(raw, z1, self.loc_index), y)


@pytest.mark.parametrize("name", ["normal", "gumbel", "studentt"])
def test_chain_rule_fisher_matches_monte_carlo(name):
    family = db.families.get(name)
    rng = np.random.default_rng(11)
    n, m = 4, 3
    z1 = torch.as_tensor(np.column_stack([np.ones(n), rng.normal(size=(n, m - 1))]))
    loc_index = family.param_names.index("loc")
    others = torch.as_tensor(rng.normal(0, 0.3, size=(n, family.n_params - 1)))
    if name == "studentt":
        others[:, 0] += 1.5  # df about 4.5: finite moments of the score products
    raw = torch.cat([torch.as_tensor(rng.normal(size=(n, m))), others], dim=1)
    exact = chain_rule_fisher(family.fisher_information(family_raw(raw, z1, loc_index)), z1,
                              loc_index)
    mc = fisher_monte_carlo(_ModelAsFamily(family, z1, loc_index), raw, m=40_000, seed=0)
    assert exact.shape == (n, raw.shape[1], raw.shape[1])
    scale = torch.diagonal(exact, dim1=1, dim2=2).amax(dim=1)[:, None, None]
    # 40,000 draws: Monte Carlo error of each entry about 1% of the largest diagonal entry.
    np.testing.assert_allclose(mc / scale, exact / scale, atol=0.05)
    np.testing.assert_allclose(exact, exact.transpose(1, 2))


def test_normal_coefficient_block_is_z_zT_over_variance():
    family = db.families.get("normal")
    z1 = torch.tensor([[1.0, 2.0, -0.5], [1.0, 0.0, 3.0]], dtype=torch.float64)
    raw = torch.tensor([[0.1, 0.2, 0.3, np.log(2.0)], [0.0, 1.0, -1.0, 0.0]],
                       dtype=torch.float64)
    info = family.fisher_information(family_raw(raw, z1, 0))
    fisher = chain_rule_fisher(info, z1, 0)
    sigma2 = torch.tensor([4.0, 1.0], dtype=torch.float64)
    want = z1[:, :, None] * z1[:, None, :] / sigma2[:, None, None]
    np.testing.assert_allclose(fisher[:, :3, :3], want, rtol=1e-12)
    np.testing.assert_allclose(fisher[:, :3, 3], 0.0)
    np.testing.assert_allclose(fisher[:, 3, 3], 2.0)  # log-scale information of the Normal
    assert torch.linalg.matrix_rank(fisher[0]).item() == 2  # one row: rank F, not K


def test_completed_fisher_solve_is_the_pseudo_inverse_natural_gradient():
    family = db.families.get("gumbel")  # non-diagonal family information
    rng = np.random.default_rng(12)
    n, m = 6, 4
    z1 = torch.as_tensor(np.column_stack([np.ones(n), rng.normal(size=(n, m - 1))]))
    z1[0, 1] = 1e-9  # a nearly zero feature: the damped plain solve would divide by it
    raw = torch.as_tensor(rng.normal(size=(n, m + 1))).requires_grad_(True)
    y = torch.as_tensor(rng.normal(size=n))
    (g,) = torch.autograd.grad(family.nll(family_raw(raw, z1, 0), y).sum(), raw)
    raw = raw.detach()
    info = family.fisher_information(family_raw(raw, z1, 0))
    exact = chain_rule_fisher(info, z1, 0)
    completed = chain_rule_fisher(info, z1, 0, complete=True)
    step = torch.linalg.solve(completed, g[..., None])[..., 0]
    want = (torch.linalg.pinv(exact) @ g[..., None])[..., 0]
    np.testing.assert_allclose(step, want, rtol=1e-8, atol=1e-10)
    assert step.abs().max() < 10 * g.abs().max()


# ---------------------------------------------------------------------------- errors
def test_location_families_are_the_real_line_families_with_loc():
    assert location_families() == ["cauchy", "gumbel", "laplace", "logistic", "normal",
                                   "studentt"]


@pytest.mark.parametrize("family, match", [
    ("gamma", r"parameters \['concentration', 'rate'\] have no 'loc'"),
    ("lognormal", r"support is \(0, inf\)"),
    ("censored_normal", "censored"),
])
def test_non_location_family_is_refused(family, match):
    X, y = make_sine(50, 0)
    with pytest.raises(ValueError, match=match) as err:
        VaryingCoefficientRegressor(family=family).fit(X, np.abs(y) + 1)
    accepted = "['cauchy', 'gumbel', 'laplace', 'logistic', 'normal', 'studentt']"
    assert f"Accepted families: {accepted}" in str(err.value)


@pytest.mark.parametrize("linear, match", [
    (["nope"], r"column 'nope', which X does not have; X's columns are \['x', 's', 'c'\]"),
    ([5], r"position 5, outside the 3 columns"),
    (["x", "x"], r"\['x'\] more than once"),
    (["c"], r"categorical column\(s\) \['c'\]"),
    ([1.5], "names or integer positions"),
])
def test_bad_linear_features(linear, match):
    X, y, _, _ = make_varying(50, 0)
    X["c"] = pd.Categorical(["a", "b"] * 25)
    with pytest.raises(ValueError, match=match):
        VaryingCoefficientRegressor(linear_features=linear).fit(X, y)


def test_effect_modifiers_errors_and_subset():
    X, y, _, _ = make_varying(300, 0)
    with pytest.raises(ValueError, match="effect_modifiers is empty"):
        VaryingCoefficientRegressor(effect_modifiers=[]).fit(X, y)
    with pytest.raises(ValueError, match="effect_modifiers names the column 'z'"):
        VaryingCoefficientRegressor(effect_modifiers=["z"]).fit(X, y)
    model = VaryingCoefficientRegressor(effect_modifiers=[1], n_estimators=10,
                                        random_state=0).fit(X.to_numpy(), y)
    assert model.effect_modifiers_ == ["x1"] and model.linear_features_ == ["x0", "x1"]
    # The trees see one column: the coefficients do not change along x0 at fixed x1.
    grid = np.column_stack([np.linspace(-2, 2, 5), np.full(5, 0.5)])
    assert model.coefficients(grid).nunique().max() == 1


def test_names_need_a_dataframe_and_intercept_is_reserved():
    X, y = make_sine(50, 0)
    with pytest.raises(ValueError, match="array without column names"):
        VaryingCoefficientRegressor(linear_features=["x0"]).fit(X, y)
    with pytest.raises(ValueError, match="named 'intercept'"):
        VaryingCoefficientRegressor().fit(pd.DataFrame({"intercept": X[:, 0]}), y)


def test_nan_in_a_linear_feature_is_refused_with_counts():
    X, y, _, _ = make_varying(100, 0)
    X.loc[:2, "x"] = np.nan
    with pytest.raises(ValueError, match=r"'x' \(3 of 100 rows\) of X are NaN"):
        VaryingCoefficientRegressor(linear_features=["x"]).fit(X, y)
    X_ok, y_ok, _, _ = make_varying(100, 1)
    model = VaryingCoefficientRegressor(n_estimators=5, random_state=0).fit(X_ok, y_ok)
    with pytest.raises(ValueError, match=r"'x' \(3 of 100 rows\) of X are NaN"):
        model.predict(X)
    with pytest.raises(ValueError, match="of eval_set are NaN"):
        VaryingCoefficientRegressor(n_estimators=5).fit(X_ok, y_ok, eval_set=(X, y))


def test_not_fitted():
    with pytest.raises(NotFittedError):
        VaryingCoefficientRegressor().coefficients(np.zeros((2, 1)))
