"""The multivariate Normal family (``distboost/families/multivariate.py``): density against
scipy, gradients against finite differences, the closed-form Fisher information against
Monte Carlo, the closed-form MLE against numpy, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch
from family_cases import VECTOR_FAMILIES, assert_fisher_matches_monte_carlo

import distboost as db
from distboost.families.multivariate import MultivariateNormal

DIMS = [2, 3, 5]


def _family(d):
    return db.families.get("multivariate_normal").with_dim(d)


def _raw(fam, n, seed, spread=0.5):
    rng = np.random.default_rng(seed)
    return torch.as_tensor(rng.normal(0.0, spread, size=(n, fam.n_params)))


def test_every_vector_family_has_tests():
    assert sorted(VECTOR_FAMILIES) == ["dirichlet", "multivariate_normal"]


def test_outputs_are_the_mean_then_the_lower_triangle():
    fam = _family(3)
    assert fam.n_params == 3 + 6
    assert fam.param_names[3:] == ("scale_tril_0_0", "scale_tril_1_0", "scale_tril_1_1",
                                   "scale_tril_2_0", "scale_tril_2_1", "scale_tril_2_2")
    assert {p: lk.name for p, lk in fam.links.items() if p.startswith("scale")} == {
        "scale_tril_0_0": "exp", "scale_tril_1_0": "identity", "scale_tril_1_1": "exp",
        "scale_tril_2_0": "identity", "scale_tril_2_1": "identity", "scale_tril_2_2": "exp"}


@pytest.mark.parametrize("d", DIMS)
def test_log_density_matches_scipy(d):
    fam = _family(d)
    raw = _raw(fam, 12, seed=d)
    params = fam.params_from_raw(raw)
    s = fam.structure(params)
    cov = fam.covariance(params).numpy()
    y = np.random.default_rng(d).normal(size=(12, d)) * 2.0
    got = fam.log_prob(params, torch.as_tensor(y)).numpy()
    want = [st.multivariate_normal(s["loc"][i].numpy(), cov[i]).logpdf(y[i]) for i in range(12)]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-8)
    # torch's own distribution agrees too, and samples broadcast as (m, n, d)
    np.testing.assert_allclose(fam.distribution(params).log_prob(torch.as_tensor(y)).numpy(),
                               want, rtol=1e-10, atol=1e-8)
    many = torch.as_tensor(np.random.default_rng(0).normal(size=(4, 12, d)))
    assert fam.log_prob(params, many).shape == (4, 12)


@pytest.mark.parametrize("d", [2, 3])
def test_gradient_of_every_raw_output_matches_finite_differences(d):
    fam = _family(d)
    raw = _raw(fam, 6, seed=10 + d)
    y = torch.as_tensor(np.random.default_rng(d).normal(size=(6, d)))
    r = raw.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(fam.nll(r, y).sum(), r)
    eps = 1e-6
    for k in range(fam.n_params):
        step = torch.zeros_like(raw)
        step[:, k] = eps
        fd = (fam.nll(raw + step, y) - fam.nll(raw - step, y)) / (2 * eps)
        np.testing.assert_allclose(grad[:, k].numpy(), fd.numpy(), rtol=1e-6, atol=1e-7,
                                   err_msg=fam.param_names[k])


@pytest.mark.parametrize("d", [2, 3])
def test_fisher_information_matches_monte_carlo(d):
    """E[g g^T] of the score over draws from the model equals the closed form, each entry
    within five Monte Carlo standard errors."""
    fam = _family(d)
    raw = _raw(fam, 1, seed=20 + d, spread=0.6)
    assert_fisher_matches_monte_carlo(fam, raw, seed=d)


def test_fisher_of_the_log_diagonal_is_two_when_parts_are_independent():
    """With a diagonal L, the log-diagonal outputs carry information 2 (as log sigma of a
    Normal) and the output b_10 = L_10 / L_11 carries 1: y_1 given y_0 is Normal with mean
    L_11 b_10 z_0 and standard deviation L_11, z_0 standard Normal."""
    fam = _family(2)
    params = {"loc_0": torch.tensor([0.0]), "loc_1": torch.tensor([0.0]),
              "scale_tril_0_0": torch.tensor([2.0]), "scale_tril_1_0": torch.tensor([0.0]),
              "scale_tril_1_1": torch.tensor([0.5])}
    raw = torch.as_tensor(fam.raw_from_params({k: v.numpy() for k, v in params.items()}))
    info = fam.fisher_information(raw)[0].numpy()
    np.testing.assert_allclose(np.diag(info), [1 / 4, 4.0, 2.0, 1.0, 2.0], rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_mle_is_the_weighted_mean_and_covariance(weighted):
    rng = np.random.default_rng(3)
    y = rng.multivariate_normal([1.0, -2.0, 5.0], [[2.0, 0.6, 0.1], [0.6, 1.0, -0.3],
                                                   [0.1, -0.3, 0.5]], size=400)
    w = rng.uniform(0.2, 3.0, size=400) if weighted else None
    fam = _family(3)
    p = fam.init(y, w)
    dist = db.Predictive(fam, {k: [v] for k, v in p.items()})
    np.testing.assert_allclose(dist.mean[0], np.average(y, axis=0, weights=w), rtol=1e-12)
    np.testing.assert_allclose(dist.covariance[0], np.cov(y.T, aweights=w, bias=True),
                               rtol=1e-10)


def test_mle_is_exact_for_a_target_offset_by_1e9():
    rng = np.random.default_rng(4)
    y = rng.multivariate_normal([0.0, 0.0], [[1.0, 0.8], [0.8, 1.0]], size=300)
    fam = _family(2)
    a, b = fam.init(y), fam.init(y + 1e9)
    assert b["loc_0"] - 1e9 == pytest.approx(a["loc_0"], abs=1e-6)
    for p in ("scale_tril_0_0", "scale_tril_1_0", "scale_tril_1_1"):
        assert b[p] == pytest.approx(a[p], rel=1e-6)


def test_constant_or_collinear_parts_are_clear_errors():
    rng = np.random.default_rng(5)
    x = rng.normal(size=50)
    fam = _family(2)
    with pytest.raises(ValueError, match=r"part\(s\) \['y1'\].*constant over all 50 rows"):
        fam.init(np.c_[x, np.full(50, 3.0)])
    with pytest.raises(ValueError, match="collinear over the 50 rows"):
        fam.init(np.c_[x, 1.0 - 2.0 * x])


def test_placeholder_and_shape_errors():
    fam = db.families.get("multivariate_normal")
    with pytest.raises(ValueError, match="does not know its number of parts"):
        fam.param_names  # noqa: B018
    with pytest.raises(ValueError, match=r"needs dim >= 2 parts"):
        MultivariateNormal(dim=1)
    with pytest.raises(ValueError, match=r"y must have shape \(n, d\) with d >= 2 columns; got "
                                         r"shape \(7,\)"):
        fam.encode_target(np.zeros(7))
    with pytest.raises(ValueError, match=r"built for d=2 parts: y must have shape \(n, 2\)"):
        _family(2).validate_y(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="1 of 2 rows with NaN"):
        _family(2).validate_y(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="has no output 'scale_0'"):
        db.families.get("dirichlet", links={"scale_0": "exp"}).with_dim(2)
    with pytest.raises(ValueError, match="has fixed links"):
        db.families.get("multivariate_normal", links={"loc_0": "exp"})


def test_one_shift_of_the_log_diagonal_scales_the_covariance():
    fam = _family(3)
    raw = _raw(fam, 4, seed=8)
    shifted = raw.clone()
    shifted[:, [fam.param_names.index(p) for p in fam.dispersion_params]] += 0.3
    np.testing.assert_allclose(fam.covariance(fam.params_from_raw(shifted)),
                               np.exp(0.6) * fam.covariance(fam.params_from_raw(raw)),
                               rtol=1e-12)
    back = fam.raw_from_params({k: v.numpy() for k, v in fam.params_from_raw(raw).items()})
    np.testing.assert_allclose(back, raw.numpy(), rtol=1e-12, atol=1e-12)


def test_structure_and_flatten_are_inverse():
    fam = _family(4)
    raw = _raw(fam, 5, seed=1)
    params = fam.params_from_raw(raw)
    s = fam.structure(params)
    assert s["loc"].shape == (5, 4) and s["scale_tril"].shape == (5, 4, 4)
    assert torch.equal(torch.triu(s["scale_tril"], 1), torch.zeros(5, 4, 4, dtype=torch.float64))
    flat = fam.flatten({k: v.numpy() for k, v in s.items()})
    for p in fam.param_names:
        np.testing.assert_array_equal(flat[p], params[p].numpy())


def test_margins_are_normal_with_the_covariance_diagonal():
    fam = _family(3)
    params = fam.params_from_raw(_raw(fam, 4, seed=2))
    cov = fam.covariance(params)
    for j in range(3):
        marg, mp = fam.marginal(params, j)
        assert marg.name == "normal"
        np.testing.assert_allclose(mp["scale"] ** 2, cov[:, j, j], rtol=1e-12)
        np.testing.assert_array_equal(mp["loc"], params[f"loc_{j}"])


def test_univariate_functions_refuse_clearly():
    fam = _family(2)
    params = fam.params_from_raw(_raw(fam, 2, seed=0))
    for call in (lambda: fam.cdf(params, 0.0), lambda: fam.icdf(params, 0.5),
                 lambda: fam.crps(params, 0.0)):
        with pytest.raises(ValueError, match="vector of 2 parts"):
            call()
