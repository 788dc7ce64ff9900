"""Forecast a panel held in a Dask DataFrame with one global model trained on a cluster.

Generates a panel of daily series (levels from 10 to 1,000, a weekly season, noise of a
tenth of the level), keeps its last ``horizon`` days apart, starts a two-worker
``distributed.LocalCluster`` (or connects to a scheduler), fits
:class:`distboost.dask.DaskForecaster` on the rest and prints the plan, the scaled pinball
loss of the held-out days against the in-process ``Forecaster`` on the same panel, and the
times.  ``docs/dask.md`` says what runs where.

Run: ``python examples/dask_forecasting.py [--series N] [--length T] [--horizon H]
[--scheduler ADDRESS]`` (offline; about a minute for the defaults on two cores).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

LEVELS = (0.05, 0.25, 0.5, 0.75, 0.95)


def make_panel(n_series: int, length: int, seed: int = 0) -> pd.DataFrame:
    """Long frame (id, time, y) of daily series with a weekly season."""
    rng = np.random.default_rng(seed)
    t = np.arange(length)
    level = 10 ** rng.uniform(1, 3, n_series)[:, None]
    phase = rng.uniform(0, 2 * np.pi, n_series)[:, None]
    y = level * (1 + 0.3 * np.sin(2 * np.pi * t / 7 + phase)
                 + 0.1 * rng.normal(size=(n_series, length)))
    ids = np.repeat([f"s{i:04d}" for i in range(n_series)], length)
    times = np.tile(pd.date_range("2020-01-01", periods=length, freq="D"), n_series)
    return pd.DataFrame({"id": ids, "time": times, "y": y.ravel()})


def pinball(q: pd.DataFrame, test: pd.DataFrame) -> float:
    """Mean pinball loss over LEVELS, each series divided by its mean level."""
    m = q.merge(test, on=["id", "time"])
    scale = m["id"].map(test.groupby("id")["y"].mean())
    return float(np.mean([np.maximum(a * (m["y"] - m[f"q{a:g}"]),
                                     (a - 1) * (m["y"] - m[f"q{a:g}"])) / scale
                          for a in LEVELS]))


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=100)
    ap.add_argument("--length", type=int, default=400)
    ap.add_argument("--horizon", type=int, default=14)
    ap.add_argument("--scheduler", default=None, help="a scheduler's address (default: a "
                    "two-worker LocalCluster)")
    args = ap.parse_args(argv)
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from distboost.dask import DaskForecaster
    from distboost.forecasting import Forecaster

    panel = make_panel(args.series, args.length)
    cut = panel["time"] >= panel["time"].max() - pd.Timedelta(days=args.horizon - 1)
    train, test = panel[~cut].reset_index(drop=True), panel[cut].reset_index(drop=True)
    cluster = None
    if args.scheduler is None:
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0")
    client = Client(args.scheduler or cluster)
    try:
        ddf = dd.from_pandas(train, npartitions=4, sort=False)
        t0 = time.perf_counter()
        fc = DaskForecaster(horizon=args.horizon, random_state=0, client=client).fit(ddf)
        t1 = time.perf_counter()
        q = fc.predict_quantiles(list(LEVELS)).compute()
        t2 = time.perf_counter()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    t3 = time.perf_counter()
    local = Forecaster(horizon=args.horizon, random_state=0).fit(train)
    q_local = local.predict_quantiles(list(LEVELS))
    t4 = time.perf_counter()
    res = {"plan": {"strategy": fc.strategy_, "family": repr(fc.family_),
                    "lags": list(fc.lags_)},
           "pinball_dask": pinball(q, test), "pinball_in_process": pinball(q_local, test),
           "fit_s": t1 - t0, "forecast_s": t2 - t1, "in_process_s": t4 - t3}
    print(f"plan (chosen on {len(fc.plan_ids_)} series): {res['plan']}")
    print(f"scaled pinball loss of the last {args.horizon} days: Dask "
          f"{res['pinball_dask']:.4f}, in-process {res['pinball_in_process']:.4f}")
    print(f"Dask fit {res['fit_s']:.1f} s, forecasts {res['forecast_s']:.1f} s; in-process "
          f"fit and forecasts {res['in_process_s']:.1f} s")
    return res


if __name__ == "__main__":
    main()
