"""A point model of the location as the start of boosting: boost the mean first.

With ``location_start`` the location parameter's raw score starts, row by row, from the
prediction of a point regressor (LightGBM's L2 regression, with its own leaves and learning
rate) fitted to the training rows before the distributional boosting begins; the
distribution's trees then add what the likelihood finds beyond it (a refined location and
the whole dispersion).  One learning rate, one round count and one tree size serve every
parameter of the distributional model, and on near-deterministic data they under-fit the mean
(issue 31: on the UCI energy set the default's RMSE was 28 % above a validation-stopped
LightGBM regressor's); a point model stopped by its own validation curve does not.

The point model is fitted on the training rows only; its rounds are chosen on the same
validation rows as the distributional model's (an ``eval_set`` or the held-out split: early
stopping with patience :data:`PATIENCE`), or, under cross-validation, on the folds' mean
validation curve (then each fold's start is a point model of that fold's training rows with
those rounds, and the refit's one of all rows).  Without validation rows the rounds must be
given (``location_start={"n_estimators": R}``).

The offset enters as the linear start's does (``data["offset"]``: the loss sees
``raw + offset``); the constant parts of every raw score are then refitted by maximum
likelihood given the offset (for a Normal: the location's intercept near 0, the scale's start
at the residual spread).  What the point model predicts is on the location's raw scale: ``y``
for the location families of :data:`IDENTITY`, ``log y`` for the LogNormal (whose ``loc`` is
the mean of ``log y``).

SHAP: the point model's own TreeSHAP values (Lundberg et al. 2020; LightGBM's
``pred_contrib``) are added to the location's per-feature values and its expected value to
the location's base value, so ``base + values.sum(-1) == predict_raw`` still holds.

References
----------
Friedman, J. H. (2001), Greedy function approximation: a gradient boosting machine, Ann.
Statist. 29(5) (boosting from an initial model ``F_0``); Brophy & Lowd (2022),
Instance-based uncertainty estimation for gradient-boosted regression trees, NeurIPS 35 (a
point GBM first, the distribution around it); Lundberg et al. (2020), Nature Machine
Intelligence 2, 56-67.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import lightgbm as lgb
import numpy as np
import torch
from scipy.optimize import minimize
from sklearn.model_selection import KFold

from ..boosting.threads import num_threads
from .policy import auto_tree_size

__all__ = ["LocationStart", "POINT_DEFAULTS", "PATIENCE", "IDENTITY", "LOG", "AUTO",
           "location_transform", "LocationPlan", "location_plan", "point_options",
           "refit_constants", "cross_fitted", "CROSS_FIT_FOLDS", "fit_point_model",
           "cv_point_rounds", "start_location", "cv_location_plan"]

#: Options of the point model (LightGBM's L2 regressor): ``n_estimators`` is the cap of its
#: early-stopped rounds (all rounds when there are no validation rows).
POINT_DEFAULTS = {"num_leaves": 15, "learning_rate": 0.05, "min_child_samples": "auto",
                  "n_estimators": 5000}
#: Folds of the out-of-fold start of the training rows (:func:`cross_fitted`).
CROSS_FIT_FOLDS = 5
#: Patience of the point model's early stopping, in rounds.
PATIENCE = 50
#: Families whose ``loc`` (identity link) is a location of ``y`` itself.
IDENTITY = ("normal", "laplace", "logistic", "gumbel", "studentt", "cauchy")
#: Families whose ``loc`` is a location of ``log y``.
LOG = ("lognormal",)
#: Families ``location_start="auto"`` applies to (the L2 point model estimates their
#: location well; heavy-tailed StudentT and Cauchy only when asked for).
AUTO = ("normal", "laplace", "logistic", "gumbel", "lognormal")


def location_transform(family) -> str | None:
    """``"identity"`` or ``"log"``: what the point model is fitted to (``y`` or ``log y``);
    None when the family has no location the start applies to."""
    name = getattr(family, "name", None)
    if name in IDENTITY:
        return "identity"
    if name in LOG:
        return "log"
    return None


@dataclass(frozen=True)
class LocationPlan:
    """How a fit starts the location from a point model (:func:`location_plan`).

    Attributes
    ----------
    options : dict
        The point model's LightGBM options (:func:`point_options`).
    transform : {"identity", "log"}
        The point model fits ``y`` or ``log y`` (:func:`location_transform`).
    column : int
        The raw output of ``loc``.
    rounds : int or None
        The point model's rounds (None: chosen on the validation rows or the folds).
    auto : bool
        ``location_start="auto"``: the start is kept only where it wins.
    """

    options: dict
    transform: str
    column: int
    rounds: int | None
    auto: bool


def location_plan(spec, family, mode: str, *, restricted: bool, lightgbm: bool,
                  linear_start) -> LocationPlan | None:
    """Whether and how a fit starts the location from a point model.

    Parameters
    ----------
    spec : "auto", "gbm", dict or None
        The estimator's ``location_start``.
    family : Family
    mode : str
        The fit's validation mode (:func:`~distboost.estimators.rounds.validation_mode`).
    restricted : bool
        Monotone constraints or a parameter's ``features`` are set (a point model on every
        column could break them).
    lightgbm : bool
        The trees are LightGBM's (the start's SHAP values need TreeSHAP of the same kind).
    linear_start : "auto" or bool

    Returns
    -------
    LocationPlan or None
        The plan, or None: the constant start.

    Raises
    ------
    ValueError
        When ``spec`` asks for the start explicitly ("gbm" or a dict) and it cannot apply.
    """
    if spec is None or spec is False or mode == "constant":
        return None
    auto = isinstance(spec, str) and spec == "auto"
    transform = location_transform(family)
    if auto and getattr(family, "name", None) not in AUTO:
        return None
    name = getattr(family, "name", family)
    if transform is None or "loc" not in family.param_names:
        problem = (f"family {name!r} has no location parameter it applies to (families: "
                   f"{', '.join(IDENTITY + LOG)}; censored, truncated and count families "
                   "have none)")
    elif restricted:
        problem = ("monotone_constraints or param_options 'features' are set, which a point "
                   "model on every column could break")
    elif not lightgbm:
        problem = "the trees are not LightGBM's (base_learner or backend='xgboost')"
    elif linear_start is True:
        problem = "linear_start=True asks for the linear start instead"
    elif mode == "none" and not (isinstance(spec, dict) and "n_estimators" in spec):
        problem = ("there are no validation rows to choose the point model's rounds "
                   "(early_stopping=False): give them as location_start={'n_estimators': R}")
    else:
        options = point_options(spec)
        return LocationPlan(options=options, transform=transform,
                            column=list(family.param_names).index("loc"),
                            rounds=options["n_estimators"] if mode == "none" else None,
                            auto=auto)
    if auto:
        return None
    raise ValueError(f"location_start={spec!r} cannot be used: {problem}. Use "
                     "location_start='auto' (applied only where it can be) or None.")


def point_options(spec) -> dict:
    """The point model's options from ``location_start`` (a dict overrides
    :data:`POINT_DEFAULTS`).

    Raises
    ------
    ValueError
        For an unknown key or a value out of range.
    """
    out = dict(POINT_DEFAULTS)
    if not isinstance(spec, dict):
        return out
    unknown = sorted(set(spec) - set(POINT_DEFAULTS))
    if unknown:
        raise ValueError(f"location_start has unknown keys {unknown}; the point model's "
                         f"options are {sorted(POINT_DEFAULTS)}.")
    out.update(spec)
    ints = {"num_leaves": 2, "min_child_samples": 1, "n_estimators": 1}
    for key, low in ints.items():
        v = out[key]
        if key == "min_child_samples" and isinstance(v, str) and v == "auto":
            continue
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < low:
            raise ValueError(f"location_start[{key!r}] must be an integer >= {low}, got "
                             f"{v!r}.")
    rate = out["learning_rate"]
    if isinstance(rate, bool) or not isinstance(rate, float | int) or not rate > 0:
        raise ValueError(f"location_start['learning_rate'] must be a number > 0, got "
                         f"{rate!r}.")
    return out


def _target(y: np.ndarray, transform: str) -> np.ndarray:
    y = np.asarray(y, dtype=np.float64)
    return np.log(y) if transform == "log" else y


def _min_rows(value, n: int) -> int:
    """``min_child_samples``: "auto" is the estimators' rule for the point model's ``n``
    rows (:func:`~distboost.estimators.policy.auto_tree_size`: a steep curve on 200 rows
    needs small leaves)."""
    if isinstance(value, str):
        return auto_tree_size(n)[1]
    return int(value)


def _lgb_params(options: dict, seed: int, n_jobs, n: int) -> dict:
    params = {"objective": "regression", "learning_rate": float(options["learning_rate"]),
              "num_leaves": int(options["num_leaves"]),
              "min_data_in_leaf": _min_rows(options["min_child_samples"], n),
              "verbosity": -1, "deterministic": True, "force_row_wise": True,
              "seed": int(seed), "feature_pre_filter": False}
    threads = num_threads(n_jobs, n)
    if threads is not None:
        params["num_threads"] = threads
    return params


def fit_point_model(X, y, weight, options: dict, transform: str, seed: int, n_jobs=None,
                    X_val=None, y_val=None, w_val=None, rounds: int | None = None):
    """LightGBM's L2 regressor of the location's raw target on the rows ``(X, y)``.

    Parameters
    ----------
    X : ndarray or DataFrame of shape (n, p)
        The columns the trees split on.
    y : ndarray of shape (n,)
    weight : ndarray of shape (n,) or None
    options : dict
        :func:`point_options`.
    transform : {"identity", "log"}
    seed : int
    X_val, y_val, w_val : validation rows, optional
        When given (and ``rounds`` is None), the rounds are early-stopped on them (patience
        :data:`PATIENCE`, cap ``options["n_estimators"]``).
    rounds : int, optional
        Exactly this many rounds (no early stopping).

    Returns
    -------
    booster : lightgbm.Booster
        Fitted to the target minus ``center``.
    rounds : int
        Rounds kept (``booster.best_iteration`` under early stopping).
    curve : ndarray or None
        Validation mean squared error after rounds ``1..`` (None without validation rows).
    center : float
        The weighted mean of the target on the training rows.
    """
    params = _lgb_params(options, seed, n_jobs, len(y))
    # Centred (float64) before LightGBM stores the labels as float32: a target offset by
    # 1e9 keeps its digits.
    target = _target(y, transform)
    center = float(np.average(target, weights=weight))
    train = lgb.Dataset(X, target - center, weight=weight, categorical_feature="auto",
                        params={"verbosity": -1, "feature_pre_filter": False})
    if rounds is not None or X_val is None:
        n_rounds = int(options["n_estimators"] if rounds is None else rounds)
        booster = lgb.train(params, train, num_boost_round=max(n_rounds, 1))
        return booster, max(n_rounds, 1), None, center
    valid = lgb.Dataset(X_val, _target(y_val, transform) - center, weight=w_val,
                        reference=train)
    record: dict = {}
    booster = lgb.train(params, train, num_boost_round=int(options["n_estimators"]),
                        valid_sets=[valid], valid_names=["valid"],
                        callbacks=[lgb.early_stopping(PATIENCE, verbose=False),
                                   lgb.record_evaluation(record)])
    curve = np.asarray(record["valid"]["l2"], dtype=np.float64)
    return booster, max(int(booster.best_iteration), 1), curve, center


def refit_constants(loss, init_raw: np.ndarray, data: dict, weight) -> np.ndarray:
    """The constant raw scores that minimise the weighted mean ``loss`` given the offset in
    ``data`` (L-BFGS from ``init_raw``; ``init_raw`` back when it fails), shape (K,)."""
    w = None if weight is None else torch.as_tensor(np.asarray(weight, np.float64)
                                                    / np.sum(weight))
    n = len(data["y"])

    def value_and_grad(theta):
        t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        per_row = loss(t.expand(n, -1), data)
        value = per_row.mean() if w is None else (per_row * w).sum()
        if not torch.isfinite(value):
            return np.inf, np.zeros_like(theta)
        value.backward()
        return float(value.detach()), t.grad.numpy().copy()

    start = np.asarray(init_raw, dtype=np.float64)
    result = minimize(value_and_grad, start, jac=True, method="L-BFGS-B")
    ok = np.all(np.isfinite(result.x)) and result.fun <= value_and_grad(start)[0]
    return result.x if ok else start


def cross_fitted(X, y, weight, options: dict, transform: str, seed: int, rounds: int,
                 n_jobs=None, folds: int | None = None) -> np.ndarray | None:
    """Out-of-fold predictions of the point model on its own training rows, shape (n,):
    each row predicted by a point model (``rounds`` rounds) of the other folds' rows (None
    when there are fewer than ``2 * folds`` rows).  A model's predictions on the rows it was
    fitted to are closer to ``y`` than on new rows; residuals from them would make the
    spread look smaller in training than it is (Chernozhukov et al. 2018 cross-fit
    nuisance models for the same reason)."""
    folds = CROSS_FIT_FOLDS if folds is None else folds
    n = len(y)
    if folds < 2 or n < 2 * folds:
        return None
    out = np.empty(n)
    take = (lambda A, i: A.iloc[i]) if hasattr(X, "iloc") else (lambda A, i: A[i])
    splits = KFold(folds, shuffle=True, random_state=seed).split(np.arange(n))
    for train, held in splits:
        booster, _, _, center = fit_point_model(take(X, train), y[train],
                                                None if weight is None else weight[train],
                                                options, transform, seed, n_jobs,
                                                rounds=rounds)
        out[held] = booster.predict(take(X, held), num_iteration=rounds) + center
    return out


def cv_point_rounds(curves: list[np.ndarray], weights: list[float]) -> int:
    """The round with the lowest weighted mean of the folds' validation curves (each padded
    with its last value to the longest), at least 1."""
    length = max(len(c) for c in curves)
    padded = np.array([np.pad(c, (0, length - len(c)), mode="edge") for c in curves])
    return int(np.argmin(np.average(padded, axis=0, weights=weights))) + 1


class LocationStart:
    """The location's per-row start: a LightGBM point model's prediction.

    Parameters
    ----------
    booster : lightgbm.Booster
        The point model (fitted on ``y`` or ``log y``, see ``transform``).
    column : int
        The raw output the start belongs to (the family's ``loc``).
    n_outputs : int
        ``K``, the raw outputs.
    rounds : int
        The point model's kept rounds.
    transform : {"identity", "log"}
    options : dict
        The point model's options (:func:`point_options`).
    center : float
        Added to the booster's prediction (the booster fits the centred target).
    """

    def __init__(self, booster: lgb.Booster, column: int, n_outputs: int, rounds: int,
                 transform: str, options: dict, center: float = 0.0):
        self.booster = booster
        self.column = int(column)
        self.n_outputs = int(n_outputs)
        self.rounds = int(rounds)
        self.transform = transform
        self.options = dict(options)
        self.center = float(center)

    def __repr__(self) -> str:
        return (f"LocationStart(column={self.column}, rounds={self.rounds}, "
                f"transform={self.transform!r}, num_leaves={self.options['num_leaves']})")

    def predict(self, X) -> np.ndarray:
        """The point model's prediction (the location's raw scale), ndarray of shape (n,)."""
        return np.asarray(self.booster.predict(X, num_iteration=self.rounds),
                          dtype=np.float64).reshape(-1) + self.center

    def offset(self, X) -> np.ndarray:
        """The start of every raw output, ndarray of shape (n, K): the prediction in the
        location's column, zeros elsewhere."""
        out = np.zeros((X.shape[0], self.n_outputs))
        out[:, self.column] = self.predict(X)
        return out

    def contrib(self, X) -> np.ndarray:
        """The point model's exact TreeSHAP values, ndarray of shape (n, p + 1), the last
        column its expected value (``center`` included); each row sums to :meth:`predict`."""
        out = self.booster.predict(X, pred_contrib=True, num_iteration=self.rounds)
        out = np.asarray(out, dtype=np.float64).reshape(X.shape[0], -1)
        out[:, -1] += self.center
        return out

    def to_dict(self) -> dict:
        return {"model": self.booster.model_to_string(num_iteration=self.rounds),
                "column": self.column, "n_outputs": self.n_outputs, "rounds": self.rounds,
                "transform": self.transform, "options": self.options, "center": self.center}

    @classmethod
    def from_dict(cls, d: dict) -> LocationStart:
        return cls(lgb.Booster(model_str=d["model"]), d["column"], d["n_outputs"],
                   d["rounds"], d["transform"], d["options"], d.get("center", 0.0))


