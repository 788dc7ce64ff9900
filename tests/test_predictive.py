"""Tests of distboost.predictive.Predictive against scipy.stats."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch

import distboost as db

# Per-row parameters (3 rows) and the matching scipy laws.
ROWS = {
    "normal": ({"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]},
               lambda p: st.norm(p["loc"], p["scale"])),
    "lognormal": ({"loc": [0.0, 1.0, -1.0], "scale": [0.3, 0.5, 1.2]},
                  lambda p: st.lognorm(s=p["scale"], scale=np.exp(p["loc"]))),
    "gamma": ({"concentration": [0.5, 2.0, 9.0], "rate": [1.0, 0.5, 3.0]},
              lambda p: st.gamma(p["concentration"], scale=1 / p["rate"])),
    "studentt": ({"df": [2.5, 5.0, 30.0], "loc": [0.0, 1.0, -1.0], "scale": [1.0, 2.0, 0.5]},
                 lambda p: st.t(p["df"], p["loc"], p["scale"])),
    "laplace": ({"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]},
                lambda p: st.laplace(p["loc"], p["scale"])),
    "logistic": ({"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]},
                 lambda p: st.logistic(p["loc"], p["scale"])),
    "gumbel": ({"loc": [0.0, 1.0, -2.0], "scale": [1.0, 0.5, 3.0]},
               lambda p: st.gumbel_r(p["loc"], p["scale"])),
    "weibull": ({"scale": [1.0, 2.0, 0.5], "concentration": [0.8, 2.0, 5.0]},
                lambda p: st.weibull_min(c=p["concentration"], scale=p["scale"])),
    "exponential": ({"rate": [0.5, 1.0, 4.0]}, lambda p: st.expon(scale=1 / p["rate"])),
    "beta": ({"concentration1": [0.5, 2.0, 8.0], "concentration0": [0.7, 3.0, 2.0]},
             lambda p: st.beta(p["concentration1"], p["concentration0"])),
    "poisson": ({"rate": [0.3, 4.0, 50.0]}, lambda p: st.poisson(p["rate"])),
    "negative_binomial": ({"total_count": [0.5, 3.0, 20.0], "probs": [0.3, 0.6, 0.9]},
                          lambda p: st.nbinom(p["total_count"], 1 - p["probs"])),
}
FAMILIES = db.families.available()


def _case(name):
    if name not in ROWS:
        pytest.fail(f"family {name!r} has no rows in ROWS: add some")
    params, law = ROWS[name]
    params = {k: np.asarray(v) for k, v in params.items()}
    return db.Predictive.from_params(name, **params), law(params)


@pytest.mark.parametrize("name", FAMILIES)
def test_moments_cdf_log_prob_quantile_match_scipy(name):
    dist, law = _case(name)
    y = law.ppf(0.3)
    np.testing.assert_allclose(dist.mean, law.mean(), rtol=1e-8)
    np.testing.assert_allclose(dist.variance, law.var(), rtol=1e-7)
    np.testing.assert_allclose(dist.stddev, law.std(), rtol=1e-7)
    np.testing.assert_allclose(dist.cdf(y), law.cdf(y), rtol=1e-7)
    np.testing.assert_allclose(dist.sf(y), law.sf(y), rtol=1e-6, atol=1e-12)
    logp = law.logpmf(y) if dist.family.discrete else law.logpdf(y)
    np.testing.assert_allclose(dist.log_prob(y), logp, rtol=1e-8)
    q = [0.05, 0.5, 0.95]
    want = np.stack([law.ppf(level) for level in q], axis=1)
    np.testing.assert_allclose(dist.quantile(q), want, rtol=1e-6)
    np.testing.assert_allclose(dist.median, law.median(), rtol=1e-6)
    np.testing.assert_allclose(dist.interval(0.9), want[:, [0, 2]], rtol=1e-6)


@pytest.mark.parametrize("name", FAMILIES)
def test_cdf_of_quantile(name):
    dist, _ = _case(name)
    levels = np.array([1e-4, 0.2, 0.5, 0.77, 0.999])
    x = dist.quantile(levels)
    for j, level in enumerate(levels):
        c = dist.cdf(x[:, j])
        if dist.family.discrete:
            assert (c >= level - 1e-12).all() and (dist.cdf(x[:, j] - 1) < level).all()
            assert np.array_equal(x[:, j], np.floor(x[:, j]))
        else:
            np.testing.assert_allclose(c, level, rtol=1e-6)


def test_shapes():
    dist, _ = _case("gamma")
    assert dist.quantile(0.5).shape == (3,)
    assert dist.quantile([0.1, 0.9]).shape == (3, 2)
    assert dist.cdf(1.0).shape == (3,)
    assert dist.cdf(np.ones((3, 4))).shape == (3, 4)
    np.testing.assert_allclose(dist.cdf(np.tile([[0.5, 2.0]], (3, 1)))[:, 1], dist.cdf(2.0))
    assert dist.sample(5, random_state=0).shape == (5, 3)
    assert len(dist) == 3 and "gamma" in repr(dist)


def test_sample_reproducible_and_moments():
    dist, law = _case("lognormal")
    a = dist.sample(100_000, random_state=1)
    np.testing.assert_array_equal(a, dist.sample(100_000, random_state=1))
    assert not np.array_equal(a, dist.sample(100_000, random_state=2))
    se = law.std() / np.sqrt(a.shape[0])
    assert (np.abs(a.mean(axis=0) - law.mean()) < 5 * se).all()


def test_indexing():
    dist, _ = _case("normal")
    assert len(dist[1]) == 1 and dist[1].params["loc"][0] == 1.0
    np.testing.assert_array_equal(dist[1:].params["scale"], [0.5, 3.0])
    np.testing.assert_array_equal(dist[np.array([True, False, True])].params["loc"], [0.0, -2.0])
    np.testing.assert_array_equal(dist[[2, 0]].params["loc"], [-2.0, 0.0])


def test_params_are_read_only_copies():
    loc = np.zeros(2)
    dist = db.Predictive.from_params("normal", loc=loc, scale=1.0)
    loc[0] = 5.0
    assert dist.params["loc"][0] == 0.0
    with pytest.raises(ValueError):
        dist.params["loc"][0] = 1.0


def test_to_torch():
    dist, _ = _case("studentt")
    t = dist.to_torch()
    assert isinstance(t, torch.distributions.StudentT) and t.df.dtype == torch.float64
    assert t.batch_shape == (3,)


def test_from_params_errors():
    with pytest.raises(ValueError, match=r"missing \['scale'\], unknown \['sd'\]"):
        db.Predictive.from_params("normal", loc=[0.0], sd=[1.0])
    with pytest.raises(ValueError, match="'scale' of family 'normal' has 2 of 3 rows outside"):
        db.Predictive.from_params("normal", loc=[0.0, 0, 0], scale=[1.0, -1.0, np.nan])
    with pytest.raises(ValueError, match="incompatible shapes"):
        db.Predictive.from_params("normal", loc=[0.0, 1.0], scale=[1.0, 1.0, 1.0])
    dist, _ = _case("normal")
    with pytest.raises(ValueError, match="y has 2 rows but the Predictive has 3"):
        dist.cdf([0.0, 1.0])
    with pytest.raises(ValueError, match=r"must lie in \[0, 1\]"):
        dist.quantile(1.2)
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\)"):
        dist.interval(1.0)


def test_numerical_quantile_is_vectorised_on_many_rows():
    n = 100_000
    rng = np.random.default_rng(0)
    # A censored-like family without any inverse: a user family with only a cdf.
    class NoInverse(type(db.families.get("logistic"))):
        name = "test_logistic_without_icdf"

        def icdf(self, params, q):  # force the generic numerical inversion
            from distboost._inversion import invert_cdf

            return invert_cdf(lambda v: self.cdf(params, v), q, self.support)

    params = {"loc": rng.normal(size=n), "scale": rng.uniform(0.1, 10, n)}
    dist = db.Predictive(NoInverse(), params)
    x = dist.quantile([0.01, 0.5, 0.99])
    want = st.logistic.ppf([0.01, 0.5, 0.99], params["loc"][:, None], params["scale"][:, None])
    np.testing.assert_allclose(x, want, rtol=1e-6, atol=1e-9)
