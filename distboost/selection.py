"""Choosing a family: cross-validated scores of the full conditional model of each family."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from . import families as _families
from . import metrics as _metrics

__all__ = ["compare_families"]

_CENSORED_METRICS = {"nll", "crps", "c_index"}


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else np.asarray(X)[idx]


def compare_families(X, y, families=None, cv=5, metrics=("nll", "crps", "coverage_90"),
                     random_state=0, **estimator_params) -> pd.DataFrame:
    """Cross-validate a boosted model of each family on the same folds.

    Parameters
    ----------
    X : array_like or DataFrame of shape (n, p)
    y : array_like of shape (n,), or (n, 2) censored bounds
    families : sequence of str, optional
        Default: every registered family (their ``censored_`` twins for censored ``y``).
    cv : int
        Number of folds (shuffled, seeded by ``random_state``).
    metrics : sequence of str
        Among ``nll``, ``crps``, ``coverage_90`` (any ``coverage_<p>``), ``interval_score_90``,
        and for censored ``y``: ``nll`` (censored), ``crps`` (survival CRPS), ``c_index``.
    random_state : int
    **estimator_params
        Passed to every ``DistributionalRegressor``.

    Returns
    -------
    DataFrame
        One row per family: ``<metric>_mean`` and ``<metric>_std`` over folds, ``fit_seconds``,
        and ``skipped`` (the reason a family was not fitted, e.g. its support excludes ``y``),
        sorted by ``nll_mean``.
    """
    from .estimators import DistributionalRegressor

    y = np.asarray(y, dtype=np.float64)
    censored = y.ndim == 2 and y.shape[1] == 2
    if families is None:
        if censored:
            from .families.censored import CENSORABLE

            families = [f"censored_{f}" for f in CENSORABLE]
        else:
            families = _families.available()
    metrics = tuple(metrics)
    if censored and not set(metrics) <= _CENSORED_METRICS:
        metrics = tuple(m for m in metrics if m in _CENSORED_METRICS) or ("nll",)
    folds = list(KFold(cv, shuffle=True, random_state=random_state).split(np.arange(len(y))))
    rows = []
    for name in families:
        family = _families.get(name)
        row = {"family": name, "skipped": ""}
        try:
            family.validate_y(y)
        except ValueError as err:
            row["skipped"] = str(err)
            rows.append(row)
            continue
        scores = {m: [] for m in metrics}
        seconds = []
        try:
            for k, (tr, te) in enumerate(folds):
                model = DistributionalRegressor(family=name, random_state=random_state + k,
                                                **estimator_params)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", UserWarning)
                    model.fit(_take(X, tr), y[tr])
                seconds.append(time.perf_counter() - t0)
                dist = model.predict_dist(_take(X, te))
                for m in metrics:
                    scores[m].append(_score(m, dist, y[te], censored))
        except ValueError as err:  # a fold whose target the family cannot fit
            row["skipped"] = str(err)
            rows.append(row)
            continue
        for m, values in scores.items():
            row[f"{m}_mean"] = float(np.mean(values))
            row[f"{m}_std"] = float(np.std(values))
        row["fit_seconds"] = float(np.mean(seconds))
        rows.append(row)
    table = pd.DataFrame(rows)
    first = f"{metrics[0]}_mean"
    if first in table:
        table = table.sort_values(first, na_position="last", kind="stable")
    return table.reset_index(drop=True)


def _score(metric: str, dist, y, censored: bool) -> float:
    if censored:
        if metric == "nll":
            return float(np.mean(_metrics.censored_nll(dist, y)))
        if metric == "crps":
            return float(np.mean(_metrics.survival_crps(dist, y)))
        return _metrics.concordance_index(dist, y)
    if metric == "nll":
        return _metrics.mean_nll(dist, y)
    if metric == "crps":
        return _metrics.mean_crps(dist, y)
    if metric.startswith("coverage_"):
        return _metrics.coverage(dist, y, int(metric.split("_")[1]) / 100)
    if metric.startswith("interval_score_"):
        return _metrics.mean_interval_score(dist, y, int(metric.split("_")[-1]) / 100)
    raise ValueError(f"Unknown metric {metric!r} for compare_families.")
