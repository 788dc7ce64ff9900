"""Classification families: ``bernoulli`` (one logit) and ``categorical`` (one logit per class).

Both model a class index ``y`` on the logit scale with identity links, so that every boosted
ensemble predicts a raw logit, as in LightGBM's ``binary`` and ``multiclass`` objectives (the
categorical family grows one ensemble per class logit, softmax over the ``K`` logits; Friedman
2001, sec. 4.6).  Both have a closed-form weighted MLE (the log of the weighted class
frequencies) and a closed-form expected Fisher information, which for these exponential
families equals the Hessian of the negative log-likelihood at every ``y``:

* bernoulli: ``p (1 - p)`` on the logit scale;
* categorical: ``diag(p) - p p^T`` (``K x K``, singular along the all-ones direction because
  adding a constant to every logit leaves the softmax unchanged; the ``natural`` step's
  Levenberg-Marquardt damping makes it invertible).

Classes of the categorical family are unordered: it has no cdf, quantiles, mean or variance,
and those methods raise a ``ValueError`` that says so; class probabilities come from
:meth:`Categorical.class_probs` (``Predictive.probs``).  The Bernoulli family is ordered
(``0 < 1``), so its cdf, quantiles and moments are the usual ones.

``get("categorical")`` does not know the number of classes: build ``Categorical(n_classes=K)``
(``DistributionalClassifier`` does this from the training labels).  A family rebuilt from its
saved links (``logits_0`` ... ``logits_{K-1}``) recovers ``K``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributions as D
import torch.nn.functional as F

from ..links import Link
from .base import Family, as_float64_tensor
from .numerics import likelihood as _scores
from .registry import register
from .support import Support

__all__ = ["Bernoulli", "Categorical", "ClassIndices", "FREQ_FLOOR"]

#: Smallest class frequency used by the closed-form MLE: a class with zero weight starts at
#: ``log(FREQ_FLOOR)`` (about -27.6) instead of ``-inf``.
FREQ_FLOOR = 1e-12

_LOGIT_NAME = re.compile(r"^logits_(\d+)$")


@dataclass(frozen=True)
class ClassIndices(Support):
    """The support ``{0, 1, ..., K - 1}`` of a class index, printed as such."""

    def __str__(self) -> str:
        k = int(self.high) + 1
        listed = ", ".join(str(i) for i in range(k)) if k <= 4 else f"0, 1, ..., {k - 1}"
        return f"class indices {{{listed}}}"


def class_indices(n_classes: int) -> ClassIndices:
    """The support of a target with ``n_classes`` classes."""
    return ClassIndices(low=0.0, high=float(n_classes - 1), low_closed=True, high_closed=True,
                        integer=True)


def _weighted_frequencies(y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Weighted class frequencies (``w`` sums to one), floored at :data:`FREQ_FLOOR` and
    renormalised, shape (n_classes,)."""
    freq = np.bincount(y.astype(np.int64), weights=w, minlength=n_classes)
    freq = np.maximum(freq, FREQ_FLOOR)
    return freq / freq.sum()


