"""One tree for all parameters? XGBoost's multi-output trees against one tree per parameter.

XGBoost can grow one tree whose leaves hold a vector, one value per output
(``multi_strategy="multi_output_tree"``, Zhang & Jung's GBDT-MO idea; XGBoost >= 2.0, ``hist``
only), instead of one tree per output a round (``"one_output_per_tree"``, what the
``xgboost`` backend grows).  With ``K`` parameters a round then searches one tree instead
of ``K``; each split is chosen for all parameters at once.  This script measures whether
that pays for distributional regression (issue 30, item 2): the same
``DistributionalRegressor(backend="xgboost")`` with defaults (its own validation rows, early
stopping, per-parameter stopping), once with each strategy (the multi-output arm patches the
backend's XGBoost parameters: it is not an option of the package unless it pays), on

* the UCI sets in ``../shared/data/uci`` (the NGBoost splits ``0 .. splits - 1``), Normal;
* a synthetic heteroscedastic set (``--n`` x 20), Normal and Student-t (``studentt``, 3 parameters).

Printed per set: the mean test NLL of each arm and its difference (multi - single), the
fit seconds of each arm (interleaved in one process, the least disturbed of ``--repeat``
runs) and their ratio, and the rounds kept.  The verdict rule (issue 30): adopt as an option
if it is faster at equal held-out NLL (within 0.01 nats).

Run: ``python benchmarks/multi_output.py [--data ../shared/data/uci] [--splits 3] [--n 20000]
[--repeat 2]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import distboost as db
from distboost.boosting import xgboost_backend
from distboost.datasets import load_uci

warnings.filterwarnings("ignore")

_PLAIN = xgboost_backend.xgb_params


def _multi_output_params(params, k, n=None):
    return {**_PLAIN(params, k, n), "multi_strategy": "multi_output_tree"}


def fit_once(strategy: str, family: str, X, y, X_te, y_te, seed: int) -> dict:
    """Fit with one strategy; test NLL, seconds and kept rounds."""
    xgboost_backend.xgb_params = _multi_output_params if strategy == "multi" else _PLAIN
    try:
        model = db.DistributionalRegressor(family=family, backend="xgboost", random_state=seed)
        t0 = time.perf_counter()
        model.fit(X, y)
        seconds = time.perf_counter() - t0
    finally:
        xgboost_backend.xgb_params = _PLAIN
    nll = float(np.mean(model.predict_dist(X_te).nll(y_te)))
    return {"nll": nll, "seconds": seconds, "rounds": int(model.best_iteration_)}


def compare(name: str, family: str, X, y, X_te, y_te, seed: int, repeat: int) -> dict:
    best: dict[str, dict] = {}
    for _ in range(repeat):
        for strategy in ("single", "multi"):
            out = fit_once(strategy, family, X, y, X_te, y_te, seed)
            if strategy not in best or out["seconds"] < best[strategy]["seconds"]:
                best[strategy] = out
    s, m = best["single"], best["multi"]
    return {"set": name, "family": family, "nll_single": s["nll"], "nll_multi": m["nll"],
            "nll_diff": m["nll"] - s["nll"], "s_single": s["seconds"], "s_multi": m["seconds"],
            "time_ratio": m["seconds"] / s["seconds"], "rounds_single": s["rounds"],
            "rounds_multi": m["rounds"]}


def synthetic(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, 20))
    y = X[:, 0] + np.sin(2 * X[:, 1]) + rng.standard_t(4, size=2 * n) * np.exp(0.5 * X[:, 2])
    return X[:n], y[:n], X[n:], y[n:]


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[2] / "shared"
                                              / "data" / "uci"))
    parser.add_argument("--datasets", default="concrete,energy,kin8nm,power-plant,"
                                              "wine-quality-red,yacht")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args(argv)
    rows = []
    for name in [d for d in args.datasets.split(",") if d]:
        per_split = []
        for split in range(args.splits):
            X, y, tr, te = load_uci(Path(args.data) / name, split)
            per_split.append(compare(name, "normal", X[tr], y[tr], X[te], y[te], split,
                                     args.repeat))
        df = pd.DataFrame(per_split)
        row = df.mean(numeric_only=True).to_dict()
        row.update(set=f"{name} ({args.splits} splits)", family="normal",
                   time_ratio=float(df["s_multi"].sum() / df["s_single"].sum()))
        rows.append(row)
        print(pd.DataFrame([row]).round(4).to_string(index=False), flush=True)
    if args.n:
        X, y, X_te, y_te = synthetic(args.n, 0)
        for family in ("normal", "studentt"):
            row = compare(f"synthetic {args.n} x 20", family, X, y, X_te, y_te, 0, args.repeat)
            rows.append(row)
            print(pd.DataFrame([row]).round(4).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)[["set", "family", "nll_single", "nll_multi", "nll_diff",
                                "s_single", "s_multi", "time_ratio", "rounds_single",
                                "rounds_multi"]]
    print()
    print("| " + " | ".join(table.columns) + " |")
    print("|" + "---|" * len(table.columns))
    for _, r in table.iterrows():
        print("| " + " | ".join(f"{v:.4g}" if isinstance(v, float) else str(v)
                                for v in r) + " |")
    faster = (table["time_ratio"] < 1.0) & (table["nll_diff"] <= 0.01)
    print(f"\nfaster at equal held-out NLL (+-0.01) on {int(faster.sum())} of {len(table)}")
    return table


if __name__ == "__main__":
    main()
