"""Short histories: the Forecaster's default validation against explicit cross-validation.

20 Gaussian AR(1) series (phi 0.6, unit innovations) of ``n`` values; each is fitted with
``Forecaster(horizon=10, lags=[1, 2, 3], strategy=...)`` twice in this process, with its
default early stopping and with ``early_stopping="cv"`` (5-fold cross-validation on every
row), and forecasts the 10 values after it; CRPS and 90 % coverage against those values and
the true law's, and the spread over series of the dispersion calibration
(``dispersion_shift_``, the shift of the log scale).  At commit 6cb4763 the default validated
on the last 10 % of the series (9 rows for ``n = 100``); since then the recursive default is
the cross-validation row.

Run: ``python benchmarks/forecasting_short_validation.py [n] [series] [strategy]``
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import distboost as db  # noqa: E402
from distboost.forecasting import Forecaster  # noqa: E402


def main(n: int = 100, series: int = 20, strategy: str = "recursive") -> None:
    warnings.simplefilter("ignore")
    H, phi = 10, 0.6
    res: dict = {}
    for r in range(series):
        rng = np.random.default_rng(100 + r)
        e, z = np.zeros(n + H), rng.normal(size=n + H)
        for i in range(1, n + H):  # the AR recursion of the simulation
            e[i] = phi * e[i - 1] + z[i]
        y = pd.Series(10 + e, index=pd.RangeIndex(n + H))
        h = np.arange(1, H + 1)
        m, s = 10 + phi ** h * e[n - 1], np.sqrt((1 - phi ** (2 * h)) / (1 - phi ** 2))
        truth = y.to_numpy()[n:]
        res.setdefault("true law", []).append(
            (db.metrics.crps_normal(truth, m, s).mean(),
             np.mean(np.abs(truth - m) <= 1.645 * s), 0.0))
        for name, opts in (("default", {}), ("cv", {"early_stopping": "cv"})):
            fc = Forecaster(horizon=H, lags=[1, 2, 3], strategy=strategy, random_state=0,
                            date_features=None, **opts).fit(y.iloc[:n])
            d = fc.predict_dist()
            lo, hi = d.interval(0.9).T
            res.setdefault(name, []).append((d.crps(truth).mean(),
                                             np.mean((truth >= lo) & (truth <= hi)),
                                             fc.model_.dispersion_shift_))
    for k, v in res.items():
        v = np.array(v)
        print(f"n={n} {strategy} {k:8s} CRPS {v[:, 0].mean():.3f} +- "
              f"{v[:, 0].std() / np.sqrt(series):.3f}  coverage 90 {v[:, 1].mean():.3f}  "
              f"dispersion shift sd {v[:, 2].std():.2f}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main(int(args[0]) if args else 100, int(args[1]) if len(args) > 1 else 20,
         args[2] if len(args) > 2 else "recursive")
