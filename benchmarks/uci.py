"""The UCI probabilistic-regression benchmark (Hernandez-Lobato & Adams 2015 splits).

For each dataset and split: 20% of the training rows (seeded) are held out for early stopping,
every method is fitted with early stopping on those rows, and scored on the test rows: NLL,
CRPS, RMSE, 90% coverage, fit seconds.  Methods: distboost's **default** Normal model, and where
installed NGBoost (published settings: Normal, natural gradient, depth-3 trees, learning rate
0.01, up to 2,000 rounds), LightGBMLSS and XGBoostLSS (Gaussian), CatBoost's
``RMSEWithUncertainty``.  With ``--family-choice``, ``compare_families`` (5-fold CV NLL) picks
a family per dataset on split 0's training rows; its test scores on every split are reported
beside the Normal's.

Writes a CSV of all rows and a markdown section (summary with the targets, then every metric,
mean ± std over splits) with the published NGBoost and deep-ensemble numbers beside ours into
``--out`` (between ``<!-- uci:start -->`` and ``<!-- uci:end -->``, so other sections of
``docs/benchmarks.md`` stay).  ``--from-csv a.csv,b.csv`` only merges earlier runs' rows into
the table (e.g. peers and distboost run in separate processes).

``--protocol ibug`` runs IBUG's protocol instead (Brophy & Lowd 2022: 10-fold
``KFold(shuffle=True, random_state=1)``, 20 % of each training fold for validation, scores in
the target's units; ``benchmarks/_ibug.py``) on the sets IBUG lists, and prints distboost and a
LightGBM point model beside the published IBUG / PGBM / NGBoost CRPS, NLL and RMSE (its own
section, between ``<!-- uci-ibug:start -->`` and ``<!-- uci-ibug:end -->``).  ``--quick``: one
small set, two folds, 20 rounds (the smoke test).

Run: ``python benchmarks/uci.py [--data ../shared/data/uci] [--datasets a,b] [--splits N]
[--methods distboost,ngboost,...] [--family-choice] [--out docs/benchmarks.md] [--csv FILE]
[--protocol ibug [--ibug-fit refit|eval_set|own]] [--quick]``
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import norm
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _ibug  # noqa: E402  (benchmarks/_ibug.py: IBUG's protocol)
import _sections  # noqa: E402  (benchmarks/_sections.py: the page's section)

import distboost as db  # noqa: E402
from distboost.datasets import load_uci  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
DATASETS = ("concrete", "energy", "kin8nm", "power-plant", "wine-quality-red", "yacht")
LARGE = ("kin8nm", "power-plant")
# Duan et al. (2020), Table 1 and Lakshminarayanan et al. (2017): mean test NLL.
PUBLISHED = {
    "concrete": (3.04, 3.06), "energy": (0.60, 1.38), "kin8nm": (-0.49, -1.20),
    "power-plant": (2.79, 2.79), "wine-quality-red": (0.91, 0.94), "yacht": (0.20, 1.18),
}


def normal_scores(mu, sigma, y) -> dict:
    z = (y - mu) / sigma
    lo, hi = norm.ppf([0.05, 0.95])
    return {
        "nll": float(np.mean(-norm.logpdf(y, mu, sigma))),
        "crps": float(np.mean(db.metrics.crps_normal(y, mu, sigma))),
        "rmse": float(np.sqrt(np.mean((y - mu) ** 2))),
        "coverage_90": float(np.mean((z >= lo) & (z <= hi))),
    }


#: Overrides of distboost's defaults (``--params``; empty for the race itself).
DISTBOOST_PARAMS: dict = {}


def model_scores(model, X, y) -> dict:
    """Test scores of a fitted distboost model through its Predictive, whatever its family
    (``--params '{"family": "laplace"}'`` is scored as a Laplace, not as a Normal of its
    ``scale``); for the Normal the same numbers as :func:`normal_scores`."""
    d = model.predict_dist(X)
    lo, hi = d.quantile(0.05), d.quantile(0.95)
    return {
        "nll": float(np.mean(d.nll(y))),
        "crps": float(np.mean(d.crps(y))),
        "rmse": float(np.sqrt(np.mean((y - d.mean) ** 2))),
        "coverage_90": float(np.mean((y >= lo) & (y <= hi))),
    }


def run_distboost(X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    model = db.DistributionalRegressor(random_state=seed, **DISTBOOST_PARAMS)
    model.fit(X_tr, y_tr, eval_set=(X_val, y_val))
    return model_scores(model, X_te, y_te)


def run_ngboost(X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    from ngboost import NGBRegressor

    model = NGBRegressor(n_estimators=2000, learning_rate=0.01, verbose=False,
                         random_state=seed)
    model.fit(X_tr, y_tr, X_val=X_val, Y_val=y_val, early_stopping_rounds=50)
    d = model.pred_dist(X_te)
    return normal_scores(d.params["loc"], d.params["scale"], y_te)


def _lss_params(model, X_te):
    p = model.predict(X_te, pred_type="parameters")
    return p["loc"].to_numpy(), p["scale"].to_numpy()


def run_lightgbmlss(X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    import lightgbm as lgb
    from lightgbmlss.distributions.Gaussian import Gaussian
    from lightgbmlss.model import LightGBMLSS

    model = LightGBMLSS(Gaussian())
    params = {"eta": 0.05, "num_leaves": 31, "min_data_in_leaf": 20, "verbose": -1,
              "seed": seed}
    model.train(params, lgb.Dataset(X_tr, label=y_tr), num_boost_round=2000,
                valid_sets=[lgb.Dataset(X_val, label=y_val)],
                callbacks=[lgb.early_stopping(50, verbose=False)])
    return normal_scores(*_lss_params(model, X_te), y_te)


def run_xgboostlss(X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    import xgboost as xgb
    from xgboostlss.distributions.Gaussian import Gaussian
    from xgboostlss.model import XGBoostLSS

    model = XGBoostLSS(Gaussian())
    dtrain, dval = xgb.DMatrix(X_tr, label=y_tr), xgb.DMatrix(X_val, label=y_val)
    model.train({"eta": 0.05, "max_depth": 4, "seed": seed}, dtrain, num_boost_round=2000,
                evals=[(dtrain, "train"), (dval, "val")], early_stopping_rounds=50,
                verbose_eval=False)
    p = model.predict(xgb.DMatrix(X_te), pred_type="parameters")
    return normal_scores(p["loc"].to_numpy(), p["scale"].to_numpy(), y_te)


def run_catboost(X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    from catboost import CatBoostRegressor

    model = CatBoostRegressor(loss_function="RMSEWithUncertainty", iterations=2000,
                              learning_rate=0.05, random_seed=seed, verbose=False,
                              thread_count=2, allow_writing_files=False)
    model.fit(X_tr, y_tr, eval_set=(X_val, y_val), early_stopping_rounds=50)
    pred = model.predict(X_te)  # columns: mean and variance (data uncertainty)
    return normal_scores(pred[:, 0], np.sqrt(pred[:, 1]), y_te)


METHODS = {"distboost": run_distboost, "ngboost": run_ngboost,
           "lightgbmlss": run_lightgbmlss, "xgboostlss": run_xgboostlss,
           "catboost": run_catboost}


CANDIDATES = ("normal", "lognormal", "gamma", "laplace", "logistic", "gumbel", "studentt")


def choose_family(X, y, seed=0) -> str:
    """compare_families (5-fold CV NLL, default settings) on one split's training rows."""
    candidates = list(CANDIDATES) if np.all(y > 0) else [
        f for f in CANDIDATES if f not in ("lognormal", "gamma")]
    table = db.compare_families(X, y, families=candidates, cv=5, metrics=("nll",),
                                random_state=seed)
    print(table.to_string(), flush=True)
    return str(table.loc[0, "family"])


