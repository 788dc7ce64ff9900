"""Differentiable special functions torch lacks, as custom autograd functions.

* :func:`gammainc_ad`: the regularised lower incomplete gamma ``P(a, x)`` with gradients in
  both arguments (torch's ``gammainc`` has none for ``a``).  ``dP/dx`` is the gamma density;
  ``dP/da`` is a central finite difference of ``P`` in ``a`` (step ``1e-5 * max(a, 1)``), whose
  relative accuracy of about ``1e-8`` is tested against an mpmath-free series reference.
* :func:`stdtr_ad`: the Student-t cdf ``F_df(t)`` (scipy's ``stdtr``) with gradients in ``t``
  (the density) and ``df`` (central finite difference).

For the closed-form CRPS (:mod:`distboost.families.numerics.crps`), scipy's forward values with
gradients:

* :func:`betainc_ad`: the regularised incomplete beta ``I_x(a, b)``; ``d/dx`` the beta
  density, ``d/da`` and ``d/db`` central finite differences (relative step ``1e-5``).
* :func:`betaln_ad`: ``log B(a, b)`` with the exact gradient ``psi(a) - psi(a + b)``.
* :func:`hyp2f1_half_two`: Gauss's ``2F1(a, 1/2; 2; z)`` for ``z <= 0`` by quadrature of
  Euler's integral, in torch (scipy's ``hyp2f1`` fails for large ``a`` and ``|z|``).
* :func:`exp1_of_exp`: ``E1(exp(-z))`` (Gumbel CRPS), ``d/dz = exp(-exp(-z))``, finite for
  every real ``z`` (the series ``-gamma + z + e^{-z}`` where ``exp(-z)`` would underflow).

And two pieces of the negative binomial likelihood that a direct formula gets wrong:

* :func:`lgamma_ratio`: ``log Gamma(r + y) - log Gamma(r)`` without the cancellation of two
  huge ``lgamma`` values when ``r`` is large (the Poisson limit of the negative binomial);
  plain torch operations, so autograd differentiates it.
* :func:`studentt_log_prob`: the Student-t log density with the same cancellation-free
  ``log Gamma((df + 1) / 2) - log Gamma(df / 2)``; torch's ``StudentT.log_prob`` subtracts two
  ``lgamma`` values and returns 0.125 instead of 1.044 at ``df = 1e15``, ``y = 0.5``: a
  spurious reward for ``df -> inf`` that the boosting followed.
* :func:`nb_information`: the expected information about the negative binomial's
  ``total_count``, ``E[psi'(r) - psi'(r + Y)]``, and its part at a fixed mean, by quadrature
  of an integral representation (no series over the counts, no sampling).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import torch

__all__ = ["EULER_GAMMA", "gammainc_ad",
           "gammaincc_ad", "stdtr_ad", "lgamma_ratio", "nb_information",
           "studentt_log_prob", "betainc_ad", "betaln_ad", "hyp2f1_half_two", "exp1_of_exp"]


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().cpu().numpy()


def _t(values, like: torch.Tensor) -> torch.Tensor:
    """SciPy's float64 ``values`` as a tensor on ``like``'s device."""
    out = torch.from_numpy(np.asarray(values, np.float64))
    return out if like.device.type == "cpu" else out.to(like.device)


class _GammaInc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, x, upper: bool):
        a_b, x_b = torch.broadcast_tensors(a, x)
        fn = sc.gammaincc if upper else sc.gammainc
        out = _t(fn(_np(a_b), np.maximum(_np(x_b), 0.0)), a_b)
        ctx.save_for_backward(a_b, x_b)
        ctx.upper = upper
        ctx.shapes = (a.shape, x.shape)
        return out

    @staticmethod
    def backward(ctx, grad):
        a, x = ctx.saved_tensors
        sign = -1.0 if ctx.upper else 1.0
        an, xn = _np(a), np.maximum(_np(x), 0.0)
        # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a), in log space.
        with np.errstate(divide="ignore"):
            dens = np.exp((an - 1.0) * np.log(xn) - xn - sc.gammaln(an))
        dens = np.where(xn > 0, dens, 0.0)
        h = 1e-5 * np.maximum(an, 1.0)
        fn = sc.gammaincc if ctx.upper else sc.gammainc
        da = (fn(an + h, xn) - fn(an - h, xn)) / (2.0 * h)
        ga = grad * _t(da, grad)
        gx = grad * _t(sign * dens, grad)
        return (_reduce(ga, ctx.shapes[0]), _reduce(gx, ctx.shapes[1]), None)


class _StdTr(torch.autograd.Function):
    @staticmethod
    def forward(ctx, df, t):
        df_b, t_b = torch.broadcast_tensors(df, t)
        ctx.save_for_backward(df_b, t_b)
        ctx.shapes = (df.shape, t.shape)
        return _t(sc.stdtr(_np(df_b), _np(t_b)), t_b)

    @staticmethod
    def backward(ctx, grad):
        df, t = ctx.saved_tensors
        dn, tn = _np(df), _np(t)
        logpdf = (sc.gammaln((dn + 1) / 2) - sc.gammaln(dn / 2) - 0.5 * np.log(dn * math.pi)
                  - (dn + 1) / 2 * np.log1p(tn * tn / dn))
        h = 1e-5 * np.maximum(dn, 1.0)
        ddf = (sc.stdtr(dn + h, tn) - sc.stdtr(dn - h, tn)) / (2.0 * h)
        return (_reduce(grad * _t(ddf, grad), ctx.shapes[0]),
                _reduce(grad * _t(np.exp(logpdf), grad), ctx.shapes[1]))


class _BetaInc(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, x):
        a_b, b_b, x_b = torch.broadcast_tensors(a, b, x)
        ctx.save_for_backward(a_b, b_b, x_b)
        ctx.shapes = (a.shape, b.shape, x.shape)
        return _t(sc.betainc(_np(a_b), _np(b_b), _np(x_b)), x_b)

    @staticmethod
    def backward(ctx, grad):
        a, b, x = (_np(t) for t in ctx.saved_tensors)
        xc = np.clip(x, 0.0, 1.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            logd = (sc.xlogy(a - 1.0, xc) + sc.xlog1py(b - 1.0, -xc) - sc.betaln(a, b))
            dens = np.where((xc > 0) & (xc < 1), np.exp(logd), 0.0)
        ha, hb = 1e-5 * a, 1e-5 * b
        da = (sc.betainc(a + ha, b, xc) - sc.betainc(a - ha, b, xc)) / (2.0 * ha)
        db = (sc.betainc(a, b + hb, xc) - sc.betainc(a, b - hb, xc)) / (2.0 * hb)
        return (_reduce(grad * _t(da, grad), ctx.shapes[0]),
                _reduce(grad * _t(db, grad), ctx.shapes[1]),
                _reduce(grad * _t(dens, grad), ctx.shapes[2]))


class _BetaLn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        a_b, b_b = torch.broadcast_tensors(a, b)
        ctx.save_for_backward(a_b, b_b)
        ctx.shapes = (a.shape, b.shape)
        return _t(sc.betaln(_np(a_b), _np(b_b)), a_b)

    @staticmethod
    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        dab = torch.special.digamma(a + b)
        return (_reduce(grad * (torch.special.digamma(a) - dab), ctx.shapes[0]),
                _reduce(grad * (torch.special.digamma(b) - dab), ctx.shapes[1]))


#: The Euler-Mascheroni constant (the one definition the families use).
EULER_GAMMA = 0.5772156649015329


class _Exp1OfExp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        zn = _np(z)
        with np.errstate(over="ignore"):
            x = np.exp(-zn)
            # E1(x) = -gamma - log x + x - x^2/4 + ... (A&S 5.1.11): below x = 1e-10 three
            # terms are exact in float64, and stay finite where exp(-z) underflows to 0.
            small = -EULER_GAMMA + zn + x
            out = np.where(zn > 23.0, small, sc.exp1(np.where(zn > 23.0, 1.0, x)))
        return _t(out, z)

    @staticmethod
    def backward(ctx, grad):
        (z,) = ctx.saved_tensors
        return grad * torch.exp(-torch.exp(-z))


def betainc_ad(a: torch.Tensor, b: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Regularised incomplete beta ``I_x(a, b)`` (scipy's ``betainc``), differentiable."""
    return _BetaInc.apply(a, b, x)


