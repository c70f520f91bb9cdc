"""Text and JSON rendering, and the only writing to stdout and stderr.

One module per command family turns library results into text or JSON; the
command line hands them to `out` and `err`. Progress bars live in `progress`.
"""

from __future__ import annotations

import json
import sys

import click

from ..eval.values import UNSPECIFIED, Value
from ..isa.literals import describe
from ..isa.types import PtxType


def out(text: str) -> None:
    """A result, on stdout."""
    click.echo(text)


def err(text: str) -> None:
    """An error, a warning or a run's summary, on stderr (stdout stays parseable)."""
    click.echo(text, err=True)


def dumps(obj: object, indent: int | None = None) -> str:
    """JSON on one line (JSONL: `, ` and `: ` between items, json's shared default
    encoder), or indented for a whole report."""
    return json.dumps(obj, indent=indent) if indent else json.dumps(obj)


def out_bytes(data: bytes) -> None:
    """Results already encoded (a batch's JSONL block, UTF-8), on stdout."""
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:  # a text-only stream (an embedding's)
        sys.stdout.write(data.decode())
    else:
        raw.write(data)
        raw.flush()


def show(value: Value, t: PtxType) -> str:
    """A value for people: hex and decoded; one the ISA leaves open said as such."""
    if value is UNSPECIFIED:
        return "unspecified (any NaN: the PTX ISA leaves it open, Spec notes 9)"
    return describe(value, t)
