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

References
----------
Vovk, V., Shen, J., Manokhin, V. & Xie, M. (2017). Nonparametric predictive distributions
based on conformal prediction. PMLR 60.  Vovk, V., Nouretdinov, I., Manokhin, V. & Gammerman,
A. (2018). Cross-conformal predictive distributions. PMLR 91.  Vovk, V., Gammerman, A. &
Shafer, G. (2005). Algorithmic Learning in a Random World, Springer.
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

__all__ = ["Calibrated", "TAIL"]

#: Calibration PIT values are kept within [TAIL, 1 - TAIL] in the knots (see the module notes).
TAIL = 1e-9


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

    Notes
    -----
    The parameters are the inner family's (one fold), ``<param>_<k>`` for every fold ``k``
    (several folds), and ``group`` (an integer code, several groups).  The family is for
    prediction only (:class:`~distboost.Predictive`): it is not fitted by boosting.
    """

    kind = "calibrated"
    prefix = "calibrated_"
    default_step = "gradient"

    def __init__(self, family, tables, links=None):
        self._wrap(family, links)
        if self.inner.multivariate:
            raise ValueError(f"Family {self.inner.name!r} is multivariate: PIT calibration "
                             "needs a scalar target.")
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
        return f"Calibrated({self.inner!r}, tables of sizes {sizes})"

    def _state_args(self) -> dict:
        return {"tables": [[t.tolist() for t in row] for row in self.tables]}

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

    def log_cdf(self, params, y):
        return torch.log(self.cdf(params, y))

    def log_sf(self, params, y):
        return torch.log1p(-self.cdf(params, y))

    def sample(self, params, m, seed):
        n = self._rows(params)
        gen = torch.Generator().manual_seed(int(seed) % (2**63))
        return self.icdf(params, torch.rand((m, n), generator=gen, dtype=torch.float64))

    def _moments(self, params):
        """Mean and variance: an exact sum over the integers for a discrete family (up to
        the 1 - 1e-12 quantile), else 200-point Gauss-Legendre quadrature of the quantile
        function (as :class:`~distboost.families.Truncated`)."""
        n = self._rows(params)
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

    def mean(self, params):
        return self._moments(params)[0]

    def variance(self, params):
        return self._moments(params)[1]


def _from_state(family, tables, **kwargs):
    return Calibrated(family, tables, **kwargs)


register_wrapper("calibrated", _from_state)
