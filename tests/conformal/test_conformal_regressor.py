"""ConformalRegressor: exact conformal bounds, coverage, Mondrian groups, discrete and censored
targets, saving, scikit-learn composition; predict_uncertainty of the estimators."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.exceptions import DataConversionWarning
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import distboost as db
from distboost.conformal.conformity import order_index

FAST = {"n_estimators": 15, "early_stopping": False, "random_state": 0}


def _heavy(n, seed):
    """Student-t(2) noise around a linear mean: a Normal model is misspecified."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, X[:, 0] + rng.standard_t(2, size=n)


@pytest.fixture(scope="module")
def cross():
    X, y = _heavy(150, 0)
    return db.ConformalRegressor(db.DistributionalRegressor(**FAST), cv=3,
                                 random_state=0).fit(X, y)


def test_cross_conformal_bounds_are_the_order_statistics_of_the_back_transformed_scores(cross):
    X_new, _ = _heavy(4, 1)
    got = cross.predict_interval(X_new, 0.9)
    z = np.sort(np.stack([cross.estimators_[k].predict_dist(X_new).quantile(a) for k, a in
                          zip(cross.calibration_fold_, cross.scores_, strict=True)]), axis=0)
    n = cross.n_calibration_
    lo, hi = order_index(n, 0.9, upper=False), order_index(n, 0.9, upper=True)
    np.testing.assert_allclose(got[:, 0], z[lo - 1], rtol=1e-9)
    np.testing.assert_allclose(got[:, 1], z[hi - 1], rtol=1e-9)


def test_split_conformal_covers_where_the_misspecified_model_does_not():
    X, y = _heavy(400, 2)
    X_new, y_new = _heavy(4000, 3)
    model = db.DistributionalRegressor(**FAST)
    cf = db.ConformalRegressor(model, cv=None, random_state=0).fit(X, y)
    for level in (0.5, 0.9):
        iv = cf.predict_interval(X_new, level)
        hit = np.mean((y_new >= iv[:, 0]) & (y_new <= iv[:, 1]))
        # coverage given one calibration set of 100 rows: Beta around >= level, sd ~ 0.03-0.05
        assert level - 0.08 < hit < level + 0.08
    q = cf.predict_quantiles(X_new, [0.1, 0.9])
    assert 0.02 < np.mean(y_new <= q[:, 0]) < 0.18 and 0.82 < np.mean(y_new <= q[:, 1]) < 0.98
    dist = cf.predict_dist(X_new)
    assert np.all(np.diff(dist.quantile([0.1, 0.5, 0.9]), axis=1) > 0)
    assert abs(np.mean(dist.pit(y_new) <= 0.5) - 0.5) < 0.06


@pytest.mark.parametrize("method", ["split", "cqr"])
def test_the_other_methods_give_ordered_intervals_with_coverage(method):
    X, y = _heavy(200, 4)
    X_new, y_new = _heavy(3000, 5)
    cf = db.ConformalRegressor(db.DistributionalRegressor(**FAST), method=method, cv=3,
                               random_state=0).fit(X, y)
    iv = cf.predict_interval(X_new, 0.8)
    assert np.all(iv[:, 0] < iv[:, 1])
    assert 0.72 < np.mean((y_new >= iv[:, 0]) & (y_new <= iv[:, 1])) < 0.9


def test_mondrian_groups_are_calibrated_each_on_their_own_rows():
    rng = np.random.default_rng(6)
    n = 600
    g = rng.integers(0, 2, size=n)
    X = pd.DataFrame({"x": rng.normal(size=n), "g": g})
    y = X["x"] + np.where(g == 1, 4.0, 1.0) * rng.normal(size=n)
    Xn = pd.DataFrame({"x": rng.normal(size=4000), "g": rng.integers(0, 2, size=4000)})
    yn = Xn["x"] + np.where(Xn["g"] == 1, 4.0, 1.0) * rng.normal(size=4000)
    model = db.DistributionalRegressor(family="normal", n_estimators=10, early_stopping=False,
                                       param_options={"scale": {"features": ["x"]}},
                                       random_state=0)
    cf = db.ConformalRegressor(model, method="split", cv=None, mondrian="g",
                               random_state=0).fit(X, y)
    assert cf.groups_ == ["0", "1"]
    iv = cf.predict_interval(Xn, 0.9)
    for group in (0, 1):
        rows = (Xn["g"] == group).to_numpy()
        hit = np.mean((yn[rows] >= iv["lower"][rows]) & (yn[rows] <= iv["upper"][rows]))
        assert 0.84 < hit < 0.96
    with pytest.raises(ValueError, match=r"mondrian groups \['7'\] \(1 of 1 rows\) were not seen"):
        cf.predict_interval(pd.DataFrame({"x": [0.0], "g": [7]}))


