"""The distributional regressor: :class:`DistributionalRegressor` = family + boosting engine.

``fit`` validates the data, starts every parameter at the family's weighted marginal MLE (or a
penalised linear model on small data), and lets the engine grow one ensemble per parameter on
the family's negative log-likelihood (or CRPS).  Predictions come back as a
:class:`~distboost.Predictive` (whole distributions), or as the usual arrays (mean, quantiles,
intervals, parameters).  Everything but the target's validation lives in the shared base,
:class:`distboost.estimators.base.DistributionalEstimator`.
"""

from __future__ import annotations

import copy

from sklearn.base import RegressorMixin

from .. import families as _families
from .._validation import check_target
from ..persistence import loadable
from .base import DistributionalEstimator

__all__ = ["DistributionalRegressor"]


@loadable
class DistributionalRegressor(RegressorMixin, DistributionalEstimator):
    """Gradient-boosted distributional regression: one tree ensemble per distribution parameter.

    {parameters}

    {attributes}
    init_params_ : dict of str to float
        Weighted marginal MLE the boosting starts from.
    linear_start_ : LinearStart or None
        The linear part of the start (None: the constant start).

    Examples
    --------
    >>> import numpy as np, distboost as db
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 1))
    >>> y = np.sin(X[:, 0]) + rng.normal(size=500) * (0.05 + 0.1 * X[:, 0] ** 2)
    >>> model = db.DistributionalRegressor(n_estimators=200, random_state=0).fit(X, y)
    >>> model.predict_interval(X[:3], 0.9).shape
    (3, 2)
    """

    _options = ("family", "scoring_rule", "n_estimators", "learning_rate", "step",
                "num_leaves", "max_depth", "min_child_samples", "subsample", "colsample",
                "reg_lambda", "max_bin", "min_split_gain", "extra_trees", "path_smooth",
                "max_cat_to_onehot", "monotone_constraints", "interaction_constraints",
                "param_options", "calibrate", "linear_start", "early_stopping",
                "validation_fraction", "n_iter_no_change", "links", "base_learner", "backend",
                "random_state", "n_jobs", "verbose", "progress")
    _n_positional = 1

    @property
    def _metric(self) -> str:
        return self.scoring_rule

    def _prepare_target(self, y):
        family = _families.get(self.family, links=self.links)
        if hasattr(family, "encode_target") and family is self.family:
            # encode_target reads the classes / parts from y: never into the user's object.
            family = copy.deepcopy(family)
        y = check_target(family, y)
        family.check_fit_target(y)  # e.g. collinear parts: an error naming all the rows
        return family, y, {}

    def _check_target(self, family, y, name, context):
        return check_target(family, y, name)

    # The mean log-likelihood, not RegressorMixin's R^2.
    score = DistributionalEstimator.score

    def _get_state(self) -> dict:
        state = super()._get_state()
        state["scoring_rule"] = self.scoring_rule
        return state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the mean log-likelihood, not R^2: scikit-learn's check that a regressor
        # scores above 0.5 on its toy data does not apply to a likelihood.
        tags.regressor_tags.poor_score = True
        return tags
