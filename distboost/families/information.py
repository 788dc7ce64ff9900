"""The layout of a batch of information matrices, and their chain rule to the raw scale.

Kept apart from :mod:`.base` so that :mod:`.scores` can use it without importing the base.
"""

from __future__ import annotations

import torch

__all__ = ["diagonal_info", "info_matrix", "raw_information"]


def info_matrix(rows) -> torch.Tensor:
    """A batch of ``K x K`` matrices from their entries: ``rows[i][j]`` is a Tensor of shape
    (n,) (or a scalar).  Returns the (n, K, K) view of one contiguous (K, K, n) tensor: each
    entry's ``n`` values lie together, so the elementwise work on an information matrix
    (the chain rule of the links, the natural step's 2 x 2 solve) runs on contiguous
    vectors instead of interleaved ones."""
    ref = next(v for row in rows for v in row if isinstance(v, torch.Tensor))
    k = len(rows)
    out = torch.empty((k, k) + tuple(ref.shape), dtype=ref.dtype, device=ref.device)
    for i, row in enumerate(rows):
        for j, v in enumerate(row):
            out[i, j] = v
    return out.permute(*range(2, out.dim()), 0, 1)


def diagonal_info(*entries) -> torch.Tensor:
    """A diagonal information matrix from its ``K`` diagonal entries (Tensors of shape (n,)):
    the (n, K) view of one contiguous (K, n) tensor, as :func:`info_matrix` lays its entries
    out (the chain rule and the natural step then run on contiguous vectors)."""
    return torch.stack(entries, dim=0).T


def raw_information(fisher: torch.Tensor, d: torch.Tensor) -> torch.Tensor:
    """``J^T I J`` with ``J = diag(d)``: the natural-scale information ``fisher`` (n, K) or
    (n, K, K) carried to the raw scale by the links' derivatives ``d`` of shape (K, n)."""
    if fisher.dim() == 2:
        return (fisher.T * d * d).T
    # In the (K, K, n) layout of info_matrix: contiguous passes.
    return (fisher.permute(1, 2, 0) * (d[:, None, :] * d[None, :, :])).permute(2, 0, 1)
