"""Plots: drawn data checked against the predictions (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import distboost as db  # noqa: E402


@pytest.fixture
def normal():
    rng = np.random.default_rng(0)
    loc = rng.normal(size=200)
    d = db.Predictive.from_params("normal", loc=loc, scale=np.full(200, 1.0))
    return d, loc + rng.normal(size=200), rng.uniform(0, 10, 200)


def teardown_function():
    plt.close("all")


def test_interval_band_edges_are_the_predicted_quantiles(normal):
    d, y, x = normal
    ax = db.plot.intervals(d, x, y, levels=(0.5, 0.9))
    order = np.argsort(x, kind="stable")
    bands = ax.collections[:2]  # fill_between polygons, widest first
    lo90, hi90 = d.interval(0.9)[order].T
    verts = bands[0].get_paths()[0].vertices
    np.testing.assert_allclose(np.sort(verts[:, 1].min(keepdims=True)), lo90.min(), rtol=1e-12)
    np.testing.assert_allclose(verts[:, 1].max(), hi90.max(), rtol=1e-12)
    median_line = ax.lines[0]
    np.testing.assert_allclose(median_line.get_ydata(), d.median[order])
    np.testing.assert_allclose(ax.collections[-1].get_offsets()[:, 1], y[order])


def test_fan_chart_draws_nine_bands(normal):
    d, _, _ = normal
    ax = db.plot.intervals(d, fan=True)
    assert len(ax.collections) == 9


def test_pit_histogram_heights(normal):
    d, y, _ = normal
    ax = db.plot.pit_histogram(d, y, bins=10)
    heights = np.array([p.get_height() for p in ax.containers[0]])
    want, _ = np.histogram(d.pit(y), bins=10, range=(0, 1), density=True)
    np.testing.assert_allclose(heights, want)


def test_calibration_points(normal):
    d, y, _ = normal
    ax = db.plot.calibration(d, y, levels=[0.1, 0.5, 0.9])
    line = ax.lines[1]
    want = (y[:, None] <= d.quantile([0.1, 0.5, 0.9])).mean(axis=0)
    np.testing.assert_allclose(line.get_ydata(), want)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [0, 1])


@pytest.fixture
def poisson_truth():
    rng = np.random.default_rng(0)
    d = db.Predictive.from_params("poisson", rate=rng.uniform(0.2, 8.0, 20_000))
    return d, d.sample(1, random_state=1)[0]


def test_calibration_of_a_count_model_uses_the_non_randomised_pit(poisson_truth):
    d, y = poisson_truth
    levels = np.arange(0.05, 0.951, 0.05)
    ax = db.plot.calibration(d, y)
    observed = ax.lines[1].get_ydata()
    np.testing.assert_allclose(observed, db.metrics.pit_cdf(d, y, levels))
    # The true model lies on the diagonal (y <= quantile would be up to 0.2 above it).
    assert np.abs(observed - levels).max() < 0.02


def test_pit_histogram_of_a_count_model(poisson_truth):
    d, y = poisson_truth
    ax = db.plot.pit_histogram(d, y, bins=10)
    heights = np.array([p.get_height() for p in ax.containers[0]])
    edges = np.linspace(0, 1, 11)
    np.testing.assert_allclose(heights, np.diff(db.metrics.pit_cdf(d, y, edges)) * 10)
    assert np.abs(heights - 1.0).max() < 0.06  # flat for the true model
    # With a seed: the histogram of one randomised PIT.
    ax = db.plot.pit_histogram(d, y, bins=10, random_state=3)
    drawn = np.array([p.get_height() for p in ax.containers[0]])
    want, _ = np.histogram(d.pit(y, random_state=3), bins=10, range=(0, 1), density=True)
    np.testing.assert_allclose(drawn, want)


def test_compare_bars():
    table = pd.DataFrame({"family": ["a", "b", "c"], "nll_mean": [2.0, 1.0, np.nan],
                          "nll_std": [0.1, 0.2, np.nan]})
    ax = db.plot.compare(table)
    widths = [p.get_width() for p in ax.patches]
    assert widths == [1.0, 2.0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "a"]


def test_density_and_survival_curve():
    d = db.Predictive.from_params("gamma", concentration=[2.0, 5.0], rate=[1.0, 2.0])
    ax = db.plot.density(d, 1, y=[1.0, 2.5])
    x, f = ax.lines[0].get_data()
    np.testing.assert_allclose(f, d[1].pdf(x[None, :])[0])
    assert ax.lines[-1].get_xdata()[0] == 2.5
    fam = db.families.get("censored_weibull")
    s = db.Predictive(fam, {"scale": [2.0], "concentration": [1.5]})
    ax = db.plot.density(s, 0)
    x, surv = ax.lines[0].get_data()
    np.testing.assert_allclose(surv, s.sf(x[None, :])[0])
    assert ax.get_ylabel() == "survival probability"


def test_accepts_an_existing_axes(normal):
    d, y, _ = normal
    fig, ax = plt.subplots()
    assert db.plot.calibration(d, y, ax=ax) is ax


def test_coefficients_bar_heights_are_the_model_coefficients():
    from distboost.varying import VaryingCoefficientRegressor

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.uniform(-2, 2, 200)})
    y = X["a"] * np.sign(X["b"]) + rng.normal(size=200) * 0.3
    model = VaryingCoefficientRegressor(n_estimators=20, random_state=0).fit(X, y)
    ax = db.plot.coefficients(model, X, rows=[3, 7, 11])
    want = model.coefficients(X).iloc[[3, 7, 11]]
    assert len(ax.containers) == 3
    for k, bars in enumerate(ax.containers):
        np.testing.assert_allclose([b.get_height() for b in bars], want.iloc[k].to_numpy())
    assert [t.get_text() for t in ax.get_xticklabels()] == ["intercept", "a", "b"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["row 3", "row 7", "row 11"]
    with pytest.raises(ValueError, match=r"rows \[500\] are outside the 200 rows"):
        db.plot.coefficients(model, X, rows=[0, 500])
