"""Time limits counted in what a machine's load does not stretch: the CPU seconds of
the work. The same query gets the same time on an idle machine and on one eight
engineers share, so a pair's verdict and its sweep's merges do not change with the
load (a wall-clock limit turned `equivalent` into `unknown` at load 8).

`--timeout T` reads: T CPU seconds of the thread that decides the pair, and of each
solver process it starts, each its own T at most; whatever the load, the pair answers
within WALL_CAP * T wall seconds of its start (`unknown`), reading, encoding, replay
and report included (`pair`: one deadline for the whole pair, a share of it kept for
the report), so that no command runs unboundedly past its limit. How each solver is
held to a budget:
- bitwuzla in this process: a terminator that asks the budget (`terminator`);
- z3 in this process: a watcher thread interrupts it when the budget is spent
  (`check`); z3's own wall-clock limit is set to the wall cap;
- a solver in a child process: the child holds itself to a budget of its own (its
  thread's CPU time starts at zero), and the parent kills it once its CPU time
  (`process_cpu`) passes the limit by GRACE, or at the wall cap.
A z3 search with no budget of its own (a counterexample's nice values, the IR
replay's, under a wall-clock limit of their own) is watched within a pair until the
pair's deadline (`ptxsmt.solver.guarded`). The clocks are one pair (`Clocks`),
replaced only by a test (`using`): a fake machine whose wall clock runs four times as
fast as its work shows the verdicts unchanged.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from itertools import count
from typing import TypeVar

import z3

from ... import solver as z3_solver

WALL_CAP = 2.0  # a limit of T CPU seconds ends at WALL_CAP * T wall seconds whatever
TERMINATOR_EVERY = 256  # calls of bitwuzla's terminator per reading of the clocks
POLL = 0.01  # seconds between a watcher's looks at the CPU time it guards
MAX_MS = 4294967295  # z3's default limit: none
GRACE = 2.0  # CPU (or wall) seconds past its limit before a child is killed
# the share of a pair's wall cap kept for what follows its last search: a
# counterexample's replay, the report, the process's exit (6 s of 120 at --timeout 60)
REPORT_SHARE = 0.05
STOP_POLL = 0.05  # seconds between `bounded`'s looks at the clock
OUT_OF_TIME = ("out of time: the wall cap came while the pair was in work with no clock "
               "of its own (reading, encoding, simulating or writing out the query)")


def _thread_cpu(thread: int) -> float:
    """The CPU seconds a thread of this process has used (by `threading.get_ident`);
    the process's where the system has no clock per thread."""
    try:
        return time.clock_gettime(time.pthread_getcpuclockid(thread))
    except (AttributeError, OSError):
        return time.process_time()


@dataclass(frozen=True)
class Clocks:
    cpu_of: Callable[[int], float]  # a thread's CPU seconds
    wall: Callable[[], float]


REAL = Clocks(_thread_cpu, time.monotonic)
_clocks = REAL


@contextmanager
def using(clocks: Clocks) -> Iterator[None]:
    """Every budget made within reads `clocks` (a test's fake machine)."""
    global _clocks
    before, _clocks = _clocks, clocks
    try:
        yield
    finally:
        _clocks = before


# the wall end of the budget being spent (`Budget.spending`), inherited by a forked child
_spending: ContextVar[float | None] = ContextVar("ptxsmt_budget_wall_end", default=None)
# when work with no clock of its own is stopped (`bounded`): halfway from the pair's
# deadline to its cap
_stop_at: ContextVar[float | None] = ContextVar("ptxsmt_pair_stop", default=None)
_searching: set[int] = set()  # threads in a solver's search now: `bounded` waits for them
R = TypeVar("R")


