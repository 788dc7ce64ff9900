"""The ``distboost forecast`` command (its parser and run; :mod:`distboost.cli` registers it).

``distboost forecast data.csv --time date --target y --horizon 24 --lags 1,24,168 --out
forecast.csv`` fits a :class:`~distboost.forecasting.Forecaster` on the series of a CSV file
(one series, or several with ``--id``) and writes the forecast of the ``horizon`` steps after
each series' end: one row per (series, step) with the mean and the quantiles (``--quantiles``),
or with ``--paths N`` the sample paths in long format, one row per (series, path, step).
The history alone is used (exogenous features: the Python API).
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

__all__ = ["add_parser"]


def _ints(text: str, option: str, error) -> list[int] | str:
    if text == "auto":
        return text
    try:
        return [int(v) for v in text.split(",") if v.strip()]
    except ValueError as err:
        raise error(f"{option} takes comma-separated integers; got {text!r}.") from err


def _rounds(text: str):
    """``--n-estimators``: a positive integer or "auto"."""
    if text == "auto":
        return text
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'auto', got {text!r}")
    return value


def forecast(args, error) -> int:
    """Fit on the CSV's history and write the forecast (module docstring)."""
    from pathlib import Path

    from .forecaster import Forecaster

    if not Path(args.data).is_file():
        raise error(f"No such file: {args.data}")
    df = pd.read_csv(args.data)
    cols = [args.time, args.target] + ([args.id] if args.id else [])
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise error(f"Column(s) {missing} are not in {args.data}; columns are "
                    f"{list(df.columns)}.")
    if not pd.api.types.is_integer_dtype(df[args.time]):
        try:
            df[args.time] = pd.to_datetime(df[args.time])
        except (TypeError, ValueError) as err:
            raise error(f"Column {args.time!r} (--time) holds neither dates nor integers "
                        f"({err}).") from err
    try:
        levels = [float(v) for v in args.quantiles.split(",") if v.strip()]
    except ValueError as err:
        raise error(f"--quantiles takes comma-separated numbers; got {args.quantiles!r}.") \
            from err
    if args.paths < 0 or args.paths == 1:
        raise error(f"--paths takes a number of paths >= 2; got {args.paths}.")
    fc = Forecaster(family=args.family, horizon=args.horizon,
                    lags=_ints(args.lags, "--lags", error),
                    rolling=_ints(args.rolling, "--rolling", error),
                    strategy=args.strategy, freq=args.freq,
                    fill=args.fill, id_col=args.id or "id", time_col=args.time,
                    target_col=args.target, random_state=0,
                    **({"n_paths": args.paths} if args.paths else {}),
                    calibrate={"false": False, "true": True, "auto": "auto"}[args.calibrate],
                    scale={"false": False, "true": True}.get(args.scale, args.scale),
                    series_id={"false": False, "true": True}.get(args.series_id,
                                                                  args.series_id),
                    n_estimators=args.n_estimators, learning_rate=args.learning_rate,
                    progress=args.progress)
    try:
        dist = fc.fit(df[cols]).predict_dist()
        table = None if args.paths else dist.to_frame(levels)
        paths = fc.sample_paths(args.paths) if args.paths else None
    except ValueError as err:
        raise error(str(err)) from err
    index = dist.index
    H = fc.horizon
    n_series = len(dist) // H
    head = {}
    if isinstance(index, pd.MultiIndex):
        head[args.id] = np.asarray(index.get_level_values(0))
    times = np.asarray(index.get_level_values(-1))
    if args.paths:
        P = args.paths
        draws = paths.reshape(P, -1)  # (P, S * H): series after series
        out = pd.DataFrame({**{k: np.tile(v, P) for k, v in head.items()},
                            "path": np.repeat(np.arange(P), n_series * H),
                            args.time: np.tile(times, P),
                            "step": np.tile(np.arange(1, H + 1), P * n_series),
                            args.target: draws.reshape(-1)})
    else:
        out = pd.DataFrame({**head, args.time: times,
                            "step": np.tile(np.arange(1, H + 1), n_series),
                            "mean": table["mean"].to_numpy()})
        for c in table.columns:
            if c.startswith("q"):
                out[c] = table[c].to_numpy()
    out.to_csv(args.out, index=False)
    what = f"{args.paths} paths" if args.paths else "quantiles"
    print(f"Forecast {H} steps of {n_series} series ({fc.strategy_} strategy, {what}); wrote "
          f"{len(out)} rows to {args.out}")
    return 0


def add_parser(sub, error) -> None:
    """Add the ``forecast`` subcommand; ``error`` is the CLI's one-line error class."""
    p = sub.add_parser("forecast", help="probabilistic forecast of the series of a CSV file")
    p.add_argument("data")
    p.add_argument("--time", required=True, help="time column (dates or integers)")
    p.add_argument("--target", required=True, help="value column")
    p.add_argument("--id", default=None, help="series id column (several series)")
    p.add_argument("--horizon", type=int, required=True, help="steps to forecast")
    p.add_argument("--lags", default="auto",
                   help="comma-separated lags, or auto (default: %(default)s)")
    p.add_argument("--rolling", default="auto",
                   help="comma-separated rolling windows, or auto (default: %(default)s)")
    p.add_argument("--family", default="auto", help="family (default: %(default)s)")
    p.add_argument("--strategy", default="auto", choices=["auto", "recursive", "direct"])
    p.add_argument("--n-estimators", type=_rounds, default="auto", dest="n_estimators",
                   help="maximum boosting rounds, or 'auto' (3000 under early stopping, "
                        "which picks fewer; default: %(default)s)")
    p.add_argument("--learning-rate", type=float, default=0.05, dest="learning_rate",
                   help="shrinkage of every tree (default: %(default)s)")
    p.add_argument("--freq", default=None, help="pandas frequency (default: inferred)")
    p.add_argument("--fill", default="raise", choices=["raise", "ffill", "interpolate", "zero"],
                   help="what to do with missing values (default: %(default)s)")
    p.add_argument("--quantiles", default="0.05,0.5,0.95",
                   help="comma-separated quantile levels (default: %(default)s)")
    p.add_argument("--paths", type=int, default=0,
                   help="write N sample paths in long format instead of quantiles")
    p.add_argument("--calibrate", default="auto", choices=["false", "true", "auto"],
                   help="recalibrate each step by a backtest on the history's end: always "
                        "(true) or where that backtest's 90%% coverage is off (auto) "
                        "(default: %(default)s)")
    p.add_argument("--scale", default="auto", choices=["auto", "standard", "true", "false"],
                   help="scaling by each window: its level (auto: two or more series), or "
                        "less its mean over its sd (standard: series far from 0) "
                        "(default: %(default)s)")
    p.add_argument("--series-id", default="auto", choices=["auto", "true", "false"],
                   dest="series_id", help="the series' id as a feature (auto: the "
                   "backtest's choice on a scaled panel) (default: %(default)s)")
    p.add_argument("--out", required=True, help="CSV file to write")
    p.add_argument("--no-progress", dest="progress", action="store_false",
                   help="no progress bars (on by default, on stderr)")
    p.set_defaults(func=lambda args: forecast(args, error))
