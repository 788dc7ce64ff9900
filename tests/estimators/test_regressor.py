"""Tests of distboost.estimators: DistributionalRegressor end to end."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
import torch
from sklearn.exceptions import NotFittedError
from sklearn.tree import DecisionTreeRegressor
from sklearn.utils.estimator_checks import parametrize_with_checks

import distboost as db
from distboost.datasets import make_heteroscedastic_sine

# Natural-scale parameters around which a simulated conditional law varies (every family's
# fit against its marginal fit is tests/families/test_end_to_end.py, from the case table).
BASE_PARAMS = {"negative_binomial": {"total_count": 5.0, "probs": 0.5}}


def _simulate(family, n, seed):
    """Rows whose raw parameters move with x: raw_k(x) = raw_k(base) + 0.6 sin(x0 + k)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    base = family.raw_from_params(BASE_PARAMS[family.name])
    raw = base[None, :] + 0.6 * np.sin(X[:, [0]] + np.arange(family.n_params)[None, :])
    # Keep the simulated laws well inside the families' domains (e.g. df > 2 for studentt).
    raw = torch.as_tensor(raw)
    params = family.params_from_raw(raw)
    y = family.sample(params, 1, seed)[0].numpy()
    return X, y, raw


def test_heteroscedastic_sine_quality():
    """The write-up's example: coverage, sd recovery and NLL close to the oracle."""
    X, y, _ = make_heteroscedastic_sine(1000, random_state=0)
    X_te, y_te, sd_te = make_heteroscedastic_sine(10_000, random_state=1)
    # Defaults only: early stopping on a 10% split, tree size from n, calibrated scale.
    model = db.DistributionalRegressor(random_state=0)
    model.fit(X, y)
    dist = model.predict_dist(X_te)
    lo, hi = dist.interval(0.9).T
    coverage = np.mean((y_te >= lo) & (y_te <= hi))
    assert 0.86 <= coverage <= 0.94
    assert np.corrcoef(dist.stddev, sd_te)[0, 1] >= 0.9
    oracle_nll = -np.mean(st.norm.logpdf(y_te, np.sin(X_te[:, 0]), sd_te))
    model_nll = -model.score(X_te, y_te)
    assert model_nll - oracle_nll <= 0.1, (model_nll, oracle_nll)


@pytest.fixture(scope="module")
def sine_model():
    # One early-stopped and calibrated run on a held-out split, not the default's five
    # folds and a refit (cross-validation below 1,000 rows is
    # test_early_stopping_auto_cross_validates_below_1000_rows).
    X, y, _ = make_heteroscedastic_sine(600, random_state=3)
    model = db.DistributionalRegressor(n_estimators=100, early_stopping="holdout",
                                       random_state=0).fit(X, y)
    return model, X, y


def test_prediction_shapes_and_consistency(sine_model):
    model, X, _ = sine_model
    params = model.predict_params(X[:7])
    assert list(params.columns) == ["loc", "scale"]
    assert params.shape == (7, 2) and (params["scale"] > 0).all()
    dist = model.predict_dist(X[:7])
    assert isinstance(dist, db.Predictive) and len(dist) == 7
    np.testing.assert_allclose(model.predict(X[:7]), params["loc"])
    qs = model.predict_quantiles(X[:7], [0.05, 0.5, 0.95])
    assert qs.shape == (7, 3)
    np.testing.assert_allclose(
        qs, st.norm.ppf([0.05, 0.5, 0.95], params["loc"].to_numpy()[:, None],
                        params["scale"].to_numpy()[:, None]), rtol=1e-9)
    np.testing.assert_allclose(model.predict_interval(X[:7], 0.9), qs[:, [0, 2]], rtol=1e-9)


def test_score_is_mean_log_likelihood(sine_model):
    model, X, y = sine_model
    assert model.dispersion_shift_ != 0.0  # the score is of the calibrated parameters
    p = model.predict_params(X)
    expected = np.mean(st.norm.logpdf(y, p["loc"], p["scale"]))
    assert model.score(X, y) == pytest.approx(expected, rel=1e-10)
    w = np.r_[np.full(300, 2.0), np.full(300, 1.0)]
    expected_w = np.average(st.norm.logpdf(y, p["loc"], p["scale"]), weights=w)
    assert model.score(X, y, sample_weight=w) == pytest.approx(expected_w, rel=1e-10)


