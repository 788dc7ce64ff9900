"""Conformal calibration (``db.ConformalRegressor``): coverage, sharpness and epistemic variance.

Four parts, each printed as a table (and written to ``benchmarks/results/conformal_*.csv``):

a. A misspecified family: Student-t(2) noise around a sine, fitted by a Normal on 150 rows, 30
   repetitions; 90 % coverage and CRPS on 5,000 new rows of the raw model and of its conformal
   calibrations (``cps`` with ``cv=5`` and ``cv=None``, ``split``, ``cqr``).
b. Mondrian groups whose noise differs 4 x: coverage per group, 30 repetitions.
c. The UCI splits of ``../shared/data/uci`` (Hernandez-Lobato & Adams 2015): coverage at
   80/90/95 %, mean 90 % width and CRPS of the raw model, of ``cps`` with ``cv=5`` (columns
   ``cps_*``: the cross-conformal system) and with ``cv=None`` (``split_cps_*``: split
   conformal on a quarter of the rows), of MAPIE's
   CV+ around a LightGBM regressor and of crepes' normalised conformal predictive system around
   the same LightGBM (MAPIE and crepes from the ``bench`` extra; skipped when missing).
d. Epistemic variance (``predict_uncertainty``) of the model's own members (its
   cross-validation fold models below 1,000 rows, its virtual ensemble), of the randomised
   members of ``epistemic_members=10`` (extremely randomised trees), of the fold models of
   ``early_stopping="cv"`` at every size and of a ``ConformalRegressor``'s five fold models:
   AUROC of sparse against dense rows, and its mean, at 500, 4,000 and 20,000 training rows
   on two tasks (a sparse stretch of one feature; a hole in two).
e. Aggregations of the five calibrated fold laws of ``cps`` with ``cv=5`` on the UCI splits
   (issue 50, item 3: today's CV+ system over-covers): coverage at 80/90/95 % and the CRPS of
   39 quantiles of today's system, of the fold laws' quantile average (Vincentised), and of
   that average shrunk about its median by ``c`` with ``c^2 = (mean v - mean w) / mean s^2``
   (the ensemble's error is the members' less their spread, Krogh & Vedelsby 1995: ``v`` a
   member's variance, ``w`` the members' spread of medians, ``s^2`` the average's variance),
   ``c`` from the training rows (what a fit can know), from the test rows (a reference only:
   it reads the rows it predicts), or row by row from the row's own folds
   (``ConformalRegressor(aggregation="shrunk")``, its quantiles and intervals).

Run: ``python benchmarks/conformal.py [--parts abcde] [--reps 30] [--splits N] [--datasets a,b]
[--first-split K] [--a-methods "cps, cv=5;cqr, cv=5"]``
(``--quick``: a few repetitions and splits, for the smoke test).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import distboost as db
from distboost.datasets import load_uci

HERE = Path(__file__).resolve().parent
# ``../shared`` beside the checkout (a worktree elsewhere falls back to /work/shared).
DATA = next((p / "shared" / "data" / "uci" for p in HERE.parents
             if (p / "shared" / "data" / "uci").is_dir()), Path("/work/shared/data/uci"))
LEVELS = (0.8, 0.9, 0.95)


def _cover(lower, upper, y) -> float:
    return float(np.mean((y >= lower) & (y <= upper)))


def _sine(n, rng, noise="t"):
    x = rng.uniform(-3, 3, size=n)
    X = np.c_[x, rng.normal(size=n)]
    eps = rng.standard_t(2, size=n) if noise == "t" else rng.normal(size=n)
    return X, np.sin(x) + 0.5 * eps


#: Part a's conformal calibrations (``--a-methods`` picks some by name; "raw model" always runs).
A_METHODS = {"cps, cv=5": {"method": "cps", "cv": 5},
             "cps, cv=None": {"method": "cps", "cv": None},
             "split, cv=5": {"method": "split", "cv": 5},
             "cqr, cv=5": {"method": "cqr", "cv": 5}}


def part_a(reps: int, methods=tuple(A_METHODS), csv: Path | None = None) -> pd.DataFrame:
    rows = []
    for r in range(reps):
        rng = np.random.default_rng(r)
        X, y = _sine(150, rng)
        X_new, y_new = _sine(5000, rng)
        raw_model = db.DistributionalRegressor(family="normal", random_state=r).fit(X, y)
        iv = raw_model.predict_interval(X_new, 0.9)
        rows.append({"rep": r, "method": "raw model", "coverage_90": _cover(*iv.T, y_new),
                     "crps": raw_model.predict_dist(X_new).crps(y_new).mean()})
        for name in methods:
            kw = A_METHODS[name]
            cf = db.ConformalRegressor(db.DistributionalRegressor(family="normal",
                                                                  random_state=r),
                                       random_state=r, **kw).fit(X, y)
            iv = cf.predict_interval(X_new, 0.9)
            crps = (np.nan if kw["method"] == "cqr"
                    else cf.predict_dist(X_new).crps(y_new).mean())
            rows.append({"rep": r, "method": name, "coverage_90": _cover(*iv.T, y_new),
                         "crps": crps})
        if csv is not None:  # written rep by rep: a long run stopped early keeps its rows
            pd.DataFrame(rows).to_csv(csv, index=False)
        print(f"  repetition {r}: done", flush=True)
    return pd.DataFrame(rows)


def part_b(reps: int) -> pd.DataFrame:
    rows = []
    for r in range(reps):
        rng = np.random.default_rng(100 + r)

        def draw(n, rng=rng):
            g = rng.integers(0, 2, size=n)
            X = pd.DataFrame({"x": rng.uniform(-3, 3, size=n), "g": g})
            return X, np.sin(X["x"].to_numpy()) + np.where(g == 1, 2.0, 0.5) * rng.normal(size=n)

        X, y = draw(400)
        X_new, y_new = draw(5000)
        # A model that ignores the group in its spread: one global scale.
        model = db.DistributionalRegressor(param_options={"scale": {"features": ["x"]}},
                                           random_state=r)
        cf = db.ConformalRegressor(model, cv=5, mondrian="g", random_state=r).fit(X, y)
        raw = cf.estimators_[0]
        iv, ivr = cf.predict_interval(X_new, 0.9), raw.predict_interval(X_new, 0.9)
        for group in (0, 1):
            m = (X_new["g"] == group).to_numpy()
            rows.append({"rep": r, "group": f"noise x{1 + 3 * group}",
                         "raw": _cover(ivr["lower"][m], ivr["upper"][m], y_new[m]),
                         "mondrian cps": _cover(iv["lower"][m], iv["upper"][m], y_new[m])})
    return pd.DataFrame(rows)


def part_c(splits: int, datasets: list[str], csv: Path | None = None,
           first: int = 0) -> pd.DataFrame:
    try:
        import lightgbm as lgb
        from crepes import WrapRegressor
        from crepes.extras import DifficultyEstimator
        from mapie.regression import CrossConformalRegressor
        peers = True
    except ImportError:
        peers = False
        warnings.warn("MAPIE or crepes missing (make bench): part c runs distboost only.",
                      stacklevel=2)
    rows = []
    for name in datasets:
        folder = DATA / name
        n_splits = len(list(folder.glob("index_train_*.txt")))
        if n_splits == 0:
            raise FileNotFoundError(f"{folder} holds no index_train_*.txt split files.")
        for s in range(first, min(first + splits, n_splits)):
            X, y, tr, te = load_uci(folder, s)
            Xtr, ytr, Xte, yte = X[tr], y[tr], X[te], y[te]
            t0 = time.perf_counter()
            cf = db.ConformalRegressor(db.DistributionalRegressor(random_state=s), cv=5,
                                       random_state=s).fit(Xtr, ytr)
            t_cf = time.perf_counter() - t0
            split_cf = db.ConformalRegressor(db.DistributionalRegressor(random_state=s),
                                             cv=None, random_state=s).fit(Xtr, ytr)
            raw = db.DistributionalRegressor(random_state=s).fit(Xtr, ytr)
            out = {"dataset": name, "split": s}
            for tag, obj in (("raw", raw), ("cps", cf), ("split_cps", split_cf)):
                for level in LEVELS:
                    iv = np.asarray(obj.predict_interval(Xte, level))
                    out[f"{tag}_cov{int(level * 100)}"] = _cover(*iv.T, yte)
                    if level == 0.9:
                        out[f"{tag}_width90"] = float(np.mean(iv[:, 1] - iv[:, 0]))
                out[f"{tag}_crps"] = float(obj.predict_dist(Xte).crps(yte).mean())
            out["cps_seconds"] = t_cf
            if peers:
                params = {"n_estimators": 300, "learning_rate": 0.05, "num_leaves": 15,
                          "verbose": -1, "random_state": s}
                mapie = CrossConformalRegressor(lgb.LGBMRegressor(**params),
                                                confidence_level=list(LEVELS), cv=5,
                                                random_state=s).fit_conformalize(Xtr, ytr)
                _, ivs = mapie.predict_interval(Xte)
                for j, level in enumerate(LEVELS):
                    out[f"mapie_cov{int(level * 100)}"] = _cover(ivs[:, 0, j], ivs[:, 1, j], yte)
                    if level == 0.9:
                        out["mapie_width90"] = float(np.mean(ivs[:, 1, j] - ivs[:, 0, j]))
                rng = np.random.default_rng(s)
                prop = rng.random(len(ytr)) < 0.75
                learner = WrapRegressor(lgb.LGBMRegressor(**params))
                learner.fit(Xtr[prop], ytr[prop])  # crepes' fit returns None
                de = DifficultyEstimator().fit(Xtr[prop], y=ytr[prop], scaler=True)
                learner.calibrate(Xtr[~prop], ytr[~prop], de=de, cps=True, seed=s)
                for level in LEVELS:
                    iv = learner.predict_int(Xte, confidence=level, seed=s)
                    out[f"crepes_cov{int(level * 100)}"] = _cover(iv[:, 0], iv[:, 1], yte)
                    if level == 0.9:
                        out["crepes_width90"] = float(np.mean(iv[:, 1] - iv[:, 0]))
                # crepes 0.9.1's WrapRegressor.evaluate hands its arguments on by position to
                # a signature with ``smoothing`` inserted (``online`` gets ``warm_start=True``,
                # and CRPS is refused as "online"): call the calibrated system directly.
                out["crepes_crps"] = float(learner.cps.evaluate(
                    learner.learner.predict(Xte), yte, sigmas=de.apply(Xte),
                    metrics=["CRPS"], seed=s, online=False)["CRPS"])
            rows.append(out)
            if csv is not None:  # written split by split: a long run stopped early keeps its rows
                pd.DataFrame(rows).to_csv(csv, index=False)
            print(f"  {name} split {s}: done ({t_cf:.1f} s for the conformal fit)", flush=True)
    return pd.DataFrame(rows)


def _epistemic_task(task: str, n: int, rng):
    """(X, y, X_new) of part d: ``X_new``'s first 1,000 rows dense, the last 1,000 sparse.

    "sine": ``y = sin(4 x) + 0.3 e``, 2 % of the training rows with ``x`` in [1, 2] (the rest
    in [0, 1]), a noise column beside; "hole": two features uniform on [-2, 2]^2 but for a
    hole, ``max(|x1|, |x2|) < 0.7``, that keeps 2 % of its share of the rows, ``y = sin(2
    x1) + cos(2 x2) + 0.3 e``."""
    if task == "sine":
        x = np.r_[rng.uniform(0, 1, n - n // 50), rng.uniform(1, 2, n // 50)]
        X = np.c_[x, rng.normal(size=x.size)]
        y = np.sin(4 * x) + 0.3 * rng.normal(size=x.size)
        X_new = np.c_[np.r_[rng.uniform(0, 1, 1000), rng.uniform(1, 2, 1000)],
                      rng.normal(size=2000)]
        return X, y, X_new
    pts = rng.uniform(-2, 2, size=(20 * n, 2))
    inside = np.abs(pts).max(axis=1) < 0.7
    keep = ~inside | (rng.uniform(size=len(pts)) < 0.02)
    X = pts[keep][:n]
    y = np.sin(2 * X[:, 0]) + np.cos(2 * X[:, 1]) + 0.3 * rng.normal(size=len(X))
    new = rng.uniform(-2, 2, size=(20_000, 2))
    new_in = np.abs(new).max(axis=1) < 0.7
    return X, y, np.r_[new[~new_in][:1000], new[new_in][:1000]]


#: Part d's ``epistemic_members``.
MEMBERS = 10


def part_d() -> pd.DataFrame:
    """Epistemic variance of the kinds of members on the same data: the default model's
    ``predict_uncertainty`` (members "auto": its cross-validation fold models below 1,000
    rows, else its virtual ensemble), the randomised members of ``epistemic_members=10``,
    its virtual ensemble (members "virtual"), the fold models of a fit with
    ``early_stopping="cv"`` at every size, and the five fold models of a
    ``ConformalRegressor(cv=5)`` (``ConformalRegressor.predict_uncertainty``), on two tasks
    (:func:`_epistemic_task`) at 500, 4,000 and 20,000 training rows."""
    from sklearn.metrics import roc_auc_score

    rows = []
    for task, n in [(t, n) for t in ("sine", "hole") for n in (500, 4_000, 20_000)]:
        rng = np.random.default_rng(n)
        X, y, X_new = _epistemic_task(task, n, rng)
        t0 = time.perf_counter()
        model = db.DistributionalRegressor(random_state=0).fit(X, y)
        t1 = time.perf_counter()
        cv = db.DistributionalRegressor(random_state=0, early_stopping="cv").fit(X, y)
        t2 = time.perf_counter()
        randomized = db.DistributionalRegressor(random_state=0,
                                                epistemic_members=MEMBERS).fit(X, y)
        t3 = time.perf_counter()
        auto = ("regressor: its fold models" if model.cv_members_ is not None
                else "regressor: its virtual ensemble")
        members = {
            f"regressor, epistemic_members={MEMBERS}: randomised members": (
                randomized, {}, t3 - t2),
            auto: (model, {}, t1 - t0),
            "regressor: virtual ensemble": (model, {"members": "virtual"}, t1 - t0),
            "regressor, early_stopping='cv': its fold models": (cv, {}, t2 - t1),
            "ConformalRegressor(cv=5) fold models": (db.ConformalRegressor(
                db.DistributionalRegressor(random_state=0), cv=5, random_state=0).fit(X, y),
                {}, float("nan"))}
        for kind, (fitted, kwargs, seconds) in members.items():
            t4 = time.perf_counter()
            u = fitted.predict_uncertainty(X_new, **kwargs)
            t5 = time.perf_counter()
            e = u["epistemic"].to_numpy()
            rows.append({"task": task, "training rows": n, "members": kind,
                         "sparse share": 0.02,
                         "AUROC sparse vs dense": roc_auc_score(np.r_[np.zeros(1000),
                                                                      np.ones(1000)], e),
                         "mean epistemic (dense)": float(e[:1000].mean()),
                         "mean epistemic (sparse)": float(e[1000:].mean()),
                         "mean aleatoric": float(u["aleatoric"].mean()),
                         "fit s": seconds, "predict_uncertainty s (2,000 rows)": t5 - t4})
    return pd.DataFrame(rows)


#: Part e's quantile levels: the CRPS grid, the interval ends and the one-sigma points.
E_GRID = np.round(np.arange(0.025, 1.0, 0.025), 4)
E_LEVELS = np.array(sorted(set(E_GRID) | {0.05, 0.95, 0.1, 0.9, 0.5, 0.1587, 0.8413}))


def _fold_quantiles(cf, X) -> np.ndarray:
    """(K, n, len(E_LEVELS)): each fold model's quantiles recalibrated by its own fold's
    PIT table (``F_k^{-1}(G_k^{-1}(p))``, the table's empirical quantile as ``G_k^{-1}``)."""
    import torch

    inner, tables = cf._inner(), cf._tables()[0]
    out = []
    for k, params in enumerate(cf._member_params(X)):
        par = {p: torch.as_tensor(np.asarray(v, np.float64)) for p, v in params.items()}
        lev = np.clip(np.quantile(tables[k], E_LEVELS), 1e-6, 1 - 1e-6)
        with torch.no_grad():
            out.append(np.stack([inner.icdf(par, torch.full((len(X),), float(a),
                                                            dtype=torch.float64)).numpy()
                                 for a in lev], axis=1))
    return np.stack(out)


def _at(level: float) -> int:
    return int(np.argmin(np.abs(E_LEVELS - level)))


def _shrink(Q: np.ndarray) -> float:
    """``c`` of part e from fold quantiles (K, n, levels), clipped to [0.5, 2]."""
    lo, mid, hi = _at(0.1587), _at(0.5), _at(0.8413)
    v = (((Q[:, :, hi] - Q[:, :, lo]) / 2) ** 2).mean()
    w = Q[:, :, mid].var(axis=0).mean()
    avg = Q.mean(axis=0)
    s2 = (((avg[:, hi] - avg[:, lo]) / 2) ** 2).mean()
    return float(np.sqrt(np.clip((v - w) / s2, 0.25, 4.0)))


def _quantile_crps(y, q) -> float:
    d = y[:, None] - q
    return float(np.mean(2 * np.mean(np.maximum(E_GRID * d, (E_GRID - 1) * d), axis=1)))


def part_e(splits: int, datasets: list[str], csv: Path | None = None) -> pd.DataFrame:
    rows = []
    grid = [_at(a) for a in E_GRID]
    for name in datasets:
        n_splits = len(list((DATA / name).glob("index_train_*.txt")))
        for s in range(min(splits, n_splits)):
            X, y, tr, te = load_uci(DATA / name, s)
            cf = db.ConformalRegressor(db.DistributionalRegressor(random_state=s), cv=5,
                                       random_state=s).fit(X[tr], y[tr])
            Xte, yte = X[te], y[te]
            Q = _fold_quantiles(cf, Xte)
            avg = Q.mean(axis=0)
            med = avg[:, [_at(0.5)]]
            laws = {"vincentised": avg,
                    "shrunk, c from training rows": med + _shrink(
                        _fold_quantiles(cf, X[tr])) * (avg - med),
                    "shrunk, c from test rows (reference)": med + _shrink(Q) * (avg - med)}
            out = {"dataset": name, "split": s, "method": "CV+ (today)",
                   "crps": _quantile_crps(yte, cf.predict_dist(Xte).quantile(E_GRID))}
            for level in LEVELS:
                iv = np.asarray(cf.predict_interval(Xte, level))
                out[f"cov{int(level * 100)}"] = _cover(*iv.T, yte) - level
            rows.append(out)
            # The option itself: c of each row's own folds, its law's quantiles and intervals.
            shrunk = cf.set_params(aggregation="shrunk")  # the same fits, another law
            out = {"dataset": name, "split": s, "method": "aggregation='shrunk' (c per row)",
                   "crps": _quantile_crps(yte, shrunk.predict_quantiles(Xte, E_GRID))}
            for level in LEVELS:
                iv = np.asarray(shrunk.predict_interval(Xte, level))
                out[f"cov{int(level * 100)}"] = _cover(*iv.T, yte) - level
            rows.append(out)
            cf.set_params(aggregation="pool")
            for method, q in laws.items():
                out = {"dataset": name, "split": s, "method": method,
                       "crps": _quantile_crps(yte, q[:, grid])}
                for level in LEVELS:
                    lo, hi = _at((1 - level) / 2), _at((1 + level) / 2)
                    out[f"cov{int(level * 100)}"] = _cover(q[:, lo], q[:, hi], yte) - level
                rows.append(out)
            if csv is not None:
                pd.DataFrame(rows).to_csv(csv, index=False)
            print(f"  {name} split {s}: done", flush=True)
    return pd.DataFrame(rows)


def summarise_e(e: pd.DataFrame) -> pd.DataFrame:
    """Part e per method: coverage above nominal averaged over the sets (each set's mean
    over its splits), the worst set's, and the CRPS relative to today's, mean of the sets."""
    by = e.groupby(["method", "dataset"], sort=False)[["cov80", "cov90", "cov95", "crps"]].mean()
    today = by.xs("CV+ (today)", level="method")["crps"]
    out = {}
    for method, g in by.groupby(level="method", sort=False):
        g = g.droplevel("method")
        out[method] = {**{f"{c} (mean of sets)": g[c].mean() for c in ("cov80", "cov90",
                                                                       "cov95")},
                       "worst set |cov - nominal|": g[["cov80", "cov90", "cov95"]].abs()
                       .max(axis=1).max(),
                       "crps / today's (mean of sets)": (g["crps"] / today).mean()}
    return pd.DataFrame(out).T


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="abcd")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--splits", type=int, default=20)
    p.add_argument("--first-split", type=int, default=0,
                   help="part c runs splits first-split .. first-split + splits - 1")
    p.add_argument("--datasets", default="concrete,energy,kin8nm,power-plant,wine-quality-red,"
                                         "yacht")
    p.add_argument("--a-methods", default=";".join(A_METHODS),
                   help="part a's calibrations: names of A_METHODS separated by ';'")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=str(HERE / "results"))
    args = p.parse_args(argv)
    if args.quick:
        args.reps, args.splits, args.datasets = 2, 1, "yacht"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    pd.set_option("display.width", 200)
    results = {}
    if "a" in args.parts:
        a = part_a(args.reps, [m.strip() for m in args.a_methods.split(";")],
                   out / "conformal_misspecified.csv")
        results["a"] = a.groupby("method", sort=False)[["coverage_90", "crps"]].mean()
        print("\na. Student-t(2) noise fitted by a Normal, 150 rows, "
              f"{args.reps} repetitions:\n{results['a'].round(4)}")
    if "b" in args.parts:
        b = part_b(args.reps)
        b.to_csv(out / "conformal_mondrian.csv", index=False)
        results["b"] = b.groupby("group")[["raw", "mondrian cps"]].mean()
        print(f"\nb. Mondrian groups, 90 % coverage:\n{results['b'].round(4)}")
    if "c" in args.parts:
        c = part_c(args.splits, args.datasets.split(","), out / "conformal_uci.csv",
                   args.first_split)
        results["c"] = c.drop(columns="split").groupby("dataset").mean()
        print(f"\nc. UCI, mean over splits:\n{results['c'].round(4).T.to_string()}")
    if "d" in args.parts:
        results["d"] = part_d()
        results["d"].to_csv(out / "conformal_epistemic.csv", index=False)
        print(f"\nd. Epistemic variance:\n{results['d'].round(5).to_string()}")
    if "e" in args.parts:
        e = part_e(args.splits, args.datasets.split(","), out / "conformal_aggregation.csv")
        results["e"] = summarise_e(e)
        print(f"\ne. Aggregations of the cv=5 fold laws:\n{results['e'].round(4).to_string()}")
    return results


if __name__ == "__main__":
    main()
