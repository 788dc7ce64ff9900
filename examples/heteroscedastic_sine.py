"""The heteroscedastic sine of the original write-up, fitted with distboost.

x ~ U(-3, 3), y ~ Normal(sin x, sd = 0.05 + 0.1 x^2), 1,000 rows.  Draws the truth, the
predicted mean, a 2-sd band and the data, and prints coverage and NLL against the oracle.

Run: ``.venv/bin/python examples/heteroscedastic_sine.py [--out DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import scipy.stats as st  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import make_heteroscedastic_sine  # noqa: E402


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output", help="folder for the figure")
    args = parser.parse_args(argv)

    X, y, _ = make_heteroscedastic_sine(1000, random_state=0)
    # 1,000 rows: small trees; early stopping on a 10% split is on by default above 200 rows.
    model = db.DistributionalRegressor(family="normal", num_leaves=7, random_state=0).fit(X, y)

    X_te, y_te, sd_te = make_heteroscedastic_sine(10_000, random_state=1)
    dist = model.predict_dist(X_te)
    lo, hi = dist.interval(0.9).T
    result = {
        "coverage_90": float(np.mean((y_te >= lo) & (y_te <= hi))),
        "test_nll": float(-model.score(X_te, y_te)),
        "oracle_nll": float(-np.mean(st.norm.logpdf(y_te, np.sin(X_te[:, 0]), sd_te))),
        "sd_correlation": float(np.corrcoef(dist.stddev, sd_te)[0, 1]),
    }
    for k, v in result.items():
        print(f"{k:>15}: {v:.4f}")

    line = np.linspace(-3, 3, 400).reshape(-1, 1)
    grid = model.predict_dist(line)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.scatter(X[:, 0], y, s=6, alpha=0.4, color="grey", label="data")
    ax.plot(line[:, 0], np.sin(line[:, 0]), color="red", label="truth: sin(x)")
    ax.plot(line[:, 0], grid.mean, color="C0", label="predicted mean")
    ax.fill_between(line[:, 0], grid.mean - 2 * grid.stddev, grid.mean + 2 * grid.stddev,
                    color="C0", alpha=0.25, label="predicted mean +- 2 sd")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="upper left")
    ax.set_title("Heteroscedastic sine: boosted Normal(loc(x), scale(x))")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "heteroscedastic_sine.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"figure written to {out / 'heteroscedastic_sine.png'}")
    return result


if __name__ == "__main__":
    main()
