"""``DistributionalRegressor`` on vector targets (``multivariate_normal``, ``dirichlet``):
what the joint model gains over independent margins, calibration on small data, the edges
(30 rows, an offset of 1e9, a NaN category at predict time, a grid-search fold), saving,
cloning and the shapes of every prediction."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV

import distboost as db

R = db.DistributionalRegressor


def correlated(n, seed):
    """Two parts whose correlation tanh(2 a) follows a feature; means follow b and c."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 3)), columns=["a", "b", "c"])
    X["site"] = pd.Categorical(rng.choice(["u", "v", "w"], size=n))
    rho = np.tanh(2 * X["a"].to_numpy())
    z1 = rng.normal(size=n)
    z2 = rho * z1 + np.sqrt(1 - rho ** 2) * rng.normal(size=n)
    Y = pd.DataFrame({"load1": X["b"] + z1, "load2": 2 * X["c"] + 0.5 * z2})
    return X, Y, rho


#: One run of 150 rounds on every row, for the joint model and the independent Normals alike
#: (the comparison is not about the default rounds; the small-data defaults are tested below).
ONE_RUN = {"early_stopping": False, "n_estimators": 150, "random_state": 0}


@pytest.fixture(scope="module")
def fitted():
    X, Y, _ = correlated(1500, seed=0)
    return R(family="multivariate_normal", **ONE_RUN).fit(X, Y)


def test_the_joint_model_beats_independent_normals_and_finds_the_correlation(fitted):
    # Data seeds 0-4 (test rows 1, 1001-1004): a gain of 0.28-0.32 nats, a mean error of the
    # correlation of 0.10-0.11 and a correlation with the truth of 0.98.
    X, Y, _ = correlated(1500, seed=0)
    Xt, Yt, rho = correlated(3000, seed=1)
    joint = fitted.score(Xt, Yt)
    independent = sum(R(**ONE_RUN).fit(X, Y[c]).score(Xt, Yt[c]) for c in Y)
    assert joint > independent + 0.1  # nats per row
    corr = fitted.predict_dist(Xt).correlation[:, 0, 1]
    assert np.mean(np.abs(corr - rho)) < 0.2
    assert np.corrcoef(corr, rho)[0, 1] > 0.9


def test_predictions_have_vector_shapes_and_names(fitted):
    Xt, Yt, _ = correlated(5, seed=2)
    assert fitted.family_.parts == ["load1", "load2"]
    assert fitted.predict(Xt).shape == (5, 2)
    params = fitted.predict_params(Xt)
    assert list(params.columns) == ["loc_0", "loc_1", "scale_tril_0_0", "scale_tril_1_0",
                                    "scale_tril_1_1"]
    iv = fitted.predict_interval(Xt, 0.8)
    assert list(iv.columns) == ["load1_lower", "load1_upper", "load2_lower", "load2_upper"]
    np.testing.assert_allclose(iv.to_numpy().reshape(5, 2, 2),
                               fitted.predict_dist(Xt).interval(0.8))
    e = fitted.explain(Xt)
    assert e.values.shape == (5, 5, 4)
    np.testing.assert_allclose(e.base_values + e.values.sum(-1), fitted.predict_raw(Xt),
                               atol=1e-6)


def test_small_data_is_calibrated(tmp_path):
    """On 200 rows the dispersion calibration (one shift of the Cholesky log-diagonal) keeps
    the squared Mahalanobis distance of new rows near its expectation d = 2; the shift and
    the linear start are saved and loaded with the model."""
    Xt, Yt, _ = correlated(4000, seed=3)
    values = []
    for seed in range(2):
        X, Y, _ = correlated(200, seed=10 + seed)
        model = R(family="multivariate_normal", random_state=0).fit(X, Y)
        dist = model.predict_dist(Xt)
        z = np.linalg.solve(dist.params["scale_tril"], (Yt.to_numpy() - dist.mean)[..., None])
        values.append(float((z[..., 0] ** 2).sum(1).mean()))
    assert 1.6 < np.mean(values) < 2.5, values
    # The defaults' fit saved and loaded (the shared fixture, one run, has no shift).
    assert model.dispersion_shift_ != 0.0 and model.linear_start_ is not None
    model.save(tmp_path / "model")
    np.testing.assert_array_equal(db.load(tmp_path / "model").predict_dist(Xt).covariance,
                                  dist.covariance)


