"""Model files saved before the package-per-layer move (distboost 0.1.0, format 2, commit
fa862b7) load and predict the numbers they predicted then (tests/data/README.md)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db

DATA = Path(__file__).resolve().parents[1] / "data"


def _rows() -> pd.DataFrame:
    X = pd.read_csv(DATA / "format2_rows.csv")
    X["c"] = pd.Categorical(X["c"], categories=["u", "v", "w"])
    return X


@pytest.mark.parametrize("stem", ["gamma_regressor_format2", "censored_lognormal_format2"])
def test_a_regressor_saved_before_the_move_predicts_the_same(stem):
    model = db.load(DATA / f"{stem}.json")
    assert isinstance(model, db.DistributionalRegressor)
    want = np.loadtxt(DATA / f"{stem}_params.txt")
    np.testing.assert_allclose(model.predict_params(_rows()).to_numpy(), want, rtol=1e-12)


def test_a_classifier_saved_before_the_move_predicts_the_same():
    model = db.load(DATA / "classifier_format2.json")
    assert isinstance(model, db.DistributionalClassifier)
    want = np.loadtxt(DATA / "classifier_format2_proba.txt")
    np.testing.assert_allclose(model.predict_proba(_rows()[["a", "b"]]), want, rtol=1e-12)
