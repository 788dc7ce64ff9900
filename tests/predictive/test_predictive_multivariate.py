"""``MultivariatePredictive``: construction from torch's or the flat parameters, joint
densities, moments and exact margins against scipy, samples, indexing, the table, and the
errors of what a vector does not have."""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import distboost as db

LOC = np.array([[0.0, 1.0, -1.0], [2.0, -3.0, 0.5]])
TRIL = np.array([[[1.0, 0.0, 0.0], [0.5, 2.0, 0.0], [-0.3, 0.2, 0.7]],
                 [[0.3, 0.0, 0.0], [-0.2, 1.0, 0.0], [0.0, 0.4, 1.5]]])
ALPHA = np.array([[1.0, 2.0, 3.0], [0.5, 0.5, 4.0]])


def _mvn(index=None):
    return db.Predictive.from_params("multivariate_normal", loc=LOC, scale_tril=TRIL) \
        if index is None else db.Predictive("multivariate_normal",
                                            {"loc": LOC, "scale_tril": TRIL}, index=index)


def test_a_vector_family_gives_a_multivariate_predictive():
    d = _mvn()
    assert isinstance(d, db.MultivariatePredictive) and isinstance(d, db.Predictive)
    assert len(d) == 2 and d.dim == 3 and d.family.parts == ["y0", "y1", "y2"]
    np.testing.assert_array_equal(d.params["loc"], LOC)
    np.testing.assert_array_equal(d.params["scale_tril"], TRIL)
    # the flat outputs (what an estimator predicts) build the same distribution
    again = db.Predictive(d.family, d.flat_params)
    np.testing.assert_array_equal(again.covariance, d.covariance)
    by_name = db.Predictive("multivariate_normal", d.flat_params)  # d read from the names
    np.testing.assert_array_equal(by_name.covariance, d.covariance)
    assert type(db.Predictive.from_params("normal", loc=0.0, scale=1.0)) is db.Predictive


def test_moments_density_and_margins_match_scipy():
    d = _mvn()
    cov = TRIL @ TRIL.transpose(0, 2, 1)
    np.testing.assert_allclose(d.covariance, cov, rtol=1e-14)
    np.testing.assert_allclose(d.mean, LOC)
    np.testing.assert_allclose(d.variance, np.diagonal(cov, axis1=1, axis2=2))
    sd = np.sqrt(np.diagonal(cov, axis1=1, axis2=2))
    np.testing.assert_allclose(d.correlation, cov / (sd[:, :, None] * sd[:, None, :]))
    y = np.array([[0.5, 0.0, 1.0], [1.0, -2.0, 0.0]])
    want = [st.multivariate_normal(LOC[i], cov[i]).logpdf(y[i]) for i in range(2)]
    np.testing.assert_allclose(d.log_prob(y), want, rtol=1e-12)
    np.testing.assert_allclose(d.nll(y), -np.asarray(want), rtol=1e-12)
    np.testing.assert_allclose(d.log_prob(y[0]), [want[0], st.multivariate_normal(
        LOC[1], cov[1]).logpdf(y[0])], rtol=1e-12)  # one vector for every row
    q = d.marginal(1).quantile([0.05, 0.95])
    np.testing.assert_allclose(q, st.norm(LOC[:, 1], sd[:, 1]).ppf([[0.05], [0.95]]).T)
    assert d.marginal("y2").family.name == "normal"
    iv = d.interval(0.8)
    assert iv.shape == (2, 3, 2)
    np.testing.assert_allclose(iv[:, 2], d.marginal(2).interval(0.8))


