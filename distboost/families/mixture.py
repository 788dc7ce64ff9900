"""``Mixture(component, n_components=K)``: a finite mixture of ``K`` laws of one continuous
family, every parameter of every component boosted.

Parameters (``3 K - 1`` for a two-parameter component): the component's parameters with a
suffix, ``loc_0, scale_0, loc_1, scale_1, ...``, then ``logits_1 ... logits_{K-1}``; the
weights are ``softmax(0, logits_1, ..., logits_{K-1})`` (``K - 1`` raw outputs: the first
logit is fixed at 0, as in multinomial logistic regression).

**Identifiability.**  A mixture is unchanged when its components are permuted (label
switching), so a boosted component index would mean nothing and two fits (or a saved and a
reloaded model) could swap them.  The components are ordered by their ``loc`` (or, without
one, by their first parameter): ``loc_0`` is boosted as is, and ``loc_k`` for ``k >= 1`` as
the log of its increment, ``loc_k = loc_{k-1} + exp(raw_k)`` (for a positive ordered
parameter, ``log v_k = log v_{k-1} + exp(raw_k)``).  Every prediction therefore has
``loc_0 < loc_1 < ...``.  The links of ``loc_k`` (``k >= 1``) name the link of the value
(identity), not of the raw increment.

**Scores.**  The log-likelihood is a log-sum-exp over the components; the cdf the weighted
sum of the components' cdfs; quantiles the vectorised inversion of it (to ``1e-10``
relative); mean and variance by the laws of total expectation and variance.  The CRPS of a
mixture of normals is the closed form of Grimit et al. (2006), eq. 9
(:func:`distboost.families.numerics.crps.normal_mixture`); other components use the numerical CRPS.
There is no closed-form Fisher information: ``step="auto"`` is the gradient step (see
:attr:`Mixture.default_step`); a mixture's likelihood is unbounded as a component's scale
shrinks onto a few points, so larger leaves (``min_child_samples``) regularise it.
Start values: the component's weighted MLE on ``K`` groups of ``y`` split at its weighted
quantiles, equal weights, then the numerical MLE of the mixture.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping

import numpy as np
import torch
import torch.distributions as D

from ..links import RAW_BOUND, Link, get_link
from .base import Family, _normalise_weights, as_float64_tensor
from .numerics import crps as _crps
from .numerics.inversion import invert_cdf
from .numerics.stats import weighted_quantile
from .registry import get, register_wrapper

__all__ = ["Mixture"]


class Mixture(Family):
    """A finite mixture of ``n_components`` laws of one continuous family.

    Parameters
    ----------
    component : str or Family
        A continuous family (by name or instance); its links are the components' links.
    n_components : int
        ``K >= 2``.
    links : dict of str to str, optional
        Link overrides of the component's parameters, by the component's names (``"scale"``)
        or the mixture's (``"scale_1"``: applied to every component).

    Raises
    ------
    ValueError
        For a discrete or classification component, ``n_components < 2``, or an ordered
        parameter whose link is neither identity nor exp.
    """

    torch_class = D.MixtureSameFamily
    #: ``step="auto"``: the gradient step.  On the bimodal data of benchmarks/families.py
    #: (4000 rows, two seeds) the held-out log-likelihood per row was -1.17 / -1.15 with it
    #: against -1.27 / -1.28 with Newton's step, whose curvature lets a component's scale
    #: collapse onto a few training points within a few rounds (a mixture's likelihood is
    #: unbounded there).  Larger leaves help more (num_leaves=4, min_child_samples=100:
    #: -1.00 / -1.02).
    default_step = "gradient"

    def __init__(self, component="normal", n_components: int = 2,
                 links: Mapping[str, str | Link] | None = None):
        comp = get(component)
        if comp.discrete or comp.classification:
            raise ValueError(f"Mixture needs a continuous component family; {comp.name!r} is "
                             "discrete.")
        if isinstance(n_components, bool) or not isinstance(n_components, int | np.integer) \
                or n_components < 2:
            raise ValueError(f"n_components must be an integer >= 2; got {n_components!r}.")
        self.n_components = int(n_components)
        self.component = comp
        if links:
            self.component = comp.with_links({self._base_name(p): lk for p, lk in links.items()})
        comp = self.component
        self.order_param = "loc" if "loc" in comp.param_names else comp.param_names[0]
        if comp.links[self.order_param].name not in ("identity", "exp"):
            raise ValueError(
                f"Mixture orders its components by {self.order_param!r}, whose link "
                f"{comp.links[self.order_param].name!r} is neither 'identity' nor 'exp'."
            )
        k = self.n_components
        self.param_names = tuple(f"{p}_{j}" for j in range(k) for p in comp.param_names) + \
            tuple(f"logits_{j}" for j in range(1, k))
        self.links = {**{f"{p}_{j}": comp.links[p] for j in range(k) for p in comp.param_names},
                      **{f"logits_{j}": get_link("identity") for j in range(1, k)}}
        self.support = comp.support
        self.closed_form_crps = comp.name == "normal"
        self.crps_formula = _crps.normal_mixture if self.closed_form_crps else None

    def _base_name(self, name: str) -> str:
        base = name.rsplit("_", 1)[0] if name.rsplit("_", 1)[-1].isdigit() else name
        if base not in self.component.param_names:
            raise ValueError(f"Family {self.name!r} has no parameter {name!r}; its components "
                             f"have {list(self.component.param_names)}.")
        return base

    @property
    def name(self) -> str:
        return f"mixture({self.component.name}, {self.n_components})"

    def __repr__(self) -> str:
        return f"Mixture({self.component!r}, n_components={self.n_components})"

    def with_links(self, links):
        return Mixture(self.component, self.n_components, links=links)

    def get_params(self) -> dict:
        return {"component": self.component.get_state(), "n_components": self.n_components}

    def get_state(self) -> dict:
        return {"wrapper": "mixture", "inner": self.component.get_state(),
                "n_components": self.n_components}

    # ------------------------------------------------------------------ raw <-> params
    def params_from_raw(self, raw):
        comp, k, out = self.component, self.n_components, {}
        c = len(comp.param_names)
        prev = None
        for j in range(k):
            for i, p in enumerate(comp.param_names):
                col = raw[:, j * c + i]
                if p == self.order_param and j > 0:
                    step = torch.exp(col.clamp(-RAW_BOUND, RAW_BOUND))
                    if comp.links[p].name == "identity":
                        value = prev + step
                    else:
                        value = prev * torch.exp(step)
                else:
                    value = comp.links[p].forward(col)
                if p == self.order_param:
                    prev = value
                out[f"{p}_{j}"] = value
        for j in range(1, k):
            out[f"logits_{j}"] = raw[:, k * c + j - 1]
        return out

    def raw_from_params(self, params):
        comp, k = self.component, self.n_components
        cols = []
        for j in range(k):
            for p in comp.param_names:
                v = np.asarray(params[f"{p}_{j}"], dtype=np.float64)
                if p == self.order_param and j > 0:
                    prev = np.asarray(params[f"{p}_{j - 1}"], dtype=np.float64)
                    step = v - prev if comp.links[p].name == "identity" else np.log(v / prev)
                    with np.errstate(divide="ignore", invalid="ignore"):
                        cols.append(np.clip(np.log(step), -RAW_BOUND, RAW_BOUND))
                else:
                    cols.append(np.asarray(comp.links[p].inverse(v)))
        cols += [np.asarray(params[f"logits_{j}"], dtype=np.float64) for j in range(1, k)]
        return np.stack(np.broadcast_arrays(*cols), axis=-1).astype(np.float64)

    def fisher_natural(self, params):
        return None

    def fisher_information(self, raw):
        return None

    # ------------------------------------------------------------------ components
    def _stacked(self, params):
        """Component parameters stacked to shape (n, K) and the log-weights (n, K)."""
        k = self.n_components
        theta = {p: torch.stack([params[f"{p}_{j}"] for j in range(k)], dim=-1)
                 for p in self.component.param_names}
        ref = next(iter(theta.values()))
        logits = [torch.zeros_like(ref[..., 0])] + [params[f"logits_{j}"] for j in range(1, k)]
        return theta, torch.log_softmax(torch.stack(logits, dim=-1), dim=-1)

    def _per_component(self, fn, theta, y):
        """``fn(params, y)`` of every component at ``y`` of shape (..., n): shape (..., n, K),
        evaluated on flat 1-D arrays (every family's convention)."""
        y = as_float64_tensor(y)[..., None]
        tensors = torch.broadcast_tensors(y, *theta.values())
        shape = tensors[0].shape
        flat = {p: t.reshape(-1) for p, t in zip(theta, tensors[1:], strict=True)}
        return fn(flat, tensors[0].reshape(-1)).reshape(shape)

    def distribution(self, params):
        theta, log_w = self._stacked(params)
        return D.MixtureSameFamily(D.Categorical(logits=log_w, validate_args=False),
                                   self.component.distribution(theta), validate_args=False)

    def log_prob(self, params, y):
        theta, log_w = self._stacked(params)
        lp = self._per_component(self.component.log_prob, theta, y)
        return torch.logsumexp(log_w + lp, dim=-1)

    def cdf(self, params, y):
        theta, log_w = self._stacked(params)
        return (log_w.exp() * self._per_component(self.component.cdf, theta, y)).sum(-1)

    def icdf(self, params, q):
        """Vectorised inversion of the cdf (relative accuracy about 1e-10)."""
        return invert_cdf(lambda v: self.cdf(params, v), as_float64_tensor(q), self.support)

    def _moments(self, params):
        theta, log_w = self._stacked(params)
        flat = {p: v.reshape(-1) for p, v in theta.items()}
        shape = log_w.shape
        mu = self.component.mean(flat).reshape(shape)
        var = self.component.variance(flat).reshape(shape)
        return log_w.exp(), mu, var

    def mean(self, params):
        w, mu, _ = self._moments(params)
        return (w * mu).sum(-1)

    def variance(self, params):
        w, mu, var = self._moments(params)
        mean = (w * mu).sum(-1, keepdim=True)
        return (w * (var + (mu - mean) ** 2)).sum(-1)

    def sample(self, params, m, seed):
        theta, log_w = self._stacked(params)
        n, k = log_w.shape
        flat = {p: v.reshape(-1) for p, v in theta.items()}
        draws = self.component.sample(flat, m, seed).reshape(m, n, k)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed((int(seed) * 7919 + 3) % (2**63 - 1))
            pick = torch.distributions.Categorical(logits=log_w).sample((m,))  # (m, n)
        return torch.gather(draws, 2, pick[..., None])[..., 0]

    def crps(self, params, y):
        """Closed form for a mixture of normals (Grimit et al. 2006); else raises (the
        numerical CRPS serves it)."""
        if not self.closed_form_crps:
            return super().crps(params, y)
        return _crps.normal_mixture(as_float64_tensor(y),
                                    *(params[p] for p in self.param_names))

    # ------------------------------------------------------------------ start values
    def param_floors(self, y):
        floors = self.component.param_floors(y)
        return {f"{p}_{j}": v for p, v in floors.items() for j in range(self.n_components)}

    def start_values(self, y, w):
        """The component's weighted MLE on ``K`` groups of ``y`` split at its weighted
        quantiles, sorted by the ordered parameter, equal weights."""
        k = self.n_components
        cuts = [weighted_quantile(y, w, j / k) for j in range(1, k)]
        group = np.searchsorted(np.asarray(cuts), y, side="right")
        fits = []
        for j in range(k):
            mask = group == j
            if mask.sum() < 2:
                mask = np.ones_like(mask)
            fits.append(self.component.init(y[mask], w[mask]))
        fits.sort(key=lambda f: f[self.order_param])
        out = {}
        for j, fit in enumerate(fits):
            if j > 0 and not fit[self.order_param] > out[f"{self.order_param}_{j - 1}"]:
                prev = out[f"{self.order_param}_{j - 1}"]
                fit = {**fit, self.order_param: prev + 1e-3 * (abs(prev) + 1.0)}
            out.update({f"{p}_{j}": v for p, v in fit.items()})
        out.update({f"logits_{j}": 0.0 for j in range(1, k)})
        return out

    def init(self, y, sample_weight=None) -> dict[str, float]:
        """Numerical weighted MLE of the mixture from :meth:`start_values`."""
        from .numerics.mle import numerical_mle

        y = self.validate_y(y)
        w = _normalise_weights(sample_weight, y.size)
        return numerical_mle(self, y, w, self.start_values)

    def __deepcopy__(self, memo):
        new = copy.copy(self)
        new.component = copy.deepcopy(self.component, memo)
        new.links = dict(self.links)
        return new


def _from_state(inner: Family, n_components: int) -> Mixture:
    return Mixture(inner, n_components=n_components)


register_wrapper("mixture", _from_state)
