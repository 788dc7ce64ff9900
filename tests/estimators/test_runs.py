"""Tests of distboost.estimators.runs: the refit on all rows after a held-out split
(``early_stopping="holdout_refit"``, the default from 1,000 to 10,000 training rows)."""

import math

import numpy as np
import pytest

import distboost as db
from distboost.datasets import make_heteroscedastic_sine


@pytest.fixture(scope="module")
def data():
    X, y, _ = make_heteroscedastic_sine(1500, random_state=3)
    return X, y


def _pair(X, y, **kw):
    kw = {"random_state": 0, "learning_rate": 0.2, **kw}
    held = db.DistributionalRegressor(early_stopping="holdout", **kw).fit(X, y)
    refit = db.DistributionalRegressor(early_stopping="holdout_refit", **kw).fit(X, y)
    return held, refit


def test_the_refit_keeps_the_split_s_rounds_times_n_over_n_fit_and_its_calibration(data):
    X, y = data
    held, refit = _pair(X, y)
    n_fit = len(y) - math.ceil(0.1 * len(y))  # train_test_split's rows of the split's fit
    assert refit.early_stopping_ == "holdout_refit"
    expected = {k: int(np.rint(v * len(y) / n_fit)) for k, v in held.best_iterations_.items()}
    assert refit.best_iterations_ == expected
    assert refit.best_iteration_ == max(expected.values())
    # The dispersion shift and the validation curve are the held-out split's.
    assert refit.dispersion_shift_ == held.dispersion_shift_
    assert refit.evals_result_["valid"] == held.evals_result_["valid"]
    assert (refit.num_leaves_, refit.min_child_samples_) == (held.num_leaves_,
                                                              held.min_child_samples_)
    # The refit's start values are fitted on all the rows, the split's on n_fit of them.
    assert refit.ensemble_.init_raw[0] == pytest.approx(y.mean(), rel=1e-9)
    assert held.ensemble_.init_raw[0] != pytest.approx(y.mean(), rel=1e-9)


def test_the_joint_refit_is_a_fit_on_all_rows_at_the_split_s_rounds(data):
    X, y = data
    held, refit = _pair(X, y, per_parameter_stopping=False)
    rounds = refit.best_iteration_
    assert refit.best_iterations_ == {"loc": rounds, "scale": rounds}
    manual = db.DistributionalRegressor(
        random_state=0, learning_rate=0.2, per_parameter_stopping=False,
        early_stopping=False, n_estimators=rounds, num_leaves=held.num_leaves_,
        min_child_samples=held.min_child_samples_).fit(X, y)
    manual.dispersion_shift_ = held.dispersion_shift_
    np.testing.assert_allclose(refit.predict_raw(X), manual.predict_raw(X), rtol=1e-10,
                               atol=1e-12)


def test_the_location_start_keeps_its_scaled_rounds(data):
    # 600 of the rows: the split's location start stops at 59 rounds (the refit's: 66) where
    # on all 1,500 it ran 330, 4 x the time.
    X, y = data[0][:600], data[1][:600]
    held, refit = _pair(X, y, location_start="gbm")
    n_fit = len(y) - math.ceil(0.1 * len(y))
    assert refit.location_start_.rounds == max(
        int(np.rint(held.location_start_.rounds * len(y) / n_fit)), 1)


def test_the_verbose_stop_line_names_the_split_s_rounds_and_the_refit_s(data, capsys):
    X, y = data
    held = db.DistributionalRegressor(early_stopping="holdout", learning_rate=0.2,
                                      random_state=0).fit(X, y)
    refit = db.DistributionalRegressor(learning_rate=0.2, random_state=0,
                                       verbose=10_000).fit(X, y)
    assert refit.early_stopping_ == "holdout_refit"  # the default on 1,500 rows
    assert capsys.readouterr().out.strip().splitlines()[-1] == (
        f"stopped at round {held.n_iter_}, best round {held.best_iteration_}, because the "
        f"validation loss did not improve for 20 rounds; the refit on all 1500 rows ran "
        f"{refit.best_iteration_} rounds")
