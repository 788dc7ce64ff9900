"""Probabilistic forecasting: distboost's Forecaster against a seasonal-naive Gaussian, darts'
LightGBM quantile model and mlforecast's conformal intervals; joint paths; a global model of
1,000 series.

a. Rolling-origin backtests on four real series bundled with statsmodels (co2 monthly means,
   24 months ahead, season 12; elnino sea temperatures, 12 months, season 12; sunspots,
   yearly, 11 years, cycle 11; nile, yearly flows, 10 years, no season) and two simulations
   with a known truth (hourly: a daily cycle plus Gaussian AR(1) noise whose spread follows
   the hour, 24 hours ahead; daily counts: negative binomial with a weekly cycle and an
   AR(1) log-mean, 14 days ahead, season 7).  Every method is fitted once on the values
   before the first of ``K`` origins (spaced ``step`` apart at the end of the series) and
   forecasts the horizon from each origin; the same lags for everyone, the same calendar
   column (month / hour and day of week / day of week) for distboost (its
   ``date_features="auto"``), darts (``add_encoders``) and mlforecast (``date_features``).

   * seasonal naive Gaussian: ``y[T + h] ~ N(y[T + h - k s], sigma sqrt(k))``, ``k =
     ceil(h / s)``, ``sigma`` the standard deviation of the ``s``-differences of the
     training values (a random walk for ``s = 1``);
   * distboost: ``Forecaster(strategy="auto")`` with the estimator's defaults (early stopping
     on the last 10 % of the training values), ``difference=True`` for co2 (a trend),
     ``negative_binomial`` for the counts, Normal otherwise; and the same with
     ``calibrate=True`` (each step recalibrated by a backtest on the end of the training
     values, ``distboost/forecasting/calibration.py``) and with ``calibrate="auto"`` (the
     maps only where that backtest's 90 % coverage is outside [0.85, 0.95]);
   * darts ``LightGBMModel(likelihood="quantile")`` (its default quantiles 0.01 .. 0.99,
     ``output_chunk_length`` = the horizon, 500 samples), darts' ``Diff`` transformer for co2;
   * mlforecast with LightGBM and conformal intervals (``PredictionIntervals(n_windows=3,
     h)``) at levels 10, 20, ..., 90 (quantiles 0.05, 0.10, ..., 0.95),
     ``Differences([1])`` for co2; refitted at every origin (which favours it: it sees the
     values up to each origin), because ``predict(h, new_df=...)`` of mlforecast 1.1.0
     returns conformal intervals that do not hold its own point forecast (``lo-90`` above
     it on elnino), while a forecast from the end of the fitted data is sound.

   Scores over all (origin, step): CRPS (exact for the seasonal naive and distboost's
   direct forecasts, of the draws for distboost's recursive and darts' samples; none for
   mlforecast, which gives intervals), the quantile CRPS ``QCRPS = 2 / 19 sum_k
   pinball_{tau_k}`` on the 19 levels 0.05, 0.10, ..., 0.95 for every method (Laio & Tamea
   2007, HESS 11: the CRPS is the integral of twice the pinball loss over the levels), the
   coverage of the central 90 % interval, fit and forecast seconds (all origins); for the
   simulations also the CRPS of the true predictive law (the oracle).

b. Joint paths: distboost's recursive sample paths (500 per origin) against the same
   marginals drawn independently (each step's draws permuted across paths separately): the
   variogram score of order 0.5 (Scheuerer & Hamill 2015) and the energy score, both from
   ``db.metrics`` on the ensembles, mean over origins with the paired difference.

c. A global model of 1,000 hourly series of 500 values each (level, daily amplitude and
   noise scale per series, Gaussian AR(1) noise): fit ``Forecaster(strategy="recursive",
   lags=[1, 2, 24])`` and forecast 1,000 x 24 steps with 200 paths; seconds and the peak
   resident memory of the process (run in a child process), with the CRPS of the forecast and
   of the true law on the 24 values after the training window; at learning rate 0.2 (at
   most 150 rounds) and, beside it, 0.1 (300; ``BIG_CONFIGS``).

d. Coverage by step (``--parts steps``, not in the default parts): the recursive forecaster
   of each real series fitted once and backtested from 60 origins one value apart (30 for
   nile): 90 % coverage at step 1, the middle and the last step, the CRPS and the PIT's
   standard deviation.

``--peer-results a.csv,b.csv`` takes the peers' rows from an earlier run of the same protocol
(they do not depend on distboost) instead of running them.

Writes a markdown section into ``--out`` between ``<!-- forecasting:start -->`` and
``<!-- forecasting:end -->``.  ``--quick`` is a reduced run for smoke tests.  darts and
mlforecast come from the ``bench`` extra; a missing peer leaves its rows out.

Run: ``python benchmarks/forecasting.py [--quick] [--parts real,paths,big] [--out
docs/benchmarks.md]``
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import _sections  # noqa: E402

import distboost as db  # noqa: E402
from distboost.forecasting import Forecaster  # noqa: E402

LEVELS = np.round(np.arange(0.05, 0.951, 0.05), 2)  # the 19 levels of the quantile CRPS


@dataclass
class Dataset:
    name: str
    y: pd.Series
    horizon: int
    season: int
    lags: list[int]
    origins: int
    step: int
    calendar: tuple[str, ...] = ()
    family: str = "normal"
    difference: bool = False
    truth: object = None  # callable (origin position, horizon) -> (mean, sd) of the truth
    options: dict = field(default_factory=dict)


# ---------------------------------------------------------------------- data
def real_datasets(quick: bool) -> list[Dataset]:
    import statsmodels.api as sm

    co2 = sm.datasets.co2.load_pandas().data["co2"].resample("MS").mean().interpolate()
    wide = sm.datasets.elnino.load_pandas().data.set_index("YEAR")
    elnino = pd.Series(wide.to_numpy().reshape(-1), index=pd.date_range(
        f"{int(wide.index[0])}-01-01", periods=wide.size, freq="MS"))
    sun = sm.datasets.sunspots.load_pandas().data
    sunspots = pd.Series(sun["SUNACTIVITY"].to_numpy(), index=pd.date_range(
        f"{int(sun['YEAR'].iloc[0])}-01-01", periods=len(sun), freq="YS"))
    nile_df = sm.datasets.nile.load_pandas().data
    nile = pd.Series(nile_df["volume"].to_numpy(), index=pd.date_range(
        f"{int(nile_df['year'].iloc[0])}-01-01", periods=len(nile_df), freq="YS"))
    k = 3 if quick else 10
    return [
        Dataset("co2 (monthly)", co2, 24, 12, [1, 2, 12, 24], k, 6, ("month",),
                difference=True),
        Dataset("elnino (monthly)", elnino, 12, 12, [1, 2, 12], k, 6, ("month",)),
        Dataset("sunspots (yearly)", sunspots, 11, 11, list(range(1, 12)), k, 3),
        Dataset("nile (yearly)", nile, 10, 1, [1, 2, 3], min(k, 5), 2),
    ]


def hourly_simulation(n: int, seed: int = 0) -> Dataset:
    """A daily cycle plus AR(1) noise (phi 0.8) whose innovation sd follows the hour."""
    rng = np.random.default_rng(seed)
    t = pd.date_range("2023-01-01", periods=n, freq="h")
    hour = t.hour.to_numpy()
    phi = 0.8
    sd = 0.5 + 0.4 * (1 + np.sin(2 * np.pi * hour / 24))  # innovation sd of each hour
    mean = 10 + 3 * np.sin(2 * np.pi * (hour - 6) / 24)
    e = np.zeros(n)
    z = rng.normal(size=n) * sd
    for i in range(1, n):  # the AR recursion of the simulation
        e[i] = phi * e[i - 1] + z[i]
    y = pd.Series(mean + e, index=t)

    def truth(o: int, H: int):
        # y[o - 1 + h] | e[o - 1]: mean phi^h e + cycle, variance sum phi^(2(h-j)) sd_j^2
        steps = np.arange(o, o + H)
        m = mean[steps] + phi ** np.arange(1, H + 1) * e[o - 1]
        w = phi ** (2 * (np.arange(H)[:, None] - np.arange(H)[None, :]))
        var = (np.tril(w) * (sd[steps] ** 2)[None, :]).sum(axis=1)
        return m, np.sqrt(var)

    return Dataset("simulated hourly", y, 24, 24, [1, 2, 24], 0, 12, ("hour", "dayofweek"),
                   truth=truth)


def daily_counts(n: int, seed: int = 1) -> Dataset:
    rng = np.random.default_rng(seed)
    t = pd.date_range("2020-01-01", periods=n, freq="D")
    u = np.zeros(n)
    z = rng.normal(0, 0.25, n)
    for i in range(1, n):
        u[i] = 0.7 * u[i - 1] + z[i]
    log_mu = 2.0 + 0.5 * np.sin(2 * np.pi * t.dayofweek.to_numpy() / 7) + u
    y = pd.Series(rng.negative_binomial(8, 8 / (8 + np.exp(log_mu))).astype(float), index=t)
    return Dataset("simulated daily counts", y, 14, 7, [1, 2, 7, 14], 0, 7, ("dayofweek",),
                   family="negative_binomial")


# ---------------------------------------------------------------------- scores
def quantile_crps(y: np.ndarray, q: np.ndarray) -> np.ndarray:
    """``2 / K sum_k pinball_{tau_k}(y, q_k)`` on :data:`LEVELS`; q of shape (n, 19)."""
    diff = y[:, None] - q
    return 2.0 * np.mean(np.maximum(LEVELS * diff, (LEVELS - 1.0) * diff), axis=1)


def summarise(y, q, crps=None):
    q = np.asarray(q)
    lo, hi = q[:, 0], q[:, -1]
    return {"crps": None if crps is None else float(np.mean(crps)),
            "qcrps": float(quantile_crps(y, q).mean()),
            "coverage_90": float(np.mean((y >= lo) & (y <= hi)))}


def origin_positions(d: Dataset) -> np.ndarray:
    n = len(d.y)
    return n - d.horizon - d.step * np.arange(d.origins)[::-1]


# ---------------------------------------------------------------------- methods
def seasonal_naive(d: Dataset, orig: np.ndarray):
    y = d.y.to_numpy()
    train = y[:orig[0]]
    s, H = d.season, d.horizon
    sigma = np.std(train[s:] - train[:-s], ddof=1)
    k = np.ceil(np.arange(1, H + 1) / s).astype(int)
    loc = np.stack([y[o - 1 + np.arange(1, H + 1) - k * s] for o in orig])
    scale = np.broadcast_to(sigma * np.sqrt(k), loc.shape)
    truth = np.stack([y[o:o + H] for o in orig])
    dist = db.Predictive("normal", {"loc": loc.ravel(), "scale": scale.ravel()})
    return summarise(truth.ravel(), dist.quantile(LEVELS), dist.crps(truth.ravel())), 0.0, 0.0


def run_distboost(d: Dataset, orig: np.ndarray, strategy="auto", keep=None):
    y, H = d.y, d.horizon
    fc = Forecaster(family=d.family, horizon=H, lags=d.lags, strategy=strategy,
                    difference=d.difference, random_state=0, **d.options)
    t0 = time.perf_counter()
    fc.fit(y.iloc[:orig[0]])
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    dists = [fc.predict_dist(y_hist=y.iloc[:o]) for o in orig]
    pred_s = time.perf_counter() - t0
    truth = np.concatenate([y.to_numpy()[o:o + H] for o in orig])
    q = np.concatenate([dd.quantile(LEVELS) for dd in dists])
    crps = np.concatenate([dd.crps(y.to_numpy()[o:o + H]) for dd, o in
                           zip(dists, orig, strict=True)])
    if keep is not None:
        keep["forecaster"] = fc
    return summarise(truth, q, crps), fit_s, pred_s, fc.strategy_


def run_darts(d: Dataset, orig: np.ndarray):
    from darts import TimeSeries
    from darts.models import LightGBMModel

    y, H = d.y, d.horizon
    enc = {"datetime_attribute": {"future": list(
        {"month": ["month"], "hour": ["hour"], "dayofweek": ["dayofweek"]}[c][0]
        for c in d.calendar)}} if d.calendar else None
    model = LightGBMModel(lags=[-j for j in d.lags], output_chunk_length=H,
                          likelihood="quantile", random_state=0, verbose=-1,
                          add_encoders=enc, lags_future_covariates=[0] if enc else None)
    diff = None
    if d.difference:
        from darts.dataprocessing.transformers import Diff

        diff = Diff(lags=1)
    series = TimeSeries.from_series(y.iloc[:orig[0]].astype(np.float32))
    t0 = time.perf_counter()
    model.fit(diff.fit_transform(series) if diff else series)
    fit_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    draws = []
    for o in orig:
        hist = TimeSeries.from_series(y.iloc[:o].astype(np.float32))
        inp = diff.fit_transform(hist) if diff else hist
        pred = model.predict(H, series=inp, num_samples=500, verbose=False)
        if diff:  # integrate the sampled differences from the last value (joint in darts)
            values = pred.all_values()[:, 0, :]  # (H, 500)
            values = y.iloc[o - 1] + np.cumsum(values, axis=0)
        else:
            values = pred.all_values()[:, 0, :]
        draws.append(values.T)  # (500, H)
    pred_s = time.perf_counter() - t0
    draws = np.concatenate(draws, axis=1)  # (500, K * H)
    truth = np.concatenate([y.to_numpy()[o:o + H] for o in orig])
    emp = db.Predictive(db.families.Empirical(draws.shape[0]),
                        db.families.Empirical.params_of(draws))
    return summarise(truth, emp.quantile(LEVELS), emp.crps(truth)), fit_s, pred_s


def run_mlforecast(d: Dataset, orig: np.ndarray):
    import lightgbm as lgb
    from mlforecast import MLForecast
    from mlforecast.target_transforms import Differences
    from mlforecast.utils import PredictionIntervals

    y, H = d.y, d.horizon
    df = pd.DataFrame({"unique_id": "s", "ds": y.index, "y": y.to_numpy()})
    cal = {"month": "month", "hour": "hour", "dayofweek": "dayofweek"}
    model = MLForecast(models={"lgb": lgb.LGBMRegressor(verbosity=-1, random_state=0)},
                       freq=y.index.freqstr, lags=d.lags,
                       date_features=[cal[c] for c in d.calendar] or None,
                       target_transforms=[Differences([1])] if d.difference else None)
    levels = [10, 20, 30, 40, 50, 60, 70, 80, 90]
    fit_s = pred_s = 0.0
    qs = []
    for o in orig:  # refitted at every origin (see the module docstring)
        t0 = time.perf_counter()
        model.fit(df.iloc[:o], prediction_intervals=PredictionIntervals(n_windows=3, h=H))
        fit_s += time.perf_counter() - t0
        t0 = time.perf_counter()
        p = model.predict(H, level=levels)
        pred_s += time.perf_counter() - t0
        lo = [p[f"lgb-lo-{v}"].to_numpy() for v in levels[::-1]]  # 0.05 .. 0.45
        hi = [p[f"lgb-hi-{v}"].to_numpy() for v in levels]  # 0.55 .. 0.95
        qs.append(np.column_stack(lo + [p["lgb"].to_numpy()] + hi))
    truth = np.concatenate([y.to_numpy()[o:o + H] for o in orig])
    return summarise(truth, np.concatenate(qs)), fit_s, pred_s


def oracle(d: Dataset, orig: np.ndarray):
    H = d.horizon
    truth = np.concatenate([d.y.to_numpy()[o:o + H] for o in orig])
    ms, ss = zip(*(d.truth(o, H) for o in orig), strict=True)
    dist = db.Predictive("normal", {"loc": np.concatenate(ms), "scale": np.concatenate(ss)})
    return summarise(truth, dist.quantile(LEVELS), dist.crps(truth))


# ---------------------------------------------------------------------- parts
def part_real(quick: bool, keep: dict, peers=("darts", "mlforecast"),
              saved: pd.DataFrame | None = None) -> pd.DataFrame:
    """``saved``: peer rows of an earlier run of the same protocol (``--peer-results``; the
    peers' rows do not depend on distboost), used in place of running those peers."""
    rows = []
    sims = [hourly_simulation(1000 if quick else 3000), daily_counts(500 if quick else 1500)]
    for d in sims:
        d.origins = 3 if quick else 20
    for d in real_datasets(quick) + sims:
        orig = origin_positions(d)
        base, _, _ = seasonal_naive(d, orig)
        rows.append({"data": d.name, "method": "seasonal naive Gaussian", **base,
                     "fit_s": 0.0, "forecast_s": 0.0})
        kept: dict = {}
        res, fit_s, pred_s, strategy = run_distboost(d, orig, keep=kept)
        keep[d.name] = (d, kept["forecaster"])
        rows.append({"data": d.name, "method": f"distboost ({strategy})", **res,
                     "fit_s": fit_s, "forecast_s": pred_s,
                     "crps_vs_naive": res["crps"] / base["crps"]})
        try:  # the same settings with calibrate=True (a backtest on the history's end)
            res, fit_s, pred_s, strategy = run_distboost(
                dataclasses.replace(d, options={**d.options, "calibrate": True}), orig)
            rows.append({"data": d.name, "method": f"distboost ({strategy}, calibrated)",
                         **res, "fit_s": fit_s, "forecast_s": pred_s,
                         "crps_vs_naive": res["crps"] / base["crps"]})
        except ValueError as err:  # a history too short to calibrate
            print(f"  {d.name}: no calibrated row ({err})", flush=True)
        # calibrate="auto": the backtest's maps only where its 90 % coverage is off.
        res, fit_s, pred_s, strategy = run_distboost(
            dataclasses.replace(d, options={**d.options, "calibrate": "auto"}), orig)
        rows.append({"data": d.name, "method": f"distboost ({strategy}, calibrate='auto')",
                     **res, "fit_s": fit_s, "forecast_s": pred_s,
                     "crps_vs_naive": res["crps"] / base["crps"]})
        for name, fn in (("darts LightGBM quantile", run_darts),
                         ("mlforecast conformal", run_mlforecast)):
            if saved is not None and ((saved["data"] == d.name)
                                      & (saved["method"] == name)).any():
                row = saved[(saved["data"] == d.name) & (saved["method"] == name)].iloc[0]
                rows.append(row.to_dict())
                continue
            if name.split()[0] not in peers:
                continue
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res, fit_s, pred_s = fn(d, orig)
            except ImportError as err:
                print(f"  {name} skipped: {err}", flush=True)
                continue
            rows.append({"data": d.name, "method": name, **res, "fit_s": fit_s,
                         "forecast_s": pred_s})
        if d.truth is not None:
            rows.append({"data": d.name, "method": "true law (oracle)", **oracle(d, orig),
                         "fit_s": 0.0, "forecast_s": 0.0})
        print(pd.DataFrame(rows[-5:]).to_string(index=False), flush=True)
    return pd.DataFrame(rows)


def part_paths(keep: dict, quick: bool) -> pd.DataFrame:
    rows = []
    for name, (d, fc) in keep.items():
        if fc.strategy_ != "recursive":  # paths need the recursive model
            fc = Forecaster(family=d.family, horizon=d.horizon, lags=d.lags,
                            strategy="recursive", difference=d.difference, random_state=0,
                            **d.options).fit(d.y.iloc[:origin_positions(d)[0]])
        orig = origin_positions(d)
        m = 200 if quick else 500
        draws = np.stack([fc.sample_paths(m, y_hist=d.y.iloc[:o], random_state=int(o))
                          for o in orig], axis=1)  # (m, K, H)
        truth = np.stack([d.y.to_numpy()[o:o + d.horizon] for o in orig])
        rng = np.random.default_rng(0)
        indep = np.take_along_axis(draws, rng.permuted(np.broadcast_to(
            np.arange(m)[:, None, None], draws.shape), axis=0), axis=0)
        vs_j = db.metrics.variogram_score(draws, truth, p=0.5)
        vs_i = db.metrics.variogram_score(indep, truth, p=0.5)
        es_j = db.metrics.energy_score(draws, truth)
        es_i = db.metrics.energy_score(indep, truth)
        dv = vs_j - vs_i
        rows.append({"data": name, "origins": len(orig), "paths": m,
                     "variogram_joint": vs_j.mean(), "variogram_independent": vs_i.mean(),
                     "variogram_diff": dv.mean(), "variogram_diff_se":
                     dv.std(ddof=1) / math.sqrt(len(dv)), "energy_joint": es_j.mean(),
                     "energy_independent": es_i.mean()})
    return pd.DataFrame(rows)


def part_steps(quick: bool) -> pd.DataFrame:
    """Coverage by step of the recursive forecaster from many origins one value apart (60;
    30 for nile), fitted once on the values before the first: is the one-step law calibrated,
    and how does the recursion carry it to later steps?"""
    from distboost.forecasting import backtest_summary

    rows = []
    for d in real_datasets(quick):
        k = (20 if quick else 60) if len(d.y) > 200 else (10 if quick else 30)
        fc = Forecaster(family=d.family, horizon=d.horizon, lags=d.lags, strategy="recursive",
                        difference=d.difference, random_state=0, n_paths=300, **d.options)
        bt = fc.backtest(d.y, start=len(d.y) - k - d.horizon + 1, step=1)
        cov = backtest_summary(bt)["coverage_90"].to_numpy()
        rows.append({"data": d.name, "origins": k, "coverage_step_1": cov[0],
                     "coverage_mid": cov[len(cov) // 2], "coverage_last": cov[-1],
                     "coverage_all": float(bt["hit_90"].mean()), "crps": float(bt["crps"].mean()),
                     "pit_sd": float(bt["pit"].std())})
    return pd.DataFrame(rows)


#: Part c's learning rate and cap of rounds: the first is the headline, the others are
#: measured beside it (at 0.1 and 300 rounds the location used every round too: the rate,
#: not the data, decides the number of trees, and with it the forecast's time).
BIG_CONFIGS = ((0.2, 150), (0.1, 300))


def big_child(quick: bool, learning_rate: float, n_estimators: int) -> dict:
    """Part c, run in a child process (its peak RSS is its own)."""
    import resource

    S, T, H, P = (200, 500, 24, 200) if quick else (1000, 500, 24, 200)
    rng = np.random.default_rng(0)
    t = pd.date_range("2024-01-01", periods=T + H, freq="h")
    level, amp = rng.uniform(5, 20, S), rng.uniform(0.5, 3, S)
    noise, phi = rng.uniform(0.3, 1.5, S), 0.6
    z = rng.normal(size=(S, T + H))
    e = np.zeros((S, T + H))
    for k in range(1, T + H):  # the AR recursion, vectorised over series
        e[:, k] = phi * e[:, k - 1] + z[:, k]
    cycle = np.sin(2 * np.pi * t.hour.to_numpy() / 24)
    Y = level[:, None] + amp[:, None] * cycle[None] + noise[:, None] * e
    ids = np.array([f"s{i:04d}" for i in range(S)])
    df = pd.DataFrame({"id": np.repeat(ids, T), "time": np.tile(t[:T], S),
                       "y": Y[:, :T].ravel()})
    fc = Forecaster(horizon=H, lags=[1, 2, 24], strategy="recursive", n_paths=P,
                    random_state=0, learning_rate=learning_rate, n_estimators=n_estimators)
    t0, c0 = time.perf_counter(), time.process_time()
    fc.fit(df)
    fit_s, fit_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    dist = fc.predict_dist()
    pred_s, pred_cpu = time.perf_counter() - t0, time.process_time() - c0
    h = np.arange(1, H + 1)
    true_m = level[:, None] + amp[:, None] * cycle[None, T:] + noise[:, None] * \
        phi ** h[None] * e[:, T - 1:T]
    true_s = noise[:, None] * np.sqrt((1 - phi ** (2 * h)) / (1 - phi ** 2))[None]
    truth = Y[:, T:].ravel()
    crps = float(dist.crps(truth).mean())
    oracle_crps = float(db.metrics.crps_normal(truth, true_m.ravel(), true_s.ravel()).mean())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (Linux: KiB)
    return {"series": S, "values_per_series": T, "training_rows": int(S * (T - 24)),
            "horizon": H, "paths": P, "rounds": int(fc.model_.best_iteration_),
            "learning_rate": learning_rate, "n_estimators": n_estimators,
            "rounds_per_parameter": {k: int(v) for k, v in fc.model_.best_iterations_.items()},
            "fit_s": fit_s, "forecast_s": pred_s, "total_s": fit_s + pred_s,
            "fit_cpu_s": fit_cpu, "forecast_cpu_s": pred_cpu, "peak_rss_mib": rss,
            "crps": crps, "oracle_crps": oracle_crps,
            "load_1min": os.getloadavg()[0]}


def part_big(quick: bool) -> dict:
    """Part c for each of :data:`BIG_CONFIGS`: the first's results, the others' under
    ``"others"``."""
    runs = []
    for rate, cap in BIG_CONFIGS[:1] if quick else BIG_CONFIGS:
        cmd = [sys.executable, __file__, "--big-child", str(rate), str(cap)]
        out = subprocess.run(cmd + (["--quick"] if quick else []), check=True,
                             capture_output=True, text=True)
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {**runs[0], "others": runs[1:]}


# ---------------------------------------------------------------------- report
def _fmt(v, digits=3):
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def markdown(real: pd.DataFrame | None, paths: pd.DataFrame | None, big: dict | None,
             command: str, seconds: float, steps: pd.DataFrame | None = None) -> str:
    # Below a minute nothing was run here: the tables come from saved results, whose runs'
    # duration and load this process cannot know.
    ran = (f"{seconds / 60:.1f} min on 2 shared cores (load average "
           f"{os.getloadavg()[0]:.1f} at the end: other sessions ran beside it; compare "
           "the seconds of one table only)" if seconds >= 60 else
           "tables regenerated from saved results (the runs' own durations and loads are "
           "not known here; compare the seconds of one table only)")
    lines = ["<!-- forecasting:start -->", "## Forecasting", "",
             f"Command: `{command}`, {ran}. Protocol: the docstring of "
             "`benchmarks/forecasting.py`.", ""]
    if real is not None:
        lines += ["**Rolling-origin backtests** (lower CRPS / QCRPS is better; QCRPS on the "
                  "19 levels 0.05..0.95 for every method; coverage of the central 90 % "
                  "interval; fit and forecast seconds over all origins):", "",
                  "| data | method | CRPS | CRPS / naive | QCRPS | coverage 90 | fit s | "
                  "forecast s |", "|---|---|---|---|---|---|---|---|"]
        for r in real.to_dict("records"):
            lines.append(f"| {r['data']} | {r['method']} | {_fmt(r['crps'])} | "
                         f"{_fmt(r.get('crps_vs_naive'), 2)} | {_fmt(r['qcrps'])} | "
                         f"{_fmt(r['coverage_90'], 2)} | {_fmt(r['fit_s'], 1)} | "
                         f"{_fmt(r['forecast_s'], 1)} |")
        lines.append("")
    if paths is not None:
        lines += ["**Joint paths**: distboost's recursive paths against the same marginals "
                  "drawn independently (each step's draws permuted separately), variogram "
                  "score of order 0.5 and energy score (lower is better), mean over origins; "
                  "diff = joint - independent (± standard error over origins):", "",
                  "| data | origins x paths | variogram joint | variogram independent | "
                  "diff | energy joint | energy independent |", "|---|---|---|---|---|---|---|"]
        for r in paths.to_dict("records"):
            lines.append(f"| {r['data']} | {r['origins']} x {r['paths']} | "
                         f"{_fmt(r['variogram_joint'])} | {_fmt(r['variogram_independent'])} | "
                         f"{_fmt(r['variogram_diff'])} ± {_fmt(r['variogram_diff_se'])} | "
                         f"{_fmt(r['energy_joint'])} | {_fmt(r['energy_independent'])} |")
        lines.append("")
    if steps is not None:
        lines += ["**Coverage by step** of the recursive forecaster (`--parts steps`): "
                  "origins one value apart at the end of each series, one fit before the "
                  "first; 90 % coverage at step 1, the middle step and the last step, over "
                  "all steps, the CRPS and the standard deviation of the PIT (0.289 when "
                  "uniform):", "",
                  "| data | origins | step 1 | middle | last | all | CRPS | PIT sd |",
                  "|---|---|---|---|---|---|---|---|"]
        for r in steps.to_dict("records"):
            lines.append(f"| {r['data']} | {r['origins']} | {_fmt(r['coverage_step_1'], 2)} | "
                         f"{_fmt(r['coverage_mid'], 2)} | {_fmt(r['coverage_last'], 2)} | "
                         f"{_fmt(r['coverage_all'], 2)} | {_fmt(r['crps'])} | "
                         f"{_fmt(r['pit_sd'])} |")
        lines.append("")
    if big is not None:
        lines += [f"**A global model of {big['series']:,} series** x {big['values_per_series']} "
                  f"hourly values ({big['training_rows']:,} training rows, lags 1, 2, 24, "
                  f"hour and day of week, learning rate {big.get('learning_rate', 0.1)}, "
                  f"at most {big.get('n_estimators', 300)} rounds, early stopping: "
                  f"{_rounds(big)}): fit {big['fit_s']:.0f} s, forecast of "
                  f"{big['series']:,} x {big['horizon']} steps with {big['paths']} paths "
                  f"{big['forecast_s']:.0f} s, total {big['total_s']:.0f} s (CPU seconds of "
                  f"the process, all threads: fit {big.get('fit_cpu_s', math.nan):.0f}, "
                  f"forecast {big.get('forecast_cpu_s', math.nan):.0f}); peak resident "
                  f"memory {big['peak_rss_mib']:.0f} MiB; CRPS {big['crps']:.3f} against the "
                  f"true law's {big['oracle_crps']:.3f} (load average {big['load_1min']:.1f} "
                  "during the run)."]
        for other in big.get("others", []):
            lines += ["", f"The same at learning rate {other['learning_rate']} and at most "
                      f"{other['n_estimators']} rounds ({_rounds(other)}): fit "
                      f"{other['fit_s']:.0f} s, forecast {other['forecast_s']:.0f} s, total "
                      f"{other['total_s']:.0f} s; {other['peak_rss_mib']:.0f} MiB; CRPS "
                      f"{other['crps']:.3f}."]
        lines.append("")
    lines.append("<!-- forecasting:end -->")
    return "\n".join(lines)


def _rounds(big: dict) -> str:
    per = big.get("rounds_per_parameter")
    if not per:
        return f"{big['rounds']} rounds"
    return ", ".join(f"{k} {v} rounds" for k, v in per.items())


def _saved(path: Path) -> pd.DataFrame | None:
    if not path.exists():
        return None
    table = pd.read_csv(path)
    return table.astype(object).where(table.notna(), None)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="real,paths,big")
    parser.add_argument("--out", default=None, help="markdown page to write the section into")
    parser.add_argument("--peers", default="darts,mlforecast",
                        help="peers to run (darts fits one LightGBM per quantile and step: "
                             "408 models for 24 steps, minutes per data set)")
    parser.add_argument("--peer-results", default=None,
                        help="CSV files (comma-separated) of peer rows from an earlier run of "
                             "the same protocol (columns of the backtest table), used in place "
                             "of running those peers")
    parser.add_argument("--big-child", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.big_child:
        rate, cap = args.big_child
        print(json.dumps(big_child(args.quick, float(rate), int(cap))))
        return {}
    parts = set(args.parts.split(","))
    t0 = time.perf_counter()
    keep: dict = {}
    results = ROOT / "benchmarks" / "results"
    peers = tuple(args.peers.split(",")) if args.peers else ()
    saved = pd.concat([pd.read_csv(f) for f in args.peer_results.split(",")]) \
        if args.peer_results else None
    real = part_real(args.quick, keep, peers, saved) \
        if "real" in parts or "paths" in parts else None
    paths = part_paths(keep, args.quick) if "paths" in parts else None
    if paths is not None:
        print(paths.to_string(index=False), flush=True)
    steps = part_steps(args.quick) if "steps" in parts else None
    if steps is not None:
        print(steps.to_string(index=False), flush=True)
    big = part_big(args.quick) if "big" in parts else None
    if big is not None:
        print(big, flush=True)
    command = "python benchmarks/forecasting.py" + (" --quick" if args.quick else "") + \
        (f" --parts {args.parts}" if args.parts != "real,paths,big" else "") + \
        (f" --peers {args.peers}" if args.peers != "darts,mlforecast" else "") + \
        (f" --peer-results {args.peer_results}" if args.peer_results else "")
    if args.out and not args.quick:  # the parts run here replace their saved results
        results.mkdir(exist_ok=True)
        for name, table in (("real", real), ("paths", paths), ("steps", steps)):
            if table is not None and name in parts:
                table.to_csv(results / f"forecasting_{name}.csv", index=False)
        if big is not None:
            (results / "forecasting_big.json").write_text(json.dumps(big, indent=1))
        real = real if "real" in parts else _saved(results / "forecasting_real.csv")
        paths = paths if "paths" in parts else _saved(results / "forecasting_paths.csv")
        steps = steps if "steps" in parts else _saved(results / "forecasting_steps.csv")
        if big is None and (results / "forecasting_big.json").exists():
            big = json.loads((results / "forecasting_big.json").read_text())
        command = "python benchmarks/forecasting.py (parts run separately: "
        command += "results in benchmarks/results/forecasting_*)"
    text = markdown(real, paths, big, command, time.perf_counter() - t0, steps)
    if args.out:
        _sections.write_section(Path(args.out), text, "<!-- forecasting:start -->",
                                "<!-- forecasting:end -->")
    return {"real": real, "paths": paths, "steps": steps, "big": big, "markdown": text}


if __name__ == "__main__":
    main()
