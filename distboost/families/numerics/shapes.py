"""The broadcast shape of tensor shapes, without ``torch.broadcast_shapes``.

torch's own imports SymPy on its first call (1.5-5 s of a process) and runs its
symbolic-shape reference code, 0.2-0.7 ms a call: a fifth of a small multivariate fit,
whose linear start evaluates the log-density about a thousand times.  NumPy's rule gives the
same shape.
"""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["broadcast_shapes"]


def broadcast_shapes(*shapes) -> torch.Size:
    """The shape ``torch.broadcast_shapes(*shapes)`` gives, by NumPy's broadcasting rule.

    Parameters
    ----------
    *shapes : torch.Size or tuple of int

    Returns
    -------
    torch.Size

    Raises
    ------
    ValueError
        If the shapes do not broadcast (NumPy's message names them).
    """
    return torch.Size(np.broadcast_shapes(*(tuple(s) for s in shapes)))
