"""Matplotlib figures of predictive distributions (exposed as ``db.plot``).

Every function draws on ``ax`` (a new figure when None) and returns the Axes, so figures
compose in notebooks: interval bands and fan charts, the PIT histogram, the reliability
diagram, a family comparison, one row's predictive density (a survival curve for censored
families), and the per-row coefficients of a varying-coefficient model; survival curves of
several rows and the D-calibration histogram come from :mod:`distboost.plotting.survival`, the
regions and correlation of vector targets (``ellipses``, ``correlation``) from
:mod:`distboost.plotting.multivariate`.
Every figure has a title and axis labels, taken from the data where it has names (a pandas
Series' ``name``, a Predictive's ``index``).
"""

from __future__ import annotations

import numpy as np

from ._axes import axes

__all__ = ["intervals", "fan", "pit_histogram", "calibration", "compare", "density",
           "coefficients"]




def _name(values, default: str) -> str:
    """The label of some data: a pandas Series' (or Index's) name, else ``default``."""
    name = getattr(values, "name", None)
    return str(name) if name is not None else default


def intervals(dist, x=None, y=None, levels=(0.5, 0.9), ax=None, color="C0", fan=False):
    """Bands of central intervals against a feature (or the row index) with the median.

    Parameters
    ----------
    dist : Predictive of length n
    x : array_like or Series of shape (n,), optional
        Positions (a feature, or time for a fan chart); the row index when None.  Rows are
        drawn sorted by ``x``; a Series' name labels the x axis.
    y : array_like or Series of shape (n,), optional
        Observations, drawn as points; a Series' name labels the y axis.
    levels : sequence of float
        Interval levels; wider bands are lighter.
    fan : bool
        Many levels (0.1, 0.2, ..., 0.9) as a fan chart (see :func:`fan`).

    Returns
    -------
    matplotlib Axes
    """
    ax = axes(ax)
    n = len(dist)
    xlabel = _name(x, "x") if x is not None else "row"
    ylabel = _name(y, "y")
    x = np.arange(n) if x is None else np.asarray(x)
    order = np.argsort(x, kind="stable")
    xs = x[order]
    if fan:
        levels = tuple(np.round(np.arange(0.1, 0.95, 0.1), 2))
    for i, level in enumerate(sorted(levels, reverse=True)):
        lo, hi = dist.interval(level)[order].T
        alpha = 0.15 + 0.5 * (i + 1) / (len(levels) + 1)
        label = f"{level:.0%} interval"
        if fan:
            label = "central 10%, 20%, ..., 90% intervals" if i == 0 else None
        ax.fill_between(xs, lo, hi, color=color, alpha=alpha, lw=0, label=label)
    ax.plot(xs, dist.median[order], color=color, lw=1.5, label="median")
    if y is not None:
        ax.scatter(xs, np.asarray(y, dtype=float)[order], s=8, color="k", alpha=0.6,
                   label="observed", zorder=3)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    shown = "fan chart" if fan else " and ".join(f"{v:.0%}" for v in sorted(levels))
    ax.set_title(f"Predictive median and central intervals ({shown})")
    ax.legend(loc="best", fontsize="small")
    return ax


def fan(dist, x=None, y=None, levels=(0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9), ax=None,
        color="C0"):
    """Fan chart for ordered x (time): nested central-interval bands over an index.

    Parameters
    ----------
    dist : Predictive of length n
    x : array_like, Index or Series of shape (n,), optional
        The ordered positions (dates, times, ...); default the Predictive's ``index`` (the
        index of the DataFrame it was predicted from), else ``0..n-1``.  Drawn in the given
        order, not sorted: the bands follow the index as a time series does.
    y : array_like or Series of shape (n,), optional
        Observations, drawn as a line with points.
    levels : sequence of float
        Central interval levels; the widest band is the lightest.

    Returns
    -------
    matplotlib Axes
    """
    ax = axes(ax)
    if x is None:
        x = dist.index if dist.index is not None else np.arange(len(dist))
    xlabel = _name(x, "index")
    xs = np.asarray(x)
    if xs.shape != (len(dist),):
        raise ValueError(f"x has shape {xs.shape}; expected ({len(dist)},), one position per "
                         "distribution.")
    levels = sorted(float(v) for v in levels)
    for i, level in enumerate(reversed(levels)):
        lo, hi = dist.interval(level).T
        ax.fill_between(xs, lo, hi, color=color, lw=0,
                        alpha=0.12 + 0.6 * (i + 1) / (len(levels) + 1),
                        label=f"{levels[0]:.0%} ... {levels[-1]:.0%} intervals" if i == 0
                        else None)
    ax.plot(xs, dist.median, color=color, lw=1.5, label="median")
    if y is not None:
        ax.plot(xs, np.asarray(y, dtype=float), "o-", color="k", ms=2.5, lw=0.8,
                label=_name(y, "observed"), zorder=3)
    if xs.dtype.kind == "M":  # dates: concise tick labels that do not overlap
        import matplotlib.dates as mdates

        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(_name(y, "y"))
    ax.set_title(f"Fan chart: central {levels[0]:.0%} to {levels[-1]:.0%} intervals")
    ax.legend(loc="best", fontsize="small")
    return ax


