"""The damped natural step (:mod:`distboost.boosting.natural_step`): the per-row adjugate
solves equal the batched LU solve, and the rows they cannot serve take the LU's answer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from distboost.boosting.natural_step import NATURAL_RIDGE, _solve_lu, divide, natural
from distboost.families.numerics.information import info_matrix


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("layout", ["info_matrix", "interleaved"])
def test_small_natural_solves_equal_the_batched_lu_solve(k, layout):
    """The adjugate solve of 2 x 2 and 3 x 3 damped information equals
    ``torch.linalg.solve``'s on well-conditioned rows, and rows it cannot serve (a singular
    or indefinite matrix, an infinite entry) take the LU solve's answer."""
    rng = np.random.default_rng(k)
    n = 500
    a = torch.as_tensor(rng.normal(size=(n, k, k)))
    fisher = a @ a.transpose(1, 2) + 0.05 * torch.eye(k, dtype=torch.float64)
    fisher[0] = 0.0  # singular: det 0
    fisher[1] = torch.as_tensor(np.diag(np.r_[1.0, -1.0, 2.0][:k]))  # indefinite
    fisher[2, 0, 1] = fisher[2, 1, 0] = 1e300  # det overflows
    if layout == "info_matrix":
        fisher = info_matrix([[fisher[:, i, j] for j in range(k)] for i in range(k)])
    g = torch.as_tensor(rng.normal(size=(n, k)))
    got, want = natural(g, fisher), _solve_lu(fisher, g)
    assert got.shape == (n, k)
    np.testing.assert_allclose(got[3:], want[3:], rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(got[:3], want[:3])


def test_a_diagonal_fisher_is_a_damped_division():
    g = torch.tensor([[1.0, -2.0], [0.5, 4.0]], dtype=torch.float64)
    fisher = torch.tensor([[2.0, 4.0], [0.0, 1.0]], dtype=torch.float64)
    want = g / (fisher.clamp_min(1e-300) * (1.0 + NATURAL_RIDGE))
    torch.testing.assert_close(natural(g, fisher), want, rtol=0, atol=0)
    torch.testing.assert_close(divide(g, fisher), want, rtol=0, atol=0)
    # The LU solve of the same diagonal matrix (a row with a positive diagonal).
    np.testing.assert_allclose(_solve_lu(torch.diag_embed(fisher), g)[0], want[0], rtol=1e-15)


@pytest.mark.parametrize("k", [2, 3])
def test_no_rows_give_no_steps(k):
    g = torch.zeros((0, k), dtype=torch.float64)
    assert natural(g, torch.zeros((0, k, k), dtype=torch.float64)).shape == (0, k)
