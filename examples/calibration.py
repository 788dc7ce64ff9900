"""Calibration diagnostics: a well-specified model against an overconfident one.

Fits the heteroscedastic sine with a boosted scale (calibrated) and with the scale frozen at
a third of its marginal value (overconfident), then prints coverage, calibration error, CRPS
and interval score and draws PIT histograms and reliability diagrams side by side.

Run: ``.venv/bin/python examples/calibration.py [--out DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import make_heteroscedastic_sine  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output")
    args = parser.parse_args(argv)
    X, y, _ = make_heteroscedastic_sine(2000, random_state=0)
    X_te, y_te, _ = make_heteroscedastic_sine(5000, random_state=1)
    model = db.DistributionalRegressor(num_leaves=7, early_stopping=True, random_state=0)
    good = model.fit(X, y).predict_dist(X_te)
    p = good.params
    overconfident = db.Predictive.from_params("normal", loc=p["loc"], scale=p["scale"] / 3)
    results = {}
    fig, axes = plt.subplots(2, 2, figsize=(10, 8))
    for col, (label, dist) in enumerate([("boosted scale", good),
                                         ("scale / 3 (overconfident)", overconfident)]):
        results[label] = {
            "coverage_90": db.metrics.coverage(dist, y_te, 0.9),
            "calibration_error": db.metrics.calibration_error(dist, y_te),
            "crps": db.metrics.mean_crps(dist, y_te),
            "interval_score_90": db.metrics.mean_interval_score(dist, y_te, 0.9),
        }
        db.plot.pit_histogram(dist, y_te, ax=axes[0, col])
        axes[0, col].set_title(label)
        db.plot.calibration(dist, y_te, ax=axes[1, col])
    for label, r in results.items():
        print(f"{label:<28} " + "  ".join(f"{k} {v:.3f}" for k, v in r.items()))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "calibration_diagnostics.png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    print(f"figure written to {out / 'calibration_diagnostics.png'}")
    return results


if __name__ == "__main__":
    main()
