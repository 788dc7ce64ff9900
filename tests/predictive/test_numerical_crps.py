"""distboost.predictive.numerical_crps: inputs as users hold them."""

from __future__ import annotations

import warnings

import numpy as np

import distboost as db


def test_a_read_only_target_is_scored_without_a_warning():
    """pandas 3 hands out read-only arrays (``Series.to_numpy()``); torch warns on them."""
    y = np.array([0.5, 1.0])
    y.setflags(write=False)
    d = db.Predictive.from_params("gamma", concentration=[2.0, 3.0], rate=[1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = d.crps(y, method="numerical")
    np.testing.assert_allclose(got, d.crps(y.copy(), method="closed"), rtol=1e-7)
