"""Choosing a family: cross-validated scores of the full conditional model of each family.

Families are compared like with like:

* The default candidates are the families whose support holds ``y``; classification
  families (``bernoulli``, ``categorical``) are never default candidates for a regression.
* A density and a probability mass function are not on one negative log-likelihood scale (a
  density is not a probability and can exceed one), nor is a "mixed" likelihood (a
  probability at a point mass and a density elsewhere: zero-adjusted families, tweedie,
  censored families), and a density's likelihood is unbounded at a point mass of ``y``
  (many exact ties, e.g. zeros).  In either case the families are
  ranked by CRPS, a proper score on one scale for every kind of distribution (Gneiting &
  Raftery 2007, section 4.2); otherwise by the first metric (the NLL by default).
* A degenerate fit (a dispersion parameter at its floor, a predictive distribution collapsed
  onto a point, ``df <= 1`` with no finite mean and an infinite CRPS, a non-finite score) is
  flagged in the ``degenerate`` column and ranked after every sound fit.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
from sklearn.model_selection import KFold

from . import families as _families
from . import metrics as _metrics

__all__ = ["compare_families", "family_kind"]

_CENSORED_METRICS = {"nll", "crps", "c_index"}

#: A fit is degenerate when a floored parameter sits at its floor on this share of rows.
FLOOR_SHARE = 0.05
#: ... or when the predictive 50 % interval is narrower than ``COLLAPSE_RATIO`` times the
#: interquartile range of ``y`` on ``COLLAPSE_SHARE`` of the rows (a continuous
#: distribution collapsed onto a point).
COLLAPSE_RATIO = 1e-3
COLLAPSE_SHARE = 0.05
#: ``y`` has a point mass when one value holds this share of the rows: a density's
#: likelihood is then unbounded and densities are ranked by CRPS, not NLL.
ATOM_SHARE = 0.10

_KIND_NOTE = {
    "kinds": ("Ranked by crps_mean: densities, probability mass functions and mixed "
              "likelihoods (a probability at a point mass, a density elsewhere: zero-adjusted "
              "families) are on different NLL scales (a density is not a probability), CRPS "
              "is proper for all of them."),
    "atom": ("Ranked by crps_mean: {share:.0%} of rows equal {value:g}, a point mass at which a "
             "density's likelihood is unbounded, so NLLs are not comparable; CRPS is proper "
             "and bounded."),
}


def family_kind(family, y=None) -> str:
    """What a family's likelihood measures: ``"density"``, ``"mass"`` or ``"mixed"``.

    Parameters
    ----------
    family : str or Family
    y : array_like, optional
        The target: a family with a point mass is ``"mixed"`` only when some row of ``y``
        sits on it (otherwise its likelihood is a density on every row).

    Returns
    -------
    str
        ``"mass"`` for a discrete family (its likelihood is a probability),
        ``"mixed"`` for a censored family (a density for exact rows, a probability for
        censored ones) and for a family with a point mass (``Family.point_mass``: the
        zero-adjusted families and tweedie, a probability at zero and a density above) when
        ``y`` is not given or has rows on it,
        ``"density"`` otherwise.  Only families of one kind have
        comparable negative log-likelihoods.
    """
    from .families.censored import Censored

    family = _families.get(family)
    if isinstance(family, Censored):
        return "mixed"
    if family.point_mass is not None:
        if y is None or np.ndim(y) != 1 or np.any(np.asarray(y) == family.point_mass):
            return "mixed"
        return "density"
    if family.discrete or family.support.integer:
        return "mass"
    return "density"


def _default_candidates(y: np.ndarray, censored: bool) -> tuple[list[str], dict[str, str]]:
    """Registered families whose support holds ``y`` (censored twins for censored ``y``).

    Returns
    -------
    names : list of str
    excluded : dict of str to str
        Every other registered family and why it is not a candidate.
    """
    names = _families.available()
    if censored:  # the censored twins of the families that declare one
        names = [f"censored_{f}" for f in names if _families.get(f).censorable]
    kept, excluded = [], {}
    for name in names:
        family = _families.get(name)
        if family.classification:
            excluded[name] = "a classification family (use DistributionalClassifier)"
            continue
        try:
            family.validate_y(y)
        except ValueError as err:
            excluded[name] = str(err)
            continue
        if (family.point_mass is not None and not censored
                and not np.any(np.asarray(y) == family.point_mass)):
            # Without rows at the atom its MLE sits on the boundary (an empty point mass):
            # the family without the atom is already a candidate.
            excluded[name] = f"no rows of y at its point mass {family.point_mass:g}"
            continue
        kept.append(name)
    return kept, excluded


def _point_mass(y: np.ndarray) -> tuple[float, float]:
    """The most frequent value of ``y`` and the share of rows holding it."""
    values, counts = np.unique(y, return_counts=True)
    k = int(np.argmax(counts))
    return float(values[k]), float(counts[k] / y.size)


def _spread(y: np.ndarray, censored: bool) -> float:
    """Interquartile range of ``y`` (of the lower bounds for censored ``y``), else its std."""
    v = y[:, 0] if censored else y
    v = v[np.isfinite(v)]
    if v.size == 0:
        return 0.0
    q25, q75 = np.percentile(v, [25, 75])
    return float(q75 - q25) if q75 > q25 else float(np.std(v))


def compare_families(X, y, families=None, cv=5, metrics=("nll", "crps", "coverage_90"),
                     random_state=0, progress: bool = False, n_jobs: int | None = None,
                     **estimator_params) -> pd.DataFrame:
    """Cross-validate a boosted model of each family on the same folds, like with like.

    Parameters
    ----------
    X : array_like or DataFrame of shape (n, p)
    y : array_like of shape (n,), or (n, 2) censored bounds
    families : sequence of str or Family, optional
        Default: every registered family whose support holds ``y`` (count families only for
        non-negative integer ``y``, positive families only for positive ``y``, ...; their
        ``censored_`` twins for censored ``y``), never the classification families
        ``bernoulli`` and ``categorical``.  The others are listed with the reason in
        ``table.attrs["excluded"]``.  A family given here whose support does not hold ``y``
        gets a row with the reason in ``skipped``.
    cv : int
        Number of folds (shuffled, seeded by ``random_state``).
    metrics : sequence of str
        Among ``nll``, ``crps``, ``coverage_90`` (any ``coverage_<p>``), ``interval_score_90``,
        and for censored ``y``: ``nll`` (censored), ``crps`` (survival CRPS), ``c_index``.
        ``crps`` is added when the ranking needs it (see Returns).
    random_state : int
    progress : bool, default=False
        Show a progress bar over the fits (families x folds; ``tqdm.auto``).
    n_jobs : int, optional
        Fit the families' folds in parallel on ``n_jobs`` processes (joblib; -1: every
        core), each model with one LightGBM thread (``n_jobs=1`` unless given in
        ``estimator_params``).  The table is the same as the serial one's: every fold
        keeps its own seed.  None or 1: serial.  Families given as ``Family`` objects must
        be picklable (classes importable by the worker processes).
    **estimator_params
        Passed to every ``DistributionalRegressor``.

    Returns
    -------
    DataFrame
        One row per family: ``family``; ``kind`` (``density``, ``mass`` for a count family,
        ``mixed`` for a censored one or one with a point mass, e.g. ``zero_adjusted_gamma``
        or ``tweedie``: see :func:`family_kind`); ``<metric>_mean`` and
        ``<metric>_std`` over folds; ``fit_seconds``; ``degenerate`` (why the fit is
        degenerate, else ``""``: a floored parameter such as ``scale`` at its floor on 5 %
        (``FLOOR_SHARE``) of the held-out rows or more, a predictive 50 % interval narrower
        than 1e-3 (``COLLAPSE_RATIO``) x the interquartile range of ``y`` on 5 %
        (``COLLAPSE_SHARE``) of the rows, ``df <= 1`` on any row (no finite mean, infinite
        CRPS), a non-finite mean or NLL / CRPS); and ``skipped`` (why a family was not
        fitted, e.g. its support excludes ``y`` or a fold failed).

        Sound fits come first, then degenerate ones, then skipped ones.  Within each group
        the rows are sorted by ``crps_mean`` when the fitted families are of more than one
        kind, or when they are densities and one value holds 10 % (``ATOM_SHARE``) of ``y`` (a
        density's likelihood is unbounded at a point mass); otherwise by the first metric
        (``c_index`` descending, ``coverage_<p>`` by its distance to ``p``, the others
        ascending).  ``table.attrs`` holds ``ranked_by`` (the column), ``note`` (why, when
        not the first metric), ``best`` (the first sound family, or None) and ``excluded``.

    Warns
    -----
    Every warning raised while fitting a fold is re-emitted with the family and the fold(s),
    e.g. ``"compare_families: family 'gamma', fold 3/5: ..."``.  A ``UserWarning`` when every
    fitted family is degenerate.

    References
    ----------
    Gneiting, T. & Raftery, A. E. (2007). Strictly proper scoring rules, prediction, and
    estimation. *Journal of the American Statistical Association* 102(477), 359-378.
    """
    y = np.asarray(y, dtype=np.float64)
    censored = y.ndim == 2 and y.shape[1] == 2
    excluded: dict[str, str] = {}
    if families is None:
        families, excluded = _default_candidates(y, censored)
    metrics = tuple(metrics)
    unknown = [m for m in metrics if not _known_metric(m)]
    if unknown or not metrics:
        raise ValueError(f"Unknown metric(s) {unknown} for compare_families; use nll, crps, "
                         "coverage_<p>, interval_score_<p> or c_index.")
    if censored and not set(metrics) <= _CENSORED_METRICS:
        metrics = tuple(m for m in metrics if m in _CENSORED_METRICS) or ("nll",)

    fams = [_families.get(f) for f in families]
    names = [f if isinstance(f, str) else fam.name for f, fam in zip(families, fams, strict=True)]
    holds = []
    for fam in fams:
        try:
            fam.validate_y(y)
            holds.append(True)
        except ValueError:
            holds.append(False)
    kinds = {family_kind(fam, y) for fam, ok in zip(fams, holds, strict=True) if ok}
    atom_value, atom_share = _point_mass(y) if not censored and y.size else (np.nan, 0.0)
    ranking, note = metrics[0], ""
    if len(kinds) > 1:
        ranking, note = "crps", _KIND_NOTE["kinds"]
    elif kinds == {"density"} and atom_share >= ATOM_SHARE:
        ranking = "crps"
        note = _KIND_NOTE["atom"].format(share=atom_share, value=atom_value)
    if ranking == "crps" and "crps" not in metrics:
        metrics = metrics + ("crps",)

    context = {"spread": _spread(y, censored), "atom": (atom_value, atom_share)}
    folds = list(KFold(cv, shuffle=True, random_state=random_state).split(np.arange(len(y))))
    results = _run_folds(families, fams, holds, X, y, folds, metrics, censored, random_state,
                         estimator_params, context, progress, n_jobs, names)
    rows = [_evaluate(name, fam, y, results.get(i, []), len(folds), metrics, context)
            for i, (name, fam) in enumerate(zip(names, fams, strict=True))]
    table = _rank(pd.DataFrame(rows, columns=["family", "kind", "skipped", "degenerate"])
                  if not rows else pd.DataFrame(rows), metrics, ranking)
    fitted = table["skipped"] == ""
    sound = fitted & (table["degenerate"] == "")
    if fitted.any() and not sound.any():
        warnings.warn(
            f"compare_families: every fitted family ({fitted.sum()}) is degenerate on this "
            "target; see the table's 'degenerate' column.", UserWarning, stacklevel=2)
    table.attrs.update(ranked_by=f"{ranking}_mean", note=note, excluded=excluded,
                       best=str(table.loc[sound.idxmax(), "family"]) if sound.any() else None)
    return table


def _run_folds(specs, fams, holds, X, y, folds, metrics, censored, random_state,
               estimator_params, context, progress, n_jobs, names) -> dict[int, list[dict]]:
    """Fit every family that holds ``y`` on every fold, serially or on ``n_jobs`` processes.

    Returns ``{family position: [fold result, ...]}`` in fold order, up to and including a
    family's first failing fold (the serial run stops there; a parallel one drops the folds
    after it, so both give the same table).
    """
    from ._progress import task_bar

    tasks = [(i, k) for i, ok in enumerate(holds) if ok for k in range(len(folds))]
    parallel = n_jobs is not None and n_jobs != 1
    params = dict(estimator_params)
    if parallel:
        params.setdefault("n_jobs", 1)

    def job(i, k):
        return _fit_fold(specs[i], fams[i], X, y, folds[k], k, metrics, censored,
                         random_state, params, context)

    if parallel:
        from joblib import Parallel, delayed

        stream = Parallel(n_jobs=n_jobs, return_as="generator")(
            delayed(_fit_fold)(specs[i], fams[i], X, y, folds[k], k, metrics, censored,
                               random_state, params, context) for i, k in tasks)
    else:
        failed: set[int] = set()
        stream = (None if i in failed else job(i, k) for i, k in tasks)
    bar = task_bar(progress, len(tasks), "compare_families")
    results: dict[int, list[dict]] = {}
    try:
        for (i, k), res in zip(tasks, stream, strict=True):
            if bar is not None:
                bar.set_postfix_str(f"{names[i]}, fold {k + 1}/{len(folds)}", refresh=False)
                bar.update(1)
            done = results.setdefault(i, [])
            if res is None or (done and done[-1]["error"]):
                continue  # after the family's first failing fold
            done.append(res)
            if res["error"] and not parallel:
                failed.add(i)
    finally:
        if bar is not None:
            bar.close()
    return results


def _fit_fold(spec, family, X, y, fold, k, metrics, censored, random_state, estimator_params,
              context) -> dict:
    """Fit ``family`` (given as ``spec``, a name or a Family) on one fold and score it.

    Returns a dict: ``scores`` (metric -> float), ``seconds``, ``diag`` (this fold's
    :class:`_Diagnostics`), ``warnings`` (category, message, filename, lineno) and ``error``
    (``""``, or the skip reason of a fold the family cannot fit).
    """
    from .estimators import DistributionalRegressor

    tr, te = fold
    out = {"k": k, "scores": {}, "seconds": np.nan, "diag": _Diagnostics(family, context),
           "warnings": [], "error": "", "failed": False}
    model = DistributionalRegressor(family=spec, random_state=random_state + k,
                                    **estimator_params)
    with warnings.catch_warnings(record=True) as records:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            model.fit(_take(X, tr), y[tr])
            out["seconds"] = time.perf_counter() - t0
            X_te = _take(X, te)
            dist = model.predict_dist(X_te)
            out["scores"] = {m: _score(m, model, X_te, y[te], censored) for m in metrics}
            out["diag"].add(model, dist, y[te], out["scores"])
        except ValueError as err:  # a fold whose target the family cannot fit
            out["error"] = f"{err}"
        except ArithmeticError as err:  # the engine's non-finite loss, torch/scipy overflows
            out["error"], out["failed"] = f"{type(err).__name__}: {err}", True
        finally:
            out["warnings"] = [(w.category, str(w.message), w.filename, w.lineno)
                               for w in records]
    return out


def _evaluate(name, family, y, fold_results, n_folds, metrics, context) -> dict:
    """One row of the table from a family's fold results (scores, degeneracy, skip reason).
    """
    row = {"family": name, "kind": family_kind(family, y), "skipped": "", "degenerate": ""}
    try:
        family.validate_y(y)
    except ValueError as err:
        row["skipped"] = str(err)
        return row
    _reemit([(r["k"], w) for r in fold_results for w in r["warnings"]], name, n_folds)
    last = fold_results[-1]
    if last["error"]:
        where = f"fold {last['k'] + 1}/{n_folds}"
        row["skipped"] = (f"{where} failed: {last['error']}" if last["failed"]
                          else f"{where}: {last['error']}")
        if last["failed"]:
            warnings.warn(f"compare_families: family {name!r}, {row['skipped']}; the family "
                          "is skipped.", RuntimeWarning, stacklevel=4)
        return row
    diag = _Diagnostics(family, context)
    for r in fold_results:
        diag.merge(r["diag"])
    with np.errstate(invalid="ignore"):  # the std of infinite scores is NaN
        for m in metrics:
            values = [r["scores"][m] for r in fold_results]
            row[f"{m}_mean"] = float(np.mean(values))
            row[f"{m}_std"] = float(np.std(values))
    row["fit_seconds"] = float(np.mean([r["seconds"] for r in fold_results]))
    row["degenerate"] = diag.reason()
    return row


class _Diagnostics:
    """Counts of degenerate predictions over the held-out rows of every fold."""

    def __init__(self, family, context):
        self.family = family
        self.spread = context["spread"]
        self.atom_value, self.atom_share = context["atom"]
        self.rows = 0
        self.floored: dict[str, int] = {}
        self.collapsed = self.collapsed_at_atom = self.df_low = self.bad_mean = 0
        self.bad_scores: dict[str, int] = {}
        self.folds = 0

    def add(self, model, dist, y_te, fold_scores) -> None:
        """Count this fold's held-out rows at a floor, collapsed, with ``df <= 1``, ...."""
        family, params = self.family, dist.params
        n = len(dist)
        self.rows += n
        self.folds += 1
        floor = np.asarray(getattr(model, "raw_floor_", []), dtype=np.float64)
        if floor.size == family.n_params and np.isfinite(floor).any():
            raw = family.raw_from_params({p: np.array(v) for p, v in params.items()})
            for k, p in enumerate(family.param_names):
                if np.isfinite(floor[k]):
                    hits = int(np.sum(raw[:, k] <= floor[k] + 1e-6 * max(1.0, abs(floor[k]))))
                    self.floored[p] = self.floored.get(p, 0) + hits
        if "df" in params:
            self.df_low += int(np.sum(params["df"] <= 1.0))
        with np.errstate(all="ignore"):
            self.bad_mean += int(np.sum(~np.isfinite(dist.mean)))
            # A point mass (zero-adjusted) legitimately puts both quartiles on the atom.
            if not family.discrete and family.point_mass is None and self.spread > 0:
                q = dist.quantile([0.25, 0.75])
                narrow = ~(q[:, 1] - q[:, 0] >= COLLAPSE_RATIO * self.spread)
                self.collapsed += int(narrow.sum())
                if y_te.ndim == 1 and self.atom_share >= ATOM_SHARE:
                    self.collapsed_at_atom += int(np.sum(narrow & (y_te == self.atom_value)))
        for m, v in fold_scores.items():
            if m in ("nll", "crps") and not np.isfinite(v):
                self.bad_scores[m] = self.bad_scores.get(m, 0) + 1

    def merge(self, other: _Diagnostics) -> None:
        """Add the counts of another fold."""
        self.rows += other.rows
        self.folds += other.folds
        self.collapsed += other.collapsed
        self.collapsed_at_atom += other.collapsed_at_atom
        self.df_low += other.df_low
        self.bad_mean += other.bad_mean
        for mine, theirs in ((self.floored, other.floored),
                             (self.bad_scores, other.bad_scores)):
            for key, count in theirs.items():
                mine[key] = mine.get(key, 0) + count

    def reason(self) -> str:
        """Why the fit is degenerate, ``""`` when it is not."""
        n, out = self.rows, []
        for m, count in self.bad_scores.items():
            out.append(f"{m} not finite in {count}/{self.folds} folds")
        if self.df_low:
            out.append(f"df <= 1 on {self.df_low} of {n} rows (no finite mean, infinite CRPS)")
        if self.bad_mean > self.df_low:
            out.append(f"mean infinite or NaN on {self.bad_mean} of {n} rows")
        for p, count in self.floored.items():
            if count >= FLOOR_SHARE * n:
                out.append(f"{p} at its floor on {count / n:.0%} of rows")
        if self.collapsed >= COLLAPSE_SHARE * n:
            text = (f"50% interval < {COLLAPSE_RATIO:g} x IQR of y on "
                    f"{self.collapsed / n:.0%} of rows")
            if self.collapsed_at_atom >= 0.5 * self.collapsed:
                text += (f", collapsed onto y = {self.atom_value:g} ({self.atom_share:.0%} of "
                         "rows): a point mass a density cannot hold")
            out.append(text)
        return "; ".join(out)


