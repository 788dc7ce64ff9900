"""``DistributionalRegressor(family="auto")``: candidates read from the target, the
one-standard-error rule, degenerate fits never chosen, and the estimator contract (clone,
get_params, save / load, the CLI)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone

import distboost as db
from distboost.selection.auto import _n_params, candidates, one_se_choice


@pytest.mark.parametrize(("y", "expected"), [
    (np.array([-1.5, 0.2, 3.0, 2.2]), ["normal", "histogram"]),
    (np.array([0.5, 1.2, 3.0, 2.2]), ["normal", "lognormal", "gamma", "histogram"]),
    (np.array([0.1, 0.5, 0.9, 0.3]), ["normal", "beta", "histogram"]),
    (np.array([0.0, 0.0, 1.5, 2.5]), ["normal", "zero_adjusted_gamma", "histogram"]),
    # counts with many levels; with zeros; few ordered levels; negative integers
    (np.arange(40.0), ["poisson", "negative_binomial", "histogram"]),
    (np.r_[np.zeros(5), np.arange(1.0, 30.0)],
     ["poisson", "negative_binomial", "zero_inflated_negative_binomial", "histogram"]),
    (np.array([3.0, 5, 6, 8, 5, 6]),
     ["poisson", "negative_binomial", "ordinal_logit", "histogram"]),
    (np.arange(-20.0, 20.0), ["normal", "histogram"]),
    # few levels, but labels the ordinal family cannot read as class indices
    (np.array([3.0, 5, 6, 8, 5, 6]) + 1e9, ["poisson", "negative_binomial", "histogram"]),
    (np.array([-1.0, 0, 1, 1, 0]), ["normal", "histogram"]),
])
def test_candidates_are_read_from_the_target(y, expected):
    assert candidates(y) == expected
    for name in expected:  # every candidate's support holds y
        family = db.families.get(name)
        if hasattr(family, "encode_target"):
            family.encode_target(y)
        family.validate_y(y)


def _table(rows):
    """A compare_families table over 3 folds: (family, crps_mean, crps_std, degenerate)."""
    table = pd.DataFrame(rows, columns=["family", "crps_mean", "crps_std", "degenerate"])
    table["skipped"] = ""
    return table


def test_one_standard_error_rule_prefers_fewer_parameters_and_never_a_degenerate_fit():
    n_params = {"normal": 2, "lognormal": 2, "histogram": 6, "mixture(normal, 3)": 8}
    # histogram is best; normal is within one standard error (0.3 / sqrt(3) = 0.17): normal.
    table = _table([("histogram", 1.00, 0.30, ""), ("normal", 1.10, 0.1, ""),
                    ("lognormal", 1.30, 0.1, ""),
                    ("mixture(normal, 3)", 0.50, 0.01, "scale_1 at its floor on 100% of rows")])
    assert one_se_choice(table, n_params) == "normal"
    assert list(table["within_1se"]) == [True, True, False, False]
    assert np.allclose(table["se"], table["crps_std"] / np.sqrt(3))
    # beyond one standard error of the best: the best
    table = _table([("histogram", 1.00, 0.03, ""), ("normal", 1.10, 0.01, "")])
    assert one_se_choice(table, n_params) == "histogram"
    assert table.attrs["chosen"] == "histogram"
    # equal parameter counts within one SE: the candidates' order
    table = _table([("lognormal", 1.00, 0.3, ""), ("normal", 1.05, 0.3, "")])
    assert one_se_choice(table, n_params) == "normal"
    with pytest.raises(ValueError, match=r"no candidate fits this target soundly \(2 of 2 "
                                         r"fits degenerate.*e.g. normal: scale"):
        one_se_choice(_table([("normal", 1.0, 0.1, "scale at its floor on 60% of rows"),
                              ("histogram", 0.5, 0.1, "collapsed")]), n_params)


def test_ordinal_levels_below_the_lowest_label_are_not_counted_as_parameters():
    """Wine scores 3 .. 8: ``ordinal_logit`` reads 9 classes from the integer labels, but the
    cutpoints of the empty classes 0 .. 2 are not free; 5 cutpoints and the location are, one
    fewer than the histogram's 7 ensembles, so the one-standard-error rule prefers it."""
    y = np.array([3.0, 4, 5, 5, 6, 6, 7, 8] * 10)
    family = db.families.get("ordinal_logit")
    family.encode_target(y)
    assert len(family.param_names) == 9
    assert _n_params("ordinal_logit", y, "scalar") == 6
    assert _n_params("ordinal_logit", y - 3, "scalar") == 6  # the same levels from 0
    n_params = {f: _n_params(f, y, "scalar") for f in ("ordinal_logit", "histogram")}
    assert n_params["histogram"] == 7
    table = _table([("ordinal_logit", 0.326, 0.017, ""), ("histogram", 0.325, 0.017, "")])
    assert one_se_choice(table, n_params) == "ordinal_logit"


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    return X, np.sin(X[:, 0]) + 0.3 * rng.normal(size=120)