def test_counts_get_integer_bounds_from_randomised_pit():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(300, 1))
    y = rng.poisson(np.exp(1 + 0.5 * X[:, 0]))
    cf = db.ConformalRegressor(db.DistributionalRegressor(family="poisson", **FAST), cv=3,
                               random_state=0).fit(X, y)
    iv = cf.predict_interval(X[:50], 0.9)
    assert np.all(iv == np.round(iv)) and np.all(iv[:, 0] <= iv[:, 1])
    dist = cf.predict_dist(X[:5])
    assert np.all(dist.quantile(0.5) == np.round(dist.quantile(0.5)))


@pytest.mark.parametrize(("make", "match"), [
    (lambda: db.ConformalRegressor(db.DistributionalRegressor(family="censored_weibull")),
     "does not calibrate censored targets"),
    (lambda: db.ConformalRegressor(db.DistributionalRegressor(family="multivariate_normal")),
     "calibrates a scalar target"),
])
def test_censored_and_vector_families_are_refused_before_any_fit(make, match):
    X, y = _heavy(40, 8)
    with pytest.raises(ValueError, match=match):
        make().fit(X, np.abs(y) + 1)


def test_cqr_has_no_predictive_law_and_levels_are_checked(cross):
    X, y = _heavy(60, 9)
    cqr = db.ConformalRegressor(db.DistributionalRegressor(**FAST), method="cqr", cv=None,
                                random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="method='cqr' calibrates quantiles and intervals"):
        cqr.predict_dist(X)
    with pytest.raises(ValueError, match=r"level must be a float in \(0, 1\)"):
        cross.predict_interval(X, 90)


def _sine(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 2))
    return X, np.sin(X[:, 0]) + (0.2 + 0.1 * np.abs(X[:, 1])) * rng.normal(size=n)


def test_shrunk_aggregation_narrows_the_pool_and_its_intervals_are_its_laws_quantiles(tmp_path):
    """The same five fold models, two laws: the shrunk law's 80 % intervals are its own
    quantiles, narrower than the pool's exact CV+ bounds (by the folds' disagreement), and
    cover near the level.  On data seeds 1-4 the pool covered 0.821-0.851 of 1,000 new rows
    and the shrunk law 0.806-0.843, 2-9 % narrower (with the default 5-fold rounds on 5,000
    new rows: 0.800-0.848 and 0.756-0.829, 1-10 % narrower)."""
    X, y = _sine(300, 1)
    Xt, yt = _sine(1000, 101)
    cf = db.ConformalRegressor(db.DistributionalRegressor(early_stopping="holdout",
                                                          random_state=0),
                               cv=5, random_state=0).fit(X, y)
    pool = np.asarray(cf.predict_interval(Xt, 0.8))
    cf.set_params(aggregation="shrunk")
    shrunk = np.asarray(cf.predict_interval(Xt, 0.8))
    dist = cf.predict_dist(Xt)
    np.testing.assert_allclose(shrunk, dist.quantile(np.array([0.1, 0.9])), rtol=1e-12,
                               atol=1e-12)
    np.testing.assert_allclose(cf.predict_quantiles(Xt[:5], [0.1, 0.9]), shrunk[:5],
                               rtol=1e-12, atol=1e-12)
    width = np.mean(shrunk[:, 1] - shrunk[:, 0]) / np.mean(pool[:, 1] - pool[:, 0])
    assert 0.8 < width < 0.99
    cover = np.mean((yt >= shrunk[:, 0]) & (yt <= shrunk[:, 1]))
    assert 0.76 < cover < 0.86
    assert np.all(np.diff(cf.predict_quantiles(Xt[:50], [0.05, 0.5, 0.95]), axis=1) > 0)
    cf.save(tmp_path / "cf.json")
    back = db.load(tmp_path / "cf.json")
    assert back.aggregation == "shrunk"
    np.testing.assert_array_equal(back.predict_interval(Xt[:7], 0.8),
                                  cf.predict_interval(Xt[:7], 0.8))


