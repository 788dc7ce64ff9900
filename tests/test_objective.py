"""Tests of distboost.objective: a family made into the engine's objective."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import distboost as db
from distboost.objective import FamilyObjective, floored_start, raw_floor, slope_mask


def _normal_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-2, 2, size=(n, 2))
    y = 2.0 * X[:, 0] + rng.normal(size=n) * (0.5 + 0.4 * np.abs(X[:, 1]))
    return X, y


def test_start_values_are_the_marginal_mle_on_the_raw_scale():
    _, y = _normal_data()
    fam = db.families.get("normal")
    obj = FamilyObjective(fam, y)
    assert obj.init_params["loc"] == pytest.approx(y.mean())
    assert obj.init_params["scale"] == pytest.approx(y.std())
    np.testing.assert_allclose(obj.init_raw, [y.mean(), np.log(y.std())])
    assert obj.n_outputs == 2
    assert obj.raw_floor[0] == -np.inf and np.isfinite(obj.raw_floor[1])


def test_loss_is_the_floored_nll_with_the_offset():
    _, y = _normal_data()
    fam = db.families.get("normal")
    obj = FamilyObjective(fam, y)
    raw = torch.as_tensor(np.column_stack([np.zeros_like(y), np.full_like(y, -50.0)]))
    offset = torch.as_tensor(np.column_stack([y, np.zeros_like(y)]))
    data = {**obj.data(None, y), "offset": offset}
    floored = torch.as_tensor(np.column_stack([y, np.full_like(y, obj.raw_floor[1])]))
    np.testing.assert_allclose(obj.loss(raw, data).numpy(),
                               fam.nll(floored, torch.as_tensor(y)).numpy())


def test_constant_target_warns_and_floors():
    fam = db.families.get("normal")
    y = np.full(50, 3.0)
    with pytest.warns(UserWarning, match="constant"):
        params, init_raw, floor = floored_start(fam, fam.init(y), y)
    assert params["scale"] == pytest.approx(3e-6)
    np.testing.assert_allclose(floor, raw_floor(fam, y))
    assert init_raw[1] == pytest.approx(np.log(3e-6))


def test_slope_mask_leaves_the_dispersion_constant():
    np.testing.assert_array_equal(slope_mask(db.families.get("normal")), [1.0, 0.0])
    np.testing.assert_array_equal(slope_mask(db.families.get("poisson")), [1.0])


def test_crps_objective_is_the_familys_closed_form():
    _, y = _normal_data()
    fam = db.families.get("normal")
    obj = FamilyObjective(fam, y, scoring_rule="crps")
    raw = np.tile(obj.init_raw, (y.size, 1))
    loss = obj.loss(torch.as_tensor(raw), obj.data(None, y)).numpy()
    ref = db.metrics.crps_normal(y, np.full_like(y, obj.init_params["loc"]),
                                 np.full_like(y, obj.init_params["scale"]))
    np.testing.assert_allclose(loss, ref, rtol=1e-10)


def test_crps_training_beats_the_marginal_on_crps():
    X, y = _normal_data(800)
    model = db.DistributionalRegressor(scoring_rule="crps", n_estimators=150,
                                       early_stopping=False, random_state=0).fit(X[:600], y[:600])
    assert model.step_ == "newton"
    dist = model.predict_dist(X[600:])
    marginal = db.Predictive.from_params(
        "normal", loc=np.full(200, y[:600].mean()), scale=np.full(200, y[:600].std()))
    assert dist.crps(y[600:]).mean() < 0.7 * marginal.crps(y[600:]).mean()
    assert model.evals_result_["train"]["crps"][-1] < model.evals_result_["train"]["crps"][0]


def test_crps_needs_a_closed_form_and_a_metric():
    X, y = _normal_data(100)
    t = db.censored.right(np.exp(y / 4), np.ones(100))
    with pytest.raises(ValueError, match="closed-form CRPS"):
        db.DistributionalRegressor("censored_lognormal", scoring_rule="crps").fit(X, t)
    with pytest.raises(ValueError, match="step='natural' needs the Riemannian metric"):
        db.DistributionalRegressor(scoring_rule="crps", step="natural",
                                   early_stopping=False).fit(X, y)


@pytest.mark.parametrize("step", ["gradient", "newton", "fisher", "natural"])
@pytest.mark.parametrize("family", ["normal", "gamma", "censored_lognormal", "studentt"])
def test_grad_hess_is_a_pure_per_row_function(family, step):
    """What a distributed worker needs: a row's (grad, hess) depends on that row only."""
    rng = np.random.default_rng(7)
    fam = db.families.get(family)
    n = 60
    y = rng.gamma(2.0, 1.0, size=n)
    if fam.param_names == ("df", "loc", "scale"):
        y = y - 2.0
    if family.startswith("censored"):
        y = db.censored.right(y, rng.integers(0, 2, size=n))
    obj = FamilyObjective(fam, y)
    raw = obj.init_raw + rng.normal(scale=0.3, size=(n, obj.n_outputs))
    w = rng.uniform(0.5, 2.0, size=n)
    scale = np.full(obj.n_outputs, 1.7)
    g, h = obj.grad_hess(y, raw, step, sample_weight=w, curvature_scale=scale)
    assert g.shape == h.shape == (n, obj.n_outputs) and np.isfinite(g).all()
    part = rng.permutation(n)[:23]
    g2, h2 = obj.grad_hess(y[part], raw[part], step, sample_weight=w[part],
                           curvature_scale=scale)
    np.testing.assert_allclose(g2, g[part], rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(h2, h[part], rtol=1e-13, atol=1e-300)


def test_closed_form_derivatives_equal_autograd_with_offset_and_floor():
    """The Normal's closed form (Family.raw_derivatives) gives the same step as autograd of
    the floored loss, also for rows below the scale floor and with a linear-start offset."""
    rng = np.random.default_rng(3)
    _, y = _normal_data(200)
    obj = FamilyObjective(db.families.get("normal"), y)
    derivatives = obj.derivatives()
    assert derivatives is not None
    raw = torch.as_tensor(obj.init_raw + rng.normal(scale=0.5, size=(200, 2)))
    raw[:10, 1] = obj.raw_floor[1] - 1.0  # below the floor
    data = {**obj.data(None, y), "offset": torch.as_tensor(rng.normal(size=(200, 2)) * 0.1)}
    data["offset"][:10, 1] = 0.0
    for step in ("gradient", "fisher", "natural"):
        callables = obj.engine_callables(step, 0)
        fast = db.boosting.derivatives.step_derivatives(
            obj.loss, raw, data, step, fisher=callables.get("fisher"),
            derivatives=callables["derivatives"], curvature_scale=np.ones(2))
        slow = db.boosting.derivatives.step_derivatives(
            obj.loss, raw, data, step, fisher=obj.fisher(0), curvature_scale=np.ones(2))
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert obj.derivatives.__func__ is FamilyObjective.derivatives
    links = FamilyObjective(db.families.get("normal", links={"scale": "sigmoid12"}), y)
    assert links.derivatives() is None  # a link without a closed-form derivative
    assert FamilyObjective(db.families.get("normal"), y, scoring_rule="crps").derivatives() is None


def test_normal_closed_form_with_a_floor_equals_autograd_of_the_floored_nll():
    rng = np.random.default_rng(11)
    fam = db.families.get("normal")
    raw = torch.as_tensor(rng.normal(size=(300, 2)))
    y = torch.as_tensor(rng.normal(size=300))
    floor = torch.tensor([-np.inf, 0.2])  # about 40 % of the scale scores lie below it
    loss, grad, fisher = fam.raw_derivatives(raw, y, floor)
    r = raw.clone().requires_grad_(True)
    ref = fam.nll(torch.maximum(r, floor), y)
    (g,) = torch.autograd.grad(ref.sum(), r)
    np.testing.assert_allclose(loss.numpy(), ref.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(fisher.numpy(),
                               fam.fisher_information(torch.maximum(raw, floor)).numpy(),
                               rtol=1e-12)
    assert (raw[:, 1] < 0.2).sum() > 50
    # A floor on loc takes the general chain rule, equal to autograd too.
    floor = torch.tensor([0.0, 0.2], dtype=torch.float64)
    _, grad, _ = fam.raw_derivatives(raw, y, floor)
    (g,) = torch.autograd.grad(fam.nll(torch.clamp(r, min=floor), y).sum(), r)
    np.testing.assert_allclose(grad.numpy(), g.numpy(), rtol=1e-12, atol=1e-15)


def test_a_fit_derives_log_y_factorial_once_per_target_not_every_round(monkeypatch):
    """The objective's targets carry what a family derives from them alone (issue 48: the
    process-wide store of such terms replaced by the fit's own data)."""
    import torch

    import distboost as db

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3))
    y = rng.poisson(np.exp(1 + X[:, 0])).astype(float)
    lgamma = torch.lgamma
    counts = []
    for rounds in (5, 40):
        calls = []
        monkeypatch.setattr(torch, "lgamma", lambda x, calls=calls: calls.append(1) or lgamma(x))
        db.DistributionalRegressor(family="poisson", n_estimators=rounds, early_stopping=False,
                                   random_state=0).fit(X, y)
        counts.append(len(calls))
    assert counts[0] == counts[1] <= 4