@pytest.fixture(scope="module")
def auto_model(data):
    X, y = data
    return db.DistributionalRegressor(family="auto", n_estimators=5, early_stopping=False,
                                      random_state=0).fit(X, y)


def test_auto_records_its_choice_and_keeps_family_auto_in_its_params(auto_model, data,
                                                                     tmp_path):
    X, y = data
    table = auto_model.family_table_
    assert auto_model.get_params()["family"] == "auto"
    assert auto_model.family_.name == table.attrs["chosen"]
    assert set(table["family"]) == set(candidates(y))
    assert table.attrs["chosen"] in set(table.loc[table["within_1se"], "family"])
    assert not hasattr(clone(auto_model), "family_table_")
    path = tmp_path / "auto.json"
    auto_model.save(path)
    loaded = db.load(path)
    assert loaded.family == "auto" and loaded.family_.name == auto_model.family_.name
    pd.testing.assert_frame_equal(loaded.family_table_, table, check_dtype=False)
    assert loaded.family_table_.attrs["chosen"] == table.attrs["chosen"]
    np.testing.assert_allclose(loaded.predict_params(X[:5])[auto_model.family_.param_names[0]],
                               auto_model.predict_params(X[:5])[auto_model.family_.param_names[0]])


@pytest.mark.parametrize(("kwargs", "y", "message"), [
    ({"links": {"scale": "softplus"}}, None, r"links names the parameters of one family"),
    ({"param_options": {"scale": {"num_leaves": 4}}}, None, r"param_options names the"),
    ({}, np.r_[np.ones(119), np.nan], r"y has 1 of 120 rows that are NaN or infinite; "
                                      r"family='auto' needs finite values"),
    ({}, np.ones(120), r"at least 6 rows and 2 distinct values of y; got 120 rows"),
])
def test_auto_errors(data, kwargs, y, message):
    X, y0 = data
    with pytest.raises(ValueError, match=message):
        db.DistributionalRegressor(family="auto", **kwargs).fit(X, y0 if y is None else y)


@pytest.mark.slow  # a real comparison on wine quality (integers 3..8) and a GridSearchCV
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_auto_on_wine_chooses_a_law_on_the_integers_and_survives_grid_search():
    from sklearn.model_selection import GridSearchCV

    folder = Path(__file__).resolve().parents[2] / "shared" / "data" / "uci" / "wine-quality-red"
    if not folder.is_dir():
        folder = Path("/work/shared/data/uci/wine-quality-red")
    X, y = db.datasets.load_uci(folder)
    model = db.DistributionalRegressor(family="auto", n_estimators=100,
                                       random_state=0).fit(X[:800], y[:800])
    assert model.family_.name in {"ordinal_logit", "histogram", "poisson",
                                  "negative_binomial"}
    assert (model.family_table_["degenerate"] == "").any()
    search = GridSearchCV(db.DistributionalRegressor(family="auto", n_estimators=10,
                                                     early_stopping=False),
                          {"num_leaves": [4, 8]}, cv=2).fit(X[:300], y[:300])
    assert search.best_estimator_.get_params()["family"] == "auto"
    assert hasattr(search.best_estimator_, "family_table_")


def test_candidates_warnings_are_kept_in_the_table_not_shown():
    """Counts with zeros but no inflation: the zero-inflated candidate warns on every fold
    that there is no inflation to fit; the user, who chose no family, sees none of it."""
    import warnings

    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 2))
    y = rng.poisson(np.exp(0.3 * X[:, 0])).astype(float)  # about a third zeros, all Poisson
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = db.DistributionalRegressor(family="auto", n_estimators=5,
                                           early_stopping=False, random_state=0).fit(X, y)
    held = model.family_table_.attrs["warnings"]
    assert any("zero_inflated_negative_binomial" in m for m in held)
    if model.family_.name != "zero_inflated_negative_binomial":
        assert not any("zero_inflated" in str(w.message) for w in caught)


def test_the_comparison_says_its_rows_rate_and_rounds(monkeypatch, data):
    """A subsample of MAX_ROWS rows at COMPARE_RATE (or the estimator's rate if higher), at
    most MAX_ROUNDS rounds: the table's attrs say what the comparison was."""
    import distboost.selection.auto as auto

    monkeypatch.setattr(auto, "MAX_ROWS", 60)
    X, y = data
    model = db.DistributionalRegressor(family="auto", n_estimators=300, learning_rate=0.05,
                                       random_state=0)
    _, table = auto.choose(model, X, y)
    assert (table.attrs["rows"], table.attrs["learning_rate"],
            table.attrs["max_rounds"]) == (60, auto.COMPARE_RATE, auto.MAX_ROUNDS)
