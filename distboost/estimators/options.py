"""Every estimator option, declared once: default, constraint and documentation.

scikit-learn's estimators hold their options as ``__init__`` keyword arguments (``get_params``
reads the signature).  Four estimators share the engine's options, so instead of four copies
of the same signature, docstring and ``_parameter_constraints``, each option is one row of
:data:`OPTIONS`, and a class that lists the options it takes in ``_options`` (with its own
defaults in ``_defaults``) gets its ``__init__`` (storing the arguments, nothing else: the
scikit-learn rule), its ``_parameter_constraints`` and the "Parameters" section of its
docstring generated from the table by :class:`OptionsMixin`.  The generated ``__init__`` is
plain Python code with a real signature (the ``dataclasses`` technique), so ``inspect``,
``get_params``, ``clone`` and notebooks' signature help see every option and its default.
"""

from __future__ import annotations

import dataclasses
import textwrap
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from ..boosting import STEP_RULES, EngineParams
from ..families import Family
from .policy import (
    AUTO_COMPARE_ROWS,
    AUTO_ROUNDS,
    AUTO_ROUNDS_STOPPED,
    CV_MAX_ROWS,
    REFIT_MAX_ROWS,
    SINGLE_THREAD_ROWS,
    TUNING_MAX_ROWS,
    auto_tree_size,
)
from .policy import round_cap as resolve_n_estimators

__all__ = ["OPTIONS", "ENGINE_OPTIONS", "LIGHTGBM_OPTIONS", "Option", "OptionsMixin",
           "auto_tree_size", "engine_params", "resolve_n_estimators", "AUTO_ROUNDS",
           "AUTO_ROUNDS_STOPPED"]


@dataclass(frozen=True)
class Option:
    """One estimator option: its default, scikit-learn constraints, type and description."""

    default: Any
    constraints: list
    type: str
    doc: str


_POSITIVE_INT = [Interval(Integral, 1, None, closed="left")]

