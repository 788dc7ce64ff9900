"""scikit-learn scorers: signs, names, and use in cross_val_score / GridSearchCV."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.model_selection import GridSearchCV, cross_val_score

import distboost as db
from distboost import metrics
from distboost.metrics import get_scorer


class _Fixed:
    """A stand-in estimator predicting N(0, scale) for every row."""

    def __init__(self, scale):
        self.scale = scale

    def predict_dist(self, X):
        n = len(X)
        return db.Predictive.from_params("normal", loc=np.zeros(n), scale=np.full(n, self.scale))


def test_higher_is_better():
    rng = np.random.default_rng(0)
    X, y = np.zeros((5000, 1)), rng.normal(size=5000)
    for name in ["crps", "nll", "interval_score_90", "coverage_90", "calibration_error",
                 "pinball_90", "pinball_10"]:
        scorer = get_scorer(name)
        good, bad = scorer(_Fixed(1.0), X, y), scorer(_Fixed(3.0), X, y)
        assert good > bad, name
    assert get_scorer("coverage_90")(_Fixed(1.0), X, y) == pytest.approx(0.0, abs=0.02)
    # The median of N(0, 1) and N(0, 3) is the same: equal pinball loss at level 0.5.
    pin50 = get_scorer("pinball_50")
    assert pin50(_Fixed(1.0), X, y) == pytest.approx(pin50(_Fixed(3.0), X, y))


def test_unknown_scorer_lists_names():
    with pytest.raises(ValueError, match="known scorers"):
        get_scorer("accuracy")
    with pytest.raises(ValueError, match="known scorers"):
        get_scorer("coverage_100")


def test_cross_val_and_grid_search_with_the_regressor():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(400, 2))
    y = X[:, 0] + rng.normal(size=400) * (0.2 + 0.3 * np.abs(X[:, 1]))
    model = db.DistributionalRegressor(n_estimators=30, num_leaves=4, linear_start=False,
                                       random_state=0)
    scores = cross_val_score(model, X, y, cv=3, scoring=get_scorer("crps"))
    assert scores.shape == (3,) and np.all(scores < 0)
    grid = GridSearchCV(model, {"learning_rate": [0.01, 0.1]}, cv=3,
                        scoring=get_scorer("nll")).fit(X, y)
    assert grid.best_params_["learning_rate"] == 0.1


def _linear_data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * [1.0, 100.0]
    y = 3.0 * X[:, 0] + rng.normal(size=n) * 0.5
    return X, y


def test_scorer_goes_through_a_pipeline():
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _linear_data()
    pipe = make_pipeline(StandardScaler(), db.DistributionalRegressor(
        n_estimators=30, num_leaves=4, early_stopping=False, random_state=0)).fit(X, y)
    want = -metrics.mean_crps(pipe[-1].predict_dist(pipe[0].transform(X)), y)
    assert get_scorer("crps")(pipe, X, y) == pytest.approx(want, rel=1e-12)
    # predict_dist(pipe, X) is what pipe.predict would be as a distribution.
    assert metrics.predict_dist(pipe, X).mean == pytest.approx(pipe.predict(X))


def test_grid_search_over_a_pipeline_finds_the_good_candidate():
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _linear_data()
    pipe = Pipeline([("scale", StandardScaler()), ("model", db.DistributionalRegressor(
        n_estimators=30, num_leaves=4, early_stopping=False, random_state=0))])
    # A learning rate of 1e-4 barely leaves the constant model: clearly the worse candidate,
    # listed first so that all-NaN scores (the old failure) would pick it.
    grid = GridSearchCV(pipe, {"model__learning_rate": [1e-4, 0.2]}, cv=3,
                        scoring=get_scorer("crps"), error_score="raise").fit(X, y)
    scores = grid.cv_results_["mean_test_score"]
    assert np.isfinite(scores).all()
    assert grid.best_params_ == {"model__learning_rate": 0.2}
    assert scores[1] > scores[0] + 0.5
    # A fitted search is scored through its best estimator.
    assert get_scorer("crps")(grid, X, y) == pytest.approx(
        get_scorer("crps")(grid.best_estimator_, X, y))


def test_scorer_refuses_a_transformed_target():
    from sklearn.compose import TransformedTargetRegressor

    X, y = _linear_data()
    ttr = TransformedTargetRegressor(
        db.DistributionalRegressor(n_estimators=5, random_state=0),
        func=np.arcsinh, inverse_func=np.sinh).fit(X, y)
    with pytest.raises(ValueError, match="cannot in general be mapped back to y"):
        get_scorer("crps")(ttr, X, y)


def test_scorer_names_what_it_needs():
    from sklearn.linear_model import LinearRegression

    X, y = _linear_data(50)
    with pytest.raises(ValueError, match="LinearRegression has no predict_dist.*Pipeline"):
        get_scorer("nll")(LinearRegression().fit(X, y), X, y)
    grid = GridSearchCV(_Fixed(1.0), {}, refit=False)
    grid.cv_results_ = {}
    with pytest.raises(ValueError, match="refit=False"):
        get_scorer("nll")(grid, X, y)


def test_survival_scorers():
    rng = np.random.default_rng(0)
    t = rng.exponential(2.0, 500)
    c = rng.exponential(4.0, 500)
    y = db.censored.right(np.minimum(t, c), t <= c)
    good, bad = _FixedSurvival(2.0), _FixedSurvival(0.3)
    X = np.zeros((500, 1))
    for name in ["censored_nll", "survival_crps"]:
        assert get_scorer(name)(good, X, y) > get_scorer(name)(bad, X, y), name
        assert get_scorer(name)(good, X, y, sample_weight=np.ones(500)) == pytest.approx(
            get_scorer(name)(good, X, y))
    assert get_scorer("concordance_index")(good, X, y) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no sample_weight"):
        get_scorer("concordance_index")(good, X, y, sample_weight=np.ones(500))
    with pytest.raises(ValueError, match="needs exact observations.*censored_nll"):
        get_scorer("crps")(good, X, y)


class _FixedSurvival:
    """Exponential survival times with a fixed mean for every row."""

    def __init__(self, mean):
        self.mean = mean

    def predict_dist(self, X):
        rate = np.full(len(X), 1.0 / self.mean)
        return db.Predictive.from_params("censored_exponential", rate=rate)
