"""Per-parameter tree backend: one single-output backend per raw output, grown in lockstep.

When the distribution's parameters ask for different tree options (a scale of 4-leaf trees
on two columns next to a location of 31-leaf trees monotone in price), one booster with
``num_class=K`` cannot grow them: LightGBM's tree options are per booster.  The
:class:`PerParameterBackend` holds ``K`` backends of one output each (any registered
backend: LightGBM by default), each with its own :class:`~distboost.boosting.EngineParams`
and its own columns of X, and drives them through the :class:`~.backend.TreeBackend`
protocol as one: a round grows one tree in each, a retry or rollback acts on all, and the
training scores are their columns side by side.  Output ``k``'s ``learning_rate`` relative
to the shared one multiplies its step, also during the engine's line search (a halved step
halves every output's rate).

The cost is ``K`` data sets (each bins its own columns) and ``K`` calls per round instead of
one; ``benchmarks/param_options.py`` measures it.  Saved models hold each output's text
model and columns in one JSON document.
"""

from __future__ import annotations

import json

import numpy as np

from .backend import backend_name, get_backend, get_model_class

__all__ = ["PerParameterBackend", "PerParameterModel"]


def _columns(X, cols):
    """The columns ``cols`` of X (all: X itself), as a DataFrame or ndarray like X."""
    if X is None or cols is None:
        return X
    return X.iloc[:, cols] if hasattr(X, "iloc") else X[:, cols]


class PerParameterBackend:
    """Grows each raw output's trees with its own single-output backend.

    Parameters
    ----------
    params : EngineParams
        ``params.per_parameter`` holds one ``(EngineParams, columns)`` pair per output
        (columns: positions in X, or None for all).
    init_raw : ndarray of shape (K,)
    X, sample_weight, X_val
        As for every backend.
    """

    name = "per_parameter"

    def __init__(self, params, init_raw: np.ndarray, X, sample_weight, X_val):
        specs = params.per_parameter
        self.k = init_raw.size
        if len(specs) != self.k:
            raise ValueError(f"per_parameter holds {len(specs)} entries for {self.k} outputs.")
        self.p = X.shape[1]
        self.columns = [None if c is None else np.asarray(c, dtype=np.intp) for _, c in specs]
        self.factors = np.array([sub.learning_rate / params.learning_rate for sub, _ in specs])
        self.parts = [
            get_backend(backend_name(sub))(sub, init_raw[j:j + 1], _columns(X, cols),
                                           sample_weight, _columns(X_val, cols))
            for j, ((sub, _), cols) in enumerate(zip(specs, self.columns, strict=True))
        ]
        layouts = {part.layout for part in self.parts}
        if len(layouts) != 1:
            raise ValueError(f"The per-parameter backends want different layouts {layouts}.")
        self.layout = layouts.pop()
        self.raw = np.empty((X.shape[0], self.k))
        device = getattr(self.parts[0], "device", None)
        if device is not None:  # GPU parts: their scores side by side on the device
            import torch

            self.raw = torch.empty((X.shape[0], self.k), dtype=torch.float64, device=device)
        self._has_valid = X_val is not None
        self.raw_val = None if X_val is None else np.empty((X_val.shape[0], self.k))

    def grow(self, grad: np.ndarray, hess: np.ndarray, learning_rate: float) -> None:
        """One tree per output from its column of ``(grad, hess)``, shrunk by
        ``learning_rate`` times the output's factor."""
        for j, part in enumerate(self.parts):
            part.grow(grad[:, j:j + 1], hess[:, j:j + 1], learning_rate * self.factors[j])

    def retry(self, learning_rate: float) -> None:
        for j, part in enumerate(self.parts):
            part.retry(learning_rate * self.factors[j])

    def rollback(self) -> None:
        for part in self.parts:
            part.rollback()

    def train_scores(self) -> np.ndarray:
        """Raw scores of the training rows, shape (n, K): the outputs' scores side by side
        (the backend's own array, valid until it changes)."""
        for j, part in enumerate(self.parts):
            self.raw[:, j] = part.train_scores()[:, 0]
        return self.raw

    def valid_raw(self) -> np.ndarray | None:
        if not self._has_valid:
            return None
        for j, part in enumerate(self.parts):
            self.raw_val[:, j] = part.valid_raw()[:, 0]
        return self.raw_val

    def finish(self) -> PerParameterModel:
        return PerParameterModel([part.finish() for part in self.parts], self.columns, self.p)


class PerParameterModel:
    """Prediction side of the per-parameter backend: ``K`` single-output fitted models.

    Parameters
    ----------
    parts : list of FittedTrees
        One single-output model per raw output.
    columns : list of (ndarray of int or None)
        The positions in X of each output's columns (None: all).
    p : int
        Columns of X.
    """

    name = "per_parameter"

    def __init__(self, parts: list, columns: list, p: int):
        self.parts = parts
        self.columns = [None if c is None else np.asarray(c, dtype=np.intp) for c in columns]
        self.p = int(p)
        self.k = len(parts)

    def _cols(self, j: int) -> np.ndarray:
        c = self.columns[j]
        return np.arange(self.p) if c is None else c

    def predict_raw(self, X, num_iteration: int) -> np.ndarray:
        return np.column_stack([part.predict_raw(_columns(X, cols), num_iteration)[:, 0]
                                for part, cols in zip(self.parts, self.columns, strict=True)])

    def predict_raw_rounds(self, X, rounds) -> np.ndarray:
        """Output ``k`` (its own ensemble) read at round ``rounds[k]``, shape (n, K)."""
        return np.column_stack([
            part.predict_raw(_columns(X, cols), int(r))[:, 0]
            for part, cols, r in zip(self.parts, self.columns, rounds, strict=True)])

    def predict_contrib(self, X, num_iteration: int) -> np.ndarray:
        """Each output's TreeSHAP values placed at its columns, zero at the others: shape
        (n, K, p + 1), the last column each output's expected value."""
        out = np.zeros((X.shape[0], self.k, self.p + 1))
        for j, part in enumerate(self.parts):
            c = part.predict_contrib(_columns(X, self.columns[j]), num_iteration)[:, 0]
            out[:, j, self._cols(j)] = c[:, :-1]
            out[:, j, -1] = c[:, -1]
        return out

    def feature_importances(self, num_iteration: int,
                            importance_type: str = "gain") -> np.ndarray:
        out = np.zeros((self.k, self.p))
        for j, part in enumerate(self.parts):
            imp = part.feature_importances(num_iteration, importance_type)[0]
            out[j, self._cols(j)[:imp.size]] = imp
        return out

    def to_text(self, num_iteration: int) -> str:
        """One JSON document: per output, its backend's name, columns and text model."""
        return json.dumps({"p": self.p, "parts": [
            {"backend": part.name,
             "columns": None if cols is None else cols.tolist(),
             "model": part.to_text(num_iteration)}
            for part, cols in zip(self.parts, self.columns, strict=True)]})

    @classmethod
    def from_text(cls, text: str, k: int) -> PerParameterModel:
        doc = json.loads(text)
        if len(doc["parts"]) != k:
            raise ValueError(f"The per-parameter model holds {len(doc['parts'])} outputs, "
                             f"not {k}.")
        parts = [get_model_class(part["backend"]).from_text(part["model"], 1)
                 for part in doc["parts"]]
        return cls(parts, [part["columns"] for part in doc["parts"]], doc["p"])
