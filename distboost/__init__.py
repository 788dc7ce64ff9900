"""distboost: distributional regression with gradient-boosted trees and torch autograd.

``DistributionalRegressor`` fits one boosted ensemble per parameter of a family from
``torch.distributions``; predictions are :class:`Predictive` distribution objects.
"""

from . import censored, datasets, families, links, metrics
from . import plotting as plot  # db.plot, the name in DESIGN.md
from ._version import __version__
from .conformal import ConformalRegressor
from .estimators import (
    Booster,
    DistributionalClassifier,
    DistributionalRegressor,
    Explanation,
    VaryingCoefficientRegressor,
)
from .forecasting import Forecaster
from .persistence import load
from .predictive import MultivariatePredictive, Predictive
from .selection import compare_families

__all__ = [
    "Booster", "ConformalRegressor", "DistributionalClassifier", "DistributionalRegressor",
    "Explanation", "Forecaster", "MultivariatePredictive", "Predictive", "censored",
    "VaryingCoefficientRegressor", "compare_families", "datasets",
    "families", "links", "load", "metrics", "plot",
    "__version__",
]


def __dir__() -> list[str]:
    """The public names (``dir(db)``, a notebook's completion): ``__all__``, not the
    subpackages Python imported on the way (``distboost.estimators``, ``.boosting``, ...),
    which stay importable by their full names."""
    return sorted(__all__)
