"""Explanations of a fitted model: exact TreeSHAP per distribution parameter, importances.

``model.explain(X)`` returns an :class:`Explanation`: for every row, every parameter's raw
(link-scale) score split exactly into one value per feature plus a base value,

    ``base_values[i, k] + values[i, k, :].sum() == model.predict_raw(X)[i, k]``.

The tree part is the backend's exact TreeSHAP (Lundberg et al. 2020, Algorithm 2; LightGBM's
``pred_contrib``) of each parameter's ensemble; the start values, the dispersion shift and
the trees' expected value form the base.  The other parts of a raw score are linear and are
attributed exactly as linear SHAP (Lundberg & Lee 2017, the linear model with independent
features): the penalised linear start ``z(x) B`` adds ``z_j(x) B_j`` to feature ``j``
(``z`` is centred on the training rows); the location start's point model
(:mod:`~distboost.estimators.location_start`) adds its own TreeSHAP values to the location's
and its expected value to the location's base; and a varying-coefficient model's
``loc = sum_m c_m(x) z_m`` adds, for each coefficient ensemble ``c_m`` with SHAP values
``phi_m`` and base ``b_m``, ``z_m phi_m`` to the effect modifiers and ``b_m z_m`` to the
linear feature ``x_m`` (the base of ``loc`` is the intercept's ``b_0``).  The one
non-linear step, the floor of a scale parameter (``raw_floor_``), is not explained: rows
where it binds are reported by a warning.

References
----------
Lundberg, S. M. & Lee, S.-I. (2017). A unified approach to interpreting model predictions.
NeurIPS 30.  Lundberg, S. M., Erion, G., Chen, H. et al. (2020). From local explanations to
global understanding with explainable AI for trees. Nature Machine Intelligence 2, 56-67.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .._validation import check_X
from ..boosting.backend import check_importance_type

__all__ = ["Explanation", "explain_model", "importance_table", "feature_names", "gain_shares"]


class Explanation:
    """Additive explanations of every parameter's raw score.

    Parameters
    ----------
    values : ndarray of shape (n, K, p)
        Contribution of feature ``j`` to parameter ``k``'s raw score on row ``i``.
    base_values : ndarray of shape (n, K)
        What the raw scores are without any feature's contribution.
    feature_names : list of str
        The ``p`` columns of X.
    param_names : list of str
        The ``K`` parameters (the family's names).
    data : ndarray or DataFrame of shape (n, p)
        The explained rows.
    """

    def __init__(self, values, base_values, feature_names, param_names, data):
        self.values = np.asarray(values, dtype=np.float64)
        self.base_values = np.asarray(base_values, dtype=np.float64)
        self.feature_names = list(feature_names)
        self.param_names = list(param_names)
        self.data = data

    def __repr__(self) -> str:
        n, k, p = self.values.shape
        return (f"Explanation({n} rows, parameters {self.param_names}, {p} features)")

    def __len__(self) -> int:
        return self.values.shape[0]

    def _index(self, param: str | int) -> int:
        if isinstance(param, int | np.integer):
            if not 0 <= int(param) < len(self.param_names):
                raise ValueError(f"param {int(param)} is outside the "
                                 f"{len(self.param_names)} parameters {self.param_names}.")
            return int(param)
        if param not in self.param_names:
            raise ValueError(f"Unknown parameter {param!r}; the parameters are "
                             f"{self.param_names}.")
        return self.param_names.index(param)

    def to_frame(self, param: str | int) -> pd.DataFrame:
        """One parameter's values, DataFrame of shape (n, p) (X's index when X was a
        DataFrame)."""
        index = self.data.index if isinstance(self.data, pd.DataFrame) else None
        return pd.DataFrame(self.values[:, self._index(param), :], columns=self.feature_names,
                            index=index)

    def numeric_data(self) -> np.ndarray:
        """The explained rows as float64, shape (n, p) (categoricals as their codes,
        missing as NaN): for colouring plots."""
        if isinstance(self.data, pd.DataFrame):
            cols = [c.cat.codes.where(c.cat.codes >= 0).to_numpy(dtype=np.float64)
                    if isinstance(c.dtype, pd.CategoricalDtype)
                    else pd.to_numeric(c, errors="coerce").to_numpy(dtype=np.float64)
                    for _, c in self.data.items()]
            return np.column_stack(cols) if cols else np.zeros((len(self.data), 0))
        return np.asarray(self.data, dtype=np.float64)

    def to_shap(self, param: str | int):
        """One parameter's explanation as a ``shap.Explanation``, for shap's plots.

        Raises
        ------
        ImportError
            When shap is not installed (``pip install distboost[shap]``).
        """
        try:
            import shap
        except ImportError as err:
            raise ImportError("Explanation.to_shap needs the shap package: "
                              "pip install distboost[shap]") from err
        k = self._index(param)
        return shap.Explanation(values=self.values[:, k, :].copy(),
                                base_values=self.base_values[:, k].copy(),
                                data=self.numeric_data(), feature_names=self.feature_names,
                                output_names=self.param_names[k])


def feature_names(model) -> list[str]:
    """The names of X's columns seen in fit (``x0, x1, ...`` for an array)."""
    if hasattr(model, "feature_names_in_"):
        return [str(c) for c in model.feature_names_in_]
    return [f"x{j}" for j in range(model.n_features_in_)]


