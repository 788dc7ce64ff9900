"""Per-parameter early stopping: each raw output keeps its own round (issue 31).

One stopping round serves every output of a plain run: the run stops when the validation
loss of all outputs together has not improved for ``n_iter_no_change`` rounds.  A
distribution's parameters need different numbers of rounds: on near-deterministic data a
Normal's scale overfits (the in-sample residuals shrink) long before its location stops
improving, so the location is stopped too early and the mean is less accurate than a plain
GBM's.

:class:`ParameterStopper` runs two phases.  Phase 1 is the plain rule: every output grows
until the validation loss has not improved for ``patience`` rounds; its best round ``b`` is
kept for every output and the validation raw scores at ``b`` are remembered.  Phase 2 freezes
every output but ``continue_outputs`` (the parameters other than the dispersion: a Normal's
location) and grows those alone; a phase-2 round is judged by the validation loss of the
continued outputs' current scores beside the frozen outputs' scores at ``b`` (the scores that
will be predicted, so the recorded validation curve is the predicted model's); the continued
outputs keep their last round that beat the best so far, and training stops after
``max(patience, b)`` rounds without one (:attr:`ParameterStopper.solo_patience`).  A frozen
output grows zero trees (its gradients are set to zero: a single leaf of value zero), so
:func:`predict_per_output` reads each output at its own round.

Measured on IBUG's folds (``benchmarks/uci.py --protocol ibug``, docs/benchmarks.md) against
the plain rule; the other rule tried, freezing each output once its own move stopped helping
(all outputs judged every round), scored worse CRPS on concrete than one shared round.

Phase 2's patience: a location grown alone beside a fixed spread improves slowly over a long,
flat validation curve, and phase 1's ``patience`` (one unit of shrinkage at the defaults)
stopped it while it was still improving.  Phase 2 waits as many rounds as phase 1 took to
reach its best round ``b`` (at least ``patience``): the wait scales with the learning rate
and the data like ``b`` does, and phase 2 costs at most about as many single-output rounds as
phase 1 ran (plus the rounds the location keeps).  Measured in docs/engine.md
("Per-parameter stopping").
"""

from __future__ import annotations

import numpy as np

__all__ = ["ParameterStopper", "FreezingBackend", "predict_per_output", "per_output",
           "SOLO_PATIENCE_SHARE"]

#: Phase 2 waits ``max(patience, int(SOLO_PATIENCE_SHARE * b))`` rounds: all of phase 1's
#: best round ``b`` (shorter waits measured worse: ``benchmarks/phase2_patience.py``).
SOLO_PATIENCE_SHARE = 1.0


class ParameterStopper:
    """Joint early stopping, then the ``continue_outputs`` alone (see the module docstring).

    Parameters
    ----------
    k : int
        Raw outputs ``K``.
    patience : int
        Rounds without improvement before a phase ends.
    continue_outputs : sequence of int
        The outputs grown on in phase 2.

    Attributes
    ----------
    frozen : ndarray of bool, shape (K,)
        Outputs that grow zero trees (phase 2: all but ``continue_outputs``).
    best_rounds : ndarray of int, shape (K,)
        Each output's kept round.
    joint_rounds : int
        Rounds run when phase 1 ended (0 while it runs).
    solo_patience : int
        Phase 2's patience: ``max(patience, b)`` for phase 1's best round ``b`` (``patience``
        while phase 1 runs).
    """

    def __init__(self, k: int, patience: int, continue_outputs):
        self.patience = int(patience)
        self.cont = np.zeros(k, dtype=bool)
        self.cont[list(continue_outputs)] = True
        self.frozen = np.zeros(k, dtype=bool)
        self.best_rounds = np.zeros(k, dtype=int)
        self.joint_rounds = 0
        self.best = np.inf
        self.best_round = 0
        self.snapshot = None
        self.since = 0
        self.solo_patience = self.patience

    def scored(self, raw_val: np.ndarray) -> np.ndarray:
        """The validation raw scores to judge, shape (n_val, K): in phase 2 the frozen
        outputs' columns are their scores at the phase-1 best round."""
        if self.joint_rounds == 0:
            return raw_val
        mixed = self.snapshot.copy()
        mixed[:, self.cont] = raw_val[:, self.cont]
        return mixed

    def update(self, raw_val: np.ndarray, value: float, round_: int) -> bool:
        """Judge round ``round_`` (1-based) whose :meth:`scored` validation raw scores are
        ``raw_val`` and validation loss ``value``; True when training should stop."""
        tol = 1e-12 * abs(self.best) if np.isfinite(self.best) else 0.0
        if value < self.best - tol:
            self.best, self.best_round, self.since = value, round_, 0
            if self.joint_rounds == 0:
                self.snapshot = np.array(raw_val, dtype=np.float64, copy=True)
                self.best_rounds[:] = round_
            else:
                self.best_rounds[self.cont] = round_
            return False
        self.since += 1
        if self.since < (self.solo_patience if self.joint_rounds else self.patience):
            return False
        if self.joint_rounds > 0 or self.snapshot is None or self.cont.all():
            return True
        self.joint_rounds, self.since = round_, 0
        self.solo_patience = max(self.patience, int(SOLO_PATIENCE_SHARE * self.best_round))
        self.frozen[~self.cont] = True
        return False


class FreezingBackend:
    """A tree backend whose frozen outputs grow zero trees (their gradients set to zero)."""

    def __init__(self, backend, frozen: np.ndarray):
        self._backend = backend
        self.frozen = frozen

    def __getattr__(self, name):
        return getattr(self._backend, name)

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        if self.frozen.any():
            if isinstance(grad, np.ndarray):
                grad[:, self.frozen] = 0.0
            else:  # a tensor on a device backend's device
                grad[:, np.flatnonzero(self.frozen).tolist()] = 0.0
        self._backend.grow(grad, hess, learning_rate)


def per_output(rounds, iteration: int | None = None) -> np.ndarray:
    """Each output's round: its kept round ``rounds[k]``, capped at ``iteration`` (the
    model after ``iteration`` rounds, where a frozen output stays at its kept round)."""
    rounds = np.asarray(rounds, dtype=int)
    return rounds if iteration is None else np.minimum(rounds, int(iteration))


def predict_per_output(predict, X, rounds) -> np.ndarray:
    """``predict(X, r)`` (an array whose axis 1 is the outputs) with output ``k`` read at
    round ``rounds[k]``: one call per distinct round."""
    rounds = np.asarray(rounds, dtype=int)
    out = None
    for r in np.unique(rounds):
        part = predict(X, int(r))
        if out is None:
            out = np.empty_like(part)
        cols = rounds == r
        out[:, cols] = part[:, cols]
    return out