def betaln_ad(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``log B(a, b)`` (scipy's ``betaln``), gradient ``psi(a) - psi(a + b)``."""
    return _BetaLn.apply(a, b)


#: Panels and Gauss-Legendre nodes per panel of :func:`hyp2f1_half_two`.
HYP_PANELS, HYP_NODES = 40, 12
_HYP_X, _HYP_W = np.polynomial.legendre.leggauss(HYP_NODES)


def hyp2f1_half_two(a: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
    """Gauss's ``2F1(a, 1/2; 2; z)`` for ``a > 0``, ``z <= 0`` (the negative binomial CRPS).

    Euler's integral (Abramowitz & Stegun 1964, 15.3.1) with ``t = sin^2 theta``:

        2F1(a, 1/2; 2; z) = (4 / pi) int_0^{pi/2} cos^2(theta) (1 - z sin^2 theta)^(-a) dtheta,

    a smooth integrand, by Gauss-Legendre quadrature (``HYP_NODES`` nodes) on ``HYP_PANELS``
    geometric panels that start at an eighth of ``theta* = (1 + |z| max(a, 1))^(-1/2)``, the
    width of the integrand's peak: relative error below ``1e-15`` against 30-digit arithmetic
    for ``a`` in ``[1e-2, 1e6]`` and ``|z|`` up to ``1e12``, where scipy's ``hyp2f1`` returns
    inf or NaN once ``a`` and ``|z|`` are both large (``a = 166``, ``z = -283``).  Plain torch
    operations: autograd differentiates it in both arguments (the panel ends carry no
    gradient).

    Parameters
    ----------
    a, z : Tensor of shape (n,)

    Returns
    -------
    Tensor of shape (n,)
    """
    a, z = torch.broadcast_tensors(a, z)
    az = (-z).clamp_min(0.0)
    with torch.no_grad():
        theta_star = 1.0 / torch.sqrt(1.0 + az * a.clamp_min(1.0))
        j = torch.arange(HYP_PANELS - 1, dtype=a.dtype, device=a.device)
        ends = (theta_star[..., None] / 8.0 * 2.0**j).clamp(max=math.pi / 2)
        zero = torch.zeros_like(theta_star)[..., None]
        top = torch.full_like(zero, math.pi / 2)
        breaks = torch.cat([zero, ends, top], dim=-1)
    lo, hi = breaks[..., :-1], breaks[..., 1:]
    x = torch.as_tensor(0.5 * (_HYP_X + 1.0), dtype=a.dtype, device=a.device)
    w = torch.as_tensor(0.5 * _HYP_W, dtype=a.dtype, device=a.device)
    theta = lo[..., None] + (hi - lo)[..., None] * x  # (..., panels, nodes)
    sin = torch.sin(theta)
    f = torch.cos(theta) ** 2 * torch.exp(-a[..., None, None]
                                          * torch.log1p(az[..., None, None] * sin * sin))
    return (4.0 / math.pi) * ((hi - lo)[..., None] * w * f).sum(dim=(-1, -2))


def exp1_of_exp(z: torch.Tensor) -> torch.Tensor:
    """``E1(exp(-z))`` with ``E1`` the exponential integral; ``d/dz = exp(-exp(-z))``."""
    return _Exp1OfExp.apply(z)


def _reduce(g: torch.Tensor, shape) -> torch.Tensor:
    """Sum a broadcast gradient back to the input's shape."""
    while g.dim() > len(shape):
        g = g.sum(dim=0)
    for i, s in enumerate(shape):
        if s == 1 and g.shape[i] != 1:
            g = g.sum(dim=i, keepdim=True)
    return g


def gammainc_ad(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Regularised lower incomplete gamma ``P(a, x)``, differentiable in ``a`` and ``x``."""
    return _GammaInc.apply(a, x, False)


def gammaincc_ad(a: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """Regularised upper incomplete gamma ``Q(a, x) = 1 - P(a, x)``, differentiable."""
    return _GammaInc.apply(a, x, True)


def stdtr_ad(df: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
    """Student-t cdf with ``df`` degrees of freedom at ``t``, differentiable in both."""
    return _StdTr.apply(df, t)


#: ``r`` from which :func:`lgamma_ratio` uses Stirling's series instead of ``lgamma``.
STIRLING_MIN = 100.0


def _stirling_tail(x: torch.Tensor) -> torch.Tensor:
    """``lgamma(x) - [(x - 1/2) log x - x + log(2 pi) / 2]`` for ``x >= 100``: the first three
    terms of Stirling's series (Abramowitz & Stegun 1964, 6.1.41), error below ``1e-17``."""
    inv = 1.0 / x
    inv2 = inv * inv
    return inv * (1.0 / 12.0 - inv2 * (1.0 / 360.0 - inv2 / 1260.0))


#: The attribute of a fit's target tensor that holds the terms derived from it
#: (:func:`remembered`; set by :func:`carry_terms`).
TERMS = "_distboost_terms"


def carry_terms(y: torch.Tensor) -> torch.Tensor:
    """Make ``y`` a target that carries the terms derived from it (:func:`remembered`), and
    return it.

    The objective's ``data`` marks the targets of a fit (its training and validation rows,
    their blocks of rows, their copies on a device): a fit evaluates the same target every
    round, and what depends on it alone (``log y!``, ``log y``, a censored target's row
    plan) is derived once and kept on the tensor, gone with it when the fit's data go.  A
    tensor not marked (a user's, a prediction's) derives its terms at each call.
    """
    setattr(y, TERMS, {})
    return y


def carries_terms(y) -> bool:
    """Whether ``y`` is a target marked by :func:`carry_terms`."""
    return isinstance(getattr(y, TERMS, None), dict)


def terms_like(value: torch.Tensor, source) -> torch.Tensor:
    """``value`` (a view or copy of ``source``: a block of its rows, its copy on a device)
    marked as a target of its own when ``source`` is one (:func:`carry_terms`)."""
    return carry_terms(value) if carries_terms(source) else value


def _carry(value, source: torch.Tensor):
    """Mark the tensors of a derived ``value`` (nested tuples and lists) as targets too: a
    zero mixture's stand-in target has its own ``log y!``."""
    if isinstance(value, torch.Tensor):
        if value is not source and not carries_terms(value):
            carry_terms(value)
    elif isinstance(value, tuple | list):
        for item in value:
            _carry(item, source)


def remembered(y: torch.Tensor, key: str, fn):
    """``fn(y)``, kept on ``y`` when it is a fit's target (:func:`carry_terms`): a fit
    evaluates the same ``y`` (its training and validation rows, or the same blocks of them)
    every round, and some terms depend on ``y`` alone (``log y!``, ``log y``, the zero
    mixtures' stand-in values).  A kept value is used only while ``y`` is unchanged
    (``Tensor._version``); it carries no gradient (``y`` is data) and must not be changed in
    place by its users.  The tensors of a kept value are targets themselves (their own terms
    are kept on them).  Any other ``y`` gets ``fn(y)`` at each call.

    Parameters
    ----------
    y : Tensor
    key : str
        What ``fn`` computes (one value per target and key).
    fn : callable
        ``fn(y)``: a tensor, or a tuple holding tensors.
    """
    terms = getattr(y, TERMS, None)
    if not isinstance(terms, dict):
        with torch.no_grad():
            return fn(y)
    entry = terms.get(key)
    if entry is not None and entry[0] == y._version:
        return entry[1]
    with torch.no_grad():
        value = fn(y)
    _carry(value, y)
    terms[key] = (y._version, value)
    return value


def log_factorial(y: torch.Tensor) -> torch.Tensor:
    """``lgamma(y + 1)``, kept on a fit's target (:func:`remembered`): the count families'
    NLL adds it on every evaluation.  A ``y`` of zeros only (a zero mixture's base law
    evaluated at 0) gives zeros without the special function.

    Parameters
    ----------
    y : Tensor of shape (n,)

    Returns
    -------
    Tensor of shape (n,)
    """
    if not bool(y.any()):
        return torch.zeros_like(y)
    return remembered(y, "log_factorial", lambda t: torch.lgamma(t + 1.0))


def lgamma_ratio(r: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``log Gamma(r + y) - log Gamma(r)`` for ``r > 0``, ``y >= 0``, accurate for any ``r``.

    The direct difference of two ``lgamma`` values loses everything when ``r`` is large:
    ``lgamma(1e15)`` is about ``3.3e16``, whose rounding error (about 4) swamps the answer
    ``y log r``.  From ``r >= STIRLING_MIN`` on, Stirling's series gives the difference in a
    form without cancellation (Abramowitz & Stegun 1964, 6.1.41)::

        (r - 1/2) log1p(y / r) + y log(r + y) - y + tail(r + y) - tail(r)

    Differentiable by autograd (both branches are fed safe inputs, so the unused one never
    puts NaN into a gradient).

    Parameters
    ----------
    r : Tensor of shape (n,)
    y : Tensor broadcasting against ``r``

    Returns
    -------
    Tensor
    """
    r, y = torch.broadcast_tensors(r, torch.as_tensor(y, dtype=r.dtype, device=r.device))
    if not bool(y.any()):  # y = 0 everywhere (a zero mixture's base at 0): exactly 0
        return r * 0.0  # (a NaN or infinite r stays NaN, and r keeps its autograd graph)
    big = r >= STIRLING_MIN
    if not bool(big.any()):  # the common case: one branch, the same values and gradients
        return torch.lgamma(r + y) - torch.lgamma(r)
    if bool(big.all()):  # Stirling's branch alone: the same values
        return _lgamma_ratio_stirling(r, y)
    r_small = torch.where(big, torch.ones_like(r), r)
    r_big = torch.where(big, r, torch.full_like(r, STIRLING_MIN))
    direct = torch.lgamma(r_small + y) - torch.lgamma(r_small)
    return torch.where(big, _lgamma_ratio_stirling(r_big, y), direct)


def _lgamma_ratio_stirling(r: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """:func:`lgamma_ratio`'s Stirling branch, for ``r >= STIRLING_MIN``."""
    return ((r - 0.5) * torch.log1p(y / r) + y * torch.log(r + y) - y
            + _stirling_tail(r + y) - _stirling_tail(r))


_HALF_LOG_PI = 0.5 * math.log(math.pi)


def studentt_log_prob(df: torch.Tensor, loc: torch.Tensor, scale: torch.Tensor,
                      y: torch.Tensor) -> torch.Tensor:
    """Log density of Student's t with ``df`` degrees of freedom, location and scale.

    ``log f = lgamma((df+1)/2) - lgamma(df/2) - log(pi df)/2 - log(scale)
    - (df+1)/2 log1p(z^2 / df)`` with ``z = (y - loc) / scale`` (Johnson, Kotz &
    Balakrishnan 1995, eq. 28.2), the ``lgamma`` difference from :func:`lgamma_ratio`: exact
    to rounding for every ``df``, and tending to the Normal log density as ``df -> inf``.
    Differentiable by autograd.

    Parameters
    ----------
    df, loc, scale : Tensor of shape (n,)
    y : Tensor of shape (..., n)

    Returns
    -------
    Tensor of shape (..., n)
    """
    z = (y - loc) / scale
    half = 0.5 * df
    return (lgamma_ratio(half, torch.full_like(half, 0.5)) - 0.5 * torch.log(df) - _HALF_LOG_PI
            - torch.log(scale) - (half + 0.5) * torch.log1p(z * z / df))


#: Nodes of the quadrature in :func:`nb_information` (relative error below ``1e-5`` for
#: ``r`` in ``[3e-3, 1e7]`` and means in ``[1e-4, 1e5]``, tested against the exact series).
NB_QUADRATURE_NODES = 48
#: :func:`nb_information` uses the Poisson-limit expansion where ``r >= NB_POISSON_LIMIT *
#: (2 mean + 1)`` (its relative error is below ``((2 mean + 1) / r)^2 <= 1e-8`` there).
NB_POISSON_LIMIT = 1e4


def nb_poisson_limit(r: torch.Tensor, mean: torch.Tensor) -> torch.Tensor:
    """``I_rr|mean`` in the Poisson limit (``r >= NB_POISSON_LIMIT (2 mean + 1)``): the
    expansion ``mean^2 / (2 r^4) (1 - (2 mean + 1) / r)`` of :func:`nb_information`."""
    return mean * mean / (2.0 * r**4) * (1.0 - (2.0 * mean + 1.0) / r)


def nb_information(r: torch.Tensor, odds: torch.Tensor,
                   nodes: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Expected information about ``total_count`` ``r`` of ``Y ~ NegativeBinomial(r, p)``.

    Returns ``I_rr = E[psi'(r) - psi'(r + Y)]``, the information at fixed ``probs``
    (minus the expected second ``r``-derivative of ``log Gamma(Y + r) - log Gamma(r)``;
    Lawless 1987, sec. 2), and ``I_rr|mean = I_rr - p / r``, the information at a fixed
    mean (the Schur complement ``I_rr - I_rp^2 / I_pp``), which is positive but, in the
    Poisson limit, far smaller than ``I_rr``: it is computed directly, not as a
    difference.  ``I_rr`` has no closed form, and its series ``sum_j P(Y > j) / (r + j)^2``
    runs over as many terms as the counts are large.  With
    ``psi'(r) - psi'(r + y) = int_0^inf t e^{-rt} (1 - e^{-yt}) / (1 - e^{-t}) dt`` (Abramowitz
    & Stegun 1964, 6.4.1), the probability generating function
    ``E[e^{-tY}] = (1 + odds (1 - e^{-t}))^{-r}`` and ``p / r = int_0^inf e^{-rt}
    (1 - e^{-mean t}) dt``,

        I_rr|mean = int_0^inf e^{-rt} [t (1 - E[e^{-tY}]) / (1 - e^{-t}) - (1 - e^{-mean t})] dt,

    a smooth integral evaluated by the trapezoidal rule in ``log t`` (exponentially
    convergent for an integrand analytic in a strip and decaying at both ends; Trefethen &
    Weideman 2014, SIAM Review 56(3), sec. 5) on ``NB_QUADRATURE_NODES`` nodes between
    ``1e-4 min(1, 1/r, 1/mean)`` and ``30 / r``; every factor uses ``expm1`` / ``log1p``, so
    ``p`` near 1 (large means) loses no precision.  Where ``r >= NB_POISSON_LIMIT (2 mean +
    1)`` the integrand's two terms agree to ~``mean / r^2`` and the expansion
    ``mean^2 / (2 r^4) (1 - (2 mean + 1) / r)`` (from ``1 / (r + j)^2`` in powers of ``j / r``
    and the negative binomial moments) is used instead.

    Parameters
    ----------
    r, odds : Tensor of shape (n,)
        Positive ``total_count`` and ``probs / (1 - probs)`` (the mean over ``r``).
    nodes : int, optional
        Quadrature nodes (default :data:`NB_QUADRATURE_NODES`).

    Returns
    -------
    (Tensor, Tensor) of shape (n,)
        ``I_rr`` and ``I_rr|mean``, both non-negative; no gradient.
    """
    with torch.no_grad():
        r = r.detach().to(torch.float64)
        odds = odds.detach().to(torch.float64)
        mean = r * odds
        p_over_r = odds / (r * (1.0 + odds))
        rc, oc, mc = r[:, None], odds[:, None], mean[:, None]
        lo = torch.log(1e-4 * torch.minimum(1.0 / rc, 1.0 / mc).clamp(max=1.0))
        hi = torch.maximum(torch.log(30.0 / rc), lo + 1.0)
        nodes = NB_QUADRATURE_NODES if nodes is None else int(nodes)
        grid = torch.linspace(0.0, 1.0, nodes, dtype=r.dtype, device=r.device)
        t = torch.exp(lo + (hi - lo) * grid)
        u = -torch.expm1(-t)  # 1 - e^{-t}
        pgf_gap = -torch.expm1(-rc * torch.log1p(oc * u))  # 1 - E[e^{-tY}]
        f = torch.exp(-rc * t) * ((t / u) * pgf_gap + torch.expm1(-mc * t)) * t  # dt = t dlog t
        f[:, 0] *= 0.5
        f[:, -1] *= 0.5
        quad = f.sum(dim=1) * (hi - lo)[:, 0] / (nodes - 1)
        in_limit = r >= NB_POISSON_LIMIT * (2.0 * mean + 1.0)
        orth = torch.where(in_limit, nb_poisson_limit(r, mean), quad).clamp_min(0.0)
        return orth + p_over_r, orth
