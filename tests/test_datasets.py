"""Tests of distboost.datasets."""

from pathlib import Path

import numpy as np
import pytest

from distboost.datasets import load_diabetes, load_survival, load_uci, make_heteroscedastic_sine

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def test_sine_generator_matches_its_definition():
    X, y, sd = make_heteroscedastic_sine(20_000, random_state=0)
    x = X[:, 0]
    assert X.shape == (20_000, 1) and y.shape == sd.shape == (20_000,)
    assert x.min() >= -3 and x.max() <= 3
    np.testing.assert_allclose(sd, 0.05 + 0.1 * x**2)
    z = (y - np.sin(x)) / sd
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1) < 0.03
    X2, y2, _ = make_heteroscedastic_sine(20_000, random_state=0)
    np.testing.assert_array_equal(y, y2)


def test_diabetes_is_offline_and_positive():
    X, y = load_diabetes()
    assert X.shape == (442, 10) and y.shape == (442,)
    assert (y > 0).all()


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not beside the checkout")
def test_uci_reader_uses_the_split_files():
    X, y, train, test = load_uci(SHARED / "uci" / "concrete", split=0)
    assert X.shape == (1030, 8) and y.shape == (1030,)
    assert len(np.intersect1d(train, test)) == 0
    assert len(train) + len(test) == 1030


@pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/data is not beside the checkout")
def test_survival_reader():
    X, time, event = load_survival(SHARED / "survival" / "veterans.csv")
    assert len(X) == len(time) == len(event) == 137
    assert event.sum() == 128
    assert any(str(t) == "category" for t in X.dtypes)


def test_uci_reader_rejects_other_folders(tmp_path):
    with pytest.raises(ValueError, match="not a UCI benchmark folder"):
        load_uci(tmp_path)


def test_bundled_survival_data_load_without_the_shared_folder():
    from distboost.datasets import load_gbsg2, load_veterans

    X, time, event = load_gbsg2()
    assert X.shape == (686, 8) and event.sum() == 299 and (time > 0).all()
    assert X["tgrade"].dtype == "category"
    X, time, event = load_veterans()
    assert X.shape == (137, 6) and event.sum() == 128
    if SHARED.is_dir():  # the same records as the benchmarks' copy
        X2, time2, event2 = load_survival(SHARED / "survival" / "veterans.csv")
        np.testing.assert_array_equal(time, time2)


def test_the_package_bundles_no_data_files():
    """The project's rule: benchmark data stay in ../shared, nothing is copied into the
    package; the survival loaders read scikit-survival's own copies."""
    root = Path(__file__).resolve().parents[1]
    assert not list((root / "distboost").rglob("*.csv"))
    from distboost.datasets import load_gbsg2

    X, time, event = load_gbsg2()
    shared = root.parent / "shared" / "data" / "survival" / "gbsg2.csv"
    if shared.is_file():  # the same data as the benchmark copy
        Xs, ts, es = load_survival(shared)
        np.testing.assert_array_equal(time, ts)
        np.testing.assert_array_equal(event, es)
