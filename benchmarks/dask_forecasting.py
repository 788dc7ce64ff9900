"""The forecaster on a Dask cluster (issue 49, item 4): a synthetic panel with a known law,
written as partitioned Parquet, read lazily, fitted and forecast by
:class:`distboost.dask.DaskForecaster` on a ``LocalCluster``.

The panel: ``--series`` series of ``--length`` hourly values (timestamps, so that the
default lags are the hourly ones); series ``i`` is
``level_i * (1 + 0.3 sin(2 pi t / 24 + phase_i)) + level_i * sd_i * e_t`` with levels from 10
to 1,000, ``sd_i`` from 0.05 to 0.2 and standard normal ``e``: each value's true law is a
Normal, so the true law's scores are known.  The last ``--horizon`` (24) values of every
series are held out; the rest is written as Parquet files of whole series
(``--series-per-file`` each) to a temporary folder and read with ``dd.read_parquet``.

Printed: the time of the fit and of the forecasts (9 quantiles and 100 joint paths of every
series, written back to Parquet on the workers), rows per second, the peak resident memory
of each worker (sampled every 0.5 s) during the fit and during the forecasts, and the
quantile score of the held-out values (the mean pinball loss of the 9 levels, each series
divided by its level; twice it approximates the CRPS) against the true law's; and, on a
``--subset`` of the series, the in-process ``Forecaster`` fitted on those series alone beside
the cluster's model (issue 49's acceptance: within 2 %).

Run: ``python benchmarks/dask_forecasting.py [--series 20000] [--length 1000] [--workers 2]
[--memory-limit 4GB] [--subset 2000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _synthetic_panel import LEVELS, make_panel, quantile_score, write_panel  # noqa: E402
from dask_scale import _watch  # noqa: E402  (benchmarks/dask_scale.py: the memory sampler)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=20_000)
    ap.add_argument("--length", type=int, default=1_000)
    ap.add_argument("--horizon", type=int, default=24)
    ap.add_argument("--series-per-file", type=int, default=500)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--memory-limit", default="4GB")
    ap.add_argument("--subset", type=int, default=2_000)
    ap.add_argument("--paths", type=int, default=100)
    args = ap.parse_args(argv)
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from distboost.dask import DaskForecaster
    from distboost.forecasting import Forecaster

    H, per = args.horizon, args.series_per_file
    res: dict = {"series": args.series, "length": args.length,
                 "rows": args.series * args.length}
    with tempfile.TemporaryDirectory() as folder:
        test, loc, sd = write_panel(folder, args.series, args.length, H, per)
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               memory_limit=args.memory_limit, dashboard_address=":0",
                               silence_logs=40)
        client = Client(cluster)
        peaks: dict = {}
        stop = threading.Event()
        watcher = threading.Thread(target=_watch, args=(client, peaks, stop), daemon=True)
        watcher.start()
        try:
            ddf = dd.read_parquet(folder)
            t0 = time.perf_counter()
            fc = DaskForecaster(horizon=H, random_state=0, client=client).fit(ddf)
            t1 = time.perf_counter()
            fit_peak = max(peaks.values(), default=0)
            peaks.clear()  # from here on: the forecasts' peak
            q = fc.predict_quantiles(list(LEVELS))
            q.to_parquet(Path(folder) / "quantiles")
            paths = fc.sample_paths(args.paths)
            paths.to_parquet(Path(folder) / "paths")
            t2 = time.perf_counter()
            q = dd.read_parquet(Path(folder) / "quantiles").compute()
        finally:
            stop.set()
            watcher.join()
            client.close()
            cluster.close()
    key = test[["id", "time"]].astype({"time": q["time"].dtype})
    q = key.merge(q, on=["id", "time"], how="left")
    cols = [f"q{a:g}" for a in LEVELS]
    level = test.groupby("id")["y"].transform("mean").to_numpy()
    truth = stats.norm.ppf(np.asarray(LEVELS)[None, :], loc[:, None], sd[:, None])
    y = test["y"].to_numpy()
    res.update(plan=f"{fc.strategy_}, {fc.family_!r}, lags {list(fc.lags_)}",
               rounds=int(fc.model_.best_iteration_), fit_s=t1 - t0, forecast_s=t2 - t1,
               rows_per_s_fit=res["rows"] / (t1 - t0),
               peak_worker_gb_fit=fit_peak / 1e9,
               peak_worker_gb_forecasts=max(peaks.values(), default=0) / 1e9,
               score_dask=quantile_score(q[cols].to_numpy(), y, level),
               score_true=quantile_score(truth, y, level))
    for k, v in res.items():  # the cluster's part now: the in-process reference is long
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}", flush=True)
    sub = test["id"].isin(np.sort(test["id"].unique())[:args.subset]).to_numpy()
    train_sub = pd.concat([make_panel(first, min(per, args.series - first), args.length, H)[0]
                           for first in range(0, min(args.subset, args.series), per)],
                          ignore_index=True)
    t3 = time.perf_counter()
    local = Forecaster(horizon=H, random_state=0).fit(train_sub)
    ql = local.predict_quantiles(list(LEVELS))
    t4 = time.perf_counter()
    ql = key[sub].merge(ql, on=["id", "time"], how="left")
    res.update(subset=int(sub.sum() // H), in_process_s=t4 - t3,
               score_dask_subset=quantile_score(q[cols].to_numpy()[sub], y[sub], level[sub]),
               score_in_process_subset=quantile_score(ql[cols].to_numpy(), y[sub], level[sub]),
               score_true_subset=quantile_score(truth[sub], y[sub], level[sub]))
    for k in ("subset", "in_process_s", "score_dask_subset", "score_in_process_subset",
              "score_true_subset"):
        v = res[k]
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}")
    return res


if __name__ == "__main__":
    main()
