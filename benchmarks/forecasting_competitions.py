"""Forecasting on the competitions' own data: distboost's defaults beside statsforecast and
mlforecast (issue 47).

Three panels of ``../shared/data/forecasting/`` (their README gives the windows and the
published scores), each trained on its training file and scored on its official test window
(never used for fitting or choosing anything):

* ``m5`` - M5 store x department (70 daily series, 28 days): WSPL at the M5 uncertainty
  levels (0.005 ... 0.995), series weighted by their dollar sales of the last 28 training
  days (``value * sell_price``); the published level-9 scores beside it (winner 0.1589, best
  0.1545, ARIMA 0.2010, ETS 0.2064, seasonal naive 0.2601); known-future covariates: the
  department's mean price, the events and SNAP days;
* ``tourism`` - Tourism monthly (366 series, 24 months) and ``m3`` - M3 monthly (1,428
  series, 18 months): MASE (season 12), MSIS at 95 % (M4's scaled interval score) and the
  coverage of the central 90 % interval;
* ``tourism_quarterly`` and ``m3_quarterly``: another frequency, on which no default was
  chosen: the same two panels summed over three months (blocks aligned at each series'
  forecast origin, dated as consecutive quarters; 8 and 6 quarters ahead), scored as
  above with season 4.  No published scores: the peers run beside.

Methods, each in a child process of its own (its peak memory measured there):

* ``distboost``: ``Forecaster(horizon=H)`` with the panel's column names and covariates
  only, every other option at its default; its quantiles from ``predict_quantiles`` and 200
  joint paths from ``sample_paths``;
* ``AutoETS``, ``AutoARIMA`` (statsforecast, ``season_length`` 7 / 12) with their prediction
  intervals at the levels needed (99, 95, 90, 67, 50: the quantiles 0.005 ... 0.995 and the
  5 / 95 % ends), the point forecast as the median;
* ``mlforecast`` LightGBM (lags 1 .. season, and two seasons where the shortest series
  leaves two conformal windows; the calendar of the frequency) with conformal intervals
  (``PredictionIntervals(n_windows, h=H)``, three windows where the shortest series allows)
  at the same levels; it cannot run where the shortest series is too short for two windows
  (M3: 48 values, 18 months ahead).

Joint paths: the variogram score of order 0.5 (``db.metrics.variogram_score``) of
distboost's 200 paths of every series, against the same marginals drawn independently (each
step's draws permuted across paths separately); lower is better.

Writes ``--csv`` (one row per panel and method) and, with ``--out``, a markdown section
between ``<!-- competitions:start -->`` and ``<!-- competitions:end -->``.  The peers come
from the ``bench`` extra (statsforecast and mlforecast pin pandas < 3: run this script in a
virtual environment of its own, ``make bench``); a missing peer leaves its rows out.

Run: ``python benchmarks/forecasting_competitions.py [--panels m5 tourism m3] [--methods
distboost AutoETS AutoARIMA mlforecast] [--csv FILE] [--out docs/benchmarks.md] [--include
CSV ...] [--options JSON]`` (``--include``: rows of earlier runs, e.g. the peers' from their
own venv, for the methods not run now; ``--options``: Forecaster options for an experiment
beside the defaults, e.g. ``'{"family": "studentt"}'``, recorded in the row's ``detail``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _sections  # noqa: E402  (benchmarks/_sections.py: the page's section)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data" / "forecasting"
M5_LEVELS = (0.005, 0.025, 0.165, 0.25, 0.5, 0.75, 0.835, 0.975, 0.995)
#: The quantiles every method gives: M5's and the ends of the 90 % and 95 % intervals.
LEVELS = tuple(sorted(set(M5_LEVELS) | {0.05, 0.95}))
PANELS = {
    "m5": {"folder": "m5_store_dept", "horizon": 28, "season": 7, "freq": "D",
           "covariates": ["sell_price", "event_name_1_numeric", "event_type_1_numeric",
                          "event_name_2_numeric", "event_type_2_numeric", "snap_CA",
                          "snap_TX", "snap_WI"]},
    "tourism": {"folder": "tourism_monthly", "horizon": 24, "season": 12, "freq": "MS",
                "covariates": []},
    "m3": {"folder": "m3_monthly", "horizon": 18, "season": 12, "freq": "MS",
           "covariates": []},
    # Another frequency, for defaults not found on the panels above: the monthly panels
    # summed over three months (blocks aligned at each series' forecast origin, dated as
    # consecutive quarters), scored as the monthly ones with season 4.
    "tourism_quarterly": {"folder": "tourism_monthly", "horizon": 8, "season": 4,
                          "freq": "QS", "covariates": [], "aggregate": 3},
    "m3_quarterly": {"folder": "m3_monthly", "horizon": 6, "season": 4, "freq": "QS",
                     "covariates": [], "aggregate": 3},
}
#: The environment variable that hands ``--options`` to the distboost child.
OPTIONS_ENV = "DISTBOOST_COMPETITION_OPTIONS"
PUBLISHED_M5 = {"M5 uncertainty winner": 0.15891, "best at this level": 0.15450,
                "ARIMA (M5 benchmark)": 0.20099, "ETS (M5 benchmark)": 0.20644,
                "seasonal naive (M5 benchmark)": 0.26009}
METHODS = ("distboost", "AutoETS", "AutoARIMA", "mlforecast")


def load(panel: str):
    """Training and test frames (columns id, time, y and the covariates), sorted."""
    spec = PANELS[panel]
    cols = ["series_id", "date", "value", *spec["covariates"]]
    rename = {"series_id": "id", "date": "time", "value": "y"}
    train = pd.read_parquet(DATA / spec["folder"] / "train.parquet")[cols].rename(
        columns=rename).sort_values(["id", "time"]).reset_index(drop=True)
    test = pd.read_parquet(DATA / spec["folder"] / "test.parquet")[cols].rename(
        columns=rename).sort_values(["id", "time"]).reset_index(drop=True)
    train["id"] = train["id"].astype(str)
    test["id"] = test["id"].astype(str)
    if spec.get("aggregate"):
        return aggregate(train, test, spec["aggregate"])
    return train, test


def aggregate(train, test, k: int):
    """Each series summed over blocks of ``k`` consecutive values, the blocks aligned at its
    forecast origin (the oldest incomplete block dropped), dated as consecutive quarters
    ending in the quarter of the last training value (nominal dates, as M3's are)."""
    origin = train.groupby("id", sort=True)["time"].max().dt.to_period("Q")
    out = []
    for frame, back in ((train, True), (test, False)):
        g = frame.groupby("id", sort=True)
        pos = g.cumcount(ascending=not back).to_numpy()  # from the origin, either way
        block = pos // k
        size = g["y"].transform("size").to_numpy()
        keep = block < size // k if back else np.ones(len(frame), dtype=bool)
        parts = pd.DataFrame({"id": frame["id"].to_numpy()[keep], "block": block[keep],
                              "y": frame["y"].to_numpy()[keep]})
        summed = parts.groupby(["id", "block"], sort=True)["y"].agg(["sum", "size"])
        summed = summed[summed["size"] == k].reset_index()
        step = -summed["block"] if back else summed["block"] + 1
        quarter = origin.loc[summed["id"]].to_numpy() + step.to_numpy()
        out.append(pd.DataFrame({"id": summed["id"], "y": summed["sum"],
                                 "time": pd.PeriodIndex(quarter, freq="Q").to_timestamp()})
                   .sort_values(["id", "time"]).reset_index(drop=True)[["id", "time", "y"]])
    return out[0], out[1]


# ---------------------------------------------------------------------- methods
def run_distboost(panel: str, train, test) -> dict:
    from distboost.forecasting import Forecaster

    spec = PANELS[panel]
    H, cov = spec["horizon"], spec["covariates"]
    X = train[["id", "time", *cov]] if cov else None
    X_future = test[["id", "time", *cov]] if cov else None
    options = json.loads(os.environ.get(OPTIONS_ENV, "{}"))
    t0 = time.perf_counter()
    fc = Forecaster(horizon=H, **options).fit(train[["id", "time", "y"]], X=X)
    t1 = time.perf_counter()
    q = fc.predict_quantiles(list(LEVELS), X_future=X_future)
    paths = fc.sample_paths(200, X_future=X_future)  # (200, series, H)
    t2 = time.perf_counter()
    q = q.sort_values(["id", "time"])
    out = {"quantiles": q[[f"q{a:g}" for a in LEVELS]].to_numpy(), "fit_s": t1 - t0,
           "predict_s": t2 - t1, "paths": paths, "ids": list(fc.ids_),
           "detail": {"options": options, "strategy": fc.strategy_,
                      "strategy_scores": fc.strategy_scores_,
                      "lags": list(fc.lags_), "rolling": list(fc.rolling_),
                      "scale": fc.scale_, "calibrated": fc.calibration_ is not None,
                      "series_id": bool(fc.series_id_),
                      "series_id_scores": None if fc.series_id_scores_ is None else {
                          str(k): v for k, v in fc.series_id_scores_.items()},
                      "family": repr(fc.family_), "family_scores": fc.family_scores_,
                      "backtest_coverage_90": fc.calibration_coverage_,
                      "rounds": int(fc.model_.n_iter_)}}
    return out


def _interval_levels() -> list[int]:
    """The central interval levels (percent) whose ends are :data:`LEVELS`."""
    return sorted({round(100 * (1 - 2 * a)) for a in LEVELS if a < 0.5})


def _from_intervals(fc: pd.DataFrame, name: str) -> np.ndarray:
    """Quantiles (rows, len(LEVELS)) from a Nixtla frame's ``name-lo-L`` / ``name-hi-L``
    columns and its point forecast (the median)."""
    cols = []
    for a in LEVELS:
        if a == 0.5:
            cols.append(fc[name].to_numpy())
            continue
        level = round(100 * abs(1 - 2 * a))
        cols.append(fc[f"{name}-{'lo' if a < 0.5 else 'hi'}-{level}"].to_numpy())
    return np.column_stack(cols)


def _nixtla_frame(train):
    return train.rename(columns={"id": "unique_id", "time": "ds"})


def run_statsforecast(panel: str, train, test, model: str) -> dict:
    from statsforecast import StatsForecast
    from statsforecast.models import AutoARIMA, AutoETS

    spec = PANELS[panel]
    m = {"AutoETS": AutoETS, "AutoARIMA": AutoARIMA}[model](season_length=spec["season"])
    sf = StatsForecast(models=[m], freq=spec["freq"], n_jobs=1)
    t0 = time.perf_counter()
    fc = sf.forecast(df=_nixtla_frame(train)[["unique_id", "ds", "y"]], h=spec["horizon"],
                     level=_interval_levels())
    t1 = time.perf_counter()
    fc = fc.reset_index() if "unique_id" not in fc.columns else fc
    fc = fc.sort_values(["unique_id", "ds"])
    return {"quantiles": _from_intervals(fc, model), "fit_s": t1 - t0, "predict_s": 0.0}


def run_mlforecast(panel: str, train, test) -> dict:
    import lightgbm as lgb
    from mlforecast import MLForecast
    from mlforecast.utils import PredictionIntervals

    spec = PANELS[panel]
    H, s, cov = spec["horizon"], spec["season"], spec["covariates"]
    shortest = int(train.groupby("id").size().min())
    lags = list(range(1, s + 1))
    if (shortest - 2 * s - 1) // H >= 2:  # two seasons where two conformal windows remain
        lags.append(2 * s)
    windows = min(3, (shortest - max(lags) - 1) // H)  # as many as the series allow
    if windows < 2:
        raise ValueError(f"mlforecast's conformal intervals need two windows of {H} values "
                         f"after the lags; the shortest series has {shortest} values")
    date_features = ["dayofweek", "month"] if spec["freq"] == "D" else ["month"]
    fcst = MLForecast(models={"lgbm": lgb.LGBMRegressor(verbosity=-1, random_state=0)},
                      freq=spec["freq"], lags=lags, date_features=date_features)
    df = _nixtla_frame(train)
    t0 = time.perf_counter()
    fcst.fit(df, static_features=[], prediction_intervals=PredictionIntervals(
        n_windows=windows, h=H))
    t1 = time.perf_counter()
    X_df = _nixtla_frame(test)[["unique_id", "ds", *cov]] if cov else None
    fc = fcst.predict(H, X_df=X_df, level=_interval_levels())
    t2 = time.perf_counter()
    fc = fc.sort_values(["unique_id", "ds"])
    return {"quantiles": _from_intervals(fc, "lgbm"), "fit_s": t1 - t0, "predict_s": t2 - t1}


# ---------------------------------------------------------------------- scores
def scores(panel: str, train, test, q: np.ndarray) -> dict:
    """The panel's competition scores of quantiles ``q`` (rows of ``test``, LEVELS)."""
    import distboost as db

    spec = PANELS[panel]
    H = spec["horizon"]
    ids = test["id"].unique()
    y = test["y"].to_numpy().reshape(len(ids), H)
    Q = q.reshape(len(ids), H, len(LEVELS))
    hist = [g.to_numpy() for _, g in train.groupby("id", sort=True)["y"]]
    col = {a: j for j, a in enumerate(LEVELS)}
    lo90, hi90 = Q[..., col[0.05]], Q[..., col[0.95]]
    out = {"coverage_90": float(np.mean((y >= lo90) & (y <= hi90)))}
    if panel == "m5":
        last = train.groupby("id", sort=True).tail(28)
        weights = (last["y"] * last["sell_price"]).groupby(last["id"], sort=True).sum()
        m5 = [col[a] for a in M5_LEVELS]
        out["wspl"] = float(db.metrics.wspl(y, Q[..., m5], list(M5_LEVELS), hist,
                                            weights.to_numpy()))
        return out
    m = spec["season"]
    out["mase"] = float(np.mean(db.metrics.mase(y, Q[..., col[0.5]], hist, m)))
    out["msis"] = float(np.mean(db.metrics.msis(y, Q[..., col[0.025]], Q[..., col[0.975]],
                                                hist, m, alpha=0.05)))
    return out


def path_scores(test, H: int, paths: np.ndarray) -> dict:
    """Variogram score (p = 0.5) of the joint paths against independent marginals."""
    import distboost as db

    y = test["y"].to_numpy().reshape(-1, H)  # (series, H)
    rng = np.random.default_rng(0)
    indep = paths.copy()
    for s in range(indep.shape[1]):
        for h in range(H):  # a loop over series and steps of one benchmark, not a hot path
            indep[:, s, h] = rng.permutation(indep[:, s, h])
    joint = float(np.mean(db.metrics.variogram_score(paths, y, p=0.5)))
    independent = float(np.mean(db.metrics.variogram_score(indep, y, p=0.5)))
    return {"variogram_joint": joint, "variogram_independent": independent}


# ---------------------------------------------------------------------- children
def child(panel: str, method: str) -> None:
    warnings.simplefilter("ignore")
    train, test = load(panel)
    if method == "distboost":
        res = run_distboost(panel, train, test)
    elif method in ("AutoETS", "AutoARIMA"):
        res = run_statsforecast(panel, train, test, method)
    else:
        res = run_mlforecast(panel, train, test)
    row = {"panel": panel, "method": method, **scores(panel, train, test, res["quantiles"]),
           "fit_s": res["fit_s"], "predict_s": res["predict_s"],
           "max_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6}
    if "paths" in res:
        row.update(path_scores(test, PANELS[panel]["horizon"], res["paths"]))
        row["detail"] = json.dumps(res["detail"])
    print("RESULT " + json.dumps(row), flush=True)


def run_child(panel: str, method: str) -> dict | None:
    out = subprocess.run([sys.executable, __file__, "--child", panel, method],
                         capture_output=True, text=True,
                         env={**os.environ, "PYTHONUNBUFFERED": "1"})
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
    print(f"  {method} on {panel} failed: {' | '.join(tail)}", flush=True)
    return None


def markdown(table: pd.DataFrame, argv) -> str:
    lines = [f"Run: `python benchmarks/forecasting_competitions.py {' '.join(argv)}` "
             f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores).", ""]
    for panel, g in table.groupby("panel", sort=False):
        metric = ["wspl"] if panel == "m5" else ["mase", "msis"]
        cols = [*metric, "coverage_90", "fit_s", "predict_s", "max_rss_gb"]
        lines += [f"**{panel}**", "", "| method | " + " | ".join(cols) + " |",
                  "|---|" + "---|" * len(cols)]
        for _, r in g.iterrows():
            lines.append(f"| {r['method']} | " + " | ".join(
                f"{r[c]:.4f}" if c in metric or c == "coverage_90" else f"{r[c]:.1f}"
                for c in cols) + " |")
        if panel == "m5":
            for name, v in PUBLISHED_M5.items():
                lines.append(f"| {name} (published) | {v:.4f} |" + " |" * (len(cols) - 1))
        d = g[g["method"] == "distboost"]
        if len(d) and "variogram_joint" in d:
            r = d.iloc[0]
            lines += ["", f"distboost's joint paths: variogram score {r['variogram_joint']:.4g} "
                      f"against {r['variogram_independent']:.4g} for independent marginals; "
                      f"{r.get('detail', '')}"]
        lines.append("")
    return "\n".join(lines)


def main(argv=None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--panels", nargs="+", default=list(PANELS), choices=list(PANELS))
    ap.add_argument("--methods", nargs="*", default=list(METHODS), choices=list(METHODS),
                    help="methods to run now (none: only the --include rows)")
    ap.add_argument("--csv", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--include", nargs="+", default=[],
                    help="CSV files of earlier runs (a peer's venv, a slow method) whose rows "
                         "for methods not run now join the table")
    ap.add_argument("--options", default=None,
                    help="JSON of Forecaster options for distboost (an experiment; default: "
                         "its defaults)")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.options is not None:
        json.loads(args.options)  # a clear error before any child runs
        os.environ[OPTIONS_ENV] = args.options
    if args.child:
        child(*args.child)
        return pd.DataFrame()
    rows = []
    for panel in args.panels:
        for method in args.methods:
            row = run_child(panel, method)
            if row is not None:
                rows.append(row)
                print(json.dumps(row), flush=True)
    table = pd.DataFrame(rows)
    for path in args.include:  # rows measured earlier, for what was not run now
        earlier = pd.read_csv(path)
        done = set(zip(table.get("panel", []), table.get("method", []), strict=True))
        keep = [(p, m) not in done and p in args.panels
                for p, m in zip(earlier["panel"], earlier["method"], strict=True)]
        table = pd.concat([table, earlier[keep]], ignore_index=True)
    if len(table):
        order = {p: i for i, p in enumerate(args.panels)}
        table = table.sort_values("panel", key=lambda c: c.map(order), kind="stable")
    if args.csv:
        table.to_csv(args.csv, index=False)
    if args.out and len(table):
        start, end = "<!-- competitions:start -->", "<!-- competitions:end -->"
        block = (f"{start}\n### Competition panels (`benchmarks/forecasting_competitions.py`)"
                 f"\n\n{markdown(table, sys.argv[1:])}\n{end}")
        _sections.write_section(Path(args.out), block, start, end)
    return table


if __name__ == "__main__":
    main()
