"""The default policy of a fit: every rule that reads the number of rows, stated once.

What a default fit does at ``n`` rows, and why, is decided by the rules of :data:`RULES`
(one row each: the option, when it applies, what it does, why, and the section of the
documentation that holds the measurements), with their thresholds defined here and nowhere
else: :data:`CV_MAX_ROWS`, :data:`REFIT_MAX_ROWS`, :data:`CV_FOLDS`,
:data:`AUTO_COMPARE_ROWS`, :data:`REPEATED_ROWS_MAX`, :data:`TUNING_MAX_ROWS`,
:data:`FAMILY_AUTO_MAX_ROWS`, :data:`AUTO_ROUNDS`, :data:`AUTO_ROUNDS_STOPPED` and the
engine's :data:`~distboost.boosting.threads.SINGLE_THREAD_ROWS`.

:func:`plan_fit` applies them to one fit: a :class:`FitPlan`, the frozen record of that fit's
decisions, which ``fit`` computes once before any run (``fit_plan_``; ``verbose=1`` prints
:meth:`FitPlan.describe`).  The runs read the validation mode, the location comparison and
the thread count from it.  The defaults table of docs/engine.md ("The fit's policy") is
generated from :data:`RULES` and from :meth:`FitPlan.describe` at 300, 3,000 and 30,000 rows
(:func:`policy_markdown`).

:func:`paired_standard_error` is the one standard error behind the four comparisons of a fit
by the one-standard-error rule (the location start, the fine leaves, the number of rounds on
the folds, tuning's candidates; Hastie, Tibshirani & Friedman 2009, sec. 7.10).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from ..boosting.threads import SINGLE_THREAD_ROWS

__all__ = ["CV_MAX_ROWS", "CV_FOLDS", "REFIT_MAX_ROWS", "AUTO_COMPARE_ROWS",
           "REPEATED_ROWS_MAX", "TUNING_MAX_ROWS", "FAMILY_AUTO_MAX_ROWS", "AUTO_ROUNDS",
           "AUTO_ROUNDS_STOPPED", "SINGLE_THREAD_ROWS", "THRESHOLDS", "Rule", "RULES",
           "FitPlan", "plan_fit", "validation_mode", "round_cap", "auto_tree_size",
           "paired_standard_error", "policy_markdown"]

#: Training rows below which ``early_stopping="auto"`` chooses the rounds by
#: cross-validation (and ``linear_start="auto"`` is compared on its folds).
CV_MAX_ROWS = 1000
#: Folds of that cross-validation (fewer when there are fewer rows).
CV_FOLDS = 5
#: Training rows below which ``early_stopping="auto"`` refits on all rows after the
#: held-out split has chosen the rounds (above, the model keeps the split's fit).
REFIT_MAX_ROWS = 10_000
#: Below this many training rows, ``location_start="auto"`` fits with and without the start
#: and keeps the better on the validation rows (above, the start is used directly).
AUTO_COMPARE_ROWS = 10_000
#: Below this many training rows, repeated feature rows are looked for (the location's fine
#: leaves on repeated records; the "auto" leaves of larger data hold 20 rows: the fine ones
#: change less, and the second fit costs more).
REPEATED_ROWS_MAX = 10_000
#: ``tuning="auto"`` fits its candidates on at most this many training rows.
TUNING_MAX_ROWS = 5000
#: ``family="auto"`` compares its candidates on at most this many rows.
FAMILY_AUTO_MAX_ROWS = 1000
#: ``n_estimators="auto"``: the cap without early stopping, or below :data:`CV_MAX_ROWS`
#: training rows.
AUTO_ROUNDS = 1000
#: ``n_estimators="auto"`` under early stopping on at least :data:`CV_MAX_ROWS` training
#: rows: a cap the validation loss, not the count, is meant to end the fit at (LightGBM's
#: and XGBoost's practice of a large round count and early stopping).
AUTO_ROUNDS_STOPPED = 3000

#: The names of the thresholds on rows (each defined once in the package: a test).
THRESHOLDS = ("CV_MAX_ROWS", "CV_FOLDS", "REFIT_MAX_ROWS", "AUTO_COMPARE_ROWS",
              "REPEATED_ROWS_MAX", "TUNING_MAX_ROWS", "FAMILY_AUTO_MAX_ROWS", "AUTO_ROUNDS",
              "AUTO_ROUNDS_STOPPED", "SINGLE_THREAD_ROWS")


@dataclass(frozen=True)
class Rule:
    """One row of the policy: ``option`` (its default) ``when`` ... does ``what``, ``why``;
    ``constants`` the thresholds it reads; ``anchor`` the documentation of its measurements
    (``file.md#heading``, relative to docs/)."""

    option: str
    when: str
    what: str
    why: str
    constants: tuple[str, ...]
    anchor: str


_SMALL = "engine.md#small-data-rounds-by-cross-validation-a-linear-start-no-cliff"
_DEFAULTS = "engine.md#defaults-of-distributionalregressor-and-why"

#: The rules of a default fit, in the order a fit meets them.
RULES: tuple[Rule, ...] = (
    Rule("n_jobs=None", "always",
         "one thread below SINGLE_THREAD_ROWS training rows; above, as many threads as the "
         "cores other processes leave free when the fit starts (torch, BLAS and the tree "
         "backend alike)",
         "OpenMP threads that spin against other work turn a fit of seconds into minutes; "
         "on small data a second thread costs more than it brings",
         ("SINGLE_THREAD_ROWS",), "engine.md#threads-and-a-busy-machine"),
    Rule("early_stopping='auto'", "no eval_set",
         "below CV_MAX_ROWS rows: CV_FOLDS-fold cross-validation chooses the rounds, then a "
         "refit on all rows; below REFIT_MAX_ROWS: a held-out split (validation_fraction) "
         "chooses them, then a refit on all rows at those rounds times n / n_fit; above: "
         "the held-out split's fit is kept",
         "20 held-out rows of 200 make the chosen round and the dispersion noise; a refit "
         "of a few seconds gives the model the held-out rows back",
         ("CV_MAX_ROWS", "CV_FOLDS", "REFIT_MAX_ROWS"), _SMALL),
    Rule("early_stopping='auto'", "an eval_set is given",
         "the eval_set's rows choose the rounds and the dispersion shift",
         "the user's validation rows are always used", (), _SMALL),
    Rule("n_estimators='auto'", "always",
         "a cap of AUTO_ROUNDS_STOPPED rounds under early stopping on at least CV_MAX_ROWS "
         "training rows, AUTO_ROUNDS otherwise",
         "on larger data the location still improves past 1,000 rounds; without early "
         "stopping the cap is the fit's cost",
         ("AUTO_ROUNDS", "AUTO_ROUNDS_STOPPED", "CV_MAX_ROWS"), _DEFAULTS),
    Rule("num_leaves='auto', min_child_samples='auto'", "always",
         "sqrt(n) / 2 leaves (4 to 31) of at least sqrt(n) / 2 rows (5 to 20), n the "
         "training rows of each run (a fold's, the split's, all rows' for a refit)",
         "LightGBM's fixed 31 leaves of 20 rows cannot follow a steep curve on 200 rows; "
         "large data gain from 31 leaves", (), _DEFAULTS),
    Rule("step='auto'", "always",
         "the family's default step (natural for the Normal, fisher for most); newton "
         "under scoring_rule='crps'",
         "the natural gradient's lower held-out NLL on the UCI sets", (), _DEFAULTS),
    Rule("linear_start='auto'", "cross-validation (below CV_MAX_ROWS rows)",
         "a ridge-penalised linear start of every non-dispersion parameter, kept when the "
         "folds prefer it to the constant by one standard error; never with monotone "
         "constraints or per-parameter features",
         "on small data a linear trend is what the trees cannot learn from few rows",
         ("CV_MAX_ROWS",), _SMALL),
    Rule("location_start (None; 'auto')", "'auto', a family with a location",
         "a point model of the location first; below AUTO_COMPARE_ROWS training rows the "
         "fit is run with and without it and the start kept when it wins by one standard "
         "error",
         "a point model can start the location worse than the constant on small data",
         ("AUTO_COMPARE_ROWS",),
         "engine.md#location-start-boost-the-mean-first-location_start"),
    Rule("location's min_child_samples", "validation rows",
         "the location's fine leaves (2 rows) tried when it explains 98 % of the variance, "
         "or when training rows below REPEATED_ROWS_MAX repeat their features; kept by one "
         "standard error",
         "near-deterministic data and repeated records need finer leaves than the shared "
         "size", ("REPEATED_ROWS_MAX",),
         "engine.md#leaf-size-of-the-location-on-near-deterministic-data"),
    Rule("calibrate=True", "validation rows",
         "one shift of the dispersion parameter's raw score fitted on the validation rows; "
         "each round judged after its own best shift",
         "trees fitted on the training rows see smaller residuals than new rows have", (),
         _DEFAULTS),
    Rule("per_parameter_stopping=True", "early stopping",
         "each parameter keeps its own best round; the others continue",
         "lower CRPS and NLL on every UCI set", (),
         "engine.md#per-parameter-stopping-per_parameter_stopping"),
    Rule("tuning='auto'", "asked for",
         "candidates fitted on at most TUNING_MAX_ROWS training rows (a seeded subsample), "
         "the options as given kept unless a candidate wins by one standard error",
         "the search's cost stays that of a few fits", ("TUNING_MAX_ROWS",),
         "engine.md#tuning-tuningauto"),
    Rule("family='auto'", "asked for",
         "candidate families compared by cross-validated CRPS on at most "
         "FAMILY_AUTO_MAX_ROWS rows; the fewest parameters within one standard error",
         "the choice costs a fraction of the fit", ("FAMILY_AUTO_MAX_ROWS",),
         "families.md#choosing-a-family"),
)


def validation_mode(early_stopping, n: int, has_eval_set: bool) -> str:
    """Where a fit's validation rows come from.

    Parameters
    ----------
    early_stopping : {"auto", "cv", "holdout", "holdout_refit"} or bool
        The estimator's option.  "auto" and True: cross-validation below
        :data:`CV_MAX_ROWS` training rows, a held-out split and a refit on all rows below
        :data:`REFIT_MAX_ROWS`, a held-out split above; False: no early stopping.
    n : int
        Training rows.
    has_eval_set : bool
        An ``eval_set`` given to ``fit`` is always the validation set.

    Returns
    -------
    str
        "eval_set", "cv", "holdout", "holdout_refit", "none" (every round is kept) or
        "constant" (cross-validation asked for on a single row: the start values are kept).
    """
    if has_eval_set:
        return "eval_set"
    if early_stopping is False:
        return "none"
    if early_stopping in ("auto", True):
        early_stopping = ("cv" if n < CV_MAX_ROWS
                          else "holdout_refit" if n < REFIT_MAX_ROWS else "holdout")
    if early_stopping == "cv" and n < 2:
        return "constant"  # nothing to cross-validate on: keep the start values
    return str(early_stopping)


def round_cap(value, stopped: bool, n: int) -> int:
    """The round cap of ``n_estimators``.

    Parameters
    ----------
    value : int or "auto"
        The option.
    stopped : bool
        Whether early stopping ends the fit (validation rows and a patience
        ``n_iter_no_change``).
    n : int
        The run's training rows.

    Returns
    -------
    int
        ``value`` itself, or for "auto" :data:`AUTO_ROUNDS_STOPPED` when ``stopped`` and
        ``n >= CV_MAX_ROWS``, :data:`AUTO_ROUNDS` otherwise.  Without early stopping every
        round is grown, so the cap is the fit's cost.  On small data the per-round cost of
        the cross-validated fits dominates and a longer location buys little held-out NLL
        (docs/benchmarks.md, "The round cap").
    """
    if value == "auto":
        return AUTO_ROUNDS_STOPPED if stopped and n >= CV_MAX_ROWS else AUTO_ROUNDS
    return int(value)


def auto_tree_size(n: int) -> tuple[int, int]:
    """Default ``(num_leaves, min_child_samples)`` for ``n`` training rows.

    Both grow like ``sqrt(n) / 2``: a tree of ``L`` leaves of at least ``m`` rows needs
    ``L m <= n``, and ``L = m = sqrt(n) / 2`` balances how finely a tree splits against how
    many rows back each leaf's estimate (a leaf's scale estimate from 5 rows is noise).
    Leaves are capped at 31 (LightGBM's default) and leaf sizes kept within [5, 20]
    (LightGBM's default 20 stops a 220-row data set from following a steep curve).

    Returns
    -------
    num_leaves, min_child_samples : int
    """
    root = math.sqrt(max(int(n), 1)) / 2.0
    return int(min(max(round(root), 4), 31)), int(min(max(round(root), 5), 20))


def paired_standard_error(diff: np.ndarray, weights=None, axis: int = 0) -> np.ndarray:
    """Standard error of the weighted mean of paired differences ``diff`` along ``axis``.

    ``sqrt(sum_i w_i (d_i - mean)^2 / (n_eff - 1))`` with the weights normalised to sum 1
    and Kish's effective count ``n_eff = 1 / sum_i w_i^2`` (``n`` for equal weights; at
    least 2 counted).  NaN differences propagate.

    Parameters
    ----------
    diff : ndarray
        Paired differences (rows or folds along ``axis``).
    weights : array_like of shape (diff.shape[axis],) or None
        Row or fold weights (None: equal).

    Returns
    -------
    ndarray or float
        The standard error (``diff`` without ``axis``).
    """
    diff = np.moveaxis(np.asarray(diff, dtype=np.float64), axis, 0)
    n = diff.shape[0]
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=np.float64)
    w = w / w.sum()
    n_eff = 1.0 / float(np.sum(w ** 2))
    with np.errstate(invalid="ignore"):
        mean = np.tensordot(w, diff, axes=1)
        var = np.tensordot(w, (diff - mean) ** 2, axes=1)
    return np.sqrt(var / max(n_eff - 1.0, 1.0))


