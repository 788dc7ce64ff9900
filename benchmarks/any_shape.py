"""Any shape: the nonparametric ``histogram`` family against the default Normal and the peers.

Hernandez-Lobato & Adams (2015) splits, as ``benchmarks/uci.py``.  By default (``--fit all``)
distboost's models fit on all training rows of each split with their own early stopping, as
the peers do; ``--fit eval_set`` holds out 20 % of them, seeded, as ``eval_set`` (the protocol
of ``benchmarks/uci.py``).  distboost's default model
(``normal``) and the same model with ``family="histogram"`` (its defaults), scored on the test
rows: NLL, CRPS (closed form for both), 90 % coverage, fit seconds.  The peers, quantile
regression forests and Treeffuser, run in their own environments
(``benchmarks/any_shape_peers.py``) and come in through ``--peers a.csv,b.csv``.

``--cost`` instead measures the histogram's cost per boosting round as its number of bins
grows (16 to 1024 bins, 50 rounds without early stopping on power-plant's 9,568 rows),
as a ratio to the Normal's in the same process.

A histogram fitted to an integer target (wine quality) is a law on the integers: its NLL is
a log-probability, not a log-density, and is not comparable with the Normal's (the table marks
it); CRPS and coverage are comparable across all methods.

Every model runs with one torch thread (see ``torch.set_num_threads`` below) and the peers with
``n_jobs=1``.

Writes the CSV of all rows and a markdown section (between ``<!-- any_shape:start -->`` and
``<!-- any_shape:end -->``) into ``--out``.

Run: ``python benchmarks/any_shape.py [--datasets a,b] [--splits 5] [--csv FILE]
[--peers FILE,FILE] [--out docs/benchmarks.md]``, or ``python benchmarks/any_shape.py --cost``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from sklearn.model_selection import train_test_split

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _sections  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import load_uci  # noqa: E402

warnings.filterwarnings("ignore")
# One torch thread: the per-round tensors are small, and on a shared machine torch's thread
# pool fighting LightGBM's made the histogram's rounds 15 x slower (0.39 s against 0.026 s on
# concrete).  Both distboost models run under the same setting.
torch.set_num_threads(1)
ROOT = Path(__file__).resolve().parents[1]
DATA = Path("/work/shared/data/uci") if not (ROOT.parent / "shared").is_dir() else \
    ROOT.parent / "shared" / "data" / "uci"
DATASETS = ("concrete", "energy", "kin8nm", "power-plant", "wine-quality-red", "yacht")
FAMILIES = {"normal": "normal", "histogram": "histogram", "auto": "auto"}
#: The columns of the CRPS table, in order (peers come in through ``--peers``).
METHODS = ("normal", "histogram", "auto", "qrf", "treeffuser", "catboost", "ngboost")
START, END = "<!-- any_shape:start -->", "<!-- any_shape:end -->"


def run(family, X_tr, y_tr, eval_set, X_te, y_te, seed) -> dict:
    t0 = time.perf_counter()
    model = db.DistributionalRegressor(family=family, random_state=seed)
    model.fit(X_tr, y_tr, eval_set=eval_set)
    seconds = time.perf_counter() - t0
    dist = model.predict_dist(X_te)
    return {"nll": -model.score(X_te, y_te), "crps": float(np.mean(dist.crps(y_te))),
            "coverage_90": db.metrics.coverage(dist, y_te, 0.9), "seconds": seconds,
            "nll_kind": "mass" if model.family_.discrete else "density",
            "rounds": model.best_iteration_ + 1, "chosen": model.family_.name}


def race(datasets, splits, csv=None, methods=tuple(FAMILIES), fit="all") -> pd.DataFrame:
    """Fit ``methods`` on each split: on all training rows with the model's own early stopping
    (``fit="all"``, as the peers), or on 80 % of them with the other 20 % as ``eval_set``
    (``fit="eval_set"``, the protocol of ``benchmarks/uci.py``)."""
    rows = []
    for name in datasets:
        for split in range(splits):
            X, y, train, test = load_uci(DATA / name, split=split)
            if fit == "all":
                X_tr, y_tr, eval_set = X[train], y[train], None
            else:
                X_tr, X_val, y_tr, y_val = train_test_split(X[train], y[train], test_size=0.2,
                                                            random_state=split)
                eval_set = (X_val, y_val)
            for method in methods:
                family = FAMILIES[method]
                res = run(family, X_tr, y_tr, eval_set, X[test], y[test], split)
                rows.append({"dataset": name, "split": split, "method": method, "fit": fit,
                             **res})
                print(rows[-1], flush=True)
                if csv:
                    pd.DataFrame(rows).to_csv(csv, index=False)
    return pd.DataFrame(rows)


def cost(bins=(16, 64, 256, 1024), rounds: int = 50) -> pd.DataFrame:
    """Seconds per round of the histogram (``bins`` bins) over the Normal's, one process."""
    X, y = load_uci(DATA / "power-plant")
    rows = []
    for family, label in [("normal", "normal")] + [
            (db.families.histogram.Histogram(n_bins=b), f"histogram, {b} bins") for b in bins]:
        model = db.DistributionalRegressor(family=family, n_estimators=rounds,
                                           early_stopping=False, linear_start=False,
                                           calibrate=False, random_state=0)
        t0 = time.perf_counter()
        model.fit(X, y)
        rows.append({"model": label, "seconds_per_round": (time.perf_counter() - t0) / rounds,
                     "outputs": model.family_.n_params})
    table = pd.DataFrame(rows)
    table["ratio_to_normal"] = table["seconds_per_round"] / table["seconds_per_round"].iloc[0]
    print(table.to_string(float_format="{:.3f}".format), flush=True)
    return table


