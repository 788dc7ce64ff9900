"""db.plot.epistemic: the drawn curves checked against predict_uncertainty (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import distboost as db  # noqa: E402

RNG = np.random.default_rng(0)
# Few training rows where x0 lies in [0, 2] (3 %), none beyond 3: the folds disagree there.
X0 = np.r_[RNG.uniform(-3, 0, 280), RNG.uniform(0, 2, 9), RNG.uniform(2, 3, 11)]
X = pd.DataFrame({"x0": X0, "x1": RNG.normal(size=300)})
Y = np.sin(2 * X0) + 0.3 * RNG.normal(size=300)


@pytest.fixture(scope="module")
def model():
    return db.DistributionalRegressor(random_state=0).fit(X, Y)  # folds: 300 rows


def teardown_function():
    plt.close("all")


def test_curves_are_the_members_mean_variances_over_a_grid_past_the_data(model):
    ax = db.plot.epistemic(model, X, "x0", grid=7, n_rows=20)
    epi, ale = ax.get_lines()[:2]
    xs = epi.get_xdata()
    lo, hi = X0.min(), X0.max()
    pad = 0.1 * (hi - lo)
    np.testing.assert_allclose(xs, np.linspace(lo - pad, hi + pad, 7))
    rows = np.sort(np.random.default_rng(0).choice(300, 20, replace=False))
    for i in (0, 3, 6):  # by hand at three grid points
        Xi = X.iloc[rows].copy()
        Xi["x0"] = xs[i]
        u = model.predict_uncertainty(Xi)
        assert epi.get_ydata()[i] == pytest.approx(np.sqrt(u["epistemic"].mean()), rel=1e-9)
        assert ale.get_ydata()[i] == pytest.approx(np.sqrt(u["aleatoric"].mean()), rel=1e-9)
    counts = [p.get_height() for p in ax.twin.patches]
    assert len(counts) == 30 and sum(counts) == 300  # the training rows' histogram


def test_the_histogram_is_of_the_training_rows_and_bad_features_are_named(model):
    new = X.iloc[:40].assign(x0=np.linspace(-6, 6, 40))
    ax = db.plot.epistemic(model, new, "x0", X_train=X, grid=5, n_rows=10, bins=12)
    assert sum(p.get_height() for p in ax.twin.patches) == 300
    assert ax.get_lines()[0].get_xdata()[0] == pytest.approx(-6 - 1.2)  # new rows' range
    with pytest.raises(ValueError, match="feature 'z' is not a column of X"):
        db.plot.epistemic(model, X, "z")
    with pytest.raises(ValueError, match="epistemic\\(\\) needs a numeric feature; 'g'"):
        db.plot.epistemic(model, X.assign(g=pd.Categorical(["a"] * 300)), "g")
