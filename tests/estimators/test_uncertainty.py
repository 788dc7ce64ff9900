"""predict_uncertainty's members: the fold models of a cross-validated fit, the virtual
ensemble of the trajectory; saved and loaded; the documented errors."""

import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

import distboost as db
from distboost.estimators.uncertainty import FoldMember, member_rounds


def _sparse_region(n, seed):
    """y = sin 4x + 0.3 noise with 2 % of the rows in x in [1, 2] (docs/benchmarks.md,
    "Conformal calibration", part d), and 300 new dense and 300 new sparse rows."""
    rng = np.random.default_rng(seed)
    n_sparse = max(n // 50, 1)
    x = np.r_[rng.uniform(0, 1, n - n_sparse), rng.uniform(1, 2, n_sparse)]
    X = np.c_[x, rng.normal(size=n)]
    y = np.sin(4 * x) + 0.3 * rng.normal(size=n)
    X_new = np.c_[np.r_[rng.uniform(0, 1, 300), rng.uniform(1, 2, 300)], rng.normal(size=600)]
    return X, y, X_new


@pytest.fixture(scope="module")
def small():
    X, y, X_new = _sparse_region(500, 0)
    return db.DistributionalRegressor(random_state=0).fit(X, y), X_new


def test_a_cross_validated_fit_keeps_its_fold_models_and_they_rank_sparse_rows_first(small):
    # At 500 rows the virtual ensemble ranked the sparse rows below the dense ones (AUROC
    # 0.41): its 35 rounds' late trees move the dense region most.  The five fold models,
    # fitted anyway to choose the rounds, disagree where the rows are few.
    model, X_new = small
    assert model.early_stopping_ == "cv"
    assert len(model.cv_members_) == 5
    assert all(isinstance(m, FoldMember) for m in model.cv_members_)
    frame = model.predict_uncertainty(X_new)
    np.testing.assert_allclose(frame["total"], frame["aleatoric"] + frame["epistemic"])
    sparse = np.r_[np.zeros(300), np.ones(300)]
    assert roc_auc_score(sparse, frame["epistemic"]) >= 0.75
    folds = model.predict_uncertainty(X_new, members="folds")
    np.testing.assert_array_equal(folds.to_numpy(), frame.to_numpy())


def test_fold_members_are_the_models_the_calibration_saw(small):
    # Each member predicts with the fit's dispersion shift on its own trees and starts: the
    # members' mean of means lies near the refit's mean (the same rounds, 80 % of the rows),
    # and each member differs from the refit.
    model, X_new = small
    means = np.stack([m.model(model).predict(X_new) for m in model.cv_members_])
    dense = slice(0, 300)
    full = model.predict(X_new)
    assert np.abs(means[:, dense].mean(axis=0) - full[dense]).mean() < 0.05
    assert all(np.abs(m - full).max() > 0 for m in means)


def test_virtual_members_stay_available_and_are_the_trajectory(small):
    model, X_new = small
    frame = model.predict_uncertainty(X_new, n_members=4, members="virtual")
    rounds = member_rounds(model.best_iteration_, 4)
    means = np.stack([model.predict_dist(X_new, iteration=r).mean for r in rounds])
    np.testing.assert_allclose(frame["epistemic"], means.var(axis=0), rtol=1e-12)


def test_fold_members_are_saved_and_loaded(small, tmp_path):
    model, X_new = small
    model.save(tmp_path / "m.json")
    back = db.load(tmp_path / "m.json")
    assert len(back.cv_members_) == 5
    np.testing.assert_array_equal(back.predict_uncertainty(X_new).to_numpy(),
                                  model.predict_uncertainty(X_new).to_numpy())


def test_a_held_out_fit_has_no_fold_models_and_uses_the_virtual_ensemble():
    X, y, X_new = _sparse_region(200, 1)
    model = db.DistributionalRegressor(n_estimators=20, early_stopping="holdout",
                                       random_state=0).fit(X, y)
    assert model.cv_members_ is None
    np.testing.assert_array_equal(model.predict_uncertainty(X_new).to_numpy(),
                                  model.predict_uncertainty(X_new, members="virtual").to_numpy())


def test_per_parameter_stopping_members_keep_their_own_rounds():
    # Under per-parameter stopping each fold model keeps the refit's joint round for the
    # dispersion and, for the location, that round plus the rounds the fold's location
    # gained on its own: the refit's location rounds are the joint round plus the folds'
    # mean gain (five folds of 60 rows, equal weights).  On these data two folds' locations
    # gain rounds; on other seeds none may (then every member keeps the joint round, which
    # the same equality checks).  A model without per-parameter stopping keeps the chosen
    # joint round in every fold model.
    X, y, _ = _sparse_region(300, 2)
    model = db.DistributionalRegressor(per_parameter_stopping=True, random_state=0).fit(X, y)
    joint = int(model.ensemble_.best_iterations_.min())
    rounds = np.stack([m.ensemble.best_iterations_ for m in model.cv_members_])
    assert (rounds[:, 1] == joint).all()  # the scale
    assert (rounds[:, 0] >= joint).all()  # the location: the joint round and its own gain
    gain = rounds[:, 0] - joint
    assert model.ensemble_.best_iterations_[0] == joint + np.rint(gain.mean())
    model = db.DistributionalRegressor(per_parameter_stopping=False, random_state=0).fit(X, y)
    assert all(m.ensemble.best_iterations_ is None for m in model.cv_members_)
    assert {m.ensemble.best_iteration_ for m in model.cv_members_} == {model.best_iteration_}


def test_classifiers_keep_no_fold_models():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] + rng.normal(size=120) > 0).astype(int)
    model = db.DistributionalClassifier(n_estimators=10, random_state=0).fit(X, y)
    assert model.cv_members_ is None


