"""The synthetic hourly panel of the Dask forecasting benchmarks, without distboost (the peer's
script runs in the ``bench`` environment): ``benchmarks/dask_forecasting.py`` and
``benchmarks/dask_forecasting_mlforecast.py`` read the same series and score them alike."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

LEVELS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


def make_panel(first: int, count: int, length: int, horizon: int):
    """Series ``first .. first + count - 1``: training frame (id, time, y), the held-out
    values and their true Normal laws (loc, scale), each of shape (count * horizon,)."""
    rng = np.random.default_rng(first)
    t = np.arange(length + horizon)
    level = 10 ** rng.uniform(1, 3, count)[:, None]
    sd = rng.uniform(0.05, 0.2, count)[:, None] * level
    loc = level * (1 + 0.3 * np.sin(2 * np.pi * t / 24 + rng.uniform(0, 2 * np.pi, count)[:, None]))
    y = loc + sd * rng.normal(size=loc.shape)
    ids = np.array([f"s{first + i:06d}" for i in range(count)])
    hours = pd.date_range("2024-01-01", periods=length + horizon, freq="h")
    train = pd.DataFrame({"id": np.repeat(ids, length), "time": np.tile(hours[:length], count),
                          "y": y[:, :length].ravel()})
    test = pd.DataFrame({"id": np.repeat(ids, horizon),
                         "time": np.tile(hours[length:], count), "y": y[:, length:].ravel()})
    truth = (loc[:, length:].ravel(), np.broadcast_to(sd, loc.shape)[:, length:].ravel())
    return train, test, truth


def quantile_score(q: np.ndarray, y: np.ndarray, scale: np.ndarray) -> float:
    """Mean pinball loss over LEVELS (q: rows x levels), each row divided by ``scale``."""
    a = np.asarray(LEVELS)[None, :]
    d = y[:, None] - q
    return float(np.mean(np.maximum(a * d, (a - 1) * d) / scale[:, None]))


def write_panel(folder, series: int, length: int, horizon: int, per_file: int,
                columns: dict | None = None):
    """Series ``0 .. series - 1`` written to ``folder`` as Parquet files of ``per_file``
    whole series (training values; columns renamed by ``columns``); returns the held-out
    frame and the true laws' loc and scale, each (series * horizon,)."""
    tests, locs, scales = [], [], []
    for first in range(0, series, per_file):
        train, test, (loc, sd) = make_panel(first, min(per_file, series - first), length,
                                            horizon)
        train.rename(columns=columns or {}).to_parquet(Path(folder) / f"part-{first:06d}.parquet")
        tests.append(test)
        locs.append(loc)
        scales.append(sd)
    return pd.concat(tests, ignore_index=True), np.concatenate(locs), np.concatenate(scales)
