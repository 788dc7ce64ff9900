"""Random levels keyed by context, so that a forecast's draws do not depend on its batch.

A path's random levels are a function of the seed, its context's *key* (its series id and
its first target time), the step and the path number: counter-based draws (the SplitMix64
finaliser of Steele, Lea & Flood 2014 over those counters, as in Salmon et al. 2011's
counter-based generators) instead of one generator's stream over the batch.  So the same
series gets the same paths whichever other series share its batch: in one process, in a
backtest, or on the partitions of a Dask cluster, however the series are cut into them.

References
----------
Salmon, J. K., Moraes, M. A., Dror, R. O. & Shaw, D. E. (2011). Parallel random numbers:
as easy as 1, 2, 3. SC '11.  Steele, G. L., Lea, D. & Flood, C. H. (2014). Fast splittable
pseudorandom number generators. OOPSLA '14.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["context_keys", "seed_of", "uniforms", "stratified"]

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's output function of ``x + golden`` (uint64, wrapping)."""
    with np.errstate(over="ignore"):  # numpy scalars warn where arrays wrap silently
        z = np.asarray(x, dtype=np.uint64) + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


def context_keys(ids, first_times) -> np.ndarray:
    """A uint64 key per context from its series id and its first target time (arrays of
    length ``C``; ids of any hashable kind, times as dates or integers), the same in every
    process (pandas' fixed-key SipHash of their text)."""
    ids = pd.util.hash_array(np.asarray(pd.Index(ids).astype(str), dtype=object))
    t = pd.util.hash_array(np.asarray(pd.Index(first_times).astype(str), dtype=object))
    return _mix(ids ^ _mix(t))


def seed_of(rng: np.random.Generator) -> np.uint64:
    """The base of the keyed draws: the first 63-bit integer of ``rng`` (the same for the
    same integer seed everywhere)."""
    return np.uint64(rng.integers(2 ** 63 - 1))


def uniforms(base, keys: np.ndarray, n: int, step: int, stream: int) -> np.ndarray:
    """Uniforms in (0, 1) of shape (C, n): entry ``(c, p)`` a function of ``base``,
    ``keys[c]``, ``step``, ``stream`` and ``p`` only."""
    head = _mix(np.asarray(keys, dtype=np.uint64) ^ np.uint64(base))
    head = _mix(head ^ _mix(np.uint64(step) * np.uint64(4) + np.uint64(stream)))
    x = _mix(head[:, None] + np.arange(n, dtype=np.uint64)[None, :])
    return ((x >> np.uint64(11)).astype(np.float64) + 0.5) * 2.0 ** -53


def stratified(base, keys: np.ndarray, n: int, step: int) -> np.ndarray:
    """Levels (C, n): per context one level in each of ``n`` equal strata ``[i / n, (i + 1)
    / n)``, uniform within it, the strata in a random order over the paths (a Latin
    hypercube over the paths, McKay, Beckman & Conover 1979)."""
    order = np.argsort(uniforms(base, keys, n, step, 0), axis=1).astype(np.float64)
    u = (order + uniforms(base, keys, n, step, 1)) / n
    return np.clip(u, 1e-15, 1.0 - 1e-15)
