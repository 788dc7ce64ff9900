"""A censored family's Predictive scores (n, 2) bounds: nll / log_prob / pdf give the censored
likelihood (scipy's densities and distribution functions the reference); crps, pit, coverage and
the like refuse them, naming the survival scores.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import distboost as db

SCALE = np.array([1.0, 2.0, 1.5, 3.0, 0.7, 2.5])
CONC = np.array([1.5, 0.8, 2.0, 1.2, 3.0, 1.0])
# exact, right-censored, exact, interval-censored, left-censored, right-censored
Y = np.array([[1.2, 1.2], [0.9, np.inf], [2.0, 2.0], [1.0, 4.0], [0.0, 0.5], [3.0, np.inf]])


def _dist(family="censored_weibull"):
    return db.Predictive.from_params(family, scale=SCALE, concentration=CONC)


def _scipy_loglik():
    law = st.weibull_min(c=CONC, scale=SCALE)
    lo, hi = Y[:, 0], Y[:, 1]
    with np.errstate(divide="ignore"):  # log(0) of the branch np.where drops
        return np.where(lo == hi, law.logpdf(lo), np.log(law.cdf(hi) - law.cdf(lo)))


def test_nll_of_censored_bounds_is_the_censored_likelihood():
    d = _dist()
    want = -_scipy_loglik()
    np.testing.assert_allclose(d.nll(Y), want, rtol=1e-10)
    np.testing.assert_allclose(d.log_prob(Y), -want, rtol=1e-10)
    np.testing.assert_allclose(d.pdf(Y), np.exp(-want), rtol=1e-10)
    # The same numbers through db.metrics, for the censored and the latent Predictive.
    np.testing.assert_allclose(db.metrics.nll(d, Y), want, rtol=1e-10)
    np.testing.assert_allclose(db.metrics.censored_nll(d, Y), want, rtol=1e-10)
    np.testing.assert_allclose(db.metrics.censored_nll(_dist("weibull"), Y), want, rtol=1e-10)
    assert db.metrics.mean_nll(d, Y) == pytest.approx(want.mean(), rel=1e-10)
    # Exact points (n,) and several points per row (n, 3) keep the latent density.
    law = st.weibull_min(c=CONC, scale=SCALE)
    np.testing.assert_allclose(d.nll(Y[:, 0] + 0.1), -law.logpdf(Y[:, 0] + 0.1), rtol=1e-10)
    pts = np.c_[Y[:, 0] + 0.1, Y[:, 0] + 0.2, Y[:, 0] + 0.3]
    assert d.nll(pts).shape == (6, 3)
    # cdf / sf of bounds are the distribution functions at both bounds, as for any (n, 2).
    np.testing.assert_allclose(d.cdf(Y), law.cdf(Y.T).T, rtol=1e-10)


def test_scores_without_a_censored_meaning_refuse_bounds_by_name():
    d = _dist()
    for fn in (d.pit, d.crps, lambda y: db.metrics.coverage(d, y, 0.9),
               lambda y: db.metrics.pit_cdf(d, y, [0.5]),
               lambda y: db.metrics.interval_score(d, y, 0.9)):
        with pytest.raises(ValueError, match=r"db\.metrics\.d_calibration"):
            fn(Y)
    # A latent (uncensored) family's nll keeps its (n, m) meaning: points, not bounds.
    assert _dist("weibull").nll(Y).shape == (6, 2)
    with pytest.raises(ValueError, match=r"1 of 6 rows with NaN bounds"):
        d.nll(np.where(np.arange(12).reshape(6, 2) == 3, np.nan, Y))


def test_a_fitted_censored_model_scores_its_bounds_with_nll_and_score():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    t = 2.0 * rng.weibull(1.5, 60) * np.exp(0.3 * X[:, 0])
    c = rng.uniform(0, 4, 60)
    y = db.censored.right(np.minimum(t, c), t <= c)
    model = db.DistributionalRegressor(family="censored_weibull", n_estimators=2,
                                       early_stopping=False).fit(X, y)
    d = model.predict_dist(X)
    nll = d.nll(y)
    assert nll.shape == (60,) and np.isfinite(nll).all()
    p = d.params
    law = st.weibull_min(c=p["concentration"], scale=p["scale"])
    event = y[:, 0] == y[:, 1]
    want = np.where(event, -law.logpdf(y[:, 0]), -law.logsf(y[:, 0]))
    np.testing.assert_allclose(nll, want, rtol=1e-9)
    assert model.score(X, y) == pytest.approx(-want.mean(), rel=1e-9)
