"""Speed of the scoring functions: closed-form CRPS on 1,000,000 rows (target: well under a
second) and numerical CRPS on 100,000 rows (target: under 5 s).

Run: ``.venv/bin/python benchmarks/metrics_speed.py [--rows-closed N] [--rows-numerical N]``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import distboost as db


def _time(fn, repeat: int = 3) -> float:
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rows-closed", type=int, default=1_000_000)
    parser.add_argument("--rows-numerical", type=int, default=100_000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    out = {}
    n = args.rows_closed
    for name, params in [("normal", {"loc": rng.normal(size=n), "scale": rng.uniform(0.5, 2, n)}),
                         ("gamma", {"concentration": rng.uniform(0.5, 5, n),
                                    "rate": rng.uniform(0.5, 2, n)})]:
        dist = db.Predictive.from_params(name, **params)
        y = dist.sample(1, random_state=1)[0]
        t = _time(lambda d=dist, y=y: db.metrics.crps(d, y))
        out[f"closed_{name}"] = t
        print(f"closed-form CRPS, {name:<7} {n:>9,} rows: {t:6.3f} s (target < 1 s)")
    n = args.rows_numerical
    for name, params in [("normal", {"loc": rng.normal(size=n), "scale": rng.uniform(0.5, 2, n)}),
                         ("weibull", {"scale": rng.uniform(0.5, 2, n),
                                      "concentration": rng.uniform(0.8, 3, n)})]:
        dist = db.Predictive.from_params(name, **params)
        y = dist.sample(1, random_state=1)[0]
        t = _time(lambda d=dist, y=y: db.metrics.crps(d, y, method="numerical"), repeat=1)
        out[f"numerical_{name}"] = t
        print(f"numerical CRPS,   {name:<7} {n:>9,} rows: {t:6.3f} s (target < 5 s)")
    return out


if __name__ == "__main__":
    main()
