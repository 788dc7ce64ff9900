"""How many threads a fit uses: LightGBM's ``num_threads`` and torch's intra-op pool.

Both LightGBM and torch run OpenMP parallel regions.  On small data a region's work is
shorter than the cost of waking its threads, and an OpenMP thread that finishes early
busy-waits (spins) before it sleeps: when another CPU-bound process holds a core, the
spinning threads burn their time slices waiting for a descheduled sibling.  On the shared
2-core development machine one default gamma fit on 442 rows took 31.8 s of CPU with torch's
two threads against 3.2 s with one (``benchmarks/contention.py``, docs/benchmarks.md).

:func:`num_threads` is the rule: ``n_jobs`` when given, else one thread below
:data:`SINGLE_THREAD_ROWS` training rows and the libraries' defaults above.
:func:`fit_threads` applies it to torch for the duration of a fit (torch's thread count is
the process's: it is set back afterwards).
"""

from __future__ import annotations

import contextlib
import functools

import torch
from threadpoolctl import ThreadpoolController

__all__ = ["SINGLE_THREAD_ROWS", "num_threads", "fit_threads"]

#: Below this many training rows a fit runs LightGBM and torch on one thread unless
#: ``n_jobs`` says otherwise.
SINGLE_THREAD_ROWS = 10_000


def num_threads(n_jobs: int | None, n: int) -> int | None:
    """Threads for a fit on ``n`` training rows: ``n_jobs`` when given, else 1 below
    :data:`SINGLE_THREAD_ROWS` rows and None (the library's default: one per core) above."""
    if n_jobs is not None:
        return int(n_jobs)
    return 1 if n < SINGLE_THREAD_ROWS else None


@functools.cache
def _pools() -> ThreadpoolController:
    """The BLAS and OpenMP pools loaded in this process, found once (a search of the loaded
    libraries costs some 5 ms, a fit's limit on the found pools 0.05 ms).  NumPy's, SciPy's
    and torch's are loaded by ``import distboost``; a library loaded after the first fit is
    not limited."""
    return ThreadpoolController()


@contextlib.contextmanager
def fit_threads(n_jobs: int | None, n: int):
    """Run the block with torch's intra-op threads, and the BLAS and OpenMP pools of NumPy,
    SciPy and scikit-learn (through threadpoolctl), set by :func:`num_threads` (unchanged
    when it says None or a non-positive count), restoring the previous counts after.

    The BLAS pool matters on small data too: the linear start's L-BFGS-B (SciPy) makes many
    small BLAS calls, whose threads spin against a busy core like torch's.  Thread counts
    are global to the process: fits running at once in several Python threads share them (a
    speed matter only; results do not depend on them)."""
    threads = num_threads(n_jobs, n)
    if threads is None or threads < 1:
        yield
        return
    before = torch.get_num_threads()
    with _pools().limit(limits=threads):
        if threads == before:
            yield
            return
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.set_num_threads(before)
