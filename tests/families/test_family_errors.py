"""The second-wave families' rows of the bad-input table in docs/errors.md (the pattern of
tests/test_errors.py): the error type and its message, raised before any boosting."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import distboost as db
from distboost.families import Mixture
from distboost.families.continuous import StudentT
from distboost.families.histogram import Histogram
from distboost.families.ordinal import OrdinalLogit

X = np.random.default_rng(0).normal(size=(6, 2))
R = db.DistributionalRegressor
ZEROS = np.zeros(6)

CASES = {
    "all-zero target for a zero-adjusted family": (
        lambda: R(family="zero_adjusted_gamma").fit(X, ZEROS), ValueError,
        r"'zero_adjusted_gamma' cannot fit a target whose 6 rows are all zero"),
    "all-zero target for a zero-inflated family": (
        lambda: R(family="zero_inflated_poisson").fit(X, ZEROS), ValueError,
        r"'zero_inflated_poisson' cannot fit a target whose 6 rows are all zero"),
    "all-zero target for tweedie": (
        lambda: R(family="tweedie").fit(X, ZEROS), ValueError,
        r"'tweedie' cannot fit a target whose 6 rows are all zero"),
    "all-zero target for half_normal": (
        lambda: R(family="half_normal").fit(X, ZEROS), ValueError,
        r"'half_normal' cannot fit a target whose 6 rows are all zero"),
    "unordered Categorical for ordinal_logit": (
        lambda: R(family="ordinal_logit").fit(X, pd.Categorical(list("abcabc"))), ValueError,
        r"needs an ordered Categorical target"),
    "missing category for ordinal_logit": (
        lambda: R(family="ordinal_logit").fit(
            X, pd.Categorical(["a", "b", None, "a", "b", "a"], ordered=True)), ValueError,
        r"1 of 6 rows with a missing category"),
    "label not among the ordinal categories": (
        lambda: R(family=OrdinalLogit(categories=[3, 4, 5])).fit(X, np.array([3, 4, 9, 5, 3, 1])),
        ValueError, r"2 of 6 rows whose label is not among the categories \[3, 4, 5\]"),
    "ordinal labels outside 0 .. K-1": (
        lambda: R(family=OrdinalLogit(n_classes=3)).fit(X, np.array([0, 1, 2, 3, 1, 0.5])),
        ValueError, r"2 of 6 rows outside the support class indices \{0, 1, 2\}"),
    "ordinal integer labels too large to be class indices": (
        lambda: R(family="ordinal_logit").fit(X, np.array([3, 4, 5, 8, 4, 5]) + 1e9),
        ValueError, r"the largest label, 1000000008, would make 1000000009 classes \(at most "
        r"1000\)\. Pass the ordered levels as OrdinalLogit\(categories=\[\.\.\.\]\)"),
    "Mixture of a discrete family": (lambda: Mixture("poisson", 2), ValueError,
                                     r"continuous component family; 'poisson' is discrete"),
    "Mixture with fewer than 2 components": (lambda: Mixture("normal", 1), ValueError,
                                             r"n_components must be an integer >= 2; got 1"),
    "studentt min_df not a positive number": (lambda: StudentT(min_df=0), ValueError,
                                               r"Family 'studentt' takes min_df > 0 \(a finite "
                                               r"number\) or None; got 0\."),
    "constant target for histogram": (
        lambda: R(family="histogram").fit(X, ZEROS), ValueError,
        r"'histogram' needs at least 2 distinct values of y to place its bins; all 6 rows "
        r"equal 0"),
    "target below the histogram's low": (
        lambda: R(family=Histogram(low=0.0)).fit(X, np.array([1.0, -1, 2, -3, 4, 5])),
        ValueError, r"2 of 6 rows below low=0 of family 'histogram'"),
    "histogram link override": (
        lambda: db.families.get("histogram", links={"scale": "softplus"}), ValueError,
        r"'histogram' has fixed links \(loc and the coefficients identity, scale exp\); got "
        r"other links for \['scale'\]"),
    "histogram without bins": (
        lambda: db.Predictive.from_params("histogram", loc=[0.0], scale=[1.0]), ValueError,
        r"'histogram' has no bins yet"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_raises_the_documented_error(case):
    fn, exc, pattern = CASES[case]
    with pytest.raises(exc, match=pattern):
        fn()


def test_the_docs_table_lists_every_case():
    table = (Path(__file__).resolve().parents[2] / "docs" / "errors.md").read_text()
    rows = re.findall(r"^\| ([^|]+?) \|", table, flags=re.M)
    assert set(CASES) <= {r.strip() for r in rows}, set(CASES) - {r.strip() for r in rows}
