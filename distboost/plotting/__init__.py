"""Matplotlib figures (``db.plot``): one module per kind of figure, one axes helper.

Every function draws on ``ax`` (a new figure when None) and returns the Axes, so figures
compose in notebooks.  :mod:`~distboost.plotting.figures` holds the figures of predictive
distributions (interval bands and fan charts, PIT histogram, reliability diagram, family
comparison, one row's density, varying coefficients), :mod:`~distboost.plotting.explain` those
of a model's explanations, :mod:`~distboost.plotting.survival` survival curves and
D-calibration, :mod:`~distboost.plotting.multivariate` the regions and correlation of vector
targets, :mod:`~distboost.plotting.forecast` the forecast fan chart (drawn by ``fan`` for a
forecast) and the PIT by forecast step, :mod:`~distboost.plotting.uncertainty` a model's
epistemic uncertainty along a feature beside the training rows' density.
"""

from .explain import dependence, importance, shap_summary
from .figures import calibration, coefficients, compare, density, fan, intervals, pit_histogram
from .forecast import pit_by_horizon
from .multivariate import correlation, ellipses
from .survival import d_calibration, survival_curves
from .uncertainty import epistemic

__all__ = ["intervals", "fan", "pit_histogram", "calibration", "compare", "density",
           "coefficients", "survival_curves", "d_calibration", "importance", "dependence",
           "shap_summary", "ellipses", "correlation", "pit_by_horizon", "epistemic"]
