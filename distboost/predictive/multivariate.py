"""``MultivariatePredictive``: a batch of ``n`` predictive distributions of a vector target.

The :class:`~distboost.Predictive` of a vector family (``multivariate_normal``, ``dirichlet``):
``db.Predictive(family, params)`` returns one when the family is multivariate.  Parameters
are given as torch names them (``loc`` of shape (n, d) and ``scale_tril`` (n, d, d), or
``concentration`` (n, d)) or as the family's flat outputs (what an estimator predicts).  It
answers the joint ``log_prob``, ``mean`` (n, d), ``covariance`` (n, d, d), ``correlation``,
seeded ``sample`` (m, n, d), and the exact univariate margins (:meth:`marginal`), whose
quantiles and intervals are exact (Normal margins of a multivariate Normal, Beta margins of
a Dirichlet).  What a vector has not (a cdf, quantiles, a CRPS) raises a ValueError naming
the margin or the multivariate score to use instead.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch

from .. import families as _families
from .batch import Predictive, _float_array, quantile_columns

__all__ = ["MultivariatePredictive"]


class MultivariatePredictive(Predictive):
    """A batch of ``n`` predictive distributions of a vector of ``d`` parts.

    Parameters
    ----------
    family : str or VectorFamily
        ``"multivariate_normal"``, ``"dirichlet"`` or a vector family instance; a family
        without ``dim`` takes ``d`` from the parameters.
    params : dict of str to array_like
        torch's parameters (``loc`` (n, d) and ``scale_tril`` (n, d, d); ``concentration``
        (n, d); a single row may drop the leading axis) or the family's flat outputs, each
        of shape (n,).
    index : pandas Index or array_like of length n, optional
        Row labels, kept by indexing and used by :meth:`to_frame`.

    Attributes
    ----------
    family : VectorFamily
    dim : int
        The number of parts ``d``.
    index : pandas Index or None

    Raises
    ------
    ValueError
        For parameter names that are neither form, shapes that disagree on ``d`` or ``n``,
        a ``scale_tril`` with entries above its diagonal, or values outside a parameter's
        domain (e.g. a diagonal entry or a concentration <= 0).

    Examples
    --------
    >>> import numpy as np, distboost as db
    >>> d = db.Predictive.from_params("multivariate_normal", loc=[[0.0, 1.0]],
    ...                               scale_tril=[[[1.0, 0.0], [0.5, 2.0]]])
    >>> d.covariance.round(2)
    array([[[1.  , 0.5 ],
            [0.5 , 4.25]]])
    >>> d.marginal(1).interval(0.9).round(3)
    array([[-2.391,  4.391]])
    """

    def __init__(self, family, params: Mapping[str, object], index=None):
        family = _families.get(family)
        if not getattr(family, "multivariate", False):
            raise ValueError(f"MultivariatePredictive needs a vector family; {family.name!r} "
                             "is univariate (use Predictive).")
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping name -> array; got "
                            f"{type(params).__name__}.")
        structured = set(family.structured_names)
        if family.dim is None and set(params) != structured:  # flat outputs: d from names
            family = next((family.with_dim(d) for d in range(2, len(params) + 1)
                           if set(family.flat_names(d)) == set(params)), family)
        if set(params) == structured:
            family, params = _flat_from_structured(family, params)
        elif family.dim is None or set(params) != set(family.param_names):
            flat = (f"the flat outputs {list(family.param_names)}" if family.dim else
                    f"its flat outputs for d parts (e.g. {list(family.flat_names(2))})")
            raise ValueError(
                f"Family {family.name!r} takes parameters {list(family.structured_names)} "
                f"or {flat}; got {sorted(params)}."
            )
        super().__init__(family, params, index=index)

    # ------------------------------------------------------------------ container
    @property
    def dim(self) -> int:
        """The number of parts ``d``."""
        return self.family.dim

    @property
    def params(self) -> dict[str, np.ndarray]:
        """torch's parameters: ``loc`` (n, d) and ``scale_tril`` (n, d, d), or
        ``concentration`` (n, d); the flat outputs are :attr:`flat_params`."""
        with torch.no_grad():
            return {p: v.numpy() for p, v in
                    self.family.structure(self._torch_params()).items()}

    @property
    def flat_params(self) -> dict[str, np.ndarray]:
        """The family's flat outputs (what ``predict_params`` gives), each of shape (n,)."""
        return dict(self._params)

    def __repr__(self) -> str:
        return (f"MultivariatePredictive({self.family.name!r}, n={len(self)}, "
                f"d={self.dim}, parts={self.family.parts})")

    # ------------------------------------------------------------------ values
    def _vectors(self, y, name: str = "y") -> torch.Tensor:
        """``y`` as a tensor of shape (n, d): one vector per row, or one for all rows."""
        arr = _float_array(y, name)
        n, d = len(self), self.dim
        if arr.ndim == 1 and arr.shape[0] == d:
            arr = arr[None, :]
        if arr.ndim != 2 or arr.shape[1] != d or arr.shape[0] not in (n, 1):
            raise ValueError(f"{name} must have shape ({n}, {d}) (one vector of {d} parts per "
                             f"distribution) or ({d},); got {arr.shape}.")
        nan = np.isnan(arr).any(axis=1)
        if nan.any():
            raise ValueError(f"{name} has {int(nan.sum())} of {arr.shape[0]} rows with NaN "
                             "parts.")
        return torch.from_numpy(np.broadcast_to(arr, (n, d)).copy())

    def log_prob(self, y) -> np.ndarray:
        """Joint log density of one vector per row, y of shape (n, d) (or (d,) for all rows);
        returns shape (n,); ``-inf`` outside the support (a Dirichlet's simplex)."""
        v = self._vectors(y)
        inside = torch.isfinite(v).all(-1)
        if self.family.name == "dirichlet":
            inside &= (v > 0).all(-1) & ((v.sum(-1) - 1.0).abs() <= 1e-9)
        fill = self.mean_tensor() if not inside.all() else v
        safe = torch.where(inside[:, None], v, fill)
        with torch.no_grad():
            lp = self.family.log_prob(self._torch_params(), safe)
        return torch.where(inside, lp, torch.full_like(lp, -np.inf)).numpy()

    def mean_tensor(self) -> torch.Tensor:
        with torch.no_grad():
            return self.family.mean(self._torch_params())

    # ------------------------------------------------------------------ moments
    @property
    def mean(self) -> np.ndarray:
        """Mean vectors, shape (n, d)."""
        return self.mean_tensor().numpy()

    @property
    def covariance(self) -> np.ndarray:
        """Covariance matrices, shape (n, d, d)."""
        with torch.no_grad():
            return self.family.covariance(self._torch_params()).numpy()

    @property
    def variance(self) -> np.ndarray:
        """Variances of the parts, shape (n, d)."""
        return np.ascontiguousarray(np.diagonal(self.covariance, axis1=1, axis2=2))

    @property
    def stddev(self) -> np.ndarray:
        """Standard deviations of the parts, shape (n, d)."""
        return np.sqrt(self.variance)

    @property
    def correlation(self) -> np.ndarray:
        """Correlation matrices, shape (n, d, d)."""
        cov = self.covariance
        sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
        return cov / (sd[:, :, None] * sd[:, None, :])

    def sample(self, m: int = 1, random_state=None) -> np.ndarray:
        """``m`` independent draws of every row's vector, shape (m, n, d) (see
        :meth:`Predictive.sample` for ``random_state``)."""
        return super().sample(m, random_state)

    # ------------------------------------------------------------------ margins
    def marginal(self, j) -> Predictive:
        """The exact distribution of part ``j`` (a position or a part name) in every row: a
        univariate :class:`Predictive` of length n (Normal margins of a multivariate Normal,
        ``Beta(alpha_j, alpha_0 - alpha_j)`` margins of a Dirichlet)."""
        with torch.no_grad():
            fam, params = self.family.marginal(self._torch_params(), j)
        return Predictive(fam, {p: v.numpy() for p, v in params.items()}, index=self.index)

    def interval(self, level: float = 0.9) -> np.ndarray:
        """Central interval of each part's margin, shape (n, d, 2) (lower, upper).  These are
        per-part intervals, not a joint region: see ``db.plot.ellipses`` for that."""
        return np.stack([self.marginal(j).interval(level) for j in range(self.dim)], axis=1)

    # ------------------------------------------------------------------ not defined
    def _vector(self, what: str, instead: str):
        raise ValueError(
            f"A {self.family.name} predictive distribution is over vectors of {self.dim} "
            f"parts, which have no {what}; {instead}."
        )

    def cdf(self, y):
        self._vector("cdf", "use the margins, dist.marginal(j).cdf(y_j)")

    def sf(self, y):
        self._vector("survival function", "use the margins, dist.marginal(j).sf(y_j)")

    def quantile(self, q):
        self._vector("quantiles", "use the margins, dist.marginal(j).quantile(q), or "
                     "dist.interval(level) for every part")

    ppf = quantile

    @property
    def median(self):
        self._vector("median", "use the margins, dist.marginal(j).median")

    def restricted_mean(self, tau):
        self._vector("restricted mean", "use the margins")

    def crps(self, y, method: str = "auto"):
        self._vector("CRPS", "score vectors with distboost.metrics.energy_score or "
                     "variogram_score, or a margin with dist.marginal(j).crps(y[:, j])")

    def pit(self, y, random_state=0):
        self._vector("PIT", "use the margins, dist.marginal(j).pit(y[:, j])")

    # ------------------------------------------------------------------ table
    def to_frame(self, quantiles=(0.05, 0.5, 0.95), index=None) -> pd.DataFrame:
        """The predictions as a table, one row per distribution: ``mean_<part>`` and
        ``sd_<part>`` for every part, ``corr_<a>_<b>`` for every pair, the flat parameters,
        then the quantiles of every margin (``<part>_q0.05``, ...).

        Parameters
        ----------
        quantiles : sequence of float or None
            Levels of the margins' quantiles (None or empty for none).
        index : array_like of length n, optional
            Row labels (default: the Predictive's index, else 0 .. n - 1).
        """
        from .batch import _check_index

        index = _check_index(index, len(self)) if index is not None else self.index
        parts = self.family.parts
        mean, sd, corr = self.mean, self.stddev, self.correlation
        columns = {}
        for j, name in enumerate(parts):
            columns[f"mean_{name}"] = mean[:, j]
        for j, name in enumerate(parts):
            columns[f"sd_{name}"] = sd[:, j]
        for a in range(self.dim):
            for b in range(a + 1, self.dim):
                columns[f"corr_{parts[a]}_{parts[b]}"] = corr[:, a, b]
        columns.update(self.flat_params)
        if quantiles is not None and np.size(quantiles):
            levels = np.atleast_1d(np.asarray(quantiles, dtype=np.float64))
            for j, name in enumerate(parts):
                values = self.marginal(j).quantile(levels)
                for col, v in zip(quantile_columns(levels), values.T, strict=True):
                    columns[f"{name}_{col}"] = v
        return pd.DataFrame(columns, index=index)