def _reemit(caught, name, n_folds: int) -> None:
    """Warn again with the family and the folds, one warning per distinct message."""
    groups: dict[tuple, list[int]] = {}
    first: dict[tuple, tuple] = {}
    for k, w in caught:  # w: (category, message, filename, lineno)
        key = (w[0], w[1])
        groups.setdefault(key, []).append(k + 1)
        first.setdefault(key, w)
    for key, ks in groups.items():
        category, message, filename, lineno = first[key]
        where = (f"fold {ks[0]}/{n_folds}" if len(ks) == 1
                 else f"folds {','.join(map(str, sorted(set(ks))))}/{n_folds}")
        warnings.warn_explicit(f"compare_families: family {name!r}, {where}: {message}",
                               category, filename, lineno)


def _rank(table: pd.DataFrame, metrics, ranking: str) -> pd.DataFrame:
    """Sound fits first, then degenerate, then skipped; each group by the ranking metric."""
    for m in metrics:
        for stat in ("mean", "std"):
            if f"{m}_{stat}" not in table:
                table[f"{m}_{stat}"] = np.nan
    if "fit_seconds" not in table:
        table["fit_seconds"] = np.nan
    cols = ["family", "kind", *(f"{m}_{s}" for m in metrics for s in ("mean", "std")),
            "fit_seconds", "degenerate", "skipped"]
    table = table[cols]
    key = table[f"{ranking}_mean"]
    if ranking == "c_index":
        key = -key
    elif ranking.startswith("coverage_"):
        key = (key - int(ranking.split("_")[1]) / 100).abs()
    status = np.where(table["skipped"] != "", 2, np.where(table["degenerate"] != "", 1, 0))
    order = pd.DataFrame({"status": status, "key": key.to_numpy()}).sort_values(
        ["status", "key"], na_position="last", kind="stable").index
    return table.iloc[order].reset_index(drop=True)


