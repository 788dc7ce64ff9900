"""Generate the plot gallery (docs/gallery/*.png and docs/gallery.md) from real fits.

Run: ``.venv/bin/python docs/make_gallery.py`` (offline; about 20 seconds).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402

import distboost as db  # noqa: E402
from distboost.datasets import load_diabetes, make_heteroscedastic_sine  # noqa: E402

HERE = Path(__file__).resolve().parent
OUT = HERE / "gallery"


def save(fig, name):
    fig.savefig(OUT / name, dpi=90, bbox_inches="tight")
    plt.close(fig)


def main() -> None:
    OUT.mkdir(exist_ok=True)
    X, y, _ = make_heteroscedastic_sine(1000, random_state=0)
    model = db.DistributionalRegressor(num_leaves=7, early_stopping=True, random_state=0)
    model.fit(X, y)
    X_te, y_te, _ = make_heteroscedastic_sine(400, random_state=1)
    dist = model.predict_dist(X_te)
    items = []
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.intervals(dist, X_te[:, 0], y_te, levels=(0.5, 0.9), ax=ax)
    save(fig, "intervals.png")
    items.append(("intervals.png", "`db.plot.intervals(dist, x, y)`: central 50% and 90% "
                  "intervals and the median against a feature, observations as points."))
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.intervals(dist, X_te[:, 0], fan=True, ax=ax)
    save(fig, "fan.png")
    items.append(("fan.png", "`db.plot.intervals(dist, x, fan=True)`: a fan chart of nine "
                  "central intervals (time on the x axis for forecasts)."))
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.pit_histogram(dist, y_te, ax=ax)
    save(fig, "pit.png")
    items.append(("pit.png", "`db.plot.pit_histogram(dist, y)`: PIT histogram with the 95% "
                  "band of a calibrated forecast."))
    fig, ax = plt.subplots(figsize=(5, 5))
    db.plot.calibration(dist, y_te, ax=ax)
    save(fig, "calibration.png")
    items.append(("calibration.png", "`db.plot.calibration(dist, y)`: reliability diagram."))
    Xd, yd = load_diabetes()
    Xd_tr, _, yd_tr, _ = train_test_split(Xd, yd, test_size=0.25, random_state=0)
    table = db.compare_families(Xd_tr, yd_tr, families=["normal", "gamma", "lognormal",
                                                        "weibull"], cv=5, early_stopping=True,
                                learning_rate=0.05, num_leaves=4, min_child_samples=10)
    fig, ax = plt.subplots(figsize=(7, 3))
    db.plot.compare(table, "nll", ax=ax)
    save(fig, "compare.png")
    items.append(("compare.png", "`db.plot.compare(db.compare_families(X, y))`: cross-validated "
                  "NLL of four families on scikit-learn's diabetes data."))
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.density(dist, 0, y_te, ax=ax)
    save(fig, "density.png")
    items.append(("density.png", "`db.plot.density(dist, i, y)`: one row's predictive density "
                  "with its observation."))
    rng = np.random.default_rng(0)
    t = 2.0 * rng.weibull(1.5, 500)
    c = rng.uniform(0, 4, 500)
    surv = db.DistributionalRegressor(family="censored_weibull", n_estimators=50,
                                      random_state=0)
    surv.fit(rng.normal(size=(500, 1)), db.censored.right(np.minimum(t, c), t <= c))
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.density(surv.predict_dist(np.zeros((1, 1))), 0, ax=ax)
    save(fig, "survival.png")
    items.append(("survival.png", "`db.plot.density` of a censored family: the survival "
                  "curve of the latent time."))
    idx = pd.date_range("2024-01-01", periods=120, freq="D", name="date")
    days = np.arange(120)
    X_t = pd.DataFrame({"day": days, "weekday": days % 7}, index=idx)
    sales = pd.Series(10 + 3 * np.sin(days / 10) + rng.normal(0, 0.5 + days / 100, 120),
                      index=idx, name="sales")
    series = db.DistributionalRegressor(random_state=0).fit(X_t, sales)
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.fan(series.predict_dist(X_t), y=sales, ax=ax)
    save(fig, "fan_index.png")
    items.append(("fan_index.png", "`db.plot.fan(dist, y=sales)`: nested central intervals "
                  "over the index of X (dates), for ordered data."))
    Xs, time, event = db.datasets.load_gbsg2()
    ys = db.censored.right(time, event)
    Xs_tr, Xs_te, ys_tr, ys_te = train_test_split(Xs, ys, test_size=0.3, random_state=0)
    gbsg = db.DistributionalRegressor(family="censored_weibull", random_state=0)
    dist_s = gbsg.fit(Xs_tr, ys_tr).predict_dist(Xs_te)
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.survival_curves(dist_s, rows=[0, 1, 2, 3], y=pd.Series(time, name="days"), ax=ax)
    save(fig, "survival_curves.png")
    items.append(("survival_curves.png", "`db.plot.survival_curves(dist, rows, y=time)`: "
                  "predicted survival of four GBSG2 test patients (labelled by X's index), "
                  "the time axis spanning the observed times."))
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.d_calibration(dist_s, ys_te, ax=ax)
    save(fig, "d_calibration.png")
    items.append(("d_calibration.png", "`db.plot.d_calibration(dist, y)`: the D-calibration "
                  "histogram of censored data (flat at 1 / bins when calibrated)."))
    # Where the model does not know: few training rows with x0 in [0, 2] (3 %).
    rng = np.random.default_rng(0)
    x0 = np.r_[rng.uniform(-3, 0, 450), rng.uniform(0, 2, 15), rng.uniform(2, 3, 35)]
    Xu = pd.DataFrame({"x0": x0, "x1": rng.normal(size=500)})
    yu = np.sin(2 * x0) + 0.3 * rng.normal(size=500)
    sparse = db.DistributionalRegressor(random_state=0).fit(Xu, yu)
    fig, ax = plt.subplots(figsize=(7, 4))
    db.plot.epistemic(sparse, Xu, "x0", ax=ax)
    save(fig, "epistemic.png")
    items.append(("epistemic.png", "`db.plot.epistemic(model, X, 'x0')`: the members' "
                  "epistemic standard deviation (`predict_uncertainty`) along a feature, the "
                  "aleatoric one dashed, over the training rows' histogram: 500 rows of "
                  "`sin(2 x0) + 0.3 e`, 3 % of them with x0 in [0, 2], where the members "
                  "disagree; past the data on either side the trees predict flat and so "
                  "do their members."))
    # Thin data at 4,000 rows: 2 % of them with x0 in [1, 2] (benchmarks/conformal.py, d).
    x0 = np.r_[rng.uniform(0, 1, 3920), rng.uniform(1, 2, 80)]
    Xg = pd.DataFrame({"x0": x0, "x1": rng.normal(size=4000)})
    yg = np.sin(4 * x0) + 0.3 * rng.normal(size=4000)
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    fig.subplots_adjust(wspace=0.45)
    for ax, members in zip(axes, (0, 10), strict=True):
        fitted = db.DistributionalRegressor(epistemic_members=members, random_state=0)
        db.plot.epistemic(fitted.fit(Xg, yg), Xg, "x0", ax=ax)
        ax.set_title(f"epistemic_members={members}")
    save(fig, "epistemic_thin.png")
    items.append(("epistemic_thin.png", "Thin data at 4,000 rows (`sin(4 x0) + 0.3 e`, 2 % of "
                  "the rows with x0 in [1, 2]): the default's members (its virtual ensemble, "
                  "left) barely disagree there; `epistemic_members=10` (extremely randomised "
                  "members with their own seeds, right) do.  Their aleatoric part is theirs: "
                  "where rows are thin it runs above the model's own noise estimate."))
    # Vector targets: drawn by examples/multivariate_power_plant.py (a real-data fit of its
    # own, `--out docs/gallery`), listed here.
    items.append(("multivariate_ellipses.png", "`db.plot.ellipses(dist, y, rows)`: predicted "
                  "50% and 90% regions of two parts of a vector target (power plant output "
                  "and exhaust vacuum) with the observations; "
                  "`examples/multivariate_power_plant.py`."))
    items.append(("multivariate_correlation.png", "`db.plot.correlation(dist, x)`: the "
                  "predicted correlation of the two parts against a feature, with the "
                  "held-out residuals' correlation by bin."))
    # Forecasts: drawn by examples/forecasting.py (`--out docs/gallery`), listed here.
    items.append(("forecast_fan.png", "`db.plot.fan(paths, history=y, y=truth, paths=4)`: a "
                  "12-month recursive forecast of El Nino sea temperatures after its history "
                  "(50/80/95% bands of the sample paths, four paths, the truth); "
                  "`db.plot.pit_by_horizon(backtest)`: the PIT histogram of every forecast "
                  "step of a rolling-origin backtest; `examples/forecasting.py`."))
    lines = ["# Plot gallery", "", "Generated by `python docs/make_gallery.py`.", ""]
    for name, caption in items:
        lines += [caption, "", f"![{name}](gallery/{name})", ""]
    (HERE / "gallery.md").write_text("\n".join(lines))


if __name__ == "__main__":
    main()
