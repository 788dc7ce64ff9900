"""Multivariate plots: the drawn regions hold their probability (checked with draws of the
predictive and matplotlib's Path), means, observations, labels and errors (Agg backend)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.path import Path  # noqa: E402

import distboost as db  # noqa: E402

RNG = np.random.default_rng(0)
N = 40
LOC = RNG.normal(size=(N, 3))
A = RNG.normal(size=(N, 3, 3)) / 2
TRIL = np.linalg.cholesky(A @ np.swapaxes(A, 1, 2) + 0.2 * np.eye(3))
MVN = db.Predictive.from_params("multivariate_normal", loc=LOC, scale_tril=TRIL)
ALPHA = RNG.uniform(2.0, 8.0, size=(N, 4))
DIR = db.Predictive.from_params("dirichlet", concentration=ALPHA)


def teardown_function():
    plt.close("all")


def _regions(ax, row, level):
    lines = [ln for ln in ax.lines if ln.get_gid() == f"region row={row} level={level:g}"]
    assert lines, [ln.get_gid() for ln in ax.lines]
    return lines


def _share_inside(lines, points):
    inside = np.zeros(len(points), dtype=bool)
    for ln in lines:
        xy = ln.get_xydata()
        assert np.allclose(xy[0], xy[-1]), "a region boundary is a closed curve"
        inside |= Path(xy).contains_points(points)
    return inside.mean()


@pytest.mark.parametrize(("dist", "dims"), [(MVN, (0, 2)), (DIR, (1, 3))])
def test_regions_hold_their_probability(dist, dims):
    rows, levels, m = [3, 17], (0.5, 0.9), 4000
    ax = db.plot.ellipses(dist, rows=rows, dims=dims, levels=levels)
    draws = dist.sample(m, random_state=1)[:, :, list(dims)]
    for r in rows:
        for q in levels:
            share = _share_inside(_regions(ax, r, q), draws[:, r])
            # binomial error of the share, plus the region's own error (grid, and for the
            # Dirichlet its level set taken from 20,000 draws)
            tol = 4 * np.sqrt(q * (1 - q) / m) + (0.01 if dist is DIR else 0.002)
            assert abs(share - q) < tol, (r, q, share)
        mean = [ln for ln in ax.lines if ln.get_gid() == f"mean row={r}"][0]
        np.testing.assert_allclose(mean.get_xydata()[0], dist.mean[r, list(dims)])


def test_gaussian_ellipse_geometry():
    ax = db.plot.ellipses(MVN, rows=[5], dims=(1, 0), levels=[0.9])
    xy = _regions(ax, 5, 0.9)[0].get_xydata()
    mu, cov = MVN.mean[5, [1, 0]], MVN.covariance[5][np.ix_([1, 0], [1, 0])]
    z = xy - mu
    maha = np.einsum("ki,ij,kj->k", z, np.linalg.inv(cov), z)
    np.testing.assert_allclose(maha, -2 * np.log(0.1), rtol=1e-10)  # chi2_2(0.9)


def test_observations_labels_and_titles():
    cols = ["north", "east", "up"]
    y = pd.DataFrame(MVN.sample(1, random_state=2)[0], columns=cols)
    ax = db.plot.ellipses(MVN, y=y, dims=("east", "up"))
    default_rows = [0, 10, 20, 29, 39]
    for r in default_rows:
        cross = [ln for ln in ax.lines if ln.get_gid() == f"observation row={r}"][0]
        np.testing.assert_allclose(cross.get_xydata()[0], y.iloc[r, [1, 2]])
        mean = [ln for ln in ax.lines if ln.get_gid() == f"mean row={r}"][0]
        assert cross.get_color() == mean.get_color() == _regions(ax, r, 0.5)[0].get_color()
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("east", "up")
    assert ax.get_title() == "multivariate_normal: 50%, 90% central ellipses of (east, up)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"row {r}" for r in default_rows] + ["50% region", "90% region",
                                                           "observed"]
    ax = db.plot.ellipses(DIR, rows=[1], labels=["site A"])
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("y[0]", "y[1]")
    assert ax.get_title().startswith("dirichlet: 50%, 90% highest-density regions")
    assert ax.get_legend().get_texts()[0].get_text() == "site A"
    # a Predictive with an index labels its rows by it
    indexed = db.Predictive("multivariate_normal", MVN.params, index=[f"p{k}" for k in range(N)])
    ax = db.plot.ellipses(indexed, rows=[2])
    assert ax.get_legend().get_texts()[0].get_text() == "row p2"


def test_two_part_dirichlet_draws_the_margin_interval_on_the_line():
    d = db.Predictive.from_params("dirichlet", concentration=[[2.0, 5.0], [3.0, 3.0]])
    ax = db.plot.ellipses(d, rows=[0], levels=[0.8])
    xy = _regions(ax, 0, 0.8)[0].get_xydata()
    np.testing.assert_allclose(xy[:, 0], d[0].marginal(0).interval(0.8)[0])
    np.testing.assert_allclose(xy.sum(axis=1), 1.0)


def test_correlation_against_a_feature():
    x = pd.Series(RNG.uniform(-1, 1, N), name="temperature")
    ax = db.plot.correlation(MVN, x, dims=(0, 2), truth=lambda v: np.tanh(v))
    pred, true = ax.lines[0], ax.lines[1]
    order = np.argsort(x.to_numpy())
    np.testing.assert_allclose(pred.get_xdata(), x.to_numpy()[order])
    np.testing.assert_allclose(pred.get_ydata(), MVN.correlation[order, 0, 2])
    np.testing.assert_allclose(true.get_ydata(), np.tanh(x.to_numpy()[order]))
    assert ax.get_xlabel() == "temperature" and ax.get_ylabel() == "correlation of y[0] and y[2]"
    assert ax.get_title() == "Predicted correlation (multivariate_normal)"
    ax = db.plot.correlation(DIR, x.to_numpy())
    assert ax.get_xlabel() == "x" and (np.asarray(ax.lines[0].get_ydata()) < 0).all()


def test_errors():
    uni = db.Predictive.from_params("normal", loc=np.zeros(3), scale=1.0)
    with pytest.raises(ValueError, match=r"plot.ellipses draws multivariate predictive "
                                         r"distributions; family 'normal' is univariate"):
        db.plot.ellipses(uni)
    with pytest.raises(ValueError, match=r"plot.correlation draws multivariate"):
        db.plot.correlation(uni, np.arange(3.0))
    with pytest.raises(ValueError, match=r"dims \(0, 3\) are not two of the 3 parts "
                                         r"\(positions 0 .. 2"):
        db.plot.ellipses(MVN, dims=(0, 3))
    with pytest.raises(ValueError, match=r"dims names the part 'z'"):
        db.plot.correlation(MVN, np.arange(N), dims=("y0", "z"))
    with pytest.raises(ValueError, match=r"dims must be two different parts"):
        db.plot.ellipses(MVN, dims=(1, 1))
    with pytest.raises(ValueError, match=r"rows \[40\] are outside the 40 rows"):
        db.plot.ellipses(MVN, rows=[40])
    with pytest.raises(ValueError, match=r"levels must lie in \(0, 1\)"):
        db.plot.ellipses(MVN, levels=[0.5, 1.0])
    with pytest.raises(ValueError, match=r"y has shape \(40, 2\); expected \(40, 3\)"):
        db.plot.ellipses(MVN, y=LOC[:, :2])
    with pytest.raises(ValueError, match=r"x has shape \(3,\); expected \(40,\)"):
        db.plot.correlation(MVN, np.arange(3.0))