class Budget:
    """`seconds` of the CPU time of the thread that makes it (None: no limit), within
    `wall` wall seconds (None: no cap of its own). A command's whole limit (`capped`)
    and its parts have a cap; a step within one (a candidate's proof) has its CPU
    seconds, and only the cap of the budget being spent (`spending`), so that a loaded
    machine stretching the wall clock does not cut it short."""

    def __init__(self, seconds: float | None, wall: float | None = None):
        self.clocks, self.thread, self.seconds = _clocks, threading.get_ident(), seconds
        self.cpu_start, now = self.clocks.cpu_of(self.thread), self.clocks.wall()
        ends = [e for e in (None if wall is None else now + wall, _spending.get())
                if e is not None]
        self.wall_end = min(ends) if ends else None

    @staticmethod
    def capped(seconds: float | None) -> Budget:
        """A command's whole limit: `seconds` CPU seconds, WALL_CAP times that in wall."""
        return Budget(seconds, None if seconds is None else WALL_CAP * seconds)

    @staticmethod
    def of(limit: Budget | float | None) -> Budget:
        return limit if isinstance(limit, Budget) else Budget.capped(limit)

    def spent(self) -> float:
        """CPU seconds used since the budget was made."""
        return self.clocks.cpu_of(self.thread) - self.cpu_start

    def left(self) -> float | None:
        """CPU seconds left (None: no limit); none once the wall cap is reached."""
        if self.seconds is None and self.wall_end is None:
            return None
        wall = self.wall_left()
        if wall is not None and wall <= 0:
            return 0.0
        return float("inf") if self.seconds is None else max(0.0, self.seconds - self.spent())

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0

    def wall_left(self) -> float | None:
        """Wall seconds to the cap (None: no cap): solvers' own limits, a kill's time."""
        return None if self.wall_end is None else self.wall_end - self.clocks.wall()

    def part(self, seconds: float | None) -> Budget:
        """`seconds` (None: all) of the CPU seconds left, with the same share of the
        wall seconds left to the cap: a step that takes its CPU seconds on a machine
        that stretches them less than WALL_CAP times never meets it."""
        left, wall = self.left(), self.wall_left()
        if left is None:
            return Budget(seconds)
        seconds = left if seconds is None else min(seconds, left)
        if wall is not None and 0 < left < float("inf"):
            wall *= seconds / left
        return Budget(seconds, wall)

    @contextmanager
    def spending(self) -> Iterator[None]:
        """Within, every budget made (a step's, a solver process's) ends at this one's
        wall cap at the latest."""
        token = _spending.set(self.wall_end)
        try:
            yield
        finally:
            _spending.reset(token)

    def rest(self, least: float) -> Budget:
        """What is left, but at least `least` CPU seconds (a last step's minimum)."""
        left, wall = self.left(), self.wall_left()
        if left is None:
            return Budget(None)
        return Budget(max(least, left), None if wall is None else max(WALL_CAP * least, wall))

    def terminator(self) -> Callable[[], bool]:
        """For bitwuzla's `configure_terminator`: true once the budget is spent. It is
        called some 250,000 times a CPU second: the clocks are read on every
        TERMINATOR_EVERY-th call (reading them on each cost 55% more solving time; this, 5%)."""
        calls = count(1)
        return lambda: next(calls) % TERMINATOR_EVERY == 0 and self.expired()


@contextmanager
def pair(seconds: float | None, start: float | None = None) -> Iterator[None]:
    """Deciding one pair (an `equiv` command's, a batch line's) that began at `start` (a
    reading of the wall clock; None: now): within, every budget made and every z3 search
    ends by the pair's deadline, (1 - REPORT_SHARE) * WALL_CAP * `seconds` wall seconds
    from `start`, whatever its own limit (None: no deadline). The CPU seconds of each
    budget stay its own: where they bind first, the load changes nothing."""
    if seconds is None:
        yield
        return
    now = _clocks.wall()
    start = now if start is None else start
    whole = Budget(None, start + (1 - REPORT_SHARE) * WALL_CAP * seconds - now)
    token = _stop_at.set(start + (1 - REPORT_SHARE / 2) * WALL_CAP * seconds)
    try:
        with whole.spending(), z3_solver.guarded(_guarded):
            yield
    finally:
        _stop_at.reset(token)


class OutOfTime(BaseException):  # noqa: N818 - a stop, as KeyboardInterrupt is
    """Raised by `bounded` in the thread deciding a pair that is past its deadline in
    work with no clock of its own (a BaseException: no `except Exception` holds it)."""