@register
class Bernoulli(Family):
    """Bernoulli family for ``y`` in ``{0, 1}``, parametrised by ``logits = log(p / (1 - p))``.

    Closed forms: weighted MLE ``logit(sum_i w_i y_i / sum_i w_i)``; expected Fisher
    information ``p (1 - p)`` on the logit scale (McCullagh & Nelder 1989, sec. 4.4.1); cdf
    ``1 - p`` on ``[0, 1)``; quantile ``0`` for ``q <= 1 - p``, else ``1``.
    """

    name = "bernoulli"
    reference = "`bernoulli(p=sigmoid(logits))`"
    classification = True
    score_formula = staticmethod(_scores.bernoulli)
    torch_class = D.Bernoulli
    param_names = ("logits",)
    support = class_indices(2)
    discrete = True
    default_links = {"logits": "identity"}
    closed_form_mle = True
    #: ``step="auto"``: the Fisher (= Newton) step of LightGBM's ``binary`` objective.
    default_step = "fisher"

    def start_values(self, y, w):
        p = _weighted_frequencies(y, w, 2)[1]
        return {"logits": math.log(p) - math.log1p(-p)}

    def fisher_natural(self, params):
        """``p (1 - p)``, shape (n, 1)."""
        p = torch.sigmoid(params["logits"])
        return (p * (1.0 - p)).unsqueeze(-1)

    def class_probs(self, params) -> torch.Tensor:
        """Class probabilities ``[P(y = 0), P(y = 1)]``, shape (n, 2)."""
        logits = params["logits"]
        return torch.stack([torch.sigmoid(-logits), torch.sigmoid(logits)], dim=-1)

    def cdf(self, params, y):
        below_one, y = torch.broadcast_tensors(torch.sigmoid(-params["logits"]),
                                               as_float64_tensor(y))
        return torch.where(y < 0, torch.zeros_like(below_one),
                           torch.where(y < 1, below_one, torch.ones_like(below_one)))

    def log_cdf(self, params, y):
        at_zero, y = torch.broadcast_tensors(F.logsigmoid(-params["logits"]),
                                             as_float64_tensor(y))
        return torch.where(y < 0, torch.full_like(at_zero, -math.inf),
                           torch.where(y < 1, at_zero, torch.zeros_like(at_zero)))

    def log_sf(self, params, y):
        at_zero, y = torch.broadcast_tensors(F.logsigmoid(params["logits"]),
                                             as_float64_tensor(y))
        return torch.where(y < 0, torch.zeros_like(at_zero),
                           torch.where(y < 1, at_zero, torch.full_like(at_zero, -math.inf)))

    def icdf(self, params, q):
        q = as_float64_tensor(q)
        below_one = torch.sigmoid(-params["logits"])
        return (q > below_one).to(torch.float64)


def _n_classes_from_links(links: Mapping[str, object] | None) -> int | None:
    """``K`` when ``links`` names exactly ``logits_0 ... logits_{K-1}``, else None."""
    if not links:
        return None
    idx = []
    for name in links:
        m = _LOGIT_NAME.match(str(name))
        if m is None:
            return None
        idx.append(int(m.group(1)))
    return len(idx) if sorted(idx) == list(range(len(idx))) else None


