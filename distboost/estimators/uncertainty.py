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

References
----------
Malinin, A., Prokhorenkova, L. & Ustimenko, A. (2021). Uncertainty in gradient boosting via
ensembles. ICLR 2021.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["member_rounds", "uncertainty_frame", "virtual_ensemble"]


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
