"""The boosting runs of a fit: on given validation rows, on a held-out split, on K folds.

:class:`FitRuns` is the half of :class:`~distboost.estimators.base.DistributionalEstimator`
that runs the engine: where the validation rows come from (an ``eval_set``, a seeded
held-out split), one boosting run on some rows (objective, start values or the penalised
linear start, the engine with early stopping judged after each round's dispersion shift),
the dispersion calibration of a run, and the rounds chosen by K-fold cross-validation on
small data followed by a refit on all rows (calibrated on the out-of-fold predictions), and the
refit on all rows after a held-out split.  :class:`Run` is what one run gives back.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings
from dataclasses import dataclass

import numpy as np
import torch
from sklearn.model_selection import train_test_split

from .._validation import check_consistent_rows, check_sample_weight, check_X, take_rows
from ..boosting import fit_boosting
from ..boosting.ensemble import FittedEnsemble
from ..families.numerics.special import carry_terms
from ..objective import FamilyObjective, slope_mask
from .dispersion_shift import DispersionSearch, apply_shift, best_dispersion_shift
from .leaf_size import (
    fine_leaves_candidate,
    location_column,
    location_tree_size,
)
from .linear_start import LinearStart, choose_linear_start, fit_linear_start
from .location_start import LocationPlan, LocationStart, cv_location_plan, start_location
from .policy import AUTO_COMPARE_ROWS, FitPlan, paired_standard_error
from .progress import round_bar
from .rounds import CV_FOLDS, best_cv_round, cv_folds, cv_output_rounds, padded_curves

__all__ = ["FitRuns", "Run", "class_strata", "AUTO_COMPARE_ROWS"]

#: ``_fit_cross_validated``'s default: choose the start (linear or constant) on the folds.
_CHOOSE = object()


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
    location: LocationStart | None = None
    #: ``(num_leaves, min_child_samples)`` of the location's trees (families with a
    #: location), else None.
    location_size: tuple[int, int] | None = None
    #: The round cap the engine ran under (``n_estimators`` resolved).
    cap: int = 0
    #: A cross-validated fit's out-of-fold raw scores at the refit's rounds, (n, K).
    oof: np.ndarray | None = None
    #: A cross-validated fit's fold runs at the kept round: ``predict_uncertainty``'s
    #: members.
    members: list[Run] | None = None
    #: A refit on all rows after a held-out split: the split's ``(rounds run, rounds kept,
    #: stopped_reason)``.
    held_out: tuple[int, int, str] | None = None
    #: A cross-validated fit's choice of start: the linear start's penalty, or None for
    #: the constant (reused by the fine-leaved run on the same folds).
    penalty: float | None = None
    #: ``(id of X_val, raw scores)``: the finished run's validation raw scores, predicted
    #: once for the dispersion shift, the fine-leaves check and the comparisons.
    val_raw: tuple | None = None
    #: ``(id of X_val, rounds, raw)``: the engine's validation raw scores of the trees at
    #: the kept rounds (``FittedEnsemble.valid_raw_``), used while those rounds are kept.
    engine_val_raw: tuple | None = None

    def offset(self, X) -> np.ndarray | float:
        """The starts' per-row part of the raw scores on the rows X: (n, K) or 0.0."""
        out = 0.0
        for start in (self.linear, self.location):
            if start is not None:
                out = out + start.offset(X)
        return out


def continued_outputs(objective) -> tuple | None:
    """The raw outputs per-parameter stopping grows on after the joint stop: all but the
    dispersion (None: a family without a dispersion parameter, or with nothing else).
    Shared by the in-process fit and the Dask regressor."""
    column = objective.dispersion_column()
    if column is None:
        return None
    frozen = set(np.atleast_1d(column).tolist())
    kept = tuple(k for k in range(objective.n_outputs) if k not in frozen)
    return kept or None


