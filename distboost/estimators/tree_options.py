"""Tree options of a fit: LightGBM's passthrough options and ``param_options`` resolved.

The estimators take LightGBM's tree options (``monotone_constraints``,
``interaction_constraints``, ``min_split_gain``, ``extra_trees``, ``path_smooth``,
``max_cat_to_onehot``) for every parameter's trees, and ``param_options`` to override any
tree option for one distribution parameter, e.g.::

    param_options={"scale": {"features": ["age", "wc"], "num_leaves": 4,
                             "learning_rate": 0.02},
                   "loc": {"monotone_constraints": {"price": 1}}}

:func:`resolve_tree_options` checks both against X once per fit (features by name or
position; clear errors naming the option, the parameter and the column) and turns them into
column positions of the matrix the trees split on.  :meth:`TreeOptions.engine_fields` then
gives the engine's fields for one run: the shared options, and ``per_parameter`` (one
booster per raw output, grown in lockstep: :mod:`distboost.boosting.per_parameter`) only
when the outputs' options differ; otherwise today's single booster is kept.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pandas as pd
from sklearn.utils._param_validation import InvalidParameterError, validate_parameter_constraints

from .._validation import resolve_columns
from .options import LIGHTGBM_OPTIONS, auto_tree_size

__all__ = ["TreeOptions", "resolve_tree_options", "PARAM_OPTION_KEYS", "LIGHTGBM_OPTIONS"]

#: Options ``param_options`` may set for one parameter (all are EngineParams fields but
#: ``features``).
PARAM_OPTION_KEYS = ("features", "learning_rate", "num_leaves", "max_depth",
                     "min_child_samples", "subsample", "colsample", "reg_lambda", "max_bin",
                     *LIGHTGBM_OPTIONS)
#: Those a scikit-learn ``base_learner`` can honour.
_GENERIC_KEYS = ("features", "learning_rate", "subsample", "colsample")
_DEFAULTS = {"monotone_constraints": None, "interaction_constraints": None,
             "min_split_gain": 0.0, "extra_trees": False, "path_smooth": 0.0,
             "max_cat_to_onehot": 4}


@dataclass
class TreeOptions:
    """The resolved tree options of a fit.

    Attributes
    ----------
    shared : dict
        EngineParams fields for every output (constraints as column positions of the tree
        matrix).
    outputs : list of (dict, tuple of int or None)
        Per raw output: the EngineParams fields it overrides, and the positions of its
        columns in the tree matrix (None: all).
    """

    shared: dict
    outputs: list

    @property
    def restricted(self) -> bool:
        """True when some output is monotone in a feature or limited to some columns (a
        linear start could break either)."""
        mono = self.shared.get("monotone_constraints") is not None
        return mono or any(cols is not None or ov.get("monotone_constraints") is not None
                           for ov, cols in self.outputs)

    def engine_fields(self, params, n: int, auto_sizes: tuple[int, int] | None = None
                      ) -> dict:
        """The EngineParams fields of a run on ``n`` rows whose shared options are
        ``params``: ``per_parameter`` when the outputs' options differ, else none (a
        parameter's "auto" tree size is ``auto_sizes``, the fit's plan, or
        :func:`~distboost.estimators.options.auto_tree_size` of ``n`` when None)."""
        sizes = auto_tree_size(n) if auto_sizes is None else auto_sizes
        auto = dict(zip(("num_leaves", "min_child_samples"), sizes, strict=True))
        subs = [(dataclasses.replace(params, **{k: auto[k] if v == "auto" else v
                                                for k, v in ov.items()}), cols)
                for ov, cols in self.outputs]
        if all(cols is None and sub == params for sub, cols in subs):
            return {}
        return {"per_parameter": tuple(subs)}


def _check(name: str, value, where: str):
    from .options import OPTIONS

    try:
        validate_parameter_constraints({name: OPTIONS[name].constraints}, {name: value},
                                       caller_name=where)
    except InvalidParameterError as err:
        raise ValueError(str(err)) from None


class _Columns:
    """Maps X's columns, by name or position, to positions in the tree matrix."""

    def __init__(self, X, tree_index):
        self.X = X
        self.p = X.shape[1]
        self.tree_index = np.asarray(tree_index, dtype=np.intp)
        self.where = {int(j): t for t, j in enumerate(self.tree_index)}
        self.names = ([str(c) for c in X.columns] if isinstance(X, pd.DataFrame)
                      else [f"x{j}" for j in range(self.p)])

    def categorical(self, j: int) -> bool:
        return isinstance(self.X, pd.DataFrame) and not pd.api.types.is_numeric_dtype(
            self.X.iloc[:, j].dtype)

    def tree_positions(self, spec, what: str) -> list[int]:
        index, names = resolve_columns(list(spec), self.X, what, numeric_only=False)
        outside = [n for j, n in zip(index, names, strict=True) if int(j) not in self.where]
        if outside:
            raise ValueError(
                f"{what} names the column(s) {outside}, which the trees do not split on (the "
                f"trees use {[self.names[j] for j in self.tree_index]}).")
        return [self.where[int(j)] for j in index]

    def monotone(self, spec, what: str) -> tuple | None:
        """-1/0/1 per tree column from a dict ``{column: direction}`` or one value per
        column of X; None when all are 0."""
        if spec is None:
            return None
        if isinstance(spec, dict):
            keys, values = list(spec), list(spec.values())
        else:
            values = list(np.asarray(spec, dtype=object).reshape(-1))
            if len(values) != self.p:
                raise ValueError(
                    f"{what} has {len(values)} entries for the {self.p} columns of X; give one "
                    "direction (-1, 0 or 1) per column, or a dict {column: direction}.")
            keys = list(range(self.p))
        bad = [v for v in values if not (isinstance(v, int | np.integer | float)
                                          and v in (-1, 0, 1))]
        if bad:
            raise ValueError(f"{what} holds {bad[:3]}; each direction must be -1 (decreasing),"
                             " 0 (free) or 1 (increasing).")
        out = [0] * len(self.tree_index)
        for key, value in zip(keys, values, strict=True):
            if value == 0:
                continue
            (t,) = self.tree_positions([key], what)
            j = int(self.tree_index[t])
            if self.categorical(j):
                raise ValueError(f"{what} constrains the categorical column "
                                 f"{self.names[j]!r}; a direction needs an ordered, numeric "
                                 "column.")
            out[t] = int(value)
        return tuple(out) if any(out) else None

    def interactions(self, spec, what: str) -> tuple | None:
        """Lists of tree positions from lists of columns."""
        if spec is None:
            return None
        groups = list(spec)
        if not groups or any(isinstance(g, str | int | np.integer) for g in groups):
            raise ValueError(f"{what} must be a list of lists of columns, e.g. "
                             "[['a', 'b'], ['c']]: the features in one list may interact.")
        return tuple(tuple(self.tree_positions(g, what)) for g in groups)


