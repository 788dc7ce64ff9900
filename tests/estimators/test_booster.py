"""Tests of :class:`distboost.estimators.booster.Booster` (any torch loss, boosted)."""

from __future__ import annotations

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F
from scipy.special import expit, logit
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from distboost.estimators.booster import Booster


def squared(raw, data):
    return 0.5 * (data["y"] - raw[:, 0]) ** 2


def absolute(raw, data):
    return torch.abs(data["y"] - raw[:, 0])


def huber(raw, data, delta=1.0):
    r = torch.abs(data["y"] - raw[:, 0])
    return torch.where(r < delta, 0.5 * r**2, delta * (r - 0.5 * delta))


def bce(raw, data):
    return F.binary_cross_entropy_with_logits(raw[:, 0], data["y"], reduction="none")


def regression(n, seed, noise="t"):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, size=(n, 3))
    f = np.sin(X[:, 0]) + 0.5 * X[:, 1]
    eps = rng.standard_t(2, size=n) * 0.3 if noise == "t" else rng.normal(size=n) * 0.3
    return X, f + eps, f


def mean_loss(loss, raw, y):
    with torch.no_grad():
        return float(loss(torch.as_tensor(raw), {"y": torch.as_tensor(y)}).mean())


# ---------------------------------------------------------------- custom losses
@pytest.mark.parametrize("loss, constant, step", [
    (absolute, np.median, "gradient"),
    (absolute, np.median, "newton"),  # no curvature: newton falls back to the gradient step
    (huber, np.median, "newton"),
    (squared, np.mean, "newton"),
], ids=["absolute-gradient", "absolute-newton", "huber-newton", "squared-newton"])
def test_regression_losses_beat_the_constant_model(loss, constant, step):
    X, y, _ = regression(1500, 0)
    X_te, y_te, _ = regression(3000, 1)
    model = Booster(loss, step=step, n_estimators=150, learning_rate=0.1, num_leaves=8,
                    random_state=0).fit(X, {"y": y})
    const = np.full((len(y_te), 1), constant(y))
    boosted = mean_loss(loss, model.predict_raw(X_te), y_te)
    assert boosted < 0.8 * mean_loss(loss, const, y_te)
    assert model.n_iter_ == 150 and model.stopped_reason_ == "n_estimators"


def test_logistic_loss_beats_the_base_rate_and_starts_at_its_logit():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(2500, 4))
    p = expit(2 * X[:, 0] - X[:, 1] ** 2 + 0.5)
    y = (rng.uniform(size=2500) < p).astype(np.float64)
    model = Booster(bce, n_estimators=80, learning_rate=0.1, num_leaves=8,
                    random_state=0).fit(X[:2000], y[:2000])  # y alone is {"y": y}
    assert model.init_raw_[0] == pytest.approx(logit(y[:2000].mean()), abs=1e-7)
    base = np.full((500, 1), logit(y[:2000].mean()))
    assert mean_loss(bce, model.predict_raw(X[2000:]), y[2000:]) < (
        mean_loss(bce, base, y[2000:]) - 0.15)


def test_constant_start_minimises_the_weighted_mean_loss():
    X, y, _ = regression(300, 3, noise="normal")
    w = np.random.default_rng(3).uniform(0.1, 3.0, size=300)
    model = Booster(squared, n_estimators=1).fit(X, {"y": y}, sample_weight=w)
    assert model.init_raw_[0] == pytest.approx(np.average(y, weights=w), abs=1e-9)
    absolute_model = Booster(absolute, n_estimators=1).fit(X, {"y": y})
    assert absolute_model.init_raw_[0] == pytest.approx(np.median(y), abs=0.02)


def test_squared_loss_with_newton_matches_lightgbm_regression():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(2000, 5))
    # float32-representable targets: LightGBM stores labels as float32.
    y = (2 * X[:, 0] + np.sin(3 * X[:, 1]) + 0.3 * rng.normal(size=2000)).astype(np.float32)
    y = y.astype(np.float64)
    model = Booster(squared, n_estimators=100, learning_rate=0.1, num_leaves=15,
                    random_state=0).fit(X, {"y": y})
    params = {"objective": "regression", "learning_rate": 0.1, "num_leaves": 15,
              "min_data_in_leaf": 20, "verbosity": -1, "deterministic": True,
              "force_row_wise": True, "num_threads": 1, "seed": 0}
    ref = lgb.train(params, lgb.Dataset(X, y, params={"feature_pre_filter": False}),
                    num_boost_round=100)
    X_te = rng.normal(size=(500, 5))
    np.testing.assert_allclose(model.predict_raw(X_te)[:, 0], ref.predict(X_te),
                               rtol=1e-9, atol=1e-9)


