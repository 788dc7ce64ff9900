"""Tests of distboost.estimators.explain: exact TreeSHAP per parameter, importances, staged
prediction.

The additivity ``base_values + values.sum(-1) == predict_raw(X)`` is checked on every family
of the shared case table, on censored data, the classifier and the varying-coefficient model;
the tree part is checked against the shap package's own TreeExplainer on the LightGBM
booster (an independent implementation), the split counts against LightGBM's
``feature_importance``.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from family_cases import FAMILIES, case, draws, family

import distboost as db
from distboost.estimators.explain import Explanation

RNG = np.random.default_rng(0)
X3 = pd.DataFrame({"a": RNG.uniform(-2, 2, 200), "b": RNG.uniform(-2, 2, 200),
                   "c": RNG.normal(size=200)})
Y3 = X3["a"] + np.exp(0.5 * X3["b"]) * RNG.normal(size=200)


def _gap(model, X, **kw):
    e = model.explain(X, **kw)
    raw = model.predict_raw(X, kw.get("iteration"))
    return e, np.abs(e.base_values + e.values.sum(-1) - raw).max()


@pytest.mark.parametrize("name", FAMILIES)
def test_explanation_adds_up_on_every_family(name):
    fam = family(name)
    y = draws(name, case(name).params[0], 120, seed=1)
    X = RNG.normal(size=(120, 2))
    model = db.DistributionalRegressor(family=fam, n_estimators=8, early_stopping=False,
                                       random_state=0).fit(X, y)
    e, gap = _gap(model, X)
    k = len(fam.param_names)
    assert e.values.shape == (120, k, 2) and e.base_values.shape == (120, k)
    assert e.param_names == list(fam.param_names)
    assert gap <= 1e-6


def test_explanation_adds_up_with_linear_start_and_dispersion_shift():
    # 200 rows: cross-validated rounds, the linear start when CV prefers it, calibration.
    model = db.DistributionalRegressor(random_state=0, n_estimators=60).fit(X3, Y3)
    assert model.linear_start_ is not None and model.dispersion_shift_ != 0.0
    e, gap = _gap(model, X3)
    assert gap <= 1e-6
    # The linear start's share of feature j is z_j(x) B_j: mean zero over the training rows.
    assert e.feature_names == ["a", "b", "c"]


def test_explanation_adds_up_on_censored_data():
    t = RNG.weibull(1.5, 200) * np.exp(0.3 * X3["a"].to_numpy())
    event = RNG.uniform(size=200) < 0.7
    y = db.censored.right(t, event)
    model = db.DistributionalRegressor(family="censored_weibull", n_estimators=20,
                                       early_stopping=False, random_state=0).fit(X3, y)
    assert _gap(model, X3)[1] <= 1e-6


def test_explanation_adds_up_on_the_classifier_and_the_varying_model():
    labels = np.digitize(Y3, [-1.0, 1.0])
    # Held-out splits: the defaults on 200 rows cross-validate the rounds (8 x the time; the
    # cross-validated regressor's explanation: the linear-start test above).
    clf = db.DistributionalClassifier(n_estimators=15, early_stopping="holdout",
                                      random_state=0).fit(X3, labels)
    e, gap = _gap(clf, X3)
    assert e.values.shape == (200, 3, 3) and gap <= 1e-6
    var = db.VaryingCoefficientRegressor(n_estimators=20, early_stopping="holdout",
                                         random_state=0, linear_features=["a"],
                                         effect_modifiers=["b", "c"]).fit(X3, Y3)
    e, gap = _gap(var, X3)
    assert e.param_names == ["loc", "scale"] and gap <= 1e-6
    # The scale's trees split on the modifiers only; the linear feature 'a' enters loc.
    assert np.all(e.values[:, 1, 0] == 0.0) and np.abs(e.values[:, 0, 0]).max() > 0


def test_tree_values_match_shap_treeexplainer():
    shap = pytest.importorskip("shap")
    model = db.DistributionalRegressor(n_estimators=20, early_stopping=False,
                                       random_state=0).fit(X3.to_numpy(), Y3)
    e = model.explain(X3.to_numpy())
    ref = shap.TreeExplainer(model.ensemble_.model.booster).shap_values(X3.to_numpy())
    ref = np.stack(ref, axis=1) if isinstance(ref, list) else np.moveaxis(ref, -1, 1)
    np.testing.assert_allclose(e.values, ref, atol=1e-8)


def test_staged_prediction_and_staged_explanation():
    model = db.DistributionalRegressor(n_estimators=30, early_stopping=False,
                                       random_state=0).fit(X3, Y3)
    start = model.predict_dist(X3, iteration=0).params["loc"]
    np.testing.assert_allclose(start, model.init_params_["loc"])
    for k in (1, 7, 30):
        raw = model.predict_raw(X3, iteration=k)
        np.testing.assert_allclose(raw, model.ensemble_.predict_raw(X3, k))
        params = model.predict_dist(X3, iteration=k).params
        np.testing.assert_allclose(np.log(params["scale"]), raw[:, 1], rtol=1e-12)
        assert _gap(model, X3, iteration=k)[1] <= 1e-6
    assert not np.allclose(model.predict_raw(X3, iteration=7), model.predict_raw(X3))


def test_importances_sum_to_one_and_split_counts_match_lightgbm():
    model = db.DistributionalRegressor(n_estimators=25, early_stopping=False,
                                       random_state=0).fit(X3, Y3)
    imp = model.feature_importances_
    assert imp.shape == (3,) and imp.sum() == pytest.approx(1.0) and (imp >= 0).all()
    gain = model.feature_importances()
    assert list(gain.index) == ["loc", "scale"] and list(gain.columns) == ["a", "b", "c"]
    shares = gain.div(gain.sum(axis=1), axis=0)
    np.testing.assert_allclose(imp, shares.mean().to_numpy())
    # In units of y the loc's gain grows by 1e6 for y in thousandths; the shares do not move.
    scaled = db.DistributionalRegressor(n_estimators=25, early_stopping=False,
                                        random_state=0).fit(X3, Y3 * 1000)
    np.testing.assert_allclose(scaled.feature_importances_, imp, rtol=1e-3, atol=1e-6)
    assert scaled.feature_importances().loc["loc"].sum() > 1e5 * gain.loc["loc"].sum()
    split = model.feature_importances("split")
    booster = model.ensemble_.model.booster
    np.testing.assert_array_equal(split.sum().to_numpy(),
                                  booster.feature_importance("split", iteration=25))
    np.testing.assert_allclose(gain.sum().to_numpy(),
                               booster.feature_importance("gain", iteration=25), rtol=1e-6)
    # The scale depends on b only: b leads the scale's gain.
    assert gain.loc["scale"].idxmax() == "b"
    with pytest.raises(ValueError, match="importance_type must be 'gain' or 'split'"):
        model.feature_importances("cover")


def test_no_split_gives_zero_importances():
    model = db.DistributionalRegressor(n_estimators=3, early_stopping=False,
                                       min_child_samples=200).fit(X3, Y3)
    np.testing.assert_array_equal(model.feature_importances_, np.zeros(3))


def test_to_shap_and_frames():
    model = db.DistributionalRegressor(n_estimators=10, early_stopping=False).fit(X3, Y3)
    e = model.explain(X3.iloc[:50])
    assert isinstance(e, db.Explanation) and len(e) == 50
    s = e.to_shap("scale")
    np.testing.assert_array_equal(s.values, e.values[:, 1])
    np.testing.assert_array_equal(s.base_values, e.base_values[:, 1])
    assert list(s.feature_names) == ["a", "b", "c"] and s.data.shape == (50, 3)
    frame = e.to_frame("loc")
    assert list(frame.index) == list(X3.index[:50])
    with pytest.raises(ValueError, match=r"Unknown parameter 'rate'; the parameters are "
                                         r"\['loc', 'scale'\]"):
        e.to_frame("rate")


def test_to_shap_without_shap_says_how_to_install(monkeypatch):
    e = Explanation(np.zeros((2, 1, 1)), np.zeros((2, 1)), ["a"], ["rate"], np.zeros((2, 1)))
    monkeypatch.setitem(sys.modules, "shap", None)
    with pytest.raises(ImportError, match=r"pip install distboost\[shap\]"):
        e.to_shap("rate")


def test_categorical_columns_are_explained():
    X = X3.assign(g=pd.Categorical(RNG.choice(["u", "v", "w"], 200)))
    y = Y3 + (X["g"] == "u") * 2.0
    model = db.DistributionalRegressor(n_estimators=15, early_stopping=False).fit(X, y)
    Xp = X.iloc[:20].copy()
    Xp.loc[Xp.index[0], "g"] = np.nan
    e, gap = _gap(model, Xp)
    assert gap <= 1e-6 and np.isnan(e.numeric_data()[0, 3])


def test_the_sklearn_backend_has_no_treeshap():
    from sklearn.tree import DecisionTreeRegressor

    model = db.DistributionalRegressor(n_estimators=3, early_stopping=False,
                                       base_learner=DecisionTreeRegressor(max_depth=2))
    model.fit(X3, Y3)
    with pytest.raises(NotImplementedError, match="'sklearn' tree backend"):
        model.explain(X3)
    assert model.feature_importances("split").to_numpy().sum() == 2 * 3 * 3


@pytest.mark.parametrize("n", [30, 200])
def test_small_data_offset_target_and_unseen_missing_category(n):
    rng = np.random.default_rng(n)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n),
                      "g": pd.Categorical(rng.choice(["p", "q"], n))})
    y = X["a"] + rng.normal(size=n) + 1e9
    model = db.DistributionalRegressor(
        random_state=0, n_estimators=100,
        param_options={"scale": {"features": ["b", "g"], "num_leaves": 4}})
    model.fit(X, y)
    Xp = X.iloc[:10].copy()
    Xp.loc[Xp.index[:3], "g"] = np.nan
    e = model.explain(Xp)
    raw = model.predict_raw(Xp)
    np.testing.assert_allclose(e.base_values + e.values.sum(-1), raw, rtol=1e-12)
    assert np.all(e.values[:, 1, 0] == 0.0)


def test_counts_with_many_zeros_under_a_monotone_constraint():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(200, 2))
    y = rng.poisson(0.2 * np.exp(0.5 * X[:, 0]))
    model = db.DistributionalRegressor(family="poisson", random_state=0, n_estimators=50,
                                       monotone_constraints=[1, 0]).fit(X, y)
    assert (y == 0).mean() > 0.7 and _gap(model, X)[1] <= 1e-6


def test_a_model_that_kept_no_rounds_explains_nothing_and_says_why(tmp_path):
    """Issue 25: cross-validation kept 0 rounds (pure noise features), yet the refit's
    discarded trees were reported as importances.  Importances and SHAP values now
    describe the model that predicts (none), the fit warns that the features are unused
    and what to try, and the saved model holds no trees."""
    rng = np.random.default_rng(5)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["a", "b", "c"])
    y = rng.normal(size=80)
    with pytest.warns(UserWarning, match="kept 0 boosting rounds and no linear start"):
        model = db.DistributionalRegressor(n_estimators=10, linear_start=False,
                                           random_state=0).fit(X, y)
    assert model.best_iteration_ == 0 and model.n_iter_ >= 1 and model.linear_start_ is None
    for kind in ("gain", "split"):
        assert (model.feature_importances(kind).to_numpy() == 0).all()
    np.testing.assert_array_equal(model.feature_importances_, np.zeros(3))
    e = model.explain(X.iloc[:10])
    np.testing.assert_array_equal(e.values, 0.0)
    path = tmp_path / "m.json"
    model.save(path)
    assert "Tree=" not in path.read_text()
    np.testing.assert_array_equal(db.load(path).feature_importances().to_numpy(), 0.0)
