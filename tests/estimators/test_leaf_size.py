"""Tests of distboost.estimators.leaf_size: the location's fine leaves on near-deterministic
small data and on repeated feature rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.estimators import leaf_size
from distboost.estimators.leaf_size import (
    FINE_MIN_CHILD_SAMPLES,
    NEAR_DETERMINISTIC_R2,
    REPEATED_ROWS_LEAVES,
    out_of_fold_r2,
    repeated_rows_share,
    within_repeats_variance,
)
from distboost.estimators.runs import FitRuns
from distboost.families import get

#: A large learning rate and few rounds keep the fits short (the rule depends on neither).
LR = 0.2


def _model(**options):
    """The constant start unless a test asks otherwise: the linear start's choice (penalised
    fits on every fold, made again for the fine-leaved run) is half of a cross-validated fit
    here, and the rule judges the out-of-fold location whatever its start.  The fine leaves
    from the linear start are test_repeated_rows_give_the_location_fine_and_more_leaves'."""
    return db.DistributionalRegressor(**{"random_state": 0, "learning_rate": LR,
                                         "n_estimators": 150, "linear_start": False,
                                         **options})


def _design(n, noise, seed=0):
    """A designed experiment (as UCI's energy and yacht): four features on a grid of 96
    cells, the target a function of the cell with main effects, an interaction and a
    value per cell, plus ``noise``."""
    rng = np.random.default_rng(seed)
    levels = (3, 4, 4, 2)
    X = np.column_stack([rng.integers(0, k, size=n) for k in levels]).astype(float)
    cell = np.random.default_rng(42).normal(size=levels)
    f = 10.0 * X[:, 0] + 2.0 * X[:, 1] * X[:, 2] + cell[tuple(X.T.astype(int))]
    return X, f + noise * rng.normal(size=n)


@pytest.fixture(autouse=True)
def grid_rows_are_not_repeats(request, monkeypatch):
    """The grid's cells repeat (96 cells, 300 rows): the tests of the R^2 rule switch the
    repeated-rows rule off; those of repeated rows (named so) keep it."""
    if "repeated" not in request.node.name:
        monkeypatch.setattr(leaf_size, "REPEATED_ROWS_SHARE", 1.1)


@pytest.fixture(scope="module")
def near_deterministic():
    X, y = _design(300, 0.05)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(leaf_size, "REPEATED_ROWS_SHARE", 1.1)
        return X, y, _model().fit(X, y)


def test_near_deterministic_target_gives_the_location_fine_leaves(near_deterministic):
    X, y, model = near_deterministic
    assert model.early_stopping_ == "cv"
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    # The scale keeps the "auto" size: a variance from two rows is noise.
    assert model.min_child_samples_ == 9
    assert model.location_num_leaves_ == model.num_leaves_
    # The same fit as asking for those leaves explicitly.
    explicit = _model(param_options={"loc": {"min_child_samples": 2}}).fit(
        X, y)
    assert explicit.location_min_child_samples_ == 2
    np.testing.assert_allclose(model.predict_raw(X), explicit.predict_raw(X), rtol=1e-12)


def test_fine_leaves_follow_the_function_better_on_fresh_rows(near_deterministic):
    # A ratio of the errors of 0.53-0.74 on data seeds 0-7 (fresh rows: seed + 100).
    X, y, model = near_deterministic
    X_new, y_new = _design(3000, 0.05, seed=1)
    coarse = _model(param_options={"loc": {"min_child_samples": 9}}).fit(
        X, y)

    def rmse(m):
        return float(np.sqrt(np.mean((m.predict(X_new) - y_new) ** 2)))

    assert rmse(model) < 0.9 * rmse(coarse)


def test_noisy_target_keeps_the_auto_leaves():
    # On a held-out split (one run; the R^2 rule is the same as under cross-validation, whose
    # fine leaves test_near_deterministic_target_gives_the_location_fine_leaves checks): the
    # "auto" size of the 270 training rows is 8.
    X, y = _design(300, 3.0)
    model = _model(early_stopping="holdout").fit(X, y)
    assert model.location_min_child_samples_ == model.min_child_samples_ == 8


@pytest.mark.parametrize("options, expected", [
    ({"min_child_samples": 12}, 12),
    ({"param_options": {"loc": {"min_child_samples": 7}}}, 7),
])
def test_a_users_leaf_size_is_never_changed(options, expected):
    # On a held-out split (one run), where the "auto" leaves of these rows are the fine ones
    # (2 rows); the rule's guard is the same under cross-validation.
    X, y = _design(300, 0.05)
    model = _model(early_stopping="holdout", **options).fit(X, y)
    assert model.location_min_child_samples_ == expected


