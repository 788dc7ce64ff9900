"""``family="auto"`` on the cluster: the in-process comparison on a seeded sample."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe")

from distboost import DistributionalRegressor  # noqa: E402
from distboost.dask import DaskDistributionalRegressor  # noqa: E402
from distboost.dask.auto import SAMPLE_ROWS, not_distributed  # noqa: E402
from distboost.selection.auto import choose  # noqa: E402

pytestmark = pytest.mark.xdist_group("dask")


def test_families_read_from_the_target_are_not_compared():
    assert {"histogram", "ordinal_logit"} <= set(not_distributed())
    assert "normal" not in not_distributed()


def test_auto_compares_the_rows_in_process_then_trains_the_choice(client):
    rng = np.random.default_rng(3)
    n = 300  # below SAMPLE_ROWS: the sample is every row, in order
    assert n < SAMPLE_ROWS
    X = pd.DataFrame(rng.uniform(-1, 1, size=(n, 2)), columns=["a", "b"])
    y = pd.Series(rng.poisson(np.exp(2.0 + X["a"])).astype(float), name="y")
    Xd = dd.from_pandas(X, npartitions=3, sort=False)
    yd = dd.from_pandas(y, npartitions=3, sort=False)
    model = DaskDistributionalRegressor(family="auto", n_estimators=5, random_state=0,
                                        client=client).fit(Xd, yd)
    table = model.family_table_
    assert table.attrs["not_compared"] == ["histogram"]  # the in-process candidate it drops
    assert table.attrs["sampled_from"] == n
    assert model.family_.name == table.attrs["chosen"]
    assert model.get_params()["family"] == "auto"
    # the same comparison in-process, on the same rows, seed and options
    own = DistributionalRegressor().get_params()
    same = DistributionalRegressor(**{k: v for k, v in model.get_params().items() if k in own})
    local_table = choose(same, X, y, exclude=["histogram"])[1]
    pd.testing.assert_series_equal(table["crps_mean"], local_table["crps_mean"])
    assert list(table["family"]) == list(local_table["family"])
    local = model.to_local()
    assert local.family_.name == model.family_.name
    assert local.family_table_ is table
    np.testing.assert_allclose(local.predict_params(X.iloc[:5])["rate"],
                               model.predict_params(Xd).compute()["rate"].iloc[:5])
