"""The fits whose predictions ``test_policy.py`` compares with values committed before the
fit's decisions moved into :mod:`distboost.estimators.policy` (issue 48: no change of
behaviour).  ``python tests/estimators/policy_cases.py`` rewrites the reference file; run it
only on code whose fits are known right."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import distboost as db

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "policy_reference.json"
#: The rows at which the defaults differ (cross-validation, held-out split and refit, a
#: held-out split alone, and the cores of a large fit).
SIZES = (30, 300, 3_000, 30_000)
PREDICT_ROWS = 12


def frame(n: int, seed: int = 0) -> tuple[pd.DataFrame, np.ndarray]:
    """n rows of four numeric features and a categorical; a heteroscedastic target."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 4)), columns=[f"x{i}" for i in range(4)])
    X["group"] = pd.Categorical(rng.choice(["a", "b", "c"], size=n))
    shift = X["group"].cat.codes.to_numpy() * 0.5
    y = 3 + 2 * np.sin(X["x0"]) + X["x1"] + shift + np.exp(0.4 * X["x2"]) * rng.normal(size=n)
    return X, y


def _default(n):
    X, y = frame(n)
    return db.DistributionalRegressor(random_state=0).fit(X, y)


def _eval_set():
    X, y = frame(2_000)
    Xv, yv = frame(500, seed=1)
    return db.DistributionalRegressor(random_state=0).fit(X, y, eval_set=(Xv, yv))


def _censored():
    rng = np.random.default_rng(2)
    X, y = frame(600, seed=2)
    y = np.exp(y / 3)
    cut = rng.uniform(0.5, 3, size=y.size) * np.median(y)
    censored = db.censored.right(np.minimum(y, cut), (y <= cut).astype(int))
    return db.DistributionalRegressor(family="censored_lognormal", random_state=0).fit(
        X, censored)


def _auto():
    X, y = frame(400, seed=3)
    return db.DistributionalRegressor(family="auto", random_state=0).fit(X, np.exp(y / 3))


#: name -> a function fitting the case's model.
CASES = {**{f"default_{n}": (lambda n=n: _default(n)) for n in SIZES},
         "eval_set": _eval_set, "censored_lognormal_600": _censored, "auto_400": _auto}


def predictions(model, X) -> dict:
    """The predicted parameters (columns as lists) of the fitted model."""
    params = model.predict_params(X)
    return {str(k): [float(v) for v in params[k]] for k in params.columns}


if __name__ == "__main__":
    X_new = frame(PREDICT_ROWS, seed=99)[0]
    out = {name: predictions(fit(), X_new) for name, fit in CASES.items()}
    REFERENCE.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {REFERENCE}")
