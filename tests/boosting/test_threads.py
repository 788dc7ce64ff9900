"""Tests of distboost.boosting.threads: the thread count of a fit (issue 25, item 5; issue
51, item 1: above the single-thread bound, the cores other processes leave free).

No wall-clock times here: ``benchmarks/contention.py`` measures what the rule buys.  The run
queue is faked where a decision is tested (the real one depends on whatever else runs)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boosting_cases import engine, sine

import distboost as db
from distboost.boosting import fit_threads, num_threads, threads
from distboost.boosting.lightgbm_backend import LightGBMBackend
from distboost.estimators import runs


def test_rule_one_thread_on_small_data_unless_n_jobs_says():
    assert num_threads(None, 442) == 1
    assert num_threads(None, 9_999) == 1
    assert num_threads(None, 10_000) is None  # outside a fit: the libraries' defaults
    assert num_threads(3, 50) == 3 and num_threads(2, 50_000) == 2


@pytest.fixture
def free(monkeypatch):
    """Set the cores that other processes leave free (and two usable cores)."""
    monkeypatch.setattr(threads, "usable_cores", lambda: 2)

    def setting(cores):
        monkeypatch.setattr(threads, "free_cores", lambda: cores)

    return setting


@pytest.mark.parametrize(("cores", "expected"), [(2.0, 2), (1.6, 2), (1.0, 1), (0.3, 1),
                                                 (0.0, 1), (None, None)])
def test_a_large_fit_runs_on_the_cores_free(free, cores, expected):
    free(cores)
    with fit_threads(None, 50_000):
        assert num_threads(None, 50_000) == expected
        # one count for the whole fit, whatever rows a backend inside it trains on
        assert num_threads(None, 500) == expected and num_threads(3, 50_000) == 3
    assert num_threads(None, 50_000) is None and num_threads(None, 500) == 1


def test_a_fit_just_above_the_bound_runs_every_backend_on_its_count(free, monkeypatch):
    """Between 10,000 and ~11,100 rows torch ran on the fit's count (its rows above
    SINGLE_THREAD_ROWS) while LightGBM ran one thread (the held-out split's rows below it;
    issue 48)."""
    free(2.0)
    seen = []
    build = LightGBMBackend.__init__

    def recording(self, params, *args, **kwargs):
        build(self, params, *args, **kwargs)
        seen.append((self.booster.params["num_threads"], torch.get_num_threads()))

    monkeypatch.setattr(LightGBMBackend, "__init__", recording)
    X, y = sine(10_500, 3)
    model = db.DistributionalRegressor(n_estimators=3, random_state=0).fit(X, y)
    assert model.fit_plan_.threads == 2 and model.fit_plan_.training_rows < 10_000
    assert seen and all(pair == (2, 2) for pair in seen)


def test_n_jobs_and_small_data_do_not_count_the_free_cores(free, monkeypatch):
    free(0.0)
    monkeypatch.setattr(threads, "free_cores", lambda: pytest.fail("counted"))
    with fit_threads(2, 50_000):
        assert num_threads(None, 50_000) == 2
    with fit_threads(None, 500):
        assert num_threads(None, 50_000) == 1  # the fit's count


def _fake_proc(tmp_path, running: int, states: list[str]):
    (tmp_path / "loadavg").write_text(f"0.50 0.40 0.30 {running}/321 4321\n")
    tasks = tmp_path / "task"
    for i, state in enumerate(states):
        (tasks / str(100 + i)).mkdir(parents=True)
        (tasks / str(100 + i) / "stat").write_text(
            f"{100 + i} (python (x) y) {state} 1 2 3 4 5 6 7 8 9\n")
    return str(tmp_path / "loadavg"), str(tasks)


@pytest.mark.parametrize(("running", "states", "expected"), [
    (3, ["R", "S", "S"], 2),        # two other runnable threads (one of ours runs)
    (3, ["R", "R", "S"], 1),        # one of ours spins: one other
    (1, ["R", "S"], 0),             # a quiet machine
    (1, ["R", "R"], 0),             # never negative
])
def test_runnable_counts_the_other_processes_threads(tmp_path, running, states, expected):
    loadavg, tasks = _fake_proc(tmp_path, running, states)
    assert threads._runnable(loadavg, tasks) == expected


def test_free_cores_takes_the_median_snapshot_in_proportion_to_the_usable_cores(monkeypatch):
    counts = iter([9, 2, 2, 0, 2])  # one burst and one gap among five snapshots
    monkeypatch.setattr(threads, "_runnable", lambda: next(counts))
    monkeypatch.setattr(threads, "usable_cores", lambda: 4)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 4)
    assert threads.free_cores(pause=0.0) == 2.0
    counts = iter([8] * 5)  # a cpuset of 4 of 16 online cores: a quarter of the others
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 16)
    assert threads.free_cores(pause=0.0) == 2.0


def test_free_cores_is_none_without_a_run_queue(monkeypatch):
    def missing():
        raise FileNotFoundError("/proc/loadavg")

    monkeypatch.setattr(threads, "_runnable", missing)
    assert threads.free_cores(pause=0.0) is None


def test_the_run_queue_of_this_machine_reads():
    free = threads.free_cores(pause=0.0)
    assert free is None or 0.0 <= free <= threads.usable_cores()


@pytest.fixture
def two_torch_threads():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    yield
    torch.set_num_threads(before)


def test_fit_threads_sets_torch_and_restores_it(two_torch_threads, free):
    with fit_threads(None, 442):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == 2
    free(2.0)
    with fit_threads(None, 50_000):
        assert torch.get_num_threads() == 2
    free(0.5)
    with fit_threads(None, 50_000):
        assert torch.get_num_threads() == 1
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


def test_lightgbm_runs_a_large_fit_on_the_free_cores(free):
    """Beside busy processes LightGBM's threads spun through their time slices (issue 51:
    a 30,000-row fit 122 x its quiet time): the backend built inside a fit reads the
    fit's count."""
    X, _ = sine(12_000, 0)
    params = engine(n_estimators=5, learning_rate=0.1, num_leaves=4, random_state=0)
    free(0.0)
    with fit_threads(None, 12_000):
        backend = LightGBMBackend(params, np.zeros(2), X, None, X[:50])
    assert backend.train.params["num_threads"] == 1
    assert backend.booster.params["num_threads"] == 1


