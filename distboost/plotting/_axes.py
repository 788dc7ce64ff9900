"""The one helper every figure of :mod:`distboost.plotting` draws on."""

from __future__ import annotations

__all__ = ["axes"]


def axes(ax=None, figsize: tuple[float, float] = (7, 4.5)):
    """``ax``, or the Axes of a new figure of ``figsize`` inches when ``ax`` is None
    (matplotlib is imported only then, so the package imports without a display)."""
    if ax is None:
        import matplotlib.pyplot as plt

        _, ax = plt.subplots(figsize=figsize)
    return ax
