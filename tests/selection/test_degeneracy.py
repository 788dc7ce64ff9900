"""``distboost.selection.degeneracy``: the counts behind compare_families' ``degenerate`` column."""

from __future__ import annotations

import numpy as np

import distboost as db
from distboost.selection.degeneracy import Diagnostics


class _FakeModel:
    def __init__(self, raw_floor):
        self.raw_floor_ = np.asarray(raw_floor, dtype=float)


def test_diagnostics_flag_a_floored_scale_and_a_collapse_onto_a_point_mass():
    family = db.families.get("normal")
    y = np.r_[np.zeros(50), np.linspace(1.0, 5.0, 50)]
    scale = np.r_[np.full(50, 1e-6), np.ones(50)]  # at the floor on the zeros
    dist = db.Predictive.from_params("normal", loc=np.r_[np.zeros(50), y[50:]], scale=scale)
    diag = Diagnostics(family, {"spread": 2.5, "atom": (0.0, 0.5)})
    diag.add(_FakeModel([-np.inf, np.log(1e-6)]), dist, y, {"nll": -3.0, "crps": 0.2})
    reason = diag.reason()
    assert "scale at its floor on 50% of rows" in reason
    assert "collapsed onto y = 0 (50% of rows): a point mass" in reason
    sound = Diagnostics(family, {"spread": 2.5, "atom": (0.0, 0.5)})
    sound.add(_FakeModel([-np.inf, np.log(1e-6)]), dist[50:], y[50:], {"nll": 1.0})
    assert sound.reason() == ""