#: The options, in signature order.  A class's ``_defaults`` override ``default`` and its
#: ``_docs`` override ``doc``.
OPTIONS: dict[str, Option] = {
    "family": Option(
        "normal", [str, Family], "str or Family",
        "The conditional distribution of ``y`` (``distboost.families.available()``)."),
    "scoring_rule": Option(
        "nll", [StrOptions({"nll", "crps"})], '{"nll", "crps"}',
        "The loss the trees minimise: the negative log-likelihood (the log score), or the "
        "CRPS in closed form (families with ``closed_form_crps``; NGBoost's ``CRPScore``), "
        "which weighs the tails less.  Early stopping judges the same rule."),
    "n_estimators": Option(
        "auto", [*_POSITIVE_INT, StrOptions({"auto"})], 'int or "auto"',
        "Maximum number of boosting rounds (each grows one tree per parameter).  \"auto\": "
        f"{AUTO_ROUNDS_STOPPED} (``AUTO_ROUNDS_STOPPED``) when early stopping ends a fit on "
        f"{CV_MAX_ROWS:,} (``CV_MAX_ROWS``) training rows or more (validation rows and "
        f"``n_iter_no_change``), {AUTO_ROUNDS} (``AUTO_ROUNDS``) otherwise "
        "(:mod:`distboost.estimators.policy`)."),
    "learning_rate": Option(
        0.05, [Interval(Real, 0.0, None, closed="neither")], "float",
        "Shrinkage of every tree (measurements behind the default: ``docs/engine.md``)."),
    "step": Option(
        "auto", [StrOptions(set(STEP_RULES) | {"auto"})],
        '{"auto", "natural", "fisher", "newton", "gradient"}',
        "How each round turns gradients into tree targets: the damped natural gradient "
        "(full Fisher solve per row, NGBoost's rule), the diagonal expected Fisher "
        "information as curvature, the guarded diagonal Hessian, or the plain gradient "
        "(``distboost.boosting.derivatives``).  \"auto\": the family's ``default_step`` "
        "(\"newton\" for ``scoring_rule=\"crps\"``)."),
    "num_leaves": Option(
        "auto", [Interval(Integral, 2, None, closed="left"), StrOptions({"auto"})],
        'int or "auto"',
        "Maximum leaves per tree.  \"auto\": ``clip(round(sqrt(n) / 2), 4, 31)`` for ``n`` "
        "training rows (:func:`auto_tree_size`); on repeated records the location's trees (a "
        "family with a scalar location) may get 31 when that wins (:mod:`distboost."
        "estimators.leaf_size`, fitted "
        "``location_num_leaves_``)."),
    "max_depth": Option(
        -1, [Interval(Integral, -1, None, closed="left")], "int",
        "Maximum tree depth (-1: no limit beyond ``num_leaves``)."),
    "min_child_samples": Option(
        "auto", [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"})],
        'int or "auto"',
        "Minimum rows in a leaf.  \"auto\": ``clip(round(sqrt(n) / 2), 5, 20)``; on "
        "near-deterministic data and on repeated records the location's leaves may go "
        "down to 2 rows when that wins (:mod:`distboost.estimators.leaf_size`, fitted "
        "``location_min_child_samples_``)."),
    "subsample": Option(
        1.0, [Interval(Real, 0.0, 1.0, closed="right")], "float",
        "Fraction of rows drawn (without replacement) for each round."),
    "colsample": Option(
        1.0, [Interval(Real, 0.0, 1.0, closed="right")], "float",
        "Fraction of features considered by each tree."),
    "reg_lambda": Option(
        0.0, [Interval(Real, 0.0, None, closed="left")], "float",
        "L2 penalty on leaf values, in units of the curvature (rescaled to a mean of one per "
        "row and parameter at the start values)."),
    "max_bin": Option(
        255, [Interval(Integral, 2, None, closed="left")], "int",
        "Histogram bins per feature (LightGBM)."),
    "monotone_constraints": Option(
        None, [dict, "array-like", None], "dict or sequence",
        "Directions the raw (link-scale) scores must follow in some columns, for every "
        "parameter's trees: ``{column: 1}`` (increasing), ``-1`` (decreasing), ``0`` (free), "
        "columns by name or position, or one direction per column (LightGBM's "
        "``monotone_constraints``).  Restrict one parameter with ``param_options``.  A "
        "constraint turns the ``\"auto\"`` linear start off (a linear slope could break it)."),
    "interaction_constraints": Option(
        None, ["array-like", None], "list of lists",
        "Groups of columns (names or positions) that may appear together on one tree "
        "branch, e.g. ``[[\"a\", \"b\"], [\"c\"]]`` (LightGBM's "
        "``interaction_constraints``); a column in no group is not used."),
    "min_split_gain": Option(
        0.0, [Interval(Real, 0.0, None, closed="left")], "float",
        "Minimum gain of a split (LightGBM's ``min_gain_to_split``), in the units of the "
        "rescaled curvature (see ``reg_lambda``)."),
    "extra_trees": Option(
        False, ["boolean"], "bool",
        "Extremely randomised trees: one random threshold per feature at each split "
        "(LightGBM's ``extra_trees``; seeded by ``random_state``)."),
    "epistemic_members": Option(
        0, [Interval(Integral, 0, None, closed="left")], "int",
        "Members trained beside the model for ``predict_uncertainty``'s epistemic variance: "
        "this many further fits of the same options with extremely randomised trees "
        "(``extra_trees=True``) and their own seeds, and below ``CV_MAX_ROWS`` rows the "
        "fold models of each (``epistemic_members_``).  They disagree where few training "
        "rows support a prediction (a thin stretch, a sparsely filled hole); an extremely "
        "randomised fit runs several times the rounds of the plain one (the cost, "
        "docs/conformal.md).  0: none; ``predict_uncertainty`` then uses the fold models or "
        "the virtual ensemble."),
    "path_smooth": Option(
        0.0, [Interval(Real, 0.0, None, closed="left")], "float",
        "Shrinks each leaf's value towards its parent's (LightGBM's ``path_smooth``)."),
    "max_cat_to_onehot": Option(
        4, [Interval(Integral, 1, None, closed="left")], "int",
        "Categorical columns with at most this many levels are split one level against the "
        "rest (LightGBM's ``max_cat_to_onehot``)."),
    "param_options": Option(
        None, [dict, None], "dict",
        "Tree options for one distribution parameter, overriding the shared ones for its "
        "trees: ``{\"scale\": {\"features\": [\"a\", \"b\"], \"num_leaves\": 4, "
        "\"learning_rate\": 0.02}, \"loc\": {\"monotone_constraints\": {\"price\": 1}}}``. "
        "Keys are the family's parameter names; values may set ``features`` (the columns "
        "its trees may split on), ``learning_rate`` (multiplies that parameter's step), "
        "``num_leaves``, ``max_depth``, ``min_child_samples``, ``subsample``, "
        "``colsample``, ``reg_lambda``, ``max_bin`` and the LightGBM options above.  When "
        "the parameters' options differ, one booster per parameter is grown in lockstep "
        "(:mod:`distboost.boosting.per_parameter`); otherwise a single booster."),
    "calibrate": Option(
        True, ["boolean"], "bool",
        "When validation rows are used (early stopping or ``eval_set``), shift the raw score "
        "of the family's dispersion parameter (``Family.dispersion_param``, e.g. the "
        "Normal's ``scale``) by the one constant that minimises the validation loss "
        "(:mod:`distboost.estimators.dispersion_shift`); early stopping judges every round at "
        "its own best shift.  The shift is in ``dispersion_shift_``."),
    "linear_start": Option(
        "auto", [StrOptions({"auto"}), "boolean"], '"auto" or bool',
        "When the rounds are chosen by cross-validation (small data), start boosting from a "
        "ridge-penalised linear model of every raw parameter but the dispersion (GAMLSS; the "
        "AFT model for censored times) if cross-validation prefers it to the constant start "
        "by more than one standard error (:mod:`distboost.estimators.linear_start`).  "
        "Its numeric columns are clipped to their training range, so that it does not "
        "extrapolate (constant outside, as the trees).  "
        "True: the same choice, asked for explicitly: an error where it cannot apply "
        "(with ``monotone_constraints`` or ``param_options`` 'features', where \"auto\" "
        "takes the constant start) or with ``location_start=\"gbm\"``.  "
        "False: always the constant start (the weighted marginal MLE)."),
    "location_start": Option(
        None, [StrOptions({"auto", "gbm"}), dict, None], '{"auto", "gbm"}, dict or None',
        "Start the location parameter's raw score, row by row, from a point model: "
        "LightGBM's L2 regressor of ``y`` (``log y`` for the LogNormal) fitted on the "
        "training rows, its rounds early-stopped on the same validation rows (or chosen on "
        "the cross-validation folds); the distribution's trees then boost from there "
        "(:mod:`distboost.estimators.location_start`).  \"gbm\": always (an error where it "
        "cannot apply: a family without a location, censored targets, constraints, another "
        "tree backend, or no validation rows); a dict sets the point model's "
        "``num_leaves``, ``learning_rate``, ``min_child_samples`` and ``n_estimators`` (the "
        "cap of its rounds; all of them with ``early_stopping=False``); \"auto\": the "
        "Normal, Laplace, Logistic, Gumbel and LogNormal families when the point model "
        "beats the constant on the validation rows and, below ``AUTO_COMPARE_ROWS`` "
        f"({AUTO_COMPARE_ROWS:,}) training rows, the fit from it beats the fit without it "
        "there by more than one standard error (below ``CV_MAX_ROWS`` rows only when the "
        "linear start is not chosen); None: the constant start.  "
        "The training rows start from out-of-fold predictions of the point model (5 "
        "folds), so that the spread is fitted to honest residuals.  The start is in "
        "``location_start_``; ``explain`` adds the point model's SHAP values to the "
        "location's."),
    "tuning": Option(
        None, [StrOptions({"auto"}), None], '"auto" or None',
        "\"auto\": before the fit, a seeded random search of ``num_leaves``, "
        "``min_child_samples``, ``learning_rate`` and the point model of ``location_start`` "
        "on validation rows (the ``eval_set``, or a seeded split of at least 20 % of the "
        "rows); budget: at most 8 candidate fits (the given options among them) on at most "
        f"``TUNING_MAX_ROWS`` ({TUNING_MAX_ROWS:,}) training rows each, then one ordinary fit "
        "with the best (with its refit on all rows, see ``early_stopping``), which replaces "
        "the "
        "given options only when it beats them by more than one standard error of the paired "
        "per-row validation loss (:mod:`distboost.estimators.tuning`; ``progress`` draws a "
        "bar over the candidates).  The search is ``tuning_table_``.  None: the options as "
        "given."),
    "early_stopping": Option(
        "auto", [StrOptions({"auto", "cv", "holdout", "holdout_refit"}), "boolean"],
        '{"auto", "cv", "holdout", "holdout_refit"} or bool',
        "How the number of rounds is chosen, on rows the trees do not see: stop when the "
        "validation loss has not improved for ``n_iter_no_change`` rounds.  \"cv\": 5-fold "
        "cross-validation on the training rows (one-standard-error rule), then a refit on all "
        "rows; \"holdout\": a seeded split of ``validation_fraction`` of the rows; "
        "\"holdout_refit\": that split chooses each parameter's rounds and the dispersion "
        "shift, then a refit on all rows keeps the rounds times ``n / n_fit`` (two fits); "
        f"\"auto\" (and True): \"cv\" below ``CV_MAX_ROWS`` ({CV_MAX_ROWS:,}) training "
        f"rows, \"holdout_refit\" below ``REFIT_MAX_ROWS`` ({REFIT_MAX_ROWS:,}), "
        "\"holdout\" above (:mod:`distboost.estimators.policy`); False: every "
        "round is kept.  An "
        "``eval_set`` given to ``fit`` is always the validation set; ``early_stopping_`` "
        "records what was used."),
    "validation_fraction": Option(
        0.1, [Interval(Real, 0.0, 1.0, closed="neither")], "float",
        "Share of the training rows held out for early stopping when no ``eval_set`` is "
        "given."),
    "n_iter_no_change": Option(
        20, _POSITIVE_INT, "int",
        "Patience of early stopping, in rounds."),
    "per_parameter_stopping": Option(
        True, ["boolean"], "bool",
        "Each parameter keeps its own number of rounds: after the joint early stop, every "
        "parameter but the dispersion (a Normal's location) grows on alone, judged on the "
        "validation rows beside the dispersion at its best round, until it has not "
        "improved for as many rounds as the joint phase took to reach that round (at least "
        "``n_iter_no_change``; :mod:`distboost.boosting.output_stopping`;"
        " under cross-validation the refit adds the folds' mean gain).  The rounds kept are "
        "``best_iterations_``; ``best_iteration_`` is their maximum.  No effect for a family "
        "without a dispersion parameter or without early stopping.  False: one shared "
        "round (faster; measurements behind the default: ``docs/engine.md``)."),
    "links": Option(
        None, [dict, None], "dict",
        "Link overrides by parameter name, e.g. ``{\"scale\": \"softplus\"}``."),
    "base_learner": Option(
        None, [None, HasMethods(["fit", "predict"])], "sklearn regressor",
        "None: LightGBM histogram trees.  Otherwise any scikit-learn regressor (e.g. "
        "``DecisionTreeRegressor(max_depth=3)``), cloned for every round and parameter."),
    "backend": Option(
        None, [StrOptions({"lightgbm", "xgboost"}), None], '{"lightgbm", "xgboost"} or None',
        "The tree library: LightGBM (None, the default) or XGBoost (``\"xgboost\"``, the "
        "trees of :mod:`distboost.dask` models; needs the ``dask`` extra).  Ignored with a "
        "``base_learner``."),
    "device": Option(
        "cpu", [str], "str",
        "Where the trees grow and the derivatives run: \"cpu\" or a CUDA device "
        "(\"cuda\", \"cuda:1\"), with ``backend=\"xgboost\"`` (XGBoost's GPU trees; "
        "needs the ``xgboost`` package with CUDA and torch with CUDA).  The scores and the "
        "family's derivatives stay on the GPU between rounds; the fitted model predicts on "
        "the CPU (``docs/engine.md``, \"GPU\")."),
    "random_state": Option(
        None, ["random_state"], "int",
        "Seed of subsampling, the validation split and the cross-validation folds."),
    "n_jobs": Option(
        None, [Integral, None], "int",
        "Threads of a fit: LightGBM's, and torch's intra-op threads while ``fit`` runs (set "
        f"back after).  None: one thread below ``SINGLE_THREAD_ROWS`` ({SINGLE_THREAD_ROWS:,}) "
        "training rows; above, one per core that "
        "other processes leave free when the fit starts (:mod:`distboost.boosting.threads`; "
        "see ``docs/engine.md``, \"Threads and a busy machine\")."),
    "verbose": Option(
        0, ["verbose"], "int",
        "Print the fit's plan (``fit_plan_.describe()``) when it starts, the training and "
        "validation loss every ``verbose`` rounds, and at the end the line \"stopped at "
        "round k, best round j, because ...\"."),
    "progress": Option(
        False, ["boolean", None], "bool or None",
        "Show a progress bar over the boosting rounds of ``fit`` (``tqdm.auto``: a widget "
        "in a notebook, which needs ``ipywidgets``, a text bar on stderr), one per "
        "cross-validation fold on small data.  None is \"auto\": a bar in a Jupyter "
        "notebook or on a terminal, none in logs and CI."),
}


#: The options that are fields of :class:`~distboost.boosting.EngineParams` (its other fields,
#: ``clip_gradients`` and ``per_parameter``, are off unless an estimator sets them).
ENGINE_OPTIONS = tuple(f.name for f in dataclasses.fields(EngineParams) if f.name in OPTIONS)
#: LightGBM's options passed through to every parameter's trees; an estimator's values reach
#: the engine through :func:`~distboost.estimators.tree_options.resolve_tree_options` (names
#: to column positions).
LIGHTGBM_OPTIONS = ("monotone_constraints", "interaction_constraints", "min_split_gain",
                    "extra_trees", "path_smooth", "max_cat_to_onehot")


def _resolve_auto_sizes(fields: dict, n: int, auto: tuple[int, int] | None = None) -> dict:
    """``num_leaves`` and ``min_child_samples`` given as "auto" resolved to ``auto``, or for
    ``n`` rows (:func:`auto_tree_size`) when None."""
    leaves, min_rows = auto_tree_size(n) if auto is None else auto
    out = dict(fields)
    if out.get("num_leaves") == "auto":
        out["num_leaves"] = leaves
    if out.get("min_child_samples") == "auto":
        out["min_child_samples"] = min_rows
    return out


def engine_params(n: int, **overrides) -> EngineParams:
    """The engine's options at the estimators' defaults for ``n`` training rows.

    Parameters
    ----------
    n : int
        Training rows (resolves the "auto" tree sizes, :func:`auto_tree_size`).
    **overrides
        EngineParams fields to set (``step`` defaults to "fisher", the step the estimators'
        "auto" resolves to for most families).

    Returns
    -------
    EngineParams
    """
    fields = {name: OPTIONS[name].default for name in ENGINE_OPTIONS}
    fields["step"] = "fisher"
    fields.update(overrides)
    fields["n_estimators"] = resolve_n_estimators(fields["n_estimators"], False, n)
    return EngineParams(**_resolve_auto_sizes(fields, n))


def _make_init(names: tuple[str, ...], n_positional: int, defaults: dict, qualname: str):
    """A plain ``__init__`` storing ``names`` (the first ``n_positional`` may be given by
    position), generated as source so that its signature is real."""
    args = ["self"]
    for i, name in enumerate(names):
        if i == n_positional:
            args.append("*")
        args.append(f"{name}=__defaults[{name!r}]")
    body = "\n".join(f"    self.{name} = {name}" for name in names) or "    pass"
    source = f"def __init__({', '.join(args)}):\n{body}\n"
    namespace: dict = {}
    exec(source, {"__defaults": defaults}, namespace)  # noqa: S102 (generated, no input)
    init = namespace["__init__"]
    init.__qualname__ = f"{qualname}.__init__"
    return init


def _parameters_doc(names, defaults: dict, table: dict, docs: dict) -> str:
    """The numpydoc "Parameters" section of ``names`` (``docs`` overrides descriptions)."""
    lines = ["Parameters", "----------"]
    for name in names:
        lines.append(f"{name} : {table[name].type}, default={defaults[name]!r}")
        lines.extend("    " + line for line in _wrap(docs.get(name, table[name].doc)))
    return "\n".join(lines)


def _fill(doc: str | None, token: str, text: str) -> str | None:
    """``doc`` with the line ``token`` replaced by ``text``, indented as the token."""
    if not doc or token not in doc:
        return doc
    indent = doc.split(token)[0].rsplit("\n", 1)[-1]
    return doc.replace(token, text.replace("\n", "\n" + indent))


def _wrap(text: str, width: int = 88) -> list[str]:
    return textwrap.wrap(text, width) or [""]


class OptionsMixin:
    """Generates ``__init__``, ``_parameter_constraints`` and the parameter docs of a class.

    A subclass sets ``_options`` (option names in signature order; the first
    ``_n_positional`` may be passed by position), optionally ``_defaults`` (defaults that
    differ from :data:`OPTIONS`), ``_extra_options`` (its own options:
    ``name -> Option``) and ``_docs`` (descriptions that differ).  Its docstring's line
    ``{parameters}`` is replaced by the generated "Parameters" section, and ``{attributes}``
    by an "Attributes" section starting with ``_attribute_docs``.
    """

    _options: tuple[str, ...] = ()
    _n_positional: int = 0
    _defaults: dict = {}
    _extra_options: dict = {}
    _docs: dict = {}
    #: Docstring text of the fitted attributes every subclass shares (replaces a line
    #: ``{attributes}``).
    _attribute_docs: str = ""

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "_options" not in cls.__dict__:
            return
        table = {**OPTIONS, **cls._extra_options}
        unknown = [n for n in cls._options if n not in table]
        if unknown:
            raise TypeError(f"{cls.__name__} lists unknown options {unknown}.")
        defaults = {n: cls._defaults.get(n, table[n].default) for n in cls._options}
        cls.__init__ = _make_init(cls._options, cls._n_positional, defaults, cls.__qualname__)
        cls._parameter_constraints = {n: table[n].constraints for n in cls._options}
        cls.__doc__ = _fill(cls.__doc__, "{parameters}",
                            _parameters_doc(cls._options, defaults, table, cls._docs))
        cls.__doc__ = _fill(cls.__doc__, "{attributes}",
                            "Attributes\n----------\n" + cls._attribute_docs)

    def _engine_params(self, step: str, n: int, seed: int, tree_options=None,
                       auto_sizes: tuple[int, int] | None = None,
                       **overrides) -> EngineParams:
        """The engine's options for a fit on ``n`` training rows with the integer ``seed``
        (no side effects); ``tree_options`` (a
        :class:`~distboost.estimators.tree_options.TreeOptions`) adds the LightGBM options
        and the per-parameter backend when needed; ``auto_sizes`` is what the "auto" tree
        sizes mean (a fit's plan, ``FitPlan.tree_size``; None: :func:`auto_tree_size` of
        ``n``)."""
        # The tree options come resolved against X (column positions) from ``tree_options``.
        fields = {name: OPTIONS[name].default if name in LIGHTGBM_OPTIONS
                  else getattr(self, name, OPTIONS[name].default) for name in ENGINE_OPTIONS}
        fields.update(step=step, random_state=seed)
        if fields["base_learner"] is not None:
            fields["backend"] = None
        fields = _resolve_auto_sizes(fields, n, auto_sizes)
        if tree_options is not None:
            fields.update(tree_options.shared)
        fields.update(overrides)
        fields["n_estimators"] = resolve_n_estimators(
            fields["n_estimators"], fields["n_iter_no_change"] is not None, n)
        params = EngineParams(**fields)
        if tree_options is not None:
            params = dataclasses.replace(params, **tree_options.engine_fields(
                params, n, auto_sizes))
        return params
