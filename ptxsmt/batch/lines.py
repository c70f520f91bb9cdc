"""The batch format, read and written: one JSON object a line, each answered in place.

A line is `{"ptx": ..., "inputs": {...}, "options": {...}}`, or names a function of a PTX
file, `{"file": "k.ptx", "function": ..., "inputs": {...}}`; its answer is the same
object with `"outputs"` (or `"error"`). Every line is answered, a blank one too. Lines
are read by msgspec; one it refuses (bad bytes or JSON, a 5,000-digit number, deep
nesting, a byte-order mark) is read again by the standard library, whose words its
error gives: it costs only itself.
"""

from __future__ import annotations

import json
import sys

import msgspec
from msgspec.structs import replace

from ..isa import source
from ..isa.errors import PtxError, quote
from ..sem.options import Options

MAX_NESTING = 100  # deeper JSON is refused on its line (json.loads gives up near 1,000)
_LONG = 4000  # a longer line is read by the standard library (its limit on digits)
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


_ABSENT = msgspec.Raw(b"")


class _Common(msgspec.Struct):
    """The line nearly every CI writes: a snippet and its inputs (other members kept
    as written), no options, no stored outputs."""

    ptx: str
    inputs: dict[str, str | int | bool] = {}
    file: msgspec.Raw = _ABSENT  # any of these: the line is read whole
    options: msgspec.Raw = _ABSENT
    outputs: msgspec.Raw = _ABSENT


_common = msgspec.json.Decoder(_Common).decode


class TooLong(bytes):
    """In place of a line longer than the input limit (its bytes are not kept)."""


def read_line(number: int, raw: bytes, opts: Options) -> Line:
    """One line of a batch (bytes, as in its file), read on its own."""
    if type(raw) is TooLong:
        return Line(number, None, {}, None, f"a line longer than the input limit of "
                    f"{source.size(source.limit())} (--max-input or PTXSMT_MAX_INPUT=BYTES "
                    "to raise it)", None, {})
    text = raw.rstrip(_BLANK)
    if number == 1:
        text = text.removeprefix(_BOM)
    if len(text) < _LONG and text.count(b"{") + text.count(b"[") <= MAX_NESTING:
        try:
            common = _common(text)
        except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
            common = None
        if common is not None and common.file is common.options is common.outputs is _ABSENT \
                and (b"%" not in text or "%" not in "".join(common.inputs)):  # %r1 is r1
            return Line(number, common.ptx, common.inputs, opts, None, text[:-1])
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


def _read(text: bytes) -> tuple[dict, str | None]:
    """Any other line's object, read as json.loads reads it; or what is wrong, in its
    words."""
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
    except RecursionError:
        return {}, f"invalid JSON: nested more than {MAX_NESTING} levels deep"
    except ValueError:  # Python refuses to read an integer of more than 4,300 digits
        return {}, f"a JSON number of more than {sys.get_int_max_str_digits():,} digits"
    if _nesting(obj) > MAX_NESTING:
        return {}, f"invalid JSON: nested more than {MAX_NESTING} levels deep"
    return (obj, None) if isinstance(obj, dict) else ({}, _LINE_SHAPE)


def _shape_error(obj: dict) -> str | None:
    """What is wrong with a line's object, or None."""
    if "file" not in obj:
        if type(obj.get("ptx")) is not str:
            return _LINE_SHAPE
    elif "ptx" in obj or type(obj["file"]) is not str or \
            type(obj.get("function", "")) is not str:
        return _LINE_SHAPE
    inputs = obj.get("inputs", {})
    if type(inputs) is not dict:
        return '"inputs" must be an object'
    if not _VALUE_TYPES.issuperset(map(type, inputs.values())):
        name = next(n for n, v in inputs.items() if type(v) not in _VALUE_TYPES)
        return f"input {quote(name)} must be a string, an integer or a boolean"
    if "%" in "".join(inputs) and len({name.lstrip("%") for name in inputs}) != len(inputs):
        return "an input is given twice (as r1 and as %r1)"
    return None


def _nesting(obj: object) -> int:
    """How deep a parsed JSON value nests, without recursion."""
    deepest, todo = 0, [(obj, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            todo += [(x, depth + 1) for x in (value.values() if isinstance(value, dict) else value)]
    return deepest


def answers(read: list[Line], got: list[dict | str]) -> list[bytes]:
    """Each line's answer (without its newline): its own text with `"outputs"` added,
    where it has none yet (all those outputs encoded at once); else its object with
    "outputs" (or "error") set."""
    plain = [k for k, line in enumerate(read) if line.head is not None and type(got[k]) is dict]
    out: list = [None] * len(read)
    # [{"d": "0x1"}, {}] spaced, less its outer `[{` and `}]`, is each line's outputs less
    # their braces, apart at `}, {`: registers and values have no braces
    encoded = _spaced(_encode([got[k] for k in plain]), indent=0)[2:-2].split(b"}, {")
    for k, inner in zip(plain, encoded):
        out[k] = b"".join((read[k].head, b', "outputs": {', inner, b"}}"))
    if len(plain) < len(read):
        out = [a if a is not None else _whole_answer(answer_object(line, g))
               for a, line, g in zip(out, read, got)]
    return out


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
