"""Aleatoric and epistemic uncertainty of a fitted model: virtual ensembles of its trajectory.

The predictive variance of a distributional model is the *aleatoric* part: the noise the model
believes is in ``y`` at ``x``.  What it does not know, because few training rows looked like
``x``, is *epistemic*: there different reasonable models disagree about the mean.  A boosted
ensemble carries such models in its own trajectory: the models truncated at ``M`` evenly spaced
rounds of the second half of the kept rounds form a *virtual ensemble* (Malinin, Prokhorenkova &
Ustimenko 2021, sec. 4; CatBoost's ``virtual_ensembles_count``), whose members agree where the
later trees change little and disagree where they keep reshaping the prediction.  The
epistemic variance is the variance of the members' means, the aleatoric one the mean of their
variances, and their sum the law of total variance of the members' equal mixture.

A fit that chose its rounds by cross-validation (fewer than ``CV_MAX_ROWS`` rows under the
default ``early_stopping="auto"``) has trained ``K`` fold models on different rows anyway:
kept as :class:`FoldMember` objects they are a real ensemble at no extra fit cost, whose members
disagree where the data do not pin the mean down (a bootstrap-like ensemble, Lakshminarayanan
et al. 2017), which a short trajectory on small data does not show.

Neither kind disagrees much inside a thinly populated hole: a tree's thresholds lie on the
bin boundaries of the training values, and every member picks the same best ones among the
few rows there.  ``epistemic_members=M`` (a fit option of the regressor) trains ``M``
further models on the same rows with extremely randomised trees (Geurts, Ernst & Wehenkel
2006; LightGBM's ``extra_trees``: one random boundary per feature and split), each with its
own seed: they disagree where few rows pin a split down and agree where many rows do
(:func:`fit_members`; the cost is ``M`` fits, measured in docs/conformal.md).  Inside an
empty gap (no rows at all) every tree has one boundary, so no kind of member disagrees
there more than at its edges.

References
----------
Geurts, P., Ernst, D. & Wehenkel, L. (2006). Extremely randomized trees. Machine Learning
63(1), 3-42.

Malinin, A., Prokhorenkova, L. & Ustimenko, A. (2021). Uncertainty in gradient boosting via
ensembles. ICLR 2021.

Lakshminarayanan, B., Pritzel, A. & Blundell, C. (2017). Simple and scalable predictive
uncertainty estimation using deep ensembles. NeurIPS 2017.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..boosting.ensemble import FittedEnsemble
from .linear_start import LinearStart
from .location_start import LocationStart

__all__ = ["FoldMember", "fold_ensemble", "member_rounds", "uncertainty_frame",
           "virtual_ensemble", "fit_members", "check_members", "uncertainty", "MEMBERS"]

#: The kinds of members of :meth:`predict_uncertainty
#: <distboost.estimators.base.DistributionalEstimator.predict_uncertainty>`.
MEMBERS = ("auto", "randomized", "folds", "virtual")


@dataclass
class FoldMember:
    """One member model: its trees, its starts, its raw floor and, for a model fitted on its
    own (:func:`fit_members`), its dispersion shift (the features and family are the
    estimator's; a cross-validation fold's model takes the estimator's shift)."""

    ensemble: FittedEnsemble
    linear: LinearStart | None
    location: LocationStart | None
    raw_floor: np.ndarray
    dispersion_shift: float | None = None

    @classmethod
    def from_run(cls, run) -> FoldMember:
        """The member of a fold's :class:`~distboost.estimators.runs.Run`."""
        return cls(run.ensemble, run.linear, run.location,
                   np.asarray(run.objective.raw_floor, dtype=np.float64))

    @classmethod
    def from_estimator(cls, model) -> FoldMember:
        """The member of a fitted estimator (:func:`fit_members`)."""
        return cls(model.ensemble_, model.linear_start_, model.location_start_,
                   np.asarray(model.raw_floor_, dtype=np.float64),
                   float(model.dispersion_shift_))

    def to_dict(self) -> dict:
        """JSON values (for :mod:`distboost.persistence`)."""
        return {"ensemble": self.ensemble.to_dict(),
                "linear": None if self.linear is None else self.linear.to_dict(),
                "location": None if self.location is None else self.location.to_dict(),
                "raw_floor": [v if np.isfinite(v) else None for v in self.raw_floor],
                "dispersion_shift": self.dispersion_shift}

    @classmethod
    def from_dict(cls, d: dict) -> FoldMember:
        """Rebuild from :meth:`to_dict` output."""
        return cls(FittedEnsemble.from_dict(d["ensemble"]),
                   None if d["linear"] is None else LinearStart.from_dict(d["linear"]),
                   None if d["location"] is None else LocationStart.from_dict(d["location"]),
                   np.array([-np.inf if v is None else v for v in d["raw_floor"]]),
                   d.get("dispersion_shift"))  # absent from files saved before it

    def model(self, estimator):
        """A shallow copy of the fitted ``estimator`` that predicts with this member."""
        out = copy.copy(estimator)
        out.ensemble_, out.linear_start_ = self.ensemble, self.linear
        out.location_start_, out.raw_floor_ = self.location, self.raw_floor
        if self.dispersion_shift is not None:
            out.dispersion_shift_ = self.dispersion_shift
        return out


def check_members(model) -> None:
    """ValueError before any fit when ``epistemic_members`` is asked of a family without a
    scalar mean and variance (a vector or class law)."""
    from ..families import get
    from .auto import is_auto

    if not model.epistemic_members or is_auto(model.family):
        return
    family = get(model.family)
    if getattr(family, "multivariate", False) or getattr(family, "classification", False):
        raise ValueError(
            f"epistemic_members={model.epistemic_members} trains members for "
            f"predict_uncertainty, which needs a scalar regression family; family "
            f"{family.name!r} has no scalar mean and variance. Use epistemic_members=0.")


def fit_members(model, X, y, sample_weight, eval_set, eval_sample_weight
                ) -> list[FoldMember] | None:
    """The ``epistemic_members`` models of a fitted ``model`` (module docstring): its
    options (the fitted family) with ``extra_trees=True``, each seeded from its
    ``random_state`` by :class:`numpy.random.SeedSequence`, fitted on the same rows, and
    the fold models each of those fits trained to choose its rounds (below ``CV_MAX_ROWS``
    rows: threshold and row randomness together), each with its fit's dispersion shift;
    None for ``epistemic_members=0``."""
    from sklearn.base import clone

    from .._validation import int_seed

    m = int(model.epistemic_members)
    if not m:
        return None
    # 31-bit seeds: LightGBM reads its seed as a C int
    seeds = np.random.SeedSequence(int_seed(model.random_state)).generate_state(m) >> 1
    out = []
    for seed in seeds:
        member = clone(model).set_params(
            family=model.family_, links=None, tuning=None, extra_trees=True,
            epistemic_members=0, random_state=int(seed), verbose=0, progress=False)
        member.fit(X, y, sample_weight, eval_set, eval_sample_weight)
        out.append(FoldMember.from_estimator(member))
        shift = float(member.dispersion_shift_)
        out += [dataclasses.replace(fold, dispersion_shift=shift)
                for fold in getattr(member, "cv_members_", None) or ()]
    return out


def fold_ensemble(model, X, members=None) -> tuple[np.ndarray, np.ndarray]:
    """Each member's predictive mean and variance, two ndarrays of shape (K, n): the fold
    models ``cv_members_`` of ``model``, or the given ``members``."""
    members = model.cv_members_ if members is None else members
    dists = [member.model(model).predict_dist(X) for member in members]
    return np.stack([d.mean for d in dists]), np.stack([d.variance for d in dists])


def member_rounds(best_iteration: int, n_members: int) -> list[int]:
    """The rounds of a virtual ensemble: ``n_members`` evenly spaced rounds in
    ``(best_iteration / 2, best_iteration]`` (fewer when there are fewer rounds; ``[0]`` for a
    model that kept no rounds)."""
    if best_iteration <= 0:
        return [0]
    start = best_iteration / 2.0
    rounds = np.unique(np.ceil(np.linspace(start, best_iteration, n_members + 1)[1:]))
    return [int(r) for r in rounds]


def virtual_ensemble(model, X, n_members: int = 10) -> tuple[np.ndarray, np.ndarray]:
    """Each member's predictive mean and variance, two ndarrays of shape (n_members', n)."""
    rounds = member_rounds(int(model.best_iteration_), n_members)
    dists = [model.predict_dist(X, iteration=r) for r in rounds]
    return np.stack([d.mean for d in dists]), np.stack([d.variance for d in dists])


def uncertainty_frame(means: np.ndarray, variances: np.ndarray, index=None) -> pd.DataFrame:
    """``aleatoric`` (mean member variance), ``epistemic`` (variance of the member means) and
    ``total`` (their sum) from members' means and variances of shape (M, n)."""
    aleatoric = variances.mean(axis=0)
    epistemic = means.var(axis=0)
    return pd.DataFrame({"aleatoric": aleatoric, "epistemic": epistemic,
                         "total": aleatoric + epistemic}, index=index)


def uncertainty(model, X, n_members: int, members: str) -> pd.DataFrame:
    """:meth:`predict_uncertainty <distboost.estimators.base.DistributionalEstimator.
    predict_uncertainty>` of a fitted scalar-regression ``model`` (its checks first)."""
    from .policy import CV_MAX_ROWS

    if not (isinstance(n_members, int | np.integer) and n_members >= 2):
        raise ValueError(f"n_members must be an integer >= 2, got {n_members!r}.")
    if members not in MEMBERS:
        raise ValueError(f"members must be one of {list(MEMBERS)}, got {members!r}.")
    randomized = getattr(model, "epistemic_members_", None)  # absent: saved before it
    folds = getattr(model, "cv_members_", None)
    if members == "randomized" and randomized is None:
        raise ValueError(
            "members='randomized' needs the members a fit with epistemic_members=M trains "
            "(M models with extremely randomised trees and their own seeds); this model was "
            "fitted with epistemic_members=0. Refit with e.g. epistemic_members=10, or use "
            "members='folds' or 'virtual'.")
    if members == "folds" and folds is None:
        raise ValueError(
            f"members='folds' needs the fold models of a fit that chose its rounds by "
            f"cross-validation (early_stopping='cv', or 'auto' below {CV_MAX_ROWS:,} rows); "
            f"this model's validation rows came from {model.early_stopping_!r}. Use "
            f"members='virtual', or refit with early_stopping='cv'.")
    if randomized is not None and members in ("auto", "randomized"):
        means, variances = fold_ensemble(model, X, randomized)
    elif folds is not None and members != "virtual":
        means, variances = fold_ensemble(model, X)
    else:
        means, variances = virtual_ensemble(model, X, int(n_members))
    return uncertainty_frame(means, variances, X.index if isinstance(X, pd.DataFrame) else None)
