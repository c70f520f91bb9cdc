"""The batch format (one JSON object a line) in and out: the CI evaluator.

A line is `{"ptx": ..., "inputs": {...}, "options": {...}}`, or names a function of a PTX
file, `{"file": "k.ptx", "function": ..., "inputs": {...}}` (the path as given, from the
working directory; inputs as `ptxsmt eval FILE.ptx` takes them); its answer is the same
object with `"outputs"` (or `"error"`, in place). Each line is decoded and read on
its own, so nothing one line holds (bad bytes, bad JSON, 5,000-digit numbers, deep
nesting) costs another line; lines are answered in order.
"""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import compress, count, islice, repeat
from json.scanner import make_scanner
from operator import is_

from ..isa.errors import PtxError, quote
from ..sem.options import DEFAULT, Options
from .batch import Form, evaluate_many
from .plain import plain_answers

Answer = tuple[dict, str | None]  # the line's object with "outputs" or "error"; the error
# A line as read: its number, object, options, error, and its text where the answer can
# be that text with "outputs" added at the end (the line was one JSON object without one).
_Entry = tuple[int, dict, Options | None, str | None, str | None]


def run_jsonl(lines: Iterable[bytes | str], opts: Options = DEFAULT, keep_stored: bool = False,
              chunk: int = 65536) -> Iterator[Answer]:
    """(object with outputs or error, error) per non-blank line, in order; with
    `keep_stored` a line's own "outputs" move to "stored" and its number to "line". Lines are
    bytes (from a file) or text; each is decoded on its own, so one bad byte costs one
    line. Lines are evaluated a chunk at a time, grouped by instruction text and
    options, so memory stays flat."""
    for parsed in _chunks(enumerate(lines, 1), opts, keep_stored, chunk):
        yield from _answer(parsed, "json")
        parsed.clear()  # freed now, not scanned by the collector between chunks


# Answer lines (UTF-8, each ending in a newline), how many, whether any is an error.
Block = tuple[bytes, int, bool]


def render_jsonl(lines: Iterable[bytes | str], opts: Options = DEFAULT,
                 chunk: int = 65536) -> Iterator[Block]:
    """The CLI's batch: the answers as JSON text, a block per chunk of lines, in order.
    A line that is one JSON object without "outputs" is answered by its own text with
    `"outputs": {...}` added at the end (its spelling kept, nothing encoded twice); any
    other line by its object encoded again, as `run_jsonl` gives it."""
    numbered = enumerate(lines, 1)
    while part := list(islice(numbered, chunk)):
        answers, failed = answer_lines(part, opts)
        texts = [text for text in answers if text is not None]
        if texts:
            yield "\n".join([*texts, ""]).encode(), len(texts), failed


def answer_lines(numbered: list[tuple[int, bytes | str]],
                 opts: Options = DEFAULT) -> tuple[list[str | None], bool]:
    """Each line's answer text as `render_jsonl` writes it (None for a blank line), for
    lines numbered as in their file (some lines of a file, in order), and whether any
    answer is an error. The common lines are read a block at a time (`plain.py`); the
    JSON reader takes the rest, and answers them the same way."""
    lines = [line for _, line in numbered]
    with collector_paused():
        return _answers(_joined(lines), lines, [number for number, _ in numbered], opts)


def answer_block(block: bytes, numbers: list[int],
                 opts: Options = DEFAULT) -> tuple[list[str | None], bool]:
    """`answer_lines` for lines given as one block, each ending in a newline, numbered
    `numbers`."""
    with collector_paused():
        text = block.decode("utf-8", "surrogateescape")
        if "\r" in text or " \n" in text or "\t\n" in text:  # a line ends in blanks
            text = "\n".join([line.rstrip(_JSON_BLANK) for line in text.split("\n")])
        return _answers(text[:-1], None, numbers, opts, block)


def _answers(text: str | None, lines: list[bytes | str] | None, numbers: list[int],
             opts: Options, block: bytes = b"") -> tuple[list[str | None], bool]:
    """The answers to lines (`text`: joined by newlines, their blanks at the end left
    out; None where they are of both kinds), each line as read (`lines`, or split from
    `block`) for those the JSON reader takes."""
    answers = [None] * len(numbers) if text is None else \
        plain_answers(text, len(numbers), opts)
    # found by C loops (`None in answers` would test equality, a call a line)
    rest = list(compress(count(), map(is_, answers, repeat(None))))
    if not rest:
        return answers, False
    if lines is None:
        lines = block.split(b"\n")
    by_number, failed = json_answers([(numbers[i], lines[i]) for i in rest], opts)
    for i in rest:
        answers[i] = by_number.get(numbers[i])
    return answers, failed


