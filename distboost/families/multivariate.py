"""Families of vector targets: the shared base :class:`VectorFamily` and the multivariate
Normal.

A vector family models ``y`` of shape ``(n, d)`` with ``d >= 2`` parts.  It keeps the
engine's contract of one raw score per boosted ensemble: its ``param_names`` are the *flat*
outputs (``loc_0``, ``scale_tril_1_0``, ...), each of shape (n,) on the natural scale, and
:meth:`VectorFamily.structure` assembles them into torch's parameters (``loc`` of shape
(n, d), ``scale_tril`` of shape (n, d, d)).  The number of parts ``d`` is read from the
training target (:meth:`VectorFamily.encode_target`, as ``ordinal_logit`` reads its number of
classes); a family built without it is a placeholder.

Multivariate Normal, Cholesky parameterisation
----------------------------------------------
``y ~ N(mu, Sigma)`` with ``Sigma = L L^T`` and ``L = D U``: ``D = diag(exp(a))`` and ``U`` unit
lower triangular with entries ``b`` below its diagonal, so ``L_ii = exp(a_i)`` and
``L_ij = exp(a_i) b_ij`` (``i > j``).  Raw outputs: ``d`` for ``mu`` (identity links), ``d``
for ``a`` and ``d (d - 1) / 2`` for ``b``, ``K = d (d + 3) / 2`` in all; the flat parameters
``scale_tril_i_j`` are the entries of ``L``.  Every raw score is unconstrained, ``L`` is a
valid Cholesky factor for all of them, the density needs one triangular solve per row, the
``b`` are free of the units of ``y``, and adding one constant to every ``a_i`` scales the
covariance by its exponential twice over, which is what dispersion calibration does
(``dispersion_params``; the Normal's log-scale shift in ``d`` dimensions).

The expected Fisher information in these outputs is in closed form.  ``mu`` and ``L`` are
orthogonal and the ``mu`` block is ``Sigma^{-1}``.  For outputs ``k``, ``l`` of ``L``, with
``dL / d theta_k = e_i v_k^T`` (``v_k = L[i, :]`` for ``a_i``, ``exp(a_i) e_j`` for
``b_ij``) and ``u_k = L^{-1} e_i``,

    I[k, l] = 1/2 tr(Sigma^{-1} dSigma_k Sigma^{-1} dSigma_l)
            = (v_k . u_l)(v_l . u_k) + (u_k . u_l)(v_k . v_l)

(Mardia, Kent & Bibby 1979, sec. 4.2, written with ``L^{-1} dSigma L^{-T} = A + A^T`` for the
rank-one ``A = L^{-1} dL = u v^T``).  For ``d = 1`` it gives 2 for ``log sigma``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch

from ..links import Link, get_link
from .base import Family, as_float64_tensor, spread_floor
from .numerics.shapes import broadcast_shapes
from .registry import register
from .support import REAL

__all__ = ["VectorFamily", "MultivariateNormal"]

_LOG_2PI = math.log(2.0 * math.pi)


class VectorFamily(Family):
    """Base of the families whose target is a vector of ``d >= 2`` parts (module docstring).

    Subclasses define :meth:`flat_names` (the raw outputs for ``d`` parts, with their default
    links), :meth:`structure`, :meth:`flatten`, :meth:`covariance` and :meth:`marginal`.

    Parameters
    ----------
    dim : int, optional
        The number of parts ``d >= 2``; None for a placeholder that reads it from the
        training target.
    target_names : sequence of str, optional
        Names of the parts (a DataFrame target's columns); ``y0``, ``y1``, ... otherwise.
    links : dict of str to str or Link, optional
        Overrides by flat output name (e.g. ``{"scale_tril_0_0": "softplus"}``).
    """

    multivariate = True
    #: Name of the structured parameters, in torch's constructor order.
    structured_names: tuple[str, ...] = ()

    def __init__(self, dim: int | None = None, target_names=None,
                 links: Mapping[str, str | Link] | None = None):
        self._links_given = dict(links or {})
        self.target_names = None if target_names is None else [str(t) for t in target_names]
        self._set_dim(dim)

    # ------------------------------------------------------------------ identity
    def flat_names(self, d: int) -> dict[str, str]:
        """The flat outputs for ``d`` parts, name -> default link name, in order."""
        raise NotImplementedError  # pragma: no cover - abstract (each vector family defines it)

    def _set_dim(self, dim) -> None:
        if dim is not None and (isinstance(dim, bool) or not isinstance(dim, int | np.integer)
                                or dim < 2):
            raise ValueError(f"Family {self.name!r} needs dim >= 2 parts (an integer); got "
                             f"{dim!r}; use a univariate family for one target.")
        self.dim = None if dim is None else int(dim)
        if self.dim is None:
            self.links = {}
            return
        if self.target_names is not None and len(self.target_names) != self.dim:
            raise ValueError(f"Family {self.name!r}: {len(self.target_names)} target_names "
                             f"for dim={self.dim} parts.")
        names = self.flat_names(self.dim)
        self._param_names = tuple(names)
        links = {p: get_link(lk) for p, lk in names.items()}
        for p, lk in self._links_given.items():
            if p not in links:
                raise ValueError(f"Family {self.name!r} has no output {p!r}; its outputs "
                                 f"are {list(names)}.")
            links[p] = get_link(lk)
        self.links = links

    def _require_dim(self) -> int:
        if self.dim is None:
            raise ValueError(
                f"Family {self.name!r} does not know its number of parts d: fit an estimator "
                f"(it reads d from y of shape (n, d)) or build it with dim=d, e.g. "
                f"distboost.families.get({self.name!r}).with_dim(2)."
            )
        return self.dim

    @property
    def param_names(self) -> tuple[str, ...]:
        """The flat raw outputs (one boosted ensemble each)."""
        self._require_dim()
        return self._param_names

    def with_dim(self, dim: int, target_names=None) -> VectorFamily:
        """A copy of the family for ``dim`` parts."""
        new = copy.copy(self)
        new.target_names = None if target_names is None else [str(t) for t in target_names]
        new._set_dim(dim)
        return new

    @property
    def parts(self) -> list[str]:
        """Names of the ``d`` parts: ``target_names`` or ``y0``, ``y1``, ..."""
        d = self._require_dim()
        return list(self.target_names) if self.target_names else [f"y{j}" for j in range(d)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(dim={self.dim})"

    def get_params(self) -> dict:
        return {"dim": self.dim, "target_names": self.target_names,
                "links": {p: lk.name for p, lk in self._links_given.items()}}

    def get_state(self) -> dict:
        state = {"name": self.name, "dim": self.dim,
                 "links": {p: get_link(lk).name for p, lk in self._links_given.items()}}
        if self.target_names is not None:
            state["target_names"] = list(self.target_names)
        return state

    def with_links(self, links):
        new = copy.copy(self)
        new._links_given = {**self._links_given, **dict(links)}
        new._set_dim(self.dim)
        return new

    def __sklearn_clone__(self):
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ targets
    def encode_target(self, y):
        """A 2-D numeric target as float64 of shape (n, d); a placeholder takes ``d`` (and a
        DataFrame's column names) from it.

        Raises
        ------
        ValueError
            For a 1-D target or a single column (use a univariate family), a target that is
            not numeric, or a DataFrame whose columns are not the fitted parts in order.
        """
        names = [str(c) for c in y.columns] if isinstance(y, pd.DataFrame) else None
        values = y.to_numpy() if isinstance(y, pd.DataFrame | pd.Series) else np.asarray(y)
        if values.ndim != 2 or values.shape[1] < 2:
            raise ValueError(
                f"Family {self.name!r} models a vector target: y must have shape (n, d) with "
                f"d >= 2 columns; got shape {values.shape}. For a single target use a "
                "univariate family (e.g. 'normal' or 'beta')."
            )
        try:
            values = values.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"Target y must be numeric, got dtype {values.dtype}.") from err
        if self.dim is None:
            self.target_names = names
            self._set_dim(values.shape[1])
        elif names is not None and self.target_names is not None \
                and names != self.target_names:
            raise ValueError(
                f"Target y has columns {names}; family {self.name!r} was fitted on the parts "
                f"{self.target_names} in that order: select them as y[{self.target_names}]."
            )
        return values

    def validate_y(self, y) -> np.ndarray:
        """Check ``y`` of shape (n, d): finite rows in the support (:meth:`check_rows`).

        Raises
        ------
        ValueError
            Naming the family and how many rows are wrong.
        """
        d = self._require_dim()
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 2 or y.shape[1] != d:
            raise ValueError(f"Family {self.name!r} was built for d={d} parts: y must have "
                             f"shape (n, {d}); got {y.shape}.")
        bad = ~np.isfinite(y).all(axis=1)
        if bad.any():
            raise ValueError(f"Target y has {int(bad.sum())} of {y.shape[0]} rows with NaN or "
                             f"infinite parts; family {self.name!r} needs finite vectors.")
        self.check_rows(y)
        return y

    def check_rows(self, y: np.ndarray) -> None:
        """Raise a ValueError for rows outside the support (the base accepts every row)."""

    def init(self, y, sample_weight=None) -> dict[str, float]:
        """Weighted marginal MLE of the flat outputs (natural scale), y of shape (n, d):
        :meth:`start_values` when it is the closed form, else refined numerically."""
        from .base import _normalise_weights
        from .numerics.mle import numerical_mle

        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.shape[0])
        start = self.start_values(y, w)
        return start if self.closed_form_mle else numerical_mle(self, y, w, start)

    # ------------------------------------------------------------------ parameters
    def structure(self, params: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        """torch's parameters from the flat ones (shapes (n, d), (n, d, d), ...)."""
        raise NotImplementedError  # pragma: no cover - abstract (each vector family defines it)

    def flatten(self, structured: Mapping[str, object]) -> dict[str, np.ndarray]:
        """The flat parameters from torch's (the inverse of :meth:`structure`)."""
        raise NotImplementedError  # pragma: no cover - abstract (each vector family defines it)

    def distribution(self, params):
        return self.torch_class(**self.structure(params), validate_args=False)

    def covariance(self, params) -> torch.Tensor:
        """Covariance matrices, shape (n, d, d)."""
        raise NotImplementedError  # pragma: no cover - abstract (each vector family defines it)

    def variance(self, params) -> torch.Tensor:
        """Variances of the parts, shape (n, d)."""
        return torch.diagonal(self.covariance(params), dim1=-2, dim2=-1)

    def marginal(self, params, j: int) -> tuple[Family, dict[str, torch.Tensor]]:
        """The univariate family of part ``j`` and its parameters, shape (n,) each."""
        raise NotImplementedError  # pragma: no cover - abstract (each vector family defines it)

    def part_index(self, j) -> int:
        """Index of a part given by position or by name.

        Raises
        ------
        IndexError
            For a position outside ``0 .. d - 1``; ValueError for an unknown name.
        """
        d = self._require_dim()
        if isinstance(j, str):
            if j not in self.parts:
                raise ValueError(f"Family {self.name!r} has no part {j!r}; its parts are "
                                 f"{self.parts}.")
            return self.parts.index(j)
        if isinstance(j, bool) or not isinstance(j, int | np.integer) or not -d <= j < d:
            raise IndexError(f"Part {j!r} is out of range for d={d} parts "
                             f"(0 .. {d - 1} or a name in {self.parts}).")
        return int(j) % d

    # ------------------------------------------------------------------ not defined
    def _no_order(self, what: str):
        raise ValueError(
            f"Family {self.name!r} models a vector of {self.dim} parts, which has no {what}; "
            "use the margins (Predictive.marginal(j)) or log_prob instead."
        )

    def cdf(self, params, y):
        self._no_order("cdf")

    def log_cdf(self, params, y):
        self._no_order("cdf")

    def log_sf(self, params, y):
        self._no_order("survival function")

    def icdf(self, params, q):
        self._no_order("quantile function")

    def crps(self, params, y):
        self._no_order("CRPS (score vectors with distboost.metrics.energy_score)")


@register
class MultivariateNormal(VectorFamily):
    """Multivariate Normal family with a boosted mean and Cholesky factor (module docstring).

    Outputs, for ``d`` parts: ``loc_0 .. loc_{d-1}``, then the lower triangle of ``L`` row by
    row, ``scale_tril_i_j`` for ``i >= j`` (raw ``log L_ii`` on the diagonal, ``L_ij / L_ii``
    below it; the flat parameters are the entries of ``L``).  Closed-form weighted MLE (the
    weighted mean and the Cholesky factor of the weighted covariance, divided by the weight
    total), closed-form expected Fisher information, dispersion calibration by one shift of
    the log-diagonal.

    Examples
    --------
    >>> import distboost as db
    >>> fam = db.families.get("multivariate_normal").with_dim(2)
    >>> fam.param_names
    ('loc_0', 'loc_1', 'scale_tril_0_0', 'scale_tril_1_0', 'scale_tril_1_1')
    """

    name = "multivariate_normal"
    reference = "`multivariate_normal(mean=loc, cov=L L^T)`"
    doc_notes = {
        "parameters": ("loc_j (identity); the Cholesky factor `L = diag(exp(a)) U`: scale_tril_i_i "
                       "= exp(raw), scale_tril_i_j = L_ii * raw (i > j); y of shape (n, d)"),
        "support": "real vectors",
        "crps": "none (energy and variogram scores, `db.metrics`)",
    }
    torch_class = torch.distributions.MultivariateNormal
    structured_names = ("loc", "scale_tril")
    support = REAL
    closed_form_mle = True

    def flat_names(self, d):
        names = {f"loc_{j}": "identity" for j in range(d)}
        for i in range(d):
            for j in range(i + 1):
                names[f"scale_tril_{i}_{j}"] = "exp" if i == j else "identity"
        return names

    def _set_dim(self, dim) -> None:
        if self._links_given:
            raise ValueError("Family 'multivariate_normal' has fixed links (identity for the "
                             "mean, the Cholesky parameterisation for the covariance); got "
                             f"overrides for {sorted(self._links_given)}.")
        super()._set_dim(dim)

    @property
    def dispersion_params(self) -> tuple[str, ...]:
        """The log-diagonal of ``L``: one shift of all of them scales the covariance."""
        d = self._require_dim()
        return tuple(f"scale_tril_{j}_{j}" for j in range(d))

    def _tril(self):
        d = self._require_dim()
        rows, cols = torch.tril_indices(d, d)
        return d, rows, cols

    def params_from_raw(self, raw):
        """Flat parameters (the entries of ``L``) from raw scores of shape (n, K)."""
        d, rows, cols = self._tril()
        out = {f"loc_{j}": raw[:, j] for j in range(d)}
        diag = {i: torch.exp(raw[:, d + t]) for t, (i, j) in
                enumerate(zip(rows.tolist(), cols.tolist(), strict=True)) if i == j}
        for t, (i, j) in enumerate(zip(rows.tolist(), cols.tolist(), strict=True)):
            out[f"scale_tril_{i}_{j}"] = diag[i] if i == j else diag[i] * raw[:, d + t]
        return out

    def raw_from_params(self, params):
        d, rows, cols = self._tril()
        cols_out = [np.asarray(params[f"loc_{j}"], dtype=np.float64) for j in range(d)]
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            diag = np.asarray(params[f"scale_tril_{i}_{i}"], dtype=np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                cols_out.append(np.log(diag) if i == j else
                                np.asarray(params[f"scale_tril_{i}_{j}"], dtype=np.float64)
                                / diag)
        return np.stack(np.broadcast_arrays(*cols_out), axis=-1).astype(np.float64)

    def structure(self, params):
        d, rows, cols = self._tril()
        loc = torch.stack([as_float64_tensor(params[f"loc_{j}"]) for j in range(d)], dim=-1)
        vals = torch.stack([as_float64_tensor(params[f"scale_tril_{i}_{j}"])
                            for i, j in zip(rows.tolist(), cols.tolist(), strict=True)], dim=-1)
        batch = broadcast_shapes(loc.shape[:-1], vals.shape[:-1])
        loc, vals = loc.expand(batch + (d,)), vals.expand(batch + vals.shape[-1:])
        flat = vals.new_zeros(vals.shape[:-1] + (d * d,))
        flat = flat.index_copy(-1, rows * d + cols, vals)
        return {"loc": loc, "scale_tril": flat.reshape(vals.shape[:-1] + (d, d))}

    def flatten(self, structured):
        d, rows, cols = self._tril()
        loc = np.asarray(structured["loc"], dtype=np.float64)
        tril = np.asarray(structured["scale_tril"], dtype=np.float64)
        out = {f"loc_{j}": loc[..., j] for j in range(d)}
        for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
            out[f"scale_tril_{i}_{j}"] = tril[..., i, j]
        return out

    def log_prob(self, params, y):
        """``log N(y; mu, L L^T)`` by one triangular solve, y of shape (..., n, d)."""
        s = self.structure(params)
        y = as_float64_tensor(y)
        tril = s["scale_tril"]
        diff = (y - s["loc"]).unsqueeze(-1)
        batch = broadcast_shapes(diff.shape[:-2], tril.shape[:-2])
        z = torch.linalg.solve_triangular(tril.expand(batch + tril.shape[-2:]),
                                          diff.expand(batch + diff.shape[-2:]), upper=False)
        half_logdet = torch.log(torch.diagonal(tril, dim1=-2, dim2=-1)).sum(-1)
        d = tril.shape[-1]
        return -0.5 * (z.squeeze(-1) ** 2).sum(-1) - half_logdet - 0.5 * d * _LOG_2PI

    def mean(self, params):
        return self.structure(params)["loc"]

    def covariance(self, params):
        tril = self.structure(params)["scale_tril"]
        return tril @ tril.transpose(-1, -2)

    def marginal(self, params, j):
        from .registry import get

        j = self.part_index(j)
        sd = torch.sqrt(self.covariance(params)[..., j, j])
        return get("normal"), {"loc": as_float64_tensor(params[f"loc_{j}"]), "scale": sd}

    def fisher_information(self, raw):
        """Expected Fisher information in the raw outputs, shape (n, K, K) (module
        docstring)."""
        d, rows, cols = self._tril()
        params = self.params_from_raw(raw)
        tril = self.structure(params)["scale_tril"]
        eye = torch.eye(d, dtype=tril.dtype, device=tril.device).expand_as(tril)
        inv = torch.linalg.solve_triangular(tril, eye, upper=False)  # P = L^{-1}
        u = inv[..., :, rows].transpose(-1, -2)  # u_k = P e_i, shape (n, T, d)
        diag_of_row = torch.diagonal(tril, dim1=-2, dim2=-1)[..., rows]  # exp(a_i), (n, T)
        unit = torch.eye(d, dtype=tril.dtype, device=tril.device)[cols]  # e_j, (T, d)
        v = torch.where((rows == cols)[:, None], tril[..., rows, :],
                        diag_of_row[..., None] * unit)  # (n, T, d)
        vu = v @ u.transpose(-1, -2)  # (v_k . u_l)
        block = vu * vu.transpose(-1, -2) + (u @ u.transpose(-1, -2)) * (v @ v.transpose(-1, -2))
        n_out = d + rows.numel()
        out = tril.new_zeros(tril.shape[:-2] + (n_out, n_out))
        out[..., :d, :d] = inv.transpose(-1, -2) @ inv  # Sigma^{-1}
        out[..., d:, d:] = block
        return out

    def _moments(self, y, w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Weighted mean, standard deviations and correlation matrix of ``y`` (``w`` sums
        to one), or a ValueError when a part is constant or the parts are collinear (the
        covariance is singular, e.g. fewer rows than parts, or parts summing to a constant:
        use ``dirichlet`` for compositions)."""
        mu = w @ y
        centred = y - mu
        cov = (centred * w[:, None]).T @ centred
        sd = np.sqrt(np.diag(cov))
        const = np.flatnonzero(sd <= 1e-12 * np.maximum(np.abs(mu), 1.0))
        if const.size:
            names = [self.parts[j] for j in const]
            raise ValueError(f"Target part(s) {names} of family {self.name!r} are constant over "
                             f"all {y.shape[0]} rows: a Normal has no density there.")
        corr = cov / np.outer(sd, sd)
        eig = np.linalg.eigvalsh(corr)
        if eig[0] <= 1e-10:
            raise ValueError(
                f"The {self.dim} target parts of family {self.name!r} are collinear over "
                f"the {y.shape[0]} rows (their correlation matrix is singular, smallest "
                f"eigenvalue {eig[0]:.2g}): a multivariate Normal has no density there. Drop "
                "a part that the others determine (for compositions use 'dirichlet')."
            )
        return mu, sd, corr

    def check_fit_target(self, y):
        """Constant or collinear parts (:meth:`_moments`) are an error naming all the rows."""
        self._moments(y, np.full(len(y), 1.0 / len(y)))

    def start_values(self, y, w):
        """Weighted mean and the Cholesky factor of the weighted covariance (the MLE); a
        ValueError for constant or collinear parts."""
        mu, sd, corr = self._moments(y, w)
        tril = np.diag(sd) @ np.linalg.cholesky(corr)
        return {p: float(v) for p, v in self.flatten({"loc": mu, "scale_tril": tril}).items()}

    def param_floors(self, y):
        """The diagonal of ``L`` is floored at ``1e-6`` times the spread of its part (as
        :meth:`Family.param_floors` floors a ``scale``): a leaf of identical rows would
        otherwise drive the density to infinity."""
        d = self._require_dim()
        y = np.asarray(y, dtype=np.float64).reshape(-1, d)
        return {f"scale_tril_{j}_{j}": spread_floor(y[:, j], self.SCALE_FLOOR) for j in range(d)}
