"""Numerical CRPS against the closed forms, including extreme parameters and tails."""

from __future__ import annotations

import numpy as np
import pytest
from test_closed_form import GRID, IDS

import distboost as db


@pytest.mark.parametrize("name, params, law", GRID, ids=IDS)
def test_numerical_matches_closed_form(name, params, law):
    ys = law.ppf([1e-6, 0.01, 0.3, 0.5, 0.97, 1 - 1e-6])
    if name == "beta":
        ys = np.clip(ys, 1e-9, 1 - 1e-9)
    sd = law.std()
    if np.isfinite(sd) and name not in ("beta",):
        ys = np.r_[ys, law.mean() + 40 * sd]
        if law.support()[0] == -np.inf:
            ys = np.r_[ys, law.mean() - 40 * sd]
    if db.families.get(name).discrete:
        ys = np.floor(ys)  # counts are integers
    dist = db.Predictive.from_params(name, **{k: np.full(ys.size, v) for k, v in params.items()})
    closed = db.metrics.crps(dist, ys)
    numeric = db.metrics.crps(dist, ys, method="numerical")
    np.testing.assert_allclose(numeric, closed, rtol=1e-4)


def test_weibull_uses_the_numerical_path_and_matches_quadrature():
    import scipy.stats as st
    from scipy.integrate import quad

    law = st.weibull_min(c=1.7, scale=2.0)
    ys = np.array([0.1, 1.0, 3.0, 9.0])
    dist = db.Predictive.from_params("weibull", scale=np.full(4, 2.0),
                                     concentration=np.full(4, 1.7))
    want = [quad(lambda x: law.cdf(x) ** 2, 0, y)[0] + quad(lambda x: law.sf(x) ** 2, y, np.inf)[0]
            for y in ys]
    np.testing.assert_allclose(db.metrics.crps(dist, ys), want, rtol=1e-6)


def test_user_family_gets_a_crps():
    """A family unknown to the closed-form table (here: Normal under another name)."""

    class MyNormal(db.families.get("normal").__class__):
        name = "my_normal_for_crps"

    dist = db.Predictive(MyNormal(), {"loc": np.zeros(3), "scale": np.ones(3)})
    np.testing.assert_allclose(db.metrics.crps(dist, [0.0, 1.0, -2.0]),
                               db.metrics.crps_normal([0.0, 1.0, -2.0], 0.0, 1.0), rtol=1e-6)
