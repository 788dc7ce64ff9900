"""Fit time and accuracy of ``per_parameter_stopping`` against one shared round (issue 31).

Usage: ``python benchmarks/per_parameter_stopping.py [n_rows] [repeat]``.

The data are ``benchmarks/speed.py``'s (20 features, a heteroscedastic Normal target), with a
near-deterministic variant (the same mean, noise 0.05) where the location needs many more
rounds than the scale.  Each setting is fitted ``repeat`` times, interleaved, in one process;
the table gives the best wall-clock seconds, their ratio to the shared round's, the rounds
kept per parameter and the test CRPS and RMSE of the mean (1,000 held-out rows).  The
default early stopping holds out 10 % of the rows above 1,000 (``early_stopping="auto"``).
Timings on a shared machine are noisy: compare the ratios.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from speed import make_data  # noqa: E402

import distboost as db  # noqa: E402


def main(n: int = 20_000, repeat: int = 2) -> None:
    X, y = make_data(n + 1000)
    mean = X[:, 0] + np.sin(2 * X[:, 1])
    rng = np.random.default_rng(1)
    targets = {"heteroscedastic": y, "near-deterministic": mean + 0.05 * rng.normal(size=y.size)}
    print(f"{n} training rows, best of {repeat}")
    print("| target | per_parameter_stopping | fit s | ratio | rounds (loc, scale) | CRPS "
          "| RMSE |\n|---|---|---|---|---|---|---|")
    for name, target in targets.items():
        best = {False: np.inf, True: np.inf}
        models = {}
        for _ in range(repeat):
            for flag in (False, True):
                t0 = time.perf_counter()
                models[flag] = db.DistributionalRegressor(
                    random_state=0, per_parameter_stopping=flag).fit(X[:n], target[:n])
                best[flag] = min(best[flag], time.perf_counter() - t0)
        for flag, m in models.items():
            d = m.predict_dist(X[n:])
            rounds = (m.best_iterations_["loc"], m.best_iterations_["scale"])
            rmse = float(np.sqrt(np.mean((d.mean - target[n:]) ** 2)))
            print(f"| {name} | {flag} | {best[flag]:.1f} | {best[flag] / best[False]:.2f} | "
                  f"{rounds} | {float(np.mean(d.crps(target[n:]))):.4f} | {rmse:.4f} |",
                  flush=True)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
