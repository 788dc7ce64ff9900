"""Per-parameter tree options: does a different rule for the dispersion parameter pay off?

On the four small UCI sets (concrete, energy, wine-quality-red, yacht; the Hernandez-Lobato &
Adams 2015 splits), the default Normal model (one booster, the same trees for ``loc`` and
``scale``) is compared with documented per-parameter rules for the scale's trees:

- ``small_scale``: ``param_options={"scale": {"num_leaves": 4}}`` (a spread that varies
  smoothly: few leaves per tree);
- ``small_slow_scale``: ``{"scale": {"num_leaves": 4, "learning_rate": 0.025}}`` (also half
  the default rate: the scale's gradient is noisier than the location's, one squared
  residual per row).

Each model is the estimator with its defaults otherwise (rounds by 5-fold cross-validation
below 1,000 training rows, a held-out split above; calibration), seeded by the split, and is
scored on the split's test rows: NLL, CRPS, 90% coverage and fit seconds.  A rule would be
adopted as the default only if it lowers the mean test NLL on all four sets and its paired
NLL difference pooled over every split is below zero by more than two standard errors.

The speed of the per-parameter path is measured on its own, in this process: the same model
fitted through the single booster and through one booster per parameter with identical
options (``param_options={"scale": {"features": <every column>}}`` forces the per-parameter
path and grows the same trees), ``early_stopping=False``, a fixed number of rounds.

Writes a markdown section into ``--out`` between ``<!-- param-options:start -->`` and
``<!-- param-options:end -->`` (other sections of ``docs/benchmarks.md`` stay).

Run: ``python benchmarks/param_options.py [--data ../shared/data/uci] [--splits 20]
[--datasets a,b] [--out docs/benchmarks.md] [--csv FILE] [--from-csv FILE]``
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import _sections  # noqa: E402  (benchmarks/_sections.py: the page's section)

import distboost as db  # noqa: E402
from distboost.datasets import load_uci  # noqa: E402

warnings.filterwarnings("ignore")
DATASETS = ("concrete", "energy", "wine-quality-red", "yacht")
RULES = {
    "default": None,
    "small_scale": {"scale": {"num_leaves": 4}},
    "small_slow_scale": {"scale": {"num_leaves": 4, "learning_rate": 0.025}},
}
START, END = "<!-- param-options:start -->", "<!-- param-options:end -->"


def run_split(X, y, train, test, seed: int) -> list[dict]:
    rows = []
    for name, options in RULES.items():
        model = db.DistributionalRegressor(random_state=seed, param_options=options)
        t0 = time.perf_counter()
        model.fit(X[train], y[train])
        seconds = time.perf_counter() - t0
        dist = model.predict_dist(X[test])
        lo, hi = dist.interval(0.9).T
        yt = y[test]
        rows.append({"method": name, "nll": -model.score(X[test], yt),
                     "crps": float(np.mean(db.metrics.crps_normal(
                         yt, dist.params["loc"], dist.params["scale"]))),
                     "coverage_90": float(np.mean((yt >= lo) & (yt <= hi))),
                     "rounds": model.best_iteration_, "seconds": seconds})
    return rows


def speed(n: int, p: int = 8, rounds: int = 200, repeats: int = 5) -> dict:
    """Seconds of one fit through the single booster and through the per-parameter path
    (identical trees), best of ``repeats`` interleaved fits."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.exp(0.5 * X[:, 1]) * rng.normal(size=n)
    paths = {"single": None, "per_parameter": {"scale": {"features": list(range(p))}}}
    times = {path: [] for path in paths}
    raws = {}
    for _ in range(repeats):  # interleaved, so that a change of load hits both
        for path, options in paths.items():
            model = db.DistributionalRegressor(n_estimators=rounds, early_stopping=False,
                                               random_state=0, param_options=options)
            t0 = time.perf_counter()
            model.fit(X, y)
            times[path].append(time.perf_counter() - t0)
            raws[path] = model.predict_raw(X[:1000])
    out = {path: (min(times[path]), raws[path]) for path in paths}
    same = float(np.abs(out["single"][1] - out["per_parameter"][1]).max())
    return {"rows": n, "single_s": out["single"][0], "per_parameter_s": out["per_parameter"][0],
            "ratio": out["per_parameter"][0] / out["single"][0], "max_raw_difference": same}


