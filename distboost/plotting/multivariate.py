"""Figures of multivariate predictions (re-exported by :mod:`distboost.plotting` as ``db.plot``).

* :func:`ellipses`: the predicted joint regions of two parts for a few rows (the central
  ellipses of a multivariate Normal, the highest-density regions of a Dirichlet's pair),
  with each row's mean and observation.
* :func:`correlation`: the predicted correlation of two parts against a feature.
"""

from __future__ import annotations

import numpy as np

from ._axes import axes

__all__ = ["ellipses", "correlation"]

_CIRCLE_POINTS = 241
_GRID = 200
_HDR_DRAWS = 20_000




def _multivariate(dist, what: str, instead: str) -> int:
    family = getattr(dist, "family", None)
    if not getattr(family, "multivariate", False):
        raise ValueError(f"plot.{what} draws multivariate predictive distributions; family "
                         f"{getattr(family, 'name', type(dist).__name__)!r} is univariate "
                         f"({instead}).")
    return int(dist.dim)


def _dims(dist, dims, d: int, what: str, y=None) -> tuple[int, int]:
    """Two distinct part positions from positions or part names (a DataFrame ``y``'s
    columns, else the family's part names)."""
    if y is not None and hasattr(y, "columns") and len(y.columns) == d:
        parts = [str(c) for c in y.columns]
    else:
        parts = list(getattr(dist.family, "parts", [f"y{k}" for k in range(d)]))
    if isinstance(dims, str) or len(dims) != 2:
        raise ValueError(f"plot.{what}: dims must name two parts; got {dims!r}.")
    out = []
    for j in dims:
        if isinstance(j, str):
            if j not in parts:
                raise ValueError(f"plot.{what}: dims names the part {j!r}; the parts are "
                                 f"{parts}.")
            j = parts.index(j)
        if isinstance(j, bool) or not isinstance(j, int | np.integer) or not 0 <= j < d:
            raise ValueError(f"plot.{what}: dims {tuple(dims)} are not two of the {d} parts "
                             f"(positions 0 .. {d - 1} or names {parts}).")
        out.append(int(j))
    if out[0] == out[1]:
        raise ValueError(f"plot.{what}: dims must be two different parts; got {tuple(dims)}.")
    return out[0], out[1]


def _part_names(dist, y, dims) -> list[str]:
    """Axis labels: a DataFrame's columns, the family's target names, else ``y[j]``."""
    if y is not None and hasattr(y, "columns"):
        return [str(y.columns[j]) for j in dims]
    names = getattr(dist.family, "target_names", None)
    return [str(names[j]) if names else f"y[{j}]" for j in dims]


def _gaussian_ring(mean: np.ndarray, cov: np.ndarray, level: float) -> np.ndarray:
    """The boundary of the central ``level`` ellipse of ``N(mean, cov)`` in 2-D, (k, 2):
    ``mean + r A u`` over the unit circle, ``A A' = cov``, ``r^2 = chi2_2(level) =
    -2 log(1 - level)``."""
    w, v = np.linalg.eigh(cov)
    a = v * np.sqrt(np.maximum(w, 0.0))
    t = np.linspace(0.0, 2.0 * np.pi, _CIRCLE_POINTS)
    r = np.sqrt(-2.0 * np.log1p(-level))
    return mean + r * (np.c_[np.cos(t), np.sin(t)] @ a.T)


