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
        "members", "members must be 'auto', 'folds' or 'virtual', got 'bags'"),
    "predict_uncertainty(members=\"folds\") without fold models": (
        "folds", "members='folds' needs the fold models of a fit that chose its rounds"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_members_raise_the_documented_error(case):
    X, y, X_new = _sparse_region(100, 5)
    model = db.DistributionalRegressor(n_estimators=5, early_stopping=False).fit(X, y)
    kind, pattern = ERRORS[case]
    with pytest.raises(ValueError, match=pattern):
        model.predict_uncertainty(X_new, members="bags" if kind == "members" else "folds")


def test_the_errors_page_lists_the_members_cases():
    page = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    section = page.split("## Uncertainty members")[1].split("\n## ")[0]
    rows = {r.strip() for r in re.findall(r"^\| ([^|]+?) \|", section, flags=re.M)}
    assert set(ERRORS) <= rows