def test_families_without_a_location_have_none():
    X, y = _design(300, 0.05)
    # Held-out rows (one run): the rule looks for the location and finds none.
    model = _model(family="gamma", n_estimators=20, early_stopping="holdout").fit(
        X, np.exp(y / 10))
    assert model.location_min_child_samples_ is None
    assert model.location_num_leaves_ is None


def test_lognormal_judges_the_location_of_log_y(monkeypatch):
    # On a held-out split (one run), the comparison patched so that the fine run, once tried,
    # is kept (whether the fine leaves win is the cross-validated fixture's test): the fine
    # leaves say that the rule was tried, on the R^2 of log y on the held-out rows (0.986-0.999
    # on data seeds 0-9; the rule's bound: 0.98).  The location of log y judged as a
    # prediction of y itself would be far below.
    monkeypatch.setattr(FitRuns, "_beats", lambda self, challenger, incumbent, val, c: True)
    X, y = _design(300, 0.05)
    model = _model(family="lognormal", early_stopping="holdout").fit(X, np.exp(y / 10))
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES


def test_out_of_fold_r2_is_weighted_and_on_the_locations_scale():
    y = np.array([1.0, 2.0, 4.0, 8.0])
    raw = np.column_stack([np.log(y) + [0.1, -0.1, 0.1, -0.1], np.zeros(4)])
    log_r2 = 1 - 0.01 / np.var(np.log(y))
    assert out_of_fold_r2(get("lognormal"), raw, y, None, 0) == pytest.approx(log_r2)
    raw = np.column_stack([np.zeros(4), y + [1.0, 0.0, 0.0, 0.0]])
    w = np.array([0.0, 1.0, 1.0, 1.0])  # the row with the error counts for nothing
    assert out_of_fold_r2(get("normal"), raw, y, w, 1) == pytest.approx(1.0)
    assert out_of_fold_r2(get("normal"), raw, np.ones(4), None, 1) == -np.inf
    assert 0.9 < NEAR_DETERMINISTIC_R2 < 1.0


def test_saved_and_loaded(near_deterministic, tmp_path):
    X, _, model = near_deterministic
    model.save(tmp_path / "m.json")
    loaded = db.load(tmp_path / "m.json")
    assert loaded.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    assert loaded.location_num_leaves_ == model.location_num_leaves_
    np.testing.assert_allclose(loaded.predict_raw(X), model.predict_raw(X))


def _law(n, rng):
    X = rng.uniform(size=(n, 3))
    return X, 3.0 * X[:, 0] + np.sin(4.0 * X[:, 1]) + 0.5 * rng.normal(size=n)


