"""``EqualMixture(component, m)``: per row, the equally weighted mixture of ``m`` laws of one
family, as a family.

A recursive forecaster grows sample paths step by step; at step ``h`` path ``p`` has a
one-step law ``f(y_h | path p)`` given its own past.  The marginal law of ``y_h`` is the
average of those laws over the paths,

    ``F(y) = (1 / m) sum_p F_p(y)``,

a Rao-Blackwellised estimate of the marginal (Casella & Robert 1996, Biometrika 83): it
conditions the Monte Carlo draw of the last step away, so it has the variance of the paths'
histories only, a density, and smooth tails, where the empirical law of the draws
(:class:`~distboost.families.Empirical`) has a step cdf and no density.  Held in a
:class:`~distboost.Predictive` it answers:

* ``cdf`` the average of the components' cdfs; ``log_prob`` the log of the average density
  (a log-mean-exp);
* ``icdf`` by bisection of that cdf within the smallest and largest of the components'
  quantiles of the same level (every mixture quantile lies between them); for counts the
  smallest integer ``k`` with ``F(k) >= q``;
* mean and variance by the laws of total expectation and variance;
* draws: a component picked uniformly per draw, then one draw of it;
* the CRPS in closed form for normal components (also ``Affine("normal")`` ones), Grimit,
  Gneiting, Berrocal & Johnson (2006, QJRMS 132), eq. 9 with equal weights; numerically
  (:mod:`distboost.predictive.numerical_crps`) otherwise.

Parameters are the component's with a suffix, ``loc_0, scale_0, ..., loc_{m-1},
scale_{m-1}``, each of shape (n,).  The family is for prediction only (``init`` raises): it
describes a forecast, it is not boosted.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .base import Family, as_float64_tensor
from .numerics.crps import _abs_normal_mean
from .numerics.inversion import _bisect, invert_cdf

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)

__all__ = ["EqualMixture"]

#: Elements of the (rows, m, m) pair table of the closed-form CRPS computed at once.
_PAIR_CHUNK = 4_000_000
#: Elements of the (levels, rows, m) tables of :meth:`EqualMixture.icdf` computed at once.
_QUANTILE_CHUNK = 4_000_000


class EqualMixture(Family):
    """Per row, the equally weighted mixture of ``n_components`` laws of one family (module
    docstring).

    Parameters
    ----------
    component : Family
        The components' family: any univariate family (continuous, a count family, or a
        wrapper such as :class:`~distboost.families.Affine`).
    n_components : int
        ``m >= 1`` laws per row.

    Examples
    --------
    >>> import distboost as db
    >>> fam = db.families.EqualMixture(db.families.get("normal"), 2)
    >>> d = db.Predictive.from_params(fam, loc_0=-1.0, scale_0=1.0, loc_1=1.0, scale_1=1.0)
    >>> d.mean.tolist(), round(float(d.variance[0]), 6), d.quantile(0.5).tolist()
    ([0.0], 2.0, [0.0])
    """

    #: Parameters are components: a Predictive's table (``to_frame``) leaves them out.
    params_in_frame = False

    def __init__(self, component: Family, n_components: int):
        if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer) \
                or n_components < 1:
            raise ValueError(f"EqualMixture needs n_components >= 1 (an integer); got "
                             f"{n_components!r}.")
        if getattr(component, "multivariate", False) or component.classification:
            raise ValueError(f"EqualMixture needs a univariate family; got {component.name!r}.")
        self.component = component
        self.n_components = m = int(n_components)
        names = component.param_names
        self.param_names = tuple(f"{p}_{i}" for i in range(m) for p in names)
        self.default_links = {p: "identity" for p in self.param_names}
        self.support = component.support
        self.discrete = component.discrete
        self.point_mass = getattr(component, "point_mass", None)
        self._normal = _normal_kind(component)
        self.closed_form_crps = self._normal is not None
        super().__init__(None)

    @property
    def name(self) -> str:
        return f"equal_mixture({self.component.name}, {self.n_components})"

    def __repr__(self) -> str:
        return f"EqualMixture({self.component!r}, n_components={self.n_components})"

    def get_state(self) -> dict:
        """The component's state and ``n_components`` (not loadable: not registered)."""
        return {"name": "equal_mixture", "component": self.component.get_state(),
                "n_components": self.n_components}

    def init(self, y, sample_weight=None):
        raise ValueError("EqualMixture describes a forecast (the mixture of sample paths' "
                         "one-step laws); it is not a model of y and cannot be fitted.")

    # ------------------------------------------------------------------ pieces
    def _flat(self, params) -> tuple[dict[str, torch.Tensor], int]:
        """The components' parameters as one batch of ``n * m`` laws (row-major: row ``r``'s
        component ``i`` at ``r * m + i``), and ``n``."""
        m = self.n_components
        flat = {}
        for p in self.component.param_names:
            cols = [as_float64_tensor(params[f"{p}_{i}"]) for i in range(m)]
            flat[p] = torch.stack(torch.broadcast_tensors(*cols), dim=-1).reshape(-1)
        n = next(iter(flat.values())).numel() // m
        return flat, n

    def _each(self, fn, flat, n: int, y: torch.Tensor) -> torch.Tensor:
        """``fn(flat, y)`` of every component at ``y`` of shape (..., n): shape (..., n, m)."""
        m = self.n_components
        y = as_float64_tensor(y)
        lead = y.shape[:-1]
        wide = y[..., None].expand(*y.shape, m).reshape(*lead, n * m)
        return fn(flat, wide).reshape(*lead, n, m)

    # ------------------------------------------------------------------ distribution functions
    def _cdf_of(self, flat, n: int):
        """The mixture's cdf as a function of ``y`` of shape (..., n), from the components
        (:meth:`_flat`): for normal components ``ndtr`` of the standardised values on their
        means and standard deviations, taken once, else the component family's ``cdf``."""
        if self._normal is not None:
            loc, scale = self._normal_parts(flat, n)
            return lambda y: torch.special.ndtr(
                (as_float64_tensor(y)[..., None] - loc) / scale).mean(-1)
        return lambda y: self._each(self.component.cdf, flat, n, y).mean(-1)

    def cdf(self, params, y):
        return self._cdf_of(*self._flat(params))(y)

    def log_cdf(self, params, y):
        flat, n = self._flat(params)
        lc = self._each(self.component.log_cdf, flat, n, y)
        return torch.logsumexp(lc, dim=-1) - math.log(self.n_components)

    def log_sf(self, params, y):
        flat, n = self._flat(params)
        ls = self._each(self.component.log_sf, flat, n, y)
        return torch.logsumexp(ls, dim=-1) - math.log(self.n_components)

    def log_prob(self, params, y):
        """``log((1 / m) sum_i f_i(y))``, shape of ``y``."""
        flat, n = self._flat(params)
        lp = self._each(self.component.log_prob, flat, n, y)
        return torch.logsumexp(lp, dim=-1) - math.log(self.n_components)

    def distribution(self, params):
        raise ValueError(f"Family {self.name!r} has no torch distribution; use its cdf, "
                         "log_prob, icdf and sample.")

    def icdf(self, params, q):
        """Quantiles at levels ``q`` of shape (..., n): safeguarded Newton steps on the
        mixture's cdf and density (components with a density and no point mass), finished
        by bisection between the smallest and largest component quantile of each level (to
        1e-10 of that width); the smallest integer ``k`` with ``F(k) >= q`` for counts."""
        q = as_float64_tensor(q)
        flat, n = self._flat(params)
        m = self.n_components
        rows = max(1, _QUANTILE_CHUNK // (m * max(1, math.prod(q.shape[:-1]))))
        if rows >= n:
            return self._icdf_rows(flat, n, q)
        parts = [self._icdf_rows({k: v[a * m:(a + rows) * m] for k, v in flat.items()},
                                 min(rows, n - a), q[..., a:a + rows])
                 for a in range(0, n, rows)]  # chunks of rows, bounding memory
        return torch.cat(parts, dim=-1)

    def _icdf_rows(self, flat, n: int, q: torch.Tensor) -> torch.Tensor:
        """:meth:`icdf` of ``n`` rows of components (:meth:`_flat`) at levels ``q`` (..., n)."""
        cdf = self._cdf_of(flat, n)
        if self.discrete:
            return invert_cdf(cdf, q, self.support)
        each = self._each(self.component.icdf, flat, n, q)
        lo, hi = each.min(-1).values, each.max(-1).values
        # to 1e-10 of the bracket's width, the spread of the components' quantiles (not of
        # |x|: a forecast near 1e9 keeps the resolution of its spread)
        tol = 1e-10 * (hi - lo)
        if self._normal is not None:
            lo, hi = self._newton(_normal_cdf_pdf(self._normal_parts(flat, n)), q,
                                  each.mean(-1), lo, hi, tol)
        elif self.point_mass is None:  # a density everywhere: Newton's steps apply
            lo, hi = self._newton(self._cdf_pdf(flat, n), q, each.mean(-1), lo, hi, tol)
        x = _bisect(cdf, q, lo, hi, rtol=0.0, atol=tol)
        x = torch.where(lo == hi, lo, x)
        x = torch.where(q <= 0.0, torch.full_like(x, self.support.low), x)
        return torch.where(q >= 1.0, torch.full_like(x, self.support.high), x)

    def _cdf_pdf(self, flat, n: int):
        """``x -> (F(x), f(x))``, the mixture's cdf and density at ``x`` of shape (..., n),
        from the component family's ``cdf`` and ``log_prob``."""
        def cdf_pdf(x):
            F = self._each(self.component.cdf, flat, n, x).mean(-1)
            f = torch.exp(self._each(self.component.log_prob, flat, n, x)).mean(-1)
            return F, f
        return cdf_pdf

    @staticmethod
    def _newton(cdf_pdf, q, x, lo, hi, tol, steps: int = 20):
        """Safeguarded Newton steps from ``x`` towards each level's quantile (a step leaving
        the bracket ``[lo, hi]`` bisects it instead): the converged quantile as a bracket of
        width 0, else the narrowed bracket for the bisection to finish; a handful of cdf and
        density evaluations instead of dozens.  ``cdf_pdf(x)``: the mixture's cdf and
        density at ``x``."""
        for _ in range(steps):
            F, dens = cdf_pdf(x)
            gap = F - q
            lo = torch.where(gap < 0, torch.maximum(lo, x), lo)
            hi = torch.where(gap >= 0, torch.minimum(hi, x), hi)
            step = x - gap / dens.clamp_min(1e-300)
            inside = (step >= lo) & (step <= hi)
            new = torch.where(inside, step, 0.5 * (lo + hi))
            if bool(((new - x).abs() <= tol).all()):  # converged: a bracket of width 0
                return new, new
            x = new
        return lo, hi

    def _moments(self, params):
        flat, n = self._flat(params)
        m = self.n_components
        mu = self.component.mean(flat).reshape(n, m)
        var = self.component.variance(flat).reshape(n, m)
        return mu, var

    def mean(self, params):
        return self._moments(params)[0].mean(-1)

    def variance(self, params):
        mu, var = self._moments(params)
        centre = mu.mean(-1, keepdim=True)
        return (var + (mu - centre) ** 2).mean(-1)

    def sample(self, params, m, seed):
        """``m`` draws per row, shape (m, n): a component drawn uniformly, then one draw of
        it (seeded by ``seed``)."""
        flat, n = self._flat(params)
        k = self.n_components
        gen = torch.Generator().manual_seed(int(seed))
        pick = torch.randint(0, k, (int(m), n), generator=gen)  # (m, n)
        at = (torch.arange(n)[None, :] * k + pick).reshape(-1)
        chosen = {p: v[at] for p, v in flat.items()}
        return self.component.sample(chosen, 1, int(seed) + 1).reshape(int(m), n)

    def crps(self, params, y):
        """Closed form for normal components (module docstring), shape (n,).

        Raises
        ------
        NotImplementedError
            For other components (``Predictive.crps`` integrates them numerically).
        """
        if self._normal is None:
            return super().crps(params, y)
        loc, scale = self._normal_parts(*self._flat(params))
        y = as_float64_tensor(y)
        first = _abs_normal_mean(y[:, None] - loc, scale).mean(-1)
        m = self.n_components
        rows = max(1, _PAIR_CHUNK // (m * m))
        second = torch.empty_like(first)
        for start in range(0, loc.shape[0], rows):  # chunks of rows, bounding memory
            lo_, sc = loc[start:start + rows], scale[start:start + rows]
            dm = lo_[:, :, None] - lo_[:, None, :]
            ds = torch.sqrt(sc[:, :, None] ** 2 + sc[:, None, :] ** 2)
            second[start:start + rows] = _abs_normal_mean(dm, ds).mean((-1, -2))
        return first - 0.5 * second

    def _normal_parts(self, flat, n: int) -> tuple[torch.Tensor, torch.Tensor]:
        """The components' means and standard deviations, each (n, m), from :meth:`_flat`."""
        m = self.n_components
        loc, scale = flat["loc"], flat["scale"]
        if self._normal == "affine":
            loc = flat["shift"] + flat["factor"] * loc
            scale = flat["factor"] * scale
        return loc.reshape(n, m), scale.reshape(n, m)


def _normal_cdf_pdf(parts):
    """The cdf and density of a mixture of normals with means and standard deviations
    ``parts`` (each (n, m)), as :meth:`EqualMixture._newton` takes them."""
    loc, scale = parts

    def cdf_pdf(x):
        z = (x[..., None] - loc) / scale
        return (torch.special.ndtr(z).mean(-1),
                (torch.exp(-0.5 * z * z) / scale).mean(-1) * _INV_SQRT_2PI)
    return cdf_pdf


def _normal_kind(component: Family) -> str | None:
    """"normal" for a normal component, "affine" for ``Affine("normal")``, else None."""
    if component.name == "normal":
        return "normal"
    inner = getattr(component, "inner", None)
    if getattr(component, "kind", None) == "affine" and inner is not None \
            and inner.name == "normal":
        return "affine"
    return None
