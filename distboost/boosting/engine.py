"""The boosting engine: grows ``K`` tree ensembles against any per-row torch loss.

``fit_boosting(loss, init_raw, X, data, params=...)`` runs the rounds (derivatives by autograd
or a closed form, a step rule, one tree per parameter, shrinkage, early stopping on the
validation loss) and returns a :class:`FittedEnsemble` whose ``predict_raw(X)`` gives the raw
scores ``(n, K)``.  The engine knows nothing about distributions: families,
varying-coefficient models or any other torch objective plug in through ``loss`` (and
``fisher`` for Fisher-based steps, ``derivatives`` for a closed form).

Between rounds an optional ``callback(round, raw)`` sees the training raw scores after the
round's trees; it may update parameters of the user's own (a torch optimiser step on a
network whose output the loss reads from ``data``) and stop training by returning True.

Tree growing is delegated to a registered :class:`~.backend.TreeBackend`: LightGBM histogram
trees (one booster with ``num_class=K`` and a callable objective, so all ``K`` trees of a round
share the binned data), or any scikit-learn regressor.  Nothing in a round is global over the
rows but the optional ``clip_gradients`` (see :mod:`.derivatives`).
"""

from __future__ import annotations

import functools
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from ..families.numerics.special import terms_like
from .backend import backend_name, get_backend
from .derivatives import STEP_RULES, NonFiniteLoss, StepComputer, curvature_scale
from .ensemble import FittedEnsemble
from .output_stopping import FreezingBackend, ParameterStopper

__all__ = ["EngineParams", "fit_boosting", "FittedEnsemble", "STEP_RULES"]


@dataclass
class EngineParams:
    """Options of the boosting engine (see :class:`~distboost.DistributionalRegressor`).

    Every field but ``clip_gradients``, ``per_parameter``, ``continue_outputs`` and
    ``output_rounds`` (off when None) is required:
    the defaults live once, in the estimators' option table
    (:mod:`distboost.estimators.options`, whose ``engine_params`` builds one at the
    estimators' defaults).

    ``n_iter_no_change=None`` records the validation loss without stopping (every round is
    kept; the estimators' name, formerly ``early_stopping_rounds``).  ``clip_gradients=(lo,
    hi)`` clips each column of the loss gradient to its ``lo`` and ``hi`` quantiles over the
    rows every round (see :mod:`distboost.boosting.derivatives`; in-process only); None
    (default) leaves gradients as they are.  ``backend`` names a registered tree backend
    (:mod:`distboost.boosting.backend`); None: "sklearn" with a ``base_learner``, else
    "lightgbm".

    ``monotone_constraints`` (-1, 0 or 1 per column of X), ``interaction_constraints``
    (lists of column positions), ``min_split_gain``, ``extra_trees``, ``path_smooth`` and
    ``max_cat_to_onehot`` are LightGBM's tree options, applied to every output's trees.
    ``per_parameter``: None (one backend grows all ``K`` outputs), or one
    ``(EngineParams, columns)`` pair per output: that output's trees are grown by their own
    single-output backend with those options, on the columns of X at the positions
    ``columns`` (None: all), in lockstep with the others
    (:mod:`distboost.boosting.per_parameter`); its ``learning_rate`` relative to this
    one's multiplies its step.  ``continue_outputs``: the outputs per-parameter stopping
    grows on alone after the joint early stop; ``output_rounds``: each output's rounds given
    (its later trees are zero), both :mod:`distboost.boosting.output_stopping`.
    ``device``: where the trees grow and the derivatives run, "cpu" or a CUDA device
    ("cuda", "cuda:1"; the XGBoost backend only, :mod:`distboost.boosting.xgboost_backend`).
    """

    n_estimators: int
    learning_rate: float
    step: str
    num_leaves: int
    max_depth: int
    min_child_samples: int
    subsample: float
    colsample: float
    reg_lambda: float
    max_bin: int
    n_iter_no_change: int | None
    random_state: int | None
    n_jobs: int | None
    verbose: int
    base_learner: object | None
    backend: str | None
    monotone_constraints: tuple | None
    interaction_constraints: tuple | None
    min_split_gain: float
    extra_trees: bool
    path_smooth: float
    max_cat_to_onehot: int
    device: str
    clip_gradients: tuple[float, float] | None = None
    per_parameter: tuple | None = None
    continue_outputs: tuple | None = None
    output_rounds: tuple | None = None


