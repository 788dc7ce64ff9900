"""Fit time and accuracy of ``location_start`` (and ``tuning="auto"``) against the constant
start (issue 31).

Usage: ``python benchmarks/location_start.py [n_rows] [repeat] [--tuning]``.

The data are ``benchmarks/speed.py``'s (20 features, a heteroscedastic Normal target), with
the near-deterministic variant of ``benchmarks/per_parameter_stopping.py``.  Each setting is
fitted ``repeat`` times, interleaved, in one process; the table gives the best wall-clock
seconds, the ratio to the constant start's (``location_start=None``), the rounds kept per
parameter (and the point model's), and the test CRPS and RMSE of the mean (1,000 held-out
rows).  Timings on a shared machine are noisy: compare the ratios.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import make_data  # noqa: E402

import distboost as db  # noqa: E402


def main(n: int = 20_000, repeat: int = 2, tuning: bool = False) -> None:
    X, y = make_data(n + 1000)
    mean = X[:, 0] + np.sin(2 * X[:, 1])
    rng = np.random.default_rng(1)
    targets = {"heteroscedastic": y, "near-deterministic": mean + 0.05 * rng.normal(size=y.size)}
    settings = {"location_start=None": {"location_start": None},
                "location_start='auto'": {"location_start": "auto"}}
    if tuning:
        settings["tuning='auto'"] = {"location_start": "auto", "tuning": "auto"}
    print(f"{n} training rows, best of {repeat}")
    print("| target | setting | fit s | ratio | rounds (loc, scale; point) | CRPS | RMSE |\n"
          "|---|---|---|---|---|---|---|")
    for name, target in targets.items():
        best = dict.fromkeys(settings, np.inf)
        models = {}
        for _ in range(repeat):
            for label, params in settings.items():
                t0 = time.perf_counter()
                models[label] = db.DistributionalRegressor(random_state=0, **params).fit(
                    X[:n], target[:n])
                best[label] = min(best[label], time.perf_counter() - t0)
        ref = best["location_start=None"]
        for label, m in models.items():
            d = m.predict_dist(X[n:])
            point = None if m.location_start_ is None else m.location_start_.rounds
            rounds = (m.best_iterations_["loc"], m.best_iterations_["scale"], point)
            rmse = float(np.sqrt(np.mean((d.mean - target[n:]) ** 2)))
            print(f"| {name} | {label} | {best[label]:.1f} | {best[label] / ref:.2f} | "
                  f"{rounds} | {float(np.mean(d.crps(target[n:]))):.4f} | {rmse:.4f} |",
                  flush=True)


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    main(*(int(a) for a in args[:2]), tuning="--tuning" in sys.argv)
