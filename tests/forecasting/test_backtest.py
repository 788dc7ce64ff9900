"""distboost.forecasting.backtest: the summary of a backtest table by step."""

from __future__ import annotations

import numpy as np
import pandas as pd

from distboost.forecasting import backtest_summary


def test_summary_averages_each_step_and_counts_the_pit_tails():
    table = pd.DataFrame({
        "origin": [0, 0, 1, 1, 2, 2],
        "step": [1, 2, 1, 2, 1, 2],
        "crps": [1.0, 2.0, 3.0, 4.0, 5.0, 9.0],
        "nll": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0],
        "hit_90": [True, False, True, True, False, False],
        "pit": [0.01, 0.5, 0.5, 0.96, 0.95, 0.05],
    })
    s = backtest_summary(table)
    assert list(s.index) == [1, 2]
    assert list(s.columns) == ["crps", "nll", "coverage_90", "pit_mean", "pit_tails_10", "n"]
    np.testing.assert_allclose(s["crps"], [3.0, 5.0])
    np.testing.assert_allclose(s["nll"], [1.5, 2.0])
    np.testing.assert_allclose(s["coverage_90"], [2 / 3, 1 / 3])
    np.testing.assert_allclose(s["pit_mean"], [(0.01 + 0.5 + 0.95) / 3, (0.5 + 0.96 + 0.05) / 3])
    # Outside [0.05, 0.95]: 0.01 at step 1 (0.95 is not); 0.96 at step 2 (0.05 is not).
    np.testing.assert_allclose(s["pit_tails_10"], [1 / 3, 1 / 3])
    assert list(s["n"]) == [3, 3]
