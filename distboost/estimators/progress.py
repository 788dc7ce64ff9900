"""Feedback on long fits: progress bars and the line that says why boosting stopped.

Bars come from ``tqdm.auto`` (a widget in a notebook, a text bar on a terminal's stderr) and
advance through the engine's per-round ``callback`` (:func:`distboost.boosting.fit_boosting`),
so the engine knows nothing of them.  :func:`stop_line` is the last line ``fit`` prints with
``verbose``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["round_bar", "show_progress", "stop_line", "task_bar"]


def show_progress(progress: bool | None) -> bool:
    """Whether to draw bars: ``progress`` itself, or for None ("auto") a bar in a Jupyter
    notebook (an IPython kernel; the widget needs ``ipywidgets``: ``pip install
    'distboost[notebook]'``) or on a terminal (stderr a tty), none elsewhere (logs, CI)."""
    if progress is not None:
        return bool(progress)
    import sys

    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is not None and type(shell).__name__ == "ZMQInteractiveShell":
        return True
    return bool(getattr(sys.stderr, "isatty", lambda: False)())


@contextmanager
def round_bar(enabled: bool, total: int, desc: str, leave: bool = True
              ) -> Iterator[Callable | None]:
    """A bar over the boosting rounds of one run, as an engine ``callback``.

    Parameters
    ----------
    enabled : bool or None
        False yields None (no callback: the engine's fastest path); None is "auto"
        (:func:`show_progress`).
    total : int
        The cap on rounds (``n_estimators``); early stopping closes the bar short of it.
    desc : str
        Label of the bar (e.g. ``"fold 2/5"``).
    leave : bool
        Keep the finished bar on screen.

    Yields
    ------
    callable or None
        ``callback(round, raw) -> None`` advancing the bar to ``round``.
    """
    if not show_progress(enabled):
        yield None
        return
    from tqdm.auto import tqdm

    bar = tqdm(total=total, desc=desc, unit="round", leave=leave, dynamic_ncols=True)

    def callback(round_: int, raw) -> None:
        bar.update(round_ - bar.n)

    try:
        yield callback
    finally:
        bar.close()


def task_bar(enabled: bool, total: int, desc: str):
    """A bar over ``total`` tasks (families x folds of ``compare_families``), or None
    (``enabled`` False, or None and no notebook nor terminal: :func:`show_progress`)."""
    if not show_progress(enabled):
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="fit", dynamic_ncols=True)


_REASONS = {
    "n_estimators": "the cap n_estimators={cap} was reached",
    "early_stopping": "the validation loss did not improve for {patience} rounds",
    "callback": "the callback asked to stop",
    "no_descent": "no step along a round's trees lowered the training loss (see the warning)",
    "non_finite_loss": "the loss became non-finite (see the warning)",
}


def stop_line(mode: str, stopped_reason: str, n_iter: int, best_iteration: int, cap: int,
              patience: int, folds: int = 5, refit: tuple[int, int] | None = None) -> str:
    """``"stopped at round k, best round j, because ..."``: the last line of a verbose fit.

    Parameters
    ----------
    mode : str
        Where the validation rows came from (the estimator's ``early_stopping_``).
    stopped_reason : str
        The engine's ``FittedEnsemble.stopped_reason``.
    n_iter, best_iteration : int
        Rounds run and rounds kept.
    cap : int
        ``n_estimators``.
    patience : int
        ``n_iter_no_change``.
    folds : int
        Folds of the cross-validation (``mode == "cv"``).
    refit : (int, int), optional
        The refit on all rows after a held-out split (``mode == "holdout_refit"``): its
        rounds and rows; ``n_iter`` and ``best_iteration`` are then the split's.
    """
    head = f"stopped at round {n_iter}, best round {best_iteration}, because "
    if mode == "constant":
        return head + "a single training row keeps the start values"
    if mode == "cv" and stopped_reason == "n_estimators":
        chose = (f"{folds}-fold cross-validation chose {best_iteration} rounds (the earliest "
                 "within one standard error of the best)")
        return head + chose + ("; the start values are kept" if best_iteration == 0
                               else " and the refit on all rows ran them")
    why = _REASONS.get(stopped_reason, stopped_reason).format(cap=cap, patience=patience)
    if refit is not None:
        why += f"; the refit on all {refit[1]} rows ran {refit[0]} rounds"
    return head + why
