"""Tests of the boosting engine (generic over a torch loss; no families involved).  The step
rules are tested in ``test_derivatives.py``, the backends in ``test_*_backend.py``."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boosting_cases import (
    engine,
    fit,
    gaussian_derivatives,
    gaussian_fisher,
    gaussian_fisher_full,
    gaussian_loss,
    heldout_nll,
    marginal_nll,
    sine,
)
from sklearn.tree import DecisionTreeRegressor

from distboost.boosting import fit_boosting

# The plain gradient step is slow (its step size is not scale-aware): 200 rounds, the others
# 100.  The scikit-learn backend fits each round's trees to the rule's ``(grad, hess)``, some
# 5 ms a round against LightGBM's 1: sklearn-natural covers its unit-curvature path (hess = 1,
# as for the gradient rule), sklearn-newton and sklearn-fisher its weighted one, and
# sklearn-gradient (200 rounds) runs in the slow tier; every rule runs on LightGBM.
SINE_CASES = [pytest.param(backend, step, lr, rounds, id=f"{backend}-{step}-{lr}",
                           marks=[pytest.mark.slow] if (backend, step) == ("sklearn", "gradient")
                           else [])
              for backend in ("lightgbm", "sklearn")
              for step, lr, rounds in [("gradient", 0.003, 200), ("newton", 0.1, 100),
                                       ("fisher", 0.1, 100), ("natural", 0.1, 100)]]


@pytest.mark.parametrize("backend, step, lr, rounds", SINE_CASES)
def test_every_step_rule_and_backend_fits_the_heteroscedastic_sine(backend, step, lr, rounds):
    X, y = sine(1000, 0)
    X_te, y_te = sine(3000, 1)
    base = None
    if backend == "sklearn":
        base = DecisionTreeRegressor(max_depth=3, min_samples_leaf=20)
    fe = fit(X, y, step=step, learning_rate=lr, base_learner=base, num_leaves=8,
             n_estimators=rounds)
    train = fe.evals_result_["train"]["loss"]
    # The training loss decreases and the held-out loss beats the marginal Normal's.  On data
    # seeds 0, 2, 4 and 6 (test rows: seed + 1), both backends: the gradient step's drop is
    # 0.49-0.51 and its gain 0.47-0.49 (bounds: 0.3), the other rules' drop 1.33-1.43 and
    # gain 1.07-1.18 (bounds: 0.5 and 0.7).
    drop, gain = (0.3, 0.3) if step == "gradient" else (0.5, 0.7)
    assert train[-1] < train[0] - drop
    assert heldout_nll(fe, X_te, y_te) < marginal_nll(y, y_te) - gain


def test_full_and_diagonal_fisher_give_the_same_natural_step():
    X, y = sine(500, 2)
    a = fit(X, y, step="natural", fisher=gaussian_fisher, n_estimators=30).predict_raw(X)
    b = fit(X, y, step="natural", fisher=gaussian_fisher_full, n_estimators=30).predict_raw(X)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("k", [1, 3])
def test_one_and_three_outputs(k):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    Y = np.stack([X[:, j % 3] * (j + 1) for j in range(k)], axis=1) + rng.normal(size=(600, k))

    def loss(raw, data):
        return 0.5 * ((data["Y"] - raw) ** 2).sum(dim=1)

    fe = fit_boosting(
        loss, np.zeros(k), X, {"Y": torch.as_tensor(Y)},
        params=engine(n_estimators=100, learning_rate=0.1, step="newton", random_state=0))
    pred = fe.predict_raw(X)
    assert pred.shape == (600, k)
    for j in range(k):
        assert np.corrcoef(pred[:, j], Y[:, j])[0, 1] > 0.8


def test_early_stopping_keeps_the_best_iteration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    y = 0.3 * X[:, 0] + rng.normal(size=500)
    X_val = rng.normal(size=(500, 5))
    y_val = 0.3 * X_val[:, 0] + rng.normal(size=500)
    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(
        gaussian_loss, init, X, {"y": torch.as_tensor(y)},
        params=engine(n_estimators=1000, learning_rate=0.3, n_iter_no_change=10,
                            random_state=0),
        X_val=X_val, data_val={"y": torch.as_tensor(y_val)}, fisher=gaussian_fisher,
    )
    valid = fe.evals_result_["valid"]["loss"]
    assert fe.stopped_reason == "early_stopping"
    assert fe.best_iteration_ < fe.n_iter_ <= 1000
    assert fe.n_iter_ - fe.best_iteration_ == 10
    assert int(np.argmin(valid)) + 1 == fe.best_iteration_
    np.testing.assert_array_equal(fe.predict_raw(X_val), fe.predict_raw(X_val, fe.best_iteration_))
    assert not np.array_equal(fe.predict_raw(X_val), fe.predict_raw(X_val, fe.n_iter_))
    raw = torch.as_tensor(fe.predict_raw(X_val))
    assert float(gaussian_loss(raw, {"y": torch.as_tensor(y_val)}).mean()) == pytest.approx(
        min(valid), rel=1e-9)


def test_reproducible_with_a_seed_and_different_with_another():
    X, y = sine(500, 4)
    a = fit(X, y, subsample=0.6, colsample=1.0, n_estimators=40).predict_raw(X)
    b = fit(X, y, subsample=0.6, colsample=1.0, n_estimators=40).predict_raw(X)
    c = fit(X, y, subsample=0.6, colsample=1.0, n_estimators=40, random_state=1).predict_raw(X)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_non_finite_loss_stops_with_a_warning_and_no_nan():
    X, y = sine(300, 6)
    calls = {"n": 0}

    def exploding(raw, data):
        calls["n"] += 1
        out = gaussian_loss(raw, data)
        return out * float("nan") if calls["n"] > 5 else out

    init = np.array([y.mean(), np.log(y.std())])
    # Calls 1-5: the start and rounds 1-4; from call 6 on (after round 5's trees) every
    # step length of round 5 gives NaN: round 5 is removed, rounds 1-4 are kept.
    with pytest.warns(RuntimeWarning, match="round 5: the training loss is nan"):
        fe = fit_boosting(exploding, init, X, {"y": torch.as_tensor(y)},
                          params=engine(n_estimators=50, step="gradient"))
    assert fe.stopped_reason == "non_finite_loss" and fe.n_iter_ == 4
    assert len(fe.evals_result_["train"]["loss"]) == 4
    assert np.isfinite(fe.predict_raw(X)).all()


def test_unknown_step_and_missing_fisher_raise():
    X, y = sine(50, 7)
    with pytest.raises(ValueError, match="Unknown step rule 'adam'"):
        fit(X, y, step="adam")
    with pytest.raises(ValueError, match="needs the expected Fisher information"):
        fit(X, y, step="fisher", fisher=None)


# ---------------------------------------------------------------- callback and clipping
def squared_loss(raw, data):
    return 0.5 * (data["y"] - raw[:, 0]) ** 2


@pytest.mark.parametrize("backend", ["lightgbm", "sklearn"])
def test_callback_sees_the_training_raw_scores_after_each_round(backend):
    X, y = sine(500, 10)
    seen = []
    base = None if backend == "lightgbm" else DecisionTreeRegressor(max_depth=3)
    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(
        gaussian_loss, init, X, {"y": torch.as_tensor(y)},
        params=engine(n_estimators=15, learning_rate=0.1, subsample=0.7, random_state=0,
                            base_learner=base),
        fisher=gaussian_fisher, callback=lambda it, raw: seen.append((it, raw)),
    )
    assert [it for it, _ in seen] == list(range(1, 16))
    assert all(raw.shape == (500, 2) for _, raw in seen)
    for it, raw in seen:  # out-of-bag rows included
        np.testing.assert_allclose(raw, fe.predict_raw(X, num_iteration=it), rtol=0, atol=1e-12)
    assert not np.allclose(seen[0][1], seen[-1][1])


def test_callback_raw_is_what_lightgbm_hands_to_the_next_round():
    X, y = sine(400, 11)
    at_loss, at_callback = [], []

    def loss(raw, data):
        if raw.requires_grad:  # the derivative pass of a round, at LightGBM's own scores
            at_loss.append(raw.detach().numpy().copy())
        return gaussian_loss(raw, data)

    init = np.array([y.mean(), np.log(y.std())])
    fit_boosting(loss, init, X, {"y": torch.as_tensor(y)},
                 params=engine(n_estimators=10, learning_rate=0.1, subsample=0.5,
                                     random_state=0),
                 fisher=gaussian_fisher, callback=lambda it, raw: at_callback.append(raw))
    assert len(at_loss) == len(at_callback) == 10
    for after_round, next_round in zip(at_callback[:-1], at_loss[1:], strict=True):
        np.testing.assert_allclose(after_round, next_round, rtol=0, atol=1e-12)


def test_callback_returning_true_stops_training():
    X, y = sine(300, 12)
    seen = {}

    def callback(it, raw):
        seen[it] = raw
        return it >= 7

    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)},
                      params=engine(n_estimators=100, learning_rate=0.1),
                      fisher=gaussian_fisher, callback=callback)
    assert fe.stopped_reason == "callback"
    assert fe.n_iter_ == fe.best_iteration_ == 7 and sorted(seen) == list(range(1, 8))
    assert len(fe.evals_result_["train"]["loss"]) == 7
    np.testing.assert_allclose(fe.predict_raw(X), seen[7], rtol=0, atol=1e-12)


def test_callback_may_mutate_data_in_place():
    """An offset the loss reads from ``data`` is changed by the callback after round 5: the
    later trees compensate it, on training and validation data alike."""
    rng = np.random.default_rng(13)
    X = rng.normal(size=(600, 2))
    y = X[:, 0] + 0.1 * rng.normal(size=600)
    data = {"y": torch.as_tensor(y[:400]), "shift": torch.zeros(400, dtype=torch.float64)}
    data_val = {"y": torch.as_tensor(y[400:]), "shift": torch.zeros(200, dtype=torch.float64)}

    def loss(raw, d):
        return 0.5 * (d["y"] - raw[:, 0] - d["shift"]) ** 2

    def callback(it, raw):
        if it == 5:
            data["shift"].fill_(2.0)
            data_val["shift"].fill_(2.0)

    fe = fit_boosting(loss, [0.0], X[:400], data,
                      params=engine(n_estimators=150, learning_rate=0.2, step="newton",
                                          n_iter_no_change=None),
                      X_val=X[400:], data_val=data_val, callback=callback)
    pred = fe.predict_raw(X[400:])[:, 0]
    assert fe.n_iter_ == fe.best_iteration_ == 150  # None: no early stopping, every round kept
    np.testing.assert_allclose(pred.mean(), y[400:].mean() - 2.0, atol=0.1)
    valid = fe.evals_result_["valid"]["loss"]
    assert valid[4] > valid[3] + 0.5  # round 5's validation loss is taken after the shift
    assert valid[-1] < 0.05


def test_clip_gradients_limits_the_pull_of_an_outlier():
    rng = np.random.default_rng(15)
    X = rng.uniform(-3, 3, size=(1000, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=1000)
    y[np.argmin(np.abs(X[:, 0]))] = 1e4  # one giant outlier at x = 0
    near = np.linspace(-0.2, 0.2, 41).reshape(-1, 1)

    def run(clip):
        fe = fit_boosting(squared_loss, [np.median(y)], X, {"y": torch.as_tensor(y)},
                          params=engine(n_estimators=100, learning_rate=0.1, step="newton",
                                              num_leaves=8, min_child_samples=10,
                                              clip_gradients=clip))
        return np.abs(fe.predict_raw(near)[:, 0] - np.sin(near[:, 0])).max()

    plain, clipped = run(None), run((0.05, 0.95))
    assert plain > 5.0  # the outlier drags its leaf up
    assert clipped < 0.3


@pytest.mark.parametrize("bad", [(0.9, 0.1), (0.5,), (-0.1, 0.9), "low"])
def test_clip_gradients_validation(bad):
    X, y = sine(50, 16)
    with pytest.raises(ValueError, match="clip_gradients"):
        fit(X, y, clip_gradients=bad)


def test_newton_on_a_loss_without_curvature_is_the_gradient_step():
    """Absolute loss: zero second derivative everywhere, so newton falls back to hess = 1."""
    X, y = sine(400, 17)

    def absolute(raw, data):
        return torch.abs(data["y"] - raw[:, 0])

    fits = {
        step: fit_boosting(absolute, [np.median(y)], X, {"y": torch.as_tensor(y)},
                           params=engine(n_estimators=50, learning_rate=0.1, step=step,
                                               random_state=0))
        for step in ("newton", "gradient")
    }
    assert fits["newton"].stopped_reason == "n_estimators"
    np.testing.assert_array_equal(fits["newton"].predict_raw(X), fits["gradient"].predict_raw(X))
    train = fits["newton"].evals_result_["train"]["loss"]
    assert train[-1] < 0.6 * train[0]


# ---------------------------------------------------------------- options and fast path
@pytest.mark.parametrize("step", ["gradient", "fisher", "natural"])
def test_closed_form_derivatives_fit_the_same_model_as_autograd(step):
    X, y = sine(800, 18)
    lr = 0.003 if step == "gradient" else 0.1
    auto = fit(X, y, step=step, learning_rate=lr, n_estimators=40)
    closed = fit(X, y, step=step, learning_rate=lr, n_estimators=40, fisher=None,
                 derivatives=gaussian_derivatives)
    np.testing.assert_allclose(closed.predict_raw(X), auto.predict_raw(X), rtol=1e-6,
                               atol=1e-9)
    np.testing.assert_allclose(closed.evals_result_["train"]["loss"],
                               auto.evals_result_["train"]["loss"], rtol=1e-9)


def test_evals_result_is_keyed_by_the_callers_metric_name():
    X, y = sine(300, 19)
    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(gaussian_loss, init, X[:200], {"y": torch.as_tensor(y[:200])},
                      params=engine(n_estimators=5, learning_rate=0.1),
                      X_val=X[200:], data_val={"y": torch.as_tensor(y[200:])},
                      fisher=gaussian_fisher, metric_name="nll")
    assert set(fe.evals_result_) == {"train", "valid"}
    assert list(fe.evals_result_["train"]) == list(fe.evals_result_["valid"]) == ["nll"]
    assert len(fe.evals_result_["valid"]["nll"]) == 5


def test_engine_params_use_the_estimators_names_and_have_no_defaults_of_their_own():
    """n_iter_no_change (formerly early_stopping_rounds); the dead categorical_features gone;
    the defaults are the option table's (estimators.options.engine_params), not the
    dataclass's."""
    import dataclasses

    from distboost.boosting import EngineParams
    from distboost.estimators.options import OPTIONS, engine_params

    assert engine(n_iter_no_change=None).n_iter_no_change is None
    with pytest.raises(TypeError):
        engine(early_stopping_rounds=7)
    assert not hasattr(engine(), "categorical_features")
    with pytest.raises(TypeError):
        EngineParams(n_estimators=10)
    with_defaults = {f.name for f in dataclasses.fields(EngineParams)
                     if f.default is not dataclasses.MISSING}
    assert with_defaults == {"clip_gradients", "per_parameter", "continue_outputs",
                             "output_rounds"}
    params = engine_params(200)
    assert params.n_iter_no_change == OPTIONS["n_iter_no_change"].default
    assert params.learning_rate == OPTIONS["learning_rate"].default
    assert (params.num_leaves, params.min_child_samples) == (7, 7)  # auto_tree_size(200)


