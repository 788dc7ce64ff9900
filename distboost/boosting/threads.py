"""How many threads a fit uses: LightGBM's ``num_threads``, torch's intra-op pool and BLAS.

Both LightGBM and torch run OpenMP parallel regions, and an OpenMP thread that finishes its
part of a region early busy-waits (spins) before it sleeps.  When another CPU-bound process
holds a core, a descheduled sibling keeps the others spinning through their time slices:

- on small data a region's work is shorter than the cost of waking its threads: on the shared
  2-core development machine one default gamma fit on 442 rows took 31.8 s of CPU with
  torch's two threads against 3.2 s with one;
- above that, a default fit of 30,000 rows took 0.6 s quiet and 2-24 s beside two busy
  processes with two threads, 1.3-1.5 s with one (``benchmarks/contention.py``,
  docs/engine.md "Threads and a busy machine").

The rule: ``n_jobs`` when given; else one thread below :data:`SINGLE_THREAD_ROWS` rows of
the fit; above, as many threads as the cores that other processes leave free when the fit
starts (:func:`free_cores`, at least one), or the libraries' defaults where the run queue
cannot be read.  :func:`fit_threads` takes that decision once per fit, from the fit's rows,
and applies it to torch and the BLAS and OpenMP pools for the fit's duration (the counts are
the process's: they are set back afterwards); inside it, :func:`num_threads` returns that
count to every tree backend and point model built, whatever rows they train on (a held-out
split's 9,450 of a 10,500-row fit ran LightGBM on one thread while torch ran on all cores).
Outside a fit :func:`num_threads` applies the rule to the rows it is given.  A fit's results
do not depend on its thread count (LightGBM's ``deterministic`` mode;
tests/test_robustness.py).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import time

import torch
from threadpoolctl import ThreadpoolController

__all__ = ["SINGLE_THREAD_ROWS", "PROBES", "num_threads", "fit_threads", "free_cores",
           "usable_cores"]

#: Below this many training rows a fit runs LightGBM and torch on one thread unless
#: ``n_jobs`` says otherwise.
SINGLE_THREAD_ROWS = 10_000
#: Snapshots of the run queue that :func:`free_cores` takes (their median counts), and the
#: pause between two (some 5 ms in all, once per fit above :data:`SINGLE_THREAD_ROWS`).
PROBES = 5
PROBE_PAUSE = 0.001

#: Not inside a fit (the value of :data:`_FIT_THREADS` outside :func:`fit_threads`).
_OUTSIDE = object()
#: The thread count of the fit running in this context (None: the libraries' defaults;
#: :data:`_OUTSIDE` outside a fit).
_FIT_THREADS: contextvars.ContextVar = contextvars.ContextVar("distboost_fit_threads",
                                                              default=_OUTSIDE)


def num_threads(n_jobs: int | None, n: int) -> int | None:
    """Threads for ``n`` training rows: ``n_jobs`` when given; inside a fit the count
    :func:`fit_threads` chose for it (from the fit's rows, not ``n``: one count for torch
    and every backend of the fit); outside a fit 1 below :data:`SINGLE_THREAD_ROWS` rows and
    None above (the library's default, one per core)."""
    if n_jobs is not None:
        return int(n_jobs)
    fit = _FIT_THREADS.get()
    if fit is not _OUTSIDE:
        return fit
    return 1 if n < SINGLE_THREAD_ROWS else None


def usable_cores() -> int:
    """The cores this process may run on: its CPU affinity, capped by a cgroup (v2) CPU
    quota where one is set."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(float(quota) / float(period))))
    except (OSError, ValueError):
        pass
    return max(1, cores)


def _runnable(loadavg: str = "/proc/loadavg", tasks: str = "/proc/self/task") -> int:
    """Runnable threads of other processes now: the kernel's count of running tasks
    (``/proc/loadavg``'s fourth field) less this process's threads in state R."""
    with open(loadavg) as f:
        running = int(f.read().split()[3].split("/")[0])
    own = 0
    for tid in os.listdir(tasks):
        try:
            with open(os.path.join(tasks, tid, "stat")) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue  # a thread that ended meanwhile
        own += state == "R"
    return max(running - own, 0)


def free_cores(probes: int = PROBES, pause: float = PROBE_PAUSE) -> float | None:
    """Cores that other processes leave free, from the median of ``probes`` snapshots of
    the run queue; None where it cannot be read (not Linux).

    The run queue counts every core of the machine: with fewer usable cores than online
    ones (a CPU affinity or a container's cpuset), the other processes' runnable threads
    are counted in proportion."""
    counts = []
    for i in range(probes):
        if i:
            time.sleep(pause)
        try:
            counts.append(_runnable())
        except (OSError, ValueError, IndexError):
            return None
    others = sorted(counts)[len(counts) // 2]
    cores = usable_cores()
    online = os.cpu_count() or cores
    if online > cores:
        others = others * cores / online
    return max(cores - others, 0.0)


def _fit_count(n_jobs: int | None, n: int) -> int | None:
    """The thread count a fit on ``n`` rows runs (a fit inside another, such as a candidate
    of ``family="auto"``, by its own rows): ``n_jobs``, 1 below :data:`SINGLE_THREAD_ROWS`
    rows, the cores free now above (None where they cannot be counted)."""
    if n_jobs is not None:
        return int(n_jobs)
    if n < SINGLE_THREAD_ROWS:
        return 1
    free = free_cores()
    if free is None:
        return None
    return int(min(max(round(free), 1), usable_cores()))


@functools.cache
def _pools() -> ThreadpoolController:
    """The BLAS and OpenMP pools loaded in this process, found once (a search of the loaded
    libraries costs some 5 ms, a fit's limit on the found pools 0.05 ms).  NumPy's, SciPy's
    and torch's are loaded by ``import distboost``; a library loaded after the first fit is
    not limited."""
    return ThreadpoolController()


@contextlib.contextmanager
def fit_threads(n_jobs: int | None, n: int):
    """Run a fit on ``n`` training rows with its thread count: torch's intra-op threads, and
    the BLAS and OpenMP pools of NumPy, SciPy and scikit-learn (through threadpoolctl), set
    to the count of :func:`num_threads`'s rule (above :data:`SINGLE_THREAD_ROWS` rows without
    ``n_jobs``: the cores free when the fit starts), restoring the previous counts after;
    the tree backends built inside read the same count (:func:`num_threads`).

    The BLAS pool matters on small data too: the linear start's L-BFGS-B (SciPy) makes many
    small BLAS calls, whose threads spin against a busy core like torch's.  Thread counts
    are global to the process: fits running at once in several Python threads share them (a
    speed matter only; results do not depend on them)."""
    threads = _fit_count(n_jobs, n)
    token = _FIT_THREADS.set(threads if threads is None or threads >= 1 else None)
    before = torch.get_num_threads()
    try:
        if threads is None or threads < 1:
            yield
            return
        with _pools().limit(limits=threads):
            if threads == before:
                yield
                return
            torch.set_num_threads(threads)
            try:
                yield
            finally:
                torch.set_num_threads(before)
    finally:
        _FIT_THREADS.reset(token)
