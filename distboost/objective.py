"""A family made into the boosting engine's objective: start values, floors, loss and Fisher.

:class:`FamilyObjective` is the one place where a :class:`~distboost.families.Family` meets
the engine (:func:`distboost.boosting.fit_boosting`), in the manner of scikit-learn's loss
objects (``sklearn/_loss/loss.py``), which own their link, target domain and baseline:

* the start values: the family's weighted marginal MLE, raised to the family's floors with a
  warning that says why the data put it there (a constant target, a point mass);
* the raw floor of each output (``-inf`` but for a ``scale``), applied in training and
  prediction;
* the per-row loss ``loss(raw[n, K], data) -> Tensor[n]``: the negative log-likelihood (or
  the CRPS, for families with a closed form) at ``max(raw + offset, floor)``, where the
  optional ``data["offset"]`` holds a linear start;
* the expected Fisher information for the ``fisher`` and ``natural`` step rules;
* the pure per-row function ``objective(y, raw) -> (grad, hess)`` that a distributed worker
  runs on its own rows (:meth:`FamilyObjective.grad_hess`): nothing in it depends on which
  rows sit together.

Subclasses change how the model's raw outputs become the family's raw scores
(:meth:`FamilyObjective.family_raw`): the varying-coefficient model's
``loc = sum_j c_j z_j`` is one.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np
import torch

from .boosting.derivatives import step_derivatives
from .families.numerics.fisher import make_fisher_fn
from .families.numerics.special import carry_terms

__all__ = ["FamilyObjective", "SCORING_RULES", "check_step", "dispersion_columns",
           "floored_start", "raw_floor", "slope_mask"]

#: Scoring rules a family can be trained on: the log score (negative log-likelihood) and the
#: continuous ranked probability score (closed-form families; NGBoost's ``CRPScore``).
SCORING_RULES = ("nll", "crps")


def check_step(scoring_rule: str, step: str) -> None:
    """Refuse step rules the scoring rule has no metric for.

    Raises
    ------
    ValueError
        ``step`` "fisher" or "natural" with ``scoring_rule="crps"``.
    """
    if scoring_rule == "crps" and step in ("fisher", "natural"):
        raise ValueError(
            f"step={step!r} needs the Riemannian metric of the scoring rule; for "
            "scoring_rule='crps' only the Fisher information of the log score is "
            "available: use step='newton' (the default for the CRPS) or 'gradient'."
        )


class FamilyObjective:
    """The engine's objective for ``family`` on the training target ``y``.

    Parameters
    ----------
    family : Family
    y : ndarray of shape (n,) or (n, 2)
        The validated training target (bounds for a censored family).
    sample_weight : ndarray of shape (n,), optional
    scoring_rule : {"nll", "crps"}, default="nll"
        The per-row loss: the negative log-likelihood, or the CRPS (Gneiting & Raftery 2007,
        eq. 20) in its closed form (``family.closed_form_crps``).
    warn : bool, default=True
        Warn when a start value is raised to its floor.
    what : str, optional
        Why a start value may be so small (start of that warning); default: what ``y``
        shows (a constant target or a point mass).
    init_params : dict of str to float, optional
        Natural-scale start values to use instead of the marginal MLE (still floored).

    Attributes
    ----------
    family : Family
    init_params : dict of str to float
        Floored natural-scale start values.
    init_raw : ndarray of shape (K,)
        Their raw scores.
    raw_floor : ndarray of shape (K,)
        Lower bound of each raw score (see :func:`raw_floor`).
    n_outputs : int
        ``K``, the ensembles the engine grows.
    """

    def __init__(self, family, y, sample_weight=None, *, scoring_rule: str = "nll",
                 warn: bool = True, what: str | None = None,
                 init_params: Mapping[str, float] | None = None):
        if scoring_rule not in SCORING_RULES:
            raise ValueError(
                f"scoring_rule must be one of {list(SCORING_RULES)}, got {scoring_rule!r}."
            )
        if scoring_rule == "crps" and not family.closed_form_crps:
            raise ValueError(
                f"scoring_rule='crps' needs a closed-form CRPS, which family {family.name!r} "
                "does not have; use scoring_rule='nll' (the log score)."
            )
        self.family = family
        self.scoring_rule = scoring_rule
        start = family.init(y, sample_weight) if init_params is None else dict(init_params)
        with warnings.catch_warnings():
            if not warn:
                warnings.simplefilter("ignore", UserWarning)
            self.init_params, init_raw, self.raw_floor = floored_start(family, start, y, what)
        self.init_raw = self.model_start(init_raw)
        self._floor_t = torch.as_tensor(self.raw_floor)
        self._probe = (torch.as_tensor(init_raw[None, :]),
                       carry_terms(torch.tensor(np.asarray(y, dtype=np.float64)[:1])))

    # ------------------------------------------------------------------ hooks
    @property
    def n_outputs(self) -> int:
        """``K``: the raw outputs (ensembles) the engine grows."""
        return self.init_raw.size

    def model_start(self, family_init_raw: np.ndarray) -> np.ndarray:
        """The model's raw start vector from the family's (the same for a plain family)."""
        return family_init_raw

    def family_raw(self, raw: torch.Tensor, data: Mapping) -> torch.Tensor:
        """The family's raw scores, floored, from the model's raw scores (shape (n, K)).

        ``data["offset"]`` (a linear start, shape (n, K)) is added when present.
        """
        if "offset" in data:
            raw = raw + data["offset"]
        # clamp, not maximum: a score exactly at its floor (a floored start value) gets the
        # whole one-sided gradient from above (maximum would halve it), as the closed-form
        # derivatives (Family.raw_derivatives) give it.
        floor = self._floor_t
        if floor.device != raw.device:  # scores on a GPU (device="cuda")
            floor = floor.to(raw.device)
        return torch.clamp(raw, min=floor)

    def data(self, X, y) -> dict:
        """Row-aligned tensors the loss reads for the rows ``(X, y)``; the target carries the
        terms the family derives from it (:func:`~distboost.families.numerics.special.
        carry_terms`)."""
        # a copy: y may be read-only
        return {"y": carry_terms(torch.tensor(np.asarray(y, dtype=np.float64)))}

    def dispersion_column(self) -> int | list[int] | None:
        """Column(s) of the model's raw scores that dispersion calibration shifts (None: the
        family has no dispersion parameter); see :func:`dispersion_columns`."""
        return dispersion_columns(self.family)

    # ------------------------------------------------------------------ loss and Fisher
    def loss(self, raw: torch.Tensor, data: Mapping) -> torch.Tensor:
        """Per-row loss at the model's raw scores ``raw`` (n, K), differentiable: Tensor[n]."""
        fam_raw = self.family_raw(raw, data)
        if self.scoring_rule == "crps":
            return self.family.crps(self.family.params_from_raw(fam_raw), data["y"])
        return self.family.nll(fam_raw, data["y"])

    def fisher(self, seed: int = 0):
        """``fisher(raw, data) -> Tensor[n, K, K]`` (or ``[n, K]``) at the model's raw scores:
        the family's expected information (closed form, else a per-row quadrature) of the
        distribution the loss uses, at ``max(raw + offset, floor)``."""
        family_fisher = make_fisher_fn(self.family, seed=seed)

        def fisher(raw, data):
            return family_fisher(self.family_raw(raw, data), data)

        return fisher

    def check_step(self, step: str) -> None:
        """Refuse step rules the scoring rule has no metric for (:func:`check_step`)."""
        check_step(self.scoring_rule, step)

    def engine_callables(self, step: str, seed: int) -> dict:
        """Keyword arguments of :func:`~distboost.boosting.fit_boosting` for ``step``:
        ``loss`` and, for the Fisher-based rules, ``fisher``."""
        self.check_step(step)
        out = {"loss": self.loss}
        if step in ("fisher", "natural"):
            out["fisher"] = self.fisher(seed)
        derivatives = self.derivatives()
        if derivatives is not None and step != "newton":
            out["derivatives"] = derivatives
        return out

    def derivatives(self):
        """The family's closed-form ``(loss, grad, fisher)`` at the model's raw scores
        (``Family.raw_derivatives``: no autograd graph, a few passes over the rows), or None
        when the family has none for its links, or the loss is not the plain log score.

        The offset and the floor are applied as in :meth:`loss`: the family evaluates at
        ``max(raw + offset, floor)``, with a zero gradient below the floor (it is flat there).
        """
        floor = self._floor_t
        if (self.scoring_rule != "nll"
                or type(self).family_raw is not FamilyObjective.family_raw
                or self.family.raw_derivatives(*self._probe, floor) is None):
            return None
        family = self.family

        def derivatives(raw, data):
            if "offset" in data:
                raw = raw + data["offset"]
            return family.raw_derivatives(raw, data["y"], floor)

        return derivatives

    def dispersion_profile(self):
        """``profile(raw, data)``: the family's closed-form loss in a shift of the dispersion
        column (``Family.dispersion_profile``) at the model's raw scores, offset and floor
        applied as in :meth:`loss`; None when the family has none for its links, the loss
        is not the plain log score, or the column is not the family's own."""
        family, floor = self.family, self._floor_t
        column = self.dispersion_column()
        if (self.scoring_rule != "nll" or not isinstance(column, int)
                or type(self).family_raw is not FamilyObjective.family_raw
                or type(self).loss is not FamilyObjective.loss
                or column != family.param_names.index(family.dispersion_param)
                or family.dispersion_profile(torch.zeros_like(self._probe[0]),
                                             self._probe[1]) is None):
            return None

        def profile(raw, data):
            if "offset" in data:
                raw = raw + data["offset"]
            return family.dispersion_profile(raw, data["y"], floor)

        return profile

    def grad_hess(self, y, raw: np.ndarray, step: str, *, sample_weight=None,
                  curvature_scale=None, seed: int = 0, extra: Mapping | None = None):
        """The pure per-row objective: ``(grad, hess)`` of the step rule at ``raw``.

        Row ``i`` of the result depends only on ``y[i]``, ``raw[i]``, its weight and the
        fixed ``curvature_scale`` (computed once before training, or by an explicit
        reduction), never on the other rows, so a distributed worker can run it on its own
        partition (``xgboost.dask.train(obj=...)``).

        Parameters
        ----------
        y : ndarray of shape (n,) or (n, 2)
        raw : ndarray of shape (n, K)
        step : {"gradient", "newton", "fisher", "natural"}
        sample_weight : ndarray of shape (n,), optional
            Row weights; in-process training divides them by their mean over all training
            rows once, so pass them so divided (a distributed driver: by one reduction) to
            get the engine's numbers.
        curvature_scale : ndarray of shape (K,), optional
            The fixed per-column rescaling of the curvature (see
            :func:`~distboost.boosting.derivatives.step_derivatives`).
        seed : int
            Seed of a Monte Carlo Fisher information.
        extra : dict of str to Tensor, optional
            Further row-aligned tensors of the loss (e.g. ``offset``).

        Returns
        -------
        grad, hess : ndarray of shape (n, K)
        """
        data = self.data(None, y)
        if extra:
            data.update(extra)
        callables = self.engine_callables(step, seed)
        _, grad, hess = step_derivatives(
            callables["loss"], raw, data, step, fisher=callables.get("fisher"),
            sample_weight=sample_weight, curvature_scale=curvature_scale,
            derivatives=callables.get("derivatives"),
        )
        return grad, hess


