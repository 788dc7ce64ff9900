"""The empirical family (the marginals of sample paths) against independent references:
numpy's inverted-cdf quantiles, counting for the cdf, scoringrules' ensemble CRPS and the CRPS
integral by quadrature."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

import distboost as db

RNG = np.random.default_rng(0)
DRAWS = RNG.gamma(2.0, 1.5, size=(40, 7))  # m = 40 draws of n = 7 rows
Y = RNG.gamma(2.0, 1.5, size=7)


@pytest.fixture(scope="module")
def dist():
    fam = db.families.Empirical(40, support=db.families.get("gamma").support)
    return db.Predictive(fam, db.families.Empirical.params_of(DRAWS))


def test_cdf_counts_the_draws(dist):
    expected = (DRAWS <= Y[None, :]).mean(axis=0)
    np.testing.assert_array_equal(dist.cdf(Y), expected)
    at_draws = dist.cdf(DRAWS.T)  # (n, m): the step is closed on the right
    np.testing.assert_array_equal(at_draws, (DRAWS.T[:, None, :] <= DRAWS.T[:, :, None])
                                  .mean(axis=2))


def test_quantiles_are_numpys_inverted_cdf_and_invert_the_cdf(dist):
    levels = np.array([0.01, 0.025, 0.05, 0.5, 0.9, 0.975, 1 / 40, 2 / 40, 0.999])
    expected = np.quantile(DRAWS, levels, axis=0, method="inverted_cdf").T
    np.testing.assert_array_equal(dist.quantile(levels), expected)
    q = dist.quantile(levels)
    assert np.all(dist.cdf(q) >= levels - 1e-12)  # the smallest draw reaching the level


def test_crps_matches_scoringrules_and_the_integral(dist, sr):
    crps = dist.crps(Y)
    np.testing.assert_allclose(crps, sr.crps_ensemble(Y, DRAWS.T, estimator="nrg"), rtol=1e-12)
    for i in range(3):
        x = np.sort(DRAWS[:, i])
        lo, hi = min(x[0], Y[i]) - 1, max(x[-1], Y[i]) + 1
        f = lambda v, i=i: ((DRAWS[:, i] <= v).mean() - (v >= Y[i])) ** 2  # noqa: E731
        pts = np.sort(np.r_[x, Y[i]])
        ref = sum(integrate.quad(f, a, b)[0] for a, b in zip(np.r_[lo, pts], np.r_[pts, hi],
                                                             strict=True))
        assert crps[i] == pytest.approx(ref, rel=1e-8)


def test_moments_samples_and_frame(dist):
    np.testing.assert_allclose(dist.mean, DRAWS.mean(axis=0), rtol=1e-13)
    np.testing.assert_allclose(dist.variance, DRAWS.var(axis=0), rtol=1e-12)
    s = dist.sample(500, random_state=3)
    assert s.shape == (500, 7) and np.all(np.isin(s[:, 0], DRAWS[:, 0]))
    np.testing.assert_array_equal(s, dist.sample(500, random_state=3))
    frame = dist.to_frame([0.5])
    assert list(frame.columns) == ["mean", "sd", "q0.5"]  # the draws are not columns
    assert "n=7" in repr(dist) and len(repr(dist)) < 80


def test_no_density_and_no_fit(dist):
    with pytest.raises(ValueError, match="has no density, so no log-likelihood"):
        db.metrics.nll(dist, Y)
    with pytest.raises(ValueError, match="cannot be fitted"):
        db.DistributionalRegressor(family=db.families.Empirical(3)).fit(np.zeros((5, 1)),
                                                                       np.arange(5.0))


def test_count_draws_get_the_randomised_pit():
    draws = RNG.poisson(3.0, size=(200, 400)).astype(float)
    fam = db.families.Empirical(200, support=db.families.get("poisson").support,
                                discrete=True)
    d = db.Predictive(fam, db.families.Empirical.params_of(draws))
    y = RNG.poisson(3.0, size=400).astype(float)
    pit = d.pit(y, random_state=0)
    lower, upper = d.cdf(y - 1), d.cdf(y)
    assert np.all((pit >= lower) & (pit <= upper))
    assert abs(pit.mean() - 0.5) < 0.05 and abs((pit < 0.1).mean() - 0.1) < 0.04
