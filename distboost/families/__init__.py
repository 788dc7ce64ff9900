"""Families of distributions for the target, and their registry.

``available()`` lists the registered names, ``get(name, links=...)`` builds one,
``register`` (a decorator) adds a user-defined :class:`Family`, and ``from_state`` rebuilds a
family from ``Family.get_state()``.  ``Censored`` and ``Truncated`` wrap any continuous family
(one base, :class:`~distboost.families.wrapper.Wrapped`).
"""

from . import (  # noqa: F401  (registers them)
    bounded,
    categorical,
    censored,
    continuous,
    dirichlet,
    discrete,
    histogram,
    multivariate,
    ordinal,
    positive,
    tweedie,
    zero_adjusted,
    zero_inflated,
)
from .base import Family
from .censored import Censored
from .mixture import Mixture
from .registry import available, from_state, get, register
from .support import Support
from .truncated import Truncated
from .wrapper import Wrapped

__all__ = ["Censored", "Family", "Mixture", "Support", "Truncated", "Wrapped", "available",
           "from_state", "get", "register"]
