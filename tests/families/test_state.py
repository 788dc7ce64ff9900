"""``Family.get_state`` / ``distboost.families.from_state``: the family part of a saved model.

Every registered family, the wrappers (with link overrides and finite or open ends) and a
parametrised family round-trip through JSON to a family with the same state and bit-identical
likelihoods."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import distboost as db
from distboost.families import Censored, Truncated
from distboost.families.categorical import Categorical

FAMILIES = {name: (lambda name=name: db.families.get(name)) for name in db.families.available()}
FAMILIES.update({
    "categorical(4)": lambda: Categorical(n_classes=4),
    "categorical-links": lambda: Categorical(n_classes=3, links={"logits_1": "softplus"}),
    "gamma-softplus": lambda: db.families.get("gamma", links={"rate": "softplus"}),
    "censored_lognormal": lambda: db.families.get("censored_lognormal"),
    "censored-weibull-softplus": lambda: Censored("weibull", links={"scale": "softplus"}),
    "truncated-normal-low": lambda: Truncated("normal", low=0.0),
    "truncated-gamma-both": lambda: Truncated("gamma", low=0.25, high=7.5),
    "truncated-studentt-high-links": lambda: Truncated(
        db.families.get("studentt", links={"df": "softplus"}), high=1.0 / 3.0),
    "truncated-logistic-tiny-low": lambda: Truncated("logistic", low=-1e-300),
    "ordinal_logit(5)": lambda: db.families.ordinal.OrdinalLogit(n_classes=5),
    "ordinal_logit-categories": lambda: db.families.ordinal.OrdinalLogit(
        categories=["low", "mid", "high"], links={"loc": "softplus"}),
    "mixture-normal-2": lambda: db.families.Mixture("normal", n_components=2),
    "mixture-gamma-3-links": lambda: db.families.Mixture("gamma", n_components=3,
                                                         links={"rate": "softplus"}),
    "multivariate_normal(3)-names": lambda: db.families.get("multivariate_normal").with_dim(
        3, target_names=["a", "b", "c"]),
    "dirichlet(2)-links": lambda: db.families.get(
        "dirichlet", links={"concentration_1": "softplus"}).with_dim(2),
    "dirichlet(4)": lambda: db.families.get("dirichlet").with_dim(4),
    "histogram-fitted": lambda: _histogram(np.random.default_rng(0).gamma(2.0, size=300)),
    "histogram-integers-bounded": lambda: _histogram(
        np.random.default_rng(1).poisson(30.0, size=300).astype(float), high=60.0),
    "histogram-real-line": lambda: _histogram(np.random.default_rng(2).normal(size=300)),
})
PLACEHOLDERS = ("categorical", "ordinal_logit", "multivariate_normal", "dirichlet", "histogram")


def _histogram(y, **kwargs):
    fam = db.families.histogram.Histogram(n_bins=12, n_basis=3, **kwargs)
    fam.encode_target(y)
    return fam


def _json(state):
    text = json.dumps(state, allow_nan=False)  # strict JSON: no inf, no NaN
    return json.loads(text)


@pytest.mark.parametrize("case", FAMILIES)
def test_state_round_trips_through_json(case):
    fam = FAMILIES[case]()
    state = fam.get_state()
    back = db.families.from_state(_json(state))
    assert type(back) is type(fam)
    assert back.get_state() == state
    assert back.name == fam.name
    if case in PLACEHOLDERS:  # without classes or parts
        return
    assert back.param_names == fam.param_names
    assert {p: lk.name for p, lk in back.links.items()} == \
        {p: lk.name for p, lk in fam.links.items()}
    assert back.support == fam.support
    assert back.dispersion_param == fam.dispersion_param
    assert back.default_step == fam.default_step


@pytest.mark.parametrize("case", [c for c in FAMILIES if c not in PLACEHOLDERS])
def test_rebuilt_family_has_bit_identical_likelihood(case):
    fam = FAMILIES[case]()
    back = db.families.from_state(_json(fam.get_state()))
    rng = np.random.default_rng(0)
    raw = torch.as_tensor(rng.normal(0.0, 0.3, size=(20, fam.n_params)))
    with torch.no_grad():
        params = fam.params_from_raw(raw)
        if isinstance(fam, Censored):
            t = fam.icdf(params, torch.full((20,), 0.4))
            y = torch.stack([t, torch.where(torch.arange(20) % 2 == 0, t, t + 1.0)], dim=1)
        elif fam.multivariate:
            y = fam.distribution(params).sample()
        elif fam.classification:
            y = torch.as_tensor(rng.integers(0, fam.support.high + 1, size=20), dtype=torch.float64)
        else:
            y = fam.icdf(params, torch.as_tensor(rng.uniform(0.1, 0.9, size=20)))
        a, b = fam.nll(raw, y), back.nll(raw, y)
    assert torch.equal(a, b)


def test_truncated_state_saves_open_ends_as_none():
    state = Truncated("normal", low=0.0).get_state()
    assert state == {"wrapper": "truncated", "low": 0.0, "high": None,
                     "inner": {"name": "normal", "links": {"loc": "identity", "scale": "exp"}}}


def test_get_params_is_unchanged():
    assert db.families.get("gamma").get_params() == {"links": {"concentration": "exp",
                                                               "rate": "exp"}}
    assert Categorical(3).get_params()["n_classes"] == 3
    assert Truncated("normal", low=0.0).get_params() == db.families.get("normal").get_params()


@pytest.mark.parametrize("state, match", [
    ({"name": "no_such_family", "links": {}}, "Unknown family 'no_such_family'"),
    ({"wrapper": "folded", "inner": {"name": "normal"}}, "Unknown family wrapper 'folded'"),
    ({"wrapper": "censored"}, "no 'inner' family state"),
    ({"name": "normal", "links": {}, "n_classes": 3}, "Cannot rebuild family 'normal'"),
    (["normal"], "A family state is a dict"),
])
def test_from_state_errors_name_the_problem(state, match):
    with pytest.raises(ValueError, match=match):
        db.families.from_state(state)
