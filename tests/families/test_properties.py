"""Property tests over every registered family (parametrised with readable ids).

The families, their parameters and their scipy laws come from the one case table,
``family_cases.py``.  Independent references: scipy.stats for densities, cdfs, quantiles and
MLE fits; central finite differences for autograd derivatives; Monte Carlo for Fisher
information.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch
from family_cases import CASES, FAMILIES, PAIR_IDS, PAIRS, case, scipy_law
from family_cases import draws as _draws
from family_cases import family as _family
from family_cases import tensors as _tensors

import distboost as db

#: Families whose classes are unordered: no cdf, quantiles, mean or variance (they raise).
UNORDERED = {"categorical"}
UNORDERED_REASON = "unordered classes have no cdf or quantiles (the family raises instead)"


def _cases(name):
    return case(name).params


def test_every_case_is_a_registered_family():
    assert set(FAMILIES) >= set(CASES)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_has_a_case(name):
    assert len(_cases(name)) == 2


@pytest.mark.parametrize("name, i", PAIRS, ids=PAIR_IDS)
def test_log_prob_and_cdf_match_scipy(name, i):
    family, p = _family(name), _cases(name)[i]
    law = scipy_law(name, p)
    y = _draws(name, p, 200, seed=i)
    params = _tensors(family, p, y.size)
    yt = torch.as_tensor(np.asarray(y, dtype=np.float64))
    logpdf = law.logpmf(y) if family.discrete else law.logpdf(y)
    np.testing.assert_allclose(family.log_prob(params, yt).numpy(), logpdf, rtol=1e-8, atol=1e-8)
    if name in UNORDERED:
        for method in (lambda: family.cdf(params, yt), lambda: family.mean(params),
                       lambda: family.variance(params)):
            with pytest.raises(ValueError, match="unordered classes"):
                method()
        return
    np.testing.assert_allclose(family.cdf(params, yt).numpy(), law.cdf(y), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(family.mean(params).numpy(), law.mean(), rtol=1e-8)
    np.testing.assert_allclose(family.variance(params).numpy(), law.var(), rtol=1e-7)


LEVELS = np.array([1e-6, 0.01, 0.1, 0.37, 0.5, 0.8, 0.99, 1 - 1e-6])


@pytest.mark.parametrize("name, i", PAIRS, ids=PAIR_IDS)
def test_quantile_inverts_cdf(name, i):
    if name in UNORDERED:
        pytest.skip(UNORDERED_REASON)
    family, p = _family(name), _cases(name)[i]
    params = _tensors(family, p, LEVELS.size)
    q = torch.as_tensor(LEVELS)
    x = family.icdf(params, q)
    if family.discrete:
        # Smallest integer k with cdf(k) >= q.
        assert torch.equal(x, torch.floor(x))
        assert (family.cdf(params, x) >= q - 1e-12).all()
        assert (family.cdf(params, x - 1) < q).all()
        np.testing.assert_array_equal(x.numpy(), scipy_law(name, p).ppf(LEVELS))
    else:
        at_atom = torch.zeros(LEVELS.size, dtype=torch.bool)
        if family.point_mass is not None:
            # Levels up to the atom's cdf give the atom itself (the smallest x with F(x) >= q).
            atom = torch.full_like(q, family.point_mass)
            at_atom = q <= family.cdf(params, atom)
            assert torch.equal(x[at_atom], atom[at_atom])
        np.testing.assert_allclose(family.cdf(params, x)[~at_atom].numpy(),
                                   LEVELS[~at_atom.numpy()], rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(x.numpy(), scipy_law(name, p).ppf(LEVELS), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name, i", PAIRS, ids=PAIR_IDS)
def test_cdf_derivative_is_density(name, i):
    if name in UNORDERED:
        pytest.skip(UNORDERED_REASON)
    family, p = _family(name), _cases(name)[i]
    law = scipy_law(name, p)
    if family.discrete:
        k = torch.arange(0.0, law.ppf(0.999) + 1, dtype=torch.float64)
        params = _tensors(family, p, k.numel())
        pmf = family.cdf(params, k) - family.cdf(params, k - 1)
        np.testing.assert_allclose(pmf.numpy(), family.log_prob(params, k).exp().numpy(),
                                   rtol=1e-7, atol=1e-12)
        return
    x = torch.as_tensor(law.ppf(np.linspace(0.02, 0.98, 25)))
    if family.point_mass is not None:  # the derivative of the continuous part only
        x = x[x > family.point_mass + 1e-3 * law.std()]
    params = _tensors(family, p, x.numel())
    spread = law.std() if np.isfinite(law.std()) else law.ppf(0.75) - law.ppf(0.25)  # cauchy
    h = torch.full_like(x, 1e-5 * spread)
    fd = (family.cdf(params, x + h) - family.cdf(params, x - h)) / (2 * h)
    np.testing.assert_allclose(fd.numpy(), family.log_prob(params, x).exp().numpy(), rtol=1e-5)


@pytest.mark.parametrize("name, i", PAIRS, ids=PAIR_IDS)
def test_nll_gradient_and_hessian_match_finite_differences(name, i):
    family, p = _family(name), _cases(name)[i]
    y = torch.as_tensor(np.asarray(_draws(name, p, 12, seed=3 + i), dtype=np.float64))
    raw0 = torch.as_tensor(family.raw_from_params(p)).repeat(12, 1)
    raw0 = raw0 + 0.1 * torch.randn(raw0.shape, generator=torch.Generator().manual_seed(0),
                                    dtype=torch.float64)
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(family.nll(raw, y).sum(), raw, create_graph=True)
    eps = 1e-5
    for k in range(family.n_params):
        e = torch.zeros_like(raw0)
        e[:, k] = eps
        with torch.no_grad():
            fd = (family.nll(raw0 + e, y) - family.nll(raw0 - e, y)) / (2 * eps)
        np.testing.assert_allclose(g[:, k].detach().numpy(), fd.numpy(), rtol=1e-6, atol=1e-7)
        (h,) = torch.autograd.grad(g[:, k].sum(), raw, retain_graph=True)
        with torch.no_grad():
            fd2 = (family.nll(raw0 + e, y) - 2 * family.nll(raw0, y) + family.nll(raw0 - e, y))
        np.testing.assert_allclose(h[:, k].numpy(), (fd2 / eps**2).numpy(), rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name, i", PAIRS, ids=PAIR_IDS)
def test_sample_moments(name, i):
    family, p = _family(name), _cases(name)[i]
    m = 200_000
    params = _tensors(family, p, 1)
    draws = family.sample(params, m, seed=7)[:, 0].numpy()
    if name in UNORDERED:
        # No mean or variance: class frequencies against the probabilities instead.
        probs = family.class_probs(params)[0].numpy()
        freq = np.bincount(draws.astype(int), minlength=probs.size) / m
        assert np.all(np.abs(freq - probs) < 5 * np.sqrt(probs * (1 - probs) / m))
        return
    mean, var = family.mean(params).item(), family.variance(params).item()
    if not np.isfinite(mean):
        # No mean (cauchy): sample quartiles against the quantile function, within 5
        # binomial standard errors of their levels.
        levels = np.array([0.1, 0.25, 0.5, 0.75, 0.9])
        qs = family.icdf(_tensors(family, p, levels.size), torch.as_tensor(levels)).numpy()
        below = (draws[:, None] <= qs[None, :]).mean(axis=0)
        assert np.all(np.abs(below - levels) < 5 * np.sqrt(levels * (1 - levels) / m))
        return
    se_mean = np.sqrt(var / m)
    assert abs(draws.mean() - mean) < 5 * se_mean
    # Sample variance: loose relative check (heavy tails make its standard error large).
    assert draws.var() == pytest.approx(var, rel=0.1)
    again = family.sample(params, m, seed=7)[:, 0].numpy()
    np.testing.assert_array_equal(again, draws)
    other = family.sample(params, m, seed=8)[:, 0].numpy()
    assert not np.array_equal(other, draws)


@pytest.mark.parametrize("name", FAMILIES)
def test_out_of_support_targets_raise(name):
    family = _family(name)
    bad = {
        "real": np.array([0.0, np.nan, 1.0]),
    }["real"]
    with pytest.raises(ValueError, match=rf"1 of 3 rows.*{name}"):
        family.validate_y(bad)
    low = family.support.low
    if np.isfinite(low):
        high = family.support.high
        inside = low + 1.0 if np.isinf(high) or family.support.integer else (low + high) / 2
        y = np.array([inside, low - 1.0, low - 2.0, inside])
        with pytest.raises(ValueError, match=rf"2 of 4 rows outside the support .*{name}"):
            family.validate_y(y)
    if family.discrete:
        with pytest.raises(ValueError, match="1 of 2 rows outside"):
            family.validate_y(np.array([1.0, 1.5]))


@pytest.mark.parametrize("name", FAMILIES)
def test_raw_params_round_trip(name):
    family, p = _family(name), _cases(name)[1]
    raw = family.raw_from_params(p)
    back = family.params_from_raw(torch.as_tensor(raw).reshape(1, -1))
    for k, v in p.items():
        assert back[k].item() == pytest.approx(v, rel=1e-12)


def test_link_override_changes_link_and_keeps_likelihood():
    default = db.families.get("gamma")
    soft = db.families.get("gamma", links={"rate": "softplus"})
    assert soft.links["rate"].name == "softplus" and default.links["rate"].name == "exp"
    p = {"concentration": 2.0, "rate": 3.0}
    y = torch.tensor([0.2, 0.5, 1.5], dtype=torch.float64)
    a = default.nll(torch.as_tensor(default.raw_from_params(p)).repeat(3, 1), y)
    b = soft.nll(torch.as_tensor(soft.raw_from_params(p)).repeat(3, 1), y)
    torch.testing.assert_close(a, b)
    np.testing.assert_allclose(a.numpy(), -st.gamma(2.0, scale=1 / 3).logpdf(y.numpy()))
