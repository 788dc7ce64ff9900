"""Survival times with censoring on the GBSG2 breast-cancer trial (and the veterans data).

Fits ``censored_weibull``, ``censored_lognormal`` and ``censored_gamma`` (every parameter
boosted), prints the held-out censored NLL, Harrell's C-index, the integrated Brier score,
the mean time-dependent AUC and D-calibration, and plots the predicted survival curves of a
few patients and the D-calibration histogram of the best family.  The data sets are read
offline from the copies scikit-survival ships (``db.datasets.load_gbsg2()``,
``load_veterans()``; the ``survival`` extra).

Run: ``.venv/bin/python examples/survival.py [--file gbsg2|veterans] [--out DIR]``
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import load_survival  # noqa: E402

LOADERS = {"gbsg2": db.datasets.load_gbsg2, "veterans": db.datasets.load_veterans}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--file", default="gbsg2",
                        help="a named data set (gbsg2, veterans) or a CSV file with time "
                             "and event columns")
    parser.add_argument("--out", default="demo_output")
    args = parser.parse_args(argv)

    name = args.file.removesuffix(".csv")
    X, time, event = LOADERS[name]() if name in LOADERS else load_survival(args.file)
    y = db.censored.right(time, event)  # (n, 2) bounds: [t, t] for events, [t, inf) censored
    X_tr, X_te, y_tr, y_te = train_test_split(X, y, test_size=0.3, random_state=0)
    X_fit, X_val, y_fit, y_val = train_test_split(X_tr, y_tr, test_size=0.25, random_state=0)
    # IBS and AUC over the middle of the follow-up (the IPCW weights need G(t) > 0)
    times = np.quantile(y_te[:, 0], np.linspace(0.1, 0.8, 50))
    print(f"{args.file}: {len(X)} patients, {int(event.sum())} events; "
          f"test set {len(X_te)} patients\n")
    results, models = {}, {}
    for family in ("censored_weibull", "censored_lognormal", "censored_gamma"):
        model = db.DistributionalRegressor(family=family, learning_rate=0.05, num_leaves=4,
                                           min_child_samples=10, n_iter_no_change=30,
                                           random_state=0)
        model.fit(X_fit, y_fit, eval_set=(X_val, y_val))
        dist = model.predict_dist(X_te)
        dcal = db.metrics.d_calibration(dist, y_te)
        results[family] = {
            "censored_nll": -model.score(X_te, y_te),
            "c_index": db.metrics.concordance_index(dist, y_te),
            "ibs": db.metrics.integrated_brier_score(dist, y_te, times, y_train=y_tr),
            "mean_auc": db.metrics.cumulative_dynamic_auc(dist, y_te, times, y_train=y_tr)[1],
            "d_calibration_p": dcal["pvalue"],
            "rounds": model.best_iteration_,
        }
        models[family] = model
        r = results[family]
        print(f"{family:<20} censored NLL {r['censored_nll']:.3f}   C-index {r['c_index']:.3f}  "
              f" IBS {r['ibs']:.3f}   mean AUC {r['mean_auc']:.3f}   "
              f"D-calibration p = {r['d_calibration_p']:.2f}   ({r['rounds']} rounds)")

    best = min(results, key=lambda f: results[f]["censored_nll"])
    dist = models[best].predict_dist(X_te.iloc[:5])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
    db.plot.survival_curves(dist, rows=range(5), y=time, ax=axes[0])
    axes[0].set_title(f"{name}: survival curves of 5 test patients ({best})")
    axes[0].set_xlabel("days")
    db.plot.d_calibration(models[best].predict_dist(X_te), y_te, ax=axes[1])
    fig.savefig(out / "survival_curves.png", dpi=110, bbox_inches="tight")
    plt.close(fig)
    print(f"\nmedian survival of the five patients ({best}):",
          np.round(dist.median, 0).tolist())
    print(f"figure written to {out / 'survival_curves.png'}")
    return results


if __name__ == "__main__":
    main()
