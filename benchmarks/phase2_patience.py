"""Per-parameter stopping's phase-2 patience, shortened (issue 51, item 2): a measurement of
what a shorter wait costs in accuracy, on the NGBoost protocol.

Phase 2 of :class:`distboost.boosting.output_stopping.ParameterStopper` waits
``max(patience, b)`` rounds (``b``: phase 1's best round).  This script replaces the wait by
``max(patience, int(f * b))`` for each factor ``f`` given (``f = 1``: today's rule) and fits
the default regressor on the UCI splits of ``benchmarks/uci.py`` (``eval_set``: 20 % of the
training rows; 20 splits, 5 for kin8nm and power-plant), one thread; one JSON line per set,
split and factor: test NLL, CRPS, fit CPU seconds and rounds.  Results and the table:
docs/benchmarks.md, "What a default fit costs beyond its trees".

Run: ``python benchmarks/phase2_patience.py [--factors 1,0.5,0.25] [--datasets a,b]
[> results.jsonl]``
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import train_test_split

import distboost as db
from distboost.boosting import output_stopping
from distboost.datasets import load_uci

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci"
LARGE = ("kin8nm", "power-plant")
FACTOR = {"f": 1.0}


def update(self, raw_val, value, round_):
    """``ParameterStopper.update`` with phase 2's wait ``max(patience, int(f * b))``."""
    tol = 1e-12 * abs(self.best) if np.isfinite(self.best) else 0.0
    if value < self.best - tol:
        self.best, self.best_round, self.since = value, round_, 0
        if self.joint_rounds == 0:
            self.snapshot = np.array(raw_val, dtype=np.float64, copy=True)
            self.best_rounds[:] = round_
        else:
            self.best_rounds[self.cont] = round_
        return False
    self.since += 1
    if self.since < (self.solo_patience if self.joint_rounds else self.patience):
        return False
    if self.joint_rounds > 0 or self.snapshot is None or self.cont.all():
        return True
    self.joint_rounds, self.since = round_, 0
    self.solo_patience = max(self.patience, int(FACTOR["f"] * self.best_round))
    self.frozen[~self.cont] = True
    return False


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factors", default="1,0.5,0.25")
    ap.add_argument("--datasets",
                    default="concrete,energy,wine-quality-red,yacht,kin8nm,power-plant")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    output_stopping.ParameterStopper.update = update
    for name in args.datasets.split(","):
        for split in range(5 if name in LARGE else 20):
            X, y, train, test = load_uci(DATA / name, split=split)
            X_tr, X_val, y_tr, y_val = train_test_split(X[train], y[train], test_size=0.2,
                                                        random_state=split)
            for f in (float(v) for v in args.factors.split(",")):
                FACTOR["f"] = f
                cpu = time.process_time()
                model = db.DistributionalRegressor(random_state=split, n_jobs=1).fit(
                    X_tr, y_tr, eval_set=(X_val, y_val))
                cpu = time.process_time() - cpu
                d = model.predict_dist(X[test])
                print(json.dumps({"set": name, "split": split, "f": f,
                                  "nll": float(np.mean(d.nll(y[test]))),
                                  "crps": float(np.mean(d.crps(y[test]))), "cpu": cpu,
                                  "rounds": int(model.n_iter_)}), flush=True)


if __name__ == "__main__":
    main()
