"""Blocks of rows: a round's closed-form derivatives and loss without full-size temporaries.

A round of the engine at ``n`` rows evaluates the per-row loss and, with a closed form
(``fit_boosting(derivatives=...)``), the per-row gradient and Fisher information, then
writes the step rule's ``(grad, hess)`` into the tree backend's float32 buffers.  On the
whole batch at once every intermediate is a float64 array of ``n`` (or ``n * K``) entries:
at 2,000,000 rows the Normal's closed form alone allocates 80 MB a round, and the float64 to
float32 write another 32 MB (torch casts through a temporary), which set the fit's peak
memory.  :class:`~.derivatives.StepComputer` instead evaluates them on consecutive blocks
of :data:`BLOCK_ROWS` rows (no Python loop over rows), writing each block's values into the
same outputs: only the per-row loss (one float64 vector, kept across rounds so that its
sum is the one of the whole batch) and the output buffers have ``n`` entries.  Each block's
data are the same views every round, so what a family derives from its target alone
(:func:`distboost.families.numerics.special.remembered`) is derived once per block.

The values are those of one call: the derivatives and the loss are per-row functions
(:func:`~.derivatives.step_derivatives` relies on it), torch's elementwise operations give
an entry the same value wherever it sits in a tensor, and the sums (loss, finiteness
checks) are taken over the whole vectors, as before.  A block is never smaller than
:data:`BLOCK_ROWS`, above the row count below which a family may switch to another
implementation of the same formulas
(:data:`distboost.families.continuous.NUMPY_ROWS`): every block takes the path the whole
batch takes.
"""

from __future__ import annotations

import torch

from ..families.numerics.special import terms_like

__all__ = ["BLOCK_ROWS", "columns", "data_rows", "row_aligned", "row_blocks"]

#: Rows per block (the last block takes the remainder, up to twice this): a few MB of
#: float64 temporaries per block, large enough that the Python cost per block is noise, and
#: above every family's small-batch threshold (see the module docstring).
BLOCK_ROWS = 1 << 17


def row_blocks(n: int, block: int | None = None) -> list[slice] | None:
    """Consecutive blocks covering ``range(n)``, or None when there would be just one.

    Parameters
    ----------
    n : int
        Rows.
    block : int, optional
        Rows per block (default :data:`BLOCK_ROWS`); the last block also takes the
        remainder, so every block has at least ``block`` rows.

    Returns
    -------
    list of slice, or None
        None below ``2 * block`` rows: evaluate the whole batch at once.
    """
    block = BLOCK_ROWS if block is None else int(block)
    count = n // block
    if count < 2:
        return None
    starts = [i * block for i in range(count)] + [n]
    return [slice(a, b) for a, b in zip(starts[:-1], starts[1:], strict=True)]


def row_aligned(data: dict, n: int) -> bool:
    """Whether every entry of ``data`` is a tensor with ``n`` rows (then a block of rows of
    each is the block's data)."""
    return all(isinstance(v, torch.Tensor) and v.dim() > 0 and v.shape[0] == n
               for v in data.values())


def data_rows(data: dict, rows: slice) -> dict:
    """``data`` restricted to ``rows`` (views, no copy); a block of a target that carries its
    terms carries its own (:func:`~distboost.families.numerics.special.carry_terms`)."""
    return {key: terms_like(value[rows], value) for key, value in data.items()}


def columns(coef: torch.Tensor, rows: slice | None) -> torch.Tensor:
    """The columns ``rows`` of a per-row array of shape (K, n); the array itself for
    ``rows`` None (every row) or of shape (K, 1) (the same for every row)."""
    return coef if rows is None or coef.shape[1] == 1 else coef[:, rows]
