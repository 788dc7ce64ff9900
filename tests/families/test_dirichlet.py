"""The Dirichlet family (``distboost/families/dirichlet.py``): density, moments and margins
against scipy, gradients against finite differences, the trigamma Fisher information against
Monte Carlo, the MLE's stationarity, and the simplex errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch
from family_cases import assert_fisher_matches_monte_carlo

import distboost as db


def _family(d):
    return db.families.get("dirichlet").with_dim(d)


def _alpha(n, d, seed):
    return np.exp(np.random.default_rng(seed).normal(0.5, 0.8, size=(n, d)))


def _params(fam, alpha):
    return {f"concentration_{j}": torch.as_tensor(alpha[:, j]) for j in range(alpha.shape[1])}


@pytest.mark.parametrize("d", [2, 3, 5])
def test_density_moments_and_margins_match_scipy(d):
    fam = _family(d)
    alpha = _alpha(8, d, seed=d)
    params = _params(fam, alpha)
    y = np.random.default_rng(d).dirichlet(np.ones(d), size=8)
    got = fam.log_prob(params, torch.as_tensor(y)).numpy()
    want = [st.dirichlet(alpha[i]).logpdf(y[i]) for i in range(8)]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-8)
    np.testing.assert_allclose(fam.mean(params).numpy(),
                               [st.dirichlet(a).mean() for a in alpha], rtol=1e-12)
    np.testing.assert_allclose(fam.covariance(params).numpy(),
                               [st.dirichlet(a).cov() for a in alpha], rtol=1e-10, atol=1e-15)
    for j in range(d):
        marg, mp = fam.marginal(params, j)
        assert marg.name == "beta"
        law = st.beta(alpha[:, j], alpha.sum(1) - alpha[:, j])
        np.testing.assert_allclose(mp["concentration1"], law.args[0])
        np.testing.assert_allclose(mp["concentration0"], law.args[1])


def test_gradient_of_every_raw_output_matches_finite_differences():
    fam = _family(3)
    raw = torch.as_tensor(np.random.default_rng(1).normal(0.3, 0.5, size=(6, 3)))
    y = torch.as_tensor(np.random.default_rng(2).dirichlet([2.0, 1.0, 3.0], size=6))
    r = raw.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(fam.nll(r, y).sum(), r)
    eps = 1e-6
    for k in range(3):
        step = torch.zeros_like(raw)
        step[:, k] = eps
        fd = (fam.nll(raw + step, y) - fam.nll(raw - step, y)) / (2 * eps)
        np.testing.assert_allclose(grad[:, k].numpy(), fd.numpy(), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("d", [2, 4])
def test_fisher_information_matches_monte_carlo(d):
    fam = _family(d)
    raw = torch.as_tensor(np.random.default_rng(d).normal(0.5, 0.5, size=(1, d)))
    assert_fisher_matches_monte_carlo(fam, raw, seed=d)


def test_mle_recovers_the_concentration_and_is_stationary():
    rng = np.random.default_rng(7)
    alpha = np.array([2.0, 5.0, 1.5])
    y = rng.dirichlet(alpha, size=4000)
    w = rng.uniform(0.5, 2.0, size=4000)
    fam = _family(3)
    fit = fam.init(y, w)
    est = np.array([fit[f"concentration_{j}"] for j in range(3)])
    assert np.all(np.abs(est - alpha) < 0.1 * alpha)
    # the weighted score is zero at the MLE: psi(a0) - psi(a_j) + mean_w log y_j = 0
    from scipy.special import digamma
    score = digamma(est.sum()) - digamma(est) + np.average(np.log(y), axis=0, weights=w)
    np.testing.assert_allclose(score, 0.0, atol=1e-6)


def test_rows_off_the_simplex_are_clear_errors():
    fam = _family(2)
    with pytest.raises(ValueError, match=r"2 of 3 rows whose parts do not sum to 1"):
        fam.validate_y(np.array([[0.5, 0.5], [0.5, 0.6], [0.2, 0.2]]))
    with pytest.raises(ValueError, match=r"1 of 2 rows with a part <= 0"):
        fam.validate_y(np.array([[0.0, 1.0], [0.3, 0.7]]))
    # float64 rounding in a sum of shares is accepted
    fam.validate_y(np.array([[0.1, 0.9 + 1e-12]]))