def _known_metric(m) -> bool:
    """A metric of compare_families: ``nll``, ``crps``, ``c_index``, or ``coverage_<p>`` /
    ``interval_score_<p>`` for a percent ``p`` that :func:`distboost.metrics.get_scorer`
    accepts."""
    if m in ("nll", "crps", "c_index"):
        return True
    head, _, _ = str(m).rpartition("_")
    if head not in ("coverage", "interval_score"):
        return False
    try:
        _metrics.get_scorer(m)
    except ValueError:
        return False
    return True


def _take(X, idx):
    return X.iloc[idx] if isinstance(X, pd.DataFrame) else np.asarray(X)[idx]


# compare_families reports losses as losses (lower is better) and c_index as is: the scorer
# of distboost.metrics (higher is better) and the sign that turns it into the column.
_SCORERS = {
    (False, "nll"): ("nll", -1.0),
    (False, "crps"): ("crps", -1.0),
    (True, "nll"): ("censored_nll", -1.0),
    (True, "crps"): ("survival_crps", -1.0),
    (True, "c_index"): ("concordance_index", 1.0),
}


def _score(metric: str, model, X, y, censored: bool) -> float:
    """One fold's score of ``metric`` for a fitted model on held-out rows, through the
    scikit-learn scorers of :mod:`distboost.metrics` (the raw coverage, which no scorer
    returns, through :func:`distboost.metrics.coverage`)."""
    if not censored and metric.startswith("coverage_"):
        return float(_metrics.coverage(_metrics.predict_dist(model, X), y,
                                       int(metric.split("_")[1]) / 100))
    if not censored and metric.startswith("interval_score_"):
        name, sign = metric, -1.0
    elif (censored, metric) in _SCORERS:
        name, sign = _SCORERS[censored, metric]
    else:
        raise ValueError(f"Unknown metric {metric!r} for compare_families.")
    return sign * _metrics.get_scorer(name)(model, X, y)
