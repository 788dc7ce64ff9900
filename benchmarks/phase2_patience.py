"""Per-parameter stopping's phase-2 patience, shortened (issue 51, item 2): a measurement of
what a shorter wait costs in accuracy, on the NGBoost protocol.

Phase 2 of :class:`distboost.boosting.output_stopping.ParameterStopper` waits
``max(patience, int(SOLO_PATIENCE_SHARE * b))`` rounds (``b``: phase 1's best round; the share
is 1).  This script sets the share to each factor ``f`` given (``f = 1``: today's rule) and fits
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
def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--factors", default="1,0.5,0.25")
    ap.add_argument("--datasets",
                    default="concrete,energy,wine-quality-red,yacht,kin8nm,power-plant")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    for name in args.datasets.split(","):
        for split in range(5 if name in LARGE else 20):
            X, y, train, test = load_uci(DATA / name, split=split)
            X_tr, X_val, y_tr, y_val = train_test_split(X[train], y[train], test_size=0.2,
                                                        random_state=split)
            for f in (float(v) for v in args.factors.split(",")):
                output_stopping.SOLO_PATIENCE_SHARE = f
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
