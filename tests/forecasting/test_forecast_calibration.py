"""Step-wise calibration of forecasts (``distboost/forecasting/calibration.py``,
``Forecaster(calibrate=True)``): the maps move each step's marginal exactly as the PIT law
says, recursive paths keep their ranks (their dependence across steps), and on a trending
series that the trees cannot follow the calibrated backtest covers far more often."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import distboost as db
from distboost.families import Calibrated
from distboost.forecasting import Forecaster
from distboost.forecasting.calibration import (
    AUTO_COVERAGE,
    MIN_PITS,
    backtest_coverage,
    calibrate_direct,
    calibrate_paths,
    calibrate_scores,
    calibration_origins,
    needs_calibration,
    step_tables,
)

NORMAL = db.families.get("normal")


def _tables(H, seed=0, n=80, low=0.25, high=0.75):
    """PIT samples of an over-dispersed forecast (all inside [low, high])."""
    rng = np.random.default_rng(seed)
    return [np.sort(rng.uniform(low, high, n)) for _ in range(H)]


def test_paths_keep_their_ranks_and_take_the_calibrated_quantiles():
    rng = np.random.default_rng(1)
    C, P, H = 3, 400, 4
    paths = rng.normal(size=(C, P, H)).cumsum(axis=2)
    tables = _tables(H)
    new = calibrate_paths(paths, NORMAL, tables)
    # ranks of every path at every step unchanged
    np.testing.assert_array_equal(np.argsort(new, axis=1), np.argsort(paths, axis=1))
    # the new marginal's level q sits at the old paths' level G^{-1}(q)
    fam = Calibrated(NORMAL, [[t] for t in tables])
    for h in range(H):
        g_inv = fam.pit_map_inverse(torch.tensor([0.05, 0.95]), group=h).numpy()
        want = np.quantile(paths[:, :, h], g_inv, axis=1, method="hazen").T
        got = np.quantile(new[:, :, h], [0.05, 0.95], axis=1, method="hazen").T
        np.testing.assert_allclose(got, want, rtol=0, atol=0.03 * paths[:, :, h].std())
        # PITs within [0.25, 0.75]: the calibrated 90 % band is about half the raw one
        assert np.all(got[:, 1] - got[:, 0] < 0.7 * np.subtract(
            *np.quantile(paths[:, :, h], [0.95, 0.05], axis=1)))


def test_count_paths_stay_on_the_paths_values():
    rng = np.random.default_rng(2)
    paths = rng.poisson(4.0, size=(2, 300, 3)).astype(float)
    new = calibrate_paths(paths, db.families.get("poisson"), _tables(3))
    assert np.all(new == np.round(new))
    assert set(np.unique(new)) <= set(np.unique(paths))


def test_direct_marginals_compose_the_map_with_the_family_cdf():
    H, C = 3, 2
    tables = _tables(H, seed=3)
    loc = np.arange(C * H, dtype=float)
    dist = db.Predictive("normal", {"loc": loc, "scale": np.full(C * H, 2.0)})
    cal = calibrate_direct(dist, tables, C)
    y = loc + 1.3
    fam = Calibrated(NORMAL, [[t] for t in tables])
    step = np.tile(np.arange(H), C)
    want = [float(fam.pit_map(dist.cdf(y)[i:i + 1], group=int(step[i]))[0]) for i in range(C * H)]
    np.testing.assert_allclose(cal.cdf(y), want, rtol=1e-12)
    iv_raw, iv_cal = dist.interval(0.9), cal.interval(0.9)
    assert np.all(iv_cal[:, 1] - iv_cal[:, 0] < iv_raw[:, 1] - iv_raw[:, 0])


def test_scores_follow_the_map():
    tables = _tables(2, seed=4)
    pit = np.array([[0.3, 0.5], [0.7, 0.9]])
    nll = np.ones((2, 2))
    new_pit, new_nll = calibrate_scores(pit, nll, NORMAL, tables)
    fam = Calibrated(NORMAL, [[t] for t in tables])
    for h in range(2):
        np.testing.assert_allclose(new_pit[:, h], fam.pit_map(pit[:, h], group=h).numpy())
        dens = fam.pit_map(pit[:, h], group=h, density=True).numpy()
        np.testing.assert_allclose(new_nll[:, h], 1.0 - np.log(dens))


def test_tables_pool_neighbouring_steps_to_the_minimum():
    rng = np.random.default_rng(5)
    table = pd.DataFrame({"step": np.repeat(np.arange(1, 7), 20), "pit": rng.uniform(size=120)})
    tables = step_tables(table, 6)
    assert all(t.size >= MIN_PITS for t in tables)
    assert tables[0].size == 60 and tables[3].size == 60  # steps 1-3 and 3-5 (or 2-4, 4-6)
    assert all(np.all(np.diff(t) >= 0) for t in tables)


def test_origins_bounded_by_the_history_and_the_panel_size():
    assert calibration_origins(np.array([400]), memory=12, horizon=6) == 100
    assert calibration_origins(np.full(1000, 500), memory=24, horizon=24) == 2
    with pytest.raises(ValueError, match="at least 20 origins in all"):
        calibration_origins(np.array([60]), memory=2, horizon=3)


def _trend(n=320, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    noise = np.zeros(n)
    for i in range(1, n):
        noise[i] = 0.5 * noise[i - 1] + rng.normal(0, 0.3)
    return pd.Series(0.02 * t + noise, index=pd.date_range("2000-01-01", periods=n, freq="D"))


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_calibration_restores_coverage_on_a_trend_the_trees_cannot_follow(strategy):
    """Without ``difference``, trees forecast a rising series at most at the highest value
    they were trained on: the raw forecasts sit below the truth, more so every step. The end
    of the history shows that bias, and the calibrated forecasts move up to meet it."""
    y = _trend()
    opts = dict(horizon=5, lags=[1, 2], rolling=(), strategy=strategy, n_paths=200,
                n_estimators=60, early_stopping=False, date_features=None, random_state=0)
    raw = Forecaster(calibrate=False, **opts).backtest(y, start=260, step=1)
    cal = Forecaster(calibrate=True, **opts).backtest(y, start=260, step=1)
    raw_cov, cal_cov = raw["hit_90"].mean(), cal["hit_90"].mean()
    assert raw_cov < 0.89  # recursive 0.62, direct 0.875 (seeded)
    assert abs(cal_cov - 0.9) < abs(raw_cov - 0.9)  # recursive 0.95, direct 0.88
    assert cal["crps"].mean() < 0.9 * raw["crps"].mean()  # by 61 % and 15 %


def test_calibrated_paths_are_reproducible_and_shaped():
    y = _trend(200, seed=1)
    fc = Forecaster(horizon=4, lags=[1, 2], rolling=(), strategy="recursive", calibrate=True,
                    n_paths=100, n_estimators=30, early_stopping=False,
                    date_features=None).fit(y)
    assert len(fc.calibration_) == 4 and all(t.size >= MIN_PITS for t in fc.calibration_)
    a, b = fc.sample_paths(50, random_state=3), fc.sample_paths(50, random_state=3)
    assert a.shape == (50, 4) and np.array_equal(a, b)
    assert fc.predict_dist().interval(0.9).shape == (4, 2)
    assert Forecaster().get_params()["calibrate"] == "auto"


def test_backtest_coverage_and_the_auto_rule():
    table = pd.DataFrame({"hit_90": [False, True, True, False]})
    assert backtest_coverage(table) == 0.5
    assert needs_calibration(0.5) and needs_calibration(0.97)
    assert not needs_calibration(AUTO_COVERAGE[0]) and not needs_calibration(0.9)


def test_auto_recalibrates_the_trend_the_trees_cannot_follow():
    opts = dict(horizon=5, lags=[1, 2], rolling=(), strategy="recursive", n_paths=200,
                n_estimators=60, early_stopping=False, date_features=None, random_state=0)
    y = _trend()
    auto = Forecaster(calibrate="auto", **opts).fit(y)
    assert auto.calibration_coverage_ < AUTO_COVERAGE[0]
    on = Forecaster(calibrate=True, **opts).fit(y)
    assert auto.calibration_coverage_ == on.calibration_coverage_
    for a, b in zip(auto.calibration_, on.calibration_, strict=True):
        np.testing.assert_array_equal(a, b)


def test_auto_leaves_a_calibrated_forecast_as_it_is():
    """A stationary AR(1) that one-step trees model well: the backtest covers about 90 %,
    so "auto" keeps the raw forecasts (True would still reshape them)."""
    rng = np.random.default_rng(4)
    e = np.zeros(400)
    for i in range(1, 400):
        e[i] = 0.6 * e[i - 1] + rng.normal()
    y = pd.Series(e, index=pd.date_range("2000-01-01", periods=400, freq="D"))
    opts = dict(horizon=3, lags=[1], rolling=(), strategy="direct", n_estimators=40,
                early_stopping=False, date_features=None, random_state=0)
    auto = Forecaster(calibrate="auto", **opts).fit(y)
    plain = Forecaster(calibrate=False, **opts).fit(y)
    assert AUTO_COVERAGE[0] <= auto.calibration_coverage_ <= AUTO_COVERAGE[1]
    assert auto.calibration_ is None and plain.calibration_ is None
    np.testing.assert_array_equal(auto.predict_dist().interval(0.9),
                                  plain.predict_dist().interval(0.9))


@pytest.mark.parametrize("family, y", [
    ("normal", pd.Series(np.sin(np.arange(60.0)))),  # too short for the backtest
    ("zero_adjusted_gamma", pd.Series(np.abs(np.sin(np.arange(200.0))))),  # a point mass
])
def test_auto_skips_what_cannot_be_calibrated(family, y):
    fc = Forecaster(family=family, horizon=3, lags=[1, 2], rolling=(), calibrate="auto",
                    strategy="direct", n_estimators=10, early_stopping=False).fit(y)
    assert fc.calibration_ is None  # (the direct strategy's copula still backtests)
