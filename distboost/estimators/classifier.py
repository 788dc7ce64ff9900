"""Scikit-learn classifier: :class:`DistributionalClassifier` = label encoding + a class family.

The labels (any hashable values: strings, integers, ...) are encoded as class indices
``0 .. K-1`` and boosted with the ``bernoulli`` family (two classes, one ensemble for the
logit) or the ``categorical`` family (one ensemble per class logit, softmax over them, as
LightGBM's ``multiclass``).  The fit is the shared one of
:class:`~distboost.estimators.base.DistributionalEstimator` (every engine option, early
stopping, sample weights and ``eval_set`` behave exactly as for regression); this class adds
the label encoding and the class predictions.  The early-stopping split is stratified by class.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from sklearn.base import ClassifierMixin
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

from ..families import get as _get_family
from ..families.categorical import Categorical
from ..persistence import loadable
from .base import DistributionalEstimator
from .options import Option

__all__ = ["DistributionalClassifier"]


@loadable
class DistributionalClassifier(ClassifierMixin, DistributionalEstimator):
    """Gradient-boosted probabilistic classifier: one tree ensemble per class logit.

    Defaults differ from the regressor's where classification differs: scikit-learn's
    ``HistGradientBoostingClassifier`` rounds, rate and patience with early stopping on, the
    ``fisher`` step (the Newton step of LightGBM's and scikit-learn's multiclass losses) and
    ``reg_lambda=3`` (it shrinks most the leaves of rows already classified confidently, the
    over-confidence that costs log-loss); the measurements behind them are in
    ``docs/classification.md``.

    {parameters}

    {attributes}
    classes_ : ndarray of shape (n_classes,)
        The sorted labels; column ``k`` of :meth:`predict_proba` is ``classes_[k]``.
    init_params_ : dict of str to float
        The start logits (the weighted class frequencies).

    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from distboost.estimators.classifier import DistributionalClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = DistributionalClassifier(n_estimators=50, random_state=0).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    """

    _options = ("family", "n_estimators", "learning_rate", "step", "num_leaves", "max_depth",
                "min_child_samples", "subsample", "colsample", "reg_lambda", "max_bin",
                "min_split_gain", "extra_trees", "path_smooth", "max_cat_to_onehot",
                "monotone_constraints", "interaction_constraints", "param_options",
                "linear_start", "early_stopping", "validation_fraction", "n_iter_no_change",
                "base_learner", "backend", "device", "random_state", "n_jobs", "verbose",
                "progress")
    _n_positional = 1
    _defaults = {"n_estimators": 100, "learning_rate": 0.1, "step": "fisher",
                 "num_leaves": 31, "min_child_samples": 20, "reg_lambda": 3.0,
                 "early_stopping": True, "n_iter_no_change": 10}
    _extra_options = {"family": Option(
        "auto", [StrOptions({"auto", "bernoulli", "categorical"})],
        '{"auto", "bernoulli", "categorical"}',
        "\"bernoulli\": one logit (two classes only); \"categorical\": one logit per class "
        "(any number of classes >= 2); \"auto\": bernoulli for two classes, categorical for "
        "more.  There is no shape to choose by cross-validation here, as the regressor's "
        "\"auto\" does: the categorical law is every law on K classes (bernoulli is its "
        "K = 2 case).  For ordered levels, the regressor's ``family=\"auto\"`` also "
        "compares ``ordinal_logit``, which shares one ensemble across the levels.")}

    # ------------------------------------------------------------------ hooks
    def _prepare_target(self, y):
        labels = _check_labels(y, "y")
        classes, codes = np.unique(labels, return_inverse=True)
        if classes.size < 2:
            raise ValueError(
                f"DistributionalClassifier needs at least 2 classes in y; got 1 class "
                f"({classes.tolist()[0]!r}) in all {labels.size} rows."
            )
        family = self._resolve_family(classes.size)
        return family, codes.astype(np.float64), {"classes_": classes}

    def _check_target(self, family, y, name, context):
        return _encode(context["classes_"], _check_labels(y, name), name)

    def _resolve_family(self, n_classes: int):
        if self.family == "bernoulli" and n_classes != 2:
            raise ValueError(
                f"family='bernoulli' needs exactly 2 classes; y has {n_classes}: use "
                "family='categorical' or 'auto'."
            )
        if self.family == "bernoulli" or (self.family == "auto" and n_classes == 2):
            return _get_family("bernoulli")
        return Categorical(n_classes=n_classes)

    # ------------------------------------------------------------------ predict
    def _logits(self, X) -> np.ndarray:
        """Logits of shape (n, n_classes) (bernoulli: ``[0, logit]``)."""
        params = self._params(X)
        cols = [params[p] for p in self.family_.param_names]
        if len(cols) == 1:
            cols = [np.zeros_like(cols[0]), cols[0]]
        return np.stack(cols, axis=1)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities, ndarray of shape (n, n_classes), columns in ``classes_``
        order, rows summing to one."""
        return torch.softmax(torch.from_numpy(self._logits(X)), dim=1).numpy()

    def predict_log_proba(self, X) -> np.ndarray:
        """Log class probabilities (log-softmax of the logits, accurate for tiny
        probabilities), ndarray of shape (n, n_classes)."""
        return torch.log_softmax(torch.from_numpy(self._logits(X)), dim=1).numpy()

    def predict(self, X) -> np.ndarray:
        """The most probable class of each row, ndarray of shape (n,) with labels from
        ``classes_``."""
        logits = self._logits(X)  # check_is_fitted first
        return self.classes_[np.argmax(logits, axis=1)]

    def score(self, X, y, sample_weight=None) -> float:
        """Mean accuracy (scikit-learn's classifier score)."""
        return ClassifierMixin.score(self, X, y, sample_weight=sample_weight)

    # ------------------------------------------------------------------ persistence
    def _get_state(self) -> dict:
        return {**super()._get_state(), "classes_": self.classes_.tolist()}

    def _set_state(self, state: dict) -> None:
        super()._set_state(state)
        self.classes_ = np.asarray(state["classes_"])


def _check_labels(y, name: str) -> np.ndarray:
    if y is None:
        raise ValueError(
            f"This estimator requires y to be passed, but the target {name} is None."
        )
    if isinstance(y, pd.DataFrame | pd.Series):
        y = y.to_numpy()
    y = column_or_1d(y, warn=True)
    if y.shape[0] == 0:
        raise ValueError(f"Target {name} has 0 rows; at least 1 row is required.")
    if y.dtype == object:
        missing = pd.isna(y)
        if missing.any():
            raise ValueError(
                f"Target {name} has {int(missing.sum())} of {y.size} rows with missing "
                "labels (None or NaN)."
            )
    elif y.dtype.kind == "f" and np.isnan(y).any():
        raise ValueError(
            f"Target {name} has {int(np.isnan(y).sum())} of {y.size} rows with NaN labels."
        )
    check_classification_targets(y)
    return y


def _encode(classes: np.ndarray, labels: np.ndarray, name: str) -> np.ndarray:
    """Class indices of labels seen in ``fit`` (float64), ValueError for unseen ones."""
    idx = np.searchsorted(classes, labels)
    idx = np.clip(idx, 0, classes.size - 1)
    unseen = classes[idx] != labels
    if unseen.any():
        raise ValueError(
            f"{name} has {int(unseen.sum())} of {labels.size} rows with labels not seen "
            f"in fit (e.g. {list(np.unique(labels[unseen])[:3])}); the classes are "
            f"{list(classes)}."
        )
    return idx.astype(np.float64)
