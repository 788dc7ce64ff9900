"""The closed-form CRPS of the families (``Family.crps``, ``distboost.families.numerics.crps``).

Each closed form against the numerical quadrature of the CRPS integral
(``predictive/numerical_crps.py``), its gradient with respect to every parameter against
central finite differences, and finiteness over wide parameter ranges (it is a training loss
for ``scoring_rule="crps"``).  Families and parameters come from ``family_cases.py``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from family_cases import FAMILIES, case, draws
from family_cases import family as _family
from family_cases import tensors as _tensors

import distboost as db
from distboost.families import Truncated
from distboost.predictive.numerical_crps import crps_numerical, crps_of

CLOSED = [f for f in FAMILIES if _family(f).closed_form_crps]
OTHERS = [f for f in FAMILIES if not _family(f).closed_form_crps]


def test_the_closed_form_families():
    assert set(CLOSED) == {"normal", "lognormal", "gamma", "laplace", "logistic", "studentt",
                           "exponential", "gumbel", "beta", "poisson", "negative_binomial",
                           "half_normal", "histogram",
                           "zero_inflated_poisson", "zero_inflated_negative_binomial",
                           "zero_adjusted_gamma", "zero_adjusted_lognormal"}


@pytest.mark.parametrize("name", CLOSED)
@pytest.mark.parametrize("i", [0, 1])
def test_closed_form_matches_numerical_integral(name, i):
    fam, p = _family(name), case(name).params[i]
    y = draws(name, p, 30, seed=i)
    params = {k: np.full(y.size, float(v)) for k, v in p.items()}
    closed = fam.crps(_tensors(fam, p, y.size), torch.as_tensor(y)).numpy()
    numerical = crps_numerical(fam, params, y)
    np.testing.assert_allclose(closed, numerical, rtol=1e-6, atol=1e-10)
    np.testing.assert_array_equal(crps_of(fam, params, y), closed)
    np.testing.assert_array_equal(crps_of(fam, params, y, method="numerical"), numerical)


def _raw_grid(fam, name, n, seed):
    base = torch.as_tensor(fam.raw_from_params(case(name).params[0]))
    noise = torch.as_tensor(np.random.default_rng(seed).normal(0.0, 0.4, size=(n, fam.n_params)))
    return base + noise


@pytest.mark.parametrize("name", CLOSED)
def test_crps_gradient_matches_finite_differences(name):
    fam = _family(name)
    raw0 = _raw_grid(fam, name, 8, seed=1)
    y = torch.as_tensor(draws(name, case(name).params[0], 8, seed=2))
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.crps(fam.params_from_raw(raw), y).sum(), raw)
    eps = 1e-6
    for k in range(fam.n_params):
        e = torch.zeros_like(raw0)
        e[:, k] = eps
        with torch.no_grad():
            fd = (fam.crps(fam.params_from_raw(raw0 + e), y)
                  - fam.crps(fam.params_from_raw(raw0 - e), y)) / (2 * eps)
        # Special functions with a finite-difference derivative in a shape argument
        # (incomplete gamma / beta, 2F1, Student-t cdf in df) are accurate to ~1e-7.
        np.testing.assert_allclose(g[:, k].numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)


# Wide ranges of the raw scores (natural parameters from ~1e-3 to ~1e3 for positive ones).
@pytest.mark.parametrize("name", CLOSED)
def test_crps_and_gradient_are_finite_over_wide_parameters(name):
    fam = _family(name)
    n = 400
    rng = np.random.default_rng(3)
    base = torch.as_tensor(fam.raw_from_params(case(name).params[0]))
    raw = (base + torch.as_tensor(rng.uniform(-4.0, 4.0, size=(n, fam.n_params))))
    if name == "studentt":  # df > 1: a law without a mean has an infinite CRPS
        raw[:, 0] = raw[:, 0].clamp_min(np.log(1.05))
    if name == "negative_binomial":  # probs in (0.02, 0.98): the hypergeometric stays in range
        raw[:, 1] = raw[:, 1].clamp(-4.0, 4.0)
    raw.requires_grad_(True)
    with torch.no_grad():
        params = fam.params_from_raw(raw)
        y = fam.icdf(params, torch.as_tensor(rng.uniform(0.001, 0.999, size=n)))
    score = fam.crps(fam.params_from_raw(raw), y)
    (g,) = torch.autograd.grad(score.sum(), raw)
    assert torch.isfinite(score).all() and (score >= -1e-9 * score.abs().max()).all()
    assert torch.isfinite(g).all()


def test_studentt_without_a_mean_has_infinite_crps_and_zero_gradient():
    fam = db.families.get("studentt")
    raw = torch.tensor([[np.log(0.8), 0.0, 0.0]], dtype=torch.float64, requires_grad=True)
    score = fam.crps(fam.params_from_raw(raw), torch.tensor([0.3], dtype=torch.float64))
    assert torch.isinf(score).all()
    (g,) = torch.autograd.grad(score.sum(), raw)
    assert torch.equal(g, torch.zeros_like(g))


def test_gumbel_crps_far_in_the_lower_tail_is_finite():
    fam = db.families.get("gumbel")
    params = {"loc": torch.tensor([0.0, 0.0], dtype=torch.float64),
              "scale": torch.tensor([1.0, 1.0], dtype=torch.float64)}
    score = fam.crps(params, torch.tensor([1e3, -1e3], dtype=torch.float64))
    assert torch.isfinite(score).all()
    # Far above the body: CRPS ~ y - mean - spread; E|X - X'|/2 = scale log 2.
    assert score[0].item() == pytest.approx(1e3 - 0.5772156649015329 - np.log(2.0), rel=1e-12)


@pytest.mark.parametrize("name", OTHERS)
def test_families_without_a_closed_form_raise(name):
    fam = _family(name)
    params = _tensors(fam, case(name).params[0], 2)
    with pytest.raises(NotImplementedError, match="no closed-form CRPS"):
        fam.crps(params, torch.zeros(2, dtype=torch.float64))


def test_wrappers_have_no_closed_form_and_use_the_quadrature():
    fam = Truncated("normal", low=0.0)
    assert not fam.closed_form_crps
    d = db.Predictive(fam, {"loc": [0.5, 1.0], "scale": [1.0, 2.0]})
    with pytest.raises(ValueError, match="no closed-form CRPS"):
        d.crps([0.3, 1.0], method="closed")
    np.testing.assert_array_equal(d.crps([0.3, 1.0]),
                                  crps_numerical(fam, d.params, np.array([0.3, 1.0])))
