"""Expected Fisher information (``distboost.families.numerics.fisher`` and the families' closed
forms).

* every family's closed form (or, without one, the Monte Carlo estimate) against the other
  expression of the information, ``E[-Hessian]``, from independent draws (rows of
  ``family_cases.py``);
* the per-row quadrature: close to every continuous closed form, close to a large Monte Carlo
  estimate for truncated families, and per-row pure: the information of a row is bit-identical
  whatever other rows sit in its batch and in whichever order, and whatever the call number.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from family_cases import FAMILIES, case
from family_cases import family as _family

import distboost as db
from distboost.families import Censored, Truncated
from distboost.families.numerics.fisher import (
    fisher_monte_carlo,
    fisher_quadrature,
    make_fisher_fn,
    quadrature_levels,
)


def _cases(name):
    return case(name).params


def _expected_negative_hessian(family, raw, m, seed):
    params = family.params_from_raw(raw)
    y = family.sample(params, m, seed).reshape(-1)
    rep = raw.repeat(m, 1).requires_grad_(True)
    (g,) = torch.autograd.grad(family.nll(rep, y).sum(), rep, create_graph=True)
    rows = [torch.autograd.grad(g[:, k].sum(), rep, retain_graph=True)[0].mean(0)
            for k in range(family.n_params)]
    return torch.stack(rows).unsqueeze(0).detach()


def _slow_without_closed_form(name):
    """Families without a closed form compare two Monte Carlo estimates: slow for tweedie."""
    return pytest.param(name, marks=pytest.mark.slow) if name == "tweedie" else name


@pytest.mark.parametrize("name", [_slow_without_closed_form(f) for f in FAMILIES])
def test_fisher_information_matches_monte_carlo(name):
    from distboost.families.numerics.fisher import fisher_monte_carlo

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
    # 200,000 draws: the largest error is 0.32 of the tolerance over the fast families and
    # seeds 1-10 (0.21 with 400,000 draws, 0.62 with 100,000).
    mc = fisher_monte_carlo(family, raw, m=200_000, seed=1)
    np.testing.assert_allclose(mc[0].numpy(), exact[0].numpy(), rtol=0.03,
                               atol=0.03 * exact[0].abs().max().item())




@pytest.mark.parametrize("links", [None, {"scale": "softplus"}, {"loc": "identity"}])
def test_normal_raw_fisher_shortcut_equals_the_chain_rule(links):
    """Normal.fisher_information's closed form for the default links is the general chain rule
    ``J^T I(theta) J`` (and other links take the general path)."""
    from distboost.families.base import Family

    fam = db.families.get("normal", links=links)
    raw = torch.as_tensor(np.random.default_rng(0).normal(scale=3.0, size=(500, 2)))
    torch.testing.assert_close(fam.fisher_information(raw), Family.fisher_information(fam, raw),
                               rtol=1e-12, atol=0.0)


# ---------------------------------------------------------------------------- quadrature
def _relative_gap(a: torch.Tensor, b: torch.Tensor) -> float:
    if b.dim() == 2:
        b = torch.diag_embed(b)
    scale = torch.diagonal(b, dim1=1, dim2=2).amax(dim=1)[:, None, None]
    return ((a - b) / scale).abs().max().item()


def test_quadrature_levels_integrate_polynomials_in_u():
    u, w = quadrature_levels(32)
    assert ((u > 0) & (u < 1)).all()
    assert w.sum() == pytest.approx(1.0, abs=1e-14)
    for k in range(1, 6):
        assert (w * u**k).sum() == pytest.approx(1.0 / (k + 1), rel=1e-12)


# Continuous laws only: the quadrature over quantile levels needs a continuous quantile function
# (a point mass makes the scores a step function of the level), and scores that change
# smoothly with y (histogram's are constant on each bin: a step function of the level too).
STEP_SCORES = {"histogram"}
CONTINUOUS = [f for f in FAMILIES if not _family(f).discrete
              and _family(f).point_mass is None and f not in STEP_SCORES]


@pytest.mark.parametrize("name", CONTINUOUS)
def test_quadrature_matches_the_closed_form(name):
    fam = _family(name)
    rng = np.random.default_rng(0)
    base = torch.as_tensor(fam.raw_from_params(_cases(name)[0]))
    raw = base + torch.as_tensor(rng.normal(0.0, 0.3, size=(40, fam.n_params)))
    quad = fisher_quadrature(fam, raw, m=32)
    # Student's t at small df has the heaviest score tails: 64 levels there.
    tol = 2e-3 if name != "laplace" else 5e-3  # laplace: the kink of |y - loc| at the median
    assert _relative_gap(quad, fam.fisher_information(raw)) < tol
    assert _relative_gap(fisher_quadrature(fam, raw, m=64), fam.fisher_information(raw)) < tol / 3


TRUNCATED = {
    "normal-low": lambda: Truncated("normal", low=0.0),
    "gamma-both": lambda: Truncated("gamma", low=0.5, high=3.0),
    "studentt-high": lambda: Truncated("studentt", high=1.0),
    "logistic-softplus": lambda: Truncated("logistic", low=-1.0, links={"scale": "softplus"}),
}


#: Draws of the Monte Carlo reference: the truncated gamma's and Student's t's are drawn by
#: inverting their cdfs numerically (some 10 x the cost of the others' draws), and their gap
#: to the quadrature is the smallest (at most 0.009 and 0.014 with 100,000 draws on seeds
#: 1-8, against 0.023 and 0.016 for the Normal and the logistic with 200,000).
TRUNCATED_DRAWS = {"normal-low": 200_000, "gamma-both": 100_000, "studentt-high": 100_000,
                   "logistic-softplus": 200_000}


def _truncated_raw(fam, n, seed):
    rng = np.random.default_rng(seed)
    start = {"normal": [0.3, 0.0], "gamma": [0.7, 0.2], "studentt": [1.5, 0.0, -0.2],
             "logistic": [0.0, 0.5]}[fam.inner.name]
    return torch.as_tensor(np.asarray(start) + rng.normal(0.0, 0.3, size=(n, fam.n_params)))


@pytest.mark.parametrize("case_id", TRUNCATED)
def test_truncated_families_information_matches_monte_carlo(case_id):
    fam = TRUNCATED[case_id]()
    closed = fam.fisher_information(torch.zeros((1, fam.n_params), dtype=torch.float64))
    # The truncated Normal has a closed form; the other inner families use the quadrature.
    assert (closed is not None) == (fam.inner.name == "normal")
    raw = _truncated_raw(fam, 3, seed=1)
    quad = make_fisher_fn(fam)(raw, {})
    mc = fisher_monte_carlo(fam, raw, m=TRUNCATED_DRAWS[case_id], seed=3)
    # Monte Carlo error: about 1% of the largest diagonal entry.
    assert _relative_gap(quad, mc) < 0.04
    np.testing.assert_allclose(quad, quad.transpose(1, 2), atol=1e-12)
    assert (torch.linalg.eigvalsh(quad) > -1e-10).all()


@pytest.mark.parametrize("case_id", TRUNCATED)
def test_quadrature_is_per_row_pure(case_id):
    fam = TRUNCATED[case_id]()
    fisher = make_fisher_fn(fam)
    raw = _truncated_raw(fam, 64, seed=2)
    full = fisher(raw, {})
    # Other rows replaced by different values: every kept row is bit-identical.
    other = _truncated_raw(fam, 64, seed=9)
    keep = torch.zeros(64, dtype=torch.bool)
    keep[::5] = True
    mixed = torch.where(keep[:, None], raw, other)
    assert torch.equal(fisher(mixed, {})[keep], full[keep])
    # Any permutation, and a second call (no call counter, no seed): bit-identical.
    perm = torch.as_tensor(np.random.default_rng(0).permutation(64))
    assert torch.equal(fisher(raw[perm], {}), full[perm])
    assert torch.equal(fisher(raw, {}), full)
    # Subsets and single rows: equal up to the rounding of torch's elementwise kernels,
    # whose vectorised and scalar (tail) loops round sigmoid, pow or softplus differently in
    # the last bit, depending only on the batch length.
    for rows in (torch.arange(5, 40, 3), torch.tensor([7]), torch.arange(0, 64, 2)):
        torch.testing.assert_close(fisher(raw[rows], {}), full[rows], rtol=1e-14, atol=0.0)


TRUNCATED_NORMAL = {"low": {"low": 0.0}, "high": {"high": 1.0},
                    "both": {"low": -0.5, "high": 2.0}, "narrow": {"low": 0.0, "high": 0.05}}


@pytest.mark.parametrize("ends", TRUNCATED_NORMAL)
def test_truncated_normal_closed_form_equals_the_quadrature(ends):
    fam = Truncated("normal", **TRUNCATED_NORMAL[ends])
    rng = np.random.default_rng(5)
    raw = torch.as_tensor(np.c_[rng.uniform(-2, 2, 60), rng.uniform(-0.7, 0.7, 60)])
    closed = fam.fisher_information(raw)
    quad = fisher_quadrature(fam, raw, m=1000)
    assert _relative_gap(closed, quad) < 1e-8
    assert fam.fisher_natural(fam.params_from_raw(raw)).shape == (60, 2, 2)


def test_truncated_normal_far_in_a_tail_keeps_a_finite_positive_information():
    """An end up to 1e6 scales above the mean: the moments' differences cancel from about 10
    scales on, where the edge quadrature takes over; it agrees with the closed form where
    both hold and with the exponential limit (Var z ~ 1 / a^2, Cov(z, z^2) ~ 2 / a, Var z^2
    ~ 4) far out."""
    from distboost.families.truncated import _edge_moments

    a = torch.tensor([-2.0, 0.0, 3.0, 5.0, 8.0], dtype=torch.float64)
    fam = Truncated("normal", low=0.0)
    closed = fam.fisher_information(torch.stack([-a, torch.zeros_like(a)], dim=1))
    edge = _edge_moments(a, torch.full_like(a, math.inf))
    np.testing.assert_allclose(closed[:, 0, 0], edge[0], rtol=1e-9)
    np.testing.assert_allclose(closed[:, 0, 1], edge[1], rtol=1e-9)
    np.testing.assert_allclose(closed[:, 1, 1], edge[2], rtol=1e-9)
    far = torch.tensor([200.0, 1e4, 1e6], dtype=torch.float64)
    info = fam.fisher_information(torch.stack([-far, torch.zeros_like(far)], dim=1))
    assert torch.isfinite(info).all() and (torch.linalg.eigvalsh(info) > 0).all()
    np.testing.assert_allclose(info[:, 0, 0] * far**2, 1.0, rtol=1e-3)
    np.testing.assert_allclose(info[:, 0, 1] * far / 2.0, 1.0, rtol=1e-3)
    np.testing.assert_allclose(info[:, 1, 1], 4.0, rtol=1e-3)
    # The mirror image: an upper end far below the mean.
    upper = Truncated("normal", high=0.0)
    mirror = upper.fisher_information(torch.stack([far, torch.zeros_like(far)], dim=1))
    np.testing.assert_allclose(mirror[:, 0, 1], -info[:, 0, 1], rtol=1e-9)
    np.testing.assert_allclose(mirror[:, 1, 1], info[:, 1, 1], rtol=1e-9)


def test_censored_family_without_a_closed_form_uses_its_latent_law():
    fam = Censored(Truncated("logistic", low=0.0))
    raw = _truncated_raw(fam.inner, 6, seed=4)
    got = make_fisher_fn(fam)(raw, {"y": None})
    torch.testing.assert_close(got, fisher_quadrature(fam.inner, raw), rtol=0, atol=0)


class _NoQuantiles(type(db.families.get("normal"))):
    """A family without a quantile function and without a closed-form Fisher."""

    name = "test_normal_without_icdf"

    def fisher_natural(self, params):
        return None

    def fisher_information(self, raw):
        return None

    def icdf(self, params, q):
        raise NotImplementedError


def test_family_without_quantiles_falls_back_to_seeded_monte_carlo():
    fam = _NoQuantiles()
    raw = torch.zeros((2, 2), dtype=torch.float64)
    fisher = make_fisher_fn(fam, m=20_000, seed=5)
    a, b = fisher(raw, {}), fisher(raw, {})
    assert torch.equal(a, b)  # a fixed seed, no call counter
    np.testing.assert_allclose(torch.diagonal(a, dim1=1, dim2=2), [[1.0, 2.0]] * 2, atol=0.1)
