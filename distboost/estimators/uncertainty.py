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

References
----------
Malinin, A., Prokhorenkova, L. & Ustimenko, A. (2021). Uncertainty in gradient boosting via
ensembles. ICLR 2021.

Lakshminarayanan, B., Pritzel, A. & Blundell, C. (2017). Simple and scalable predictive
uncertainty estimation using deep ensembles. NeurIPS 2017.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..boosting.ensemble import FittedEnsemble
from .linear_start import LinearStart
from .location_start import LocationStart

__all__ = ["FoldMember", "fold_ensemble", "member_rounds", "uncertainty_frame",
           "virtual_ensemble"]


@dataclass
class FoldMember:
    """One cross-validation fold's model at the fit's kept round: its trees, its starts and
    its raw floor (the features, dispersion shift and family are the estimator's)."""

    ensemble: FittedEnsemble
    linear: LinearStart | None
    location: LocationStart | None
    raw_floor: np.ndarray

    @classmethod
    def from_run(cls, run) -> FoldMember:
        """The member of a fold's :class:`~distboost.estimators.runs.Run`."""
        return cls(run.ensemble, run.linear, run.location,
                   np.asarray(run.objective.raw_floor, dtype=np.float64))

    def to_dict(self) -> dict:
        """JSON values (for :mod:`distboost.persistence`)."""
        return {"ensemble": self.ensemble.to_dict(),
                "linear": None if self.linear is None else self.linear.to_dict(),
                "location": None if self.location is None else self.location.to_dict(),
                "raw_floor": [v if np.isfinite(v) else None for v in self.raw_floor]}

    @classmethod
    def from_dict(cls, d: dict) -> FoldMember:
        """Rebuild from :meth:`to_dict` output."""
        return cls(FittedEnsemble.from_dict(d["ensemble"]),
                   None if d["linear"] is None else LinearStart.from_dict(d["linear"]),
                   None if d["location"] is None else LocationStart.from_dict(d["location"]),
                   np.array([-np.inf if v is None else v for v in d["raw_floor"]]))

    def model(self, estimator):
        """A shallow copy of the fitted ``estimator`` that predicts with this member."""
        out = copy.copy(estimator)
        out.ensemble_, out.linear_start_ = self.ensemble, self.linear
        out.location_start_, out.raw_floor_ = self.location, self.raw_floor
        return out


def fold_ensemble(model, X) -> tuple[np.ndarray, np.ndarray]:
    """Each fold member's predictive mean and variance, two ndarrays of shape (K, n)."""
    dists = [member.model(model).predict_dist(X) for member in model.cv_members_]
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
