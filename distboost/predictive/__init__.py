"""Predictive distributions: a batch of ``n`` distributions, numpy in and numpy out.

:class:`Predictive` (:mod:`~distboost.predictive.batch`) answers moments, cdf, quantiles,
intervals, samples and the per-row scores of any scalar family;
:class:`MultivariatePredictive` (:mod:`~distboost.predictive.multivariate`, returned by
``Predictive(family, ...)`` for a vector family) the joint density, covariance and exact margins
of vector targets; :mod:`~distboost.predictive.numerical_crps` the numerical CRPS of a family
without a closed form.
"""

from .batch import SURVIVAL_SCORES, Predictive, exact_observations, quantile_columns
from .multivariate import MultivariatePredictive

__all__ = ["Predictive", "MultivariatePredictive", "SURVIVAL_SCORES", "exact_observations",
           "quantile_columns"]
