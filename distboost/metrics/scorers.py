"""scikit-learn scorers from the scores of :mod:`distboost.metrics` (higher is better).

``get_scorer("crps")`` returns a callable ``scorer(estimator, X, y, sample_weight=None)``
that gets the predictive distributions of ``X`` with :func:`predict_dist` and scores them,
usable as ``scoring=`` in ``cross_val_score`` and ``GridSearchCV``.  The estimator may be a
distboost estimator, a :class:`~sklearn.pipeline.Pipeline` ending in one (``X`` goes through
the transformers first, as scikit-learn does for ``predict_proba``) or a fitted search such as
``GridSearchCV`` over one.  Losses are negated; ``coverage_<p>`` returns minus the absolute
gap between the observed coverage and the nominal level (0 is perfect), since more coverage
is not better in itself (the raw coverage is :func:`distboost.metrics.coverage`).
``censored_nll``, ``survival_crps`` and ``concordance_index`` score censored ``(n, 2)`` bounds;
``energy_score`` and ``variogram_score`` (and ``nll``) score multivariate ``(n, d)`` targets.
"""

from __future__ import annotations

import re

from . import multivariate, scores, survival

__all__ = ["get_scorer", "available_scorers", "predict_dist"]


def _concordance(d, y, w):
    if w is not None:
        raise ValueError(
            "The concordance_index scorer takes no sample_weight (Harrell's C is unweighted); "
            "use 'censored_nll' or 'survival_crps' to score with weights."
        )
    return survival.concordance_index(d, y)


_FIXED = {
    "crps": lambda d, y, w: -scores.mean_crps(d, y, w),
    "nll": lambda d, y, w: -scores.mean_nll(d, y, w),
    "loglik": lambda d, y, w: -scores.mean_nll(d, y, w),
    "calibration_error": lambda d, y, w: -scores.calibration_error(d, y, sample_weight=w),
    "censored_nll": lambda d, y, w: -scores._mean(survival.censored_nll(d, y), w),
    "survival_crps": lambda d, y, w: -scores._mean(survival.survival_crps(d, y), w),
    "concordance_index": _concordance,
    "energy_score": lambda d, y, w: -multivariate.mean_energy_score(d, y, w),
    "variogram_score": lambda d, y, w: -multivariate.mean_variogram_score(d, y, w),
}
_PATTERNS = {
    "interval_score": lambda lv: lambda d, y, w: -scores.mean_interval_score(d, y, lv, w),
    "coverage": lambda lv: lambda d, y, w: -abs(scores.coverage(d, y, lv, w) - lv),
    "pinball": lambda lv: lambda d, y, w: -float(scores.mean_pinball(d, y, lv, w)),
}


#: Scorers that negate a loss: ``neg_<name>`` is accepted too, scikit-learn's spelling.
_LOSSES = re.compile(r"(crps|nll|calibration_error|censored_nll|survival_crps|energy_score"
                     r"|variogram_score|interval_score_\d{1,2}|pinball_\d{1,2})")


def available_scorers() -> list[str]:
    """Names :func:`get_scorer` accepts (``<pattern>_<percent>`` for any percent 1..99; a loss
    also as ``neg_<name>``, e.g. ``neg_crps``)."""
    return sorted(_FIXED) + [f"{p}_<percent>" for p in sorted(_PATTERNS)]


