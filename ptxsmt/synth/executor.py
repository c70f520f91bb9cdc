"""Where the work runs: this process, a pool of processes, or a dask cluster.

Each executor maps a picklable function over tasks and yields the results in task
order. dask is an optional extra (`pip install ptxsmt[dask]`): `--executor dask`
connects to a running scheduler (`--scheduler tcp://host:8786`) or starts a local
cluster of `--jobs` workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from multiprocessing import get_context

from ..isa.errors import PtxError
from ..solver import ignore_interrupts

EXECUTORS = ("processes", "dask")


class Serial:
    def map(self, fn: Callable, tasks: Iterable) -> Iterator:
        return map(fn, tasks)

    def close(self) -> None:
        pass


class Processes:
    """A fork pool; Ctrl-C stops this process's waiting and the pool is terminated."""

    def __init__(self, jobs: int):
        self.pool = get_context("fork").Pool(jobs, initializer=ignore_interrupts)

    def map(self, fn: Callable, tasks: Iterable) -> Iterator:
        return self.pool.imap(fn, tasks, chunksize=1)

    def close(self) -> None:
        self.pool.terminate()


class Dask:
    def __init__(self, jobs: int, scheduler: str | None = None, client=None):
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise PtxError("--executor dask needs dask: pip install 'ptxsmt[dask]'") from None
        self.cluster = None
        if client is None and scheduler is None:
            self.cluster = LocalCluster(n_workers=jobs, threads_per_worker=1,
                                        processes=True, dashboard_address=None)
        self.client = client or Client(scheduler or self.cluster)
        self.owned = client is None

    def map(self, fn: Callable, tasks: Iterable) -> Iterator:
        futures = self.client.map(fn, list(tasks), pure=False)
        for future in futures:
            yield future.result()

    def close(self) -> None:
        if self.owned:
            self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def executor(kind: str, jobs: int, scheduler: str | None = None):
    if kind == "dask":
        return Dask(jobs, scheduler)
    if kind != "processes":
        raise PtxError(f"unknown executor {kind!r} (executors: {', '.join(EXECUTORS)})")
    return Processes(jobs) if jobs > 1 else Serial()
