"""Scores and diagnostics: textbook definitions, propriety, PIT uniformity, weights."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import distboost as db
from distboost import metrics


def _normal(loc, scale, n=None):
    loc, scale = np.broadcast_arrays(np.asarray(loc, float), np.asarray(scale, float))
    return db.Predictive.from_params("normal", loc=loc, scale=scale)


def test_interval_score_hand_computed():
    d = _normal(np.zeros(3), np.ones(3))
    lo, hi = st.norm.ppf([0.05, 0.95])
    y = np.array([0.0, -3.0, 2.5])
    alpha = 0.1
    want = np.array([hi - lo, hi - lo + 2 / alpha * (lo + 3.0), hi - lo + 2 / alpha * (2.5 - hi)])
    np.testing.assert_allclose(metrics.interval_score(d, y, 0.9), want)


def test_pinball_hand_computed():
    d = _normal(np.zeros(2), np.ones(2))
    q = st.norm.ppf(0.8)
    y = np.array([2.0, -1.0])
    want = np.array([(0 - 0.8) * (q - 2.0), (1 - 0.8) * (q + 1.0)])
    np.testing.assert_allclose(metrics.pinball(d, y, 0.8), want)
    both = metrics.pinball(d, y, [0.8, 0.5])
    assert both.shape == (2, 2)
    np.testing.assert_allclose(both[:, 1], 0.5 * np.abs(y))


def test_crps_is_minimised_by_the_truth():
    rng = np.random.default_rng(0)
    y = rng.normal(1.0, 2.0, size=50_000)
    truth = metrics.mean_crps(_normal(np.full(y.size, 1.0), 2.0), y)
    for loc, scale in [(1.3, 2.0), (1.0, 1.6), (1.0, 2.5), (0.7, 2.2)]:
        assert truth < metrics.mean_crps(_normal(np.full(y.size, loc), scale), y)


def test_nll_and_coverage_and_sharpness():
    d = _normal(np.zeros(4), np.full(4, 2.0))
    y = np.array([0.0, 1.0, 10.0, -4.0])
    np.testing.assert_allclose(metrics.nll(d, y), -st.norm.logpdf(y, 0, 2))
    # The 90% interval is +-3.29: rows 0 and 1 are inside, 2 and 3 outside.
    assert metrics.coverage(d, y, 0.9) == 0.5
    assert metrics.coverage(d, y, 0.9, sample_weight=[1, 3, 2, 0]) == pytest.approx(4 / 6)
    assert metrics.sharpness(d, 0.9) == pytest.approx(2 * 2 * st.norm.ppf(0.95))


@pytest.mark.parametrize("name, params", [
    ("gamma", {"concentration": 2.0, "rate": 0.5}),
    ("poisson", {"rate": 2.5}),
    ("negative_binomial", {"total_count": 2.0, "probs": 0.6}),
], ids=["gamma", "poisson", "negative_binomial"])
def test_pit_of_draws_is_uniform(name, params):
    n = 20_000
    d = db.Predictive.from_params(name, **{k: np.full(n, v) for k, v in params.items()})
    y = d.sample(1, random_state=3)[0]
    u = metrics.pit(d, y, random_state=4)
    # KS test against U(0, 1) at a fixed seed: p-value above 0.001.
    assert st.kstest(u, "uniform").pvalue > 1e-3
    # A miscalibrated forecast is detected by the same test.
    wrong = db.Predictive.from_params(name, **{k: np.full(n, v * 1.3) for k, v in params.items()})
    assert st.kstest(metrics.pit(wrong, y), "uniform").pvalue < 1e-6


def test_calibration_error_small_when_calibrated_large_when_not():
    rng = np.random.default_rng(1)
    y = rng.normal(size=20_000)
    assert metrics.calibration_error(_normal(np.zeros(y.size), 1.0), y) < 0.01
    assert metrics.calibration_error(_normal(np.zeros(y.size), 0.5), y) > 0.1


def _discrete_truth(name, n=20_000, seed=0):
    """A Predictive of ``name`` with parameters varying by row, and draws from it."""
    rng = np.random.default_rng(seed)
    params = {
        "poisson": {"rate": rng.uniform(0.2, 8.0, n)},
        "negative_binomial": {"total_count": rng.uniform(0.5, 5.0, n),
                              "probs": rng.uniform(0.2, 0.8, n)},
        "bernoulli": {"logits": rng.normal(0.0, 2.0, n)},
    }[name]
    d = db.Predictive.from_params(name, **params)
    return d, d.sample(1, random_state=seed + 1)[0]


@pytest.mark.parametrize("name", ["poisson", "negative_binomial", "bernoulli"])
def test_calibration_error_of_the_true_discrete_model_is_small(name):
    # The ordered discrete families (categorical has no cdf: its classes are unordered).
    # 5,000 rows: the true model's error 0.001-0.008 over seeds 0-2, the biased definition
    # 0.09-0.36, the wrong models' 0.08-0.38.
    d, y = _discrete_truth(name, n=5_000)
    assert metrics.calibration_error(d, y) < 0.02
    # y <= quantile, the old definition, is biased for counts: far above 0.02 here.
    levels = np.arange(0.05, 0.951, 0.05)
    biased = np.mean(np.abs((y[:, None] <= d.quantile(levels)).mean(axis=0) - levels))
    assert biased > 0.05
    # A miscalibrated forecast still scores badly.
    wrong = {"poisson": lambda p: {"rate": 1.5 * p["rate"]},
             "negative_binomial": lambda p: {"total_count": 3.0 * p["total_count"],
                                             "probs": p["probs"]},
             "bernoulli": lambda p: {"logits": p["logits"] + 1.0}}[name](d.params)
    assert metrics.calibration_error(db.Predictive.from_params(name, **wrong), y) > 0.04


def test_pit_cdf_is_the_non_randomised_pit_of_czado_et_al():
    d = db.Predictive.from_params("poisson", rate=[1.0, 1.0, 2.0])
    y = np.array([0.0, 1.0, 3.0])
    u = np.array([0.1, 0.5, 0.9])
    f = st.poisson.cdf
    lower, upper = f(y - 1, [1, 1, 2]), f(y, [1, 1, 2])
    want = np.clip((u[None, :] - lower[:, None]) / (upper - lower)[:, None], 0, 1).mean(axis=0)
    np.testing.assert_allclose(metrics.pit_cdf(d, y, u), want, rtol=1e-12)
    # It is the expectation of the randomised PIT: the mean over many draws approaches it
    # (1,000 seeded draws: 0.010 off at most, one standard error 0.009).
    draws = np.stack([metrics.pit(d, y, random_state=s) for s in range(1000)])
    np.testing.assert_allclose((draws[:, :, None] <= u).mean(axis=(0, 1)), want, atol=0.02)
    # A continuous family: the share of y at or below its predicted u-quantile.
    n = _normal(np.zeros(4), 1.0)
    yc = np.array([-1.0, 0.2, 0.5, 2.0])
    np.testing.assert_allclose(metrics.pit_cdf(n, yc, u),
                               (yc[:, None] <= n.quantile(u)).mean(axis=0))
    with pytest.raises(ValueError, match="PIT levels"):
        metrics.pit_cdf(d, y, [0.5, 1.5])


def test_categorical_calibration_error_says_classes_are_unordered():
    from distboost.families.categorical import Categorical

    d = db.Predictive(Categorical(n_classes=3), {f"logits_{k}": np.zeros(4) for k in range(3)})
    with pytest.raises(ValueError, match="unordered classes"):
        metrics.calibration_error(d, [0, 1, 2, 0])


# nll and mean_nll score the bounds of a censored family (tests/predictive/test_censored_scores.py)
@pytest.mark.parametrize("score", ["crps", "pit", "pit_cdf", "coverage", "interval_score",
                                   "pinball", "calibration_error", "mean_crps"])
def test_exact_scores_on_censored_bounds_name_the_survival_scores(score):
    n = 206
    d = db.Predictive.from_params("censored_weibull", scale=np.full(n, 2.0),
                                  concentration=np.full(n, 1.5))
    t = np.linspace(0.1, 5.0, n)
    y = db.censored.right(t, np.arange(n) % 3 > 0)
    args = {"interval_score": (0.9,), "pinball": (0.5,)}.get(score, ())
    with pytest.raises(ValueError, match=(
            rf"{score.removeprefix('mean_')} needs exact observations, y of shape \(206,\); "
            r"got shape \(206, 2\), the \(lower, upper\) bounds of a censored target\. Score "
            r"censored targets with db\.metrics\.censored_nll, db\.metrics\.survival_crps, "
            r"db\.metrics\.concordance_index, db\.metrics\.d_calibration")):
        getattr(metrics, score)(d, y, *args)


def test_predictive_scores_on_censored_bounds_name_the_survival_scores():
    d = db.Predictive.from_params("normal", loc=np.zeros(3), scale=1.0)
    y = db.censored.right([1.0, 2.0, 3.0], [True, False, True])
    for method in (d.crps, d.pit):
        with pytest.raises(ValueError, match="needs exact observations.*survival_crps"):
            method(y)


def test_weights_equal_replication():
    d = _normal([0.0, 1.0, 2.0], [1.0, 2.0, 0.5])
    y = np.array([0.3, -1.0, 2.2])
    w = np.array([1, 3, 2])
    rep = np.repeat(np.arange(3), w)
    assert metrics.mean_crps(d, y, w) == pytest.approx(metrics.mean_crps(d[rep], y[rep]))
    assert metrics.mean_nll(d, y, w) == pytest.approx(metrics.mean_nll(d[rep], y[rep]))


def test_bad_inputs():
    d = _normal(np.zeros(3), 1.0)
    with pytest.raises(ValueError, match="shape"):
        metrics.crps(d, np.zeros(2))
    with pytest.raises(ValueError, match="1 of 3 rows that are NaN"):
        metrics.nll(d, [0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match="level"):
        metrics.coverage(d, np.zeros(3), 1.5)
    with pytest.raises(ValueError, match="no closed-form"):
        metrics.crps(db.Predictive.from_params("weibull", scale=[1.0], concentration=[2.0]),
                     [1.0], method="closed")


def test_predictive_methods_delegate():
    d = _normal([0.0, 1.0], [1.0, 3.0])
    y = np.array([0.5, -2.0])
    np.testing.assert_array_equal(d.crps(y), metrics.crps(d, y))
    np.testing.assert_array_equal(d.nll(y), metrics.nll(d, y))
    np.testing.assert_array_equal(d.pit(y), st.norm.cdf(y, [0, 1], [1, 3]))
