"""Tests of distboost.estimators.dispersion_shift: the dispersion shift and its search."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import distboost as db


def test_calibration_makes_validation_z_scores_unit_variance():
    """Normal: the optimal shift of log(scale) on the validation rows is log sqrt(mean z^2)."""
    from distboost.estimators.dispersion_shift import best_dispersion_shift

    rng = np.random.default_rng(0)
    X = rng.uniform(-3, 3, size=(1500, 3))
    y = np.sin(X[:, 0]) * 3 + rng.normal(size=1500) * (0.3 + 0.2 * np.abs(X[:, 1]))
    X_val, y_val = X[1000:], y[1000:]
    # Large trees of small leaves at a high learning rate: miscalibrated on new rows.
    raw = db.DistributionalRegressor(calibrate=False, n_estimators=300, learning_rate=0.3,
                                     num_leaves=31, min_child_samples=5, random_state=0)
    raw.fit(X[:1000], y[:1000], eval_set=(X_val, y_val))
    assert raw.dispersion_shift_ == 0.0
    p = raw.predict_params(X_val)
    z2 = np.mean(((y_val - p["loc"]) / p["scale"]) ** 2)
    before = raw.score(X_val, y_val)

    def loss(r, data):
        return raw.family_.nll(r, data["y"])

    shift, _ = best_dispersion_shift(loss, raw.predict_raw(X_val),
                                     {"y": torch.as_tensor(y_val)}, None, 1)
    assert shift == pytest.approx(0.5 * np.log(z2), abs=1e-3)
    assert abs(shift) > 0.02  # a real correction, not a no-op
    raw.dispersion_shift_ = shift  # what calibrate=True stores; predictions apply it
    pc = raw.predict_params(X_val)
    np.testing.assert_allclose(pc["loc"], p["loc"])
    np.testing.assert_allclose(pc["scale"], p["scale"] * np.exp(shift))
    assert raw.score(X_val, y_val) > before


@pytest.mark.parametrize("true_shift, center, weighted", [
    (0.13, 0.0, False), (1.7, 0.0, False), (-2.2, 0.5, True), (0.0, -1.0, False),
    (0.13, 0.19, False), (0.13, 0.07, True),  # warm starts near, not at, the optimum
])
def test_best_dispersion_shift_matches_brent(true_shift, center, weighted):
    from scipy.optimize import minimize_scalar

    from distboost.estimators.dispersion_shift import best_dispersion_shift

    rng = np.random.default_rng(1)
    fam = db.families.get("laplace")
    raw = np.column_stack([rng.normal(size=400), rng.normal(scale=0.3, size=400)])
    params = fam.params_from_raw(torch.as_tensor(raw + [0.0, true_shift]))
    y = fam.sample(params, 1, 0)[0]
    w = rng.uniform(0.2, 2.0, size=400) if weighted else None

    def loss(r, data):
        return fam.nll(r, data["y"])

    delta, value = best_dispersion_shift(loss, raw, {"y": y}, w, 1, center=center)

    def mean_loss(d):
        per_row = loss(torch.as_tensor(raw + [0.0, d]), {"y": y}).numpy()
        return float(np.average(per_row, weights=w))

    ref = minimize_scalar(mean_loss, bounds=(-3, 3), method="bounded",
                          options={"xatol": 1e-8})
    assert delta == pytest.approx(ref.x, abs=1e-3)
    # The vertex of a parabola on a fine grid, not an exact evaluation.
    assert value == pytest.approx(ref.fun, rel=1e-6)
    assert value == pytest.approx(mean_loss(delta), rel=1e-6)


def test_calibration_of_a_censored_family_is_optimal_on_its_eval_set():
    """Censored rows (bounds of shape (n, 2)) go through the same calibration: after fit, no
    further shift of the dispersion parameter lowers the eval_set's censored NLL."""
    from distboost.estimators.dispersion_shift import best_dispersion_shift

    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 3))
    t = np.exp(1 + X[:, 0] / 2 + rng.normal(size=600) * 0.5)
    c = rng.exponential(8, size=600)
    y = db.censored.right(np.minimum(t, c), (t <= c).astype(int))
    model = db.DistributionalRegressor("censored_lognormal", random_state=0)
    model.fit(X[:450], y[:450], eval_set=(X[450:], y[450:]))
    assert np.isfinite(model.dispersion_shift_) and model.dispersion_shift_ != 0.0

    def loss(raw, data):
        return model.family_.nll(raw, data["y"])

    k = model.family_.param_names.index("scale")
    raw = model.predict_raw(X[450:])  # trees, start, shift and floor
    delta, _ = best_dispersion_shift(loss, raw, {"y": torch.as_tensor(y[450:])}, None, k)
    assert abs(delta) < 2e-3