@pytest.mark.slow
def test_the_epistemic_variance_shrinks_as_the_data_grow():
    # The "500 vs 20,000 rows": fold models at 500 (cross-validated rounds), the
    # virtual ensemble at 20,000 (held-out rounds); the dense rows' epistemic variance falls.
    dense = slice(0, 300)
    out = []
    for n in (500, 20_000):
        X, y, X_new = _sparse_region(n, 4)
        model = db.DistributionalRegressor(random_state=0).fit(X, y)
        out.append(model.predict_uncertainty(X_new)["epistemic"].to_numpy()[dense].mean())
    assert out[1] < out[0] / 2


ERRORS = {
    "predict_uncertainty with an unknown members": (
        "bags", r"members must be one of \['auto', 'randomized', 'folds', 'virtual'\], got "
        "'bags'"),
    "predict_uncertainty(members=\"folds\") without fold models": (
        "folds", "members='folds' needs the fold models of a fit that chose its rounds"),
    "predict_uncertainty(members=\"randomized\") without epistemic_members": (
        "randomized", r"members='randomized' needs the members a fit with "
        r"epistemic_members=M trains .* fitted with epistemic_members=0"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_members_raise_the_documented_error(case):
    X, y, X_new = _sparse_region(100, 5)
    model = db.DistributionalRegressor(n_estimators=5, early_stopping=False).fit(X, y)
    members, pattern = ERRORS[case]
    with pytest.raises(ValueError, match=pattern):
        model.predict_uncertainty(X_new, members=members)


def test_small_data_members_bring_their_fold_models():
    X, y, X_new = _sparse_region(200, 6)
    model = db.DistributionalRegressor(epistemic_members=2, random_state=0).fit(X, y)
    assert model.early_stopping_ == "cv" and len(model.epistemic_members_) == 2 * (1 + 5)
    assert len({m.dispersion_shift for m in model.epistemic_members_}) <= 2  # per member fit
    frame = model.predict_uncertainty(X_new)
    assert (frame["epistemic"] > 0).all() and np.isfinite(frame.to_numpy()).all()


def test_epistemic_members_for_a_vector_family_fail_before_any_fit():
    Y = np.random.default_rng(0).normal(size=(50, 2))
    model = db.DistributionalRegressor(family="multivariate_normal", epistemic_members=3)
    with pytest.raises(ValueError, match=r"epistemic_members=3 trains members for "
                       r"predict_uncertainty, which needs a scalar regression family"):
        model.fit(Y[:, :1], Y)
    assert not hasattr(model, "ensemble_")


def _hole(n, seed):
    """Two features uniform on [-2, 2]^2 but for a hole, max |x| < 0.7, that keeps 2 % of
    its share of the rows (docs/benchmarks.md, part d's "hole"), and 300 new rows outside
    the hole, then 300 inside."""
    rng = np.random.default_rng(seed)
    pts = rng.uniform(-2, 2, size=(20 * n, 2))
    inside = np.abs(pts).max(axis=1) < 0.7
    X = pts[~inside | (rng.uniform(size=len(pts)) < 0.02)][:n]
    y = np.sin(2 * X[:, 0]) + np.cos(2 * X[:, 1]) + 0.3 * rng.normal(size=len(X))
    new = rng.uniform(-2, 2, size=(20_000, 2))
    new_in = np.abs(new).max(axis=1) < 0.7
    return X, y, np.r_[new[~new_in][:300], new[new_in][:300]]


@pytest.fixture(scope="module")
def holed():
    X, y, X_new = _hole(2_000, 7)
    opts = dict(n_estimators=150, learning_rate=0.2, early_stopping=False, random_state=0)
    return (db.DistributionalRegressor(**opts).fit(X, y),
            db.DistributionalRegressor(epistemic_members=6, **opts).fit(X, y), X, y, X_new)


def test_randomized_members_see_a_hole_the_trajectory_does_not(holed):
    # Inside the hole the few rows give a few bin boundaries: the virtual ensemble's
    # members share one trajectory's choice among them, randomised members each draw one.
    plain, model, _, _, X_new = holed
    truth = np.r_[np.zeros(300), np.ones(300)]
    virtual = plain.predict_uncertainty(X_new)["epistemic"]
    randomized = model.predict_uncertainty(X_new)  # "auto": the randomised members
    assert len(model.epistemic_members_) == 6 and model.cv_members_ is None
    assert roc_auc_score(truth, randomized["epistemic"]) > 0.8
    assert roc_auc_score(truth, randomized["epistemic"]) > roc_auc_score(truth, virtual) + 0.1
    np.testing.assert_allclose(randomized["total"],
                               randomized["aleatoric"] + randomized["epistemic"])
    np.testing.assert_array_equal(  # the model itself is the plain fit, members beside it
        model.predict_dist(X_new).mean, plain.predict_dist(X_new).mean)


def test_randomized_members_are_seeded_saved_and_loaded(holed, tmp_path):
    _, model, X, y, X_new = holed
    frame = model.predict_uncertainty(X_new, members="randomized")
    again = db.DistributionalRegressor(**{**model.get_params()}).fit(X, y)
    np.testing.assert_array_equal(again.predict_uncertainty(X_new).to_numpy(),
                                  frame.to_numpy())  # the same random_state, the same members
    model.save(tmp_path / "m")
    back = db.load(tmp_path / "m")
    np.testing.assert_allclose(back.predict_uncertainty(X_new).to_numpy(), frame.to_numpy(),
                               rtol=1e-12, atol=0)
    shifts = {m.dispersion_shift for m in model.epistemic_members_}
    assert None not in shifts  # each member predicts with its own fit's shift


def test_the_errors_page_lists_the_members_cases():
    page = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    section = page.split("## Uncertainty members")[1].split("\n## ")[0]
    rows = {r.strip() for r in re.findall(r"^\| ([^|]+?) \|", section, flags=re.M)}
    assert set(ERRORS) <= rows
