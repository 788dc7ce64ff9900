"""The engine's descent guarantee: a round that raises the training loss (or makes it, or
its derivatives, non-finite) is halved until it does not, or removed and training stops.

The losses here are built so that the outcome is exact arithmetic, not a float path: two
groups of rows, one split, leaf values equal to the group means of the residuals.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from boosting_cases import engine
from sklearn.tree import DecisionTreeRegressor

from distboost.boosting import fit_boosting
from distboost.boosting.engine import MAX_HALVINGS


def two_groups(n=200, seed=0):
    """One feature with two values; y = 10 in group 0, -4 in group 1 (no noise)."""
    rng = np.random.default_rng(seed)
    g = rng.integers(0, 2, n)
    g[:2] = [0, 1]
    return g.reshape(-1, 1).astype(float), np.where(g == 0, 10.0, -4.0)


def squared(raw, data):
    return 0.5 * (data["y"] - raw[:, 0]) ** 2


def params(backend, **kw):
    base = None if backend == "lightgbm" else DecisionTreeRegressor(max_depth=1)
    return engine(**{"num_leaves": 2, "min_child_samples": 1, "random_state": 0,
                           "base_learner": base, "n_iter_no_change": None, **kw})


BACKENDS = ["lightgbm", "sklearn"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_overshooting_step_is_halved_until_the_loss_falls(backend):
    """Newton on the squared loss moves each leaf by ``lr`` times its mean residual: the
    residual becomes ``(1 - lr)`` times itself.  At ``lr = 3`` it doubles (rejected); halved,
    ``lr = 1.5``, it becomes ``-1/2`` of itself (accepted): every round is halved once."""
    X, y = two_groups()
    fe = fit_boosting(squared, [0.0], X, {"y": torch.as_tensor(y)},
                      params=params(backend, n_estimators=6, learning_rate=3.0, step="newton"))
    assert fe.stopped_reason == "n_estimators" and fe.n_iter_ == 6
    assert fe.step_scales_ == [0.5] * 6 and fe.n_backoffs_ == 6
    expected = y * (1.0 - (-0.5) ** 6)  # residual y (start 0) times (-1/2) per round
    np.testing.assert_allclose(fe.predict_raw(X)[:, 0], expected, rtol=1e-6)
    train = np.array(fe.evals_result_["train"]["loss"])
    np.testing.assert_allclose(train[1:] / train[:-1], 0.25, rtol=1e-5)
    # Without the guard the same rounds would give residual y * (-2)^6.


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_step_into_a_non_finite_region_is_backed_off(backend):
    """The loss is +inf at raw >= 5: the full Newton step (to y = 10 and 8) and the half
    step (5 and 4) reach it; the quarter step is finite and lower, and is kept."""
    X, y = two_groups()
    y = np.where(y > 0, 10.0, 8.0)

    def walled(raw, data):
        return torch.where(raw[:, 0] < 5.0, squared(raw, data), torch.inf)

    fe = fit_boosting(walled, [0.0], X, {"y": torch.as_tensor(y)},
                      params=params(backend, n_estimators=1, learning_rate=1.0, step="newton"))
    assert fe.step_scales_ == [0.25] and fe.n_backoffs_ == 2
    np.testing.assert_allclose(fe.predict_raw(X)[:, 0], 0.25 * y, rtol=1e-6)


class _ReversedGradient(torch.autograd.Function):
    """The squared loss with its gradient's sign flipped: every tree points uphill."""

    @staticmethod
    def forward(ctx, raw, y):
        ctx.save_for_backward(raw, y)
        return 0.5 * (y - raw) ** 2

    @staticmethod
    def backward(ctx, grad):
        raw, y = ctx.saved_tensors
        return grad * (y - raw), None


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_descending_step_length_stops_training_and_keeps_the_model_before(backend):
    X, y = two_groups()
    calls = {"rounds": 0}

    def loss(raw, data):
        # The derivatives of rounds 1-3 are right, those of round 4 on point uphill.
        if raw.requires_grad:
            calls["rounds"] += 1
        if calls["rounds"] <= 3:
            return squared(raw, data)
        return _ReversedGradient.apply(raw[:, 0], data["y"])

    with pytest.warns(RuntimeWarning, match=r"Model\(x\): Boosting stopped at round 4: the "
                      r"training loss rises .* learning_rate / 1024; keeping the 3 rounds"):
        fe = fit_boosting(loss, [0.0], X, {"y": torch.as_tensor(y)},
                          params=params(backend, n_estimators=20, learning_rate=0.5,
                                        step="newton"),
                          warn_context="Model(x)")
    assert fe.stopped_reason == "no_descent"
    assert fe.n_iter_ == fe.best_iteration_ == 3 and fe.step_scales_ == [1.0] * 3
    assert len(fe.evals_result_["train"]["loss"]) == 3
    np.testing.assert_allclose(fe.predict_raw(X)[:, 0], 0.875 * y, rtol=1e-6)  # 1 - 0.5^3


