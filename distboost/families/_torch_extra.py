"""Distributions that ``torch.distributions`` lacks, built from its own parts.

``Logistic(loc, scale)``: the logistic law as ``loc + scale * logit(U)``, ``U ~ Uniform(0, 1)``,
i.e. a ``TransformedDistribution`` of a uniform through the inverse sigmoid and an affine map,
with closed-form ``cdf``, ``icdf``, ``mean`` and ``variance`` (Johnson, Kotz & Balakrishnan
1995, ch. 23).
"""

from __future__ import annotations

import math

import torch
from torch.distributions import (
    AffineTransform,
    SigmoidTransform,
    TransformedDistribution,
    Uniform,
    constraints,
)
from torch.distributions.utils import broadcast_all

__all__ = ["Logistic"]


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
        z = (value - self.loc) / self.scale
        # log f = -z - log(scale) - 2 log(1 + exp(-z)), written symmetrically in |z|.
        return -z.abs() - torch.log(self.scale) - 2.0 * torch.nn.functional.softplus(-z.abs())

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
