"""After a fit: the training rows in the tail of each numeric feature, judged by the model.

A start that is linear in a feature (:mod:`distboost.estimators.linear_start`) or a
varying coefficient can run away along a long tail of that feature, and the trees cannot
correct a single row (their leaves hold several).  Issue 52 found a training row of
statsmodels' ``engel`` data predicted a median 6.2 x its observed value, with no warning.
:func:`feature_tail_messages` looks at the training rows beyond each numeric feature's
:data:`~distboost.estimators.linear_start.CLIP_QUANTILE` quantiles (each tail on its own)
and reports two symptoms:

- **outside the central interval**: more of the tail's observed values lie outside the
  model's central ``1 - OUTSIDE`` interval than the rate of the other rows allows (a
  one-sided binomial test at level :data:`ALPHA` against ``max(OUTSIDE, rate)``, the rate
  measured on up to :data:`SAMPLE_ROWS` other rows);
- **a median beyond the data**: the predicted median of a tail row lies beyond the observed
  range of y by more than the range's width.  A wide predictive distribution can hide a
  location that ran away from the first test (the engel row's observed value sat at the
  predicted 3rd percentile, under a median 6.2 x above it): the second catches it.

The estimator warns with the messages (``DistributionalRegressor.fit``); docs/engine.md,
"Outside the training range", says what to try.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binom

from .linear_start import CLIP_QUANTILE

__all__ = ["feature_tail_messages", "OUTSIDE", "ALPHA", "SAMPLE_ROWS"]

#: The share of rows expected outside the central interval the first test reads.
OUTSIDE = 0.001
#: Level of the one-sided binomial test of a tail's count outside that interval.
ALPHA = 1e-4
#: Rows (a seeded sample of the non-tail rows) that measure the model's rate outside the
#: interval on the bulk of the data.
SAMPLE_ROWS = 2_000
#: Rows named in a message.
NAMED_ROWS = 5


def _numeric_columns(X) -> list[tuple[str, np.ndarray]]:
    """``(name, values as float64)`` of each numeric column of X (categoricals left out)."""
    if isinstance(X, pd.DataFrame):
        out = []
        for name in X.columns:
            col = X[name]
            if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
                out.append((str(name), col.to_numpy(dtype=np.float64, na_value=np.nan)))
        return out
    X = np.asarray(X)
    if not np.issubdtype(X.dtype, np.number):
        return []
    return [(f"x{j}", X[:, j].astype(np.float64)) for j in range(X.shape[1])]


def _tails(values: np.ndarray) -> list[tuple[str, float, np.ndarray]]:
    """``(side, edge, rows)`` of a column's lower and upper tail: the rows strictly beyond
    its finite values' :data:`CLIP_QUANTILE` quantiles (none where they meet)."""
    finite = np.isfinite(values)
    if finite.sum() < 2:
        return []
    lo, hi = np.quantile(values[finite], [CLIP_QUANTILE, 1.0 - CLIP_QUANTILE])
    if not hi > lo:
        return []
    with np.errstate(invalid="ignore"):
        return [("lower", float(lo), np.flatnonzero(finite & (values < lo))),
                ("upper", float(hi), np.flatnonzero(finite & (values > hi)))]


def _names(index, rows: np.ndarray) -> str:
    labels = [str(index[r]) for r in rows[:NAMED_ROWS]]
    more = f" and {len(rows) - NAMED_ROWS} more" if len(rows) > NAMED_ROWS else ""
    return "[" + ", ".join(labels) + "]" + more


def feature_tail_messages(model, X, y: np.ndarray, sample_weight=None) -> list[str]:
    """What is wrong with the training rows of the features' tails, one message per tail.

    Parameters
    ----------
    model : fitted DistributionalRegressor
    X : ndarray or DataFrame of shape (n, p)
        The training rows, as ``fit`` validated them.
    y : ndarray of shape (n,)
        Their targets (a 1-D target; the caller skips censored and multivariate ones).
    sample_weight : ndarray of shape (n,), optional
        Rows of weight 0 are left out (the fit did not see them).

    Returns
    -------
    list of str
        Empty when every tail is in line with the rest of the rows.
    """
    y = np.asarray(y, dtype=np.float64)
    n = len(y)
    keep = np.ones(n, dtype=bool) if sample_weight is None else np.asarray(sample_weight) > 0
    tails = []
    for name, values in _numeric_columns(X):
        for side, edge, rows in _tails(values):
            rows = rows[keep[rows]]
            if rows.size:
                tails.append((name, side, edge, rows))
    if not tails:
        return []
    in_tail = np.unique(np.concatenate([rows for *_, rows in tails]))
    bulk = np.setdiff1d(np.flatnonzero(keep), in_tail)
    if bulk.size > SAMPLE_ROWS:
        bulk = np.sort(np.random.default_rng(0).choice(bulk, SAMPLE_ROWS, replace=False))
    rows = np.concatenate([in_tail, bulk])
    take = X.iloc[rows] if isinstance(X, pd.DataFrame) else np.asarray(X)[rows]
    try:
        q = np.asarray(model.predict_dist(take).quantile([OUTSIDE / 2, 0.5,
                                                          1.0 - OUTSIDE / 2]))
    except ValueError:  # unordered classes: no quantile function, nothing to judge here
        return []
    observed = y[rows]
    outside = (observed < q[:, 0]) | (observed > q[:, 2])
    rate = max(OUTSIDE, float(outside[in_tail.size:].mean()) if bulk.size else OUTSIDE)
    where = {r: i for i, r in enumerate(rows)}
    y_seen = y[keep]
    low, high = float(y_seen.min()), float(y_seen.max())
    width = high - low
    index = X.index if isinstance(X, pd.DataFrame) else np.arange(n)
    messages = []
    for name, side, edge, tail in tails:
        at = np.array([where[r] for r in tail])
        beyond = "above its 99th" if side == "upper" else "below its 1st"
        head = (f"the {tail.size} training row(s) in the {side} tail of feature {name!r} "
                f"({beyond} percentile, {edge:.6g})")
        out = outside[at]
        k = int(out.sum())
        if k and binom.sf(k - 1, tail.size, rate) < ALPHA:
            messages.append(
                f"{head}: {k} lie outside the model's central {100 * (1 - OUTSIDE):g} % "
                f"interval, against {100 * rate:.2g} % of the other rows (rows "
                f"{_names(index, tail[out])})")
        median = q[at, 1]
        far = (median > high + width) | (median < low - width)
        if far.any():
            first = int(np.flatnonzero(far)[0])
            others = f"; rows {_names(index, tail[far])}" if far.sum() > 1 else ""
            messages.append(
                f"{head}: the predicted median of {int(far.sum())} of them lies beyond the "
                f"observed range of y ({low:.6g} to {high:.6g}) by more than its width (row "
                f"{index[tail[first]]}: median {median[first]:.6g}, observed "
                f"{y[tail[first]]:.6g}{others})")
    return messages