def json_answers(numbered: list[tuple[int, bytes | str]],
                 opts: Options = DEFAULT) -> tuple[dict[int, str], bool]:
    """The answer text of each non-blank line, by its number, each line read by the
    JSON reader; and whether any answer is an error."""
    numbers: list[int] = []
    texts: list[tuple[str, str | None]] = []
    for parsed in _chunks(numbered, opts, False, len(numbered) or 1):
        numbers += [entry[0] for entry in parsed]
        texts += _answer(parsed, "text")
        parsed.clear()
    return ({number: text for number, (text, _) in zip(numbers, texts)},
            any(error is not None for _, error in texts))


def _joined(lines: list[bytes | str]) -> str | None:
    """The lines as one text, each without its trailing whitespace (as the JSON reader
    takes it), joined by newlines; bytes that are not UTF-8 kept as lone surrogates (no
    plain line holds one: such a line goes to the JSON reader, which names the byte).
    None for lines of both kinds."""
    kinds = {*map(type, lines)}
    if kinds == {bytes}:
        return b"\n".join([line.rstrip(_JSON_BLANK_BYTES) for line in lines]).decode(
            "utf-8", "surrogateescape")
    if kinds == {str}:
        return "\n".join([line.rstrip(_JSON_BLANK) for line in lines])
    return None


def _chunks(numbered: Iterable[tuple[int, bytes | str]], opts: Options, keep_stored: bool,
            chunk: int) -> Iterator[list[_Entry]]:
    """The non-blank lines, read, a chunk at a time (the caller clears each when done),
    with the cyclic garbage collector paused."""
    parsed: list[_Entry] = []
    with collector_paused():
        for number, line in numbered:
            plain = _plain_line(line) if number != 1 else None
            if plain is not None and not keep_stored:
                parsed.append((number, plain[0], opts, None, plain[1]))
            else:
                entry = _parse_batch_line(line, opts, first=number == 1)
                if entry is None:
                    continue
                obj, line_opts, error, text = entry
                if keep_stored:
                    obj["stored"], obj["line"], text = obj.pop("outputs", None), number, None
                parsed.append((number, obj, line_opts, error, text))
            if len(parsed) == chunk:
                yield parsed
                parsed = []
        yield parsed


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic garbage collector paused: a batch makes no cycles (JSON objects,
    compiled programs, errors kept without their tracebacks), and scanning its live
    objects over and over cost a third of the time, then half a second a chunk where
    thousands of programs are compiled."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _answer(parsed: list[_Entry], form: Form) -> Iterator:
    todo = [(obj["ptx"], obj.get("inputs", {}), line_opts)
            for _, obj, line_opts, error, _ in parsed if error is None and "file" not in obj]
    answers = iter(evaluate_many(todo, form=form))
    for number, obj, line_opts, error, text in parsed:
        if error is None:
            answer = _function_answer(obj, line_opts) if "file" in obj else next(answers)
            if isinstance(answer, dict) and form == "text":
                answer = json.dumps(answer)
            if isinstance(answer, PtxError):
                error = str(answer)
            elif isinstance(answer, str):  # the outputs object, written as JSON
                if text is not None:
                    yield f'{text[:-1]}, "outputs": {answer}}}', None
                    continue
                obj["outputs"] = json.loads(answer)
            else:
                obj["outputs"] = answer if isinstance(answer, dict) else answer.outputs
        if error is not None:
            obj["error"] = f"line {number}: {error}"
        yield (json.dumps(obj) if form == "text" else obj), error


MAX_NESTING = 100  # deeper JSON is refused on its line (json.loads gives up near 1,000)
_JSON_BLANK = " \t\r\n"
_JSON_BLANK_BYTES = _JSON_BLANK.encode()
_LINE_SHAPE = ('expected {"ptx": "...", "inputs": {...}} or '
               '{"file": "k.ptx", "function": "...", "inputs": {...}}')
_VALUE_TYPES = frozenset((str, int, bool))  # the types JSON gives an input value
_SCAN = make_scanner(json.JSONDecoder())  # what json.loads runs, less its wrapping


_NOT_PLAIN = frozenset(("file", "outputs", "options"))


