"""Quantiles of a recursive forecast's marginals (``EqualMixture`` of sample paths' one-step
laws): safeguarded Newton steps against bisection alone, in one process.

A recursive ``predict_dist`` returns, per series and step, the equally weighted mixture of
its paths' one-step laws (``Affine`` of the model's family: ``shift + factor * Z``).  Its
quantiles invert the mixture's cdf.  Normal components always took Newton steps; since issue
47 every component with a density and no point mass does.  This script times
``Predictive.quantile`` at the 11 levels of the competition benchmark on ``--rows`` rows of
``--components`` components per family, against the same call with the Newton steps switched
off (the bisection to 1e-10 of the bracket alone), and prints the ratio and the largest
``|F(q) - level|`` of each.

Run: ``python benchmarks/mixture_quantiles.py [--rows 2000] [--components 200]``
"""

from __future__ import annotations

import argparse
import time
from unittest import mock

import numpy as np

import distboost as db
from distboost.families import Affine, EqualMixture

LEVELS = [0.005, 0.025, 0.05, 0.165, 0.25, 0.5, 0.75, 0.835, 0.95, 0.975, 0.995]


def mixture(name: str, m: int, n: int, rng) -> db.Predictive:
    params = {}
    for i in range(m):
        theta = {
            "studentt": lambda: {"df": rng.uniform(2.0, 30.0, n), "loc": rng.normal(0, 1, n),
                                 "scale": rng.uniform(0.3, 2.0, n)},
            "gamma": lambda: {"concentration": rng.uniform(1.0, 5.0, n),
                              "rate": rng.uniform(0.5, 2.0, n)},
            "laplace": lambda: {"loc": rng.normal(0, 1, n), "scale": rng.uniform(0.3, 2.0, n)},
            "lognormal": lambda: {"loc": rng.normal(0, 0.5, n),
                                  "scale": rng.uniform(0.2, 0.8, n)},
        }[name]()
        positive = name in ("gamma", "lognormal")  # Affine keeps their support at shift 0
        params.update({f"{k}_{i}": v for k, v in theta.items()})
        params.update({f"shift_{i}": np.full(n, 0.0 if positive else 100.0),
                       f"factor_{i}": np.full(n, 3.0)})
    return db.Predictive(EqualMixture(Affine(name), m), params)


def timed(d: db.Predictive) -> tuple[float, float]:
    t0 = time.perf_counter()
    q = d.quantile(LEVELS)
    seconds = time.perf_counter() - t0
    error = max(float(np.max(np.abs(d.cdf(q[:, j]) - a))) for j, a in enumerate(LEVELS))
    return seconds, error


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--components", type=int, default=200)
    args = ap.parse_args(argv)
    print("| component | Newton s | bisection s | ratio | Newton max error | bisection max "
          "error |\n|---|---|---|---|---|---|")
    for name in ("studentt", "gamma", "laplace", "lognormal"):
        d = mixture(name, args.components, args.rows, np.random.default_rng(0))
        newton = timed(d)
        with mock.patch.object(EqualMixture, "_newton",
                               staticmethod(lambda cdf_pdf, q, x, lo, hi, tol: (lo, hi))):
            bisection = timed(d)
        print(f"| {name} | {newton[0]:.2f} | {bisection[0]:.2f} | "
              f"{bisection[0] / newton[0]:.1f} x | {newton[1]:.1e} | {bisection[1]:.1e} |",
              flush=True)


if __name__ == "__main__":
    main()
