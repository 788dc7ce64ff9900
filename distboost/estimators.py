"""Scikit-learn estimators: :class:`DistributionalRegressor` = family + boosting engine.

``fit`` validates the data, starts every parameter at the family's weighted marginal MLE, and
lets the engine grow one ensemble per parameter on the family's negative log-likelihood.
Predictions come back as a :class:`~distboost.Predictive` (whole distributions), or as the
usual arrays (mean, quantiles, intervals, parameters).
"""

from __future__ import annotations

import functools
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.exceptions import DataConversionWarning
from sklearn.model_selection import train_test_split
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import families as _families
from ._rounds import CV_FOLDS, cv_folds, padded_curves, select_rounds_by_cv, validation_mode
from ._validation import (
    check_consistent_rows,
    check_eval_set,
    check_sample_weight,
    check_X,
    int_seed,
)
from .boosting import STEP_RULES, EngineParams, fit_boosting
from .boosting.engine import FittedEnsemble
from .families._fisher import make_fisher_fn
from .linear_start import LinearStart, choose_linear_start, fit_linear_start
from .predictive import Predictive

__all__ = ["DistributionalRegressor"]

#: Bound of the dispersion calibration's raw shift (a factor of 20 on a log-linked scale).
MAX_DISPERSION_SHIFT = 3.0


