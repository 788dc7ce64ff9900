"""Varying-coefficient regression with boosted coefficients: :class:`VaryingCoefficientRegressor`.

The model of Hastie & Tibshirani (1993) with every coefficient a tree ensemble:

    y | x ~ family(loc = b_0(x) + sum_j b_j(x) x_j, other parameters theta(x)),

where ``x_j`` runs over the *linear features* and the ensembles ``b_0, b_1, ...`` (and one
per other parameter of the family, e.g. the Normal's scale) may split on every feature.  Near
any ``x`` the model reads as a linear regression whose coefficients :meth:`coefficients`
reports row by row.  The loss is the family's negative log-likelihood; the boosting engine
(:func:`distboost.boosting.fit_boosting`) differentiates it with respect to all ensembles at
once by autograd.

Internally the linear features are standardised, ``z_j = (x_j - m_j) / s_j`` with the
(weighted) training mean and standard deviation, so that one learning rate suits every
coefficient; reported coefficients are on the original scale,
``b_j = c_j / s_j`` and ``b_0 = c_0 - sum_j c_j m_j / s_j`` for the internal ``c``.

Also here: the chain-rule Fisher information of the coefficient ensembles
(:func:`chain_rule_fisher`) that makes the ``fisher`` and ``natural`` step rules work.

References
----------
Hastie, T. & Tibshirani, R. (1993). Varying-coefficient models. JRSS B 55(4), 757-796.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from types import SimpleNamespace

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from . import families as _families
from ._rounds import cv_folds, select_rounds_by_cv, validation_mode
from ._validation import check_consistent_rows, check_eval_set, check_sample_weight, check_X
from .boosting import STEP_RULES, EngineParams, fit_boosting
from .estimators import (
    DistributionalRegressor,
    _floored_start,
    _mean_loss,
    _take,
    _validation_rows,
)
from .families._fisher import make_fisher_fn
from .families.censored import Censored
from .families.support import REAL

__all__ = [
    "VaryingCoefficientRegressor", "location_families", "family_raw", "chain_rule_fisher",
]


# ---------------------------------------------------------------------------- families
def _is_location_family(family) -> bool:
    return (
        "loc" in family.param_names
        and family.links["loc"].name == "identity"
        and family.support == REAL
        and not isinstance(family, Censored)
    )


def location_families() -> list[str]:
    """Registered families the varying-coefficient model accepts (sorted names).

    A family qualifies when it has a location parameter ``loc`` with the identity link and
    its support is the whole real line (uncensored): then ``loc = b_0(x) + sum_j b_j(x) x_j``
    may take any real value.
    """
    names = []
    for name in _families.available():
        try:
            if _is_location_family(_families.get(name)):
                names.append(name)
        except ValueError:  # needs constructor arguments (e.g. categorical's classes)
            continue
    return names


def _check_location_family(family) -> None:
    if not _is_location_family(family):
        reasons = []
        if "loc" not in family.param_names:
            reasons.append(f"its parameters {list(family.param_names)} have no 'loc'")
        elif family.links["loc"].name != "identity":
            reasons.append(f"its 'loc' link is {family.links['loc'].name!r}, not 'identity'")
        if family.support != REAL:
            reasons.append(f"its support is {family.support}, not the real line")
        if isinstance(family, Censored):
            reasons.append("it is censored (y must be one real value per row)")
        raise ValueError(
            f"family={family.name!r} cannot carry varying coefficients: "
            f"{'; '.join(reasons)}. Accepted families: {location_families()}."
        )


# ---------------------------------------------------------------------------- torch pieces
def family_raw(raw: torch.Tensor, z1: torch.Tensor, loc_index: int) -> torch.Tensor:
    """The family's raw scores from the model's raw scores.

    Parameters
    ----------
    raw : Tensor of shape (n, K)
        Columns ``0..m-1``: the coefficients ``c_0..c_{m-1}`` on the standardised scale;
        columns ``m..K-1``: the raw scores of the family's other parameters, in the family's
        order.
    z1 : Tensor of shape (n, m)
        ``[1, z_1, ..., z_{m-1}]``: a column of ones and the standardised linear features.
    loc_index : int
        Position of ``loc`` among the family's parameters.

    Returns
    -------
    Tensor of shape (n, F)
        ``loc = sum_j c_j z_j`` (identity link) inserted among the other raw scores.
    """
    m = z1.shape[1]
    loc = (raw[:, :m] * z1).sum(dim=1, keepdim=True)
    rest = raw[:, m:]
    return torch.cat([rest[:, :loc_index], loc, rest[:, loc_index:]], dim=1)


def chain_rule_fisher(info: torch.Tensor, z1: torch.Tensor, loc_index: int,
                      complete: bool = False) -> torch.Tensor:
    """Expected Fisher information with respect to the model's raw scores.

    With ``J = d(family raw) / d(model raw)`` (``d loc / d c_j = z_j``, the other raw scores
    pass through), the information transforms as ``J^T I J`` (Lehmann & Casella 1998,
    Theory of Point Estimation, sec. 2.5): the coefficient block is ``I_ll z z^T``, the
    coefficient / other-parameter block ``z I_lo``, the other block ``I_oo`` unchanged.  For
    the Normal, ``I_ll = 1 / sigma^2`` and the coefficient block is ``z z^T / sigma^2``.

    Parameters
    ----------
    info : Tensor of shape (n, F, F) or (n, F)
        The family's expected Fisher information on its raw scale (diagonal when 2-D).
    z1 : Tensor of shape (n, m)
        ``[1, z_1, ..., z_{m-1}]``.
    loc_index : int
    complete : bool, default=False
        Add ``I_ll (1 - z z^T / |z|^2)`` to the coefficient block.  One row's coefficient
        block ``I_ll z z^T`` has rank one (a single observation cannot tell the coefficients
        apart), and a damped solve ``(F + lambda diag F)^{-1} g`` then picks the step
        ``d_j ~ 1 / z_j``, unbounded as ``z_j -> 0``.  The completion acts only on the null
        space of ``J``, where the gradient ``g = J^T g_family`` has no component, so the
        undamped solve returns exactly the Moore-Penrose natural gradient ``F^+ g =
        J^T (J J^T)^{-1} I^{-1} g_family``: the smallest coefficient step that moves the
        family's parameters by their natural gradient (per row, ``d_c = z delta_loc / |z|^2``,
        bounded since ``z_0 = 1``).  Used by the natural step.

    Returns
    -------
    Tensor of shape (n, K, K), ``K = m + F - 1``; symmetric positive semi-definite
    (positive definite when ``complete`` and the family's information is).
    """
    if info.dim() == 2:
        info = torch.diag_embed(info)
    f = info.shape[1]
    others = [k for k in range(f) if k != loc_index]
    i_ll = info[:, loc_index, loc_index]
    i_lo = info[:, loc_index, others]
    i_oo = info[:, others][:, :, others]
    zz = z1[:, :, None] * z1[:, None, :]
    if complete:
        m = z1.shape[1]
        eye = torch.eye(m, dtype=z1.dtype)
        zz = zz + eye - zz / (z1 * z1).sum(dim=1)[:, None, None]
    cc = i_ll[:, None, None] * zz
    co = z1[:, :, None] * i_lo[:, None, :]
    top = torch.cat([cc, co], dim=2)
    bottom = torch.cat([co.transpose(1, 2), i_oo], dim=2)
    return torch.cat([top, bottom], dim=1)


# ---------------------------------------------------------------------------- design
@dataclass
class _LinearDesign:
    """Which columns enter linearly, and their standardisation."""

    index: np.ndarray  # int positions in X
    names: list[str]
    center: np.ndarray
    scale: np.ndarray

    def z1(self, X, what: str = "X") -> np.ndarray:
        """``[1, (x_j - m_j) / s_j]``, ndarray of shape (n, m); NaN gives a ValueError."""
        x = _columns(X, self.index)
        nan = np.isnan(x)
        if nan.any():
            counts = nan.sum(axis=0)
            bad = [f"{self.names[j]!r} ({counts[j]} of {x.shape[0]} rows)"
                   for j in np.flatnonzero(counts)]
            raise ValueError(
                f"Linear feature(s) {', '.join(bad)} of {what} are NaN. A linear feature is "
                "multiplied by its coefficient, so it must be observed: impute it, or leave "
                "it out of linear_features (the trees route NaN in the other features)."
            )
        z = (x - self.center) / self.scale
        return np.hstack([np.ones((x.shape[0], 1)), z])


def _columns(X, index: np.ndarray) -> np.ndarray:
    if isinstance(X, pd.DataFrame):
        return X.iloc[:, index].to_numpy(dtype=np.float64)
    return np.asarray(X[:, index], dtype=np.float64)


def _resolve_columns(spec, X, param: str, numeric_only: bool) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the columns of X (validated by ``check_X``) named by ``spec``.

    ``spec`` None: every column (every numeric column when ``numeric_only``).  Otherwise a
    sequence of column names (DataFrame X) or integer positions.  ``param`` names the
    argument in error messages.
    """
    p = X.shape[1]
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        numeric = [not isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns]
    else:
        names = [f"x{j}" for j in range(p)]
        numeric = [True] * p
    if spec is None:
        index = [j for j in range(p) if numeric[j] or not numeric_only]
        return np.asarray(index, dtype=np.intp), [names[j] for j in index]
    index = []
    for item in np.asarray(spec, dtype=object).reshape(-1).tolist():
        if isinstance(item, str):
            if not isinstance(X, pd.DataFrame):
                raise ValueError(
                    f"{param} names the column {item!r}, but X is an array without column "
                    "names: give integer positions instead."
                )
            if item not in names:
                raise ValueError(
                    f"{param} names the column {item!r}, which X does not have; X's columns "
                    f"are {names}."
                )
            index.append(names.index(item))
        elif isinstance(item, Integral) and not isinstance(item, bool | np.bool_):
            if not 0 <= int(item) < p:
                raise ValueError(
                    f"{param} holds the position {int(item)}, outside the {p} columns of X "
                    f"(positions 0 to {p - 1})."
                )
            index.append(int(item))
        else:
            raise ValueError(
                f"{param} must hold column names or integer positions, got {item!r} of type "
                f"{type(item).__name__}."
            )
    dup = sorted({names[j] for j in index if index.count(j) > 1})
    if dup:
        raise ValueError(f"{param} lists the column(s) {dup} more than once.")
    cat = [names[j] for j in index if not numeric[j]]
    if numeric_only and cat:
        raise ValueError(
            f"{param} names the categorical column(s) {cat}; a linear feature must be "
            "numeric (one-hot encode it, or leave it to the trees)."
        )
    return np.asarray(index, dtype=np.intp), [names[j] for j in index]


def _resolve_linear_features(linear_features, X) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the linear features (numeric; none named 'intercept')."""
    index, chosen = _resolve_columns(linear_features, X, "linear_features", numeric_only=True)
    if "intercept" in chosen:
        raise ValueError(
            "A linear feature is named 'intercept', the name coefficients() gives b_0; "
            "rename that column."
        )
    return index, chosen


def _resolve_modifiers(effect_modifiers, X) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the columns the trees split on (at least one)."""
    index, chosen = _resolve_columns(effect_modifiers, X, "effect_modifiers",
                                     numeric_only=False)
    if not chosen:
        raise ValueError(
            "effect_modifiers is empty: the trees need at least one column to split on."
        )
    return index, chosen


def _take_columns(X, index: np.ndarray):
    """The columns ``index`` of X, as a DataFrame or ndarray like X (all columns: X itself)."""
    if len(index) == X.shape[1] and np.array_equal(index, np.arange(X.shape[1])):
        return X
    return X.iloc[:, index] if isinstance(X, pd.DataFrame) else X[:, index]


def _weighted_least_squares(z1: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Minimum-norm (weighted) least-squares coefficients of y on z1, shape (m,)."""
    if w is None:
        return np.linalg.lstsq(z1, y, rcond=None)[0]
    sw = np.sqrt(w)
    return np.linalg.lstsq(z1 * sw[:, None], y * sw, rcond=None)[0]


# ---------------------------------------------------------------------------- estimator
#: Options passed to the engine unchanged (``EngineParams`` fields of the same name).
_ENGINE_OPTIONS = (
    "n_estimators", "learning_rate", "step", "num_leaves", "max_depth", "min_child_samples",
    "subsample", "colsample", "reg_lambda", "max_bin", "n_jobs", "verbose", "base_learner",
)
#: Parameters validated by DistributionalRegressor's constraints (same meaning here).
_SHARED_PARAMS = (
    "family", "n_estimators", "learning_rate", "max_depth", "subsample", "colsample",
    "reg_lambda", "max_bin", "early_stopping", "validation_fraction", "n_iter_no_change",
    "links", "base_learner", "random_state", "n_jobs", "verbose",
)

class VaryingCoefficientRegressor(RegressorMixin, BaseEstimator):
    """Varying-coefficient distributional regression with boosted coefficients.

    ``y | x ~ family(loc = b_0(x) + sum_j b_j(x) x_j, theta(x))`` (Hastie & Tibshirani 1993):
    every coefficient ``b_j`` and every other parameter of the family (e.g. the Normal's
    scale) is a boosted tree ensemble on all features; ``x_j`` runs over
    ``linear_features``.  Fitting starts from the (weighted) least-squares linear model
    and the family's MLE of the other parameters given its residuals, then boosts the
    family's negative log-likelihood.

    Parameters
    ----------
    family : str or Family, default="normal"
        A family with a location ``loc`` (identity link, support the real line):
        ``location_families()`` lists them (normal, laplace, logistic, gumbel, studentt).
    linear_features : sequence of str or int, default=None
        Columns that enter linearly, by name (DataFrame X) or position.  None: every
        numeric column.  Linear features must not hold NaN.
    effect_modifiers : sequence of str or int, default=None
        Columns the trees split on (Hastie & Tibshirani's effect modifiers), by name or
        position; every ensemble, the other parameters' included, uses them.  None: every
        column, as in the write-up.  When a linear feature is also a modifier, the split
        ``b_0(x) + b_j(x) x_j`` is not unique (``b_0`` can absorb part of ``b_j x_j``):
        predictions are unaffected, but to read the coefficients as effects of ``x_j`` that
        vary with other features, leave ``x_j`` out of the modifiers.
    n_estimators : int, default=300
        Maximum number of boosting rounds (one tree per ensemble per round).
    learning_rate : float, default=0.1
        Shrinkage of every tree.
    step : {"natural", "fisher", "newton", "gradient"}, default="natural"
        Step rule of the engine, with the chain-rule Fisher information of
        :func:`chain_rule_fisher`.  "natural": per row, the Moore-Penrose natural gradient
        (the coefficient block ``I_ll z z^T`` of one row has rank one; the smallest
        coefficient step that moves ``loc`` by its natural gradient, ``z delta / |z|^2``).
        "fisher": the diagonal as curvature, so coefficient ``j``'s leaf value is the leaf's
        precision-weighted least-squares slope; that weighting feeds back on the boosted
        scale (rows fitted closely get a smaller scale, hence more weight): its test RMSE
        is a little better on five of six UCI datasets, but its test NLL is worse on all
        six (above 10^4 on four; ``benchmarks/varying_coefficients.py``, ``docs/varying.md``).
    num_leaves, max_depth, min_child_samples, subsample, colsample, reg_lambda, max_bin
        Tree options, as in :class:`~distboost.DistributionalRegressor`.
    early_stopping, validation_fraction, n_iter_no_change
        As in :class:`~distboost.DistributionalRegressor` (the validation loss is the NLL).
    links : dict, default=None
        Link overrides of the family's other parameters, e.g. ``{"scale": "softplus"}``.
    base_learner : sklearn regressor, default=None
        None: LightGBM trees; otherwise a scikit-learn regressor cloned per round and
        ensemble.
    random_state : int, default=None
    n_jobs : int, default=None
    verbose : int, default=0

    Attributes
    ----------
    family_ : Family
    ensemble_ : FittedEnsemble
        ``K = m + F - 1`` ensembles: ``m = 1 + len(linear_features_)`` coefficients
        (standardised scale) then the family's other parameters.
    linear_features_ : list of str
        Names of the linear features (DataFrame columns, or ``x0, x1, ...``).
    linear_index_ : ndarray of int
        Their positions in X.
    linear_center_, linear_scale_ : ndarray of shape (m - 1,)
        The standardisation ``z_j = (x_j - center_j) / scale_j`` (weighted training mean and
        standard deviation; ``scale_j = inf`` for a constant column, whose coefficient is 0).
    effect_modifiers_ : list of str
        Names of the columns the trees split on.
    modifier_index_ : ndarray of int
        Their positions in X.
    init_coef_ : ndarray of shape (m,)
        Start coefficients (intercept first) on the original scale: the least-squares fit
        plus the family's location MLE of its residuals.
    init_params_ : dict of str to float
        Start values of the family's other parameters.
    raw_floor_ : ndarray of shape (F,)
        Floors of the family's raw scores (see ``DistributionalRegressor``).
    n_iter_, best_iteration_, evals_result_, n_features_in_, feature_names_in_

    Examples
    --------
    >>> import numpy as np
    >>> from distboost.varying import VaryingCoefficientRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 2))
    >>> y = np.where(X[:, 1] > 0, 2.0, -1.0) * X[:, 0] + rng.normal(size=500) * 0.3
    >>> model = VaryingCoefficientRegressor(n_estimators=100, random_state=0).fit(X, y)
    >>> list(model.coefficients(X[:2]).columns)
    ['intercept', 'x0', 'x1']
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in DistributionalRegressor._parameter_constraints.items()
           if k in _SHARED_PARAMS},
        "linear_features": ["array-like", None],
        "effect_modifiers": ["array-like", None],
        "step": [StrOptions(set(STEP_RULES))],
        "num_leaves": [Interval(Integral, 2, None, closed="left")],
        "min_child_samples": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self,
        family="normal",
        *,
        linear_features=None,
        effect_modifiers=None,
        n_estimators: int = 300,
        learning_rate: float = 0.1,
        step: str = "natural",
        num_leaves: int = 8,
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
        self.linear_features = linear_features
        self.effect_modifiers = effect_modifiers
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

    # Seeds, early stopping and targets are handled exactly as DistributionalRegressor does;
    # its prediction methods need only ``family_`` and ``_raw(X)`` (the family's raw scores),
    # which this class defines.
    _seed = DistributionalRegressor._seed
    _check_y = staticmethod(DistributionalRegressor._check_y)
    predict_params = DistributionalRegressor.predict_params
    predict_dist = DistributionalRegressor.predict_dist
    predict = DistributionalRegressor.predict
    predict_quantiles = DistributionalRegressor.predict_quantiles
    predict_interval = DistributionalRegressor.predict_interval
    score = DistributionalRegressor.score

    # ------------------------------------------------------------------ fit
    def fit(self, X, y, sample_weight=None, eval_set=None):
        """Fit the coefficient ensembles and the family's other parameters.

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)
            Features: the trees split on the effect modifiers (NaN allowed there), the
            linear features (no NaN) enter ``loc`` linearly.
        y : array_like of shape (n,)
        sample_weight : array_like of shape (n,), default=None
        eval_set : tuple (X_val, y_val), default=None
            Validation data for early stopping (always used when given).

        Returns
        -------
        self
        """
        self._validate_params()
        family = _families.get(self.family, links=self.links)
        _check_location_family(family)
        X = check_X(self, X, reset=True)
        y = self._check_y(family, y)
        n = check_consistent_rows(X=X, y=y)
        sample_weight = check_sample_weight(sample_weight, n)
        eval_set = check_eval_set(eval_set)
        index, names = _resolve_linear_features(self.linear_features, X)
        modifiers, modifier_names = _resolve_modifiers(self.effect_modifiers, X)
        probe = _LinearDesign(index, names, np.zeros(len(index)), np.ones(len(index)))
        probe.z1(X)  # NaN check on every row before any split
        mode = validation_mode(self.early_stopping, n, eval_set is not None)
        if mode == "cv":
            folds = cv_folds(n, self._seed())
            w = np.ones(n) if sample_weight is None else sample_weight

            def fit_fold(train, valid):
                return self._fit_rows(
                    family, index, names, modifiers, _take(X, train), y[train],
                    None if sample_weight is None else sample_weight[train],
                    _take(X, valid), y[valid],
                    None if sample_weight is None else sample_weight[valid])

            best, _ = select_rounds_by_cv(fit_fold, folds,
                                          [float(w[v].sum()) for _, v in folds])
            run = self._fit_rows(family, index, names, modifiers, X, y, sample_weight,
                                 n_estimators=max(best, 1))
            run.ensemble.best_iteration_ = min(best, run.ensemble.n_iter_)
        else:
            X, y, sample_weight, X_val, y_val, w_val = _validation_rows(
                self, family, X, y, sample_weight, eval_set, mode
            )
            run = self._fit_rows(family, index, names, modifiers, X, y, sample_weight,
                                 X_val, y_val, w_val,
                                 n_estimators=1 if mode == "constant" else None)
            if mode == "constant":
                run.ensemble.best_iteration_ = 0
        self.family_ = family
        self.ensemble_ = run.ensemble
        self.early_stopping_ = mode
        design = run.design
        self.linear_index_ = index
        self.linear_features_ = design.names
        self.linear_center_ = design.center
        self.linear_scale_ = design.scale
        self.modifier_index_ = modifiers
        self.effect_modifiers_ = modifier_names
        self.init_coef_ = self._original_scale(run.coef[None, :])[0]
        self.init_params_ = {p: v for p, v in run.params.items() if p != "loc"}
        self.raw_floor_ = run.raw_floor
        self.n_iter_ = self.ensemble_.n_iter_
        self.best_iteration_ = self.ensemble_.best_iteration_
        self.evals_result_ = {
            split: {"nll": list(v.get("loss", []))}
            for split, v in self.ensemble_.evals_result_.items()
        }
        return self

    def _fit_rows(self, family, index, names, modifiers, X, y, sample_weight, X_val=None,
                  y_val=None, w_val=None, n_estimators=None) -> SimpleNamespace:
        """One boosting run on the given rows (see ``DistributionalRegressor._fit_rows``):
        the linear design and start from these rows, then the engine.  ``valid_curve``
        holds the validation NLL after rounds ``0..R`` when validation rows are given."""
        x = _columns(X, index)
        w = np.full(len(y), 1.0 / len(y)) if sample_weight is None else (
            sample_weight / sample_weight.sum())
        center = w @ x
        spread = np.sqrt(w @ (x - center) ** 2)
        # A constant column (up to rounding) gets z = 0 exactly: its coefficient stays 0.
        spread = np.where(spread > 1e-12 * np.abs(center), spread, np.inf)
        design = _LinearDesign(index, names, center, spread)
        z1 = design.z1(X)
        z1_val = None if X_val is None else design.z1(X_val, "eval_set")

        # Start: the linear model, then the family's MLE given its residuals.
        coef = _weighted_least_squares(z1, y, sample_weight)
        resid_params = family.init(y - z1 @ coef, sample_weight)
        coef[0] += resid_params["loc"]
        resid_params["loc"] = 0.0
        params, fam_init_raw, raw_floor = _floored_start(
            family, resid_params, y, what="The linear start fits y exactly or nearly so"
        )
        loc_index = family.param_names.index("loc")
        others = np.delete(fam_init_raw, loc_index)
        init_raw = np.concatenate([coef, others])
        floor_t = torch.as_tensor(raw_floor)

        def to_family(raw, data):
            return torch.maximum(family_raw(raw, data["z1"], loc_index), floor_t)

        def loss(raw, data):
            return family.nll(to_family(raw, data), data["y"])

        fisher = None
        if self.step in ("fisher", "natural"):
            fam_fisher = make_fisher_fn(family, seed=self._seed())
            complete = self.step == "natural"

            def fisher(raw, data):
                info = fam_fisher(to_family(raw, data), data)
                return chain_rule_fisher(info, data["z1"], loc_index, complete)

        data = {"y": torch.tensor(y), "z1": torch.as_tensor(z1)}
        data_val, start_score = None, None
        if y_val is not None:
            data_val = {"y": torch.tensor(y_val), "z1": torch.as_tensor(z1_val)}
            start_score = _mean_loss(loss, np.tile(init_raw, (len(y_val), 1)), data_val,
                                     w_val)
        params_engine = self._engine_params()
        if n_estimators is not None:
            params_engine.n_estimators = n_estimators
        if X_val is None:
            params_engine.early_stopping_rounds = None
        ensemble = fit_boosting(
            loss, init_raw, _take_columns(X, modifiers), data,
            params=params_engine,
            sample_weight=sample_weight,
            X_val=None if X_val is None else _take_columns(X_val, modifiers),
            data_val=data_val, sample_weight_val=w_val,
            fisher=fisher,
            warn_context=f"{type(self).__name__}(family={family.name!r})",
        )
        curve = None
        if y_val is not None:
            curve = np.array([start_score, *ensemble.evals_result_["valid"]["loss"]])
        return SimpleNamespace(ensemble=ensemble, design=design, coef=coef, params=params,
                               raw_floor=raw_floor, valid_curve=curve)

    def _engine_params(self) -> EngineParams:
        return EngineParams(
            **{name: getattr(self, name) for name in _ENGINE_OPTIONS},
            early_stopping_rounds=self.n_iter_no_change,
            random_state=self._seed(),
        )

    # ------------------------------------------------------------------ predict
    def _design(self) -> _LinearDesign:
        return _LinearDesign(self.linear_index_, self.linear_features_,
                             self.linear_center_, self.linear_scale_)

    def _original_scale(self, c: np.ndarray) -> np.ndarray:
        """Coefficients on the original scale from standardised ones, both (n, m)."""
        slopes = c[:, 1:] / self.linear_scale_
        intercept = c[:, 0] - slopes @ self.linear_center_
        return np.column_stack([intercept, slopes])

    def _model_raw(self, X):
        check_is_fitted(self)
        X = check_X(self, X, reset=False)
        raw = self.ensemble_.predict_raw(_take_columns(X, self.modifier_index_))
        return raw, self._design().z1(X), X

    def _raw(self, X) -> np.ndarray:
        """The family's raw scores (floored), ndarray of shape (n, F)."""
        raw, z1, _ = self._model_raw(X)
        loc_index = self.family_.param_names.index("loc")
        with torch.no_grad():
            out = family_raw(torch.as_tensor(raw), torch.as_tensor(z1), loc_index).numpy()
        return np.maximum(out, self.raw_floor_)

    def coefficients(self, X) -> pd.DataFrame:
        """Per-row coefficients on the original scale.

        ``intercept + sum_j coef_j * x_j`` is the predicted ``loc`` of each row (the mean
        for the symmetric families: normal, laplace, logistic, studentt with ``df > 1``).

        Parameters
        ----------
        X : array_like or DataFrame of shape (n, p)

        Returns
        -------
        DataFrame of shape (n, m)
            Columns ``intercept`` and one per linear feature (``linear_features_``); the
            index of X when X is a DataFrame.
        """
        raw, _, Xc = self._model_raw(X)
        m = len(self.linear_features_) + 1
        coef = self._original_scale(raw[:, :m])
        index = Xc.index if isinstance(Xc, pd.DataFrame) else None
        return pd.DataFrame(coef, columns=["intercept", *self.linear_features_], index=index)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the mean log-likelihood, not R^2: scikit-learn's check that a regressor
        # scores above 0.5 on its toy data does not apply to a likelihood.
        tags.regressor_tags.poor_score = True
        # NaN is refused in the linear features (every numeric column by default).
        tags.input_tags.allow_nan = False
        return tags