def test_same_random_state_same_model():
    X, y, _ = make_heteroscedastic_sine(500, random_state=4)
    # A held-out split (one run, not five folds and a refit): the random_state draws the
    # split and the subsamples.
    kw = dict(n_estimators=60, subsample=0.7, colsample=1.0, early_stopping="holdout",
              random_state=11)
    a = db.DistributionalRegressor(**kw).fit(X, y).predict_params(X)
    b = db.DistributionalRegressor(**kw).fit(X, y).predict_params(X)
    pd.testing.assert_frame_equal(a, b)
    c = db.DistributionalRegressor(**{**kw, "random_state": 12}).fit(X, y).predict_params(X)
    assert not np.allclose(a.to_numpy(), c.to_numpy())


def test_eval_set_enables_early_stopping():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(800, 5))
    y = X[:, 0] + rng.normal(size=800)  # mostly noise: overfits quickly
    X_val = rng.normal(size=(400, 5))
    y_val = X_val[:, 0] + rng.normal(size=400)
    model = db.DistributionalRegressor(
        n_estimators=2000, learning_rate=0.2, random_state=0, n_iter_no_change=20
    ).fit(X, y, eval_set=(X_val, y_val))
    assert model.best_iteration_ < 2000
    # patience 20 in the joint phase, then 20 more for the location alone
    # (per_parameter_stopping, the default).
    assert model.n_iter_ <= model.best_iteration_ + 2 * 20
    assert len(model.evals_result_["valid"]["nll"]) == model.n_iter_


def test_early_stopping_auto_cross_validates_below_1000_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = rng.normal(size=200)
    model = db.DistributionalRegressor(n_estimators=30, random_state=0).fit(X, y)
    assert model.early_stopping_ == "cv" and "valid" in model.evals_result_
    # Pure noise: cross-validation keeps (close to) the start values, never all 30 rounds.
    assert model.best_iteration_ < 30
    X2, y2 = rng.normal(size=(1000, 2)), rng.normal(size=1000)
    model = db.DistributionalRegressor(n_estimators=30, random_state=0).fit(X2, y2)
    assert model.early_stopping_ == "holdout_refit" and "valid" in model.evals_result_
    for option, mode in [("cv", "cv"), ("holdout", "holdout"), (True, "cv")]:
        model = db.DistributionalRegressor(n_estimators=5, early_stopping=option,
                                           random_state=0).fit(X, y)
        assert model.early_stopping_ == mode
    model = db.DistributionalRegressor(
        n_estimators=30, early_stopping=False, random_state=0
    ).fit(np.vstack([X, X]), np.r_[y, y])
    assert "valid" not in model.evals_result_ and model.n_iter_ == 30


@pytest.mark.parametrize("family, step", [
    ("normal", "natural"), ("gamma", "natural"), ("studentt", "fisher"),
    ("censored_studentt", "fisher"), ("censored_normal", "natural"),
])
def test_auto_step_is_the_familys_default(family, step):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(100, 2))
    y = np.exp(rng.normal(size=100))
    if family.startswith("censored"):
        y = db.censored.right(y, rng.integers(0, 2, size=100))
    # The step is chosen before any validation: one run, no cross-validation.
    model = db.DistributionalRegressor(family, n_estimators=3, early_stopping=False).fit(X, y)
    assert model.step_ == step