class DistributionalRegressor(RegressorMixin, BaseEstimator):
    """Gradient-boosted distributional regression: one tree ensemble per distribution parameter.

    Parameters
    ----------
    family : str or Family, default="normal"
        The conditional distribution of ``y`` (see ``distboost.families.available()``).
    n_estimators : int, default=1000
        Maximum number of boosting rounds (each round grows one tree per parameter).
    learning_rate : float, default=0.05
        Shrinkage of every tree.  With early stopping judged after calibration, 0.02 and
        0.05 give the same held-out NLL on the UCI data within the split-to-split noise
        (better on 3 of 6 each), 0.05 in 40 % of the rounds; 0.1 was worse on 4 of 6.
        Early stopping, not the cap, ends training there (best rounds 90-500).
    step : {"auto", "natural", "fisher", "newton", "gradient"}, default="auto"
        How each round turns gradients into tree targets: the damped natural gradient (full
        Fisher solve per row, NGBoost's rule: invariant to how the parameters are written,
        and it does not weight the location's leaf values by the predicted precision, the
        feedback that lets a fitted scale collapse), the diagonal expected Fisher information
        as curvature (always positive), the guarded diagonal Hessian, or the plain gradient.
        "auto": the family's ``default_step``: "natural", but "fisher" for ``studentt`` (its
        ``df`` information vanishes as ``df`` grows), ``bernoulli``/``categorical`` and the
        truncated families (a Monte Carlo Fisher that varies inside a leaf biases the
        natural step's fixed point).
        Measured in ``benchmarks/step_rules.py`` and ``docs/engine.md``.
    num_leaves : int or "auto", default="auto"
        Maximum leaves per tree.  "auto": ``clip(round(sqrt(n) / 2), 4, 31)`` for ``n``
        training rows (see :func:`auto_tree_size`).
    max_depth : int, default=-1
        Maximum tree depth (-1: no limit beyond ``num_leaves``).
    min_child_samples : int or "auto", default="auto"
        Minimum rows in a leaf.  "auto": ``clip(round(sqrt(n) / 2), 5, 20)``.
    subsample : float, default=1.0
        Fraction of rows drawn (without replacement) for each round.
    colsample : float, default=1.0
        Fraction of features considered by each tree.
    reg_lambda : float, default=0.0
        L2 penalty on leaf values.
    max_bin : int, default=255
        Histogram bins per feature (LightGBM).
    calibrate : bool, default=True
        When validation rows are used (early stopping or ``eval_set``), shift the raw score
        of the family's dispersion parameter (``Family.dispersion_param``, e.g. the Normal's
        ``scale``) by the one constant that minimises the validation NLL; early stopping
        judges every round at its own best shift (:class:`DispersionSearch`).
        Trees fitted to the training rows see residuals smaller than new rows will have,
        so the boosted scale is too small by a common factor (10-25 % on the UCI data); one
        number fitted on held-out rows removes that optimism (the regression analogue of
        temperature scaling, Guo et al. 2017; Levi et al. 2022).  The shift is in
        ``dispersion_shift_``; families without a dispersion parameter are left alone.
    linear_start : "auto" or bool, default="auto"
        When the rounds are chosen by cross-validation (``early_stopping_ == "cv"``, small
        data), start boosting from a ridge-penalised linear model of every raw parameter
        (GAMLSS; the AFT model for censored times) if cross-validation prefers it to the
        constant start by more than one standard error; the trees then add only what the
        data support beyond it (:mod:`distboost.linear_start`).  Numeric columns enter
        standardised (NaN at the mean), categoricals as centred one-hot columns.  False:
        always the constant start (the weighted marginal MLE).
    early_stopping : {"auto", "cv", "holdout"} or bool, default="auto"
        How the number of rounds is chosen, on rows the trees do not see: stop when the
        (calibrated) validation NLL has not improved for ``n_iter_no_change`` rounds.
        "cv": by K-fold cross-validation on the training rows (5 folds; each round judged
        by the folds' mean validation NLL), then a refit on all rows for the best round,
        with the dispersion calibrated on the out-of-fold predictions.  "holdout": on a
        seeded split of ``validation_fraction`` of the rows.  "auto" (and True): "cv" below
        1,000 training rows, "holdout" above (see ``distboost._rounds``): a 10 % split of
        a few hundred rows is too small to choose the round and the calibration by, and
        boosting every round of ``n_estimators`` on small data collapses the predicted
        spread.  False: every round is kept.  An ``eval_set`` given to ``fit`` is always
        the validation set.  ``early_stopping_`` records what was used.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping when no ``eval_set`` is given.
    n_iter_no_change : int, default=20
        Patience of early stopping, in rounds: one unit of shrinkage at the default learning
        rate (20 x 0.05), as scikit-learn's HistGradientBoosting (10 x 0.1).  On the UCI race
        20, 30 and 50 rounds gave the same test NLL within the noise (20: better on concrete
        and energy, worse on kin8nm, wine and yacht by < 0.01) with 20 the fastest.
    links : dict, default=None
        Link overrides by parameter name, e.g. ``{"scale": "softplus"}``.
    base_learner : sklearn regressor, default=None
        None: LightGBM histogram trees.  Otherwise any scikit-learn regressor (e.g.
        ``DecisionTreeRegressor(max_depth=3)``), cloned for every round and parameter.
    random_state : int, default=None
        Seed of subsampling, the validation split and Monte Carlo Fisher estimates.
    n_jobs : int, default=None
        Threads used by LightGBM (None: its default).
    verbose : int, default=0
        Print train/validation NLL every ``verbose`` rounds.

    Attributes
    ----------
    family_ : Family
    ensemble_ : FittedEnsemble
    init_params_ : dict of str to float
        Weighted marginal MLE the boosting starts from.
    step_ : str
        The step rule used (``step`` with "auto" resolved).
    dispersion_shift_ : float
        Constant added to the dispersion parameter's raw score by ``calibrate`` (0.0 when not
        applied); already included in ``ensemble_.init_raw``.
    raw_floor_ : ndarray of shape (K,)
        Lower bound of each raw score (``-inf`` but for a ``scale`` parameter, floored at
        ``1e-6`` x the standard deviation of ``y``; see ``Family.param_floors``), applied in
        training and prediction.
    linear_start_ : LinearStart or None
        The linear part of the start (None: the constant start).
    early_stopping_ : str
        Where the validation rows came from: "eval_set", "cv", "holdout", "none" or
        "constant" (a single training row: the start values are kept).
    n_iter_ : int
        Rounds run (of the refit on all rows after cross-validation).
    best_iteration_ : int
        Rounds kept (the best validation round when early stopping).
    num_leaves_, min_child_samples_ : int
        The tree sizes used ("auto" resolved for the training rows).
    evals_result_ : dict
        Loss history per round: ``{"train": {"nll": [...]}, "valid": {"nll": [...]}}``;
        after cross-validation "valid" is the folds' weighted mean (as ``lightgbm.cv``).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X is a DataFrame with string column names.

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

    _parameter_constraints: dict = {
        "family": [str, _families.Family],
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "learning_rate": [Interval(Real, 0.0, None, closed="neither")],
        "step": [StrOptions(set(STEP_RULES) | {"auto"})],
        "num_leaves": [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        "max_depth": [Interval(Integral, -1, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left"),
                              StrOptions({"auto"})],
        "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "colsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "reg_lambda": [Interval(Real, 0.0, None, closed="left")],
        "max_bin": [Interval(Integral, 2, None, closed="left")],
        "calibrate": ["boolean"],
        "linear_start": [StrOptions({"auto"}), "boolean"],
        "early_stopping": [StrOptions({"auto", "cv", "holdout"}), "boolean"],
        "validation_fraction": [Interval(Real, 0.0, 1.0, closed="neither")],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "links": [dict, None],
        "base_learner": [None, HasMethods(["fit", "predict"])],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        family="normal",
        *,
        n_estimators: int = 1000,
        learning_rate: float = 0.05,
        step: str = "auto",
        num_leaves: int | str = "auto",
        max_depth: int = -1,
        min_child_samples: int | str = "auto",
        subsample: float = 1.0,
        colsample: float = 1.0,
        reg_lambda: float = 0.0,
        max_bin: int = 255,
        calibrate: bool = True,
        linear_start="auto",
        early_stopping="auto",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 20,
        links: dict | None = None,
        base_learner=None,
        random_state=None,
        n_jobs: int | None = None,
        verbose: int = 0,
    ):
        self.family = family
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.step = step
        self.num_leaves = num_leaves
        self.max_depth = max_depth
        self.min_child_samples = min_child_samples
        self.subsample = subsample
        self.colsample = colsample
        self.reg_lambda = reg_lambda
        self.max_bin = max_bin
        self.calibrate = calibrate
        self.linear_start = linear_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.links = links
        self.base_learner = base_learner
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Fit one boosted ensemble per distribution parameter.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
            Features; DataFrame categorical (or string) columns are used as categoricals,
            NaN marks a missing value.
        y : array_like of shape (n,)
            Target, inside the family's support.
        sample_weight : array_like of shape (n,), default=None
            Non-negative row weights (likelihood weights).
        eval_set : tuple (X_val, y_val), default=None
            Validation data for early stopping (always used when given).

        Returns
        -------
        self
        """
        self._validate_params()
        family = _families.get(self.family, links=self.links)
        X = check_X(self, X, reset=True)
        y = self._check_y(family, y)
        n = check_consistent_rows(X=X, y=y)
        sample_weight = check_sample_weight(sample_weight, n)
        eval_set = check_eval_set(eval_set)

        mode = validation_mode(self.early_stopping, n, eval_set is not None)
        if mode == "cv":
            run = self._fit_cross_validated(family, X, y, sample_weight)
        else:
            X, y, sample_weight, X_val, y_val, w_val = _validation_rows(
                self, family, X, y, sample_weight, eval_set, mode
            )
            run = self._fit_rows(family, X, y, sample_weight, X_val, y_val, w_val,
                                 n_estimators=1 if mode == "constant" else None)
            if mode == "constant":
                run.ensemble.best_iteration_ = 0
            if self.calibrate and X_val is not None:
                run.shift = calibrate_dispersion(run.ensemble, family, run.loss, X_val,
                                                 torch.as_tensor(y_val), w_val)
        self.ensemble_ = run.ensemble
        self.raw_floor_ = run.raw_floor
        self.dispersion_shift_ = run.shift
        self.linear_start_ = run.linear
        self.early_stopping_ = mode
        init_params, step = run.init_params, run.step
        self.step_ = step
        self.family_ = family
        self.init_params_ = init_params
        self.n_iter_ = self.ensemble_.n_iter_
        self.best_iteration_ = self.ensemble_.best_iteration_
        self.evals_result_ = {
            split: {"nll": list(v.get("loss", []))}
            for split, v in self.ensemble_.evals_result_.items()
        }
        if run.cv_curve is not None:
            self.evals_result_["valid"] = {"nll": list(run.cv_curve[1:])}
        return self

    def _fit_rows(self, family, X, y, sample_weight, X_val=None, y_val=None, w_val=None,
                  n_estimators: int | None = None, penalty: float | None = None,
                  warn: bool = True, where: str = "") -> _Run:
        """One boosting run on the given rows: start values, loss, engine.

        Early stopping (and the per-round calibrated validation score) when validation rows
        are given; ``n_estimators`` overrides the estimator's cap (the refit after
        cross-validation); ``penalty`` starts boosting from the penalised linear model of
        :mod:`distboost.linear_start` instead of the constant.  The returned run's
        ``valid_curve`` holds the validation score after rounds ``0..R`` (round 0: the
        start values).
        """
        init_params, init_raw, raw_floor, loss = _family_loss(family, y, sample_weight, warn)
        data = {"y": torch.tensor(y)}
        data_val = None if X_val is None else {"y": torch.tensor(y_val)}
        linear = None
        if penalty is not None:
            linear = LinearStart.design_of(X)
            Z = linear.design(X)
            try:
                init_raw, linear.coef = fit_linear_start(loss, init_raw, Z, data,
                                                         sample_weight, penalty,
                                                         _slope_mask(family))
            except FloatingPointError:
                warnings.warn(
                    f"{type(self).__name__}(family={family.name!r}): the penalised linear "
                    f"start (penalty {penalty}) diverged on {len(y)} rows; boosting starts "
                    "from the constant instead.", RuntimeWarning, stacklevel=3)
                linear = None
        if linear is not None:
            data["offset"] = torch.as_tensor(Z @ linear.coef)
            if data_val is not None:
                data_val["offset"] = torch.as_tensor(linear.offset(X_val))
        step = family.default_step if self.step == "auto" else self.step
        fisher = None
        if step in ("fisher", "natural"):
            fisher = _offset_fisher(make_fisher_fn(family, seed=self._seed()))
        valid_score, start_score = None, None
        if X_val is not None:
            dispersion = getattr(family, "dispersion_param", None)
            if self.calibrate and dispersion is not None:
                # Early stopping judges each round as it will be used: after calibration.
                search = DispersionSearch(loss, data_val, w_val,
                                          family.param_names.index(dispersion))
                last = {"shift": 0.0}

                def valid_score(raw, data, weight):
                    last["shift"], value = search(raw, center=last["shift"])
                    return value

                start_score = valid_score
            else:
                start_score = functools.partial(_mean_loss, loss)
            start_score = start_score(np.tile(init_raw, (len(y_val), 1)), data_val, w_val)
        params = self._engine_params(step, len(y))
        if n_estimators is not None:
            params.n_estimators = n_estimators
        if X_val is None:
            params.early_stopping_rounds = None
        ensemble = fit_boosting(
            loss, init_raw, X, data,
            params=params,
            sample_weight=sample_weight,
            X_val=X_val,
            data_val=data_val,
            sample_weight_val=w_val,
            fisher=fisher,
            valid_score=valid_score,
            warn_context=f"{type(self).__name__}(family={family.name!r}){where}",
        )
        curve = None
        if X_val is not None:
            curve = np.array([start_score, *ensemble.evals_result_["valid"]["loss"]])
        return _Run(ensemble, loss, raw_floor, init_params, step, curve,
                    linear=linear)

    def _fit_cross_validated(self, family, X, y, sample_weight) -> _Run:
        """Rounds chosen by K-fold cross-validation, then a refit on all rows.

        First the start: the penalised linear model of every raw parameter when
        ``linear_start`` and cross-validation prefer it to the constant
        (:func:`~distboost.linear_start.choose_linear_start`).  Each fold is then a full
        fit from that start (its own start values, early stopping at the estimator's
        patience, each round judged after its own best dispersion shift); the kept round
        is the earliest whose folds' weighted mean validation score is within one standard
        error of the best (:func:`best_cv_round`; round 0 keeps the start).  The dispersion
        shift is fitted on the out-of-fold predictions at that round, so it corrects the
        optimism of trees fitted on the rows they are judged on, as the held-out shift does
        on large data.
        """
        n = len(y)
        w = np.ones(n) if sample_weight is None else sample_weight
        folds = cv_folds(n, self._seed(), _class_strata(family, y, 1.0 / CV_FOLDS))
        penalty = None
        if self.linear_start:
            def make_loss(y_rows):
                _, init_raw, _, loss = _family_loss(family, y_rows, None, warn=False)
                return loss, init_raw

            penalty = choose_linear_start(make_loss, X, y, sample_weight, folds,
                                          LinearStart.design_of, _slope_mask(family))

        count = {"fold": 0}

        def fit_fold(train, valid):
            count["fold"] += 1
            return self._fit_rows(family, _take(X, train), y[train],
                                  None if sample_weight is None else sample_weight[train],
                                  _take(X, valid), y[valid],
                                  None if sample_weight is None else sample_weight[valid],
                                  penalty=penalty, warn=False,
                                  where=f", cross-validation fold {count['fold']}/{len(folds)}")

        weights = [float(w[valid].sum()) for _, valid in folds]
        best, runs = select_rounds_by_cv(fit_fold, folds, weights)
        oof = np.empty((n, family.n_params))
        for run, (_, valid) in zip(runs, folds, strict=True):
            raw = run.ensemble.predict_raw(_take(X, valid), num_iteration=best)
            if run.linear is not None:
                raw = raw + run.linear.offset(_take(X, valid))
            oof[valid] = np.maximum(raw, run.raw_floor)
        final = self._fit_rows(family, X, y, sample_weight, n_estimators=max(best, 1),
                               penalty=penalty)
        final.ensemble.best_iteration_ = min(best, final.ensemble.n_iter_)
        curves = padded_curves([r.valid_curve for r in runs])
        final.cv_curve = np.average(curves, axis=0, weights=weights)
        dispersion = getattr(family, "dispersion_param", None)
        if self.calibrate and dispersion is not None:
            k = family.param_names.index(dispersion)
            final.shift, _ = best_dispersion_shift(final.loss, oof,
                                                   {"y": torch.as_tensor(y)}, sample_weight, k)
            final.ensemble.init_raw[k] += final.shift
        return final

    def _seed(self) -> int:
        return int_seed(self.random_state)

    def _engine_params(self, step: str, n: int) -> EngineParams:
        leaves, min_rows = auto_tree_size(n)
        self.num_leaves_ = leaves if self.num_leaves == "auto" else self.num_leaves
        self.min_child_samples_ = (min_rows if self.min_child_samples == "auto"
                                   else self.min_child_samples)
        return EngineParams(
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            step=step,
            num_leaves=self.num_leaves_,
            max_depth=self.max_depth,
            min_child_samples=self.min_child_samples_,
            subsample=self.subsample,
            colsample=self.colsample,
            reg_lambda=self.reg_lambda,
            max_bin=self.max_bin,
            early_stopping_rounds=self.n_iter_no_change,
            random_state=self._seed(),
            n_jobs=self.n_jobs,
            verbose=self.verbose,
            base_learner=self.base_learner,
        )

    @staticmethod
    def _check_y(family, y, name: str = "y") -> np.ndarray:
        if y is None:
            raise ValueError(
                f"This estimator requires y to be passed, but the target {name} is None."
            )
        if isinstance(y, pd.DataFrame | pd.Series):
            y = y.to_numpy()
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn(
                f"A column-vector {name} was passed when a 1d array was expected; "
                "it is used as a 1-D array.", DataConversionWarning, stacklevel=3,
            )
            y = y[:, 0]
        if y.dtype.kind not in "biuf":
            try:
                y = y.astype(np.float64)
            except (TypeError, ValueError) as err:
                raise ValueError(f"Target {name} must be numeric, got dtype {y.dtype}.") from err
        if y.ndim == 1 and y.shape[0] == 0:
            raise ValueError(f"Target {name} has 0 rows; at least 1 row is required.")
        try:
            return family.validate_y(y)
        except ValueError as err:
            if name != "y":
                raise ValueError(f"{name}: {err}") from err
            raise

    # ------------------------------------------------------------------ predict
    def _raw(self, X) -> np.ndarray:
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        raw = self.ensemble_.predict_raw(X)
        if getattr(self, "linear_start_", None) is not None:
            raw = raw + self.linear_start_.offset(X)
        return np.maximum(raw, self.raw_floor_)

    def predict_params(self, X) -> pd.DataFrame:
        """Predicted distribution parameters on the natural scale.

        Returns
        -------
        DataFrame of shape (n, K)
            One column per parameter (torch's names).
        """
        raw = torch.as_tensor(self._raw(X))
        with torch.no_grad():
            params = self.family_.params_from_raw(raw)
        index = X.index if isinstance(X, pd.DataFrame) else None
        return pd.DataFrame({p: v.numpy() for p, v in params.items()}, index=index)

    def predict_dist(self, X) -> Predictive:
        """Predictive distributions, one per row of X.

        Returns
        -------
        Predictive of length n
        """
        raw = torch.as_tensor(self._raw(X))
        with torch.no_grad():
            params = self.family_.params_from_raw(raw)
        return Predictive(self.family_, {p: v.numpy() for p, v in params.items()})

    def predict(self, X) -> np.ndarray:
        """Conditional mean, ndarray of shape (n,)."""
        return self.predict_dist(X).mean

    def predict_quantiles(self, X, quantiles=(0.05, 0.5, 0.95)) -> np.ndarray:
        """Conditional quantiles, ndarray of shape (n, len(quantiles))."""
        return self.predict_dist(X).quantile(np.atleast_1d(np.asarray(quantiles, dtype=float)))

    def predict_interval(self, X, level: float = 0.9) -> np.ndarray:
        """Central prediction interval of the given level, ndarray of shape (n, 2)."""
        return self.predict_dist(X).interval(level)

    def score(self, X, y, sample_weight=None) -> float:
        """Mean log-likelihood of ``y`` under the predicted distributions (higher is better).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
        y : array_like of shape (n,)
        sample_weight : array_like of shape (n,), default=None

        Returns
        -------
        float
        """
        raw = torch.as_tensor(self._raw(X))
        y = self._check_y(self.family_, y)
        check_consistent_rows(X=raw, y=y)
        with torch.no_grad():
            # The training likelihood: censored rows contribute log(F(u) - F(l)).
            logp = -self.family_.nll(raw, torch.as_tensor(y)).numpy()
        w = check_sample_weight(sample_weight, len(y))
        return float(np.average(logp, weights=w))

    def save(self, path) -> None:
        """Save the fitted model to ``path`` in distboost's safe format (JSON metadata plus
        LightGBM's text model; loading executes nothing).  Load it with ``db.load(path)``.
        """
        from .persistence import save

        save(self, path)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        # score() is the mean log-likelihood, not R^2: scikit-learn's check that a regressor
        # scores above 0.5 on its toy data does not apply to a likelihood.
        tags.regressor_tags.poor_score = True
        return tags


