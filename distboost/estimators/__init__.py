"""The scikit-learn estimators and the machinery of their fit (scikit-learn's
``_hist_gradient_boosting/`` pattern).

:mod:`~distboost.estimators.base` holds the one base (the whole ``fit`` and every predict
method) and :mod:`~distboost.estimators.runs` its boosting runs (on a held-out split, on
cross-validation folds, with calibration); the estimators are thin subclasses
(:mod:`~distboost.estimators.regressor`, :mod:`~distboost.estimators.classifier`,
:mod:`~distboost.estimators.varying`) and :mod:`~distboost.estimators.booster` boosts any torch
loss.  Beside them: the option table (:mod:`~distboost.estimators.options`,
:mod:`~distboost.estimators.tree_options`), the number of rounds
(:mod:`~distboost.estimators.rounds`), the penalised linear start
(:mod:`~distboost.estimators.linear_start`), the point model the location starts from
(:mod:`~distboost.estimators.location_start`), the search of ``tuning="auto"``
(:mod:`~distboost.estimators.tuning`), the dispersion calibration
(:mod:`~distboost.estimators.calibration`), progress bars
(:mod:`~distboost.estimators.progress`) and explanations (:mod:`~distboost.estimators.explain`).
"""

from .booster import Booster
from .classifier import DistributionalClassifier
from .explain import Explanation
from .regressor import DistributionalRegressor
from .varying import VaryingCoefficientRegressor

__all__ = ["Booster", "DistributionalClassifier", "DistributionalRegressor", "Explanation",
           "VaryingCoefficientRegressor"]
