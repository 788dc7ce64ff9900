"""Two related targets of a power plant, modelled jointly with ``multivariate_normal``.

The UCI combined-cycle power plant data (Tufekci 2014; ``../shared/data/uci/power-plant``,
9,568 hourly averages, the first Hernandez-Lobato & Adams train/test split): the plant's
electrical output PE (MW) and the exhaust vacuum V (cm Hg) are both driven by the ambient
temperature AT, and the vacuum also drives the output.  Given AT, ambient pressure AP and
relative humidity RH, the example fits the pair (PE, V) with a boosted bivariate Normal whose
means, standard deviations and correlation all vary with the inputs, and compares it on the
held-out rows with two independent boosted Normals (joint NLL per row: the sum of theirs).
It prints the range of the predicted correlation and its mean by bins of temperature next
to the empirical correlation of the held-out residuals in the same bins, and saves two
figures: the 50% and 90% ellipses of four held-out hours with their observations
(``db.plot.ellipses``), and the predicted correlation against temperature
(``db.plot.correlation`` on a grid of temperatures at the median pressure and humidity, with
every held-out hour's prediction and the binned residual correlation drawn over it).

Run: ``.venv/bin/python examples/multivariate_power_plant.py [--out DIR] [--data FOLDER]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import load_uci  # noqa: E402

POWER = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci" / "power-plant"
FEATURES, TARGETS = ["AT", "AP", "RH"], ["PE", "V"]


def load(folder: Path, split: int = 0):
    """The features (AT, AP, RH) and targets (PE, V) as DataFrames, and the split's rows."""
    X, y, train, test = load_uci(folder, split=split)  # X: AT, V, AP, RH; y: PE
    frame = pd.DataFrame(np.column_stack([X, y]), columns=["AT", "V", "AP", "RH", "PE"])
    return frame[FEATURES], frame[TARGETS], train, test


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="demo_output", help="folder for the figures")
    parser.add_argument("--data", default=str(POWER), help="the power-plant folder")
    args = parser.parse_args(argv)

    X, Y, train, test = load(Path(args.data))
    Xtr, Ytr, Xte, Yte = X.iloc[train], Y.iloc[train], X.iloc[test], Y.iloc[test]

    joint = db.DistributionalRegressor(family="multivariate_normal", random_state=0)
    joint.fit(Xtr, Ytr)
    parts = {t: db.DistributionalRegressor(family="normal", random_state=0).fit(Xtr, Ytr[t])
             for t in TARGETS}
    dist = joint.predict_dist(Xte)
    nll_joint = -joint.score(Xte, Yte)
    nll_parts = {t: -m.score(Xte, Yte[t]) for t, m in parts.items()}
    nll_indep = sum(nll_parts.values())
    rho = dist.correlation[:, 0, 1]

    print(f"power plant, split 0: {len(train):,} training rows, {len(test):,} held-out rows")
    print(f"held-out NLL per row, joint (PE, V):       {nll_joint:.4f}  "
          f"({joint.best_iteration_} rounds)")
    print(f"held-out NLL per row, independent normals: {nll_indep:.4f}  "
          f"(PE {nll_parts['PE']:.4f} + V {nll_parts['V']:.4f})")
    margins = {t: float(-np.mean(dist.marginal(j).log_prob(Yte[t].to_numpy())))
               for j, t in enumerate(TARGETS)}
    print(f"  the joint model's margins alone: PE {margins['PE']:.4f}, V {margins['V']:.4f} "
          f"(rounds of the independent ones: PE {parts['PE'].best_iteration_}, "
          f"V {parts['V'].best_iteration_})")
    better = nll_indep - nll_joint
    print(f"joint minus independent: {-better:+.4f} nats per row: the joint model is "
          f"{'better' if better > 0 else 'NOT better'} on the held-out rows")
    print(f"predicted correlation of PE and V: min {rho.min():+.3f}, median "
          f"{np.median(rho):+.3f}, max {rho.max():+.3f}")

    # The correlation by temperature, against the empirical correlation of the held-out
    # residuals (observations minus predicted means) in the same bins.
    resid = Yte.to_numpy() - dist.mean
    bins = np.quantile(Xte["AT"], np.linspace(0, 1, 6))
    which = np.clip(np.searchsorted(bins, Xte["AT"], side="right") - 1, 0, 4)
    print("temperature bin (AT, deg C) | rows | mean predicted corr | residual corr")
    by_bin = []
    for b in range(5):
        sel = which == b
        emp = float(np.corrcoef(resid[sel, 0], resid[sel, 1])[0, 1])
        by_bin.append((float(rho[sel].mean()), emp))
        print(f"  [{bins[b]:5.1f}, {bins[b + 1]:5.1f}]         | {sel.sum():4d} | "
              f"{rho[sel].mean():+.3f}              | {emp:+.3f}")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = np.argsort(Xte["AT"].to_numpy())[np.linspace(20, len(test) - 21, 4).astype(int)]
    labels = [f"AT {t:.1f} deg C" for t in Xte["AT"].to_numpy()[rows]]
    ax = db.plot.ellipses(dist, Yte, rows=rows, levels=(0.5, 0.9), labels=labels)
    ax.set_xlabel("PE, electrical output (MW)")
    ax.set_ylabel("V, exhaust vacuum (cm Hg)")
    ax.set_title("50% and 90% predictive ellipses of four held-out hours (coldest to hottest)")
    ax.figure.savefig(out / "multivariate_ellipses.png", dpi=110, bbox_inches="tight")
    plt.close(ax.figure)

    # The curve: the model on a grid of temperatures at the median pressure and humidity.
    grid = pd.DataFrame({"AT": np.linspace(*np.quantile(Xtr["AT"], [0.01, 0.99]), 200)})
    for column in ("AP", "RH"):
        grid[column] = float(Xtr[column].median())
    ax = db.plot.correlation(joint.predict_dist(grid[FEATURES]), grid["AT"])
    ax.lines[0].set_label("predicted at median AP and RH")
    ax.scatter(Xte["AT"], rho, s=5, alpha=0.35, color="C0", label="predicted, held-out hours")
    centres = (bins[:-1] + bins[1:]) / 2
    ax.plot(centres, [e for _, e in by_bin], "o-", color="C3",
            label="empirical correlation of held-out residuals, by quintile of AT")
    ax.set_xlabel("ambient temperature AT (deg C)")
    ax.set_title("Power plant: correlation of output PE and exhaust vacuum V")
    ax.legend(loc="best", fontsize=8)
    ax.figure.savefig(out / "multivariate_correlation.png", dpi=110, bbox_inches="tight")
    plt.close(ax.figure)
    print(f"figures written to {out / 'multivariate_ellipses.png'} and "
          f"{out / 'multivariate_correlation.png'}")
    return {"nll_joint": float(nll_joint), "nll_independent": float(nll_indep),
            "nll_margins": margins,
            "rho_min": float(rho.min()), "rho_max": float(rho.max()),
            "rho_by_temperature": by_bin, "rounds": int(joint.best_iteration_)}


if __name__ == "__main__":
    main()