def _mean_loss(loss, raw, data, weight) -> float:
    """Weighted mean of ``loss`` at ``raw`` (ndarray of shape (n, K))."""
    with torch.no_grad():
        per_row = loss(torch.as_tensor(raw, dtype=torch.float64), data).numpy()
    return float(np.average(per_row, weights=weight))


@dataclass
class _Run:
    """One boosting run of :meth:`DistributionalRegressor._fit_rows`."""

    ensemble: FittedEnsemble
    loss: Callable
    raw_floor: np.ndarray
    init_params: dict
    step: str
    valid_curve: np.ndarray | None
    shift: float = 0.0
    cv_curve: np.ndarray | None = None
    linear: LinearStart | None = None


def _family_loss(family, y, sample_weight, warn: bool = True):
    """Start values and the floored per-row loss of ``family`` on the rows ``y``.

    Returns
    -------
    init_params : dict of str to float
    init_raw : ndarray of shape (K,)
    raw_floor : ndarray of shape (K,)
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``: the family's NLL at
        ``max(raw + data["offset"], floor)`` (no offset when ``data`` has none).
    """
    init_params = family.init(y, sample_weight)
    with warnings.catch_warnings():
        if not warn:
            warnings.simplefilter("ignore", UserWarning)
        init_params, init_raw, raw_floor = _floored_start(family, init_params, y)
    floor_t = torch.as_tensor(raw_floor)

    def loss(raw, data):
        if "offset" in data:
            raw = raw + data["offset"]
        return family.nll(torch.maximum(raw, floor_t), data["y"])

    return init_params, init_raw, raw_floor, loss


