"""The location's leaf size on near-deterministic small data.

A leaf of at least ``min_child_samples`` rows protects its value from the noise of the rows
behind it; the "auto" size (:func:`~distboost.estimators.options.auto_tree_size`, about
``sqrt(n) / 2`` rows) suits noisy targets.  Where the target is almost a function of the
features the trade-off turns round: the noise is a small fraction of the target's spread,
and leaves of a dozen rows average over a function that changes within them, so the
location's trees cannot follow it however many rounds they run (a leaf's bias, not its
noise, dominates; the shrinkage of every tree already averages the noise over rounds).

The rule, for a family with a location (:data:`~distboost.estimators.location_start.IDENTITY`
and :data:`~distboost.estimators.location_start.LOG`) fitted with validation rows: when the
location predicts the validation rows (the out-of-fold rows of a cross-validated fit, below
1,000 rows) with an R^2 of at least :data:`NEAR_DETERMINISTIC_R2` (of ``log y`` for the
LogNormal), the fit is run once more with the location's leaves down to
:data:`FINE_MIN_CHILD_SAMPLES` rows (the other parameters keep theirs: a scale estimated from
two rows is noise), and that run is kept when it wins: a lower cross-validated loss, or on
held-out rows (``eval_set`` or the seeded split) a validation loss lower by more than one
standard error of the paired per-row differences.  Designed experiments (UCI's energy and
yacht: a target computed on a grid of a few levels per feature) are where this pays; on a
smooth function of continuous features the finer leaves rarely win and are not kept.  A
user's own ``min_child_samples`` (shared or the location's in ``param_options``) is never
changed.  The fitted ``location_min_child_samples_`` says what the location used.

References
----------
Hastie, T., Tibshirani, R. & Friedman, J. (2009), The Elements of Statistical Learning, 2nd
ed., sec. 7.3 (bias against variance) and 10.11 (the size of a boosted tree).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .location_start import location_transform
from .tree_options import TreeOptions

__all__ = ["FINE_MIN_CHILD_SAMPLES", "NEAR_DETERMINISTIC_R2", "location_index",
           "location_column", "location_leaf_rows", "fine_location_options",
           "out_of_fold_r2"]

#: Out-of-fold R^2 of the location from which its fine leaves are tried (the noise's
#: standard deviation below 14 % of the target's).
NEAR_DETERMINISTIC_R2 = 0.98
#: The location's ``min_child_samples`` tried on near-deterministic data.
FINE_MIN_CHILD_SAMPLES = 2


def location_index(family, n_outputs: int) -> int | None:
    """The raw output of a family's location (a scalar ``loc`` of ``y`` or ``log y``) among
    ``n_outputs`` raw outputs, or None (no such location, or not one raw output per
    parameter: a varying-coefficient model's coefficients)."""
    names = list(family.param_names)
    if location_transform(family) is None or "loc" not in names or n_outputs != len(names):
        return None
    return names.index("loc")


def location_column(estimator, family, n_outputs: int) -> int | None:
    """The raw output of the location when the rule can apply to this fit, else None:
    a family with a location, LightGBM's trees, and no leaf size set by the user."""
    if (getattr(estimator, "base_learner", None) is not None
            or getattr(estimator, "backend", None) not in (None, "lightgbm")):
        return None
    if estimator.min_child_samples != "auto":
        return None
    own = (getattr(estimator, "param_options", None) or {}).get("loc", {})
    if "min_child_samples" in own:
        return None
    return location_index(family, n_outputs)


def location_leaf_rows(family, params, n_outputs: int) -> int | None:
    """Minimum rows of the location's leaves in a run with engine ``params`` (an
    :class:`~distboost.boosting.EngineParams`), None without a location."""
    column = location_index(family, n_outputs)
    if column is None:
        return None
    if params.per_parameter:
        return int(params.per_parameter[column][0].min_child_samples)
    return int(params.min_child_samples)


def out_of_fold_r2(family, oof_raw: np.ndarray, y: np.ndarray, sample_weight,
                   column: int) -> float:
    """Weighted R^2 of the out-of-fold location (raw column ``column``) as a prediction of
    ``y`` (``log y`` for a location of ``log y``).

    Parameters
    ----------
    family : Family
    oof_raw : ndarray of shape (n, K)
        Out-of-fold raw scores.
    y : ndarray of shape (n,)
    sample_weight : ndarray of shape (n,) or None
    column : int

    Returns
    -------
    float
        ``-inf`` when ``y`` is constant.
    """
    target = np.log(y) if location_transform(family) == "log" else np.asarray(y, np.float64)
    w = np.ones(len(target)) if sample_weight is None else np.asarray(sample_weight, float)
    centre = np.average(target, weights=w)
    total = np.average((target - centre) ** 2, weights=w)
    if not total > 0.0:
        return -np.inf
    resid = np.average((target - oof_raw[:, column]) ** 2, weights=w)
    return float(1.0 - resid / total)


def fine_location_options(tree_options: TreeOptions, column: int) -> TreeOptions:
    """``tree_options`` with the location's (raw output ``column``) leaves down to
    :data:`FINE_MIN_CHILD_SAMPLES` rows."""
    outputs = list(tree_options.outputs)
    overrides, cols = outputs[column]
    outputs[column] = ({**overrides, "min_child_samples": FINE_MIN_CHILD_SAMPLES}, cols)
    return dataclasses.replace(tree_options, outputs=outputs)