def raw_floor(family, y) -> np.ndarray:
    """Lower bound of each raw score, ndarray of shape (K,): the link's inverse of
    ``family.param_floors(y)`` (``-inf`` for parameters without a floor)."""
    floors = family.param_floors(y)
    out = np.full(family.n_params, -np.inf)
    for k, p in enumerate(family.param_names):
        if p in floors:
            out[k] = float(family.links[p].inverse(np.asarray(floors[p])))
    return out


def dispersion_columns(family) -> int | list[int] | None:
    """The raw column of ``family.dispersion_param``, the list of columns of
    ``family.dispersion_params`` when there are several (shifted together), or None."""
    names = family.dispersion_params
    if not names:
        return None
    columns = [family.param_names.index(p) for p in names]
    return columns[0] if len(columns) == 1 else columns


def slope_mask(family) -> np.ndarray:
    """Raw outputs a linear start gives slopes: all but the dispersion parameter (as the AFT
    models and GAMLSS's usual start; the trees add a varying dispersion)."""
    mask = np.ones(family.n_params)
    columns = dispersion_columns(family)
    if columns is not None and family.n_params > 1:
        mask[columns] = 0.0
    return mask


def why_so_small(y, family=None) -> str:
    """Why a marginal MLE lands below a floor: a constant target, or a point mass, with advice
    that fits ``family`` (a zero-adjusted family's own atom is not the cause; a point mass
    at 0 under a density suggests a zero-adjusted family, elsewhere a count family when ``y``
    holds integers)."""
    v = np.asarray(y, dtype=np.float64).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0 or np.ptp(v) <= 1e-12 * np.max(np.abs(v)):
        return "The target is constant or nearly so"
    atom = getattr(family, "point_mass", None)
    rest = v[v != atom] if atom is not None and (v != atom).any() else v
    values, counts = np.unique(rest, return_counts=True)
    j = int(np.argmax(counts))
    what = f"y has a point mass: {counts[j]} of {v.size} values equal {values[j]:.6g}"
    if family is not None and family.discrete:
        return what
    if values[j] == 0 and atom is None:
        advice = "consider a zero-adjusted family such as zero_adjusted_gamma, or a count family"
    elif np.all(v == np.floor(v)):
        advice = "y holds only integers: consider a count family"
    else:
        return f"{what}, which a density cannot hold"
    return f"{what}, which a density cannot hold ({advice})"


