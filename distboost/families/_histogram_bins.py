"""The fixed layout of the ``histogram`` family: its categories of ``y`` and their spline basis.

Everything here is numpy and runs once, when the family reads the training target
(:meth:`distboost.families.histogram.Histogram.encode_target`) or is rebuilt from a saved
state.  A layout is a row of categories along the real line, in order:

* a lower tail (absent when the support's lower bound is the first edge),
* ``B`` inner bins between the edges ``e_0 < ... < e_B`` (intervals ``[e_{b-1}, e_b)`` of a
  continuous target, or the integers between two half-integer edges of a discrete one),
* an upper tail (absent when the support's upper bound is the last edge).

A tail is an exponential law (continuous ``y``) or a geometric one (integer ``y``) of scale
``s`` leaving its edge, truncated at the support's bound when there is one.  Edges sit at
equally spaced quantile levels of the training ``y`` (so each category holds about the same
number of rows); a value that holds many rows of an integer target gets a bin of its own.

Each category has a *position* on the ``y`` axis (a bin's midpoint; one scale out into a
tail) at which ``J + 3`` cubic B-splines are evaluated (knots equally spaced over the
categories' ranks, placed at their positions, so at quantiles of ``y``); their span less the
constant, linear and quadratic functions of the position (the family's binned normal factor
carries those), orthonormalised under the training frequencies, is the matrix ``Phi`` of shape
(C, J): the low-rank shape basis of the category logits (Kooperberg & Stone 1991, "A study of
logspline density estimation", Comput. Stat. Data Anal. 12, 327-347).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.interpolate import BSpline

__all__ = ["Layout", "build_layout", "make_layout"]

#: Share of the training rows beyond each outer edge: at least one category's share, and
#: enough rows (``TAIL_ROWS``) to estimate the tail's scale, at most ``TAIL_SHARE_MAX``.
TAIL_ROWS = 10
TAIL_SHARE_MAX = 0.05
#: Smallest scale of a geometric tail (mean excess, in integer steps).
MIN_GEOMETRIC_SCALE = 0.25


class Layout:
    """The categories of a histogram family and their basis (see the module docstring).

    Attributes (arrays of shape (C,) with ``C = B + 2``; a missing tail keeps its slot with
    ``present`` False):

    present : bool
    kind : int
        0 inner bin, -1 lower tail, +1 upper tail.
    lo, hi : float
        An inner bin's ends (continuous ``[lo, hi)``; integers ``lo .. hi`` when discrete).
    anchor, scale, length : float
        A tail's edge (continuous) or first integer (discrete), scale ``s`` and distance to the
        support's bound (``inf`` when unbounded; the number of integers minus one when
        discrete).
    log_size : float
        ``log`` of a category's mass per unit of its level (width, count of integers, or the
        tail's normaliser); ``-inf`` for a missing tail.
    position : float
    phi : ndarray of shape (C, J)
    """

    def __init__(self, edges, low, high, discrete, tail_scales, knots, degree, weights=None):
        self.edges = np.asarray(edges, dtype=np.float64)
        self.low, self.high, self.discrete = low, high, bool(discrete)
        self.tail_scales = tuple(float(s) for s in tail_scales)
        self.knots = np.asarray(knots, dtype=np.float64)
        self.degree = int(degree)
        e = self.edges
        b = e.size - 1
        c = b + 2
        self.kind = np.r_[-1, np.zeros(b, dtype=int), 1]
        lo = np.r_[e[0] - 1.0, e[:-1], e[-1]]
        hi = np.r_[e[0], e[1:], e[-1] + 1.0]
        if self.discrete:  # half-integer edges: the integers strictly between them
            lo, hi = lo + 0.5, hi - 0.5
        self.lo, self.hi = lo, hi
        lo_bound = -math.inf if low is None else float(low)
        hi_bound = math.inf if high is None else float(high)
        step = 0.5 if self.discrete else 0.0
        self.anchor = np.r_[e[0] - step, np.zeros(b), e[-1] + step]
        self.length = np.r_[self.anchor[0] - lo_bound, np.zeros(b), hi_bound - self.anchor[-1]]
        self.scale = np.r_[self.tail_scales[0], np.ones(b), self.tail_scales[1]]
        self.present = np.ones(c, dtype=bool)
        self.present[0] = self.length[0] >= 0 if self.discrete else self.length[0] > 0
        self.present[-1] = self.length[-1] >= 0 if self.discrete else self.length[-1] > 0
        tails = np.array([0, c - 1])
        self.length[tails[~self.present[tails]]] = math.inf  # harmless values, never used
        size = np.where(self.discrete, hi - lo + 1.0, hi - lo)
        for j in tails:
            size[j] = self._tail_size(self.scale[j], self.length[j])
        self.log_size = np.where(self.present, np.log(size), -math.inf)
        position = 0.5 * (lo + hi)
        position[tails] = self.anchor[tails] + self.kind[tails] * self.scale[tails]
        self.position = position
        self.weights = (np.where(self.present, 1.0, 0.0) if weights is None
                        else np.asarray(weights, dtype=np.float64))
        self.phi = np.zeros((c, 0))
        if self.knots.size:
            self.phi = np.zeros((c, self.knots.size - self.degree - 1))
            self.phi[self.present] = BSpline.design_matrix(position[self.present], self.knots,
                                                           self.degree).toarray()
            self.phi = orthonormal_basis(position, self.phi, self.weights, self.present)

    def _tail_size(self, s: float, length: float) -> float:
        """Mass of a tail per unit of its level at the edge (density or mass there)."""
        if self.discrete:
            rho = s / (1.0 + s)
            q = 1.0 if math.isinf(length) else 1.0 - rho ** (length + 1.0)
            return q / (1.0 - rho)
        return s * (1.0 if math.isinf(length) else -math.expm1(-length / s))

    @property
    def n_basis(self) -> int:
        """``J``: basis functions (one per boosted parameter)."""
        return self.phi.shape[1]

    @property
    def n_bins(self) -> int:
        return self.edges.size - 1


def orthonormal_basis(position, splines, weights, present, tol: float = 1e-9) -> np.ndarray:
    """The span of the splines less its constants, linear and quadratic functions of the
    position, as columns orthonormal under ``weights`` (Gram-Schmidt, twice, dropping
    dependent columns).

    The Gaussian factor of the family carries location and spread; these columns carry only
    shape.  With the training frequencies as ``weights`` they are uncorrelated at the
    marginal law (the Fisher information of their coefficients is the identity there).  Rows
    of missing categories are zero.

    Returns
    -------
    ndarray of shape (C, J)
    """
    w = np.where(present, weights, 0.0)
    w = w / w.sum()
    mean = np.sum(w * position)
    sd = math.sqrt(np.sum(w * (position - mean) ** 2)) or 1.0
    t = np.where(present, (position - mean) / sd, 0.0)
    kept: list[np.ndarray] = []
    out: list[np.ndarray] = []
    for i, col in enumerate([t, t * t, *splines.T]):
        v = np.where(present, col, 0.0)
        v = v - np.sum(w * v)
        norm0 = math.sqrt(np.sum(w * v * v))
        for _ in range(2):
            for u in kept:
                v = v - np.sum(w * u * v) * u
        norm = math.sqrt(np.sum(w * v * v))
        if norm0 > 0 and norm > tol * max(norm0, 1.0):
            kept.append(v / norm)
            if i >= 2:
                out.append(v / norm)
    return np.stack(out, axis=1) if out else np.zeros((position.size, 0))


def _continuous_edges(y: np.ndarray, n_bins: int, share: float) -> np.ndarray:
    levels = share + (1.0 - 2.0 * share) * np.arange(n_bins + 1) / n_bins
    return np.unique(np.quantile(y, levels))


def _discrete_edges(y: np.ndarray, n_bins: int, share: float) -> np.ndarray:
    """Half-integer edges: one bin per integer when the range is short, else quantile bins
    with every heavy value (more rows than one category's share) in a bin of its own."""
    lo_v, hi_v = float(y.min()), float(y.max())
    if hi_v - lo_v + 1.0 <= n_bins:
        return np.arange(lo_v - 0.5, hi_v + 1.0)
    levels = share + (1.0 - 2.0 * share) * np.arange(n_bins + 1) / n_bins
    q = np.quantile(y, levels, method="inverted_cdf")
    values, counts = np.unique(y, return_counts=True)
    heavy = values[(counts >= y.size / (n_bins + 2)) & (values >= q[0]) & (values <= q[-1])]
    return np.unique(np.r_[q[0] - 0.5, q + 0.5, heavy - 0.5, heavy + 0.5])


def _tail_scale(excess: np.ndarray, fallback: float, discrete: bool) -> float:
    s = float(np.mean(excess)) if excess.size and np.mean(excess) > 0 else fallback
    return max(s, MIN_GEOMETRIC_SCALE) if discrete else s


def build_layout(y: np.ndarray, n_bins: int, n_basis: int, low, high, discrete: bool) -> Layout:
    """The layout read from a training target (1-D, finite, inside ``[low, high]``).

    Raises
    ------
    ValueError
        When ``y`` has fewer than two distinct values.
    """
    values = np.unique(y)
    if values.size < 2:
        raise ValueError(
            f"Family 'histogram' needs at least 2 distinct values of y to place its bins; all "
            f"{y.size} rows equal {values[0]:g}.")
    share = min(max(1.0 / (n_bins + 2), TAIL_ROWS / y.size), TAIL_SHARE_MAX)
    edges = (_discrete_edges if discrete else _continuous_edges)(y, n_bins, share)
    if edges.size < 2:  # every row on one side of a single edge (heavy ties)
        edges = np.r_[values[0], values[-1]] if not discrete else np.r_[values[0] - 0.5,
                                                                        values[0] + 0.5]
    step = 0.5 if discrete else 0.0
    below, above = y[y < edges[0] - step], y[y >= edges[-1] + step]
    scales = [_tail_scale(edges[0] - step - below, edges[1] - edges[0], discrete),
              _tail_scale(above - edges[-1] - step, edges[-1] - edges[-2], discrete)]
    # A truncated tail is at most half as wide as its room (it is nearly uniform beyond that,
    # and its closed forms keep their digits).
    for j, room in enumerate((edges[0] - step - (low if low is not None else -math.inf),
                              (high if high is not None else math.inf) - edges[-1] - step)):
        if math.isfinite(room) and room > 0:
            scales[j] = min(scales[j], max(room / 2.0, MIN_GEOMETRIC_SCALE if discrete
                                           else room / 2.0))
    probe = Layout(edges, low, high, discrete, scales, knots=np.zeros(0), degree=0)
    # Training frequencies of the categories, with half a row in each (no zero weights).
    idx = np.searchsorted(probe.edges, y, side="right")
    counts = np.bincount(idx, minlength=probe.kind.size) + 0.5
    weights = np.where(probe.present, counts, 0.0)
    return make_layout(probe, n_basis, weights / weights.sum())


def make_layout(probe: Layout, n_basis: int, weights) -> Layout:
    """``probe``'s categories with ``J = min(n_basis, C - 3)`` shape functions: cubic
    B-splines (``J + 3`` of them) less constants, linear and quadratic functions,
    orthonormalised under ``weights`` (:func:`orthonormal_basis`)."""
    pos = probe.position[probe.present]
    j = int(max(min(n_basis, pos.size - 3), 0))
    if j == 0:
        return Layout(probe.edges, probe.low, probe.high, probe.discrete, probe.tail_scales,
                      np.zeros(0), 0, weights)
    degree = 3
    n_inner = j - 1
    ranks = np.linspace(0.0, 1.0, pos.size)
    inner = np.interp(np.arange(1, n_inner + 1) / (n_inner + 1), ranks, pos)
    knots = np.r_[np.full(degree + 1, pos[0]), inner, np.full(degree + 1, pos[-1])]
    return Layout(probe.edges, probe.low, probe.high, probe.discrete, probe.tail_scales,
                  knots, degree, weights)