def test_edges_thirty_rows_offset_and_nan_category(fitted):
    X, Y, _ = correlated(30, seed=4)
    Xt, Yt, _ = correlated(2000, seed=5)
    small = R(family="multivariate_normal", random_state=0).fit(X, Y)
    marginal = db.Predictive(small.family_, {k: np.full(len(Xt), v)
                                             for k, v in small.init_params_.items()})
    assert small.score(Xt, Yt) > np.mean(marginal.log_prob(Yt.to_numpy())) - 0.1
    # The offset leaves the fit unchanged to rounding at any size: 150 rows, 10 rounds.
    X, Y, _ = correlated(150, seed=6)
    options = {"family": "multivariate_normal", "early_stopping": False, "n_estimators": 10,
               "random_state": 0}
    centred = R(**options).fit(X, Y)
    offset = R(**options).fit(X, Y + 1e9)
    assert offset.score(Xt, Yt + 1e9) == pytest.approx(centred.score(Xt, Yt), abs=1e-5)
    Xn = Xt.head(4).copy()
    Xn.loc[[0, 1], "site"] = np.nan
    assert np.isfinite(fitted.predict_dist(Xn).covariance).all()


def test_validation_rows_of_another_shape_are_named():
    X, Y, _ = correlated(40, seed=11)
    with pytest.raises(ValueError, match=r"y of eval_set: Family 'multivariate_normal' models a "
                                         r"vector target: y must have shape \(n, d\)"):
        R(family="multivariate_normal").fit(X, Y, eval_set=[(X, Y["load1"])])


def test_grid_search_folds_saving_and_cloning(tmp_path, fitted):
    X, Y, _ = correlated(300, seed=7)
    search = GridSearchCV(R(family="multivariate_normal", early_stopping=False,
                            n_estimators=20, random_state=0),
                          {"num_leaves": [4, 8]}, cv=2).fit(X, Y)
    assert np.isfinite(search.best_score_)
    path = tmp_path / "model"
    fitted.save(path)
    back = db.load(path)
    Xt, Yt, _ = correlated(50, seed=8)
    np.testing.assert_array_equal(back.predict_dist(Xt).covariance,
                                  fitted.predict_dist(Xt).covariance)
    assert back.family_.parts == ["load1", "load2"]
    family = db.families.get("multivariate_normal")
    model = R(family=family, n_estimators=3, early_stopping=False)
    clone(model).fit(X, Y)
    model.fit(X, Y.to_numpy())
    assert family.dim is None  # the user's placeholder is never filled in


def test_dirichlet_fits_compositions_better_than_its_marginal():
    rng = np.random.default_rng(9)
    n = 1200
    X = rng.uniform(-1, 1, size=(n, 3))
    alpha = np.exp(np.c_[1.0 + X[:, 0], 0.5 - X[:, 0], 0.8 + 0.5 * X[:, 1]])
    Y = np.stack([rng.dirichlet(a) for a in alpha])
    # Early-stopped on a held-out split (one run): at 800 rows the default, cross-validation,
    # chooses the linear start and keeps one round; here the trees must do the learning
    # (+0.5 to +0.6 nats over the marginal on data seeds 9 to 49).
    model = R(family="dirichlet", early_stopping="holdout", random_state=0).fit(X[:800],
                                                                               Y[:800])
    dist = model.predict_dist(X[800:])
    assert type(dist) is db.MultivariatePredictive
    np.testing.assert_allclose(dist.mean.sum(1), 1.0)
    marginal = db.Predictive(model.family_, {k: np.full(400, v)
                                             for k, v in model.init_params_.items()})
    assert model.score(X[800:], Y[800:]) > np.mean(marginal.log_prob(Y[800:])) + 0.2
