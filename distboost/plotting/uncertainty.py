"""Where a model does not know: its epistemic uncertainty along a feature, beside the
training rows' density (``db.plot.epistemic``).

An out-of-distribution check a user can read: a row whose feature lies where the training
rows are thin should get a larger epistemic variance (the disagreement of the model's
members, :meth:`~distboost.DistributionalRegressor.predict_uncertainty`) than a row in the
bulk.  The figure sweeps one feature over a grid that reaches past the data on both sides,
sets it in a sample of rows (the others kept, as in a partial dependence plot), and draws the
members' mean epistemic standard deviation, the aleatoric one beside it for scale, over a
histogram of the training rows' values of that feature.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ._axes import axes
from .explain import _column

__all__ = ["epistemic"]

#: The grid reaches this share of the feature's range past its smallest and largest value.
MARGIN = 0.1


def epistemic(model, X, feature, *, X_train=None, grid: int = 50, n_rows: int = 100,
              n_members: int = 10, members: str = "auto", bins: int = 30,
              random_state: int = 0, ax=None):
    """Epistemic (and aleatoric) standard deviation along one numeric feature, over a
    histogram of the training rows' values of it.

    Each of ``n_rows`` rows of X (drawn with ``random_state``) is predicted with the feature
    set to every grid value; ``predict_uncertainty(n_members=..., members=...)`` gives each
    prediction's epistemic and aleatoric variance, and the curves are the square roots of
    their means over the rows.

    Parameters
    ----------
    model : fitted DistributionalRegressor (or another estimator with ``predict_uncertainty``)
    X : array_like or DataFrame of shape (n, p)
        The rows whose other features are kept (e.g. the training rows, or new ones).
    feature : str or int
        Column name (DataFrame X) or position; numeric.
    X_train : array_like or DataFrame of shape (m, p), optional
        The training rows whose values of the feature make the histogram (default: X).
    grid : int
        Grid points, evenly spaced from :data:`MARGIN` of the range below the smallest value
        (of X and X_train) to as far above the largest.
    n_rows : int
        Rows of X predicted at every grid value (all rows when fewer).
    n_members, members
        Passed to ``predict_uncertainty``.
    bins : int
        Bins of the histogram.

    Returns
    -------
    matplotlib Axes
        The curves' axes; the histogram is on a twin axes (``ax.twin`` in the figure).
    """
    j, label = _column(X, feature)
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X, dtype=float))
    train = frame if X_train is None else (
        X_train if isinstance(X_train, pd.DataFrame)
        else pd.DataFrame(np.asarray(X_train, dtype=float)))
    col, seen = frame.iloc[:, j], train.iloc[:, j]
    for c in (col, seen):
        if not pd.api.types.is_numeric_dtype(c.dtype):
            raise ValueError(f"epistemic() needs a numeric feature; {label!r} is {c.dtype}.")
    values = np.r_[col.to_numpy(dtype=float), seen.to_numpy(dtype=float)]
    values = values[np.isfinite(values)]
    if values.size == 0:
        raise ValueError(f"feature {label!r} has no finite value in X or X_train.")
    lo, hi = float(values.min()), float(values.max())
    pad = MARGIN * (hi - lo) if hi > lo else 1.0
    xs = np.linspace(lo - pad, hi + pad, int(grid))
    rng = np.random.default_rng(random_state)
    rows = np.sort(rng.choice(len(frame), min(n_rows, len(frame)), replace=False))
    big = frame.iloc[np.tile(rows, xs.size)].reset_index(drop=True)
    big.iloc[:, j] = np.repeat(xs, rows.size)
    data = big if isinstance(X, pd.DataFrame) else big.to_numpy()
    u = model.predict_uncertainty(data, n_members=n_members, members=members)
    var = {k: np.asarray(u[k], dtype=float).reshape(xs.size, rows.size).mean(axis=1)
           for k in ("epistemic", "aleatoric")}
    ax = axes(ax)
    twin = ax.twinx()
    finite_seen = seen.to_numpy(dtype=float)
    twin.hist(finite_seen[np.isfinite(finite_seen)], bins=bins, range=(lo - pad, hi + pad),
              color="0.85", label="training rows")
    twin.set_ylabel("training rows")
    ax.set_zorder(twin.get_zorder() + 1)  # the curves above the bars
    ax.patch.set_visible(False)
    ax.plot(xs, np.sqrt(var["epistemic"]), color="C3", lw=2.5, label="epistemic sd")
    ax.plot(xs, np.sqrt(var["aleatoric"]), color="C0", lw=1.2, ls="--", label="aleatoric sd")
    ax.set_xlabel(label)
    ax.set_ylabel("standard deviation")
    ax.set_title(f"where the model does not know: {label}")
    ax.legend(loc="upper center", fontsize="small")
    ax.twin = twin
    return ax
