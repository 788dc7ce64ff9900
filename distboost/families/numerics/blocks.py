"""Row-wise tensor functions evaluated on blocks of rows.

A family whose derivatives build (rows, C) tables per round (the histogram's C categories)
reads and writes each table several times; on blocks of a few thousand rows those tables stay
in the CPU's cache instead of streaming through memory once per operation.  The function must
be row-wise (row ``i`` of every result depends on row ``i`` of the inputs only), so the blocks
give the same values as one call.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

__all__ = ["by_row_blocks"]


def by_row_blocks(fn: Callable, block: int, *args):
    """``fn(*args)`` on consecutive blocks of ``block`` rows, each result concatenated.

    Parameters
    ----------
    fn : callable returning a Tensor or a tuple of Tensors, each of leading dimension n
    block : int
        Rows per block.
    *args : Tensor or None
        Tensors with ``n`` rows (the first argument's) are cut into blocks; anything else
        (None, a per-column vector) is passed whole to every block.

    Returns
    -------
    Tensor or tuple of Tensors, as ``fn`` returns
    """
    n = args[0].shape[0]

    def cut(v, i):
        return v[i:i + block] if isinstance(v, torch.Tensor) and v.dim() and v.shape[0] == n else v

    parts = [fn(*(cut(v, i) for v in args)) for i in range(0, n, block)]
    if isinstance(parts[0], torch.Tensor):
        return torch.cat(parts)
    return tuple(torch.cat(v) for v in zip(*parts, strict=True))
