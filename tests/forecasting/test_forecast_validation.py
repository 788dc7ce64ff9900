"""The rows the Forecaster's default early stopping judges: every row (cross-validation) for
the recursive strategy on a short history, the end of each series otherwise (the direct
strategy: no target time on both sides)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from distboost.estimators import DistributionalRegressor
from distboost.forecasting import Forecaster


@pytest.fixture(scope="module")
def short_series():
    """100 values of a Gaussian AR(1) (phi 0.6), every value distinct (a value names its
    position)."""
    rng = np.random.default_rng(3)
    e = np.zeros(100)
    z = rng.normal(size=100)
    for t in range(1, 100):  # the AR recursion
        e[t] = 0.6 * e[t - 1] + z[t]
    return pd.Series(10.0 + e, index=pd.RangeIndex(100))


@pytest.fixture
def fits(monkeypatch):
    """Records the target of the training and validation rows of every regressor fit."""
    seen = []
    original = DistributionalRegressor.fit

    def spy(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None):
        seen.append((np.asarray(y), None if eval_set is None else np.asarray(eval_set[1])))
        return original(self, X, y, sample_weight=sample_weight, eval_set=eval_set,
                        eval_sample_weight=eval_sample_weight)

    monkeypatch.setattr(DistributionalRegressor, "fit", spy)
    return seen


def test_recursive_on_a_short_history_cross_validates_on_every_row(short_series, fits):
    # the last 10 % would be 9 rows: rounds and dispersion calibration judged on 9 values
    fc = Forecaster(family="normal", horizon=5, lags=[1, 2], rolling=(), strategy="recursive",
                    n_estimators=20, learning_rate=0.3, n_paths=20,
                    calibrate=False).fit(short_series)
    (train, val), = fits
    assert val is None and train.size == 98  # every row reaches the regressor
    assert fc.model_.early_stopping_ == "cv"


def test_direct_validates_on_the_end_of_the_series_only(short_series, fits):
    fc = Forecaster(family="normal", horizon=5, lags=[1, 2], rolling=(), strategy="direct",
                    n_estimators=20, learning_rate=0.3, calibrate=False).fit(short_series)
    train, val = fits[-1]  # the final fit (the copula's backtest fits first)
    position = pd.Series(np.arange(100), index=short_series.to_numpy())
    p_train, p_val = position[train].to_numpy(), position[val].to_numpy()
    assert p_val.min() == 90 and p_train.max() == 89  # the last 10 % of the targets
    assert p_val.size == 10 * 5  # every step of each validation target
    assert fc.model_.early_stopping_ == "eval_set"


def test_recursive_on_a_long_history_validates_on_its_end(fits):
    y = pd.Series(np.random.default_rng(0).normal(size=1100), index=pd.RangeIndex(1100))
    Forecaster(family="normal", horizon=2, lags=[1], rolling=(), strategy="recursive",
               n_estimators=2, n_paths=2, calibrate=False).fit(y)
    (train, val), = fits
    position = pd.Series(np.arange(1100), index=y.to_numpy())
    assert position[val].min() == 990 and position[train].max() == 989


def test_early_stopping_options_are_the_users(short_series, fits):
    Forecaster(family="normal", horizon=3, lags=[1], rolling=(), strategy="direct",
               early_stopping=False, n_estimators=5, calibrate=False).fit(short_series)
    Forecaster(family="normal", horizon=3, lags=[1], rolling=(), strategy="recursive",
               early_stopping="holdout", n_estimators=5, n_paths=20,
               calibrate=False).fit(short_series)
    assert [v for _, v in fits] == [None] * len(fits) and len(fits) == 3