class FitRuns:
    """The runs of a fit (a mixin of the estimator base; see the module docstring)."""

    def _fit_mode(self, family, X, y, sample_weight, eval_set, eval_weight, plan: FitPlan,
                  context, seed, location) -> Run:
        """The run of a fit by its ``plan`` (:mod:`distboost.estimators.policy`):
        cross-validated rounds and a refit, or one run on the training rows (early-stopped
        and calibrated on the validation rows).

        Under ``location_start="auto"`` below :data:`AUTO_COMPARE_ROWS` training rows the
        fit is run with and without the location start; the start is kept when its
        validation loss is lower by more than one standard error of the paired per-row
        differences (under cross-validation: a lower cross-validated loss).  On small data
        a point model can start the location worse than the constant, and the comparison
        is cheap there.  On near-deterministic data and on repeated records the
        location's fine leaves are tried the same way (:mod:`distboost.estimators.leaf_size`).
        """
        mode = plan.validation
        compare = plan.compare_location
        if mode == "cv":
            run = self._fit_cross_validated(family, X, y, sample_weight, context, seed,
                                            location)
            if compare and run.location is not None:
                plain = self._fit_cross_validated(family, X, y, sample_weight, context, seed)
                if np.nanmin(plain.cv_curve) <= np.nanmin(run.cv_curve):
                    run = plain
            return self._fine_leaves(run, family, X, y, sample_weight, context, seed,
                                            location if run.location is not None else None)
        rows = (X, y, sample_weight)  # all the rows, for a refit after the split
        X, y, sample_weight, val = self._validation_rows(
            family, X, y, sample_weight, eval_set, eval_weight, mode, context, seed)

        def fit(start, context):
            run = self._fit_rows(family, X, y, sample_weight, *val, context=context, seed=seed,
                                 n_estimators=1 if mode == "constant" else None,
                                 location=start)
            if mode == "constant":
                run.ensemble.best_iteration_ = 0
            if plan.calibrate and val[0] is not None:
                run.shift = self._calibrate(run, val, context)
            return run

        run = fit(location, context)
        if compare and run.location is not None and val[0] is not None:
            plain = fit(None, context)
            if not self._beats(run, plain, val, context):
                run = plain
        options = None if val[0] is None or mode == "constant" else fine_leaves_candidate(
            self, family, X, y, context["_tree_options_"], run.objective.n_outputs,
            lambda: (self._validation_raw(run, val, context), *val[1:]))
        if options is not None:
            fine = {**context, "_tree_options_": options[0]}
            other = fit(location if run.location is not None else None, fine)
            # On repeated rows the fine leaves are the favourite, kept unless the "auto"
            # leaves win by more than one standard error; elsewhere the reverse.
            if (not self._beats(run, other, val, fine) if options[1]
                    else self._beats(other, run, val, fine)):
                context["_tree_options_"] = fine["_tree_options_"]
                run = other
        if mode == "holdout_refit":
            run = self._refit_all_rows(run, family, *rows, len(y), context, seed, location)
        return run

    def _refit_all_rows(self, run: Run, family, X, y, sample_weight, n_fit: int,
                        context, seed, location) -> Run:
        """``run`` (fitted on ``n_fit`` of the rows, early-stopped and calibrated on the
        rest) refitted on all the rows: each output keeps its rounds times ``n / n_fit``
        (more rows bear more rounds before the trees fit noise), the location start its
        point model's rounds the same way, the tree options and the dispersion shift chosen
        on the held-out rows.  The held-out validation curve stays the fit's curve."""
        scale = len(y) / n_fit

        def more(rounds):
            return np.rint(np.asarray(rounds) * scale).astype(int)

        plan = None
        if run.location is not None:
            plan = dataclasses.replace(location, rounds=max(int(more(run.location.rounds)), 1),
                                       auto=False)
        ensemble = run.ensemble
        per_output = ensemble.best_iterations_ is not None
        best = int(more(ensemble.best_iteration_))
        # warn=False: the split's fit has said what the target's start values needed.
        final = self._fit_rows(family, X, y, sample_weight, context=context, seed=seed,
                               n_estimators=max(best, 1), location=plan, warn=False,
                               output_rounds=more(ensemble.best_iterations_)
                               if per_output else None, refit=True)
        if not per_output:
            final.ensemble.best_iteration_ = min(best, final.ensemble.n_iter_)
        if final.ensemble.stopped_reason == "n_estimators":  # ran the rounds it was given
            final.ensemble.stopped_reason = ensemble.stopped_reason
        final.shift = run.shift
        final.cv_curve = run.valid_curve
        final.held_out = (ensemble.n_iter_, ensemble.best_iteration_, ensemble.stopped_reason)
        return final

    def _beats(self, challenger: Run, incumbent: Run, val, context) -> bool:
        """Whether ``challenger``'s validation loss is lower than ``incumbent``'s by more
        than one standard error of the paired per-row differences (the one-standard-error
        rule, Hastie et al. 2009, sec. 7.10): on a few dozen validation rows a single row
        can decide a plain comparison."""
        diff = (self._validation_losses(challenger, val, context)
                - self._validation_losses(incumbent, val, context))
        w = np.ones(len(diff)) if val[2] is None else np.asarray(val[2], np.float64)
        return float(w @ diff / w.sum() + paired_standard_error(diff, w)) < 0.0

    def _fine_leaves(self, run: Run, family, X, y, sample_weight, context, seed,
                            location) -> Run:
        """A cross-validated ``run`` or, on near-deterministic data or repeated feature
        rows, the run with the location's fine leaves when its cross-validated loss is lower
        (no higher on repeated rows; :mod:`distboost.estimators.leaf_size`; ``context``'s
        tree options follow)."""
        options = None if run.oof is None else fine_leaves_candidate(
            self, family, X, y, context["_tree_options_"], run.objective.n_outputs,
            lambda: (run.oof, y, sample_weight))
        if options is None:
            return run
        fine = {**context, "_tree_options_": options[0]}
        other = self._fit_cross_validated(family, X, y, sample_weight, fine, seed, location,
                                          penalty=run.penalty)
        fine_loss, auto_loss = np.nanmin(other.cv_curve), np.nanmin(run.cv_curve)
        if fine_loss <= auto_loss if options[1] else fine_loss < auto_loss:
            context["_tree_options_"] = fine["_tree_options_"]
            return other
        return run

    def _validation_raw(self, run: Run, val, context) -> np.ndarray:
        """Raw scores of a finished run (kept rounds, starts) on the validation rows, before
        the dispersion shift and the floor, shape (n_val, K)."""
        X_val = val[0]
        if run.val_raw is None or run.val_raw[0] != id(X_val):
            kept = run.engine_val_raw
            if (kept is not None and kept[0] == id(X_val)
                    and kept[1] == tuple(run.ensemble.rounds())):
                raw = kept[2] + run.offset(X_val)  # the engine's: no second prediction
            else:
                raw = run.ensemble.predict_raw(self._tree_X(X_val, context))
                raw = raw + run.offset(X_val)
            run.val_raw = (id(X_val), raw)
        return run.val_raw[1].copy()

    def _validation_losses(self, run: Run, val, context) -> np.ndarray:
        """Per-row loss of a finished run (kept rounds, starts, shift, floor) on the
        validation rows, shape (n_val,)."""
        X_val, y_val, _ = val
        raw = self._validation_raw(run, val, context)
        raw = np.maximum(apply_shift(raw, run.objective.dispersion_column(), run.shift),
                         run.objective.raw_floor)
        with torch.no_grad():
            return run.objective.loss(torch.as_tensor(raw, dtype=torch.float64),
                                      run.objective.data(X_val, y_val)).numpy()

    def _validation_rows(self, family, X, y, sample_weight, eval_set, eval_weight, mode,
                         context, seed):
        """The training rows and ``(X_val, y_val, w_val)`` (all None without validation)."""
        if eval_set is not None:
            X_val = check_X(self, eval_set[0], reset=False)
            y_val = self._check_target(family, eval_set[1], "y of eval_set", context)
            n_val = check_consistent_rows(X_val=X_val, y_val=y_val)
            w_val = check_sample_weight(eval_weight, n_val, "eval_sample_weight")
            return X, y, sample_weight, (X_val, y_val, w_val)
        if mode not in ("holdout", "holdout_refit"):
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
                  penalty: float | None = None, warn: bool = True, where: str = "",
                  output_rounds=None, location: LocationPlan | None = None,
                  refit: bool = False) -> Run:
        """One boosting run on the given rows: objective, start, engine.

        Early stopping (each round judged after its own best dispersion shift when
        ``calibrate``) when validation rows are given; ``n_estimators`` overrides the cap
        (the refit after cross-validation; ``output_rounds``: each output's rounds there,
        under per-parameter stopping); the round cap otherwise and the "auto" tree size
        are the fit's plan's (``refit``: its refit's tree size); ``penalty`` starts from the
        penalised linear model of :mod:`distboost.estimators.linear_start`; ``location`` (a plan of
        :func:`~distboost.estimators.location_start.location_plan`) from a point model
        of the location.  ``valid_curve`` holds the
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
                                                         slope_mask(family),
                                                         objective.derivatives())
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
        start = None
        if location is not None:
            start, init_raw = start_location(
                location, objective, self._tree_X(X, context), y, sample_weight,
                (None if X_val is None else self._tree_X(X_val, context), y_val, w_val),
                data, data_val, seed, self.n_jobs)
        fit_plan = context["fit_plan_"]  # the fit's plan (estimators.policy)
        step = fit_plan.step
        callables = objective.engine_callables(step, seed)
        valid_score = start_score = None
        if X_val is not None:
            column = objective.dispersion_column()
            if fit_plan.calibrate and column is not None:
                search = DispersionSearch(objective.loss, data_val, w_val, column,
                                          profile=objective.dispersion_profile())
                last = {"shift": 0.0}

                def valid_score(raw, data, weight):
                    last["shift"], value = search(raw, center=last["shift"])
                    return value

                start_score = valid_score
            else:
                start_score = functools.partial(_mean_loss, objective.loss)
            start_score = start_score(np.tile(init_raw, (len(y_val), 1)), data_val, w_val)
        overrides = {"n_estimators": fit_plan.round_cap if n_estimators is None else n_estimators}
        overrides["n_iter_no_change"] = None if X_val is None else self.n_iter_no_change
        overrides["continue_outputs"] = (continued_outputs(objective)
                                         if fit_plan.per_parameter_stopping else None)
        if output_rounds is not None:
            overrides.update(output_rounds=tuple(int(r) for r in output_rounds),
                             n_estimators=max(int(np.max(output_rounds)), 1))
        params = self._engine_params(
            step, len(y), seed, tree_options=context.get("_tree_options_"),
            auto_sizes=fit_plan.refit_tree_size if refit else fit_plan.tree_size, **overrides)
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
        curve = engine_raw = None
        if X_val is not None:
            curve = np.array([start_score, *ensemble.evals_result_["valid"][self._metric]])
            if ensemble.valid_raw_ is not None:
                engine_raw = (id(X_val), *ensemble.valid_raw_)
        ensemble.valid_raw_ = None  # the run holds it (fold models are kept as members)
        return Run(ensemble, objective, step, curve, linear=linear,
                   sizes=(params.num_leaves, params.min_child_samples), location=start,
                   cap=params.n_estimators, engine_val_raw=engine_raw,
                   location_size=location_tree_size(family, params, objective.n_outputs))

    def _calibrate(self, run: Run, val, context) -> float:
        """The dispersion shift minimising the validation loss at the kept round."""
        X_val, y_val, w_val = val
        column = run.objective.dispersion_column()
        if column is None:
            return 0.0
        raw = self._validation_raw(run, val, context)
        data = run.objective.data(X_val, y_val)
        return best_dispersion_shift(run.objective.loss, raw, data, w_val, column,
                                     profile=run.objective.dispersion_profile())[0]

    def _fit_cross_validated(self, family, X, y, sample_weight, context, seed,
                             location: LocationPlan | None = None, penalty=_CHOOSE) -> Run:
        """Rounds chosen by K-fold cross-validation, then a refit on all rows.

        First the start: the penalised linear model when ``linear_start`` and
        cross-validation prefer it to the constant (``choose_linear_start``).  Each fold is a
        full fit from that start; the kept round is the earliest whose folds' weighted mean
        validation loss is within one standard error of the best (``best_cv_round``; round
        0 keeps the start).  The dispersion shift is fitted on the out-of-fold predictions
        at that round, correcting the optimism of trees judged on their own rows.  A
        location start (``location``) asked for explicitly takes the place of the linear
        start; under "auto" it applies only when the linear start is not chosen.  Its point
        model's rounds are chosen on the folds' mean validation curve.  ``penalty``, when
        given, is a choice of start already made on the same rows and folds (the
        fine-leaved run of :meth:`_fine_leaves`; None: the constant).
        """
        n = len(y)
        w = np.ones(n) if sample_weight is None else sample_weight
        folds = cv_folds(n, seed, class_strata(family, y, 1.0 / CV_FOLDS))
        choose = penalty is _CHOOSE
        penalty = None if choose else penalty
        # A linear slope could break a monotone constraint or use a parameter's excluded
        # columns: the "auto" start is the constant then (True is refused in fit).
        if (choose and self.linear_start and not context["_tree_options_"].restricted
                and (location is None or location.auto)):
            def make_loss(y_rows):
                objective = self._make_objective(family, None, y_rows, None, warn=False,
                                                 context=context)
                return objective.loss, objective.init_raw, objective.derivatives()

            penalty = choose_linear_start(make_loss, X, y, sample_weight, folds,
                                          LinearStart.design_of, slope_mask(family))
        if penalty is not None:
            location = None  # "auto": the linear start chosen first stays
        elif location is not None and location.rounds is None:
            location = cv_location_plan(
                location, lambda rows: self._tree_X(take_rows(X, rows), context), y,
                sample_weight, folds, seed, self.n_jobs)

        def fit_fold(i, train, valid):
            w_rows = ((None, None) if sample_weight is None
                      else (sample_weight[train], sample_weight[valid]))
            return self._fit_rows(
                family, take_rows(X, train), y[train], w_rows[0], take_rows(X, valid),
                y[valid], w_rows[1], context=context, seed=seed, penalty=penalty, warn=False,
                where=f", cross-validation fold {i + 1}/{len(folds)}", location=location)

        weights = [float(w[valid].sum()) for _, valid in folds]
        runs = [fit_fold(i, train, valid) for i, (train, valid) in enumerate(folds)]
        # Under per-parameter stopping the joint round is chosen from the folds' joint
        # (phase-1) curves, and the continued outputs add their mean gain beyond it.
        joint = [r.ensemble.joint_rounds_ for r in runs]
        best = best_cv_round([r.valid_curve if j is None else r.valid_curve[:j + 1]
                              for r, j in zip(runs, joint, strict=True)], weights)
        output_rounds = cv_output_rounds([r.ensemble for r in runs], weights, best)
        final = self._fit_rows(family, X, y, sample_weight, context=context, seed=seed,
                               n_estimators=max(best, 1), penalty=penalty,
                               output_rounds=output_rounds, location=location, refit=True)
        final.penalty = penalty
        if output_rounds is None:
            final.ensemble.best_iteration_ = min(best, final.ensemble.n_iter_)
        final.cv_curve = np.average(padded_curves([r.valid_curve for r in runs]), axis=0,
                                    weights=weights)
        for run in runs:  # the members: each fold model at the refit's rounds
            keep_rounds(run.ensemble, best, per_output=output_rounds is not None)
        # Out-of-fold predictions at the refit's rounds (kept above).  Before, under
        # per-parameter stopping, each fold predicted at its own best rounds: a fold whose
        # location ran to 40 rounds on 48 rows inflated the dispersion shift (wine, 60
        # rows: scale x 2.6, test NLL 0.49 above the constant's).
        column = final.objective.dispersion_column()
        shift = context["fit_plan_"].calibrate and column is not None
        if not shift and location_column(self, family, final.objective.n_outputs) is None:
            final.members = runs
            return final
        oof = np.empty((n, final.objective.n_outputs))
        for run, (_, valid) in zip(runs, folds, strict=True):
            X_valid = take_rows(X, valid)
            raw = run.ensemble.predict_raw(
                self._tree_X(X_valid, context),
                num_iteration=best if output_rounds is None else None)
            raw = raw + run.offset(X_valid)
            oof[valid] = np.maximum(raw, run.objective.raw_floor)
        final.oof = oof
        if shift:
            data = {"y": carry_terms(torch.as_tensor(np.require(y, requirements="W")))}
            final.shift, _ = best_dispersion_shift(final.objective.loss, oof, data,
                                                   sample_weight, column,
                                                   profile=final.objective.dispersion_profile())
        final.members = runs
        return final


def _mean_loss(loss, raw, data, weight) -> float:
    """Weighted mean of ``loss`` at ``raw`` (ndarray of shape (n, K))."""
    with torch.no_grad():
        per_row = loss(torch.as_tensor(raw, dtype=torch.float64), data).numpy()
    return float(np.average(per_row, weights=weight))


def keep_rounds(ensemble: FittedEnsemble, best: int, per_output: bool) -> None:
    """Keep a fold model's rounds as the refit after cross-validation keeps its own: the
    chosen joint round ``best`` for every output, or, under per-parameter stopping
    (``per_output``), ``best`` plus the rounds each output of this fold gained beyond the
    fold's joint best round (:func:`~distboost.estimators.rounds.cv_output_rounds` for one
    fold); capped at the rounds the fold ran."""
    kept = ensemble.best_iterations_
    if per_output and kept is not None:
        ensemble.set_rounds(np.minimum(best + kept - kept.min(), ensemble.n_iter_))
    elif kept is not None:
        ensemble.set_rounds(np.minimum(kept, best))
    else:
        ensemble.best_iteration_ = min(int(best), ensemble.n_iter_)


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
