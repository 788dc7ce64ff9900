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

import numpy as np
import pandas as pd
from sklearn.base import RegressorMixin

from .. import families as _families
from .._validation import check_target
from ..persistence import loadable
from .auto import choose_family, is_auto
from .base import DistributionalEstimator
from .uncertainty import check_members, fit_members

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
    location_start_ : LocationStart or None
        The point model the location starts from (see ``location_start``; None: not used).
    family_table_ : DataFrame
        Only with ``family="auto"``: the cross-validated comparison the family was chosen
        from (:func:`distboost.selection.auto.choose`: one row per candidate, CRPS mean and
        standard error over the folds, ``degenerate``, ``within_1se``; ``attrs["chosen"]``).
    tuning_table_ : DataFrame
        Only with ``tuning="auto"``: the search (:func:`distboost.estimators.tuning.tune`),
        one row per candidate: its options, ``score`` (mean validation loss of the
        ``scoring_rule``), ``se_vs_given`` (standard error of its paired per-row difference to
        row 0, the options as given), ``seconds``, ``chosen``.

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
                "param_options", "calibrate", "linear_start", "location_start", "tuning",
                "early_stopping",
                "validation_fraction", "n_iter_no_change", "per_parameter_stopping", "links",
                "base_learner", "backend", "device", "epistemic_members", "random_state",
                "n_jobs", "verbose", "progress")
    _n_positional = 1
    _docs = {"family": (
        "The conditional distribution of ``y`` (``distboost.families.available()``), or "
        "\"auto\": ``fit`` chooses it by cross-validated CRPS among candidates read from "
        "``y`` (its support, integers, a point mass at zero, few ordered levels; the "
        "nonparametric ``histogram`` always among them) with a one-standard-error rule "
        "toward the family with fewer parameters, never a degenerate fit; the choice is "
        "``family_`` and the comparison ``family_table_`` "
        "(:func:`distboost.selection.auto.choose`).")}

    @property
    def _metric(self) -> str:
        return self.scoring_rule

    def fit(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None):
        """Fit one boosted ensemble per distribution parameter (``family="auto"``: first
        choose the family, see ``family``).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
            Features; DataFrame categorical (or string) columns are used as categoricals,
            NaN marks a missing value.
        y : array_like of shape (n,) (or (n, 2) bounds for a censored family)
            Target, inside the family's support.
        sample_weight : array_like of shape (n,), default=None
            Non-negative row weights (likelihood weights; with ``family="auto"`` they weigh
            the final fit, not the comparison).
        eval_set : tuple (X_val, y_val) or list of one such tuple, default=None
            Validation rows for early stopping and calibration of the final fit.
        eval_sample_weight : array_like of shape (n_val,) or list of one, default=None
            Weights of the ``eval_set`` rows.

        Returns
        -------
        self
        """
        self._validate_params()
        check_members(self)
        if self.tuning == "auto":
            return self._fit_tuned(X, y, sample_weight, eval_set, eval_sample_weight)
        self.__dict__.pop("tuning_table_", None)
        if not is_auto(self.family):
            self.__dict__.pop("family_table_", None)
            super().fit(X, y, sample_weight, eval_set, eval_sample_weight)
        else:
            chosen, table = choose_family(self, X, y)
            self._chosen_family = chosen
            try:
                super().fit(X, y, sample_weight, eval_set, eval_sample_weight)
            finally:
                del self._chosen_family
            self.family_table_ = table
        self.epistemic_members_ = fit_members(self, X, y, sample_weight, eval_set,
                                              eval_sample_weight)
        return self

    def _fit_tuned(self, X, y, sample_weight, eval_set, eval_sample_weight):
        """``tuning="auto"``: the family (when "auto"), the search of
        :mod:`distboost.estimators.tuning`, then the chosen options fitted on all rows; the
        fitted attributes are that fit's, with ``tuning_table_`` (and ``family_table_``)."""
        from sklearn.base import clone

        from .._validation import check_eval_set, int_seed
        from .tuning import tune

        self._validate_params()
        family, table = self.family, None
        if is_auto(self.family):
            family, table = choose_family(self, X, y)
        seed = int_seed(self.random_state)
        Xa = X if isinstance(X, pd.DataFrame) else np.asarray(X)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        val, w_val = check_eval_set(eval_set, eval_sample_weight)
        best, tuning_table = tune(self, Xa, np.asarray(y), w, val, w_val, family=family,
                                  seed=seed)
        final = clone(self).set_params(tuning=None, family=family, random_state=seed, **best)
        final.fit(X, y, sample_weight, eval_set, eval_sample_weight)
        for name in [k for k in vars(self) if k.endswith("_") and not k.startswith("__")]:
            delattr(self, name)  # a refit leaves no attribute of an earlier fit
        for name, value in vars(final).items():
            if name.endswith("_") and not name.startswith("__"):
                setattr(self, name, value)
        if table is not None:
            self.family_table_ = table
        self.tuning_table_ = tuning_table
        return self

    def _prepare_target(self, y):
        spec = self._chosen_family if is_auto(self.family) else self.family
        family = _families.get(spec, links=self.links)
        if hasattr(family, "encode_target") and family is spec:
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
        for name in ("family_table_", "tuning_table_"):
            table = getattr(self, name, None)
            if table is not None:
                state[name] = {"columns": [str(c) for c in table.columns],
                               "rows": table.astype(object).to_numpy().tolist(),
                               "attrs": dict(table.attrs)}
        return state

    def _set_state(self, state: dict) -> None:
        super()._set_state(state)
        for name in ("family_table_", "tuning_table_"):
            table = state.get(name)
            if table is not None:
                frame = pd.DataFrame(table["rows"], columns=table["columns"])
                frame.attrs.update(table["attrs"])
                setattr(self, name, frame)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the mean log-likelihood, not R^2: scikit-learn's check that a regressor
        # scores above 0.5 on its toy data does not apply to a likelihood.
        tags.regressor_tags.poor_score = True
        return tags