@dataclass(frozen=True)
class FitPlan:
    """Every decision of one fit, taken before its first run (:func:`plan_fit`).

    Attributes
    ----------
    rows : int
        The fit's rows.
    validation : str
        :func:`validation_mode`'s answer.
    folds : int or None
        Folds of the cross-validation (validation "cv").
    training_rows : int
        Rows the trees of the validation run are fitted on (a fold's, the split's, all).
    round_cap : int
        The rounds that run may grow (:func:`round_cap`).
    tree_size : tuple of (int, int)
        What ``num_leaves="auto"`` and ``min_child_samples="auto"`` (shared or per
        parameter) mean in every run of the fit: :func:`auto_tree_size` of
        ``training_rows`` (None in plans saved before it was recorded).
    refit_tree_size : tuple of (int, int) or None
        The same for the refit on all rows: after cross-validation the refit's
        ``rows`` (:func:`auto_tree_size`), after a held-out split the split's trees
        (``tree_size``); None without a refit.
    step : str
        The step rule.
    linear_start : str
        "compared with the constant on the folds", "on the folds", or "none".
    location_start : str
        "none", "point model" or "point model, compared with the constant start".
    compare_location : bool
        Whether the fit is also run without the location start, the better kept.
    fine_leaves : bool
        Whether the location's fine leaves may be tried (validation rows).
    calibrate : bool
        The dispersion shift on the validation rows.
    per_parameter_stopping : bool
    threads : int or None
        Threads of torch, BLAS and the tree backend (None: the libraries' defaults).
    """

    rows: int
    validation: str
    folds: int | None
    training_rows: int
    round_cap: int
    tree_size: tuple[int, int] | None
    refit_tree_size: tuple[int, int] | None
    step: str
    linear_start: str
    location_start: str
    compare_location: bool
    fine_leaves: bool
    calibrate: bool
    per_parameter_stopping: bool
    threads: int | None

    def describe(self) -> str:
        """One line per decision, naming the rule (its threshold constants) behind it."""
        v = self.validation
        how = {"cv": f"{self.folds}-fold cross-validation chooses the rounds, then a refit "
                     f"on all {self.rows:,} rows  [CV_MAX_ROWS = {CV_MAX_ROWS:,}]",
               "holdout_refit": "a held-out split chooses the rounds, then a refit on all "
                                f"{self.rows:,} rows  [REFIT_MAX_ROWS = {REFIT_MAX_ROWS:,}]",
               "holdout": "a held-out split chooses the rounds; its fit is kept  "
                          f"[REFIT_MAX_ROWS = {REFIT_MAX_ROWS:,}]",
               "eval_set": "the eval_set's rows choose the rounds",
               "none": "no early stopping: every round is kept",
               "constant": "one row: the start values are kept"}[v]
        threads = ("the libraries' defaults (the free cores unknown)" if self.threads is None
                   else f"{self.threads}  [SINGLE_THREAD_ROWS = {SINGLE_THREAD_ROWS:,}]")
        size = ("not recorded" if self.tree_size is None
                else f"{self.tree_size[0]} leaves of >= {self.tree_size[1]} rows")
        if self.refit_tree_size is not None and self.refit_tree_size != self.tree_size:
            size += (f"; the refit on all rows {self.refit_tree_size[0]} of >= "
                     f"{self.refit_tree_size[1]}")
        lines = [
            ("rows", f"{self.rows:,}"),
            ("threads", threads),
            ("validation", f"{v}: {how}"),
            ("training rows", f"{self.training_rows:,} per run"),
            ("round cap", f"{self.round_cap:,}  [AUTO_ROUNDS = {AUTO_ROUNDS:,}, "
                          f"AUTO_ROUNDS_STOPPED = {AUTO_ROUNDS_STOPPED:,}]"),
            ("'auto' tree size", size),
            ("step", self.step),
            ("linear start", self.linear_start),
            ("location start", self.location_start
             + (f"  [AUTO_COMPARE_ROWS = {AUTO_COMPARE_ROWS:,}]"
                if "compared" in self.location_start else "")),
            ("fine leaves", "tried on the validation rows where the data call for them"
             if self.fine_leaves else "no"),
            ("calibration", "dispersion shift on the validation rows" if self.calibrate
             else "no"),
            ("per-parameter stopping", "yes" if self.per_parameter_stopping else "no"),
        ]
        width = max(len(k) for k, _ in lines)
        return "\n".join(f"{k:<{width}}  {text}" for k, text in lines)

    def to_dict(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, state: dict | None) -> FitPlan | None:
        if state is None:
            return None
        state = {"refit_tree_size": None, **state}  # plans saved before it was recorded
        for key in ("tree_size", "refit_tree_size"):
            if state[key] is not None:
                state[key] = tuple(state[key])
        return cls(**state)


