"""Conformal calibration with finite-sample coverage: :class:`ConformalRegressor`.

:mod:`~distboost.conformal.regressor` holds the estimator, :mod:`~distboost.conformal.conformity`
the conformity scores and the order statistics of exact conformal bounds,
:mod:`~distboost.conformal.groups` the Mondrian groups.  The calibrated predictive law is the
family :class:`distboost.families.Calibrated`.
"""

from .regressor import ConformalRegressor

__all__ = ["ConformalRegressor"]
