"""Varying-coefficient boosting: a linear model whose coefficients are boosted trees.

Fits ``y ~ Normal(b0(x) + b1(x) x, scale(x))`` on the write-up's sine toy data
(``x ~ U(-3, 3)``, ``y = sin x + N(0, 0.25^2)``, 1,000 rows) and, when ``../shared/data`` is
beside the checkout, on the UCI concrete data (split 0, every feature linear).  Prints the
test RMSE of each (the toy's against its noise level) and saves a figure: the toy's fit, and
the per-row coefficients of two concrete rows (features standardised).

Run: ``.venv/bin/python examples/varying_coefficients.py [--out DIR] [--data DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from distboost import plotting  # noqa: E402
from distboost.datasets import load_uci  # noqa: E402
from distboost.estimators.varying import VaryingCoefficientRegressor  # noqa: E402

UCI = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "uci"
NOISE = 0.25
CONCRETE_COLUMNS = ["cement", "slag", "fly_ash", "water", "superplasticizer", "coarse_agg",
                    "fine_agg", "age"]


def make_sine(n: int, seed: int):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3.0, 3.0, size=(n, 1))
    return X, np.sin(X[:, 0]) + rng.normal(0.0, NOISE, size=n)


def rmse(a, b) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output", help="folder for the figure")
    parser.add_argument("--data", type=Path, default=UCI, help="folder of the UCI datasets")
    args = parser.parse_args(argv)

    X, y = make_sine(1000, 123)
    X_te, y_te = make_sine(10_000, 124)
    toy = VaryingCoefficientRegressor(early_stopping=True, random_state=0).fit(X, y)
    result = {"sine_rmse": rmse(toy.predict(X_te), y_te), "noise": NOISE}
    print(f"sine toy: test RMSE {result['sine_rmse']:.4f} (noise sd {NOISE})")

    have_uci = (args.data / "concrete" / "data.txt").is_file()
    fig, axes = plt.subplots(1, 2 if have_uci else 1, figsize=(13 if have_uci else 7, 4.5),
                             squeeze=False)
    line = np.linspace(-3, 3, 400).reshape(-1, 1)
    ax = axes[0, 0]
    ax.scatter(X[:, 0], y, s=5, alpha=0.4, color="grey", label="data")
    ax.plot(line[:, 0], np.sin(line[:, 0]), color="red", label="truth: sin(x)")
    ax.plot(line[:, 0], toy.predict(line), color="C0", label="b0(x) + b1(x) x")
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="upper left")
    ax.set_title(f"sine toy: test RMSE {result['sine_rmse']:.3f} (noise {NOISE})")

    if have_uci:
        Xc, yc, train, test = load_uci(args.data / "concrete", split=0)
        # Standardised with the training rows' mean and sd, as in the write-up, so that each
        # coefficient is "MPa per standard deviation" and the bars are comparable.
        Xc = (Xc - Xc[train].mean(axis=0)) / Xc[train].std(axis=0)
        Xc = pd.DataFrame(Xc, columns=CONCRETE_COLUMNS)
        model = VaryingCoefficientRegressor(n_estimators=300, max_depth=3, num_leaves=8,
                                            learning_rate=0.1, early_stopping=False,
                                            random_state=0)
        model.fit(Xc.iloc[train], yc[train])
        X_test = Xc.iloc[test]
        result["concrete_rmse"] = rmse(model.predict(X_test), yc[test])
        print(f"concrete (split 0): test RMSE {result['concrete_rmse']:.3f} MPa")
        coef = model.coefficients(X_test.iloc[:2])
        print("coefficients of the first two test rows:")
        print(coef.T.round(3).to_string())
        plotting.coefficients(model, X_test, rows=[0, 1], ax=axes[0, 1])
        axes[0, 1].set_title("concrete: per-row coefficients of two test rows")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "varying_coefficients.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"figure written to {path}")
    result["figure"] = str(path)
    return result


if __name__ == "__main__":
    main()
