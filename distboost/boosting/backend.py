"""The tree-backend protocol and the registry of backends.

The engine (:func:`~distboost.boosting.fit_boosting`) grows its trees through a
:class:`TreeBackend` and predicts through the :class:`FittedTrees` it returns; it never
names LightGBM or scikit-learn.  A backend is registered under a name with the dotted path
of its two classes (imported on first use, so an optional dependency costs nothing until
asked for)::

    register_backend("mytrees", "mypackage.trees:MyBackend", "mypackage.trees:MyModel")

Built in: ``"lightgbm"`` (the default), ``"xgboost"`` (XGBoost's histogram trees; the
trees of :mod:`distboost.dask` models; needs the ``dask`` extra or xgboost) and
``"sklearn"`` (any scikit-learn regressor as ``EngineParams.base_learner``; chosen
automatically when a base learner is given).

A backend class is constructed as ``Backend(params, init_raw, X, sample_weight, X_val)``
with the :class:`~distboost.boosting.EngineParams`, the start values (K,), the training
features, the training weights (or None; the backend may ignore them: the engine's
``(grad, hess)`` already carry them) and the validation features (or None).
"""

from __future__ import annotations

import importlib
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = ["TreeBackend", "FittedTrees", "register_backend", "get_backend",
           "check_importance_type",
           "get_model_class", "available_backends", "backend_name"]


@runtime_checkable
class TreeBackend(Protocol):
    """Grows ``K`` trees a round from the engine's ``(grad, hess)`` and keeps the scores.

    Attributes
    ----------
    name : str
        The registry name (saved with the model).
    layout : tuple (dtype, order)
        dtype and memory order of the ``(grad, hess)`` arrays the backend takes without a
        conversion (LightGBM: float32, column-major); the engine writes them so.
    """

    name: str
    layout: tuple

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        """Add one round of ``K`` trees fitted to ``(grad, hess)`` (shape (n, K)), shrunk by
        ``learning_rate``; the training and validation scores follow."""

    def retry(self, learning_rate: float) -> None:
        """Redo the last round from the same ``(grad, hess)`` with ``learning_rate`` (the
        engine's line search; the engine keeps those arrays unchanged until the next
        ``grow``)."""

    def rollback(self) -> None:
        """Remove the last round: its trees and their share of the scores."""

    def train_scores(self) -> np.ndarray:
        """Raw scores of the training rows (start values included), shape (n, K); may be a
        view of the backend's buffer, valid until the backend changes."""

    def valid_raw(self) -> np.ndarray | None:
        """Raw scores of the validation rows, shape (n_val, K), or None without them."""

    def finish(self) -> FittedTrees:
        """Release the training data; the fitted trees."""


@runtime_checkable
class FittedTrees(Protocol):
    """The prediction side of a backend (held by a :class:`~distboost.boosting.FittedEnsemble`,
    which adds the start values)."""

    name: str

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        """Sum of the first ``num_iteration`` rounds' trees, shape (n, K), start values
        excluded."""

    def to_text(self, num_iteration: int) -> str:
        """The first ``num_iteration`` rounds in the backend's text format (safe to load:
        no pickle), or a ValueError when the backend has none."""

    @classmethod
    def from_text(cls, text: str, k: int) -> FittedTrees:
        """Rebuild from :meth:`to_text` output with ``k`` outputs."""

    def feature_importances(self, num_iteration: int,
                            importance_type: str = "gain") -> np.ndarray:
        """Total gain ("gain", or the learner's own importance) or number of splits
        ("split") of each feature per output, shape (K, p)."""

    def predict_contrib(self, X, num_iteration: int) -> np.ndarray:
        """Exact TreeSHAP contributions of the first ``num_iteration`` rounds (Lundberg et
        al. 2020), shape (n, K, p + 1): per output, one value per feature and last the
        trees' expected value, summing to :meth:`predict_raw` (start values excluded); a
        NotImplementedError naming the backend when it has none."""


#: name -> (backend class, fitted-model class), each a class or its "module:Class" path.
_REGISTRY: dict[str, tuple[str | type, str | type]] = {
    "lightgbm": ("distboost.boosting.lightgbm_backend:LightGBMBackend",
                 "distboost.boosting.lightgbm_backend:LightGBMModel"),
    "sklearn": ("distboost.boosting.sklearn_backend:SklearnBackend",
                "distboost.boosting.sklearn_backend:SklearnModel"),
    "xgboost": ("distboost.boosting.xgboost_backend:XGBoostBackend",
                "distboost.boosting.xgboost_backend:XGBoostModel"),
    "per_parameter": ("distboost.boosting.per_parameter:PerParameterBackend",
                      "distboost.boosting.per_parameter:PerParameterModel"),
}


#: The importances a :class:`FittedTrees` gives: total gain, or the number of splits.
IMPORTANCE_TYPES = ("gain", "split")


def check_importance_type(importance_type: str) -> str:
    """``importance_type`` if it is one of :data:`IMPORTANCE_TYPES`, else a ValueError."""
    if importance_type not in IMPORTANCE_TYPES:
        raise ValueError(f"importance_type must be 'gain' or 'split', got "
                         f"{importance_type!r}.")
    return importance_type


def register_backend(name: str, backend: str | type, model: str | type) -> None:
    """Register a tree backend under ``name``.

    Parameters
    ----------
    name : str
    backend, model : str or class
        The :class:`TreeBackend` and :class:`FittedTrees` classes, or their dotted paths
        ``"package.module:Class"`` (imported on first use).
    """
    _REGISTRY[str(name)] = (backend, model)


def available_backends() -> list[str]:
    """Names of the registered backends."""
    return sorted(_REGISTRY)


def _load(spec: str | type) -> type:
    if not isinstance(spec, str):
        return spec
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry(name: str) -> tuple[str | type, str | type]:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"Unknown tree backend {name!r}; choose one of "
                         f"{available_backends()}.") from None


def get_backend(name: str) -> type:
    """The :class:`TreeBackend` class registered under ``name``."""
    return _load(_entry(name)[0])


def get_model_class(name: str) -> type:
    """The :class:`FittedTrees` class registered under ``name`` (for loading text models)."""
    return _load(_entry(name)[1])


def backend_name(params) -> str:
    """The backend an :class:`~distboost.boosting.EngineParams` asks for: its ``backend``
    when set, else "sklearn" when it has a ``base_learner``, else "lightgbm"."""
    name = getattr(params, "backend", None)
    if name is not None:
        return name
    return "lightgbm" if params.base_learner is None else "sklearn"
