"""The closed-form CRPS as scipy/numpy formulas: the implementation distboost had before the
forms were written once in torch (``distboost/families/numerics/crps.py``), kept as an independent
reference for ``test_closed_form.py``.  Not part of the library."""
from __future__ import annotations

import numpy as np
import scipy.special as sc
import scipy.stats as st

__all__ = [
    "crps_normal", "crps_lognormal", "crps_gamma", "crps_laplace", "crps_logistic",
    "crps_studentt", "crps_exponential", "crps_gumbel", "crps_beta", "crps_poisson",
    "crps_negative_binomial",
]

_INV_SQRT_PI = 1.0 / np.sqrt(np.pi)


def _f(*args):
    return np.broadcast_arrays(*(np.asarray(a, dtype=np.float64) for a in args))


def crps_normal(y, loc, scale):
    """CRPS of ``N(loc, scale^2)``: ``s [z (2 Phi(z) - 1) + 2 phi(z) - 1/sqrt(pi)]``,
    ``z = (y - loc) / s`` (Gneiting, Raftery, Westveld & Goldman 2005, eq. 5)."""
    y, loc, scale = _f(y, loc, scale)
    z = (y - loc) / scale
    return scale * (z * (2.0 * sc.ndtr(z) - 1.0) + 2.0 * st.norm.pdf(z) - _INV_SQRT_PI)


def crps_lognormal(y, loc, scale):
    """CRPS of the log-normal law (Baran & Lerch 2015, eq. 5):
    ``y [2 Phi(w) - 1] - 2 exp(loc + scale^2/2) [Phi(w - scale) + Phi(scale/sqrt 2) - 1]``
    with ``w = (log y - loc) / scale`` (``w = -inf`` for ``y <= 0``)."""
    y, loc, scale = _f(y, loc, scale)
    with np.errstate(divide="ignore"):
        w = np.where(y > 0, (np.log(np.where(y > 0, y, 1.0)) - loc) / scale, -np.inf)
    mean = np.exp(loc + 0.5 * scale**2)
    return y * (2.0 * sc.ndtr(w) - 1.0) - 2.0 * mean * (
        sc.ndtr(w - scale) + sc.ndtr(scale / np.sqrt(2.0)) - 1.0
    )


def crps_gamma(y, concentration, rate):
    """CRPS of ``Gamma(a, rate b)`` (Scheuerer & Moeller 2015, eq. 9; Taillardat et al.
    2016, app. A): ``y [2 F_a(y) - 1] - (a/b) [2 F_{a+1}(y) - 1] - 1 / (b B(1/2, a))``."""
    y, a, b = _f(y, concentration, rate)
    x = np.maximum(b * y, 0.0)
    return (y * (2.0 * sc.gammainc(a, x) - 1.0) - a / b * (2.0 * sc.gammainc(a + 1.0, x) - 1.0)
            - 1.0 / (b * sc.beta(0.5, a)))


def crps_laplace(y, loc, scale):
    """CRPS of the Laplace law: ``b [|z| + exp(-|z|) - 3/4]`` (Jordan, Krueger & Lerch 2019,
    app. A)."""
    y, loc, scale = _f(y, loc, scale)
    az = np.abs((y - loc) / scale)
    return scale * (az + np.exp(-az) - 0.75)


def crps_logistic(y, loc, scale):
    """CRPS of the logistic law: ``s [z - 2 log F(z) - 1]`` with ``F`` the standard logistic
    cdf (Jordan, Krueger & Lerch 2019, app. A); ``-log F(z) = softplus(-z)``."""
    y, loc, scale = _f(y, loc, scale)
    z = (y - loc) / scale
    return scale * (z + 2.0 * np.logaddexp(0.0, -z) - 1.0)