def _flat_from_structured(family, params):
    """``(family with its dim, flat parameters)`` from torch's parameters."""
    arrays = {p: _float_array(v, f"Parameter {p!r}") for p, v in params.items()}
    first = arrays[family.structured_names[0]]
    if first.ndim not in (1, 2):
        raise ValueError(f"Parameter {family.structured_names[0]!r} must have shape (n, d) or "
                         f"(d,); got {first.shape}.")
    d = first.shape[-1]
    if family.dim is None:
        family = family.with_dim(d)
    elif family.dim != d:
        raise ValueError(f"Parameter {family.structured_names[0]!r} has {d} parts but family "
                         f"{family.name!r} has dim={family.dim}.")
    if "scale_tril" in arrays:
        tril = arrays["scale_tril"]
        if tril.ndim not in (2, 3) or tril.shape[-2:] != (d, d):
            raise ValueError(f"Parameter 'scale_tril' must have shape (n, {d}, {d}) or "
                             f"({d}, {d}); got {tril.shape}.")
        upper = np.abs(np.triu(tril, k=1)).reshape(-1, d * d).max(axis=1) > 0
        if upper.any():
            raise ValueError(f"Parameter 'scale_tril' has {int(upper.sum())} of {upper.size} "
                             "matrices with nonzero entries above the diagonal; give the lower "
                             "Cholesky factor (numpy.linalg.cholesky of the covariance).")
    return family, family.flatten(arrays)


Predictive._vector_class = MultivariatePredictive
