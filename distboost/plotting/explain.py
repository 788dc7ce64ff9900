"""Figures of a model's explanations (in ``db.plot``): importances, dependence, SHAP summary.

Three views per distribution parameter: which features its trees use
(:func:`importance`), how one parameter moves with one feature (:func:`dependence`: the
partial dependence, Friedman 2001, sec. 8.2, with individual conditional expectation lines,
Goldstein et al. 2015), and the distribution of the exact SHAP values of every feature
(:func:`shap_summary`, the beeswarm of Lundberg et al. 2020, drawn without the shap package).
Every function draws on ``ax`` (a new figure when None) and returns the Axes.

References
----------
Friedman, J. H. (2001). Greedy function approximation: a gradient boosting machine. Annals of
Statistics 29(5).  Goldstein, A., Kapelner, A., Bleich, J. & Pitkin, E. (2015). Peeking
inside the black box: visualizing statistical learning with plots of individual conditional
expectation. JCGS 24(1).  Lundberg, S. M. et al. (2020). From local explanations to global
understanding with explainable AI for trees. Nature Machine Intelligence 2.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._axes import axes

__all__ = ["importance", "dependence", "shap_summary"]




def importance(model, importance_type: str = "gain", max_features: int = 20, ax=None):
    """Each parameter's share of its trees' importance per feature, as grouped bars.

    Parameters
    ----------
    model : fitted distributional estimator
    importance_type : {"gain", "split"}
        Total split gain or number of splits (``model.feature_importances``).
    max_features : int
        The features with the largest total share are shown, most important on top.

    Returns
    -------
    matplotlib Axes
        One bar per feature and parameter: the parameter's importance of the feature
        divided by its total (each parameter's bars sum to 1 over all features; a
        parameter without splits has none).
    """
    table = model.feature_importances(importance_type)
    totals = table.sum(axis=1).to_numpy()
    share = table.div(np.where(totals > 0, totals, 1.0), axis=0)
    order = share.sum(axis=0).sort_values(ascending=False).index[:max_features][::-1]
    ax = axes(ax, (7, max(3.0, 0.35 * len(order)) * max(1, len(share)) ** 0.5 + 1.5))
    pos = np.arange(len(order))
    k = len(share.index)
    height = 0.8 / k
    for i, name in enumerate(share.index):
        ax.barh(pos + (i - (k - 1) / 2) * height, share.loc[name, order].to_numpy(), height,
                label=str(name), color=f"C{i}")
    ax.set_yticks(pos, [str(f) for f in order])
    ax.set_xlabel(f"share of the parameter's {importance_type}")
    ax.set_ylabel("feature")
    ax.set_title(f"feature importance per parameter ({importance_type})")
    ax.legend(loc="lower right", fontsize="small")
    return ax


def _column(X, feature) -> tuple[int, str]:
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        if isinstance(feature, str):
            if feature not in names:
                raise ValueError(f"feature {feature!r} is not a column of X; X's columns are "
                                 f"{names}.")
            return names.index(feature), feature
        return int(feature), names[int(feature)]
    if isinstance(feature, str):
        raise ValueError(f"feature {feature!r} names a column, but X is an array without "
                         "column names: give an integer position.")
    return int(feature), f"x{int(feature)}"


def dependence(model, X, feature, param: str | None = None, *, scale: str = "natural",
               grid: int = 40, n_ice: int = 50, random_state: int = 0, ax=None):
    """Partial dependence of one parameter on one numeric feature, with ICE lines.

    Each of ``n_ice`` rows of X (drawn with ``random_state``) is predicted with the feature
    set to every grid value (its individual conditional expectation, a thin line); the
    partial dependence (thick line) is their mean.

    Parameters
    ----------
    model : fitted distributional estimator
    X : array_like or DataFrame of shape (n, p)
    feature : str or int
        Column name (DataFrame X) or position.
    param : str, optional
        A parameter of the family (default: the dispersion parameter when there is one,
        else the first).
    scale : {"natural", "raw"}
        The parameter itself (``predict_params``) or its link-scale score (``predict_raw``).
    grid : int
        Grid points, evenly spaced between the 2% and 98% quantiles of the feature.
    n_ice : int
        Rows drawn for the ICE lines (all rows when fewer).

    Returns
    -------
    matplotlib Axes
    """
    names = list(model.family_.param_names)
    if param is None:
        param = model.family_.dispersion_param or names[0]
    if param not in names:
        raise ValueError(f"Unknown parameter {param!r}; the parameters are {names}.")
    if scale not in ("natural", "raw"):
        raise ValueError(f"scale must be 'natural' or 'raw', got {scale!r}.")
    j, label = _column(X, feature)
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=float))
    col = frame.iloc[:, j]
    if not pd.api.types.is_numeric_dtype(col.dtype):
        raise ValueError(f"dependence() needs a numeric feature; {label!r} is {col.dtype}.")
    values = col.to_numpy(dtype=float)
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        raise ValueError(f"feature {label!r} has no finite value in the {len(values)} rows.")
    xs = np.unique(np.linspace(*np.quantile(finite, [0.02, 0.98]), grid))
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(len(frame), min(n_ice, len(frame)), replace=False))
    big = frame.iloc[np.repeat(rows, xs.size)].reset_index(drop=True)
    big.iloc[:, j] = np.tile(xs, rows.size)
    data = big if isinstance(X, pd.DataFrame) else big.to_numpy()
    if scale == "raw":
        out = model.predict_raw(data)[:, names.index(param)]
    else:
        out = model.predict_params(data)[param].to_numpy()
    curves = out.reshape(rows.size, xs.size)
    ax = axes(ax)
    for curve in curves:
        ax.plot(xs, curve, color="C0", lw=0.6, alpha=0.25)
    ax.plot(xs, curves.mean(axis=0), color="C3", lw=2.5, label="partial dependence")
    ax.plot([], [], color="C0", lw=0.6, alpha=0.5, label=f"ICE ({rows.size} rows)")
    ax.set_xlabel(label)
    ax.set_ylabel(param if scale == "natural" else f"{param} (link scale)")
    ax.set_title(f"partial dependence of {param} on {label}")
    ax.legend(loc="best", fontsize="small")
    return ax


def _swarm_offsets(values: np.ndarray, bins: int = 40, width: float = 0.8) -> np.ndarray:
    """Vertical offsets spreading points of similar value (a histogram-based beeswarm):
    the i-th of the ``c`` points in a bin sits at ``(i - (c - 1) / 2) / max_count *
    width``."""
    if values.size == 0:
        return values
    lo, hi = values.min(), values.max()
    b = np.zeros(values.size, dtype=np.intp) if hi <= lo else np.minimum(
        ((values - lo) / (hi - lo) * bins).astype(np.intp), bins - 1)
    order = np.argsort(b, kind="stable")
    counts = np.bincount(b, minlength=bins)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    rank = np.empty(values.size)
    rank[order] = np.arange(values.size) - starts[b[order]]
    return (rank - (counts[b] - 1) / 2) / counts.max() * width


def shap_summary(explanation, param: str | int | None = None, max_features: int = 15,
                 ax=None):
    """A beeswarm of one parameter's SHAP values, one row of points per feature.

    Parameters
    ----------
    explanation : Explanation
        From ``model.explain(X)``.
    param : str or int, optional
        The parameter (default: the last, the dispersion for location-scale families).
    max_features : int
        The features with the largest mean absolute SHAP value, most important on top.

    Returns
    -------
    matplotlib Axes
        Each point is a row: its SHAP value (x) for the feature (y), coloured by the
        feature's value (its rank between the 5% and 95% quantiles; grey when missing).
    """
    if param is None:
        param = len(explanation.param_names) - 1
    k = explanation._index(param)
    name = explanation.param_names[k]
    phi = explanation.values[:, k, :]
    data = explanation.numeric_data()
    order = np.argsort(np.abs(phi).mean(axis=0), kind="stable")[::-1][:max_features][::-1]
    ax = axes(ax, (7, max(3.0, 0.4 * len(order)) + 1.5))
    for pos, j in enumerate(order):
        x = data[:, j]
        lo, hi = (np.nanquantile(x, [0.05, 0.95]) if np.isfinite(x).any() else (0.0, 1.0))
        color = np.clip((x - lo) / (hi - lo), 0, 1) if hi > lo else np.full(x.size, 0.5)
        missing = ~np.isfinite(color)
        y = pos + _swarm_offsets(phi[:, j])
        ax.scatter(phi[missing, j], y[missing], s=8, color="0.6")
        sc = ax.scatter(phi[~missing, j], y[~missing], s=8, c=color[~missing], cmap="coolwarm",
                        vmin=0.0, vmax=1.0)
    ax.axvline(0.0, color="k", lw=0.8)
    ax.set_yticks(np.arange(len(order)), [explanation.feature_names[j] for j in order])
    ax.set_xlabel(f"SHAP value (contribution to the link-scale {name})")
    ax.set_ylabel("feature")
    ax.set_title(f"SHAP summary of {name}")
    if len(order):
        bar = ax.figure.colorbar(sc, ax=ax, ticks=[0, 1], pad=0.01)
        bar.ax.set_yticklabels(["low", "high"])
        bar.set_label("feature value")
    return ax
