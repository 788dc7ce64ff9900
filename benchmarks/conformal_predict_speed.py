"""What a ConformalRegressor's predictions cost beside its fold models' own.

For each family, one ``ConformalRegressor(cv=5)`` is fitted on synthetic rows and its
predictions on ``--rows`` new rows are timed for both aggregations (``"pool"``, the default,
and ``"shrunk"``): the mean (``predict``), 90 % intervals, the CRPS, 100 draws per row.
The reference, in the same process: the five fold models' own ``predict_dist`` and the same
quantity of their laws (mean, quantiles, closed-form or numerical CRPS, draws), summed over
the folds. Prints seconds and the ratio to the reference.

Run: ``python benchmarks/conformal_predict_speed.py [--rows 1000] [--families normal gamma
studentt]``
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import distboost as db


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def _data(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    return X, np.abs(X[:, 0] + rng.normal(size=n)) + 0.1


def run(families, rows: int) -> pd.DataFrame:
    X, y = _data(1000, 0)
    Xt, yt = _data(rows, 1)
    out = []
    for family in families:
        model = db.DistributionalRegressor(family=family, n_estimators=20,
                                           early_stopping=False, random_state=0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            cf = db.ConformalRegressor(model, random_state=0).fit(X, y)
        members = [m.predict_dist(Xt) for m in cf.estimators_]
        reference = {
            "mean": lambda members=members: [d.mean for d in members],
            "interval 90 %": lambda members=members: [d.quantile(np.array([0.05, 0.95]))
                                                     for d in members],
            "crps": lambda members=members: [d.crps(yt) for d in members],
            "100 draws": lambda members=members: [d.sample(100, random_state=0)
                                                  for d in members],
        }
        for aggregation in ("pool", "shrunk"):
            cf.set_params(aggregation=aggregation)
            dist = cf.predict_dist(Xt)
            ours = {"mean": lambda cf=cf: cf.predict(Xt),
                    "interval 90 %": lambda cf=cf: cf.predict_interval(Xt, 0.9),
                    "crps": lambda dist=dist: dist.crps(yt),
                    "100 draws": lambda dist=dist: dist.sample(100, random_state=0)}
            for what, fn in ours.items():
                s, ref = _seconds(fn), _seconds(reference[what])
                out.append({"family": family, "aggregation": aggregation, "prediction": what,
                            "seconds": round(s, 3), "fold models' own": round(ref, 3),
                            "ratio": round(s / max(ref, 1e-9), 1)})
                print(out[-1], flush=True)
    return pd.DataFrame(out)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--families", nargs="+", default=["normal", "gamma", "studentt"])
    args = parser.parse_args(argv)
    table = run(args.families, args.rows)
    print(table.to_string(index=False))
    return table


if __name__ == "__main__":
    main()
