"""The forecast figures: db.plot.fan of a forecast (Predictive or paths) after its history,
and db.plot.pit_by_horizon of a backtest."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import distboost as db  # noqa: E402

T = pd.date_range("2024-01-01", periods=48, freq="h")
HIST = pd.Series(np.sin(np.arange(48) / 4.0), index=T, name="load")
FUTURE = pd.date_range(T[-1], periods=7, freq="h")[1:]


def teardown_function():
    plt.close("all")


def test_fan_of_paths_continues_the_history_with_the_bands_of_the_draws():
    paths = np.random.default_rng(0).normal(size=(400, 6)).cumsum(axis=1)
    ax = db.plot.fan(paths, history=HIST, paths=5, y=np.zeros(6))
    bands = [c for c in ax.collections if c.get_label().endswith("interval")]
    assert [c.get_label() for c in bands] == ["95% interval", "80% interval", "50% interval"]
    vertices = bands[0].get_paths()[0].vertices  # the 95 % band of the draws at each step
    lo = np.quantile(paths, 0.025, axis=0, method="inverted_cdf")
    assert np.allclose(np.sort(vertices[:, 1])[:1], lo.min())
    x = matplotlib.dates.num2date(vertices[:, 0].min()).replace(tzinfo=None)
    assert pd.Timestamp(x) == FUTURE[0]  # placed after the history, at its frequency
    labels = [line.get_label() for line in ax.lines]
    assert labels.count("sample paths") == 1 and "load" in labels and "median" in labels
    assert ax.get_ylabel() == "load"


def test_fan_of_a_forecast_of_several_series_needs_the_series():
    idx = pd.MultiIndex.from_product([["a", "b"], FUTURE], names=["id", "time"])
    dist = db.Predictive("normal", {"loc": np.r_[np.zeros(6), np.ones(6) * 10], "scale": 1.0},
                         index=idx)
    with pytest.raises(ValueError, match="holds 2 series; choose one with series=<id>"):
        db.plot.fan(dist)
    ax = db.plot.fan(dist, series="b", history=HIST + 10)
    median = [line for line in ax.lines if line.get_label() == "median"][0]
    np.testing.assert_allclose(median.get_ydata(), 10.0)
    plain = db.plot.fan(db.Predictive("normal", {"loc": np.zeros(6), "scale": 1.0}))
    assert len(plain.collections) == 9  # a Predictive alone keeps the nine-band fan


def test_pit_by_horizon_is_the_histogram_of_each_step():
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"step": np.repeat([1, 2, 3], 500),
                          "pit": np.r_[rng.uniform(size=500), rng.beta(0.5, 0.5, 500),
                                       rng.beta(3, 3, 500)]})
    ax = db.plot.pit_by_horizon(table, bins=5)
    dens = ax.images[0].get_array()
    assert dens.shape == (5, 3)
    np.testing.assert_allclose(dens[:, 0], np.histogram(table["pit"][:500], 5, (0, 1))[0]
                               / 100, rtol=1e-12)
    assert dens[0, 1] > 1.3 and dens[2, 2] > 1.5  # U-shaped and hump-shaped columns
    with pytest.raises(ValueError, match="missing \\['pit'\\]"):
        db.plot.pit_by_horizon(table[["step"]])
