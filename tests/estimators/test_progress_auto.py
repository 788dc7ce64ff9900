"""progress=None is "auto" (issue 25 item 7): a bar in a Jupyter notebook or on a terminal,
none in logs, CI and captured output."""

from __future__ import annotations

import io
import sys
import types

import pytest

from distboost.estimators.progress import show_progress, task_bar


class ZMQInteractiveShell:  # the class name of a Jupyter kernel's shell
    pass


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_auto_draws_in_notebooks_and_terminals_only(monkeypatch):
    monkeypatch.delitem(sys.modules, "IPython", raising=False)
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert show_progress(None) is False and task_bar(None, 3, "x") is None
    assert show_progress(True) is True and show_progress(False) is False
    monkeypatch.setattr(sys, "stderr", _Tty())
    assert show_progress(None) is True
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    notebook = types.ModuleType("IPython")
    notebook.get_ipython = ZMQInteractiveShell
    monkeypatch.setitem(sys.modules, "IPython", notebook)
    assert show_progress(None) is True
    notebook.get_ipython = lambda: None  # IPython imported, no kernel (a plain script)
    assert show_progress(None) is False


def test_estimators_take_progress_none():
    import numpy as np

    import distboost as db

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 1)), rng.normal(size=30)
    db.DistributionalRegressor(progress=None, n_estimators=2, early_stopping=False).fit(X, y)
    with pytest.raises(ValueError, match="progress"):
        db.DistributionalRegressor(progress="yes").fit(X, y)
