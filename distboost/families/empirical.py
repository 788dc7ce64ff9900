"""``Empirical(n_samples)``: the distribution of ``m`` draws per row, as a family.

A sample-based forecast (the marginals of a recursive forecaster's sample paths,
:mod:`distboost.forecasting`) is a batch of ``n`` empirical distributions, each putting mass
``1 / m`` on ``m`` draws ``x_1 .. x_m``.  Held in a :class:`~distboost.Predictive` it answers
every question exactly *for the draws*: ``cdf(y) = #{x_i <= y} / m`` (a step function),
quantiles ``x_(ceil(q m))`` (the smallest draw whose step reaches ``q``: the exact inverse of
that cdf), mean and variance of the draws (``1 / m``, not ``1 / (m - 1)``), central intervals,
resampled draws, and the CRPS in closed form,

    ``CRPS(F_m, y) = (1 / m) sum_i |x_i - y| - (1 / (2 m^2)) sum_{i,j} |x_i - x_j|``

(Gneiting & Raftery 2007, JASA 102, eq. 21 applied to the empirical law; the pair sum is
``2 sum_i (2 i - m - 1) x_(i)`` over the sorted draws, Grimit et al. 2006, QJRMS 132, so the
cost is one sort, ``O(m log m)`` per row).

It has no density: ``log_prob`` (and so the NLL) raises a ``ValueError`` saying so.  It is not
registered and cannot be fitted (``init`` raises): it describes draws, it does not model ``y``.
Its parameters are the draws, ``sample_0 .. sample_{m-1}`` (identity links), each of shape
(n,), in the flat one-array-per-name layout every :class:`~distboost.Predictive` holds.
The support and count flag are those of the law the draws came from (``support=``,
``discrete=``), so that a count forecast keeps the randomised PIT of count families.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from .base import Family, as_float64_tensor
from .support import REAL, Support

__all__ = ["Empirical", "crps_samples", "sorted_samples"]


def sorted_samples(params: Mapping[str, torch.Tensor], names) -> torch.Tensor:
    """The draws of every row, sorted: Tensor of shape (n, m), float64."""
    x = torch.stack([as_float64_tensor(params[p]) for p in names], dim=-1)
    return torch.sort(x, dim=-1).values


def crps_samples(x_sorted: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """CRPS of the empirical law of sorted draws (module docstring), shape (n,).

    Parameters
    ----------
    x_sorted : Tensor of shape (n, m)
        Draws per row, sorted along the last axis.
    y : Tensor of shape (n,)
        Observations.
    """
    m = x_sorted.shape[-1]
    i = torch.arange(1, m + 1, dtype=torch.float64)
    spread = ((2.0 * i - m - 1.0) * x_sorted).sum(-1) * (2.0 / (m * m))  # E|X - X'|
    return (x_sorted - y[:, None]).abs().mean(-1) - 0.5 * spread


class Empirical(Family):
    """The empirical distribution of ``n_samples`` draws per row (module docstring).

    Parameters
    ----------
    n_samples : int
        ``m >= 1``, the draws per row.
    support : Support, optional
        The support of the law the draws came from (default the real line).
    discrete : bool, default=False
        The draws are counts (integer values): PIT and cdf follow the count conventions.

    Examples
    --------
    >>> import numpy as np, distboost as db
    >>> fam = db.families.Empirical(4)
    >>> d = db.Predictive(fam, {f"sample_{i}": [v] for i, v in enumerate([3.0, 1.0, 2.0, 4.0])})
    >>> d.quantile([0.25, 0.5, 0.51]).tolist(), d.cdf(2.5).tolist()
    ([[1.0, 2.0, 3.0]], [0.5])
    >>> float(d.crps(2.0)[0])  # mean |x - 2| - mean |x - x'| / 2 = 1.0 - 1.25 / 2
    0.375
    """

    name = "empirical"
    closed_form_crps = True
    #: Parameters are draws: a Predictive's table (``to_frame``) leaves them out.
    params_in_frame = False

    def __init__(self, n_samples: int, support: Support = REAL, discrete: bool = False):
        if isinstance(n_samples, bool) or not isinstance(n_samples, int | np.integer) \
                or n_samples < 1:
            raise ValueError(f"Empirical needs n_samples >= 1 draws per row (an integer); got "
                             f"{n_samples!r}.")
        self.n_samples = int(n_samples)
        self.param_names = tuple(f"sample_{i}" for i in range(self.n_samples))
        self.default_links = {p: "identity" for p in self.param_names}
        self.support = support
        self.discrete = bool(discrete)
        super().__init__(None)

    def __repr__(self) -> str:
        return f"Empirical(n_samples={self.n_samples})"

    def get_state(self) -> dict:
        """``{"name": "empirical", "n_samples": m, "discrete": bool}`` (not loadable: the
        family is not registered)."""
        return {"name": self.name, "n_samples": self.n_samples, "discrete": self.discrete}

    @classmethod
    def params_of(cls, draws) -> dict[str, np.ndarray]:
        """The parameters of a Predictive holding ``draws`` of shape (m, n)."""
        draws = np.asarray(draws, dtype=np.float64)
        if draws.ndim != 2:
            raise ValueError(f"draws must have shape (m, n); got {draws.shape}.")
        return {f"sample_{i}": row for i, row in enumerate(draws)}

    # ------------------------------------------------------------------ not a model of y
    def _no_density(self, *args, **kwargs):
        raise ValueError(
            f"An empirical (sample-based) distribution of {self.n_samples} draws has no density, "
            "so no log-likelihood (NLL): score it with the CRPS, PIT, intervals or quantiles. "
            "(A recursive Forecaster's predict_dist is the mixture of its paths' one-step laws, "
            "which has one.)")

    log_prob = _no_density
    nll = _no_density
    distribution = _no_density

    def init(self, y, sample_weight=None):
        raise ValueError("The empirical family describes draws (a sample-based forecast); it "
                         "is not a model of y and cannot be fitted.")

    # ------------------------------------------------------------------ distribution functions
    def _sorted(self, params) -> torch.Tensor:
        return sorted_samples(params, self.param_names)

    def cdf(self, params, y):
        """``#{x_i <= y} / m`` at ``y`` of shape (..., n)."""
        x = self._sorted(params)
        y = as_float64_tensor(y)
        n = x.shape[0]
        flat = y.reshape(-1, n).T.contiguous()  # (n, k)
        counts = torch.searchsorted(x, flat, right=True).to(torch.float64)
        return (counts / self.n_samples).T.reshape(y.shape)

    def log_cdf(self, params, y):
        return torch.log(self.cdf(params, y))

    def log_sf(self, params, y):
        return torch.log1p(-self.cdf(params, y))

    def icdf(self, params, q):
        """The smallest draw ``x_(i)`` with ``i / m >= q`` at levels ``q`` of shape (..., n)
        (levels within 1e-9 of a step ``i / m`` count as on it)."""
        x = self._sorted(params)
        q = as_float64_tensor(q)
        n, m = x.shape
        flat = q.reshape(-1, n).T  # (n, k)
        i = torch.ceil(flat * m - 1e-9).clamp(1, m).long() - 1
        return torch.gather(x, 1, i).T.reshape(q.shape)

    def mean(self, params):
        return self._sorted(params).mean(-1)

    def variance(self, params):
        return self._sorted(params).var(-1, unbiased=False)

    def sample(self, params, m, seed):
        """``m`` draws with replacement from each row's draws, shape (m, n)."""
        x = torch.stack([as_float64_tensor(params[p]) for p in self.param_names], dim=-1)
        gen = torch.Generator().manual_seed(int(seed))
        idx = torch.randint(0, self.n_samples, (x.shape[0], int(m)), generator=gen)
        return torch.gather(x, 1, idx).T.contiguous()

    def crps(self, params, y):
        """Closed-form CRPS of the empirical law (module docstring), shape (n,)."""
        return crps_samples(self._sorted(params), as_float64_tensor(y))
