"""Tests of distboost.families.categorical: the bernoulli and categorical families.

Independent references: weighted class frequencies counted with numpy, the autograd Hessian
of the negative log-likelihood (equal to the expected Fisher information for these exponential
families, whatever y), a Monte Carlo average of score outer products, central finite
differences, and scipy.stats.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.stats as st
import torch

import distboost as db
from distboost.families.categorical import FREQ_FLOOR, Bernoulli, Categorical


def _raw(k, n, seed=0):
    return torch.randn((n, k), generator=torch.Generator().manual_seed(seed),
                       dtype=torch.float64) * 1.5


def _hessian_of_nll(family, raw, y):
    """Per-row Hessian of the NLL by autograd, shape (n, K, K)."""
    raw = raw.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(family.nll(raw, y).sum(), raw, create_graph=True)
    rows = [torch.autograd.grad(g[:, j].sum(), raw, retain_graph=True)[0]
            for j in range(raw.shape[1])]
    return torch.stack(rows, dim=1).detach()


# ---------------------------------------------------------------------- MLE
def test_categorical_mle_is_the_log_weighted_frequencies():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, size=500).astype(float)
    w = rng.uniform(0.1, 3.0, size=500)
    fit = Categorical(n_classes=4).init(y, sample_weight=w)
    freq = np.array([w[y == k].sum() for k in range(4)]) / w.sum()
    np.testing.assert_allclose([fit[f"logits_{k}"] for k in range(4)], np.log(freq), rtol=1e-12)


def test_categorical_mle_maximises_the_likelihood():
    y = np.random.default_rng(1).choice(3, size=400, p=[0.1, 0.3, 0.6]).astype(float)
    fam = Categorical(n_classes=3)
    best = fam.init_raw(y)
    yt = torch.as_tensor(y)

    def mean_nll(raw):
        return fam.nll(torch.as_tensor(raw).reshape(1, -1).expand(y.size, -1), yt).mean().item()

    # Any perturbation that changes the probabilities increases the NLL.
    for d in np.random.default_rng(2).normal(size=(20, 3)) * 0.05:
        assert mean_nll(best + d) >= mean_nll(best) - 1e-12


def test_absent_class_starts_at_the_floor():
    fit = Categorical(n_classes=3).init(np.array([0.0, 0.0, 2.0]))
    assert fit["logits_1"] == pytest.approx(np.log(FREQ_FLOOR), rel=1e-6)
    assert np.isfinite(list(fit.values())).all()
    assert Bernoulli().init(np.zeros(5))["logits"] == pytest.approx(np.log(FREQ_FLOOR), rel=1e-6)


def test_bernoulli_mle_is_the_logit_of_the_weighted_mean():
    y = np.array([0.0, 1.0, 1.0, 0.0, 1.0])
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.0])
    p = (w * y).sum() / w.sum()
    assert Bernoulli().init(y, w)["logits"] == pytest.approx(np.log(p / (1 - p)), rel=1e-12)


# ---------------------------------------------------------------------- Fisher information
@pytest.mark.parametrize("k", [2, 3, 7])
def test_categorical_fisher_equals_autograd_hessian(k):
    fam = Categorical(n_classes=k)
    raw = _raw(k, 40)
    y = torch.as_tensor(np.random.default_rng(k).integers(0, k, 40).astype(float))
    fisher = fam.fisher_information(raw)
    assert fisher.shape == (40, k, k)
    torch.testing.assert_close(fisher, _hessian_of_nll(fam, raw, y), rtol=1e-10, atol=1e-12)
    # Singular along the all-ones direction (a common shift of the logits), PSD otherwise.
    torch.testing.assert_close(fisher @ torch.ones(k, dtype=torch.float64),
                               torch.zeros(40, k, dtype=torch.float64), rtol=0, atol=1e-12)
    assert (torch.linalg.eigvalsh(fisher) > -1e-12).all()


def test_categorical_fisher_matches_monte_carlo():
    from distboost.families.numerics.fisher import fisher_monte_carlo

    fam = Categorical(n_classes=4)
    raw = _raw(4, 3, seed=5)
    mc = fisher_monte_carlo(fam, raw, m=200_000, seed=1)
    torch.testing.assert_close(mc, fam.fisher_information(raw), rtol=0, atol=4e-3)


def test_bernoulli_fisher_equals_hessian_and_p_one_minus_p():
    fam = Bernoulli()
    raw = _raw(1, 30)
    y = torch.as_tensor(np.random.default_rng(0).integers(0, 2, 30).astype(float))
    fisher = fam.fisher_information(raw)
    assert fisher.shape == (30, 1)  # diagonal form
    p = 1.0 / (1.0 + np.exp(-raw[:, 0].numpy()))
    np.testing.assert_allclose(fisher[:, 0].numpy(), p * (1 - p), rtol=1e-12)
    np.testing.assert_allclose(fisher[:, 0].numpy(),
                               _hessian_of_nll(fam, raw, y)[:, 0, 0].numpy(), rtol=1e-10)


# ---------------------------------------------------------------------- gradients
@pytest.mark.parametrize("family", [Bernoulli(), Categorical(n_classes=5)], ids=["bern", "cat"])
def test_nll_gradient_matches_finite_differences_and_closed_form(family):
    k = family.n_params
    raw0 = _raw(k, 25, seed=3)
    y = torch.as_tensor(np.random.default_rng(4).integers(0, max(k, 2), 25).astype(float))
    raw = raw0.clone().requires_grad_(True)
    (g,) = torch.autograd.grad(family.nll(raw, y).sum(), raw)
    eps = 1e-6
    for j in range(k):
        e = torch.zeros_like(raw0)
        e[:, j] = eps
        with torch.no_grad():
            fd = (family.nll(raw0 + e, y) - family.nll(raw0 - e, y)) / (2 * eps)
        np.testing.assert_allclose(g[:, j].numpy(), fd.numpy(), rtol=1e-6, atol=1e-8)
    # Closed form p - onehot(y) (Bernoulli: p - y).
    if k == 1:
        want = torch.sigmoid(raw0[:, 0]) - y
        np.testing.assert_allclose(g[:, 0].numpy(), want.numpy(), rtol=1e-10)
    else:
        want = torch.softmax(raw0, -1) - torch.nn.functional.one_hot(y.long(), k)
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-10, atol=1e-14)


def test_log_prob_matches_scipy_and_broadcasts():
    fam = Categorical(n_classes=3)
    raw = _raw(3, 4, seed=8)
    params = fam.params_from_raw(raw)
    p = torch.softmax(raw, -1).numpy()
    y = torch.tensor([[0.0, 1.0, 2.0, 1.0], [2.0, 2.0, 0.0, 0.0]])  # (m=2, n=4)
    lp = fam.log_prob(params, y).numpy()
    want = np.log(np.take_along_axis(p, y.numpy().T.astype(int), axis=1)).T
    np.testing.assert_allclose(lp, want, rtol=1e-12)
    for i in range(4):
        law = st.multinomial(1, p[i])
        np.testing.assert_allclose(lp[0, i], law.logpmf(np.eye(3)[int(y[0, i])]), rtol=1e-10)


# ---------------------------------------------------------------------- construction, errors
def test_number_of_classes_survives_links_and_persistence_round_trip(tmp_path):
    fam = Categorical(n_classes=4)
    again = db.families.get("categorical", links=fam.get_params()["links"])
    assert again.n_classes == 4 and again.param_names == fam.param_names
    assert db.families.get(fam, links={"logits_2": "identity"}).n_classes == 4

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0.5)
    model = db.DistributionalRegressor(family=fam, n_estimators=10, random_state=0).fit(X, y)
    model.save(tmp_path / "m.json")
    saved = json.loads((tmp_path / "m.json").read_text())
    # The file holds the family's whole state (n_classes included), wherever the format puts it.
    assert _contains(saved, fam.get_state())
    loaded = db.load(tmp_path / "m.json")
    assert loaded.family_.n_classes == 4
    np.testing.assert_allclose(loaded.predict_dist(X).probs, model.predict_dist(X).probs)
    assert model.predict_dist(X).probs.shape == (300, 4)


def test_placeholder_and_bad_n_classes_raise():
    placeholder = db.families.get("categorical")
    assert repr(placeholder) == "Categorical(n_classes=None)"
    with pytest.raises(ValueError, match="does not know its number of classes"):
        placeholder.validate_y([0.0, 1.0])
    with pytest.raises(ValueError, match="does not know its number of classes"):
        _ = placeholder.param_names
    with pytest.raises(ValueError, match="n_classes >= 2"):
        Categorical(n_classes=1)
    with pytest.raises(ValueError, match="n_classes >= 2"):
        Categorical(n_classes=2.5)
    with pytest.raises(ValueError, match="accepts links only for all of"):
        db.families.get("categorical", links={"logits_1": "identity"})
    with pytest.raises(ValueError, match="has no parameter 'logits_3'"):
        Categorical(n_classes=3, links={"logits_3": "identity"})


def test_targets_outside_the_classes_raise_with_counts():
    fam = Categorical(n_classes=3)
    with pytest.raises(ValueError, match=r"2 of 5 rows outside the support class indices "
                                         r"\{0, 1, 2\} of family 'categorical'"):
        fam.validate_y([0.0, 1.0, 3.0, -1.0, 2.0])
    with pytest.raises(ValueError, match=r"1 of 3 rows outside .*\{0, 1\}.*'bernoulli'"):
        Bernoulli().validate_y([0.0, 0.5, 1.0])
    with pytest.raises(ValueError, match="1 of 3 rows that are NaN"):
        fam.validate_y([0.0, np.nan, 1.0])
    with pytest.raises(ValueError, match=r"class indices \{0, 1, \.\.\., 9\}"):
        Categorical(n_classes=10).validate_y([12.0])


def test_unordered_methods_raise_and_bernoulli_ordered_methods_work():
    fam = Categorical(n_classes=3)
    params = fam.params_from_raw(_raw(3, 2))
    for call in (lambda: fam.cdf(params, torch.zeros(2)), lambda: fam.icdf(params, 0.5),
                 lambda: fam.mean(params), lambda: fam.variance(params),
                 lambda: fam.log_sf(params, torch.zeros(2))):
        with pytest.raises(ValueError, match="unordered classes"):
            call()
    bern = Bernoulli()
    logits = torch.tensor([-1.0, 0.5], dtype=torch.float64)
    p = torch.sigmoid(logits).numpy()
    law = st.bernoulli(p)
    bp = {"logits": logits}
    for y in (0.0, 1.0):
        np.testing.assert_allclose(bern.cdf(bp, torch.full((2,), y)).numpy(), law.cdf(y))
        np.testing.assert_allclose(bern.log_sf(bp, torch.full((2,), y)).exp().numpy(),
                                   law.sf(y), atol=1e-300)
    q = torch.tensor([[0.2, 0.2], [0.5, 0.5], [0.9, 0.9]], dtype=torch.float64)
    np.testing.assert_array_equal(bern.icdf(bp, q).numpy(), law.ppf(q.numpy()))


def test_clone_of_an_estimator_holding_the_family_keeps_n_classes():
    from sklearn.base import clone

    model = db.DistributionalRegressor(family=Categorical(n_classes=5))
    copy = clone(model)
    assert copy.family is not model.family and copy.family.n_classes == 5


def test_auto_step_resolves_to_fisher_for_both_families():
    X = np.random.default_rng(0).normal(size=(200, 2))
    y = (X[:, 0] > 0).astype(float) + (X[:, 1] > 0)
    for family, target in ((Bernoulli(), y > 0), (Categorical(n_classes=3), y)):
        model = db.DistributionalRegressor(family=family, step="auto", n_estimators=3,
                                           random_state=0).fit(X, target.astype(float))
        assert model.step_ == "fisher"


def _contains(tree, value) -> bool:
    """Whether ``value`` is ``tree`` or any dict value / list item nested in it."""
    if tree == value:
        return True
    if isinstance(tree, dict):
        return any(_contains(v, value) for v in tree.values())
    if isinstance(tree, list):
        return any(_contains(v, value) for v in tree)
    return False
