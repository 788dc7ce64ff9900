"""Tests of the cancellation-free log-gamma ratio and the Student-t log density built on it
(distboost.families._special), against 50-digit arithmetic."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
import torch

from distboost.families._special import lgamma_ratio, studentt_log_prob

mp = pytest.importorskip("mpmath")
mp.mp.dps = 50

R = [1e-3, 0.5, 7.0, 99.9, 100.0, 1e3, 1e8, 1e15, 1e21]
Y = [0.0, 0.5, 1.0, 3.0, 250.0, 1e6]


def test_lgamma_ratio_is_exact_for_every_size_of_r():
    r, y = np.meshgrid(R, Y, indexing="ij")
    r_t = torch.tensor(r.ravel(), dtype=torch.float64, requires_grad=True)
    got = lgamma_ratio(r_t, torch.tensor(y.ravel(), dtype=torch.float64))
    (grad,) = torch.autograd.grad(got.sum(), r_t)
    got = got.detach()
    for k, (rk, yk) in enumerate(zip(r.ravel(), y.ravel(), strict=True)):
        ref = mp.loggamma(mp.mpf(rk) + yk) - mp.loggamma(mp.mpf(rk))
        dref = mp.digamma(mp.mpf(rk) + yk) - mp.digamma(mp.mpf(rk))
        assert float(got[k]) == pytest.approx(float(ref), rel=1e-13, abs=1e-13), (rk, yk)
        assert float(grad[k]) == pytest.approx(float(dref), rel=1e-9, abs=1e-25), (rk, yk)


def test_lgamma_ratio_of_zero_counts_is_exactly_zero():
    r = torch.tensor(R, dtype=torch.float64)
    assert (lgamma_ratio(r, torch.zeros_like(r)) == 0.0).all()


@pytest.mark.parametrize("df", [0.2, 1.0, 4.0, 60.0, 1e4])
def test_studentt_log_prob_matches_scipy(df):
    y = torch.linspace(-30.0, 30.0, 61, dtype=torch.float64)
    got = studentt_log_prob(torch.full_like(y, df), torch.full_like(y, 0.7),
                            torch.full_like(y, 2.5), y)
    np.testing.assert_allclose(got.numpy(), st.t(df, 0.7, 2.5).logpdf(y.numpy()),
                               rtol=1e-12, atol=1e-12)


def t_reference(df, y):
    v, y = mp.mpf(df), mp.mpf(y)
    return float(mp.loggamma((v + 1) / 2) - mp.loggamma(v / 2) - mp.log(v * mp.pi) / 2
                 - (v + 1) / 2 * mp.log1p(y * y / v))


@pytest.mark.parametrize("df", [1e8, 1e15, 5e21])
def test_studentt_log_prob_is_exact_for_huge_df_without_a_spurious_reward(df):
    """torch's StudentT.log_prob gives -0.125 at df = 1e15, y = 0.5 (true -1.044): a bonus
    for df -> inf that the varying-coefficient model's boosting followed to df = 1e21."""
    y = torch.linspace(-6.0, 6.0, 25, dtype=torch.float64)
    df_t = torch.full_like(y, df, requires_grad=True)
    got = studentt_log_prob(df_t, torch.zeros_like(y), torch.ones_like(y), y)
    ref = np.array([t_reference(df, v) for v in y.tolist()])
    np.testing.assert_allclose(got.detach().numpy(), ref, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ref, st.norm.logpdf(y.numpy()), rtol=0, atol=1e3 / df + 1e-14)
    (grad,) = torch.autograd.grad(got.sum(), df_t)
    assert torch.isfinite(grad).all() and grad.abs().max() < 1e4 / df**2 + 1e-15
