"""How many boosting rounds to keep: where the validation rows come from, and the number of
rounds chosen by K-fold cross-validation on small training sets.

A boosted distributional model must stop before its trees start fitting the training rows'
noise: past that point the fitted spread shrinks and every interval becomes too narrow.  The
stopping round is judged on rows the trees did not see.  With few rows a single held-out
split is too small to judge by (20 rows of 200: the chosen round and the dispersion
calibration are noise), so below :data:`CV_MAX_ROWS` training rows the estimators choose the
number of rounds by K-fold cross-validation on the training rows and refit on all of them
(the rule of ``xgboost.cv`` / ``lightgbm.cv`` and of GAMLSS boosting, Mayr et al. 2012), and
calibrate the dispersion on the out-of-fold predictions.  Above it a seeded held-out split of
``validation_fraction`` of the rows is large enough (at least 100 rows) to choose the rounds
and the dispersion shift.  Below :data:`REFIT_MAX_ROWS` the model is then refitted on all the
rows at those rounds, times ``n / n_fit`` (the held-out rows are a tenth of the data, and a
fit of that size takes seconds); above, the split's fit is kept and costs one fit.

References
----------
Mayr, Fenske, Hofner, Kneib & Schmid (2012), Generalized additive models for location, scale
and shape for high dimensional data: a flexible approach based on boosting, JRSS C 61(3)
(the stopping iteration of gamboostLSS chosen by cross-validation or bootstrap).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from .policy import CV_FOLDS, CV_MAX_ROWS, REFIT_MAX_ROWS, paired_standard_error, validation_mode

__all__ = ["CV_MAX_ROWS", "CV_FOLDS", "REFIT_MAX_ROWS", "validation_mode", "cv_folds",
           "best_cv_round", "select_rounds_by_cv", "one_standard_error_choice", "padded_curves",
           "constant_model_message"]

def cv_folds(n: int, random_state: int, strata: np.ndarray | None = None,
             n_splits: int = CV_FOLDS) -> list[tuple[np.ndarray, np.ndarray]]:
    """Shuffled K-fold splits of ``n`` rows (stratified by ``strata`` when given).

    Returns
    -------
    list of (train_index, validation_index)
        ``min(n_splits, n)`` pairs of integer arrays.
    """
    k = min(n_splits, n)
    rows = np.arange(n)
    if strata is not None and np.unique(strata, return_counts=True)[1].min() >= k:
        return list(StratifiedKFold(k, shuffle=True, random_state=random_state)
                    .split(rows, strata))
    return list(KFold(k, shuffle=True, random_state=random_state).split(rows))


def padded_curves(curves: Sequence[np.ndarray]) -> np.ndarray:
    """The folds' validation curves as one array of shape (n_folds, max length), a fold
    that stopped early keeping its last score for the later rounds."""
    length = max(len(c) for c in curves)
    return np.stack([np.pad(np.asarray(c, dtype=np.float64), (0, length - len(c)),
                            mode="edge") for c in curves])


def best_cv_round(curves: Sequence[np.ndarray], weights: Sequence[float],
                  one_se: bool = True) -> int:
    """The round chosen from the folds' validation curves: the earliest whose weighted mean
    is within one standard error of the best (``one_se``), or the minimum.

    The standard error is the paired one (:func:`one_standard_error_choice`): of each
    round's difference to the best round, fold by fold.  The folds' own difficulty (one fold
    holding more dry days than another) is common to every round of a fold and cancels;
    unpaired, it widened the band until the start values (round 0) were kept on a series
    whose folds all improved by 0.04 nats over 15 rounds.

    Parameters
    ----------
    curves : sequence of ndarray
        One per fold: the validation score after rounds ``0, 1, ..., R_i`` (round 0 is the
        start values).  A fold that stopped early (at ``R_i``) keeps its last score for the
        later rounds: its score had stopped improving there.
    weights : sequence of float
        Each fold's validation weight (its rows, or their summed sample weights).

    Returns
    -------
    int
        The best round (0 keeps the start values).
    """
    padded = padded_curves(curves)
    if not one_se:
        mean = np.asarray(weights, np.float64) @ np.where(np.isfinite(padded), padded, np.inf)
        return int(np.argmin(mean)) if np.isfinite(mean).any() else 0
    return one_standard_error_choice(padded, weights, paired=True)


def one_standard_error_choice(scores: np.ndarray, weights, paired: bool = False) -> int:
    """The first candidate whose weighted mean fold score is within one standard error of
    the best candidate's (Breiman et al. 1984, sec. 3.4.3; glmnet's ``lambda.1se``).

    Parameters
    ----------
    scores : ndarray of shape (n_folds, n_candidates)
        Validation score (lower is better) of each candidate on each fold, candidates
        ordered from the simplest (first) to the most complex.
    weights : sequence of float
        Weight of each fold.
    paired : bool
        False: the standard error of the best candidate's mean, from the spread of its fold
        scores.  True: of the mean difference between each candidate and the best, fold by
        fold (the folds' common difficulty cancels; for small folds of very different
        difficulty).

    Returns
    -------
    int
        The chosen candidate (0 when no candidate has a finite score).
    """
    scores = np.where(np.isfinite(scores), scores, np.inf)
    w = np.asarray(weights, dtype=np.float64) / np.sum(weights)
    with np.errstate(invalid="ignore"):
        mean = w @ scores
    if not np.isfinite(mean).any():
        return 0
    best = int(np.argmin(mean))
    se = paired_standard_error(scores - scores[:, [best]] if paired else scores[:, best], w)
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(mean) & (mean <= mean[best] + se)
    return int(np.flatnonzero(ok)[0])


def select_rounds_by_cv(fit_fold: Callable, folds, weights) -> tuple[int, list]:
    """Run ``fit_fold(train_index, validation_index)`` on every fold and pick the round.

    Parameters
    ----------
    fit_fold : callable
        Returns an object with ``valid_curve`` (ndarray of the validation scores after
        rounds ``0..R``, see :func:`best_cv_round`).
    folds : list of (train_index, validation_index)
    weights : sequence of float
        Validation weight of each fold.

    Returns
    -------
    best_round : int
    runs : list
        What ``fit_fold`` returned, per fold (for out-of-fold predictions).
    """
    runs = [fit_fold(train, valid) for train, valid in folds]
    return best_cv_round([r.valid_curve for r in runs], weights), runs


def constant_model_message(mode: str, n: int, linear_start, folds: int = CV_FOLDS,
                           restricted: bool = False) -> str:
    """Why a fit predicts one distribution for every row, and what to try.

    Called when validation kept 0 rounds and there is no linear start: the model is the
    constant start (the weighted marginal fit), the features unused.

    Parameters
    ----------
    mode : str
        Where the validation rows came from ("cv", "holdout", "holdout_refit" or "eval_set").
    n : int
        Training rows.
    linear_start : "auto" or bool
        The estimator's option (False: the linear start was not tried).
    folds : int
        Folds of the cross-validation.
    restricted : bool
        Monotone constraints or per-parameter features turned the linear start off.
    """
    judge = {"cv": f"{folds}-fold cross-validation on the {n} training rows",
             "holdout": "the held-out validation split",
             "holdout_refit": "the held-out validation split",
             "eval_set": "the eval_set"}.get(mode, "validation")
    if mode == "cv":
        if linear_start is False:
            start = "linear_start=False"
        elif restricted:
            start = ("monotone_constraints or param_options 'features' turn the linear start "
                     "off")
        else:
            start = ("the linear start did not beat the start values by more than one "
                     "standard error")
        tries = ("early_stopping='holdout', or early_stopping=False with a small "
                 "n_estimators (rounds not judged by the one-standard-error rule); another "
                 "random_state (other folds)")
        if linear_start is False:
            tries = "linear_start='auto'; " + tries
    else:
        start = "a held-out split tries no linear start"
        tries = (f"early_stopping='cv' (with a linear start below {CV_MAX_ROWS:,} rows); a "
                 "smaller learning_rate")
    return (f"{judge} kept 0 boosting rounds and no linear start ({start}): every row gets "
            "the same predicted distribution, the weighted marginal fit, and the features "
            f"are not used. To try: {tries}; more rows. If the features should matter, "
            "compare with a linear model (e.g. a GLM or a Cox model).")

def cv_output_rounds(ensembles, weights, best: int) -> np.ndarray | None:
    """Each output's rounds for the refit after cross-validation with per-parameter stopping
    (:mod:`distboost.boosting.output_stopping`), or None when no fold kept its own rounds.

    ``best`` is the joint round chosen from the folds' phase-1 curves (the outputs stopped
    with the joint rule keep it); an output grown on alone keeps ``best`` plus the weighted
    mean, over the folds, of the rounds it gained beyond its fold's joint best round.

    Parameters
    ----------
    ensembles : sequence of FittedEnsemble
        The folds' runs.
    weights : sequence of float
        Each fold's validation weight.
    best : int

    Returns
    -------
    ndarray of int of shape (K,) or None
    """
    kept = [e.best_iterations_ for e in ensembles]
    if best <= 0 or any(k is None for k in kept):
        return None
    gained = np.stack([k - k.min() for k in kept])
    w = np.asarray(weights, dtype=np.float64)
    return best + np.rint(w @ gained / w.sum()).astype(int)
