"""Tests of the family registry."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions as D

import distboost as db
from distboost.families import Family, register
from distboost.families.support import REAL


@pytest.fixture(autouse=True)
def _restore_registry():
    """Families registered by a test are removed afterwards (other tests list the registry)."""
    from distboost.families import registry

    saved = dict(registry._REGISTRY)
    yield
    registry._REGISTRY.clear()
    registry._REGISTRY.update(saved)


def test_available_lists_the_families_sorted():
    names = db.families.available()
    assert names == sorted(names) and len(names) == len(set(names))
    assert {"normal", "gamma", "poisson", "multivariate_normal"} <= set(names)


def test_unknown_family_lists_known_names():
    with pytest.raises(ValueError, match=r"Unknown family 'gaussian'; known families are \["):
        db.families.get("gaussian")


def test_unknown_parameter_in_links():
    with pytest.raises(ValueError, match="has no parameter 'sigma'"):
        db.families.get("normal", links={"sigma": "softplus"})
    with pytest.raises(ValueError, match="Unknown link"):
        db.families.get("normal", links={"scale": "cube"})


def test_get_instance_returns_it_and_overrides_links():
    fam = db.families.get("gamma")
    assert db.families.get(fam) is fam
    soft = db.families.get(fam, links={"rate": "softplus"})
    assert soft.links["rate"].name == "softplus" and fam.links["rate"].name == "exp"


def test_register_a_user_family_as_decorator():
    @register
    class ShiftedLaplace(Family):
        name = "test_shifted_laplace"
        torch_class = D.Laplace
        param_names = ("loc", "scale")
        support = REAL

        def start_values(self, y, w):
            return {"loc": float(np.median(y)), "scale": float(np.mean(np.abs(y - np.median(y))))}

    fam = db.families.get("test_shifted_laplace")
    assert isinstance(fam, ShiftedLaplace) and fam.param_names == ("loc", "scale")
    y = np.random.default_rng(0).laplace(2.0, 0.5, size=5000)
    fit = fam.init(y)  # numerical MLE through the base class
    assert fit["loc"] == pytest.approx(2.0, abs=0.05)
    assert fit["scale"] == pytest.approx(0.5, rel=0.05)
    raw = torch.as_tensor(fam.raw_from_params(fit)).reshape(1, -1).expand(3, -1)
    assert fam.nll(raw, torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)).shape == (3,)


def test_register_with_a_name_and_factory():
    register("test_normal_alias", lambda links=None: db.families.get("normal", links=links))
    assert db.families.get("test_normal_alias").name == "normal"


def test_user_family_without_start_values_uses_the_default_start():
    @register
    class PlainGumbel(Family):
        name = "test_plain_gumbel"
        torch_class = D.Gumbel
        param_names = ("loc", "scale")
        support = REAL

    y = np.random.default_rng(1).gumbel(3.0, 0.5, size=5000)
    fit = db.families.get("test_plain_gumbel").init(y)
    assert fit["loc"] == pytest.approx(3.0, abs=0.05)
    assert fit["scale"] == pytest.approx(0.5, rel=0.05)
