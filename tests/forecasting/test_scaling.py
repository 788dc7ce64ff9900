"""distboost.forecasting.scaling: the scale factor of a row is its window's mean absolute
value (counts: one plus it), the same in training rows and forecasts, and a forecast scales
exactly with its series (issue 47, item 2)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.forecasting import Forecaster
from distboost.forecasting.data import to_panel
from distboost.forecasting.features import (
    FeatureSpec,
    buffer_scales,
    last_values,
    training_rows,
)
from distboost.forecasting.scaling import (
    factor_of,
    flat_series,
    scaling_kind,
    window_factors,
    window_scales,
)

T = pd.date_range("2024-01-01", periods=120, freq="D")


def _spec(scale, strategy="recursive", window=0):
    return FeatureSpec(lags=(1, 2, 7), windows=(3,), calendar=(), strategy=strategy,
                       horizon=3, difference=False, ids=["a", "b"], exog=(), static=None,
                       scale=scale, scale_window=window)


def test_kinds_and_factors():
    assert scaling_kind(db.families.get("normal")) == "mean"
    assert scaling_kind(db.families.get("gamma")) == "mean"
    assert scaling_kind(db.families.get("poisson")) == "features"
    assert scaling_kind(db.families.get("censored_normal")) == "none"
    np.testing.assert_array_equal(factor_of("mean", [2.0, 0.0]), [2.0, 1.0])  # no 0 division
    np.testing.assert_array_equal(factor_of("features", [2.0, 0.0]), [3.0, 1.0])
    values = np.array([1.0, -3.0, 2.0, 0.0, 4.0, 5.0])
    # the window of 3 ending at each origin, cut at its series' start (flat index 0 or 4)
    got = window_factors("mean", values, np.array([2, 3, 4, 5]), 3, np.array([0, 0, 4, 4]))
    np.testing.assert_allclose(got, [2.0, 5.0 / 3.0, 4.0, 4.5])


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_training_rows_divide_by_the_window_they_read(strategy):
    rng = np.random.default_rng(0)
    a = pd.Series(rng.gamma(3.0, 10.0, 120), index=T)
    panel = to_panel({"a": a, "b": 50.0 * a})
    plain, y0, rows = training_rows(_spec("none", strategy), panel, None)
    scaled, y1, rows1 = training_rows(_spec("mean", strategy, window=10), panel, None)
    np.testing.assert_array_equal(rows, rows1)
    origin = rows - (plain["step"].to_numpy().astype(int) if strategy == "direct" else 1)
    pos = panel.position[origin]
    starts = panel.offsets[panel.series_of[origin]]
    expected = np.array([np.abs(panel.values[max(s, o - 9):o + 1]).mean()
                         for s, o in zip(starts, origin, strict=True)])  # by hand
    np.testing.assert_allclose(y1, y0 / expected)
    np.testing.assert_allclose(scaled["lag_7"], plain["lag_7"] / expected)
    np.testing.assert_allclose(scaled["roll_std_3"], plain["roll_std_3"] / expected)
    assert (pos >= 6).all()
    # series b is 50 x series a: the same scaled rows
    of_b = panel.series_of[rows] == 1
    np.testing.assert_allclose(scaled[of_b].iloc[:, 1:].to_numpy(dtype=float),
                               scaled[~of_b].iloc[:, 1:].to_numpy(dtype=float), rtol=1e-10)
    # a forecast's buffer of the same values gets the same factor as the training row
    buf = last_values(panel.values, starts, origin + 1, 10)  # NaN before a series' start
    np.testing.assert_allclose(buffer_scales(_spec("mean", strategy, 10), buf)[1], expected)


def test_counts_keep_their_target_and_get_log_scale():
    rng = np.random.default_rng(1)
    panel = to_panel({"a": pd.Series(rng.poisson(3.0, 120).astype(float), index=T),
                      "b": pd.Series(rng.poisson(300.0, 120).astype(float), index=T)})
    X, y, rows = training_rows(_spec("features"), panel, None)
    np.testing.assert_array_equal(y, panel.values[rows])  # counts stay counts
    factor = np.exp(X["log_scale"].to_numpy())
    np.testing.assert_allclose(X["lag_1"] * factor, panel.values[rows - 1])
    assert factor.min() >= 1.0


@pytest.fixture(scope="module")
def panel():
    rng = np.random.default_rng(2)
    season = 2.0 + np.sin(2 * np.pi * np.arange(200) / 7)
    idx = pd.date_range("2024-01-01", periods=200, freq="D")
    return {k: pd.Series(level * season * rng.gamma(20.0, 0.05, 200), index=idx)
            for k, level in (("small", 3.0), ("large", 4000.0), ("mid", 80.0))}


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_a_series_times_1000_gets_the_forecast_times_1000(panel, strategy):
    fc = Forecaster(horizon=5, strategy=strategy, n_paths=50, calibrate=False,
                    n_estimators=30, early_stopping=False).fit(panel)
    assert fc.scale_ == "mean"
    q = fc.predict_quantiles([0.1, 0.5, 0.9])
    big = fc.predict_quantiles([0.1, 0.5, 0.9], y_hist={k: 1000 * v for k, v in panel.items()})
    cols = ["q0.1", "q0.5", "q0.9"]
    np.testing.assert_allclose(big[cols].to_numpy(), 1000 * q[cols].to_numpy(), rtol=1e-9)
    paths = fc.sample_paths(20, random_state=1)
    big_paths = fc.sample_paths(20, random_state=1,
                                y_hist={k: 1000 * v for k, v in panel.items()})
    np.testing.assert_allclose(big_paths, 1000 * paths, rtol=1e-9)


def test_scaling_puts_small_and_large_series_in_one_model(panel):
    """Unscaled, the large series' units swamp the small one's: its forecast is off by far
    more than its own size; scaled, each forecast is in its own series' range."""
    kw = dict(family="normal", horizon=5, strategy="direct", calibrate=False, n_estimators=60,
              early_stopping=False)
    scaled = Forecaster(**kw).fit(panel).predict_quantiles([0.5])
    raw = Forecaster(scale=False, **kw).fit(panel).predict_quantiles([0.5])
    assert Forecaster(**kw).fit({"one": panel["mid"]}).scale_ == "none"  # "auto": one series
    small = scaled["id"] == "small"
    truth_range = (panel["small"].min(), panel["small"].max())
    assert scaled.loc[small, "q0.5"].between(*truth_range).all()
    assert np.abs(raw.loc[small, "q0.5"] - panel["small"].mean()).max() > np.abs(
        scaled.loc[small, "q0.5"] - panel["small"].mean()).max()