def test_save_load_and_sklearn_composition(cross, tmp_path):
    X, y = _heavy(150, 0)
    cross.save(tmp_path / "cf.json")
    back = db.load(tmp_path / "cf.json")
    np.testing.assert_array_equal(back.predict_interval(X[:7]), cross.predict_interval(X[:7]))
    np.testing.assert_array_equal(back.predict_dist(X[:7]).cdf(y[:7]),
                                  cross.predict_dist(X[:7]).cdf(y[:7]))
    pipe = make_pipeline(StandardScaler(), db.ConformalRegressor(  # progress=None: auto
        db.DistributionalRegressor(**FAST), cv=None, random_state=0, progress=None))
    search = GridSearchCV(pipe, {"conformalregressor__method": ["cps", "split"]}, cv=2)
    search.fit(X, y)
    assert search.predict(X[:3]).shape == (3,)


def test_the_epistemic_variance_is_largest_where_the_model_saw_few_rows():
    rng = np.random.default_rng(10)
    x = np.r_[rng.uniform(0, 1, 980), rng.uniform(1, 2, 20)]
    X = np.c_[x, rng.normal(size=x.size)]
    y = np.sin(4 * x) + 0.3 * rng.normal(size=x.size)
    model = db.DistributionalRegressor(random_state=0, early_stopping="holdout").fit(X, y)
    X_new = np.c_[np.r_[rng.uniform(0, 1, 300), rng.uniform(1, 2, 300)], rng.normal(size=600)]
    frame = model.predict_uncertainty(X_new)
    assert list(frame.columns) == ["aleatoric", "epistemic", "total"]
    np.testing.assert_allclose(frame["total"], frame["aleatoric"] + frame["epistemic"])
    assert roc_auc_score(np.r_[np.zeros(300), np.ones(300)], frame["epistemic"]) >= 0.75


def _tiny():
    return _heavy(6, 11)


