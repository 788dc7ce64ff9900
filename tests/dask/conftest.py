"""A real two-worker ``distributed.LocalCluster`` for the Dask tests (one per test session
and pytest-xdist worker; the tests share the ``dask`` xdist group, so one process runs them)."""

from __future__ import annotations

import pytest

pytest.importorskip("distributed")
pytest.importorskip("xgboost")


@pytest.fixture(scope="session")
def client():
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=40) as cluster, \
            Client(cluster) as c:
        yield c
