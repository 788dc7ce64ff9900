"""distboost.forecasting.forecasts: the paths behind a recursive ``predict_dist`` are kept for
a ``sample_paths`` call that would draw the same ones, and for no other."""

from __future__ import annotations

import pickle

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