# ---------------------------------------------------------------- callback
def test_callback_is_called_once_per_round_with_the_training_raw_scores():
    X, y, _ = regression(400, 5)
    seen = []
    model = Booster(huber, n_estimators=12, subsample=0.7, random_state=0,
                    callback=lambda it, raw: seen.append((it, raw))).fit(X, {"y": y})
    assert [it for it, _ in seen] == list(range(1, 13))
    for it, raw in seen:
        np.testing.assert_allclose(raw, model.predict_raw(X, num_iteration=it), atol=1e-12)


def test_callback_returning_true_stops_training():
    X, y, _ = regression(300, 6)
    model = Booster(squared, n_estimators=100, callback=lambda it, raw: it == 9).fit(X, y)
    assert model.n_iter_ == model.best_iteration_ == 9
    assert model.stopped_reason_ == "callback"


def test_callback_trains_torch_parameters_together_with_the_trees():
    """y = sin(x) + z @ beta: the trees see x, a torch vector beta (updated by Adam in the
    callback, the trees' raw scores held fixed) reads z through ``data``."""
    rng = np.random.default_rng(7)
    n = 1200
    X = rng.uniform(-3, 3, size=(n, 1))
    z = torch.as_tensor(rng.normal(size=(n, 3)))
    beta_true = torch.tensor([1.5, -2.0, 0.5], dtype=torch.float64)
    y = torch.sin(torch.as_tensor(X[:, 0])) + z @ beta_true + 0.1 * torch.randn(
        n, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    beta = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([beta], lr=0.05)
    data = {"y": y, "h": (z @ beta).detach()}

    def loss(raw, d):
        return 0.5 * (d["y"] - raw[:, 0] - d["h"]) ** 2

    def callback(it, raw):
        f = torch.as_tensor(raw[:, 0])
        for _ in range(5):
            opt.zero_grad()
            loss(f[:, None], {"y": y, "h": z @ beta}).mean().backward()
            opt.step()
        with torch.no_grad():
            data["h"].copy_(z @ beta)

    model = Booster(loss, n_estimators=150, learning_rate=0.1, num_leaves=8, random_state=0,
                    callback=callback).fit(X, data)
    np.testing.assert_allclose(beta.detach().numpy(), beta_true.numpy(), atol=0.1)
    grid = np.linspace(-2.5, 2.5, 11).reshape(-1, 1)
    assert np.abs(model.predict_raw(grid)[:, 0] - np.sin(grid[:, 0])).max() < 0.3


# ---------------------------------------------------------------- clipping, early stopping
def test_clip_gradients_makes_the_fit_robust_to_a_giant_outlier():
    X, y, f = regression(1000, 8, noise="normal")
    y = y.copy()
    y[0] = 1e4
    X_te, _, f_te = regression(2000, 9, noise="normal")

    def error(clip):
        model = Booster(squared, n_estimators=100, num_leaves=8, min_child_samples=10,
                        init=[np.median(y)], clip_gradients=clip, random_state=0)
        return np.abs(model.fit(X, y).predict_raw(X_te)[:, 0] - f_te).max()

    plain, clipped = error(None), error((0.05, 0.95))
    assert plain > 10.0 and clipped < 1.5


def test_eval_set_early_stopping_keeps_the_best_round():
    X, y, _ = regression(600, 10)
    X_val, y_val, _ = regression(600, 11)
    model = Booster(squared, n_estimators=500, learning_rate=0.3, n_iter_no_change=10,
                    random_state=0).fit(X, {"y": y}, eval_set=(X_val, {"y": y_val}))
    valid = model.evals_result_["valid"]["loss"]
    assert model.stopped_reason_ == "early_stopping" and model.n_iter_ < 500
    assert model.best_iteration_ == int(np.argmin(valid)) + 1 == model.n_iter_ - 10
    assert mean_loss(squared, model.predict_raw(X_val), y_val) == pytest.approx(min(valid))
    no_stop = Booster(squared, n_estimators=30, learning_rate=0.3, random_state=0).fit(
        X, {"y": y}, eval_set=(X_val, {"y": y_val}))
    assert no_stop.best_iteration_ == no_stop.n_iter_ == 30
    assert len(no_stop.evals_result_["valid"]["loss"]) == 30


def test_auto_round_cap_is_the_large_one_only_with_validation_rows(monkeypatch):
    from distboost.estimators import policy

    # The caps and the row threshold made small, so that a few rounds show the rule.
    monkeypatch.setattr(policy, "AUTO_ROUNDS", 8)
    monkeypatch.setattr(policy, "AUTO_ROUNDS_STOPPED", 25)
    monkeypatch.setattr(policy, "CV_MAX_ROWS", 100)
    X, y, _ = regression(300, 12)
    X_val, y_val, _ = regression(300, 13)
    kw = dict(n_estimators="auto", learning_rate=0.02, random_state=0)
    # No validation rows: nothing stops the fit (whatever the patience), so every one of the
    # small cap's rounds.
    assert Booster(squared, n_iter_no_change=10, **kw).fit(X, {"y": y}).n_iter_ == 8
    # Validation rows and a patience: a slow rate still improving at round 8 goes on to the
    # large cap; without a patience nothing stops it early, so the small cap again.
    stopped = Booster(squared, n_iter_no_change=10, **kw).fit(
        X, {"y": y}, eval_set=(X_val, {"y": y_val}))
    assert stopped.n_iter_ == 25 and stopped.stopped_reason_ == "n_estimators"
    unstopped = Booster(squared, n_iter_no_change=None, **kw).fit(
        X, {"y": y}, eval_set=(X_val, {"y": y_val}))
    assert unstopped.n_iter_ == 8


# ---------------------------------------------------------------- estimator behaviour
def test_same_random_state_gives_identical_predictions():
    X, y, _ = regression(500, 12)

    def run(seed):
        model = Booster(huber, n_estimators=30, subsample=0.6, colsample=0.7,
                        random_state=seed)
        return model.fit(X, {"y": y}).predict_raw(X)

    np.testing.assert_array_equal(run(0), run(0))
    assert not np.array_equal(run(0), run(1))


def test_several_outputs_dataframe_and_feature_importances():
    """K = 2: a Gaussian with boosted mean and log-sd, on a DataFrame."""
    rng = np.random.default_rng(13)
    X = pd.DataFrame({"a": rng.uniform(-3, 3, 1500), "noise": rng.normal(size=1500)})
    y = np.sin(X["a"]) + rng.normal(size=1500) * (0.05 + 0.1 * X["a"] ** 2)

    def gaussian(raw, data):
        return 0.5 * ((data["y"] - raw[:, 0]) * torch.exp(-raw[:, 1])) ** 2 + raw[:, 1]

    model = Booster(gaussian, n_outputs=2, n_estimators=100, num_leaves=8,
                    random_state=0).fit(X, {"y": y})
    assert model.init_raw_ == pytest.approx([y.mean(), np.log(np.std(y.to_numpy()))],
                                            abs=1e-6)  # the Gaussian MLE
    imp = model.feature_importances_
    assert imp.shape == (2, 2) and (imp[:, 0] > imp[:, 1]).all()
    sd = np.exp(model.predict_raw(X)[:, 1])
    assert np.corrcoef(sd, 0.05 + 0.1 * X["a"] ** 2)[0, 1] > 0.8
    assert list(model.feature_names_in_) == ["a", "noise"]


def test_clone_keeps_the_parameters():
    model = Booster(huber, n_outputs=1, clip_gradients=(0.05, 0.95), learning_rate=0.2)
    params = clone(model).get_params()
    assert params["loss"] is huber and params["clip_gradients"] == (0.05, 0.95)
    assert params["learning_rate"] == 0.2


# ---------------------------------------------------------------- errors
X_ERR, Y_ERR, _ = regression(50, 14)


@pytest.mark.parametrize("kwargs, data, match", [
    ({"loss": lambda raw, d: (d["y"] - raw) ** 2}, {"y": Y_ERR[:, None]},
     r"loss returned shape \(50, 1\); expected \(50,\)"),
    ({"loss": lambda raw, d: ((d["y"] - raw[:, 0]) ** 2).mean()}, {"y": Y_ERR},
     r"loss returned shape \(\); expected \(50,\)"),
    ({"loss": lambda raw, d: np.abs(d["y"].numpy() - raw.detach().numpy()[:, 0])},
     {"y": Y_ERR}, "must return a torch Tensor"),
    ({"loss": lambda raw, d: (d["y"] - raw[:, 0].detach()) ** 2}, {"y": Y_ERR},
     "does not depend on raw"),
    ({"loss": lambda raw, d: (d["y"] - raw[:, 1]) ** 2}, {"y": Y_ERR},
     r"shape \(50, 1\) \(n_outputs=1\)"),
    ({"loss": squared, "init": [0.0, 1.0]}, {"y": Y_ERR}, "init has 2 values but n_outputs=1"),
    ({"loss": squared, "init": [np.nan]}, {"y": Y_ERR}, "init has 1 of 1 values that are NaN"),
    ({"loss": squared}, {"y": Y_ERR[:40]}, r"data\['y'\] has 40 rows but X has 50 rows"),
    ({"loss": squared}, {"y": Y_ERR, "w": np.ones(7)}, r"data\['w'\] has 7 rows but X has 50"),
    ({"loss": squared}, {"y": np.where(np.arange(50) < 3, np.nan, Y_ERR)},
     "loss is NaN or infinite at raw = 0 for 3 of 50 rows"),
    ({"loss": squared}, {"y": np.array(["a"] * 50)}, r"data\['y'\] must be numeric"),
    ({"loss": squared, "step": "fisher"}, {"y": Y_ERR}, "needs the expected Fisher"),
    ({"loss": squared, "step": "fisher", "fisher": lambda raw, d: torch.ones(50)},
     {"y": Y_ERR}, r"fisher returned \(50,\); expected a Tensor of shape \(50, 1\)"),
    ({"loss": squared, "clip_gradients": (0.9, 0.1)}, {"y": Y_ERR}, "clip_gradients"),
    ({"loss": squared, "step": "adam"}, {"y": Y_ERR}, "step"),
], ids=["shape-n1", "reduced", "numpy", "detached", "k-mismatch", "init-k", "init-nan",
        "rows-y", "rows-other", "nan-y", "strings", "no-fisher", "fisher-shape", "clip",
        "unknown-step"])
def test_bad_input_raises_a_clear_value_error(kwargs, data, match):
    loss = kwargs.pop("loss")
    with pytest.raises(ValueError, match=match):
        Booster(loss, n_estimators=2, **kwargs).fit(X_ERR, data)


def test_eval_set_errors():
    model = Booster(squared, n_estimators=2)
    with pytest.raises(ValueError, match=r"data of eval_set\['y'\] has 5 rows but X has 10"):
        model.fit(X_ERR, Y_ERR, eval_set=(X_ERR[:10], Y_ERR[:5]))
    with pytest.raises(ValueError, match=r"lacks the key\(s\) \['z'\]"):
        model.fit(X_ERR, {"y": Y_ERR, "z": Y_ERR}, eval_set=(X_ERR[:10], {"y": Y_ERR[:10]}))
    with pytest.raises(ValueError, match="3 features"):
        model.fit(X_ERR, Y_ERR, eval_set=(X_ERR[:10, :2], Y_ERR[:10]))


def test_unfitted_and_wrong_width_at_predict():
    model = Booster(squared)
    with pytest.raises(NotFittedError):
        model.predict_raw(X_ERR)
    with pytest.raises(NotFittedError):
        model.feature_importances_  # noqa: B018
    model.set_params(n_estimators=2).fit(X_ERR, Y_ERR)
    with pytest.raises(ValueError, match="3 features"):
        model.predict_raw(X_ERR[:, :2])


def test_param_options_by_output_position():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = X[:, 0] + np.exp(0.5 * X[:, 1]) * rng.normal(size=300)

    def loss(raw, data):
        return 0.5 * ((data["y"] - raw[:, 0]) * torch.exp(-raw[:, 1])) ** 2 + raw[:, 1]

    model = Booster(loss, n_outputs=2, n_estimators=10,
                       param_options={1: {"num_leaves": 2, "features": [1]}}).fit(X, y)
    parts = model.ensemble_.model.parts
    assert max(t["num_leaves"] for t in parts[1].booster.dump_model()["tree_info"]) == 2
    contrib = model.ensemble_.predict_contrib(X)
    assert np.all(contrib[:, 1, [0, 2]] == 0.0)
    with pytest.raises(ValueError, match=r"its parameters are \[0, 1\]"):
        Booster(loss, n_outputs=2, param_options={"scale": {}}).fit(X, y)
