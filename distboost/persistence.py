"""Safe saving and loading of fitted models: JSON metadata plus LightGBM's own text model.

A saved model is one UTF-8 JSON file.  Loading parses JSON and LightGBM's text format only:
nothing is unpickled or executed.  The file carries a format version (a newer one is refused
with a clear error) and a SHA-256 checksum of its content (a truncated or edited file is
refused).  Models with a scikit-learn ``base_learner`` cannot be saved this way; pickle or
joblib them (scikit-learn's convention), which works for every model.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

__all__ = ["FORMAT_VERSION", "save", "load"]

FORMAT = "distboost-model"
FORMAT_VERSION = 1


def _checksum(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), allow_nan=True)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def save(estimator, path) -> None:
    """Write a fitted estimator to ``path`` (one JSON file).

    Raises
    ------
    NotFittedError
        If the estimator is not fitted.
    ValueError
        If it uses a scikit-learn ``base_learner`` or a family object that is not registered
        (neither can be rebuilt from text).
    """
    from sklearn.utils.validation import check_is_fitted

    from . import __version__
    from .families import get

    check_is_fitted(estimator)
    # deep=False: a Family given as ``family`` has a get_params of its own, which would add
    # ``family__links`` entries that the constructor does not accept.
    params = estimator.get_params(deep=False)
    # A DistributionalClassifier boosts through its DistributionalRegressor ``model_``.
    booster = getattr(estimator, "model_", estimator)
    if params.get("base_learner") is not None:
        raise ValueError(
            "A model with a scikit-learn base_learner cannot be saved in the safe text format; "
            "use pickle or joblib instead."
        )
    family = booster.family_
    try:
        registered = get(family.name)
    except ValueError:
        registered = None
    if registered is None or type(registered) is not type(family):
        raise ValueError(
            f"Family {family.name!r} is not a registered family, so it cannot be rebuilt from "
            "text; register it (db.families.register) or use pickle."
        )
    if booster is estimator:
        params["family"] = family.name
    fitted = {
        "n_features_in_": estimator.n_features_in_,
        "init_params_": booster.init_params_,
        "raw_floor_": [v if np.isfinite(v) else None for v in booster.raw_floor_],
        "n_iter_": booster.n_iter_,
        "best_iteration_": booster.best_iteration_,
        "step_": getattr(booster, "step_", None),
        "dispersion_shift_": getattr(booster, "dispersion_shift_", 0.0),
        "evals_result_": booster.evals_result_,
        "categories_": getattr(estimator, "_categories_", None),
        "early_stopping_": getattr(booster, "early_stopping_", None),
        "linear_start_": (None if getattr(booster, "linear_start_", None) is None
                          else booster.linear_start_.to_dict()),
    }
    if hasattr(estimator, "classes_"):
        fitted["classes_"] = estimator.classes_.tolist()
    if hasattr(estimator, "feature_names_in_"):
        fitted["feature_names_in_"] = list(estimator.feature_names_in_)
    body = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "distboost_version": __version__,
        "estimator": type(estimator).__name__,
        "params": _jsonable(params),
        "family": {"name": family.name, "links": family.get_params()["links"]},
        "fitted": _jsonable(fitted),
        "ensemble": _jsonable(booster.ensemble_.to_dict()),
    }
    doc = {**body, "sha256": _checksum(body)}
    Path(path).write_text(json.dumps(doc, allow_nan=True), encoding="utf-8")


def load(path):
    """Read a model written by :func:`save` (or ``model.save``).

    Raises
    ------
    ValueError
        If the file is not a distboost model, comes from a newer format version, or was
        truncated or edited (checksum mismatch).
    """
    from .boosting import FittedEnsemble
    from .estimators import DistributionalRegressor
    from .families import get

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
    checksum = doc.pop("sha256", None)
    if checksum != _checksum(doc):
        raise ValueError(f"{path} failed its checksum: the file was edited or corrupted.")
    from .classifier import _ENGINE_PARAMS, DistributionalClassifier

    name = doc.get("estimator")
    if name not in ("DistributionalRegressor", "DistributionalClassifier"):
        raise ValueError(f"{path} holds an unknown estimator {name!r}.")
    params = doc["params"]
    family = get(doc["family"]["name"], links=doc["family"]["links"])
    fitted = doc["fitted"]
    if name == "DistributionalClassifier":
        wrapper = DistributionalClassifier(**params)
        wrapper.classes_ = np.asarray(fitted["classes_"])
        model = DistributionalRegressor(family=family,
                                        **{k: params[k] for k in _ENGINE_PARAMS})
    else:
        wrapper = None
        model = DistributionalRegressor(**params)
    model.family_ = family
    for m in (model, wrapper):
        if m is None:
            continue
        m.n_features_in_ = fitted["n_features_in_"]
        if "feature_names_in_" in fitted:
            m.feature_names_in_ = np.asarray(fitted["feature_names_in_"], dtype=object)
        if fitted.get("categories_") is not None:
            m._categories_ = fitted["categories_"]
    model.init_params_ = fitted["init_params_"]
    model.raw_floor_ = np.array([-np.inf if v is None else v for v in fitted["raw_floor_"]])
    model.n_iter_ = fitted["n_iter_"]
    model.best_iteration_ = fitted["best_iteration_"]
    model.step_ = fitted.get("step_")
    model.dispersion_shift_ = fitted.get("dispersion_shift_", 0.0)
    model.evals_result_ = fitted["evals_result_"]
    model.early_stopping_ = fitted.get("early_stopping_")
    model.linear_start_ = None
    if fitted.get("linear_start_") is not None:
        from .linear_start import LinearStart

        model.linear_start_ = LinearStart.from_dict(fitted["linear_start_"])
    model.ensemble_ = FittedEnsemble.from_dict(doc["ensemble"])
    if wrapper is not None:
        wrapper._adopt(model)
        return wrapper
    return model
