"""Text and JSON rendering, and the only writing to stdout and stderr.

One module per command family turns library results into text or JSON; the
command line hands them to `out` and `err`. Progress bars live in `progress`.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys

import click

from ..eval.values import UNSPECIFIED, Value
from ..isa.literals import describe
from ..isa.types import PtxType


class OutputError(Exception):
    """stdout cannot take a result: closed (`>&-`), full (`/dev/full`) or a broken pipe."""

    def __init__(self, reason: str, broken_pipe: bool = False):
        super().__init__(f"cannot write to stdout: {reason}")
        self.broken_pipe = broken_pipe

    @classmethod
    def from_os(cls, e: OSError) -> OutputError:
        return cls(e.strerror or str(e), isinstance(e, BrokenPipeError))


def out(text: str) -> None:
    """A result, on stdout."""
    if sys.stdout is None:  # started with stdout closed: click would drop the text silently
        raise OutputError("stdout is closed")
    try:
        click.echo(text)
    except (OSError, ValueError) as e:
        raise OutputError.from_os(e) if isinstance(e, OSError) else OutputError(str(e)) from None


def err(text: str) -> None:
    """An error, a warning or a run's summary, on stderr (stdout stays parseable). With
    stderr closed or full there is nowhere to say it: the exit code still does."""
    if sys.stderr is not None:
        with contextlib.suppress(OSError, ValueError):
            click.echo(text, err=True)


def flush() -> None:
    """Write what stdout still buffers now, while a failure can be reported (OutputError);
    stderr is flushed quietly."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        sys.stderr.flush()
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except OSError as e:
            raise OutputError.from_os(e) from None
        except ValueError:  # closed by the command itself
            pass


def discard_stdout() -> None:
    """After a failed write: what stdout still holds goes to /dev/null, so Python's own
    flush at exit neither fails nor prints a second error."""
    with contextlib.suppress(OSError, AttributeError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def dumps(obj: object, indent: int | None = None) -> str:
    """JSON on one line (JSONL: `, ` and `: ` between items, json's shared default
    encoder), or indented for a whole report."""
    return json.dumps(obj, indent=indent) if indent else json.dumps(obj)


def out_bytes(data: bytes) -> None:
    """Results already encoded (a batch's JSONL block, UTF-8), on stdout."""
    if sys.stdout is None:
        raise OutputError("stdout is closed")
    try:
        sys.stdout.flush()
        raw = getattr(sys.stdout, "buffer", None)
        if raw is None:  # a text-only stream (an embedding's)
            sys.stdout.write(data.decode())
        else:  # an unbuffered stdout (python -u) may take part of it: the rest follows
            view = memoryview(data)
            while view:
                view = view[raw.write(view) or 0:]
            raw.flush()
    except OSError as e:
        raise OutputError.from_os(e) from None


def show(value: Value, t: PtxType) -> str:
    """A value for people: hex and decoded; one the ISA leaves open said as such."""
    if value is UNSPECIFIED:
        return ("unspecified (the PTX ISA leaves it open: any NaN, Spec notes 9; or a mul "
                "and add fused or not, Spec notes 13)")
    return describe(value, t)