@register
class Categorical(Family):
    """Categorical family for ``y`` in ``{0, ..., K - 1}`` with one raw logit per class.

    ``P(y = k) = softmax(logits)_k`` with parameters ``logits_0 ... logits_{K-1}`` (identity
    links), one boosted ensemble each, as LightGBM's ``multiclass`` objective.  Logits are
    identified only up to a common constant; the start values are the log class frequencies
    (the weighted MLE, normalised so that the probabilities sum to one).

    Closed-form expected Fisher information on the logit scale: ``diag(p) - p p^T``
    (McCullagh & Nelder 1989, sec. 6.4), the same matrix as the Hessian of the negative
    log-likelihood, whatever ``y``.

    Parameters
    ----------
    n_classes : int, optional
        ``K >= 2``.  When None it is read from ``links`` (keys ``logits_0 ... logits_{K-1}``,
        as saved models store them); without either the family is a placeholder whose
        methods raise a ``ValueError`` asking for ``n_classes``.
    links : dict of str to str or Link, optional
        Link overrides (identity by default for every logit).

    Examples
    --------
    >>> from distboost.families.categorical import Categorical
    >>> fam = Categorical(n_classes=3)
    >>> fam.param_names
    ('logits_0', 'logits_1', 'logits_2')
    """

    name = "categorical"
    reference = "`multinomial(1, softmax(logits))`"
    doc_notes = {
        "parameters": "logits_k (identity), k = 0, ..., K - 1",
        "support": "class indices {0, ..., K - 1}",
    }
    classification = True
    torch_class = D.Categorical
    discrete = True
    closed_form_mle = True
    #: ``step="auto"``: the diagonal Fisher (= Newton) step of LightGBM's ``multiclass``; the
    #: natural step learns far more slowly (held-out log-loss on digits after 100 rounds at
    #: 0.1: 0.36 instead of 0.10, benchmarks/classification.py's splits).
    default_step = "fisher"

    def __init__(self, n_classes: int | None = None,
                 links: Mapping[str, str | Link] | None = None):
        if n_classes is None:
            n_classes = _n_classes_from_links(links)
        if n_classes is not None:
            if isinstance(n_classes, bool) or not isinstance(n_classes, int | np.integer) \
                    or n_classes < 2:
                raise ValueError(
                    f"Family 'categorical' needs n_classes >= 2 (an integer); got {n_classes!r}."
                )
            n_classes = int(n_classes)
        self.n_classes = n_classes
        if n_classes is None:
            if links:
                raise ValueError(
                    "Family 'categorical' without n_classes accepts links only for all of "
                    f"logits_0 ... logits_{{K-1}}; got {sorted(links)}."
                )
            self.links = {}
            return
        self._param_names = tuple(f"logits_{k}" for k in range(n_classes))
        self.default_links = {p: "identity" for p in self._param_names}
        self._support = class_indices(n_classes)
        super().__init__(links)

    # ------------------------------------------------------------------ identity
    def _require_classes(self) -> int:
        if self.n_classes is None:
            raise ValueError(
                "Family 'categorical' does not know its number of classes: build it with "
                "distboost.families.categorical.Categorical(n_classes=K) (the "
                "DistributionalClassifier does this from the training labels)."
            )
        return self.n_classes

    @property
    def param_names(self) -> tuple[str, ...]:
        """``('logits_0', ..., 'logits_{K-1}')``."""
        self._require_classes()
        return self._param_names

    @property
    def support(self) -> Support:
        """Class indices ``{0, ..., K - 1}``."""
        self._require_classes()
        return self._support

    def __repr__(self) -> str:
        return f"Categorical(n_classes={self.n_classes})"

    def get_params(self) -> dict:
        """Constructor arguments, for serialisation (``K`` is also implied by the links)."""
        return {"n_classes": self.n_classes,
                "links": {p: lk.name for p, lk in self.links.items()}}

    def get_state(self) -> dict:
        """``{"name": "categorical", "n_classes": K, "links": {...}}``."""
        return {"name": self.name, "n_classes": self.n_classes,
                "links": {p: lk.name for p, lk in self.links.items()}}

    # ------------------------------------------------------------------ likelihood
    def logits(self, params) -> torch.Tensor:
        """The logits stacked as one tensor of shape (n, K)."""
        return torch.stack([params[p] for p in self.param_names], dim=-1)

    def distribution(self, params):
        return D.Categorical(logits=self.logits(params), validate_args=False)

    def log_prob(self, params, y):
        # log_softmax gathered at y; y of shape (..., n) broadcasts against the n rows.
        logp = torch.log_softmax(self.logits(params), dim=-1)
        y = as_float64_tensor(y)
        idx = y.long().unsqueeze(-1)
        logp, idx = torch.broadcast_tensors(logp, idx)
        return logp.gather(-1, idx[..., :1]).squeeze(-1)

    def class_probs(self, params) -> torch.Tensor:
        """Class probabilities ``softmax(logits)``, shape (n, K)."""
        return torch.softmax(self.logits(params), dim=-1)

    def fisher_natural(self, params):
        """``diag(p) - p p^T``, shape (n, K, K)."""
        p = self.class_probs(params)
        return torch.diag_embed(p) - p.unsqueeze(-1) * p.unsqueeze(-2)

    # ------------------------------------------------------------------ validation, MLE
    def validate_y(self, y) -> np.ndarray:
        self._require_classes()
        return super().validate_y(y)

    def start_values(self, y, w):
        freq = _weighted_frequencies(y, w, self._require_classes())
        return {p: float(v) for p, v in zip(self.param_names, np.log(freq), strict=True)}

    # ------------------------------------------------------------------ ordered-only methods
    def _unordered(self, what: str):
        raise ValueError(
            f"Family 'categorical' has unordered classes, so its {what} is undefined; use the "
            "class probabilities (Predictive.probs, DistributionalClassifier.predict_proba) "
            "or log_prob instead."
        )

    def cdf(self, params, y):
        self._unordered("cdf")

    def log_cdf(self, params, y):
        self._unordered("cdf")

    def log_sf(self, params, y):
        self._unordered("survival function")

    def icdf(self, params, q):
        self._unordered("quantile function")

    def mean(self, params):
        self._unordered("mean")

    def variance(self, params):
        self._unordered("variance")
