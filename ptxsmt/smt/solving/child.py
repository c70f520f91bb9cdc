"""Work in forked child processes that can be stopped: a solver portfolio races its
solvers, and each equivalence pair (a command's, a batch line's, a `tv` function's) is
decided in a child killed at its stop (`budget.bounded`), where a crash or a hang costs
only that pair.

Plain `os.fork` and a pipe per child, not `multiprocessing`: a pool worker (itself a
daemon) may not start `multiprocessing` children, and a child here must be killable at
any moment. Every child started is killed if still running and always reaped, so no
zombie outlives `race`; nothing is written to disk.
"""

from __future__ import annotations

import os
import pickle
import selectors
import signal
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ...solver import die_with

CPU_POLL = 0.1  # seconds between looks at the children's CPU time (`race`'s `cpu`)


@dataclass(frozen=True)
class Outcome:
    status: str  # "ok" | "error" (the call raised) | "crashed" | "stopped" (killed)
    value: Any = None  # the call's result, or the error's text
    raised: BaseException | None = None  # "error": the exception itself, where it travels


def race(calls: dict[str, tuple[Callable, tuple]], deadline: float | None = None,
         enough: Callable[[dict[str, Outcome]], bool] = lambda done: False,
         cpu: float | None = None) -> dict[str, Outcome]:
    """Run each call `fn(*args)` in its own child; return when every child has answered,
    when `enough(answers so far)` holds, or at `deadline` (wall seconds from now).
    Children still running then are killed and reported "stopped"; so is each child
    whose CPU time passes `cpu` seconds (looked at every CPU_POLL seconds), as soon
    as it does."""
    children: dict[int, tuple[str, int]] = {}  # read end -> (name, pid)
    answers: dict[str, Outcome] = {}
    buffers: dict[int, bytearray] = {}
    end = None if deadline is None else time.monotonic() + deadline
    selector = selectors.DefaultSelector()
    try:
        with _sigint_held():  # a Ctrl-C between a fork and its entry would orphan a child
            for name, (fn, args) in calls.items():
                read, write = os.pipe()
                parent = os.getpid()
                pid = os.fork()
                if pid == 0:  # the child: never returns into the caller's code
                    os.close(read)
                    die_with(parent)
                    _child(fn, args, write)
                os.close(write)
                children[read] = (name, pid)
                buffers[read] = bytearray()
                selector.register(read, selectors.EVENT_READ)
        open_ends = set(children)
        while open_ends and not enough(answers):
            left = None if end is None else end - time.monotonic()
            if left is not None and left <= 0:
                break
            if cpu is not None:
                for read in [r for r in open_ends if (process_cpu(children[r][1]) or 0) > cpu]:
                    selector.unregister(read)
                    open_ends.discard(read)
                    answers[children[read][0]] = Outcome("stopped")
                left = CPU_POLL if left is None else min(left, CPU_POLL)
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if chunk:
                    buffers[key.fd] += chunk
                    continue
                selector.unregister(key.fd)
                open_ends.discard(key.fd)
                answers[children[key.fd][0]] = _decode(buffers[key.fd])
    finally:
        selector.close()
        for read, (name, pid) in children.items():
            os.close(read)
            if name not in answers or answers[name].status == "stopped":
                answers[name] = Outcome("stopped")
                os.kill(pid, signal.SIGKILL)  # not yet reaped, so the pid is still ours
            status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            if answers[name].status == "crashed":
                answers[name] = Outcome("crashed", f"the process died (exit status {status})")
    return answers


@contextmanager
def _sigint_held():
    """A Ctrl-C within is noted, and raised again on leaving. Python runs a signal's
    handler in the main thread between any two bytecodes, whichever thread the system
    gave the signal to, so blocking it in this thread cannot hold it; a handler that only
    notes it can."""
    held: list[int] = []
    previous = signal.getsignal(signal.SIGINT)
    if previous is None or threading.current_thread() is not threading.main_thread():
        yield  # a handler not Python's (left as it is), or no Python handler runs here
        return
    signal.signal(signal.SIGINT, lambda signum, frame: held.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if held:
            signal.raise_signal(signal.SIGINT)


def _child(fn: Callable, args: tuple, write: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    code = 0
    try:
        try:
            data = pickle.dumps(("ok", fn(*args)))
        except BaseException as e:  # noqa: BLE001 - everything goes back to the parent
            data = pickle.dumps(("error", f"{type(e).__name__}: {e}", _portable(e)))
        with os.fdopen(write, "wb") as pipe:
            pipe.write(data)
    except BaseException:  # noqa: BLE001 - a child must never return
        code = 1
    os._exit(code)


def _portable(e: BaseException) -> bytes | None:
    """An exception as it crosses to the parent: its class, arguments, attributes and
    the child's traceback, pickled (None where they do not pickle: its text still goes)."""
    try:
        return pickle.dumps((type(e), e.args, vars(e), "".join(traceback.format_exception(e))))
    except Exception:  # noqa: BLE001 - a local class, an attribute that holds a z3 term
        return None


def _rebuilt(portable: bytes | None) -> BaseException | None:
    """The exception `_portable` sent, built without its __init__ (which may take other
    arguments than it keeps: `Unsupported(reason, detail)`), the child's traceback a
    note; None where it cannot be."""
    try:
        cls, args, attributes, trace = pickle.loads(portable)
        e = cls.__new__(cls, *args)
        e.args = args
        vars(e).update(attributes)
    except Exception:  # noqa: BLE001 - none sent, or a class this process cannot build
        return None
    e.add_note(f"raised in the child process:\n{trace}")
    return e


def _decode(data: bytes) -> Outcome:
    try:  # nothing, or half an answer: the child died before it finished writing
        status, *rest = pickle.loads(bytes(data))
        return Outcome("error", rest[0], _rebuilt(rest[1])) if status == "error" else \
            Outcome(status, *rest)
    except Exception:  # noqa: BLE001
        return Outcome("crashed")


def process_cpu(pid: int) -> float | None:
    """The CPU seconds (user and system) a child process has used, from /proc; None
    where that cannot be read (not Linux; the process gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
