"""``family="auto"``: where the estimators find the family chooser.

Choosing a family means cross-validating estimators, which is the selection layer's job
(:mod:`distboost.selection.auto`), one layer above the estimators.  The estimators import
nothing from above: the selection layer hands its chooser down with :func:`set_family_chooser`
when it is imported (``import distboost`` imports it, so every user of the estimators has it),
and ``fit`` calls it through :func:`choose_family`.  The same pattern as the family registry:
the lower layer defines the slot, the upper one fills it.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["AUTO", "choose_family", "is_auto", "set_family_chooser"]

#: The value of ``family`` that asks ``fit`` to choose the family.
AUTO = "auto"

_CHOOSER: list[Callable] = []


def is_auto(family) -> bool:
    """Whether ``family`` is the string ``"auto"``."""
    return isinstance(family, str) and family == AUTO


def set_family_chooser(chooser: Callable) -> None:
    """Install ``chooser(estimator, X, y) -> (family, table)``, the function ``fit`` calls for
    ``family="auto"`` (the selection layer installs :func:`distboost.selection.auto.choose`)."""
    _CHOOSER[:] = [chooser]


def choose_family(estimator, X, y, **options):
    """The family ``fit`` uses for ``family="auto"`` and the table it was chosen from.

    ``options`` go to the chooser (:func:`distboost.selection.auto.choose`: ``exclude``).

    Returns
    -------
    family : str or Family
    table : DataFrame
        The cross-validated comparison (``family_table_``).
    """
    if not _CHOOSER:  # only when distboost.estimators is loaded without the package
        raise RuntimeError("family='auto' needs distboost.selection: import distboost first.")
    return _CHOOSER[0](estimator, X, y, **options)
