"""Small-data benchmark (issue 13, part 1): distboost's defaults at n = 30 ... 300 rows.

For every dataset, training size n and seed: n rows are drawn at random (seeded; the draws of
one seed are nested, the first n of one permutation) from **all** rows of the dataset and every
other row is the test set.  The issue's own table uses this protocol; it gives a test set of
hundreds or thousands of rows at every n (split 0's test rows are 31 rows on yacht and 77 on
energy) so the test NLL measures the model, not the test draw.  A size is skipped when fewer
than ``MIN_TEST`` rows would remain (yacht at n = 300, veterans at n >= 150).

Methods (every one with its own defaults, nothing tuned):

- ``distboost``: ``db.DistributionalRegressor(random_state=seed)`` (Normal); on the survival
  sets ``family="censored_lognormal"`` and ``"censored_weibull"``.
- ``constant``: the family's marginal MLE, ``db.families.get(name).init(y)``, for every row.
- ``ngboost``: ``NGBRegressor(random_state=seed)`` (500 rounds, no early stopping).
- ``ngboost-es``: NGBoost as ``benchmarks/uci.py`` runs it (learning rate 0.01, up to 2,000
  rounds, ``early_stopping_rounds=50`` on a seeded 20 % split of the n training rows).
- ``lifelines`` (survival): Weibull and log-normal AFT as ``benchmarks/survival.py`` fits them.

Scores on the test rows: NLL (mean per row; censored NLL in the time unit for survival), CRPS
(survival CRPS of Avati et al. 2020 for survival), 90 % central-interval coverage, and seconds
of fit + prediction of the test rows.  Coverage on censored data: an event row is covered when
its time lies in the interval; a row censored at c, whose predicted PIT is only known to exceed
u = F(c), counts with the model's probability that its PIT lies in [0.05, 0.95] given PIT > u,
``|[max(u, 0.05), 0.95]| / (1 - u)`` -- the rule of D-calibration (Haider et al. 2020).  The
coverage of the event rows alone (biased low in time: events come before censoring) is in the
CSV as ``coverage_90_events``.

Prints a line per fit, the summary (mean over seeds per dataset x n x method) and the issue's
targets counted; ``--write-docs`` writes the tables between ``<!-- small-data:start -->`` and
``<!-- small-data:end -->`` in ``docs/benchmarks.md``.

Run: ``python benchmarks/small_data.py [--datasets concrete yacht ...] [--sizes 30 100 ...]
[--seeds 5] [--methods distboost constant ngboost ngboost-es lifelines] [--csv FILE]
[--from-csv a.csv b.csv] [--write-docs] [--out docs/benchmarks.md]``
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import sys
import time
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
import survival  # noqa: E402  (benchmarks/survival.py: the lifelines AFT wrapper)
import uci  # noqa: E402  (benchmarks/uci.py: loaders' paths, NGBoost wrapper, table helpers)

import distboost as db  # noqa: E402
from distboost.datasets import load_survival, load_uci  # noqa: E402

warnings.filterwarnings("ignore")
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
UCI_SETS = uci.DATASETS
SURVIVAL_SETS = ("gbsg2", "veterans")
SIZES = (30, 60, 100, 150, 200, 300)
METHODS = ("distboost", "constant", "ngboost", "ngboost-es", "lifelines")
SURVIVAL_FAMILIES = tuple(f for f in ("censored_lognormal", "censored_weibull")
                          if f.removeprefix("censored_") in db.families.available())
#: Fewest test rows a (dataset, n) cell may leave.
MIN_TEST = 30
START, END = "<!-- small-data:start -->", "<!-- small-data:end -->"
#: Digest of distboost's sources at import: rows fitted by different code differ here.
CODE = hashlib.sha1(b"".join(p.read_bytes() for p in sorted(
    (ROOT / "distboost").rglob("*.py")))).hexdigest()[:10]
# The targets.
COVERAGE_RANGE = (0.80, 0.97)
CONSTANT_SLACK = 0.05
NGB_WINS_NEEDED, NGB_AT_N = 4, 100
AFT_SLACK, AFT_MAX_N = 0.05, 150


@contextlib.contextmanager
def _patched(module, **attrs):
    """Temporarily replace module globals (to get a Predictive out of a reused wrapper)."""
    old = {k: getattr(module, k) for k in attrs}
    for k, v in attrs.items():
        setattr(module, k, v)
    try:
        yield
    finally:
        for k, v in old.items():
            setattr(module, k, v)


def _normal_dist(mu, sigma, y):
    return {"dist": db.Predictive.from_params("normal", loc=np.asarray(mu),
                                              scale=np.asarray(sigma))}


def load(name: str):
    """X (ndarray or DataFrame), y ((n,) or censored (n, 2) bounds), survival flag."""
    if name in SURVIVAL_SETS:
        X, t, event = load_survival(DATA / "survival" / f"{name}.csv")
        return X, db.censored.right(t, event), True
    X, y = load_uci(DATA / "uci" / name)
    return X, y, False


# Each runner: (X_tr, y_tr, X_te, seed) -> Predictive of the test rows.
def fit_distboost(family, X_tr, y_tr, X_te, seed):
    model = db.DistributionalRegressor(family=family, random_state=seed).fit(X_tr, y_tr)
    info = {"rounds": getattr(model, "n_iter_", np.nan),
            "mode": getattr(model, "early_stopping_", ""),
            "linear_start": getattr(model, "linear_start_", None) is not None}
    return model.predict_dist(X_te), info


def fit_constant(family, X_tr, y_tr, X_te, seed):
    params = db.families.get(family).init(y_tr)
    n = len(X_te)
    return db.Predictive.from_params(family, **{k: np.full(n, float(v))
                                                for k, v in params.items()}), {}


def fit_ngboost(X_tr, y_tr, X_te, seed):
    from ngboost import NGBRegressor

    model = NGBRegressor(random_state=seed, verbose=False).fit(X_tr, y_tr)
    d = model.pred_dist(X_te)
    return _normal_dist(d.params["loc"], d.params["scale"], None)["dist"], {}


def fit_ngboost_es(X_tr, y_tr, X_te, seed):
    X_fit, X_val, y_fit, y_val = train_test_split(X_tr, y_tr, test_size=0.2,
                                                  random_state=seed)
    with _patched(uci, normal_scores=_normal_dist):
        out = uci.run_ngboost(X_fit, y_fit, X_val, y_val, X_te, None, seed)
    return out["dist"], {}


def fit_lifelines(kind, X_tr, y_tr, X_te, seed):
    with _patched(survival, _scores=lambda dist, y: {"dist": dist}):
        out = survival.run_lifelines(kind, X_tr, y_tr, X_te, None, seed)
    return out["dist"], {}


def runners(method: str, censored: bool) -> dict:
    """Method label -> runner(X_tr, y_tr, X_te, seed) for one dataset kind."""
    if method == "distboost":
        fams = SURVIVAL_FAMILIES if censored else ("normal",)
        return {f"distboost {f}" if censored else "distboost": partial(fit_distboost, f)
                for f in fams}
    if method == "constant":
        fams = SURVIVAL_FAMILIES if censored else ("normal",)
        return {f"constant {f}" if censored else "constant": partial(fit_constant, f)
                for f in fams}
    if censored:
        if method == "lifelines":
            return {f"lifelines {k} AFT": partial(fit_lifelines, k)
                    for k in ("weibull", "lognormal")}
        return {}
    peers = {"ngboost": fit_ngboost, "ngboost-es": fit_ngboost_es}
    return {method: peers[method]} if method in peers else {}


def score(dist, y, censored: bool) -> dict:
    """Test NLL, CRPS and 90 % coverage (censoring-aware on survival data; see the module)."""
    if not censored:
        return {"nll": float(np.mean(dist.nll(y))), "crps": float(np.mean(dist.crps(y))),
                "coverage_90": db.metrics.coverage(dist, y, 0.9),
                "coverage_90_events": np.nan}
    t, event = y[:, 0], y[:, 0] == y[:, 1]
    lo, hi = dist.interval(0.9).T
    inside = (t >= lo) & (t <= hi)
    u = np.clip(np.asarray(dist.cdf(t), dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        p_cens = np.where(u < 0.95, (0.95 - np.maximum(u, 0.05)) / (1.0 - u), 0.0)
    cover = np.where(event, inside, p_cens)
    return {"nll": float(np.mean(db.metrics.censored_nll(dist, y))),
            "crps": float(np.mean(db.metrics.survival_crps(dist, y))),
            "coverage_90": float(np.mean(cover)),
            "coverage_90_events": float(np.mean(inside[event])) if event.any() else np.nan}


def _rows(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else X[idx]


def run(datasets, sizes, seeds, methods, csv=None) -> pd.DataFrame:
    rows = []
    t_start = time.perf_counter()
    for name in datasets:
        X, y, censored = load(name)
        N = len(y)
        fits = {k: v for m in methods for k, v in runners(m, censored).items()}
        for n in sizes:
            if N - n < MIN_TEST:
                print(f"{name}: n = {n} skipped ({N} rows leave {N - n} test rows, fewer "
                      f"than {MIN_TEST})", flush=True)
                continue
            for seed in range(seeds):
                perm = np.random.default_rng(seed).permutation(N)
                tr, te = perm[:n], perm[n:]
                for label, fn in fits.items():
                    t0 = time.perf_counter()
                    row = {"dataset": name, "n": n, "seed": seed, "method": label,
                           "n_test": len(te), "code": CODE}
                    try:
                        dist, info = fn(_rows(X, tr), y[tr], _rows(X, te), seed)
                        row["seconds"] = time.perf_counter() - t0
                        row.update(score(dist, y[te], censored), **info, error="")
                    except Exception as err:  # noqa: BLE001  one failure must not stop the run
                        row.update(seconds=time.perf_counter() - t0, nll=np.nan,
                                   error=f"{type(err).__name__}: {err}"[:200])
                    rows.append(row)
                    status = (f"FAILED {row['error']}" if row["error"] else
                              f"nll {row['nll']:8.3f} cov {row['coverage_90']:.2f}")
                    print(f"[{time.perf_counter() - t_start:7.1f} s] {name:>16} n={n:<3} "
                          f"seed={seed} {label:<30} {status} ({row['seconds']:.2f} s)",
                          flush=True)
            if csv:
                pd.DataFrame(rows).to_csv(csv, index=False)
    return pd.DataFrame(rows)


def summary(df: pd.DataFrame) -> pd.DataFrame:
    """Mean over seeds per dataset x n x method (``ok``: seeds that ran)."""
    g = df.groupby(["dataset", "n", "method"])
    out = g[["nll", "crps", "coverage_90", "seconds"]].mean()
    out["ok"] = g["nll"].count()
    out["seeds"] = g["seed"].nunique()
    return out.reset_index()


def targets(s: pd.DataFrame, df: pd.DataFrame | None = None) -> list[str]:
    """The issue's four targets, counted on the summary (means over seeds); with the rows
    ``df``, the no-worse-than-constant rule is also counted per run (dataset, n, seed)."""
    nll = s.pivot_table(index=["dataset", "n"], columns="method", values="nll")
    cov = s.pivot_table(index=["dataset", "n"], columns="method", values="coverage_90")
    ok = s.pivot_table(index=["dataset", "n"], columns="method", values="ok")
    seeds = s.pivot_table(index=["dataset", "n"], columns="method", values="seeds")
    ours = [m for m in nll.columns if m.startswith("distboost")]
    lines = []
    fails = [(d, n, m) for m in ours for (d, n) in nll.index
             if pd.notna(seeds.loc[(d, n), m]) and ok.loc[(d, n), m] < seeds.loc[(d, n), m]]
    if fails:
        lines.append(f"- **distboost failed** on {len(fails)} cell(s): "
                     + ", ".join(f"{d} n={n} {m}" for d, n, m in fails) + ";")
    lo, hi = COVERAGE_RANGE
    for kind, sets in (("UCI", UCI_SETS), ("survival", SURVIVAL_SETS)):
        cells = [(d, n, m) for m in ours for (d, n) in nll.index
                 if d in sets and pd.notna(cov.loc[(d, n), m])]
        if not cells:
            continue
        bad = [(d, n, m, cov.loc[(d, n), m]) for d, n, m in cells
               if not lo <= cov.loc[(d, n), m] <= hi]
        lines.append(f"- 90 % coverage in [{lo}, {hi}] ({kind}"
                     + (", censoring-aware" if kind == "survival" else "") + f"): "
                     f"{len(cells) - len(bad)} of {len(cells)} cells"
                     + (" (misses: " + ", ".join(f"{d} n={n}{_fam(m)} {c:.2f}"
                                                 for d, n, m, c in bad) + ")" if bad else "")
                     + ";")
    pairs = [(d, n, m, m.replace("distboost", "constant")) for m in ours for (d, n) in nll.index
             if m.replace("distboost", "constant") in nll.columns
             and pd.notna(nll.loc[(d, n), m])]
    if pairs:
        gap = [(d, n, m, nll.loc[(d, n), m] - nll.loc[(d, n), c]) for d, n, m, c in pairs]
        bad = [x for x in gap if not x[3] <= CONSTANT_SLACK]
        lines.append(f"- test NLL at most {CONSTANT_SLACK} nats above the constant model: "
                     f"{len(gap) - len(bad)} of {len(gap)} cells"
                     + (" (misses: " + ", ".join(f"{d} n={n}{_fam(m)} +{g:.3f}"
                                                 for d, n, m, g in bad) + ")" if bad else "")
                     + f"; worst {max(g for *_, g in gap):+.3f};")
        if df is not None:
            per = df.pivot_table(index=["dataset", "n", "seed"], columns="method", values="nll")
            runs = pd.concat([per[m] - per[c]
                              for m, c in sorted({(m, c) for *_, m, c in pairs})]).dropna()
            lines.append(f"  per run (dataset, n, seed): {int((runs <= CONSTANT_SLACK).sum())} "
                         f"of {len(runs)} within {CONSTANT_SLACK} nats; worst "
                         f"{runs.max():+.3f} ({' '.join(map(str, runs.idxmax()))});")
    if "ngboost-es" in nll.columns and "distboost" in nll.columns:
        at = [d for d in UCI_SETS if (d, NGB_AT_N) in nll.index
              and pd.notna(nll.loc[(d, NGB_AT_N), "ngboost-es"])]
        wins = [d for d in at if nll.loc[(d, NGB_AT_N), "distboost"]
                < nll.loc[(d, NGB_AT_N), "ngboost-es"]]
        lines.append(f"- lower test NLL than NGBoost with early stopping at n = {NGB_AT_N}: "
                     f"{len(wins)} of {len(at)} UCI sets (target: {NGB_WINS_NEEDED} of 6; "
                     f"won: {', '.join(wins) or 'none'});")
    aft = [m for m in nll.columns if m.startswith("lifelines")]
    if aft:
        cells = [(d, n, m) for m in ours for (d, n) in nll.index
                 if d in SURVIVAL_SETS and n <= AFT_MAX_N and m != "distboost"]
        gap = [(d, n, m, nll.loc[(d, n), m] - nll.loc[(d, n), aft].min()) for d, n, m in cells]
        for m in sorted({m for _, _, m, _ in gap}):
            mine = [x for x in gap if x[2] == m]
            bad = [x for x in mine if not x[3] <= AFT_SLACK]
            lines.append(f"- {m}: test NLL within {AFT_SLACK} nats of the better lifelines AFT "
                         f"at n <= {AFT_MAX_N}: {len(mine) - len(bad)} of {len(mine)} cells"
                         + (" (misses: " + ", ".join(f"{d} n={n} +{g:.3f}"
                                                     for d, n, _, g in bad) + ")" if bad else "")
                         + ";")
    return lines


def _fam(method: str) -> str:
    return f" {method.split()[1]}" if " " in method else ""


def _cell(s: pd.DataFrame, d, n, m, col="nll", fmt="{:.3f}") -> str:
    r = s[(s.dataset == d) & (s.n == n) & (s.method == m)]
    if r.empty:
        return ""
    r = r.iloc[0]
    txt = fmt.format(r[col]) if pd.notna(r[col]) else "failed"
    return txt + (f" ({int(r.ok)}/{int(r.seeds)})" if r.ok < r.seeds else "")


def markdown(df: pd.DataFrame, command: str, minutes: float | None = None) -> str:
    s = summary(df)
    present = set(s.method)
    lines = [START, "## Small data (`benchmarks/small_data.py`)", "",
             f"Command: `python benchmarks/small_data.py {command}` on {os.cpu_count()} cores"
             + (" (the rows of each CSV fitted by `python benchmarks/small_data.py --methods "
                "... --csv FILE`)" if "--from-csv" in command else "") + ", "
             f"{time.strftime('%Y-%m-%d')}"
             + (f", {minutes:.0f} min wall clock" if minutes else "")
             + f" ({df.seconds.sum() / 60:.0f} min of fits). "
             "n training rows drawn at random from all rows of the set (seeds 0 to "
             f"{df.seed.max()}, nested draws), every other row the test set; every method "
             "with its defaults (NGBoost ES: up to 2,000 rounds at learning rate 0.01, "
             "stopped on a 20 % split of the n rows). Mean over seeds; a cell marked (k/5) "
             "ran on k seeds only.", ""]
    codes = (df.loc[df.method.str.startswith("distboost"), "code"].dropna().unique()
             if "code" in df else [])
    if len(codes) == 1:
        lines += [f"distboost rows fitted by the source with digest `{codes[0]}` "
                  "(`small_data.CODE`: SHA-1 of `distboost/**/*.py`).", ""]
    if len(codes) > 1:
        lines += [f"**Warning: distboost rows come from {len(codes)} versions of the source "
                  f"({', '.join(map(str, codes))}).**", ""]
    lines += ["Targets (issue 13):", ""] + targets(s, df)
    uci_m = [m for m in ("distboost", "constant", "ngboost", "ngboost-es") if m in present]
    if uci_m:
        lines += ["", "UCI sets, test NLL (Normal family for every method) and the 90 % "
                  "coverage and fit + predict seconds of distboost and NGBoost ES:", "",
                  "| dataset | n | " + " | ".join(f"NLL {m}" for m in uci_m)
                  + " | coverage distboost | coverage NGBoost ES | s distboost | s NGBoost ES |",
                  "|---|---|" + "---|" * (len(uci_m) + 4)]
        for d in [d for d in UCI_SETS if d in set(s.dataset)]:
            for n in sorted(s[s.dataset == d].n.unique()):
                lines.append(f"| {d} | {n} | "
                             + " | ".join(_cell(s, d, n, m) for m in uci_m) + " | "
                             + _cell(s, d, n, "distboost", "coverage_90", "{:.2f}") + " | "
                             + _cell(s, d, n, "ngboost-es", "coverage_90", "{:.2f}") + " | "
                             + _cell(s, d, n, "distboost", "seconds", "{:.1f}") + " | "
                             + _cell(s, d, n, "ngboost-es", "seconds", "{:.1f}") + " |")
    surv_m = [m for m in sorted(present) if m.split()[0] in ("distboost", "constant",
                                                               "lifelines") and " " in m]
    if surv_m:
        ours = [m for m in surv_m if m.startswith("distboost")]
        lines += ["", "Survival sets, censored test NLL (density of the time in days or "
                  "months, comparable across methods) and distboost's censoring-aware 90 % "
                  "coverage:", "",
                  "| dataset | n | " + " | ".join(f"NLL {m}" for m in surv_m) + " | "
                  + " | ".join(f"coverage {m.split()[1]}" for m in ours) + " |",
                  "|---|---|" + "---|" * (len(surv_m) + len(ours))]
        for d in [d for d in SURVIVAL_SETS if d in set(s.dataset)]:
            for n in sorted(s[s.dataset == d].n.unique()):
                lines.append(f"| {d} | {n} | " + " | ".join(_cell(s, d, n, m) for m in surv_m)
                             + " | " + " | ".join(_cell(s, d, n, m, "coverage_90", "{:.2f}")
                                                  for m in ours) + " |")
    lines.append("\nEvery row (CRPS, coverage of event rows, rounds kept, errors) is in "
                 "`benchmarks/results/small_data.csv`.")
    return "\n".join(lines + [END]) + "\n"


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", nargs="+", default=list(UCI_SETS + SURVIVAL_SETS),
                        choices=list(UCI_SETS + SURVIVAL_SETS))
    parser.add_argument("--sizes", nargs="+", type=int, default=list(SIZES))
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 .. SEEDS-1")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--csv", default=None, help="CSV of every row (rewritten per size)")
    parser.add_argument("--from-csv", nargs="+", default=None,
                        help="merge earlier runs (later files win on the same dataset, n, "
                             "seed, method) instead of fitting; --csv writes the merge")
    parser.add_argument("--write-docs", action="store_true",
                        help="write the section between the markers of --out")
    parser.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    args = parser.parse_args(argv)
    command = " ".join(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    if args.from_csv:
        df = pd.concat([pd.read_csv(f, keep_default_na=True) for f in args.from_csv],
                       ignore_index=True)
        df["error"] = df["error"].fillna("")
        df = df.drop_duplicates(["dataset", "n", "seed", "method"], keep="last")
        if args.csv:
            df.to_csv(args.csv, index=False)
        minutes = None
    else:
        df = run(args.datasets, args.sizes, args.seeds, args.methods, args.csv)
        minutes = (time.perf_counter() - t0) / 60
        print(f"total {minutes:.1f} min", flush=True)
    pd.set_option("display.width", 200)
    print(summary(df).to_string(index=False, float_format="{:.3f}".format))
    md = markdown(df, command, minutes)
    print("\n".join(targets(summary(df), df)))
    if args.write_docs:
        with _patched(uci, START=START, END=END):
            uci.write_section(Path(args.out), md)
        print(f"wrote the section of {args.out}")
    return df


if __name__ == "__main__":
    main()
