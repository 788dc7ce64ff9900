"""Per-parameter stopping's two-phase rule (distboost.boosting.output_stopping), on given
validation-loss sequences: no trees involved."""

from __future__ import annotations

import numpy as np
import pytest

from distboost.boosting.output_stopping import (
    ParameterStopper,
    per_output,
    predict_per_output,
)


def _run(values, patience=2, k=2, cont=(0,)):
    """Feed ``values`` (the validation loss of rounds 1, 2, ...) until the stopper says
    stop; the rounds run and the stopper."""
    stopper = ParameterStopper(k, patience, cont)
    raw = np.zeros((3, k))
    for r, v in enumerate(values, start=1):
        raw = raw + 1.0
        if stopper.update(stopper.scored(raw), v, r):
            return r, stopper
    return len(values), stopper


def test_phase_two_grows_the_continued_output_past_the_joint_best_round():
    # Joint best at round 2; rounds 3-4 do not improve (patience 2): phase 2 from round 5,
    # the continued output improves at rounds 5 and 6, then stalls for 2 rounds.
    rounds, s = _run([5.0, 4.0, 4.5, 4.2, 3.9, 3.8, 3.85, 3.9, 1.0])
    assert s.joint_rounds == 4
    assert s.best_rounds.tolist() == [6, 2]
    assert s.frozen.tolist() == [False, True]
    assert rounds == 8


def test_phase_two_waits_as_many_rounds_as_phase_one_took_to_its_best():
    # Joint best at round 5 (patience 2): phase 2 from round 7 waits max(2, 5) rounds; the
    # gain at round 12 (four rounds without one) is kept, then five rounds without one stop.
    values = [5.0, 4.0, 3.0, 2.0, 1.0, 1.5, 1.6, 1.2, 1.1, 1.3, 1.4, 0.9] + [0.95] * 5 + [0.1]
    rounds, s = _run(values)
    assert s.joint_rounds == 7 and s.solo_patience == 5
    assert s.best_rounds.tolist() == [12, 5]
    assert rounds == 17
    # A joint best before ``patience`` keeps phase 1's patience.
    rounds, s = _run([5.0, 4.0, 4.5, 4.6, 4.7, 4.1, 4.2, 4.3, 1.0], patience=3)
    assert s.joint_rounds == 5 and s.solo_patience == 3 and rounds == 8


def test_phase_two_scores_the_frozen_outputs_at_their_best_round():
    s = ParameterStopper(2, 1, (0,))
    s.update(np.array([[1.0, 10.0]]), 2.0, 1)
    s.update(np.array([[2.0, 20.0]]), 3.0, 2)  # no gain: phase 2 starts
    mixed = s.scored(np.array([[3.0, 30.0]]))
    assert mixed.tolist() == [[3.0, 10.0]]


def test_no_continued_output_or_no_gain_stops_as_the_joint_rule():
    rounds, s = _run([5.0, 4.0, 4.5, 4.6, 1.0], cont=(0, 1))
    assert rounds == 4 and s.best_rounds.tolist() == [2, 2] and s.joint_rounds == 0
    rounds, s = _run([5.0, 4.0, 4.5, 4.6, 4.1, 4.2, 1.0])
    assert rounds == 6 and s.best_rounds.tolist() == [2, 2]


def test_each_output_is_read_at_its_own_round():
    def predict(X, r):  # output k at round r: 10 * k + r
        return np.tile(10.0 * np.arange(3) + r, (len(X), 1))

    out = predict_per_output(predict, np.zeros(2), per_output([5, 2, 7], iteration=4))
    assert out.tolist() == [[4.0, 12.0, 24.0]] * 2


@pytest.mark.parametrize("options", [{}, {"param_options": {"loc": {"num_leaves": 4}}}],
                         ids=["one booster", "a booster per parameter"])
def test_backends_read_each_output_at_its_round_in_one_pass(options):
    """``predict_raw_rounds`` (LightGBM's consecutive ranges, or each parameter's own
    booster at its round) equals one full prediction per distinct round."""
    import distboost as db

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + np.exp(0.3 * X[:, 1]) * rng.normal(size=300)
    model = db.DistributionalRegressor(n_estimators=30, early_stopping=False,
                                       random_state=0, **options).fit(X, y).ensemble_.model
    assert hasattr(model, "predict_raw_rounds")
    for rounds in ([30, 30], [30, 7], [7, 30], [0, 12], [0, 0], [1, 29]):
        np.testing.assert_allclose(model.predict_raw_rounds(X, rounds),
                                   predict_per_output(model.predict_raw, X, rounds),
                                   rtol=1e-13, atol=1e-13)
