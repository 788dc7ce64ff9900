"""scikit-learn scorers from the scores of :mod:`distboost.metrics` (higher is better).

``get_scorer("crps")`` returns a callable ``scorer(estimator, X, y, sample_weight=None)``
that calls ``estimator.predict_dist(X)``, usable as ``scoring=`` in ``cross_val_score`` and
``GridSearchCV``.  Losses are negated; ``coverage_<p>`` returns minus the absolute gap
between the observed coverage and the nominal level (0 is perfect), since more coverage is
not better in itself (the raw coverage is :func:`distboost.metrics.coverage`).
"""

from __future__ import annotations

import re

from . import scores

__all__ = ["get_scorer", "available_scorers"]

_FIXED = {
    "crps": lambda d, y, w: -scores.mean_crps(d, y, w),
    "nll": lambda d, y, w: -scores.mean_nll(d, y, w),
    "loglik": lambda d, y, w: -scores.mean_nll(d, y, w),
    "calibration_error": lambda d, y, w: -scores.calibration_error(d, y, sample_weight=w),
}
_PATTERNS = {
    "interval_score": lambda lv: lambda d, y, w: -scores.mean_interval_score(d, y, lv, w),
    "coverage": lambda lv: lambda d, y, w: -abs(scores.coverage(d, y, lv, w) - lv),
    "pinball": lambda lv: lambda d, y, w: -float(scores.mean_pinball(d, y, lv, w)),
}


def available_scorers() -> list[str]:
    """Names :func:`get_scorer` accepts (``<pattern>_<percent>`` for any percent 1..99)."""
    return sorted(_FIXED) + [f"{p}_<percent>" for p in sorted(_PATTERNS)]


class _DistScorer:
    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __call__(self, estimator, X, y, sample_weight=None) -> float:
        return float(self.fn(estimator.predict_dist(X), y, sample_weight))

    def __repr__(self) -> str:
        return f"get_scorer({self.name!r})"


def get_scorer(name: str) -> _DistScorer:
    """A scikit-learn scorer (higher is better) by name.

    Names: ``crps``, ``nll`` (alias ``loglik``), ``calibration_error``, and
    ``interval_score_<p>``, ``coverage_<p>``, ``pinball_<p>`` for a percent ``p`` in 1..99
    (e.g. ``interval_score_90``, ``pinball_50``).

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    """
    if name in _FIXED:
        return _DistScorer(name, _FIXED[name])
    m = re.fullmatch(r"([a-z_]+)_(\d{1,2})", str(name))
    if m and m.group(1) in _PATTERNS and 1 <= int(m.group(2)) <= 99:
        return _DistScorer(name, _PATTERNS[m.group(1)](int(m.group(2)) / 100.0))
    raise ValueError(f"Unknown scorer {name!r}; known scorers are {available_scorers()}.")
