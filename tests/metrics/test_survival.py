"""Survival scores: censored NLL, survival CRPS, concordance, D-calibration."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from scipy.integrate import quad

import distboost as db
from distboost import metrics


def _weibull(n, scale=2.0, conc=1.5):
    return db.Predictive.from_params("weibull", scale=np.full(n, scale),
                                     concentration=np.full(n, conc))


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 4000
    t = 2.0 * rng.weibull(1.5, n)
    c = rng.uniform(0, 4, n)
    return db.censored.right(np.minimum(t, c), t <= c), t


def test_censored_nll_against_scipy(data):
    y, _ = data
    law = st.weibull_min(c=1.5, scale=2.0)
    want = np.where(y[:, 1] == y[:, 0], -law.logpdf(y[:, 0]), -law.logsf(y[:, 0]))
    np.testing.assert_allclose(metrics.censored_nll(_weibull(len(y)), y), want, rtol=1e-10)


def test_survival_crps_against_quadrature():
    law = st.norm(1.0, 2.0)
    y = np.array([[0.5, 0.5], [1.0, np.inf], [-np.inf, 0.0], [0.0, 2.0]])
    dist = db.Predictive.from_params("normal", loc=np.ones(4), scale=np.full(4, 2.0))
    got = metrics.survival_crps(dist, y)

    def ref(lo, hi):
        left = quad(lambda x: law.cdf(x) ** 2, -np.inf, lo)[0] if np.isfinite(lo) else 0.0
        right = quad(lambda x: law.sf(x) ** 2, hi, np.inf)[0] if np.isfinite(hi) else 0.0
        return left + right

    np.testing.assert_allclose(got, [ref(*row) for row in y], rtol=1e-6)
    assert got[0] == pytest.approx(metrics.crps_normal(0.5, 1.0, 2.0), rel=1e-6)


def test_concordance_index():
    y = db.censored.right([1.0, 2.0, 3.0, 4.0], [1, 1, 0, 1])
    perfect = db.Predictive.from_params("lognormal", loc=np.log([1.0, 2.0, 3.0, 4.0]),
                                        scale=np.full(4, 0.1))
    reverse = db.Predictive.from_params("lognormal", loc=np.log([4.0, 3.0, 2.0, 1.0]),
                                        scale=np.full(4, 0.1))
    assert metrics.concordance_index(perfect, y) == pytest.approx(1.0)
    assert metrics.concordance_index(reverse, y) == pytest.approx(0.0)
    # Comparable pairs: (0,1), (0,2), (0,3), (1,2), (1,3) = 5; the censored row 2 is never
    # the earlier one.  Predicting all equal gives one half.
    flat = db.Predictive.from_params("lognormal", loc=np.zeros(4), scale=np.full(4, 0.1))
    assert metrics.concordance_index(flat, y) == pytest.approx(0.5)


def test_d_calibration_accepts_truth_and_rejects_a_wrong_model(data):
    y, _ = data
    good = metrics.d_calibration(_weibull(len(y)), y)
    bad = metrics.d_calibration(_weibull(len(y), scale=1.2), y)
    assert good["pvalue"] > 0.01 and bad["pvalue"] < 1e-6
    assert good["histogram"].sum() == pytest.approx(1.0)
    np.testing.assert_allclose(good["histogram"], 0.1, atol=0.02)


def test_restricted_mean_against_quadrature():
    d = db.Predictive.from_params("weibull", scale=[2.0, 1.0], concentration=[1.5, 0.8])
    want = [quad(lambda t, s=s, c=c: st.weibull_min(c=c, scale=s).sf(t), 0, 3)[0]
            for s, c in [(2.0, 1.5), (1.0, 0.8)]]
    np.testing.assert_allclose(d.restricted_mean(3.0), want, rtol=1e-7)
    with pytest.raises(ValueError, match="finite lower end"):
        db.Predictive.from_params("normal", loc=[0.0], scale=[1.0]).restricted_mean(1.0)


def test_shape_errors():
    with pytest.raises(ValueError, match=r"\(n, 2\) bounds with n = 3"):
        metrics.survival_crps(_weibull(3), np.ones((2, 2)))