def run_chosen(family, X_tr, y_tr, X_val, y_val, X_te, y_te, seed):
    """The chosen family with default settings: test NLL, CRPS, RMSE, coverage."""
    model = db.DistributionalRegressor(family=family, random_state=seed)
    model.fit(X_tr, y_tr, eval_set=(X_val, y_val))
    return model_scores(model, X_te, y_te)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "uci"))
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--splits", type=int, default=None,
                        help="splits per dataset (default: 20 small, 5 for kin8nm and power)")
    parser.add_argument("--methods", default=",".join(METHODS))
    parser.add_argument("--family-choice", action="store_true")
    parser.add_argument("--out", default=None, help="markdown file to write")
    parser.add_argument("--csv", default=None, help="CSV of all rows (rewritten per dataset)")
    parser.add_argument("--params", default=None,
                        help="JSON overrides of distboost's defaults (not for the race)")
    parser.add_argument("--from-csv", default=None,
                        help="comma-separated CSVs of earlier runs: only write the table")
    parser.add_argument("--protocol", choices=("ngboost", "ibug"), default="ngboost",
                        help="ngboost: the 20 standard splits; ibug: IBUG's 10 folds")
    parser.add_argument("--ibug-fit", choices=_ibug.FIT_MODES, default="refit",
                        help="how distboost uses IBUG's validation rows (benchmarks/_ibug.py)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: yacht, 2 splits, 20 rounds")
    args = parser.parse_args(argv)
    if args.params:
        DISTBOOST_PARAMS.update(json.loads(args.params))
    if args.quick:
        args.datasets, args.splits = "yacht", 2
        DISTBOOST_PARAMS.setdefault("n_estimators", 20)
    if args.protocol == "ibug":
        return _main_ibug(args, argv)
    if args.from_csv:
        df = pd.concat([pd.read_csv(f) for f in args.from_csv.split(",")], ignore_index=True)
        md = _markdown(df, argv)
        print(md)
        if args.out:
            write_section(Path(args.out), md)
        return df
    rows = []
    for name in args.datasets.split(","):
        n_splits = args.splits or (5 if name in LARGE else 20)
        chosen = None
        if args.family_choice:
            X, y, train, _ = load_uci(Path(args.data) / name, split=0)
            chosen = choose_family(X[train], y[train])
            print(f"{name}: compare_families chose {chosen}", flush=True)
        for split in range(n_splits):
            X, y, train, test = load_uci(Path(args.data) / name, split=split)
            X_tr, X_val, y_tr, y_val = train_test_split(X[train], y[train], test_size=0.2,
                                                        random_state=split)
            data = (X_tr, y_tr, X_val, y_val, X[test], y[test], split)
            for method in args.methods.split(","):
                t0 = time.perf_counter()
                try:
                    res = METHODS[method](*data)
                except ImportError as err:
                    if split == 0:
                        print(f"{method}: not available ({err}); skipped", flush=True)
                    continue
                except Exception as err:  # one failing peer must not stop the race
                    print(f"{name} split {split} {method}: failed ({err})", flush=True)
                    continue
                rows.append({"dataset": name, "split": split, "method": method, **res,
                             "seconds": time.perf_counter() - t0})
            if chosen is not None:
                t0 = time.perf_counter()
                res = run_chosen(chosen, *data)
                rows.append({"dataset": name, "split": split, "method": f"distboost {chosen} "
                             "(chosen)", **res, "seconds": time.perf_counter() - t0})
        df = pd.DataFrame(rows)
        if args.csv:
            df.to_csv(args.csv, index=False)
        if df.empty:
            continue
        print(df[df.dataset == name].groupby("method")[["nll", "crps", "rmse", "coverage_90",
                                                         "seconds"]].mean()
              .to_string(float_format="{:.3f}".format), flush=True)
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    md = _markdown(df, argv)
    print(md)
    if args.out:
        write_section(Path(args.out), md)
    return df


