"""Time limits counted in what a machine's load does not stretch: the CPU seconds of
the work. The same query gets the same time on an idle machine and on one eight
engineers share, so a pair's verdict and its sweep's merges do not change with the
load (a wall-clock limit turned `equivalent` into `unknown` at load 8).

`--timeout T` reads: T CPU seconds of the thread that decides the pair, and of each
solver process it starts, each its own T at most; whatever the load, the pair answers
within WALL_CAP * T wall seconds of its start (`unknown`), reading, encoding, replay
and report included (`pair`: one deadline for the whole pair, a share of it kept for
the report), so that no command runs unboundedly past its limit; a measurement on a
loaded machine raises the cap (PTXSMT_WALL_CAP, `wall_cap`). How each solver is
held to a budget:
- bitwuzla in this process: a terminator that asks the budget (`terminator`);
- z3 in this process: a watcher thread interrupts it when the budget is spent
  (`check`); z3's own wall-clock limit is set to the wall cap;
- a solver in a child process: the child holds itself to a budget of its own (its
  thread's CPU time starts at zero), and the parent kills it once its CPU time
  (`child.process_cpu`) passes the limit by GRACE, or at the wall cap.
A candidate's proof in a sweep (thousands of them, each a second or less) is held
to an `Effort` instead: the work a solver counts itself, at points that are the same
in every run (bitwuzla's calls of its terminator, z3's resource units), so that a
proof near its limit ends the same way whatever the machine's load, and the sweep
makes the same merges in the same order; a CPU-second cap well above it (SAFETY)
stops a query whose solver seldom counts.
A z3 search with no budget of its own (a counterexample's nice values, the IR
replay's, under a wall-clock limit of their own) is watched within a pair until the
pair's deadline (`ptxsmt.solver.guarded`). And since a solver may not answer its
interrupt, and some work has no clock at all, the pair's work runs in a process of its
own, killed at the pair's stop (`bounded`): the last resort that holds whatever the
work does. The clocks are one pair (`Clocks`),
replaced only by a test (`using`): a fake machine whose wall clock runs four times as
fast as its work shows the verdicts unchanged.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import count
from typing import TypeVar

import z3

from ... import solver as z3_solver
from ...batch import cache
from ...isa.errors import PtxError, quote
from .child import race

WALL_CAP = 2.0  # a limit of T CPU seconds ends at WALL_CAP * T wall seconds whatever
# A measurement on a loaded machine sets this variable to a larger cap (`wall_cap`)
WALL_CAP_VARIABLE, MOST_WALL_CAP = "PTXSMT_WALL_CAP", 1000.0
TERMINATOR_EVERY = 256  # calls of bitwuzla's terminator per reading of the clocks
POLL = 0.01  # seconds between a watcher's looks at the CPU time it guards
MAX_MS = 4294967295  # z3's default limit: none
UNLIMITED = 4294967295  # the largest count of an effort (z3's rlimit is 32 bits)
GRACE = 2.0  # CPU (or wall) seconds past its limit before a child is killed
# the share of a pair's wall cap kept for what follows its last search: a
# counterexample's replay, the report, the process's exit (6 s of 120 at --timeout 60)
REPORT_SHARE = 0.05
# An `Effort` of s seconds is s times this much of a solver's own count of its work
# (one place): bitwuzla's calls of its terminator, which its SAT solver makes at the
# same points of its search in every run (the count at which a query ends was the
# same in two runs for 818 of 818 sweep queries), and z3's resource units (`rlimit`).
# Calibrated on the candidate queries of three held-out pairs (half, fsel): bitwuzla
# reached a median of 57,000 calls at 0.25 CPU s, 120,000 at 0.5, 230,000 at 1 and
# 432,000 at 2 (fewer while it rewrites and bit-blasts: a median of 18,000 at 0.125);
# z3, 2.9 to 6.6 million units a CPU second on the queries it finished. At 200,000
# calls fsel-llc14-2002 lost its merges (equivalent in 8.6 CPU s on the clock, unknown
# at 60): a small query calls far faster than the median; at 400,000, equivalent in
# 13.4 (docs/scale.md)
EFFORT_PER_SECOND = {"bitwuzla": 400_000, "z3": 4_000_000}
STEPS = 8  # an effort's seconds are rounded to the nearest of 2^(k/STEPS)
# The CPU seconds a proof under an `Effort` takes, as a count of what its solver did,
# not read off a clock (`Work`): bitwuzla's are linear in its query's text (printing,
# parsing, bit-blasting) and its terminator's calls (fitted over the 431 candidate proofs
# of heldout2's fsel-llvm22-2009-planted at load 8: 6.6 us a character, 5.2 us a call,
# correlation 0.996 with their CPU seconds: its calls come at half EFFORT_PER_SECOND);
# z3's, its resource units at EFFORT_PER_SECOND
SECONDS_PER_CHARACTER = 6.6e-6
SECONDS_PER_UNIT = {"bitwuzla": 5.2e-6, "z3": 1 / EFFORT_PER_SECOND["z3"]}
# An effort's CPU cap: this many times what its count and its text take by that model
# (3 times its seconds, round 49, stopped some 0.06 s proofs at load 10 short of their
# count, at 19,456 calls of 25,000 on 5,659 characters: a limit the load decided)
SAFETY = 2.0
OUT_OF_TIME = ("out of time: stopped at the pair's wall cap, in a solver that did not stop "
               "at its limit or in work with no clock of its own (reading, encoding, "
               "simulating or writing out the query)")


def wall_cap() -> float:
    """WALL_CAP, or PTXSMT_WALL_CAP where set: a measurement on a loaded machine raises
    the cap so that the CPU seconds bind, not the load (docs/scale.md), and a run of
    its own keeps the default. Read at each use, so that a test or a process's child
    sees what is set; a value that is no number from 1 to MOST_WALL_CAP is refused,
    never replaced by the default."""
    text = os.environ.get(WALL_CAP_VARIABLE)
    if text is None:
        return WALL_CAP
    try:
        cap = float(text)
    except ValueError:
        cap = math.nan
    if not 1 <= cap <= MOST_WALL_CAP:
        raise PtxError(f"{WALL_CAP_VARIABLE}={quote(text)} is not a wall cap (a number "
                       f"from 1 to {MOST_WALL_CAP:g}: times the CPU seconds of --timeout)")
    return cap


# a run past this share of its wall cap with CPU seconds left ran to the cap (`wall_bound`)
WALL_BOUND_SHARE = 0.9


def wall_bound(cpu: float, wall: float, limit: float) -> bool:
    """A run of `limit` CPU seconds that used `cpu` of them in `wall` seconds ended at its
    wall cap with CPU seconds left: the machine's load decided, not the limit."""
    return cpu < limit and wall >= WALL_BOUND_SHARE * wall_cap() * limit