def auto_cost(n: int = 20_000, seed: int = 0, reps: int = 3) -> pd.DataFrame:
    """Fit seconds of ``family="auto"`` over a default fit (the Normal), same process.

    The data: ``n`` rows of 5 features, ``y`` a skewed, heteroscedastic function of them
    (a gamma law whose mean and shape vary with ``x``), so that the choice is not trivial.
    Both fits use every default (``early_stopping="auto"``: 10 % validation rows); the
    ratio counts the whole ``fit`` (the comparison on ``MAX_ROWS`` rows and the final fit);
    the chosen family's own fit is timed too.  Each fit runs ``reps`` times, interleaved,
    and its fastest run counts (the machine is shared: the minimum is the least disturbed).
    """
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 5))
    shape = np.exp(1.0 + X[:, 1])
    y = rng.gamma(shape, np.exp(1.0 + X[:, 0] + 0.5 * np.sin(3 * X[:, 2])) / shape)
    times: dict[str, list[float]] = {}
    rounds: dict[str, int] = {}
    chosen = "normal"
    for _ in range(reps):
        for family in ("normal", "auto", "chosen"):
            spec = chosen if family == "chosen" else family
            t0 = time.perf_counter()
            model = db.DistributionalRegressor(family=spec, random_state=0).fit(X, y)
            times.setdefault(family, []).append(time.perf_counter() - t0)
            rounds[family] = model.best_iteration_ + 1
            if family == "auto":
                table, chosen = model.family_table_, model.family_.name
    print(table.drop(columns=["skipped"]).to_string(), flush=True)
    out = pd.DataFrame({
        "model": ["normal (default)", "auto", f"{chosen} (the chosen family alone)"],
        "seconds": [min(times[k]) for k in ("normal", "auto", "chosen")],
        "rounds": [rounds[k] for k in ("normal", "auto", "chosen")]})
    out["ratio_to_default"] = out["seconds"] / out["seconds"].iloc[0]
    print(out.to_string(float_format="{:.3f}".format), flush=True)
    return out


def _ms(values: pd.Series) -> str:
    v = values.dropna()
    return f"{v.mean():.3f} ± {v.std():.3f}" if len(v) else ""


def markdown(df: pd.DataFrame, argv) -> str:
    command = " ".join(sys.argv[1:] if argv is None else argv)
    methods = [m for m in METHODS if m in set(df.method)]
    crps = df.groupby(["dataset", "method"])["crps"].mean().unstack()
    lines = [START, "## Any shape: the nonparametric family (`benchmarks/any_shape.py`)", "",
             f"Command: `python benchmarks/any_shape.py {command}` on {os.cpu_count()} "
             f"cores shared with other jobs, {time.strftime('%Y-%m-%d')}; peers from "
             "`benchmarks/any_shape_peers.py` in their own environments.  Test CRPS, mean ± "
             "std over the splits (lower is better; best in bold).  " + _protocol(df), "",
             "| dataset | splits | " + " | ".join(methods) + " |",
             "|---|---|" + "---|" * len(methods)]
    for d in sorted(df.dataset.unique()):
        sub = df[df.dataset == d]
        best = crps.loc[d, methods].idxmin()
        cells = []
        for m in methods:
            runs = sub[sub.method == m]
            txt = _ms(runs["crps"])
            if txt and runs.split.nunique() < sub.split.nunique():
                txt += f" ({runs.split.nunique()} splits)"
            cells.append(f"**{txt}**" if m == best else txt)
        lines.append(f"| {d} | {sub.split.nunique()} | " + " | ".join(cells) + " |")
    lines += _auto_lines(df, crps)
    lines += ["", "Every metric (NLL of a law on the integers is a log-probability, marked "
              "\"mass\": not comparable with a density's):", "",
              "| dataset | method | NLL | CRPS | 90% coverage | fit s | rounds |",
              "|---|---|---|---|---|---|---|"]
    for (d, m), g in df.groupby(["dataset", "method"]):
        kind = g["nll_kind"].iloc[0] if "nll_kind" in g and isinstance(
            g["nll_kind"].iloc[0], str) else ""
        nll = _ms(g["nll"]) + (" (mass)" if kind == "mass" else "")
        rounds = _ms(g["rounds"]) if "rounds" in g else ""
        lines.append(f"| {d} | {m} | {nll} | {_ms(g['crps'])} | {_ms(g['coverage_90'])} | "
                     f"{_ms(g['seconds'])} | {rounds} |")
    return "\n".join(lines + [END]) + "\n"


