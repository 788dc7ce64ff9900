"""The Tweedie family (``tweedie.py``) beyond the shared case table: the series against
statsmodels over a wide grid (large and tiny ``y / mean``, powers near 1 and 2), its
gradient in the power, the cdf against a simulation, and the all-zero error."""

from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
import torch

import distboost as db
from distboost.families.tweedie import tweedie_log_prob


@pytest.mark.parametrize("mean, phi, p", [(2.0, 1.5, 1.05), (0.3, 0.5, 1.95), (50.0, 2.0, 1.2),
                                          (1.0, 0.01, 1.5), (1e3, 30.0, 1.6)])
def test_log_prob_matches_statsmodels(mean, phi, p):
    y = np.r_[0.0, np.geomspace(1e-3, 1e3, 25) * mean]
    got = tweedie_log_prob(torch.as_tensor(y), torch.full((26,), mean, dtype=torch.float64),
                           torch.full((26,), phi, dtype=torch.float64),
                           torch.full((26,), p, dtype=torch.float64)).numpy()
    ref = sm.families.Tweedie(var_power=p, eql=False).loglike_obs(y, np.full(26, mean),
                                                                 scale=phi)
    ok = np.isfinite(ref)  # scipy's Wright Bessel function overflows far in the tail
    assert ok.sum() >= 20
    # statsmodels (scipy's wright_bessel) loses up to ~5e-6 relative in the far tail and at
    # power 1.2 (30-digit arithmetic below agrees with the series here to ~1e-14).
    np.testing.assert_allclose(got[ok], ref[ok], rtol=1e-5, atol=1e-9)
    assert np.isfinite(got).all()
    for i in (1, 9, 13, 17, 22):
        assert got[i] == pytest.approx(_mpmath_log_density(y[i], mean, phi, p), rel=1e-11)


def _mpmath_log_density(y, mu, phi, p):
    """The Dunn & Smyth (2005) series summed term by term in 40-digit arithmetic."""
    import mpmath as mp
    mp.mp.dps = 40
    y, mu, phi, p = map(mp.mpf, (y, mu, phi, p))
    alpha = (2 - p) / (1 - p)
    log_z = -alpha * mp.log(y) + alpha * mp.log(p - 1) - (1 - alpha) * mp.log(phi) - mp.log(2 - p)
    j_max = y ** (2 - p) / (phi * (2 - p))
    w = mp.fsum(mp.exp(j * log_z - mp.loggamma(j + 1) - mp.loggamma(-j * alpha))
                for j in range(1, int(3 * j_max + 200)))
    return float((y * mu ** (1 - p) / (1 - p) - mu ** (2 - p) / (2 - p)) / phi - mp.log(y)
                 + mp.log(w))