def test_a_rounds_pair_depends_on_the_start_only_through_the_fixed_scale():
    """Same scores, same curvature scale: the engine's round-r pair is the pure per-row
    function's (nothing global per round), so a fit on a permutation of the rows is the
    same fit (scikit-learn trees with a fixed seed; LightGBM bins may differ)."""
    X, y = sine(300, 20)
    perm = np.random.default_rng(0).permutation(300)
    base = DecisionTreeRegressor(max_depth=3, random_state=0)
    a = fit(X, y, step="fisher", n_estimators=15, base_learner=base)
    b = fit(X[perm], y[perm], step="fisher", n_estimators=15, base_learner=base)
    np.testing.assert_allclose(a.predict_raw(X), b.predict_raw(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("continued", [None, (0,)])
def test_the_kept_rounds_validation_scores_come_back_as_the_rule_judged_them(continued):
    """``valid_raw_``: the validation raw scores at the kept rounds (each output's, under
    per-parameter stopping), so a caller need not predict the validation rows again
    (issue 51, item 2); not pickled."""
    import pickle

    rng = np.random.default_rng(0)  # a near-deterministic location: phase 2 gains
    X = rng.normal(size=(600, 4))
    y = 3 * np.sin(X[:, 0]) + X[:, 2] + 0.3 * rng.normal(size=600)
    X_val = rng.normal(size=(300, 4))
    y_val = 3 * np.sin(X_val[:, 0]) + X_val[:, 2] + 0.3 * rng.normal(size=300)
    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(
        gaussian_loss, init, X, {"y": torch.as_tensor(y)},
        params=engine(n_estimators=1000, learning_rate=0.05, n_iter_no_change=10,
                      random_state=0, continue_outputs=continued),
        X_val=X_val, data_val={"y": torch.as_tensor(y_val)}, fisher=gaussian_fisher,
    )
    rounds, raw = fe.valid_raw_
    assert fe.stopped_reason == "early_stopping" and rounds == tuple(fe.rounds())
    if continued:
        assert rounds[0] > rounds[1]  # the location at its own, later round
    np.testing.assert_allclose(raw, fe.predict_raw(X_val), rtol=0, atol=1e-12)
    valid = fe.evals_result_["valid"]["loss"]
    value = float(gaussian_loss(torch.as_tensor(raw), {"y": torch.as_tensor(y_val)}).mean())
    assert value == pytest.approx(min(valid), rel=1e-12)
    assert pickle.loads(pickle.dumps(fe)).valid_raw_ is None
    plain = fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)},
                         params=engine(n_estimators=5, learning_rate=0.2, random_state=0),
                         fisher=gaussian_fisher)
    assert plain.valid_raw_ is None  # no validation rows