def test_constant_and_all_zero_series_get_sane_forecasts(panel, recwarn):
    idx = panel["mid"].index
    data = {**panel, "flat": pd.Series(7.0, index=idx), "zero": pd.Series(0.0, index=idx)}
    fc = Forecaster(family="normal", horizon=3, strategy="direct", calibrate=False,
                    n_estimators=30, early_stopping=False).fit(data)
    assert not [w for w in recwarn if "cannot resolve" in str(w.message)]
    q = fc.predict_quantiles([0.1, 0.5, 0.9]).set_index("id")
    assert np.isfinite(q.to_numpy(dtype=float)[:, 1:]).all()
    assert q.loc["flat", "q0.5"].between(5.0, 9.0).all()
    assert q.loc["zero", "q0.5"].abs().max() < 1.0


def test_a_series_flat_against_its_offset_is_named():
    values = np.r_[np.arange(10.0), np.full(10, 7.0), 1e9 + np.arange(10.0), np.zeros(10)]
    flat, spread = flat_series(values, np.array([0, 10, 20, 30, 40]))
    assert flat.tolist() == [2] and spread[0] == pytest.approx(np.std(np.arange(10.0)) / (
        1e9 + 4.5))
    rng = np.random.default_rng(0)
    t = pd.date_range("2020-01-01", periods=120, freq="D")
    y = {"a": pd.Series(10 + rng.normal(0, 1, 120), index=t),
         "big": pd.Series(1e9 + rng.normal(0, 1e3, 120), index=t)}
    opts = dict(horizon=3, strategy="recursive", calibrate=False, n_estimators=5,
                early_stopping=False, n_paths=10)
    assert Forecaster(**opts).fit(y).scale_ == "standard"  # "auto" keeps the resolution
    with pytest.warns(UserWarning, match=r"1 of the 2 series \(\['big'\]\) varies by less "
                      r"than 0.1% of it .* Use scale='standard'"):
        Forecaster(scale=True, **opts).fit(y)  # the division by the level, asked for
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Forecaster(scale=False, **opts).fit(y)  # no division: nothing to say


