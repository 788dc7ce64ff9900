"""Probabilistic forecasting of a real series: El Nino sea surface temperatures, 12 months.

The monthly sea surface temperature of the El Nino region (1950-2010, statsmodels' bundled
``elnino`` data) is forecast 12 months ahead by a recursive ``Forecaster`` (Normal family,
lags of 1, 2 and 12 months, a month-of-year feature): joint sample paths, their fan chart
after the history, and a rolling-origin backtest over the last ten years (one fit, an origin
every three months) scored against a seasonal-naive Gaussian (last year's value of the
month, with the spread of the year-on-year changes) and drawn as PIT histograms by step.

Run: ``.venv/bin/python examples/forecasting.py [--out DIR]`` (needs statsmodels, in the dev
extra; the gallery's figures: ``--out docs/gallery``).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import distboost as db  # noqa: E402
from distboost.forecasting import Forecaster, backtest_summary  # noqa: E402

H = 12


def load_elnino() -> pd.Series:
    """The monthly series (732 months) from statsmodels' year-by-month table."""
    import statsmodels.api as sm

    wide = sm.datasets.elnino.load_pandas().data.set_index("YEAR")
    values = wide.to_numpy().reshape(-1)
    index = pd.date_range(f"{int(wide.index[0])}-01-01", periods=values.size, freq="MS")
    return pd.Series(values, index=index, name="sea surface temperature (C)")


def seasonal_naive_crps(y: pd.Series, table: pd.DataFrame) -> float:
    """Mean CRPS of N(y[t - 12], s) at the backtest's rows, ``s`` the standard deviation of
    the year-on-year changes before the first origin."""
    first = table["origin"].min()
    s = y.diff(12)[:first].std()
    loc = y.shift(12).reindex(pd.DatetimeIndex(table["time"])).to_numpy()
    return float(db.metrics.crps_normal(table["y"].to_numpy(), loc, s).mean())


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output")
    args = parser.parse_args(argv)
    y = load_elnino()
    fc = Forecaster(horizon=H, lags=[1, 2, 12], strategy="recursive", n_paths=500,
                    learning_rate=0.1, random_state=0)
    bt = fc.backtest(y, start=len(y) - 10 * H, step=3)  # fitted on 1950-2000, 37 origins
    summary = backtest_summary(bt)
    result = {"crps": float(bt["crps"].mean()), "coverage_90": float(bt["hit_90"].mean()),
              "seasonal_naive_crps": seasonal_naive_crps(y, bt)}
    result["crps_ratio"] = result["crps"] / result["seasonal_naive_crps"]
    for k, v in result.items():
        print(f"{k:>20}: {v:.4f}")
    print(summary.round(3).iloc[[0, 5, 11]].to_string())

    train, test = y[:-H], y[-H:]
    paths = fc.fit(train).sample_paths(300)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    db.plot.fan(paths, history=train["2003":], y=test.to_numpy(), paths=4, ax=axes[0])
    axes[0].set_title("El Nino SST: 12-month recursive forecast (50/80/95 % bands, 4 paths)")
    db.plot.pit_by_horizon(bt, bins=5, ax=axes[1])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "forecast_fan.png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    print(f"figure written to {out / 'forecast_fan.png'}")
    return result


if __name__ == "__main__":
    main()