def crps_studentt(y, df, loc, scale):
    """CRPS of Student's t with ``df > 1`` (Jordan, Krueger & Lerch 2019, app. A):
    ``s [z (2 F(z) - 1) + 2 f(z) (df + z^2)/(df - 1)
    - 2 sqrt(df) B(1/2, df - 1/2) / ((df - 1) B(1/2, df/2)^2)]``; inf for ``df <= 1``
    (no mean)."""
    y, df, loc, scale = _f(y, df, loc, scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        z = (y - loc) / scale
        log_ratio = (0.5 * np.log(df) + sc.betaln(0.5, df - 0.5) - np.log(df - 1.0)
                     - 2.0 * sc.betaln(0.5, df / 2.0))
        out = scale * (z * (2.0 * sc.stdtr(df, z) - 1.0)
                       + 2.0 * st.t.pdf(z, df) * (df + z * z) / (df - 1.0)
                       - 2.0 * np.exp(log_ratio))
    return np.where(df > 1.0, out, np.inf)  # the CRPS of a law without a mean is infinite


def crps_exponential(y, rate):
    """CRPS of ``Exp(rate)``: ``|y| - 2 F(y) / rate + 1 / (2 rate)`` (Jordan, Krueger &
    Lerch 2019, app. A), i.e. ``y + 2 exp(-rate y)/rate - 3/(2 rate)`` for ``y >= 0``."""
    y, rate = _f(y, rate)
    cdf = -np.expm1(-rate * np.maximum(y, 0.0))
    return np.abs(y) - 2.0 * cdf / rate + 0.5 / rate


def crps_gumbel(y, loc, scale):
    """CRPS of the Gumbel (maxima) law, the GEV with shape 0 (Friederichs & Thorarinsdottir
    2012, eq. 12): ``s [-z + 2 E1(exp(-z)) + gamma - log 2]``, ``E1`` the exponential
    integral and gamma Euler's constant."""
    y, loc, scale = _f(y, loc, scale)
    z = (y - loc) / scale
    with np.errstate(over="ignore"):
        e = np.exp(-z)
    return scale * (-z + 2.0 * sc.exp1(e) + np.euler_gamma - np.log(2.0))


def crps_beta(y, concentration1, concentration0):
    """CRPS of ``Beta(a, b)`` (Taillardat et al. 2016, app. A; Jordan, Krueger & Lerch 2019):
    ``y [2 F(y) - 1] + a/(a+b) [1 - 2 F_{a+1,b}(y)] - 2/(a+b) B(2a, 2b) / B(a, b)^2``."""
    y, a, b = _f(y, concentration1, concentration0)
    yc = np.clip(y, 0.0, 1.0)
    spread = 2.0 / (a + b) * np.exp(sc.betaln(2 * a, 2 * b) - 2.0 * sc.betaln(a, b))
    return (y * (2.0 * sc.betainc(a, b, yc) - 1.0)
            + a / (a + b) * (1.0 - 2.0 * sc.betainc(a + 1.0, b, yc)) - spread)


def crps_poisson(y, rate):
    """CRPS of ``Poisson(rate)`` (Wei & Held 2014; Jordan, Krueger & Lerch 2019):
    ``(y - l)(2 F(y) - 1) + 2 l f(floor y) - l exp(-2l) [I0(2l) + I1(2l)]``."""
    y, lam = _f(y, rate)
    k = np.floor(y)
    cdf = np.where(k >= 0, sc.pdtr(np.maximum(k, 0.0), lam), 0.0)
    pmf = np.where(k >= 0, st.poisson.pmf(np.maximum(k, 0.0), lam), 0.0)
    return (y - lam) * (2.0 * cdf - 1.0) + 2.0 * lam * pmf - lam * (
        sc.i0e(2.0 * lam) + sc.i1e(2.0 * lam)
    )


def crps_negative_binomial(y, total_count, probs):
    """CRPS of the negative binomial with torch's ``probs`` (scipy's ``p = 1 - probs``)
    (Wei & Held 2014; Jordan, Krueger & Lerch 2019, app. A): with ``n = total_count``,
    ``y (2 F(y) - 1) - n (1-p)/p^2 [p (2 F_{n+1}(y - 1) - 1)
    + 2F1(n + 1, 1/2; 2; -4 (1-p)/p^2)]``."""
    y, n, probs = _f(y, total_count, probs)
    p = 1.0 - probs
    k = np.floor(y)
    cdf = np.where(k >= 0, sc.betainc(n, np.maximum(k, 0.0) + 1.0, p), 0.0)
    cdf1 = np.where(k - 1 >= 0, sc.betainc(n + 1.0, np.maximum(k - 1.0, 0.0) + 1.0, p), 0.0)
    hyp = sc.hyp2f1(n + 1.0, 0.5, 2.0, -4.0 * (1.0 - p) / p**2)
    return y * (2.0 * cdf - 1.0) - n * (1.0 - p) / p**2 * (p * (2.0 * cdf1 - 1.0) + hyp)


