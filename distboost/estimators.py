"""Scikit-learn estimators: :class:`DistributionalRegressor` = family + boosting engine.

``fit`` validates the data, starts every parameter at the family's weighted marginal MLE, and
lets the engine grow one ensemble per parameter on the family's negative log-likelihood.
Predictions come back as a :class:`~distboost.Predictive` (whole distributions), or as the
usual arrays (mean, quantiles, intervals, parameters).
"""

from __future__ import annotations

import warnings
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
from ._validation import check_consistent_rows, check_eval_set, check_sample_weight, check_X
from .boosting import STEP_RULES, EngineParams, fit_boosting
from .families._fisher import make_fisher_fn
from .predictive import Predictive

__all__ = ["DistributionalRegressor"]

#: Rows above which ``early_stopping="auto"`` holds out a validation split (as scikit-learn's
#: HistGradientBoosting does).
AUTO_EARLY_STOPPING_ROWS = 10_000


class DistributionalRegressor(RegressorMixin, BaseEstimator):
    """Gradient-boosted distributional regression: one tree ensemble per distribution parameter.

    Parameters
    ----------
    family : str or Family, default="normal"
        The conditional distribution of ``y`` (see ``distboost.families.available()``).
    n_estimators : int, default=1000
        Maximum number of boosting rounds (each round grows one tree per parameter).
    learning_rate : float, default=0.05
        Shrinkage of every tree.
    step : {"fisher", "natural", "newton", "gradient"}, default="fisher"
        How each round turns gradients into tree targets: diagonal expected Fisher
        information as curvature (closed form or Monte Carlo; always positive, stable on all
        twelve families), the damped natural gradient (full Fisher solve per row, NGBoost's
        rule; slightly better held-out NLL for the Normal on 4 of 6 UCI datasets in
        ``benchmarks/step_rules.py``, but it can run away on weakly identified parameters
        such as Student's ``df``), the guarded diagonal Hessian, or the plain gradient.
    num_leaves : int, default=31
        Maximum leaves per tree.
    max_depth : int, default=-1
        Maximum tree depth (-1: no limit beyond ``num_leaves``).
    min_child_samples : int, default=20
        Minimum rows in a leaf.
    subsample : float, default=1.0
        Fraction of rows drawn (without replacement) for each round.
    colsample : float, default=1.0
        Fraction of features considered by each tree.
    reg_lambda : float, default=0.0
        L2 penalty on leaf values.
    max_bin : int, default=255
        Histogram bins per feature (LightGBM).
    early_stopping : "auto" or bool, default="auto"
        Stop when the validation NLL has not improved for ``n_iter_no_change`` rounds.
        "auto": on when the training set has more than 10,000 rows.  An ``eval_set`` given to
        ``fit`` is always used for early stopping.
    validation_fraction : float, default=0.1
        Share of the training rows held out for early stopping when no ``eval_set`` is given.
    n_iter_no_change : int, default=50
        Patience of early stopping, in rounds.
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
    raw_floor_ : ndarray of shape (K,)
        Lower bound of each raw score (``-inf`` but for a ``scale`` parameter, floored at
        ``1e-6 x mean |y|``; see ``Family.param_floors``), applied in training and prediction.
    n_iter_ : int
        Rounds run.
    best_iteration_ : int
        Rounds kept (the best validation round when early stopping).
    evals_result_ : dict
        Loss history per round: ``{"train": {"nll": [...]}, "valid": {"nll": [...]}}``.
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
        "step": [StrOptions(set(STEP_RULES))],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "max_depth": [Interval(Integral, -1, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left")],
        "subsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "colsample": [Interval(Real, 0.0, 1.0, closed="right")],
        "reg_lambda": [Interval(Real, 0.0, None, closed="left")],
        "max_bin": [Interval(Integral, 2, None, closed="left")],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
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
        step: str = "fisher",
        num_leaves: int = 31,
        max_depth: int = -1,
        min_child_samples: int = 20,
        subsample: float = 1.0,
        colsample: float = 1.0,
        reg_lambda: float = 0.0,
        max_bin: int = 255,
        early_stopping="auto",
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 50,
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

        X, y, sample_weight, X_val, y_val, w_val = _validation_rows(
            self, family, X, y, sample_weight, eval_set
        )
        init_params = family.init(y, sample_weight)
        init_params, init_raw, raw_floor = _floored_start(family, init_params, y)
        self.raw_floor_ = raw_floor
        floor_t = torch.as_tensor(raw_floor)

        def loss(raw, data):
            return family.nll(torch.maximum(raw, floor_t), data["y"])

        fisher = None
        if self.step in ("fisher", "natural"):
            fisher = make_fisher_fn(family, seed=self._seed())
        self.ensemble_ = fit_boosting(
            loss, init_raw, X, {"y": torch.as_tensor(y)},
            params=self._engine_params(),
            sample_weight=sample_weight,
            X_val=X_val,
            data_val=None if y_val is None else {"y": torch.as_tensor(y_val)},
            sample_weight_val=w_val,
            fisher=fisher,
        )
        self.family_ = family
        self.init_params_ = init_params
        self.n_iter_ = self.ensemble_.n_iter_
        self.best_iteration_ = self.ensemble_.best_iteration_
        self.evals_result_ = {
            split: {"nll": list(v.get("loss", []))}
            for split, v in self.ensemble_.evals_result_.items()
        }
        return self

    def _seed(self) -> int:
        rs = self.random_state
        if rs is None:
            return int(np.random.default_rng().integers(2**31 - 1))
        if isinstance(rs, np.random.RandomState):
            return int(rs.randint(2**31 - 1))
        return int(rs)

    def _use_early_stopping(self, n: int) -> bool:
        if self.early_stopping == "auto":
            return n > AUTO_EARLY_STOPPING_ROWS
        return bool(self.early_stopping)

    def _engine_params(self) -> EngineParams:
        return EngineParams(
            n_estimators=self.n_estimators,
            learning_rate=self.learning_rate,
            step=self.step,
            num_leaves=self.num_leaves,
            max_depth=self.max_depth,
            min_child_samples=self.min_child_samples,
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
        return np.maximum(self.ensemble_.predict_raw(X), self.raw_floor_)

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


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


def _validation_rows(estimator, family, X, y, sample_weight, eval_set):
    """The training rows and the validation rows of a fit (shared by the estimators).

    The ``eval_set`` when given (validated against ``fit``'s X); otherwise, when
    ``estimator._use_early_stopping(n)``, a seeded split holding out ``validation_fraction``
    of the rows; otherwise no validation rows.

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
    elif estimator._use_early_stopping(n):
        idx_train, idx_val = train_test_split(
            np.arange(n), test_size=estimator.validation_fraction,
            random_state=estimator._seed(),
        )
        X_val, y_val = _take(X, idx_val), y[idx_val]
        w_val = None if sample_weight is None else sample_weight[idx_val]
        X, y = _take(X, idx_train), y[idx_train]
        sample_weight = None if sample_weight is None else sample_weight[idx_train]
    return X, y, sample_weight, X_val, y_val, w_val


def _floored_start(family, init_params, y, what: str = "The target is constant or nearly so"):
    """Raise start values below the family's floors (with a warning) and map them to raw.

    Parameters
    ----------
    family : Family
    init_params : dict of str to float
        Natural-scale start values (e.g. the weighted marginal MLE).
    y : ndarray of shape (n,)
        The target the floors are relative to (``Family.param_floors``).
    what : str
        Start of the warning, saying why a parameter is so small.

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
    for p in floored:
        warnings.warn(
            f"{what}: the marginal {p!r} of family "
            f"{family.name!r} is {init_params[p]:.3g}, floored at {floors[p]:.3g} "
            f"(1e-6 x mean |y|) so that the likelihood stays finite.",
            UserWarning, stacklevel=3,
        )
        init_params[p] = floors[p]
    init_raw = np.asarray(family.raw_from_params(init_params), dtype=np.float64)
    raw_floor = np.full(family.n_params, -np.inf)
    for k, p in enumerate(family.param_names):
        if p in floors:
            raw_floor[k] = float(family.links[p].inverse(np.asarray(floors[p])))
    return init_params, init_raw, raw_floor
