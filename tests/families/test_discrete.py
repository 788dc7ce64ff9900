"""Tests of the count families' likelihood and information (distboost.families.discrete).

The negative binomial on ordinary overdispersed counts used to stop with "gradient or
curvature is not finite": the natural step divided by a Monte Carlo Fisher matrix of a nearly
singular 2 x 2 information (``total_count`` and ``probs`` both move the mean), and the log
mass subtracted two huge ``lgamma`` values in the Poisson limit.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as st
import torch

import distboost as db
from distboost.families.base import Family

mp = pytest.importorskip("mpmath")

NB = db.families.get("negative_binomial")


def nb_reference(r, p, y):
    """torch's parametrisation, ``log C(y + r - 1, y) + r log(1 - p) + y log p``, in 50 digits."""
    mp.mp.dps = 50
    r, p, y = mp.mpf(r), mp.mpf(p), mp.mpf(y)
    return float(mp.loggamma(r + y) - mp.loggamma(r) - mp.loggamma(y + 1)
                 + r * mp.log1p(-p) + y * mp.log(p))


def raw_for(r, mean):
    return torch.as_tensor(NB.raw_from_params({"total_count": r, "probs": mean / (mean + r)}))


@pytest.mark.parametrize("r", [1e-3, 0.5, 3.0, 1e6, 1e12, 1e15, 1e20])
@pytest.mark.parametrize("mean", [1e-2, 3.0, 1e3])
def test_log_mass_is_exact_from_tiny_to_poisson_limit_total_count(r, mean):
    """Against 50-digit arithmetic at the parameters the raw scores give.  The old
    lgamma(r + y) - lgamma(r) was off by 3.6 nats at r = 1e15 and 1,700 at 1e20."""
    raw = raw_for(r, mean).reshape(1, -1)
    rr, pp = float(torch.exp(raw[0, 0])), float(torch.sigmoid(raw[0, 1]))
    y = np.array([0.0, 1.0, 2.0, 7.0, 40.0, 1500.0])
    got = -NB.nll(raw.repeat(len(y), 1), torch.as_tensor(y)).numpy()
    ref = np.array([nb_reference(rr, pp, v) for v in y])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-10)
    params = NB.params_from_raw(raw.repeat(len(y), 1))
    np.testing.assert_allclose(NB.log_prob(params, torch.as_tensor(y)).numpy(), ref,
                               rtol=1e-9, atol=1e-8)


