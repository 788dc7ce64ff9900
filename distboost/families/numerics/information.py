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


def raw_information(fisher: torch.Tensor, d) -> torch.Tensor:
    """``J^T I J`` with ``J = diag(d)``: the natural-scale information ``fisher`` (n, K) or
    (n, K, K) carried to the raw scale by the links' derivatives ``d``, a Tensor of shape
    (K, n) or a sequence of ``K`` Tensors of shape (n,) in which None stands for the
    identity link's derivative, 1.

    Entry by entry into the layout of :func:`info_matrix` (a diagonal ``F_k d_k d_k``, a
    full matrix ``F_ij (d_i d_j)``), the identity's factors left out: contiguous passes, no
    (K, K, n) product of the derivatives, no vector of ones."""
    d = list(d)
    k, n = len(d), fisher.shape[0]
    if fisher.dim() == 2:
        out = torch.empty((k, n), dtype=fisher.dtype, device=fisher.device)
        for i, di in enumerate(d):
            if di is None:
                out[i] = fisher[:, i]
            else:
                torch.mul(fisher[:, i], di, out=out[i]).mul_(di)
        return out.T
    out = torch.empty((k, k, n), dtype=fisher.dtype, device=fisher.device)
    for i, di in enumerate(d):
        for j, dj in enumerate(d):
            if di is None and dj is None:
                out[i, j] = fisher[:, i, j]
            elif di is None or dj is None:
                torch.mul(fisher[:, i, j], dj if di is None else di, out=out[i, j])
            else:
                torch.mul(di, dj, out=out[i, j]).mul_(fisher[:, i, j])
    return out.permute(2, 0, 1)
