"""Safe saving and loading of fitted models: the file format, below the estimators.

A saved model is one UTF-8 JSON file: a header (format name and version, distboost's version),
the estimator's class name and constructor parameters, and its fitted state as the estimator
gives it (``_get_state``: plain JSON values, the family's whole state, the tree backend's own
text model).  Loading parses JSON and the backend's text format only: nothing is unpickled or
executed.  A newer format version is refused with a clear error, and a SHA-256 checksum of the
content refuses a truncated or edited file.

This module knows no estimator: a class becomes loadable through the :func:`loadable`
decorator (a registry by class name, as ``torch.distributions``' constraint registry), and
gives ``_get_state`` / ``_set_state``.  Models with a scikit-learn ``base_learner`` cannot be
saved this way; pickle or joblib them (scikit-learn's convention), which works for every model.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from ._version import __version__

__all__ = ["FORMAT_VERSION", "save", "load", "loadable", "estimator_to_dict",
           "estimator_from_dict"]

FORMAT = "distboost-model"
#: Version 2: the fitted state as the estimator gives it, the family's whole state.
FORMAT_VERSION = 2

_LOADABLE: dict[str, type] = {}


def loadable(cls: type) -> type:
    """Class decorator: :func:`load` may rebuild instances of ``cls`` (by its name)."""
    _LOADABLE[cls.__name__] = cls
    return cls


def _checksum(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def _params(estimator) -> dict:
    """Constructor parameters as JSON values (a Family object as its state)."""
    # deep=False: a Family given as ``family`` is a value, not a nested estimator.
    params = estimator.get_params(deep=False)
    if params.get("base_learner") is not None:
        raise ValueError(
            "A model with a scikit-learn base_learner cannot be saved in the safe text format; "
            "use pickle or joblib instead."
        )
    family = params.get("family")
    if family is not None and not isinstance(family, str):
        params["family"] = {"family_state": family.get_state()}
    for name, value in params.items():
        if type(value).__name__ in _LOADABLE and _LOADABLE[type(value).__name__] is type(value):
            # an estimator given as a parameter (e.g. ConformalRegressor(estimator=...)):
            # its class and constructor parameters
            params[name] = {"estimator_params": estimator_to_dict(value, fitted=False)}
    for name, value in params.items():
        if callable(value) and not isinstance(value, type):
            raise ValueError(
                f"Parameter {name}={value!r} is a Python callable, which the safe text format "
                "cannot hold; use pickle or joblib instead."
            )
    return _jsonable(params)


def estimator_to_dict(estimator, fitted: bool = True) -> dict:
    """An estimator as JSON values: ``{"estimator": class name, "params": ..., "state": ...}``
    (``state`` only when ``fitted``), for :func:`save` and for estimators that hold others.

    Raises
    ------
    ValueError
        If its class is not loadable, or a parameter cannot be saved (a scikit-learn
        ``base_learner``, a callable).
    """
    name = type(estimator).__name__
    if _LOADABLE.get(name) is not type(estimator):
        raise ValueError(
            f"{name} is not a loadable class, so it cannot be saved in the safe format; use "
            "pickle or joblib."
        )
    out = {"estimator": name, "params": _params(estimator)}
    if fitted:
        out["state"] = _jsonable(estimator._get_state())
    return out


def estimator_from_dict(d: dict):
    """Rebuild what :func:`estimator_to_dict` gave (fitted when it holds a ``state``)."""
    from .families import from_state

    cls = _LOADABLE.get(d.get("estimator"))
    if cls is None:
        raise ValueError(f"Unknown estimator {d.get('estimator')!r} in a saved model.")
    params = dict(d["params"])
    for name, value in params.items():
        if isinstance(value, dict) and "family_state" in value:
            params[name] = from_state(value["family_state"])
        elif isinstance(value, dict) and "estimator_params" in value:
            params[name] = estimator_from_dict(value["estimator_params"])
    estimator = cls(**params)
    if "state" in d:
        estimator._set_state(d["state"])
    return estimator


def save(estimator, path) -> None:
    """Write a fitted estimator to ``path`` (one JSON file).

    Raises
    ------
    NotFittedError
        If the estimator is not fitted.
    ValueError
        If it uses a scikit-learn ``base_learner``, a callable parameter, or its class is
        not loadable.
    """
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(estimator)
    body = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "distboost_version": __version__,
        **estimator_to_dict(estimator),
    }
    doc = {**body, "sha256": _checksum(body)}
    Path(path).write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")


def load(path):
    """Read a model written by :func:`save` (or ``model.save``).

    Raises
    ------
    ValueError
        If the file is not a distboost model, comes from another format version, or was
        truncated or edited (checksum mismatch).
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path} is not a distboost model file (not UTF-8 text).") from err
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path} is not a complete distboost model file (invalid JSON at character "
            f"{err.pos} of {len(text)}: truncated or not a model)."
        ) from err
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path} is not a distboost model file (no '{FORMAT}' header).")
    version = doc.get("format_version")
    if not isinstance(version, int) or version > FORMAT_VERSION:
        raise ValueError(
            f"{path} was written in distboost model format {version!r}; this version of "
            f"distboost reads formats up to {FORMAT_VERSION}: upgrade distboost to load it."
        )
    if version < FORMAT_VERSION:
        raise ValueError(
            f"{path} was written in distboost model format {version}, which this version "
            f"(format {FORMAT_VERSION}) no longer reads: refit and save the model again."
        )
    checksum = doc.pop("sha256", None)
    if checksum != _checksum(doc):
        raise ValueError(f"{path} failed its checksum: the file was edited or corrupted.")
    if doc.get("estimator") not in _LOADABLE:
        raise ValueError(f"{path} holds an unknown estimator {doc.get('estimator')!r}.")
    return estimator_from_dict(doc)