@pytest.mark.parametrize("family, weighted, offset", [
    ("normal", False, False), ("normal", True, True), ("lognormal", True, False),
])
def test_the_closed_form_shift_is_the_exact_minimiser_of_the_loss(family, weighted, offset):
    """The Normal's and log-normal's profile in the shift (``Family.dispersion_profile``):
    the value it gives is the mean loss at that shift, the shift is the bounded minimiser
    found by scipy, and the grid search agrees to its resolution."""
    from scipy.optimize import minimize_scalar

    from distboost.estimators.dispersion_shift import DispersionSearch
    from distboost.objective import FamilyObjective

    rng = np.random.default_rng(3)
    n = 300
    fam = db.families.get(family)
    raw = np.column_stack([rng.normal(size=n), rng.normal(-0.4, 0.3, size=n)])
    y = fam.sample(fam.params_from_raw(torch.as_tensor(raw + [0.0, 0.3])), 1, 0)[0].numpy()
    w = rng.uniform(0.2, 2.0, size=n) if weighted else None
    objective = FamilyObjective(fam, y, w)
    data = objective.data(None, y)
    if offset:  # a linear start's offset: the family sees raw + offset
        data["offset"] = torch.as_tensor(rng.normal(scale=0.1, size=(n, 2)))
    profile = objective.dispersion_profile()
    assert profile is not None
    exact = DispersionSearch(objective.loss, data, w, 1, profile=profile)
    grid = DispersionSearch(objective.loss, data, w, 1)

    def mean_loss(d):
        with torch.no_grad():
            per_row = objective.loss(torch.as_tensor(raw + [0.0, d]), data).numpy()
        return float(np.average(per_row, weights=w))

    delta, value = exact(raw)
    assert value == pytest.approx(mean_loss(delta), rel=1e-12)
    ref = minimize_scalar(mean_loss, bounds=(-3, 3), method="bounded",
                          options={"xatol": 1e-9})
    assert delta == pytest.approx(ref.x, abs=1e-6)
    assert value <= ref.fun + 1e-12
    assert delta == pytest.approx(grid(raw)[0], abs=1e-3)
    assert abs(delta) > 0.1  # a real correction


def test_the_closed_form_shift_leaves_rows_at_a_floor_to_the_grid_search():
    """A raw scale at its floor (or a shift that would take one there) breaks the closed form:
    the profile is None, or its minimiser out of range, and the grid search decides."""
    from distboost.estimators.dispersion_shift import DispersionSearch
    from distboost.families.continuous import normal_scale_profile

    rng = np.random.default_rng(4)
    fam = db.families.get("normal")
    y = torch.as_tensor(rng.normal(size=50))
    raw = torch.zeros(50, 2, dtype=torch.float64)
    floor = torch.tensor([-np.inf, 0.0])
    assert normal_scale_profile(fam, raw, y, floor) is None  # at the floor
    assert normal_scale_profile(fam, raw, y, torch.tensor([0.0, -5.0])) is None  # loc floor
    low, high = normal_scale_profile(fam, raw, y, torch.tensor([-np.inf, -0.5]))[3]
    assert low == pytest.approx(-0.5) and high > 10

    def loss(r, data):
        floored = torch.maximum(r, torch.tensor([-np.inf, -0.5], dtype=r.dtype))
        return fam.nll(floored, data["y"])

    def profile(r, data):
        return normal_scale_profile(fam, r, data["y"], torch.tensor([-np.inf, -0.5]))

    # y spread 0.01: the best shift (about -4.6) is below the floor's reach (-0.5)
    small = {"y": y * 0.01}
    with_profile = DispersionSearch(loss, small, None, 1, profile=profile)(raw.numpy())
    grid = DispersionSearch(loss, small, None, 1)(raw.numpy())
    assert with_profile == grid
    assert with_profile[0] <= -0.5


def test_only_the_plain_log_score_of_a_profiled_family_uses_the_closed_form():
    from distboost.objective import FamilyObjective

    y = np.random.default_rng(5).gamma(2.0, size=100)
    assert FamilyObjective(db.families.get("normal"), y).dispersion_profile() is not None
    assert FamilyObjective(db.families.get("lognormal"), y).dispersion_profile() is not None
    assert FamilyObjective(db.families.get("normal"), y,
                           scoring_rule="crps").dispersion_profile() is None
    assert FamilyObjective(db.families.get("gamma"), y).dispersion_profile() is None
    assert FamilyObjective(db.families.get("laplace"), y).dispersion_profile() is None
    bounds = db.censored.right(y, np.ones(100, dtype=bool))
    censored = FamilyObjective(db.families.get("censored_lognormal"), bounds)
    assert censored.dispersion_profile() is None
    softplus = db.families.get("normal", links={"scale": "softplus"})
    assert FamilyObjective(softplus, y).dispersion_profile() is None


@pytest.mark.parametrize("family", ["studentt", "laplace", "gumbel"])
def test_a_bracketed_centre_costs_four_shifts_and_gives_the_fine_grids_answer(family):
    """Started at the previous round's shift, the search evaluates the centre, its two
    neighbours and no shift in one call; its answer is the nine-shift grid's (the vertex
    through the same three points of a unimodal loss)."""
    from distboost.estimators.dispersion_shift import _SHIFT_GRID, DispersionSearch

    rng = np.random.default_rng(2)
    fam = db.families.get(family)
    K = len(fam.param_names)
    raw = rng.normal(scale=0.3, size=(500, K))
    k = fam.param_names.index(fam.dispersion_param)
    shifted = raw.copy()
    shifted[:, k] += 0.3
    y = fam.sample(fam.params_from_raw(torch.as_tensor(shifted)), 1, 0)[0]

    calls = []

    class Counted(DispersionSearch):
        def _mean_loss(self, r, deltas):
            calls.append(len(deltas))
            return super()._mean_loss(r, deltas)

    search = Counted(lambda r, d: fam.nll(r, d["y"]), {"y": y}, None, k)
    first, _ = search(raw, 0.0)
    assert 0.1 < first < 0.5
    calls.clear()
    shift, value = search(raw, first + 0.003)  # the next round: a shift nearby
    assert calls == [4]
    fine = first + 0.003 + _SHIFT_GRID / 4.0
    grid = search._mean_loss(torch.as_tensor(raw), np.append(fine, 0.0))
    j = int(np.argmin(grid[:-1]))
    assert j == len(fine) // 2
    expected = DispersionSearch._vertex(fine[j - 1:j + 2], grid[j - 1:j + 2], float(grid[-1]))
    assert shift == pytest.approx(expected[0], rel=1e-12)
    assert value == pytest.approx(expected[1], rel=1e-12)
    calls.clear()
    search(raw, first + 0.2)  # far off: the wider search runs
    assert calls[:2] == [4, 10]
