"""The one estimator base: the whole ``fit`` and every prediction method, for every estimator.

:class:`DistributionalEstimator` holds what :class:`~distboost.DistributionalRegressor`,
:class:`~distboost.DistributionalClassifier` and
:class:`~distboost.VaryingCoefficientRegressor` share (scikit-learn's
``BaseHistGradientBoosting`` is the model): the options (declared once in
:mod:`distboost.estimators.options`), the ``fit`` skeleton

    validate -> target and family (hook) -> validation rows (``eval_set``, a held-out split,
    or K-fold cross-validation on small data) -> objective (hook) -> engine -> calibration

(the runs themselves are :class:`~distboost.estimators.runs.FitRuns`, a mixin of the base)

and the predictions (``predict_raw``, ``predict_params``, ``predict_dist``, ``predict``,
``predict_quantiles``, ``predict_interval``, ``score``) and ``save``.  Subclasses add hooks
only: ``_prepare_target`` (encode and validate ``y``, choose the family),
``_prepare_features`` (columns with a role of their own), ``_make_objective`` (the
:class:`~distboost.objective.FamilyObjective` of a run), ``_tree_X`` (the columns the trees
split on) and ``_unfloored_raw`` (the family's raw scores from the trees' at predict time).
Fitted attributes are set together, once a fit has succeeded.
"""

from __future__ import annotations

import warnings
from abc import ABCMeta, abstractmethod

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, is_regressor
from sklearn.utils.validation import check_is_fitted

from .._validation import (
    check_consistent_rows,
    check_eval_set,
    check_sample_weight,
    check_X,
    int_seed,
)
from ..boosting import fit_threads
from ..boosting.ensemble import FittedEnsemble
from ..boosting.threads import num_threads
from ..boosting.xgboost_backend import check_device
from ..objective import FamilyObjective, check_step, dispersion_columns
from ..predictive import Predictive, quantile_columns
from .dispersion_shift import apply_shift
from .linear_start import LinearStart
from .location_start import LocationStart, location_plan
from .options import OptionsMixin
from .policy import FitPlan, plan_fit, validation_mode
from .progress import stop_line
from .rounds import CV_FOLDS, constant_model_message
from .runs import FitRuns, Run
from .tail_check import feature_tail_messages
from .tree_options import resolve_tree_options
from .uncertainty import FoldMember

__all__ = ["DistributionalEstimator"]


