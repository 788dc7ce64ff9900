"""``tuning="auto"``: a small, budgeted, seeded search of tree options on validation rows.

The defaults serve most data; for the last few per cent ``fit`` can first try a handful of
tree options and keep the best.  The search is a seeded random draw (Bergstra & Bengio 2012)
of at most :data:`MAX_CANDIDATES` candidates from :data:`SPACE` (the estimator's own options
first), each fitted on at most :data:`MAX_ROWS` training rows (a seeded subsample above) and
early-stopped and scored on the validation rows: the ``eval_set`` when one is given,
otherwise a seeded split of the rows (``validation_fraction`` of them, at least 20 %).  The
score is the mean validation loss of the fit's ``scoring_rule`` (NLL or CRPS).  A candidate
replaces the estimator's own options only when it beats them by more than one standard error
of the paired per-row loss difference on the validation rows (the one-standard-error rule,
Breiman et al. 1984, toward the options as given): eight candidates judged on a few hundred
rows otherwise pick the luckiest.  The chosen options are then fitted as usual on all rows
(with the fit's own validation); the search is ``tuning_table_``.

Budget: ``MAX_CANDIDATES`` fits on at most ``MAX_ROWS`` rows, then one ordinary fit (with
its refit on all rows from ``CV_MAX_ROWS`` to ``REFIT_MAX_ROWS`` rows,
``early_stopping="holdout_refit"``).  A candidate with a slower learning rate or a location
start costs more than a default fit on the same rows (measured: docs/benchmarks.md).

References
----------
Bergstra, J. & Bengio, Y. (2012), Random search for hyper-parameter optimization, JMLR 13,
281-305.
Breiman, L., Friedman, J., Olshen, R. & Stone, C. (1984), Classification and Regression
Trees, sec. 3.4.3 (the one-standard-error rule).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import pandas as pd
from sklearn.base import clone
from sklearn.model_selection import train_test_split

from .._validation import take_rows
from ..families import get
from .location_start import location_transform
from .options import auto_tree_size
from .policy import TUNING_MAX_ROWS as MAX_ROWS
from .policy import paired_standard_error
from .progress import task_bar

__all__ = ["LARGE_LEAVES", "MAX_CANDIDATES", "MAX_ROWS", "SPACE", "candidates", "tune"]

#: Candidate fits of one search (the estimator's own options among them).
MAX_CANDIDATES = 8
#: The options searched and their values; ``location_start`` only for families it applies
#: to (:mod:`distboost.estimators.location_start`).
SPACE = {
    "num_leaves": (4, 8, 15, 31),
    "min_child_samples": (5, 10, 20, 40),
    "learning_rate": (0.03, 0.05, 0.1),
    "location_start": (None, {"num_leaves": 7}, {"num_leaves": 15}, {"num_leaves": 31}),
}


#: Larger trees, searched where ``num_leaves="auto"`` already grows its largest (31 leaves,
#: from about 3,800 training rows): below, the data bear fewer leaves than that.
LARGE_LEAVES = (63, 127)


def candidates(estimator, family, seed: int, n: int = 0) -> list[dict]:
    """The options of the search: the estimator's own first, then distinct seeded draws
    from :data:`SPACE` (``MAX_CANDIDATES`` in all), its ``num_leaves`` with
    :data:`LARGE_LEAVES` on ``n`` candidate training rows where the automatic size is at
    its cap.

    Returns
    -------
    list of dict
        Option name -> value, one dict per candidate.
    """
    space = dict(SPACE)
    if auto_tree_size(n)[0] >= max(SPACE["num_leaves"]):
        space["num_leaves"] = SPACE["num_leaves"] + LARGE_LEAVES
    if location_transform(get(family)) is None:
        space.pop("location_start")
    names = list(space)
    own = {name: estimator.get_params()[name] for name in names}
    grid = list(itertools.product(*(space[name] for name in names)))
    rng = np.random.default_rng(seed)
    out = [own]
    for i in rng.permutation(len(grid)):
        cand = dict(zip(names, grid[i], strict=True))
        if cand != own:
            out.append(cand)
        if len(out) == MAX_CANDIDATES:
            break
    return out


def _row_losses(model, X_val, y_val) -> np.ndarray:
    """Each validation row's loss under ``model``'s scoring rule, shape (n_val,): the CRPS,
    or the negative log-likelihood (censored rows ``-log(F(u) - F(l))``, as ``score``)."""
    if model.scoring_rule == "crps":
        return np.asarray(model.predict_dist(X_val).crps(y_val), dtype=np.float64)
    return model._nll_rows(X_val, y_val)


def _choose(losses: list[np.ndarray], weights) -> tuple[int, np.ndarray, np.ndarray]:
    """The chosen candidate: the best mean loss, unless it beats candidate 0 (the options as
    given) by no more than one standard error of their paired per-row difference.

    Parameters
    ----------
    losses : list of ndarray of shape (n_val,)
        Each candidate's per-row validation loss.
    weights : ndarray of shape (n_val,) or None

    Returns
    -------
    chosen : int
    scores : ndarray of shape (n_candidates,)
        Weighted mean losses (``inf`` where not finite).
    se : ndarray of shape (n_candidates,)
        Standard error of each candidate's paired difference to candidate 0 (0 for it).
    """
    w = np.ones(len(losses[0])) if weights is None else np.asarray(weights, np.float64)
    w = w / w.sum()
    scores, se = np.full(len(losses), np.inf), np.zeros(len(losses))
    for i, loss in enumerate(losses):
        if np.all(np.isfinite(loss)):
            scores[i] = float(w @ loss)
            if i and np.isfinite(scores[0]):
                se[i] = float(paired_standard_error(loss - losses[0], w))
    best = int(np.argmin(scores))
    if best and np.isfinite(scores[0]) and scores[best] > scores[0] - se[best]:
        best = 0
    return best, scores, se


def _describe(value) -> str:
    return "None" if value is None else str(value)


def tune(estimator, X, y, sample_weight=None, eval_set=None, eval_weight=None, *, family,
         seed: int) -> tuple[dict, pd.DataFrame]:
    """The search of ``tuning="auto"``.

    Parameters
    ----------
    estimator : DistributionalRegressor
        Its other options are kept; each candidate is a clone with ``tuning=None``.
    X : ndarray or DataFrame of shape (n, p)
    y : ndarray of shape (n,)
    sample_weight : ndarray of shape (n,), optional
    eval_set : (X_val, y_val), optional
        The validation rows (otherwise a seeded split of the rows).
    eval_weight : ndarray of shape (n_val,), optional
    family : str or Family
        The family of the candidates (``family="auto"`` already resolved).
    seed : int
        Seed of the draws, the subsample and the split.

    Returns
    -------
    best : dict
        The chosen options.
    table : DataFrame
        One row per candidate: its options, ``score`` (mean validation loss),
        ``se_vs_given`` (standard error of its paired per-row difference to row 0, the
        options as given), ``seconds``, ``chosen``; ``attrs``: ``chosen`` (the options as a
        dict), ``rows_searched``, ``validation_rows``, ``metric``, ``rule``.
    """
    n = len(y)
    if eval_set is None:
        fraction = max(float(estimator.validation_fraction), 0.2)
        train, valid = train_test_split(np.arange(n), test_size=fraction, random_state=seed)
        X_val, y_val = take_rows(X, valid), y[valid]
        w_val = None if sample_weight is None else sample_weight[valid]
    else:
        train = np.arange(n)
        X_val, y_val = eval_set
        w_val = eval_weight
    if len(train) > MAX_ROWS:
        train = np.sort(np.random.default_rng(seed).choice(train, MAX_ROWS, replace=False))
    X_fit, y_fit = take_rows(X, train), y[train]
    w_fit = None if sample_weight is None else sample_weight[train]
    cands = candidates(estimator, family, seed, len(train))
    rows, losses = [], []
    bar = task_bar(estimator.progress, len(cands), "tuning")
    try:
        for cand in cands:
            model = clone(estimator).set_params(tuning=None, family=family, progress=False,
                                                verbose=0, **cand)
            t0 = time.perf_counter()
            model.fit(X_fit, y_fit, w_fit, eval_set=(X_val, y_val), eval_sample_weight=w_val)
            losses.append(_row_losses(model, X_val, y_val))
            rows.append({**{k: _describe(v) for k, v in cand.items()},
                         "seconds": time.perf_counter() - t0})
            if bar is not None:
                bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    best, scores, se = _choose(losses, w_val)
    table = pd.DataFrame(rows)
    table.insert(len(table.columns) - 1, "score", scores)
    table.insert(len(table.columns) - 1, "se_vs_given", se)
    table["chosen"] = np.arange(len(table)) == best
    table.attrs.update(rows_searched=int(len(train)), validation_rows=int(len(y_val)),
                       metric=estimator.scoring_rule, chosen=cands[best],
                       rule="one standard error toward the options as given")
    return cands[best], table
