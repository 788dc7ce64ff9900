"""IBUG's protocol for ``benchmarks/uci.py --protocol ibug``: folds, published figures, runs.

Brophy & Lowd (2022), "Instance-Based Uncertainty Estimation for Gradient-Boosted Regression
Trees", NeurIPS 2022 (repository ``jjbrophy47/ibug``) score IBUG, PGBM, NGBoost and KNN on 22
data sets under one protocol, which this module reproduces for the sets bundled in
``../shared/data/uci``:

- folds: ``KFold(n_splits=10, shuffle=True, random_state=1)`` over the whole data set in file
  order (``data/<set>/preprocess.py``);
- validation: ``train_test_split(train_fold, test_size=0.2, random_state=1)`` of each
  training fold (``scripts/experiments/train.py``, ``--val_frac 0.2``, ``--random_state 1``);
  every method is tuned on the 80 % and stopped on the 20 %, then refitted on the whole
  training fold with the chosen settings (its number of rounds; IBUG's variance calibration
  chosen on the validation rows is kept);
- scores in the target's own units (no scaling of ``y``); energy's target is ``Y1`` (heating
  load, ``Y2`` dropped), as in our ``energy`` folder.  IBUG one-hot encodes energy's ``X6`` and
  ``X8`` (orientation, glazing distribution); we keep them as numbers, which trees split the
  same way up to the order of the levels.

Their ``wine`` is red and white wine together (6,497 rows), not our red-only set: left out.

The published figures (mean over the 10 folds, and the standard error in brackets there) are
copied from ``extended_results/CRPS/test_CRPS.csv``, ``extended_results/CRPS/test_RMSE.csv``
and ``extended_results/NLL/test_NLL.csv`` of that repository: the CRPS (and that RMSE) of
models tuned for the CRPS, the NLL of models tuned for the NLL (two runs).

``fit`` modes of distboost (``--ibug-fit``): "refit" (IBUG's: the rounds and the dispersion
shift from a fit on the 80 % stopped on the 20 %, then a refit on the whole training fold with
that many rounds and that shift; a location start's point model keeps its rounds too, and
the location keeps the leaf size chosen there),
"eval_set" (the fit on the 80 % with ``eval_set`` = the 20 %,
no refit) and "own" (``fit(X_train, y_train)``: distboost's own validation on the whole
training fold).
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold, train_test_split

#: Our folder -> IBUG's name, for the sets both have.
DATASETS = {"concrete": "concrete", "energy": "energy", "kin8nm": "kin8nm",
            "power-plant": "power", "yacht": "yacht"}
PEERS = ("ibug", "pgbm", "ngboost")
#: Published test scores, mean over 10 folds (Brophy & Lowd 2022, repository
#: jjbrophy47/ibug, extended_results/CRPS/test_CRPS.csv, extended_results/CRPS/test_RMSE.csv,
#: extended_results/NLL/test_NLL.csv): ``{set: {metric: (IBUG, PGBM, NGBoost)}}``.
PUBLISHED = {
    "concrete": {"crps": (1.948, 1.895, 3.266), "rmse": (3.751, 3.725, 6.121),
                 "nll": (2.866, 2.730, 3.033)},
    "energy": {"crps": (0.155, 0.163, 0.528), "rmse": (0.306, 0.329, 1.212),
               "nll": (0.861, 0.481, 0.650)},
    "kin8nm": {"crps": (0.060, 0.071, 0.095), "rmse": (0.103, 0.108, 0.177),
               "nll": (-0.753, -0.729, -0.411)},
    "power-plant": {"crps": (1.528, 1.534, 2.112), "rmse": (2.950, 2.979, 3.923),
                    "nll": (2.556, 2.520, 2.773)},
    "yacht": {"crps": (0.300, 0.240, 0.967), "rmse": (0.899, 0.695, 3.417),
              "nll": (0.175, 0.248, 0.540)},
}
START, END = "<!-- uci-ibug:start -->", "<!-- uci-ibug:end -->"
FIT_MODES = ("refit", "eval_set", "own")


def ibug_folds(n: int, n_folds: int = 10):
    """IBUG's folds of ``n`` rows: ``(fold, train, test, tune, valid)`` row indices, the
    tune and valid rows splitting train 80/20."""
    for k, (train, test) in enumerate(KFold(n_splits=10, shuffle=True,
                                             random_state=1).split(np.arange(n))):
        if k >= n_folds:
            return
        tune, valid = train_test_split(train, test_size=0.2, random_state=1)
        yield k, train, test, tune, valid


def run_distboost(db, params: dict, mode: str, X, y, rows, seed: int = 0):
    """distboost (the Normal, or the family in ``params``) under fit ``mode``: the fitted
    model."""
    train, test, tune, valid = rows
    if mode == "own":
        model = db.DistributionalRegressor(random_state=seed, **params).fit(X[train], y[train])
    else:
        model = db.DistributionalRegressor(random_state=seed, **params)
        model.fit(X[tune], y[tune], eval_set=(X[valid], y[valid]))
        if mode == "refit":
            shift, rounds = model.dispersion_shift_, max(model.best_iteration_, 1)
            kept = model.ensemble_.rounds()
            # The location start's point model keeps the rounds chosen on the validation rows.
            point = getattr(model, "location_start_", None)
            location = None if point is None else {**point.options, "n_estimators": point.rounds}
            # tuning="auto": the options it chose on the validation rows, not a new search.
            table = getattr(model, "tuning_table_", None)
            chosen = {} if table is None else table.attrs["chosen"]
            # The location's fine leaves chosen on the validation rows (near-deterministic
            # data, distboost.estimators.leaf_size) are kept for the refit too.
            leaves = getattr(model, "location_min_child_samples_", None)
            if leaves is not None and leaves != model.min_child_samples_:
                chosen = {**chosen, "param_options": {
                    **(params.get("param_options") or {}),
                    "loc": {**(params.get("param_options") or {}).get("loc", {}),
                            "min_child_samples": leaves}}}
            model = db.DistributionalRegressor(
                random_state=seed, **{**params, **chosen, "n_estimators": rounds,
                                      "early_stopping": False, "tuning": None,
                                      "location_start": location}).fit(X[train], y[train])
            # IBUG keeps the calibration chosen on the validation rows for the refit; each
            # parameter keeps its own rounds (per_parameter_stopping).
            model.dispersion_shift_ = shift
            model.ensemble_.set_rounds(np.minimum(kept, model.ensemble_.n_iter_))
    return model


#: The point-model reference: LightGBM's L2 regressor, learning rate 0.05, the better of
#: num_leaves 15 and 31 on the validation rows, rounds stopped there (patience 50).
LIGHTGBM_GRID = (15, 31)


def run_lightgbm(mode: str, X, y, rows, seed: int = 0, cap: int = 5000):
    """LightGBM's L2 regressor (the reference for the mean) with a constant scale, its
    validation RMSE (IBUG's "constant" baseline): ``(loc, scale)`` of the test rows."""
    import lightgbm as lgb

    train, test, tune, valid = rows
    best = None
    for leaves in LIGHTGBM_GRID:
        params = {"objective": "regression", "learning_rate": 0.05, "num_leaves": leaves,
                  "verbosity": -1, "seed": seed, "num_threads": 1}
        booster = lgb.train(params, lgb.Dataset(X[tune], y[tune]), num_boost_round=cap,
                            valid_sets=[lgb.Dataset(X[valid], y[valid])],
                            callbacks=[lgb.early_stopping(50, verbose=False)])
        rmse = float(np.sqrt(np.mean((booster.predict(X[valid]) - y[valid]) ** 2)))
        if best is None or rmse < best[2]:
            best = (booster, params, rmse)
    booster, params, rmse = best
    if mode != "eval_set":
        booster = lgb.train(params, lgb.Dataset(X[train], y[train]),
                            num_boost_round=max(booster.best_iteration, 1))
    loc = booster.predict(X[test])
    return loc, np.full(loc.shape, rmse)


def run(db, load, scores, model_scores, data: str, names, n_folds: int, methods, mode: str,
        params: dict, quick: bool = False) -> pd.DataFrame:
    """Every method on every fold: one row per (set, fold, method) with the scores and the
    fit seconds: ``scores(loc, scale, y)`` of a Normal (LightGBM's point model with a
    constant scale), ``model_scores(model, X, y)`` of distboost's Predictive (any family)."""
    rows = []
    for name in names:
        if name not in DATASETS:
            print(f"{name}: not in IBUG's sets; skipped", flush=True)
            continue
        X, y = load(os.path.join(data, name))
        for fold, *split in ibug_folds(len(y), n_folds):
            for method in methods:
                t0 = time.perf_counter()
                test = split[1]
                if method == "distboost":
                    model = run_distboost(db, params, mode, X, y, split)
                    scored = model_scores(model, X[test], y[test])
                elif method == "lightgbm":
                    loc, scale = run_lightgbm(mode, X, y, split, cap=50 if quick else 5000)
                    scored = scores(loc, scale, y[test])
                else:
                    raise ValueError(f"--protocol ibug runs distboost and lightgbm, not "
                                     f"{method!r}.")
                rows.append({"dataset": name, "split": fold, "method": method, **scored,
                             "seconds": time.perf_counter() - t0})
        df = pd.DataFrame(rows)
        print(df[df.dataset == name].groupby("method")[["crps", "nll", "rmse", "coverage_90",
                                                         "seconds"]].mean()
              .to_string(float_format="{:.3f}".format), flush=True)
    return pd.DataFrame(rows)


def _cells(values) -> str:
    return " | ".join(f"{v:.3f}" for v in values)


def markdown(df: pd.DataFrame, mode: str, argv) -> str:
    """Our CRPS, NLL and RMSE beside the published ones, then every metric."""
    command = " ".join(sys.argv[1:] if argv is None else argv)
    by = df.groupby(["dataset", "method"])
    mean = by[["crps", "nll", "rmse", "coverage_90", "seconds"]].mean()
    lines = [START, "## UCI sets under IBUG's protocol (`benchmarks/uci.py --protocol ibug`)",
             "", f"Command: `python benchmarks/uci.py {command}` on {os.cpu_count()} cores, "
             f"{time.strftime('%Y-%m-%d')}; distboost fit mode \"{mode}\".  Folds and "
             "validation rows of Brophy & Lowd (2022, NeurIPS; repository jjbrophy47/ibug): "
             "`KFold(10, shuffle=True, random_state=1)`, 20 % of each training fold "
             "(`train_test_split(random_state=1)`) for validation; scores in the target's "
             "units, mean over folds.  Published: IBUG / PGBM / NGBoost from the repository's "
             "`extended_results/CRPS/test_CRPS.csv`, `extended_results/CRPS/test_RMSE.csv` "
             "(models tuned for the CRPS) and `extended_results/NLL/test_NLL.csv` (tuned for "
             "the NLL).  `lightgbm`: LightGBM's L2 regressor (learning rate 0.05, 15 or 31 "
             "leaves, rounds stopped on the validation rows) with a constant scale.", "",
             "| dataset | folds | distboost CRPS | IBUG | PGBM | NGBoost | distboost NLL | "
             "IBUG | PGBM | NGBoost | distboost RMSE | LightGBM RMSE | IBUG | PGBM | "
             "CRPS above min(IBUG, PGBM) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name in sorted(df["dataset"].unique()):
        pub = PUBLISHED[name]
        ours = mean.loc[name].reindex(["distboost", "lightgbm"])
        d = ours.loc["distboost"]
        folds = df[(df.dataset == name) & (df.method == "distboost")]["split"].nunique()
        gap = d["crps"] / min(pub["crps"][:2]) - 1.0
        lines.append(
            f"| {name} | {folds} | {d['crps']:.3f} | {_cells(pub['crps'])} | {d['nll']:.3f} | "
            f"{_cells(pub['nll'])} | {d['rmse']:.3f} | {ours.loc['lightgbm', 'rmse']:.3f} | "
            f"{_cells(pub['rmse'][:2])} | {gap:+.0%} |")
    variants = [m for m in sorted(df["method"].unique()) if m != "lightgbm"]
    if len(variants) > 1:
        lines += ["", "Every distboost setting against the best published CRPS and against "
                  "LightGBM's RMSE on the same folds:", "",
                  "| dataset | setting | CRPS | above min(IBUG, PGBM) | RMSE | above LightGBM "
                  "| NLL | 90% coverage |", "|---|---|---|---|---|---|---|---|"]
        for name in sorted(df["dataset"].unique()):
            pub = min(PUBLISHED[name]["crps"][:2])
            lgb_rmse = (mean.loc[(name, "lightgbm"), "rmse"]
                        if (name, "lightgbm") in mean.index else np.nan)
            for method in variants:
                if (name, method) not in mean.index:
                    continue
                r = mean.loc[(name, method)]
                lines.append(f"| {name} | {method} | {r['crps']:.3f} | "
                             f"{r['crps'] / pub - 1:+.1%} | {r['rmse']:.3f} | "
                             f"{r['rmse'] / lgb_rmse - 1:+.1%} | {r['nll']:.3f} | "
                             f"{r['coverage_90']:.3f} |")
    lines += ["", "Every metric (mean ± std over folds; fit seconds include the validation "
              "run and the refit):", "",
              "| dataset | method | NLL | CRPS | RMSE | 90% coverage | fit s |",
              "|---|---|---|---|---|---|---|"]
    for (name, method), g in by:
        cells = " | ".join(f"{g[c].mean():.3f} ± {g[c].std():.3f}"
                           for c in ("nll", "crps", "rmse", "coverage_90", "seconds"))
        lines.append(f"| {name} | {method} | {cells} |")
    return "\n".join(lines + [END]) + "\n"