class _EarlyStopper:
    def __init__(self, patience: int | None):
        self.patience = math.inf if patience is None else patience
        self.best = math.inf
        self.best_round = 0

    def update(self, value: float, round_: int) -> bool:
        """Record the validation loss of a round (1-based); True when training should stop."""
        if not math.isfinite(self.best) or value < self.best - 1e-12 * abs(self.best):
            self.best, self.best_round = value, round_
        return round_ - self.best_round >= self.patience


def _loss_value(raw: np.ndarray, data, weight, loss) -> float:
    with torch.no_grad():
        per_row = loss(torch.from_numpy(np.ascontiguousarray(raw, np.float64)), data).numpy()
    if weight is None:
        return float(per_row.mean())
    return float((per_row * weight).sum() / weight.sum())


#: A round is accepted when the training loss after it is at most the loss before it plus
#: this relative tolerance (float64 rounding of a sum of ``n`` per-row losses, with room).
DESCENT_RTOL = 1e-9
#: Halvings of a round's step tried before training stops with "no_descent" (a step of
#: ``learning_rate / 1024`` at the last try).
MAX_HALVINGS = 10


#: With the natural step, a rise of the training loss that shrinks by less than this
#: factor when the step is halved marks trees pointing uphill (a first-order rise halves
#: with the step; an overshooting descent direction's rise shrinks by more than 4).
UPHILL_RATIO = 0.3
#: After this many consecutive natural rounds regrown from the diagonal Fisher step, every
#: later round is grown from the diagonal step directly (the natural trees keep pointing
#: uphill once the fit nears its optimum; trying them first cost 3 trees a round).
STICKY_FALLBACKS = 3
#: While the diagonal step grows every round, the natural step is tried again every this
#: many rounds (and kept if its trees descend).
STICKY_RETRY = 10


class _NoDescent(Exception):
    """No step length along a round's trees lowers the training loss."""

    def __init__(self, message: str, finite: bool, uphill: bool = False):
        super().__init__(message)
        self.finite = finite
        self.uphill = uphill


