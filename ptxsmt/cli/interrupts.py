"""Ctrl-C for every command: exit 130 at once, wherever the process is.

Python runs its SIGINT handler only between bytecodes, so a Ctrl-C that lands inside a
long z3 call would wait for the call to end; z3's own handler (its `ctrl_c` option) takes
the signal instead while it searches, and loses it when the search ends anyway. So the
command line keeps SIGINT with Python (z3's handler off, `solver.leave_sigint_to_python`)
and has the signal's wakeup byte (written by the C-level handler the moment it arrives)
read by a thread that interrupts z3 at once. The KeyboardInterrupt then follows as usual;
whatever else the interrupted call raises (a ctypes ArgumentError wrapping it, a "canceled"
z3 error) is reported as the interruption it was (`seen`).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from .. import solver

_seen = threading.Event()
_installed = False
_holding = False  # inside `held()`: the handler marks the signal, the block's end raises
_deferred = False


def install() -> None:
    """Watch for SIGINT (the console command only: tests call the group in their process)."""
    if threading.current_thread() is not threading.main_thread():
        return
    global _installed
    read, write = os.pipe()
    os.set_blocking(write, False)
    with suppress(ValueError):
        signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        signal.signal(signal.SIGINT, _raise_interrupt)
        sys.unraisablehook = _unraisable
        solver.leave_sigint_to_python()
        threading.Thread(target=_watch, args=(read,), name="ptxsmt-sigint", daemon=True).start()
        _installed = True


def command_loaded() -> None:
    """A command's module is imported: if it brought z3 in, z3 leaves SIGINT alone from now,
    before its first call of any kind (not only at the first search)."""
    if _installed and "z3" in sys.modules:
        solver.leave_sigint_to_python()


def stop_on_terminate() -> None:
    """SIGTERM (what `timeout` and a CI job's end send) stops this command as Ctrl-C does,
    so that a command that keeps what it decided (`tv`) ends the same way on either."""
    if _installed:
        signal.signal(signal.SIGTERM, _raise_interrupt)


@contextmanager
def held() -> Iterator[None]:
    """A Ctrl-C (or SIGTERM) that arrives inside the block takes effect at its end, so what
    the block does (print a verdict and count it) is done whole or not at all."""
    global _holding, _deferred
    _holding = True
    try:
        yield
    finally:
        _holding = False
    if _deferred:
        _deferred = False
        raise KeyboardInterrupt


def seen() -> bool:
    """Whether a SIGINT has arrived."""
    return _seen.is_set()


def _raise_interrupt(signum: int, frame) -> None:
    """Python's own SIGINT handler, which also marks the signal seen before it raises:
    the KeyboardInterrupt may surface wrapped (a ctypes ArgumentError) before the
    watching thread has read the wakeup byte."""
    global _deferred
    _seen.set()
    if _holding:
        _deferred = True
        return
    raise KeyboardInterrupt


def _unraisable(unraisable) -> None:
    """A Ctrl-C that lands in a finaliser (z3's `__del__`) cannot propagate from there: it
    is seen all the same and the watching thread stops z3, so the command still ends as
    interrupted; it is not reported as an error on the way, bare or as what it becomes
    there (ctypes wraps it in an ArgumentError while it converts `Z3_dec_ref`'s
    arguments)."""
    if seen() or unraisable.exc_type is not None and \
            issubclass(unraisable.exc_type, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def _watch(fd: int) -> None:
    while data := os.read(fd, 64):
        if signal.SIGINT in data or signal.SIGTERM in data:  # SIGTERM: if asked for
            _seen.set()
            solver.request_interrupt()
            z3 = sys.modules.get("z3")
            context = getattr(getattr(z3, "z3", None), "_main_ctx", None)
            if context is not None:  # z3 in use: stop its search; check() then raises
                with suppress(Exception):
                    context.interrupt()
