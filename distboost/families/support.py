"""The support of a family's target: an interval of the real line, possibly integer-valued.

Used to validate targets (with a message naming the family, its support and the number of
rows outside it), to bracket numerical quantile inversion, and to bound integration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Support", "REAL", "POSITIVE", "NONNEGATIVE", "UNIT_INTERVAL", "COUNTS"]


@dataclass(frozen=True)
class Support:
    """An interval ``low..high`` of the real line.

    Parameters
    ----------
    low, high : float
        End points (may be infinite).
    low_closed, high_closed : bool
        Whether each end point belongs to the support.
    integer : bool
        Whether only integers are in the support (count families).
    """

    low: float = -math.inf
    high: float = math.inf
    low_closed: bool = False
    high_closed: bool = False
    integer: bool = False

    def contains(self, y: np.ndarray) -> np.ndarray:
        """Boolean mask, same shape as ``y``: which values lie in the support."""
        y = np.asarray(y, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            ok = np.isfinite(y)
            ok &= (y >= self.low) if self.low_closed else (y > self.low)
            ok &= (y <= self.high) if self.high_closed else (y < self.high)
            if self.integer:
                ok &= np.floor(y) == y
        return ok

    def __str__(self) -> str:
        if self.integer:
            lo = int(self.low) if math.isfinite(self.low) else "-inf"
            hi = int(self.high) if math.isfinite(self.high) else "inf"
            return f"integers {{{lo}, {lo if lo == '-inf' else lo + 1}, ..., {hi}}}"
        left = "[" if self.low_closed else "("
        right = "]" if self.high_closed else ")"
        return f"{left}{_fmt(self.low)}, {_fmt(self.high)}{right}"


def _fmt(v: float) -> str:
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


REAL = Support()
POSITIVE = Support(low=0.0)
NONNEGATIVE = Support(low=0.0, low_closed=True)
UNIT_INTERVAL = Support(low=0.0, high=1.0)
COUNTS = Support(low=0.0, low_closed=True, integer=True)
