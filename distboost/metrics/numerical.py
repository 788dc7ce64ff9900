"""Numerical CRPS for any family (user-registered, censored and truncated ones included).

The quadrature lives with the families, in :mod:`distboost.predictive.numerical_crps`, so
that :class:`~distboost.Predictive` computes scores without importing this package; these are
its public names.
"""

from __future__ import annotations

from ..predictive.numerical_crps import crps_interval_numerical, crps_numerical

__all__ = ["crps_numerical", "crps_interval_numerical"]