def _main_ibug(args, argv) -> pd.DataFrame:
    """``--protocol ibug``: distboost (and LightGBM's point model) on IBUG's folds."""
    names = [d for d in args.datasets.split(",") if d in _ibug.DATASETS]
    methods = args.methods if args.methods != ",".join(METHODS) else "distboost,lightgbm"
    if args.from_csv:
        df = pd.concat([pd.read_csv(f) for f in args.from_csv.split(",")], ignore_index=True)
    else:
        df = _ibug.run(db, load_uci, normal_scores, model_scores, args.data, names,
                       args.splits or 10, methods.split(","), args.ibug_fit, DISTBOOST_PARAMS,
                       quick=args.quick)
        if args.csv:
            df.to_csv(args.csv, index=False)
    md = _ibug.markdown(df, args.ibug_fit, argv)
    print(md)
    if args.out:
        _sections.write_section(Path(args.out), md, _ibug.START, _ibug.END)
    return df


PEERS = ("ngboost", "lightgbmlss", "xgboostlss", "catboost")
START, END = "<!-- uci:start -->", "<!-- uci:end -->"


def _ms(values: pd.Series) -> str:
    v = values.dropna()
    return f"{v.mean():.3f} ± {v.std():.3f}" if len(v) else ""


def _markdown(df: pd.DataFrame, argv) -> str:
    """The race: a summary (NLL per method, targets) and every metric of every method."""
    by = df.groupby(["dataset", "method"])
    nll = by["nll"].mean().unstack()
    names = sorted(df["dataset"].unique())
    peers = [m for m in PEERS if m in nll.columns]
    chosen = {d: next((m for m in df[df.dataset == d]["method"].unique()
                       if m.endswith("(chosen)")), None) for d in names}
    command = " ".join(sys.argv[1:] if argv is None else argv)
    lines = [START, "## UCI race (`benchmarks/uci.py`)", "",
             f"Command: `python benchmarks/uci.py {command}` on "
             f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}. Standard splits "
             "(Hernández-Lobato & Adams 2015), 20% of each split's training rows held out for "
             "early stopping of every method; mean ± std over splits of the test NLL.", "",
             "| dataset | splits | distboost (defaults) | chosen family | "
             + " | ".join(f"{p} (run)" for p in peers)
             + " | NGBoost (published) | deep ensembles (published) |",
             "|---|---|---|---|" + "---|" * len(peers) + "---|---|"]
    for d in names:
        sub = df[df.dataset == d]
        ours = sub[sub.method == "distboost"]
        pick = chosen[d]
        pick_txt = (f"{pick.split()[1]}: {_ms(sub[sub.method == pick]['nll'])}"
                    if pick else "")
        ngb, de = PUBLISHED.get(d, ("", ""))
        lines.append(f"| {d} | {ours['split'].nunique()} | {_ms(ours['nll'])} | {pick_txt} | "
                     + " | ".join(_ms(sub[sub.method == p]["nll"]) for p in peers)
                     + f" | {ngb} | {de} |")
    if "distboost" in nll.columns:
        ours = nll["distboost"]
        wins_pub = sum(ours[d] < PUBLISHED[d][0] for d in names if d in PUBLISHED)
        wins_peers = sum(all(ours[d] < nll.loc[d, p] for p in peers
                             if pd.notna(nll.loc[d, p])) for d in names)
        cov = by["coverage_90"].mean().unstack()["distboost"]
        lines += ["", "Targets (distboost defaults, Normal):", "",
                  f"- lower mean test NLL than NGBoost's published number on {wins_pub} of "
                  f"{len(names)} datasets (target: 5 of 6);",
                  f"- lower than every peer run side by side ({', '.join(peers) or 'none'}) "
                  f"on {wins_peers} of {len(names)} (target: 5 of 6);",
                  f"- 90% coverage between {cov.min():.3f} and {cov.max():.3f} "
                  "(target: within [0.85, 0.95] on every dataset);"]
        if "ngboost" in nll.columns:
            sec = by["seconds"].mean().unstack()
            ratio = sec["ngboost"] / sec["distboost"]
            per = ", ".join(f"{d} {ratio[d]:.1f} x" for d in names)
            overall = (df[df.method == "ngboost"].seconds.mean()
                       / df[df.method == "distboost"].seconds.mean())
            lines.append(f"- fit time, NGBoost / distboost, per dataset: {per}; mean over all "
                         f"splits {overall:.1f} x (target: at least 10 x).")
    lines += ["", "Every metric (mean ± std over splits; fit seconds include the validation "
              "scoring each method does):", "",
              "| dataset | method | NLL | CRPS | RMSE | 90% coverage | fit s |",
              "|---|---|---|---|---|---|---|"]
    for (name, method), g in by:
        lines.append(f"| {name} | {method} | {_ms(g['nll'])} | {_ms(g['crps'])} | "
                     f"{_ms(g['rmse'])} | {_ms(g['coverage_90'])} | {_ms(g['seconds'])} |")
    return "\n".join(lines + [END]) + "\n"


def write_section(path: Path, md: str) -> None:
    """Replace the race's section of a markdown file (between the markers), or append it."""
    _sections.write_section(path, md, START, END)


if __name__ == "__main__":
    main()
