"""The batch format (one JSON object a line) in and out: the CI evaluator.

A line is `{"ptx": ..., "inputs": {...}, "options": {...}}`; its answer is the same
object with `"outputs"` (or `"error"`, in place). Each line is decoded and read on
its own, so nothing one line holds (bad bytes, bad JSON, 5,000-digit numbers, deep
nesting) costs another line; lines are answered in order.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterable, Iterator

from ..isa.errors import PtxError, quote
from ..sem.options import DEFAULT, Options
from .batch import evaluate_many

Answer = tuple[dict, str | None]  # the line's object with "outputs" or "error"; the error


def run_jsonl(lines: Iterable[bytes | str], opts: Options = DEFAULT, keep_stored: bool = False,
              chunk: int = 65536) -> Iterator[Answer]:
    """(object with outputs or error, error) per non-blank line, in order; with
    `keep_stored` a line's own "outputs" move to "stored" and its number to "line". Lines are
    bytes (from a file) or text; each is decoded on its own, so one bad byte costs one
    line. Lines are evaluated a chunk at a time, grouped by instruction text and
    options, so memory stays flat. The cyclic garbage collector is paused while a chunk
    is in flight (JSON objects make no cycles; scanning tens of thousands of live dicts
    over and over cost a third of the time) and its young generations run between chunks."""
    parsed: list[tuple[int, dict, Options | None, str | None]] = []
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for number, line in enumerate(lines, 1):
            entry = _parse_batch_line(line, opts, first=number == 1)
            if entry is None:
                continue
            obj, line_opts, error = entry
            if keep_stored:
                obj["stored"], obj["line"] = obj.pop("outputs", None), number
            parsed.append((number, obj, line_opts, error))
            if len(parsed) == chunk:
                yield from _answer(parsed)
                parsed = []
                gc.collect(1)  # the young generations only: caches stay unscanned
        yield from _answer(parsed)
    finally:
        if was_enabled:
            gc.enable()


def _answer(parsed: list[tuple[int, dict, Options | None, str | None]]):
    todo = [(obj["ptx"], obj.get("inputs", {}), line_opts)
            for _, obj, line_opts, error in parsed if error is None]
    answers = iter(evaluate_many(todo, json_values=True))
    for number, obj, _, error in parsed:
        if error is None:
            answer = next(answers)
            if isinstance(answer, PtxError):
                error = str(answer)
            else:
                obj["outputs"] = answer.outputs
        if error is not None:
            obj["error"] = f"line {number}: {error}"
        yield obj, error


MAX_NESTING = 100  # deeper JSON is refused on its line (json.loads gives up near 1,000)
_JSON_BLANK = " \t\r\n"
_LINE_SHAPE = 'expected {"ptx": "...", "inputs": {...}}'


def _parse_batch_line(line: bytes | str, opts: Options, first: bool = False):
    """(object, its options, error) for one line, None for a blank one. Nothing a line
    holds (bad bytes, bad JSON, 5,000-digit numbers, deep nesting) escapes its line."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            return {}, None, f"not UTF-8 text (byte 0x{line[e.start]:02x} at column {e.start + 1})"
    if first:
        line = line.removeprefix("\ufeff")
    if not line.strip(_JSON_BLANK):
        return None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as e:
        return {}, None, f"invalid JSON: {e.msg} at column {e.colno}"
    except RecursionError:
        return {}, None, f"invalid JSON: nested more than {MAX_NESTING} levels deep"
    except ValueError:  # Python refuses to read an integer of more than 4,300 digits
        return {}, None, f"a JSON number of more than {sys.get_int_max_str_digits():,} digits"
    if line.count("[") + line.count("{") > MAX_NESTING and _nesting(obj) > MAX_NESTING:
        return {}, None, f"invalid JSON: nested more than {MAX_NESTING} levels deep"
    if not isinstance(obj, dict) or not isinstance(obj.get("ptx"), str):
        return (obj if isinstance(obj, dict) else {}), None, _LINE_SHAPE
    inputs = obj.get("inputs", {})
    if not isinstance(inputs, dict):
        return obj, None, '"inputs" must be an object'
    for name, value in inputs.items():
        if not isinstance(value, str | int):  # bool is an int
            return obj, None, f"input {quote(name)} must be a string, an integer or a boolean"
    if len({name.lstrip("%") for name in inputs}) != len(inputs):
        return obj, None, "an input is given twice (as r1 and as %r1)"
    if "options" not in obj:
        return obj, opts, None
    try:
        return obj, Options.from_json(obj["options"], opts), None
    except PtxError as e:
        return obj, None, str(e)


def _nesting(obj: object) -> int:
    """How deep a parsed JSON value nests, without recursion."""
    deepest, todo = 0, [(obj, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, dict | list):
            deepest = max(deepest, depth)
            todo += [(x, depth + 1) for x in (value.values() if isinstance(value, dict) else value)]
    return deepest


def check_jsonl(lines: Iterable[bytes | str], opts: Options = DEFAULT) -> Iterator[dict | None]:
    """Per non-blank line: None when its stored "outputs" are reproduced, else the
    difference {"line", "ptx", "inputs", ("options"), "expected", "got"}."""
    for obj, error in run_jsonl(lines, opts, keep_stored=True):
        stored, got = obj.pop("stored", None), obj.get("outputs")
        if error is None and got == stored:
            yield None
            continue
        diff = {"line": obj.pop("line"), "ptx": obj.get("ptx"), "inputs": obj.get("inputs")}
        if "options" in obj:  # part of the line: needed to reproduce it
            diff["options"] = obj["options"]
        yield {**diff, "expected": stored, "got": error or got}
