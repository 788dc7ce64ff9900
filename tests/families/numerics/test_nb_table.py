"""The table of the negative binomial's information about r at a fixed mean: equal to the
quadrature it is filled from, on every region of (r, mean), filled lazily and the same
whatever the order of the rows."""

import numpy as np
import torch

from distboost.families.numerics import nb_table as _nb_table
from distboost.families.numerics.special import NB_POISSON_LIMIT, nb_information


def _grid_points(n=20_000, seed=0):
    """Random (r, mean) over and beyond the table's range (log r in [-12, 22], log mean in
    [-16, 16])."""
    g = torch.Generator().manual_seed(seed)
    log_r = torch.rand(n, generator=g, dtype=torch.float64) * 34.0 - 12.0
    log_mean = torch.rand(n, generator=g, dtype=torch.float64) * 32.0 - 16.0
    return torch.exp(log_r), torch.exp(log_mean)


def test_the_table_equals_the_quadrature_where_the_value_matters():
    # Reference: the quadrature with 400 nodes.  The matrix entry is r^2 I_rr|mean + r p:
    # differences below 1e-12 of p / r are invisible in it (there the quadrature itself
    # cancels down to noise: values of 1e-28 next to r = 1e4).
    r, mean = _grid_points()
    fast = _nb_table.nb_orth_information(r, mean / r)
    exact = nb_information(r, mean / r, nodes=400)[1]
    p_over_r = (mean / r) / (r * (1.0 + mean / r))
    x = (torch.log(r) - _nb_table.LOG_R[0]) / _nb_table.STEP
    y = (torch.log(mean) - _nb_table.LOG_MEAN[0]) / _nb_table.STEP
    shape = _nb_table._GRID.shape
    inside = (x >= 1) & (x < shape[0] - 2) & (y >= 1) & (y < shape[1] - 2)
    bound = 1e-5 * exact + 1e-12 * p_over_r
    assert ((fast - exact).abs() <= bound)[inside].all()
    # Outside the table the rows take the per-row quadrature: identical values.
    old = nb_information(r[~inside], (mean / r)[~inside])[1]
    torch.testing.assert_close(fast[~inside], old, rtol=0.0, atol=0.0)
    assert (fast >= 0).all() and torch.isfinite(fast).all()


def test_the_table_is_filled_lazily_and_the_same_whatever_the_order():
    fresh = _nb_table._Grid()
    r = torch.exp(torch.linspace(0.0, 2.0, 500, dtype=torch.float64))
    odds = torch.full_like(r, 0.5)
    first = _nb_table.nb_orth_information(r, odds, fresh)
    assert 0 < int(fresh.filled.sum()) <= 4  # only the blocks these rows visit
    perm = torch.from_numpy(np.random.default_rng(0).permutation(500))
    other = _nb_table._Grid()
    wide, _ = _grid_points(1000, 1)  # fills other blocks first
    _nb_table.nb_orth_information(wide, torch.full_like(wide, 2.0), other)
    again = _nb_table.nb_orth_information(r[perm], odds[perm], other)
    torch.testing.assert_close(again, first[perm], rtol=0.0, atol=0.0)


def test_a_cell_is_ready_only_when_its_whole_neighbourhood_is_filled():
    # The lookup that skips the fill: every ready cell has its 4 x 4 values (no NaN left),
    # and the cells the points used are ready.
    fresh = _nb_table._Grid()
    r, mean = _grid_points(3000, 2)
    _nb_table.nb_orth_information(r, mean / r, fresh)
    rows, cols = fresh.shape
    ready = fresh.ready.view(rows, cols)
    assert 0 < int(ready.sum()) < rows * cols
    i, j = torch.nonzero(ready, as_tuple=True)
    for di in range(-1, 3):
        for dj in range(-1, 3):
            ii, jj = i + di, j + dj
            keep = (ii >= 0) & (ii < rows) & (jj >= 0) & (jj < cols)
            assert not fresh.values[ii[keep], jj[keep]].isnan().any()
    x = (torch.log(r) - _nb_table.LOG_R[0]) / _nb_table.STEP
    y = (torch.log(mean) - _nb_table.LOG_MEAN[0]) / _nb_table.STEP
    table = (x >= 1) & (x < rows - 2) & (y >= 1) & (y < cols - 2)
    table &= r < NB_POISSON_LIMIT * (2.0 * mean + 1.0)  # not in the Poisson limit
    assert ready[x[table].floor().long(), y[table].floor().long()].all()
