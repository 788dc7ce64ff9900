"""Tests of distboost.boosting.per_parameter: one backend per output, grown in lockstep.

The reference is the single LightGBM booster with ``num_class=K``: with identical options
its trees are those of the per-parameter boosters (LightGBM grows each class's tree from its
own gradient column), so the two must predict the same.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
from boosting_cases import engine

from distboost.boosting import fit_boosting
from distboost.boosting.engine import FittedEnsemble
from distboost.boosting.per_parameter import PerParameterModel

RNG = np.random.default_rng(3)
N = 300
X = RNG.normal(size=(N, 3))
Y = X[:, 0] + np.exp(0.4 * X[:, 1]) * RNG.normal(size=N)
DATA = {"y": torch.as_tensor(Y)}


def normal_loss(raw, data):
    return 0.5 * ((data["y"] - raw[:, 0]) * torch.exp(-raw[:, 1])) ** 2 + raw[:, 1]


def _fit(params, **kw):
    return fit_boosting(normal_loss, np.array([0.0, 0.0]), X, DATA, params=params,
                        **kw)


BASE = engine(n_estimators=15, learning_rate=0.1, step="gradient", num_leaves=6,
                    min_child_samples=10, n_iter_no_change=None, random_state=0)


def _lockstep(base=BASE, loc=None, scale=None, cols=(None, None)):
    subs = [dataclasses.replace(base, **(loc or {})), dataclasses.replace(base, **(scale or {}))]
    return dataclasses.replace(base, per_parameter=tuple(zip(subs, cols, strict=True)))


def test_identical_options_give_the_single_booster():
    single = _fit(BASE)
    split = _fit(_lockstep())
    assert isinstance(split.model, PerParameterModel)
    np.testing.assert_allclose(split.predict_raw(X), single.predict_raw(X), rtol=1e-10,
                               atol=1e-12)
    assert split.evals_result_["train"]["loss"] == pytest.approx(
        single.evals_result_["train"]["loss"], rel=1e-10)


def test_columns_rates_and_leaves_per_output():
    fitted = _fit(_lockstep(scale={"num_leaves": 2, "learning_rate": 0.05}, cols=(None, [1])))
    model = fitted.model
    contrib = fitted.predict_contrib(X)
    assert contrib.shape == (N, 2, 4)
    np.testing.assert_array_equal(contrib[:, 1, [0, 2]], 0.0)  # exactly zero elsewhere
    np.testing.assert_allclose(contrib.sum(-1), fitted.predict_raw(X), atol=1e-10)
    scale_trees = model.parts[1].booster.dump_model()["tree_info"]
    assert max(t["num_leaves"] for t in scale_trees) == 2
    assert max(t["num_leaves"] for t in model.parts[0].booster.dump_model()["tree_info"]) > 2
    imp = fitted.feature_importances("split")
    assert imp.shape == (2, 3) and imp[1, 0] == imp[1, 2] == 0 and imp[1, 1] > 0


def test_learning_rate_multiplies_the_step():
    one = dataclasses.replace(BASE, n_estimators=1)
    single = _fit(one)
    half = _fit(_lockstep(one, scale={"learning_rate": 0.05}))
    assert half.step_scales_ == single.step_scales_ == [1.0]
    d_single = single.predict_raw(X)
    d_half = half.predict_raw(X)
    np.testing.assert_allclose(d_half[:, 0], d_single[:, 0], rtol=1e-10)
    np.testing.assert_allclose(d_half[:, 1], 0.5 * d_single[:, 1], rtol=1e-6, atol=1e-12)


def test_validation_rows_early_stopping_and_text_round_trip():
    params = dataclasses.replace(_lockstep(scale={"num_leaves": 3}, cols=(None, [1, 2])),
                                 n_estimators=60, n_iter_no_change=5)
    Xv = RNG.normal(size=(100, 3))
    yv = Xv[:, 0] + np.exp(0.4 * Xv[:, 1]) * RNG.normal(size=100)
    fitted = _fit(params, X_val=Xv, data_val={"y": torch.as_tensor(yv)})
    assert fitted.best_iteration_ <= fitted.n_iter_
    back = FittedEnsemble.from_dict(fitted.to_dict())
    np.testing.assert_allclose(back.predict_raw(Xv), fitted.predict_raw(Xv), rtol=1e-12)
    np.testing.assert_allclose(back.predict_contrib(Xv), fitted.predict_contrib(Xv),
                               atol=1e-12)


def test_scores_follow_the_line_search():
    # A huge rate overshoots: the engine halves it (retry) in every part at once.
    params = _lockstep(dataclasses.replace(BASE, learning_rate=3.0, step="newton"),
                       scale={"learning_rate": 1.5})
    fitted = _fit(params)
    assert fitted.n_backoffs_ > 0
    losses = fitted.evals_result_["train"]["loss"]
    assert all(b <= a + 1e-9 * abs(a) for a, b in zip(losses, losses[1:], strict=False))


def test_sklearn_parts():
    from sklearn.tree import DecisionTreeRegressor

    base = dataclasses.replace(BASE, base_learner=DecisionTreeRegressor(max_depth=2))
    fitted = _fit(_lockstep(base, cols=([0, 1], [1])))
    assert fitted.predict_raw(X).shape == (N, 2)
    with pytest.raises(NotImplementedError, match="'sklearn' tree backend"):
        fitted.predict_contrib(X)