def fit_boosting(
    loss: Callable,
    init_raw,
    X,
    data: dict,
    *,
    params: EngineParams,
    sample_weight=None,
    X_val=None,
    data_val: dict | None = None,
    sample_weight_val=None,
    fisher: Callable | None = None,
    callback: Callable | None = None,
    valid_score: Callable | None = None,
    warn_context: str = "",
    derivatives: Callable | None = None,
    metric_name: str = "loss",
) -> FittedEnsemble:
    """Grow one ensemble per raw output against ``loss``, never increasing the training loss.

    Every round is a backtracking line search along its trees (Friedman 2001, Algorithm 1,
    line 5; NGBoost, Duan et al. 2020, Alg. 1, whose implementation halves the step until
    the loss falls): the round is accepted only if the (weighted) mean training loss after
    it is finite, its derivatives are finite, and it is not above the loss before the round
    (relative tolerance :data:`DESCENT_RTOL`).  Otherwise the round's step is halved (1/2,
    1/4, ... of ``learning_rate``: LightGBM regrows the round's trees from the same
    gradients at the smaller rate, a scikit-learn base learner's trees are kept and
    rescaled) up to :data:`MAX_HALVINGS` times; if no step length lowers the loss, the
    round is removed and training stops (``stopped_reason`` "no_descent", a
    RuntimeWarning).

    The natural step gets one more try: its trees average a preconditioned gradient and
    can point uphill, where no step length helps.  Such a round (its loss's rise only
    halves with the step, :data:`UPHILL_RATIO`) is regrown from the diagonal Fisher step, a
    descent direction to first order, before training stops (``fallback_rounds_``).  After
    :data:`STICKY_FALLBACKS` such rounds in a row, the later rounds are grown from the
    diagonal Fisher step directly (listed in ``fallback_rounds_`` too), but for one natural
    try every :data:`STICKY_RETRY` rounds, kept if its full step descends (no halving: a
    retry that overshoots falls back at once) and until one of its rounds falls back again.

    The criterion is the full training loss, also under ``subsample`` < 1 (a tree grown on
    a bag is judged on every row).  With ``clip_gradients`` the trees deliberately do not
    follow the loss's gradient, so only a non-finite round is backed off.  On the normal
    path the check costs nothing: the loss after round ``t`` is the one the step rule
    computes at the start of round ``t + 1`` (the training scores LightGBM keeps); only the
    last round, and every round when a ``callback`` is given, costs one more forward pass
    of the loss.

    Parameters
    ----------
    loss : callable
        ``loss(raw: Tensor[n, K], data) -> Tensor[n]``, differentiable by torch.
    init_raw : array_like of shape (K,)
        Starting raw scores (e.g. the marginal MLE on the link scale).
    X : ndarray or DataFrame of shape (n, p)
    data : dict of str to Tensor
        Row-aligned tensors the loss needs (``y`` and anything else).
    params : EngineParams
    sample_weight : ndarray of shape (n,), optional
    X_val, data_val, sample_weight_val : optional
        Validation rows for early stopping.
    fisher : callable, optional
        ``fisher(raw, data) -> Tensor[n, K, K]``, for ``step`` "fisher" and "natural".
    callback : callable, optional
        ``callback(round, raw) -> bool | None``, called after each round's trees are added
        (and accepted by the descent check) with the 1-based round number and the training
        raw scores, ndarray of shape (n, K) (``init_raw`` included; a copy, equal to
        ``predict_raw(X, num_iteration=round)``).  It may update torch parameters of its own
        and mutate the tensors in ``data`` and ``data_val`` in place: the next round's
        derivatives and this round's validation loss (computed after the callback) see the
        change.  Returning True stops training (``stopped_reason`` "callback").  The descent
        check of a round compares the losses before and after its trees under the same
        ``data`` (before the callback changes it): a callback changes the objective, so the
        training history across rounds is then non-increasing only between callbacks.
    valid_score : callable, optional
        ``valid_score(raw, data_val, sample_weight_val) -> float``: the number early stopping
        minimises, from the validation raw scores (ndarray of shape (n_val, K)).  Default:
        the weighted mean of ``loss``.
    warn_context : str, optional
        Prefix of every warning, naming the caller (e.g. "DistributionalRegressor(family=
        'studentt')"): the engine knows no estimator or family.
    derivatives : callable, optional
        Closed-form ``derivatives(raw: Tensor[n, K] float64, data) -> (per_row_loss
        Tensor[n], grad Tensor[n, K], fisher Tensor[n, K] or Tensor[n, K, K])`` replacing
        autograd and ``fisher`` for the gradient, fisher and natural rules (newton still
        differentiates ``loss``: it needs the Hessian).  ``loss`` remains the loss of record
        (line search, validation); the two must agree.
    metric_name : str, default="loss"
        The key of the loss in ``evals_result_`` (the estimators pass "nll").

    Returns
    -------
    FittedEnsemble
        ``n_backoffs_`` counts the halvings, ``step_scales_`` holds each kept round's step
        relative to ``learning_rate`` (1, 1/2, 1/4, ...).
    """
    prefix = f"{warn_context}: " if warn_context else ""
    if valid_score is None:
        valid_score = functools.partial(_loss_value, loss=loss)
    init_raw = np.asarray(init_raw, dtype=np.float64).reshape(-1)
    device = params.device
    data = on_device(data, device)
    step = StepComputer(loss, data, params.step, fisher, sample_weight,
                        clip_gradients=params.clip_gradients, derivatives=derivatives,
                        device=device)
    has_val = X_val is not None
    name = "per_parameter" if params.per_parameter is not None else backend_name(params)
    backend = get_backend(name)(params, init_raw, X, sample_weight, X_val)
    stopper = _EarlyStopper(params.n_iter_no_change)
    outputs = None  # per-parameter stopping (:mod:`.output_stopping`)
    if params.continue_outputs and has_val and params.n_iter_no_change is not None:
        outputs = ParameterStopper(init_raw.size, params.n_iter_no_change,
                                   params.continue_outputs)
        backend = FreezingBackend(backend, outputs.frozen)
    fixed = None  # each output's rounds given (a refit after per-parameter stopping)
    if params.output_rounds is not None:
        fixed = np.asarray(params.output_rounds, dtype=int)
        backend = FreezingBackend(backend, fixed < 1)
    train_curve: list[float] = []
    valid_curve: list[float] = []
    # the validation raw scores of the best round so far (as judged), where the best round
    # is the one kept (early stopping, no rounds given)
    best_val = None
    track = has_val and fixed is None and params.n_iter_no_change is not None
    evals: dict[str, dict[str, list]] = {"train": {metric_name: train_curve}}
    if has_val:
        evals["valid"] = {metric_name: valid_curve}
    lr = params.learning_rate
    # Clipped gradients deliberately do not follow the loss (a few rows' pull is cut off):
    # their rounds may raise the loss, and only a non-finite round is backed off.
    descent = params.clip_gradients is None
    scales: list[float] = []
    fallback_rounds: list[int] = []  # natural rounds regrown from the diagonal Fisher step
    fisher_step = None
    active = step  # the diagonal Fisher step once the natural one keeps falling back
    since = 0  # the round from which the diagonal step grows every round
    t0 = time.perf_counter()

    # (value, pair, error) at the start values.
    value, pair, error = _evaluate(step, backend, True)
    stopped, rounds = "n_estimators", 0
    if pair is None:
        warnings.warn(f"{prefix}Boosting stopped at round 1: {error}; keeping the start "
                      "values (0 rounds).", RuntimeWarning, stacklevel=2)
        stopped = "non_finite_loss"
    it = 0
    while stopped == "n_estimators" and it < params.n_estimators:
        it += 1
        before = value
        train_curve.append(before)  # loss before this round's trees
        retrying = False
        if active is not step and (it - since) % STICKY_RETRY == 0:
            retry = _evaluate(step, backend, True)[1]  # the natural step, tried again
            if retry is not None:
                active, pair, retrying = step, retry, True
        active.pin(pair)  # the line search's evaluations must not overwrite it
        if fixed is not None:
            backend.frozen[:] = it > fixed
        backend.grow(pair[0], pair[1], lr)
        more = it < params.n_estimators
        with_derivatives = more and callback is None
        # While an output is frozen the others grow without the descent check (only a
        # non-finite round is backed off): the frozen in-sample dispersion, past its best
        # round, makes the training loss a poor judge of the others' trees.
        frozen = isinstance(backend, FreezingBackend) and bool(backend.frozen.any())
        search = functools.partial(_line_search, backend, active, lr, before,
                                   with_derivatives, descent and not frozen)
        natural = params.step == "natural" and active is step
        try:
            # A retried natural step is kept only if its full step descends: halving it
            # (up to MAX_HALVINGS regrowths) would cost more than the diagonal step it tests.
            value, pair, error, scale = search(uphill_exit=natural,
                                               max_halvings=0 if retrying else MAX_HALVINGS)
            if active is not step:
                fallback_rounds.append(it)
        except _NoDescent as err:
            failure, grown = err, True
            if natural:
                # The natural step's trees average a preconditioned gradient: their
                # direction can point uphill (halving cannot help).  Regrow the round from
                # the diagonal Fisher step, whose positive curvature makes every leaf a
                # descent direction to first order (-sum(G)^2 / sum(H) per leaf).
                backend.rollback()
                grown = False
                if fisher_step is None:
                    fisher_step = _fallback_step(loss, data, init_raw,
                                                 backend.train_scores().shape[0], fisher,
                                                 derivatives, sample_weight,
                                                 params.clip_gradients, device)
                _, fallback, _ = _evaluate(fisher_step, backend, True)
                if fallback is not None:
                    fisher_step.pin(fallback)
                    backend.grow(fallback[0], fallback[1], lr)
                    grown = True
                    try:
                        value, pair, error, scale = search(uphill_exit=False)
                        failure = None
                        fallback_rounds.append(it)
                        if since and it - since >= STICKY_RETRY or fallback_rounds[
                                -STICKY_FALLBACKS:] == list(range(it - STICKY_FALLBACKS + 1,
                                                                  it + 1)):
                            # The third fallback in a row, or any after the switch (the
                            # natural step was tried again): from now on the diagonal step
                            # grows every round.
                            diagonal = (None if pair is None
                                        else _evaluate(fisher_step, backend, True)[1])
                            if pair is None or diagonal is not None:
                                active, pair, since = fisher_step, diagonal, it
                    except _NoDescent as err2:
                        failure = err2
            if failure is not None:
                if grown:
                    backend.rollback()
                train_curve.pop()
                stopped = "no_descent" if failure.finite else "non_finite_loss"
                warnings.warn(
                    f"{prefix}Boosting stopped at round {it}: {failure}; keeping the "
                    f"{it - 1} rounds before it.", RuntimeWarning, stacklevel=2,
                )
                break
        rounds = it
        scales.append(scale)
        after = value
        halt = callback is not None and bool(callback(it, _host(backend.train_scores())))
        if callback is not None and more and not halt:
            value, pair, error = _evaluate(active, backend, True)
            if pair is None:
                warnings.warn(
                    f"{prefix}Boosting stopped at round {it + 1}: {error} after the "
                    f"callback of round {it}; keeping the {it} rounds before it.",
                    RuntimeWarning, stacklevel=2,
                )
                stopped = "non_finite_loss"
        if has_val:
            raw_val = backend.valid_raw()
            if outputs is not None:
                raw_val = outputs.scored(raw_val)
            val = valid_score(raw_val, data_val, sample_weight_val)
            valid_curve.append(val)
            if not np.isfinite(val):
                warnings.warn(f"{prefix}Validation loss is {val} at round {it}; stopping.",
                              RuntimeWarning, stacklevel=2)
                stopped = "non_finite_loss"
            elif outputs is not None:
                stopper.update(val, it)
                if outputs.update(raw_val, val, it) and stopped == "n_estimators":
                    stopped = "early_stopping"
                if track and outputs.best_round == it:
                    best_val = np.array(raw_val, dtype=np.float64, copy=True)
            else:
                if stopper.update(val, it) and stopped == "n_estimators":
                    stopped = "early_stopping"
                if track and stopper.best_round == it:
                    best_val = np.array(raw_val, dtype=np.float64, copy=True)
        if halt and stopped == "n_estimators":
            stopped = "callback"
        if params.verbose and (it % params.verbose == 0 or it == 1):
            msg = f"[{it:>5}] train loss {after:.5f}"
            if scale < 1.0:
                msg += f" (step x {scale:g})"
            if has_val:
                msg += f"  valid loss {valid_curve[-1]:.5f}"
            print(msg + f"  ({time.perf_counter() - t0:.1f} s)", flush=True)
    if has_val and stopper.best_round > 0 and params.n_iter_no_change is not None:
        best = min(stopper.best_round, rounds)
    else:
        best = rounds
    ensemble = FittedEnsemble(backend.finish(), init_raw, best, rounds, evals, stopped, scales,
                              fallback_rounds)
    if fixed is not None:
        ensemble.set_rounds(np.minimum(fixed, rounds))
    elif outputs is not None and best > 0:
        ensemble.set_rounds(np.minimum(outputs.best_rounds, rounds))
        ensemble.joint_rounds_ = outputs.joint_rounds or rounds
    if best_val is not None:
        # the kept rounds' validation raw scores (their trees' sum, no offset), as the
        # stopping rule judged them: the caller need not predict them again
        ensemble.valid_raw_ = (tuple(ensemble.rounds()), best_val)
    return ensemble


