"""Tests of the boosting engine (generic over a torch loss; no families involved)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.tree import DecisionTreeRegressor

from distboost.boosting import EngineParams, FittedEnsemble, fit_boosting


def gaussian_loss(raw, data):
    mu, log_sigma = raw[:, 0], raw[:, 1]
    return 0.5 * ((data["y"] - mu) * torch.exp(-log_sigma)) ** 2 + log_sigma


def gaussian_fisher(raw, data):
    return torch.stack([torch.exp(-2 * raw[:, 1]), torch.full_like(raw[:, 1], 2.0)], dim=1)


def gaussian_fisher_full(raw, data):
    return torch.diag_embed(gaussian_fisher(raw, data))


def sine(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, n)
    y = np.sin(x) + rng.normal(size=n) * (0.05 + 0.1 * x**2)
    return x.reshape(-1, 1), y


def heldout_nll(fe, X, y):
    raw = torch.as_tensor(fe.predict_raw(X))
    return float(gaussian_loss(raw, {"y": torch.as_tensor(y)}).mean()) + 0.5 * np.log(2 * np.pi)


def marginal_nll(y_train, y_test):
    return float(0.5 * np.mean((y_test - y_train.mean()) ** 2) / y_train.var()
                 + 0.5 * np.log(y_train.var()) + 0.5 * np.log(2 * np.pi))


def fit(X, y, fisher=gaussian_fisher, **kw):
    init = np.array([y.mean(), np.log(y.std())])
    params = EngineParams(**{"n_estimators": 200, "learning_rate": 0.1, "random_state": 0, **kw})
    return fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)}, params=params,
                        fisher=fisher)


@pytest.mark.parametrize("step, lr", [("gradient", 0.003), ("newton", 0.1), ("fisher", 0.1),
                                      ("natural", 0.1)])
@pytest.mark.parametrize("backend", ["lightgbm", "sklearn"])
def test_every_step_rule_and_backend_fits_the_heteroscedastic_sine(step, lr, backend):
    X, y = sine(1000, 0)
    X_te, y_te = sine(3000, 1)
    base = None
    if backend == "sklearn":
        base = DecisionTreeRegressor(max_depth=3, min_samples_leaf=20)
    fe = fit(X, y, step=step, learning_rate=lr, base_learner=base, num_leaves=8)
    train = fe.evals_result_["train"]["loss"]
    assert train[-1] < train[0] - 0.5  # the training loss decreases
    # The plain gradient step is slow (its step size is not scale-aware): a smaller gain.
    gain = 0.3 if step == "gradient" else 0.7
    assert heldout_nll(fe, X_te, y_te) < marginal_nll(y, y_te) - gain


def test_full_and_diagonal_fisher_give_the_same_natural_step():
    X, y = sine(500, 2)
    a = fit(X, y, step="natural", fisher=gaussian_fisher, n_estimators=30).predict_raw(X)
    b = fit(X, y, step="natural", fisher=gaussian_fisher_full, n_estimators=30).predict_raw(X)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_derivatives_match_finite_differences():
    from distboost.boosting.derivatives import StepComputer

    rng = np.random.default_rng(0)
    y = torch.as_tensor(rng.normal(size=7))
    raw = rng.normal(size=(7, 2))
    sc = StepComputer(gaussian_loss, {"y": y}, "newton")
    g, h = sc(raw)
    # Undo the per-column rescaling (unit mean curvature) to compare with raw derivatives.
    eps = 1e-5
    for k in range(2):
        e = np.zeros_like(raw)
        e[:, k] = eps
        f = lambda r: gaussian_loss(torch.as_tensor(r), {"y": y}).numpy()  # noqa: E731
        fd_g = (f(raw + e) - f(raw - e)) / (2 * eps)
        fd_h = (f(raw + e) - 2 * f(raw) + f(raw - e)) / eps**2
        floor = 1e-2 * np.abs(fd_h).mean()
        fd_h = np.maximum(fd_h, floor)
        ratio = fd_h.mean()
        np.testing.assert_allclose(g[:, k] * ratio, fd_g, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(h[:, k] * ratio, fd_h, rtol=1e-4)


def test_newton_guard_floors_non_positive_curvature():
    from distboost.boosting.derivatives import NEWTON_FLOOR, StepComputer

    def concave(raw, data):  # curvature -2 on column 0 where raw > 0, +2 elsewhere
        return torch.where(raw[:, 0] > 0, -raw[:, 0] ** 2, raw[:, 0] ** 2)

    sc = StepComputer(concave, {}, "newton")
    raw = np.array([[1.0], [-1.0], [2.0], [-2.0]])
    _, h = sc(raw)
    assert (h > 0).all()
    np.testing.assert_allclose(h[[0, 2], 0] / h[1, 0], NEWTON_FLOOR)


@pytest.mark.parametrize("k", [1, 3])
def test_one_and_three_outputs(k):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    Y = np.stack([X[:, j % 3] * (j + 1) for j in range(k)], axis=1) + rng.normal(size=(600, k))

    def loss(raw, data):
        return 0.5 * ((data["Y"] - raw) ** 2).sum(dim=1)

    fe = fit_boosting(
        loss, np.zeros(k), X, {"Y": torch.as_tensor(Y)},
        params=EngineParams(n_estimators=100, learning_rate=0.1, step="newton", random_state=0))
    pred = fe.predict_raw(X)
    assert pred.shape == (600, k)
    for j in range(k):
        assert np.corrcoef(pred[:, j], Y[:, j])[0, 1] > 0.8


def test_sample_weights_equal_replication():
    """Exact with a scikit-learn tree (weighted impurity == replicated impurity)."""
    X, y = sine(300, 3)
    w = np.random.default_rng(0).integers(1, 4, size=300)
    init = np.array([y.mean(), np.log(y.std())])
    params = EngineParams(n_estimators=20, learning_rate=0.1, random_state=0, step="fisher",
                          base_learner=DecisionTreeRegressor(max_depth=3))
    data = {"y": torch.as_tensor(y)}
    a = fit_boosting(gaussian_loss, init, X, data, params=params, sample_weight=w,
                     fisher=gaussian_fisher)
    rep = np.repeat(np.arange(300), w)
    b = fit_boosting(gaussian_loss, init, X[rep], {"y": torch.as_tensor(y[rep])},
                     params=params, fisher=gaussian_fisher)
    np.testing.assert_allclose(a.predict_raw(X), b.predict_raw(X), rtol=1e-9, atol=1e-9)


def test_sample_weights_reach_lightgbm():
    """Weight 0 removes a row: same model as dropping it (bins aside, same data)."""
    X, y = sine(400, 8)
    w = np.ones(400)
    w[::2] = 0.0
    X_te, y_te = sine(2000, 9)
    a = fit(X, y, n_estimators=50)
    b = fit(X, y, n_estimators=50, min_child_samples=5)
    init = np.array([y.mean(), np.log(y.std())])
    c = fit_boosting(gaussian_loss, init, X, {"y": torch.as_tensor(y)},
                     params=EngineParams(n_estimators=50, learning_rate=0.1, random_state=0),
                     sample_weight=w, fisher=gaussian_fisher)
    assert not np.allclose(c.predict_raw(X), a.predict_raw(X))
    assert abs(heldout_nll(c, X_te, y_te) - heldout_nll(b, X_te, y_te)) < 0.5


def test_early_stopping_keeps_the_best_iteration():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    y = 0.3 * X[:, 0] + rng.normal(size=500)
    X_val = rng.normal(size=(500, 5))
    y_val = 0.3 * X_val[:, 0] + rng.normal(size=500)
    init = np.array([y.mean(), np.log(y.std())])
    fe = fit_boosting(
        gaussian_loss, init, X, {"y": torch.as_tensor(y)},
        params=EngineParams(n_estimators=1000, learning_rate=0.3, early_stopping_rounds=10,
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


def test_text_round_trip_is_bit_identical():
    X, y = sine(400, 5)
    fe = fit(X, y, n_estimators=50)
    back = FittedEnsemble.from_dict(fe.to_dict())
    np.testing.assert_array_equal(back.predict_raw(X), fe.predict_raw(X))
    with pytest.raises(ValueError, match="pickle"):
        fit(X, y, n_estimators=2, base_learner=DecisionTreeRegressor(max_depth=2)).to_dict()


def test_dataframe_with_category_and_missing_values():
    rng = np.random.default_rng(0)
    n = 1200
    g = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    x = rng.normal(size=n)
    x[::7] = np.nan
    y = np.asarray(pd.Series(g).map({"a": -3.0, "b": 0.0, "c": 3.0}), float)
    y = y + rng.normal(size=n) * 0.2
    X = pd.DataFrame({"g": g, "x": x})
    fe = fit(X, y, n_estimators=100, num_leaves=4)
    pred = fe.predict_raw(X)[:, 0]
    for level, mean in [("a", -3.0), ("b", 0.0), ("c", 3.0)]:
        assert pred[np.asarray(g == level)].mean() == pytest.approx(mean, abs=0.15)
    imp = fe.feature_importances()
    assert imp.shape == (2, 2) and imp[0, 0] > imp[0, 1]


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
                          params=EngineParams(n_estimators=50, step="gradient"))
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
        params=EngineParams(n_estimators=15, learning_rate=0.1, subsample=0.7, random_state=0,
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
                 params=EngineParams(n_estimators=10, learning_rate=0.1, subsample=0.5,
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
                      params=EngineParams(n_estimators=100, learning_rate=0.1),
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
                      params=EngineParams(n_estimators=150, learning_rate=0.2, step="newton",
                                          early_stopping_rounds=None),
                      X_val=X[400:], data_val=data_val, callback=callback)
    pred = fe.predict_raw(X[400:])[:, 0]
    assert fe.n_iter_ == fe.best_iteration_ == 150  # None: no early stopping, every round kept
    np.testing.assert_allclose(pred.mean(), y[400:].mean() - 2.0, atol=0.1)
    valid = fe.evals_result_["valid"]["loss"]
    assert valid[4] > valid[3] + 0.5  # round 5's validation loss is taken after the shift
    assert valid[-1] < 0.05


def test_clip_gradients_clips_each_column_at_its_own_quantiles():
    from distboost.boosting.derivatives import StepComputer

    rng = np.random.default_rng(14)
    Y = rng.standard_t(df=2, size=(200, 2)) * np.array([1.0, 50.0])
    raw = np.zeros((200, 2))

    def loss(r, d):
        return 0.5 * ((d["Y"] - r) ** 2).sum(dim=1)

    data = {"Y": torch.as_tensor(Y)}
    g, h = StepComputer(loss, data, "gradient", clip_gradients=(0.1, 0.9))(raw)
    expected = np.column_stack([
        np.clip(-Y[:, j], np.quantile(-Y[:, j], 0.1), np.quantile(-Y[:, j], 0.9))
        for j in range(2)
    ])
    np.testing.assert_allclose(g, expected, rtol=1e-12)
    np.testing.assert_array_equal(h, 1.0)
    assert (g[:, 1] == g[:, 1].max()).sum() >= 20  # the top 10% share the clipped value
    # Newton: gradients clipped, curvatures untouched.
    g_n, h_n = StepComputer(loss, data, "newton", clip_gradients=(0.1, 0.9))(raw)
    _, h_plain = StepComputer(loss, data, "newton")(raw)
    np.testing.assert_allclose(g_n, expected, rtol=1e-12)
    np.testing.assert_array_equal(h_n, h_plain)


def test_clip_gradients_limits_the_pull_of_an_outlier():
    rng = np.random.default_rng(15)
    X = rng.uniform(-3, 3, size=(1000, 1))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=1000)
    y[np.argmin(np.abs(X[:, 0]))] = 1e4  # one giant outlier at x = 0
    near = np.linspace(-0.2, 0.2, 41).reshape(-1, 1)

    def run(clip):
        fe = fit_boosting(squared_loss, [np.median(y)], X, {"y": torch.as_tensor(y)},
                          params=EngineParams(n_estimators=100, learning_rate=0.1, step="newton",
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
                           params=EngineParams(n_estimators=50, learning_rate=0.1, step=step,
                                               random_state=0))
        for step in ("newton", "gradient")
    }
    assert fits["newton"].stopped_reason == "n_estimators"
    np.testing.assert_array_equal(fits["newton"].predict_raw(X), fits["gradient"].predict_raw(X))
    train = fits["newton"].evals_result_["train"]["loss"]
    assert train[-1] < 0.6 * train[0]
