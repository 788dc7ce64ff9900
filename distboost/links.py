"""Link functions: maps between a boosted ensemble's raw real output and a parameter's domain.

A link ``g`` relates a distribution parameter ``theta`` to the raw score ``eta`` produced by
the trees through ``theta = g^{-1}(eta)``.  Following the convention of
``torch.distributions.transform_to``, :meth:`Link.forward` maps raw -> parameter (the inverse
link in GLM vocabulary) and :meth:`Link.inverse` maps parameter -> raw.

Every link stays finite and differentiable for raw values in its ``raw_bounds``, by default
``[-RAW_BOUND, RAW_BOUND]``: raw scores are clamped to that interval before the forward map
(``exp(50)`` is about 5e21, still finite in float32), and inverses of values on the boundary
of the domain are clamped the same way instead of returning ``-inf``.  The softplus link grows
linearly (``softplus(eta) = eta`` to float precision above 37), so only its lower end is
clamped: an upper clamp at 50 capped its parameter at 50, where a scale of hundreds is
ordinary (issue 52: a Weibull with ``links={"scale": "softplus"}`` predicted a median of a
tenth of every observed value, without a warning).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch
from torch.distributions import constraints

__all__ = [
    "RAW_BOUND",
    "Link",
    "IdentityLink",
    "Sigmoid12Link",
    "ExpLink",
    "SoftplusLink",
    "SigmoidLink",
    "get_link",
    "available_links",
    "link_for_constraint",
]

#: Raw scores are clamped to ``[-RAW_BOUND, RAW_BOUND]`` before a non-identity forward map.
RAW_BOUND = 50.0


def _as_tensor(x) -> torch.Tensor:
    if isinstance(x, torch.Tensor):
        return x
    return torch.as_tensor(np.asarray(x, dtype=np.float64))


def _clamp_raw(raw: torch.Tensor) -> torch.Tensor:
    # A straight-through clamp would give wrong gradients; a plain clamp gives zero gradient
    # outside the bound, which only happens far beyond any sensible parameter value.
    return raw.clamp(-RAW_BOUND, RAW_BOUND)


class Link:
    """Base class of link functions.

    Attributes
    ----------
    name : str
        The name the link is registered under (``"identity"``, ``"exp"``, ...).
    domain : tuple of float
        Open interval ``(low, high)`` of parameter values the link reaches.
    raw_bounds : tuple of float
        The raw scores' clamp before the forward map, and the inverse's range.
    """

    name: str = ""
    aliases: tuple[str, ...] = ()
    domain: tuple[float, float] = (-math.inf, math.inf)
    raw_bounds: tuple[float, float] = (-RAW_BOUND, RAW_BOUND)

    def forward(self, raw):
        """Map raw scores to the parameter's domain.

        Parameters
        ----------
        raw : Tensor or array_like of shape (n,)

        Returns
        -------
        Tensor of shape (n,)
        """
        raise NotImplementedError  # pragma: no cover - abstract

    def inverse(self, value):
        """Map parameter values back to raw scores (the link itself, ``g(theta)``).

        Parameters
        ----------
        value : Tensor or array_like of shape (n,)

        Returns
        -------
        Tensor or ndarray of shape (n,)
            Same kind as the input (numpy in, numpy out).
        """
        is_numpy = not isinstance(value, torch.Tensor)
        out = self._inverse(_as_tensor(value)).clamp(*self.raw_bounds)
        return out.numpy() if is_numpy else out

    def _inverse(self, value: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError  # pragma: no cover - abstract

    def derivative(self, raw):
        """``d forward / d raw`` elementwise, shape (n,) (used to carry Fisher information
        from the natural scale to the raw scale)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def __call__(self, raw):
        return self.forward(raw)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(type(self))


class IdentityLink(Link):
    """Identity link, ``theta = eta``: for real-valued parameters such as a location."""

    name = "identity"
    domain = (-math.inf, math.inf)

    def forward(self, raw):
        return _as_tensor(raw)

    def derivative(self, raw):
        return torch.ones_like(_as_tensor(raw))

    def inverse(self, value):
        # No clamp: a location may legitimately lie beyond +-50.
        if isinstance(value, torch.Tensor):
            return value
        return np.asarray(value, dtype=np.float64)


