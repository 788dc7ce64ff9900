"""IPCW Brier scores and the cumulative/dynamic AUC against scikit-survival on the same inputs
(skipped when scikit-survival is absent)."""

from __future__ import annotations

import numpy as np
import pytest

import distboost as db
from distboost import metrics

sksurv_metrics = pytest.importorskip("sksurv.metrics")
Surv = pytest.importorskip("sksurv.util").Surv


def _case(seed=0, n=500, ties=False):
    rng = np.random.default_rng(seed)
    scale = rng.uniform(1.0, 4.0, n)
    t = scale * rng.weibull(1.5, n)
    c = rng.uniform(0, 6, n)
    time, event = np.minimum(t, c), t <= c
    if ties:  # days: many tied times, events and censorings at the same time
        time = np.ceil(time * 20) / 20
    # a model that knows the scale up to noise
    dist = db.Predictive.from_params("censored_weibull", scale=scale * np.exp(
        0.3 * rng.normal(size=n)), concentration=np.full(n, 1.4))
    return dist, db.censored.right(time, event), time, event


@pytest.mark.parametrize("ties", [False, True])
def test_integrated_brier_score_equals_scikit_survival(ties):
    dist, y, time, event = _case(ties=ties)
    times = np.quantile(time, np.linspace(0.1, 0.9, 60))
    surv = dist.sf(np.broadcast_to(np.unique(times), (len(dist), np.unique(times).size)))
    s = Surv.from_arrays(event, time)
    want = sksurv_metrics.integrated_brier_score(s, s, surv, np.unique(times))
    got = metrics.integrated_brier_score(dist, y, times)
    assert abs(got - want) < 1e-6 and 0.05 < got < 0.25
    t_bs, bs = metrics.brier_score(dist, y, times)
    t_ref, bs_ref = sksurv_metrics.brier_score(s, s, surv, np.unique(times))
    np.testing.assert_allclose(bs, bs_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(t_bs, t_ref)


def test_integrated_brier_score_with_training_rows_for_the_censoring():
    dist, y, time, event = _case(seed=1)
    _, y_tr, t_tr, e_tr = _case(seed=2, n=800)
    times = np.linspace(0.3, 3.0, 40)
    surv = dist.sf(np.broadcast_to(times, (len(dist), times.size)))
    want = sksurv_metrics.integrated_brier_score(Surv.from_arrays(e_tr, t_tr),
                                                 Surv.from_arrays(event, time), surv, times)
    assert abs(metrics.integrated_brier_score(dist, y, times, y_train=y_tr) - want) < 1e-6


@pytest.mark.parametrize("ties", [False, True])
def test_cumulative_dynamic_auc_equals_scikit_survival(ties):
    dist, y, time, event = _case(seed=3, ties=ties)
    times = np.quantile(time[event], [0.2, 0.4, 0.6, 0.8])
    risk = dist.cdf(np.broadcast_to(times, (len(dist), times.size)))
    s = Surv.from_arrays(event, time)
    want, want_mean = sksurv_metrics.cumulative_dynamic_auc(s, s, risk, times)
    got, got_mean = metrics.cumulative_dynamic_auc(dist, y, times)
    np.testing.assert_allclose(got, want, rtol=1e-10)
    assert abs(got_mean - want_mean) < 1e-10 and (got > 0.55).all()  # better than chance


def test_tied_risks_count_half_a_pair():
    # one predicted law for every row: every risk ties, AUC = 1/2 at every time
    rng = np.random.default_rng(4)
    n = 300
    time = rng.exponential(2.0, n)
    y = db.censored.right(time, rng.uniform(size=n) < 0.7)
    dist = db.Predictive.from_params("censored_exponential", rate=np.full(n, 0.5))
    auc, mean = metrics.cumulative_dynamic_auc(dist, y, [0.5, 1.0, 2.0])
    np.testing.assert_allclose(auc, 0.5)


def test_errors_name_the_problem():
    dist, y, time, _ = _case(n=50)
    with pytest.raises(ValueError, match=r"times must lie within the follow-up of y"):
        metrics.integrated_brier_score(dist, y, [0.5, time.max() + 1])
    with pytest.raises(ValueError, match=r"right-censored bounds of shape \(50, 2\)"):
        metrics.brier_score(dist, time, [0.5, 1.0])
    left = y.copy()
    left[:3, 0] = -np.inf
    with pytest.raises(ValueError, match=r"3 of 50 rows that are not exact or right-censored"):
        metrics.cumulative_dynamic_auc(dist, left, [0.5])
    with pytest.raises(ValueError, match="at least two distinct times"):
        metrics.integrated_brier_score(dist, y, [0.5, 0.5])
