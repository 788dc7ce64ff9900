"""The fitted ensembles of a boosting run: :class:`FittedEnsemble`.

What :func:`~distboost.boosting.engine.fit_boosting` returns: the backend's trees, the start
values, the rounds kept (one for all outputs, or each output's own under per-parameter
stopping), the loss curves and how the run ended; raw predictions, importances and exact
TreeSHAP contributions at the kept rounds, and a JSON description for saving.
"""

from __future__ import annotations

import math

import numpy as np

from .backend import get_model_class
from .output_stopping import per_output, predict_per_output

__all__ = ["FittedEnsemble"]


class FittedEnsemble:
    """The fitted ensembles of a boosting run.

    Attributes
    ----------
    n_params : int
        ``K``, the number of raw outputs.
    init_raw : ndarray of shape (K,)
    best_iteration_ : int
        Rounds kept by :meth:`predict_raw` (the best validation round under early stopping).
    n_iter_ : int
        Rounds run.
    evals_result_ : dict
        ``{"train": {"loss": [...]}, "valid": {"loss": [...]}}``: the weighted mean loss per
        round (train: before the round's trees are added, hence non-increasing without a
        callback; valid: after).
    stopped_reason : str
        "n_estimators", "early_stopping", "callback", "no_descent" (no step length along a
        round's trees lowered the training loss) or "non_finite_loss" (the loss or its
        derivatives were not finite at the start values, after a callback, on the
        validation rows, or at every step length of a round).
    step_scales_ : list of float
        Per kept round, its step relative to ``learning_rate``: 1, or ``2**-j`` after ``j``
        halvings by the descent check (see :func:`fit_boosting`).
    n_backoffs_ : int
        Halvings over all kept rounds (those of a round that was finally removed are not
        counted).
    fallback_rounds_ : list of int
        Rounds of the natural step whose trees pointed uphill and were regrown from the
        diagonal Fisher step (see :func:`fit_boosting`).
    best_iterations_ : ndarray of int, shape (K,), or None
        Each output's kept round under per-parameter stopping
        (:mod:`~distboost.boosting.output_stopping`); ``best_iteration_`` is then their
        maximum.  None: every output keeps ``best_iteration_``.
    valid_raw_ : tuple or None
        After early stopping on validation rows: ``(rounds, raw)``, each output's kept
        round (:meth:`rounds`) and the validation rows' raw scores of the trees at those
        rounds (shape (n_val, K), no offset), as the stopping rule judged them; None
        otherwise.  Not pickled or saved.
    """

    def __init__(self, model, init_raw, best_iteration, n_iter, evals, stopped_reason,
                 step_scales=None, fallback_rounds=None, best_iterations=None):
        self.model = model
        self.init_raw = np.asarray(init_raw, dtype=np.float64)
        self.n_params = self.init_raw.size
        self.best_iteration_ = int(best_iteration)
        self.n_iter_ = int(n_iter)
        self.evals_result_ = evals
        self.stopped_reason = stopped_reason
        self.step_scales_ = [1.0] * self.n_iter_ if step_scales is None else list(step_scales)
        self.n_backoffs_ = int(sum(round(-math.log2(x)) for x in self.step_scales_))
        self.fallback_rounds_ = [] if fallback_rounds is None else list(fallback_rounds)
        self.best_iterations_ = None
        self.joint_rounds_ = None  # rounds run when per-parameter stopping's phase 1 ended
        self.valid_raw_ = None
        self.set_rounds(best_iterations)

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["valid_raw_"] = None  # the fit's own validation rows: not part of the model
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update({"valid_raw_": None, **state})

    def set_rounds(self, best_iterations) -> None:
        """Keep round ``best_iterations[k]`` for output ``k`` (None: ``best_iteration_`` for
        every output); ``best_iteration_`` becomes their maximum."""
        if best_iterations is None:
            self.best_iterations_ = None
            return
        self.best_iterations_ = np.asarray(best_iterations, dtype=int).reshape(-1)
        self.best_iteration_ = int(self.best_iterations_.max())

    def rounds(self, num_iteration: int | None = None) -> np.ndarray:
        """Each output's rounds, ndarray of int of shape (K,): its kept round, capped at
        ``num_iteration`` when given (the model after that many rounds)."""
        if self.best_iterations_ is None:
            k = self.best_iteration_ if num_iteration is None else int(num_iteration)
            return np.full(self.n_params, k)
        return per_output(self.best_iterations_, num_iteration)

    def predict_raw(self, X, num_iteration: int | None = None) -> np.ndarray:
        """Raw scores, ndarray of shape (n, K), including ``init_raw``.

        Parameters
        ----------
        X : ndarray or DataFrame of shape (n, p)
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``; each output's own kept round,
            capped at ``num_iteration``, under per-parameter stopping).
        """
        if self.best_iterations_ is None:
            k = self.best_iteration_ if num_iteration is None else int(num_iteration)
            return self.model.predict_raw(X, k) + self.init_raw[None, :]
        rounds = self.rounds(num_iteration)
        at_rounds = getattr(self.model, "predict_raw_rounds", None)
        raw = (at_rounds(X, rounds) if at_rounds is not None
               else predict_per_output(self.model.predict_raw, X, rounds))
        return raw + self.init_raw[None, :]

    def feature_importances(self, importance_type: str = "gain") -> np.ndarray:
        """Total gain ("gain") or number of splits ("split") of each feature in each
        parameter's ensemble over its kept rounds, shape (K, p)."""
        if self.best_iterations_ is None:
            return self.model.feature_importances(self.best_iteration_, importance_type)
        return predict_per_output(
            lambda _, r: self.model.feature_importances(r, importance_type).T, None,
            self.best_iterations_).T

    def predict_contrib(self, X, num_iteration: int | None = None) -> np.ndarray:
        """Exact TreeSHAP contributions, ndarray of shape (n, K, p + 1): per output, one
        value per column of X, and last the expected value plus ``init_raw``; each row
        sums to :meth:`predict_raw`.

        Parameters
        ----------
        X : ndarray or DataFrame of shape (n, p)
        num_iteration : int, optional
            Rounds to use (default: ``best_iteration_``).
        """
        if self.best_iterations_ is None:
            k = self.best_iteration_ if num_iteration is None else int(num_iteration)
            out = self.model.predict_contrib(X, k)
        else:
            out = predict_per_output(self.model.predict_contrib, X, self.rounds(num_iteration))
        out[:, :, -1] += self.init_raw[None, :]
        return out

    def to_dict(self) -> dict:
        """JSON-safe description (backends with a text format: LightGBM)."""
        return {
            "backend": self.model.name,
            "model": self.model.to_text(self.best_iteration_),
            "init_raw": self.init_raw.tolist(),
            "best_iteration": self.best_iteration_,
            "n_iter": self.n_iter_,
            "evals_result": self.evals_result_,
            "stopped_reason": self.stopped_reason,
            "step_scales": self.step_scales_,
            "fallback_rounds": self.fallback_rounds_,
            "best_iterations": (None if self.best_iterations_ is None
                                else self.best_iterations_.tolist()),
        }

    @classmethod
    def from_dict(cls, d: dict) -> FittedEnsemble:
        """Rebuild from :meth:`to_dict` output."""
        try:
            model_class = get_model_class(d.get("backend"))
        except ValueError:
            raise ValueError(f"Cannot load a {d.get('backend')!r} ensemble from text.") from None
        model = model_class.from_text(d["model"], len(d["init_raw"]))
        return cls(model, d["init_raw"], d["best_iteration"], d["n_iter"], d["evals_result"],
                   d["stopped_reason"], d.get("step_scales"), d.get("fallback_rounds"),
                   d.get("best_iterations"))