def _plain_line(line: bytes | str) -> tuple[dict, str] | None:
    """(object, text) for the common line, `{"ptx": "...", "inputs": {...}}` (other keys
    are kept as they are) with string, integer or boolean inputs none of which is
    spelled with `%`; None for any other line (`_parse_batch_line` reads those, and says
    what is wrong)."""
    try:
        text = (line.decode("utf-8") if type(line) is bytes else line).rstrip(_JSON_BLANK)
        obj, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError, AttributeError):
        return None
    if end != len(text) or type(obj) is not dict or not _NOT_PLAIN.isdisjoint(obj) \
            or text.count("[") + text.count("{") > MAX_NESTING:
        return None
    inputs = obj.get("inputs")
    if type(obj.get("ptx")) is not str or type(inputs) is not dict or "%" in "".join(inputs) \
            or not _VALUE_TYPES.issuperset(map(type, inputs.values())):
        return None
    return obj, text


def _parse_batch_line(line: bytes | str, opts: Options, first: bool = False):
    """(object, its options, error, its text where an answer can extend it) for one line,
    None for a blank one. Nothing a line holds (bad bytes, bad JSON, 5,000-digit numbers,
    deep nesting) escapes its line."""
    if isinstance(line, bytes):
        try:
            line = line.decode("utf-8")
        except UnicodeDecodeError as e:
            error = f"not UTF-8 text (byte 0x{line[e.start]:02x} at column {e.start + 1})"
            return {}, None, error, None
    if first:
        line = line.removeprefix("\ufeff")
    text = line.rstrip(_JSON_BLANK)
    obj = _scan(text)
    if obj is None:  # not a plain object: read again, the long way, for the error's words
        if not text.lstrip(_JSON_BLANK):
            return None
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            return {}, None, f"invalid JSON: {e.msg} at column {e.colno}", None
        except RecursionError:
            return {}, None, f"invalid JSON: nested more than {MAX_NESTING} levels deep", None
        except ValueError:  # Python refuses to read an integer of more than 4,300 digits
            return {}, None, (f"a JSON number of more than {sys.get_int_max_str_digits():,} "
                              "digits"), None
    if text.count("[") + text.count("{") > MAX_NESTING and _nesting(obj) > MAX_NESTING:
        return {}, None, f"invalid JSON: nested more than {MAX_NESTING} levels deep", None
    if not isinstance(obj, dict) or not _names_its_code(obj):
        return (obj if isinstance(obj, dict) else {}), None, _LINE_SHAPE, None
    inputs = obj.get("inputs", {})
    if type(inputs) is not dict:
        return obj, None, '"inputs" must be an object', None
    if not _VALUE_TYPES.issuperset(map(type, inputs.values())):
        name = next(n for n, v in inputs.items() if type(v) not in _VALUE_TYPES)
        return obj, None, f"input {quote(name)} must be a string, an integer or a boolean", None
    if "%" in "".join(inputs) and len({name.lstrip("%") for name in inputs}) != len(inputs):
        return obj, None, "an input is given twice (as r1 and as %r1)", None
    if "outputs" in obj:  # the answer replaces them in place
        text = None
    if "options" not in obj:
        return obj, opts, None, text
    try:
        return obj, Options.from_json(obj["options"], opts), None, text
    except PtxError as e:
        return obj, None, str(e), None


def _names_its_code(obj: dict) -> bool:
    """A snippet ("ptx") or a file's function ("file", "function" if it has several)."""
    if "file" not in obj:
        return isinstance(obj.get("ptx"), str)
    return "ptx" not in obj and isinstance(obj["file"], str) and \
        isinstance(obj.get("function", ""), str)


def _function_answer(obj: dict, opts: Options) -> dict | PtxError:
    """The JSON outputs of a line that names a function of a PTX file (with Z3: the slow
    path, as `ptxsmt eval FILE.ptx` takes it)."""
    from .function import evaluate_function, read_function_file

    try:
        fn = read_function_file(obj["file"], obj.get("function"))
        return evaluate_function(fn, obj.get("inputs", {}), opts).outputs_json()
    except PtxError as e:
        return e.with_traceback(None)
    except Exception as e:  # a bug in ptxsmt, reported on its line only
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


def _scan(text: str) -> object:
    """The JSON object that is all of `text`, read as json.loads reads it; None where it
    is anything else or fails (the long way then gives the error its words)."""
    try:
        obj, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None
    return obj if end == len(text) and type(obj) is dict else None


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
        code = {k: obj[k] for k in ("file", "function") if k in obj} or {"ptx": obj.get("ptx")}
        diff = {"line": obj.pop("line"), **code, "inputs": obj.get("inputs")}
        if "options" in obj:  # part of the line: needed to reproduce it
            diff["options"] = obj["options"]
        yield {**diff, "expected": stored, "got": error or got}