def _training_rows(validation: str, n: int, fraction: float, folds: int) -> int:
    """Rows the validation run's trees see: a fold's, the held-out split's, or all."""
    if validation == "cv":
        return n - math.ceil(n / folds)  # the largest fold held out (KFold's first)
    if validation in ("holdout", "holdout_refit"):
        return n - math.ceil(n * fraction)  # train_test_split's rounding
    return n


def plan_fit(estimator, n: int, *, has_eval_set: bool, step: str, location,
             threads: int | None) -> FitPlan:
    """The plan of a fit of ``estimator`` on ``n`` rows.

    Parameters
    ----------
    estimator : DistributionalEstimator
        Its options are read (``early_stopping``, ``n_estimators``, ``num_leaves``, ...).
    n : int
        The fit's rows.
    has_eval_set : bool
    step : str
        The step rule resolved from ``step="auto"``.
    location : LocationPlan or None
        The location start's plan (:func:`~distboost.estimators.location_start.
        location_plan`).
    threads : int or None
        The fit's thread count (:func:`~distboost.boosting.threads.num_threads`).

    Returns
    -------
    FitPlan
    """
    mode = validation_mode(estimator.early_stopping, n, has_eval_set)
    folds = min(CV_FOLDS, n) if mode == "cv" else None
    rows = _training_rows(mode, n, estimator.validation_fraction, folds or CV_FOLDS)
    stopped = (mode not in ("none", "constant")
               and estimator.n_iter_no_change is not None)
    refit = (auto_tree_size(n) if mode == "cv"
             else auto_tree_size(rows) if mode == "holdout_refit" else None)
    linear = estimator.linear_start
    if mode != "cv" or not linear:
        linear_text = "none"
    else:
        linear_text = ("compared with the constant on the folds" if linear == "auto"
                       else "on the folds")
    compare = location is not None and bool(location.auto) and n < AUTO_COMPARE_ROWS
    location_text = ("none" if location is None
                     else "point model, compared with the constant start" if compare
                     else "point model")
    validated = mode not in ("none", "constant")
    return FitPlan(
        rows=int(n), validation=mode, folds=folds, training_rows=int(rows),
        round_cap=round_cap(estimator.n_estimators, stopped, rows),
        tree_size=auto_tree_size(rows), refit_tree_size=refit,
        step=step, linear_start=linear_text, location_start=location_text,
        compare_location=compare,
        fine_leaves=validated, calibrate=bool(estimator.calibrate) and validated,
        per_parameter_stopping=bool(getattr(estimator, "per_parameter_stopping", False))
        and stopped,
        threads=threads)