def _raw_floor(family, y) -> np.ndarray:
    floors = family.param_floors(y)
    out = np.full(family.n_params, -np.inf)
    for k, p in enumerate(family.param_names):
        if p in floors:
            out[k] = float(family.links[p].inverse(np.asarray(floors[p])))
    return out


def _slope_mask(family) -> np.ndarray:
    """Raw outputs the linear start gives slopes: all but the dispersion parameter (as the
    AFT models and GAMLSS's usual start; the trees add a varying dispersion)."""
    mask = np.ones(family.n_params)
    dispersion = getattr(family, "dispersion_param", None)
    if dispersion is not None and family.n_params > 1:
        mask[family.param_names.index(dispersion)] = 0.0
    return mask


def _offset_fisher(fisher):
    """``fisher(raw, data)`` evaluated at ``raw + data["offset"]`` when there is one."""
    def wrapped(raw, data):
        return fisher(raw + data["offset"] if "offset" in data else raw, data)

    return wrapped


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


def _validation_rows(estimator, family, X, y, sample_weight, eval_set, mode: str):
    """The training rows and the validation rows of a fit (shared by the estimators).

    The ``eval_set`` when given (validated against ``fit``'s X); otherwise, when ``mode`` is
    "holdout" (see :func:`~distboost._rounds.validation_mode`), a seeded split holding out
    ``validation_fraction`` of the rows; otherwise no validation rows.

    Returns
    -------
    X, y, sample_weight, X_val, y_val, w_val
        The validation entries are None when there are no validation rows.
    """
    X_val = y_val = w_val = None
    n = check_consistent_rows(X=X, y=y)
    if eval_set is not None:
        X_val = check_X(estimator, eval_set[0], reset=False)
        y_val = estimator._check_y(family, eval_set[1], name="y of eval_set")
        check_consistent_rows(X_val=X_val, y_val=y_val)
    elif mode == "holdout":
        idx_train, idx_val = train_test_split(
            np.arange(n), test_size=estimator.validation_fraction,
            random_state=estimator._seed(),
            stratify=_class_strata(family, y, estimator.validation_fraction),
        )
        X_val, y_val = _take(X, idx_val), y[idx_val]
        w_val = None if sample_weight is None else sample_weight[idx_val]
        X, y = _take(X, idx_train), y[idx_train]
        sample_weight = None if sample_weight is None else sample_weight[idx_train]
    return X, y, sample_weight, X_val, y_val, w_val


