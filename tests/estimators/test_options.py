"""Tests of distboost.estimators.options: the option table, generated __init__, docs and tree
sizes."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import distboost as db


@pytest.mark.parametrize("n, leaves, min_rows", [
    (10, 4, 5), (221, 7, 7), (553, 12, 12), (1279, 18, 18), (6_000, 31, 20),
    (1_000_000, 31, 20),
])
def test_auto_tree_size_grows_like_sqrt_n(n, leaves, min_rows):
    from distboost.estimators.options import auto_tree_size

    assert auto_tree_size(n) == (leaves, min_rows)


def test_auto_tree_size_is_what_the_trees_get():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(400, 2)), rng.normal(size=400)
    model = db.DistributionalRegressor(n_estimators=5, early_stopping=False).fit(X, y)
    assert (model.num_leaves_, model.min_child_samples_) == (10, 10)
    model = db.DistributionalRegressor(n_estimators=5, num_leaves=3, min_child_samples=40,
                                       early_stopping=False).fit(X, y)
    assert (model.num_leaves_, model.min_child_samples_) == (3, 40)
    # LightGBM honours them: no leaf of the first tree has fewer than 40 rows.
    dump = model.ensemble_.model.booster.dump_model()
    stack, counts = [dump["tree_info"][0]["tree_structure"]], []
    while stack:
        node = stack.pop()
        if "leaf_count" in node:
            counts.append(node["leaf_count"])
        else:
            stack.extend((node["left_child"], node["right_child"]))
    assert 1 < len(counts) <= 3 and min(counts) >= 40




@pytest.mark.parametrize("cls", [db.DistributionalRegressor, db.DistributionalClassifier,
                                 db.VaryingCoefficientRegressor, db.Booster])
def test_generated_init_has_a_real_signature_and_stores_only(cls):
    sig = inspect.signature(cls)
    assert all(p.kind is not p.VAR_POSITIONAL for p in sig.parameters.values())
    names = list(sig.parameters)
    assert names == list(cls._options)
    first = sig.parameters[names[0]]
    assert first.kind is first.POSITIONAL_OR_KEYWORD
    assert all(sig.parameters[n].kind is first.KEYWORD_ONLY for n in names[1:])
    est = cls(lambda raw, data: raw[:, 0]) if cls is db.Booster else cls()
    assert set(vars(est)) == set(names)  # __init__ stores its arguments and nothing else
    for name in names[1:]:
        assert getattr(est, name) == sig.parameters[name].default


@pytest.mark.parametrize("cls", [db.DistributionalRegressor, db.DistributionalClassifier,
                                 db.VaryingCoefficientRegressor, db.Booster])
def test_every_option_is_documented_with_its_default(cls):
    doc = cls.__doc__
    assert "{parameters}" not in doc
    for name, p in inspect.signature(cls).parameters.items():
        assert f"{name} : " in doc, name
        assert f"default={p.default!r}" in doc, name


def test_class_defaults_differ_where_declared():
    assert db.DistributionalClassifier().learning_rate == 0.1
    assert db.DistributionalRegressor().learning_rate == 0.05
    assert db.VaryingCoefficientRegressor().num_leaves == 8
    assert db.Booster(lambda raw, data: raw[:, 0]).n_iter_no_change is None


def test_constraints_come_from_the_table():
    with pytest.raises(ValueError, match="learning_rate"):
        db.DistributionalRegressor(learning_rate=-1.0).fit(np.zeros((5, 1)), np.arange(5.0))
    with pytest.raises(ValueError, match="family"):
        db.DistributionalClassifier(family="normal").fit(np.zeros((4, 1)), [0, 1, 0, 1])


@pytest.mark.parametrize("cls", [db.DistributionalRegressor, db.DistributionalClassifier,
                                 db.VaryingCoefficientRegressor, db.Booster])
def test_lightgbm_options_and_param_options_on_every_estimator(cls):
    from distboost.estimators.tree_options import LIGHTGBM_OPTIONS

    assert set(LIGHTGBM_OPTIONS) <= set(cls._options)
    assert "param_options" in cls._options


def test_engine_params_keep_one_booster_unless_parameters_differ():
    from distboost.estimators.tree_options import resolve_tree_options

    X = np.zeros((50, 2))
    model = db.DistributionalRegressor(min_split_gain=0.5,
                                       param_options={"scale": {"learning_rate": 0.05}})
    opts = resolve_tree_options(model, X, np.arange(2), ["loc", "scale"], ["loc", "scale"])
    params = model._engine_params("fisher", 50, 0, tree_options=opts)
    assert params.per_parameter is None and params.min_split_gain == 0.5  # 0.05 is shared
    model.set_params(param_options={"scale": {"learning_rate": 0.01, "features": [1]}})
    opts = resolve_tree_options(model, X, np.arange(2), ["loc", "scale"], ["loc", "scale"])
    params = model._engine_params("fisher", 50, 0, tree_options=opts)
    (loc, loc_cols), (scale, scale_cols) = params.per_parameter
    assert loc_cols is None and loc.learning_rate == 0.05
    assert scale_cols == (1,) and scale.learning_rate == 0.01 and scale.min_split_gain == 0.5


def test_auto_round_cap_is_large_only_where_early_stopping_ends_a_large_fit():
    from distboost.estimators.options import (
        AUTO_ROUNDS,
        AUTO_ROUNDS_STOPPED,
        engine_params,
        resolve_n_estimators,
    )
    from distboost.estimators.rounds import CV_MAX_ROWS

    assert (AUTO_ROUNDS, AUTO_ROUNDS_STOPPED, CV_MAX_ROWS) == (1000, 3000, 1000)
    assert resolve_n_estimators("auto", True, 1000) == 3000
    assert resolve_n_estimators("auto", True, 999) == 1000
    assert resolve_n_estimators("auto", False, 10**6) == 1000
    assert resolve_n_estimators(300, True, 10**6) == resolve_n_estimators(300, False, 5) == 300
    model = db.DistributionalRegressor()
    assert model.n_estimators == "auto"
    # The fit's runs: validation rows with a patience, validation rows without one (every
    # round is grown and the best kept), no validation rows.
    assert model._engine_params("fisher", 2000, 0, n_iter_no_change=20).n_estimators == 3000
    assert model._engine_params("fisher", 500, 0, n_iter_no_change=20).n_estimators == 1000
    assert model._engine_params("fisher", 2000, 0, n_iter_no_change=None).n_estimators == 1000
    model.set_params(n_estimators=70)
    assert model._engine_params("fisher", 2000, 0, n_iter_no_change=20).n_estimators == 70
    assert engine_params(2000).n_estimators == 1000
    # The other estimators keep their integer defaults.
    assert db.DistributionalClassifier().n_estimators == 100
    assert db.Booster(lambda raw, data: raw.sum()).n_estimators == 100


def test_auto_round_cap_reaches_the_fit_and_its_stop_line(monkeypatch, capsys):
    from distboost.estimators import policy

    # The caps and the row threshold made small, so that the wiring is tested in a few
    # rounds on a few rows.
    monkeypatch.setattr(policy, "AUTO_ROUNDS", 30)
    monkeypatch.setattr(policy, "AUTO_ROUNDS_STOPPED", 200)
    monkeypatch.setattr(policy, "CV_MAX_ROWS", 100)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 1))
    y = np.sin(6 * X[:, 0]) + 0.01 * rng.normal(size=300)
    # early_stopping=False: "auto" grows AUTO_ROUNDS rounds.
    model = db.DistributionalRegressor(early_stopping=False, random_state=0).fit(X, y)
    assert model.n_iter_ == 30
    # Early stopping: the location of this smooth target is still improving at round 30, so
    # the fit goes past it, up to the larger cap, which the stop line names.
    model = db.DistributionalRegressor(early_stopping="holdout", learning_rate=0.02,
                                       verbose=1, random_state=0).fit(X, y)
    assert 30 < model.n_iter_ <= 200
    out = capsys.readouterr().out
    assert model.n_iter_ < 200 or "the cap n_estimators=200 was reached" in out
    # Fewer training rows than the threshold: the small cap.
    model = db.DistributionalRegressor(early_stopping="holdout", learning_rate=0.02,
                                       random_state=0).fit(X[:90], y[:90])
    assert model.n_iter_ <= 30
