"""``Wrapped``: the one base of the families that wrap another (censored, truncated).

A wrapper holds an ``inner`` family and takes from it, without copying, everything that
describes the parameters: ``param_names``, ``links``, ``torch_class``, ``dispersion_param``,
``default_step``, the support (unless the wrapper narrows it), the start values and the floors.
A subclass overrides only what the wrapping changes (the likelihood, the distribution
functions, the support).  As torch's ``TransformedDistribution`` and ``Independent`` wrap any
distribution, a wrapper wraps any family, a user-registered one included.

Link overrides go to the inner family (:meth:`Wrapped.with_links`), so
``get(Truncated("normal", low=0), links={"scale": "softplus"})`` works; the state of a
wrapper (:meth:`Wrapped.get_state`) is its kind, its constructor arguments and the inner
family's own state, rebuilt by :func:`distboost.families.from_state`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

from ..links import Link
from .base import Family
from .support import Support

__all__ = ["Wrapped"]


class Wrapped(Family):
    """A family that wraps another one (``inner``) and delegates its parameters to it.

    Subclasses set :attr:`kind` (the key of their state, e.g. ``"truncated"``), call
    :meth:`_wrap` in their constructor, and override :meth:`_state_args` when their
    constructor takes arguments besides the inner family.

    Parameters
    ----------
    family : str or Family
        The inner family, by name or as an instance.
    links : dict of str to str or Link, optional
        Link overrides passed to the inner family.
    """

    #: Key of the wrapper in a family state (``{"wrapper": kind, "inner": {...}, ...}``).
    kind: str = ""
    #: Prefix of the wrapper's name before the inner family's name.
    prefix: str = ""
    # A wrapper is neither censorable again nor given a closed-form CRPS of its own.
    censorable = False
    closed_form_crps = False

    def _wrap(self, family, links: Mapping[str, str | Link] | None = None) -> Family:
        from .registry import get

        self.inner = get(family, links=links)
        return self.inner

    # ------------------------------------------------------------------ delegated identity
    @property
    def name(self) -> str:
        return f"{self.prefix}{self.inner.name}"

    @property
    def torch_class(self):
        return self.inner.torch_class

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.inner.param_names

    @property
    def links(self) -> dict[str, Link]:
        return self.inner.links

    @property
    def support(self) -> Support:
        return self.inner.support

    @property
    def discrete(self) -> bool:
        return self.inner.discrete

    @property
    def dispersion_param(self) -> str | None:
        return self.inner.dispersion_param

    @property
    def default_step(self) -> str:
        return self.inner.default_step

    @property
    def closed_form_mle(self) -> bool:  # the wrapped likelihood needs the numerical MLE
        return False

    def with_links(self, links: Mapping[str, str | Link]) -> Wrapped:
        """A copy whose inner family has these link overrides."""
        new = copy.copy(self)
        new.inner = self.inner.with_links(links)
        return new

    def get_params(self) -> dict:
        return self.inner.get_params()

    def _state_args(self) -> dict:
        """JSON-safe constructor arguments besides the inner family (none by default)."""
        return {}

    def get_state(self) -> dict:
        """``{"wrapper": kind, "inner": inner state, **constructor arguments}``."""
        return {"wrapper": self.kind, "inner": self.inner.get_state(), **self._state_args()}

    # ------------------------------------------------------------------ delegated behaviour
    def param_floors(self, y):
        return self.inner.param_floors(y)

    @property
    def chosen_floors(self) -> tuple[str, ...]:
        return getattr(self.inner, "chosen_floors", ())

    def start_values(self, y, w):
        return self.inner.start_values(y, w)
