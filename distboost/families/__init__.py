"""Families of distributions for the target, and their registry.

``available()`` lists the registered names, ``get(name, links=...)`` builds one,
``register`` (a decorator) adds a user-defined :class:`Family`, and ``from_state`` rebuilds a
family from ``Family.get_state()``.  Every public module of this package is imported when the
package is (:func:`_register_all`): a family file registers its families with ``@register``,
so adding a family is adding its file.  ``Censored`` and ``Truncated`` wrap any continuous family
(one base, :class:`~distboost.families.wrapper.Wrapped`); ``Affine`` gives the law of
``shift + factor * Z`` (forecasts of standardised series in their own units).  ``Empirical(m)``
(not registered) holds ``m`` draws per row and ``EqualMixture(component, m)`` the average
of ``m`` laws per row (not registered either): the forecasts of
:mod:`distboost.forecasting`'s sample paths.
"""

import importlib as _importlib
import pkgutil as _pkgutil

from .affine import Affine
from .base import Family
from .calibrated import Calibrated
from .censored import Censored
from .continuous import StudentT
from .empirical import Empirical
from .equal_mixture import EqualMixture
from .mixture import Mixture
from .registry import available, from_state, get, register
from .support import Support
from .table import table, table_markdown
from .truncated import Truncated
from .wrapper import Wrapped

__all__ = ["Affine", "Calibrated", "Censored", "Empirical", "EqualMixture", "Family", "Mixture",
           "StudentT", "Support", "Truncated", "Wrapped", "available", "from_state", "get",
           "register", "table", "table_markdown"]


def _register_all() -> None:
    """Import every public module of this package: each registers its families with the
    ``@register`` decorator, so a new family is one new file (no import list to edit)."""
    for module in _pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            _importlib.import_module(f"{__name__}.{module.name}")


_register_all()