def auto_tree_size(n: int) -> tuple[int, int]:
    """Default ``(num_leaves, min_child_samples)`` for ``n`` training rows.

    Both grow like ``sqrt(n) / 2``: a tree of ``L`` leaves of at least ``m`` rows needs
    ``L m <= n``, and ``L = m = sqrt(n) / 2`` balances how finely a tree splits against how
    many rows back each leaf's estimate (a leaf's scale estimate from 5 rows is noise).
    Leaves are capped at 31 (LightGBM's default) and leaf sizes kept within [5, 20]
    (LightGBM's default 20 stops a 220-row data set such as UCI yacht from following its
    steep curve: RMSE 6.8 against NGBoost's 0.7).

    Returns
    -------
    num_leaves, min_child_samples : int
    """
    root = math.sqrt(max(int(n), 1)) / 2.0
    return int(min(max(round(root), 4), 31)), int(min(max(round(root), 5), 20))


#: Offsets of the batched grid around the current guess in :class:`DispersionSearch`.
_SHIFT_GRID = np.linspace(-0.2, 0.2, 9)


class DispersionSearch:
    """Finds the constant shift of raw column ``k`` that minimises the weighted mean loss.

    Each call evaluates ``mean_w loss(raw + delta e_k, data)`` for nine shifts around
    ``center`` (spacing 0.0125) and ``delta = 0`` in one batched torch call; when that grid
    brackets the minimum (the usual case when ``center`` is the previous round's shift) the
    vertex of the parabola through the best point and its neighbours is the answer (the loss
    is smooth in ``delta``; for the Normal it is convex).  Otherwise a grid four times
    coarser moves until it brackets the minimum and the fine grid is laid around it.
    The tiled data are built once, so a call costs little more than one batched loss: cheap
    enough for every boosting round.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``.
    data : dict of str to Tensor
        Row-aligned tensors.
    weight : ndarray of shape (n,) or None
    k : int
        Column of the dispersion parameter.
    max_shift : float
        Bound of ``|delta|``.
    """

    def __init__(self, loss, data: dict, weight, k: int,
                 max_shift: float = MAX_DISPERSION_SHIFT):
        self.loss, self.data, self.k, self.max_shift = loss, data, k, max_shift
        n = len(next(iter(data.values())))
        w = (np.full(n, 1.0 / n) if weight is None
             else np.asarray(weight, dtype=np.float64) / np.sum(weight))
        self.w = torch.as_tensor(w)
        self._tiled: dict[int, dict] = {}

    def _mean_loss(self, raw: torch.Tensor, deltas: np.ndarray) -> np.ndarray:
        m = len(deltas)
        if m not in self._tiled:
            self._tiled[m] = {key: v.repeat(m, *([1] * (v.dim() - 1)))
                              for key, v in self.data.items()}
        shifted = raw.repeat(m, 1)
        shifted[:, self.k] += torch.from_numpy(np.repeat(deltas, raw.shape[0]))
        with torch.no_grad():
            values = (self.loss(shifted, self._tiled[m]).reshape(m, -1) @ self.w).numpy()
        return np.where(np.isfinite(values), values, np.inf)

    def __call__(self, raw, center: float = 0.0) -> tuple[float, float]:
        """Return ``(delta, value)``: the shift (0.0 when no shift lowers the loss) and the
        loss it gives.  ``raw``: ndarray or Tensor of shape (n, K)."""
        raw = torch.as_tensor(np.asarray(raw, dtype=np.float64))
        g, h, top = len(_SHIFT_GRID), _SHIFT_GRID[1] - _SHIFT_GRID[0], self.max_shift
        center = min(max(float(center), -top), top)
        fine = np.clip(center + _SHIFT_GRID / 4.0, -top, top)
        values = self._mean_loss(raw, np.append(fine, 0.0))
        fine_values, at_zero = values[:g], float(values[-1])
        j = int(np.argmin(fine_values))
        if not 0 < j < g - 1:  # the minimum is outside the fine window: search coarsely
            coarse = np.clip(center + _SHIFT_GRID, -top, top)
            coarse_values = self._mean_loss(raw, coarse)
            i = int(np.argmin(coarse_values))
            for _ in range(int(2 * top / (h * (g - 1))) + 2):  # move the coarse window
                if 0 < i < g - 1 or abs(coarse[i]) >= top:
                    break
                coarse = np.clip(coarse[i] + _SHIFT_GRID, -top, top)
                coarse_values = self._mean_loss(raw, coarse)
                i = int(np.argmin(coarse_values))
            for _ in range(3):  # the fine window, moved until it brackets the minimum
                fine = np.clip((coarse[i] if _ == 0 else fine[j]) + _SHIFT_GRID / 4.0,
                               -top, top)
                fine_values = self._mean_loss(raw, fine)
                j = int(np.argmin(fine_values))
                if 0 < j < g - 1 or abs(fine[j]) >= top:
                    break
        best, value = float(fine[j]), float(fine_values[j])
        if 0 < j < g - 1:  # vertex of the parabola through the best point and its neighbours
            left, mid, right = fine_values[j - 1:j + 2]
            curvature = left - 2.0 * mid + right
            if np.isfinite(curvature) and curvature > 0:
                best += 0.5 * (fine[1] - fine[0]) * (left - right) / curvature
                value = mid - (left - right) ** 2 / (8.0 * curvature)
        if np.isfinite(value) and value < at_zero:
            return best, value
        return 0.0, at_zero


