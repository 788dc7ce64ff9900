"""distboost.families.continuous: the Student-t's floor on its degrees of freedom
(``StudentT(min_df=...)``, the Forecaster's ``family="auto"`` candidate)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone

import distboost as db
from distboost.families import Censored, from_state, get
from distboost.families.continuous import StudentT


def test_min_df_is_a_floor_kept_in_the_state():
    fam = StudentT(min_df=2)
    y = np.array([0.0, 1.0, 5.0])
    assert fam.param_floors(y) == {**get("studentt").param_floors(y), "df": 2.0}
    assert "df" not in get("studentt").param_floors(y)
    state = fam.get_state()
    assert state["min_df"] == 2.0 and "min_df" not in get("studentt").get_state()
    back = from_state(state)
    assert isinstance(back, StudentT) and back.min_df == 2.0
    assert repr(fam) == "StudentT(min_df=2.0)"
    relinked = fam.with_links({"df": "softplus"})
    assert relinked.min_df == 2.0 and repr(relinked) == (
        "StudentT(min_df=2.0, links={'df': 'softplus'})")


@pytest.fixture(scope="module")
def cauchy_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 2))
    return X, X[:, 0] + rng.standard_cauchy(1500)


def test_a_fit_keeps_df_at_or_above_the_floor_where_a_free_df_falls_below_it(cauchy_rows):
    X, y = cauchy_rows
    opts = dict(n_estimators=60, early_stopping=False, random_state=0)
    free = db.DistributionalRegressor(family="studentt", **opts).fit(X, y)
    assert free.predict_params(X)["df"].min() < 1.5  # Cauchy tails: an infinite-CRPS law
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the floor the user chose is no surprise to report
        model = db.DistributionalRegressor(family=StudentT(min_df=2), **opts).fit(X, y)
    df = model.predict_params(X)["df"]
    assert df.min() >= 2.0 - 1e-12 and (df > 2.5).any()  # a floor, not a constant
    dist = model.predict_dist(X)
    assert np.isfinite(dist.crps(y)).all() and np.isfinite(dist.mean).all()
    assert clone(model).family.min_df == 2.0
    censored = np.c_[y, np.where(np.arange(y.size) % 5 == 0, np.inf, y)]  # right-censored
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the wrapper keeps the chosen floor, and its quiet
        wrapped = db.DistributionalRegressor(family=Censored(StudentT(min_df=2)),
                                             **opts).fit(X, censored)
    assert wrapped.predict_params(X)["df"].min() >= 2.0 - 1e-12