def test_poisson_limit_equals_the_poisson_log_mass():
    y = torch.arange(0.0, 30.0, dtype=torch.float64)
    # logit(p) = log(mean / r): p = 4e-18 is below what the sigmoid link's inverse resolves.
    raw = torch.tensor([[np.log(1e18), np.log(4.0 / 1e18)]]).repeat(len(y), 1)
    np.testing.assert_allclose(-NB.nll(raw, y).numpy(), st.poisson(4.0).logpmf(y.numpy()),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("raw", [[50.0, -50.0], [-50.0, 50.0], [50.0, 50.0], [-50.0, -50.0],
                                 [30.0, -20.0], [-30.0, 20.0]])
def test_loss_and_gradient_are_finite_at_the_raw_bounds(raw):
    rt = torch.tensor([raw] * 4, dtype=torch.float64, requires_grad=True)
    loss = NB.nll(rt, torch.tensor([0.0, 3.0, 1000.0, 1e6], dtype=torch.float64))
    (g,) = torch.autograd.grad(loss.sum(), rt)
    assert torch.isfinite(loss).all() and torch.isfinite(g).all()
    assert torch.isfinite(NB.fisher_information(rt.detach())).all()


def series_information(r, mean):
    """``I_rr = sum_j P(Y > j) / (r + j)^2`` (Lawless 1987), summed to a 1e-18 tail."""
    law = st.nbinom(r, r / (r + mean))
    j = np.arange(int(min(law.isf(1e-18), 2e6)) + 10)
    return float(np.sum(law.sf(j) / (r + j) ** 2))


def fixed_mean_information(r, mean):
    """``I_rr - p / r`` in 60 digits (the float difference cancels in the Poisson limit),
    the series summed until the mass left is below 1e-50."""
    mp.mp.dps = 60
    r, mean = mp.mpf(r), mp.mpf(mean)
    p = mean / (mean + r)
    pmf = (1 - p) ** r
    cdf, total, j = pmf, mp.mpf(0), 0
    while not (pmf < mp.mpf(10) ** -50 and j > mean):
        total += (1 - cdf) / (r + j) ** 2
        pmf *= (r + j) / (j + 1) * p
        cdf += pmf
        j += 1
    return float(total - mean / (r * (r + mean)))


@pytest.mark.parametrize("r", [0.003, 0.1, 1.0, 10.0, 1e4, 1e7])
@pytest.mark.parametrize("mean", [1e-4, 0.5, 50.0, 1e5])
def test_information_about_total_count_matches_its_series(r, mean):
    from distboost.families.numerics.special import nb_information

    i_rr, _ = nb_information(torch.tensor([r]), torch.tensor([mean / r]))
    np.testing.assert_allclose(float(i_rr[0]), series_information(r, mean), rtol=1e-4)


@pytest.mark.parametrize("r", [0.5, 3.0, 10.0, 100.0, 1e4, 1e5, 1e7])
@pytest.mark.parametrize("mean", [1e-3, 0.5, 3.0, 50.0])
def test_information_at_a_fixed_mean_is_accurate_in_the_poisson_limit(r, mean):
    """The raw-scale matrix is ``[[A + r p, r p], [r p, r p]]`` with ``A = r^2 I_rr|mean``
    (about ``mean^2 / (2 r^2)``, down to 1e-21 of ``r p`` here): ``A`` is computed directly,
    so the matrix is positive semi-definite, not a difference of two rounded numbers."""
    from distboost.families.numerics.special import nb_information

    _, orth = nb_information(torch.tensor([r]), torch.tensor([mean / r]))
    np.testing.assert_allclose(float(orth[0]), fixed_mean_information(r, mean), rtol=1e-4)
    raw = raw_for(r, mean).reshape(1, -1)
    info = NB.fisher_information(raw)[0].numpy()
    rr = float(torch.exp(raw[0, 0]))
    mm = rr * float(torch.exp(raw[0, 1]))
    rp = rr * mm / (mm + rr)
    np.testing.assert_allclose([info[0, 1], info[1, 0], info[1, 1]], rp, rtol=1e-12)
    assert info[0, 0] >= info[1, 1]  # A >= 0: positive semi-definite


def test_raw_information_shortcut_equals_the_chain_rule_and_other_links_work():
    raw = torch.as_tensor(np.random.default_rng(0).normal(scale=3.0, size=(200, 2)))
    torch.testing.assert_close(NB.fisher_information(raw), Family.fisher_information(NB, raw),
                               rtol=1e-9, atol=0.0)
    soft = db.families.get("negative_binomial", links={"total_count": "softplus"})
    info = soft.fisher_information(raw)
    assert info is not None and torch.isfinite(info).all()


def overdispersed_counts(n, seed=0):
    """Counts with mean exp(0.5 + x0) and total_count between 0.5 and 3 (driven by x1)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    mean = np.exp(0.5 + X[:, 0])
    r = 0.5 + 2.5 / (1.0 + np.exp(-X[:, 1]))
    return X, rng.negative_binomial(r, r / (r + mean)).astype(float)


@pytest.mark.parametrize("step", ["natural", "fisher"])
def test_fits_ordinary_overdispersed_counts_without_backoff_or_warning(step):
    """The old code stopped at round 12 (natural, 'gradient or curvature is not finite') with
    total_count at 1e-14 and 1e21; now every round is a full step."""
    X, y = overdispersed_counts(1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model = db.DistributionalRegressor("negative_binomial", step=step, n_estimators=60,
                                           learning_rate=0.3, early_stopping=False,
                                           random_state=0).fit(X, y)
    assert model.ensemble_.stopped_reason == "n_estimators" and model.n_iter_ == 60
    assert model.ensemble_.n_backoffs_ == 0
    train = model.evals_result_["train"]["nll"]
    assert train[-1] < train[0] - 0.3
    total_count = model.predict_params(X)["total_count"].to_numpy()
    assert np.isfinite(total_count).all() and 0.3 < np.median(total_count) < 10.0


def test_the_default_step_uses_the_closed_form_information():
    from distboost.families.numerics.fisher import make_fisher_fn

    raw = raw_for(2.0, 3.0).reshape(1, -1)
    fisher = make_fisher_fn(NB)
    torch.testing.assert_close(fisher(raw, {}), NB.fisher_information(raw))
    torch.testing.assert_close(fisher(raw, {}), fisher(raw, {}))  # not Monte Carlo