def best_dispersion_shift(loss, raw, data: dict, weight, k: int, center: float = 0.0,
                          max_shift: float = MAX_DISPERSION_SHIFT) -> tuple[float, float]:
    """One :class:`DispersionSearch`: the shift of raw column ``k`` (of ``raw``, shape
    (n, K)) minimising the weighted mean ``loss``, and that loss."""
    return DispersionSearch(loss, data, weight, k, max_shift)(raw, center)


def calibrate_dispersion(ensemble, family, loss, X_val, y_val, w_val=None) -> float:
    """Shift the dispersion parameter's raw start value to minimise the validation loss.

    Finds the constant ``delta`` (:func:`best_dispersion_shift`) for the column of
    ``family.dispersion_param`` and adds it to ``ensemble.init_raw`` so that every
    prediction includes it.  With a log link this multiplies every predicted scale by
    ``exp(delta)``; for the Normal the optimum is ``sqrt(mean z^2)`` of the validation
    z-scores.

    Parameters
    ----------
    ensemble : FittedEnsemble
        Modified in place.
    family : Family
    loss : callable
        ``loss(raw: Tensor[n, K], {"y": y}) -> Tensor[n]``, the training loss.
    X_val : ndarray or DataFrame of shape (n_val, p)
    y_val : Tensor of shape (n_val,) or (n_val, 2)
    w_val : ndarray of shape (n_val,), optional

    Returns
    -------
    float
        The shift applied (0.0 if none).

    References
    ----------
    Guo, Pleiss, Sun & Weinberger (2017), On calibration of modern neural networks, ICML
    (temperature scaling); Levi, Gispan, Giladi & Fetaya (2022), Evaluating and calibrating
    uncertainty prediction in regression tasks, Sensors 22 (std scaling); Brophy & Lowd
    (2022), Instance-based uncertainty estimation for gradient-boosted regression trees,
    NeurIPS (a scalar variance factor tuned on validation data).
    """
    name = getattr(family, "dispersion_param", None)
    if name is None:
        return 0.0
    k = family.param_names.index(name)
    delta, _ = best_dispersion_shift(loss, ensemble.predict_raw(X_val), {"y": y_val},
                                     w_val, k)
    ensemble.init_raw[k] += delta
    return delta


