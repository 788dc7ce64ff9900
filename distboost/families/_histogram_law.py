"""The torch ``Distribution`` of a batch of histogram laws (``families/histogram.py``)."""

from __future__ import annotations

import torch
from torch.distributions import Distribution, constraints

from .base import Family


class HistogramLaw(Distribution):
    """The torch object of a batch of histogram laws (``Predictive.to_torch``): log_prob,
    cdf, icdf, sample, mean and variance delegate to the family."""

    arg_constraints: dict = {}
    support = constraints.real

    def __init__(self, family: Family, params, validate_args=None):
        self.family, self.params = family, dict(params)
        for k, v in self.params.items():  # loc, scale, coef_j as attributes, as in torch
            setattr(self, k, v)
        n = next(iter(self.params.values())).shape
        super().__init__(batch_shape=n, validate_args=False)

    def log_prob(self, value):
        return self.family.log_prob(self.params, value)

    def cdf(self, value):
        return self.family.cdf(self.params, value)

    def icdf(self, value):
        return self.family.icdf(self.params, value)

    @property
    def mean(self):
        return self.family.mean(self.params)

    @property
    def variance(self):
        return self.family.variance(self.params)

    def sample(self, sample_shape=()):
        u = torch.rand(torch.Size(sample_shape) + self.batch_shape, dtype=torch.float64)
        return self.family.icdf(self.params, u.clamp(1e-300, 1.0))