def _tree_columns(model, X) -> np.ndarray:
    return np.asarray(model._tree_columns(X, vars(model)), dtype=np.intp)


def _linear_start_values(linear, X, values: np.ndarray) -> None:
    """Add the linear start's ``z_j(x) B_j`` to each feature's values (in place)."""
    Z = linear.design(X)
    pos = 0
    for col in linear.columns:
        width = 1 if col["kind"] == "numeric" else len(col["levels"])
        values[:, :, col["index"]] += Z[:, pos:pos + width] @ linear.coef[pos:pos + width]
        pos += width


def explain_model(model, X, iteration: int | None = None) -> Explanation:
    """The :class:`Explanation` of a fitted distributional estimator on the rows X.

    Parameters
    ----------
    model : DistributionalEstimator
        Fitted, with a tree backend that has TreeSHAP (LightGBM).
    X : array_like or DataFrame of shape (n, p)
    iteration : int, optional
        Boosting rounds to use (default: ``best_iteration_``).

    Returns
    -------
    Explanation
        ``values`` (n, K, p) and ``base_values`` (n, K) on the family's parameters.

    Warns
    -----
    RuntimeWarning
        When the floor of a parameter binds on some rows: there ``predict_raw`` is the
        floor, and the explanation describes the score below it.
    """
    check_is_fitted(model)
    Xc = check_X(model, X, reset=False)
    contrib = model.ensemble_.predict_contrib(model._tree_X(Xc, vars(model)), iteration)
    n, k = contrib.shape[:2]
    values = np.zeros((n, k, Xc.shape[1]))
    values[:, :, _tree_columns(model, Xc)] = contrib[:, :, :-1]
    base = contrib[:, :, -1].copy()
    if getattr(model, "linear_start_", None) is not None:
        _linear_start_values(model.linear_start_, Xc, values)
    location = getattr(model, "location_start_", None)
    if location is not None:  # the point model's own TreeSHAP, on the trees' columns
        point = location.contrib(model._tree_X(Xc, vars(model)))
        values[:, location.column, _tree_columns(model, Xc)] += point[:, :-1]
        base[:, location.column] += point[:, -1]
    values, base = model._explain_outputs(values, base, Xc)
    family = model.family_
    for name in family.dispersion_params if model.dispersion_shift_ else ():
        base[:, family.param_names.index(name)] += model.dispersion_shift_
    raw = model.predict_raw(Xc, iteration)
    total = base + values.sum(axis=2)
    floored = total < model.raw_floor_[None, :]
    if floored.any():
        counts = floored.sum(axis=0)
        which = [f"{p!r} ({c} of {n} rows)" for p, c in zip(family.param_names, counts,
                                                              strict=True) if c]
        warnings.warn(f"The floor of {', '.join(which)} binds: there predict_raw is the "
                      "floor and the explanation describes the score below it.",
                      RuntimeWarning, stacklevel=3)
    err = np.abs(np.where(floored, raw, total) - raw)
    if not np.all(err <= 1e-6 * (1.0 + np.abs(raw))):
        raise RuntimeError(f"The explanation does not add up to predict_raw (largest gap "
                           f"{float(err.max()):.3g}); please report this as a bug.")
    return Explanation(values, base, feature_names(model), family.param_names, X)


def importance_table(model, importance_type: str = "gain") -> pd.DataFrame:
    """Importance of each feature in each of a fitted model's raw outputs.

    Returns
    -------
    DataFrame of shape (K, p)
        Rows ``model._output_names()``, columns the features of X (zero for those the
        trees do not see).
    """
    check_is_fitted(model)
    check_importance_type(importance_type)
    imp = model.ensemble_.feature_importances(importance_type)
    p = model.n_features_in_
    cols = _tree_columns(model, np.zeros((0, p)))
    out = np.zeros((imp.shape[0], p))
    out[:, cols[:imp.shape[1]]] = imp
    return pd.DataFrame(out, index=model._output_names(), columns=feature_names(model))


def gain_shares(gain: np.ndarray) -> np.ndarray:
    """Mean over the rows of ``gain`` (K, p) that have any gain of each row's share, shape
    (p,): sums to 1, or zeros when no row has gain.  A row's gains are in its own units
    (the curvature of its parameter), so rows are normalised before they are averaged."""
    totals = gain.sum(axis=1)
    used = totals > 0
    if not used.any():
        return np.zeros(gain.shape[1])
    return (gain[used] / totals[used, None]).mean(axis=0)