def test_power_gradient_matches_finite_differences():
    y = torch.tensor([0.0, 0.2, 1.0, 4.0, 15.0], dtype=torch.float64)
    mu = torch.full((5,), 2.0, dtype=torch.float64)
    phi = torch.full((5,), 1.3, dtype=torch.float64)
    p = torch.full((5,), 1.45, dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(tweedie_log_prob(y, mu, phi, p).sum(), p)
    h = 1e-6
    with torch.no_grad():
        fd = (tweedie_log_prob(y, mu, phi, p + h) - tweedie_log_prob(y, mu, phi, p - h)) / (2 * h)
    np.testing.assert_allclose(g.numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)


def test_cdf_matches_simulated_frequencies():
    fam = db.families.get("tweedie")
    params = {"mean": torch.tensor([3.0], dtype=torch.float64),
              "dispersion": torch.tensor([2.0], dtype=torch.float64),
              "power": torch.tensor([1.3], dtype=torch.float64)}
    draws = fam.sample(params, 100_000, seed=0)[:, 0].numpy()
    x = np.array([0.0, 1.0, 3.0, 8.0])
    cdf = fam.cdf({k: v.expand(4) for k, v in params.items()}, torch.as_tensor(x)).numpy()
    freq = (draws[:, None] <= x[None, :]).mean(axis=0)
    np.testing.assert_allclose(freq, cdf, atol=5 * np.sqrt(0.25 / 100_000))


def test_all_zero_target_is_refused():
    with pytest.raises(ValueError, match="tweedie.*5 rows are all zero"):
        db.families.get("tweedie").init(np.zeros(5))


def test_series_window_and_row_groups_do_not_move_the_log_density(monkeypatch):
    """The window of 8 standard deviations of ``j`` plus 6 terms, taken in groups of rows of
    similar widths, against a window of 12 plus 20 on every row in one group: equal to 1e-11
    over 50,000 random rows (ratios of y to the mean from 1e-3 to 1e3, powers 1.005-1.995),
    and independent of the order of the rows."""
    import distboost.families.numerics.tweedie_series as tw

    rng = np.random.default_rng(3)
    n = 50_000
    args = [torch.as_tensor(v) for v in (np.exp(rng.uniform(-6, 5, n)),
                                         np.exp(rng.uniform(-4, 4, n)),
                                         np.exp(rng.uniform(-3, 3, n)),
                                         rng.uniform(1.005, 1.995, n))]
    got = tweedie_log_prob(*args)
    perm = torch.as_tensor(rng.permutation(n))
    # (up to the last bit of torch's vectorised and scalar kernel loops)
    torch.testing.assert_close(tweedie_log_prob(*(a[perm] for a in args)), got[perm],
                               rtol=1e-13, atol=0)
    monkeypatch.setattr(tw, "_SDS", 12.0)
    monkeypatch.setattr(tw, "_MARGIN", 20.0)
    wide = tweedie_log_prob(*args)
    np.testing.assert_allclose(got.numpy(), wide.numpy(), rtol=0, atol=1e-11)


def _log_w_derivatives(fn, y, phi, p):
    """Value, gradient and Hessian of ``fn(y, phi, p)`` in ``(phi, p)`` by autograd (the
    engine's Newton step differentiates the gradient again, as here)."""
    phi = phi.clone().requires_grad_(True)
    p = p.clone().requires_grad_(True)
    v = fn(y, phi, p)
    g_phi, g_p = torch.autograd.grad(v.sum(), (phi, p), create_graph=True)
    h_phiphi, h_phip = torch.autograd.grad(g_phi.sum(), (phi, p), retain_graph=True)
    h_pphi, h_pp = torch.autograd.grad(g_p.sum(), (phi, p))
    return [t.detach().numpy() for t in (v, g_phi, g_p, h_phiphi, h_phip, h_pphi, h_pp)]


@pytest.mark.parametrize("y, phi, p", [(247.8, 0.0487, 1.0279), (0.05, 2.0, 1.9),
                                       (3.0, 1.3, 1.45), (1e3, 30.0, 1.6), (0.2, 0.01, 1.01)])
def test_series_gradient_and_hessian_match_mpmath(y, phi, p):
    """The series' own derivatives (moments of ``j`` from the same pass as the value)
    against 40-digit numerical derivatives of the series summed by mpmath."""
    import mpmath as mp

    from distboost.families.numerics.tweedie_series import log_w

    mp.mp.dps = 40

    def log_w_mp(ph, pp):
        alpha = (2 - pp) / (1 - pp)
        log_z = (-alpha * mp.log(y) + alpha * mp.log(pp - 1) - (1 - alpha) * mp.log(ph)
                 - mp.log(2 - pp))
        j_max = mp.mpf(y) ** (2 - pp) / (ph * (2 - pp))
        c, w = int(mp.nint(j_max)), int(12 * mp.sqrt(j_max * (pp - 1)) + 40)
        t = [j * log_z - mp.loggamma(j + 1) - mp.loggamma(-j * alpha)
             for j in range(max(1, c - w), c + w + 1)]
        top = max(t)
        return top + mp.log(mp.fsum(mp.exp(v - top) for v in t))

    ph, pp = mp.mpf(phi), mp.mpf(p)
    want = [log_w_mp(ph, pp), mp.diff(lambda a: log_w_mp(a, pp), ph),
            mp.diff(lambda b: log_w_mp(ph, b), pp), mp.diff(lambda a: log_w_mp(a, pp), ph, 2),
            mp.diff(log_w_mp, (ph, pp), (1, 1)), mp.diff(log_w_mp, (ph, pp), (1, 1)),
            mp.diff(lambda b: log_w_mp(ph, b), pp, 2)]
    got = _log_w_derivatives(log_w, *(torch.tensor([v], dtype=torch.float64)
                                      for v in (y, phi, p)))
    np.testing.assert_allclose(np.concatenate(got), np.array(want, dtype=float), rtol=1e-9)


def test_series_derivatives_equal_autograd_of_the_plain_series():
    """On 3,000 random rows: the value identical and the gradient to 1e-12 of autograd of the
    plain series; the Hessian to 1e-5 (relative to each entry's largest magnitude), the
    accuracy of autograd's second pass itself where a row sums thousands of terms (mpmath
    above: the closed form is within 1e-11 there, autograd within 4e-7)."""
    from distboost.families.numerics.tweedie_series import _series, log_w

    rng = np.random.default_rng(0)
    n = 3000
    y, phi, p = (torch.as_tensor(v) for v in (np.exp(rng.uniform(-6, 6, n)),
                                               np.exp(rng.uniform(-4, 3, n)),
                                               rng.uniform(1.01, 1.99, n)))
    new = _log_w_derivatives(log_w, y, phi, p)
    ref = _log_w_derivatives(lambda *a: _series(*a, moments=False)[0], y, phi, p)
    np.testing.assert_array_equal(new[0], ref[0])
    for k, (a, b) in enumerate(zip(new[1:], ref[1:], strict=True)):
        tol = 1e-12 if k < 2 else 1e-5
        assert np.all(np.isfinite(a))
        assert np.max(np.abs(a - b)) <= tol * np.max(np.abs(b)), k


def test_series_gradient_in_y_by_autograd_and_no_third_derivative():
    """A ``y`` that requires a gradient takes autograd of the plain series (finite
    differences agree); differentiating the Hessian again is refused, not silently wrong."""
    from distboost.families.numerics.tweedie_series import log_w

    y = torch.tensor([0.5, 3.0], dtype=torch.float64, requires_grad=True)
    phi = torch.tensor([1.2, 0.7], dtype=torch.float64)
    p = torch.tensor([1.3, 1.7], dtype=torch.float64)
    (g,) = torch.autograd.grad(log_w(y, phi, p).sum(), y)
    h = 1e-6
    with torch.no_grad():
        fd = (log_w(y + h, phi, p) - log_w(y - h, phi, p)) / (2 * h)
    np.testing.assert_allclose(g.numpy(), fd.numpy(), rtol=1e-6)
    phi = phi.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(log_w(y.detach(), phi, p).sum(), phi, create_graph=True)
    (hess,) = torch.autograd.grad(g.sum(), phi, create_graph=True)
    with pytest.raises(RuntimeError):
        torch.autograd.grad(hess.sum(), phi)


def test_a_wide_series_window_is_summed_at_a_stride(monkeypatch):
    """A tiny dispersion (a line search's or L-BFGS's try) made a window of 10^8 terms per
    row: a 30-row fit with many zeros asked for 7.7 GB (issue 52's edge cases).  Windows
    wider than 2 MAX_HALF + 1 terms are summed at a stride: the value, gradient and Hessian
    agree with the full window's."""
    import distboost.families.numerics.tweedie_series as series

    y = torch.tensor([1e4, 30.0, 2.5], dtype=torch.float64)
    phi = torch.tensor([1e-6, 1e-3, 1e-2], dtype=torch.float64)  # windows of 10^3-10^5
    p = torch.tensor([1.5, 1.3, 1.7], dtype=torch.float64)
    strided = series._series(y, phi, p, moments=True)
    monkeypatch.setattr(series, "MAX_HALF", 10**6)
    full = series._series(y, phi, p, moments=True)
    np.testing.assert_allclose(strided[0].numpy(), full[0].numpy(), rtol=1e-12)
    # The derivatives are moments of j ~ 2e8 (row 0): their float64 sums agree to 1e-8.
    for a, b in zip(strided[1:], full[1:], strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-7)
    monkeypatch.undo()
    # 10^8 terms a row before: now 1,025, and finite.
    value, grad, hess = series._series(y[:1], torch.tensor([1e-12], dtype=torch.float64),
                                       p[:1], moments=True)
    assert torch.isfinite(value).all() and torch.isfinite(grad).all()
    assert torch.isfinite(hess).all()
