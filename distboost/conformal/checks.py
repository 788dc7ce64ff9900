"""Checks of :class:`~distboost.conformal.ConformalRegressor`'s inputs: the family, before any
fit; the level of an interval; the aggregation of the fold laws against the method and family."""

from __future__ import annotations

from numbers import Real

import numpy as np
import pandas as pd
from sklearn.utils import check_array

from .._validation import target_array
from ..families import get

__all__ = ["check_family", "check_level", "check_aggregation", "check_rows", "check_y"]


def check_rows(X):
    """A DataFrame as it is (its columns name the Mondrian groups; the models check it);
    anything else a 2-D ndarray (lists and array-likes; sparse input is refused, as by the
    models: their trees read dense rows)."""
    if isinstance(X, pd.DataFrame):
        return X
    return check_array(X, dtype=None, ensure_all_finite=False, input_name="X")


def check_y(y) -> np.ndarray:
    """A scalar target of shape (n,); a column vector is used as 1-D with scikit-learn's
    warning (:func:`~distboost._validation.target_array`, as the estimators)."""
    y = target_array(y, owner="ConformalRegressor")
    if y.ndim != 1:
        raise ValueError(
            f"ConformalRegressor calibrates a scalar target; y has shape {y.shape} "
            "(censored bounds and vector targets are not supported).")
    return y


def check_family(family) -> None:
    """Censored and vector families are refused before any fit."""
    if family is None or (isinstance(family, str) and family == "auto"):
        return
    fam = get(family)
    if fam.name.startswith("censored_") or getattr(fam, "kind", "") == "censored":
        raise ValueError(
            f"ConformalRegressor does not calibrate censored targets (family {fam.name!r}): "
            "a censored row's score is an interval, for which no conformal method is built "
            "here yet. Use the censored model's own survival scores (db.metrics.survival_crps, "
            "d_calibration).")
    if fam.multivariate:
        raise ValueError(f"ConformalRegressor calibrates a scalar target; family "
                         f"{fam.name!r} models vectors.")
    if fam.classification:
        raise ValueError(f"ConformalRegressor calibrates regression targets; family "
                         f"{fam.name!r} is a classification family.")


def check_level(level) -> float:
    if not (isinstance(level, Real) and 0.0 < float(level) < 1.0):
        raise ValueError(f"level must be a float in (0, 1); got {level!r}.")
    return float(level)


def check_aggregation(aggregation: str, method: str, family) -> None:
    """``aggregation="shrunk"`` averages the fold laws' quantile functions: the "cps" and
    "split" laws of a continuous family only."""
    if aggregation != "shrunk":
        return
    if method == "cqr":
        raise ValueError("aggregation='shrunk' combines the fold models' calibrated laws; "
                         "method='cqr' calibrates quantiles, not laws: use "
                         "aggregation='pool' with it, or method='cps'.")
    if method == "cps" and family is not None and family.discrete:
        raise ValueError(f"aggregation='shrunk' averages quantile functions, which leaves the "
                         f"integers of family {family.name!r}: use aggregation='pool'.")
