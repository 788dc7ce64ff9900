"""Tests of distboost.links."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.distributions import constraints

from distboost.links import RAW_BOUND, available_links, get_link, link_for_constraint

NAMES = ["identity", "exp", "log", "softplus", "sigmoid", "logit"]


@pytest.mark.parametrize("name", NAMES)
def test_round_trip(name):
    link = get_link(name)
    raw = torch.linspace(-8, 8, 101, dtype=torch.float64)
    np.testing.assert_allclose(link.inverse(link.forward(raw)).numpy(), raw.numpy(), rtol=1e-9,
                               atol=1e-9)
    values = link.forward(raw).numpy()
    np.testing.assert_allclose(link.forward(link.inverse(values)).numpy(), values, rtol=1e-9)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", NAMES)
def test_finite_with_finite_gradients_on_the_raw_range(name, dtype):
    link = get_link(name)
    raw = torch.linspace(-RAW_BOUND, RAW_BOUND, 201, dtype=dtype, requires_grad=True)
    out = link.forward(raw)
    (g,) = torch.autograd.grad(out.sum(), raw)
    assert torch.isfinite(out).all() and torch.isfinite(g).all()
    low, high = link.domain
    assert (out.detach() >= low).all() and (out.detach() <= high).all()


@pytest.mark.parametrize("name", NAMES)
def test_derivative_matches_autograd(name):
    link = get_link(name)
    raw = torch.linspace(-10, 10, 41, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(link.forward(raw).sum(), raw)
    np.testing.assert_allclose(link.derivative(raw.detach()).numpy(), g.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name", ["exp", "softplus", "sigmoid"])
def test_inverse_at_domain_boundary_is_finite(name):
    link = get_link(name)
    low, high = link.domain
    edge = np.array([low] + ([high] if np.isfinite(high) else [1e300]))
    out = link.inverse(edge)
    assert isinstance(out, np.ndarray) and np.isfinite(out).all()
    lo, hi = link.raw_bounds
    assert (out >= lo).all() and (out <= hi).all() and lo == -RAW_BOUND


@pytest.mark.parametrize("value", [50.0, 300.0, 1e4, 1e9])
def test_softplus_reaches_values_beyond_the_raw_bound(value):
    """Issue 52: the raw clamp at 50 capped a softplus parameter at 50 (softplus grows
    linearly): a Weibull scale of hundreds was fitted as 50, every median a tenth of the
    data, without a warning."""
    link = get_link("softplus")
    raw = link.inverse(np.array([value]))
    np.testing.assert_allclose(link.forward(raw).numpy(), [value], rtol=1e-12)
    assert link.derivative(torch.as_tensor(raw)).item() > 0.99


def test_unknown_link_lists_known_names():
    with pytest.raises(ValueError, match="known links are"):
        get_link("probit")
    assert set(NAMES) <= set(available_links())


def test_link_for_constraint_follows_transform_to():
    assert get_link("identity") == link_for_constraint(constraints.real)
    assert link_for_constraint(constraints.positive).name == "exp"
    assert link_for_constraint(constraints.nonnegative).name == "exp"
    assert link_for_constraint(constraints.unit_interval).name == "sigmoid"
    with pytest.raises(ValueError, match="No default link"):
        link_for_constraint(constraints.interval(2.0, 5.0))
