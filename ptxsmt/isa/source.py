"""PTX source text as ptxsmt reads it from a file or a stream: bounded, UTF-8, any line end.

Every file ptxsmt reads (a module, a snippet file, a batch line's `file`) comes through
here, so one limit and one decoding rule hold everywhere:
- at most `limit()` bytes are read (default 256 MiB; `PTXSMT_MAX_INPUT=BYTES` or the
  commands' `--max-input` raise it), so `/dev/zero` or a runaway pipe is an error,
  not a process that grows until the machine stops;
- UTF-8, a byte-order mark skipped;
- line ends as ptxas reads them: CRLF, CR alone and LF are each one line end.
"""

from __future__ import annotations

import os
import re
from typing import BinaryIO

from .errors import PtxError, quote

DEFAULT_LIMIT = 256 * 2**20
_limit: int | None = None


def limit() -> int:
    """The most bytes one input may have: the set value, else PTXSMT_MAX_INPUT, else 256 MiB."""
    if _limit is not None:
        return _limit
    value = os.environ.get("PTXSMT_MAX_INPUT", "")
    return int(value) if value.isdigit() and int(value) > 0 else DEFAULT_LIMIT


def set_limit(size: int | None) -> None:
    """Set the limit for this process (None: back to PTXSMT_MAX_INPUT or the default)."""
    global _limit
    _limit = size


def read_stream(stream: BinaryIO, name: str) -> bytes:
    """All of `stream`, or PtxError if it holds more than `limit()` bytes."""
    most = limit()
    try:
        data = stream.read(most + 1)
    except OSError as e:
        raise PtxError(f"cannot read {name}: {e.strerror or e}") from None
    if len(data) > most:
        raise PtxError(f"{name}: larger than the input limit of {size(most)} "
                       "(--max-input or PTXSMT_MAX_INPUT=BYTES to raise it)")
    return data


def read_file(path: str) -> bytes:
    """The bytes of the file at `path`, bounded as `read_stream`."""
    try:
        with open(path, "rb") as stream:
            return read_stream(stream, quote(path))
    except OSError as e:
        raise PtxError(f"cannot read {quote(path)}: {e.strerror or e}") from None


def decode(data: bytes, name: str) -> str:
    """UTF-8 text (a BOM skipped) with every line end made `\\n`; PtxError names the line of
    a byte that is not UTF-8."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise PtxError(f"{name}: line {line}: not UTF-8 text (byte 0x{data[e.start]:02x})") \
            from None
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


def read_text(path: str) -> str:
    """The text of the PTX file at `path`: `read_file` then `decode`."""
    return decode(read_file(path), path)


_MODULE_HEADER = re.compile(rb"^[ \t\r\f\v]*\.version\b", re.M)


def is_module(name: str, data: bytes) -> bool:
    """Whether an input is a whole PTX module rather than lines of instructions: a file
    named *.ptx, or text with a line that starts with `.version`."""
    return name.endswith(".ptx") or _MODULE_HEADER.search(data) is not None


def size(n: int) -> str:
    """A byte count as the input limit is spelled (256 MiB)."""
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n} bytes"
