"""Tests of distboost.estimators.tail_check: the training rows of the features' tails judged
after a fit (issue 52)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import distboost as db
import distboost.estimators.linear_start as linear_start
from distboost.estimators.tail_check import feature_tail_messages


class _Fixed:
    """A stand-in for a fitted model: Normal predictions with the given loc and scale per
    row (looked up by the rows' first column, a row id)."""

    def __init__(self, loc, scale):
        self.loc, self.scale = np.asarray(loc, float), np.asarray(scale, float)

    def predict_dist(self, X):
        rows = np.asarray(X)[:, 0].astype(int)
        return db.Predictive.from_params("normal", loc=self.loc[rows], scale=self.scale[rows])


def _data(n=400):
    rng = np.random.default_rng(0)
    income = np.exp(rng.normal(0.0, 1.0, n))
    X = np.column_stack([np.arange(n), income])
    y = rng.normal(10.0, 1.0, n)
    return X, y, np.argsort(income)[-4:]  # income's upper tail: the rows above its q99


def test_a_calibrated_model_raises_nothing():
    X, y, _ = _data()
    assert feature_tail_messages(_Fixed(np.full(len(y), 10.0), np.ones(len(y))), X, y) == []


def test_a_median_beyond_the_observed_range_is_named():
    X, y, top = _data()
    loc = np.full(len(y), 10.0)
    loc[top[-1]] = 10.0 + 3 * (y.max() - y.min())
    messages = feature_tail_messages(_Fixed(loc, np.full(len(y), 50.0)), X, y)
    assert len(messages) == 1
    assert "upper tail of feature 'x1'" in messages[0]
    assert f"row {top[-1]}: median" in messages[0] and "observed range of y" in messages[0]


def test_tail_rows_outside_the_central_interval_are_counted_against_the_other_rows():
    X, y, top = _data()
    loc, scale = np.full(len(y), 10.0), np.ones(len(y))
    loc[top[-2:]] = 10.0 + 8.0  # two of the four tail rows 8 sd from their observed values
    messages = feature_tail_messages(_Fixed(loc, scale), X, y)
    assert len(messages) == 1 and "2 lie outside the model's central 99.9 %" in messages[0]
    # The same two rows where the model misses 5 % of every row: no more than the rest.
    wide = _Fixed(np.where(np.arange(len(y)) % 20 == 0, 15.0, loc), scale)
    assert feature_tail_messages(wide, X, y) == []
    # Rows of weight 0 were not fitted: not judged.
    weight = np.ones(len(y))
    weight[top[-2:]] = 0.0
    assert feature_tail_messages(_Fixed(loc, scale), X, y, weight) == []


def test_a_frame_s_rows_are_named_by_its_index_and_categoricals_are_skipped():
    X, y, top = _data()
    frame = pd.DataFrame({"row": X[:, 0], "income": X[:, 1],
                          "g": pd.Categorical(np.arange(len(y)) % 3)},
                         index=[f"h{i}" for i in range(len(y))])
    loc = np.full(len(y), 10.0)
    loc[top[-1]] = 1e4
    messages = feature_tail_messages(_Fixed(loc, np.ones(len(y))), frame, y)
    assert any(f"row h{top[-1]}" in m and "'income'" in m for m in messages)
    assert not any("'g'" in m for m in messages)


@pytest.fixture(scope="module")
def engel():
    sm = pytest.importorskip("statsmodels.api")
    data = sm.datasets.engel.load_pandas().data
    return data[["income"]], data["foodexp"]


def test_engel_s_runaway_start_would_have_been_caught(engel, monkeypatch):
    """Issue 52's case: with the linear start clipped to the training range only (as before),
    the gamma predicted the household of largest income a median of 11,300 for an observed
    1,827: the fit warns, naming the feature and the row."""
    X, y = engel
    monkeypatch.setattr(linear_start, "CLIP_QUANTILE", 0.0)
    with pytest.warns(UserWarning, match=r"upper tail of feature 'income'.*row 137: median"):
        db.DistributionalRegressor(family="gamma", random_state=0).fit(X, y)