def floor_reason(family, param: str, y) -> str:
    """Why the marginal ``param`` of ``family`` lands below its floor, in the family's terms:
    the ``gate`` of a zero-inflated family when ``y`` has no more zeros than its count part
    predicts (no inflation to fit), else :func:`why_so_small`."""
    base = getattr(family, "base", None)
    if param == "gate" and getattr(family, "inflated", False) and base is not None:
        v = np.asarray(y, dtype=np.float64).ravel()
        zeros = int((v == 0).sum())
        return (f"y has {zeros} zeros in {v.size} rows, no more than family {base.name!r} "
                "predicts by itself, so there is no zero inflation to fit (family "
                f"{base.name!r} fits such data without the gate)")
    return why_so_small(y, family)


def floored_start(family, init_params, y, what: str | None = None):
    """Raise start values below the family's floors (with a warning) and map them to raw.

    Parameters
    ----------
    family : Family
    init_params : dict of str to float
        Natural-scale start values (e.g. the weighted marginal MLE).
    y : ndarray of shape (n,)
        The target the floors are relative to (``Family.param_floors``).
    what : str, optional
        Start of the warning, saying why a parameter is so small (default: what ``y``
        shows for this family, see :func:`floor_reason`).

    Returns
    -------
    init_params : dict of str to float
    init_raw : ndarray of shape (K,)
    raw_floor : ndarray of shape (K,)
    """
    init_params = dict(init_params)
    floors = family.param_floors(y)
    floored = [p for p, v in floors.items() if init_params[p] < v]
    for p in floored:
        marginal, init_params[p] = init_params[p], floors[p]
        if p in getattr(family, "chosen_floors", ()):
            continue  # a floor the user chose (StudentT(min_df=...)): no surprise to report
        warnings.warn(
            f"{what or floor_reason(family, p, y)}: the marginal {p!r} of family "
            f"{family.name!r} is {marginal:.3g}, floored at {floors[p]:.3g} "
            "(see Family.param_floors) so that the likelihood stays finite.",
            UserWarning, stacklevel=4,
        )
    init_raw = np.asarray(family.raw_from_params(init_params), dtype=np.float64)
    return init_params, init_raw, raw_floor(family, y)
