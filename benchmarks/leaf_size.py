"""How a point model's leaf size moves the RMSE on IBUG's folds (issue 31, the leaf-size rule).

Usage: ``python benchmarks/leaf_size.py [dataset ...]`` (default: energy yacht concrete).

LightGBM's L2 regressor (learning rate 0.05) for each ``num_leaves`` in (7, 15, 31) and
``min_child_samples`` in (2, 5, 10, 20), its rounds chosen by 5-fold cross-validation on each
training fold of IBUG's 10 folds (``benchmarks/_ibug.py``; patience 50) and refitted on the
whole fold; prints the mean test RMSE over the folds.  The motivation of
``distboost/estimators/leaf_size.py``: on the designed experiments (energy, yacht) leaves of
a few rows follow the target far better than LightGBM's 20; on concrete the size hardly
matters.
"""

from __future__ import annotations

import sys
from pathlib import Path

import lightgbm as lgb
import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _ibug  # noqa: E402
from uci import load_uci  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "uci"


def fold_rmse(X, y, leaves: int, min_rows: int) -> float:
    """Mean test RMSE over IBUG's 10 folds of one setting."""
    params = {"objective": "regression", "learning_rate": 0.05, "num_leaves": leaves,
              "min_child_samples": min_rows, "min_data_in_bin": 1, "verbosity": -1,
              "num_threads": 1, "seed": 0}
    errors = []
    for _, train, test, _, _ in _ibug.ibug_folds(len(y), 10):
        data = lgb.Dataset(X[train], y[train], params={"min_data_in_bin": 1})
        cv = lgb.cv(params, data, num_boost_round=5000, nfold=5, stratified=False, seed=0,
                    callbacks=[lgb.early_stopping(50, verbose=False)])
        rounds = len(next(iter(cv.values())))
        booster = lgb.train(params, data, rounds)
        errors.append(np.sqrt(np.mean((booster.predict(X[test]) - y[test]) ** 2)))
    return float(np.mean(errors))


def main(names) -> None:
    print("| dataset | num_leaves | min_child_samples=2 | 5 | 10 | 20 |")
    print("|---|---|---|---|---|---|")
    for name in names:
        X, y = load_uci(str(DATA / name))
        for leaves in (7, 15, 31):
            cells = [f"{fold_rmse(X, y, leaves, m):.3f}" for m in (2, 5, 10, 20)]
            print(f"| {name} | {leaves} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["energy", "yacht", "concrete"])
