"""``Affine``: the law of ``Y = shift + factor * Z``, ``Z`` from any continuous family.

A forecaster that fits one model on standardised series (``z = (y - shift) / factor`` per
series) predicts the law of ``Z``; its forecasts in each series' own units are the law of
``Y = shift + factor * Z`` with per-row ``shift`` (real) and ``factor`` (> 0).  For an
increasing affine map (the change of variables of any monotone transform, e.g. Casella & Berger
2002, Statistical Inference, thm. 2.1.5; torch's ``TransformedDistribution`` with an
``AffineTransform``):

* ``F_Y(y) = F_Z(z)``, ``log f_Y(y) = log f_Z(z) - log factor`` with ``z = (y - shift) / factor``
  (no Jacobian at an atom: a probability is not a density), ``log F_Y``, ``log S_Y`` likewise;
* ``F_Y^{-1}(q) = shift + factor F_Z^{-1}(q)``, ``E Y = shift + factor E Z``,
  ``Var Y = factor^2 Var Z``, draws ``shift + factor Z_i`` (the inner family's draws, same seed);
* ``CRPS(F_Y, y) = factor CRPS(F_Z, z)``: substitute ``x = shift + factor u`` in
  ``int (F_Y(x) - 1{x >= y})^2 dx`` (Gneiting & Raftery 2007, JASA 102, eq. 20); closed form
  whenever the inner family's is, the numerical integral of :class:`~distboost.Predictive`
  otherwise (from ``cdf`` and ``icdf``).

Support.  A family's support is one interval for every row, but ``shift`` moves with the row:

* inner support the real line: kept;
* inner support with every finite end at 0 (``(0, inf)``, ``[0, inf)``: positive families and
  the zero-adjusted ones): kept, and ``shift`` must be 0 in every row (a ValueError otherwise),
  so that ``factor`` maps the support onto itself and the forecaster standardises a positive
  target by a scale alone; a point mass at 0 (``zero_adjusted_*``, ``tweedie``) stays at 0;
* any other support (a finite end not at 0: ``beta``, a truncated family): the real line, a
  sound superset; the wrapper answers values outside the row's own support itself (``cdf`` 0
  or 1, ``log_prob`` ``-inf``), and ``quantile(0)`` / ``quantile(1)`` of a
  :class:`~distboost.Predictive` give the infinite ends.

Discrete and multivariate inner families are refused (counts are not rescaled), and so is a
point mass anywhere but at 0 of a positive support.  The family is for prediction only
(:class:`~distboost.Predictive`), like :class:`~distboost.families.Calibrated`: it is not
fitted by boosting.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping

import torch
from torch.distributions import AffineTransform, TransformedDistribution

from ..links import Link, get_link
from .base import as_float64_tensor
from .registry import register_wrapper
from .support import REAL, Support
from .wrapper import Wrapped

__all__ = ["Affine"]

#: The wrapper's own parameters and their default links.
_OWN_LINKS = {"shift": "identity", "factor": "exp"}


def _interior(s: Support) -> float:
    """A point strictly inside the support ``s``."""
    if math.isfinite(s.low) and math.isfinite(s.high):
        return 0.5 * (s.low + s.high)
    if math.isfinite(s.low):
        return s.low + 1.0
    return s.high - 1.0 if math.isfinite(s.high) else 0.0


class Affine(Wrapped):
    """The law of ``Y = shift + factor * Z``, ``Z`` following a continuous family.

    Parameters
    ----------
    family : str or Family
        The inner family (the law of ``Z``): continuous and univariate, e.g. ``"normal"``,
        ``"gamma"`` or a :class:`~distboost.families.Calibrated` family.
    links : dict of str to str or Link, optional
        Link overrides: ``shift`` (default ``identity``) and ``factor`` (default ``exp``; any
        link whose domain lies in ``(0, inf)``) for the wrapper, the others for the inner
        family.

    Attributes
    ----------
    inner : Family
        The law of ``Z``.
    support : Support
        The inner support when it is the real line or has every finite end at 0 (``shift``
        must then be 0 in every row), else the real line (module notes).
    point_mass : float or None
        0 for an inner point mass at 0 of a positive support, else None.

    Raises
    ------
    ValueError
        For a discrete or multivariate inner family, a point mass the map would move from row
        to row, an inner family that already has a ``shift`` or ``factor`` parameter, or a
        ``factor`` link whose domain is not positive.

    Notes
    -----
    Parameters: the inner family's, then ``shift`` and ``factor`` (natural scale, shape (n,)
    each).  ``closed_form_crps`` is the inner family's.  The inner family's ``cdf_kinks``
    (histogram bin edges) are not carried: they move with each row.

    Examples
    --------
    >>> import distboost as db
    >>> fam = db.families.Affine("normal")
    >>> d = db.Predictive.from_params(fam, loc=0.0, scale=1.0, shift=10.0, factor=2.0)
    >>> d.mean.tolist(), d.stddev.tolist(), d.quantile(0.5).tolist()
    ([10.0], [2.0], [10.0])
    """

    kind = "affine"
    prefix = "affine_"

    def __init__(self, family, links: Mapping[str, str | Link] | None = None):
        links = dict(links or {})
        own = {p: links.pop(p) for p in _OWN_LINKS if p in links}
        inner = self._wrap(family, links or None)
        if inner.multivariate:
            raise ValueError(f"Family {inner.name!r} is multivariate: an affine map of a scalar "
                             "target needs a univariate family.")
        if inner.discrete:
            raise ValueError(f"Family {inner.name!r} is discrete: counts are not rescaled "
                             "(shift + factor * Z is no longer integer-valued).")
        clash = sorted(set(_OWN_LINKS) & set(inner.param_names))
        if clash:
            raise ValueError(f"Family {inner.name!r} already has parameters {clash}; Affine "
                             "adds 'shift' and 'factor'.")
        self._own_links = {p: get_link(v) for p, v in _OWN_LINKS.items()}
        self._set_own_links(own)
        s = inner.support
        ends = [e for e in (s.low, s.high) if math.isfinite(e)]
        #: Every finite end of the inner support is 0: the support is kept, shift must be 0.
        self._pinned = bool(ends) and all(e == 0.0 for e in ends)
        self._support = s if self._pinned or not ends else REAL
        atom = inner.point_mass
        if atom is not None and not (self._pinned and atom == 0.0):
            raise ValueError(
                f"Family {inner.name!r} has a point mass at {atom:g} on the support {s}: "
                "shift + factor * atom would move it with every row; only a point mass at 0 "
                "of a support with its finite ends at 0 (shift = 0) is kept.")
        self.point_mass = atom

    def _set_own_links(self, own: Mapping[str, str | Link]) -> None:
        for p, link in own.items():
            resolved = get_link(link)
            if p == "factor" and resolved.domain[0] < 0.0:
                raise ValueError(f"The link of 'factor' must map onto positive values; "
                                 f"{resolved.name!r} has the domain {resolved.domain}.")
            self._own_links[p] = resolved

    # ------------------------------------------------------------------ identity
    def __repr__(self) -> str:
        custom = {p: lk.name for p, lk in self._own_links.items() if lk.name != _OWN_LINKS[p]}
        return f"Affine({self.inner!r}{f', links={custom!r}' if custom else ''})"

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.inner.param_names + tuple(_OWN_LINKS)

    @property
    def links(self) -> dict[str, Link]:
        return {**self.inner.links, **self._own_links}

    @property
    def support(self) -> Support:
        """The inner support, or the real line (see the module notes)."""
        return self._support

    @property
    def closed_form_crps(self) -> bool:
        return self.inner.closed_form_crps

    @property
    def params_in_frame(self) -> bool:
        return getattr(self.inner, "params_in_frame", True)

    def with_links(self, links: Mapping[str, str | Link]) -> Affine:
        """A copy with link overrides: ``shift`` and ``factor`` its own, the others the inner
        family's."""
        links = dict(links)
        own = {p: links.pop(p) for p in _OWN_LINKS if p in links}
        new = copy.copy(self)
        if links:
            new.inner = self.inner.with_links(links)
        new._own_links = dict(self._own_links)
        new._set_own_links(own)
        return new

    def get_params(self) -> dict:
        out = dict(self.inner.get_params())
        out["links"] = {**out.get("links", {}), **self._state_args()["links"]}
        return out

    def _state_args(self) -> dict:
        return {"links": {p: lk.name for p, lk in self._own_links.items()}}

    def init(self, y, sample_weight=None):
        """Refused: the family is for prediction only (fit the inner family on ``z``)."""
        raise ValueError(f"Family {self.name!r} is for prediction only: fit {self.inner.name!r} "
                         "on the standardised target (y - shift) / factor, then wrap its "
                         "predictions in Affine.")

    # ------------------------------------------------------------------ pieces
    def _split(self, params):
        """``(inner params, shift, factor)``; a ValueError for a nonzero shift when the inner
        support is kept (its finite ends at 0)."""
        theta = {p: params[p] for p in self.inner.param_names}
        shift = as_float64_tensor(params["shift"])
        factor = as_float64_tensor(params["factor"])
        if self._pinned:
            moved = shift != 0
            if bool(moved.any()):
                raise ValueError(
                    f"Family {self.name!r} keeps the support {self.support} of "
                    f"{self.inner.name!r} only with shift = 0, but {int(moved.sum())} of "
                    f"{moved.numel()} rows have a nonzero shift; standardise such a target by "
                    "a factor alone.")
        return theta, shift, factor

    def _standardise(self, params, y):
        """``(theta, z, factor, below, above)``: ``z = (y - shift) / factor`` replaced by a point
        inside the inner support where it lies outside (``below`` / ``above`` mark those; None
        for an inner support that is the real line)."""
        theta, shift, factor = self._split(params)
        z = (as_float64_tensor(y) - shift) / factor
        s = self.inner.support
        if not (math.isfinite(s.low) or math.isfinite(s.high)):
            return theta, z, factor, None, None
        below = (z < s.low) if s.low_closed else (z <= s.low)
        above = (z > s.high) if s.high_closed else (z >= s.high)
        z = torch.where(below | above, torch.full_like(z, _interior(s)), z)
        return theta, z, factor, below, above

    @staticmethod
    def _ends(value, below, above, at_below: float, at_above: float):
        if below is None:
            return value
        value = torch.where(below, torch.full_like(value, at_below), value)
        return torch.where(above, torch.full_like(value, at_above), value)

    def distribution(self, params):
        """torch's ``TransformedDistribution`` of the inner distribution by
        ``AffineTransform(shift, factor)``."""
        theta, shift, factor = self._split(params)
        return TransformedDistribution(self.inner.distribution(theta),
                                       AffineTransform(shift, factor), validate_args=False)

    # ------------------------------------------------------------------ distribution functions
    def cdf(self, params, y):
        theta, z, _, below, above = self._standardise(params, y)
        return self._ends(self.inner.cdf(theta, z), below, above, 0.0, 1.0)

    def log_cdf(self, params, y):
        theta, z, _, below, above = self._standardise(params, y)
        return self._ends(self.inner.log_cdf(theta, z), below, above, -math.inf, 0.0)

    def log_sf(self, params, y):
        theta, z, _, below, above = self._standardise(params, y)
        return self._ends(self.inner.log_sf(theta, z), below, above, 0.0, -math.inf)

    def log_prob(self, params, y):
        """``log f_Z(z) - log factor``; at the inner point mass the probability itself."""
        theta, z, factor, below, above = self._standardise(params, y)
        jacobian = torch.log(factor)
        if self.point_mass is not None:
            jacobian = torch.where(z == self.point_mass, torch.zeros_like(z), jacobian)
        lp = self.inner.log_prob(theta, z) - jacobian
        return self._ends(lp, below, above, -math.inf, -math.inf)

    def icdf(self, params, q):
        theta, shift, factor = self._split(params)
        return shift + factor * self.inner.icdf(theta, as_float64_tensor(q))

    def mean(self, params):
        theta, shift, factor = self._split(params)
        return shift + factor * self.inner.mean(theta)

    def variance(self, params):
        theta, _, factor = self._split(params)
        return factor * factor * self.inner.variance(theta)

    def sample(self, params, m, seed):
        """``shift + factor * Z``: the inner family's draws for the same ``seed``."""
        theta, shift, factor = self._split(params)
        return shift + factor * self.inner.sample(theta, m, seed)

    def crps(self, params, y):
        """``factor * CRPS_Z((y - shift) / factor)``, the inner family's closed form.

        Raises
        ------
        NotImplementedError
            When the inner family has no closed form (``Predictive.crps`` then integrates
            numerically).
        """
        if not self.inner.closed_form_crps:
            raise NotImplementedError(
                f"Family {self.name!r} has no closed-form CRPS: {self.inner.name!r} has none "
                "(Predictive.crps integrates it numerically).")
        theta, shift, factor = self._split(params)
        z = (as_float64_tensor(y) - shift) / factor
        return factor * self.inner.crps(theta, z)


register_wrapper("affine", Affine)