def wall_bound_note(cpu: float, wall: float, limit: float) -> str:
    """What an `unknown` that `wall_bound` says the load decided adds to its reason."""
    return (f"the wall cap came first: {cpu:.1f} of {limit:g} CPU seconds in {wall:.1f} wall "
            f"seconds (on a loaded machine {WALL_CAP_VARIABLE} raises the cap)")


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
# the budget being spent, which the work of proofs within is charged to (`charge`)
_charged: ContextVar[Budget | None] = ContextVar("ptxsmt_budget_charged", default=None)
# when the process deciding the pair is killed (`bounded`): halfway from the pair's
# deadline to its cap
_stop_at: ContextVar[float | None] = ContextVar("ptxsmt_pair_stop", default=None)
R = TypeVar("R")


class Budget:
    """`seconds` of the CPU time of the thread that makes it (None: no limit), within
    `wall` wall seconds (None: no cap of its own). A command's whole limit (`capped`)
    and its parts have a cap; a step within one (a candidate's proof) has its CPU
    seconds, and only the cap of the budget being spent (`spending`), so that a loaded
    machine stretching the wall clock does not cut it short."""

    def __init__(self, seconds: float | None, wall: float | None = None):
        self.clocks, self.thread, self.seconds = _clocks, threading.get_ident(), seconds
        self.worked = 0.0  # the `Work` of the proofs made within it (`spending`), charged
        self.cpu_start, now = self.clocks.cpu_of(self.thread), self.clocks.wall()
        ends = [e for e in (None if wall is None else now + wall, _spending.get())
                if e is not None]
        self.wall_end = min(ends) if ends else None

    @staticmethod
    def capped(seconds: float | None) -> Budget:
        """A command's whole limit: `seconds` CPU seconds, `wall_cap()` times that in wall."""
        return Budget(seconds, None if seconds is None else wall_cap() * seconds)

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
        """`seconds` (None: all) of the CPU seconds left, within the wall seconds left to
        the cap less the CPU seconds left after it (at least its share of the wall left):
        on a loaded machine a part takes its CPU seconds whole and the cap cuts the steps
        after it, so the same part does the same work at any load the whole pair's work
        fits in (a share of the wall cut the sweep short at load 4: fsel-llvm22-2008)."""
        left, wall = self.left(), self.wall_left()
        if left is None:
            return Budget(seconds)
        seconds = left if seconds is None else min(seconds, left)
        if wall is not None and 0 < left < float("inf"):
            wall = max(wall * seconds / left, wall - (left - seconds))
        return Budget(seconds, wall)

    @contextmanager
    def spending(self) -> Iterator[None]:
        """Within, every budget made (a step's, a solver process's) ends at this one's
        wall cap at the latest, and the work of each proof is charged to this one
        (`charge`)."""
        token, charged = _spending.set(self.wall_end), _charged.set(self)
        try:
            yield
        finally:
            _charged.reset(charged)
            _spending.reset(token)

    def rest(self, least: float) -> Budget:
        """What is left, but at least `least` CPU seconds (a last step's minimum)."""
        left, wall = self.left(), self.wall_left()
        if left is None:
            return Budget(None)
        return Budget(max(least, left), None if wall is None else max(wall_cap() * least, wall))

    def terminator(self) -> Callable[[], bool]:
        """For bitwuzla's `configure_terminator`: true once the budget is spent. It is
        called some 250,000 times a CPU second: the clocks are read on every
        TERMINATOR_EVERY-th call (reading them on each cost 55% more solving time; this, 5%)."""
        calls = count(1)
        return lambda: next(calls) % TERMINATOR_EVERY == 0 and self.expired()