def test_an_uphill_first_round_keeps_the_start_values():
    X, y = two_groups()

    def loss(raw, data):
        return _ReversedGradient.apply(raw[:, 0], data["y"])

    with pytest.warns(RuntimeWarning, match="round 1: the training loss rises"):
        fe = fit_boosting(loss, [1.0], X, {"y": torch.as_tensor(y)},
                          params=params("lightgbm", n_estimators=5, learning_rate=0.1,
                                        step="gradient"))
    assert fe.stopped_reason == "no_descent" and fe.n_iter_ == 0
    np.testing.assert_array_equal(fe.predict_raw(X), 1.0)
    assert fe.to_dict()["step_scales"] == []


def test_the_normal_path_costs_one_forward_pass_per_fit():
    """No extra loss evaluation per round: the loss after round t is the one the step rule
    computes at the start of round t + 1; only the last round needs a forward pass more."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 2))
    y = X[:, 0] + rng.normal(size=300) * 0.1
    calls = {"derivative": 0, "forward": 0}

    def loss(raw, data):
        calls["derivative" if raw.requires_grad else "forward"] += 1
        return squared(raw, data)

    fe = fit_boosting(loss, [0.0], X, {"y": torch.as_tensor(y)},
                      params=engine(n_estimators=25, learning_rate=0.1, step="newton"))
    assert fe.n_backoffs_ == 0 and fe.n_iter_ == 25
    assert calls == {"derivative": 25, "forward": 1}


def test_subsampled_rounds_are_judged_on_every_training_row():
    """Bagging half the rows with an overshooting rate: the training history over all rows
    never rises, and the kept scores are what the model predicts."""
    rng = np.random.default_rng(2)
    X = rng.uniform(-3, 3, size=(400, 2))
    y = np.sin(X[:, 0]) * 3 + rng.normal(size=400) * 0.3
    fe = fit_boosting(squared, [0.0], X, {"y": torch.as_tensor(y)},
                      params=engine(n_estimators=30, learning_rate=1.8, step="newton",
                                          subsample=0.5, num_leaves=8, random_state=0))
    train = np.array(fe.evals_result_["train"]["loss"])
    assert fe.n_backoffs_ > 0
    assert (np.diff(train) <= 1e-9 * np.abs(train[:-1])).all()
    final = float(squared(torch.as_tensor(fe.predict_raw(X)), {"y": torch.as_tensor(y)}).mean())
    assert final <= train[-1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_callback_sees_the_accepted_scores_after_a_backoff(backend):
    X, y = two_groups()
    seen = []
    fe = fit_boosting(squared, [0.0], X, {"y": torch.as_tensor(y)},
                      params=params(backend, n_estimators=4, learning_rate=3.0, step="newton"),
                      callback=lambda it, raw: seen.append(raw))
    assert fe.step_scales_ == [0.5] * 4
    for it, raw in enumerate(seen, start=1):
        np.testing.assert_allclose(raw, fe.predict_raw(X, num_iteration=it), atol=1e-12)
        np.testing.assert_allclose(raw[:, 0], y * (1.0 - (-0.5) ** it), rtol=1e-6)


def test_clipped_gradients_may_raise_the_loss_but_not_make_it_non_finite():
    """clip_gradients deliberately ignores the pull of some rows, so its rounds are not held
    to descent (an outlier's share of the loss may grow): no back-off, no stop."""
    X, y = two_groups()
    y = y.copy()
    y[:2] = [1e4, -1e4]
    fe = fit_boosting(squared, [0.0], X, {"y": torch.as_tensor(y)},
                      params=params("lightgbm", n_estimators=10, learning_rate=3.0,
                                    step="newton", clip_gradients=(0.05, 0.95)))
    assert fe.stopped_reason == "n_estimators" and fe.n_backoffs_ == 0
    assert np.isfinite(fe.predict_raw(X)).all()


def test_max_halvings_bounds_the_retries():
    X, y = two_groups()
    tries = {"n": 0}

    def loss(raw, data):
        tries["n"] += 1
        return _ReversedGradient.apply(raw[:, 0], data["y"])

    with pytest.warns(RuntimeWarning):
        fit_boosting(loss, [1.0], X, {"y": torch.as_tensor(y)},
                     params=params("lightgbm", n_estimators=5, learning_rate=0.1, step="gradient"))
    # The start, the full step and MAX_HALVINGS halved ones.
    assert tries["n"] == 2 + MAX_HALVINGS


def uphill_problem(seed=3, n=400):
    """Rows of two kinds in every leaf; see the test below."""
    rng = np.random.default_rng(seed)
    kind_b = np.arange(n) % 2 == 1
    z = rng.integers(0, 2, n).astype(float)  # splits the rows, each leaf holds both kinds
    Y = np.where(kind_b[:, None], [0.0, -4.5], [-1.0, 0.0]) * (1.0 + 0.1 * z[:, None])
    return z.reshape(-1, 1), {"Y": torch.as_tensor(Y), "b": torch.as_tensor(kind_b)}


def two_output_squared(raw, d):
    return 0.5 * ((d["Y"] - raw) ** 2).sum(dim=1)


INFO_B = torch.tensor([[1.0, 10.0], [10.0, 101.0]], dtype=torch.float64)


def mixed_fisher(raw, d):
    eye = torch.eye(2, dtype=torch.float64).expand(raw.shape[0], 2, 2)
    return torch.where(d["b"][:, None, None], INFO_B.expand_as(eye), eye)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_failed_fallback_stops_with_the_model_before_the_round(backend):
    """Round 1's natural trees point uphill, and the diagonal Fisher step that would replace
    them has no finite derivatives: training stops, the start values kept (the round is
    taken back once, not twice)."""
    X, data = uphill_problem()
    seen = []

    def fisher(raw, d):
        seen.append(raw.clone())
        if len(seen) > 1 and torch.equal(raw, seen[0]):  # the fallback, at the start
            return torch.full((raw.shape[0], 2, 2), float("nan"), dtype=torch.float64)
        return mixed_fisher(raw, d)

    with pytest.warns(RuntimeWarning, match="round 1: the round's trees point uphill"):
        fe = fit_boosting(two_output_squared, [0.0, 0.0], X, data, fisher=fisher,
                          params=params(backend, n_estimators=5, learning_rate=0.5,
                                        step="natural"))
    assert fe.stopped_reason == "no_descent" and fe.n_iter_ == 0 and fe.fallback_rounds_ == []
    np.testing.assert_array_equal(fe.predict_raw(X), 0.0)


def test_natural_trees_pointing_uphill_are_regrown_from_the_diagonal_fisher_step():
    """Two kinds of rows share every leaf: for kind A the (damped) natural direction is the
    gradient (1, 0); for kind B, with information [[1, 10], [10, 101]], it is
    4.5 * (-0.45, 0.05) for the gradient (0, 4.5).  Each row's direction descends, but their
    leaf average points uphill (mean g . mean d < 0): no step length helps, and the round is
    regrown from the diagonal Fisher step (a descent direction to first order)."""
    X, data = uphill_problem()

    def run(step):
        return fit_boosting(two_output_squared, [0.0, 0.0], X, data, fisher=mixed_fisher,
                            params=params("lightgbm", n_estimators=1, learning_rate=0.5,
                                          step=step))

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fe = run("natural")
    assert fe.fallback_rounds_ == [1] and fe.stopped_reason == "n_estimators"
    after = float(two_output_squared(torch.as_tensor(fe.predict_raw(X)), data).mean())
    assert after < fe.evals_result_["train"]["loss"][0]
    # The regrown round is the diagonal Fisher step's round (same trees, same rate).
    np.testing.assert_allclose(fe.predict_raw(X), run("fisher").predict_raw(X), rtol=1e-9)


def test_after_three_uphill_rounds_in_a_row_the_diagonal_step_grows_every_round():
    """With a coupling that makes every natural round point uphill (here: learning rate
    0.1), each round was grown twice (the natural trees, their line search, then the
    diagonal Fisher step's).  After STICKY_FALLBACKS such rounds in a row, the later rounds
    are grown from the diagonal step directly: the same model as step="fisher", and no more
    loss evaluations per round than it."""
    from distboost.boosting.engine import STICKY_FALLBACKS

    X, data = uphill_problem()
    calls = {"n": 0}

    def loss(raw, d):
        calls["n"] += 1
        return two_output_squared(raw, d)

    def run(step, rounds):
        calls["n"] = 0
        fe = fit_boosting(loss, [0.0, 0.0], X, data, fisher=mixed_fisher,
                          params=params("lightgbm", n_estimators=rounds, learning_rate=0.1,
                                        step=step))
        return fe, calls["n"]

    natural, n_natural = run("natural", 8)
    fisher, n_fisher = run("fisher", 8)
    assert natural.fallback_rounds_ == list(range(1, 9))
    np.testing.assert_allclose(natural.predict_raw(X), fisher.predict_raw(X), rtol=1e-9)
    _, n_first = run("natural", STICKY_FALLBACKS)
    _, n_first_fisher = run("fisher", STICKY_FALLBACKS)
    # Beyond the first rounds' extra work, one evaluation to switch, then none.
    assert n_natural - n_fisher <= n_first - n_first_fisher + 1


def _fit_uncoupled_after_round_5(information: float):
    """The uphill problem's natural fit, 20 rounds, whose coupling (sending the natural trees
    uphill) the callback switches off after round 5; from then on the Fisher information is
    ``information`` times the identity."""
    X, data = uphill_problem()
    coupled = {"on": True}

    def fisher(raw, d):
        if coupled["on"]:
            return mixed_fisher(raw, d)
        return information * torch.eye(2, dtype=torch.float64).expand(raw.shape[0], 2, 2).clone()

    def callback(it, raw):
        coupled["on"] = it < 5
        return False

    return fit_boosting(two_output_squared, [0.0, 0.0], X, data, fisher=fisher,
                        callback=callback,
                        params=params("lightgbm", n_estimators=20, learning_rate=0.1,
                                      step="natural"))


def test_the_natural_step_is_tried_again_and_kept_once_it_descends():
    """The coupling that sends the natural trees uphill is switched off after round 5 (by
    the callback): the diagonal step grows rounds 4 to 12 after the three fallbacks, the
    natural step is tried again at round 13 (STICKY_RETRY rounds after the switch), descends,
    and grows every later round."""
    from distboost.boosting.engine import STICKY_FALLBACKS, STICKY_RETRY

    fe = _fit_uncoupled_after_round_5(1.0)
    switch = STICKY_FALLBACKS
    assert fe.fallback_rounds_ == list(range(1, switch + STICKY_RETRY))
    assert fe.n_iter_ == 20 and fe.stopped_reason == "n_estimators"
    train = fe.evals_result_["train"]["loss"]
    assert all(b <= a + 1e-12 for a, b in zip(train, train[1:], strict=False))


def test_a_retried_natural_step_that_overshoots_falls_back_at_once():
    """After the switch to the diagonal step, the natural step retried at round 13 would
    descend only at half its step (its information is 25 x too small once the coupling is
    off): a retry is kept only if its full step descends, so round 13 falls back at once (one
    regrowth, not up to MAX_HALVINGS) and the diagonal step grows every round to the end."""
    from distboost.boosting.engine import DESCENT_RTOL, STICKY_FALLBACKS, STICKY_RETRY

    fe = _fit_uncoupled_after_round_5(0.04)
    assert STICKY_FALLBACKS + STICKY_RETRY in fe.fallback_rounds_
    assert fe.fallback_rounds_ == list(range(1, 21))
    assert fe.n_iter_ == 20 and fe.stopped_reason == "n_estimators"
    train = fe.evals_result_["train"]["loss"]  # converged by round 13: the engine's tolerance
    assert all(b <= a * (1.0 + DESCENT_RTOL) for a, b in zip(train, train[1:], strict=False))
