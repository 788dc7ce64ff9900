"""``Calibrated``: a family's predictive law recalibrated by the empirical law of its PIT values.

A conformal predictive system built on a model's own probability integral transforms (Vovk,
Shen, Manokhin & Xie 2017; Vovk, Petej, Nouretdinov, Manokhin & Gammerman 2020) predicts, for a
new row with model cdf ``F``, the cdf ``C(y) = G(F(y))``, where ``G`` is the empirical
distribution function of the calibration rows' PIT values ``a_i = F_i(y_i)`` (randomised,
``F_i(y_i - 1) + V (F_i(y_i) - F_i(y_i - 1))``, for a discrete family).  Here ``G`` is the
piecewise-linear interpolation of that step function through ``(0, 0)``, ``(a_(j), j / (c + 1))``
and ``(1, 1)`` (``c`` calibration values): a continuous, strictly increasing map, so the
calibrated law keeps a density, ``g(F(y)) f(y)``, and exact quantiles ``F^{-1}(G^{-1}(p))``.
(The finite-sample guarantees are those of the step function; :class:`~distboost.conformal.
ConformalRegressor` computes its intervals from it exactly.)  A calibration PIT of exactly 0
or 1 (a row beyond the inner law's floating-point tail: heavy-tailed noise under a Normal) would
make a bin of zero width at an end, that is a point mass at minus or plus infinity and an
infinite mean; the knots are therefore kept within ``[TAIL, 1 - TAIL]`` (``TAIL = 1e-9``): that
row's share of mass lies beyond the inner law's ``TAIL`` quantile, and the moments stay finite.

Cross-conformal predictive systems (Vovk et al. 2018) average ``K`` such maps, one per fold,
each composed with the cdf of the model that did not see that fold:
``C(y) = sum_k w_k G_k(F_k(y))`` with ``w_k`` the fold's share of the calibration rows; the
parameters of fold ``k``'s model are named ``<param>_<k>``.  Mondrian calibration (Vovk et al.
2005, ch. 4.5) keeps one set of maps per group; a row's ``group`` parameter (an integer code)
picks its set.

``aggregation="shrunk"`` combines the folds' calibrated laws by their quantile functions
instead (Vincentisation, Ratcliff 1979): ``Q(p) = m + c (Q_bar(p) - m)``, with ``Q_bar`` the
mean of the folds' quantile functions ``Q_k = F_k^{-1} o G_k^{-1}``, ``m = Q_bar(1/2)``, and a
factor ``c`` of each row's own members: ``c^2 = (mean_k s_k^2 - w) / s_bar^2``, ``s_k`` fold
``k``'s half-width between its 0.1587 and 0.8413 quantiles (a standard deviation for a
Normal), ``w`` the variance of the folds' medians and ``s_bar`` the half-width of ``Q_bar``;
``c^2`` is clipped to [1/4, 4].  The average of models errs by the members' mean squared
error less their spread (Krogh & Vedelsby 1995): a calibrated member's spread ``s_k^2``
stands for its error, so the average's law is narrowed by the members' disagreement ``w``.
It is not a linear pool, and it has no finite-sample guarantee: its coverage is measured
(docs/benchmarks.md, "Conformal calibration").  Continuous families only.

References
----------
Vovk, V., Shen, J., Manokhin, V. & Xie, M. (2017). Nonparametric predictive distributions
based on conformal prediction. PMLR 60.  Vovk, V., Nouretdinov, I., Manokhin, V. & Gammerman,
A. (2018). Cross-conformal predictive distributions. PMLR 91.  Vovk, V., Gammerman, A. &
Shafer, G. (2005). Algorithmic Learning in a Random World, Springer.  Ratcliff, R. (1979).
Group reaction time distributions and an analysis of distribution statistics. Psychological
Bulletin 86(3).  Krogh, A. & Vedelsby, J. (1995). Neural network ensembles, cross
validation, and active learning. NIPS 7.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from ..links import get_link
from .numerics.inversion import _bisect, invert_cdf
from .numerics.shapes import broadcast_shapes
from .registry import register_wrapper
from .truncated import _U, _W
from .wrapper import Wrapped

__all__ = ["Calibrated", "TAIL", "AGGREGATIONS"]

#: Calibration PIT values are kept within [TAIL, 1 - TAIL] in the knots (see the module notes).
TAIL = 1e-9
#: How several folds' calibrated laws combine (module notes).
AGGREGATIONS = ("pool", "shrunk")
#: The levels whose half-distance is a law's spread in ``aggregation="shrunk"`` (a Normal's
#: mean -/+ one standard deviation), and the range of ``c^2``.
_SPREAD_LEVELS = (0.15865525393145707, 0.8413447460685429)
_C2_RANGE = (0.25, 4.0)


def _ragged(tables) -> list[list[np.ndarray]]:
    """``tables[g][k]``: sorted float64 arrays, validated to lie in [0, 1]."""
    out = []
    for g, row in enumerate(tables):
        out_row = []
        for k, values in enumerate(row):
            a = np.sort(np.asarray(values, dtype=np.float64).ravel())
            if a.size == 0:
                raise ValueError(f"Calibration table ({g}, {k}) is empty.")
            if not (np.all(np.isfinite(a)) and a[0] >= 0.0 and a[-1] <= 1.0):
                raise ValueError(f"Calibration table ({g}, {k}) has values outside [0, 1].")
            out_row.append(a)
        out.append(out_row)
    if len({len(row) for row in out}) != 1:
        raise ValueError("Every group needs one calibration table per fold.")
    return out


class Calibrated(Wrapped):
    """A family recalibrated by the empirical law of calibration PIT values.

    Parameters
    ----------
    family : str or Family
        The model's family (the inner law ``F``).
    tables : sequence of sequences of array_like
        ``tables[g][k]``: the calibration PIT values of group ``g`` scored by fold ``k``'s
        model (values in [0, 1]); one group and one fold for split conformal calibration.
    aggregation : {"pool", "shrunk"}, default="pool"
        How several folds combine: their linear pool (the cross-conformal predictive
        system), or their quantile functions averaged and narrowed by the folds'
        disagreement (module notes; continuous families only).

    Notes
    -----
    The parameters are the inner family's (one fold), ``<param>_<k>`` for every fold ``k``
    (several folds), and ``group`` (an integer code, several groups).  The family is for
    prediction only (:class:`~distboost.Predictive`): it is not fitted by boosting.
    """

    kind = "calibrated"
    prefix = "calibrated_"
    default_step = "gradient"

    def __init__(self, family, tables, links=None, aggregation: str = "pool"):
        self._wrap(family, links)
        if self.inner.multivariate:
            raise ValueError(f"Family {self.inner.name!r} is multivariate: PIT calibration "
                             "needs a scalar target.")
        if aggregation not in AGGREGATIONS:
            raise ValueError(f"aggregation must be one of {list(AGGREGATIONS)}; got "
                             f"{aggregation!r}.")
        if aggregation == "shrunk" and self.inner.discrete:
            raise ValueError(f"aggregation='shrunk' averages quantile functions, which leaves "
                             f"the integers of family {self.inner.name!r}: use 'pool'.")
        self.aggregation = aggregation
        self.tables = _ragged(tables)
        self.n_groups, self.n_folds = len(self.tables), len(self.tables[0])
        counts = np.array([[t.size for t in row] for row in self.tables], dtype=np.float64)
        self._weights = counts / counts.sum(axis=1, keepdims=True)
        # Knots of each piecewise-linear map: 0, the sorted values (within [TAIL, 1 - TAIL]: no
        # bin of zero width at an end, so no point mass at an infinite end), 1.
        self._knots = [[torch.as_tensor(np.r_[0.0, np.clip(t, TAIL, 1.0 - TAIL), 1.0])
                        for t in row] for row in self.tables]

    def __repr__(self) -> str:
        sizes = [[t.size for t in row] for row in self.tables]
        extra = "" if self.aggregation == "pool" else f", aggregation={self.aggregation!r}"
        return f"Calibrated({self.inner!r}, tables of sizes {sizes}{extra})"

    def _state_args(self) -> dict:
        out = {"tables": [[t.tolist() for t in row] for row in self.tables]}
        return out if self.aggregation == "pool" else {**out, "aggregation": self.aggregation}

    @property
    def _shrunk(self) -> bool:
        return self.aggregation == "shrunk" and self.n_folds > 1

    @property
    def cheap_quantiles(self) -> bool:
        """The shrunk average's quantiles are direct, its cdf a bisection of them: its CRPS
        is integrated over levels (:mod:`distboost.predictive.numerical_crps`)."""
        return self._shrunk

    @property
    def param_names(self) -> tuple[str, ...]:
        names = self.inner.param_names
        if self.n_folds > 1:
            names = tuple(f"{p}_{k}" for k in range(self.n_folds) for p in names)
        return names + (("group",) if self.n_groups > 1 else ())

    @property
    def links(self):
        inner = self.inner.links
        out = {p: inner[p if p in inner else p.rsplit("_", 1)[0]]
               for p in self.param_names if p != "group"}
        if self.n_groups > 1:
            out["group"] = get_link("identity")  # an integer code, any real value checked
        return out

    @property
    def closed_form_mle(self) -> bool:
        return False

    # ------------------------------------------------------------------ pieces
    def _fold_params(self, params, k: int) -> dict:
        if self.n_folds == 1:
            return {p: params[p] for p in self.inner.param_names}
        return {p: params[f"{p}_{k}"] for p in self.inner.param_names}

    def _groups(self, params, n: int) -> list[tuple[int, torch.Tensor]]:
        """``(group, row mask)`` for every group present (the mask of shape (n,))."""
        if self.n_groups == 1:
            return [(0, torch.ones(n, dtype=torch.bool))]
        code = torch.as_tensor(params["group"]).round().long()
        if bool(((code < 0) | (code >= self.n_groups)).any()):
            raise ValueError(f"Parameter 'group' must hold codes 0 .. {self.n_groups - 1}.")
        return [(g, code == g) for g in range(self.n_groups) if bool((code == g).any())]

    def _map(self, g: int, k: int, u: torch.Tensor, density: bool = False) -> torch.Tensor:
        """``G_{g,k}(u)`` (or its density ``g_{g,k}(u)``), elementwise."""
        knots = self._knots[g][k]
        c = knots.numel() - 2
        u = u.clamp(0.0, 1.0)
        j = (torch.searchsorted(knots, u.contiguous(), right=True) - 1).clamp(0, c)
        lo, hi = knots[j], knots[j + 1]
        width = hi - lo
        if density:
            return torch.where(width > 0, 1.0 / ((c + 1) * width.clamp_min(1e-300)),
                               torch.zeros_like(u))
        frac = torch.where(width > 0, (u - lo) / width.clamp_min(1e-300), torch.ones_like(u))
        return (j + frac.clamp(0.0, 1.0)) / (c + 1)

    def _map_inverse(self, g: int, k: int, p: torch.Tensor) -> torch.Tensor:
        """``G_{g,k}^{-1}(p)``, elementwise."""
        knots = self._knots[g][k]
        c = knots.numel() - 2
        s = p.clamp(0.0, 1.0) * (c + 1)
        j = torch.floor(s).long().clamp(0, c)
        return knots[j] + (s - j) * (knots[j + 1] - knots[j])

    def pit_map(self, u, group: int = 0, density: bool = False) -> torch.Tensor:
        """``G(u)``, the calibrated PIT of a raw PIT ``u`` (or the map's density ``g(u)``),
        by the first fold's table of ``group``; elementwise."""
        return self._map(group, 0, torch.as_tensor(u, dtype=torch.float64), density)

    def pit_map_inverse(self, p, group: int = 0) -> torch.Tensor:
        """``G^{-1}(p)``, the raw PIT level of a calibrated level ``p`` (first fold's table of
        ``group``); elementwise."""
        return self._map_inverse(group, 0, torch.as_tensor(p, dtype=torch.float64))

    def _rows(self, params) -> int:
        return next(iter(params.values())).shape[-1]

    # ------------------------------------------------------------------ distribution functions
    def cdf(self, params, y):
        y = torch.as_tensor(y, dtype=torch.float64)
        if self._shrunk:
            return self._shrunk_cdf(params, y)
        out = torch.zeros(broadcast_shapes(y.shape, (self._rows(params),)),
                          dtype=torch.float64)
        groups = self._groups(params, self._rows(params))
        for k in range(self.n_folds):  # the inner law once per fold, its map per group
            inner = self.inner.cdf(self._fold_params(params, k), y)
            for g, rows in groups:
                part = self._weights[g, k] * self._map(g, k, inner)
                out = torch.where(rows, out + part, out)
        return out

    def log_prob(self, params, y):
        y = torch.as_tensor(y, dtype=torch.float64)
        if self.inner.discrete:
            with torch.no_grad():
                mass = self.cdf(params, y) - self.cdf(params, y - 1.0)
            return torch.log(mass)
        if self._shrunk:
            return self._shrunk_log_prob(params, y)
        shape = broadcast_shapes(y.shape, (self._rows(params),))
        out = torch.full(shape, -math.inf, dtype=torch.float64)
        folds = [self._fold_params(params, k) for k in range(self.n_folds)]
        inner = [(self.inner.cdf(f, y), self.inner.log_prob(f, y)) for f in folds]
        for g, rows in self._groups(params, self._rows(params)):
            terms = [math.log(self._weights[g, k]) + torch.log(self._map(g, k, c, density=True))
                     + lp for k, (c, lp) in enumerate(inner)]
            out = torch.where(rows, torch.logsumexp(torch.stack(terms), dim=0), out)
        return out

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        n = self._rows(params)
        if self.n_folds == 1:
            return self._fold_quantile(params, 0, q, n)
        if self._shrunk:
            return self._shrunk_icdf(params, q, n)
        if self.inner.discrete:
            return invert_cdf(lambda v: self.cdf(params, v), q, self.support)
        # The mixture's quantile lies between its folds' own quantiles (each C_k(x_k) = q):
        # bisect on that bracket, a few dozen cdf calls instead of a search from scratch,
        # to float64's resolution (a relative 1e-10 was 0.1 at a target offset by 1e9).
        xs = torch.stack([self._fold_quantile(params, k, q, n) for k in range(self.n_folds)])
        lo, hi = xs.min(dim=0).values, xs.max(dim=0).values
        inside = (q > 0.0) & (q < 1.0) & torch.isfinite(lo) & torch.isfinite(hi)
        zero = torch.zeros_like(lo)
        x = _bisect(lambda v: self.cdf(params, v), q, torch.where(inside, lo, zero),
                    torch.where(inside, hi, zero), rtol=1e-15, atol=1e-300)
        return torch.where(inside, x, torch.where(q < 0.5, lo, hi))

    def _fold_quantile(self, params, k: int, q: torch.Tensor, n: int) -> torch.Tensor:
        """``F_k^{-1}(G_{g,k}^{-1}(q))`` for every row (its group's map), shape ``q.shape``."""
        level = torch.zeros(broadcast_shapes(q.shape, (n,)), dtype=torch.float64)
        for g, rows in self._groups(params, n):  # each row's raw level by its group's map
            level = torch.where(rows, self._map_inverse(g, k, q), level)
        return self.inner.icdf(self._fold_params(params, k), level)

    # ------------------------------------------------------------------ aggregation="shrunk"
    def _centre_and_factor(self, params, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Each row's ``m`` and ``c`` (module notes), shape (n,)."""
        lo, hi = (torch.full((n,), a, dtype=torch.float64) for a in _SPREAD_LEVELS)
        half = torch.full((n,), 0.5, dtype=torch.float64)
        folds = range(self.n_folds)
        spread = torch.stack([(self._fold_quantile(params, k, hi, n)
                               - self._fold_quantile(params, k, lo, n)) / 2 for k in folds])
        medians = torch.stack([self._fold_quantile(params, k, half, n) for k in folds])
        v, w = (spread ** 2).mean(0), medians.var(0, unbiased=False)
        s2 = spread.mean(0) ** 2
        c2 = torch.where(s2 > 0, (v - w) / s2.clamp_min(1e-300), torch.ones_like(s2))
        return medians.mean(0), torch.sqrt(c2.clamp(*_C2_RANGE))

    def _shrunk_icdf(self, params, q: torch.Tensor, n: int, centre=None) -> torch.Tensor:
        m, c = self._centre_and_factor(params, n) if centre is None else centre
        avg = torch.stack([self._fold_quantile(params, k, q, n)
                           for k in range(self.n_folds)]).mean(0)
        # c > 1 widens the average: kept inside the support (a positive family stays >= 0).
        return (m + c * (avg - m)).clamp(self.inner.support.low, self.inner.support.high)

    def _shrunk_level(self, params, y: torch.Tensor, centre=None) -> torch.Tensor:
        """``p`` with ``Q(p) = y`` by bisection on (0, 1), elementwise (``Q`` increases)."""
        n = self._rows(params)
        centre = self._centre_and_factor(params, n) if centre is None else centre
        shape = broadcast_shapes(y.shape, (n,))
        lo = torch.zeros(shape, dtype=torch.float64)
        hi = torch.ones(shape, dtype=torch.float64)
        return _bisect(lambda p: self._shrunk_icdf(params, p, n, centre), y.expand(shape),
                       lo, hi, rtol=0.0, atol=1e-16)

    def _shrunk_cdf(self, params, y: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            return self._shrunk_level(params, y)

    def _shrunk_log_prob(self, params, y: torch.Tensor) -> torch.Tensor:
        """``-log Q'(p)`` at ``p = C(y)``: ``Q' = c mean_k 1 / (g_k(u_k) f_k(x_k))``, with
        ``u_k = G_k^{-1}(p)`` and ``x_k = F_k^{-1}(u_k)``."""
        n = self._rows(params)
        with torch.no_grad():
            centre = self._centre_and_factor(params, n)
            p, c = self._shrunk_level(params, y, centre), centre[1]
            slopes = []
            for k in range(self.n_folds):
                u = torch.zeros_like(p)
                log_g = torch.zeros_like(p)
                for g, rows in self._groups(params, n):
                    u_g = self._map_inverse(g, k, p)
                    u = torch.where(rows, u_g, u)
                    log_g = torch.where(rows, torch.log(self._map(g, k, u_g, density=True)),
                                        log_g)
                x = self.inner.icdf(self._fold_params(params, k), u)
                slopes.append(-log_g - self.inner.log_prob(self._fold_params(params, k), x))
            log_slope = torch.logsumexp(torch.stack(slopes), 0) - math.log(self.n_folds)
            out = -(torch.log(c) + log_slope)
        return torch.where((p > 0) & (p < 1), out, torch.full_like(out, -math.inf))

    def log_cdf(self, params, y):
        return torch.log(self.cdf(params, y))

    def log_sf(self, params, y):
        return torch.log1p(-self.cdf(params, y))

    def sample(self, params, m, seed):
        """``m`` draws per row, shape (m, n): by the quantile function at uniform levels; for
        the pool of several folds, each draw from one fold's calibrated law, picked with its
        weight (a mixture's draw, exact, without bisecting the pool's quantile function)."""
        n = self._rows(params)
        gen = torch.Generator().manual_seed(int(seed) % (2**63))
        u = torch.rand((m, n), generator=gen, dtype=torch.float64)
        if self.n_folds == 1 or self._shrunk:
            return self.icdf(params, u)
        pick = torch.rand((m, n), generator=gen, dtype=torch.float64)
        cum = torch.zeros((self.n_folds, n), dtype=torch.float64)
        for g, rows in self._groups(params, n):  # each row's fold weights, by its group
            cum = torch.where(rows, torch.as_tensor(np.cumsum(self._weights[g]))[:, None], cum)
        fold = (pick[None] >= cum[:-1, None, :]).sum(dim=0)  # (m, n): 0 .. K - 1
        out = torch.zeros((m, n), dtype=torch.float64)
        for k in range(self.n_folds):
            out = torch.where(fold == k, self._fold_quantile(params, k, u, n), out)
        return out

    def _moments(self, params):
        """Mean and variance: an exact sum over the integers for a discrete family (up to
        the 1 - 1e-12 quantile), else 200-point Gauss-Legendre quadrature of the quantile
        function (as :class:`~distboost.families.Truncated`); for the pool of several folds,
        of each fold's own quantile function (closed form where the family's is), combined
        as a mixture's (the weighted means, and the weighted variances plus the spread of the
        means): the pool's quantile function would need a bisection at every node."""
        n = self._rows(params)
        if self.n_folds > 1 and not self._shrunk and not self.inner.discrete:
            return self._pool_moments(params, n)
        if self.inner.discrete:
            top = self.icdf(params, torch.full((n,), 1.0 - 1e-12, dtype=torch.float64))
            low = max(self.support.low, 0.0)
            k = torch.arange(low, float(top.max()) + 1.0, dtype=torch.float64)[:, None]
            sf = 1.0 - self.cdf(params, k.expand(-1, n))
            mean = low + sf.sum(0)
            second = low * low + ((2 * k + 1) * sf).sum(0)
            return mean, second - mean * mean
        u = torch.as_tensor(_U)[:, None]
        x = self.icdf(params, u.expand(len(_U), n))
        w = torch.as_tensor(_W)[:, None]
        mean = (w * x).sum(dim=0)
        return mean, (w * (x - mean) ** 2).sum(dim=0)

    def _pool_moments(self, params, n: int):
        u = torch.as_tensor(_U)[:, None].expand(len(_U), n)
        w = torch.as_tensor(_W)[:, None]
        means, variances = [], []
        for k in range(self.n_folds):
            x = self._fold_quantile(params, k, u, n)
            mean_k = (w * x).sum(dim=0)
            means.append(mean_k)
            variances.append((w * (x - mean_k) ** 2).sum(dim=0))
        share = torch.zeros((self.n_folds, n), dtype=torch.float64)
        for g, rows in self._groups(params, n):  # each row's folds weighted by its group's
            share = torch.where(rows, torch.as_tensor(self._weights[g])[:, None], share)
        means, variances = torch.stack(means), torch.stack(variances)
        mean = (share * means).sum(dim=0)
        return mean, (share * (variances + (means - mean) ** 2)).sum(dim=0)

    def mean(self, params):
        return self._moments(params)[0]

    def variance(self, params):
        return self._moments(params)[1]


def _from_state(family, tables, aggregation="pool", **kwargs):
    return Calibrated(family, tables, aggregation=aggregation, **kwargs)


register_wrapper("calibrated", _from_state)
