"""The global numbers of a distributed fit, each a reduction over the partitions.

Nothing here looks at one partition alone: the target check and the weight total, the
start values (the weighted marginal MLE of all rows: a seeded sample's MLE refined by
L-BFGS on the all-rows log-likelihood, whose value and gradient are sums over the
partitions), the curvature scale of the step rule at the start values, and the seeded
held-out split.  Each pass is one ``client.compute`` of a small result per partition.
"""

from __future__ import annotations

import warnings

import numpy as np
import torch
from scipy.optimize import minimize

from ..boosting.derivatives import curvature_scale
from ._data import W_COL

__all__ = ["target_pass", "refine_start", "global_curvature", "holdout_split"]


def _y_w(part, y_cols, weighted):
    y = part[y_cols].to_numpy(dtype=np.float64)
    y = y[:, 0] if y.shape[1] == 1 else y
    w = part[W_COL].to_numpy(dtype=np.float64) if weighted else None
    return y, w


def _target_facts(part, i, y_cols, weighted, check, family, rate, seed, name):
    y, w = _y_w(part, y_cols, weighted)
    if len(y) == 0:  # an empty block (tiny data, or a held-out split that took no rows)
        return 0, 0.0, y, w
    try:
        y = check(family, y, name)
    except ValueError as err:
        raise ValueError(f"partition {i}: {err}") from None
    if w is not None:
        bad = int(np.sum(~np.isfinite(w) | (w < 0)))
        if bad:
            raise ValueError(f"sample_weight: partition {i} has {bad} of {len(w)} weights that "
                             "are negative or not finite.")
    rng = np.random.default_rng([int(seed), int(i)])
    take = rng.random(len(y)) < rate
    return (len(y), float(len(y) if w is None else w.sum()), y[take],
            None if w is None else w[take])


def target_pass(client, tf, family, check, seed: int, sample_rows: int = 200_000,
                name: str = "y"):
    """Check the target of every partition and draw the start values' sample.

    Returns
    -------
    weight_total : float
    n_rows : int
    y_sample : ndarray of shape (m,) or (m, 2)
    w_sample : ndarray of shape (m,) or None
    """
    import dask

    rate = min(1.0, sample_rows / max(tf.n_rows, 1))
    cols = tf.y_columns + ([W_COL] if tf.weighted else [])
    parts = tf.frame[cols].to_delayed()
    tasks = [dask.delayed(_target_facts)(p, i, tf.y_columns, tf.weighted, check, family, rate,
                                         seed, name) for i, p in enumerate(parts)]
    facts = client.compute(tasks, sync=True)
    total = float(sum(f[1] for f in facts))
    if tf.weighted and not total > 0:
        raise ValueError(f"sample_weight sums to {total} over {tf.n_rows} rows; at least one "
                         "row needs a positive weight.")
    ys = [f[2] for f in facts if len(f[2])]
    if not ys:  # tiny data: at least the first partition's rows
        ys = [facts[0][2]]
    y_sample = np.concatenate(ys)
    w_sample = None if not tf.weighted else np.concatenate(
        [f[3] for f in facts if len(f[2])] or [facts[0][3]])
    return total, int(sum(f[0] for f in facts)), y_sample, w_sample


def _nll_sum_grad(part, y_cols, weighted, family, raw):
    y, w = _y_w(part, y_cols, weighted)
    r = torch.tensor(raw, dtype=torch.float64, requires_grad=True)
    per_row = family.nll(r.expand(len(y), -1), torch.as_tensor(np.require(y, requirements="W")))
    total = per_row.sum() if w is None else (per_row * torch.as_tensor(w)).sum()
    total.backward()
    return np.concatenate([[total.item()], r.grad.numpy()])


def refine_start(client, tf, family, raw0, weight_total: float):
    """The weighted MLE of all rows from the start ``raw0`` (shape (K,)): L-BFGS on the
    all-rows weighted mean negative log-likelihood, value and gradient summed over the
    partitions.  Returns ``raw0`` when the refinement does not lower the loss."""
    import dask

    cols = tf.y_columns + ([W_COL] if tf.weighted else [])
    parts = tf.frame[cols].to_delayed()

    def fun(raw):
        tasks = [dask.delayed(_nll_sum_grad)(p, tf.y_columns, tf.weighted, family,
                                             np.asarray(raw)) for p in parts]
        s = np.sum(client.compute(tasks, sync=True), axis=0) / weight_total
        if not np.all(np.isfinite(s)):
            return np.inf, np.zeros(len(raw))
        return s[0], s[1:]

    raw0 = np.asarray(raw0, dtype=np.float64)
    start = fun(raw0)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = minimize(fun, raw0, jac=True, method="L-BFGS-B",
                       options={"maxiter": 50, "gtol": 1e-8})
    if np.all(np.isfinite(res.x)) and res.fun < start:
        return res.x
    return raw0


def _curvature_part(part, y_cols, weighted, objective, step, weight_mean):
    y, w = _y_w(part, y_cols, weighted)
    if len(y) == 0:
        return np.zeros(objective.n_outputs + 1)
    data = objective.data(None, y)
    callables = objective.engine_callables(step, 0)
    raw = np.tile(objective.init_raw, (len(y), 1))
    scale = curvature_scale(callables["loss"], raw, data, step,
                            fisher=callables.get("fisher"),
                            sample_weight=None if w is None else w / weight_mean,
                            derivatives=callables.get("derivatives"))
    return np.concatenate([scale * len(y), [len(y)]])


def global_curvature(client, tf, objective, step: str, weight_mean: float) -> np.ndarray:
    """The engine's curvature scale (the mean over all rows of ``w * curvature`` at the start
    values, weights divided by their mean): one sum over the partitions."""
    import dask

    cols = tf.y_columns + ([W_COL] if tf.weighted else [])
    tasks = [dask.delayed(_curvature_part)(p, tf.y_columns, tf.weighted, objective, step,
                                           weight_mean)
             for p in tf.frame[cols].to_delayed()]
    s = np.sum(client.compute(tasks, sync=True), axis=0)
    return s[:-1] / s[-1]


def _holdout_part(part, fraction, seed, partition_info=None):
    i = 0 if partition_info is None else partition_info["number"]
    rng = np.random.default_rng([int(seed), int(i), 1])
    return part.assign(__distboost_valid=rng.random(len(part)) < fraction)


def holdout_split(tf, fraction: float, seed: int):
    """A seeded split of ``fraction`` of the rows of every partition (the same rows for the
    same data and partitioning): ``(train frame, validation frame)``."""
    meta = tf.frame._meta.assign(__distboost_valid=np.zeros(0, dtype=bool))
    marked = tf.frame.map_partitions(_holdout_part, fraction, seed, meta=meta)
    valid = marked["__distboost_valid"]
    drop = ["__distboost_valid"]
    return marked[~valid].drop(columns=drop), marked[valid].drop(columns=drop)