def _why_so_small(y) -> str:
    """Why a marginal MLE lands below a floor: a constant target, or a point mass."""
    v = np.asarray(y, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0 or np.ptp(v) <= 1e-12 * np.max(np.abs(v)):
        return "The target is constant or nearly so"
    values, counts = np.unique(v, return_counts=True)
    j = int(np.argmax(counts))
    return (f"y has a point mass: {counts[j]} of {v.size} values equal {values[j]:.6g}, "
            "which a density cannot hold (consider a zero-adjusted or discrete family)")


def _class_strata(family, y, validation_fraction):
    """Class labels to stratify the early-stopping split by, for a classification family
    (``bernoulli``, ``categorical``: those with ``class_probs``) when every class can appear
    on both sides (at least 2 rows per class, both sides at least as long as the number of
    classes); None otherwise (a plain random split), as scikit-learn's HistGradientBoosting
    classifier."""
    if not hasattr(family, "class_probs"):
        return None
    counts = np.unique(y, return_counts=True)[1]
    n_val = int(np.ceil(validation_fraction * y.size))
    if counts.min() < 2 or counts.size > min(n_val, y.size - n_val):
        return None
    return y


def _floored_start(family, init_params, y, what: str | None = None):
    """Raise start values below the family's floors (with a warning) and map them to raw.

    Parameters
    ----------
    family : Family
    init_params : dict of str to float
        Natural-scale start values (e.g. the weighted marginal MLE).
    y : ndarray of shape (n,)
        The target the floors are relative to (``Family.param_floors``).
    what : str, optional
        Start of the warning, saying why a parameter is so small (default: what ``y``
        shows, see :func:`_why_so_small`).

    Returns
    -------
    init_params : dict of str to float
    init_raw : ndarray of shape (K,)
    raw_floor : ndarray of shape (K,)
        Lower bound of each raw score (``-inf`` for parameters without a floor).
    """
    init_params = dict(init_params)
    floors = family.param_floors(y)
    floored = [p for p, v in floors.items() if init_params[p] < v]
    if floored and what is None:
        what = _why_so_small(y)
    for p in floored:
        warnings.warn(
            f"{what}: the marginal {p!r} of family "
            f"{family.name!r} is {init_params[p]:.3g}, floored at {floors[p]:.3g} "
            "(see Family.param_floors) so that the likelihood stays finite.",
            UserWarning, stacklevel=3,
        )
        init_params[p] = floors[p]
    init_raw = np.asarray(family.raw_from_params(init_params), dtype=np.float64)
    return init_params, init_raw, _raw_floor(family, y)