def test_early_stopping_uses_the_calibrated_validation_loss():
    """evals_result_["valid"] holds, per round, the validation NLL at the best shift."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(700, 3))
    y = X[:, 0] + rng.normal(size=700)
    model = db.DistributionalRegressor(n_estimators=40, learning_rate=0.2, random_state=0)
    model.fit(X[:500], y[:500], eval_set=(X[500:], y[500:]))
    plain = db.DistributionalRegressor(n_estimators=40, learning_rate=0.2, calibrate=False,
                                       random_state=0)
    plain.fit(X[:500], y[:500], eval_set=(X[500:], y[500:]))
    calibrated, uncalibrated = (np.array(m.evals_result_["valid"]["nll"])
                                for m in (model, plain))
    n = min(len(calibrated), len(uncalibrated))
    # Same trees (the training side does not change), so the calibrated loss is lower.
    assert np.all(calibrated[:n] <= uncalibrated[:n] + 1e-12)
    assert np.any(calibrated[:n] < uncalibrated[:n] - 1e-4)
    # The final model's validation NLL is the recorded best calibrated value.
    assert -model.score(X[500:], y[500:]) == pytest.approx(
        calibrated[model.best_iteration_ - 1], rel=1e-5)


def test_calibration_skips_families_without_dispersion_parameter():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 2))
    y = rng.poisson(np.exp(1 + X[:, 0] / 2))
    model = db.DistributionalRegressor("poisson", n_estimators=50).fit(X, y)
    assert "valid" in model.evals_result_ and model.dispersion_shift_ == 0.0


def test_dataframe_with_categorical_and_missing_values():
    rng = np.random.default_rng(0)
    n = 1500
    group = rng.choice(["a", "b", "c"], size=n)
    x = rng.normal(size=n)
    x[rng.random(n) < 0.1] = np.nan
    shift = pd.Series(group).map({"a": -2.0, "b": 0.0, "c": 2.0}).to_numpy()
    y = shift + np.nan_to_num(x) + rng.normal(size=n) * 0.3
    X = pd.DataFrame({"group": pd.Categorical(group), "x": x})
    model = db.DistributionalRegressor(n_estimators=150, num_leaves=7, random_state=0).fit(X, y)
    pred = model.predict(X)
    assert np.isfinite(pred).all()
    for g, s in [("a", -2.0), ("b", 0.0), ("c", 2.0)]:
        rows = (group == g) & ~np.isnan(x)
        assert np.mean(pred[rows] - np.nan_to_num(x)[rows]) == pytest.approx(s, abs=0.2)
    # Strings at predict time map to the categories seen in fit.
    X_str = X.assign(group=X["group"].astype(str))
    np.testing.assert_allclose(model.predict(X_str), pred)


def test_sklearn_base_learner():
    X, y, _ = make_heteroscedastic_sine(500, random_state=5)
    X_te, y_te, _ = make_heteroscedastic_sine(2000, random_state=6)
    # Early-stopped on a held-out split (one run; cross-validation is not what is tested).
    model = db.DistributionalRegressor(
        n_estimators=100, learning_rate=0.1, base_learner=DecisionTreeRegressor(max_depth=3),
        early_stopping="holdout", random_state=0,
    ).fit(X, y)
    marginal = st.norm(np.mean(y), np.std(y))
    assert -model.score(X_te, y_te) < -np.mean(marginal.logpdf(y_te)) - 0.3


@pytest.mark.parametrize("step", ["gradient", "newton", "fisher", "natural"])
def test_every_step_rule_learns(step):
    X, y, _ = make_heteroscedastic_sine(800, random_state=7)
    X_te, y_te, _ = make_heteroscedastic_sine(2000, random_state=8)
    lr = 0.002 if step == "gradient" else 0.1
    # Early-stopped on a held-out split: one run, and no linear start (which, chosen by
    # cross-validation, would do part of the learning for the trees).
    model = db.DistributionalRegressor(
        step=step, n_estimators=200, learning_rate=lr, early_stopping="holdout", random_state=0
    ).fit(X, y)
    marginal = st.norm(np.mean(y), np.std(y))
    assert -model.score(X_te, y_te) < -np.mean(marginal.logpdf(y_te)) - 0.3


def test_unfitted_model_raises():
    with pytest.raises(NotFittedError):
        db.DistributionalRegressor().predict_dist(np.zeros((2, 1)))


@pytest.mark.parametrize(
    "y, match",
    [
        (np.r_[1.0, np.nan, 2.0, 3.0], "1 of 4 rows"),
        (np.r_[1.0, np.inf, 2.0, 3.0], "NaN or infinite"),
        (np.r_[1.0, -2.0, -3.0, 3.0], "2 of 4 rows outside the support"),
    ],
    ids=["nan", "inf", "outside-support"],
)
def test_bad_targets_raise_clear_errors(y, match):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(ValueError, match=match):
        db.DistributionalRegressor(family="gamma", n_estimators=5).fit(X, y)


def test_mismatched_lengths_raise():
    with pytest.raises(ValueError, match="X has 5 rows, y has 4 rows"):
        db.DistributionalRegressor(n_estimators=5).fit(np.zeros((5, 2)), np.zeros(4))
    with pytest.raises(ValueError, match="sample_weight has shape"):
        db.DistributionalRegressor(n_estimators=5).fit(
            np.zeros((4, 2)), np.arange(4.0), sample_weight=np.ones(3)
        )


def test_unknown_family_lists_known_names():
    with pytest.raises(ValueError, match="known families are"):
        db.DistributionalRegressor(family="nonesuch").fit(np.zeros((4, 1)), np.arange(4.0))


def _expected_failed_checks(estimator):
    # As for scikit-learn's HistGradientBoostingRegressor: a leaf's minimum size counts rows
    # (LightGBM's min_data_in_leaf), so a row repeated k times is not the same as weight k
    # once trees are large enough to split the 15 rows of this check (min_child_samples
    # "auto" is 5 there).
    return {"check_sample_weight_equivalence_on_dense_data":
            "min_child_samples counts rows, not weights (as HistGradientBoosting's "
            "min_samples_leaf)"}


@pytest.mark.slow  # ~60 checks, each fitting with the small-data defaults
@parametrize_with_checks([db.DistributionalRegressor(n_estimators=20, random_state=0)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


# The same checks in the fast tier, on one boosting run per fit (no cross-validation).
@parametrize_with_checks([db.DistributionalRegressor(n_estimators=5, early_stopping=False,
                                                     random_state=0)],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator_one_run(estimator, check):
    check(estimator)


def test_verbose_prints_a_progress_line(capsys):
    X, y, _ = make_heteroscedastic_sine(300, random_state=9)
    db.DistributionalRegressor(n_estimators=20, verbose=10, early_stopping="holdout",
                               random_state=0).fit(X, y)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if "train loss" in ln]
    assert len(lines) == 3  # rounds 1, 10 and 20
    assert "valid loss" in lines[-1] and lines[-1].lstrip().startswith("[   20]")


def test_natural_step_with_monte_carlo_fisher_stays_stable():
    """Negative binomial has no closed-form Fisher: the damped natural step must not run
    away on the noisy Monte Carlo estimate."""
    family = db.families.get("negative_binomial")
    X, y, _ = _simulate(family, 3000, seed=1)
    X_te, y_te, _ = _simulate(family, 3000, seed=2)
    model = db.DistributionalRegressor(
        family="negative_binomial", step="natural", n_estimators=150, learning_rate=0.1,
        num_leaves=7, random_state=0,
    ).fit(X, y)
    params = model.predict_params(X_te)
    assert params["total_count"].max() < 100 and params["probs"].max() < 0.99
    marginal = db.Predictive.from_params(
        "negative_binomial", **{k: np.full(len(y_te), v) for k, v in model.init_params_.items()}
    )
    assert -model.score(X_te, y_te) < marginal.nll(y_te).mean() - 0.2


def test_a_point_mass_is_named_in_the_floor_warning_not_called_constant():
    rng = np.random.default_rng(0)
    y = np.where(rng.random(2000) < 0.67, 0.0, rng.gamma(2.0, 1.0, 2000))
    X = rng.normal(size=(2000, 2))
    with pytest.warns(UserWarning, match=r"point mass: \d+ of 2000 values equal 0") as record:
        db.DistributionalRegressor(family="studentt", n_estimators=3,
                                   early_stopping=False).fit(X, y)
    assert not [w for w in record if "constant" in str(w.message)]


@pytest.mark.parametrize("family, links", [("weibull", {"scale": "softplus"}),
                                           ("inverse_gaussian", {"loc": "softplus"}),
                                           ("gamma", {"rate": "softplus"})])
def test_a_softplus_link_fits_a_target_in_the_hundreds(family, links):
    """Issue 52: a softplus parameter was capped at 50 (the raw clamp of the exp link): the
    Weibull's scale of a target in the hundreds was fitted as 50, without a warning."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = rng.gamma(8.0, 300.0 / 8.0, 300)
    model = db.DistributionalRegressor(family=family, links=links, n_estimators=20,
                                       linear_start=False, random_state=0).fit(X, y)
    median = model.predict_dist(X).median
    assert 0.7 < np.median(median) / np.median(y) < 1.4
