"""Checks of benchmarks/forecasting.py against independent references: its quantile CRPS is
scoringrules' ``crps_quantile``, the true law of its hourly simulation matches Monte Carlo
continuations, the seasonal naive Gaussian follows its definition.  (The whole benchmark
needs the peers of the ``bench`` extra and minutes: it is not run here.)"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "forecasting.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_forecasting", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def test_quantile_crps_is_scoringrules(bench, sr):
    rng = np.random.default_rng(0)
    q = np.sort(rng.normal(size=(50, 19)), axis=1)
    y = rng.normal(size=50)
    np.testing.assert_allclose(bench.quantile_crps(y, q),
                               sr.crps_quantile(y, q, bench.LEVELS), rtol=1e-12)


def test_hourly_truth_matches_monte_carlo(bench):
    d = bench.hourly_simulation(200, seed=3)
    o, H, m = 150, 24, 40_000
    mean_t, sd_t = d.truth(o, H)
    # continue the simulation from its state at o - 1 with fresh innovations
    hour = d.y.index.hour.to_numpy()
    cycle = 10 + 3 * np.sin(2 * np.pi * (hour - 6) / 24)
    sd = 0.5 + 0.4 * (1 + np.sin(2 * np.pi * hour / 24))
    e = np.full(m, d.y.to_numpy()[o - 1] - cycle[o - 1])
    rng = np.random.default_rng(1)
    draws = np.empty((m, H))
    for h in range(H):  # the simulator's recursion, independently written
        e = 0.8 * e + rng.normal(size=m) * sd[o + h]
        draws[:, h] = cycle[o + h] + e
    np.testing.assert_allclose(draws.mean(0), mean_t, atol=5 * sd_t.max() / np.sqrt(m))
    np.testing.assert_allclose(draws.std(0), sd_t, rtol=0.02)


def test_seasonal_naive_follows_its_definition(bench, sr):
    d = bench.daily_counts(200)
    d.origins = 2
    orig = bench.origin_positions(d)
    assert list(orig) == [200 - 14 - 7, 200 - 14]
    res, _, _ = bench.seasonal_naive(d, orig)
    y = d.y.to_numpy()
    sigma = np.std(y[7:orig[0]] - y[:orig[0] - 7], ddof=1)
    k = np.ceil(np.arange(1, 15) / 7).astype(int)
    loc = np.concatenate([y[o - 1 + np.arange(1, 15) - 7 * k] for o in orig])
    truth = np.concatenate([y[o:o + 14] for o in orig])
    expected = sr.crps_normal(truth, loc, sigma * np.sqrt(np.tile(k, 2))).mean()
    assert res["crps"] == pytest.approx(expected, rel=1e-10)
