"""Families of distributions for the target, and their registry.

``available()`` lists the registered names, ``get(name, links=...)`` builds one, and
``register`` (a decorator) adds a user-defined :class:`Family`.
"""

from . import (  # noqa: F401  (registers them)
    bounded,
    categorical,
    censored,
    continuous,
    discrete,
    positive,
)
from .base import Family
from .registry import available, get, register
from .support import Support
from .truncated import Truncated

__all__ = ["Family", "Support", "Truncated", "available", "get", "register"]
