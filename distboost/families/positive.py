"""Families for positive targets: lognormal, gamma, weibull, exponential, half_normal,
inverse_gaussian, loglogistic.

The support is ``y > 0`` except for the exponential and the half-normal (``y >= 0``, where
the density is finite at zero).  Gamma's quantile function, missing from torch, is exact through
``scipy.special.gammaincinv``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.special as sc
import torch
import torch.distributions as D

from .base import Family, info_matrix, refuse_all_zero
from .continuous import normal_raw_derivatives, normal_scale_low, normal_scale_profile
from .numerics import crps as _crps
from .numerics import likelihood as _scores
from .numerics import tails as _tails
from .numerics.information import diagonal_info
from .numerics.one_parameter import OneParameterNumpy
from .numerics.special import EULER_GAMMA, gammainc_ad, gammaincc_ad, remembered
from .numerics.stats import scipy_elementwise, weighted_mean_var, weighted_quantile
from .numerics.torch_extra import InverseGaussian as _IG
from .numerics.torch_extra import LogLogistic as _LL
from .numerics.torch_extra import loglogistic_log_prob
from .registry import register
from .support import NONNEGATIVE, POSITIVE

__all__ = ["LogNormal", "Gamma", "Weibull", "Exponential", "HalfNormal", "InverseGaussian",
           "LogLogistic"]



@register
class LogNormal(Family):
    """Log-normal family: ``log y ~ N(loc, scale^2)``; scipy's ``lognorm(s=scale,
    scale=exp(loc))``."""

    name = "lognormal"
    reference = "`lognorm(s=scale, scale=exp(loc))`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.lognormal)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.lognormal)
    sf_formula = staticmethod(_tails.lognormal_sf)
    cdf_formula = staticmethod(_tails.lognormal_cdf)
    torch_class = D.LogNormal
    param_names = ("loc", "scale")
    support = POSITIVE

    #: Closed-form weighted MLE: weighted mean and standard deviation of ``log y``.
    closed_form_mle = True

    def start_values(self, y, w):
        mean, var = weighted_mean_var(np.log(y), w)
        return {"loc": mean, "scale": math.sqrt(var)}

    def param_floors(self, y):
        """``scale`` is the standard deviation of ``log y`` (dimensionless): floor ``1e-6``."""
        return {"scale": self.SCALE_FLOOR}

    def fisher_natural(self, params):
        """Diagonal ``(1 / scale^2, 2 / scale^2)``, as for the normal law of ``log y``."""
        inv_var = params["scale"].pow(-2)
        return diagonal_info(inv_var, 2.0 * inv_var)

    def raw_derivatives(self, raw, y, floor=None):
        """With the default links (identity, exp): the Normal's closed form at ``log y``
        (:meth:`Normal.raw_derivatives`), the NLL adding ``log y``; other links and a floor
        on ``loc`` take the general chain rule."""
        lo = normal_scale_low(self, floor)
        if lo is None:
            return super().raw_derivatives(raw, y, floor)
        log_y = remembered(y, "log", torch.log)
        nll, grad, fisher = normal_raw_derivatives(raw, log_y, lo)
        return nll.add_(log_y), grad, fisher

    def dispersion_profile(self, raw, y, floor=None):
        """With the default links: the Normal's profile for ``log y`` (``rho = z^2``,
        ``p = 2``), the NLL adding ``log y`` (see :meth:`Family.dispersion_profile`)."""
        log_y = torch.log(y)
        return normal_scale_profile(self, raw, log_y, floor, extra=log_y)

    def log_cdf(self, params, y):
        return torch.special.log_ndtr((torch.log(y) - params["loc"]) / params["scale"])

    def log_sf(self, params, y):
        return torch.special.log_ndtr((params["loc"] - torch.log(y)) / params["scale"])


@register
class Gamma(Family):
    """Gamma family with shape ``concentration`` and ``rate``; scipy's
    ``gamma(a=concentration, scale=1/rate)``.  Quantiles are exact via
    ``scipy.special.gammaincinv`` (torch has no ``Gamma.icdf``)."""

    name = "gamma"
    reference = "`gamma(a=concentration, scale=1/rate)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.gamma)
    score_formula = staticmethod(_scores.gamma)
    torch_class = D.Gamma
    param_names = ("concentration", "rate")
    support = POSITIVE

    def start_values(self, y, w):
        # Minka (2002), "Estimating a Gamma distribution", eq. (8): a closed-form
        # approximation of the shape MLE from s = log(mean) - mean(log y).
        mean = float(np.sum(w * y))
        s = math.log(mean) - float(np.sum(w * np.log(y)))
        s = max(s, 1e-12)
        a = (3.0 - s + math.sqrt((s - 3.0) ** 2 + 24.0 * s)) / (12.0 * s)
        return {"concentration": a, "rate": a / mean}

    def fisher_natural(self, params):
        """``[[psi'(a), -1/b], [-1/b, a/b^2]]`` (e.g. Lehmann & Casella 1998, ex. 2.6.9)."""
        a, b = params["concentration"], params["rate"]
        off = -1.0 / b
        return info_matrix([[torch.special.polygamma(1, a), off], [off, a / (b * b)]])

    def cdf(self, params, y):
        x = (params["rate"] * y).clamp_min(0.0)
        return torch.special.gammainc(params["concentration"].expand_as(x), x)

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        return scipy_elementwise(sc.gammaincinv, params["concentration"], q) / params["rate"]

    def log_cdf(self, params, y):
        return torch.log(gammainc_ad(params["concentration"], params["rate"] * y))

    def log_sf(self, params, y):
        return torch.log(gammaincc_ad(params["concentration"], params["rate"] * y))


@register
class Weibull(Family):
    """Weibull family, ``cdf = 1 - exp(-(y / scale)^concentration)``; scipy's
    ``weibull_min(c=concentration, scale=scale)``."""

    name = "weibull"
    reference = "`weibull_min(c=concentration, scale=scale)`"
    censorable = True
    score_formula = staticmethod(_scores.weibull)
    sf_formula = staticmethod(_tails.weibull_sf)
    cdf_formula = staticmethod(_tails.weibull_cdf)
    torch_class = D.Weibull
    param_names = ("scale", "concentration")
    support = POSITIVE

    def start_values(self, y, w):
        # log y is Gumbel (minima) with scale 1/k: sd(log y) = pi / (k sqrt 6).
        mean, var = weighted_mean_var(np.log(y), w)
        k = math.pi / math.sqrt(6.0 * var) if var > 0 else 1.0
        return {"scale": math.exp(mean + EULER_GAMMA / k), "concentration": k}

    def fisher_natural(self, params):
        """``[[(k/l)^2, -(1-g)/l], [-(1-g)/l, ((1-g)^2 + pi^2/6)/k^2]]`` with ``l`` the scale,
        ``k`` the shape and g Euler's constant (Johnson, Kotz & Balakrishnan 1994,
        ch. 21, eq. 21.77)."""
        lam, k = params["scale"], params["concentration"]
        c = 1.0 - EULER_GAMMA
        off = -c / lam
        return info_matrix([[(k / lam) ** 2, off], [off, (c * c + math.pi**2 / 6.0) / (k * k)]])

    def log_prob(self, params, y):
        """``log k - log l + (k - 1) log(y / l) - (y / l)^k``: torch's ``Weibull.log_prob``
        without building the distribution (a ``TransformedDistribution``, whose construction
        costs a SymPy import in a fresh process)."""
        lam, k = params["scale"], params["concentration"]
        log_t = torch.log(y) - torch.log(lam)
        return torch.log(k) - torch.log(lam) + (k - 1.0) * log_t - torch.exp(k * log_t)

    def cdf(self, params, y):
        z = (y.clamp_min(0.0) / params["scale"]) ** params["concentration"]
        return -torch.expm1(-z)

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        return params["scale"] * (-torch.log1p(-q)) ** (1.0 / params["concentration"])

    def log_cdf(self, params, y):
        t = (y / params["scale"]) ** params["concentration"]
        return torch.log(-torch.expm1(-t))

    def log_sf(self, params, y):
        return -((y / params["scale"]) ** params["concentration"])


@register
class Exponential(OneParameterNumpy, Family):
    """Exponential family with ``rate``; support ``y >= 0``."""

    name = "exponential"
    reference = "`expon(scale=1/rate)`"
    censorable = True
    closed_form_crps = True
    crps_formula = staticmethod(_crps.exponential)
    score_formula = staticmethod(_scores.exponential)
    sf_formula = staticmethod(_tails.exponential_sf)
    cdf_formula = staticmethod(_tails.exponential_cdf)
    torch_class = D.Exponential
    param_names = ("rate",)
    support = NONNEGATIVE

    #: Closed-form weighted MLE ``1 / mean`` (an all-zero target is rejected).
    closed_form_mle = True

    def start_values(self, y, w):
        mean = float(np.sum(w * y))
        if mean <= 0:
            raise ValueError(
                f"Family 'exponential' cannot fit a target whose weighted mean is {mean}: "
                "all rows are zero."
            )
        return {"rate": 1.0 / mean}

    def fisher_natural(self, params):
        """``1 / rate^2``."""
        return params["rate"].pow(-2).unsqueeze(-1)

    def log_cdf(self, params, y):
        return torch.log(-torch.expm1(-params["rate"] * y))

    def log_sf(self, params, y):
        return -params["rate"] * y


@register
class HalfNormal(OneParameterNumpy, Family):
    """Half-normal family, ``|X|`` for ``X ~ N(0, scale^2)``; scipy's ``halfnorm(scale=scale)``.

    Support ``y >= 0`` (the density ``sqrt(2 / pi) / scale`` at zero is finite).  Closed
    forms: weighted MLE ``scale = sqrt(sum w y^2)``, Fisher information ``2 / scale^2``, CRPS
    (:func:`distboost.families.numerics.crps.half_normal`).
    """

    name = "half_normal"
    reference = "`halfnorm(scale=scale)`"
    closed_form_crps = True
    crps_formula = staticmethod(_crps.half_normal)
    dispersion_param = "scale"
    score_formula = staticmethod(_scores.half_normal)
    torch_class = D.HalfNormal
    param_names = ("scale",)
    support = NONNEGATIVE

    #: Closed-form weighted MLE ``sqrt(sum w y^2)`` (an all-zero target is rejected).
    closed_form_mle = True

    def validate_y(self, y) -> np.ndarray:
        """The support check, and a target with at least one positive row."""
        return refuse_all_zero(self, super().validate_y(y), "its scale would be 0")

    def start_values(self, y, w):
        return {"scale": math.sqrt(float(np.sum(w * y * y)))}

    def fisher_natural(self, params):
        """``2 / scale^2`` (as the scale of a centred normal)."""
        return (2.0 * params["scale"].pow(-2)).unsqueeze(-1)

    def log_prob(self, params, y):
        s = params["scale"]
        z = y / s
        return 0.5 * math.log(2.0 / math.pi) - torch.log(s) - 0.5 * z * z

    def cdf(self, params, y):
        return torch.special.erf(y.clamp_min(0.0) / (params["scale"] * math.sqrt(2.0)))

    def icdf(self, params, q):
        q = torch.as_tensor(q, dtype=torch.float64)
        x = params["scale"] * math.sqrt(2.0) * torch.special.erfinv(q)
        return torch.where(q >= 1, torch.full_like(x, math.inf), x)


@register
class InverseGaussian(Family):
    """Inverse Gaussian (Wald) family with mean ``loc`` and shape ``concentration``;
    scipy's ``invgauss(mu=loc / concentration, scale=concentration)`` (scipy's ``mu`` is the
    mean divided by the shape).  See
    :class:`distboost.families.numerics.torch_extra.InverseGaussian`
    for the log-space cdf and the sampler.

    Closed forms: the weighted MLE ``loc = sum w y``, ``1 / concentration =
    sum w (1 / y - 1 / loc)`` (Tweedie 1957); the diagonal Fisher information
    ``(concentration / loc^3, 1 / (2 concentration^2))`` (Chhikara & Folks 1989, sec. 5.2).
    Quantiles by the vectorised inversion of the cdf; CRPS numerical.
    """

    name = "inverse_gaussian"
    reference = "`invgauss(mu=loc / concentration, scale=concentration)`"
    doc_notes = {
        "parameters": "loc = mean (exp), concentration (exp)",
    }
    censorable = True
    score_formula = staticmethod(_scores.inverse_gaussian)
    torch_class = _IG
    param_names = ("loc", "concentration")
    support = POSITIVE
    closed_form_mle = True

    def start_values(self, y, w):
        mean = float(np.sum(w * y))
        inv = float(np.sum(w / y)) - 1.0 / mean
        return {"loc": mean, "concentration": 1.0 / inv if inv > 0 else 1e12 * mean}

    def fisher_natural(self, params):
        m, lam = params["loc"], params["concentration"]
        return diagonal_info(lam / m**3, 0.5 / (lam * lam))

    def log_cdf(self, params, y):
        return self.distribution(params).log_cdf(y)

    def log_sf(self, params, y):
        return self.distribution(params).log_sf(y)

    def cdf(self, params, y):
        return torch.exp(self.distribution(params).log_cdf(y.clamp_min(1e-300)))


@register
class LogLogistic(Family):
    """Log-logistic (Fisk) family: ``log y`` is logistic with location ``log scale`` and
    scale ``1 / concentration``; scipy's ``fisk(c=concentration, scale=scale)``.  A standard
    accelerated-failure-time law (proportional odds), with a censored twin.

    The mean is finite for ``concentration > 1`` and the variance for ``concentration > 2``
    (inf otherwise; scipy gives NaN there).  Fisher information: that of the logistic law of
    ``log y``, ``diag(c^2 / (3 scale^2), (pi^2 + 3) / (9 c^2))`` (Johnson, Kotz &
    Balakrishnan 1995, ch. 23, eq. 23.38, by the chain rule).  CRPS numerical.
    """

    name = "loglogistic"
    reference = "`fisk(c=concentration, scale=scale)`"
    censorable = True
    score_formula = staticmethod(_scores.loglogistic)
    sf_formula = staticmethod(_tails.loglogistic_sf)
    cdf_formula = staticmethod(_tails.loglogistic_cdf)
    torch_class = _LL
    param_names = ("scale", "concentration")
    support = POSITIVE

    def start_values(self, y, w):
        logy = np.log(y)
        _, var = weighted_mean_var(logy, w)
        c = math.pi / math.sqrt(3.0 * var) if var > 0 else 1.0
        return {"scale": math.exp(weighted_quantile(logy, w, 0.5)), "concentration": c}

    def fisher_natural(self, params):
        s, c = params["scale"], params["concentration"]
        return diagonal_info(c * c / (3.0 * s * s), (math.pi**2 + 3.0) / (9.0 * c * c))

    def log_prob(self, params, y):
        """The log-logistic log density without building the torch distribution (a
        ``TransformedDistribution``, whose construction costs a SymPy import in a fresh
        process)."""
        return loglogistic_log_prob(params["scale"], params["concentration"], y)

    def _z(self, params, y):
        return params["concentration"] * (torch.log(y) - torch.log(params["scale"]))

    def log_cdf(self, params, y):
        return torch.nn.functional.logsigmoid(self._z(params, y))

    def log_sf(self, params, y):
        return torch.nn.functional.logsigmoid(-self._z(params, y))

    def cdf(self, params, y):
        return torch.sigmoid(self._z(params, y.clamp_min(0.0)))
