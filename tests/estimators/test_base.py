"""Tests of distboost.estimators.base: the fit skeleton and prediction methods every estimator
shares."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import NotFittedError

import distboost as db
from distboost.datasets import make_heteroscedastic_sine


def test_eval_sample_weight_zero_equals_leaving_rows_out():
    rng = np.random.default_rng(5)
    X = rng.uniform(-2, 2, size=(900, 2))
    y = X[:, 0] + rng.normal(size=900) * (0.3 + 0.3 * np.abs(X[:, 1]))
    X_tr, y_tr, X_va, y_va = X[:600], y[:600], X[600:], y[600:]
    w = rng.uniform(0.5, 2.0, size=300)
    w[::3] = 0.0
    keep = w > 0
    kw = dict(n_estimators=300, learning_rate=0.1, random_state=0)
    a = db.DistributionalRegressor(**kw).fit(X_tr, y_tr, eval_set=[(X_va, y_va)],
                                             eval_sample_weight=[w])
    b = db.DistributionalRegressor(**kw).fit(X_tr, y_tr, eval_set=(X_va[keep], y_va[keep]),
                                             eval_sample_weight=w[keep])
    c = db.DistributionalRegressor(**kw).fit(X_tr, y_tr, eval_set=(X_va, y_va))
    assert a.best_iteration_ == b.best_iteration_
    assert a.dispersion_shift_ == pytest.approx(b.dispersion_shift_, abs=1e-12)
    np.testing.assert_allclose(a.evals_result_["valid"]["nll"], b.evals_result_["valid"]["nll"],
                               rtol=1e-10)
    # The weights matter: unweighted validation rows give another history.
    history_a, history_c = a.evals_result_["valid"]["nll"], c.evals_result_["valid"]["nll"]
    assert abs(history_a[0] - history_c[0]) > 1e-3


def test_eval_sample_weight_errors():
    X = np.random.default_rng(0).normal(size=(40, 1))
    y = X[:, 0]
    model = db.DistributionalRegressor(n_estimators=2)
    with pytest.raises(ValueError, match="eval_sample_weight was given without an eval_set"):
        model.fit(X, y, eval_sample_weight=np.ones(40))
    with pytest.raises(ValueError, match=r"eval_sample_weight has shape \(3,\); expected \(40,\)"):
        model.fit(X, y, eval_set=(X, y), eval_sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="eval_sample_weight has 1 of 40 rows that are negative"):
        model.fit(X, y, eval_set=(X, y), eval_sample_weight=np.r_[-1.0, np.ones(39)])


def test_a_failed_fit_leaves_the_estimator_unfitted():
    model = db.DistributionalRegressor(family="gamma", n_estimators=2)
    X = np.zeros((5, 1))
    with pytest.raises(ValueError, match="outside the support"):
        model.fit(X, np.array([1.0, 2.0, -1.0, 3.0, 4.0]))
    assert not hasattr(model, "family_") and not hasattr(model, "ensemble_")
    with pytest.raises(NotFittedError):
        model.predict(X)


def test_staged_prediction_and_predict_raw():
    X, y, _ = make_heteroscedastic_sine(600, random_state=0)
    model = db.DistributionalRegressor(n_estimators=40, early_stopping=False,
                                       random_state=0).fit(X, y)
    raw = model.predict_raw(X[:5])
    assert raw.shape == (5, 2)
    params = model.predict_params(X[:5])
    np.testing.assert_allclose(raw[:, 1], np.log(params["scale"]))
    start = model.predict_dist(X[:5], iteration=0)
    np.testing.assert_allclose(start.params["loc"], model.init_params_["loc"])
    mid = model.predict_params(X[:5], iteration=20)
    assert not np.allclose(mid["loc"], params["loc"])
    np.testing.assert_allclose(model.predict_params(X[:5], iteration=40), params)


def test_predictions_keep_the_index_of_a_dataframe():
    import pandas as pd

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(-2, 2, 300)}, index=[f"r{i}" for i in range(300)])
    y = X["x"].to_numpy() + rng.normal(size=300)
    model = db.DistributionalRegressor(n_estimators=5, early_stopping=False,
                                       random_state=0).fit(X, y)
    X_new = X.iloc[[5, 3, 1]]
    dist = model.predict_dist(X_new)
    assert list(dist.index) == ["r5", "r3", "r1"]
    frame = dist.to_frame([0.1, 0.9])
    assert list(frame.index) == ["r5", "r3", "r1"]
    np.testing.assert_allclose(frame[["loc", "scale"]], model.predict_params(X_new))
    q = model.predict_quantiles(X_new, [0.1, 0.9])
    assert list(q.index) == ["r5", "r3", "r1"] and list(q.columns) == ["q0.1", "q0.9"]
    np.testing.assert_allclose(q, frame[["q0.1", "q0.9"]])
    iv = model.predict_interval(X_new, 0.8)
    assert list(iv.columns) == ["lower", "upper"] and list(iv.index) == ["r5", "r3", "r1"]
    np.testing.assert_allclose(iv, q)
    # arrays in, arrays out (no index to keep)
    assert isinstance(model.predict_quantiles(X_new.to_numpy(), [0.5]), np.ndarray)
    assert model.predict_dist(X_new.to_numpy()).index is None


def test_progress_bar_changes_nothing_but_the_screen(capsys):
    X, y, _ = make_heteroscedastic_sine(300, random_state=1)
    kw = dict(n_estimators=30, early_stopping="holdout", random_state=0)
    quiet = db.DistributionalRegressor(**kw).fit(X, y)
    assert capsys.readouterr().err == ""
    shown = db.DistributionalRegressor(progress=True, **kw).fit(X, y)
    err = capsys.readouterr().err
    assert "boosting" in err and f"{shown.n_iter_}/30" in err
    np.testing.assert_array_equal(shown.predict_raw(X), quiet.predict_raw(X))
    assert db.DistributionalRegressor().get_params()["progress"] is False
    # small data: one bar per cross-validation fold, then the refit's
    db.DistributionalRegressor(progress=True, n_estimators=10, random_state=0).fit(X[:60],
                                                                                y[:60])
    err = capsys.readouterr().err
    assert "fold 1/5" in err and "fold 5/5" in err and "boosting" in err


@pytest.mark.parametrize("early_stopping, pattern", [
    ("holdout", r"stopped at round (\d+), best round (\d+), because the validation loss did "
                r"not improve for 5 rounds"),
    (False, r"stopped at round (\d+), best round (\d+), because the cap n_estimators=15 was "
            r"reached"),
    ("cv", r"stopped at round (\d+), best round (\d+), because 5-fold cross-validation chose"),
])
def test_verbose_fit_ends_with_why_it_stopped(early_stopping, pattern, capsys):
    import re

    X, y, _ = make_heteroscedastic_sine(400, random_state=2)
    n_estimators = 15 if early_stopping is False else 400
    model = db.DistributionalRegressor(n_estimators=n_estimators, n_iter_no_change=5,
                                       learning_rate=0.3, early_stopping=early_stopping,
                                       verbose=1000, random_state=0).fit(X, y)
    last = capsys.readouterr().out.strip().splitlines()[-1]
    match = re.fullmatch(pattern + ".*", last)
    assert match, last
    assert (int(match[1]), int(match[2])) == (model.n_iter_, model.best_iteration_)


def test_stop_line_when_cross_validation_keeps_the_start():
    from distboost.estimators.progress import stop_line

    line = stop_line("cv", "n_estimators", 1, 0, 1000, 20, 5)
    assert line == ("stopped at round 1, best round 0, because 5-fold cross-validation chose 0 "
                    "rounds (the earliest within one standard error of the best); the start "
                    "values are kept")
    assert stop_line("holdout", "no_descent", 7, 5, 100, 20).endswith(
        "no step along a round's trees lowered the training loss (see the warning)")
    assert stop_line("holdout_refit", "early_stopping", 90, 70, 3000, 20,
                     refit=(78, 2000)) == (
        "stopped at round 90, best round 70, because the validation loss did not improve for "
        "20 rounds; the refit on all 2000 rows ran 78 rounds")


def test_a_step_the_scoring_rule_has_no_metric_for_is_refused_before_any_fit(monkeypatch):
    from distboost.estimators import runs

    def no_fit(*args, **kwargs):
        raise AssertionError("a fit ran before the step was checked")

    monkeypatch.setattr(runs, "fit_boosting", no_fit)
    monkeypatch.setattr(runs, "fit_linear_start", no_fit)
    monkeypatch.setattr(runs, "choose_linear_start", no_fit)
    X = np.random.default_rng(0).normal(size=(200, 2))
    for step in ("fisher", "natural"):
        with pytest.raises(ValueError, match=f"step='{step}' needs the Riemannian metric"):
            db.DistributionalRegressor(scoring_rule="crps", step=step).fit(X, X[:, 0])