def on_device(data: dict, device) -> dict:
    """``data`` with its tensors moved to ``device`` (the same dict on the CPU; a target
    that carries its terms carries them there too, :func:`~distboost.families.numerics.
    special.carry_terms`)."""
    if str(device) == "cpu":
        return data
    return {key: terms_like(value.to(device), value) if isinstance(value, torch.Tensor)
            else value for key, value in data.items()}


def _host(raw) -> np.ndarray:
    """A host copy of a backend's raw scores (ndarray, or a tensor on a device)."""
    if isinstance(raw, torch.Tensor):
        return raw.detach().cpu().numpy().astype(np.float64)
    return raw.copy()


def _fallback_step(loss, data, init_raw, n, fisher, derivatives, sample_weight,
                   clip, device="cpu") -> StepComputer:
    """The diagonal Fisher step that regrows a natural round pointing uphill, with its
    curvature scale taken at the start values (as every step computer's)."""
    w = None
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        w = w / w.mean()
    start = torch.as_tensor(np.tile(init_raw, (n, 1)), device=device)
    scale = curvature_scale(loss, start, data, "fisher", fisher=fisher,
                            sample_weight=w, derivatives=derivatives)
    return StepComputer(loss, data, "fisher", fisher, sample_weight, clip_gradients=clip,
                        curvature_scale=scale, derivatives=derivatives, device=device)