def predict_dist(estimator, X):
    """The predictive distributions of a fitted estimator, found through meta-estimators.

    * an estimator with a ``predict_dist`` method: ``estimator.predict_dist(X)``;
    * a :class:`~sklearn.pipeline.Pipeline`: ``X`` transformed by every step but the last
      (``None`` and ``"passthrough"`` steps skipped), then the last step's distributions (as
      scikit-learn's ``Pipeline.predict_proba`` does);
    * a fitted search (``GridSearchCV``, ``RandomizedSearchCV``, ...): its
      ``best_estimator_``.

    Parameters
    ----------
    estimator : fitted estimator
    X : array_like or DataFrame of shape (n, p)

    Returns
    -------
    Predictive of length n

    Raises
    ------
    ValueError
        For a :class:`~sklearn.compose.TransformedTargetRegressor` (a distribution of the
        transformed target cannot in general be mapped back to ``y``, so its scores would be
        wrong), a search fitted with ``refit=False``, or an estimator none of the above.
    """
    from sklearn.compose import TransformedTargetRegressor
    from sklearn.pipeline import Pipeline

    if hasattr(estimator, "predict_dist"):
        return estimator.predict_dist(X)
    if isinstance(estimator, Pipeline):
        Xt = X
        for _, step in estimator.steps[:-1]:
            if step is not None and step != "passthrough":
                Xt = step.transform(Xt)
        return predict_dist(estimator.steps[-1][1], Xt)
    if isinstance(estimator, TransformedTargetRegressor):
        raise ValueError(
            "TransformedTargetRegressor fits its regressor to a transformed target, and a "
            "predictive distribution of the transformed target cannot in general be mapped "
            "back to y, so distribution scores of it would be wrong. Fit the distboost "
            "estimator to y itself with a family for its scale (e.g. family='lognormal' "
            "instead of log(y) with 'normal')."
        )
    if hasattr(estimator, "best_estimator_"):
        return predict_dist(estimator.best_estimator_, X)
    if hasattr(estimator, "cv_results_"):
        raise ValueError(
            f"{type(estimator).__name__} was fitted with refit=False, so it has no "
            "best_estimator_ to predict distributions with; fit it with refit=True."
        )
    raise ValueError(
        f"{type(estimator).__name__} has no predict_dist: distribution scorers need a "
        "distboost estimator, a Pipeline ending in one, or a fitted search (GridSearchCV, "
        "RandomizedSearchCV) over one."
    )


class _DistScorer:
    def __init__(self, name, fn):
        self.name = name
        self.fn = fn

    def __call__(self, estimator, X, y, sample_weight=None) -> float:
        return float(self.fn(predict_dist(estimator, X), y, sample_weight))

    def __repr__(self) -> str:
        return f"get_scorer({self.name!r})"


def get_scorer(name: str) -> _DistScorer:
    """A scikit-learn scorer (higher is better) by name.

    Names: ``crps``, ``nll`` (alias ``loglik``), ``calibration_error``, and
    ``interval_score_<p>``, ``coverage_<p>``, ``pinball_<p>`` for a percent ``p`` in 1..99
    (e.g. ``interval_score_90``, ``pinball_50``), all for exact observations ``y`` of shape
    (n,); ``censored_nll``, ``survival_crps`` and ``concordance_index`` (Harrell's C, no
    sample weights) for censored ``(n, 2)`` bounds (see :mod:`distboost.censored`);
    ``energy_score`` and ``variogram_score`` (order 0.5, unit weights; the defaults of
    :func:`~distboost.metrics.energy_score` and :func:`~distboost.metrics.variogram_score`)
    and ``nll`` for multivariate targets ``y`` of shape (n, d).

    The scorer works on a distboost estimator, a Pipeline ending in one and a fitted search
    over one (see :func:`predict_dist`).  A loss's scorer also answers to scikit-learn's
    spelling ``neg_<name>`` (``neg_crps``, ``neg_nll``, ``neg_interval_score_90``, ...): the
    same scorer.  Pass the scorer object as ``scoring=`` (or a dict of them): scikit-learn
    has no public way to register new names, so ``scoring="neg_crps"`` as a string is
    refused by scikit-learn itself.

    Raises
    ------
    ValueError
        For an unknown name; the message lists the known ones.
    """
    if str(name).startswith("neg_") and _LOSSES.fullmatch(str(name)[4:]):
        return _DistScorer(name, get_scorer(str(name)[4:]).fn)
    if name in _FIXED:
        return _DistScorer(name, _FIXED[name])
    m = re.fullmatch(r"([a-z_]+)_(\d{1,2})", str(name))
    if m and m.group(1) in _PATTERNS and 1 <= int(m.group(2)) <= 99:
        return _DistScorer(name, _PATTERNS[m.group(1)](int(m.group(2)) / 100.0))
    raise ValueError(f"Unknown scorer {name!r}; known scorers are {available_scorers()}.")
