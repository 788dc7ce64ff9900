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

import numpy as np
import pandas as pd
import torch
from sklearn.base import RegressorMixin
from sklearn.utils._param_validation import Interval, StrOptions

from .. import families as _families
from .._validation import check_target, numeric_columns, resolve_columns, take_columns
from ..boosting import STEP_RULES
from ..families.censored import Censored
from ..families.numerics.fisher import make_fisher_fn
from ..families.support import REAL
from ..objective import FamilyObjective
from ..persistence import loadable
from .base import DistributionalEstimator
from .options import Option

__all__ = [
    "VaryingCoefficientRegressor", "VaryingObjective", "location_families", "family_raw",
    "chain_rule_fisher",
]



# ---------------------------------------------------------------------------- families
def _is_location_family(family) -> bool:
    return (
        not family.multivariate
        and "loc" in family.param_names
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
        if family.multivariate:
            reasons.append("it models a vector target (y of shape (n, d)); fit "
                           "DistributionalRegressor for it")
        elif "loc" not in family.param_names:
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
        x = numeric_columns(X, self.index)
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



def _resolve_linear_features(linear_features, X) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the linear features (numeric; none named 'intercept')."""
    index, chosen = resolve_columns(linear_features, X, "linear_features", numeric_only=True)
    if "intercept" in chosen:
        raise ValueError(
            "A linear feature is named 'intercept', the name coefficients() gives b_0; "
            "rename that column."
        )
    return index, chosen


def _resolve_modifiers(effect_modifiers, X) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the columns the trees split on (at least one)."""
    index, chosen = resolve_columns(effect_modifiers, X, "effect_modifiers",
                                     numeric_only=False)
    if not chosen:
        raise ValueError(
            "effect_modifiers is empty: the trees need at least one column to split on."
        )
    return index, chosen



def _weighted_least_squares(z1: np.ndarray, y: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Minimum-norm (weighted) least-squares coefficients of y on z1, shape (m,)."""
    if w is None:
        return np.linalg.lstsq(z1, y, rcond=None)[0]
    sw = np.sqrt(w)
    return np.linalg.lstsq(z1 * sw[:, None], y * sw, rcond=None)[0]


# ---------------------------------------------------------------------------- objective
class VaryingObjective(FamilyObjective):
    """The family objective of a varying-coefficient model on the rows ``(X, y)``.

    The model's raw outputs are the coefficients ``c_0..c_{m-1}`` on the standardised scale
    (``loc = sum_j c_j z_j``, :func:`family_raw`) and then the raw scores of the family's
    other parameters.  The start is the (weighted) least-squares linear model plus the
    family's MLE of its residuals; the Fisher information goes through the chain rule
    (:func:`chain_rule_fisher`).  The standardisation uses the weighted mean and standard
    deviation of these rows.

    Parameters
    ----------
    family : Family
        A location family (:func:`location_families`).
    X : ndarray or DataFrame of shape (n, p)
    y : ndarray of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    index : ndarray of int
        Positions of the linear features in X.
    names : list of str
    warn : bool
    """

    def __init__(self, family, X, y, sample_weight, index, names, *, warn: bool = True):
        x = numeric_columns(X, index)
        w = (np.full(len(y), 1.0 / len(y)) if sample_weight is None
             else sample_weight / sample_weight.sum())
        center = w @ x
        spread = np.sqrt(w @ (x - center) ** 2)
        # A constant column (up to rounding) gets z = 0 exactly: its coefficient stays 0.
        spread = np.where(spread > 1e-12 * np.abs(center), spread, np.inf)
        self.design = _LinearDesign(index, names, center, spread)
        z1 = self.design.z1(X)
        # Start: the linear model, then the family's MLE given its residuals.
        self.coef = _weighted_least_squares(z1, y, sample_weight)
        resid_params = family.init(y - z1 @ self.coef, sample_weight)
        self.coef[0] += resid_params["loc"]
        resid_params["loc"] = 0.0
        self.loc_index = family.param_names.index("loc")
        super().__init__(family, y, sample_weight, warn=warn, init_params=resid_params,
                         what="The linear start fits y exactly or nearly so")

    def model_start(self, family_init_raw: np.ndarray) -> np.ndarray:
        return np.concatenate([self.coef, np.delete(family_init_raw, self.loc_index)])

    def family_raw(self, raw, data):
        return torch.maximum(family_raw(raw, data["z1"], self.loc_index), self._floor_t)

    def data(self, X, y) -> dict:
        return {**super().data(X, y), "z1": torch.as_tensor(self.design.z1(X, "eval_set"))}

    def dispersion_column(self) -> int | None:
        k = super().dispersion_column()
        if k is None:
            return None
        return self.coef.size + k - (k > self.loc_index)

    def engine_callables(self, step: str, seed: int) -> dict:
        out = {"loss": self.loss}
        if step in ("fisher", "natural"):
            family_fisher = make_fisher_fn(self.family, seed=seed)
            complete = step == "natural"

            def fisher(raw, data):
                return chain_rule_fisher(family_fisher(self.family_raw(raw, data), data),
                                         data["z1"], self.loc_index, complete)

            out["fisher"] = fisher
        return out


# ---------------------------------------------------------------------------- estimator
@loadable
class VaryingCoefficientRegressor(RegressorMixin, DistributionalEstimator):
    """Varying-coefficient distributional regression with boosted coefficients.

    ``y | x ~ family(loc = b_0(x) + sum_j b_j(x) x_j, theta(x))`` (Hastie & Tibshirani 1993):
    every coefficient ``b_j`` and every other parameter of the family (e.g. the Normal's
    scale) is a boosted tree ensemble on the effect modifiers; ``x_j`` runs over
    ``linear_features``.  Fitting starts from the (weighted) least-squares linear model
    and the family's MLE of the other parameters given its residuals, then boosts the
    family's negative log-likelihood.  ``ensemble_`` holds ``K = m + F - 1`` ensembles:
    ``m = 1 + len(linear_features_)`` coefficients (standardised scale), then the family's
    other parameters.  The step rules' measured trade-offs are in ``docs/varying.md``.

    {parameters}

    {attributes}
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
    Examples
    --------
    >>> import numpy as np
    >>> from distboost.estimators.varying import VaryingCoefficientRegressor
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(500, 2))
    >>> y = np.where(X[:, 1] > 0, 2.0, -1.0) * X[:, 0] + rng.normal(size=500) * 0.3
    >>> model = VaryingCoefficientRegressor(n_estimators=100, random_state=0).fit(X, y)
    >>> list(model.coefficients(X[:2]).columns)
    ['intercept', 'x0', 'x1']
    """

    _options = ("family", "linear_features", "effect_modifiers", "n_estimators",
                "learning_rate", "step", "num_leaves", "max_depth", "min_child_samples",
                "subsample", "colsample", "reg_lambda", "max_bin", "min_split_gain",
                "extra_trees", "path_smooth", "max_cat_to_onehot", "monotone_constraints",
                "interaction_constraints", "param_options", "early_stopping",
                "validation_fraction", "n_iter_no_change", "links", "base_learner", "backend",
                "random_state", "n_jobs", "verbose", "progress")
    _n_positional = 1
    _defaults = {"n_estimators": 300, "learning_rate": 0.1, "step": "natural",
                 "num_leaves": 8, "min_child_samples": 20, "n_iter_no_change": 50}
    _extra_options = {
        "family": Option(
            "normal", [str, _families.Family], "str or Family",
            "A family with a location ``loc`` (identity link, support the real line): "
            "``location_families()`` lists them."),
        "linear_features": Option(
            None, ["array-like", None], "sequence of str or int",
            "Columns that enter linearly, by name (DataFrame X) or position.  None: every "
            "numeric column.  Linear features must not hold NaN."),
        "effect_modifiers": Option(
            None, ["array-like", None], "sequence of str or int",
            "Columns the trees split on (Hastie & Tibshirani's effect modifiers), by name or "
            "position; every ensemble uses them.  None: every column.  When a linear feature "
            "is also a modifier, ``b_0(x) + b_j(x) x_j`` is not unique: predictions are "
            "unaffected, but to read ``b_j`` as the effect of ``x_j``, leave ``x_j`` out."),
        "step": Option(
            "natural", [StrOptions(set(STEP_RULES))],
            '{"natural", "fisher", "newton", "gradient"}',
            "Step rule, with the chain-rule Fisher information of :func:`chain_rule_fisher`. "
            " \"natural\": per row, the Moore-Penrose natural gradient (the smallest "
            "coefficient step that moves ``loc`` by its natural gradient); \"fisher\": the "
            "diagonal as curvature (a precision-weighted least-squares slope per leaf)."),
        "num_leaves": Option(8, [Interval(Integral, 2, None, closed="left")], "int",
                             "Maximum leaves per tree."),
        "min_child_samples": Option(20, [Interval(Integral, 1, None, closed="left")], "int",
                                    "Minimum rows in a leaf."),
    }

    # ------------------------------------------------------------------ hooks
    def _prepare_target(self, y):
        family = _families.get(self.family, links=self.links)
        _check_location_family(family)
        return family, check_target(family, y), {}

    def _check_target(self, family, y, name, context):
        return check_target(family, y, name)

    def _prepare_features(self, X) -> dict:
        index, names = _resolve_linear_features(self.linear_features, X)
        modifiers, modifier_names = _resolve_modifiers(self.effect_modifiers, X)
        probe = _LinearDesign(index, names, np.zeros(len(index)), np.ones(len(index)))
        probe.z1(X)  # NaN check on every row before any split
        return {"linear_index_": index, "linear_features_": names,
                "modifier_index_": modifiers, "effect_modifiers_": modifier_names}

    def _make_objective(self, family, X, y, sample_weight, *, warn, context):
        return VaryingObjective(family, X, y, sample_weight, context["linear_index_"],
                                context["linear_features_"], warn=warn)

    def _tree_X(self, X, context):
        return take_columns(X, context["modifier_index_"])

    def _tree_columns(self, X, context) -> np.ndarray:
        return context["modifier_index_"]

    def _output_params(self, family, context) -> list[str]:
        """Every coefficient ensemble belongs to ``loc`` (``param_options["loc"]`` sets
        them all), then the family's other parameters."""
        m = 1 + len(context["linear_features_"])
        return ["loc"] * m + [p for p in family.param_names if p != "loc"]

    def _explain_outputs(self, values, base, X):
        """``loc = sum_m c_m z_m``: each coefficient's values weighted by ``z_m``, and its
        base times ``z_m`` credited to the linear feature (linear SHAP; the base of ``loc``
        is the intercept's)."""
        z1 = self._design().z1(X)
        m = z1.shape[1]
        loc = np.einsum("nm,nmp->np", z1, values[:, :m])
        loc[:, self.linear_index_] += base[:, 1:m] * z1[:, 1:]
        k = self.family_.param_names.index("loc")
        values = np.concatenate([values[:, m:m + k], loc[:, None], values[:, m + k:]], axis=1)
        base = np.column_stack([base[:, m:m + k], base[:, 0], base[:, m + k:]])
        return values, base

    def _output_names(self) -> list[str]:
        return ([f"loc[{n}]" for n in ("intercept", *self.linear_features_)]
                + [p for p in self.family_.param_names if p != "loc"])

    def _fitted_from_run(self, run) -> dict:
        design = run.objective.design
        center, scale = design.center, design.scale
        coef = run.objective.coef
        slopes = coef[1:] / scale
        return {
            "linear_center_": center, "linear_scale_": scale,
            "init_coef_": np.concatenate([[coef[0] - slopes @ center], slopes]),
            "init_params_": {p: v for p, v in run.objective.init_params.items() if p != "loc"},
        }

    def _design(self) -> _LinearDesign:
        return _LinearDesign(self.linear_index_, self.linear_features_,
                             self.linear_center_, self.linear_scale_)

    def _unfloored_raw(self, raw, X):
        loc_index = self.family_.param_names.index("loc")
        with torch.no_grad():
            return family_raw(torch.as_tensor(raw), torch.as_tensor(self._design().z1(X)),
                              loc_index).numpy()

    # The mean log-likelihood, not RegressorMixin's R^2.
    score = DistributionalEstimator.score

    # ------------------------------------------------------------------ predict
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
        from sklearn.utils.validation import check_is_fitted

        from .._validation import check_X

        check_is_fitted(self)
        Xc = check_X(self, X, reset=False)
        raw = self.ensemble_.predict_raw(self._tree_X(Xc, vars(self)))
        c = raw[:, :len(self.linear_features_) + 1]
        slopes = c[:, 1:] / self.linear_scale_
        coef = np.column_stack([c[:, 0] - slopes @ self.linear_center_, slopes])
        index = Xc.index if isinstance(Xc, pd.DataFrame) else None
        return pd.DataFrame(coef, columns=["intercept", *self.linear_features_], index=index)

    # ------------------------------------------------------------------ persistence
    _design_attrs = ("linear_index_", "linear_features_", "linear_center_", "linear_scale_",
                     "modifier_index_", "effect_modifiers_", "init_coef_")

    def _linear_in_features(self) -> bool:
        return len(getattr(self, "linear_index_", ())) > 0

    def _get_state(self) -> dict:
        state = super()._get_state()
        state.update({name: getattr(self, name) for name in self._design_attrs})
        return state

    def _set_state(self, state: dict) -> None:
        super()._set_state(state)
        for name in self._design_attrs:
            value = state[name]
            setattr(self, name, value if name.endswith("features_") or
                    name == "effect_modifiers_" else np.asarray(value))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # score() is the mean log-likelihood, not R^2 (see DistributionalRegressor).
        tags.regressor_tags.poor_score = True
        # NaN is refused in the linear features (every numeric column by default).
        tags.input_tags.allow_nan = False
        return tags
