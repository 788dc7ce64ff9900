"""distboost.forecasting.features: every feature of a row comes from values strictly before
its target (exact alignment, no leak of ``y[t]``), training rows and forecast rows are built
the same way, rolling statistics equal pandas' and numpy's."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.forecasting.data import to_panel
from distboost.forecasting.features import (
    FeatureSpec,
    auto_calendar,
    training_rows,
    window_features,
)

T = pd.date_range("2024-01-01", periods=60, freq="h")
# Values that name their own series and position: y = 1000 * series + position.
PANEL = to_panel({"a": pd.Series(np.arange(60.0), index=T),
                  "b": pd.Series(1000 + np.arange(40.0), index=T[20:])})


def spec(strategy, *, difference=False, windows=(), lags=(1, 2, 5), horizon=3):
    return FeatureSpec(lags=lags, windows=windows, calendar=("hour",), strategy=strategy,
                       horizon=horizon, difference=difference, ids=["a", "b"], exog=(),
                       static=None)


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_every_lag_is_exactly_before_the_target(strategy):
    s = spec(strategy)
    X, y, rows = training_rows(s, PANEL, None)
    step = X["step"].to_numpy() if strategy == "direct" else np.ones(len(X))
    pos = y % 1000  # the target's position, read from its value
    assert np.array_equal(y, PANEL.values[rows])
    for j in s.lags:  # lag j: the value j steps before the step after the origin
        np.testing.assert_array_equal(X[f"lag_{j}"], y - step + 1 - j)
    for k in s.target_lags:
        known = step <= k
        np.testing.assert_array_equal(X.loc[known, f"target_lag_{k}"], y[known] - k)
        assert X.loc[~known, f"target_lag_{k}"].isna().all()
    # no feature ever holds the target or a later value of the same series
    numeric = X.drop(columns=["series_id", "hour"] + (["step"] if "step" in X else []))
    assert np.all(np.nan_to_num(numeric.to_numpy(), nan=-np.inf) < y[:, None])
    assert np.all(pos >= s.memory)  # a whole window before every target
    np.testing.assert_array_equal(X["hour"], PANEL.times[rows].hour)
    assert list(X["series_id"].astype(str)) == ["a" if v < 1000 else "b" for v in y]


def test_rolling_statistics_equal_pandas():
    s = spec("recursive", windows=(4, 7))
    X, y, rows = training_rows(s, PANEL, None)
    rng = np.random.default_rng(0)
    noisy = to_panel({"a": pd.Series(1e9 + rng.normal(size=60), index=T)})
    Xn, yn, rn = training_rows(FeatureSpec((1,), (4, 7), (), "recursive", 1, False, None, (),
                                           None), noisy, None)
    series = pd.Series(noisy.values)
    for w in (4, 7):
        ref_mean = series.rolling(w).mean().shift(1).to_numpy()[rn]
        np.testing.assert_allclose(Xn[f"roll_mean_{w}"], ref_mean, rtol=1e-14)
        # two-pass standard deviations of each window (pandas' online rolling std loses
        # digits at an offset of 1e9)
        windows = np.lib.stride_tricks.sliding_window_view(noisy.values, w)[rn - w]
        np.testing.assert_allclose(Xn[f"roll_std_{w}"], windows.std(axis=1), rtol=1e-7)
        # on the labelled panel: the mean of the w values before the target
        np.testing.assert_allclose(X[f"roll_mean_{w}"], y - 1 - (w - 1) / 2)


@pytest.mark.parametrize("strategy", ["recursive", "direct"])
@pytest.mark.parametrize("difference", [False, True])
def test_forecast_rows_equal_training_rows(strategy, difference):
    # the rows a forecast builds from a window of history are the training rows of the
    # same origins and steps: no off-by-one between fit and predict
    s = spec(strategy, difference=difference, windows=(3,))
    X, y, rows = training_rows(s, PANEL, None)
    step = X["step"].to_numpy().astype(int) if strategy == "direct" else np.ones(len(X), int)
    origin = rows - step
    buf = PANEL.values[origin[:, None] - s.memory + 1 + np.arange(s.memory)[None, :]]
    series = PANEL.series_of[rows]
    F = window_features(s, buf, step=step, times=PANEL.times[rows], series=series, exog=None)
    pd.testing.assert_frame_equal(F, X, check_exact=False, rtol=1e-12)
    if difference:
        np.testing.assert_array_equal(y, step)  # y[t] - y[T] on the labelled panel
        assert "lag_1" not in X


@pytest.mark.parametrize(("freq", "expected"), [
    ("15min", ("minute", "hour", "dayofweek")), ("h", ("hour", "dayofweek")),
    ("D", ("dayofweek", "month")), ("B", ("dayofweek", "month")),
    ("W-SUN", ("weekofyear",)), ("7D", ("weekofyear",)), ("MS", ("month",)), ("ME", ("month",)),
    ("QS", ("quarter",)), ("QE", ("quarter",)), ("YS", ()), ("YE", ())])
def test_auto_calendar_follows_the_step_not_the_anchor(freq, expected):
    # anchored offsets (weeks ending on Sunday, year ends) roll a date to their anchor first:
    # the step is measured between two points of the grid
    index = pd.date_range("2023-05-17", periods=8, freq=freq)
    assert auto_calendar(index.freq) == expected


@pytest.mark.parametrize("scale", ["mean", "features"])
@pytest.mark.parametrize("strategy", ["recursive", "direct"])
def test_no_feature_reads_the_target_or_later_under_scaling_and_covariates(strategy, scale):
    """Issue 47: a row's features, its scale factor included, and the covariates of any time
    but the target's, are those of the history before its target: changing every value from
    the target on (and the covariates after it) leaves the row as it was."""
    from dataclasses import replace

    rng = np.random.default_rng(3)
    base = to_panel({"a": pd.Series(rng.gamma(4.0, 3.0, 60).round(), index=T),
                     "b": pd.Series(rng.gamma(4.0, 300.0, 40).round(), index=T[20:])})
    exog = pd.DataFrame({"price": rng.normal(size=100)})
    s = FeatureSpec(lags=(1, 2, 5), windows=(3,), calendar=("hour",), strategy=strategy,
                    horizon=3, difference=False, ids=["a", "b"], exog=("price",),
                    static=None, scale=scale, scale_window=8)
    X, y, rows = training_rows(s, base, exog)
    for i in rng.choice(len(rows), 25, replace=False):
        t = rows[i]
        later = np.arange(t, base.offsets[base.series_of[t] + 1])
        values = base.values.copy()
        values[later] = 1e6 + rng.normal(size=later.size)
        changed = exog.copy()
        changed.loc[later[1:], "price"] = 99.0
        X2, _, rows2 = training_rows(s, replace(base, values=values), changed)
        same = np.flatnonzero((rows2 == t) & (X2.get("step", 1) == X.get("step", 1)[i]
                                              if strategy == "direct" else rows2 == t))
        pd.testing.assert_series_equal(X2.iloc[same[0]], X.iloc[i], check_names=False)
