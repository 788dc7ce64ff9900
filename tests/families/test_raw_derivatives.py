"""Closed-form raw derivatives (``Family.raw_derivatives``,
:mod:`distboost.families.numerics.likelihood`) against autograd, on every family of the case
table that has them.

The closed form must give what the autograd path gives: the per-row NLL, its gradient with
respect to the raw scores (through the links, their clamps and the raw floors) and the
Fisher information at the floored scores, to 1e-10 in float64, at random raw scores around
both parameter sets of each family, beyond the links' clamps, below and exactly at a floor.
The censored and truncated twins are held to the same when they have a closed form, and
otherwise must leave the engine on autograd; so must a user's family without a formula.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from family_cases import FAMILIES, PAIR_IDS, PAIRS, case, draws, marked, scipy_law
from family_cases import family as _family

import distboost as db
from distboost.boosting.derivatives import step_derivatives
from distboost.estimators.booster import Booster
from distboost.families import Censored, Truncated
from distboost.families.numerics.likelihood import link_value_and_derivative
from distboost.links import RAW_BOUND
from distboost.objective import FamilyObjective

N = 64
TOL = 1e-10


def _raw(fam, p, seed):
    """Raw scores around ``p``: noise, and a floor per column that about a third of the rows
    lie below and two rows lie exactly on."""
    rng = np.random.default_rng(seed)
    raw = fam.raw_from_params(p) + rng.normal(scale=0.3, size=(N, fam.n_params))
    floor = np.quantile(raw[2:], 0.3, axis=0)
    raw[:2] = floor
    return torch.as_tensor(raw), torch.as_tensor(floor)


def test_the_closed_form_links_are_the_ones_the_chain_rule_handles():
    # zero mixtures check their base's links against CLOSED_FORM_LINKS; the chain rule
    # (link_value_and_derivative) must handle exactly those and refuse the others.
    from distboost.families.numerics.likelihood import CLOSED_FORM_LINKS

    raw = torch.zeros(3, dtype=torch.float64)
    for name in db.links.available_links():
        link = db.links.get_link(name)
        handled = link_value_and_derivative(link, raw) is not None
        assert handled == (link.name in CLOSED_FORM_LINKS), name


@pytest.mark.parametrize("link", ["identity", "exp", "softplus", "sigmoid"])
def test_link_derivative_equals_autograd_of_the_clamped_forward_map(link):
    """Beyond and exactly at the clamp ``+-RAW_BOUND`` (and, for the sigmoid, where it stops
    at ``1 - eps``) the derivative is autograd's of :meth:`Link.forward`."""
    lk = db.links.get_link(link)
    raw = torch.tensor([-RAW_BOUND - 3.0, -RAW_BOUND, -3.0, 0.0, 2.5, 36.0, 37.0, RAW_BOUND,
                        RAW_BOUND + 3.0], dtype=torch.float64)
    value, deriv, plain = link_value_and_derivative(lk, raw)
    r = raw.clone().requires_grad_(True)
    forward = lk.forward(r)
    (g,) = torch.autograd.grad(forward.sum(), r)
    np.testing.assert_array_equal(value.numpy(), forward.detach().numpy())
    np.testing.assert_allclose(torch.ones_like(raw) if deriv is None else deriv, g,
                               rtol=1e-15, atol=0)
    np.testing.assert_allclose(torch.ones_like(raw) if plain is None else plain,
                               lk.derivative(raw), rtol=1e-15, atol=0)


def _autograd(fam, raw, y, floor):
    """NLL, raw gradient and Fisher information of the autograd path: ``nll`` at
    ``clamp(raw, min=floor)`` (the objective's floor) differentiated by autograd."""
    r = raw.clone().requires_grad_(True)
    nll = fam.nll(torch.clamp(r, min=floor), y)
    (g,) = torch.autograd.grad(nll.sum(), r)
    return nll.detach(), g, fam.fisher_information(torch.clamp(raw, min=floor))


def _assert_equal(fast, slow, what):
    """Each of ``(nll, grad, fisher)`` equal to 1e-10: the NLL relative to each row's value,
    gradient and Fisher entries relative to their column's largest magnitude (an entry that
    cancels to about zero is compared on its column's scale)."""
    for a, b, part in zip(fast, slow, ("nll", "grad", "fisher"), strict=True):
        a, b = a.numpy(), b.numpy()
        assert a.shape == b.shape, (what, part)
        assert np.array_equal(np.isfinite(a), np.isfinite(b)), (what, part)
        ok = np.isfinite(b)
        err = np.abs(np.where(ok, a - b, 0.0))
        if part == "nll":
            bound = TOL * np.abs(np.where(ok, b, 0.0))
        else:
            bound = TOL * np.max(np.abs(np.where(ok, b, 0.0)), axis=0, keepdims=True)
        assert np.all(err <= bound + 1e-300), (what, part, float(np.max(err - bound)))


