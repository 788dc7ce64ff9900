"""Boost any torch loss: absolute, Huber and logistic losses with ``Booster``.

Regression: y = sin(x) + heavy-tailed noise, with 3% of the rows replaced by gross outliers
(y + 8).  The squared loss chases the outliers; clipping its gradients at their 5% / 95%
quantiles each round, the absolute loss and the Huber loss do not.  Each fit is scored by its
mean absolute distance to the truth sin(x) on a grid.  Classification: the logistic loss
(binary cross-entropy on the logit) with early stopping on a validation split, scored by
held-out log-loss against the base rate.

Run: ``.venv/bin/python examples/custom_loss.py [--out DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from distboost.estimators.booster import Booster  # noqa: E402


def squared(raw, data):
    return 0.5 * (data["y"] - raw[:, 0]) ** 2


def absolute(raw, data):
    return torch.abs(data["y"] - raw[:, 0])


def huber(raw, data, delta=0.5):
    r = torch.abs(data["y"] - raw[:, 0])
    return torch.where(r < delta, 0.5 * r**2, delta * (r - 0.5 * delta))


def logistic(raw, data):
    return F.binary_cross_entropy_with_logits(raw[:, 0], data["y"], reduction="none")


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="demo_output", help="folder for the figure")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)

    # --- regression with outliers
    n = 2000
    X = rng.uniform(-3, 3, size=(n, 1))
    y = np.sin(X[:, 0]) + 0.2 * rng.standard_t(3, size=n)
    outliers = rng.uniform(size=n) < 0.03
    y[outliers] += 8.0
    grid = np.linspace(-3, 3, 300).reshape(-1, 1)
    common = {"n_estimators": 200, "learning_rate": 0.1, "num_leaves": 8, "random_state": 0}
    fits = {
        "squared": Booster(squared, **common),
        "squared, gradients clipped at 5%/95%": Booster(squared, clip_gradients=(0.05, 0.95),
                                                        **common),
        "absolute (gradient step)": Booster(absolute, step="gradient", **common),
        "Huber (newton step)": Booster(huber, **common),
    }
    result, curves = {}, {}
    for name, model in fits.items():
        curves[name] = model.fit(X, {"y": y}).predict_raw(grid)[:, 0]
        result[name] = float(np.mean(np.abs(curves[name] - np.sin(grid[:, 0]))))
        print(f"{name:>38}: mean |f(x) - sin(x)| = {result[name]:.3f}")

    # --- classification with the logistic loss and early stopping
    Xc = rng.normal(size=(3000, 4))
    p = 1 / (1 + np.exp(-(2 * Xc[:, 0] - Xc[:, 1] ** 2 + 0.5)))
    yc = (rng.uniform(size=3000) < p).astype(np.float64)
    tr, va, te = slice(0, 1500), slice(1500, 2000), slice(2000, 3000)
    clf = Booster(logistic, n_estimators=500, learning_rate=0.05, num_leaves=8,
                  n_iter_no_change=30, random_state=0)
    clf.fit(Xc[tr], {"y": yc[tr]}, eval_set=(Xc[va], {"y": yc[va]}))
    logit_te = torch.as_tensor(clf.predict_raw(Xc[te]))
    with torch.no_grad():
        result["logistic_logloss"] = float(logistic(logit_te, {"y": torch.as_tensor(yc[te])})
                                           .mean())
    base = yc[tr].mean()
    result["base_rate_logloss"] = float(-np.mean(yc[te] * np.log(base)
                                                 + (1 - yc[te]) * np.log(1 - base)))
    result["logistic_accuracy"] = float(np.mean((logit_te[:, 0].numpy() > 0) == yc[te]))
    result["logistic_rounds"] = clf.best_iteration_
    print(f"logistic: held-out log-loss {result['logistic_logloss']:.4f} "
          f"(base rate {result['base_rate_logloss']:.4f}), accuracy "
          f"{result['logistic_accuracy']:.3f}, {clf.best_iteration_} rounds kept of "
          f"{clf.n_iter_} (early stopping)")

    fig, ax = plt.subplots(figsize=(10, 4.5))
    ax.scatter(X[~outliers, 0], y[~outliers], s=4, alpha=0.3, color="grey", label="data")
    ax.scatter(X[outliers, 0], np.full(outliers.sum(), 4.7), s=18, marker="^", color="black",
               alpha=1.0, label=f"{outliers.sum()} outliers (y + 8, drawn at the top edge)")
    for (name, curve), color in zip(curves.items(), ["C3", "C1", "C2", "C0"], strict=True):
        ax.plot(grid[:, 0], curve, lw=1.3, color=color, label=name)
    ax.plot(grid[:, 0], np.sin(grid[:, 0]), color="black", ls="--", lw=1.5,
            label="truth: sin(x)")
    ax.set_ylim(-2.5, 5)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8)
    ax.set_title("Custom torch losses boosted by distboost.estimators.booster.Booster")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig.savefig(out / "custom_loss.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"figure written to {out / 'custom_loss.png'}")
    return result


if __name__ == "__main__":
    main()