#: The conformal rows of docs/errors.md: input -> (call, error, message pattern).
ERRORS = {
    "a censored family": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(family="censored_weibull"))
        .fit(*_heavy(40, 8)), ValueError, "does not calibrate censored targets"),
    "a vector family": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(family="multivariate_normal"))
        .fit(*_heavy(40, 8)), ValueError, "family 'multivariate_normal' models vectors"),
    "a 2-D target (censored bounds)": (
        lambda: db.ConformalRegressor().fit(_heavy(40, 8)[0], np.ones((40, 2))), ValueError,
        r"y has shape \(40, 2\) \(censored bounds"),
    "too few rows for the folds": (
        lambda: db.ConformalRegressor().fit(*_tiny()), ValueError,
        "cv=5 needs at least 10 rows; got n_samples=6"),
    "too few rows for a calibration split": (
        lambda: db.ConformalRegressor(cv=None).fit(_tiny()[0][:2], _tiny()[1][:2]), ValueError,
        "leaves 0 calibration and 2 training rows"),
    "predict_dist with method=\"cqr\"": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(**FAST), method="cqr",
                                      cv=None).fit(*_heavy(40, 8)).predict_dist(_tiny()[0]),
        ValueError, "method='cqr' calibrates quantiles and intervals"),
    "a level outside (0, 1)": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(**FAST), cv=None)
        .fit(*_heavy(40, 8)).predict_interval(_tiny()[0], 90), ValueError,
        r"level must be a float in \(0, 1\); got 90"),
    "quantile levels outside (0, 1)": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(**FAST), cv=None)
        .fit(*_heavy(40, 8)).predict_quantiles(_tiny()[0], [0.5, 1.0]), ValueError,
        r"quantiles must lie in \(0, 1\); got \[0.5, 1.0\]"),
    "a mondrian column X does not have": (
        lambda: db.ConformalRegressor(mondrian="grp").fit(
            pd.DataFrame({"x": np.arange(20.0), "g": np.arange(20) % 2}), np.arange(20.0)),
        ValueError, r"mondrian='grp' is not a column of X; X's columns are \['x', 'g'\]"),
    "an estimator with epistemic_members": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(epistemic_members=3))
        .fit(*_heavy(40, 8)), ValueError,
        "The estimator has epistemic_members=3: each of the ConformalRegressor's fold models"),
    "y is None": (
        lambda: db.ConformalRegressor().fit(_heavy(40, 8)[0], None), ValueError,
        "ConformalRegressor requires y to be passed, but the target y is None"),
    "sparse X": (
        lambda: db.ConformalRegressor().fit(sp.csr_matrix(_heavy(40, 8)[0]), _heavy(40, 8)[1]),
        TypeError,
        "Sparse data was passed for X, but dense data is required"),
    "aggregation=\"shrunk\" with method=\"cqr\"": (
        lambda: db.ConformalRegressor(method="cqr", aggregation="shrunk").fit(*_heavy(40, 8)),
        ValueError, "aggregation='shrunk' combines the fold models' calibrated laws; "
        "method='cqr' calibrates quantiles"),
    "aggregation=\"shrunk\" with a count family": (
        lambda: db.ConformalRegressor(db.DistributionalRegressor(family="poisson", **FAST),
                                      cv=2, aggregation="shrunk").fit(
            _heavy(40, 8)[0], np.arange(40) % 5), ValueError,
        "aggregation='shrunk' averages quantile functions, which leaves the integers of "
        "family 'poisson'"),
    "predict_uncertainty with n_members < 2": (
        lambda: db.DistributionalRegressor(**FAST).fit(*_heavy(40, 8)).predict_uncertainty(
            _tiny()[0], n_members=1), ValueError, "n_members must be an integer >= 2, got 1"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_input_raises_the_documented_error(case):
    fn, exc, pattern = ERRORS[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_the_errors_page_lists_the_conformal_cases():
    page = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    section = page.split("## Conformal calibration")[1].split("\n## ")[0]
    rows = {r.strip() for r in re.findall(r"^\| ([^|]+?) \|", section, flags=re.M)}
    assert set(ERRORS) | {"a mondrian group unseen in fit"} <= rows


def test_constant_fold_models_give_the_empirical_quantiles_even_with_far_outliers():
    # With constant fold models z_i = F_k^{-1}(F_k(y_i)) = y_i: the CV+ bounds are order
    # statistics of y.  Seed 4 holds an outlier at -45 whose PIT is exactly 0: the bracket of
    # the bisection was -inf and every bound came back as the upper bracket (a zero-width
    # interval at 48.1, coverage 0).
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(150, 2)), rng.standard_t(2, size=150)
    model = db.DistributionalRegressor(n_estimators=1, learning_rate=1e-9, early_stopping=False,
                                       linear_start=False, random_state=4)
    cf = db.ConformalRegressor(model, cv=5, random_state=4).fit(X, y)
    assert (cf.scores_ == 0.0).any()  # the far outlier the test is about
    ys = np.sort(y)
    want = [ys[order_index(150, 0.9, upper=False) - 1], ys[order_index(150, 0.9, upper=True) - 1]]
    np.testing.assert_allclose(cf.predict_interval(X[:3], 0.9), np.tile(want, (3, 1)),
                               rtol=1e-7)


def test_fold_members_total_variance_is_the_calibrated_mixtures_variance():
    # The law of total variance of predict_dist's mixture (its variance by quadrature of the
    # mixture's quantile function): total = mean member variance + variance of member means.
    # Before, aleatoric was the mixture's variance itself and total added the spread of the
    # raw fold means to it a second time.  Mondrian groups: per-group fold weights.
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x": rng.uniform(-2, 2, 150), "g": rng.integers(0, 2, 150)})
    y = 2.0 * X["x"].to_numpy() + 0.3 * rng.normal(size=150)
    cf = db.ConformalRegressor(db.DistributionalRegressor(**FAST), cv=3, mondrian="g",
                               random_state=0).fit(X, y)
    X_new = X.iloc[:6]
    frame = cf.predict_uncertainty(X_new)
    assert (frame["epistemic"] > 0).all()
    np.testing.assert_allclose(frame["total"], cf.predict_dist(X_new).variance, rtol=1e-3)
    np.testing.assert_allclose(frame["total"], frame["aleatoric"] + frame["epistemic"])


def test_cross_conformal_quantiles_keep_their_digits_at_a_large_offset():
    """The cross-fold quantile bisects to float64's resolution: with a relative tolerance
    of 1e-10 a target offset by 1e9 moved the quantiles by 0.03 and the variance by 0.3 %."""
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, size=(200, 2))
    y = X[:, 0] + rng.standard_t(3, size=200)
    out = []
    for offset in (0.0, 1e9):
        model = db.ConformalRegressor(
            db.DistributionalRegressor(n_estimators=10, early_stopping=False, random_state=0),
            method="cps", cv=5, random_state=0).fit(X, y + offset)
        dist = model.predict_dist(X[:5])
        out.append((dist.quantile([0.05, 0.5, 0.95]) - offset, dist.variance))
    np.testing.assert_allclose(out[1][0], out[0][0], atol=2e-6)  # float64 spacing at 1e9
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=2e-4)  # quadrature sums of 1e9s


