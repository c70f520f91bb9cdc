"""The batch format, read and written: one JSON object a line, each answered in place.

A line is `{"ptx": ..., "inputs": {...}, "options": {...}}`, or names a function of a PTX file,
`{"file": "k.ptx", "function": ..., "inputs": {...}}`; its answer is the same object with
`"outputs"` (or `"error"`). Every line is answered, a blank one too. Lines are read by msgspec; one
it refuses (bad bytes or JSON, a 5,000-digit number, deep nesting, a byte-order mark) is read again
by the standard library, whose words its error gives: it costs only itself.
"""

from __future__ import annotations

import json
import sys
from itertools import count, repeat
from operator import attrgetter

import msgspec
from msgspec.structs import replace

from ..isa import source
from ..isa.errors import PtxError, quote
from ..sem.options import Options

_BLANK = b" \t\r\n"
_BOM = "\ufeff".encode()
_LINE_SHAPE = ('expected {"ptx": "...", "inputs": {...}} or '
               '{"file": "k.ptx", "function": "...", "inputs": {...}}')
_VALUE_TYPES = frozenset((str, int, bool))  # the types JSON gives an input value
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.Encoder().encode
_spaced = msgspec.json.format  # indent=0: one line, spaced as json.dumps spaces it


class Line(msgspec.Struct, gc=False):
    """A line as read: its number, code and inputs; its options, or what is wrong with
    it; its text less the closing brace, where the answer is that text with "outputs";
    and its object, where it was read as one (`whole` gives it)."""

    number: int
    ptx: str | None
    inputs: dict
    opts: Options | None
    error: str | None
    head: bytes | None
    obj: dict | None = None

    def whole(self) -> dict:
        """The line's object (a common line is read again: only errors and checks ask)."""
        return self.obj if self.obj is not None else _decode(self.head + b"}")


class _Common(msgspec.Struct, gc=False):
    """The line nearly every CI writes: a snippet and its inputs (other members kept
    as written), no options, no stored outputs."""

    ptx: str
    inputs: dict[str, str | int | bool] = {}
    file: msgspec.UnsetType = msgspec.UNSET  # any of these refuses the line: it is
    options: msgspec.UnsetType = msgspec.UNSET  # read whole
    outputs: msgspec.UnsetType = msgspec.UNSET


_common = msgspec.json.Decoder(_Common).decode
_CHUNK = 1024  # common lines read together; any other line sends its chunk line by line


class TooLong(bytes):
    """In place of a line longer than the input limit (its bytes are not kept)."""


def read_lines(first: int, raws: list[bytes], opts: Options) -> list[Line]:
    """Lines numbered from `first`: a chunk of common lines read at once, the lines of
    any other chunk one by one."""
    read: list[Line] = []
    for start in range(0, len(raws), _CHUNK):
        chunk = raws[start:start + _CHUNK]
        read += _commons(first + start, list(map(bytes.rstrip, chunk, repeat(_BLANK))), opts) \
            or map(read_line, count(first + start), chunk, repeat(opts))
    return read


def read_line(number: int, raw: bytes, opts: Options) -> Line:
    """One line of a batch (bytes, as in its file), read on its own."""
    if type(raw) is TooLong:
        return Line(number, None, {}, None, f"a line longer than the input limit of "
                    f"{source.size(source.limit())} (--max-input or PTXSMT_MAX_INPUT=BYTES "
                    "to raise it)", None, {})
    text = raw.rstrip(_BLANK)
    if number == 1:
        text = text.removeprefix(_BOM)
    if common := _commons(number, [text], opts):
        return common[0]
    obj, error = _read(text)
    error = error or _shape_error(obj)
    if error is not None:
        return Line(number, None, {}, None, error, None, obj)
    head = text[:-1] if "outputs" not in obj else None  # else replaced in place
    line = Line(number, obj.get("ptx"), obj.get("inputs", {}), opts, None, head, obj)
    try:
        return replace(line, opts=Options.from_json(obj["options"], opts)) \
            if "options" in obj else line
    except PtxError as e:
        return replace(line, opts=None, error=str(e), head=None)


