"""Dask inputs made into one checked frame: features, target and weight, row-aligned.

``X`` (a Dask DataFrame or 2-D Array), ``y`` (Series, 1-D Array, a two-column DataFrame or an
``(n, 2)`` Array of censoring bounds) and ``sample_weight`` are checked in one pass over the
partitions (rows per partition, columns and dtypes of every partition against the
collection's declared ones, infinite feature values, the target's support, negative
weights) and joined partition by partition, never by index: Dask's index alignment would
silently reorder or drop rows of collections read separately.  String and object columns
become categoricals with the categories of the whole collection (``categorize``), and text
columns of numbers with a few missing-value tokens become numbers, as the in-process
estimators treat them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.exceptions import DataConversionWarning

from .._validation import numeric_text_counts

__all__ = ["TrainingFrame", "as_frame", "place", "Y_COLS", "W_COL"]

Y_COLS = ("__distboost_y0", "__distboost_y1")
W_COL = "__distboost_w"


def _dd():
    import dask.dataframe as dd

    return dd


def _features(X, feature_names=None):
    """``X`` as a Dask DataFrame with string column names (arrays get ``x0, x1, ...`` unless
    ``feature_names``)."""
    dd = _dd()
    import dask.array as da

    if isinstance(X, dd.DataFrame):
        return X, True
    if isinstance(X, da.Array):
        if X.ndim != 2:
            raise ValueError(f"X must be 2-D; got a Dask Array of shape {X.shape}.")
        if X.numblocks[1] != 1:
            X = X.rechunk({1: -1})
        names = (list(feature_names) if feature_names is not None
                 else [f"x{j}" for j in range(X.shape[1])])
        return dd.from_dask_array(X.astype(np.float64), columns=names), False
    raise TypeError(
        f"X must be a Dask DataFrame or Dask Array, got {type(X).__name__}; for data in "
        "memory use distboost.DistributionalRegressor (or dask.dataframe.from_pandas)."
    )


def _target_frame(y, name: str):
    """The target as a Dask DataFrame with one or two columns named :data:`Y_COLS`."""
    dd = _dd()
    import dask.array as da

    if isinstance(y, dd.Series):
        return y.to_frame(name=Y_COLS[0])
    if isinstance(y, dd.DataFrame):
        if len(y.columns) not in (1, 2):
            raise ValueError(f"{name} as a Dask DataFrame must have 1 column (the target) or "
                             f"2 (censoring bounds), got {len(y.columns)}.")
        return y.rename(columns=dict(zip(y.columns, Y_COLS, strict=False)))
    if isinstance(y, da.Array):
        if y.ndim == 1:
            return dd.from_dask_array(y, columns=Y_COLS[0]).to_frame()
        if y.ndim == 2 and y.shape[1] in (1, 2):
            if y.numblocks[1] != 1:
                y = y.rechunk({1: -1})
            return dd.from_dask_array(y, columns=list(Y_COLS[: y.shape[1]]))
        raise ValueError(f"{name} must be 1-D or (n, 2) bounds; got shape {y.shape}.")
    raise TypeError(f"{name} must be a Dask Series, DataFrame or Array, got "
                    f"{type(y).__name__}.")


def _weight_frame(w, name: str):
    dd = _dd()
    import dask.array as da

    if isinstance(w, dd.Series):
        return w.to_frame(name=W_COL)
    if isinstance(w, da.Array) and w.ndim == 1:
        return dd.from_dask_array(w, columns=W_COL).to_frame()
    raise TypeError(f"{name} must be a Dask Series or 1-D Dask Array, got "
                    f"{type(w).__name__}.")


def _partition_facts(part, columns, dtypes, role):
    """Rows, and what disagrees with the declared columns and dtypes, of one partition."""
    wrong = None
    if list(part.columns) != list(columns):
        wrong = f"columns {list(part.columns)} instead of {list(columns)}"
    else:
        bad = [c for c, d in zip(columns, dtypes, strict=True) if part[c].dtype != d]
        if bad:
            c = bad[0]
            wrong = f"column {c!r} has dtype {part[c].dtype} instead of {dtypes[columns.index(c)]}"
    n_inf = {}
    if role == "X" and wrong is None:
        for c in columns:
            if pd.api.types.is_numeric_dtype(part[c].dtype):
                k = int(np.isinf(part[c].to_numpy(dtype=np.float64, na_value=np.nan)).sum())
                if k:
                    n_inf[c] = k
    return len(part), wrong, n_inf


def _facts(frame, role):
    import dask

    columns, dtypes = list(frame.columns), list(frame.dtypes)
    return [dask.delayed(_partition_facts)(p, columns, dtypes, role)
            for p in frame.to_delayed()]


class TrainingFrame:
    """Checked, row-aligned features, target and weight of a fit (or of ``score``).

    Attributes
    ----------
    frame : dask.dataframe.DataFrame
        The feature columns, then :data:`Y_COLS` (one, or two for bounds), then
        :data:`W_COL` when weighted.
    feature_names : list of str
    categories : dict of str to list
        Categories of each categorical feature column.
    n_rows : int
    partition_rows : list of int
    bounds : bool
        True when the target is ``(lower, upper)`` bounds.
    """

    def __init__(self, frame, feature_names, categories, n_rows, partition_rows, bounds,
                 weighted, from_dataframe):
        self.frame = frame
        self.feature_names = feature_names
        self.categories = categories
        self.n_rows = n_rows
        self.partition_rows = partition_rows
        self.bounds = bounds
        self.weighted = weighted
        self.from_dataframe = from_dataframe

    @property
    def y_columns(self) -> list[str]:
        return list(Y_COLS[: 2 if self.bounds else 1])

    def features(self, frame=None):
        return (self.frame if frame is None else frame)[self.feature_names]


def as_frame(client, X, y=None, sample_weight=None, *, name: str = "", categories=None,
             feature_names=None) -> TrainingFrame:
    """Check ``X``, ``y`` and ``sample_weight`` in one pass and join them row by row.

    ``y`` and the weights align with ``X`` by position, as arrays in memory do: collections
    with the same number of rows but other partition boundaries (Dask's Parquet reader may
    merge files differently for one selected column than for many) are re-cut at ``X``'s
    boundaries.  The partitions are fixed once (``to_delayed``), so the checked partitions are
    the ones joined.

    Parameters
    ----------
    client : distributed.Client
    X, y, sample_weight : Dask collections (``y`` and ``sample_weight`` optional)
    name : str
        Prefix of error messages ("eval_set: ").
    categories : dict, optional
        Categories of fit (predict-time and validation data are set to these).
    feature_names : list of str, optional
        The column names of fit, for a Dask Array ``X``.

    Raises
    ------
    ValueError
        Partitions whose columns or dtypes differ from the collection's; ``y`` or
        ``sample_weight`` with another number of rows than ``X``; infinite feature values.
    """
    import dask

    dd = _dd()
    X, from_dataframe = _features(X, feature_names)
    X = _categorical(X, categories)
    parts = {"X": X}
    if y is not None:
        parts["y"] = _target_frame(y, f"{name}y")
    if sample_weight is not None:
        parts["sample_weight"] = _weight_frame(sample_weight, f"{name}sample_weight")
    blocks = {role: f.to_delayed() for role, f in parts.items()}
    facts = client.compute(
        {role: [dask.delayed(_partition_facts)(b, list(parts[role].columns),
                                               list(parts[role].dtypes), role)
                for b in blocks[role]] for role in parts}, sync=True)
    rows = {role: [f[0] for f in v] for role, v in facts.items()}
    for role, v in facts.items():
        for i, (_, wrong, _) in enumerate(v):
            if wrong is not None:
                raise ValueError(
                    f"{name}{role}: partition {i} of {len(v)} disagrees with the collection's "
                    f"declared schema: {wrong}. Every partition must have the same columns "
                    "and dtypes (e.g. read the Parquet files with one schema, or cast with "
                    "astype before fitting).")
    n_rows = sum(rows["X"])
    for role in rows:
        if sum(rows[role]) != n_rows:
            raise ValueError(
                f"{name}{role} does not align with X: {role} has {sum(rows[role])} rows and X "
                f"{n_rows} ({len(rows[role])} and {len(rows['X'])} partitions). Build them "
                "from the same source.")
        if rows[role] != rows["X"]:
            blocks[role] = _recut(parts[role], blocks[role], rows[role], rows["X"])
    n_inf: dict[str, int] = {}
    for _, _, bad in facts["X"]:
        for c, k in bad.items():
            n_inf[c] = n_inf.get(c, 0) + k
    if n_inf:
        c = next(iter(n_inf))
        raise ValueError(f"{name}Column {c!r} of X has {n_inf[c]} of {n_rows} rows "
                         "that are infinite; use NaN for missing values.")
    if n_rows == 0:
        raise ValueError(f"{name}X has 0 rows; at least 1 row is required.")
    roles = list(parts)
    joined = [dask.delayed(_join)(*(blocks[r][i] for r in roles))
              for i in range(len(rows["X"]))]
    frame = dd.from_delayed(joined, meta=_join(*[parts[r]._meta for r in roles]),
                            verify_meta=False)
    cats = {c: list(X[c].cat.categories) for c in X.columns
            if isinstance(X[c].dtype, pd.CategoricalDtype)}
    bounds = "y" in parts and len(parts["y"].columns) == 2
    return TrainingFrame(frame, [str(c) for c in X.columns], cats, n_rows, rows["X"], bounds,
                         sample_weight is not None, from_dataframe)


def _recut(frame, blocks, lengths, target):
    """Numeric ``blocks`` of ``frame`` (partition lengths ``lengths``) re-cut by position into
    partitions of lengths ``target``."""
    import dask
    import dask.array as da

    columns = list(frame.columns)
    arrays = [da.from_delayed(dask.delayed(_values)(b), shape=(n, len(columns)),
                              dtype=np.float64) for b, n in zip(blocks, lengths, strict=True)]
    cut = da.concatenate(arrays).rechunk((tuple(target), len(columns)))
    return [dask.delayed(pd.DataFrame)(b, columns=columns) for b in cut.to_delayed().ravel()]


def _values(part) -> np.ndarray:
    return part.to_numpy(dtype=np.float64)


def _join(*parts):
    out = pd.concat([p.reset_index(drop=True) for p in parts], axis=1)
    out.columns = [str(c) for c in out.columns]
    return out


def _categorical(X, categories):
    """String and object columns as categoricals with known categories; with
    ``categories`` (those of fit), every categorical column set to them.

    Text columns of numbers (a CSV column with a token such as "n/a") are read as numbers,
    as in-process (:func:`distboost._validation.numeric_text_counts`, decided in ``fit`` from
    the column's value counts, with the same ``DataConversionWarning``); at predict time a
    text column that was not categorical in ``fit`` is read as numbers."""
    text = [c for c in X.columns
            if X[c].dtype == object or pd.api.types.is_string_dtype(X[c].dtype)]
    unknown = [c for c in X.columns
               if isinstance(X[c].dtype, pd.CategoricalDtype) and not X[c].cat.known]
    if categories is None:
        numeric = _numeric_text_columns(X, text)
        for c in numeric:
            X[c] = _dd().to_numeric(X[c], errors="coerce").astype(np.float64)
        textual = [c for c in X.columns if c in unknown or (c in text and c not in numeric)]
        if textual:
            X = X.categorize(columns=textual)
        return X
    for c in text:
        if c not in categories:  # numeric text in fit (or a new text column: numbers or NaN)
            X[c] = _dd().to_numeric(X[c], errors="coerce").astype(np.float64)
    for c, cats in categories.items():
        if c in X.columns:
            X[c] = X[c].map_partitions(_set_categories, cats,
                                       meta=pd.Series(pd.Categorical([], categories=cats),
                                                      name=c))
    return X


def _text_counts(part, text):
    return len(part), [part[c].astype(object).value_counts(dropna=True) for c in text]


def _numeric_text_columns(X, text: list) -> list:
    """The text columns of ``X`` read as numbers (one reduction: their value counts)."""
    if not text:
        return []
    import dask

    parts = X[text].to_delayed()  # per-partition counts, summed here: no shuffle
    per_part = dask.compute(*[dask.delayed(_text_counts)(p, text) for p in parts])
    n_rows = sum(n for n, _ in per_part)
    counts = [pd.concat([c[j] for _, c in per_part]).groupby(level=0, sort=False).sum()
              for j in range(len(text))]
    numeric = []
    for c, count in zip(text, counts, strict=True):
        is_numeric, message = numeric_text_counts(count, n_rows, c)
        if message:
            warnings.warn(message, DataConversionWarning, stacklevel=5)
        if is_numeric:
            numeric.append(c)
    return numeric


def _set_categories(s, cats):
    """Categories of fit; unseen values become missing (as in-process)."""
    values = s.astype(object)
    return pd.Series(pd.Categorical(values.where(values.isin(cats)), categories=cats),
                     index=s.index, name=s.name)


def cluster_workers(client) -> dict:
    """The scheduler's workers now, ``{address: facts}``, asked of the scheduler itself.

    Not ``client.scheduler_info()``: since distributed 2025 that returns the client's cached
    identity, which a periodic refresh without per-worker facts can overwrite between the
    fetch and the return (an empty ``"workers"`` on a busy machine).  The scheduler's
    ``identity`` call is what XGBoost's Dask module asks too.
    """
    return dict(client.sync(client.scheduler.identity)["workers"])


def place(client, data: TrainingFrame) -> TrainingFrame:
    """``data`` re-cut by position into one partition per worker, computed and held there.

    Block ``j`` holds rows ``[j n / W, (j + 1) n / W)`` and lives on the ``j``-th worker (by
    name, the order in which XGBoost's tracker ranks the workers).  XGBoost's histograms,
    its quantile sketch (the bins) and every global sum of a fit are then computed over the
    same rows on the same ranks however the input was partitioned: the same data, seed and
    number of workers give the same model, bit for bit.
    """
    import dask

    dd = _dd()
    info = cluster_workers(client)
    if not info:
        raise RuntimeError(f"The Dask cluster of {client!r} has no worker to hold the "
                           "training rows (all lost since the data were read?): start or "
                           "wait for workers (client.wait_for_workers(n)) and fit again.")
    workers = sorted(info, key=lambda addr: (str(info[addr].get("name", "")), addr))
    lengths = data.partition_rows
    n = sum(lengths)
    n_blocks = max(1, min(len(workers), n))
    bounds = [n * j // n_blocks for j in range(n_blocks + 1)]
    starts = np.cumsum([0, *lengths])
    parts = data.frame.to_delayed()
    meta = data.frame._meta
    futures = []
    for j in range(n_blocks):
        lo, hi = bounds[j], bounds[j + 1]
        pieces = [dask.delayed(_slice)(part, max(lo, starts[i]) - starts[i],
                                       min(hi, starts[i + 1]) - starts[i])
                  for i, part in enumerate(parts)
                  if max(lo, starts[i]) < min(hi, starts[i + 1])]
        block = dask.delayed(_concat)(pieces, meta)
        futures.append(client.compute(block, workers=[workers[j]],
                                      allow_other_workers=False))
    frame = dd.from_delayed(futures, meta=meta, verify_meta=False)
    return TrainingFrame(frame, data.feature_names, data.categories, n,
                         [hi - lo for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)],
                         data.bounds, data.weighted, data.from_dataframe)


def _slice(part, start: int, stop: int):
    return part.iloc[start:stop]


def _concat(pieces, meta):
    if not pieces:
        return meta.copy()
    return pd.concat(pieces, ignore_index=True)