def _y(name, p, seed=0):
    return torch.as_tensor(draws(name, p, N, seed))


#: Families of the table whose derivatives are autograd only (no closed form yet).
AUTOGRAD_ONLY = {"tweedie", "ordinal_logit", "categorical"}


@pytest.mark.parametrize(("name", "i"), marked(PAIRS, name_of=lambda item: item[0]),
                         ids=PAIR_IDS)
def test_closed_form_equals_autograd(name, i):
    fam = _family(name)
    p = case(name).params[i]
    y = _y(name, p, seed=i)
    raw, floor = _raw(fam, p, seed=i)
    fast = fam.raw_derivatives(raw, y, floor)
    if name in AUTOGRAD_ONLY:
        assert fast is None
        return
    assert fast is not None, f"{name} has no closed-form raw derivatives"
    _assert_equal(fast, _autograd(fam, raw, y, floor), f"{name}-{i}")
    # Without a floor.
    _assert_equal(fam.raw_derivatives(raw, y), _autograd(fam, raw, y, torch.full_like(
        floor, -torch.inf)), f"{name}-{i} no floor")


def _bounds(y, support, rng):
    """Exact, right-, left- and interval-censored rows around the values ``y``."""
    kind = rng.integers(0, 4, size=y.size)
    width = 0.2 * np.std(y)
    bottom = support.low if np.isfinite(support.low) else -np.inf
    lo = np.where(kind == 2, bottom, np.where(kind == 3, np.maximum(y - width, bottom), y))
    hi = np.where(kind == 1, np.inf, np.where(kind == 3, y + width, y))
    return np.column_stack([lo, hi])


CENSORABLE = [f for f in FAMILIES if _family(f).censorable]


@pytest.mark.parametrize("name", CENSORABLE)
def test_censored_and_truncated_twins_equal_autograd_or_leave_it_to_autograd(name):
    """A wrapper's closed form equals autograd of its own NLL; without one the objective
    gives the engine no ``derivatives`` (autograd then)."""
    rng = np.random.default_rng(1)
    p = case(name).params[0]
    y = draws(name, p, N, 1)
    cen = Censored(name)
    bounds = _bounds(y, cen.support, rng)
    inner = _family(name)
    lo = float(np.quantile(y, 0.2))
    trunc = Truncated(inner, low=lo)
    for fam, target in ((cen, bounds), (trunc, np.maximum(y, lo))):
        y_t = torch.as_tensor(target)
        raw, floor = _raw(fam, p, seed=2)
        fast = fam.raw_derivatives(raw, y_t, floor)
        if fam is cen:  # the latent family's closed form serves the exact rows
            assert fast is not None, fam.name
        if fast is None:
            assert FamilyObjective(fam, target, init_params=p).derivatives() is None
            continue
        _assert_equal(fast, _autograd(fam, raw, y_t, floor), fam.name)


@pytest.mark.parametrize("name", marked([f for f in FAMILIES if f not in AUTOGRAD_ONLY
                                         and case(f).estimator == "regressor"]))
def test_the_objective_takes_the_closed_form_and_its_step_equals_autograds(name):
    """The engine's pair (grad, hess) of the family's default step rule, from the closed form
    (``FamilyObjective.derivatives``) and from autograd plus the Fisher callable, at the
    floored start values plus noise: the same to 1e-10."""
    fam = _family(name)
    p = case(name).params[0]
    y = draws(name, p, N, 3)
    obj = FamilyObjective(fam, y, warn=False, init_params=p)
    assert obj.derivatives() is not None
    rng = np.random.default_rng(4)
    raw = torch.as_tensor(obj.init_raw + rng.normal(scale=0.3, size=(N, obj.n_outputs)))
    data = obj.data(None, y)
    step = fam.default_step
    fast = step_derivatives(obj.loss, raw, data, step, derivatives=obj.derivatives(),
                            curvature_scale=np.ones(obj.n_outputs))
    slow = step_derivatives(obj.loss, raw, data, step, fisher=obj.fisher(0),
                            curvature_scale=np.ones(obj.n_outputs))
    for a, b in zip(fast, slow, strict=True):
        scale = np.max(np.abs(b), axis=0) if b.ndim == 2 else np.max(np.abs(b))
        assert np.all(np.abs(a - b) <= TOL * scale), name