def bounded(fn: Callable[..., R], *args, **kwargs) -> R:
    """`fn(*args, **kwargs)` in this thread, stopped by OutOfTime where it runs past the
    stop time of the pair (`pair`; none outside one): its searches stop at the deadline
    by their budgets, but reading, encoding, the sweep's simulation and writing a query
    out have no clock (a float pair of 1,000 operations at --timeout 20, load 12, ended
    at 78 s, writing its query out past its cap). The exception is raised between two
    Python instructions, never within a solver's search (`_searching`: a search ends
    at its budget)."""
    stop = _stop_at.get()
    if stop is None:
        return fn(*args, **kwargs)
    thread, done, fired, lock = (threading.get_ident(), threading.Event(), threading.Event(),
                                 threading.Lock())

    def raise_in_thread(exception: type[BaseException] | None) -> None:  # None: withdrawn
        ctypes.pythonapi.PyThreadState_SetAsyncExc(
            ctypes.c_ulong(thread), None if exception is None else ctypes.py_object(exception))

    def watch() -> None:  # again each poll: an `except Exception` may wrap it and go on
        while not done.wait(STOP_POLL):
            if _clocks.wall() >= stop and thread not in _searching:
                with lock:
                    if not done.is_set():
                        fired.set()
                        raise_in_thread(OutOfTime)

    threading.Thread(target=watch, name="ptxsmt-pair-stop", daemon=True).start()
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        if fired.is_set():  # raised in a ctypes conversion, it surfaces as ArgumentError
            raise OutOfTime from e
        raise
    finally:
        with lock:
            done.set()
            if fired.is_set():
                raise_in_thread(None)


@contextmanager
def searching() -> Iterator[None]:
    """Within, this thread is in a solver's search (`bounded` does not stop it there)."""
    _searching.add(threading.get_ident())
    try:
        yield
    finally:
        _searching.discard(threading.get_ident())


def _guarded(solver: z3.Solver, assumptions: tuple) -> z3.CheckSatResult:
    """A search with no budget of its own, within a pair: under its own limit, and
    stopped (unknown) at the deadline of the budget being spent."""
    deadline = Budget(None)
    if deadline.expired():
        solver.set("timeout", 1)
        return z3_solver.check(solver, *assumptions, stopped=lambda: True)
    return _watched(solver, deadline, assumptions)


def started() -> float | None:
    """The wall clock's reading when this process started (Linux: its start time in
    /proc against the boot-time clock), so that a command's pair counts the
    interpreter's start and imports too; None where that cannot be read."""
    try:
        with open("/proc/self/stat", "rb") as f:
            ticks = int(f.read().rsplit(b")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, AttributeError, ValueError, IndexError):
        return None
    return _clocks.wall() - max(0.0, age)


def check(solver: z3.Solver, budget: Budget | None, *assumptions: z3.BoolRef
          ) -> z3.CheckSatResult:
    """`solver.check` (through `ptxsmt.solver.check`) within `budget`: z3's own limit is
    the wall cap, and a watcher interrupts z3 once the CPU seconds are spent (an
    "unknown", never a KeyboardInterrupt). None: the solver's own limit, if any."""
    if budget is None:
        return z3_solver.check(solver, *assumptions)
    if budget.left() is None:
        solver.set("timeout", milliseconds(None))
        return z3_solver.check(solver, *assumptions)
    if budget.expired():
        return z3.unknown
    solver.set("timeout", milliseconds(budget.wall_left()))
    return _watched(solver, budget, assumptions)


def _watched(solver: z3.Solver, budget: Budget, assumptions: tuple) -> z3.CheckSatResult:
    """`solver.check`, interrupted by a watcher thread once `budget` is spent."""
    with searching():
        return _interrupted(solver, budget, assumptions)


def _interrupted(solver: z3.Solver, budget: Budget, assumptions: tuple) -> z3.CheckSatResult:
    done, fired = threading.Event(), threading.Event()

    def watch() -> None:
        while not done.wait(POLL):
            if budget.expired():
                fired.set()
                solver.ctx.interrupt()
                return

    watcher = threading.Thread(target=watch, name="ptxsmt-budget", daemon=True)
    watcher.start()
    try:
        return z3_solver.check(solver, *assumptions, stopped=fired.is_set)
    finally:
        done.set()
        watcher.join()


def milliseconds(seconds: float | None) -> int:
    """A solver's own limit in milliseconds: at least 1 (0 would mean none), and z3's
    largest (its default, no limit) for None or more."""
    return MAX_MS if seconds is None else max(1, min(MAX_MS, int(min(seconds, MAX_MS) * 1000)))


def process_cpu(pid: int) -> float | None:
    """The CPU seconds (user and system) a child process has used, from /proc; None
    where that cannot be read (not Linux; the process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
