"""Property tests over every registered family (parametrised with readable ids).

Independent references: scipy.stats for densities, cdfs, quantiles and MLE fits; central
finite differences for autograd derivatives; Monte Carlo for Fisher information.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch

import distboost as db
from distboost.families.categorical import Categorical

# Two parameter sets per family (natural scale) and the matching frozen scipy law.
CASES = {
    "normal": [{"loc": 1.5, "scale": 2.0}, {"loc": -30.0, "scale": 0.01}],
    "lognormal": [{"loc": 0.3, "scale": 0.5}, {"loc": -2.0, "scale": 1.5}],
    "gamma": [{"concentration": 2.5, "rate": 1.5}, {"concentration": 0.6, "rate": 20.0}],
    "studentt": [{"df": 4.0, "loc": 1.0, "scale": 2.0}, {"df": 25.0, "loc": -3.0, "scale": 0.1}],
    "laplace": [{"loc": 0.5, "scale": 1.2}, {"loc": 100.0, "scale": 0.05}],
    "logistic": [{"loc": 0.5, "scale": 1.2}, {"loc": -10.0, "scale": 3.0}],
    "gumbel": [{"loc": 0.5, "scale": 1.2}, {"loc": 5.0, "scale": 0.2}],
    "weibull": [{"scale": 2.0, "concentration": 1.5}, {"scale": 0.1, "concentration": 4.0}],
    "exponential": [{"rate": 0.7}, {"rate": 30.0}],
    "beta": [{"concentration1": 2.0, "concentration0": 5.0},
             {"concentration1": 0.7, "concentration0": 0.9}],
    "poisson": [{"rate": 3.5}, {"rate": 60.0}],
    "negative_binomial": [{"total_count": 4.0, "probs": 0.6},
                          {"total_count": 0.8, "probs": 0.2}],
    "bernoulli": [{"logits": 0.4}, {"logits": -3.0}],
    # Normalised logits (log-probabilities): the MLE, log class frequencies, recovers them.
    "categorical": [{f"logits_{k}": v for k, v in enumerate(np.log([0.2, 0.5, 0.3]))},
                    {f"logits_{k}": v for k, v in enumerate(np.log([0.05, 0.15, 0.8]))}],
}

#: Families whose classes are unordered: no cdf, quantiles, mean or variance (they raise).
UNORDERED = {"categorical"}
UNORDERED_REASON = "unordered classes have no cdf or quantiles (the family raises instead)"


def _family(name):
    """The registered family; the categorical one with the 3 classes of its CASES."""
    return Categorical(n_classes=3) if name == "categorical" else db.families.get(name)


def _softmax(p):
    logits = np.array([p[f"logits_{k}"] for k in range(len(p))])
    return np.exp(logits - logits.max()) / np.exp(logits - logits.max()).sum()


def scipy_law(name, p):
    """The same law in scipy.stats (this pins every parametrisation difference)."""
    return {
        "normal": lambda: st.norm(p["loc"], p["scale"]),
        "lognormal": lambda: st.lognorm(s=p["scale"], scale=np.exp(p["loc"])),
        "gamma": lambda: st.gamma(a=p["concentration"], scale=1.0 / p["rate"]),
        "studentt": lambda: st.t(p["df"], p["loc"], p["scale"]),
        "laplace": lambda: st.laplace(p["loc"], p["scale"]),
        "logistic": lambda: st.logistic(p["loc"], p["scale"]),
        "gumbel": lambda: st.gumbel_r(p["loc"], p["scale"]),
        "weibull": lambda: st.weibull_min(c=p["concentration"], scale=p["scale"]),
        "exponential": lambda: st.expon(scale=1.0 / p["rate"]),
        "beta": lambda: st.beta(p["concentration1"], p["concentration0"]),
        "poisson": lambda: st.poisson(p["rate"]),
        "negative_binomial": lambda: st.nbinom(n=p["total_count"], p=1.0 - p["probs"]),
        "bernoulli": lambda: st.bernoulli(1.0 / (1.0 + np.exp(-p["logits"]))),
        "categorical": lambda: st.rv_discrete(values=(np.arange(len(p)), _softmax(p))),
    }[name]()


FAMILIES = db.families.available()
PAIRS = [(f, i) for f in FAMILIES for i in range(2)]
PAIR_IDS = [f"{f}-{i}" for f, i in PAIRS]


def _cases(name):
    if name not in CASES:
        pytest.fail(f"family {name!r} has no test parameters in CASES: add some")
    return CASES[name]


def _tensors(family, p, n):
    return {k: torch.full((n,), float(p[k]), dtype=torch.float64) for k in family.param_names}


def _draws(name, p, n, seed):
    return scipy_law(name, p).rvs(size=n, random_state=np.random.default_rng(seed))


def test_the_twelve_families_are_registered():
    assert set(FAMILIES) >= set(CASES)


@pytest.mark.parametrize("name", FAMILIES)
def test_every_family_has_cases(name):
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
        np.testing.assert_allclose(family.cdf(params, x).numpy(), LEVELS, rtol=1e-6, atol=1e-12)
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
    params = _tensors(family, p, x.numel())
    h = torch.full_like(x, 1e-5 * law.std())
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
def test_mle_init_recovers_parameters_like_scipy(name, i):
    family, p = _family(name), _cases(name)[i]
    y = np.asarray(_draws(name, p, 20_000, seed=10 + i), dtype=np.float64)
    fit = family.init(y)
    params = _tensors(family, fit, y.size)
    ours = family.log_prob(params, torch.as_tensor(y)).mean().item()
    # Reference: the log-likelihood at scipy's own MLE (loc fixed where scipy has a shift).
    law = scipy_law(name, p)
    if family.discrete:
        # scipy has no generic discrete fit: the truth bounds the MLE's log-likelihood.
        ref = law.logpmf(y).mean()
    else:
        dist = law.dist
        kw = {} if name in ("normal", "laplace", "logistic", "gumbel", "studentt") else {"floc": 0}
        if name == "beta":
            kw = {"floc": 0, "fscale": 1}
        ref_params = dist.fit(y, **kw)
        ref = dist.logpdf(y, *ref_params).mean()
    assert ours >= ref - 1e-6, (fit, ours, ref)
    for k, v in p.items():
        rel = 0.25 if k == "df" else 0.1  # tail weight is weakly identified at large df
        assert fit[k] == pytest.approx(v, rel=rel, abs=0.05), (k, fit, p)


@pytest.mark.parametrize("name", FAMILIES)
def test_weighted_init_equals_replication(name):
    family, p = _family(name), _cases(name)[0]
    y = np.asarray(_draws(name, p, 300, seed=42), dtype=np.float64)
    w = np.random.default_rng(0).integers(1, 4, size=y.size)
    a = family.init(y, sample_weight=w)
    b = family.init(np.repeat(y, w))
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-5), (k, a, b)


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
    se_mean = np.sqrt(var / m)
    assert abs(draws.mean() - mean) < 5 * se_mean
    # Sample variance: loose relative check (heavy tails make its standard error large).
    assert draws.var() == pytest.approx(var, rel=0.1)
    again = family.sample(params, m, seed=7)[:, 0].numpy()
    np.testing.assert_array_equal(again, draws)
    other = family.sample(params, m, seed=8)[:, 0].numpy()
    assert not np.array_equal(other, draws)


def _expected_negative_hessian(family, raw, m, seed):
    params = family.params_from_raw(raw)
    y = family.sample(params, m, seed).reshape(-1)
    rep = raw.repeat(m, 1).requires_grad_(True)
    (g,) = torch.autograd.grad(family.nll(rep, y).sum(), rep, create_graph=True)
    rows = [torch.autograd.grad(g[:, k].sum(), rep, retain_graph=True)[0].mean(0)
            for k in range(family.n_params)]
    return torch.stack(rows).unsqueeze(0).detach()


@pytest.mark.parametrize("name", FAMILIES)
def test_fisher_information_matches_monte_carlo(name):
    from distboost.families._fisher import fisher_monte_carlo

    family = _family(name)
    p = _cases(name)[0]
    raw = torch.as_tensor(family.raw_from_params(p)).reshape(1, -1)
    exact = family.fisher_information(raw)
    if exact is None:
        # No closed form: the engine's Monte Carlo estimate E[s s^T] must agree with the
        # other expression of the information, E[-Hessian of log p], from other draws.
        exact = _expected_negative_hessian(family, raw, m=200_000, seed=2)
    if exact.dim() == 2:
        exact = torch.diag_embed(exact)
    mc = fisher_monte_carlo(family, raw, m=400_000, seed=1)
    np.testing.assert_allclose(mc[0].numpy(), exact[0].numpy(), rtol=0.03,
                               atol=0.03 * exact[0].abs().max().item())


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


@pytest.mark.parametrize("links", [None, {"scale": "softplus"}, {"loc": "identity"}])
def test_normal_raw_fisher_shortcut_equals_the_chain_rule(links):
    """Normal.fisher_information's closed form for the default links is the general chain rule
    ``J^T I(theta) J`` (and other links take the general path)."""
    from distboost.families.base import Family

    fam = db.families.get("normal", links=links)
    raw = torch.as_tensor(np.random.default_rng(0).normal(scale=3.0, size=(500, 2)))
    torch.testing.assert_close(fam.fisher_information(raw), Family.fisher_information(fam, raw),
                               rtol=1e-12, atol=0.0)
