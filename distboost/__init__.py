"""distboost: distributional regression with gradient-boosted trees and torch autograd.

``DistributionalRegressor`` fits one boosted ensemble per parameter of a family from
``torch.distributions``; predictions are :class:`Predictive` distribution objects.
"""

from . import censored, datasets, families, links, metrics
from . import plotting as plot  # db.plot, the name in DESIGN.md
from ._version import __version__
from .booster import Booster
from .classifier import DistributionalClassifier
from .estimators import DistributionalRegressor
from .explain import Explanation
from .persistence import load
from .predictive import Predictive
from .predictive_multivariate import MultivariatePredictive
from .selection import compare_families
from .varying import VaryingCoefficientRegressor

__all__ = [
    "Booster", "DistributionalClassifier", "DistributionalRegressor", "Explanation",
    "MultivariatePredictive", "Predictive", "censored",
    "VaryingCoefficientRegressor", "compare_families", "datasets",
    "families", "links", "load", "metrics", "plot",
    "__version__",
]
