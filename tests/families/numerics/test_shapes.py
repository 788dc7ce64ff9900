"""Tests of :mod:`distboost.families.numerics.shapes`: NumPy's broadcasting rule gives torch's
shape."""

from __future__ import annotations

import pytest
import torch

from distboost.families.numerics.shapes import broadcast_shapes


@pytest.mark.parametrize("shapes", [
    ((3,), (3,)), ((1,), (4,)), ((2, 1), (5,)), ((), (7, 2)), ((0,), (1,)),
    ((4, 1, 3), (2, 1), (1,)), (torch.Size([6, 1]), torch.Size([1, 6])),
])
def test_the_shape_is_torchs(shapes):
    got = broadcast_shapes(*shapes)
    assert isinstance(got, torch.Size)
    assert got == torch.broadcast_shapes(*shapes)


def test_shapes_that_do_not_broadcast_raise():
    with pytest.raises(ValueError, match="broadcast"):
        broadcast_shapes((3,), (4,))
