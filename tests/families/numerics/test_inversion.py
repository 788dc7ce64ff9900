"""Numerical inversion of a cdf (``distboost.families.numerics.inversion.invert_cdf``) against
scipy's exact quantile functions: real, positive, bounded and integer supports, extreme levels, many
rows at once, and the ends of the support at ``q = 0`` and ``q = 1``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch

from distboost.families.numerics.inversion import invert_cdf
from distboost.families.support import COUNTS, POSITIVE, REAL, UNIT_INTERVAL, Support

LEVELS = np.array([1e-12, 1e-6, 0.01, 0.3, 0.5, 0.77, 0.99, 1 - 1e-6])


def _cdf(law_of_rows):
    """A torch cdf for a scipy law whose parameters are per-row arrays (rows on the last axis)."""
    return lambda x: torch.from_numpy(law_of_rows.cdf(x.numpy()))


@pytest.mark.parametrize("name, support, law", [
    ("normal", REAL, st.norm(loc=np.array([-3.0, 0.0, 1e4]), scale=np.array([0.5, 1.0, 10.0]))),
    ("cauchy", REAL, st.cauchy(loc=np.array([0.0, 5.0, -2.0]), scale=np.array([1.0, 1e3, 0.1]))),
    ("gamma", POSITIVE, st.gamma(a=np.array([0.05, 1.0, 300.0]),
                                 scale=np.array([1.0, 1e-6, 1e3]))),
    ("beta", UNIT_INTERVAL, st.beta(np.array([0.3, 2.0, 50.0]), np.array([0.5, 3.0, 2.0]))),
    ("shifted", Support(low=5.0, high=9.0), st.uniform(loc=5.0, scale=np.array([1.0, 2.0, 4.0]))),
])
def test_continuous_inversion_matches_scipy(name, support, law):
    q = torch.as_tensor(np.repeat(LEVELS[:, None], 3, axis=1))  # (levels, rows)
    x = invert_cdf(_cdf(law), q, support)
    want = law.ppf(q.numpy())
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-8, atol=1e-12 * np.max(law.iqr() if
                                                                               hasattr(law, "iqr")
                                                                               else 1.0))
    # The solution is at the cdf's level up to the density times the bracket's width (the
    # accuracy is relative in x: where the density is infinite, beta(0.3, 0.5) at 1, the level
    # is met to ~1e-6 only).
    np.testing.assert_allclose(law.cdf(x.numpy()), q.numpy(), rtol=1e-6, atol=5e-6)


def test_relative_accuracy_on_a_positive_support_at_tiny_values():
    law = st.expon(scale=np.array([1e-200, 1.0, 1e200]))
    q = torch.full((3,), 0.25, dtype=torch.float64)
    x = invert_cdf(_cdf(law), q, POSITIVE, rtol=1e-12)
    np.testing.assert_allclose(x.numpy(), law.ppf(0.25), rtol=1e-11)


@pytest.mark.parametrize("mean", [0.01, 3.0, 1e4])
def test_integer_inversion_is_the_smallest_k_reaching_q(mean):
    law = st.poisson(np.full(len(LEVELS), mean))
    q = torch.as_tensor(LEVELS)
    k = invert_cdf(_cdf(law), q, COUNTS)
    assert torch.equal(k, torch.floor(k))
    np.testing.assert_array_equal(k.numpy(), law.ppf(LEVELS))
    assert (law.cdf(k.numpy()) >= LEVELS - 1e-15).all()
    assert (law.cdf(k.numpy() - 1) < LEVELS).all()


def test_levels_zero_and_one_give_the_ends_of_the_support():
    law = st.beta(np.array([2.0, 2.0]), np.array([3.0, 3.0]))
    x = invert_cdf(_cdf(law), torch.tensor([0.0, 1.0], dtype=torch.float64), UNIT_INTERVAL)
    np.testing.assert_array_equal(x.numpy(), [0.0, 1.0])
    law = st.norm(np.zeros(2), np.ones(2))
    x = invert_cdf(_cdf(law), torch.tensor([0.0, 1.0], dtype=torch.float64), REAL)
    np.testing.assert_array_equal(x.numpy(), [-np.inf, np.inf])


def test_many_rows_at_once_and_rows_are_independent():
    n = 20_000
    rng = np.random.default_rng(0)
    loc, scale = rng.normal(size=n) * 100, rng.uniform(1e-3, 1e3, size=n)
    q = rng.uniform(1e-9, 1 - 1e-9, size=n)
    law = st.logistic(loc, scale)
    x = invert_cdf(_cdf(law), torch.as_tensor(q), REAL)
    assert np.all(np.abs(x.numpy() - law.ppf(q)) <= 1e-8 * np.abs(law.ppf(q)) + 1e-8 * scale)
    # A row's answer does not depend on the other rows (bisection freezes converged rows).
    sub = st.logistic(loc[:5], scale[:5])
    np.testing.assert_array_equal(invert_cdf(_cdf(sub), torch.as_tensor(q[:5]), REAL).numpy(),
                                  x.numpy()[:5])
