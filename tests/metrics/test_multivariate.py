"""Energy and variogram scores: scoringrules on the same draws, closed forms, the CRPS at
d = 1, the exact Normal variogram against sampling, propriety, reproducibility, the NLL of
(n, d) targets and the scorers."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import distboost as db
from distboost.metrics import multivariate as mv


def mvn(loc, cov):
    loc = np.asarray(loc, float)
    cov = np.broadcast_to(np.asarray(cov, float), (*loc.shape, loc.shape[1]))
    return db.Predictive.from_params("multivariate_normal", loc=loc,
                                     scale_tril=np.linalg.cholesky(cov))


def dirichlet(concentration):
    return db.Predictive.from_params("dirichlet", concentration=np.asarray(concentration, float))


def _cov(rho, d=2):
    return (1 - rho) * np.eye(d) + rho * np.ones((d, d))


RNG = np.random.default_rng(0)
ENS = RNG.normal(size=(40, 12, 3)) * [1.0, 2.0, 0.5] + [0.0, 1.0, -1.0]  # (m, n, d)
OBS = RNG.normal(size=(12, 3))


@pytest.mark.parametrize("estimator", mv.ES_ESTIMATORS)
def test_energy_score_of_an_ensemble_is_scoringrules(estimator, sr):
    want = sr.es_ensemble(OBS, np.moveaxis(ENS, 0, 1), estimator=estimator, backend="numpy")
    got = db.metrics.energy_score(ENS, OBS, estimator=estimator)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=0)


def test_energy_score_of_a_predictive_is_scoringrules_on_its_draws(sr):
    d = mvn(OBS, _cov(0.5, 3))
    draws = d.sample(300, random_state=4)
    for est in ("akr", "fair"):
        want = sr.es_ensemble(OBS, np.moveaxis(draws, 0, 1), estimator=est, backend="numpy")
        np.testing.assert_allclose(db.metrics.energy_score(
            d, OBS, n_samples=300, random_state=4, estimator=est), want, rtol=1e-10)
    # the default estimator is 'akr' for a Predictive, 'fair' for an ensemble array
    assert np.array_equal(db.metrics.energy_score(d, OBS, 300, 4),
                          db.metrics.energy_score(draws, OBS, estimator="akr"))
    assert np.array_equal(db.metrics.energy_score(draws, OBS),
                          db.metrics.energy_score(draws, OBS, estimator="fair"))


def test_blocks_of_rows_change_nothing(monkeypatch):
    whole = {e: db.metrics.energy_score(ENS, OBS, estimator=e) for e in mv.ES_ESTIMATORS}
    vs = db.metrics.variogram_score(ENS, OBS)
    monkeypatch.setattr(mv, "_SAMPLE_BUDGET", 3 * 40 * 5)  # blocks of 5 rows, then 3
    monkeypatch.setattr(mv, "_PAIR_BUDGET", 2 * 40 * 40)  # pairwise blocks of 2 rows
    for e in mv.ES_ESTIMATORS:
        np.testing.assert_allclose(db.metrics.energy_score(ENS, OBS, estimator=e), whole[e],
                                   rtol=1e-13)
    np.testing.assert_allclose(db.metrics.variogram_score(ENS, OBS), vs, rtol=1e-13)
    # a Predictive is sampled block by block from one seeded Generator: reproducible
    d = mvn(OBS, _cov(0.3, 3))
    a = db.metrics.energy_score(d, OBS, n_samples=40, random_state=1)
    np.testing.assert_array_equal(a, db.metrics.energy_score(d, OBS, 40, 1))
    assert np.isfinite(a).all()


def test_a_point_mass_scores_its_distance_and_an_offset_is_harmless(sr):
    x = np.broadcast_to(OBS[None] + 1.5, ENS.shape)
    dist_to_y = np.linalg.norm(x[0] - OBS, axis=1)
    for est in mv.ES_ESTIMATORS:
        np.testing.assert_allclose(db.metrics.energy_score(x, OBS, estimator=est), dist_to_y,
                                   rtol=1e-12)
    # ties (a discrete ensemble): the Gram-matrix distances are recomputed where they cancel
    ties = RNG.poisson(0.3, size=(60, 12, 3)) * np.array([1.0, 10.0, 100.0])
    want = sr.es_ensemble(OBS, np.moveaxis(ties, 0, 1), estimator="fair", backend="numpy")
    np.testing.assert_allclose(db.metrics.energy_score(ties, OBS, estimator="fair"), want,
                               rtol=1e-11)
    # a target offset by 1e9: the pairwise term works on centred draws
    off = db.metrics.energy_score(ENS + 1e9, OBS + 1e9, estimator="fair")
    np.testing.assert_allclose(off, db.metrics.energy_score(ENS, OBS, estimator="fair"),
                               atol=1e-5)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("estimator", mv.VS_ESTIMATORS)
def test_variogram_score_of_an_ensemble_is_scoringrules(p, estimator, sr):
    w = RNG.uniform(0, 1, size=(3, 3))
    w = w + w.T
    fct = np.moveaxis(ENS, 0, 1)
    want = sr.vs_ensemble(OBS, fct, w, p=p, estimator=estimator, backend="numpy")
    got = db.metrics.variogram_score(ENS, OBS, p=p, weights=w, estimator=estimator)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    per_row = np.broadcast_to(w, (12, 3, 3))
    np.testing.assert_allclose(db.metrics.variogram_score(ENS, OBS, p, per_row,
                                                          estimator=estimator), want, rtol=1e-10)


def test_energy_score_at_d1_is_the_crps_within_monte_carlo_error():
    # the multivariate Normal needs d >= 2: score draws of a univariate Normal as (m, n, 1)
    n = 300
    loc, scale = RNG.normal(size=n), RNG.uniform(0.5, 2.0, n)
    y = loc + scale * RNG.standard_t(5, size=n)
    draws = db.Predictive.from_params("normal", loc=loc, scale=scale).sample(20_000, 3)
    es = db.metrics.energy_score(draws[:, :, None], y[:, None], estimator="akr")
    diff = es - db.metrics.crps_normal(y, loc, scale)  # independent, unbiased row errors
    se = diff.std(ddof=1) / np.sqrt(n)
    assert abs(diff.mean()) < 4 * se, (diff.mean(), se)
    assert np.abs(diff).max() < 8 * diff.std()  # no row far off


def test_exact_normal_variogram_expectation_matches_sampling():
    loc = np.array([[0.0, 1.0, 3.0], [2.0, -1.0, 2.0]])
    cov = np.stack([_cov(0.6, 3) * [1.0, 2.0, 0.5], _cov(-0.4, 3)])
    cov = (cov + np.swapaxes(cov, 1, 2)) / 2 + 0.1 * np.eye(3)
    d = mvn(loc, cov)
    x = d.sample(200_000, random_state=0)
    for p in (0.5, 1.0, 1.7):
        g = np.abs(x[:, :, :, None] - x[:, :, None, :]) ** p
        exact = mv._variogram_normal(loc, d.covariance, p)
        se = g.std(axis=0) / np.sqrt(x.shape[0]) + 1e-300
        z = (g.mean(axis=0) - exact) / se
        off = ~np.eye(3, dtype=bool)[None].repeat(2, 0)
        assert np.abs(z[off]).max() < 4.5, (p, z)
        assert np.all(exact[:, range(3), range(3)] == 0)
    # a degenerate pair (X_i = X_j + c): |c|^p, no NaN from 0/0
    np.testing.assert_allclose(mv._abs_moment_normal(np.array([3.0, 0.0]), np.zeros(2), 0.5),
                               [np.sqrt(3.0), 0.0])


def test_a_predictive_offset_by_1e9_scores_the_same():
    loc = RNG.normal(size=(30, 3))
    d0, d9 = mvn(loc, _cov(0.5, 3)), mvn(loc + 1e9, _cov(0.5, 3))
    y = d0.sample(1, random_state=1)[0]
    for score in (db.metrics.energy_score, db.metrics.variogram_score, db.metrics.nll):
        np.testing.assert_allclose(score(d9, y + 1e9), score(d0, y), atol=1e-5)


def test_exact_variogram_score_agrees_with_the_fair_estimate():
    n = 400
    d = mvn(RNG.normal(size=(n, 3)), _cov(0.5, 3))
    y = d.sample(1, random_state=9)[0]
    exact = db.metrics.variogram_score(d, y)
    draws = db.metrics.variogram_score(d.sample(400, random_state=2), y)  # 'fair' on draws
    diff = draws - exact
    assert abs(diff.mean()) < 4 * diff.std(ddof=1) / np.sqrt(n)


def test_the_true_correlation_scores_lower():
    n = 1000
    loc = RNG.normal(size=(n, 2))
    truth, wrong = mvn(loc, _cov(0.8)), mvn(loc, _cov(-0.8))
    y = truth.sample(1, random_state=5)[0]
    for score in (lambda d: db.metrics.energy_score(d, y, n_samples=200),
                  lambda d: db.metrics.variogram_score(d, y)):
        gap = score(wrong) - score(truth)
        assert gap.mean() > 8 * gap.std(ddof=1) / np.sqrt(n), (gap.mean(), gap.std())


def test_random_state_reproduces_the_draws():
    d = mvn(OBS, _cov(0.2, 3))
    a = db.metrics.energy_score(d, OBS, n_samples=50, random_state=7)
    np.testing.assert_array_equal(a, db.metrics.energy_score(d, OBS, 50, 7))
    assert not np.array_equal(a, db.metrics.energy_score(d, OBS, 50, 8))
    g1, g2 = np.random.default_rng(1), np.random.default_rng(1)
    np.testing.assert_array_equal(db.metrics.energy_score(d, OBS, 50, g1),
                                  db.metrics.energy_score(d, OBS, 50, g2))
    dd = dirichlet(RNG.uniform(0.5, 3, size=(12, 3)))
    yy = dd.sample(1, random_state=0)[0]
    np.testing.assert_array_equal(db.metrics.variogram_score(dd, yy, random_state=3),
                                  db.metrics.variogram_score(dd, yy, random_state=3))


def test_dirichlet_scores(sr):
    n = 600
    alpha = np.exp(RNG.normal(size=(n, 3)))
    d = dirichlet(alpha)
    y = d.sample(1, random_state=11)[0]
    head, yh = d[np.arange(60)], y[:60]
    draws = np.moveaxis(head.sample(100, random_state=2), 0, 1)
    es = db.metrics.energy_score(head, yh, n_samples=100, random_state=2, estimator="fair")
    want = sr.es_ensemble(yh, draws, estimator="fair", backend="numpy")
    np.testing.assert_allclose(es, want, rtol=1e-10)
    vs = db.metrics.variogram_score(head, yh, n_samples=100, random_state=2)
    want = sr.vs_ensemble(yh, draws, estimator="fair", backend="numpy")
    np.testing.assert_allclose(vs, want, rtol=1e-10)
    # a flattened concentration (same mean, more spread) scores worse
    flat = dirichlet(alpha / 4)
    gap = (db.metrics.energy_score(flat, y, 200) - db.metrics.energy_score(d, y, 200))
    assert gap.mean() > 8 * gap.std(ddof=1) / np.sqrt(n)


def test_mean_scores_take_sample_weight():
    w = RNG.uniform(0, 1, size=12)
    np.testing.assert_allclose(db.metrics.mean_energy_score(ENS, OBS, w),
                               np.average(db.metrics.energy_score(ENS, OBS), weights=w))
    np.testing.assert_allclose(db.metrics.mean_variogram_score(ENS, OBS, w, p=1.0),
                               np.average(db.metrics.variogram_score(ENS, OBS, 1.0), weights=w))
    assert db.metrics.mean_energy_score(ENS, OBS) == pytest.approx(
        db.metrics.energy_score(ENS, OBS).mean())
    with pytest.raises(ValueError, match=r"sample_weight has shape \(3,\); expected \(12,\)"):
        db.metrics.mean_energy_score(ENS, OBS, np.ones(3))


def test_y_as_a_dataframe_keeps_its_column_order():
    import pandas as pd
    frame = pd.DataFrame(OBS, columns=["u", "v", "w"])
    np.testing.assert_array_equal(db.metrics.energy_score(ENS, frame),
                                  db.metrics.energy_score(ENS, OBS))


def test_nll_of_a_multivariate_target():
    loc = RNG.normal(size=(5, 2))
    d = mvn(loc, _cov(0.7))
    y = d.sample(1, random_state=1)[0]
    want = -st.multivariate_normal(np.zeros(2), _cov(0.7)).logpdf(y - loc)
    np.testing.assert_allclose(db.metrics.nll(d, y), want, rtol=1e-10)
    np.testing.assert_allclose(db.metrics.mean_nll(d, y, np.arange(1.0, 6.0)),
                               np.average(want, weights=np.arange(1.0, 6.0)), rtol=1e-10)
    with pytest.raises(ValueError, match=r"nll: y has shape \(5,\); expected \(5, 2\)"):
        db.metrics.nll(d, y[:, 0])
    alpha = RNG.uniform(0.5, 3.0, size=(4, 3))
    dd = dirichlet(alpha)
    yy = dd.sample(1, random_state=3)[0]
    want = [-st.dirichlet(a).logpdf(v) for a, v in zip(alpha, yy, strict=True)]
    np.testing.assert_allclose(db.metrics.nll(dd, yy), want, rtol=1e-9)


def test_scorers_score_multivariate_targets():
    X = RNG.normal(size=(60, 2))
    import pandas as pd
    y = pd.DataFrame(np.c_[X[:, 0], X[:, 0] + X[:, 1]] + RNG.normal(size=(60, 2)),
                     columns=["u", "v"])  # the parts' names: y's columns in the right order
    model = db.DistributionalRegressor(family="multivariate_normal", n_estimators=5,
                                        early_stopping=False).fit(X, y)
    d = model.predict_dist(X)
    get = db.metrics.get_scorer
    assert get("energy_score")(model, X, y) == -db.metrics.mean_energy_score(d, y)
    assert get("variogram_score")(model, X, y) == -db.metrics.mean_variogram_score(d, y)
    assert get("nll")(model, X, y) == pytest.approx(-db.metrics.nll(d, y).mean())
    assert get("loglik")(model, X, y) == get("nll")(model, X, y)
    w = RNG.uniform(size=60)
    assert get("energy_score")(model, X, y, sample_weight=w) == pytest.approx(
        -np.average(db.metrics.energy_score(d, y), weights=w))
    assert {"energy_score", "variogram_score"} <= set(db.metrics.available_scorers())


def test_univariate_scores_are_unchanged():
    d = db.Predictive.from_params("normal", loc=[0.0, 1.0], scale=[1.0, 2.0])
    np.testing.assert_allclose(db.metrics.nll(d, [0.5, 0.0]),
                               -st.norm.logpdf([0.5, 0.0], [0.0, 1.0], [1.0, 2.0]))