def start_location(plan: LocationPlan, objective, X_tree, y, sample_weight, val, data: dict,
                   data_val: dict | None, seed: int, n_jobs=None):
    """The point model of the location on a run's training rows (rounds early-stopped on
    the validation rows, or ``plan.rounds``), its offsets in ``data`` and ``data_val``, and
    the constant parts of the raw scores refitted given it.

    Parameters
    ----------
    plan : LocationPlan
    objective : FamilyObjective
        The run's objective.
    X_tree : array-like of shape (n, p)
        The training rows' tree matrix.
    y, sample_weight : ndarray of shape (n,), or None for the weights
    val : tuple
        ``(X_val_tree, y_val, w_val)``, each None without validation rows.
    data, data_val : dict
        The run's data (``data_val`` None without validation rows); ``"offset"`` is added
        to in place.
    seed : int
    n_jobs : int or None

    Returns
    -------
    start : LocationStart or None
        None under ``"auto"`` when the point model does not beat the constant on the
        validation rows.
    init_raw : ndarray of shape (K,)
    """
    X_val_tree, y_val, w_val = val
    booster, rounds, curve, center = fit_point_model(
        X_tree, y, sample_weight, plan.options, plan.transform, seed, n_jobs,
        X_val_tree, y_val, w_val, rounds=plan.rounds)
    start = LocationStart(booster, plan.column, objective.n_outputs, rounds,
                          plan.transform, plan.options, center)
    if plan.auto and curve is not None:
        target = np.log(y_val) if plan.transform == "log" else y_val
        centre = np.average(np.log(y) if plan.transform == "log" else y,
                            weights=sample_weight)
        if not curve[rounds - 1] < np.average((target - centre) ** 2, weights=w_val):
            return None, objective.init_raw
    offset = start.offset(X_tree)
    oof = cross_fitted(X_tree, y, sample_weight, plan.options, plan.transform, seed,
                       rounds, n_jobs)
    if oof is not None:
        offset[:, plan.column] = oof
    data["offset"] = data.get("offset", 0.0) + torch.as_tensor(offset)
    if data_val is not None:
        data_val["offset"] = data_val.get("offset", 0.0) + torch.as_tensor(
            start.offset(X_val_tree))
    init_raw = objective.init_raw.copy()
    init_raw[plan.column] = 0.0
    return start, refit_constants(objective.loss, init_raw, data, sample_weight)


