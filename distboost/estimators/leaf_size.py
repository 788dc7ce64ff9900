"""The location's leaf size on near-deterministic small data and on repeated records.

A leaf of at least ``min_child_samples`` rows protects its value from the noise of the rows
behind it; the "auto" size (:func:`~distboost.estimators.options.auto_tree_size`, about
``sqrt(n) / 2`` rows) suits noisy targets.  Where the target is almost a function of the
features the trade-off turns round: the noise is a small fraction of the target's spread,
and leaves of a dozen rows average over a function that changes within them, so the
location's trees cannot follow it however many rounds they run (a leaf's bias, not its
noise, dominates; the shrinkage of every tree already averages the noise over rounds).
Where records repeat (the same features and nearly the same target: UCI's red wine holds
records entered twice), a new row has a fair chance of repeating a training record, whose
target then says more about it than the location does; leaves of a few rows, and enough of
them, let the location's trees isolate repeated points as nearest-neighbour and forest
methods do.  Repeats whose targets vary as much as the location's errors (repeated
measurements of a noisy process, discrete features) carry no such information.

The rule, for a family with a location (:data:`~distboost.estimators.location_start.IDENTITY`
and :data:`~distboost.estimators.location_start.LOG`) fitted with validation rows, tries the
fit once more with the location's leaves down to :data:`FINE_MIN_CHILD_SAMPLES` rows (the
other parameters keep theirs: a scale estimated from two rows is noise) in two cases:

- near-deterministic data: the location predicts the validation rows (the out-of-fold rows
  of a cross-validated fit, below ``CV_MAX_ROWS`` rows) with an R^2 of at least
  :data:`NEAR_DETERMINISTIC_R2` (of ``log y`` for the LogNormal).  The fine run is kept when
  it wins: a lower cross-validated loss, or on held-out rows (``eval_set`` or the seeded
  split) a validation loss lower by more than one standard error of the paired per-row
  differences.  Designed experiments (UCI's energy and yacht: a target computed on a grid
  of a few levels per feature) are where this pays; on a smooth function of continuous
  features the finer leaves rarely win and are not kept.
- repeated records: at least :data:`REPEATED_ROWS_SHARE` of fewer than
  :data:`REPEATED_ROWS_MAX` training rows share all their features with another row, and
  the targets of those repeats vary (pooled within the groups) by at most
  :data:`REPEATS_AGREE` times the location's mean squared error on the held-out rows.  The
  location also gets :data:`REPEATED_ROWS_LEAVES` leaves, and the fine run is the
  favourite: kept unless the "auto" leaves win (a lower cross-validated loss, or on held-out
  rows by more than one standard error).  A few hundred validation rows cannot tell the two
  apart reliably (on red wine the paired standard error is as large as the gain), and the
  agreeing repeats themselves are the evidence for the finer leaves.

A user's own ``min_child_samples`` or ``num_leaves`` (shared or the location's in
``param_options``) is never changed.  The fitted ``location_min_child_samples_`` says what
the location used.

References
----------
Hastie, T., Tibshirani, R. & Friedman, J. (2009), The Elements of Statistical Learning, 2nd
ed., sec. 7.3 (bias against variance) and 10.11 (the size of a boosted tree).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from .location_start import location_transform
from .policy import REPEATED_ROWS_MAX
from .tree_options import TreeOptions

__all__ = ["FINE_MIN_CHILD_SAMPLES", "NEAR_DETERMINISTIC_R2", "REPEATED_ROWS_SHARE",
           "REPEATED_ROWS_LEAVES", "REPEATED_ROWS_MAX", "REPEATS_AGREE", "location_index",
           "location_column", "location_tree_size", "fine_leaves_candidate",
           "fine_location_options", "location_mse", "out_of_fold_r2", "repeated_rows_share",
           "within_repeats_variance"]

#: Out-of-fold R^2 of the location from which its fine leaves are tried (the noise's
#: standard deviation below 14 % of the target's).
NEAR_DETERMINISTIC_R2 = 0.98
#: The location's ``min_child_samples`` tried on near-deterministic data.
FINE_MIN_CHILD_SAMPLES = 2
#: Share of training rows whose features repeat another row's from which the fine leaves
#: are tried (one row in ten).
REPEATED_ROWS_SHARE = 0.10
#: The targets of repeated rows must vary less than this share of the location's mean
#: squared error on held-out rows (variances) for the repeats to count.
REPEATS_AGREE = 0.5
#: The location's ``num_leaves`` tried with the fine leaves on repeated feature rows (the
#: cap of the "auto" size), unless the user set it.
REPEATED_ROWS_LEAVES = 31


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


def location_tree_size(family, params, n_outputs: int) -> tuple[int, int] | None:
    """``(num_leaves, min_child_samples)`` of the location's trees in a run with engine
    ``params`` (an :class:`~distboost.boosting.EngineParams`), None without a location."""
    column = location_index(family, n_outputs)
    if column is None:
        return None
    own = params.per_parameter[column][0] if params.per_parameter else params
    return int(own.num_leaves), int(own.min_child_samples)


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
    target = _location_scale(family, y)
    w = np.ones(len(target)) if sample_weight is None else np.asarray(sample_weight, float)
    centre = np.average(target, weights=w)
    total = np.average((target - centre) ** 2, weights=w)
    if not total > 0.0:
        return -np.inf
    return float(1.0 - location_mse(family, oof_raw, y, sample_weight, column) / total)


def location_mse(family, raw: np.ndarray, y: np.ndarray, sample_weight, column: int) -> float:
    """Weighted mean squared error of the location (raw column ``column`` of ``raw``, shape
    (n, K)) as a prediction of ``y`` (``log y`` for a location of ``log y``)."""
    target = _location_scale(family, y)
    w = np.ones(len(target)) if sample_weight is None else np.asarray(sample_weight, float)
    return float(np.average((target - raw[:, column]) ** 2, weights=w))


def _location_scale(family, y) -> np.ndarray:
    y = np.asarray(y, np.float64)
    return np.log(y) if location_transform(family) == "log" else y


def _row_groups(X) -> np.ndarray:
    """Group number of every row of ``X``: equal numbers for equal feature rows (missing
    values equal to missing values)."""
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    hashes = pd.util.hash_pandas_object(frame, index=False).to_numpy()
    return np.unique(hashes, return_inverse=True)[1].ravel()


def repeated_rows_share(X) -> float:
    """Share of the rows of ``X`` whose features all equal another row's (missing values
    equal to missing values).

    Parameters
    ----------
    X : ndarray or DataFrame of shape (n, p)

    Returns
    -------
    float
        In [0, 1]; 0 for fewer than two rows.
    """
    return _share(_row_groups(X)) if len(X) >= 2 else 0.0


def _share(groups: np.ndarray) -> float:
    return float(np.mean(np.bincount(groups)[groups] > 1))


def within_repeats_variance(X, target) -> float:
    """Pooled variance of ``target`` within groups of equal feature rows of ``X``: the sum
    of squared deviations from each group's mean over the rows that repeat, divided by their
    number less the number of groups; NaN when no row repeats.

    Parameters
    ----------
    X : ndarray or DataFrame of shape (n, p)
    target : ndarray of shape (n,)

    Returns
    -------
    float
    """
    return _within(_row_groups(X), target) if len(X) >= 2 else float("nan")


def _within(groups: np.ndarray, target) -> float:
    counts = np.bincount(groups)
    repeated = counts[groups] > 1
    n_groups = int(np.sum(counts > 1))
    if not repeated.any():
        return float("nan")
    target = np.asarray(target, np.float64)
    means = np.bincount(groups, weights=target) / counts
    deviations = (target - means[groups])[repeated]
    return float(deviations @ deviations / (deviations.size - n_groups))


def fine_location_options(tree_options: TreeOptions, column: int,
                          num_leaves: int | None = None) -> TreeOptions:
    """``tree_options`` with the location's (raw output ``column``) leaves down to
    :data:`FINE_MIN_CHILD_SAMPLES` rows and, when ``num_leaves`` is given, that many of
    them."""
    outputs = list(tree_options.outputs)
    overrides, cols = outputs[column]
    fine = {"min_child_samples": FINE_MIN_CHILD_SAMPLES}
    if num_leaves is not None:
        fine["num_leaves"] = num_leaves
    outputs[column] = ({**overrides, **fine}, cols)
    return dataclasses.replace(tree_options, outputs=outputs)


def fine_leaves_candidate(estimator, family, X, y, tree_options: TreeOptions, n_outputs: int,
                          held_out) -> tuple[TreeOptions, bool] | None:
    """The tree options of the fine-leaved run to try, and whether the fine leaves are the
    favourite (repeated records), or None when the rule does not apply.

    The rule applies when :func:`location_column` finds a location and either

    - the feature rows repeat: at least :data:`REPEATED_ROWS_SHARE` of fewer than
      :data:`REPEATED_ROWS_MAX` training rows share all their features with another row,
      and the targets of the repeats agree: their pooled variance
      (:func:`within_repeats_variance`) is at most :data:`REPEATS_AGREE` times the
      location's mean squared error on the held-out rows (the repeats know something about
      their point that the location does not); or
    - the location's R^2 on the held-out rows is at least :data:`NEAR_DETERMINISTIC_R2`.

    On repeated rows the location also gets :data:`REPEATED_ROWS_LEAVES` leaves unless the
    user set ``num_leaves`` (shared or the location's).

    Parameters
    ----------
    estimator : estimator being fitted
    family : Family
    X : ndarray or DataFrame of shape (n, p)
        The training rows.
    y : ndarray of shape (n,)
        Their targets.
    tree_options : TreeOptions
    n_outputs : int
    held_out : callable
        ``held_out() -> (raw, y_val, w_val)``: the run's raw scores on the held-out rows
        (out of fold under cross-validation), shape (m, K), their targets and weights (or
        None).

    Returns
    -------
    (TreeOptions, bool) or None
    """
    column = location_column(estimator, family, n_outputs)
    if column is None:
        return None
    raw, y_val, w_val = held_out()
    repeated = False
    groups = _row_groups(X) if 2 <= len(X) < REPEATED_ROWS_MAX else None
    if groups is not None and _share(groups) >= REPEATED_ROWS_SHARE:  # rows hashed once
        within = _within(groups, _location_scale(family, y))
        repeated = bool(within <= REPEATS_AGREE * location_mse(family, raw, y_val, w_val,
                                                               column))
    if not repeated and out_of_fold_r2(family, raw, y_val, w_val, column) < NEAR_DETERMINISTIC_R2:
        return None
    own = (getattr(estimator, "param_options", None) or {}).get("loc", {})
    leaves = (REPEATED_ROWS_LEAVES if repeated and estimator.num_leaves == "auto"
              and "num_leaves" not in own else None)
    return fine_location_options(tree_options, column, leaves), repeated
