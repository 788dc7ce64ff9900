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
(:mod:`~distboost.estimators.dispersion_shift`), progress bars
(:mod:`~distboost.estimators.progress`) and explanations (:mod:`~distboost.estimators.explain`).
What a default fit decides at ``n`` rows is stated once in :mod:`~distboost.estimators.policy`.

The layers above (selection, dask, conformal, forecasting) import from this package, or from
:mod:`~distboost.estimators.policy`, never from the other modules (``tests/test_layers.py``):
besides the estimators, the package gives them ``task_bar`` (progress bars),
``DispersionSearch`` (the per-round dispersion shift), ``Option`` and ``OptionsMixin`` (the
option table), and ``is_auto``, ``choose_family`` and ``set_family_chooser`` (``family="auto"``).
"""

from . import policy
from .auto import choose_family, is_auto, set_family_chooser
from .booster import Booster
from .classifier import DistributionalClassifier
from .dispersion_shift import DispersionSearch
from .explain import Explanation
from .options import Option, OptionsMixin
from .progress import task_bar
from .regressor import DistributionalRegressor
from .runs import continued_outputs
from .varying import VaryingCoefficientRegressor

__all__ = ["Booster", "DistributionalClassifier", "DistributionalRegressor", "Explanation",
           "VaryingCoefficientRegressor",
           # for the layers above (module docstring)
           "policy", "task_bar", "DispersionSearch", "Option", "OptionsMixin", "is_auto",
           "choose_family", "set_family_chooser", "continued_outputs"]
