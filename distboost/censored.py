"""Build censored targets: ``(n, 2)`` arrays of ``[lower, upper]`` bounds.

``right(time, event)`` for survival data (an event gives an exact time, a censored row the
bound ``[time, inf)``), ``left(value, observed)`` for detection limits, ``interval(lower,
upper)`` for anything else.  Use them with a ``censored_<family>``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["right", "left", "interval"]


def _pair(a, b, names):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b)
    if a.ndim != 1 or b.shape != a.shape:
        raise ValueError(
            f"{names[0]} and {names[1]} must be 1-D of the same length; got shapes {a.shape} "
            f"and {b.shape}."
        )
    return a, b


def right(time, event) -> np.ndarray:
    """Right-censored target: ``[time, time]`` where ``event`` is true, ``[time, inf]`` where not.

    Parameters
    ----------
    time : array_like of shape (n,)
    event : array_like of shape (n,), bool or 0/1
        True (1) when the event was observed at ``time``.

    Returns
    -------
    ndarray of shape (n, 2)
    """
    time, event = _pair(time, event, ("time", "event"))
    if not np.isin(event, [0, 1, True, False]).all():
        bad = int((~np.isin(event, [0, 1, True, False])).sum())
        raise ValueError(f"event must be 0/1 or boolean; {bad} of {event.size} rows are not.")
    event = event.astype(bool)
    return np.stack([time, np.where(event, time, np.inf)], axis=1)


def left(value, observed) -> np.ndarray:
    """Left-censored target: ``[value, value]`` where observed, ``[-inf, value]`` where the true
    value is only known to be at most ``value`` (e.g. below a detection limit)."""
    value, observed = _pair(value, observed, ("value", "observed"))
    observed = observed.astype(bool)
    return np.stack([np.where(observed, value, -np.inf), value], axis=1)


def interval(lower, upper) -> np.ndarray:
    """Interval-censored target ``[lower, upper]`` (``-inf`` / ``inf`` for open ends; equal
    bounds for exact observations)."""
    lower, upper = _pair(lower, upper, ("lower", "upper"))
    upper = upper.astype(np.float64)
    bad = lower > upper
    if bad.any():
        raise ValueError(f"{int(bad.sum())} of {lower.size} rows have lower > upper.")
    return np.stack([lower, upper], axis=1)