def table(df: pd.DataFrame) -> str:
    lines = ["| data set | rule | NLL | CRPS | 90% coverage | rounds | fit s |",
             "|---|---|---|---|---|---|---|"]
    def ms(g, col, fmt="{:.3f}"):
        return f"{fmt.format(g[col].mean())} ± {fmt.format(g[col].std(ddof=1))}"

    for (data, method), g in df.groupby(["data", "method"], sort=False):
        lines.append(f"| {data} | {method} | {ms(g, 'nll')} | {ms(g, 'crps')} | "
                     f"{g['coverage_90'].mean():.3f} | {g['rounds'].mean():.0f} | "
                     f"{g['seconds'].mean():.2f} |")
    return "\n".join(lines)


def verdict(df: pd.DataFrame) -> tuple[str, dict]:
    wide = df.pivot_table(index=["data", "split"], columns="method", values="nll")
    lines, adopt = [], {}
    for rule in RULES:
        if rule == "default":
            continue
        diff = wide[rule] - wide["default"]
        per_set = diff.groupby(level="data").mean()
        se = diff.std(ddof=1) / np.sqrt(diff.size)
        wins = bool((per_set < 0).all() and diff.mean() < -2 * se)
        adopt[rule] = wins
        sets = ", ".join(f"{d} {v:+.3f}" for d, v in per_set.items())
        lines.append(f"- `{rule}` - default, paired test NLL: {diff.mean():+.4f} ± {se:.4f} "
                     f"(SE over {diff.size} splits; per set: {sets}): "
                     f"{'wins' if wins else 'does not win'}.")
    return "\n".join(lines), adopt


def write_section(path: Path, text: str) -> None:
    """This benchmark's section of the page (``_sections.write_section``)."""
    _sections.write_section(path, f"{START}\n{text}\n{END}", START, END)


def main(argv=None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=str(ROOT.parent / "shared" / "data" / "uci"))
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--speed-rows", default="1000,20000")
    parser.add_argument("--out", default=None)
    parser.add_argument("--csv", default=None)
    parser.add_argument("--from-csv", default=None,
                        help="score rows of an earlier run (no refits; speed is measured)")
    args = parser.parse_args(argv)
    if args.from_csv:
        df = pd.read_csv(args.from_csv)
        args.splits = int(df["split"].nunique())
        return report(df, args)
    rows = []
    warm = np.random.default_rng(0).normal(size=(200, 3))  # imports and first-call costs
    db.DistributionalRegressor(n_estimators=5, param_options=RULES["small_scale"]).fit(
        warm, warm[:, 0])
    for name in args.datasets.split(","):
        for split in range(args.splits):
            X, y, train, test = load_uci(Path(args.data) / name, split=split)
            for row in run_split(X, y, train, test, seed=split):
                rows.append({"data": name, "split": split, **row})
            print(f"{name} split {split} done", flush=True)
    df = pd.DataFrame(rows)
    if args.csv:
        df.to_csv(args.csv, index=False)
    return report(df, args)


def report(df: pd.DataFrame, args) -> pd.DataFrame:
    """Print (and write to ``args.out``) the tables of a run."""
    text, _ = verdict(df)
    speeds = [speed(int(n)) for n in args.speed_rows.split(",")]
    speed_lines = ["| rows | single booster s | per-parameter s | ratio | max raw difference |",
                   "|---|---|---|---|---|"]
    speed_lines += [f"| {s['rows']:,} | {s['single_s']:.2f} | {s['per_parameter_s']:.2f} | "
                    f"{s['ratio']:.2f} | {s['max_raw_difference']:.1e} |" for s in speeds]
    section = "\n\n".join([
        f"Test scores, mean ± std over {args.splits} splits "
        f"(`python benchmarks/param_options.py --splits {args.splits}`):",
        table(df), text,
        "Speed of the per-parameter path (two boosters grown in lockstep, identical trees) "
        "against the single booster, Normal, 200 rounds, 8 features, LightGBM's threads as "
        "the estimator sets them (one below 10,000 rows), best of 5 interleaved fits, in one "
        "process:",
        "\n".join(speed_lines)])
    print(section)
    if args.out:
        write_section(Path(args.out), section)
    return df


if __name__ == "__main__":
    main()
