"""Mondrian groups: the column or callable that splits rows into calibration groups.

``mondrian=`` names a column of X (by name, or by position for an array) or is a callable
``mondrian(X) -> labels``; each distinct label is a group with its own calibration (Vovk,
Gammerman & Shafer 2005, sec. 4.5).  Labels are kept as strings of their values in the fitted
state (so that a model saves as JSON); a label unseen in ``fit`` is a clear error.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["GroupCodes"]


class GroupCodes:
    """The fitted groups of a Mondrian calibration and the coding of new rows.

    Parameters
    ----------
    mondrian : str, int, callable or None
    labels : list of str
        The groups seen in ``fit`` (``[None]`` without ``mondrian``).
    """

    def __init__(self, mondrian, labels: list):
        self.mondrian = mondrian
        self.labels = list(labels)
        self._index = {label: i for i, label in enumerate(self.labels)}

    @classmethod
    def fit(cls, mondrian, X) -> GroupCodes:
        if mondrian is None:
            return cls(None, [None])
        labels = _labels(mondrian, X)
        return cls(mondrian, sorted(set(labels.tolist())))

    def codes(self, X) -> np.ndarray:
        """Group code (0 .. G - 1) of every row of X, ndarray of int64 of shape (n,)."""
        n = X.shape[0]
        if self.mondrian is None:
            return np.zeros(n, dtype=np.int64)
        labels = _labels(self.mondrian, X)
        unknown = sorted({v for v in labels.tolist() if v not in self._index})
        if unknown:
            count = int(np.isin(labels, unknown).sum())
            raise ValueError(
                f"mondrian groups {unknown[:5]} ({count} of {n} rows) were not seen in fit, "
                f"so they have no calibration rows; the fitted groups are {self.labels}.")
        return np.array([self._index[v] for v in labels.tolist()], dtype=np.int64)

    def to_dict(self) -> dict:
        return {"labels": self.labels}

    @classmethod
    def from_dict(cls, d: dict, mondrian) -> GroupCodes:
        return cls(mondrian, d["labels"])


def _labels(mondrian, X) -> np.ndarray:
    """The group label of every row, as strings (NaN is the label "nan")."""
    n = X.shape[0]
    if callable(mondrian):
        values = np.asarray(mondrian(X), dtype=object).ravel()
        what = "mondrian(X)"
    elif isinstance(X, pd.DataFrame):
        if mondrian not in X.columns:
            raise ValueError(f"mondrian={mondrian!r} is not a column of X; X's columns are "
                             f"{list(X.columns)[:10]}.")
        values = X[mondrian].to_numpy(dtype=object)
        what = f"column {mondrian!r}"
    else:
        if not isinstance(mondrian, int | np.integer) or not 0 <= int(mondrian) < X.shape[1]:
            raise ValueError(f"mondrian={mondrian!r}: X is an array, so name the column by its "
                             f"position (0 .. {X.shape[1] - 1}) or pass a callable.")
        values = np.asarray(X)[:, int(mondrian)].astype(object)
        what = f"column {int(mondrian)}"
    if values.shape != (n,):
        raise ValueError(f"{what} gave {values.shape[0]} group labels for {n} rows.")
    return np.array([str(v) for v in values], dtype=object)