def cv_location_plan(plan: LocationPlan, tree_rows, y, sample_weight, folds, seed: int,
                     n_jobs=None) -> LocationPlan | None:
    """``plan`` with the point model's rounds chosen on the folds' weighted mean validation
    curve; None under ``"auto"`` when that curve's best does not beat the constant (each
    fold's training mean).

    Parameters
    ----------
    plan : LocationPlan
    tree_rows : callable
        ``tree_rows(indices)``: the tree matrix of those rows.
    y, sample_weight : ndarray of shape (n,), or None for the weights
    folds : list of (train, valid) index arrays
    seed : int
    n_jobs : int or None
    """
    curves, constant, weights = [], [], []
    target = np.log(y) if plan.transform == "log" else np.asarray(y, np.float64)
    w = np.ones(len(y)) if sample_weight is None else sample_weight
    for train, valid in folds:
        _, _, curve, _ = fit_point_model(
            tree_rows(train), y[train], w[train], plan.options, plan.transform, seed, n_jobs,
            tree_rows(valid), y[valid], w[valid])
        curves.append(curve)
        centre = np.average(target[train], weights=w[train])
        constant.append(np.average((target[valid] - centre) ** 2, weights=w[valid]))
        weights.append(float(w[valid].sum()))
    rounds = cv_point_rounds(curves, weights)
    if plan.auto:
        length = max(len(c) for c in curves)
        mean = np.average([np.pad(c, (0, length - len(c)), mode="edge") for c in curves],
                          axis=0, weights=weights)
        if not mean[rounds - 1] < np.average(constant, weights=weights):
            return None
    return dataclasses.replace(plan, rounds=rounds)
