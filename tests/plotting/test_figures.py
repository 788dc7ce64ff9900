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


def test_compare_dots_best_first_on_an_axis_zoomed_to_the_values():
    table = pd.DataFrame({"family": ["a", "b", "c", "d"], "nll_mean": [5.43, 5.41, np.nan, 5.42],
                          "nll_std": [0.004, 0.002, np.nan, 0.003]})
    ax = db.plot.compare(table)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["b", "d", "a"]  # best first
    (line,) = [c for c in ax.containers][0].lines[:1]  # the errorbar's data line
    np.testing.assert_allclose(line.get_xdata(), [5.41, 5.42, 5.43])
    np.testing.assert_allclose(line.get_ydata(), [0, 1, 2])
    lo, hi = ax.get_xlim()
    assert 5.39 < lo < 5.408 and 5.434 < hi < 5.45  # zoomed: not from 0
    assert ax.get_ylim()[0] > ax.get_ylim()[1]  # first row on top
    assert ax.get_title() and ax.get_ylabel() == "family"
    # c_index: higher is better
    table = pd.DataFrame({"family": ["a", "b"], "c_index_mean": [0.6, 0.7],
                          "c_index_std": [0.01, 0.01]})
    ax = db.plot.compare(table, "c_index")
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
    from distboost.estimators.varying import VaryingCoefficientRegressor

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


def test_axis_labels_come_from_the_data_and_every_plot_has_a_title(normal):
    d, y, x = normal
    ax = db.plot.intervals(d, pd.Series(x, name="age"), pd.Series(y, name="income"))
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("age", "income") and ax.get_title()
    ax = db.plot.intervals(d, x, y)  # arrays: generic names, not the row index
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("x", "y")
    assert db.plot.intervals(d).get_xlabel() == "row"
    for ax in [db.plot.pit_histogram(d, y), db.plot.calibration(d, y),
               db.plot.density(d, 0, y), db.plot.fan(d)]:
        assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()


def test_pit_band_is_drawn_behind_the_bars(normal):
    d, y, _ = normal
    ax = db.plot.pit_histogram(d, y)
    bars = list(ax.containers[0])
    band = [p for p in ax.patches if p not in bars]
    assert len(band) == 1 and band[0].get_zorder() < min(b.get_zorder() for b in bars)


def test_fan_chart_bands_follow_the_index():
    rng = np.random.default_rng(1)
    index = pd.date_range("2024-01-01", periods=30, freq="D", name="date")
    loc = np.cumsum(rng.normal(size=30))
    d = db.Predictive("normal", {"loc": loc, "scale": np.linspace(0.5, 2.0, 30)}, index=index)
    ax = db.plot.fan(d, y=pd.Series(loc + rng.normal(size=30), name="sales"),
                     levels=(0.5, 0.9))
    assert len(ax.collections) == 2 and ax.get_xlabel() == "date"
    assert ax.get_ylabel() == "sales"
    widest = ax.collections[0].get_paths()[0].vertices[:, 1]
    lo, hi = d.interval(0.9).T
    np.testing.assert_allclose([widest.min(), widest.max()], [lo.min(), hi.max()])
    median = ax.lines[0]
    np.testing.assert_allclose(median.get_ydata(), d.median)
    assert np.asarray(median.get_xdata()).dtype.kind == "M"  # dates, in index order
    with pytest.raises(ValueError, match=r"x has shape \(3,\); expected \(30,\)"):
        db.plot.fan(d, x=[1, 2, 3])


@pytest.fixture
def weibull_survival():
    rng = np.random.default_rng(2)
    fam = db.families.get("censored_weibull")
    n = 400
    scale = rng.uniform(200, 900, n)
    d = db.Predictive(fam, {"scale": scale, "concentration": np.full(n, 1.4)},
                      index=[f"p{i}" for i in range(n)])
    t = scale * rng.weibull(1.4, n)
    c = rng.uniform(0, 1500, n)
    return d, db.censored.right(np.minimum(t, c), t <= c)


def test_survival_curves_are_the_predicted_survival_functions(weibull_survival):
    d, y = weibull_survival
    ax = db.plot.survival_curves(d, rows=[0, 5, 9], y=y[:, 0])
    assert len(ax.lines) == 3
    for line, r in zip(ax.lines, [0, 5, 9], strict=True):
        t, s = line.get_data()
        np.testing.assert_allclose(s, d[r].sf(t[None, :])[0])
    assert ax.get_xlim() == (0.0, float(y[:, 0].max()))  # the data's range
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["row p0", "row p5", "row p9"]
    assert ax.get_ylabel() == "survival probability S(t)" and ax.get_title()
    ax = db.plot.survival_curves(d, rows=[1], times=[10.0, 100.0, 1000.0])
    np.testing.assert_allclose(ax.lines[0].get_xdata(), [10.0, 100.0, 1000.0])
    with pytest.raises(ValueError, match=r"rows \[400\] are outside the 400 rows"):
        db.plot.survival_curves(d, rows=[400])


def test_d_calibration_histogram(weibull_survival):
    d, y = weibull_survival
    ax = db.plot.d_calibration(d, y, bins=5)
    heights = [p.get_height() for p in ax.containers[0]]
    res = db.metrics.d_calibration(d, y, bins=5)
    np.testing.assert_allclose(heights, res["histogram"])
    assert abs(sum(heights) - 1.0) < 1e-12
    assert f"p = {res['pvalue']:.3g}" in ax.get_title()
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [0.2, 0.2])
