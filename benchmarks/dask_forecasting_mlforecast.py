"""mlforecast's distributed forecaster on the panel of ``benchmarks/dask_forecasting.py``
(issue 49, item 4: the peer side by side, on the same cluster shape and data).

``DistributedMLForecast`` (mlforecast 1.1) fits models on a Dask cluster and returns point
forecasts; it takes no conformal intervals in its distributed form (``fit`` and ``predict``
have no ``prediction_intervals`` or ``level``).  Its quantiles here are what a user of it would
fit: one ``DaskLGBMForecast`` (``lightgbm.dask``) with LightGBM's quantile objective per level
of ``LEVELS``, each forecast recursively on its own values (mlforecast's strategy), the levels
sorted per row.  The same features as distboost's defaults on hourly data: lags 1-24, 48 and
168, hour and day of week.  The same series (``_synthetic_panel.make_panel``), written as
Parquet files of whole series and read with ``dd.read_parquet``; a ``LocalCluster`` of
``--workers`` workers of one thread; the score of ``dask_forecasting.py`` (the mean pinball
loss of the 9 levels, each series divided by its level) and the true law's.

Run in the ``bench`` environment (mlforecast pins pandas < 3; with ``dask[distributed]``):
``python benchmarks/dask_forecasting_mlforecast.py [--series 1000] [--length 500]
[--series-per-file 250]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _synthetic_panel import LEVELS, quantile_score, write_panel  # noqa: E402

H = 24


def main(argv=None) -> dict:
    import dask.dataframe as dd
    from distributed import Client, LocalCluster
    from mlforecast.distributed import DistributedMLForecast
    from mlforecast.distributed.models.dask.lgb import DaskLGBMForecast

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=1000)
    ap.add_argument("--length", type=int, default=500)
    ap.add_argument("--series-per-file", type=int, default=250)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    with tempfile.TemporaryDirectory() as folder:
        test, loc, sd = write_panel(folder, args.series, args.length, H, args.series_per_file,
                                    columns={"id": "unique_id", "time": "ds"})
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                               dashboard_address=":0", silence_logs=40)
        client = Client(cluster)
        try:
            models = {f"q{a:g}": DaskLGBMForecast(objective="quantile", alpha=a, verbosity=-1)
                      for a in LEVELS}
            fcst = DistributedMLForecast(models=models, freq="h",
                                         lags=[*range(1, 25), 48, 168],
                                         date_features=["hour", "dayofweek"],
                                         num_partitions=args.workers)
            t0 = time.perf_counter()
            fcst.fit(dd.read_parquet(folder))
            t1 = time.perf_counter()
            pred = fcst.predict(H).compute()
            t2 = time.perf_counter()
        finally:
            client.close()
            cluster.close()
    pred = pred.assign(id=pred["unique_id"].astype(str),
                       time=pd.to_datetime(pred["ds"].astype(str)))
    merged = test.merge(pred, on=["id", "time"], how="left")
    cols = [f"q{a:g}" for a in LEVELS]
    q = np.sort(merged[cols].to_numpy(dtype=np.float64, na_value=np.nan), axis=1)
    level = test.groupby("id")["y"].transform("mean").to_numpy()
    truth = stats.norm.ppf(np.asarray(LEVELS)[None, :], loc[:, None], sd[:, None])
    y = test["y"].to_numpy()
    res = {"rows": args.series * args.length, "fit_s": t1 - t0, "forecast_s": t2 - t1,
           "missing_rows": int(np.isnan(q).any(axis=1).sum()),
           "score_mlforecast": quantile_score(q, y, level),
           "score_true": quantile_score(truth, y, level)}
    for k, v in res.items():
        print(f"{k}: {v:.4f}" if isinstance(v, float) else f"{k}: {v}", flush=True)
    return res


if __name__ == "__main__":
    main()