class DistributionalEstimator(FitRuns, OptionsMixin, BaseEstimator, metaclass=ABCMeta):
    """Base of the distributional estimators (not for direct use)."""

    #: The name of the per-round loss in ``evals_result_``.
    _metric = "nll"
    # How a fit behaves for the options an estimator does not take (its own ``__init__``
    # sets those it takes): the log score, no dispersion calibration, the constant start.
    scoring_rule = "nll"
    calibrate = False
    linear_start = False
    location_start = None
    progress = False
    _attribute_docs = """family_ : Family
ensemble_ : FittedEnsemble
    The trees (raw scores without the dispersion shift and the linear start).
step_ : str
    The step rule used (``step`` with "auto" resolved).
dispersion_shift_ : float
    Constant added to the dispersion parameter's raw score at prediction time (0.0 when
    not calibrated).
raw_floor_ : ndarray of shape (K,)
    Lower bound of each raw score (``-inf`` but for a ``scale`` parameter, floored at
    ``1e-6`` x the standard deviation of ``y``; see ``Family.param_floors``), applied in
    training and prediction.
early_stopping_ : str
    Where the validation rows came from: "eval_set", "cv", "holdout", "holdout_refit" (the
    held-out split, then a refit on all rows), "none" or "constant" (a single training row:
    the start values are kept).
fit_plan_ : FitPlan
    Every decision of the fit, taken before its first run (``fit_plan_.describe()``; the
    rules: :mod:`distboost.estimators.policy`).  None for a model saved before it existed.
n_iter_ : int
    Rounds run (of the refit on all rows after cross-validation or a held-out split).
best_iteration_ : int
    Rounds kept (the best validation round when early stopping); the largest of
    ``best_iterations_``.
cv_members_ : list of FoldMember or None
    The cross-validation fold models at the kept round when the rounds were chosen by
    cross-validation (``early_stopping_ == "cv"``) for a scalar regression family: the
    members of ``predict_uncertainty``'s fold ensemble.  None otherwise.
best_iterations_ : dict of str to int
    Rounds kept by each raw output (keyed as ``predict_raw``'s columns): all
    ``best_iteration_`` unless ``per_parameter_stopping`` gave a parameter its own.
    ``predict_*(X, iteration=t)`` reads output ``k`` at ``min(t, best_iterations_[k])``.
num_leaves_, min_child_samples_ : int
    The tree sizes used ("auto" resolved for the training rows).
location_num_leaves_, location_min_child_samples_ : int or None
    Leaves, and minimum rows of a leaf, of the location's trees (families with a scalar
    ``loc``; None for the others): ``num_leaves_`` and ``min_child_samples_`` unless
    ``param_options`` set them, or the fit chose finer leaves on near-deterministic data
    or repeated records (:mod:`distboost.estimators.leaf_size`).
evals_result_ : dict
    Loss history per round: ``{"train": {"nll": [...]}, "valid": {"nll": [...]}}``
    (keyed "crps" for ``scoring_rule="crps"``); after cross-validation "valid" is the
    folds' weighted mean (as ``lightgbm.cv``).
n_features_in_ : int
feature_names_in_ : ndarray of str
    Only when X is a DataFrame with string column names."""

    # ------------------------------------------------------------------ hooks
    @abstractmethod
    def _prepare_target(self, y):
        """``(family, y, fitted)``: the family, the validated target and fitted attributes
        that the target determines (set when the fit succeeds)."""

    @abstractmethod
    def _check_target(self, family, y, name: str, context: dict) -> np.ndarray:
        """The validated target of an ``eval_set`` or of ``score``."""

    def _prepare_features(self, X) -> dict:
        """Fitted attributes that X determines before any run (none by default)."""
        return {}

    def _make_objective(self, family, X, y, sample_weight, *, warn: bool,
                        context: dict) -> FamilyObjective:
        """The objective of one run on the rows ``(X, y)``."""
        return FamilyObjective(family, y, sample_weight, warn=warn,
                               scoring_rule=self.scoring_rule)

    def _tree_X(self, X, context: dict):
        """The columns the trees split on."""
        return X

    def _unfloored_raw(self, raw: np.ndarray, X) -> np.ndarray:
        """The family's raw scores (before the floor) from the trees' raw scores."""
        if self.linear_start_ is not None:
            raw = raw + self.linear_start_.offset(X)
        location = getattr(self, "location_start_", None)  # None in models saved before it
        if location is not None:
            raw = raw + location.offset(self._tree_X(X, vars(self)))
        return raw

    def _fitted_from_run(self, run: Run) -> dict:
        """Fitted attributes a run determines beyond the common ones."""
        return {"init_params_": run.objective.init_params}

    def _tree_columns(self, X, context: dict) -> np.ndarray:
        """Positions in X of the columns the trees split on (:meth:`_tree_X`)."""
        return np.arange(X.shape[1])

    def _output_params(self, family, context: dict) -> list[str]:
        """The family parameter each raw output of the trees belongs to."""
        return list(family.param_names)

    def _output_names(self) -> list[str]:
        """Names of the trees' raw outputs (rows of :meth:`feature_importances`)."""
        return list(self.family_.param_names)

    def _explain_outputs(self, values, base, X):
        """The family's ``(values (n, K, p), base (n, K))`` from the trees' outputs'."""
        return values, base

    def _linear_in_features(self) -> bool:
        """Whether the fitted raw scores are linear in some feature (a linear start), the
        part of a model that can run away along a feature's tail."""
        return getattr(self, "linear_start_", None) is not None

    def _check_feature_tails(self, family, X, y, sample_weight) -> None:
        """After a fit that is linear in some feature: warn where the training rows of a
        feature's tail are far from the model (:mod:`distboost.estimators.tail_check`), for
        a regressor of a 1-D target (a class, censoring bounds or a vector has no median to
        judge this way).  Trees and the location start's point model are constant beyond
        their last split: they are not checked (nor do they pay the predictions)."""
        if not is_regressor(self) or np.ndim(y) != 1 or not self._linear_in_features():
            return
        messages = feature_tail_messages(self, X, y, sample_weight)
        if messages:
            warnings.warn(
                f"{self._describe(family)}: " + "; ".join(messages) + ". The model "
                "extrapolates along the feature's tail: try the feature transformed (e.g. "
                "its log), linear_start=False, or another family (docs/engine.md, \"Outside "
                "the training range\").", UserWarning, stacklevel=4)

    def _resolve_tree_options(self, family, X, context: dict):
        """The tree options and ``param_options`` checked against X."""
        options = resolve_tree_options(self, X, self._tree_columns(X, context),
                                       self._output_params(family, context),
                                       list(family.param_names))
        if self.linear_start is True and options.restricted:
            raise ValueError(
                "linear_start=True cannot be combined with monotone_constraints or "
                "param_options 'features': a linear slope could break the constraint or use "
                "an excluded column. Use linear_start='auto' (the constant start then) or "
                "False.")
        return options

    def _default_step(self, family) -> str:
        if self.scoring_rule == "crps":
            return "newton"
        return family.default_step

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None, eval_sample_weight=None):
        """Fit one boosted ensemble per distribution parameter.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
            Features; DataFrame categorical (or string) columns are used as categoricals,
            NaN marks a missing value.
        y : array_like of shape (n,) (or (n, 2) bounds for a censored family)
            Target, inside the family's support.
        sample_weight : array_like of shape (n,), default=None
            Non-negative row weights (likelihood weights).
        eval_set : tuple (X_val, y_val) or list of one such tuple, default=None
            Validation rows for early stopping and calibration (always used when given).
        eval_sample_weight : array_like of shape (n_val,) or list of one, default=None
            Weights of the ``eval_set`` rows (LightGBM's name): a row of weight 0 counts as
            if it were left out.

        Returns
        -------
        self
        """
        self._validate_params()
        check_device(getattr(self, "device", "cpu"), getattr(self, "backend", None),
                     self.base_learner)
        # Before any fit (the linear start's choice fits on every fold first).
        check_step(getattr(self, "scoring_rule", "nll"), self.step)
        X = check_X(self, X, reset=True)
        family, y, fitted = self._prepare_target(y)
        n = check_consistent_rows(X=X, y=y)
        sample_weight = check_sample_weight(sample_weight, n)
        eval_set, eval_weight = check_eval_set(eval_set, eval_sample_weight)
        # One torch thread on small data (n_jobs=None): see distboost.boosting.threads.
        with fit_threads(self.n_jobs, n):
            return self._fit_checked(family, X, y, n, sample_weight, eval_set, eval_weight,
                                     fitted)

    def _fit_checked(self, family, X, y, n, sample_weight, eval_set, eval_weight, fitted):
        """The fit on validated inputs (see :meth:`fit`)."""
        fitted.update(self._prepare_features(X))
        fitted["_tree_options_"] = self._resolve_tree_options(family, X, fitted)
        seed = int_seed(self.random_state)
        location = location_plan(
            self.location_start, family,
            validation_mode(self.early_stopping, n, eval_set is not None),
            restricted=fitted["_tree_options_"].restricted,
            lightgbm=self.base_learner is None and getattr(self, "backend", None) in (
                None, "lightgbm"), linear_start=self.linear_start)
        plan = plan_fit(self, n, has_eval_set=eval_set is not None,
                        step=self._default_step(family) if self.step == "auto" else self.step,
                        location=location, threads=num_threads(self.n_jobs, n))
        if self.verbose:
            print(plan.describe(), flush=True)
        mode = plan.validation
        fitted["fit_plan_"] = plan  # the runs read it from their context
        run = self._fit_mode(family, X, y, sample_weight, eval_set, eval_weight, plan, fitted,
                             seed, location)
        self._set_fitted(family, run, mode, fitted)
        self._check_feature_tails(family, X, y, sample_weight)
        if (mode in ("cv", "holdout", "holdout_refit", "eval_set")
                and run.ensemble.best_iteration_ == 0
                and run.linear is None and run.location is None
                and run.ensemble.stopped_reason not in ("no_descent", "non_finite_loss")):
            warnings.warn(f"{self._describe(family)}: "
                          + constant_model_message(mode, n, self.linear_start, CV_FOLDS,
                                                   fitted["_tree_options_"].restricted),
                          UserWarning, stacklevel=3)
        if self.verbose:
            n_iter, best, reason = run.held_out or (self.n_iter_, self.best_iteration_,
                                                    run.ensemble.stopped_reason)
            print(stop_line(mode, reason, n_iter, best, run.cap, self.n_iter_no_change,
                            CV_FOLDS, refit=(self.best_iteration_, n)
                            if run.held_out else None), flush=True)
        return self

    def _set_fitted(self, family, run: Run, mode: str, fitted: dict) -> None:
        ensemble = run.ensemble
        evals = {split: dict(v) for split, v in ensemble.evals_result_.items()}
        if run.cv_curve is not None:
            evals["valid"] = {self._metric: list(run.cv_curve[1:])}
        attrs = {
            **fitted,
            "family_": family,
            "ensemble_": ensemble,
            "raw_floor_": run.objective.raw_floor,
            "dispersion_shift_": float(run.shift),
            "linear_start_": run.linear,
            "location_start_": run.location,
            "cv_members_": (None if run.members is None or not _scalar_regression(family)
                            else [FoldMember.from_run(r) for r in run.members]),
            "early_stopping_": mode,
            "step_": run.step,
            "n_iter_": ensemble.n_iter_,
            "best_iteration_": ensemble.best_iteration_,
            "evals_result_": evals,
            "num_leaves_": run.sizes[0],
            "min_child_samples_": run.sizes[1],
            "location_num_leaves_": None if run.location_size is None else run.location_size[0],
            "location_min_child_samples_": (None if run.location_size is None
                                            else run.location_size[1]),
            **self._fitted_from_run(run),
        }
        for name, value in attrs.items():
            setattr(self, name, value)

    @property
    def best_iterations_(self) -> dict:
        """Rounds kept by each raw output, keyed as ``predict_raw``'s columns (see the
        class's Attributes)."""
        return dict(zip(self._output_names(), self.ensemble_.rounds().tolist(), strict=True))

    def _describe(self, family) -> str:
        return f"{type(self).__name__}(family={family.name!r})"

    # ------------------------------------------------------------------ predict
    def _raw(self, X, iteration: int | None = None) -> np.ndarray:
        """The family's raw scores, ndarray of shape (n, K): trees, start, linear part,
        dispersion shift and floor."""
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        raw = self.ensemble_.predict_raw(self._tree_X(X, vars(self)), iteration)
        raw = self._unfloored_raw(raw, X)
        column = dispersion_columns(self.family_)
        return np.maximum(apply_shift(raw, column, self.dispersion_shift_), self.raw_floor_)

    def predict_raw(self, X, iteration: int | None = None) -> np.ndarray:
        """Raw (link-scale) scores of the family's parameters, ndarray of shape (n, K).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        iteration : int, optional
            Boosting rounds to use (default: ``best_iteration_``).
        """
        return self._raw(X, iteration)

    def explain(self, X, iteration: int | None = None):
        """Exact TreeSHAP values of every parameter's raw (link-scale) score, an
        :class:`~distboost.estimators.explain.Explanation` with ``values`` (n, K, p) and
        ``base_values`` (n, K): ``base_values + values.sum(-1) == predict_raw(X)``
        (``iteration``: rounds to use, default ``best_iteration_``)."""
        from .explain import explain_model

        return explain_model(self, X, iteration)

    def feature_importances(self, importance_type: str = "gain") -> pd.DataFrame:
        """Total split gain ("gain") or number of splits ("split") of each feature in
        each parameter's trees (kept rounds), DataFrame of shape (K, p): one row per raw
        output (the varying model's coefficients are ``loc[name]``), one column per
        feature of X."""
        from .explain import importance_table

        return importance_table(self, importance_type)

    @property
    def feature_importances_(self) -> np.ndarray:
        """Each feature's share of the split gain, averaged over the parameters whose trees
        split (zeros when none does), ndarray of shape (n_features_in_,), summing to 1.
        Gains of different parameters are in different units (a location's scale with
        ``y``), so each parameter's gains are normalised before the average."""
        from .explain import gain_shares

        return gain_shares(self.feature_importances("gain").to_numpy())

    def _params(self, X, iteration=None) -> dict:
        raw = torch.as_tensor(self._raw(X, iteration))
        with torch.no_grad():
            return {p: v.numpy() for p, v in self.family_.params_from_raw(raw).items()}

    def predict_params(self, X, iteration: int | None = None) -> pd.DataFrame:
        """Predicted distribution parameters on the natural scale.

        Returns
        -------
        DataFrame of shape (n, K)
            One column per parameter (torch's names); the index of X when X is a DataFrame.
        """
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame(self._params(X, iteration), index=index)

    def predict_dist(self, X, iteration: int | None = None) -> Predictive:
        """Predictive distributions, one per row of X (``iteration``: rounds to use, default
        ``best_iteration_``).

        Returns
        -------
        Predictive of length n
        """
        params = self._params(X, iteration)  # check_is_fitted first
        index = X.index if isinstance(X, pd.DataFrame) else None
        return Predictive(self.family_, params, index=index)

    def predict(self, X) -> np.ndarray:
        """Conditional mean, ndarray of shape (n,) ((n, d) for a vector family)."""
        return self.predict_dist(X).mean

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)):
        """Conditional quantiles: ndarray of shape (n, len(quantiles)), or a DataFrame with
        X's index and columns ``q0.05``, ... when X is a DataFrame."""
        levels = np.atleast_1d(np.asarray(quantiles, dtype=float))
        dist = self.predict_dist(X)
        out = dist.quantile(levels)
        if dist.index is None:
            return out
        return pd.DataFrame(out, index=dist.index, columns=quantile_columns(levels))

    def predict_interval(self, X, level: float = 0.9):
        """Central prediction interval of the given level: ndarray of shape (n, 2), or a
        DataFrame with X's index and columns ``lower``, ``upper`` when X is a DataFrame.  A
        vector family gives one interval per part: (n, d, 2), or columns ``<part>_lower``,
        ``<part>_upper``."""
        dist = self.predict_dist(X)
        out = dist.interval(level)
        if dist.index is None:
            return out
        if out.ndim == 3:  # a vector family: (n, d, 2), one interval per part
            columns = [f"{part}_{end}" for part in self.family_.parts for end in ("lower", "upper")]
            return pd.DataFrame(out.reshape(len(out), -1), index=dist.index, columns=columns)
        return pd.DataFrame(out, index=dist.index, columns=["lower", "upper"])

    def predict_uncertainty(self, X, n_members: int = 10,
                            members: str = "auto") -> pd.DataFrame:
        """Aleatoric, epistemic and total predictive variance per row.

        ``aleatoric`` is the mean of the members' predictive variances, ``epistemic`` the
        variance of their means, ``total`` the sum (the law of total variance of their equal
        mixture).  Three kinds of members (see :mod:`distboost.estimators.uncertainty`):

        - "randomized": the ``M`` models a fit with ``epistemic_members=M`` trained beside
          the model, with extremely randomised trees and their own seeds, each with its
          own dispersion shift.  They disagree where few rows support the prediction (not
          inside an empty gap, where every tree has one threshold).
        - "folds": the ``K`` models a cross-validated fit trained to choose its rounds
          (``cv_members_``: fewer than ``CV_MAX_ROWS`` training rows under the default
          ``early_stopping="auto"``), each on a different ``(K-1)/K`` of the rows, with the
          fit's dispersion shift.  They disagree where the data do not pin the mean down.
        - "virtual": the model truncated at ``n_members`` evenly spaced rounds of the
          second half of its kept rounds (Malinin et al. 2021; 0 for a model that kept no
          rounds).  They differ only where the later trees still move the prediction, which
          on small data (a few dozen rounds) need not be where the model saw few rows.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        n_members : int, default=10
            Members of the virtual ensemble.
        members : {"auto", "randomized", "folds", "virtual"}, default="auto"
            "auto": the randomised members when the fit has them, else the fold models when
            it has them, else the virtual ensemble.

        Returns
        -------
        DataFrame of shape (n, 3)
            Columns ``aleatoric``, ``epistemic``, ``total``; the index of X when X is a
            DataFrame.
        """
        from .uncertainty import uncertainty

        check_is_fitted(self)
        if not _scalar_regression(self.family_):
            raise ValueError(
                f"predict_uncertainty needs a scalar regression family; family "
                f"{self.family_.name!r} has no scalar mean and variance.")
        return uncertainty(self, X, n_members, members)

    def score(self, X, y, sample_weight=None) -> float:
        """Mean log-likelihood of ``y`` under the predicted distributions (higher is better;
        censored rows contribute ``log(F(u) - F(l))``).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        y : array_like of shape (n,)
        sample_weight : array_like of shape (n,), default=None

        Returns
        -------
        float
        """
        nll = self._nll_rows(X, y)
        w = check_sample_weight(sample_weight, len(nll))
        return float(np.average(-nll, weights=w))

    def _nll_rows(self, X, y) -> np.ndarray:
        """Each row's negative log-likelihood of ``y``, shape (n,) (censored rows
        ``-log(F(u) - F(l))``): the terms :meth:`score` averages."""
        raw = torch.as_tensor(self._raw(X))
        y = self._check_target(self.family_, y, "y", vars(self))
        check_consistent_rows(X=raw, y=y)
        with torch.no_grad():
            nll = self.family_.nll(raw, torch.as_tensor(np.require(y, requirements="W")))
        return np.asarray(nll.numpy(), dtype=np.float64)

    def save(self, path) -> None:
        """Save the fitted model to ``path`` in distboost's safe format (JSON plus the tree
        backend's text model; loading executes nothing).  Load it with ``db.load(path)``."""
        from ..persistence import save

        save(self, path)

    # ------------------------------------------------------------------ persistence
    #: Fitted attributes saved as they are (JSON values) by :meth:`_get_state`.
    _state_attrs = ("init_params_", "n_iter_", "best_iteration_", "step_",
                    "dispersion_shift_", "evals_result_", "early_stopping_", "num_leaves_",
                    "min_child_samples_")

    def _get_state(self) -> dict:
        """The fitted state as JSON values (for :mod:`distboost.persistence`)."""
        state = {name: getattr(self, name) for name in self._state_attrs}
        state["n_features_in_"] = self.n_features_in_
        for name in ("location_num_leaves_", "location_min_child_samples_"):
            state[name] = getattr(self, name, None)
        if hasattr(self, "feature_names_in_"):
            state["feature_names_in_"] = list(self.feature_names_in_)
        state["categories"] = getattr(self, "_categories_", None)
        state["raw_floor_"] = [v if np.isfinite(v) else None for v in self.raw_floor_]
        state["family_"] = self.family_.get_state()
        state["ensemble_"] = self.ensemble_.to_dict()
        linear = self.linear_start_
        state["linear_start_"] = None if linear is None else linear.to_dict()
        location = getattr(self, "location_start_", None)
        state["location_start_"] = None if location is None else location.to_dict()
        for name in ("cv_members_", "epistemic_members_"):
            members = getattr(self, name, None)
            state[name] = None if members is None else [m.to_dict() for m in members]
        plan = getattr(self, "fit_plan_", None)
        state["fit_plan_"] = None if plan is None else plan.to_dict()
        return state

    def _set_state(self, state: dict) -> None:
        """Restore what :meth:`_get_state` gave."""
        from ..families import from_state

        for name in self._state_attrs:
            setattr(self, name, state[name])
        self.n_features_in_ = state["n_features_in_"]
        # Absent from files saved before the attributes existed.
        self.location_num_leaves_ = state.get("location_num_leaves_")
        self.location_min_child_samples_ = state.get("location_min_child_samples_")
        if "feature_names_in_" in state:
            self.feature_names_in_ = np.asarray(state["feature_names_in_"], dtype=object)
        if state.get("categories") is not None:
            self._categories_ = state["categories"]
        self.raw_floor_ = np.array([-np.inf if v is None else v for v in state["raw_floor_"]])
        self.family_ = from_state(state["family_"])
        self.ensemble_ = FittedEnsemble.from_dict(state["ensemble_"])
        linear = state.get("linear_start_")
        self.linear_start_ = None if linear is None else LinearStart.from_dict(linear)
        location = state.get("location_start_")  # absent from models saved before it
        self.location_start_ = None if location is None else LocationStart.from_dict(location)
        for name in ("cv_members_", "epistemic_members_"):  # absent from older files
            members = state.get(name)
            setattr(self, name, None if members is None else [FoldMember.from_dict(m)
                                                              for m in members])
        self.fit_plan_ = FitPlan.from_dict(state.get("fit_plan_"))  # None: saved before it

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted once a fit has succeeded (the trees exist): a fit that raised leaves no
        model to predict with."""
        return hasattr(self, "ensemble_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _scalar_regression(family) -> bool:
    """Whether the family has a scalar mean and variance (not a vector or class law)."""
    return not (getattr(family, "multivariate", False)
                or getattr(family, "classification", False))
