"""distboost.forecasting.keyed: random levels keyed by context, so that a series' paths do
not depend on the other series forecast beside it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from distboost.forecasting import Forecaster
from distboost.forecasting.keyed import context_keys, stratified, uniforms

RNG = np.random.default_rng(4)
Y = {k: pd.Series(np.cumsum(RNG.normal(size=150)) + 30.0 + 10 * i)
     for i, k in enumerate(["a", "b", "c"])}


def test_uniforms_are_uniform_independent_of_the_batch_and_of_each_key():
    keys = context_keys(["a", "b", "c"], [5, 5, 5])
    assert len(set(keys.tolist())) == 3
    u = uniforms(7, keys, 20_000, step=0, stream=0)
    assert u.shape == (3, 20_000) and 0 < u.min() and u.max() < 1
    for row in u:  # each key's stream is uniform
        assert stats.kstest(row, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(u[0], u[1])[0, 1]) < 0.03
    np.testing.assert_array_equal(uniforms(7, keys[1:2], 20_000, 0, 0), u[1:2])
    assert not np.array_equal(uniforms(8, keys, 50, 0, 0), u[:, :50])
    assert not np.array_equal(uniforms(7, keys, 50, 1, 0), u[:, :50])
    # The key reads the id and the first target time, dates or integers.
    assert context_keys(["a"], [6])[0] != keys[0]
    dates = pd.to_datetime(["2020-01-01", "2020-01-02"])
    assert context_keys(["a", "a"], dates)[0] != context_keys(["a", "a"], dates)[1]


def test_stratified_levels_take_one_level_in_every_stratum():
    keys = context_keys(np.arange(4), np.zeros(4))
    u = stratified(3, keys, 50, step=2)
    np.testing.assert_array_equal(np.sort(np.floor(u * 50), axis=1),
                                  np.tile(np.arange(50.0), (4, 1)))


@pytest.mark.parametrize("strategy", ["direct", "recursive"])
def test_a_series_gets_the_same_paths_alone_or_beside_others(strategy):
    fc = Forecaster(horizon=5, lags=[1, 2], rolling=(), strategy=strategy, family="normal",
                    n_paths=30, n_estimators=20, early_stopping=False, calibrate=False,
                    series_id=False, random_state=0).fit(Y)
    together = fc.sample_paths(40, random_state=2)  # (P, S, H)
    alone = fc.sample_paths(40, y_hist={"b": Y["b"]}, random_state=2)  # one series
    np.testing.assert_array_equal(alone[:, 0, :], together[:, 1, :])
    swapped = fc.sample_paths(40, y_hist={"c": Y["c"], "a": Y["a"]}, random_state=2)
    np.testing.assert_array_equal(swapped[:, 1, :], together[:, 0, :])  # in the order given
    assert not np.array_equal(together[:, 0, :], together[:, 1, :] - together[:, 1, :].mean()
                              + together[:, 0, :].mean())
