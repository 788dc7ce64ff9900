"""Tests of the command-line interface (the offline demo)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from distboost.cli import _marginal_table, main


def test_marginal_table_ranks_families_and_explains_skips():
    import numpy as np

    y = np.random.default_rng(0).gamma(3.0, 2.0, size=2000)
    table = _marginal_table(y)
    assert table.iloc[0]["family"] == "gamma"
    beta = table.set_index("family").loc["beta"]
    assert np.isnan(beta["mean_loglik"]) and "outside the support" in beta["note"]


def test_demo_runs_offline(capsys):
    assert main(["demo", "--families", "normal,gamma"]) == 0
    out = capsys.readouterr().out
    assert "Marginal maximum-likelihood fit" in out
    assert "test_nll" in out and "coverage_90" in out and "test_crps" in out


def test_module_entry_point_reports_usage_errors():
    res = subprocess.run([sys.executable, "-m", "distboost", "nonesuch"], capture_output=True,
                         text=True)
    assert res.returncode != 0 and "invalid choice" in res.stderr


@pytest.mark.parametrize("argv", [["--help"]])
def test_help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0 and "demo" in capsys.readouterr().out