def _line_search(backend, step, lr, before, with_derivatives, descent, uphill_exit,
                 max_halvings=MAX_HALVINGS):
    """Halve the step of the round just grown until the training loss is accepted.

    Returns ``(value, pair, error, scale)`` at the accepted step.  Raises
    :class:`_NoDescent` when no step down to ``lr / 2**max_halvings`` is accepted or, with
    ``uphill_exit``, as soon as the loss's rise shrinks only linearly with the step (ratio
    above :data:`UPHILL_RATIO` between consecutive halvings): the trees point uphill, so
    shorter steps of the same trees cannot descend.
    """
    value, pair, error = _evaluate(step, backend, with_derivatives)
    scale, last_rise = 1.0, None
    while not _accepted(value, pair, with_derivatives, before, descent):
        rise = value - before if np.isfinite(value) else None
        if (uphill_exit and rise is not None and last_rise is not None and rise > 0
                and rise > UPHILL_RATIO * last_rise):
            raise _NoDescent(f"the round's trees point uphill (the training loss rises from "
                             f"{before:.10g} to {value:.10g} at step x {scale:g}, and "
                             "proportionally less at shorter steps)", True, uphill=True)
        if scale <= 0.5 ** max_halvings:
            raise _NoDescent(f"{_failure(value, error, before)} at every step length down to "
                             f"learning_rate / {2 ** max_halvings}", bool(np.isfinite(value)))
        last_rise = rise
        scale *= 0.5
        backend.retry(lr * scale)
        value, pair, error = _evaluate(step, backend, with_derivatives)
    return value, pair, error, scale