def test_a_user_family_and_a_booster_loss_keep_autograd():
    """A family without ``score_formula`` has no closed form: its objective leaves the engine
    on autograd (``test_toy_family.py`` fits such families); a ``Booster`` with its own loss
    fits through autograd."""

    class Shifted(db.families.base.Family):
        name, torch_class, param_names = "shifted_normal", torch.distributions.Normal, (
            "loc", "scale")

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 2))
    y = X[:, 0] + rng.normal(size=120)
    assert FamilyObjective(Shifted(), y, init_params={"loc": 0.0, "scale": 1.0}
                           ).derivatives() is None
    booster = Booster(lambda raw, d: (raw[:, 0] - d["y"]) ** 2, n_estimators=5,
                      step="newton").fit(X, {"y": y})
    assert np.isfinite(booster.predict_raw(X)).all()


def test_a_fit_of_the_closed_form_families_imports_no_sympy():
    """Building a ``TransformedDistribution`` (torch's Gumbel and Weibull, distboost's logistic
    and log-logistic laws) calls ``torch.broadcast_shapes``, which imports SymPy: about 0.3 s
    of CPU in a fresh process, paid by the first fit.  The families compute their log density
    without the distribution object, so a fresh interpreter fitting them (censored twin
    included) never imports SymPy."""
    import subprocess
    import sys

    code = (
        "import sys, numpy as np, distboost as db\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.normal(size=(300, 3)); y = np.exp(X[:, 0] + 0.5 * rng.normal(size=300))\n"
        "for f in ('gumbel', 'logistic', 'loglogistic', 'weibull', 'censored_weibull'):\n"
        "    t = db.censored.right(y, y < 3) if f.startswith('censored') else y\n"
        "    db.DistributionalRegressor(family=f, n_estimators=5, early_stopping=False,\n"
        "                               random_state=0).fit(X, t)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sympy')[:3])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


TAILED = [f for f in CENSORABLE if getattr(_family(f), "sf_formula", None) is not None]


@pytest.mark.parametrize("name", TAILED)
def test_closed_form_tails_equal_autograd_far_in_both_tails(name):
    """The right- and left-censored rows' closed forms (``distboost.families.numerics.tails``) at
    bounds from the median out to quantiles 1e-300 and 1 - 1e-100 (the hazard and the
    reversed hazard grow without bound there): autograd of the family's own ``log_sf`` and
    ``log_cdf`` to 1e-10, and finite wherever autograd is."""
    assert getattr(_family(name), "cdf_formula", None) is not None
    fam = Censored(name)
    inner = _family(name)
    p = case(name).params[0]
    law = scipy_law(name, p)
    x = np.concatenate([law.ppf([1e-300, 1e-100, 1e-15, 1e-6, 0.3, 0.5, 0.7]),
                        law.isf([1e-6, 1e-15, 1e-100])])
    assert np.all(np.isfinite(x) & (x > inner.support.low)), x
    x = torch.as_tensor(x)
    bottom = inner.support.low if np.isfinite(inner.support.low) else -np.inf
    bounds = torch.cat([torch.stack([x, torch.full_like(x, np.inf)], 1),
                        torch.stack([torch.full_like(x, bottom), x], 1)])
    raw = torch.as_tensor(np.repeat(inner.raw_from_params(p)[None, :], bounds.shape[0], 0))
    floor = torch.full((inner.n_params,), -torch.inf, dtype=torch.float64)
    fast = fam.raw_derivatives(raw, bounds, floor)
    _assert_equal(fast, _autograd(fam, raw, bounds, floor), name)


@pytest.mark.parametrize("low, high", [(None, 1.8), (0.4, None), (0.4, 1.8)])
def test_truncated_normal_closed_form_at_either_end_or_autograd_for_both(low, high):
    """A Normal cut at one end: the inner closed form less the tail at the end, equal to
    autograd (floors included); cut at both ends it leaves the rows to autograd."""
    p = case("normal").params[0]
    fam = Truncated("normal", low=low, high=high)
    y = draws("normal", p, 4 * N, 5)
    y = y[(y >= fam.support.low) & (y <= fam.support.high)][:N]
    y_t = torch.as_tensor(y)
    raw, floor = _raw(fam, p, seed=6)
    raw = raw[: y.size]
    fast = fam.raw_derivatives(raw, y_t, floor)
    if low is not None and high is not None:
        assert fast is None
        return
    _assert_equal(fast, _autograd(fam, raw, y_t, floor), f"{low}-{high}")


@pytest.mark.parametrize("base", ["normal", "lognormal", "exponential"])
def test_a_subclass_that_changes_the_law_and_resets_its_formulas_keeps_autograd(base):
    """The closed forms recognise their law by ``score_formula``: a subclass whose log density
    differs (here the law of ``y / 2``) and that resets ``score_formula``, ``sf_formula`` and
    ``cdf_formula`` (docs/writing-a-family.md) gets no closed form, for itself or its
    censored twin, and no closed-form dispersion profile: autograd of its own likelihood."""
    parent = type(_family(base))

    class Halved(parent):
        score_formula = sf_formula = cdf_formula = None

        def log_prob(self, params, y):
            return super().log_prob(params, y / 2.0) - math.log(2.0)

    fam = Halved()
    p = case(base).params[0]
    y = torch.as_tensor(draws(base, p, N, 7))
    raw, floor = _raw(fam, p, seed=8)
    assert fam.raw_derivatives(raw, y, floor) is None
    assert fam.raw_derivatives(raw, y) is None
    assert fam.dispersion_profile(raw, y) is None
    cen = Censored(fam)
    bounds = torch.as_tensor(np.column_stack([y.numpy(), np.where(y.numpy() > np.median(
        y.numpy()), np.inf, y.numpy())]))
    assert cen.raw_derivatives(raw, bounds, floor) is None
    assert FamilyObjective(fam, y.numpy(), warn=False, init_params=p).derivatives() is None


@pytest.mark.parametrize("name", ["zero_inflated_poisson", "zero_inflated_negative_binomial",
                                  "zero_adjusted_gamma"])
def test_a_zero_mixture_with_other_links_takes_the_closed_form_or_autograd(name):
    # softplus has a closed form (the same values as autograd); a link without one leaves
    # the zero mixture on autograd.
    class Cube(db.links.Link):
        name = "cube_of_exp"
        domain = (0.0, np.inf)

        def forward(self, raw):
            return torch.exp(3.0 * raw.clamp(-10.0, 10.0))

        def derivative(self, raw):
            return 3.0 * torch.exp(3.0 * raw.clamp(-10.0, 10.0))

    base = db.families.get(name)
    first = base.base_names[0]
    fam = base.with_links({first: "softplus"})
    p = case(name).params[0]
    y = _y(name, p)
    raw, floor = _raw(fam, p, seed=0)
    fast = fam.raw_derivatives(raw, y, floor)
    assert fast is not None
    _assert_equal(fast, _autograd(fam, raw, y, floor), f"{name} softplus")
    assert base.with_links({first: Cube()}).raw_derivatives(raw, y, floor) is None


@pytest.mark.parametrize("name", ["exponential", "half_normal", "poisson"])
def test_the_one_parameter_torch_path_equals_autograd(name, monkeypatch):
    # Above NUMPY_ROWS rows (or on a GPU) the one-parameter families take the torch twin
    # of their numpy formulas: here on every row count, with a floor and beyond the clamp.
    from distboost.families.numerics import one_parameter as _one_parameter

    monkeypatch.setattr(_one_parameter, "NUMPY_ROWS", 0)
    calls = []
    torch_path = _one_parameter._torch_derivatives
    monkeypatch.setattr(_one_parameter, "_torch_derivatives",
                        lambda *args: calls.append(1) or torch_path(*args))
    fam = _family(name)
    for i, p in enumerate(case(name).params):
        y = _y(name, p, seed=i)
        raw, floor = _raw(fam, p, seed=i)
        raw[-1, 0], raw[-2, 0] = RAW_BOUND + 5.0, -RAW_BOUND - 5.0
        _assert_equal(fam.raw_derivatives(raw, y, floor), _autograd(fam, raw, y, floor),
                      f"{name}-{i}")
        no_floor = torch.full_like(floor, -torch.inf)
        _assert_equal(fam.raw_derivatives(raw, y), _autograd(fam, raw, y, no_floor),
                      f"{name}-{i} no floor")
        inside, y_inside = raw[:-2], y[:-2]  # every score within the clamp: no mask
        _assert_equal(fam.raw_derivatives(inside, y_inside),
                      _autograd(fam, inside, y_inside, no_floor), f"{name}-{i} inside")
    assert len(calls) == 6
    # log y! depends on the target alone: kept on a fit's target (the objective's data),
    # not recomputed every round.
    from distboost.families.numerics.special import carry_terms

    y = carry_terms(y.clone())
    fam.raw_derivatives(raw, y, floor)
    lgamma_calls = []
    lgamma = torch.lgamma
    monkeypatch.setattr(torch, "lgamma", lambda x: lgamma_calls.append(1) or lgamma(x))
    fam.raw_derivatives(raw, y, floor)
    assert not lgamma_calls