def _records(n=400, seed=0):
    """A smooth law with noise and, as on UCI's red wine, a quarter of the records entered
    twice (same features, same target); fresh rows: new draws of the law and, a third of
    them, further copies of the twice-entered records."""
    rng = np.random.default_rng(seed)
    X, y = _law(n, rng)
    copies = rng.choice(n, n // 4, replace=False)
    X_train, y_train = np.vstack([X, X[copies]]), np.r_[y, y[copies]]
    X_new, y_new = _law(2000, np.random.default_rng(seed + 1))
    again = rng.choice(copies, 1000)
    return X_train, y_train, np.vstack([X_new, X[again]]), np.r_[y_new, y[again]]


def test_repeated_rows_share_counts_every_member_of_a_repeat():
    X = np.array([[1.0, np.nan], [1.0, np.nan], [2.0, 0.0], [3.0, 0.0]])
    assert repeated_rows_share(X) == 0.5  # NaN repeats NaN
    frame = pd.DataFrame({"a": pd.Categorical(["x", "x", "y", "y"]), "b": [1.0, 1.0, 1.0, 2.0]})
    assert repeated_rows_share(frame) == 0.5
    assert repeated_rows_share(X[:1]) == 0.0


def test_repeated_rows_give_the_location_fine_and_more_leaves(monkeypatch):
    # The linear start's choice (the default) as well: the fine-leaved run starts from it too,
    # chosen once (the fine-leaved run's folds are the same).
    from distboost.estimators import runs

    calls = []
    choose = runs.choose_linear_start
    monkeypatch.setattr(runs, "choose_linear_start",
                        lambda *args, **kwargs: calls.append(1) or choose(*args, **kwargs))
    X, y, X_new, y_new = _records()
    model = _model(linear_start="auto").fit(X, y)
    assert model.early_stopping_ == "cv"
    assert model.linear_start_ is not None and len(calls) == 1
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    assert model.location_num_leaves_ == REPEATED_ROWS_LEAVES > model.num_leaves_
    explicit = _model(linear_start="auto",
                      param_options={"loc": {"num_leaves": REPEATED_ROWS_LEAVES,
                                             "min_child_samples": 2}}).fit(X, y)
    np.testing.assert_allclose(model.predict_raw(X), explicit.predict_raw(X), rtol=1e-12)
    # Fresh rows, a third of them copies of the twice-entered records: the fine leaves
    # know those records' targets (and lose a little on the new draws).  Over the data
    # seeds 0-3, 6 and 7 (on seeds 4 and 5 the held-out rule keeps the auto leaves): RMSE
    # on the copies 0.29-0.71 x the auto leaves'; mean log score on the new draws 0.01-0.07
    # below theirs (on all fresh rows higher on five of the six seeds, so not asserted).
    auto = _model(linear_start="auto",
                  param_options={"loc": {"min_child_samples": model.min_child_samples_}})
    auto.fit(X, y)
    assert auto.location_min_child_samples_ > FINE_MIN_CHILD_SAMPLES

    def rmse(m, rows):
        return float(np.sqrt(np.mean((m.predict(X_new[rows]) - y_new[rows]) ** 2)))

    copies, draws = slice(2000, None), slice(0, 2000)
    assert rmse(model, copies) < 0.8 * rmse(auto, copies)
    assert model.score(X_new[draws], y_new[draws]) > auto.score(X_new[draws], y_new[draws]) - 0.1


def test_repeated_rows_whose_targets_disagree_keep_the_auto_leaves():
    # Repeated measurements as noisy as the location's errors say nothing about their point.
    # On a held-out split (one run; the repeats are judged as under cross-validation, whose
    # agreeing repeats test_repeated_rows_give_the_location_fine_and_more_leaves checks).
    rng = np.random.default_rng(0)
    X = np.repeat(rng.uniform(size=(100, 3)), 4, axis=0)
    y = 3.0 * X[:, 0] + np.sin(4.0 * X[:, 1]) + 0.5 * rng.normal(size=len(X))
    model = _model(early_stopping="holdout").fit(X, y)
    assert repeated_rows_share(X) == 1.0
    assert model.location_min_child_samples_ == model.min_child_samples_


def test_repeated_rows_keep_a_users_num_leaves(monkeypatch):
    # Judged on the fresh rows as eval_set (one run, not five folds and a refit).  Whether the
    # fine leaves win is the held-out comparison's call (test_repeated_rows_give_the_...
    # tests it): here no challenger beats the favourite, so the fine leaves are kept on any
    # draw of the data, and what is tested is that the location keeps the user's leaves.
    monkeypatch.setattr(FitRuns, "_beats", lambda self, challenger, incumbent, val, c: False)
    X, y, X_val, y_val = _records()
    model = _model(num_leaves=10).fit(X, y, eval_set=(X_val, y_val))
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    assert model.location_num_leaves_ == 10
    explicit = _model(num_leaves=10, param_options={"loc": {"min_child_samples": 2}}).fit(
        X, y, eval_set=(X_val, y_val))
    np.testing.assert_allclose(model.predict_raw(X), explicit.predict_raw(X), rtol=1e-12)


def test_repeated_rows_on_held_out_rows(monkeypatch):
    X, y, X_val, y_val = _records()
    model = _model().fit(X, y, eval_set=(X_val, y_val))
    assert model.early_stopping_ == "eval_set"
    assert model.location_min_child_samples_ == FINE_MIN_CHILD_SAMPLES
    # Above REPEATED_ROWS_MAX rows the repeats are not looked for.
    monkeypatch.setattr(leaf_size, "REPEATED_ROWS_MAX", 100)
    model = _model().fit(X, y, eval_set=(X_val, y_val))
    assert model.location_min_child_samples_ > FINE_MIN_CHILD_SAMPLES


def test_within_repeats_variance_pools_the_groups():
    X = np.array([[0.0], [0.0], [1.0], [1.0], [1.0], [2.0]])
    target = np.array([1.0, 3.0, 0.0, 1.0, 2.0, 100.0])  # the single row counts for nothing
    assert within_repeats_variance(X, target) == pytest.approx((2.0 + 2.0) / (5 - 2))
    assert np.isnan(within_repeats_variance(X[[0, 2, 5]], target[[0, 2, 5]]))