def stepped(seconds: float) -> float:
    """`seconds` rounded to the nearest 2^(k/STEPS): a limit computed from what was
    spent so far moves by a little between runs, and within a step it does not."""
    if seconds <= 0 or math.isinf(seconds):
        return seconds
    return 2 ** (round(math.log2(seconds) * STEPS) / STEPS)


class Work:
    """What the solvers did under one `Effort`, in CPU seconds as counted, not timed
    (SECONDS_PER_CHARACTER, SECONDS_PER_CALL, z3's units): the same in every run, so
    that a sweep's pace, read off it (`charge`), gives its later proofs the same limits
    whatever the load (read off the CPU clock, the limits moved and the walk parted,
    docs/scale.md)."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def text(self, characters: int) -> None:
        self.seconds += characters * SECONDS_PER_CHARACTER

    def counted(self, solver: str, count: int) -> None:
        self.seconds += count * SECONDS_PER_UNIT[solver]


def charge(work: Work) -> None:
    """`work` charged to the budget being spent (`Budget.spending`: a sweep's), if any."""
    budget = _charged.get()
    if budget is not None:
        budget.worked += work.seconds


@dataclass(frozen=True)
class Effort:
    """A candidate proof's limit: `seconds` of CPU time as the work a solver counts
    (EFFORT_PER_SECOND), the same in every run, within SAFETY times the CPU seconds
    that count (and the query's text) takes (`cap`; and the wall cap of the budget
    being spent). The seconds are rounded to a step
    (STEPS an octave): a limit computed from the CPU seconds spent so far (a sweep's
    pace, `fraig._Sweep._paced`) moves by a little with the load, and within a step
    its effort does not. `most`: CPU seconds the cap does not pass (what is left of the
    budget being spent: a sweep's), so that SAFETY never takes a step past its whole.
    `work`: what the solvers did under it, counted as they go."""

    seconds: float
    most: float | None = None
    work: Work = field(default_factory=Work, compare=False, repr=False)

    def units(self, solver: str) -> int:
        """The solver's count this effort allows: at least 1 (z3 reads 0 as none)."""
        if self.seconds <= 0:
            return 1
        if math.isinf(self.seconds):
            return UNLIMITED
        return max(1, round(EFFORT_PER_SECOND[solver] * stepped(self.seconds)))

    def cap(self, solver: str, characters: int = 0) -> Budget:
        """The CPU seconds past which the search is stopped whatever its count: SAFETY
        times what the solver's count and a query of `characters` take (`Work`'s model)."""
        cap = SAFETY * (self.units(solver) * SECONDS_PER_UNIT[solver]
                        + characters * SECONDS_PER_CHARACTER)
        return Budget(cap if self.most is None else min(cap, self.most))

    def terminator(self, characters: int = 0) -> Counted:
        """For bitwuzla's `configure_terminator` on a query of `characters`, its CPU cap
        counted from now."""
        return Counted(self.units("bitwuzla"), self.cap("bitwuzla", characters))


class Counted:
    """bitwuzla's terminator under an `Effort`: true from its `limit`-th call on, or
    once `cap` is spent (read on every TERMINATOR_EVERY-th call, as `Budget.terminator`).
    `calls`: the calls so far (the same in every run for one query and limit)."""

    def __init__(self, limit: int, cap: Budget):
        self.limit, self.cap, self.calls = limit, cap, 0

    def __call__(self) -> bool:
        self.calls += 1
        return self.calls >= self.limit or (
            self.calls % TERMINATOR_EVERY == 0 and self.cap.expired())


@contextmanager
def pair(seconds: float | None, start: float | None = None) -> Iterator[None]:
    """Deciding one pair (an `equiv` command's, a batch line's) that began at `start` (a
    reading of the wall clock; None: now): within, every budget made and every z3 search
    ends by the pair's deadline, (1 - REPORT_SHARE) * `wall_cap()` * `seconds` wall seconds
    from `start`, whatever its own limit (None: no deadline), and the work `bounded` runs
    is killed at its stop, halfway from that deadline to the cap. The CPU seconds of
    each budget stay its own: where they bind first, the load changes nothing."""
    if seconds is None:
        yield
        return
    now, cap = _clocks.wall(), wall_cap() * seconds
    start = now if start is None else start
    whole = Budget(None, start + (1 - REPORT_SHARE) * cap - now)
    token = _stop_at.set(start + (1 - REPORT_SHARE / 2) * cap)
    try:
        with whole.spending(), z3_solver.guarded(_guarded):
            yield
    finally:
        _stop_at.reset(token)


class OutOfTime(BaseException):  # noqa: N818 - a stop, as KeyboardInterrupt is
    """Raised by `bounded` where the pair's work was stopped at its stop (a
    BaseException: no `except Exception` around it holds it)."""


class ChildDied(RuntimeError):
    """The process deciding a pair died (a crash, the system's out-of-memory killer)."""


_isolated = False  # this process is a pair's own (`bounded`): its stop is its parent's kill


def bounded(fn: Callable[..., R], *args, **kwargs) -> R:
    """`fn(*args, **kwargs)` decided within the stop time of the pair (`pair`; outside
    one, or within a pair's own process already, simply called): in a forked child
    process of its own, killed at the stop, whatever it is doing then (OutOfTime). Its
    searches end at the deadline by their budgets, but z3 does not always answer its
    interrupt (a 1,000-operation pair's last query ran 70 s past its budget, in z3's
    preprocessing), and reading, encoding, the sweep's simulation and writing a query
    out have no clock (a float pair of 1,000 operations at --timeout 20, load 12,
    ended at 78 s, writing its query out past its cap). Killing the process, not
    raising inside the work, leaves no state half-updated behind: the work's effects on
    this process's memory are none, its result comes back pickled, and an exception it
    raises is raised here as itself (its class and fields, the child's traceback a
    note); a child that dies raises ChildDied."""
    stop = _stop_at.get()
    if stop is None or _isolated:
        return fn(*args, **kwargs)
    left = stop - _clocks.wall()
    if left <= 0:
        raise OutOfTime
    outcome = race({"pair": (_alone, (fn, args, kwargs))}, left)["pair"]
    if outcome.status == "ok":
        return outcome.value
    if outcome.status == "stopped":
        raise OutOfTime
    if outcome.status == "error":
        raise outcome.raised or RuntimeError(outcome.value)
    raise ChildDied(outcome.value)


def _alone(fn: Callable[..., R], args: tuple, kwargs: dict) -> R:
    """`bounded`'s work in its own process, which leaves without atexit: the programs
    its replay compiled are written out here."""
    global _isolated
    _isolated = True
    try:
        return fn(*args, **kwargs)
    finally:
        cache.flush()


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


def check(solver: z3.Solver, budget: Budget | Effort | None, *assumptions: z3.BoolRef
          ) -> z3.CheckSatResult:
    """`solver.check` (through `ptxsmt.solver.check`) within `budget`: z3's own limit is
    the wall cap, and a watcher interrupts z3 once the CPU seconds are spent (an
    "unknown", never a KeyboardInterrupt). An `Effort`: z3's resource limit, and its
    CPU cap as the budget. None: the solver's own limit, if any."""
    if budget is None:
        return z3_solver.check(solver, *assumptions)
    if isinstance(budget, Effort):
        solver.set("rlimit", budget.units("z3"))
        before, effort = _units(solver), budget
        try:
            return check(solver, budget.cap("z3"), *assumptions)
        finally:
            effort.work.counted("z3", _units(solver) - before)
    if budget.left() is None:
        solver.set("timeout", milliseconds(None))
        return z3_solver.check(solver, *assumptions)
    if budget.expired():
        return z3.unknown
    solver.set("timeout", milliseconds(budget.wall_left()))
    return _watched(solver, budget, assumptions)


def _units(solver: z3.Solver) -> int:
    """z3's resource units counted so far in the solver's context (each check adds its own)."""
    return solver.statistics().get_key_value("rlimit count")


def _watched(solver: z3.Solver, budget: Budget, assumptions: tuple) -> z3.CheckSatResult:
    """`solver.check`, interrupted by a watcher thread once `budget` is spent."""
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
