"""``Mixture(component, n_components)``: against hand-written mixtures of scipy laws, the
Grimit et al. (2006) CRPS against quadrature, derivatives against finite differences, the
ordering of the components, state, and a boosted fit on bimodal data."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st
import torch
from scipy.integrate import quad

import distboost as db
from distboost.families import Mixture
from distboost.predictive.numerical_crps import crps_numerical

CASES = {
    "normal-2": (lambda: Mixture("normal", n_components=2),
                 {"loc_0": -1.0, "scale_0": 0.5, "loc_1": 2.0, "scale_1": 1.0, "logits_1": 0.4},
                 lambda p: [st.norm(p["loc_0"], p["scale_0"]),
                            st.norm(p["loc_1"], p["scale_1"])]),
    "gamma-3": (lambda: Mixture("gamma", n_components=3),
                {"concentration_0": 1.5, "rate_0": 2.0, "concentration_1": 4.0, "rate_1": 1.0,
                 "concentration_2": 30.0, "rate_2": 3.0, "logits_1": -0.3, "logits_2": 0.5},
                lambda p: [st.gamma(p[f"concentration_{j}"], scale=1 / p[f"rate_{j}"])
                           for j in range(3)]),
    "laplace-2": (lambda: Mixture("laplace", n_components=2),
                  {"loc_0": 0.0, "scale_0": 1.0, "loc_1": 0.5, "scale_1": 0.2, "logits_1": -1.0},
                  lambda p: [st.laplace(p["loc_0"], p["scale_0"]),
                             st.laplace(p["loc_1"], p["scale_1"])]),
}


def _weights(p, k):
    logits = np.array([0.0] + [p[f"logits_{j}"] for j in range(1, k)])
    return np.exp(logits) / np.exp(logits).sum()


def _tensors(fam, p, n):
    return {k: torch.full((n,), float(p[k]), dtype=torch.float64) for k in fam.param_names}


@pytest.mark.parametrize("case", CASES)
def test_distribution_functions_match_scipy_mixtures(case):
    make, p, laws = CASES[case]
    fam = make()
    comps = laws(p)
    w = _weights(p, len(comps))
    y = np.linspace(0.05, 8.0, 40) if fam.support.low == 0 else np.linspace(-4, 6, 40)
    params = _tensors(fam, p, y.size)
    yt = torch.as_tensor(y)
    pdf = sum(wk * law.pdf(y) for wk, law in zip(w, comps, strict=True))
    cdf = sum(wk * law.cdf(y) for wk, law in zip(w, comps, strict=True))
    np.testing.assert_allclose(fam.log_prob(params, yt).numpy(), np.log(pdf), rtol=1e-10)
    # torch's gammainc agrees with scipy's to ~1e-10 at concentration 30.
    np.testing.assert_allclose(fam.cdf(params, yt).numpy(), cdf, rtol=1e-8, atol=1e-14)
    mean = sum(wk * law.mean() for wk, law in zip(w, comps, strict=True))
    second = sum(wk * (law.var() + law.mean() ** 2) for wk, law in zip(w, comps, strict=True))
    assert fam.mean(params)[0].item() == pytest.approx(mean, rel=1e-12)
    assert fam.variance(params)[0].item() == pytest.approx(second - mean**2, rel=1e-10)
    levels = torch.tensor([1e-6, 0.01, 0.3, 0.5, 0.77, 0.99, 1 - 1e-6], dtype=torch.float64)
    q = fam.icdf(_tensors(fam, p, 7), levels)
    np.testing.assert_allclose(fam.cdf(_tensors(fam, p, 7), q).numpy(), levels.numpy(),
                               rtol=1e-6, atol=1e-12)
    draws = fam.sample(_tensors(fam, p, 1), 100_000, seed=1)[:, 0].numpy()
    assert abs(draws.mean() - mean) < 5 * np.sqrt((second - mean**2) / 1e5)


def test_normal_mixture_crps_matches_quadrature_and_its_gradient_is_right():
    make, p, laws = CASES["normal-2"]
    fam = make()
    assert fam.closed_form_crps
    comps, w = laws(p), _weights(p, 2)
    y = np.array([-3.0, -1.0, 0.4, 2.0, 7.0])
    got = fam.crps(_tensors(fam, p, 5), torch.as_tensor(y)).numpy()

    def cdf(x):
        return sum(wk * law.cdf(x) for wk, law in zip(w, comps, strict=True))

    want = [quad(lambda x: cdf(x) ** 2, -np.inf, v)[0] + quad(lambda x: (1 - cdf(x)) ** 2, v,
                                                            np.inf)[0] for v in y]
    np.testing.assert_allclose(got, want, rtol=1e-8)
    numerical = crps_numerical(fam, {k: np.full(5, v) for k, v in p.items()}, y)
    np.testing.assert_allclose(numerical, want, rtol=1e-6)
    raw0 = torch.as_tensor(fam.raw_from_params(p)).repeat(5, 1)
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.crps(fam.params_from_raw(raw), torch.as_tensor(y)).sum(), raw)
    for k in range(fam.n_params):
        e = torch.zeros_like(raw0)
        e[:, k] = 1e-6
        with torch.no_grad():
            fd = (fam.crps(fam.params_from_raw(raw0 + e), torch.as_tensor(y))
                  - fam.crps(fam.params_from_raw(raw0 - e), torch.as_tensor(y))) / 2e-6
        np.testing.assert_allclose(g[:, k].numpy(), fd.numpy(), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("case", CASES)
def test_nll_gradient_matches_finite_differences(case):
    make, p, _ = CASES[case]
    fam = make()
    y = fam.sample(_tensors(fam, p, 8), 1, seed=2)[0]
    raw0 = torch.as_tensor(fam.raw_from_params(p)).repeat(8, 1)
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(fam.nll(raw, y).sum(), raw)
    for k in range(fam.n_params):
        e = torch.zeros_like(raw0)
        e[:, k] = 1e-6
        with torch.no_grad():
            fd = (fam.nll(raw0 + e, y) - fam.nll(raw0 - e, y)) / 2e-6
        np.testing.assert_allclose(g[:, k].numpy(), fd.numpy(), rtol=1e-5, atol=1e-7)


def test_components_are_ordered_whatever_the_raw_scores():
    fam = Mixture("normal", n_components=3)
    raw = torch.as_tensor(np.random.default_rng(0).normal(scale=3.0, size=(500, 8)))
    p = fam.params_from_raw(raw)
    assert (p["loc_1"] > p["loc_0"]).all() and (p["loc_2"] > p["loc_1"]).all()
    back = fam.raw_from_params({k: v.numpy() for k, v in p.items()})
    np.testing.assert_allclose(back, raw.numpy(), rtol=1e-9, atol=1e-9)
    pos = Mixture("gamma", n_components=2)  # ordered by the concentration, on the log scale
    q = pos.params_from_raw(raw[:, :5])
    assert (q["concentration_1"] > q["concentration_0"]).all()


def test_state_round_trips_and_bad_arguments_are_refused():
    fam = Mixture("lognormal", n_components=3, links={"scale": "softplus"})
    back = db.families.from_state(json.loads(json.dumps(fam.get_state())))
    assert isinstance(back, Mixture) and back.get_state() == fam.get_state()
    assert back.links["scale_2"].name == "softplus"
    with pytest.raises(ValueError, match="n_components must be an integer >= 2"):
        Mixture("normal", n_components=1)
    with pytest.raises(ValueError, match="continuous component.*poisson"):
        Mixture("poisson", n_components=2)


def test_boosted_mixture_on_bimodal_data(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, size=400)
    y = np.where(rng.uniform(size=400) < 0.5, 1, -1) * (1.5 + x) + 0.3 * rng.normal(size=400)
    X = pd.DataFrame({"x": x})
    model = db.DistributionalRegressor(family=Mixture("normal", n_components=2),
                                       n_estimators=30, learning_rate=0.2,
                                       early_stopping=False, random_state=0).fit(X, y)
    dist = model.predict_dist(X)
    normal = db.DistributionalRegressor(family="normal", n_estimators=30, learning_rate=0.2,
                                        early_stopping=False,
                                        random_state=0).fit(X, y).predict_dist(X)
    assert dist.nll(y).mean() < normal.nll(y).mean() - 0.3
    q = dist.quantile([0.05, 0.5, 0.95])
    np.testing.assert_allclose(dist.cdf(q), np.tile([0.05, 0.5, 0.95], (400, 1)), atol=1e-6)
    assert np.isfinite(dist.crps(y)).all()
    path = tmp_path / "mixture.json"
    model.save(path)
    back = db.load(path)
    pd.testing.assert_frame_equal(back.predict_params(X), model.predict_params(X),
                                  check_exact=True)
