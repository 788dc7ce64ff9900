"""Distributions that ``torch.distributions`` lacks, built from its own parts.

``Logistic(loc, scale)``: the logistic law as ``loc + scale * logit(U)``, ``U ~ Uniform(0, 1)``,
i.e. a ``TransformedDistribution`` of a uniform through the inverse sigmoid and an affine map,
with closed-form ``cdf``, ``icdf``, ``mean`` and ``variance`` (Johnson, Kotz & Balakrishnan
1995, ch. 23).  ``LogLogistic(scale, concentration)``: its exponential.
``InverseGaussian(loc, concentration)``: the Wald law, with a log-space cdf and an exact
sampler.
"""

from __future__ import annotations

import math

import torch
from torch.distributions import (
    AffineTransform,
    Distribution,
    ExpTransform,
    SigmoidTransform,
    TransformedDistribution,
    Uniform,
    constraints,
)
from torch.distributions.utils import broadcast_all

__all__ = ["InverseGaussian", "LogLogistic", "Logistic", "logistic_log_prob",
           "loglogistic_log_prob"]


def logistic_log_prob(loc, scale, value):
    """Log density of the logistic law: ``-z - log(scale) - 2 log(1 + exp(-z))``,
    ``z = (value - loc) / scale``, written symmetrically in ``|z|``.  Shared by
    :class:`Logistic` and the family, which calls it without building the distribution
    (whose construction imports SymPy through ``torch.broadcast_shapes``)."""
    z = (value - loc) / scale
    return -z.abs() - torch.log(scale) - 2.0 * torch.nn.functional.softplus(-z.abs())


def loglogistic_log_prob(scale, concentration, value):
    """Log density of the log-logistic law (:class:`LogLogistic`): ``log c - log y - |z| -
    2 log(1 + exp(-|z|))``, ``z = c (log y - log scale)``."""
    z = concentration * (torch.log(value) - torch.log(scale))
    return (torch.log(concentration) - torch.log(value) - z.abs()
            - 2.0 * torch.nn.functional.softplus(-z.abs()))


