"""Explanation plots: the drawn data checked against the model (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import distboost as db  # noqa: E402
from distboost.plotting.explain import _swarm_offsets  # noqa: E402

RNG = np.random.default_rng(0)
X = pd.DataFrame({"a": RNG.uniform(-2, 2, 300), "b": RNG.uniform(-2, 2, 300),
                  "c": RNG.normal(size=300)})
Y = X["a"] + np.exp(0.5 * X["b"]) * RNG.normal(size=300)


@pytest.fixture(scope="module")
def model():
    return db.DistributionalRegressor(n_estimators=30, early_stopping=False,
                                      random_state=0).fit(X, Y)


def teardown_function():
    plt.close("all")


def test_importance_bars_are_each_parameters_share(model):
    ax = db.plot.importance(model)
    table = model.feature_importances()
    share = table.div(table.sum(axis=1), axis=0)
    bars = ax.patches
    assert len(bars) == 2 * 3
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = np.array([b.get_width() for b in bars]).reshape(2, 3)  # loc bars, then scale
    np.testing.assert_allclose(widths, share[labels].to_numpy())
    assert labels[-1] == share.sum().idxmax()  # most important on top
    assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel() == "feature"


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_dependence_is_the_mean_of_the_ice_lines(model):
    ax = db.plot.dependence(model, X, "b", param="scale", grid=10, n_ice=20)
    ice, pd_line = ax.lines[:20], ax.lines[20]
    xs = pd_line.get_xdata()
    np.testing.assert_allclose(xs, np.linspace(*np.quantile(X["b"], [0.02, 0.98]), 10))
    curves = np.array([line.get_ydata() for line in ice])
    np.testing.assert_allclose(pd_line.get_ydata(), curves.mean(axis=0))
    # An ICE line is the model's prediction for its row with b moved along the grid.
    rows = np.sort(np.random.default_rng(0).choice(300, 20, replace=False))
    probe = pd.concat([X.iloc[[rows[3]]]] * 10, ignore_index=True).assign(b=xs)
    np.testing.assert_allclose(curves[3], model.predict_params(probe)["scale"])
    assert ax.get_xlabel() == "b" and ax.get_ylabel() == "scale"
    ax = db.plot.dependence(model, X.to_numpy(), 0, param="loc", scale="raw", grid=5, n_ice=3)
    assert ax.get_ylabel() == "loc (link scale)" and ax.get_xlabel() == "x0"
    with pytest.raises(ValueError, match="Unknown parameter 'rate'"):
        db.plot.dependence(model, X, "b", param="rate")
    with pytest.raises(ValueError, match="feature 'z' is not a column of X"):
        db.plot.dependence(model, X, "z")


def test_shap_summary_draws_every_rows_value(model):
    e = model.explain(X)
    ax = db.plot.shap_summary(e, "scale", max_features=2)
    top = np.argsort(np.abs(e.values[:, 1]).mean(0))[::-1][:2]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [e.feature_names[j] for j in top[::-1]]
    points = [c.get_offsets() for c in ax.collections if len(c.get_offsets())]
    xs = np.concatenate([p[:, 0] for p in points])
    expected = np.concatenate([e.values[:, 1, j] for j in top[::-1]])
    np.testing.assert_allclose(np.sort(xs), np.sort(expected))
    ys = np.concatenate([p[:, 1] for p in points])
    assert ys.min() > -0.5 and ys.max() < 1.5
    assert "scale" in ax.get_title() and "SHAP" in ax.get_xlabel()


def test_swarm_offsets_spread_ties_symmetrically():
    off = _swarm_offsets(np.array([0.0, 0.0, 0.0, 1.0]), bins=4)
    np.testing.assert_allclose(np.sort(off[:3]), [-0.8 / 3, 0.0, 0.8 / 3])
    assert off[3] == 0.0
