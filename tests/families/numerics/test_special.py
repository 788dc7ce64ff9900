"""Tests of the special functions of ``distboost.families.numerics.special``: the cancellation-free
log-gamma ratio and the Student-t log density (against 50-digit arithmetic), the
differentiable incomplete gamma, incomplete beta, Student-t cdf, log-beta, ``2F1(a, 1/2; 2;
z)`` and ``E1(exp(-z))`` (values against scipy / mpmath, gradients against quadrature or
finite differences).  The negative binomial information is tested in ``test_discrete.py``."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.special as sc
import scipy.stats as st
import torch
from scipy.integrate import quad

from distboost.families.numerics.special import (
    betainc_ad,
    betaln_ad,
    exp1_of_exp,
    gammainc_ad,
    gammaincc_ad,
    hyp2f1_half_two,
    lgamma_ratio,
    stdtr_ad,
    studentt_log_prob,
)

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


def test_gammainc_shape_derivative_against_quadrature():
    a = torch.tensor([0.3, 1.0, 2.5, 7.0, 40.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.2, 1.5, 2.0, 9.0, 35.0], dtype=torch.float64, requires_grad=True)
    ga, gx = torch.autograd.grad(gammainc_ad(a, x).sum(), (a, x))
    for i in range(5):
        ai, xi = a[i].item(), x[i].item()
        # dP/da = int_0^x (log t - psi(a)) t^(a-1) e^-t / Gamma(a) dt
        ref = quad(lambda t, ai=ai: (np.log(t) - sc.digamma(ai))
                   * np.exp((ai - 1) * np.log(t) - t - sc.gammaln(ai)), 0, xi,
                   epsabs=0, epsrel=1e-12, limit=200)[0]
        assert ga[i].item() == pytest.approx(ref, rel=1e-6, abs=1e-10)
        assert gx[i].item() == pytest.approx(st.gamma.pdf(xi, ai), rel=1e-10)


def test_stdtr_derivatives():
    df = torch.tensor([1.5, 4.0, 30.0], dtype=torch.float64, requires_grad=True)
    t = torch.tensor([-2.0, 0.3, 1.7], dtype=torch.float64, requires_grad=True)
    gdf, gt = torch.autograd.grad(stdtr_ad(df, t).sum(), (df, t))
    np.testing.assert_allclose(gt.numpy(), st.t.pdf(t.detach().numpy(), df.detach().numpy()),
                               rtol=1e-10)
    h = 1e-4
    fd = (sc.stdtr(df.detach().numpy() + h, t.detach().numpy())
          - sc.stdtr(df.detach().numpy() - h, t.detach().numpy())) / (2 * h)
    np.testing.assert_allclose(gdf.numpy(), fd, rtol=1e-5)


def _fd(fn, args, k, rel=1e-6):
    """Central finite difference of ``fn(*args).sum()`` in argument ``k`` (relative step)."""
    args = [a.detach().clone() for a in args]
    h = rel * args[k].abs().clamp_min(1e-3)
    up = [a.clone() for a in args]
    dn = [a.clone() for a in args]
    up[k] = up[k] + h
    dn[k] = dn[k] - h
    return (fn(*up) - fn(*dn)) / (2 * h)


def test_gammaincc_is_one_minus_gammainc_with_opposite_gradients():
    a = torch.tensor([0.3, 2.5, 40.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.2, 2.0, 35.0], dtype=torch.float64, requires_grad=True)
    lower, upper = gammainc_ad(a, x), gammaincc_ad(a, x)
    np.testing.assert_allclose((lower + upper).detach().numpy(), 1.0, rtol=1e-14)
    gl = torch.autograd.grad(lower.sum(), (a, x))
    gu = torch.autograd.grad(upper.sum(), (a, x))
    for g1, g2 in zip(gl, gu, strict=True):
        np.testing.assert_allclose(g1.numpy(), -g2.numpy(), rtol=1e-8)


def test_betainc_values_and_gradients():
    a = torch.tensor([0.3, 2.0, 7.5, 150.0], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.8, 3.0, 1.5, 60.0], dtype=torch.float64, requires_grad=True)
    x = torch.tensor([0.2, 0.45, 0.9, 0.7], dtype=torch.float64, requires_grad=True)
    got = betainc_ad(a, b, x)
    np.testing.assert_allclose(got.detach().numpy(),
                               sc.betainc(*(v.detach().numpy() for v in (a, b, x))), rtol=1e-15)
    ga, gb, gx = torch.autograd.grad(got.sum(), (a, b, x))
    np.testing.assert_allclose(gx.numpy(), st.beta.pdf(x.detach().numpy(), a.detach().numpy(),
                                                       b.detach().numpy()), rtol=1e-10)
    for k, g in ((0, ga), (1, gb)):
        # dI/da by quadrature: int_0^x (log t - psi(a) + psi(a + b)) f(t) dt.
        for i in range(4):
            ai, bi, xi = (v[i].item() for v in (a, b, x))
            dpsi = ((np.log, sc.digamma(ai)) if k == 0 else
                    (lambda t: np.log1p(-t), sc.digamma(bi)))
            ref = quad(lambda t, ai=ai, bi=bi, dpsi=dpsi: (dpsi[0](t) - dpsi[1]
                                                          + sc.digamma(ai + bi))
                       * st.beta.pdf(t, ai, bi), 0, xi, epsabs=0, epsrel=1e-12, limit=200)[0]
            assert g[i].item() == pytest.approx(ref, rel=1e-6, abs=1e-12), (k, i)


def test_betaln_values_and_exact_gradients():
    a = torch.tensor([0.5, 3.0, 1e3], dtype=torch.float64, requires_grad=True)
    b = torch.tensor([0.5, 0.1, 2e4], dtype=torch.float64, requires_grad=True)
    got = betaln_ad(a, b)
    np.testing.assert_array_equal(got.detach().numpy(),
                                  sc.betaln(a.detach().numpy(), b.detach().numpy()))
    ga, gb = torch.autograd.grad(got.sum(), (a, b))
    an, bn = a.detach().numpy(), b.detach().numpy()
    np.testing.assert_allclose(ga.numpy(), sc.digamma(an) - sc.digamma(an + bn), rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), sc.digamma(bn) - sc.digamma(an + bn), rtol=1e-12)


HYP = [(1.5, -0.3), (5.5, -10.0), (165.36, -283.2), (1.01, -1e6), (0.011, -1e4),
       (4.5, -1e-3), (1e4, -1e4), (2.0, -1e-12), (0.5, -50.0), (1e6, -3e-3), (1.001, -1e12),
       (3.3, 0.0)]


def test_hyp2f1_half_two_against_30_digits():
    a = torch.tensor([v[0] for v in HYP], dtype=torch.float64)
    z = torch.tensor([v[1] for v in HYP], dtype=torch.float64)
    got = hyp2f1_half_two(a, z)
    for i, (ai, zi) in enumerate(HYP):
        ref = float(mp.hyp2f1(mp.mpf(ai), mp.mpf(0.5), 2, mp.mpf(zi)))
        assert got[i].item() == pytest.approx(ref, rel=2e-15), (ai, zi)


def test_hyp2f1_half_two_gradients():
    a = torch.tensor([1.5, 5.5, 165.36, 0.5], dtype=torch.float64, requires_grad=True)
    z = torch.tensor([-0.3, -10.0, -283.2, -50.0], dtype=torch.float64, requires_grad=True)
    ga, gz = torch.autograd.grad(hyp2f1_half_two(a, z).sum(), (a, z))
    an, zn = a.detach().numpy(), z.detach().numpy()
    # d/dz 2F1(a, b; c; z) = a b / c 2F1(a + 1, b + 1; c + 1; z) (A&S 15.2.1).
    dz = np.array([float(a_ * 0.5 / 2 * mp.hyp2f1(a_ + 1, 1.5, 3, z_))
                   for a_, z_ in zip(an, zn, strict=True)])
    np.testing.assert_allclose(gz.numpy(), dz, rtol=1e-10)
    fd = _fd(hyp2f1_half_two, [a, z], 0)
    np.testing.assert_allclose(ga.numpy(), fd.numpy(), rtol=1e-6)


def test_exp1_of_exp_values_and_gradient():
    z = torch.tensor([-700.0, -3.0, 0.0, 2.0, 22.9, 23.1, 40.0, 800.0], dtype=torch.float64,
                     requires_grad=True)
    got = exp1_of_exp(z)
    zn = z.detach().numpy()
    with np.errstate(over="ignore"):
        ref = np.array([float(mp.e1(mp.exp(-mp.mpf(v)))) for v in zn])
    np.testing.assert_allclose(got.detach().numpy(), ref, rtol=1e-14, atol=1e-300)
    (g,) = torch.autograd.grad(got.sum(), z)
    with np.errstate(over="ignore"):
        np.testing.assert_allclose(g.numpy(), np.exp(-np.exp(-zn)), rtol=1e-14)
    assert torch.isfinite(got).all()


def test_stdtr_values_match_scipy():
    df = torch.tensor([1.5, 4.0, 30.0], dtype=torch.float64)
    t = torch.tensor([-2.0, 0.3, 1.7], dtype=torch.float64)
    np.testing.assert_array_equal(stdtr_ad(df, t).numpy(), sc.stdtr(df.numpy(), t.numpy()))


def test_log_factorial_is_kept_on_a_fit_s_target_and_never_stale():
    from distboost.families.numerics import special as _special

    y = _special.carry_terms(torch.tensor([0.0, 1.0, 5.0, 30.0], dtype=torch.float64))
    first = _special.log_factorial(y)
    torch.testing.assert_close(first, torch.lgamma(y + 1.0), rtol=0.0, atol=0.0)
    assert _special.log_factorial(y) is first  # the same target: kept
    same_values = _special.carry_terms(y.clone())
    assert _special.log_factorial(same_values) is not first  # another target: its own
    y[0] = 3.0  # changed in place: computed again
    torch.testing.assert_close(_special.log_factorial(y), torch.lgamma(y + 1.0), rtol=0.0,
                               atol=0.0)
    plain = torch.tensor([1.0, 4.0], dtype=torch.float64)  # not a fit's target
    assert _special.log_factorial(plain) is not _special.log_factorial(plain)
    assert not hasattr(plain, _special.TERMS)
    # No process-wide store: the terms go with their target.
    assert not any(isinstance(v, dict) and k.startswith("_REMEMBER")
                   for k, v in vars(_special).items())


def test_remembered_values_are_per_key_and_never_stale():
    from distboost.families.numerics.special import carries_terms, carry_terms, remembered

    y = carry_terms(torch.tensor([0.0, 2.0], dtype=torch.float64))
    a = remembered(y, "double", lambda t: 2.0 * t)
    assert remembered(y, "double", lambda t: 3.0 * t) is a  # the same target and key
    b = remembered(y, "triple", lambda t: 3.0 * t)  # another key: its own value
    torch.testing.assert_close(b, 3.0 * y, rtol=0.0, atol=0.0)
    y.add_(1.0)  # changed in place: computed again
    torch.testing.assert_close(remembered(y, "double", lambda t: 2.0 * t), 2.0 * y,
                               rtol=0.0, atol=0.0)
    # The tensors of a kept value are targets too (a zero mixture's stand-in has its own
    # log y!), nested in tuples and lists.
    pair = remembered(y, "pair", lambda t: (t + 1.0, [t * 0.5, "x"]))
    assert carries_terms(pair[0]) and carries_terms(pair[1][0])
    assert remembered(pair[0], "half", lambda t: t / 2) is remembered(pair[0], "half", None)


def test_a_fit_s_targets_carry_their_terms_through_blocks_and_devices():
    from distboost.boosting.engine import on_device
    from distboost.boosting.row_blocks import data_rows
    from distboost.families import get as get_family
    from distboost.families.numerics.special import carries_terms
    from distboost.objective import FamilyObjective

    y = np.array([0.0, 1.0, 4.0])
    data = FamilyObjective(get_family("poisson"), y).data(None, y)
    assert carries_terms(data["y"])
    block = data_rows(data, slice(0, 2))
    assert carries_terms(block["y"]) and block["y"].data_ptr() == data["y"].data_ptr()
    assert on_device(data, "cpu") is data
    assert carries_terms(on_device(data, "meta")["y"])
    plain = {"y": torch.zeros(3, dtype=torch.float64)}  # not a fit's target: stays plain
    assert not carries_terms(data_rows(plain, slice(0, 2))["y"])
    assert not carries_terms(on_device(plain, "meta")["y"])


def test_a_target_of_zeros_takes_no_special_function_and_is_not_remembered():
    # A zero mixture evaluates its base law at 0 on a new tensor every round: the lgamma
    # differences are exactly 0 there (scipy's gammaln difference, on both branches of
    # lgamma_ratio), and log y! is 0 without an entry that would push out a target's own.
    from distboost.families.numerics import special as _special
    from distboost.families.numerics.likelihood import lgamma_ratio_dr

    r = torch.tensor([1e-3, 0.7, 5.0, 1e6, 1e15], dtype=torch.float64)
    zeros = torch.zeros_like(r)
    ref = sc.gammaln(r.numpy()) - sc.gammaln(r.numpy())
    np.testing.assert_array_equal(_special.lgamma_ratio(r, zeros).numpy(), ref)
    np.testing.assert_array_equal(lgamma_ratio_dr(r, zeros).numpy(), np.zeros(5))
    torch.testing.assert_close(lgamma_ratio_dr(r, zeros + 1e-300), zeros, rtol=0, atol=1e-12)
    # As the general formula: a NaN or infinite r gives NaN, and r keeps its gradient.
    bad = torch.tensor([float("nan"), float("inf")], dtype=torch.float64)
    assert torch.isnan(_special.lgamma_ratio(bad, torch.zeros(2, dtype=torch.float64))).all()
    assert torch.isnan(lgamma_ratio_dr(bad, torch.zeros(2, dtype=torch.float64))).all()
    leaf = r.clone().requires_grad_(True)
    (grad,) = torch.autograd.grad(_special.lgamma_ratio(leaf, zeros).sum(), leaf)
    np.testing.assert_array_equal(grad.numpy(), np.zeros(5))
    marked = _special.carry_terms(zeros.clone())
    np.testing.assert_array_equal(_special.log_factorial(marked).numpy(), np.zeros(5))
    assert getattr(marked, _special.TERMS) == {}  # nothing kept for a target of zeros
    # A target with one positive value still takes the special functions.
    y = torch.tensor([0.0, 0.0, 0.0, 0.0, 3.0], dtype=torch.float64)
    expected = np.zeros(5)
    expected[4] = np.sum(np.log(1e15 + np.arange(3.0)))  # log[r (r + 1) (r + 2)]
    np.testing.assert_allclose(_special.lgamma_ratio(r, y).numpy(), expected, rtol=1e-12)


def test_lgamma_ratio_gives_a_row_the_same_value_whichever_branches_its_batch_takes():
    # One branch alone (every r small, or every r at least STIRLING_MIN) or both and a
    # choice per row: a row's value must not depend on the rows beside it.
    from distboost.families.numerics.likelihood import lgamma_ratio_dr
    from distboost.families.numerics.special import STIRLING_MIN, lgamma_ratio

    big = torch.tensor([STIRLING_MIN, 250.0, 1e6, 1e15], dtype=torch.float64)
    small = torch.tensor([1e-3, 0.5, 7.0, 99.0], dtype=torch.float64)
    y_big = torch.tensor([0.5, 3.0, 10.0, 1e4], dtype=torch.float64)
    y_small = torch.tensor([2.0, 0.5, 1.0, 40.0], dtype=torch.float64)
    both_r, both_y = torch.cat([big, small]), torch.cat([y_big, y_small])
    for fn in (lgamma_ratio, lgamma_ratio_dr):
        mixed = fn(both_r, both_y)
        torch.testing.assert_close(fn(big, y_big), mixed[:4], rtol=0.0, atol=0.0)
        torch.testing.assert_close(fn(small, y_small), mixed[4:], rtol=0.0, atol=0.0)
    np.testing.assert_allclose(lgamma_ratio(small, y_small).numpy(),
                               sc.gammaln(small.numpy() + y_small.numpy())
                               - sc.gammaln(small.numpy()), rtol=1e-12)
