"""Varying-coefficient boosting against scikit-learn's GradientBoostingRegressor (test RMSE).

The write-up this project grew from fits a varying-coefficient model with boosted
coefficients and finds its RMSE on par with ``GradientBoostingRegressor``.  This script
measures that claim for :class:`~distboost.VaryingCoefficientRegressor` on the UCI
regression splits of Hernandez-Lobato & Adams (2015) (``../shared/data/uci``), both models
with the same rounds, depth and learning rate and no early stopping:

* ``GradientBoostingRegressor(n_estimators=R, max_depth=D, learning_rate=LR)`` (least
  squares; its other options at scikit-learn's defaults, e.g. ``min_samples_leaf=1``);
* ``VaryingCoefficientRegressor(n_estimators=R, max_depth=D, num_leaves=2**D,
  learning_rate=LR, early_stopping=False)`` (Normal family, every feature linear, our
  defaults otherwise, e.g. ``min_child_samples=20``); each round grows one depth-``D`` tree
  per coefficient and one for the scale.

It prints, per dataset, the mean test RMSE of each over the splits and their ratio (ours /
scikit-learn's; the target is <= 1.05), our mean test NLL, and the write-up's sine toy
(RMSE against the noise level 0.25).

Usage::

    python benchmarks/varying_coefficients.py                       # all six, 5 splits
    python benchmarks/varying_coefficients.py --datasets concrete --splits 20 --step natural
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.ensemble import GradientBoostingRegressor

from distboost.datasets import load_uci
from distboost.estimators.varying import VaryingCoefficientRegressor

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "uci"
DATASETS = ("concrete", "energy", "kin8nm", "power-plant", "wine-quality-red", "yacht")
SINE_NOISE = 0.25


def make_sine(n: int, seed: int):
    """The write-up's toy data: ``x ~ U(-3, 3)``, ``y = sin x + N(0, 0.25^2)``."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3.0, 3.0, size=(n, 1))
    return X, np.sin(X[:, 0]) + rng.normal(0.0, SINE_NOISE, size=n)


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((np.asarray(a) - np.asarray(b)) ** 2)))


def run_dataset(folder: Path, splits: int, rounds: int, depth: int, lr: float, step: str,
                min_child_samples: int, linear_features=None):
    """Mean test RMSE of both models (and our NLL) over the first ``splits`` splits."""
    ours, theirs, nll, t_ours, t_theirs = [], [], [], 0.0, 0.0
    for split in range(splits):
        X, y, train, test = load_uci(folder, split=split)
        t0 = time.perf_counter()
        vc = VaryingCoefficientRegressor(
            n_estimators=rounds, max_depth=depth, num_leaves=2**depth, learning_rate=lr,
            step=step, min_child_samples=min_child_samples, early_stopping=False,
            linear_features=linear_features, random_state=split,
        ).fit(X[train], y[train])
        t_ours += time.perf_counter() - t0
        ours.append(rmse(vc.predict(X[test]), y[test]))
        nll.append(-vc.score(X[test], y[test]))
        t0 = time.perf_counter()
        gb = GradientBoostingRegressor(
            n_estimators=rounds, max_depth=depth, learning_rate=lr, random_state=split
        ).fit(X[train], y[train])
        t_theirs += time.perf_counter() - t0
        theirs.append(rmse(gb.predict(X[test]), y[test]))
    return np.mean(ours), np.mean(theirs), np.mean(nll), t_ours, t_theirs


def run_sine(rounds: int, depth: int, lr: float, step: str) -> dict:
    """The sine toy: 1,000 training rows, 10,000 test rows, early stopping on 10%."""
    X, y = make_sine(1000, 123)
    X_te, y_te = make_sine(10_000, 124)
    vc = VaryingCoefficientRegressor(
        n_estimators=rounds, max_depth=depth, num_leaves=2**depth, learning_rate=lr,
        step=step, early_stopping=True, random_state=0,
    ).fit(X, y)
    return {"rmse": rmse(vc.predict(X_te), y_te), "rounds": vc.best_iteration_}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="folder of the UCI datasets")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--learning-rate", type=float, default=0.1)
    parser.add_argument("--step", default="natural")
    parser.add_argument("--min-child-samples", type=int, default=20,
                        help="our minimum rows per leaf (sklearn's min_samples_leaf stays 1)")
    parser.add_argument("--linear-features", default=None,
                        help="comma-separated column positions entering linearly (default all)")
    args = parser.parse_args(argv)

    results = {}
    sine = run_sine(args.rounds, args.depth, args.learning_rate, args.step)
    results["sine"] = sine
    print(f"sine toy (noise sd {SINE_NOISE}): test RMSE {sine['rmse']:.4f} = "
          f"{sine['rmse'] / SINE_NOISE:.3f} x noise ({sine['rounds']} rounds kept)")
    if not args.data.is_dir():
        print(f"{args.data} not found: UCI comparison skipped", file=sys.stderr)
        return results
    linear = None
    if args.linear_features is not None:
        linear = [int(v) for v in args.linear_features.split(",") if v.strip()]
        print(f"linear features: positions {linear}")
    print(f"\n{args.rounds} rounds, depth {args.depth} (ours: num_leaves={2**args.depth}), "
          f"learning rate {args.learning_rate}, no early stopping, step={args.step!r}, "
          f"min_child_samples={args.min_child_samples}, {args.splits} splits")
    print(f"{'dataset':<18}{'RMSE ours':>11}{'RMSE sklearn':>14}{'ratio':>8}{'NLL ours':>10}"
          f"{'s ours':>9}{'s sklearn':>11}")
    for name in args.datasets.split(","):
        ours, theirs, nll, t1, t2 = run_dataset(
            args.data / name, args.splits, args.rounds, args.depth, args.learning_rate,
            args.step, args.min_child_samples, linear,
        )
        results[name] = {"rmse": ours, "rmse_sklearn": theirs, "ratio": ours / theirs,
                         "nll": nll}
        print(f"{name:<18}{ours:>11.4f}{theirs:>14.4f}{ours / theirs:>8.3f}{nll:>10.3f}"
              f"{t1:>9.1f}{t2:>11.1f}", flush=True)
    return results


if __name__ == "__main__":
    main()
