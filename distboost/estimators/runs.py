"""The boosting runs of a fit: on given validation rows, on a held-out split, on K folds.

:class:`FitRuns` is the half of :class:`~distboost.estimators.base.DistributionalEstimator`
that runs the engine: where the validation rows come from (an ``eval_set``, a seeded
held-out split), one boosting run on some rows (objective, start values or the penalised
linear start, the engine with early stopping judged after each round's dispersion shift),
the dispersion calibration of a run, and the rounds chosen by K-fold cross-validation on
small data followed by a refit on all rows (calibrated on the out-of-fold predictions).
:class:`Run` is what one run gives back.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from .._validation import check_consistent_rows, check_sample_weight, check_X, take_rows
from ..boosting import fit_boosting
from ..boosting.engine import FittedEnsemble
from ..objective import FamilyObjective, slope_mask
from .calibration import DispersionSearch, best_dispersion_shift
from .linear_start import LinearStart, choose_linear_start, fit_linear_start
from .progress import round_bar
from .rounds import CV_FOLDS, best_cv_round, cv_folds, padded_curves

__all__ = ["FitRuns", "Run", "class_strata"]


@dataclass
class Run:
    """One boosting run on some rows (a fold, a held-out split, or all rows)."""

    ensemble: FittedEnsemble
    objective: FamilyObjective
    step: str
    valid_curve: np.ndarray | None
    shift: float = 0.0
    cv_curve: np.ndarray | None = None
    linear: LinearStart | None = None
    sizes: tuple[int, int] = (0, 0)


class FitRuns:
    """The runs of a fit (a mixin of the estimator base; see the module docstring)."""

    def _validation_rows(self, family, X, y, sample_weight, eval_set, eval_weight, mode,
                         context, seed):
        """The training rows and ``(X_val, y_val, w_val)`` (all None without validation)."""
        if eval_set is not None:
            X_val = check_X(self, eval_set[0], reset=False)
            y_val = self._check_target(family, eval_set[1], "y of eval_set", context)
            n_val = check_consistent_rows(X_val=X_val, y_val=y_val)
            w_val = check_sample_weight(eval_weight, n_val, "eval_sample_weight")
            return X, y, sample_weight, (X_val, y_val, w_val)
        if mode != "holdout":
            return X, y, sample_weight, (None, None, None)
        train, valid = train_test_split(
            np.arange(len(y)), test_size=self.validation_fraction, random_state=seed,
            stratify=class_strata(family, y, self.validation_fraction))
        w = (None, None) if sample_weight is None else (sample_weight[train],
                                                        sample_weight[valid])
        return (take_rows(X, train), y[train], w[0],
                (take_rows(X, valid), y[valid], w[1]))

    def _fit_rows(self, family, X, y, sample_weight, X_val=None, y_val=None, w_val=None, *,
                  context: dict, seed: int, n_estimators: int | None = None,
                  penalty: float | None = None, warn: bool = True, where: str = "") -> Run:
        """One boosting run on the given rows: objective, start, engine.

        Early stopping (each round judged after its own best dispersion shift when
        ``calibrate``) when validation rows are given; ``n_estimators`` overrides the cap
        (the refit after cross-validation); ``penalty`` starts from the penalised linear
        model of :mod:`distboost.estimators.linear_start`.  ``valid_curve`` holds the
        validation loss after rounds ``0..R`` (round 0: the start values).
        """
        objective = self._make_objective(family, X, y, sample_weight, warn=warn,
                                         context=context)
        init_raw = objective.init_raw
        data = objective.data(X, y)
        data_val = None if X_val is None else objective.data(X_val, y_val)
        linear = None
        if penalty is not None:
            linear = LinearStart.design_of(X)
            Z = linear.design(X)
            try:
                init_raw, linear.coef = fit_linear_start(objective.loss, init_raw, Z, data,
                                                         sample_weight, penalty,
                                                         slope_mask(family))
            except FloatingPointError:
                warnings.warn(
                    f"{self._describe(family)}: the penalised linear start (penalty "
                    f"{penalty}) diverged on {len(y)} rows; boosting starts from the "
                    "constant instead.", RuntimeWarning, stacklevel=3)
                linear, init_raw = None, objective.init_raw
        if linear is not None:
            data["offset"] = torch.as_tensor(Z @ linear.coef)
            if data_val is not None:
                data_val["offset"] = torch.as_tensor(linear.offset(X_val))
        step = self._default_step(family) if self.step == "auto" else self.step
        callables = objective.engine_callables(step, seed)
        valid_score = start_score = None
        if X_val is not None:
            column = objective.dispersion_column()
            if self.calibrate and column is not None:
                search = DispersionSearch(objective.loss, data_val, w_val, column)
                last = {"shift": 0.0}

                def valid_score(raw, data, weight):
                    last["shift"], value = search(raw, center=last["shift"])
                    return value

                start_score = valid_score
            else:
                start_score = functools.partial(_mean_loss, objective.loss)
            start_score = start_score(np.tile(init_raw, (len(y_val), 1)), data_val, w_val)
        overrides = {} if n_estimators is None else {"n_estimators": n_estimators}
        overrides["n_iter_no_change"] = None if X_val is None else self.n_iter_no_change
        params = self._engine_params(step, len(y), seed,
                                     tree_options=context.get("_tree_options_"), **overrides)
        desc = where.removeprefix(", ").replace("cross-validation ", "") or "boosting"
        with round_bar(self.progress, params.n_estimators, desc, leave=not where) as callback:
            ensemble = fit_boosting(
                callables["loss"], init_raw, self._tree_X(X, context), data,
                params=params, sample_weight=sample_weight,
                X_val=None if X_val is None else self._tree_X(X_val, context),
                data_val=data_val, sample_weight_val=w_val, fisher=callables.get("fisher"),
                valid_score=valid_score, warn_context=self._describe(family) + where,
                derivatives=callables.get("derivatives"), metric_name=self._metric,
                callback=callback,
            )
        curve = None
        if X_val is not None:
            curve = np.array([start_score, *ensemble.evals_result_["valid"][self._metric]])
        return Run(ensemble, objective, step, curve, linear=linear,
                   sizes=(params.num_leaves, params.min_child_samples))

    def _calibrate(self, run: Run, val, context) -> float:
        """The dispersion shift minimising the validation loss at the kept round."""
        X_val, y_val, w_val = val
        column = run.objective.dispersion_column()
        if column is None:
            return 0.0
        raw = run.ensemble.predict_raw(self._tree_X(X_val, context))
        data = run.objective.data(X_val, y_val)
        return best_dispersion_shift(run.objective.loss, raw, data, w_val, column)[0]

    def _fit_cross_validated(self, family, X, y, sample_weight, context, seed) -> Run:
        """Rounds chosen by K-fold cross-validation, then a refit on all rows.

        First the start: the penalised linear model when ``linear_start`` and
        cross-validation prefer it to the constant (``choose_linear_start``).  Each fold is a
        full fit from that start; the kept round is the earliest whose folds' weighted mean
        validation loss is within one standard error of the best (``best_cv_round``; round
        0 keeps the start).  The dispersion shift is fitted on the out-of-fold predictions
        at that round, correcting the optimism of trees judged on their own rows.
        """
        n = len(y)
        w = np.ones(n) if sample_weight is None else sample_weight
        folds = cv_folds(n, seed, class_strata(family, y, 1.0 / CV_FOLDS))
        penalty = None
        # A linear slope could break a monotone constraint or use a parameter's excluded
        # columns: the "auto" start is the constant then (True is refused in fit).
        if self.linear_start and not context["_tree_options_"].restricted:
            def make_loss(y_rows):
                objective = self._make_objective(family, None, y_rows, None, warn=False,
                                                 context=context)
                return objective.loss, objective.init_raw

            penalty = choose_linear_start(make_loss, X, y, sample_weight, folds,
                                          LinearStart.design_of, slope_mask(family))

        def fit_fold(i, train, valid):
            w_rows = ((None, None) if sample_weight is None
                      else (sample_weight[train], sample_weight[valid]))
            return self._fit_rows(
                family, take_rows(X, train), y[train], w_rows[0], take_rows(X, valid),
                y[valid], w_rows[1], context=context, seed=seed, penalty=penalty, warn=False,
                where=f", cross-validation fold {i + 1}/{len(folds)}")

        weights = [float(w[valid].sum()) for _, valid in folds]
        runs = [fit_fold(i, train, valid) for i, (train, valid) in enumerate(folds)]
        best = best_cv_round([r.valid_curve for r in runs], weights)
        final = self._fit_rows(family, X, y, sample_weight, context=context, seed=seed,
                               n_estimators=max(best, 1), penalty=penalty)
        final.ensemble.best_iteration_ = min(best, final.ensemble.n_iter_)
        final.cv_curve = np.average(padded_curves([r.valid_curve for r in runs]), axis=0,
                                    weights=weights)
        column = final.objective.dispersion_column()
        if self.calibrate and column is not None:
            oof = np.empty((n, final.objective.n_outputs))
            for run, (_, valid) in zip(runs, folds, strict=True):
                X_valid = take_rows(X, valid)
                raw = run.ensemble.predict_raw(self._tree_X(X_valid, context),
                                               num_iteration=best)
                if run.linear is not None:
                    raw = raw + run.linear.offset(X_valid)
                oof[valid] = np.maximum(raw, run.objective.raw_floor)
            data = {"y": torch.as_tensor(y)}
            final.shift, _ = best_dispersion_shift(final.objective.loss, oof, data,
                                                   sample_weight, column)
        return final


def _mean_loss(loss, raw, data, weight) -> float:
    """Weighted mean of ``loss`` at ``raw`` (ndarray of shape (n, K))."""
    with torch.no_grad():
        per_row = loss(torch.as_tensor(raw, dtype=torch.float64), data).numpy()
    return float(np.average(per_row, weights=weight))


def class_strata(family, y, validation_fraction):
    """Class labels to stratify a split by, for a classification family, when every class
    can appear on both sides (at least 2 rows per class, both sides at least as long as the
    number of classes); None otherwise (a plain random split), as scikit-learn's
    HistGradientBoosting classifier."""
    if not family.classification:
        return None
    counts = np.unique(y, return_counts=True)[1]
    n_val = int(np.ceil(validation_fraction * y.size))
    if counts.min() < 2 or counts.size > min(n_val, y.size - n_val):
        return None
    return y
