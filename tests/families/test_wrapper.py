"""The wrapper base (``distboost.families.wrapper.Wrapped``): what Censored and Truncated take
from their inner family, link overrides through ``get``, and the capability flags that replaced
the name lists."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import distboost as db
from distboost.families import Censored, Truncated, Wrapped
from distboost.families.censored import CENSORABLE

WRAPPERS = {
    "censored_normal": lambda: db.families.get("censored_normal"),
    "censored_gamma": lambda: Censored("gamma"),
    "truncated_normal": lambda: Truncated("normal", low=0.0),
    "truncated_lognormal": lambda: Truncated("lognormal", low=0.5, high=4.0),
    "truncated_studentt": lambda: Truncated("studentt", high=2.0),
}


@pytest.mark.parametrize("case", WRAPPERS)
def test_wrapper_delegates_parameters_to_its_inner_family(case):
    fam = WRAPPERS[case]()
    assert isinstance(fam, Wrapped)
    inner = fam.inner
    assert fam.name == case
    assert fam.param_names == inner.param_names
    assert fam.links is inner.links
    assert fam.torch_class is inner.torch_class
    assert fam.dispersion_param == inner.dispersion_param
    assert not fam.censorable and not fam.closed_form_crps and not fam.classification


def test_truncated_keeps_the_dispersion_parameter():
    assert Truncated("normal", low=0.0).dispersion_param == "scale"
    assert Truncated("gamma", high=3.0).dispersion_param is None
    # Its own step rule overrides the inner family's; Censored keeps the inner one.
    assert Truncated("normal", low=0.0).default_step == "fisher"
    assert Censored("studentt").default_step == db.families.get("studentt").default_step


@pytest.mark.parametrize("case", WRAPPERS)
def test_get_with_links_overrides_the_inner_links(case):
    fam = WRAPPERS[case]()
    p = fam.param_names[-1]
    other = db.families.get(fam, links={p: "softplus"})
    assert type(other) is type(fam)
    assert other.links[p].name == "softplus"
    assert fam.links[p].name != "softplus"  # the original is untouched
    assert other.support == fam.support
    assert other.get_state()["inner"]["links"][p] == "softplus"
    # Same likelihood at the same natural parameters, whatever the link.
    params = {k: torch.full((3,), v) for k, v in
              fam.init(_target(fam)).items()}
    raw_a = torch.as_tensor(fam.raw_from_params({k: v.numpy() for k, v in params.items()}))
    raw_b = torch.as_tensor(other.raw_from_params({k: v.numpy() for k, v in params.items()}))
    y = torch.as_tensor(_target(fam)[:3])
    torch.testing.assert_close(fam.nll(raw_a, y), other.nll(raw_b, y))


def test_get_with_links_rejects_unknown_parameters():
    with pytest.raises(ValueError, match="has no parameter 'rate'"):
        db.families.get(Truncated("normal", low=0.0), links={"rate": "softplus"})


def test_wrapper_constructors_take_links():
    assert Truncated("normal", low=0.0, links={"scale": "softplus"}).links["scale"].name \
        == "softplus"
    assert Censored("gamma", links={"rate": "softplus"}).links["rate"].name == "softplus"


def _target(fam):
    rng = np.random.default_rng(0)
    if isinstance(fam, Censored):
        t = rng.gamma(2.0, 1.0, size=50) + 0.1
        return np.column_stack([t, np.where(rng.random(50) < 0.3, np.inf, t)])
    y = fam.icdf({p: torch.full((50,), v) for p, v in
                  fam.inner.init(rng.gamma(2.0, 1.0, size=200) + 0.5).items()},
                 torch.as_tensor(rng.uniform(0.05, 0.95, size=50))).numpy()
    return y


def test_regressor_fits_a_truncated_family_with_link_overrides():
    rng = np.random.default_rng(0)
    X = rng.uniform(-2, 2, size=(300, 2))
    y = np.abs(X[:, 0] + rng.normal(size=300))
    fam = Truncated("normal", low=0.0)
    model = db.DistributionalRegressor(family=fam, links={"scale": "softplus"},
                                       n_estimators=20, early_stopping=False).fit(X, y)
    assert model.predict_dist(X[:5]).family.links["scale"].name == "softplus"
    assert (model.predict_quantiles(X[:20], [0.05]) >= 0.0).all()
    assert np.isfinite(model.score(X, y))


# ------------------------------------------------------------------ capabilities
def test_censorable_list_is_derived_from_the_family_flags():
    assert set(CENSORABLE) == {n for n in db.families.available()
                               if db.families.get(n).censorable}
    for name in CENSORABLE:
        fam = db.families.get(name)
        assert not fam.discrete
        assert db.families.get(f"censored_{name}").inner.name == name


@pytest.mark.parametrize("name", ["poisson", "beta", "bernoulli"])
def test_families_that_are_not_censorable_have_no_twin(name):
    with pytest.raises(ValueError, match="has no censored variant"):
        db.families.get(f"censored_{name}")


def test_classification_flag():
    assert {n for n in db.families.available() if db.families.get(n).classification} \
        == {"bernoulli", "categorical"}
