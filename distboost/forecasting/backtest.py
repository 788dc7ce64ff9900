"""Rolling-origin backtests: forecasts from many origins of a history, scored step by step.

An *origin* ``o`` of a series cuts it after its first ``o`` values; the forecast from it
covers the next ``horizon`` values, which are known and scored.  Origins run from ``start``
every ``step`` values while a whole horizon remains.  Without refitting (the default) one
model is fitted on each series' values before its first origin and forecasts from every
origin (all in one batch); with ``refit=True`` a model is fitted before each origin.

The table has one row per (series, origin, step): the observation, the predictive mean,
median and 5 % / 95 % quantiles, and the CRPS, NLL, PIT and whether the central 90 % interval
holds the observation.  For the direct strategy every score is the family's own (exact); for
the recursive strategy CRPS, quantiles and interval are those of the paths' empirical
marginals, and NLL and PIT those of the mixture of the paths' one-step laws
(:func:`distboost.forecasting.strategies.simulate`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .data import Panel, future_times
from .features import last_values
from .forecasts import scored
from .strategies import Contexts

__all__ = ["origins", "contexts_at", "forecast_origins", "run_backtest", "backtest_summary"]


def origins(panel: Panel, start, step: int, horizon: int) -> list[np.ndarray]:
    """The origins (values known) of every series, from ``start`` every ``step`` values
    while a whole horizon remains after them.

    ``start`` is an int (values in the first window, every series), a float in (0, 1) (a
    share of each series' length), or a timestamp / integer time of the index given as a
    pandas Timestamp or str (the last time of the first window).
    """
    lengths = panel.lengths
    if isinstance(start, np.ndarray):  # internal: the first origin of every series
        first = start.astype(np.int64)
    elif isinstance(start, float) and not isinstance(start, bool):
        if not 0.0 < start < 1.0:
            raise ValueError(f"start as a float is a share of each series in (0, 1); got "
                             f"{start}.")
        first = np.floor(start * lengths).astype(np.int64)
    elif isinstance(start, int | np.integer) and not isinstance(start, bool):
        first = np.full(panel.n_series, int(start), dtype=np.int64)
    elif isinstance(start, str | pd.Timestamp):
        if not panel.datetime:
            raise ValueError(f"start={start!r} is a date but the series have integer times.")
        t = pd.Timestamp(start)
        first = np.add.reduceat(np.asarray(panel.times <= t, dtype=np.int64),
                                panel.offsets[:-1])
    else:
        raise TypeError(f"start must be an int, a float in (0, 1) or a timestamp; got "
                        f"{type(start).__name__}.")
    if isinstance(step, bool) or not isinstance(step, int | np.integer) or step < 1:
        raise ValueError(f"step must be an integer >= 1 (values between origins); got {step!r}.")
    out = [np.arange(f, n - horizon + 1, step, dtype=np.int64) if f >= 1 else
           np.arange(0, dtype=np.int64) for f, n in zip(first, lengths, strict=True)]
    if sum(o.size for o in out) == 0:
        raise ValueError(
            f"The backtest has no origin: every series is shorter than its start plus the "
            f"horizon {horizon} (lengths {lengths.min()}..{lengths.max()}, start {start!r}).")
    return out


def contexts_at(panel: Panel, exog: pd.DataFrame | None, orig: list[np.ndarray], width: int,
                horizon: int, series_codes: np.ndarray):
    """Contexts of the given origins (``width`` values of history each) and the truths
    (C, H) after them."""
    s_of = np.concatenate([np.full(o.size, s) for s, o in enumerate(orig)]).astype(np.int64)
    o = np.concatenate(orig)
    start = panel.offsets[s_of] + o  # flat index of the first future value
    hist = last_values(panel.values, panel.offsets[s_of], start, width)
    future = start[:, None] + np.arange(horizon)[None, :]
    times = future_times(panel.times[start - 1], panel.freq, horizon)
    if panel.bounds is not None:
        b = panel.bounds[future]
        censored = ~(b[..., 0] == b[..., 1])
        if censored.any():
            raise ValueError(f"The backtest scores exact values; {int(censored.sum())} of the "
                             f"{censored.size} values it would score are censored.")
    ctx = Contexts(series=series_codes[s_of], hist=hist, times=times,
                   exog=None if exog is None else exog.iloc[future.reshape(-1)])
    return ctx, panel.values[future], s_of, o


def score(dist, truth: np.ndarray, nll, pit) -> pd.DataFrame:
    """Per (context, step) scores of a Predictive of ``C * H`` rows against ``truth``."""
    y = truth.reshape(-1)
    q = dist.quantile([0.05, 0.5, 0.95])
    out = pd.DataFrame({"y": y, "mean": dist.mean, "median": q[:, 1], "q0.05": q[:, 0],
                        "q0.95": q[:, 2], "crps": dist.crps(y)})
    out["nll"] = nll
    out["pit"] = pit
    out["hit_90"] = (y >= q[:, 0]) & (y <= q[:, 2])
    return out


def forecast_origins(fitted, panel: Panel, exog, orig: list[np.ndarray], n_paths: int
                     ) -> pd.DataFrame:
    """The table (module docstring) of a fitted forecaster's forecasts from the origins
    ``orig`` (one array per series of ``panel``, whose series it was fitted on)."""
    H = fitted.spec_.horizon
    ctx, truth, s_of, o = contexts_at(panel, exog, orig, fitted.spec_.context, H,
                                      fitted._series_codes(panel))
    dist, nll, pit = scored(fitted, ctx, panel.datetime, truth, n_paths)
    table = score(dist, truth, nll, pit)
    C = len(ctx)
    origin_time = panel.times[panel.offsets[s_of] + o - 1]
    head = pd.DataFrame({
        "series": np.repeat(np.asarray(panel.ids, dtype=object)[s_of], H),
        "origin": np.repeat(np.asarray(origin_time), H),
        "step": np.tile(np.arange(1, H + 1), C),
        "time": ctx.times.reshape(-1)})
    return pd.concat([head, table], axis=1)


def truncate_exog(panel: Panel, exog, firsts: np.ndarray):
    """The exogenous rows of the values before each series' cut ``firsts``."""
    if exog is None:
        return None
    return exog.iloc[np.concatenate([np.arange(a, a + e) for a, e in
                                     zip(panel.offsets[:-1], firsts, strict=True)])]


def run_backtest(fc, panel: Panel, exog, static, start, step, refit: bool, n_paths: int,
                 strategy: str, calibrate: bool | None = None, plan=None) -> pd.DataFrame:
    """The backtest table (module docstring) of forecaster ``fc``'s settings with
    ``strategy`` ("auto": each fit chooses on its own training values); ``calibrate``
    overrides ``fc.calibrate`` (a calibrated fit scores its calibrated forecasts);
    ``plan``, when given, the lags and scaling every fit uses."""
    H = fc.horizon
    orig = origins(panel, start, step, H)
    rounds = [orig] if not refit else [
        [o[k:k + 1] for o in orig] for k in range(max(o.size for o in orig))]
    # a series without an origin in a round is cut at its own last origin (or a horizon
    # before its end): no model sees values after the origins it forecasts from
    last = np.array([o[-1] if o.size else n - H for o, n in zip(orig, panel.lengths,
                                                                 strict=True)])
    tables = []
    for part in rounds:
        firsts = np.array([o[0] if o.size else e for o, e in zip(part, last, strict=True)])
        fitted = fc._fit_panel(panel.truncate(firsts), truncate_exog(panel, exog, firsts),
                               static, strategy=strategy, calibrate=calibrate, plan=plan)
        tables.append(forecast_origins(fitted, panel, exog, part, n_paths))
    out = pd.concat(tables, ignore_index=True)
    if panel.single:
        out = out.drop(columns="series")
    if panel.datetime:
        out["time"] = pd.DatetimeIndex(list(out["time"]))
    return out


def backtest_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean scores by step of a backtest table: CRPS, NLL, 90 % coverage, the PIT's mean
    and the share of PIT values in its outer 10 % (0.1 for a calibrated forecast)."""
    pit = table["pit"]
    g = table.assign(pit_tails=(pit < 0.05) | (pit > 0.95)).groupby("step")
    return pd.DataFrame({"crps": g["crps"].mean(), "nll": g["nll"].mean(),
                         "coverage_90": g["hit_90"].mean(), "pit_mean": g["pit"].mean(),
                         "pit_tails_10": g["pit_tails"].mean(), "n": g.size()})
