"""``ordinal_logit`` (``ordinal.py``) beyond the case table: statsmodels' ``OrderedModel``,
ordered pandas Categorical targets through the estimator, tail accuracy, clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import distboost as db
from distboost.families.ordinal import OrdinalLogit


def _data(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = np.digitize(0.8 * x + rng.logistic(size=n), [-1.0, 0.2, 1.5]).astype(float)
    return x, y


def test_log_likelihood_equals_statsmodels_ordered_model():
    from statsmodels.miscmodels.ordinal_model import OrderedModel

    x, y = _data()
    res = OrderedModel(y, x[:, None], distr="logit").fit(method="bfgs", disp=0, maxiter=2000)
    # Thresholds from statsmodels' parameters (first cutpoint, then log increments), in
    # float64 (its transform_threshold_params returns them rounded to ~1e-7).
    th = np.cumsum(np.r_[res.params[1], np.exp(res.params[2:])])
    fam = OrdinalLogit(n_classes=4)
    params = {f"cutpoints_{j}": torch.full((y.size,), th[j], dtype=torch.float64)
              for j in range(3)}
    params["loc"] = torch.as_tensor(res.params[0] * x)
    ll = fam.log_prob(params, torch.as_tensor(y))
    assert ll.sum().item() == pytest.approx(res.llf, rel=1e-10)
    probs = fam.class_probs(params).numpy()
    np.testing.assert_allclose(probs, res.predict(), rtol=1e-10, atol=1e-14)
    raw = fam.raw_from_params({k: v.numpy() for k, v in params.items()})
    np.testing.assert_allclose(raw[0, :3], res.params[1:], rtol=1e-12)


def test_class_probabilities_keep_their_digits_in_both_tails():
    fam = OrdinalLogit(n_classes=3)
    params = {"cutpoints_0": torch.tensor([-40.0, 30.0], dtype=torch.float64),
              "cutpoints_1": torch.tensor([-39.0, 31.0], dtype=torch.float64),
              "loc": torch.zeros(2, dtype=torch.float64)}
    logp = fam.log_class_probs(params).numpy()
    # Row 0: P(y = 0) = sigmoid(-40), P(y = 1) = sigmoid(-39) - sigmoid(-40).
    assert logp[0, 0] == pytest.approx(-40.0 - np.log1p(np.exp(-40.0)), rel=1e-12)
    assert logp[0, 1] == pytest.approx(np.log(np.exp(-39.0) - np.exp(-40.0)), rel=1e-9)
    assert logp[1, 2] == pytest.approx(-31.0, rel=1e-9)
    assert np.isfinite(logp).all()


def test_ordered_categorical_target_through_the_estimator(tmp_path):
    x, y = _data(n=400)
    labels = np.array(["poor", "fair", "good", "great"])[y.astype(int)]
    target = pd.Series(pd.Categorical(labels, categories=["poor", "fair", "good", "great"],
                                      ordered=True))
    X = pd.DataFrame({"x": x})
    model = db.DistributionalRegressor(family="ordinal_logit", n_estimators=20,
                                       random_state=0).fit(X, target)
    fam = model.family_
    assert fam.n_classes == 4 and fam.categories == ["poor", "fair", "good", "great"]
    dist = model.predict_dist(X)
    probs = dist.probs
    assert probs.shape == (400, 4)
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    # Higher x, higher classes: the boosted loc follows the latent slope.
    assert np.corrcoef(x, dist.mean)[0, 1] > 0.8
    path = tmp_path / "ordinal.json"
    model.save(path)
    back = db.load(path)
    assert back.family_.categories == fam.categories
    np.testing.assert_array_equal(back.predict_dist(X).probs, probs)
    assert back.score(X, target) == model.score(X, target)


def test_bad_ordinal_targets_are_refused_with_counts():
    with pytest.raises(ValueError, match="ordered Categorical"):
        OrdinalLogit().encode_target(pd.Categorical(["a", "b"]))
    with pytest.raises(ValueError, match="1 of 3 rows with a missing category"):
        OrdinalLogit().encode_target(pd.Categorical(["a", None, "b"], ordered=True))
    with pytest.raises(ValueError, match="2 of 4 rows whose label is not among"):
        OrdinalLogit(categories=[3, 4, 5]).encode_target(np.array([3, 9, 4, 1]))
    with pytest.raises(ValueError, match="does not know its number of classes"):
        OrdinalLogit().validate_y(np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"1 of 3 rows outside the support .*ordinal_logit"):
        OrdinalLogit(n_classes=3).validate_y(np.array([0.0, 3.0, 1.0]))


def test_numeric_categories_map_labels_to_positions_and_say_so():
    """Numbers as labels become class indices: the predictions and a Predictive's scores are
    on the indices, which a user who gave numbers would read as numbers (a model of wine
    scores 3..8 predicting 2.4 for a score of 5): a warning says so where they are encoded;
    labels that are their own indices, or strings, give none."""
    import warnings

    fam = OrdinalLogit(categories=[3, 4, 5, 6, 7, 8])
    with pytest.warns(UserWarning, match=r"reads the labels \[3, 4, 5, 6, 7, 8\] as the "
                                         r"class indices 0 \.\. 5.*family.encode_target"):
        np.testing.assert_array_equal(fam.encode_target(np.array([3, 8, 5])), [0.0, 5.0, 2.0])
    assert fam.param_names[-1] == "loc" and len(fam.param_names) == 6
    scores = pd.Categorical([5, 3, 8], categories=[3, 4, 5, 6, 7, 8], ordered=True)
    with pytest.warns(UserWarning, match="reads the labels"):
        OrdinalLogit().encode_target(scores)  # an ordered Categorical of numbers: the same
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        OrdinalLogit(categories=[0, 1, 2]).encode_target(np.array([0, 2]))
        OrdinalLogit(categories=["low", "high"]).encode_target(np.array(["high", "low"]))
