"""Tests of distboost.estimators.tree_options: LightGBM's options and ``param_options`` on the
estimators.

Monotone constraints are checked on a grid of the constrained feature (every other feature
held at each row's value), per-parameter tree sizes in the fitted trees themselves, feature
restrictions through exact zeros of the SHAP values, and every bad input against the message
listed in docs/errors.md.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.boosting.lightgbm_backend import LightGBMModel
from distboost.boosting.per_parameter import PerParameterModel

RNG = np.random.default_rng(7)
N = 300
X = pd.DataFrame({"price": RNG.uniform(0, 4, N), "age": RNG.uniform(0, 1, N),
                  "noise": RNG.normal(size=N)})
# loc falls then rises in price (non-monotone), the spread grows with age.
Y = (X["price"] - 2) ** 2 + np.exp(X["age"]) * RNG.normal(size=N)
FAST = {"n_estimators": 40, "early_stopping": False, "random_state": 0}


def _leaves(booster) -> int:
    return max(t["num_leaves"] for t in booster.dump_model()["tree_info"])


def test_monotone_constraint_holds_on_a_grid():
    model = db.DistributionalRegressor(
        **FAST, param_options={"loc": {"monotone_constraints": {"price": 1}}}).fit(X, Y)
    grid = np.linspace(-1, 5, 61)
    rows = X.iloc[:25]
    big = rows.loc[rows.index.repeat(grid.size)].reset_index(drop=True)
    big["price"] = np.tile(grid, len(rows))
    raw = model.predict_raw(big).reshape(len(rows), grid.size, 2)
    assert (np.diff(raw[:, :, 0], axis=1) >= -1e-12).all()
    unconstrained = db.DistributionalRegressor(**FAST).fit(X, Y).predict_raw(big)
    assert (np.diff(unconstrained.reshape(len(rows), grid.size, 2)[:, :, 0], axis=1)
            < -1e-3).any()


def test_shared_monotone_constraint_by_position_on_every_estimator():
    reg = db.DistributionalRegressor(**FAST, monotone_constraints=[-1, 0, 0]).fit(X, Y)
    assert isinstance(reg.ensemble_.model, LightGBMModel)  # one booster
    assert reg.ensemble_.model.booster.params["monotone_constraints"] == [-1, 0, 0]
    clf = db.DistributionalClassifier(n_estimators=5, monotone_constraints={"age": 1},
                                      min_split_gain=0.1, path_smooth=1.0, extra_trees=True,
                                      max_cat_to_onehot=2).fit(X, Y > 1)
    params = clf.ensemble_.model.booster.params
    assert params["monotone_constraints"] == [0, 1, 0] and params["extra_trees"]
    var = db.VaryingCoefficientRegressor(n_estimators=5, linear_features=["price"],
                                         effect_modifiers=["age", "noise"],
                                         monotone_constraints={"noise": 1}).fit(X, Y)
    # Positions among the effect modifiers, the columns the trees see.
    assert var.ensemble_.model.booster.params["monotone_constraints"] == [0, 1]


def test_num_leaves_per_parameter_visible_in_the_trees():
    model = db.DistributionalRegressor(
        **FAST, num_leaves=12, param_options={"scale": {"num_leaves": 3, "min_child_samples": 40,
                                                        "reg_lambda": 1.0}}).fit(X, Y)
    parts = model.ensemble_.model.parts
    assert _leaves(parts[1].booster) <= 3 < _leaves(parts[0].booster) <= 12
    assert parts[1].booster.params["min_data_in_leaf"] == 40
    assert parts[1].booster.params["lambda_l2"] == 1.0 == 1.0 + parts[0].booster.params[
        "lambda_l2"]


def test_features_per_parameter_give_exact_zeros_elsewhere():
    model = db.DistributionalRegressor(
        **FAST, param_options={"scale": {"features": ["age"], "learning_rate": 0.02}}).fit(X, Y)
    e = model.explain(X)
    assert np.all(e.values[:, 1, [0, 2]] == 0.0) and np.abs(e.values[:, 1, 1]).max() > 0
    assert np.abs(e.base_values + e.values.sum(-1) - model.predict_raw(X)).max() <= 1e-6
    imp = model.feature_importances()
    assert imp.loc["scale", "price"] == imp.loc["scale", "noise"] == 0.0


def test_options_that_change_nothing_keep_the_single_booster():
    same = db.DistributionalRegressor(**FAST, num_leaves=8,
                                      param_options={"scale": {"num_leaves": 8}}).fit(X, Y)
    plain = db.DistributionalRegressor(**FAST, num_leaves=8).fit(X, Y)
    assert isinstance(same.ensemble_.model, LightGBMModel)
    np.testing.assert_array_equal(same.predict_raw(X), plain.predict_raw(X))


def test_per_parameter_model_saves_and_loads(tmp_path):
    model = db.DistributionalRegressor(
        **FAST, param_options={"scale": {"features": [1], "num_leaves": 4}}).fit(X, Y)
    assert isinstance(model.ensemble_.model, PerParameterModel)
    model.save(tmp_path / "m.json")
    back = db.load(tmp_path / "m.json")
    np.testing.assert_array_equal(back.predict_raw(X), model.predict_raw(X))
    np.testing.assert_allclose(back.explain(X).values, model.explain(X).values, atol=1e-12)


def test_varying_model_loc_options_set_every_coefficient():
    var = db.VaryingCoefficientRegressor(
        n_estimators=10, linear_features=["price"], effect_modifiers=["age", "noise"],
        param_options={"loc": {"num_leaves": 3}, "scale": {"features": ["age"]}}).fit(X, Y)
    parts = var.ensemble_.model.parts
    assert len(parts) == 3 and _leaves(parts[0].booster) <= 3 and _leaves(parts[1].booster) <= 3
    e = var.explain(X)
    assert np.all(e.values[:, 1, 2] == 0.0)  # scale: age only


def test_classifier_param_options_by_class_logit():
    labels = np.digitize(Y, [0.5, 2.0])
    clf = db.DistributionalClassifier(n_estimators=10, random_state=0,
                                      param_options={"logits_2": {"num_leaves": 2,
                                                                  "features": ["price"]}})
    clf.fit(X, labels)
    parts = clf.ensemble_.model.parts
    assert len(parts) == 3 and _leaves(parts[2].booster) == 2
    np.testing.assert_allclose(clf.predict_proba(X).sum(axis=1), 1.0)
    e = clf.explain(X)
    assert np.all(e.values[:, 2, 1:] == 0.0)
    with pytest.raises(ValueError, match=r"its parameters are \['logits_0', 'logits_1', "
                                         r"'logits_2'\]"):
        db.DistributionalClassifier(param_options={"scale": {}}).fit(X, labels)


def test_linear_start_is_off_under_constraints():
    model = db.DistributionalRegressor(n_estimators=40, random_state=0,
                                       monotone_constraints={"price": 1}).fit(X, Y)
    assert model.early_stopping_ == "cv" and model.linear_start_ is None


def test_interaction_constraints_hold_on_every_branch():
    model = db.DistributionalRegressor(**FAST, interaction_constraints=[["price"], ["age",
                                                                                   "noise"]])
    model.fit(X, Y)
    for tree in model.ensemble_.model.booster.dump_model()["tree_info"]:
        stack = [(tree["tree_structure"], frozenset())]
        while stack:
            node, used = stack.pop()
            if "split_feature" in node:
                used = used | {node["split_feature"]}
                assert not (0 in used and used & {1, 2}), used
                stack += [(node["left_child"], used), (node["right_child"], used)]


# --------------------------------------------------------------------------- bad input
R = db.DistributionalRegressor
Xa = X.to_numpy()

CASES = {
    "param_options with an unknown parameter": (
        lambda: R(param_options={"sigma": {"num_leaves": 4}}).fit(X, Y), ValueError,
        r"param_options has the key\(s\) \['sigma'\], which are not parameters of this model; "
        r"its parameters are \['loc', 'scale'\]"),
    "param_options with an unknown option": (
        lambda: R(param_options={"scale": {"leaves": 4}}).fit(X, Y), ValueError,
        r"param_options\['scale'\] has the option\(s\) \['leaves'\]; it takes \['features'"),
    "param_options with a bad value": (
        lambda: R(param_options={"scale": {"num_leaves": 1}}).fit(X, Y), ValueError,
        r"The 'num_leaves' parameter of param_options\['scale'\] must be"),
    "param_options features naming a missing column": (
        lambda: R(param_options={"scale": {"features": ["size"]}}).fit(X, Y), ValueError,
        r"param_options\['scale'\]\['features'\] names the column 'size', which X does not "
        r"have"),
    "monotone_constraints by name on an array": (
        lambda: R(monotone_constraints={"price": 1}).fit(Xa, Y), ValueError,
        r"monotone_constraints names the column 'price', but X is an array without column "
        r"names"),
    "monotone_constraints of the wrong length": (
        lambda: R(monotone_constraints=[1, 0]).fit(X, Y), ValueError,
        r"monotone_constraints has 2 entries for the 3 columns of X"),
    "monotone direction not -1, 0 or 1": (
        lambda: R(monotone_constraints={"price": 2}).fit(X, Y), ValueError,
        r"monotone_constraints holds \[2\]; each direction must be -1 \(decreasing\), 0 "
        r"\(free\) or 1 \(increasing\)"),
    "monotone constraint on a categorical column": (
        lambda: R(monotone_constraints={"g": 1}).fit(
            X.assign(g=pd.Categorical(["u", "v"] * (N // 2))), Y), ValueError,
        r"monotone_constraints constrains the categorical column 'g'"),
    "monotone constraint outside the parameter's features": (
        lambda: R(param_options={"loc": {"features": ["age"],
                                         "monotone_constraints": {"price": 1}}}).fit(X, Y),
        ValueError, r"param_options\['loc'\]\['monotone_constraints'\] constrains the "
                    r"column\(s\) \['price'\], which param_options\['loc'\]\['features'\] "
                    r"leaves out"),
    "interaction_constraints not a list of lists": (
        lambda: R(interaction_constraints=["price", "age"]).fit(X, Y), ValueError,
        r"interaction_constraints must be a list of lists of columns"),
    "param_options features outside every interaction group": (
        lambda: R(interaction_constraints=[["price"]],
                  param_options={"scale": {"features": ["age"]}}).fit(X, Y), ValueError,
        r"param_options\['scale'\]\['features'\] keeps no column of any "
        r"interaction_constraints group"),
    "a tree option on a column the varying model's trees do not see": (
        lambda: db.VaryingCoefficientRegressor(
            linear_features=["price"], effect_modifiers=["age"],
            param_options={"scale": {"features": ["price"]}}).fit(X, Y), ValueError,
        r"param_options\['scale'\]\['features'\] names the column\(s\) \['price'\], which "
        r"the trees do not split on"),
    "LightGBM options with a scikit-learn base_learner": (
        lambda: R(extra_trees=True, base_learner=__import__(
            "sklearn.tree", fromlist=["x"]).DecisionTreeRegressor()).fit(X, Y), ValueError,
        r"\['extra_trees'\] are LightGBM options; a scikit-learn base_learner cannot use "
        r"them"),
    "linear_start=True with constraints": (
        lambda: R(linear_start=True, monotone_constraints={"price": 1}).fit(X, Y), ValueError,
        r"linear_start=True cannot be combined with monotone_constraints or param_options "
        r"'features'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_tree_options_raise_the_documented_error(case):
    fn, exc, pattern = CASES[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_the_docs_table_lists_every_case():
    table = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| ([^|]+) \|", table, flags=re.M)
    assert set(CASES) <= {r.strip() for r in rows}, set(CASES) - {r.strip() for r in rows}