def pit_histogram(dist, y, bins: int = 10, ax=None, random_state=None):
    """Histogram of the probability integral transform with the uniform reference.

    For a continuous family, the histogram of ``F(y)``.  For a discrete family the plain
    ``F(y)`` is not uniform even under the true model, so by default the bars are the
    non-randomised PIT histogram of Czado, Gneiting & Held (2009, Biometrics 65, Section
    2.1): bin ``j`` has height ``bins * (Fbar(j / bins) - Fbar((j - 1) / bins))`` with
    ``Fbar`` = :func:`distboost.metrics.pit_cdf`, the expected histogram of the randomised
    PIT; give ``random_state`` to draw the histogram of one randomised PIT instead
    (:func:`distboost.metrics.pit`).

    The shaded band is the central 95% range of a bin's height under perfect calibration
    (binomial with ``p = 1 / bins``; conservative for the non-randomised histogram, whose
    heights vary less).  Heights are densities (uniform = 1).

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n,)
        Exact observations.
    bins : int
    ax : matplotlib Axes, optional
    random_state : None, int or numpy Generator
        Discrete families only: None draws the deterministic non-randomised histogram, a
        seed or Generator the histogram of randomised PIT values.

    Returns
    -------
    matplotlib Axes
    """
    from scipy.stats import binom

    from ..metrics import pit_cdf

    ax = axes(ax)
    n = len(dist)
    style = {"color": "C0", "alpha": 0.8, "edgecolor": "white", "zorder": 2}
    if dist.family.discrete and random_state is None:
        edges = np.linspace(0.0, 1.0, bins + 1)
        heights = np.diff(pit_cdf(dist, y, edges)) * bins
        ax.bar(edges[:-1], heights, width=1.0 / bins, align="edge", **style)
    else:
        u = dist.pit(y, random_state=random_state)
        ax.hist(u, bins=bins, range=(0, 1), density=True, **style)
    lo, hi = binom.ppf([0.025, 0.975], n, 1.0 / bins) * bins / n
    ax.axhspan(lo, hi, color="grey", alpha=0.25, label="95% band, calibrated", zorder=0)
    ax.axhline(1.0, color="k", lw=1, ls="--", zorder=3)
    ax.set_xlabel("PIT, F(y)")
    ax.set_ylabel("density")
    ax.set_title(f"PIT histogram ({n} rows; flat when calibrated)")
    ax.set_xlim(0, 1)
    ax.legend(loc="best", fontsize="small")
    return ax


def calibration(dist, y, levels=None, ax=None):
    """Reliability diagram: nominal level against the observed share of PIT values at or
    below it, with the diagonal.

    The observed share is :func:`distboost.metrics.pit_cdf`: for a continuous family the
    share of ``y`` at or below its predicted quantile of that level, for a discrete family
    the non-randomised PIT of Czado, Gneiting & Held (2009), without the upward bias of
    ``y <= quantile`` for counts.  :func:`distboost.metrics.calibration_error` is the mean
    vertical distance of these points from the diagonal.

    Parameters
    ----------
    dist : Predictive of length n
    y : array_like of shape (n,)
        Exact observations.
    levels : array_like of shape (m,), optional
        Nominal levels; 0.05, 0.10, ..., 0.95 by default.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib Axes
    """
    from ..metrics import pit_cdf

    ax = axes(ax)
    levels = np.arange(0.05, 0.951, 0.05) if levels is None else np.asarray(levels, float)
    observed = pit_cdf(dist, y, levels)
    ax.plot([0, 1], [0, 1], color="k", lw=1, ls="--", label="perfect calibration")
    ax.plot(levels, observed, "o-", color="C0", label="model")
    ax.set_xlabel("nominal level")
    ax.set_ylabel("observed share of PIT values <= level")
    ax.set_title("Calibration (reliability diagram)")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.legend(loc="best", fontsize="small")
    return ax