def test_shrunk_intervals_of_a_target_with_many_zeros_stay_in_the_support():
    """A Tweedie law has an atom at 0 (60 % of these rows): the shrunk average is widened
    (c > 1) where the folds' spreads differ, and its lower bounds went below 0 (to -0.017
    here) before its quantiles were kept in the support."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2))
    y = np.where(rng.random(200) < 0.6, 0.0, np.abs(X[:, 0] + rng.normal(size=200)))
    cf = db.ConformalRegressor(db.DistributionalRegressor(family="tweedie", n_estimators=20,
                                                          early_stopping=False, random_state=0),
                               aggregation="shrunk", random_state=0).fit(X, y)
    iv = np.asarray(cf.predict_interval(X[:60], 0.9))  # a Tweedie's quantiles are inverted
    assert iv[:, 0].min() >= 0.0 and np.all(iv[:, 1] > iv[:, 0])
    assert np.all(cf.predict_dist(X[:10]).quantile(np.array([0.01, 0.5])) >= 0.0)


# scikit-learn's estimator checks: lists and array-likes, sparse input refused, a column-vector
# y, one sample, y=None.  Expected to fail as for DistributionalRegressor (a leaf's minimum
# size counts rows, not weights); the check also passes its own splits as cv, which takes an
# int or None.
def _checked(aggregation):
    return db.ConformalRegressor(db.DistributionalRegressor(n_estimators=5,
                                                            early_stopping=False,
                                                            random_state=0),
                                 cv=3, aggregation=aggregation, random_state=0)


def _expected_failed_checks(estimator):
    return {"check_sample_weight_equivalence_on_dense_data":
            "min_child_samples counts rows, not weights; cv takes an int or None"}


@pytest.mark.slow  # ~60 checks for each aggregation; the fast tier has the test below
@parametrize_with_checks([_checked("shrunk"), _checked("pool")],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def test_lists_array_likes_and_a_column_vector_y_are_taken_as_arrays():
    """What scikit-learn's checks found (the slow tier runs them all): a list X raised an
    IndexError, a column-vector y was refused."""
    X, y = _heavy(40, 8)
    cf = _checked("pool").fit(X.tolist(), y.tolist())
    want = cf.predict_interval(X[:3], 0.8)
    np.testing.assert_array_equal(cf.predict_interval(X[:3].tolist(), 0.8), want)
    with pytest.warns(DataConversionWarning, match="column-vector y"):
        again = _checked("pool").fit(X, y[:, None])
    np.testing.assert_array_equal(again.predict_interval(X[:3], 0.8), want)
    assert cf.predict(X[:3].tolist()).shape == (3,)
