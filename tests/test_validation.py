"""Tests of distboost._validation: each bad input gets a ValueError naming it."""

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator

from distboost._validation import (
    check_consistent_rows,
    check_eval_set,
    check_sample_weight,
    check_X,
)


class _Est(BaseEstimator):
    """A bare estimator to receive n_features_in_ and feature_names_in_."""


@pytest.mark.parametrize(
    "w, match",
    [
        (np.r_[1.0, -1.0, 2.0], "1 of 3 rows that are negative"),
        (np.r_[1.0, np.nan, np.nan], "2 of 3 rows that are NaN"),
        (np.zeros(3), "zero for all 3 rows"),
        (np.ones(2), r"shape \(2,\); expected \(3,\)"),
    ],
    ids=["negative", "nan", "all-zero", "wrong-length"],
)
def test_bad_sample_weights(w, match):
    with pytest.raises(ValueError, match=match):
        check_sample_weight(w, 3)


def test_good_sample_weights_pass_through():
    np.testing.assert_array_equal(check_sample_weight([1, 0, 2], 3), [1.0, 0.0, 2.0])
    assert check_sample_weight(None, 3) is None


def test_consistent_rows_message_names_each_argument():
    with pytest.raises(ValueError, match="X has 3 rows, y has 2 rows"):
        check_consistent_rows(X=np.zeros((3, 1)), y=np.zeros(2))


def test_X_feature_count_and_names_checked_at_predict_time():
    est = _Est()
    check_X(est, np.zeros((4, 3)), reset=True)
    with pytest.raises(ValueError, match="3 features"):
        check_X(est, np.zeros((4, 2)), reset=False)
    est2 = _Est()
    check_X(est2, pd.DataFrame({"a": [1.0, 2.0], "b": [3.0, 4.0]}), reset=True)
    with pytest.raises(ValueError, match="feature names"):
        check_X(est2, pd.DataFrame({"a": [1.0], "c": [2.0]}), reset=False)


def test_X_infinite_and_empty_rejected():
    with pytest.raises(ValueError, match="infinity|infinite"):
        check_X(_Est(), np.array([[1.0], [np.inf]]), reset=True)
    with pytest.raises(ValueError, match="0 sample|0 rows"):
        check_X(_Est(), np.zeros((0, 2)), reset=True)
    with pytest.raises(ValueError, match="1 of 2 rows that are infinite"):
        check_X(_Est(), pd.DataFrame({"x": [1.0, np.inf]}), reset=True)


def test_X_nan_allowed_and_strings_become_categories():
    X = check_X(_Est(), np.array([[1.0], [np.nan]]), reset=True)
    assert np.isnan(X[1, 0])
    est = _Est()
    out = check_X(est, pd.DataFrame({"g": ["a", "b", "a"], "x": [1, 2, 3]}), reset=True)
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
    later = check_X(est, pd.DataFrame({"g": ["b", "z"], "x": [1, 2]}), reset=False)
    assert list(later["g"].cat.categories) == ["a", "b"]
    assert later["g"].isna().tolist() == [False, True]  # unseen category -> missing


def test_eval_set_forms():
    pair = (np.zeros((2, 1)), np.zeros(2))
    assert check_eval_set(pair) == (pair, None)
    assert check_eval_set([pair])[0] is pair
    w = np.ones(2)
    assert check_eval_set([pair], [w])[1] is w
    assert check_eval_set(pair, w)[1] is w
    assert check_eval_set(None) == (None, None)
    with pytest.raises(ValueError, match="without an eval_set"):
        check_eval_set(None, w)
    with pytest.raises(ValueError, match="a list of 2"):
        check_eval_set([pair], [w, w])
    with pytest.raises(ValueError, match="exactly one"):
        check_eval_set([pair, pair])
    with pytest.raises(ValueError, match="tuple"):
        check_eval_set(np.zeros(3))


def _categorical_fit():
    import distboost as db

    rng = np.random.default_rng(0)
    n = 300
    df = pd.DataFrame({"x": rng.normal(size=n), "s": rng.choice(["a", "b", "c"], n),
                       "k": pd.Categorical(rng.choice(["u", "v"], n))})
    y = df["x"] + 2.0 * (df["s"] == "a") - 1.5 * (df["k"] == "u") + rng.normal(size=n)
    model = db.DistributionalRegressor(n_estimators=20, early_stopping=False, random_state=0)
    return model.fit(df, y), df


@pytest.mark.parametrize("col", ["s", "k"], ids=["string-column", "categorical-column"])
@pytest.mark.parametrize("missing", [np.nan, None], ids=["float64-nan", "object-none"])
def test_all_missing_categorical_batch_predicts_as_an_unseen_category(col, missing):
    model, df = _categorical_fit()
    batch = df.iloc[:6].copy()
    batch[col] = missing  # pandas: float64 for NaN, object for None
    unseen = df.iloc[:6].copy()
    unseen[col] = pd.Categorical(["never seen"] * 6) if col == "k" else "never seen"
    got, want = model.predict_dist(batch).params, model.predict_dist(unseen).params
    for name in want:
        np.testing.assert_array_equal(got[name], want[name])


def test_all_missing_object_batch_of_a_numeric_column_is_numeric_nan():
    est = _Est()
    check_X(est, pd.DataFrame({"x": [1.0, 2.0], "g": ["a", "b"]}), reset=True)
    out = check_X(est, pd.DataFrame({"x": [None, None], "g": ["a", None]}), reset=False)
    assert out["x"].dtype == np.float64 and out["x"].isna().all()


def test_numbers_for_string_categories_are_refused_but_numeric_categories_map():
    est = _Est()
    check_X(est, pd.DataFrame({"g": ["a", "b", "a"]}), reset=True)
    with pytest.raises(ValueError, match=r"Column 'g' of X was categorical in fit \(categories "
                       r"'a', 'b'\) but is numeric at predict time with 1 of 2 rows not missing"):
        check_X(est, pd.DataFrame({"g": [1.0, np.nan]}), reset=False)
    codes = _Est()
    check_X(codes, pd.DataFrame({"g": pd.Categorical([1, 2, 3])}), reset=True)
    out = check_X(codes, pd.DataFrame({"g": [3, 7, 1]}), reset=False)
    assert isinstance(out["g"].dtype, pd.CategoricalDtype)
    assert out["g"].isna().tolist() == [False, True, False]


def test_float32_features_stay_float32_and_predict_like_float64():
    import distboost as db

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 3)).astype(np.float32)
    y = X[:, 0].astype(np.float64) + rng.normal(size=300)

    assert check_X(_Est(), X, reset=True).dtype == np.float32
    kw = dict(n_estimators=20, early_stopping=False, random_state=0)
    a = db.DistributionalRegressor(**kw).fit(X, y)
    b = db.DistributionalRegressor(**kw).fit(X.astype(np.float64), y)
    np.testing.assert_allclose(a.predict_params(X), b.predict_params(X.astype(np.float64)))