def compare(table, metric: str | None = None, ax=None):
    """Families against a metric: a dot plot with error bars, best first (the output of
    ``compare_families``).

    ``table`` needs the columns ``family``, ``<metric>_mean`` and ``<metric>_std``; rows with
    a missing or infinite value (skipped families) are left out.  ``metric`` defaults to the
    table's ranking metric (``table.attrs["ranked_by"]``: CRPS when densities meet mass
    functions), else ``nll``.  Best first: lowest first, highest for ``c_index``, closest
    to the nominal level for ``coverage_<p>``.  The axis spans the values and their error
    bars, not zero, so close scores stay apart.  Degenerate fits (a non-empty
    ``degenerate`` column) are grey and labelled.
    """
    ax = axes(ax)
    if metric is None:
        metric = table.attrs.get("ranked_by", "nll_mean").removesuffix("_mean")
    mean_col, std_col = f"{metric}_mean", f"{metric}_std"
    data = table[np.isfinite(table[mean_col].to_numpy(dtype=float))]
    key = data[mean_col]
    if metric == "c_index":
        key = -key
    elif metric.startswith("coverage_"):
        key = (key - int(metric.split("_")[1]) / 100).abs()
    data = data.iloc[np.argsort(key.to_numpy(), kind="stable")]
    pos = np.arange(len(data))
    bad = np.zeros(len(pos), bool)
    if "degenerate" in data:
        bad = (data["degenerate"] != "").to_numpy(bool)
    mean = data[mean_col].to_numpy(dtype=float)
    std = data[std_col].to_numpy(dtype=float) if std_col in data else np.zeros(len(pos))
    std = np.where(np.isfinite(std), std, 0.0)
    for good in (True, False):
        rows = bad != good
        if rows.any():
            ax.errorbar(mean[rows], pos[rows], xerr=std[rows], fmt="o", capsize=3,
                        color="C0" if good else "0.6",
                        label="cross-validated mean ± std" if good else "degenerate")
    labels = [f + " (degenerate)" * b for f, b in zip(data["family"], bad.tolist(), strict=True)]
    ax.set_yticks(pos, labels)
    ax.set_ylim(len(pos) - 0.5, -0.5)  # best on top
    if len(pos):
        lo, hi = float(np.min(mean - std)), float(np.max(mean + std))
        pad = 0.08 * (hi - lo) if hi > lo else 0.05 * max(abs(hi), 1e-12)
        ax.set_xlim(lo - pad, hi + pad)
    ax.grid(axis="x", alpha=0.3)
    ax.set_xlabel(f"{metric} (cross-validated mean ± std)")
    ax.set_ylabel("family")
    ax.set_title(f"Family comparison by {metric}, best first")
    return ax


def density(dist, i: int, y=None, ax=None, points: int = 400):
    """Predictive density of row ``i`` with the observation marked; for a censored family the
    survival function instead."""
    from ..families.censored import Censored

    ax = axes(ax)
    one = dist[int(i)]
    lo, hi = one.quantile([0.001, 0.999])[0]
    if one.family.discrete:
        grid = np.arange(np.floor(lo), np.ceil(hi) + 1)
        ax.bar(grid, one.pdf(grid[None, :].repeat(1, 0))[0], color="C0", alpha=0.8)
        ax.set_ylabel("probability")
    elif isinstance(one.family, Censored):
        grid = np.linspace(max(lo, one.family.support.low), hi, points)
        ax.plot(grid, one.sf(grid[None, :])[0], color="C0")
        ax.set_ylabel("survival probability")
    else:
        grid = np.linspace(lo, hi, points)
        ax.plot(grid, one.pdf(grid[None, :])[0], color="C0")
        ax.set_ylabel("density")
    if y is not None:
        obs = np.asarray(y, dtype=float)
        obs = obs[int(i)] if obs.ndim >= 1 and obs.shape[0] == len(dist) else obs
        for v in np.atleast_1d(obs):
            if np.isfinite(v):
                ax.axvline(v, color="k", ls="--", label="observed")
    ax.set_xlabel(_name(y, "time" if isinstance(one.family, Censored) else "y"))
    row = dist.index[int(i)] if dist.index is not None else int(i)
    ax.set_title(f"row {row}: {one.family.name}")
    return ax


def coefficients(model, X, rows=(0, 1), ax=None, labels=None):
    """Per-row coefficients of a varying-coefficient model as grouped bars.

    One group of bars per coefficient (``intercept`` and each linear feature), one bar per
    row, heights ``model.coefficients(X).iloc[rows]``.

    Parameters
    ----------
    model : fitted VaryingCoefficientRegressor
    X : array_like or DataFrame of shape (n, p)
    rows : sequence of int, default=(0, 1)
        Positions of the rows of X to draw (two or more to compare them).
    ax : matplotlib Axes, optional
    labels : sequence of str, optional
        Legend entries of the rows (default ``row <i>``, or the DataFrame index label).

    Returns
    -------
    matplotlib Axes
    """
    rows = [int(r) for r in np.atleast_1d(rows)]
    n = X.shape[0]
    bad = [r for r in rows if not -n <= r < n]
    if bad:
        raise ValueError(f"rows {bad} are outside the {n} rows of X.")
    subset = X.iloc[rows] if hasattr(X, "iloc") else np.asarray(X)[rows]
    table = model.coefficients(subset)
    if labels is None:
        labels = [f"row {i}" for i in (table.index if hasattr(X, "iloc") else rows)]
    elif len(labels) != len(rows):
        raise ValueError(f"labels has {len(labels)} entries for {len(rows)} rows.")
    ax = axes(ax)
    names = list(table.columns)
    pos = np.arange(len(names))
    width = 0.8 / len(rows)
    for k, label in enumerate(labels):
        ax.bar(pos + (k - (len(rows) - 1) / 2) * width, table.iloc[k].to_numpy(), width,
               label=str(label), color=f"C{k}", alpha=0.85)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_xticks(pos, names, rotation=45 if len(names) > 5 else 0, ha="right"
                  if len(names) > 5 else "center")
    ax.set_xlabel("term of the linear model")
    ax.set_ylabel("coefficient")
    ax.set_title("Per-row coefficients")
    ax.legend(loc="best", fontsize="small")
    return ax

