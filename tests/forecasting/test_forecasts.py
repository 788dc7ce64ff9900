"""distboost.forecasting.forecasts: the paths behind a recursive ``predict_dist`` are kept for
a ``sample_paths`` call that would draw the same ones, and for no other."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest

from distboost.forecasting import Forecaster, forecasts

RNG = np.random.default_rng(3)
Y = {"a": pd.Series(np.cumsum(RNG.normal(size=120)) + 20.0),
     "b": pd.Series(np.cumsum(RNG.normal(size=120)) + 50.0)}


@pytest.fixture(scope="module")
def fitted():
    return Forecaster(horizon=4, lags=[1, 2], rolling=(), strategy="recursive", n_paths=40,
                      n_estimators=20, early_stopping=False, calibrate=False).fit(Y)


def _fresh(fc, n, seed, **kw):
    """Paths drawn with nothing kept."""
    fc.__dict__.pop("_paths_memo_", None)
    return fc.sample_paths(n, random_state=seed, **kw)


def test_sample_paths_after_predict_dist_are_the_same_paths(fitted, monkeypatch):
    expected = _fresh(fitted, 40, 0)
    fitted.predict_dist()
    calls = []
    monkeypatch.setattr(forecasts, "simulate", lambda *a, **k: calls.append(1))
    kept = fitted.sample_paths(40)  # same histories, n_paths and seed: no new simulation
    assert not calls
    np.testing.assert_array_equal(kept, expected)
    kept[:] = 0.0  # a copy: the kept paths are not the caller's
    np.testing.assert_array_equal(fitted.sample_paths(40), expected)


@pytest.mark.parametrize("change", ["n_paths", "seed", "history"])
def test_other_paths_are_drawn_again(fitted, change):
    fitted.predict_dist()
    n, seed, hist = 40, 0, None
    if change == "n_paths":
        n = 41
    elif change == "seed":
        seed = 1
    else:
        hist = {k: v.iloc[:-1] for k, v in Y.items()}
    got = fitted.sample_paths(n, random_state=seed, y_hist=hist)
    np.testing.assert_array_equal(got, _fresh(fitted, n, seed, y_hist=hist))
    assert got.shape[0] == n


def test_kept_paths_are_not_pickled_and_go_with_a_refit(fitted):
    fitted.predict_dist()
    assert "_paths_memo_" in vars(fitted)
    assert "_paths_memo_" not in vars(pickle.loads(pickle.dumps(fitted)))
    refit = pickle.loads(pickle.dumps(fitted))
    refit.predict_dist()
    refit.fit(Y)
    assert "_paths_memo_" not in vars(refit)


def test_no_paths_are_kept_beyond_the_bound(fitted, monkeypatch):
    monkeypatch.setattr(forecasts, "MEMO_VALUES", 10)
    fitted.predict_dist()
    assert "_paths_memo_" not in vars(fitted)


def _heavy_series():
    rng = np.random.default_rng(0)
    t = np.arange(600)
    return pd.Series(10 + np.sin(t * 2 * np.pi / 12) + 0.1 * rng.standard_t(0.5, t.size))


@pytest.mark.filterwarnings("ignore:DistributionalRegressor.*kept 0 boosting rounds")
@pytest.mark.parametrize("strategy", ["direct", "recursive"])
def test_forecasts_of_a_law_without_a_mean_warn_with_its_df(strategy):
    """Student-t(0.5) noise fitted by a free Student-t: its df falls below 1, and the
    99.99 % quantile lies a million times beyond the series; a Normal of the same data
    stays within the envelope and does not warn."""
    y = _heavy_series()
    kw = dict(horizon=3, lags=[1, 2, 12], rolling=(), strategy=strategy, n_paths=50,
              calibrate=False, random_state=0)
    fc = Forecaster(family="studentt", **kw).fit(y)
    with pytest.warns(UserWarning, match=r"predict_quantiles: 1 of 6 values .* smallest df "
                                         r"is 0\.\d+: below 1"):
        q = fc.predict_quantiles([0.5, 0.9999])
    assert q["q0.9999"].max() > 1e3 * y.tail(12).abs().max()
    normal = Forecaster(family="normal", **kw).fit(y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        normal.predict_quantiles([0.5, 0.9999])
        normal.sample_paths(50)


def test_paths_that_are_not_finite_warn():
    """``warn_extreme`` on paths (C, P, H): a non-finite value is named, finite ones within
    1,000 times the history are not."""
    from distboost.forecasting.strategies import Contexts

    ctx = Contexts(series=np.arange(2), hist=np.array([[1.0, -2.0], [0.0, 0.0]]),
                   times=np.zeros((2, 3)), exog=None)
    ok = np.full((2, 4, 3), 1.5e3)  # within 1,000 x 2 for the first, 1,000 x 1 (floor) not
    with pytest.warns(UserWarning, match=r"12 of 24 values \(1 of 2 series\)"):
        forecasts.warn_extreme(ok, ctx, "sample_paths")
    ok[1] = 999.0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        forecasts.warn_extreme(ok, ctx, "sample_paths")
    gap = Contexts(series=np.arange(2), hist=np.array([[np.nan, np.nan], [np.nan, 2.0]]),
                   times=np.zeros((2, 3)), exog=None)
    with warnings.catch_warnings():  # a window of NaN alone takes the floor, silently
        warnings.simplefilter("error")
        forecasts.warn_extreme(np.full((2, 4, 3), 999.0), gap, "sample_paths")
    ok[0, 2, 1] = np.inf
    with pytest.warns(UserWarning, match=r"1 of 24 values .*\(largest 1\.5e\+03\)"):
        forecasts.warn_extreme(ok, ctx, "sample_paths")
