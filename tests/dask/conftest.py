"""A real two-worker ``distributed.LocalCluster`` for the Dask tests (one per test session
and pytest-xdist worker; the tests share the ``dask`` xdist group, so one process runs them)."""

from __future__ import annotations

import multiprocessing

import pytest

pytest.importorskip("distributed")
pytest.importorskip("xgboost")


@pytest.fixture(scope="session")
def client():
    """The workers are forked from one forkserver that has imported the Dask, XGBoost and
    distboost worker modules once (where the platform has forkserver): two spawned workers
    each imported them on their first task, 7-19 s of the first fit on a busy 2-core
    machine (the same fit took 1-1.5 s after), and took 1.5-4 s more to shut down.  The
    workers are processes either way, as they are for users; a worker the nanny restarts
    later is spawned (Dask's default)."""
    import dask
    from distributed import Client, LocalCluster

    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        if method == "forkserver":
            from distributed.utils import get_mp_context

            # Dask sets its own preload (its packages) on the first call; ours replaces it.
            get_mp_context().set_forkserver_preload(
                ["distributed", "xgboost", "distboost.dask._worker"])
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                               dashboard_address=":0", silence_logs=40)
    with cluster, Client(cluster) as c:
        yield c
