"""Tests of :mod:`distboost.dask._rounds`: the driver's sequence of runs, on a scripted
stand-in for ``xgboost.dask.train`` (no cluster)."""

from __future__ import annotations

import numpy as np

from distboost.dask._rounds import boost_with_halving, continue_alone


class Rounds:
    """A booster that only counts its rounds (``num_boosted_rounds``, slicing)."""

    def __init__(self, n):
        self.n = n

    def num_boosted_rounds(self):
        return self.n

    def __getitem__(self, cut):
        return Rounds(cut.stop)


def scripted(valid_joint, valid_alone, calls):
    """A ``run`` whose validation loss after round t is ``valid_joint(t)``, or
    ``valid_alone(t)`` with outputs frozen; it stops after ``patience`` (default 3) rounds
    without a better loss, as XGBoost's ``EarlyStopping`` in one run."""

    def run(rounds, booster, first_rate, frozen=None, patience=None):
        calls.append({"start": 0 if booster is None else booster.n, "frozen": frozen,
                      "patience": patience})
        start = 0 if booster is None else booster.n
        curve = valid_alone if frozen is not None else valid_joint
        valid, best, since = [], np.inf, 0
        for t in range(start + 1, start + rounds + 1):
            valid.append(curve(t))
            best, since = (valid[-1], 0) if valid[-1] < best else (best, since + 1)
            if since >= (patience or 3):
                break
        train = list(-np.arange(start, start + len(valid), dtype=float))  # always descending
        return Rounds(start + len(valid)), {"train": train, "valid": valid}

    return run


def test_phase_two_starts_at_the_joint_best_round_and_waits_as_long_as_it_took():
    calls = []
    joint = lambda t: (t - 10.0) ** 2  # noqa: E731 - best at round 10
    alone = lambda t: (t - 10.0) ** 2 if t <= 10 else -(t - 10.0) if t <= 16 else t - 22.0  # noqa: E731
    run = scripted(joint, alone, calls)
    booster, history = boost_with_halving(run, 200, 0.1, 3)
    assert history["stopped"] == "early_stopping" and booster.n == 13
    frozen = np.array([False, True])
    booster, history = continue_alone(run, booster, history, 200, 0.1, 3, frozen)
    # Phase 2 continues round 10 (the joint rounds 11-13 dropped), with the frozen outputs
    # and a patience of max(3, 10) rounds; its best is round 16, and it ran 10 more.
    assert calls[-1] == {"start": 10, "frozen": frozen, "patience": 10}
    assert history["joint_best"] == 10 and np.argmin(history["valid"]) + 1 == 16
    assert booster.n == len(history["valid"]) == len(history["scales"]) == 26
    assert history["stopped"] == "early_stopping"


def test_phase_two_that_never_improves_keeps_the_joint_best_round():
    calls = []
    run = scripted(lambda t: (t - 5.0) ** 2, lambda t: (t - 5.0) ** 2 + 1.0, calls)
    booster, history = boost_with_halving(run, 200, 0.1, 4)
    booster, history = continue_alone(run, booster, history, 200, 0.1, 4, np.array([0, 1], bool))
    assert np.argmin(history["valid"]) + 1 == history["joint_best"] == 5
    # max(4, 5) rounds without a better loss, after the run's first round (XGBoost's early
    # stopping takes a run's first round as its reference): one round more than in-process.
    assert booster.n == 5 + 1 + 5
