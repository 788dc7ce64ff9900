"""Heavy-tailed features and the linear start (issue 52): default fits, before and after the
percentile clip.

``--clip Q`` sets ``distboost.estimators.linear_start.CLIP_QUANTILE`` (0.01 the default; 0 is
the clip to the training range of issue 25, the code before issue 52).  Data sets (defaults,
``random_state=0`` unless said):

- ``engel`` (statsmodels, 235 households, income -> food expenditure): the worst
  ``max(median / y, y / median)`` over the training rows of a fit on all rows, and the mean
  test CRPS over 4 random 25 % test splits (``train_test_split(random_state=s)``);
- ``synthetic``: log-normal incomes (sd 0.8 on the log scale), a gamma target (shape 5) with
  mean ``0.5 income^0.9 exp(0.2 x2)``, 300 training rows, 4 seeds: the worst ratio of the 3
  rows of largest income, and the test CRPS on 5,000 new rows;
- ``diabetes`` (scikit-learn, ``bmi`` replaced by ``exp(1.5 z)``), ``randhie`` (doctor
  visits), ``fair`` (affairs; statsmodels): 330 / 600 / 600 random training rows, up to 4,000
  test rows, 4 seeds, mean test CRPS and NLL;
- ``uci``: concrete, energy and yacht on their 20 NGBoost splits, the default Normal fitted on
  the 90 % training rows (no ``eval_set``: cross-validation and the linear start), mean test
  NLL and CRPS (prints one line per split, then the means).

Run: ``python benchmarks/heavy_tails.py [--clip 0.01] [--sets engel synthetic diabetes randhie
fair uci]`` (the uci set takes some 10 minutes on one core).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

import distboost as db
import distboost.estimators.linear_start as linear_start

ROOT = Path(__file__).resolve().parents[1]
FAMILIES = {"engel": ["gamma", "lognormal", "normal"], "synthetic": ["gamma", "lognormal",
                                                                     "normal"],
            "diabetes": ["gamma", "lognormal", "normal"],
            "randhie": ["negative_binomial", "poisson"],
            "fair": ["tweedie", "zero_adjusted_gamma"]}


def _ratio(median, y):
    return np.maximum(median / y, y / median)


def engel() -> None:
    import statsmodels.api as sm
    from sklearn.model_selection import train_test_split

    data = sm.datasets.engel.load_pandas().data
    X, y = data[["income"]], data["foodexp"].to_numpy()
    for family in FAMILIES["engel"]:
        model = db.DistributionalRegressor(family=family, random_state=0).fit(X, y)
        worst = _ratio(model.predict_dist(X).median, y).max()
        crps = []
        for s in range(4):
            Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.25, random_state=s)
            fit = db.DistributionalRegressor(family=family, random_state=0).fit(Xtr, ytr)
            crps.append(fit.predict_dist(Xte).crps(yte).mean())
        print(f"engel      {family:20s} worst training ratio {worst:6.2f}  "
              f"test CRPS {np.mean(crps):8.3f}", flush=True)


def _income(n: int, seed: int):
    rng = np.random.default_rng(seed)
    income = np.exp(rng.normal(np.log(1000.0), 0.8, n))
    other = rng.normal(size=n)
    y = rng.gamma(5.0, 0.5 * income**0.9 * np.exp(0.2 * other) / 5.0)
    return np.column_stack([income, other]), y


def synthetic() -> None:
    for family in FAMILIES["synthetic"]:
        worst, crps = [], []
        for seed in range(4):
            X, y = _income(300, seed)
            Xt, yt = _income(5000, 100 + seed)
            model = db.DistributionalRegressor(family=family, random_state=0).fit(X, y)
            top = np.argsort(X[:, 0])[-3:]
            worst.append(_ratio(model.predict_dist(X[top]).median, y[top]).max())
            crps.append(model.predict_dist(Xt).crps(yt).mean())
        print(f"synthetic  {family:20s} worst tail ratio {min(worst):6.2f}-{max(worst):6.2f}  "
              f"test CRPS {np.mean(crps):8.3f}", flush=True)


def _frame(name: str):
    import statsmodels.api as sm
    from sklearn.datasets import load_diabetes

    if name == "diabetes":
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        z = (X["bmi"] - X["bmi"].mean()) / X["bmi"].std()
        return X.assign(bmi=np.exp(1.5 * z)), y.to_numpy(), 330
    target = {"randhie": "mdvis", "fair": "affairs"}[name]
    data = getattr(sm.datasets, name).load_pandas().data
    return data.drop(columns=target), data[target].to_numpy(float), 600


def panel(name: str) -> None:
    X, y, n_train = _frame(name)
    for family in FAMILIES[name]:
        crps, nll = [], []
        for s in range(4):
            order = np.random.default_rng(s).permutation(len(y))
            train, test = order[:n_train], order[n_train:n_train + 4000]
            model = db.DistributionalRegressor(family=family, random_state=0)
            dist = model.fit(X.iloc[train], y[train]).predict_dist(X.iloc[test])
            crps.append(dist.crps(y[test]).mean())
            nll.append(dist.nll(y[test]).mean())
        print(f"{name:10s} {family:20s} test CRPS {np.mean(crps):8.4f}  NLL {np.mean(nll):7.4f}",
              flush=True)


def uci() -> None:
    folder = ROOT.parent / "shared" / "data" / "uci"
    for name in ("concrete", "energy", "yacht"):
        d = folder / name
        data = np.loadtxt(d / "data.txt")
        X = data[:, np.loadtxt(d / "index_features.txt", dtype=int)]
        y = data[:, int(np.loadtxt(d / "index_target.txt"))]
        nll, crps = [], []
        for split in range(20):
            train = np.loadtxt(d / f"index_train_{split}.txt", dtype=int)
            test = np.loadtxt(d / f"index_test_{split}.txt", dtype=int)
            model = db.DistributionalRegressor(random_state=split).fit(X[train], y[train])
            dist = model.predict_dist(X[test])
            nll.append(dist.nll(y[test]).mean())
            crps.append(dist.crps(y[test]).mean())
            print(f"uci        {name:10s} split {split:2d} NLL {nll[-1]:.6f} CRPS {crps[-1]:.6f}",
                  flush=True)
        print(f"uci        {name:10s} mean NLL {np.mean(nll):.4f}  CRPS {np.mean(crps):.4f}",
              flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clip", type=float, default=linear_start.CLIP_QUANTILE)
    ap.add_argument("--sets", nargs="+", default=["engel", "synthetic", "diabetes", "randhie",
                                                  "fair"],
                    choices=["engel", "synthetic", "diabetes", "randhie", "fair", "uci"])
    args = ap.parse_args(argv)
    linear_start.CLIP_QUANTILE = args.clip
    warnings.simplefilter("ignore")
    print(f"linear start clipped at the {args.clip:g} / {1 - args.clip:g} quantiles",
          file=sys.stderr)
    for name in args.sets:
        {"engel": engel, "synthetic": synthetic, "uci": uci}.get(
            name, lambda name=name: panel(name))()


if __name__ == "__main__":
    main()