def _evaluate(step: StepComputer, backend, with_derivatives: bool):
    """Training loss at the backend's current scores, ``(value, pair, error)``: ``pair`` is
    the step rule's ``(grad, hess)`` when asked for and finite, else None with ``error``
    saying why."""
    raw = backend.train_scores()
    if not with_derivatives:
        return step.loss_value(raw), None, ""
    dtype, order = backend.layout
    try:
        pair = step(raw, dtype=dtype, order=order)
    except NonFiniteLoss as err:
        return step.last_loss, None, str(err)
    return step.last_loss, pair, ""


def _accepted(value: float, pair, with_derivatives: bool, before: float,
              descent: bool = True) -> bool:
    """The test of a round: finite loss (and derivatives when asked) not above the loss
    before it (the last condition dropped when ``descent`` is False)."""
    if not np.isfinite(value) or (with_derivatives and pair is None):
        return False
    return not descent or value <= before + DESCENT_RTOL * abs(before)


def _failure(value: float, error: str, before: float) -> str:
    """Why the last try of a round failed, for the warning."""
    if not np.isfinite(value):
        return f"the training loss is {value}"
    if value > before + DESCENT_RTOL * abs(before):
        return f"the training loss rises from {before:.10g} to {value:.10g}"
    return f"the training loss falls but its {error}"