class Logistic(TransformedDistribution):
    """Logistic distribution with location ``loc`` and scale ``scale``.

    ``cdf(x) = sigmoid((x - loc) / scale)``, mean ``loc``, variance ``scale^2 pi^2 / 3``.
    """

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        finfo = torch.finfo(self.loc.dtype)
        base = Uniform(torch.full_like(self.loc, finfo.tiny),
                       torch.full_like(self.loc, 1.0 - finfo.eps), validate_args=False)
        transforms = [SigmoidTransform().inv, AffineTransform(loc=self.loc, scale=self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def log_prob(self, value):
        return logistic_log_prob(self.loc, self.scale, value)

    def cdf(self, value):
        return torch.sigmoid((value - self.loc) / self.scale)

    def icdf(self, value):
        return self.loc + self.scale * torch.logit(value)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return self.scale.pow(2) * (math.pi**2 / 3.0)

    def entropy(self):
        return torch.log(self.scale) + 2.0


class InverseGaussian(Distribution):
    """Inverse Gaussian (Wald) law with mean ``loc`` and shape ``concentration``.

    Density ``sqrt(l / (2 pi y^3)) exp(-l (y - m)^2 / (2 m^2 y))`` with ``m = loc``,
    ``l = concentration``; mean ``m``, variance ``m^3 / l`` (Chhikara & Folks 1989, ch. 2).
    scipy's ``invgauss(mu=m / l, scale=l)``.  The cdf (Chhikara & Folks 1989, eq. 2.6)
    ``Phi(a) + exp(2 l / m) Phi(b)``, ``a = sqrt(l / y) (y / m - 1)``,
    ``b = -sqrt(l / y) (y / m + 1)``, is summed in log space (no overflow of
    ``exp(2 l / m)``).  Draws by the transformation with multiple roots of Michael, Schucany
    & Haas (1976), in the cancellation-free form ``x = m / (1 + w + sqrt(w^2 + 2 w))``,
    ``w = m nu^2 / (2 l)``.
    """

    arg_constraints = {"loc": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def log_prob(self, value):
        m, lam = self.loc, self.concentration
        return (0.5 * (torch.log(lam) - math.log(2.0 * math.pi) - 3.0 * torch.log(value))
                - lam * (value - m) ** 2 / (2.0 * m * m * value))

    def _ab(self, value):
        m, lam = self.loc, self.concentration
        root = torch.sqrt(lam / value)
        return root * (value / m - 1.0), -root * (value / m + 1.0)

    def log_cdf(self, value):
        a, b = self._ab(value)
        return torch.logaddexp(torch.special.log_ndtr(a),
                               2.0 * self.concentration / self.loc + torch.special.log_ndtr(b))

    def log_sf(self, value):
        """``log(Phi(-a) - exp(2 l / m) Phi(b))``: above the mean (``a > 0``) as
        ``-a^2/2 + log((erfcx(a/sqrt 2) - erfcx(-b/sqrt 2)) / 2)`` (``b^2 = a^2 + 4 l / m``,
        so both terms share ``exp(-a^2 / 2)``), below it as ``log1p(-cdf)``."""
        a, b = self._ab(value)
        upper = a > 0
        a_up = torch.where(upper, a, torch.ones_like(a))
        b_up = torch.where(upper, b, -torch.full_like(b, 2.0))
        s2 = math.sqrt(2.0)
        diff = torch.special.erfcx(a_up / s2) - torch.special.erfcx(-b_up / s2)
        up = -0.5 * a_up * a_up + torch.log(0.5 * diff.clamp_min(1e-300))
        low_cdf = torch.where(upper, torch.zeros_like(a), self.log_cdf(value).exp())
        return torch.where(upper, up, torch.log1p(-low_cdf.clamp_max(1.0 - 1e-16)))

    def cdf(self, value):
        return torch.exp(self.log_cdf(value))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        m, lam = self.loc, self.concentration
        r = 1.5 * m / lam
        return m * (torch.sqrt(1.0 + r * r) - r)

    @property
    def variance(self):
        return self.loc**3 / self.concentration

    def sample(self, sample_shape=()):
        shape = self._extended_shape(torch.Size(sample_shape))
        with torch.no_grad():
            m = self.loc.expand(shape)
            lam = self.concentration.expand(shape)
            nu = torch.randn(shape, dtype=m.dtype, device=m.device)
            w = m * nu * nu / (2.0 * lam)
            d = 1.0 + w + torch.sqrt(w * w + 2.0 * w)  # x = m / d, the other root m d
            u = torch.rand(shape, dtype=m.dtype, device=m.device)
            # P(smaller root) = m / (m + x) = d / (1 + d).
            return torch.where(u * (1.0 + d) <= d, m / d, m * d)


class LogLogistic(TransformedDistribution):
    """Log-logistic law: ``log Y`` is logistic with location ``log scale`` and scale
    ``1 / concentration``; ``F(y) = 1 / (1 + (y / scale)^-concentration)``, scipy's
    ``fisk(c=concentration, scale=scale)``.  Mean ``scale (pi / c) / sin(pi / c)`` for
    ``c > 1`` (inf otherwise), variance finite for ``c > 2`` (inf otherwise)
    (Johnson, Kotz & Balakrishnan 1995, ch. 23, sec. 10)."""

    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        base = Logistic(torch.log(self.scale), self.concentration.reciprocal(),
                        validate_args=False)
        super().__init__(base, [ExpTransform()], validate_args=validate_args)

    def _z(self, value):
        return self.concentration * (torch.log(value) - torch.log(self.scale))

    def log_prob(self, value):
        return loglogistic_log_prob(self.scale, self.concentration, value)

    def cdf(self, value):
        return torch.sigmoid(self._z(value))

    def icdf(self, value):
        return self.scale * torch.exp(torch.logit(value) / self.concentration)

    @property
    def mean(self):
        c = self.concentration
        ok = c > 1.0
        t = math.pi / torch.where(ok, c, torch.full_like(c, 2.0))
        return torch.where(ok, self.scale * t / torch.sin(t), torch.full_like(c, math.inf))

    @property
    def variance(self):
        c = self.concentration
        ok = c > 2.0
        t = math.pi / torch.where(ok, c, torch.full_like(c, 3.0))
        var = self.scale**2 * (2.0 * t / torch.sin(2.0 * t) - (t / torch.sin(t)) ** 2)
        return torch.where(ok, var, torch.full_like(c, math.inf))