def _dirichlet_rings(alpha: np.ndarray, dims, levels, rng) -> list[list[np.ndarray]]:
    """Boundaries of the highest-density regions of ``(X_i, X_j)`` of a Dirichlet row: the
    pair with the rest is ``Dirichlet(a_i, a_j, a_0 - a_i - a_j)``, whose density ``f`` is
    exact; the region ``{f >= t_q}`` holds probability ``q`` when ``t_q`` is the
    ``1 - q`` quantile of ``f(X)`` (Hyndman 1996), taken from draws of the pair."""
    import contourpy
    from scipy.special import gammaln

    a = np.array([alpha[dims[0]], alpha[dims[1]], alpha.sum() - alpha[dims[0]]
                  - alpha[dims[1]]])
    const = gammaln(a.sum()) - gammaln(a).sum()

    def logf(u, v):
        rest = 1.0 - u - v
        inside = (u > 0) & (v > 0) & (rest > 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            val = const + (a[0] - 1) * np.log(u) + (a[1] - 1) * np.log(v) \
                + (a[2] - 1) * np.log(rest)
        return np.where(inside, val, -np.inf)

    g = rng.standard_gamma(a, size=(_HDR_DRAWS, 3))
    x = g / g.sum(axis=1, keepdims=True)
    dens = logf(x[:, 0], x[:, 1])
    lo = np.maximum(np.quantile(x[:, :2], 0.0005, axis=0) * 0.9, 0.0)
    hi = np.minimum(np.quantile(x[:, :2], 0.9995, axis=0) * 1.1, 1.0)
    gu, gv = np.linspace(lo[0], hi[0], _GRID), np.linspace(lo[1], hi[1], _GRID)
    z = logf(gu[None, :], gv[:, None])
    floor = np.min(z[np.isfinite(z)]) - 10.0 if np.isfinite(z).any() else -1e300
    z = np.where(np.isfinite(z), np.minimum(z, 700.0), floor)
    gen = contourpy.contour_generator(gu, gv, z, line_type="Separate")
    return [list(gen.lines(float(np.quantile(dens[np.isfinite(dens)], 1.0 - q))))
            for q in levels]


def _default_rows(n: int) -> list[int]:
    return sorted(set(np.linspace(0, n - 1, min(5, n)).round().astype(int).tolist()))


def ellipses(dist, y=None, rows=None, dims=(0, 1), levels=(0.5, 0.9), ax=None, labels=None):
    """The predicted joint regions of two parts for a few rows, with means and observations.

    For each row drawn (one colour each): the region of the pair ``(Y_a, Y_b)`` at every
    probability level, the predicted mean as a dot and, when ``y`` is given, the observation
    as a cross.

    * ``multivariate_normal``: the central ellipses ``{z : (z - mu)' S^-1 (z - mu) <=
      chi2_2(level)}`` of the pair's 2 x 2 covariance ``S`` (exact; also the highest-density
      regions).
    * ``dirichlet``: the highest-density regions of the pair's joint margin, bounded by a
      level curve of its exact density (``(Y_a, Y_b, 1 - Y_a - Y_b)`` is Dirichlet), the
      level set from 20,000 draws with a fixed seed (Hyndman 1996) and traced on a 200 x 200
      grid: not ellipses, and inside the simplex.  With ``d = 2`` parts the pair lies on the
      line ``Y_a + Y_b = 1``: the region is the segment of ``Y_a``'s central interval.
    * another vector family: the ellipses of its mean and covariance (a Gaussian
      approximation).

    Parameters
    ----------
    dist : multivariate Predictive of length n
    y : array_like or DataFrame of shape (n, d), optional
        Observations (a DataFrame's column names label the axes).
    rows : sequence of int, optional
        Positions of the rows to draw; default up to 5 rows spread evenly over the data.
    dims : pair of int or part names, default=(0, 1)
        The two parts (x axis, y axis): positions, or names (the columns of a DataFrame
        ``y``, else the family's part names).
    levels : sequence of float, default=(0.5, 0.9)
        Probability levels in (0, 1) of the regions (solid to dashed as the level grows).
    ax : matplotlib Axes, optional
    labels : sequence of str, optional
        Legend entries of the rows (default ``row <i>``, or the Predictive's index label).

    Returns
    -------
    matplotlib Axes
        Each region's curves carry the gid ``"region row=<i> level=<q>"``.

    Raises
    ------
    ValueError
        For a univariate ``dist``, ``dims`` not two different parts, rows outside the
        Predictive, levels outside (0, 1), ``y`` not of shape (n, d), or labels of the
        wrong length.

    References
    ----------
    Hyndman, R. J. (1996). Computing and graphing highest density regions. The American
    Statistician 50(2), 120-126.
    """
    d = _multivariate(dist, "ellipses", "use db.plot.intervals or db.plot.density")
    i, j = _dims(dist, dims, d, "ellipses", y)
    n = len(dist)
    rows = _default_rows(n) if rows is None else [int(r) for r in np.atleast_1d(rows)]
    bad = [r for r in rows if not -n <= r < n]
    if bad:
        raise ValueError(f"rows {bad} are outside the {n} rows of the Predictive.")
    rows = [r % n for r in rows]
    levels = sorted(float(q) for q in np.atleast_1d(levels))
    if not levels or not all(0.0 < q < 1.0 for q in levels):
        raise ValueError(f"levels must lie in (0, 1); got {levels}.")
    if y is not None and np.shape(y) != (n, d):
        raise ValueError(f"y has shape {np.shape(y)}; expected ({n}, {d}), one observed "
                         f"{d}-vector per row of the Predictive.")
    if labels is None:
        index = getattr(dist, "index", None)
        labels = [f"row {index[r] if index is not None else r}" for r in rows]
    elif len(labels) != len(rows):
        raise ValueError(f"labels has {len(labels)} entries for {len(rows)} rows.")
    ax = axes(ax, (6, 5.5))
    part = dist[np.asarray(rows, dtype=np.intp)]
    mean = np.asarray(part.mean, dtype=np.float64)[:, [i, j]]
    name = dist.family.name
    if name == "dirichlet":
        alpha = np.asarray(part.params["concentration"], dtype=np.float64)
        rng = np.random.default_rng(0)
    else:
        cov = np.asarray(part.covariance, dtype=np.float64)[:, [i, j]][:, :, [i, j]]
    styles = ["-", "--", ":", "-."]
    for k, (r, label) in enumerate(zip(rows, labels, strict=True)):
        color = f"C{k % 10}"
        if name != "dirichlet":
            rings = [[_gaussian_ring(mean[k], cov[k], q)] for q in levels]
        elif d == 2:
            ends = [part[k].marginal(i).interval(q)[0] for q in levels]
            rings = [[np.c_[e, 1.0 - e]] for e in ends]
        else:
            rings = _dirichlet_rings(alpha[k], (i, j), levels, rng)
        for q, curves, style in zip(levels, rings, styles * len(levels), strict=False):
            for c in curves:
                ax.plot(c[:, 0], c[:, 1], color=color, ls=style, lw=1.4,
                        gid=f"region row={r} level={q:g}")
        ax.plot(*mean[k], "o", color=color, ms=6, label=str(label), gid=f"mean row={r}")
        if y is not None:
            obs = np.asarray(y, dtype=np.float64)[r, [i, j]]
            ax.plot(*obs, "x", color=color, ms=9, mew=2, gid=f"observation row={r}")
    from matplotlib.lines import Line2D

    handles = ax.get_legend_handles_labels()[0]
    handles += [Line2D([], [], color="0.3", ls=s, label=f"{q:.0%} region")
                for q, s in zip(levels, styles * len(levels), strict=False)]
    if y is not None:
        handles.append(Line2D([], [], color="0.3", marker="x", ls="", label="observed"))
    ax.legend(handles=handles, loc="best", fontsize="small")
    xname, yname = _part_names(dist, y, (i, j))
    ax.set_xlabel(xname)
    ax.set_ylabel(yname)
    kind = "central ellipses" if name == "multivariate_normal" else "highest-density regions" \
        if name == "dirichlet" else "Gaussian-approximation ellipses"
    ax.set_title(f"{name}: {', '.join(f'{q:.0%}' for q in levels)} {kind} of "
                 f"({xname}, {yname})")
    return ax


def correlation(dist, x, dims=(0, 1), ax=None, truth=None):
    """The predicted correlation of two parts against a feature, sorted by the feature.

    Parameters
    ----------
    dist : multivariate Predictive of length n
    x : array_like or Series of shape (n,)
        The feature (a Series' name labels the axis).
    dims : pair of int or part names, default=(0, 1)
    ax : matplotlib Axes, optional
    truth : array_like of shape (n,) or callable, optional
        The true correlation of every row, or a function of ``x`` giving it (simulated
        data), drawn dashed.

    Returns
    -------
    matplotlib Axes

    Raises
    ------
    ValueError
        For a univariate ``dist``, ``dims`` not two different parts, or ``x`` / ``truth`` not
        of shape (n,).
    """
    d = _multivariate(dist, "correlation", "it has no correlation")
    i, j = _dims(dist, dims, d, "correlation")
    n = len(dist)
    xv = np.asarray(x, dtype=np.float64)
    if xv.shape != (n,):
        raise ValueError(f"x has shape {xv.shape}; expected ({n},), one value per row of the "
                         "Predictive.")
    order = np.argsort(xv, kind="stable")
    rho = np.asarray(dist.correlation, dtype=np.float64)[:, i, j]
    ax = axes(ax, (6, 5.5))
    ax.plot(xv[order], rho[order], color="C0", lw=1.8, label="predicted")
    if truth is not None:
        t = np.asarray(truth(xv) if callable(truth) else truth, dtype=np.float64)
        if t.shape != (n,):
            raise ValueError(f"truth has shape {t.shape}; expected ({n},), the true "
                             "correlation of every row.")
        ax.plot(xv[order], t[order], color="k", ls="--", lw=1.2, label="true")
    ax.axhline(0.0, color="0.6", lw=0.8)
    ax.set_ylim(-1.05, 1.05)
    name = getattr(x, "name", None)
    ax.set_xlabel(str(name) if name is not None else "x")
    a, b = _part_names(dist, None, (i, j))
    ax.set_ylabel(f"correlation of {a} and {b}")
    ax.set_title(f"Predicted correlation ({dist.family.name})")
    ax.legend(loc="best", fontsize="small")
    return ax
