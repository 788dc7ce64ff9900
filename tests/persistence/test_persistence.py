"""Tests of distboost.persistence: safe save/load, versioning, corruption, pickle."""

from __future__ import annotations

import json
import pickle
import re

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.tree import DecisionTreeRegressor

import distboost as db
from distboost.persistence import FORMAT_VERSION


@pytest.fixture(scope="module")
def fitted():
    # Cross-validated rounds, a categorical column and a link override; without the linear
    # start (its choice on the folds is most of a fit's time here): a linear start's round
    # trip, bit for bit, is test_linear_start_round_trips.
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=600), "g": pd.Categorical(rng.choice(["a", "b"], 600))})
    y = np.exp(X["x"] + (X["g"] == "a") + rng.normal(size=600) * 0.3)
    model = db.DistributionalRegressor(family="gamma", n_estimators=60, early_stopping=True,
                                       linear_start=False, links={"rate": "softplus"},
                                       random_state=0).fit(X, y)
    return model, X, y


def test_round_trip_is_bit_identical(fitted, tmp_path):
    model, X, y = fitted
    path = tmp_path / "model.json"
    model.save(path)
    back = db.load(path)
    pd.testing.assert_frame_equal(back.predict_params(X), model.predict_params(X),
                                  check_exact=True)
    np.testing.assert_array_equal(back.predict_quantiles(X, [0.1, 0.9]),
                                  model.predict_quantiles(X, [0.1, 0.9]))
    assert back.family_.links["rate"].name == "softplus"
    assert back.get_params() == {**model.get_params(), "family": "gamma"}
    assert back.best_iteration_ == model.best_iteration_
    assert back.score(X, y) == model.score(X, y)
    # Unseen categories and column checks survive the round trip.
    with pytest.raises(ValueError, match="feature names"):
        back.predict(X.rename(columns={"x": "z"}))


def test_loading_executes_nothing(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "model.json"
    model.save(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "distboost-model" and doc["format_version"] == FORMAT_VERSION
    assert "tree" in doc["state"]["ensemble_"]["model"]  # LightGBM's own text format


def test_newer_format_version_is_refused(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "model.json"
    model.save(path)
    doc = json.loads(path.read_text())
    doc["format_version"] = FORMAT_VERSION + 1
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="upgrade distboost"):
        db.load(path)


def test_truncated_and_edited_files_are_refused(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "model.json"
    model.save(path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ValueError, match="not a complete distboost model"):
        db.load(path)
    edited = re.sub(r'"learning_rate": [0-9.]+', '"learning_rate": 0.5', text, count=1)
    assert edited != text
    path.write_text(edited)
    with pytest.raises(ValueError, match="checksum"):
        db.load(path)


def test_other_files_are_refused(tmp_path):
    path = tmp_path / "other.json"
    path.write_text(json.dumps({"hello": 1}))
    with pytest.raises(ValueError, match="not a distboost model file"):
        db.load(path)
    path.write_bytes(b"\x80\x04\x95pickle")
    with pytest.raises(ValueError, match="not a distboost model file"):
        db.load(path)


def test_pickle_and_joblib(fitted, tmp_path):
    model, X, _ = fitted
    back = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    joblib.dump(model, tmp_path / "m.joblib")
    np.testing.assert_array_equal(joblib.load(tmp_path / "m.joblib").predict(X), model.predict(X))


def test_unfitted_and_unsavable_models(tmp_path):
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        db.DistributionalRegressor().save(tmp_path / "m.json")
    X = np.random.default_rng(0).normal(size=(50, 2))
    model = db.DistributionalRegressor(n_estimators=3, base_learner=DecisionTreeRegressor(),
                                     early_stopping=False)
    model.fit(X, X[:, 0])
    with pytest.raises(ValueError, match="pickle or joblib"):
        model.save(tmp_path / "m.json")
    # ...while pickle works for it.
    np.testing.assert_array_equal(pickle.loads(pickle.dumps(model)).predict(X), model.predict(X))


def test_linear_start_round_trips(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=120), "g": pd.Categorical(rng.choice(["u", "v"], 120))})
    y = 3.0 * X["a"].to_numpy() + (X["g"] == "u") + rng.normal(size=120)
    model = db.DistributionalRegressor(n_estimators=20, random_state=0).fit(X, y)
    assert model.linear_start_ is not None and model.early_stopping_ == "cv"
    model.save(tmp_path / "m.json")
    loaded = db.load(tmp_path / "m.json")
    assert loaded.early_stopping_ == "cv"
    pd.testing.assert_frame_equal(loaded.predict_params(X), model.predict_params(X),
                                  check_exact=True)


def _assert_round_trip(model, X, tmp_path, name="m.json"):
    path = tmp_path / name
    model.save(path)
    back = db.load(path)
    assert type(back) is type(model)
    pd.testing.assert_frame_equal(back.predict_params(X), model.predict_params(X),
                                  check_exact=True)
    return back


def test_truncated_family_round_trips(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 2))
    y = np.abs(X[:, 0] + rng.normal(size=400))
    family = db.families.Truncated("normal", low=0.0)
    model = db.DistributionalRegressor(family=family, n_estimators=15, early_stopping=False,
                                       random_state=0).fit(X, y)
    back = _assert_round_trip(model, X, tmp_path)
    assert back.family_.get_state() == model.family_.get_state()
    assert back.get_params()["family"].get_state() == family.get_state()