def policy_markdown(estimator, describe_at=(300, 3_000, 30_000)) -> str:
    """The generated section of docs/engine.md: :data:`RULES` as a table, the thresholds'
    values, and ``estimator``'s (a default regressor's) :meth:`FitPlan.describe` at
    ``describe_at`` rows for the Normal on a quiet 2-core machine (not this machine's
    count of free cores)."""
    values = {name: globals()[name] for name in THRESHOLDS}
    out = ["| option | when | what it does | why | thresholds |", "|---|---|---|---|---|"]
    for r in RULES:
        consts = ", ".join(f"`{c}`" for c in r.constants) or "-"
        out.append(f"| `{r.option}` | {r.when} | {r.what} | {r.why} ([measured]"
                   f"({r.anchor})) | {consts} |")
    out += ["", "| threshold | value |", "|---|---|"]
    out += [f"| `{k}` | {v:,} |" for k, v in values.items()]
    for n in describe_at:
        plan = plan_fit(estimator, n, has_eval_set=False, step="natural", location=None,
                        threads=1 if n < SINGLE_THREAD_ROWS else 2)
        out += ["", f"A default Normal fit on {n:,} rows on a quiet 2-core machine "
                "(`fit_plan_.describe()`):", "", "```text", plan.describe(), "```"]
    return "\n".join(out) + "\n"
