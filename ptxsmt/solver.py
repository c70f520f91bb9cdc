"""The one way ptxsmt asks z3 for an answer, in this process or in a worker.

z3 handles SIGINT inside check() itself: it cancels the search and answers
`unknown` ("interrupted from keyboard", or "canceled" when the command line's watcher
stopped it). Taken at face value that turns a Ctrl-C into a verdict; here it becomes
the KeyboardInterrupt it was. z3 also says "canceled" when a check under assumptions
runs out of time: that stays the timeout it is.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a caller that has a solver has imported z3; the CLI need not
    import z3

_interrupt_requested = threading.Event()  # a SIGINT reached the command line's watcher
_quiet_z3 = False  # set: turn z3's SIGINT handler off once z3 is loaded
# z3 alone this long on a query before a second solver (bitwuzla, often far quicker on
# floats and on memory's arrays) races it for the time left: `--solver auto`, `tv`
Z3_FIRST_SECONDS = 2.0
PR_SET_PDEATHSIG = 1  # prctl(2)
MAX_JOBS = max(4, min(64, 4 * (os.cpu_count() or 1)))  # --jobs 1000 would fork 1,000 processes
# how a search with no watcher of its own runs while a pair is decided
# (`smt.solving.budget.pair`): stopped at the pair's deadline, whatever its own limit
_guard: ContextVar[Callable | None] = ContextVar("ptxsmt_search_guard", default=None)


def check(solver: z3.Solver, *assumptions: z3.BoolRef,
          stopped: Callable[[], bool] | None = None) -> z3.CheckSatResult:
    """`solver.check`; an interruption is a KeyboardInterrupt unless `stopped()` says
    the caller's own watcher stopped the search (a time budget spent: unknown). A search
    with no watcher runs under the guard of the pair being decided, if any (`guarded`)."""
    import z3

    if stopped is None and (guard := _guard.get()) is not None:
        return guard(solver, assumptions)

    global _quiet_z3
    if _quiet_z3:
        z3.set_param("ctrl_c", False)
        _quiet_z3 = False
    if _interrupt_requested.is_set():  # a Ctrl-C swallowed on its way (in a finaliser)
        raise KeyboardInterrupt
    result = solver.check(*assumptions)
    if result == z3.unknown and not (stopped is not None and stopped()):
        reason = solver.reason_unknown()
        # "canceled" is also a timeout under assumptions: an interruption only after a SIGINT
        if "interrupted" in reason or ("canceled" in reason and _interrupt_requested.is_set()):
            raise KeyboardInterrupt
    return result


@contextmanager
def guarded(guard: Callable[[z3.Solver, tuple], z3.CheckSatResult]) -> Iterator[None]:
    """Within, `check` hands each search with no watcher of its own to `guard(solver,
    assumptions)`, which runs it with one (`check(..., stopped=...)`)."""
    token = _guard.set(guard)
    try:
        yield
    finally:
        _guard.reset(token)


def request_interrupt() -> None:
    """A SIGINT arrived (`cli.interrupts` stops z3's search): the "canceled" that
    follows is it."""
    _interrupt_requested.set()


def leave_sigint_to_python() -> None:
    """z3 catches no SIGINT from now on: the caller stops a search itself (the command
    line: `cli.interrupts`), so a Ctrl-C is never lost in a search that ends anyway."""
    global _quiet_z3
    if "z3" in sys.modules:
        sys.modules["z3"].set_param("ctrl_c", False)
    else:
        _quiet_z3 = True


def ignore_interrupts() -> None:
    """A worker process's initializer: Ctrl-C reaches the whole process group, but only
    the parent acts on it (it stops the pool), so workers print no tracebacks. z3 would
    otherwise catch the signal itself and answer "unknown"."""
    import z3

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    z3.set_param("ctrl_c", False)


def die_with(parent: int) -> None:
    """A child outlives no parent (a pool worker terminated, a parent killed, a batch
    whose reader went away): Linux kills it when the parent goes; elsewhere its caller
    must stop it."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        return
    if os.getppid() != parent:  # it went before the request was made
        os._exit(1)
