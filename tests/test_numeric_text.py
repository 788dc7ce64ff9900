"""Numbers stored as text with a few missing-value tokens are numeric features, said in a
warning (issue 25 item 4): diabetes' ``bmi`` as strings with one "n/a" was silently made
categorical. The reference is the same model fitted on the column cleaned by hand
(``pd.to_numeric(..., errors="coerce")``): the predictions must be identical.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import DataConversionWarning

import distboost as db

FAST = {"n_estimators": 5, "early_stopping": False, "linear_start": False, "random_state": 0}


@pytest.fixture(scope="module")
def diabetes():
    X, y = db.datasets.load_diabetes()
    text = X.assign(bmi=X["bmi"].map(repr).astype(object))
    text.loc[[3, 70], "bmi"] = "n/a"
    return text, y


def test_a_numeric_column_with_a_token_is_numeric_with_nan_and_a_warning(diabetes):
    text, y = diabetes
    clean = text.assign(bmi=pd.to_numeric(text["bmi"], errors="coerce"))
    assert clean["bmi"].isna().sum() == 2
    with pytest.warns(DataConversionWarning, match=(
            r"Column 'bmi' of X is text holding numbers in 440 of 442 rows and the non-numeric "
            r"value\(s\) 'n/a' in 2 rows, read as missing \(NaN\): it is used as a numeric "
            r"feature")):
        model = db.DistributionalRegressor(**FAST).fit(text, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        reference = db.DistributionalRegressor(**FAST).fit(clean, y)
        want = reference.predict_dist(clean).params
    # Text at predict time: the same numbers, the same warning.
    with pytest.warns(DataConversionWarning, match="Column 'bmi'"):
        got = model.predict_dist(text).params
    for p in want:
        np.testing.assert_array_equal(got[p], want[p])
    # Numbers at predict time need no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        np.testing.assert_array_equal(model.predict_dist(clean).params["loc"], want["loc"])


def test_text_that_is_not_numbers_stays_categorical():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.normal(size=60),
                      "codes": rng.choice(["1", "2", "3"], size=60).astype(object),
                      "g": rng.choice(["a", "b", "1"], size=60, p=[0.45, 0.45, 0.1])})
    X["codes"] = X["codes"].astype("category")  # a Categorical of numbers stays categorical
    y = X["x"].to_numpy() + rng.normal(size=60)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DataConversionWarning)
        model = db.DistributionalRegressor(**FAST).fit(X, y)
    with pytest.raises(ValueError, match="Column 'g' of X was categorical in fit"):
        model.predict(X.assign(g=1.0))
    # Numbers in most rows but 4 distinct other values: categories, with a warning saying why.
    many = X.assign(g=np.where(np.arange(60) % 5 == 0, np.array(list("pqrs") * 15),
                               np.arange(60).astype(str)).astype(object))
    with pytest.warns(DataConversionWarning, match=(
            r"Column 'g' of X is text with numbers in 48 of 60 rows but 4 distinct non-numeric "
            r"values \('p', 'q', 'r', 's'\) in 12 rows \(more than 3, too many to be "
            r"missing-value tokens\): it is used as categories")):
        db.DistributionalRegressor(**FAST).fit(many, y)
