"""Tests of distboost.boosting.threads: the thread count of a fit (issue 25, item 5).

No wall-clock times here: ``benchmarks/contention.py`` measures what the rule buys."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boosting_cases import engine, sine

import distboost as db
from distboost.boosting import fit_threads, num_threads
from distboost.boosting.lightgbm_backend import LightGBMBackend
from distboost.estimators import runs


def test_rule_one_thread_on_small_data_unless_n_jobs_says():
    assert num_threads(None, 442) == 1
    assert num_threads(None, 9_999) == 1
    assert num_threads(None, 10_000) is None
    assert num_threads(3, 50) == 3 and num_threads(2, 50_000) == 2


@pytest.fixture
def two_torch_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_fit_threads_sets_torch_and_restores_it(two_torch_threads):
    with fit_threads(None, 442):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    with fit_threads(None, 50_000):
        assert torch.get_num_threads() == 2
    with pytest.raises(RuntimeError, match="inside"):
        with fit_threads(None, 100):
            raise RuntimeError("inside")
    assert torch.get_num_threads() == 2


def test_lightgbm_bins_the_data_on_the_fit_s_threads():
    """The training and validation sets were binned on every core (no ``num_threads`` in
    the Dataset's parameters) although the trees used one."""
    X, _ = sine(300, 0)
    params = engine(n_estimators=5, learning_rate=0.1, num_leaves=4, random_state=0)
    backend = LightGBMBackend(params, np.zeros(2), X, None, X[:50])
    assert backend.train.params["num_threads"] == 1
    assert backend.booster.params["num_threads"] == 1


def test_a_small_fit_runs_torch_on_one_thread(monkeypatch, two_torch_threads):
    seen = []

    def recording(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return fit_boosting(*args, **kwargs)

    fit_boosting = runs.fit_boosting
    monkeypatch.setattr(runs, "fit_boosting", recording)
    X, y = sine(200, 1)
    model = db.DistributionalRegressor(n_estimators=3, early_stopping=False,
                                       linear_start=False)
    model.fit(X, y)
    model.set_params(n_jobs=2).fit(X, y)
    assert seen == [1, 2] and torch.get_num_threads() == 2


def _blas_threads() -> set[int]:
    from threadpoolctl import threadpool_info

    return {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}


def test_fit_threads_limits_the_blas_pool_and_restores_it():
    """The linear start's L-BFGS-B (SciPy) and NumPy's BLAS run on the fit's threads too."""
    from threadpoolctl import threadpool_limits

    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() != {2}:
            pytest.skip("this BLAS runs on one thread only")
        with fit_threads(None, 442):
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}
        with fit_threads(None, 50_000):
            assert _blas_threads() == {2}
        with fit_threads(3, 100):
            assert _blas_threads() == {3}
        assert _blas_threads() == {2}
