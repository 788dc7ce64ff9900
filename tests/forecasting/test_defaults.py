"""distboost.forecasting.defaults and plan: what lags="auto", rolling="auto",
season_length=None and the scale window choose (issue 47, item 1)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.forecasting import Forecaster
from distboost.forecasting.data import to_panel
from distboost.forecasting.defaults import (
    auto_lags,
    auto_windows,
    detect_season,
    longest_lag,
    scale_window,
    season_of_freq,
    uses_series_id,
)
from distboost.forecasting.plan import make_plan

OFFSET = pd.tseries.frequencies.to_offset


@pytest.mark.parametrize("freq, season, lags, windows", [
    ("h", 24, (*range(1, 25), 48, 168), (24, 96)),
    ("D", 7, (1, 2, 3, 4, 5, 6, 7, 14, 21, 28), (7, 28)),
    ("W-SUN", 52, (1, 2, 3, 4, 8, 13, 26, 52), (13, 52)),
    ("MS", 12, (*range(1, 13), 24), (3, 12)),
    ("QS", 4, (1, 2, 3, 4, 8), (4, 16)),
    ("YS", 1, (1, 2, 3), (3, 12)),
])
def test_lags_and_windows_per_frequency(freq, season, lags, windows):
    f = OFFSET(freq)
    assert season_of_freq(f) == season
    assert auto_lags(f, season, limit=10_000) == lags
    assert auto_windows(f, season, limit=10_000) == windows


def test_no_lag_or_window_beyond_half_the_shortest_series():
    f = OFFSET("MS")
    assert longest_lag(np.array([48, 300]), horizon=18) == 24
    assert auto_lags(f, 12, limit=10) == tuple(range(1, 11))
    assert auto_windows(f, 12, limit=10) == (3,)
    assert auto_lags(f, 12, limit=0) == (1,)  # never empty


def test_scale_window_is_a_year_or_the_lags_reach():
    assert scale_window(OFFSET("D"), memory=28, limit=5000) == 364
    assert scale_window(OFFSET("D"), memory=28, limit=100) == 100  # a year > half the data
    assert scale_window(OFFSET("MS"), memory=24, limit=60) == 24  # the lags reach further
    assert scale_window(OFFSET("h"), memory=168, limit=100_000) == 8736
    assert scale_window(1, memory=12, limit=500) == 12  # integer time: the lags' reach


def test_season_detected_in_integer_series():
    rng = np.random.default_rng(0)
    t = np.arange(600)
    values = np.concatenate([np.sin(2 * np.pi * t / 17) + rng.normal(0, 0.3, 600),
                             3 + np.sin(2 * np.pi * t[:400] / 17) + rng.normal(0, 0.3, 400)])
    assert detect_season(values, np.array([0, 600, 1000])) == 17
    noise = rng.normal(size=500)
    assert detect_season(noise, np.array([0, 500])) == 1


def test_the_plan_of_a_panel_says_what_auto_chose():
    rng = np.random.default_rng(1)
    t = pd.date_range("2020-01-01", periods=400, freq="D")
    y = {k: pd.Series(rng.gamma(5.0, 1.0, 400), index=t) for k in "ab"}
    fc = Forecaster(horizon=14, calibrate=False, strategy="recursive", n_estimators=5,
                    early_stopping=False, n_paths=10).fit(y)
    assert fc.season_length_ == 7 and fc.lags_ == (1, 2, 3, 4, 5, 6, 7, 14, 21, 28)
    assert fc.rolling_ == (7, 28) and fc.scale_ == "mean"
    assert fc.plan_.scale_window == 200  # a year, cut to half the 400 days
    ints = {k: pd.Series(v.to_numpy()) for k, v in y.items()}
    plan = make_plan(Forecaster(horizon=3, season_length=5), to_panel(ints))
    assert plan.season_length == 5 and plan.lags == (1, 2, 3, 4, 5, 10)
    with pytest.raises(ValueError, match=r"season_length=300 is longer than half"):
        make_plan(Forecaster(horizon=3, season_length=300), to_panel(ints))
    with pytest.raises(ValueError, match="season_length must be an integer >= 1"):
        Forecaster(season_length=0).fit(ints)


def test_the_series_id_is_chosen_by_the_backtest_on_a_scaled_panel():
    assert uses_series_id(3, scaled=False)  # the id carries each series' level
    assert not uses_series_id(3, scaled=True) and not uses_series_id(1, scaled=False)
    t = pd.date_range("2020-01-01", periods=80, freq="D")
    y = {k: pd.Series(np.arange(80.0) + i, index=t) for i, k in enumerate("ab")}
    opts = dict(family="normal", horizon=3, calibrate=False, strategy="recursive",
                n_estimators=3, early_stopping=False, n_paths=10)
    fc = Forecaster(**opts).fit(y)  # no backtest: the rule
    assert not fc.series_id_ and "series_id" not in fc.feature_names_
    assert fc.series_id_scores_ is None
    assert Forecaster(scale=False, **opts).fit(y).series_id_
    forced = Forecaster(series_id=True, **opts).fit(y)
    assert forced.series_id_ and "series_id" in forced.feature_names_
    # Each series peaks on its own weekday: only the id tells the trees which (one lag, the
    # weekday as the calendar), and the backtest keeps it.
    rng = np.random.default_rng(0)
    t = pd.date_range("2020-01-01", periods=300, freq="D")
    peaks = {"a": 0, "b": 3, "c": 5}
    y = {k: pd.Series(10 + 4 * (t.day_of_week == d) + rng.normal(0, 0.5, 300), index=t)
         for k, d in peaks.items()}
    fc = Forecaster(horizon=3, lags=[1], rolling=(), date_features=["dayofweek"],
                    strategy="direct", calibrate=False, n_estimators=60,
                    early_stopping=False).fit(y)
    assert fc.series_id_ and "series_id" in fc.feature_names_
    assert fc.series_id_scores_[True] < 0.8 * fc.series_id_scores_[False]