def test_a_large_fit_is_the_same_model_whatever_the_cores_free(free):
    X, y = sine(10_500, 3)
    kw = dict(n_estimators=8, subsample=0.8, colsample=1.0, random_state=0)
    free(0.0)
    one = db.DistributionalRegressor(**kw).fit(X, y).predict_params(X[:500])
    free(2.0)
    two = db.DistributionalRegressor(**kw).fit(X, y).predict_params(X[:500])
    np.testing.assert_array_equal(one.to_numpy(), two.to_numpy())


def test_fit_threads_limits_the_blas_pool_and_restores_it(free):
    """The linear start's L-BFGS-B (SciPy) and NumPy's BLAS run on the fit's threads too."""
    from threadpoolctl import threadpool_limits

    np.ones((2, 2)) @ np.ones((2, 2))  # BLAS loaded
    with threadpool_limits(limits=2, user_api="blas"):
        if _blas_threads() != {2}:
            pytest.skip("this BLAS runs on one thread only")
        with fit_threads(None, 442):
            assert _blas_threads() == {1}
        assert _blas_threads() == {2}
        free(2.0)
        with fit_threads(None, 50_000):
            assert _blas_threads() == {2}
        free(0.0)
        with fit_threads(None, 50_000):
            assert _blas_threads() == {1}
        with fit_threads(3, 100):
            assert _blas_threads() == {3}
        assert _blas_threads() == {2}