def _commons(first: int, texts: list[bytes], opts: Options) -> list[Line] | None:
    """The lines (texts numbered from `first`) where every one is common, each decoded by msgspec
    in one C call; else None (a blank line, a byte-order mark, bad JSON: its decode fails)."""
    try:
        commons = list(map(_common, texts))
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    return list(map(Line, count(first), map(_PTX, commons), map(_INPUTS, commons),
                    repeat(opts), repeat(None), [text[:-1] for text in texts]))


_PTX, _INPUTS, _HEAD = attrgetter("ptx"), attrgetter("inputs"), attrgetter("head")


def _read(text: bytes) -> tuple[dict, str | None]:
    """Any other line's object, read as json.loads reads it; or what is wrong, in its words."""
    try:
        line = text.decode("utf-8")
    except UnicodeDecodeError as e:
        return {}, f"not UTF-8 text (byte 0x{text[e.start]:02x} at column {e.start + 1})"
    if not line.strip(" \t\r\n"):
        return {}, f"an empty line: {_LINE_SHAPE}"
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        return {}, f"invalid JSON: {e.msg} at column {e.colno}"
    except RecursionError:  # near 1,000 levels (msgspec's limit for a common line too)
        return {}, "invalid JSON: nested too deeply"
    except ValueError:  # Python refuses to read an integer of more than 4,300 digits
        return {}, f"a JSON number of more than {sys.get_int_max_str_digits():,} digits"
    return (obj, None) if isinstance(obj, dict) else ({}, _LINE_SHAPE)


def _shape_error(obj: dict) -> str | None:
    """What is wrong with a line's object, or None."""
    code = (obj["file"], obj.get("function", "")) if "file" in obj else (obj.get("ptx"),)
    if "file" in obj and "ptx" in obj or {*map(type, code)} != {str}:
        return _LINE_SHAPE
    inputs = obj.get("inputs", {})
    if type(inputs) is not dict:
        return '"inputs" must be an object'
    if not _VALUE_TYPES.issuperset(map(type, inputs.values())):
        name = next(n for n, v in inputs.items() if type(v) not in _VALUE_TYPES)
        return f"input {quote(name)} must be a string, an integer or a boolean"
    return None


def answers(read: list[Line], got: list[dict | str]) -> bytes:
    """The lines' answers, each ending in a newline: its own text with `"outputs"` added
    (all those outputs encoded at once, and written with one join), where it has none
    yet; else its object with "outputs" (or "error") set."""
    if not read:
        return b""
    heads = list(map(_HEAD, read))
    plain = all(heads) and {*map(type, got)} == {dict}  # a head is None or not empty
    parts = [b"", b', "outputs": {', b"", b"}}\n"] * len(read)  # a head, then its outputs
    parts[0::4] = heads
    parts[2::4] = _inner(got if plain else [g if type(g) is dict else {} for g in got])
    for k in [] if plain else range(len(read)):
        if heads[k] is None or type(got[k]) is not dict:
            parts[4 * k:4 * k + 4] = _whole_answer(answer_object(read[k], got[k])), b"", b"", b"\n"
    return b"".join(parts)


def _inner(outputs: list[dict]) -> list[bytes]:
    """Each line's outputs, encoded, less their braces: [{"d": "0x1"}, {}] spaced, less
    its outer `[{` and `}]`, apart at `}, {` (registers and values have no braces)."""
    return _spaced(_encode(outputs), indent=0)[2:-2].split(b"}, {")


def _whole_answer(obj: dict) -> bytes:
    try:
        return _spaced(_encode(obj), indent=0)
    except (UnicodeEncodeError, OverflowError, TypeError):  # a lone surrogate, inf: as
        return json.dumps(obj).encode()  # the standard library read them, it writes them


def answer_object(line: Line, got: dict | str) -> dict:
    """The line's object with "outputs" (or "error") set."""
    obj = line.whole()
    if type(got) is dict:
        obj["outputs"] = got
    else:
        obj["error"] = f"line {line.number}: {got}"
    return obj
