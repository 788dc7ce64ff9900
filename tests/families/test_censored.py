"""Censored families: likelihood against scipy, tails, gradients, MLE, boosting."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch

import distboost as db
from distboost.families.censored import CENSORABLE

PARAMS = {
    "normal": {"loc": 1.0, "scale": 2.0},
    "lognormal": {"loc": 0.3, "scale": 0.6},
    "gamma": {"concentration": 2.5, "rate": 1.5},
    "weibull": {"scale": 2.0, "concentration": 1.5},
    "exponential": {"rate": 0.7},
    "logistic": {"loc": 1.0, "scale": 2.0},
    "gumbel": {"loc": 1.0, "scale": 2.0},
    "laplace": {"loc": 1.0, "scale": 2.0},
    "studentt": {"df": 4.0, "loc": 1.0, "scale": 2.0},
    "loglogistic": {"scale": 2.0, "concentration": 3.0},
    "inverse_gaussian": {"loc": 2.0, "concentration": 3.0},
}


def _bounds(name):
    """Two rows of each type: exact, right, left, interval."""
    law_q = db.Predictive.from_params(name, **{k: [v] for k, v in PARAMS[name].items()}).quantile
    q = law_q([0.1, 0.3, 0.6, 0.9])[0]
    return np.array([[q[1], q[1]], [q[2], q[2]], [q[1], np.inf], [q[3], np.inf],
                     [-np.inf, q[0]], [-np.inf, q[2]], [q[0], q[1]], [q[2], q[3]]])


def test_every_censorable_family_has_test_parameters():
    assert set(CENSORABLE) == set(PARAMS)


def test_censored_normal_matches_scipy_and_stays_finite_in_the_tails():
    fam = db.families.get("censored_normal")
    y = np.array([[0.5, 0.5], [1.0, np.inf], [-np.inf, -1.0], [0.2, 1.3],
                  [40.0, np.inf], [-np.inf, -40.0], [39.0, 41.0], [-45.0, -44.0]])
    raw = torch.zeros((len(y), 2), dtype=torch.float64, requires_grad=True)
    nll = fam.nll(raw, torch.as_tensor(y))
    (g,) = torch.autograd.grad(nll.sum(), raw)
    want = -np.array([st.norm.logpdf(0.5), st.norm.logsf(1.0), st.norm.logcdf(-1.0),
                      np.log(st.norm.cdf(1.3) - st.norm.cdf(0.2)), st.norm.logsf(40.0),
                      st.norm.logcdf(-40.0)])
    np.testing.assert_allclose(nll[:6].detach().numpy(), want, rtol=1e-10)
    # Deep tails: scipy's cdf difference underflows to log(0); ours stays finite and close
    # to the leading term of the Mills-ratio expansion, log S(39) (S(41) is negligible).
    assert torch.isfinite(nll).all() and torch.isfinite(g).all()
    assert nll[6].item() == pytest.approx(-st.norm.logsf(39.0), rel=1e-9)
    assert nll[7].item() == pytest.approx(-st.norm.logcdf(-44.0), rel=1e-9)


@pytest.mark.parametrize("name", CENSORABLE)
def test_censored_likelihood_matches_scipy(name):
    fam = db.families.get(f"censored_{name}")
    y = _bounds(name)
    p = PARAMS[name]
    law = db.Predictive.from_params(name, **{k: np.full(len(y), v) for k, v in p.items()})
    raw = torch.as_tensor(fam.raw_from_params(p)).repeat(len(y), 1)
    got = fam.nll(raw, torch.as_tensor(y)).numpy()
    lo, hi = y[:, 0], y[:, 1]
    exact = lo == hi
    cdf_hi = np.where(np.isinf(hi), 1.0, law.cdf(np.where(np.isinf(hi), 0.0, hi)))
    cdf_lo = np.where(np.isinf(lo), 0.0, law.cdf(np.where(np.isinf(lo), 1.0, lo)))
    with np.errstate(divide="ignore"):  # exact rows have cdf_hi == cdf_lo; where() drops them
        want = np.where(exact, -law.log_prob(np.where(exact, lo, 1.0)), -np.log(cdf_hi - cdf_lo))
    np.testing.assert_allclose(got, want, rtol=1e-7)


@pytest.mark.parametrize("name", CENSORABLE)
def test_gradients_match_finite_differences_for_all_row_types(name):
    fam = db.families.get(f"censored_{name}")
    y = torch.as_tensor(_bounds(name))
    raw0 = torch.as_tensor(fam.raw_from_params(PARAMS[name])).repeat(len(y), 1)
    raw0 = raw0 + 0.05 * torch.randn(raw0.shape, generator=torch.Generator().manual_seed(1),
                                     dtype=torch.float64)
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.nll(raw, y).sum(), raw)
    eps = 1e-6
    for k in range(fam.n_params):
        e = torch.zeros_like(raw0)
        e[:, k] = eps
        fd = (fam.nll(raw0 + e, y) - fam.nll(raw0 - e, y)) / (2 * eps)
        np.testing.assert_allclose(g[:, k].numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)


def test_weibull_with_half_censored_rows_is_recovered_and_naive_fit_is_biased():
    rng = np.random.default_rng(0)
    t = 2.0 * rng.weibull(1.5, size=20_000)
    c = rng.uniform(0, 4, size=20_000)  # about half the rows censored
    y = db.censored.right(np.minimum(t, c), t <= c)
    assert 0.4 < (t <= c).mean() < 0.65
    fit = db.families.get("censored_weibull").init(y)
    assert fit["scale"] == pytest.approx(2.0, rel=0.03)
    assert fit["concentration"] == pytest.approx(1.5, rel=0.03)
    naive = db.families.get("weibull").init(np.minimum(t, c))
    assert naive["scale"] < 0.8 * 2.0  # treating censoring times as events biases it down


def test_boosted_censored_lognormal_beats_the_marginal_fit():
    rng = np.random.default_rng(1)

    def simulate(n):
        X = rng.uniform(-2, 2, size=(n, 2))
        t = np.exp(0.5 * X[:, 0] + (0.3 + 0.2 * np.abs(X[:, 1])) * rng.normal(size=n))
        c = rng.exponential(2.0, size=n)
        return X, db.censored.right(np.minimum(t, c), t <= c)

    X, y = simulate(3000)
    X_te, y_te = simulate(3000)
    model = db.DistributionalRegressor(family="censored_lognormal", n_estimators=200,
                                       learning_rate=0.05, num_leaves=7, random_state=0)
    model.fit(X, y)
    fam = db.families.get("censored_lognormal")
    init = fam.init(y)
    raw = torch.as_tensor(fam.raw_from_params(init)).repeat(len(y_te), 1)
    marginal = fam.nll(raw, torch.as_tensor(y_te)).mean().item()
    assert -model.score(X_te, y_te) < marginal - 0.2
    # Predictions describe the latent survival time.
    dist = model.predict_dist(X_te[:5])
    assert np.all(np.diff(dist.quantile([0.25, 0.5, 0.75]), axis=1) > 0)


@pytest.mark.parametrize("y, match", [
    (np.array([[1.0, 0.5], [1.0, 2.0]]), "1 of 2 rows with lower > upper"),
    (np.array([[np.nan, 1.0], [1.0, 2.0]]), "1 of 2 rows with NaN bounds"),
    (np.array([[-1.0, 2.0], [0.5, 0.5]]), "1 of 2 rows with bounds outside the support"),
    (np.array([[0.0, 0.0], [0.5, 0.5]]), "1 of 2 rows with bounds outside the support"),
    (np.array([1.0, 2.0]), r"expects an \(n, 2\) array of \[lower, upper\] bounds"),
], ids=["lower-above-upper", "nan", "negative-lower", "exact-zero", "one-dimensional"])
def test_invalid_censored_targets(y, match):
    with pytest.raises(ValueError, match=match):
        db.families.get("censored_gamma").validate_y(y)


def test_bounds_for_an_uncensored_family_and_unknown_censored_family():
    with pytest.raises(ValueError, match="expects a 1-D target"):
        db.DistributionalRegressor(family="gamma").fit(np.zeros((2, 1)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="has no censored variant"):
        db.families.get("censored_poisson")


def test_helpers():
    np.testing.assert_array_equal(db.censored.right([1.0, 2.0], [1, 0]), [[1, 1], [2, np.inf]])
    np.testing.assert_array_equal(db.censored.left([1.0, 2.0], [True, False]),
                                  [[1, 1], [-np.inf, 2]])
    np.testing.assert_array_equal(db.censored.interval([1.0, 2.0], [1.5, np.inf]),
                                  [[1, 1.5], [2, np.inf]])
    with pytest.raises(ValueError, match="1 of 1 rows have lower > upper"):
        db.censored.interval([2.0], [1.0])
    with pytest.raises(ValueError, match="event must be 0/1"):
        db.censored.right([1.0], [2])
