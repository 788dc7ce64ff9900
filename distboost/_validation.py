"""Input validation for the estimators, in one place and one style.

Every check raises ``ValueError`` whose message names the problem, the argument and how many
rows are affected, before any torch or LightGBM code sees the data (:func:`check_target` the
target against a family's support, through the family's own ``validate_y``).  The table of bad
inputs and their errors is in ``docs/errors.md``.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import pandas as pd
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.validation import validate_data

__all__ = ["check_target", "check_X", "check_sample_weight", "check_eval_set",
           "check_consistent_rows", "int_seed", "take_rows", "resolve_columns", "take_columns",
           "numeric_columns", "numeric_text", "numeric_text_counts"]


def check_X(estimator, X, *, reset: bool):
    """Validate the feature matrix and record or check its shape and column names.

    A pandas DataFrame stays a DataFrame (so that LightGBM sees its categorical columns;
    string and object columns become ``category`` with the categories seen in ``fit``).  A
    text column of numbers with at most a few non-numeric tokens ("n/a", "?") is read as
    numbers, the tokens as NaN, with a ``DataConversionWarning`` naming the column, the
    tokens and their rows (:func:`numeric_text`); a pandas Categorical always stays one.
    Anything else becomes a 2-D float64 ndarray (float32 stays float32); NaN is allowed
    (trees route missing values), infinite values are not.

    Parameters
    ----------
    estimator : BaseEstimator
        Receives ``n_features_in_`` and ``feature_names_in_`` when ``reset`` is True.
    X : array_like or DataFrame of shape (n, p)
    reset : bool
        True in ``fit``; False at predict time (then shape and names must match ``fit``).

    Returns
    -------
    ndarray or DataFrame of shape (n, p)
    """
    if isinstance(X, pd.DataFrame):
        # Records or checks feature_names_in_ and n_features_in_; the frame stays a frame.
        validate_data(estimator, X, reset=reset, skip_check_array=True)
        if X.shape[0] == 0:
            raise ValueError(f"X has 0 rows (shape {X.shape}); at least 1 row is required.")
        X = X.copy()
        if reset:
            estimator._categories_ = {}
        fitted = getattr(estimator, "_categories_", {})
        for col in X.columns:
            dtype = X[col].dtype
            is_cat = isinstance(dtype, pd.CategoricalDtype)
            textual = is_cat or dtype is np.dtype(object) or pd.api.types.is_string_dtype(dtype)
            if textual and not is_cat and (reset or col not in fitted):
                # Numbers stored as text (a CSV column with a token such as "n/a" or "?"):
                # numeric with NaN for the tokens, said in a warning (docs/errors.md).
                values, message = numeric_text(X[col], col)
                if message and (reset or values is not None):
                    warnings.warn(message, DataConversionWarning, stacklevel=4)
                if values is not None:
                    X[col] = values
                    dtype, textual = values.dtype, False
            numeric = pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype)
            all_missing = bool(X[col].isna().all())
            if not reset and col in fitted and numeric:
                # Categorical in fit, numeric now: pandas gives an all-missing batch of a
                # categorical column float64 dtype; its rows are missing categories.
                _check_numeric_categories(X[col], col, fitted[col], all_missing)
                textual, numeric = True, False
            elif not reset and col not in fitted and textual and all_missing:
                # An all-missing batch (object dtype) of a column numeric in fit.
                textual, numeric = False, True
            if textual:
                if reset:
                    cats = pd.Categorical(X[col]).categories
                    estimator._categories_[col] = list(cats)
                cats = fitted.get(col)
                if cats is None:
                    raise ValueError(
                        f"Column {col!r} of X is categorical at predict time but was "
                        "numeric in fit."
                    )
                # Categories unseen in fit become missing values (trees route them as NaN).
                values = X[col].astype(object)
                values = values.where(values.isin(cats))
                X[col] = pd.Categorical(values, categories=cats)
            elif numeric:
                values = X[col].to_numpy(dtype=np.float64, na_value=np.nan)
                n_inf = int(np.isinf(values).sum())
                if n_inf:
                    raise ValueError(
                        f"Column {col!r} of X has {n_inf} of {len(values)} rows that are infinite; "
                        "use NaN for missing values."
                    )
                X[col] = values
            else:
                raise ValueError(f"Column {col!r} of X has unsupported dtype {dtype}.")
        return X
    # Feature names of X as given, then check_array, then n_features_in_ of the array.
    # float32 stays float32 (LightGBM bins either; a copy of a large X costs memory).
    # estimator=None keeps check_array's messages free of the estimator's name.
    return validate_data(estimator, X, reset=reset, estimator=None,
                         dtype=(np.float64, np.float32), ensure_all_finite="allow-nan")


#: A text column is read as numbers when more than half of its non-missing rows parse as
#: numbers and the values that do not are at most ``TEXT_TOKENS`` distinct ones: missing-value
#: tokens such as "n/a", "?" or "missing".
TEXT_TOKENS = 3


def numeric_text(column: pd.Series, col) -> tuple[pd.Series | None, str | None]:
    """Read a text (object or string dtype) column as numbers when nearly all of it is.

    Parameters
    ----------
    column : Series
        A column of X of object or string dtype (a pandas Categorical is never read here:
        its dtype says it holds categories).
    col : hashable
        The column's name, for the message.

    Returns
    -------
    values : Series of float64 or None
        The numbers, NaN where a row is missing or holds one of the few non-numeric tokens;
        None when the column is text (categories).
    message : str or None
        What was done, naming the column, the tokens and how many rows hold them (for a
        ``DataConversionWarning``); for a column kept as categories although most of its
        rows are numbers, why; None for a column of plain categories.
    """
    present = column[column.notna()]
    if present.empty or pd.api.types.infer_dtype(present, skipna=True) == "boolean":
        return None, None
    # Count the distinct values only: a column of a few categories costs a hash, not a parse.
    counts = pd.Series(present.to_numpy(dtype=object)).value_counts(sort=False)
    numeric, message = numeric_text_counts(counts, len(column), col)
    return (pd.to_numeric(column, errors="coerce").astype(np.float64) if numeric
            else None), message


def numeric_text_counts(counts: pd.Series, n_rows: int, col) -> tuple[bool, str | None]:
    """The decision of :func:`numeric_text` from a text column's value counts (what a
    distributed fit can reduce its partitions to).

    Parameters
    ----------
    counts : Series of int
        Rows per distinct present (non-missing) value, indexed by the values.
    n_rows : int
        Rows of the column, missing ones included (for the message).
    col : hashable

    Returns
    -------
    numeric : bool
        Whether the column is read as numbers (its few non-numeric tokens as NaN).
    message : str or None
        As :func:`numeric_text`'s.
    """
    if counts.empty or pd.api.types.infer_dtype(counts.index, skipna=True) == "boolean":
        return False, None
    unique = pd.Series(counts.index.to_numpy(dtype=object), dtype=object)
    is_token = pd.to_numeric(unique, errors="coerce").isna().to_numpy()
    if is_token.all():
        return False, None
    n = int(counts.sum())
    n_ok = n - int(counts.to_numpy()[is_token].sum())
    tokens = pd.Series(counts.to_numpy()[is_token], index=unique[is_token].astype(str))
    tokens = tokens.groupby(level=0, sort=False).sum().sort_values(ascending=False,
                                                                   kind="stable")
    shown = ", ".join(f"{t!r}" for t in tokens.index[:5]) + (", ..." if len(tokens) > 5 else "")
    if len(tokens) <= TEXT_TOKENS and 2 * n_ok > n:
        rows = f"{n - n_ok} row{'s' * (n - n_ok != 1)}"
        what = (f"numbers in {n_ok} of {n_rows} rows and the non-numeric value(s) "
                f"{shown} in {rows}, read as missing (NaN)" if len(tokens) else
                f"only numbers ({n_ok} of {n_rows} rows; the others missing)")
        return True, (
            f"Column {col!r} of X is text holding {what}: it is used as a numeric feature. "
            "Pass it as a pandas Categorical to use it as categories, or convert it first "
            "(pd.to_numeric(X[col], errors='coerce')) to silence this warning.")
    if 2 * n_ok > n:
        return False, (
            f"Column {col!r} of X is text with numbers in {n_ok} of {n_rows} rows but "
            f"{len(tokens)} distinct non-numeric values ({shown}) in {n - n_ok} rows (more "
            f"than {TEXT_TOKENS}, too many to be missing-value tokens): it is used as "
            "categories (every number a category of its own). Convert it with "
            "pd.to_numeric(X[col], errors='coerce') to use it as a numeric feature.")
    return False, None


def _check_numeric_categories(column: pd.Series, col, cats: list, all_missing: bool) -> None:
    """A numeric predict-time column of a column categorical in fit must be all missing or
    hold values of numeric categories (e.g. integer codes given without the category
    dtype); numbers where the categories are strings are a mix-up, not unseen categories."""
    if all_missing or all(isinstance(c, int | float | np.number) for c in cats):
        return
    n_set = int(column.notna().sum())
    shown = ", ".join(repr(c) for c in cats[:5]) + (", ..." if len(cats) > 5 else "")
    raise ValueError(
        f"Column {col!r} of X was categorical in fit (categories {shown}) but is numeric at "
        f"predict time with {n_set} of {len(column)} rows not missing; pass it with the "
        "categories of fit (strings or a pandas Categorical)."
    )


def check_consistent_rows(**arrays) -> int:
    """All given arrays have the same number of rows; returns it."""
    lengths = {name: _n_rows(a) for name, a in arrays.items() if a is not None}
    if len(set(lengths.values())) > 1:
        desc = ", ".join(f"{k} has {v} rows" for k, v in lengths.items())
        raise ValueError(f"Inconsistent numbers of rows: {desc}.")
    return next(iter(lengths.values()))


def _n_rows(a) -> int:
    if hasattr(a, "shape") and len(a.shape) > 0:
        return int(a.shape[0])
    return len(a)


def check_sample_weight(sample_weight, n: int, name: str = "sample_weight") -> np.ndarray | None:
    """Validate sample weights: shape (n,), finite, non-negative, not all zero."""
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.ndim == 0:
        w = np.full(n, float(w))
    if w.shape != (n,):
        raise ValueError(f"{name} has shape {w.shape}; expected ({n},), one weight per row of X.")
    bad_nan = int((~np.isfinite(w)).sum())
    if bad_nan:
        raise ValueError(f"{name} has {bad_nan} of {n} rows that are NaN or infinite.")
    bad_neg = int((w < 0).sum())
    if bad_neg:
        raise ValueError(f"{name} has {bad_neg} of {n} rows that are negative.")
    if not (w > 0).any():
        raise ValueError(f"{name} is zero for all {n} rows; at least one must be positive.")
    return w


def check_eval_set(eval_set, eval_sample_weight=None):
    """Normalise ``eval_set`` to one ``(X_val, y_val)`` pair and its weights (or None).

    Accepts ``(X_val, y_val)`` or a list holding one such pair, as LightGBM and XGBoost do;
    ``eval_sample_weight`` likewise an array or a list holding one (validated against the
    rows later, by :func:`check_sample_weight`).

    Returns
    -------
    eval_set : tuple (X_val, y_val) or None
    eval_sample_weight : array_like or None
    """
    if eval_set is None:
        if eval_sample_weight is not None:
            raise ValueError("eval_sample_weight was given without an eval_set.")
        return None, None
    if isinstance(eval_set, list):
        if len(eval_set) != 1:
            raise ValueError(
                f"eval_set must hold exactly one (X_val, y_val) pair, got {len(eval_set)}."
            )
        eval_set = eval_set[0]
    if not isinstance(eval_set, tuple) or len(eval_set) != 2:
        raise ValueError("eval_set must be a tuple (X_val, y_val) or a list with one such tuple.")
    if isinstance(eval_sample_weight, list | tuple):
        if len(eval_sample_weight) != 1:
            raise ValueError(
                "eval_sample_weight must be one array of weights (or a list holding one, "
                f"for the one eval_set), got a list of {len(eval_sample_weight)}."
            )
        eval_sample_weight = eval_sample_weight[0]
    return eval_set, eval_sample_weight


def take_rows(X, index):
    """Rows ``index`` of an ndarray or DataFrame (``iloc`` for a DataFrame)."""
    return X.iloc[index] if isinstance(X, pd.DataFrame) else X[index]


def int_seed(random_state) -> int:
    """An int seed from a ``random_state`` argument: None draws a fresh one, a
    ``numpy.random.RandomState`` gives its next integer, an int is used as it is."""
    if random_state is None:
        return int(np.random.default_rng().integers(2**31 - 1))
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(2**31 - 1))
    return int(random_state)


def numeric_columns(X, index: np.ndarray) -> np.ndarray:
    if isinstance(X, pd.DataFrame):
        return X.iloc[:, index].to_numpy(dtype=np.float64)
    return np.asarray(X[:, index], dtype=np.float64)



def resolve_columns(spec, X, param: str, numeric_only: bool) -> tuple[np.ndarray, list[str]]:
    """Positions and names of the columns of X (validated by :func:`check_X`) named by ``spec``.

    ``spec`` None: every column (every numeric column when ``numeric_only``).  Otherwise a
    sequence of column names (DataFrame X) or integer positions.  ``param`` names the
    argument in error messages.
    """
    p = X.shape[1]
    if isinstance(X, pd.DataFrame):
        names = [str(c) for c in X.columns]
        numeric = [not isinstance(X[c].dtype, pd.CategoricalDtype) for c in X.columns]
    else:
        names = [f"x{j}" for j in range(p)]
        numeric = [True] * p
    if spec is None:
        index = [j for j in range(p) if numeric[j] or not numeric_only]
        return np.asarray(index, dtype=np.intp), [names[j] for j in index]
    index = []
    for item in np.asarray(spec, dtype=object).reshape(-1).tolist():
        if isinstance(item, str):
            if not isinstance(X, pd.DataFrame):
                raise ValueError(
                    f"{param} names the column {item!r}, but X is an array without column "
                    "names: give integer positions instead."
                )
            if item not in names:
                raise ValueError(
                    f"{param} names the column {item!r}, which X does not have; X's columns "
                    f"are {names}."
                )
            index.append(names.index(item))
        elif isinstance(item, Integral) and not isinstance(item, bool | np.bool_):
            if not 0 <= int(item) < p:
                raise ValueError(
                    f"{param} holds the position {int(item)}, outside the {p} columns of X "
                    f"(positions 0 to {p - 1})."
                )
            index.append(int(item))
        else:
            raise ValueError(
                f"{param} must hold column names or integer positions, got {item!r} of type "
                f"{type(item).__name__}."
            )
    dup = sorted({names[j] for j in index if index.count(j) > 1})
    if dup:
        raise ValueError(f"{param} lists the column(s) {dup} more than once.")
    cat = [names[j] for j in index if not numeric[j]]
    if numeric_only and cat:
        raise ValueError(
            f"{param} names the categorical column(s) {cat}; a linear feature must be "
            "numeric (one-hot encode it, or leave it to the trees)."
        )
    return np.asarray(index, dtype=np.intp), [names[j] for j in index]



def take_columns(X, index: np.ndarray):
    """The columns ``index`` of X, as a DataFrame or ndarray like X (all columns: X itself)."""
    if len(index) == X.shape[1] and np.array_equal(index, np.arange(X.shape[1])):
        return X
    return X.iloc[:, index] if isinstance(X, pd.DataFrame) else X[:, index]


def target_array(y, name: str = "y", owner: str = "This estimator",
                 stacklevel: int = 4) -> np.ndarray:
    """``y`` as an ndarray (a Series or DataFrame by its values); a column vector is used as
    1-D, with scikit-learn's ``DataConversionWarning``; None is a clear error."""
    if y is None:
        raise ValueError(f"{owner} requires y to be passed, but the target {name} is None.")
    y = np.asarray(y.to_numpy() if isinstance(y, pd.DataFrame | pd.Series) else y)
    if y.ndim == 2 and y.shape[1] == 1:
        warnings.warn(
            f"A column-vector {name} was passed when a 1d array was expected; "
            "it is used as a 1-D array.", DataConversionWarning, stacklevel=stacklevel,
        )
        y = y[:, 0]
    return y


def check_target(family, y, name: str = "y") -> np.ndarray:
    """Validate a regression target for ``family``: numeric, at least one row, inside the
    family's support (a column vector is used as 1-D, with scikit-learn's warning).

    Returns
    -------
    ndarray of shape (n,) or (n, 2), float64
    """
    if y is None:
        raise ValueError(
            f"This estimator requires y to be passed, but the target {name} is None."
        )
    encode = getattr(family, "encode_target", None)  # e.g. ordered labels -> class indices
    if encode is not None:
        y = _naming(name, encode, y)
    y = target_array(y, name, stacklevel=5)
    if y.dtype.kind not in "biuf":
        try:
            y = y.astype(np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"Target {name} must be numeric, got dtype {y.dtype}.") from err
    if y.ndim == 1 and y.shape[0] == 0:
        raise ValueError(f"Target {name} has 0 rows; at least 1 row is required.")
    return _naming(name, family.validate_y, y)


def _naming(name: str, check, y):
    """``check(y)``, its ValueError prefixed with ``name`` unless it is the plain ``y``
    (e.g. "y of eval_set: ...")."""
    try:
        return check(y)
    except ValueError as err:
        if name != "y":
            raise ValueError(f"{name}: {err}") from err
        raise
