"""Survival benchmark: 5-fold cross-validation on the GBSG2 and veterans data.

distboost's censored families (boosted, every parameter) against lifelines' Weibull and
log-normal AFT fitters and XGBoost's ``survival:aft`` (where installed).  Metrics on the
held-out fold: censored NLL (lower is better; comparable between methods because all are
densities of the time in the same unit), Harrell's C-index (higher is better).  Prints a
markdown table and writes it to ``docs/survival_benchmark.md`` with ``--out``.

Run: ``.venv/bin/python benchmarks/survival.py [--data ../shared/data/survival] [--out FILE]``
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, train_test_split

import distboost as db
from distboost.datasets import load_survival

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
FAMILIES = ("censored_weibull", "censored_lognormal", "censored_gamma")
# Small data (137 and 686 rows): small trees, strong early stopping.
DB_PARAMS = dict(learning_rate=0.05, num_leaves=4, min_child_samples=10, n_iter_no_change=30)


def _scores(dist, y):
    return {"nll": float(np.mean(db.metrics.censored_nll(dist, y))),
            "c_index": db.metrics.concordance_index(dist, y)}


def run_distboost(name, X_tr, y_tr, X_te, y_te, seed):
    X_fit, X_val, y_fit, y_val = train_test_split(X_tr, y_tr, test_size=0.2, random_state=seed)
    model = db.DistributionalRegressor(family=name, random_state=seed, **DB_PARAMS)
    model.fit(X_fit, y_fit, eval_set=(X_val, y_val))
    return _scores(model.predict_dist(X_te), y_te)


def run_lifelines(kind, X_tr, y_tr, X_te, y_te, seed):
    from lifelines import LogNormalAFTFitter, WeibullAFTFitter

    cls = {"weibull": WeibullAFTFitter, "lognormal": LogNormalAFTFitter}[kind]
    df = pd.get_dummies(X_tr, drop_first=True, dtype=float)
    cols = df.columns
    df["T"], df["E"] = y_tr[:, 0], (y_tr[:, 0] == y_tr[:, 1]).astype(int)
    fitter = cls(penalizer=0.01).fit(df, duration_col="T", event_col="E")
    Xt = pd.get_dummies(X_te, drop_first=True, dtype=float).reindex(columns=cols, fill_value=0)
    mu = np.log(fitter.predict_median(Xt).to_numpy().ravel())
    if kind == "lognormal":
        sigma = np.exp(fitter.params_.loc["sigma_"].to_numpy()[0])
        dist = db.Predictive.from_params("lognormal", loc=mu, scale=np.full(len(mu), sigma))
    else:
        rho = np.exp(fitter.params_.loc["rho_"].to_numpy()[0])
        scale = np.exp(mu) / np.log(2.0) ** (1.0 / rho)
        dist = db.Predictive.from_params("weibull", scale=scale,
                                         concentration=np.full(len(mu), rho))
    return _scores(dist, y_te)


def run_xgboost_aft(X_tr, y_tr, X_te, y_te, seed):
    import xgboost as xgb

    Xtr = pd.get_dummies(X_tr, drop_first=True, dtype=float)
    Xte = pd.get_dummies(X_te, drop_first=True, dtype=float).reindex(columns=Xtr.columns,
                                                                     fill_value=0)
    sigma = 1.0
    dtrain = xgb.DMatrix(Xtr)
    dtrain.set_float_info("label_lower_bound", y_tr[:, 0])
    dtrain.set_float_info("label_upper_bound", y_tr[:, 1])
    params = {"objective": "survival:aft", "aft_loss_distribution": "normal",
              "aft_loss_distribution_scale": sigma, "eta": 0.05, "max_depth": 3, "seed": seed}
    booster = xgb.train(params, dtrain, num_boost_round=200)
    mu = np.log(booster.predict(xgb.DMatrix(Xte)))
    dist = db.Predictive.from_params("lognormal", loc=mu, scale=np.full(len(mu), sigma))
    return _scores(dist, y_te)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "survival"))
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--out", default=None, help="markdown file to write")
    args = parser.parse_args(argv)
    rows = []
    for file in ("gbsg2.csv", "veterans.csv"):
        X, time_, event = load_survival(Path(args.data) / file)
        y = db.censored.right(time_, event)
        for fold, (tr, te) in enumerate(KFold(args.folds, shuffle=True,
                                              random_state=0).split(X)):
            split = (X.iloc[tr], y[tr], X.iloc[te], y[te], fold)
            methods = {f"distboost {f}": (run_distboost, (f, *split)) for f in FAMILIES}
            try:
                import lifelines  # noqa: F401
            except ImportError:
                pass
            else:
                for kind in ("weibull", "lognormal"):
                    methods[f"lifelines {kind} AFT"] = (run_lifelines, (kind, *split))
            try:
                import xgboost  # noqa: F401
            except ImportError:
                pass
            else:
                methods["xgboost survival:aft"] = (run_xgboost_aft, split)
            for method, (fn, fn_args) in methods.items():
                t0 = time.perf_counter()
                try:
                    res = fn(*fn_args)
                except Exception as err:  # a peer failing must not hide the others
                    print(f"{file} fold {fold} {method}: failed ({err})")
                    continue
                rows.append({"data": file.removesuffix(".csv"), "fold": fold, "method": method,
                             **res, "seconds": time.perf_counter() - t0})
    df = pd.DataFrame(rows)
    table = df.groupby(["data", "method"]).agg(
        nll_mean=("nll", "mean"), nll_std=("nll", "std"), c_mean=("c_index", "mean"),
        c_std=("c_index", "std"), seconds=("seconds", "mean")).reset_index()
    lines = ["| data | method | censored NLL | C-index | fit+score s |", "|---|---|---|---|---|"]
    for r in table.itertuples():
        lines.append(f"| {r.data} | {r.method} | {r.nll_mean:.3f} ± {r.nll_std:.3f} | "
                     f"{r.c_mean:.3f} ± {r.c_std:.3f} | {r.seconds:.2f} |")
    md = "\n".join(lines)
    print(md)
    if args.out:
        Path(args.out).write_text(
            "# Survival benchmark\n\n5-fold cross-validation (`python benchmarks/survival.py`); "
            "mean ± std over folds.\n\n" + md + "\n")
    return table


if __name__ == "__main__":
    main()