def test_standard_scaling_subtracts_the_window_mean_and_divides_by_its_sd():
    values = np.array([1.0, -3.0, 2.0, 0.0, 4.0, 5.0, 5.0])
    starts = np.array([0, 0, 4, 4, 4])
    centre = np.repeat([1.0, 4.0], [4, 3])
    shift, factor = window_scales("standard", values, np.array([2, 3, 4, 5, 6]), 3, starts,
                                  centre)
    windows = [values[0:3], values[1:4], values[4:5], values[4:6], values[4:7]]
    np.testing.assert_allclose(shift, [w.mean() for w in windows])
    np.testing.assert_allclose(factor, [w.std() if w.std() > 0 else 1.0 for w in windows])
    assert scaling_kind(db.families.get("normal"), "standard") == "standard"
    for name in ("gamma", "poisson", "censored_normal", "beta"):
        with pytest.raises(ValueError, match="scale='standard' subtracts each window's mean"):
            scaling_kind(db.families.get(name), "standard")


def test_standard_rows_are_the_same_for_a_series_offset_or_stretched():
    rng = np.random.default_rng(3)
    a = pd.Series(rng.normal(size=120).cumsum(), index=T)
    panel = to_panel({"a": a, "b": 1e9 + 50.0 * a})
    X, y, rows = training_rows(_spec("standard", "direct", window=10), panel, None)
    of_b = panel.series_of[rows] == 1
    np.testing.assert_allclose(X[of_b].iloc[:, 1:].to_numpy(dtype=float),
                               X[~of_b].iloc[:, 1:].to_numpy(dtype=float), atol=1e-5)
    np.testing.assert_allclose(y[of_b], y[~of_b], atol=1e-5)
    assert "roll_mean_10" not in X and "roll_std_10" not in X  # 0 and 1 by construction


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_standard_forecast_moves_with_an_offset_and_a_stretch(panel, strategy):
    fc = Forecaster(horizon=5, strategy=strategy, scale="standard", n_paths=50,
                    calibrate=False, n_estimators=30, early_stopping=False).fit(panel)
    assert fc.scale_ == "standard"
    cols = ["q0.1", "q0.5", "q0.9"]
    q = fc.predict_quantiles([0.1, 0.5, 0.9])[cols].to_numpy()
    moved = {k: 1e9 + 1000 * v for k, v in panel.items()}
    q_moved = fc.predict_quantiles([0.1, 0.5, 0.9], y_hist=moved)[cols].to_numpy()
    np.testing.assert_allclose(q_moved, 1e9 + 1000 * q, rtol=1e-12, atol=2e-3)
    with pytest.raises(ValueError, match="both take each series' level"):
        Forecaster(horizon=5, scale="standard", difference=True).fit(panel)


def test_auto_scaling_keeps_a_series_far_from_zero_in_its_resolution(recwarn):
    rng = np.random.default_rng(0)
    t = pd.date_range("2020-01-01", periods=230, freq="D")
    full = {"a": pd.Series(10 + rng.normal(0, 1, 230), index=t),
            "big": pd.Series(1e9 + rng.normal(0, 1e3, 230), index=t)}
    fc = Forecaster(horizon=30, strategy="direct", calibrate=False, n_estimators=60,
                    early_stopping=False).fit({k: v.iloc[:200] for k, v in full.items()})
    assert fc.scale_ == "standard"  # a Normal: less the mean, over the sd
    assert not [w for w in recwarn if "cannot resolve" in str(w.message)]
    q = fc.predict_quantiles([0.05, 0.5, 0.95]).set_index("id").loc["big"]
    truth = full["big"].iloc[200:].to_numpy()
    assert np.abs(q["q0.5"].to_numpy() - 1e9).max() < 2e3  # within two sd of the level
    assert 1.5 < ((q["q0.95"] - q["q0.05"]) / 1e3).mean() < 6.0  # 3.3 sd (mean: 223)
    assert ((truth >= q["q0.05"]) & (truth <= q["q0.95"])).mean() >= 0.7
    gamma = Forecaster(family="gamma", horizon=3, strategy="recursive", calibrate=False,
                       n_estimators=5, early_stopping=False, n_paths=10)
    with pytest.warns(UserWarning, match="cannot resolve"):  # positive: no shift possible
        assert gamma.fit({k: v.iloc[:200] for k, v in full.items()}).scale_ == "mean"
