"""Peers of ``benchmarks/any_shape.py``: quantile regression forests and Treeffuser.

Runs without distboost (numpy, scikit-learn and the peer only), so that each peer can live in
a virtual environment of its own: Treeffuser pins scikit-learn 1.5, numpy 1.26 and LightGBM
4.3, which distboost's environment does not have.  Same UCI splits as ``benchmarks/uci.py``
(Hernandez-Lobato & Adams 2015); each peer is fitted on the whole training part of a split
(neither needs distboost's 20 % early-stopping rows: a forest has no rounds, and Treeffuser
holds out its own ``eval_percent=0.1`` for LightGBM's early stopping), then scored on the test
rows.  Writes one CSV row per (dataset, split, method): CRPS, 90 % coverage, fit seconds
(NLL is NaN: neither gives a density).

* ``qrf``: ``quantile_forest.RandomForestQuantileRegressor`` (Meinshausen 2006), 500 trees,
  ``min_samples_leaf=5``; CRPS as twice the mean pinball loss over the 199 levels
  ``(i - 1/2) / 199`` (the quantile decomposition of the CRPS, Laio & Tamea 2007, eq. 6),
  the interval from the levels 0.05 and 0.95.
* ``treeffuser``: ``treeffuser.Treeffuser`` (Beltran-Velez et al. 2024) with its defaults
  and ``seed=split``; CRPS of 100 samples per test row (``E|X - y| - E|X - X'| / 2`` over the
  samples), the interval from their 5 % and 95 % quantiles.

Run (see ``docs/benchmarks.md``): ``<venv>/bin/python benchmarks/any_shape_peers.py --method
qrf --csv benchmarks/results/any_shape_qrf.csv [--datasets a,b] [--splits 5]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("concrete", "energy", "kin8nm", "power-plant", "wine-quality-red", "yacht")


def load_split(folder: Path, split: int):
    """``X, y, train, test`` of one split (the format of ``distboost.datasets.load_uci``)."""
    data = np.loadtxt(folder / "data.txt")
    features = np.loadtxt(folder / "index_features.txt", dtype=int).reshape(-1)
    target = int(np.loadtxt(folder / "index_target.txt", dtype=int))
    train = np.loadtxt(folder / f"index_train_{split}.txt", dtype=int)
    test = np.loadtxt(folder / f"index_test_{split}.txt", dtype=int)
    return data[:, features], data[:, target], train, test


def crps_from_quantiles(q: np.ndarray, levels: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``2 mean_i pinball_{tau_i}(y, q_i)`` per row; ``q`` of shape (n, m)."""
    diff = y[:, None] - q
    return 2.0 * np.mean(np.maximum(levels * diff, (levels - 1.0) * diff), axis=1)


def crps_from_samples(s: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``mean|X - y| - mean|X - X'| / 2`` over the samples ``s`` of shape (n, m), with the
    pair term from the sorted samples (``O(m log m)`` per row)."""
    s = np.sort(s, axis=1)
    m = s.shape[1]
    first = np.mean(np.abs(s - y[:, None]), axis=1)
    weights = 2.0 * np.arange(1, m + 1) - m - 1.0
    pairs = 2.0 * np.sum(weights * s, axis=1) / (m * m)
    return first - 0.5 * pairs


def run_qrf(X_tr, y_tr, X_te, y_te, seed):
    from quantile_forest import RandomForestQuantileRegressor

    t0 = time.perf_counter()
    model = RandomForestQuantileRegressor(n_estimators=500, min_samples_leaf=5,
                                          random_state=seed, n_jobs=1).fit(X_tr, y_tr)
    seconds = time.perf_counter() - t0
    levels = (np.arange(199) + 0.5) / 199
    q = model.predict(X_te, quantiles=list(levels))
    lo, hi = model.predict(X_te, quantiles=[0.05, 0.95]).T
    return {"crps": float(np.mean(crps_from_quantiles(q, levels, y_te))),
            "coverage_90": float(np.mean((y_te >= lo) & (y_te <= hi))), "seconds": seconds}


def run_treeffuser(X_tr, y_tr, X_te, y_te, seed):
    from treeffuser import Treeffuser

    t0 = time.perf_counter()
    model = Treeffuser(seed=seed, n_jobs=1).fit(X_tr, y_tr)
    seconds = time.perf_counter() - t0
    s = np.asarray(model.sample(X_te, n_samples=100, seed=seed))  # (100, n) or (100, n, 1)
    s = (s[..., 0] if s.ndim == 3 else s).T
    lo, hi = np.quantile(s, [0.05, 0.95], axis=1)
    return {"crps": float(np.mean(crps_from_samples(s, y_te))),
            "coverage_90": float(np.mean((y_te >= lo) & (y_te <= hi))), "seconds": seconds}


METHODS = {"qrf": run_qrf, "treeffuser": run_treeffuser}


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--method", choices=sorted(METHODS), required=True)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "uci"))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--csv", required=True)
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets.split(","):
        for split in range(args.splits):
            X, y, train, test = load_split(Path(args.data) / name, split)
            res = METHODS[args.method](X[train], y[train], X[test], y[test], split)
            rows.append({"dataset": name, "split": split, "method": args.method,
                         "nll": np.nan, **res})
            print(rows[-1], flush=True)
            pd.DataFrame(rows).to_csv(args.csv, index=False)
    return pd.DataFrame(rows)


if __name__ == "__main__":
    main()
