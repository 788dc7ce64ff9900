"""distboost.forecasting.copula: the Gaussian copula over the steps from backtest PIT values,
and joint paths whose marginals are the direct strategy's exactly (issue 47, item 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import distboost as db
from distboost.forecasting import Forecaster
from distboost.forecasting.copula import MIN_ORIGINS, copula_paths, step_correlation


def test_correlation_of_normal_scores_is_recovered():
    rng = np.random.default_rng(0)
    r = np.array([[1.0, 0.8, 0.5], [0.8, 1.0, 0.8], [0.5, 0.8, 1.0]])
    z = rng.multivariate_normal(np.zeros(3), r, size=3000)
    got = step_correlation(stats.norm.cdf(z))
    np.testing.assert_allclose(got, r, atol=0.04)  # shrunk by 3 / 3000 towards I
    assert step_correlation(stats.norm.cdf(z[:MIN_ORIGINS - 1])) is None  # too few origins
    assert step_correlation(stats.norm.cdf(z[:, :1])) is None  # one step
    pit = stats.norm.cdf(z[:30])
    pit[0, 1] = np.nan  # an incomplete row is left out
    assert step_correlation(pit).shape == (3, 3)


def test_paths_have_the_marginals_and_the_copula():
    dist = db.Predictive.from_params("gamma", concentration=np.tile([2.0, 5.0, 9.0], 2),
                                     rate=np.tile([1.0, 0.5, 0.2], 2))  # 2 contexts x 3
    r = np.array([[1.0, 0.9, 0.7], [0.9, 1.0, 0.9], [0.7, 0.9, 1.0]])
    paths = copula_paths(dist, 2, 3, 20_000, r, np.random.default_rng(1))
    assert paths.shape == (2, 20_000, 3)
    levels = [0.05, 0.5, 0.95]
    for c in range(2):
        for h in range(3):
            np.testing.assert_allclose(np.quantile(paths[c, :, h], levels),
                                       dist.quantile(levels)[c * 3 + h], rtol=0.03)
    rho = stats.spearmanr(paths[0]).statistic
    expected = 6 / np.pi * np.arcsin(r / 2)  # Spearman's rho of a Gaussian copula
    np.testing.assert_allclose(rho, expected, atol=0.02)
    independent = copula_paths(dist, 2, 3, 20_000, None, np.random.default_rng(1))
    assert np.abs(stats.spearmanr(independent[0]).statistic - np.eye(3)).max() < 0.03


@pytest.fixture(scope="module")
def direct():
    rng = np.random.default_rng(2)
    e = np.zeros(700)
    for i in range(1, 700):  # a persistent AR(1): errors of neighbouring steps move together
        e[i] = 0.9 * e[i - 1] + rng.normal()
    y = pd.Series(e, index=pd.date_range("2020-01-01", periods=700, freq="D"))
    return Forecaster(horizon=4, lags=[1, 2], rolling=(), strategy="direct", calibrate=False,
                      n_estimators=60, early_stopping=False, date_features=None).fit(y)


def test_the_direct_strategy_has_joint_paths(direct):
    assert direct.copula_ is not None and direct.copula_.shape == (4, 4)
    assert direct.copula_[0, 1] > 0.5  # the AR(1)'s errors persist from step to step
    paths = direct.sample_paths(4000, random_state=0)
    assert paths.shape == (4000, 4)
    np.testing.assert_array_equal(paths, direct.sample_paths(4000, random_state=0))
    d = direct.predict_dist()
    for h in range(4):  # each step's draws follow the exact marginal
        ks = stats.kstest(paths[:, h], lambda x, h=h: d[h:h + 1].cdf(x[None, :])[0])
        assert ks.pvalue > 0.001
    assert stats.spearmanr(paths[:, 0], paths[:, 1]).statistic > 0.4