def _subset(shared_mono, shared_inter, cols):
    """The shared constraints restricted to the columns ``cols`` (positions renumbered)."""
    pos = {t: i for i, t in enumerate(cols)}
    mono = None
    if shared_mono is not None:
        mono = tuple(shared_mono[t] for t in cols)
        mono = mono if any(mono) else None
    inter = None
    if shared_inter is not None:
        inter = tuple(g for g in (tuple(pos[t] for t in grp if t in pos)
                                  for grp in shared_inter) if g)
    return mono, inter


def resolve_tree_options(estimator, X, tree_index, output_params: list[str],
                         param_names: list[str]) -> TreeOptions:
    """Check an estimator's tree options against X and resolve them to tree positions.

    Parameters
    ----------
    estimator
        Has the options of :data:`LIGHTGBM_OPTIONS`, ``param_options`` and
        ``base_learner`` (absent options: defaults).
    X : ndarray or DataFrame of shape (n, p)
        The validated training features.
    tree_index : array_like of int
        Positions in X of the columns the trees split on.
    output_params : list of str
        The parameter each raw output belongs to (length K).
    param_names : list of str
        The keys ``param_options`` may use.

    Returns
    -------
    TreeOptions
    """
    cols = _Columns(X, tree_index)
    values = {name: getattr(estimator, name, default) for name, default in _DEFAULTS.items()}
    base_learner = getattr(estimator, "base_learner", None)
    if base_learner is not None:
        changed = [k for k, v in values.items() if v != _DEFAULTS[k]]
        if changed:
            raise ValueError(f"{changed} are LightGBM options; a scikit-learn base_learner "
                             "cannot use them (set base_learner=None).")
    shared = dict(values)
    shared["monotone_constraints"] = cols.monotone(values["monotone_constraints"],
                                                   "monotone_constraints")
    shared["interaction_constraints"] = cols.interactions(values["interaction_constraints"],
                                                          "interaction_constraints")
    per = getattr(estimator, "param_options", None) or {}
    unknown = [k for k in per if k not in param_names]
    if unknown:
        raise ValueError(f"param_options has the key(s) {unknown}, which are not parameters "
                         f"of this model; its parameters are {list(param_names)}.")
    resolved = {}
    for name, opts in per.items():
        where = f"param_options[{name!r}]"
        if not isinstance(opts, dict):
            raise ValueError(f"{where} must be a dict of tree options, got "
                             f"{type(opts).__name__}.")
        allowed = _GENERIC_KEYS if base_learner is not None else PARAM_OPTION_KEYS
        bad = [k for k in opts if k not in allowed]
        if bad:
            raise ValueError(f"{where} has the option(s) {bad}; it takes {list(allowed)}"
                             + (" with a scikit-learn base_learner." if base_learner is not None
                                else "."))
        ov = {}
        for key, value in opts.items():
            if key == "features":
                if value is None or isinstance(value, str) or not len(value):
                    raise ValueError(f"{where}['features'] must be a non-empty list of "
                                     "columns (names or positions).")
                continue
            if key == "monotone_constraints":
                ov[key] = cols.monotone(value, f"{where}['monotone_constraints']")
            elif key == "interaction_constraints":
                ov[key] = cols.interactions(value, f"{where}['interaction_constraints']")
            else:
                _check(key, value, where)
                ov[key] = value
        feats = None
        if "features" in opts:
            feats = tuple(sorted(cols.tree_positions(opts["features"], f"{where}['features']")))
        resolved[name] = (ov, feats)
    outputs = []
    for name in output_params:
        ov, feats = resolved.get(name, ({}, None))
        ov = dict(ov)
        if feats is not None:
            mono, inter = _subset(ov.pop("monotone_constraints", shared["monotone_constraints"]),
                                  ov.pop("interaction_constraints",
                                         shared["interaction_constraints"]), feats)
            dropped = _dropped(opts_mono=resolved[name][0].get("monotone_constraints"),
                               feats=feats)
            if dropped:
                raise ValueError(
                    f"param_options[{name!r}]['monotone_constraints'] constrains the "
                    f"column(s) {[cols.names[int(cols.tree_index[t])] for t in dropped]}, "
                    f"which param_options[{name!r}]['features'] leaves out.")
            if inter == ():
                raise ValueError(
                    f"param_options[{name!r}]['features'] keeps no column of any "
                    "interaction_constraints group, so its trees could split on nothing; "
                    "add its columns to a group.")
            ov["monotone_constraints"], ov["interaction_constraints"] = mono, inter
        outputs.append((ov, feats))
    return TreeOptions(shared, outputs)


def _dropped(opts_mono, feats) -> list[int]:
    """Tree positions a parameter's own monotone constraint sets outside its features."""
    if opts_mono is None:
        return []
    keep = set(feats)
    return [t for t, v in enumerate(opts_mono) if v and t not in keep]
