"""The worker pool: each job runs in a process of its own, stopped at its limit on wall
time and on memory (an address-space limit set in the process), or when cancelled; a
bounded number run at once and a bounded number wait, so that one slow proof blocks no
other and a flood is refused, not queued without end.

Processes come from a fork server (multiprocessing's "forkserver"): forking the server
itself, whose threads may hold locks, is not safe; a fork server is a clean process
that has already imported the prover, so a job starts in milliseconds."""

from __future__ import annotations

import multiprocessing
import resource
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

KEEP = 256  # finished jobs remembered (their outcome shown once more, then read from the store)
ACTIVE = ("queued", "running")


class Busy(Exception):
    """Every worker is taken and the queue is full."""


@dataclass
class Job:
    key: str
    limit: float  # seconds of wall time, once running
    state: str = "queued"  # queued | running | done | failed | stopped | cancelled
    submitted: float = field(default_factory=time.monotonic)
    started: float | None = None
    finished: float | None = None
    outcome: dict | None = None  # what the call returned (state "done")
    error: str = ""  # why not (failed, stopped, cancelled)
    pid: int | None = None  # its worker process, once started
    process: Any = field(default=None, repr=False)  # that process (multiprocessing's)
    cancel: threading.Event = field(default_factory=threading.Event, repr=False)

    def elapsed(self) -> float:
        if self.started is None:
            return 0.0
        return (self.finished or time.monotonic()) - self.started


class Pool:
    def __init__(self, workers: int = 2, queue: int = 8, memory: int = 2 << 30,
                 preload: tuple[str, ...] = ("ptxsmt.serve.work",)):
        self.workers, self.queue, self.memory = workers, queue, memory
        self._context = multiprocessing.get_context("forkserver")
        self._context.set_forkserver_preload(list(preload))
        self._threads = ThreadPoolExecutor(workers, thread_name_prefix="ptxsmt-job")
        self._jobs: OrderedDict[str, Job] = OrderedDict()
        self._lock = threading.Lock()

    def submit(self, key: str, fn: Callable, args: tuple, limit: float) -> Job:
        """The job under `key`: the one already queued or running, else a new one."""
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.state in ACTIVE:
                return job
            if sum(j.state in ACTIVE for j in self._jobs.values()) >= self.workers + self.queue:
                raise Busy(f"all {self.workers} workers are busy and {self.queue} requests "
                           "wait: try again in a minute")
            job = self._jobs[key] = Job(key, limit)
            self._jobs.move_to_end(key)
            self._forget_old()
        self._threads.submit(self._run, job, fn, args)
        return job

    def get(self, key: str) -> Job | None:
        with self._lock:
            return self._jobs.get(key)

    def forget(self, key: str) -> None:
        """Drop a finished job (its outcome is stored): a later visit reads the store."""
        with self._lock:
            if (job := self._jobs.get(key)) is not None and job.state not in ACTIVE:
                del self._jobs[key]

    def cancel(self, key: str) -> bool:
        """Stop a queued or running job (its process is killed); False if there is none."""
        job = self.get(key)
        if job is None or job.state not in ACTIVE:
            return False
        job.cancel.set()
        return True

    def close(self) -> None:
        """Stop every job: its process killed now, not at its watcher's next look."""
        with self._lock:
            for job in self._jobs.values():
                job.cancel.set()
                if job.state == "running" and job.process is not None:
                    with suppress(OSError, ValueError):  # ended, or closed, meanwhile
                        job.process.kill()
        self._threads.shutdown(wait=True, cancel_futures=True)

    def _forget_old(self) -> None:
        done = [k for k, j in self._jobs.items() if j.state not in ACTIVE]
        for key in done[:max(0, len(done) - KEEP)]:
            del self._jobs[key]

    def _run(self, job: Job, fn: Callable, args: tuple) -> None:
        if job.cancel.is_set():
            self._end(job, "cancelled", error="cancelled before it started")
            return
        job.started = time.monotonic()
        job.state = "running"
        receive, send = self._context.Pipe(duplex=False)
        process = self._context.Process(target=_child, args=(fn, args, send, self.memory),
                                        daemon=True)
        process.start()
        job.pid, job.process = process.pid, process
        send.close()
        ending: tuple = ("failed", None, "the server failed to watch its worker")
        try:
            ending = self._wait(job, process, receive)
        finally:  # the process is gone before anyone sees the job end
            if process.is_alive():
                process.kill()
            process.join()
            receive.close()
            self._end(job, *ending)

    def _wait(self, job: Job, process, receive) -> tuple:
        end = job.started + job.limit
        while True:
            if receive.poll(0.05):
                try:
                    status, value = receive.recv()
                except (EOFError, OSError):
                    return "failed", None, _died(process)
                if status == "ok":
                    return "done", value, ""
                return "failed", None, value
            if not process.is_alive() and not receive.poll():
                return "failed", None, _died(process)
            if job.cancel.is_set():
                return "cancelled", None, "cancelled"
            if time.monotonic() > end:
                return "stopped", None, f"stopped at this server's limit of {job.limit:g} s"

    @staticmethod
    def _end(job: Job, state: str, outcome: dict | None = None, error: str = "") -> None:
        job.outcome, job.error, job.finished = outcome, error, time.monotonic()
        job.state = state  # last: a reader that sees the state sees the rest


def _died(process) -> str:
    process.join(1)
    return f"the worker process died (exit status {process.exitcode})"


def _child(fn: Callable, args: tuple, send, memory: int) -> None:
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    limit = memory if hard == resource.RLIM_INFINITY else min(memory, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    try:
        send.send(("ok", fn(*args)))
    except MemoryError:
        send.send(("error", f"out of memory (this server's limit is {memory >> 20} MiB "
                            "a request)"))
    except BaseException as e:  # noqa: BLE001 - a worker reports, never raises
        send.send(("error", f"{type(e).__name__}: {e}"))