def test_varying_coefficient_model_round_trips(tmp_path):
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"a": rng.normal(size=300), "b": rng.uniform(-1, 1, size=300),
                      "c": rng.normal(size=300)})
    y = np.where(X["b"] > 0, 2.0, -1.0) * X["a"] + rng.normal(size=300) * 0.3
    model = db.VaryingCoefficientRegressor(linear_features=["a"], effect_modifiers=["b", "c"],
                                           n_estimators=20, early_stopping=False,
                                           random_state=0).fit(X, y)
    back = _assert_round_trip(model, X, tmp_path)
    pd.testing.assert_frame_equal(back.coefficients(X), model.coefficients(X), check_exact=True)
    assert back.effect_modifiers_ == ["b", "c"] and back.linear_features_ == ["a"]


def test_classifier_with_string_labels_round_trips(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(200, 2))
    y = np.where(X[:, 0] + rng.normal(size=200) > 0, "yes", "no")
    model = db.DistributionalClassifier(n_estimators=10, early_stopping=False,
                                        random_state=0).fit(X, y)
    back = _assert_round_trip(model, X, tmp_path)
    np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))


def test_crps_trained_model_round_trips(tmp_path):
    rng = np.random.default_rng(4)
    X = rng.normal(size=(300, 2))
    y = X[:, 0] + rng.normal(size=300)
    model = db.DistributionalRegressor(scoring_rule="crps", n_estimators=10,
                                       early_stopping=False, random_state=0).fit(X, y)
    back = _assert_round_trip(model, X, tmp_path)
    assert back.scoring_rule == "crps" and "crps" in back.evals_result_["train"]


def test_older_format_is_refused_with_a_reason(fitted, tmp_path):
    model, _, _ = fitted
    path = tmp_path / "model.json"
    model.save(path)
    doc = json.loads(path.read_text())
    doc["format_version"] = 1
    doc.pop("sha256")
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="refit and save"):
        db.load(path)


def test_booster_with_a_python_loss_is_not_savable(tmp_path):
    X = np.random.default_rng(0).normal(size=(50, 2))
    model = db.Booster(lambda raw, data: (raw[:, 0] - data["y"]) ** 2, n_estimators=2)
    model.fit(X, {"y": X[:, 0]})
    with pytest.raises(ValueError, match="pickle or joblib"):
        db.persistence.save(model, tmp_path / "m.json")