def test_dirichlet_margins_are_exact_betas():
    d = db.Predictive.from_params("dirichlet", concentration=ALPHA)
    np.testing.assert_allclose(d.mean, ALPHA / ALPHA.sum(1, keepdims=True))
    np.testing.assert_allclose(d.covariance, [st.dirichlet(a).cov() for a in ALPHA], atol=1e-15)
    law = st.beta(ALPHA[:, 0], ALPHA.sum(1) - ALPHA[:, 0])
    np.testing.assert_allclose(d.marginal(0).quantile(0.3), law.ppf(0.3), rtol=1e-10)
    y = np.array([[0.2, 0.3, 0.5], [0.1, 0.1, 0.8]])
    np.testing.assert_allclose(d.log_prob(y), [st.dirichlet(a).logpdf(v) for a, v in
                                               zip(ALPHA, y, strict=True)], rtol=1e-12)
    # off the simplex the density is zero, not an error
    assert d.log_prob([[0.2, 0.3, 0.6], [0.0, 0.2, 0.8]]).tolist() == [-np.inf, -np.inf]


def test_samples_have_the_predicted_moments():
    d = _mvn()
    x = d.sample(20_000, random_state=0)
    assert x.shape == (20_000, 2, 3)
    np.testing.assert_array_equal(x, d.sample(20_000, random_state=0))
    se = np.sqrt(d.variance / 20_000)
    assert np.all(np.abs(x.mean(0) - d.mean) < 5 * se)
    emp = np.einsum("mni,mnj->nij", x - d.mean, x - d.mean) / 20_000
    np.testing.assert_allclose(emp, d.covariance, atol=0.1)


def test_indexing_pickling_and_the_table_keep_rows():
    d = _mvn(index=pd.Index(["a", "b"], name="id"))
    one = d[1]
    assert isinstance(one, db.MultivariatePredictive) and len(one) == 1
    np.testing.assert_array_equal(one.covariance[0], d.covariance[1])
    assert list(one.index) == ["b"]
    back = pickle.loads(pickle.dumps(d))
    np.testing.assert_array_equal(back.covariance, d.covariance)
    frame = d.to_frame(quantiles=[0.1, 0.9])
    assert list(frame.index) == ["a", "b"]
    assert frame.columns[:9].tolist() == ["mean_y0", "mean_y1", "mean_y2", "sd_y0", "sd_y1",
                                          "sd_y2", "corr_y0_y1", "corr_y0_y2", "corr_y1_y2"]
    np.testing.assert_allclose(frame["y1_q0.1"], d.marginal(1).quantile(0.1))
    assert "scale_tril_2_1" in frame


def test_what_a_vector_has_not_is_a_clear_error():
    d = _mvn()
    for call, what in [(lambda: d.quantile(0.5), "quantiles"), (lambda: d.cdf(LOC), "cdf"),
                       (lambda: d.median, "median"), (lambda: d.crps(LOC), "CRPS"),
                       (lambda: d.pit(LOC), "PIT")]:
        with pytest.raises(ValueError, match=f"vectors of 3 parts, which have no {what}"):
            call()


def test_bad_parameters_and_values_are_clear_errors():
    with pytest.raises(ValueError, match="nonzero entries above the diagonal"):
        db.Predictive.from_params("multivariate_normal", loc=LOC,
                                  scale_tril=TRIL.transpose(0, 2, 1))
    with pytest.raises(ValueError, match=r"takes parameters \['loc', 'scale_tril'\]"):
        db.Predictive.from_params("multivariate_normal", loc=LOC)
    with pytest.raises(ValueError, match=r"'scale_tril' must have shape \(n, 3, 3\)"):
        db.Predictive.from_params("multivariate_normal", loc=LOC, scale_tril=TRIL[:, :2, :2])
    with pytest.raises(ValueError, match="scale_tril_1_1.*outside its domain"):
        bad = TRIL.copy()
        bad[0, 1, 1] = -1.0
        db.Predictive.from_params("multivariate_normal", loc=LOC, scale_tril=bad)
    with pytest.raises(ValueError, match="concentration_0.*outside its domain"):
        db.Predictive.from_params("dirichlet", concentration=-ALPHA)
    with pytest.raises(ValueError, match=r"y must have shape \(2, 3\)"):
        _mvn().log_prob(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="1 of 2 rows with NaN"):
        _mvn().log_prob([[0.0, np.nan, 0.0], [0.0, 0.0, 0.0]])
    with pytest.raises(IndexError, match="Part 3 is out of range for d=3"):
        _mvn().marginal(3)
