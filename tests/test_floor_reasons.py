"""The floor warning gives a reason that fits the family (issue 25 item 7): a zero-inflated
family's gate at its floor means no zero inflation, not "consider a zero-adjusted or discrete
family" (it is one); a zero-adjusted family's own atom is never blamed."""

from __future__ import annotations

import numpy as np
import pytest

from distboost.families import get
from distboost.objective import floored_start, why_so_small


def test_a_zero_inflated_gate_at_its_floor_says_there_is_no_inflation():
    y = np.random.default_rng(0).negative_binomial(2, 0.4, 400).astype(float)
    family = get("zero_inflated_negative_binomial")
    # The marginal MLE of this y (family.init(y), 1.9e-10 for the gate; slow, so given here).
    start = {"total_count": 1.420, "probs": 0.668, "gate": 1.85e-10}
    with pytest.warns(UserWarning, match=(
            rf"^y has {int((y == 0).sum())} zeros in 400 rows, no more than family "
            r"'negative_binomial' predicts by itself, so there is no zero inflation to fit .*: "
            r"the marginal 'gate' of family 'zero_inflated_negative_binomial' is 1.85e-10, "
            r"floored at 0.01")) as record:
        floored_start(family, start, y)
    assert not [w for w in record if "zero-adjusted" in str(w.message)]


def test_point_mass_advice_fits_the_family():
    rng = np.random.default_rng(1)
    zeros = np.where(rng.random(300) < 0.6, 0.0, rng.gamma(2.0, 1.0, 300))
    assert why_so_small(zeros, get("studentt")).endswith(
        "which a density cannot hold (consider a zero-adjusted family such as "
        "zero_adjusted_gamma, or a count family)")
    # A zero-adjusted family holds its zeros: the point mass it cannot hold is elsewhere.
    atoms = np.where(rng.random(300) < 0.3, 0.0, np.where(rng.random(300) < 0.8, 2.5, 1.0))
    reason = why_so_small(atoms, get("zero_adjusted_gamma"))
    assert "values equal 2.5" in reason and "zero-adjusted" not in reason
    counts = np.where(rng.random(300) < 0.8, 2.0, 1.0 + rng.poisson(3.0, 300))
    assert why_so_small(counts, get("gamma")).endswith("(y holds only integers: consider a "
                                                       "count family)")
    assert why_so_small(counts, get("poisson")).endswith("values equal 2")  # no density advice