def _protocol(df: pd.DataFrame) -> str:
    """How distboost's rows were fitted (the ``fit`` column; ``eval_set`` for older CSVs)."""
    fits = set(df.loc[df.method.isin(FAMILIES), "fit"].fillna("eval_set")) if "fit" in df \
        else {"eval_set"}
    if fits == {"all"}:
        return ("distboost's models are fitted on all training rows of each split with their "
                "own early stopping (`--fit all`), as quantile regression forests and "
                "Treeffuser; CatBoost's and NGBoost's rows come from the race of "
                "`benchmarks/uci.py`, which holds out 20 % of the rows to stop early on.")
    return ("distboost's models hold out 20 % of each split's training rows as `eval_set` "
            "(`--fit eval_set`, the protocol of `benchmarks/uci.py`, and CatBoost's and NGBoost's "
            "rows); quantile regression forests and Treeffuser fit on all of them.")


def _auto_lines(df: pd.DataFrame, crps: pd.DataFrame) -> list[str]:
    """``family="auto"`` against the best peer per dataset, its choices and fit-time ratio."""
    if "auto" not in crps.columns:
        return []
    peers = [m for m in ("qrf", "treeffuser", "catboost", "ngboost") if m in crps.columns]
    auto = df[df.method == "auto"]
    lines = ["", '`family="auto"` against the best peer (' + ", ".join(peers)
             + "): mean test CRPS, the families it chose (splits), and its fit time over "
             "Treeffuser's (ratio of the mean fit seconds):", "",
             "| dataset | auto | best peer | auto <= best peer | chosen | fit time / Treeffuser |",
             "|---|---|---|---|---|---|"]
    wins = 0
    for d in sorted(auto.dataset.unique()):
        best = crps.loc[d, peers].dropna()
        peer = best.idxmin() if len(best) else ""
        win = bool(len(best)) and crps.loc[d, "auto"] <= best.min()
        wins += win
        chosen = ", ".join(f"{f} ({n})" for f, n in
                           auto[auto.dataset == d]["chosen"].value_counts().items())
        sec = df[df.dataset == d].groupby("method")["seconds"].mean()
        ratio = (f"{sec['auto'] / sec['treeffuser']:.2f}" if "treeffuser" in sec
                 and np.isfinite(sec.get("treeffuser", np.nan)) else "")
        lines.append(f"| {d} | {crps.loc[d, 'auto']:.3f} | "
                     f"{f'{best.min():.3f} ({peer})' if peer else ''} | "
                     f"{'yes' if win else 'no'} | {chosen} | {ratio} |")
    lines += ["", f"`family=\"auto\"` at or below the best peer on {wins} of "
              f"{auto.dataset.nunique()} datasets."]
    return lines


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--splits", type=int, default=5)
    parser.add_argument("--csv", default=None)
    parser.add_argument("--peers", default=None, help="comma-separated CSVs of the peers")
    parser.add_argument("--from-csv", default=None, help="only write the table from this CSV")
    parser.add_argument("--out", default=None)
    parser.add_argument("--cost", action="store_true")
    parser.add_argument("--methods", default=",".join(FAMILIES),
                        help="distboost models to run: normal, histogram, auto")
    parser.add_argument("--fit", choices=("all", "eval_set"), default="all",
                        help="fit distboost on all training rows with its own early stopping "
                        "(as the peers), or hold out 20 %% of them as eval_set")
    parser.add_argument("--auto-cost", action="store_true",
                        help="fit time of family='auto' over a default fit, 20,000 rows")
    args = parser.parse_args(argv)
    if args.cost:
        return cost()
    if args.auto_cost:
        return auto_cost()
    df = (pd.concat([pd.read_csv(f) for f in args.from_csv.split(",")], ignore_index=True)
          if args.from_csv else race(args.datasets.split(","), args.splits, args.csv,
                                     args.methods.split(","), args.fit))
    if args.peers:
        df = pd.concat([df] + [pd.read_csv(f) for f in args.peers.split(",")],
                       ignore_index=True)
    # Peers' files may hold more splits and other methods (benchmarks/uci.py's races).
    df = df[df.dataset.isin(set(args.datasets.split(","))) & (df.split < args.splits)
            & df.method.isin(METHODS)]
    md = markdown(df, argv)
    print(md)
    if args.out:
        _sections.write_section(Path(args.out), md, START, END)
    return df


if __name__ == "__main__":
    main()
