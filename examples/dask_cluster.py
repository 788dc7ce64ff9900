"""Train a distributional model on a Dask cluster from partitioned Parquet.

Writes a partitioned Parquet dataset (5 million rows x 20 features by default, in a
temporary folder), starts a two-worker ``distributed.LocalCluster`` (or connects to a real
scheduler), trains :class:`distboost.dask.DaskDistributionalRegressor` from
``dask.dataframe.read_parquet`` with a held-out validation set for early stopping, prints
the progress and held-out scores, and takes the model home with ``to_local()``.

On a real cluster, start a scheduler and workers (``dask scheduler`` and
``dask worker tcp://host:8786`` on each machine, or any Dask deployment: Kubernetes, YARN,
SLURM), put the Parquet files where every worker can read them, and run::

    python examples/dask_cluster.py --scheduler tcp://host:8786 --data s3://bucket/folder/

Run: ``python examples/dask_cluster.py [--rows N] [--workers W] [--scheduler ADDRESS]
[--data FOLDER]`` (offline; a few minutes for 5 million rows on two cores).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROWS_PER_FILE = 250_000


def write_parquet(folder: Path, n_rows: int, n_features: int = 20, seed: int = 0) -> None:
    """A heteroscedastic regression dataset, one Parquet file per 250,000 rows."""
    for i, start in enumerate(range(0, n_rows, ROWS_PER_FILE)):
        n = min(ROWS_PER_FILE, n_rows - start)
        rng = np.random.default_rng([seed, i])
        X = rng.normal(size=(n, n_features)).astype(np.float32)
        y = X[:, 0] + np.sin(2 * X[:, 1]) + np.exp(0.4 * X[:, 2]) * rng.normal(size=n)
        frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(n_features)])
        frame["region"] = pd.Categorical(rng.choice(["north", "south", "east"], n))
        frame["y"] = y + np.where(frame["region"] == "north", 1.0, 0.0)
        frame.to_parquet(folder / f"part-{i:04d}.parquet")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler", default=None,
                        help="address of a running Dask scheduler (default: a LocalCluster)")
    parser.add_argument("--data", default=None,
                        help="a Parquet folder with feature columns and 'y' (default: write "
                             "a synthetic one to a temporary folder)")
    parser.add_argument("--n-estimators", type=int, default=300)
    args = parser.parse_args(argv)

    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from distboost.dask import DaskDistributionalRegressor

    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if data is None:
            data = Path(tmp)
            t = time.perf_counter()
            write_parquet(data, args.rows)
            print(f"wrote {args.rows:,} rows to {data} in {time.perf_counter() - t:.1f} s")
        if args.scheduler:
            cluster, client = None, Client(args.scheduler)
        else:
            cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                                   processes=True, dashboard_address=":0", silence_logs=40)
            client = Client(cluster)
        try:
            df = dd.read_parquet(data)
            X, y = df.drop(columns="y"), df["y"]
            print(f"{df.npartitions} partitions on {len(client.scheduler_info()['workers'])} "
                  "workers; training (validation loss every 25 rounds) ...", flush=True)
            model = DaskDistributionalRegressor(
                family="normal", n_estimators=args.n_estimators, learning_rate=0.1,
                verbose=25, random_state=0, client=client)
            t = time.perf_counter()
            model.fit(X, y)
            fit_s = time.perf_counter() - t
            print(f"fit in {fit_s:.1f} s: {model.n_iter_} rounds run, best round "
                  f"{model.best_iteration_} ({model.stopped_reason_}); dispersion shift "
                  f"{model.dispersion_shift_:+.3f}")
            # Held-out scores on fresh rows (a distributed mean log-likelihood).
            test_folder = Path(tmp) / "test"
            test_folder.mkdir()
            write_parquet(test_folder, min(args.rows, 500_000), seed=1)
            test = dd.read_parquet(test_folder)
            Xt, yt = test.drop(columns="y"), test["y"]
            nll = -model.score(Xt, yt)
            interval = model.predict_interval(Xt, 0.9).compute()
            y_test = yt.compute().to_numpy()
            coverage = float(np.mean((interval["lower"].to_numpy() <= y_test)
                                     & (y_test <= interval["upper"].to_numpy())))
            print(f"held-out NLL {nll:.4f}; 90 % interval coverage {coverage:.3f}")
            print(model.predict_params(Xt).head())
            local = model.to_local()  # an in-process DistributionalRegressor
            print(f"to_local(): {type(local).__name__} with {local.best_iteration_} rounds")
        finally:
            client.close()
            if cluster is not None:
                cluster.close()
    return {"nll": nll, "coverage_90": coverage, "fit_seconds": fit_s,
            "best_iteration": model.best_iteration_}


if __name__ == "__main__":
    main()