class ExpLink(Link):
    """Log link, ``theta = exp(eta)``: the default for positive parameters (torch's
    ``transform_to(constraints.positive)`` is ``ExpTransform``)."""

    name = "exp"
    aliases = ("log",)
    domain = (0.0, math.inf)

    def forward(self, raw):
        return torch.exp(_clamp_raw(_as_tensor(raw)))

    def derivative(self, raw):
        return torch.exp(_clamp_raw(_as_tensor(raw)))

    def _inverse(self, value):
        return torch.log(value.clamp_min(torch.finfo(value.dtype).tiny))


class SoftplusLink(Link):
    """Softplus link, ``theta = log(1 + exp(eta))``: positive, but only linear growth."""

    name = "softplus"
    domain = (0.0, math.inf)
    raw_bounds = (-RAW_BOUND, math.inf)

    def forward(self, raw):
        return torch.nn.functional.softplus(_as_tensor(raw).clamp_min(-RAW_BOUND))

    def derivative(self, raw):
        return torch.sigmoid(_as_tensor(raw).clamp_min(-RAW_BOUND))

    def _inverse(self, value):
        value = value.clamp_min(torch.finfo(value.dtype).tiny)
        # log(expm1(v)) = v + log(1 - exp(-v)), stable for large v.
        return value + torch.log(-torch.expm1(-value))


class SigmoidLink(Link):
    """Logit link, ``theta = 1 / (1 + exp(-eta))``: for probabilities in (0, 1)."""

    name = "sigmoid"
    aliases = ("logit",)
    domain = (0.0, 1.0)

    def forward(self, raw):
        # sigmoid(x) rounds to exactly 1.0 for x > ~36.7 in float64: keep it inside (0, 1).
        s = torch.sigmoid(_clamp_raw(_as_tensor(raw)))
        return s.clamp(max=1.0 - torch.finfo(s.dtype).eps)

    def derivative(self, raw):
        s = torch.sigmoid(_clamp_raw(_as_tensor(raw)))
        return s * (1.0 - s)

    def _inverse(self, value):
        eps = torch.finfo(value.dtype).eps
        return torch.logit(value.clamp(eps, 1.0 - eps))


class Sigmoid12Link(Link):
    """``theta = 1 + sigmoid(eta)``, for a parameter in ``(1, 2)`` (the Tweedie power)."""

    name = "sigmoid12"
    domain = (1.0, 2.0)

    def forward(self, raw):
        s = torch.sigmoid(_clamp_raw(_as_tensor(raw)))
        return 1.0 + s.clamp(min=torch.finfo(s.dtype).eps, max=1.0 - torch.finfo(s.dtype).eps)

    def derivative(self, raw):
        s = torch.sigmoid(_clamp_raw(_as_tensor(raw)))
        return s * (1.0 - s)

    def _inverse(self, value):
        eps = torch.finfo(value.dtype).eps
        return torch.logit((value - 1.0).clamp(eps, 1.0 - eps))


_LINKS: dict[str, Callable[[], Link]] = {}
for _cls in (IdentityLink, ExpLink, SoftplusLink, SigmoidLink, Sigmoid12Link):
    for _name in (_cls.name, *_cls.aliases):
        _LINKS[_name] = _cls


def available_links() -> list[str]:
    """Names accepted by :func:`get_link` (including aliases ``log`` and ``logit``)."""
    return sorted(_LINKS)


def get_link(link: str | Link) -> Link:
    """Return a link from its name, or the link itself if one is given.

    Raises
    ------
    ValueError
        If the name is unknown; the message lists the known names.
    """
    if isinstance(link, Link):
        return link
    if isinstance(link, str) and link in _LINKS:
        return _LINKS[link]()
    raise ValueError(f"Unknown link {link!r}; known links are {available_links()}.")


def link_for_constraint(constraint: constraints.Constraint) -> Link:
    """Default link for a ``torch.distributions`` parameter constraint.

    Mirrors ``torch.distributions.transform_to``: real -> identity, positive (or
    non-negative) -> exp, unit interval -> sigmoid.
    """
    if constraint is constraints.real or isinstance(constraint, type(constraints.real)):
        return IdentityLink()
    lower = getattr(constraint, "lower_bound", None)
    upper = getattr(constraint, "upper_bound", None)
    if lower is not None and upper is None and float(lower) == 0.0:
        return ExpLink()
    if lower is not None and upper is not None and float(lower) == 0.0 and float(upper) == 1.0:
        return SigmoidLink()
    raise ValueError(f"No default link for constraint {constraint!r}; give one explicitly.")
