"""The :class:`Family` base class: a ``torch.distributions`` class plus links, support and MLE.

A family turns the ``K`` raw outputs of the boosted ensembles into a batch of torch
distributions and gives the per-row negative log-likelihood that the engine differentiates.
It also answers the distribution functions the :class:`~distboost.Predictive` needs
(``cdf``, ``icdf``, moments), filling the gaps of torch (no ``Gamma.icdf``, no
``StudentT.cdf``, ...) where a subclass supplies them.

Conventions
-----------
* Parameters carry torch's own names, in the order of the torch constructor.
* All torch work is float64.
* ``params`` arguments are mappings ``name -> Tensor of shape (n,)`` on the natural scale.
* Values (``y``, ``q``) have shape ``(..., n)`` and broadcast against the batch of ``n``
  distributions, as in torch.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np
import torch
from torch.distributions import Distribution

from ..links import Link, get_link, link_for_constraint
from .numerics.information import info_matrix, raw_information
from .numerics.inversion import invert_cdf
from .support import REAL, Support

__all__ = ["Family", "as_float64_tensor", "info_matrix", "raw_information", "refuse_all_zero",
           "spread_floor"]

Params = Mapping[str, torch.Tensor]


def as_float64_tensor(x) -> torch.Tensor:
    """Convert array-like or tensor to a float64 tensor (no copy when already float64)."""
    if isinstance(x, torch.Tensor):
        return x.to(torch.float64)
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


class Family:
    """A parametric family of distributions for the target ``y``.

    Subclasses set the class attributes below and may override :meth:`init` (closed-form
    MLE), :meth:`cdf`, :meth:`icdf`, :meth:`mean`, :meth:`variance` and
    :meth:`fisher_information`.

    Parameters
    ----------
    links : dict of str to str or Link, optional
        Overrides of the default link of some parameters, e.g. ``{"rate": "softplus"}``.

    Attributes
    ----------
    name : str
        Registry name.
    torch_class : type
        The ``torch.distributions`` class (or a compatible one) the family builds.
    param_names : tuple of str
        Parameter names, torch's names in torch's order.
    support : Support
        Support of ``y``.
    links : dict of str to Link
        The link of every parameter.

    Capabilities (class attributes a family declares; code elsewhere reads them instead of
    keeping lists of names):

    discrete : bool
        Whether ``y`` takes integer values.
    censorable : bool
        Continuous, with ``log_cdf`` and ``log_sf`` differentiable in the parameters: the
        family has a ``censored_<name>`` twin (:class:`~distboost.families.censored.Censored`).
    closed_form_crps : bool
        :meth:`crps` is a closed form, differentiable in the parameters (training with
        ``scoring_rule="crps"`` needs it); otherwise the CRPS is numerical.
    classification : bool
        ``y`` is a class index (``bernoulli``, ``categorical``).
    point_mass : float or None
        A value of a continuous family's ``y`` with positive probability (the zero of the
        zero-adjusted families).
    multivariate : bool
        ``y`` is a vector of parts, shape (n, d) (``multivariate_normal``, ``dirichlet``).
    """

    name: str = ""
    torch_class: type[Distribution] | None = None
    param_names: tuple[str, ...] = ()
    support: Support = REAL
    discrete: bool = False
    #: Has a censored twin: continuous, differentiable ``log_cdf`` / ``log_sf``.
    censorable: bool = False
    #: :meth:`crps` is a differentiable closed form.
    closed_form_crps: bool = False
    #: ``y`` is a class index (bernoulli, categorical).
    classification: bool = False
    #: The closed-form CRPS ``f(y, *params in param_names order) -> Tensor`` that the base
    #: :meth:`crps` calls (a ``staticmethod`` of :mod:`distboost.families.numerics.crps`), or None.
    crps_formula = None
    #: The closed-form per-row NLL and its gradient on the natural scale, ``f(y, *params in
    #: param_names order) -> (nll, tuple of d nll / d param)`` (a ``staticmethod`` of
    #: :mod:`distboost.families.numerics.likelihood`), or None: the base
    #: :meth:`raw_derivatives` carries it to the raw scores.
    score_formula = None
    #: Links to use instead of the constraint-derived ones (class-level defaults).
    default_links: Mapping[str, str] = {}
    #: True when :meth:`start_values` already is the weighted MLE (closed form): :meth:`init`
    #: then skips the numerical optimiser.
    closed_form_mle: bool = False
    #: The parameter whose raw score, shifted by a constant, widens or narrows every
    #: predictive distribution while leaving its location alone (``scale`` of a
    #: location-scale family, of the log for ``lognormal``); None when there is none.
    #: :class:`~distboost.DistributionalRegressor` calibrates it on validation rows.
    dispersion_param: str | None = None
    #: The step rule used by ``step="auto"`` (see :mod:`distboost.boosting.derivatives`).
    default_step: str = "natural"
    #: A value of ``y`` with positive probability in a family that is not ``discrete`` (0 for
    #: the zero-adjusted families), or None: its likelihood mixes a probability and a density
    #: (``distboost.selection.family_kind`` is ``"mixed"``).
    point_mass: float | None = None
    #: ``y`` is a vector of ``d >= 2`` parts, shape (n, d)
    #: (:class:`~distboost.families.multivariate.VectorFamily`).
    multivariate: bool = False
    #: The independent implementation of the same law that the tests compare against (a
    #: ``scipy.stats`` call, a statsmodels model), shown in the family table
    #: (:mod:`distboost.families.table`).
    reference: str = ""
    #: Cells of the family table that say more than the generated ones, keyed by column
    #: (``"parameters"``, ``"support"``, ``"crps"``, ``"fisher"``; see
    #: :data:`distboost.families.table.COLUMNS`).
    doc_notes: Mapping[str, str] = {}

    def __init__(self, links: Mapping[str, str | Link] | None = None):
        resolved: dict[str, Link] = {}
        for p in self.param_names:
            if p in self.default_links:
                resolved[p] = get_link(self.default_links[p])
            else:
                resolved[p] = link_for_constraint(self.torch_class.arg_constraints[p])
        for p, link in (links or {}).items():
            if p not in self.param_names:
                raise ValueError(
                    f"Family {self.name!r} has no parameter {p!r}; "
                    f"its parameters are {list(self.param_names)}."
                )
            resolved[p] = get_link(link)
        self.links = resolved

    # ------------------------------------------------------------------ identity
    @property
    def dispersion_params(self) -> tuple[str, ...]:
        """The outputs that dispersion calibration shifts together by one constant:
        ``(dispersion_param,)``, or the log-diagonal of a multivariate Normal's Cholesky
        factor (one shift scales the whole covariance); empty when there is none."""
        return () if self.dispersion_param is None else (self.dispersion_param,)

    @property
    def n_params(self) -> int:
        """Number of parameters ``K`` (one boosted ensemble each)."""
        return len(self.param_names)

    def __repr__(self) -> str:
        custom = {
            p: lk.name for p, lk in self.links.items() if lk != type(self)(None).links[p]
        } if self.links else {}
        extra = f"links={custom!r}" if custom else ""
        return f"{type(self).__name__}({extra})"

    def get_params(self) -> dict:
        """Constructor arguments, for serialisation."""
        return {"links": {p: lk.name for p, lk in self.links.items()}}

    def get_state(self) -> dict:
        """The whole state of the family, JSON-safe: ``{"name": registry name, "links":
        {parameter: link name}}`` plus the constructor arguments of a parametrised family
        (e.g. ``n_classes``); wrappers give ``{"wrapper": kind, "inner": state, ...}``.
        :func:`distboost.families.from_state` rebuilds an equal family from it."""
        return {"name": self.name, "links": {p: lk.name for p, lk in self.links.items()}}

    def with_links(self, links: Mapping[str, str | Link]) -> Family:
        """A copy of the family with some links replaced (the others kept).

        Raises
        ------
        ValueError
            For a parameter the family does not have, or an unknown link name.
        """
        resolved = dict(self.links)
        for p, link in links.items():
            if p not in self.param_names:
                raise ValueError(
                    f"Family {self.name!r} has no parameter {p!r}; "
                    f"its parameters are {list(self.param_names)}."
                )
            resolved[p] = get_link(link)
        new = copy.copy(self)
        new.links = resolved
        return new

    def __sklearn_clone__(self) -> Family:
        """A fresh, equal family for ``sklearn.base.clone`` of an estimator holding this one
        (a family has ``get_params`` but is not an estimator: clone would call
        ``get_params(deep=False)`` and refuse the rebuilt links)."""
        return copy.deepcopy(self)

    # ------------------------------------------------------------------ raw <-> params
    def params_from_raw(self, raw: torch.Tensor) -> dict[str, torch.Tensor]:
        """Natural-scale parameters from raw scores.

        Parameters
        ----------
        raw : Tensor of shape (n, K)

        Returns
        -------
        dict of str to Tensor of shape (n,)
        """
        return {p: self.links[p].forward(raw[:, k]) for k, p in enumerate(self.param_names)}

    def raw_from_params(self, params: Mapping[str, object]) -> np.ndarray:
        """Raw scores from natural-scale parameters.

        Parameters
        ----------
        params : dict of str to array_like of shape (n,) or scalars

        Returns
        -------
        ndarray of shape (n, K), or (K,) for scalar parameters
        """
        cols = [np.asarray(self.links[p].inverse(np.asarray(params[p], dtype=np.float64)))
                for p in self.param_names]
        return np.stack(np.broadcast_arrays(*cols), axis=-1).astype(np.float64)

    def distribution(self, params: Params) -> Distribution:
        """The torch distribution with these natural-scale parameters."""
        return self.torch_class(**{p: params[p] for p in self.param_names}, validate_args=False)

    # ------------------------------------------------------------------ likelihood
    def log_prob(self, params: Params, y: torch.Tensor) -> torch.Tensor:
        """Log density (or mass) of ``y`` of shape (..., n)."""
        return self.distribution(params).log_prob(y)

    def nll(self, raw: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """Per-row negative log-likelihood, differentiable with respect to ``raw``.

        Parameters
        ----------
        raw : Tensor of shape (n, K)
        y : Tensor of shape (n,)

        Returns
        -------
        Tensor of shape (n,)
        """
        return -self.log_prob(self.params_from_raw(raw), y)

    def crps(self, params: Params, y: torch.Tensor) -> torch.Tensor:
        """Closed-form continuous ranked probability score per row.

        ``CRPS(F, y) = int (F(x) - 1{x >= y})^2 dx`` (Gneiting & Raftery 2007, eq. 20), for a
        family with ``closed_form_crps``; float64 and differentiable with respect to the
        parameters by autograd (a ``scoring_rule="crps"`` objective differentiates it).

        Parameters
        ----------
        params : dict of str to Tensor of shape (n,)
            Natural-scale parameters.
        y : Tensor of shape (n,)

        Returns
        -------
        Tensor of shape (n,)

        Raises
        ------
        NotImplementedError
            When the family has no closed form (``closed_form_crps`` is False): its CRPS is
            numerical (:meth:`distboost.Predictive.crps`) and not differentiable.
        """
        if not self.closed_form_crps or self.crps_formula is None:
            raise NotImplementedError(
                f"Family {self.name!r} has no closed-form CRPS; closed forms exist for the "
                "families with closed_form_crps = True (Predictive.crps integrates the others "
                "numerically)."
            )
        y = as_float64_tensor(y)
        return self.crps_formula(y, *(params[p] for p in self.param_names))

    def fisher_natural(self, params: Params) -> torch.Tensor | None:
        """Closed-form expected Fisher information of one observation on the natural scale.

        Parameters
        ----------
        params : dict of str to Tensor of shape (n,)

        Returns
        -------
        Tensor of shape (n, K, K), or of shape (n, K) when the information matrix is
        diagonal (its diagonal only); None when the family has no closed form.
        """
        return None

    def fisher_information(self, raw: torch.Tensor) -> torch.Tensor | None:
        """Expected Fisher information of one observation with respect to the raw scores.

        ``J^T I(theta) J`` with ``J = diag(d theta / d raw)`` from the links, where
        ``I(theta)`` is :meth:`fisher_natural`.

        Parameters
        ----------
        raw : Tensor of shape (n, K)

        Returns
        -------
        Tensor of shape (n, K, K), or (n, K) for a diagonal information matrix (as returned
        by :meth:`fisher_natural`); None when the family has no closed form (the engine
        then estimates it by Monte Carlo).
        """
        fisher = self.fisher_natural(self.params_from_raw(raw))
        if fisher is None:
            return None
        d = torch.stack(
            [self.links[p].derivative(raw[:, k]) for k, p in enumerate(self.param_names)], dim=0
        )
        return raw_information(fisher, d)

    def dispersion_profile(self, raw: torch.Tensor, y: torch.Tensor,
                           floor: torch.Tensor | None = None):
        """The NLL in a constant shift ``delta`` of the dispersion's raw score, in closed
        form: ``nll_i + delta + rho_i (exp(-p delta) - 1) / p`` (a scale family with a log
        link; the Normal: ``rho = z^2``, ``p = 2``), minimised at ``log(mean_w rho) / p``.
        The calibration's ``DispersionSearch`` takes it in place of a grid of shifts.

        Parameters
        ----------
        raw : Tensor of shape (n, K), float64
        y : Tensor of shape (n,)
        floor : Tensor of shape (K,), optional
            Lower bounds of the raw scores, as in :meth:`raw_derivatives`.

        Returns
        -------
        (nll array[n], rho array[n], p float, (low, high) floats) or None
            ``low <= 0 <= high`` bound the shifts for which it holds (no row's raw scale at
            its floor or the link's bound).  None (the default) without a closed form.
        """
        return None

    def raw_derivatives(self, raw: torch.Tensor, y: torch.Tensor,
                        floor: torch.Tensor | None = None):
        """Closed-form per-row NLL, its gradient and the Fisher information on the raw scale.

        An optional fast path of the boosting engine (``fit_boosting(derivatives=...)``):
        what autograd of :meth:`nll` and :meth:`fisher_information` give, without building
        an autograd graph.  None (the default) when the family has no closed form for its
        current links (or for the given floors); the engine then uses autograd.

        Parameters
        ----------
        raw : Tensor of shape (n, K), float64
        y : Tensor of shape (n,)
        floor : Tensor of shape (K,), optional
            Lower bounds of the raw scores: the values are those at ``max(raw, floor)``,
            with a zero gradient where a score is below its floor (as autograd of the
            floored loss gives).

        Returns
        -------
        (nll Tensor[n], grad Tensor[n, K], fisher Tensor[n, K] (diagonal) or Tensor[n, K, K])
        or None

        Notes
        -----
        The base implementation is the chain rule of :attr:`score_formula` through the links
        and the floors, with :meth:`fisher_information` at the floored scores
        (:func:`distboost.families.numerics.likelihood.chain_rule`); None without a formula,
        for a link without a closed-form derivative, or without a closed-form information.
        """
        if self.score_formula is None:
            return None
        from .numerics.likelihood import chain_rule

        own = type(self).fisher_information is not Family.fisher_information
        return chain_rule(self, self.score_formula, raw, y, floor, natural_fisher=not own)

    # ------------------------------------------------------------------ validation
    def validate_y(self, y) -> np.ndarray:
        """Check that every target lies in the support.

        Parameters
        ----------
        y : array_like of shape (n,)

        Returns
        -------
        ndarray of shape (n,), float64

        Raises
        ------
        ValueError
            Naming the family, its support and how many rows fall outside it; NaN and
            infinite values are counted separately.
        """
        y = np.asarray(y, dtype=np.float64)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y[:, 0]
        if y.ndim != 1:
            hint = (" For a target of d parts use 'multivariate_normal' (or 'dirichlet' for "
                    "compositions)." if y.ndim == 2 else "")
            raise ValueError(
                f"Family {self.name!r} expects a 1-D target y, got an array of shape "
                f"{y.shape}.{hint}"
            )
        nonfinite = ~np.isfinite(y)
        if nonfinite.any():
            raise ValueError(
                f"Target y has {int(nonfinite.sum())} of {y.size} rows that are NaN or "
                f"infinite; family {self.name!r} needs finite values in {self.support}."
            )
        bad = ~self.support.contains(y)
        if bad.any():
            first = y[bad][:3].tolist()
            raise ValueError(
                f"Target y has {int(bad.sum())} of {y.size} rows outside the support "
                f"{self.support} of family {self.name!r} (e.g. {first})."
            )
        return y

    # ------------------------------------------------------------------ start values
    def init(self, y, sample_weight=None) -> dict[str, float]:
        """Weighted marginal maximum-likelihood parameters (natural scale).

        The base implementation maximises the weighted log-likelihood numerically
        (L-BFGS on the raw scale, exact gradients by autograd), starting from
        :meth:`start_values`.

        Parameters
        ----------
        y : array_like of shape (n,)
        sample_weight : array_like of shape (n,), optional

        Returns
        -------
        dict of str to float
        """
        from .numerics.mle import numerical_mle

        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.size)
        if self.closed_form_mle:
            return self.start_values(y, w)
        if {"loc", "scale"} <= set(self.param_names) and self.support == REAL:
            # Location-scale family: fit the standardised target, then map back, so that the
            # start values are exactly equivariant (fitting y * c gives loc and scale * c)
            # whatever the optimiser's tolerances.
            center = float(np.sum(w * y))
            spread = float(np.sqrt(np.sum(w * (y - center) ** 2)))
            if spread > 0:
                z = (y - center) / spread
                fit = numerical_mle(self, z, w, self.start_values)
                fit["loc"] = center + spread * fit["loc"]
                fit["scale"] = spread * fit["scale"]
                return fit
        return numerical_mle(self, y, w, self.start_values)

    def start_values(self, y: np.ndarray, w: np.ndarray) -> dict[str, float]:
        """Starting point for the numerical MLE (natural scale).

        The built-in families override this with moment estimates; the default, for a
        user-defined family, starts every parameter at raw score 0 (e.g. loc 0, scale 1).
        """
        zero = torch.zeros((1, self.n_params), dtype=torch.float64)
        return {p: float(v[0]) for p, v in self.params_from_raw(zero).items()}

    #: Relative floor of a ``scale`` parameter: ``SCALE_FLOOR`` times the spread of ``y`` (see
    #: :meth:`param_floors`).
    SCALE_FLOOR = 1e-6

    def param_floors(self, y: np.ndarray) -> dict[str, float]:
        """Lower bounds of parameters that must not collapse to zero (natural scale).

        A ``scale`` parameter is floored at ``1e-6`` times the standard deviation of the
        finite values of ``y``: a near-constant target (or a leaf of identical values) would
        otherwise drive it to zero and the likelihood to infinity.  The floor follows the
        spread, not the magnitude, so that ``1e9 + N(0, 1)`` keeps its unit scale.  Two
        guards: at least ``1e-12 * mean |y|`` (float64 resolves no finer relative
        differences), and for a constant target (no spread) ``1e-6 * mean |y|`` (``1e-6`` for
        an all-zero target).  Families without a ``scale`` parameter have no floor.
        """
        if "scale" not in self.param_names:
            return {}
        return {"scale": spread_floor(y, self.SCALE_FLOOR)}

    def check_fit_target(self, y: np.ndarray) -> None:
        """Refuse a validated training target that no model of the family can fit, naming
        all its rows (estimators call it once on the whole target before any fold or
        split).  The base accepts every target; the multivariate Normal refuses constant or
        collinear parts."""

    def init_raw(self, y, sample_weight=None) -> np.ndarray:
        """:meth:`init` on the raw scale: ndarray of shape (K,)."""
        return self.raw_from_params(self.init(y, sample_weight))

    # ------------------------------------------------------------------ distribution functions
    def cdf(self, params: Params, y: torch.Tensor) -> torch.Tensor:
        """Cumulative distribution function at ``y`` of shape (..., n)."""
        return self.distribution(params).cdf(y)

    def log_cdf(self, params: Params, y: torch.Tensor) -> torch.Tensor:
        """``log F(y)``, differentiable in the parameters (censored likelihoods).

        Families override this with a form that stays accurate deep in the lower tail.
        """
        return torch.log(self.cdf(params, y))

    def log_sf(self, params: Params, y: torch.Tensor) -> torch.Tensor:
        """``log(1 - F(y))``, differentiable; overridden for accuracy in the upper tail."""
        return torch.log1p(-self.cdf(params, y))

    def icdf(self, params: Params, q: torch.Tensor) -> torch.Tensor:
        """Quantile function at levels ``q`` of shape (..., n).

        Uses torch's ``icdf`` where it exists and a vectorised numerical inversion of
        :meth:`cdf` otherwise (relative accuracy about 1e-10).  For discrete families,
        the smallest integer ``k`` with ``cdf(k) >= q``.
        """
        q = as_float64_tensor(q)
        if not self.discrete:
            try:
                x = self.distribution(params).icdf(q)
            except NotImplementedError:
                pass
            else:
                # torch's icdf gives nan / boundary values at q in {0, 1}; use the support.
                x = torch.where(q <= 0, torch.full_like(x, self.support.low), x)
                return torch.where(q >= 1, torch.full_like(x, self.support.high), x)
        return invert_cdf(lambda v: self.cdf(params, v), q, self.support)

    def mean(self, params: Params) -> torch.Tensor:
        """Mean, shape (n,)."""
        return self.distribution(params).mean

    def variance(self, params: Params) -> torch.Tensor:
        """Variance, shape (n,)."""
        return self.distribution(params).variance

    def sample(self, params: Params, m: int, seed: int) -> torch.Tensor:
        """``m`` draws per distribution, shape (m, n), reproducible for a given ``seed``.

        Uses torch's own sampler inside ``torch.random.fork_rng`` so that torch's global
        random state is left untouched.
        """
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            return self.distribution(params).sample((m,)).to(torch.float64)


def spread_floor(y, relative: float) -> float:
    """``relative`` times the standard deviation of the finite values of ``y``, at least
    ``1e-12 * mean |y|``; ``relative * mean |y|`` for a constant ``y`` (``relative`` when it is
    all zero or empty).  The floor of a scale (:meth:`Family.param_floors`)."""
    y = np.asarray(y, dtype=np.float64)
    y = y[np.isfinite(y)]
    if y.size == 0:
        return relative
    magnitude = float(np.mean(np.abs(y)))
    spread = float(np.std(y))
    if not spread > 1e-12 * magnitude:  # constant up to rounding
        return relative * (magnitude if magnitude > 0 else 1.0)
    return max(relative * spread, 1e-12 * magnitude)


def refuse_all_zero(family: Family, y: np.ndarray, why: str) -> np.ndarray:
    """``y`` unchanged, or a ValueError when every row is zero (``why``: what cannot be
    fitted then), naming the family and the number of rows."""
    if y.size and not np.any(y):
        raise ValueError(f"Family {family.name!r} cannot fit a target whose {y.size} rows are "
                         f"all zero: {why}.")
    return y


def _normalise_weights(sample_weight, n: int) -> np.ndarray:
    """Sample weights as float64 summing to one (uniform when None)."""
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight has shape {w.shape}, expected ({n},) to match y.")
    if (~np.isfinite(w)).any() or (w < 0).any():
        bad = int(((~np.isfinite(w)) | (w < 0)).sum())
        raise ValueError(f"sample_weight has {bad} of {n} rows that are negative, NaN or inf.")
    total = w.sum()
    if total <= 0:
        raise ValueError(f"sample_weight sums to zero over all {n} rows.")
    return w / total
