"""Choosing a family: :func:`compare_families` (:mod:`~distboost.selection.compare`), the
cross-validated scores of several families on the same data, and the counts behind its
``degenerate`` column (:mod:`~distboost.selection.degeneracy`), and the choice behind
``DistributionalRegressor(family="auto")`` (:mod:`~distboost.selection.auto`, installed into
the estimators when this package is imported)."""

from . import auto  # noqa: F401  (installs the family="auto" chooser)
from .compare import compare_families, family_kind

__all__ = ["compare_families", "family_kind"]
