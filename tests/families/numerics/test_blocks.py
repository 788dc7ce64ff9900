"""``by_row_blocks``: a row-wise function on blocks of rows gives the values of one call; the
histogram family's derivatives, computed in blocks above 2,048 rows, equal one pass."""

from __future__ import annotations

import numpy as np
import torch

import distboost.families.histogram as hist
from distboost.families.numerics.blocks import by_row_blocks


def test_blocks_equal_one_call_and_pass_other_arguments_whole():
    rng = np.random.default_rng(0)
    x = torch.as_tensor(rng.normal(size=(1001, 3)))
    y = torch.as_tensor(rng.normal(size=1001))
    col = torch.tensor([1.0, 2.0, 3.0])

    def fn(x, y, col, none):
        assert none is None and col.shape == (3,)
        return (x * col).sum(1) + y, x.exp()

    whole = fn(x, y, col, None)
    for block in (1, 7, 1000, 1001, 5000):
        got = by_row_blocks(fn, block, x, y, col, None)
        assert all(torch.equal(g, w) for g, w in zip(got, whole, strict=True))
    assert torch.equal(by_row_blocks(lambda v: v * 2, 10, y), y * 2)


def test_histogram_derivatives_in_blocks_equal_one_pass(monkeypatch):
    rng = np.random.default_rng(1)
    y = np.round(rng.gamma(2.0, 1.5, size=5000), 1)
    fam = hist.Histogram()
    fam.encode_target(y)
    raw = torch.as_tensor(fam.init_raw(y))[None].repeat(y.size, 1)
    raw = raw + torch.as_tensor(rng.normal(0, 0.3, size=raw.shape))
    floor = torch.full((fam.n_params,), -30.0, dtype=torch.float64)
    blocked = fam.raw_derivatives(raw, torch.as_tensor(y), floor)
    monkeypatch.setattr(hist, "_BLOCK", 10**9)
    one = fam.raw_derivatives(raw, torch.as_tensor(y), floor)
    for b, o in zip(blocked, one, strict=True):
        assert b.shape == o.shape
        torch.testing.assert_close(b, o, rtol=1e-13, atol=1e-15)
