"""Which step rule should be the default?  Held-out NLL of each rule on the UCI splits.

For each dataset and split: hold out 20% of the training rows for early stopping, fit
``DistributionalRegressor(step=rule)`` with otherwise default settings, and score the test
rows.  Prints a table of mean test NLL (and mean rounds and fit seconds) per rule.

Run: ``.venv/bin/python benchmarks/step_rules.py [--data ../shared/data/uci] [--splits 5]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

import distboost as db
from distboost.datasets import load_uci

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "uci"))
    parser.add_argument("--datasets", default="concrete,energy,yacht,wine-quality-red,kin8nm,"
                                              "power-plant")
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--steps", default="fisher,newton,natural,gradient")
    parser.add_argument("--learning-rate", type=float, default=None)
    args = parser.parse_args(argv)
    rows = []
    for name in args.datasets.split(","):
        for split in range(args.splits):
            X, y, train, test = load_uci(Path(args.data) / name, split=split)
            X_tr, X_val, y_tr, y_val = train_test_split(X[train], y[train], test_size=0.2,
                                                        random_state=split)
            for step in args.steps.split(","):
                kw = {} if args.learning_rate is None else {"learning_rate": args.learning_rate}
                if step == "gradient":
                    kw["learning_rate"] = kw.get("learning_rate", 0.05) / 20
                model = db.DistributionalRegressor(step=step, random_state=split, **kw)
                t0 = time.perf_counter()
                model.fit(X_tr, y_tr, eval_set=(X_val, y_val))
                seconds = time.perf_counter() - t0
                rows.append({"dataset": name, "split": split, "step": step,
                             "nll": -model.score(X[test], y[test]),
                             "rounds": model.best_iteration_, "seconds": seconds})
        done = pd.DataFrame(rows)
        print(done[done.dataset == name].groupby("step")[["nll", "rounds", "seconds"]].mean()
              .rename_axis(name).to_string(float_format=lambda v: f"{v:.3f}"), flush=True)
    table = pd.DataFrame(rows).pivot_table(index="dataset", columns="step", values="nll")
    print("\nmean test NLL by dataset and step rule:")
    print(table.to_string(float_format=lambda v: f"{v:.3f}"))
    return table


if __name__ == "__main__":
    main()
