"""``ordinal_logit``: the cumulative-logit (proportional odds) model for ordered labels.

For ``K`` ordered classes ``0 < 1 < ... < K - 1``,
``P(y <= k) = sigmoid(cutpoints_k - loc)`` for ``k = 0, ..., K - 2`` (McCullagh 1980;
Pyro's ``OrderedLogistic(predictor=loc, cutpoints)``; statsmodels' ``OrderedModel`` with
``distr="logit"`` and the linear predictor as ``loc``).  Parameters ``cutpoints_0, ...,
cutpoints_{K-2}, loc``: ``cutpoints_0`` is boosted as is and ``cutpoints_k`` (``k >= 1``) as
the log of its increment, ``cutpoints_k = cutpoints_{k-1} + exp(raw_k)``, so the cutpoints
increase on every row (statsmodels' threshold parametrisation).  ``cutpoints`` and ``loc``
enter only through their differences: the likelihood is flat along an equal shift of both,
and the start puts ``loc`` at 0 (the marginal MLE is then closed form: ``cutpoints_k =
logit`` of the weighted cumulative frequencies).

Targets are the labels ``0 .. K - 1`` or, through :meth:`OrdinalLogit.encode_target`, any
ordered labels: an ordered pandas ``Categorical`` (its codes; its categories are kept in the
family's ``categories`` and saved with it) or values listed in ``categories=``.
``get("ordinal_logit")`` is a placeholder that learns ``K`` (and the categories) from the
first target it encodes (``DistributionalRegressor(family="ordinal_logit").fit(X, y)``).

Distribution functions: class probabilities (:meth:`class_probs`, ``Predictive.probs``),
cdf, quantiles (the smallest class with ``cdf >= q``), mean and variance of the class index.
Expected Fisher information by exact summation over the ``K`` classes (autograd scores);
CRPS by the exact sum over classes (the ranked probability score).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
import torch
import torch.distributions as D
import torch.nn.functional as F

from ..links import RAW_BOUND, Link, get_link
from .base import Family, as_float64_tensor
from .categorical import FREQ_FLOOR, class_indices
from .registry import register

__all__ = ["MAX_CLASSES_FROM_LABELS", "OrdinalLogit"]

#: The most classes the placeholder reads from integer labels (``K = max(y) + 1``, one
#: boosted ensemble per cutpoint): larger labels (years, identifiers, scores offset by 1e9)
#: are not class indices, and are refused with the way to name the levels instead.
MAX_CLASSES_FROM_LABELS = 1000


def _log1mexp(x: torch.Tensor) -> torch.Tensor:
    """``log(1 - exp(x))`` for ``x <= 0`` (Maechler 2012)."""
    return torch.where(x > -math.log(2.0), torch.log(-torch.expm1(x)),
                       torch.log1p(-torch.exp(x)))


def _warn_numeric_labels(categories) -> None:
    """Numbers as labels that are not their own class indices (``[3, 4, ..., 8]``): the law,
    its predictions and a Predictive's scores are on the indices, which a user who fitted
    numbers would read as numbers; say so where the labels are encoded."""
    numeric = all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in categories)
    if numeric and list(categories) != list(range(len(categories))):
        warnings.warn(
            f"Family 'ordinal_logit' reads the labels {list(categories)} as the class "
            f"indices 0 .. {len(categories) - 1}: predict, quantiles and means are class "
            "indices, and a Predictive scores (cdf, log_prob, crps, pit) class indices; "
            "pass y as family.encode_target(y) to those, or fit family='ordinal_logit' "
            "(K read from the integer labels themselves).", UserWarning, stacklevel=3)


@register
class OrdinalLogit(Family):
    """Cumulative-logit family for ``K`` ordered classes (module docstring).

    Parameters
    ----------
    n_classes : int, optional
        ``K >= 2``; taken from ``categories`` when given; None for the placeholder.
    categories : sequence, optional
        The ordered labels (JSON-safe scalars), lowest first: targets are mapped to their
        positions by :meth:`encode_target`.
    links : dict of str to str or Link, optional
        Overrides for ``loc`` only (the cutpoints are ordered by construction).
    """

    name = "ordinal_logit"
    reference = 'statsmodels `OrderedModel(distr="logit")`'
    doc_notes = {
        "parameters": ("cutpoints_0 (identity), cutpoints_k (k >= 1: `cutpoints_{k-1} + "
                       "exp(raw)`), loc (identity)"),
        "support": "0, 1, ..., K - 1",
        "crps": "exact sum (ranked probability score)",
        "fisher": "exact sum over the classes",
    }
    torch_class = D.Categorical
    discrete = True
    closed_form_mle = True
    #: ``step="auto"``: the diagonal Fisher step, as for ``categorical``.  The natural step
    #: inverts an information matrix that is singular along the equal shift of
    #: ``cutpoints_0`` and ``loc``; on wine-quality-red its held-out log-likelihood was
    #: 0.1 to 0.17 nats per row worse (splits 0-2: -0.97, -1.01, -1.16 against -0.80,
    #: -0.87, -1.06 for "fisher").
    default_step = "fisher"

    def __init__(self, n_classes: int | None = None, categories=None,
                 links: Mapping[str, str | Link] | None = None):
        if categories is not None:
            categories = [c.item() if hasattr(c, "item") else c for c in categories]
            if len(set(categories)) != len(categories):
                raise ValueError("Family 'ordinal_logit': categories must be distinct; got "
                                 f"{categories}.")
            if n_classes is not None and n_classes != len(categories):
                raise ValueError(f"Family 'ordinal_logit': n_classes={n_classes} but "
                                 f"{len(categories)} categories.")
            n_classes = len(categories)
        self.categories = categories
        self._links_given = dict(links or {})
        bad = sorted(set(self._links_given) - {"loc"})
        if bad:
            raise ValueError(f"Family 'ordinal_logit' takes link overrides for 'loc' only "
                             f"(the cutpoints are ordered by construction); got {bad}.")
        self._set_classes(n_classes)

    def _set_classes(self, n_classes) -> None:
        if n_classes is not None and (isinstance(n_classes, bool) or not isinstance(
                n_classes, int | np.integer) or n_classes < 2):
            raise ValueError(
                f"Family 'ordinal_logit' needs n_classes >= 2 (an integer); got {n_classes!r}.")
        self.n_classes = None if n_classes is None else int(n_classes)
        if self.n_classes is None:
            self.links = {}
            return
        k = self.n_classes
        self._param_names = tuple(f"cutpoints_{j}" for j in range(k - 1)) + ("loc",)
        self.links = {p: get_link("identity") for p in self._param_names}
        for p, lk in self._links_given.items():
            self.links[p] = get_link(lk)
        self._support = class_indices(k)

    # ------------------------------------------------------------------ identity
    def _require_classes(self) -> int:
        if self.n_classes is None:
            raise ValueError(
                "Family 'ordinal_logit' does not know its number of classes: build it with "
                "distboost.families.ordinal.OrdinalLogit(n_classes=K) or "
                "OrdinalLogit(categories=[...]), or fit an estimator, which reads K from y."
            )
        return self.n_classes

    @property
    def param_names(self) -> tuple[str, ...]:
        self._require_classes()
        return self._param_names

    @property
    def support(self):
        self._require_classes()
        return self._support

    def __repr__(self) -> str:
        return f"OrdinalLogit(n_classes={self.n_classes})"

    def get_params(self) -> dict:
        return {"n_classes": self.n_classes, "categories": self.categories,
                "links": {p: lk.name for p, lk in self.links.items()}}

    def get_state(self) -> dict:
        state = {"name": self.name, "n_classes": self.n_classes,
                 "links": {"loc": self.links["loc"].name} if self.links else {}}
        if self.categories is not None:
            state["categories"] = list(self.categories)
        return state

    def with_links(self, links):
        merged = {**self._links_given, **dict(links)}
        return OrdinalLogit(self.n_classes, self.categories, links=merged)

    # ------------------------------------------------------------------ targets
    def encode_target(self, y):
        """Ordered labels -> class indices ``0 .. K - 1`` (float64), before validation.

        An ordered pandas ``Categorical`` (or a Series of one) gives its codes and, for the
        placeholder, its categories; values listed in ``categories`` their positions; the
        placeholder reads ``K = max(y) + 1`` from integer labels.

        Raises
        ------
        ValueError
            For an unordered Categorical, missing values, or labels not in ``categories``
            (naming how many rows).
        """
        cat = y.array if isinstance(y, pd.Series) else y
        if isinstance(cat, pd.Categorical):
            if not cat.ordered:
                raise ValueError("Family 'ordinal_logit' needs an ordered Categorical target "
                                 "(pd.Categorical(..., ordered=True)); this one is unordered.")
            codes = np.asarray(cat.codes)
            if (codes < 0).any():
                raise ValueError(f"Target y has {int((codes < 0).sum())} of {codes.size} rows "
                                 "with a missing category; family 'ordinal_logit' needs a "
                                 "label on every row.")
            labels = [c.item() if hasattr(c, "item") else c for c in cat.categories]
            if self.categories is None and self.n_classes is None:
                self.categories = labels
                self._set_classes(len(labels))
            elif self.categories is not None and labels != list(self.categories):
                raise ValueError(f"Target y's categories {labels} differ from the family's "
                                 f"{list(self.categories)}.")
            _warn_numeric_labels(labels)
            return codes.astype(np.float64)
        if self.categories is not None:
            values = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
            index = {c: i for i, c in enumerate(self.categories)}
            out = np.array([index.get(v.item() if hasattr(v, "item") else v, -1)
                            for v in values.ravel()], dtype=np.float64)
            if (out < 0).any():
                raise ValueError(f"Target y has {int((out < 0).sum())} of {out.size} rows whose "
                                 f"label is not among the categories {list(self.categories)} "
                                 "of family 'ordinal_logit'.")
            _warn_numeric_labels(self.categories)
            return out.reshape(values.shape)
        if self.n_classes is None:
            values = np.asarray(y.to_numpy() if isinstance(y, pd.Series) else y)
            try:
                v = values.astype(np.float64)
            except (TypeError, ValueError) as err:
                raise ValueError("Family 'ordinal_logit' needs integer labels 0 .. K - 1, an "
                                 "ordered Categorical, or categories=[...]; got dtype "
                                 f"{values.dtype}.") from err
            ok = np.isfinite(v) & (v >= 0) & (np.floor(v) == v)
            if v.size and ok.all():
                if v.max() + 1 > MAX_CLASSES_FROM_LABELS:
                    raise ValueError(
                        f"Family 'ordinal_logit' reads integer labels as the class indices 0 "
                        f".. max(y): the largest label, {v.max():.0f}, would make "
                        f"{v.max() + 1:.0f} classes (at most {MAX_CLASSES_FROM_LABELS}). Pass "
                        "the ordered levels as OrdinalLogit(categories=[...]) or y as an "
                        "ordered pd.Categorical.")
                self._set_classes(max(int(v.max()) + 1, 2))
            return v
        return y

    def validate_y(self, y) -> np.ndarray:
        self._require_classes()
        return super().validate_y(y)

    # ------------------------------------------------------------------ raw <-> params
    def params_from_raw(self, raw):
        k = self._require_classes()
        out, prev = {}, None
        for j in range(k - 1):
            col = raw[:, j]
            prev = col if j == 0 else prev + torch.exp(col.clamp(-RAW_BOUND, RAW_BOUND))
            out[f"cutpoints_{j}"] = prev
        out["loc"] = self.links["loc"].forward(raw[:, k - 1])
        return out

    def raw_from_params(self, params):
        k = self._require_classes()
        cols = [np.asarray(params["cutpoints_0"], dtype=np.float64)]
        for j in range(1, k - 1):
            step = (np.asarray(params[f"cutpoints_{j}"], dtype=np.float64)
                    - np.asarray(params[f"cutpoints_{j - 1}"], dtype=np.float64))
            with np.errstate(divide="ignore", invalid="ignore"):
                cols.append(np.clip(np.log(step), -RAW_BOUND, RAW_BOUND))
        cols.append(np.asarray(self.links["loc"].inverse(np.asarray(params["loc"],
                                                                    dtype=np.float64))))
        return np.stack(np.broadcast_arrays(*cols), axis=-1).astype(np.float64)

    # ------------------------------------------------------------------ likelihood
    def _eta(self, params) -> torch.Tensor:
        """``cutpoints_k - loc``, shape (n, K - 1)."""
        k = self._require_classes()
        cut = torch.stack([params[f"cutpoints_{j}"] for j in range(k - 1)], dim=-1)
        return cut - params["loc"][..., None]

    def log_class_probs(self, params) -> torch.Tensor:
        """``log P(y = k)``, shape (n, K), each a difference of two sigmoids in whichever
        tail keeps its digits."""
        eta = self._eta(params)
        lo = F.pad(eta, (1, 0), value=-math.inf)  # eta_{k-1}, -inf for class 0
        hi = F.pad(eta, (0, 1), value=math.inf)  # eta_k, +inf for the top class
        upper = lo > 0  # both sigmoids near 1: use the survival form
        lo_s = torch.where(torch.isfinite(lo), lo, torch.full_like(lo, -800.0))
        hi_s = torch.where(torch.isfinite(hi), hi, torch.full_like(hi, 800.0))
        a = F.logsigmoid(hi_s)
        b = F.logsigmoid(lo_s)
        low_form = a + _log1mexp(torch.minimum(b - a, torch.full_like(a, -1e-300)))
        sa, sb = F.logsigmoid(-lo_s), F.logsigmoid(-hi_s)
        up_form = sa + _log1mexp(torch.minimum(sb - sa, torch.full_like(sa, -1e-300)))
        return torch.where(upper, up_form, low_form)

    def class_probs(self, params) -> torch.Tensor:
        """Class probabilities, shape (n, K) (``Predictive.probs``)."""
        return torch.exp(self.log_class_probs(params))

    def distribution(self, params):
        return D.Categorical(logits=self.log_class_probs(params), validate_args=False)

    def log_prob(self, params, y):
        logp = self.log_class_probs(params)
        y = as_float64_tensor(y)
        idx = y.long().clamp(0, logp.shape[-1] - 1).unsqueeze(-1)
        logp, idx = torch.broadcast_tensors(logp, idx)
        return logp.gather(-1, idx[..., :1]).squeeze(-1)

    def cdf(self, params, y):
        eta = self._eta(params)
        cum = torch.cat([torch.sigmoid(eta), torch.ones_like(eta[..., :1])], dim=-1)
        k = torch.floor(as_float64_tensor(y))
        idx = k.long().clamp(0, cum.shape[-1] - 1).unsqueeze(-1)
        cum, idx = torch.broadcast_tensors(cum, idx)
        out = cum.gather(-1, idx[..., :1]).squeeze(-1)
        return torch.where(k < 0, torch.zeros_like(out), out)

    def mean(self, params):
        p = self.class_probs(params)
        return (p * torch.arange(p.shape[-1], dtype=torch.float64, device=p.device)).sum(-1)

    def variance(self, params):
        p = self.class_probs(params)
        k = torch.arange(p.shape[-1], dtype=torch.float64, device=p.device)
        m = (p * k).sum(-1, keepdim=True)
        return (p * (k - m) ** 2).sum(-1)

    def sample(self, params, m, seed):
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            return self.distribution(params).sample((m,)).to(torch.float64)

    def fisher_information(self, raw):
        """``sum_k p_k s_k s_k^T`` over the ``K`` classes, ``s_k = d log p_k / d raw`` by
        autograd: the exact expected information on the raw scale, shape (n, P, P)."""
        k = self._require_classes()
        raw = raw.detach().to(torch.float64)
        with torch.enable_grad():
            leaf = raw.clone().requires_grad_(True)
            logp = self.log_class_probs(self.params_from_raw(leaf))  # (n, K)
            scores = torch.stack([torch.autograd.grad(logp[:, j].sum(), leaf,
                                                      retain_graph=j < k - 1)[0]
                                  for j in range(k)], dim=1)  # (n, K, P)
        p = logp.detach().exp()
        return torch.einsum("nk,nki,nkj->nij", p, scores, scores)

    # ------------------------------------------------------------------ start values
    def start_values(self, y, w):
        """Closed form with ``loc = 0``: ``cutpoints_k = logit`` of the weighted cumulative
        class frequencies (floored at ``1e-12`` per class)."""
        k = self._require_classes()
        freq = np.bincount(y.astype(np.int64), weights=w, minlength=k)
        freq = np.maximum(freq, FREQ_FLOOR)
        cum = np.cumsum(freq / freq.sum())[:-1]
        cut = np.log(cum) - np.log1p(-cum)
        return {**{f"cutpoints_{j}": float(c) for j, c in enumerate(cut)}, "loc": 0.0}
