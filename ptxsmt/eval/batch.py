"""Many evaluations at once: group by snippet text, run the texts of one shape together.

The fast path is compiled from the same Z3 terms (`fast.py`); any line it
cannot take (an input missing, an operator it does not compile) goes through
the slow path, so both paths give the same answers and the same errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Literal

import numpy as np

from ..isa.errors import PtxError, quote
from ..isa.literals import hex_bits
from ..sem.options import DEFAULT, Options
from . import cache
from .fast import FastProgram, Unsupported, word_dtype
from .programs import compile_program
from .values import Evaluation, convert_inputs, to_json

Item = tuple[str, Mapping[str, object]] | tuple[str, Mapping[str, object], Options]
# How answers come back: Evaluations of register bits ("values"); Evaluations whose outputs
# are ready for JSON, keyed by the registers' spelling in the PTX and valued as the JSON
# contract says ("json"); or, where the fast path answers, the outputs object already
# written as JSON text, a str ("text": the CLI's batch, which writes nothing else).
Form = Literal["values", "json", "text"]


def evaluate_many(items: Sequence[Item], opts: Options = DEFAULT,
                  form: Form = "values") -> list[Evaluation | PtxError | str]:
    """One Evaluation (or the PtxError it raised) per (ptx, inputs[, options]), in order;
    an item without options is evaluated with `opts`; `form` says how outputs come back.
    No item's failure costs another item its answer."""
    json_values = form != "values"
    results: list[Evaluation | PtxError | str | None] = [None] * len(items)
    slow: list[int] = []  # answered by the slow path (their outputs are register bits)
    groups: dict[str | tuple[str, Options], list[int]] = {}  # by text (and options)
    for i, item in enumerate(items):
        # keyed by the text alone where the options are `opts` (hashing Options costs)
        key = item[0] if len(item) == 2 or item[2] is opts else (item[0], item[2])
        if (indices := groups.get(key)) is None:
            groups[key] = [i]
        else:
            indices.append(i)
    shapes: dict[tuple[str, Options], list[Job]] = {}  # texts of one compiled shape
    for key, indices in groups.items():
        ptx, group_opts = (key, opts) if type(key) is str else key
        try:
            job = _evaluate_group(ptx, group_opts, items, indices, results, slow)
        except Exception:  # a fast-path bug: answer the group line by line
            job = None
            for i in indices:
                results[i] = _slow(ptx, items[i][1], group_opts)
            slow += indices
        if job is not None:
            shapes.setdefault((job.fast.shape, group_opts), []).append(job)
    for (_, group_opts), jobs in shapes.items():
        try:
            _run_shape(jobs, results, form)
        except Exception:  # a fast-path bug: answer the shape line by line
            for job in jobs:
                for i in job.indices:
                    results[i] = _slow(items[i][0], items[i][1], group_opts)
                slow += job.indices
    cache.flush()  # this batch's new programs, in one write
    if json_values:  # the slow path's answers too
        for i in slow:
            if isinstance(r := results[i], Evaluation):
                results[i] = Evaluation(r.types, r.inputs, {r.name(k): to_json(v, r.types[k])
                                                            for k, v in r.outputs.items()},
                                        r.spelling)
    return results  # type: ignore[return-value]


Table = tuple[list[int], dict[str, list]]  # lines (indices), their inputs column by column


def evaluate_columns(tables: Mapping[str, Table], opts: Options, results: list) -> None:
    """Lines whose inputs come column by column (JSON values: hex strings, booleans):
    for each text, at its lines' indices in `results`, the outputs object as JSON text,
    where the fast path takes the text and the columns hold exactly its inputs. Every
    other line's entry is left as it was, for the line-by-line path (which answers it
    the same way, or says what is wrong)."""
    shapes: dict[str, list[Job]] = {}
    for ptx, (indices, table) in tables.items():
        try:
            fast = compile_program(ptx, opts)
        except Exception:  # PtxError, Unsupported, or a fast-path bug: line by line
            continue
        columns = _columns(fast, table) if table.keys() == fast.input_names else None
        if columns is not None:
            shapes.setdefault(fast.shape, []).append(Job(fast, indices, columns))
    for jobs in shapes.values():
        try:
            _run_shape(jobs, results, "text")
        except Exception:  # a fast-path bug: these lines go line by line
            for job in jobs:
                for i in job.indices:
                    results[i] = None
    cache.flush()


@dataclass(frozen=True)
class Job:
    """Lines of one text for the fast path: their input columns, by the text's names."""

    fast: FastProgram
    indices: list[int]
    columns: dict[str, list]


def _evaluate_group(ptx: str, opts: Options, items: Sequence[Item], indices: list[int],
                    results: list, slow: list[int]) -> Job | None:
    """The lines of one (text, options) group: errors and slow-path answers go into
    `results` (the latter's indices into `slow`); the lines the fast path takes come
    back as a Job."""
    try:
        fast = compile_program(ptx, opts)
    except PtxError as e:
        for i in indices:
            results[i] = e.with_traceback(None)  # kept: its frames would make a cycle
        return None
    except Unsupported:
        fast = None
    columns = _hex_columns(fast, items, indices) if fast else None
    if columns is not None:
        return Job(fast, indices, columns)
    ready: list[tuple[int, dict]] = []
    for i in indices:
        try:
            values = convert_inputs(items[i][1], fast.types, fast.inputs) if fast else None
        except PtxError as e:
            results[i] = e.with_traceback(None)
            continue
        if fast is None or not set(fast.inputs) <= set(values):
            results[i] = _slow(ptx, items[i][1], opts)
            slow.append(i)
        else:
            ready.append((i, values))
    if not ready:
        return None
    return Job(fast, [i for i, _ in ready],
               {name: [values[name] for _, values in ready] for name in fast.inputs})


_BOOL_TYPE = {bool}
_HEX_COLUMN = re.compile(r"(?:0x[0-9a-fA-F]+\n)*")
_EXACT_HEX = {width: re.compile(rf"(?:0x[0-9a-fA-F]{{{width // 4}}}\n)*")
              for width in (8, 16, 32, 64)}


def _hex_columns(fast, items, indices) -> dict[str, list | np.ndarray] | None:
    """The common CI case, checked column-wise: every line gives exactly the inputs.
    Anything else (None) takes the per-line path, which gives the same answers and the
    same errors."""
    raws = [items[i][1] for i in indices]
    try:
        table = {name: list(map(itemgetter(name), raws)) for name in fast.inputs}
    except KeyError:  # spelled `%r1`, or missing
        table = None
    if table is None or sum(map(len, raws)) != len(fast.inputs) * len(raws):
        names = fast.input_names
        for k, raw in enumerate(raws):
            if raw.keys() != names:
                raw = {key.lstrip("%"): v for key, v in raw.items()}  # `%r1` and `r1` are one
                if len(raw) != len(items[indices[k]][1]) or raw.keys() != names:
                    return None
                raws[k] = raw
        table = {name: [raw[name] for raw in raws] for name in fast.inputs}
    return _columns(fast, table)


def _columns(fast, table: Mapping[str, list]) -> dict[str, list | np.ndarray] | None:
    """Each input's column of JSON values as words, where every value is a hex string
    that fits (or a boolean, for a predicate); else None. A column of exact-width hex
    strings (`0x` and width/4 digits, as the JSON contract writes them) is read into
    words at once."""
    columns: dict[str, list | np.ndarray] = {}
    for name, column in table.items():
        width = fast.types[name].width
        if width == 1:
            if {*map(type, column)} != _BOOL_TYPE:
                return None
            columns[name] = column
            continue
        try:
            lines = "\n".join(column) + "\n"
        except TypeError:  # not every value is a string
            return None
        if width in _EXACT_HEX and _EXACT_HEX[width].fullmatch(lines):
            digits = bytes.fromhex(lines.replace("0x", "").replace("\n", ""))
            columns[name] = np.frombuffer(digits, dtype=f">u{width // 8}")
            continue
        if not _HEX_COLUMN.fullmatch(lines):
            return None
        words = [int(x, 16) for x in column]
        if max(words) >> width:
            return None
        columns[name] = words
    return columns


def _words(segments: list, width: int) -> np.ndarray:
    """One slot's column for a shape: each text's values (an array, a list, or its own
    immediate, repeated) one after another."""
    dtype = word_dtype(width)
    if len(segments) == 1:
        return np.asarray(segments[0], dtype=dtype)
    return np.concatenate([np.asarray(seg, dtype=dtype) for seg in segments])


def _slow(ptx: str, inputs, opts: Options) -> Evaluation | PtxError:
    from .evaluate import evaluate  # imports Z3: only where the fast path cannot answer

    try:
        return evaluate(ptx, inputs, opts)
    except PtxError as e:
        return e.with_traceback(None)
    except Exception as e:  # a bug in ptxsmt, reported on its line only
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


def _run_shape(jobs: list[Job], results: list, form: Form) -> None:
    """Run the jobs of one shape as one array program: slot by slot, each text's column
    (its own immediates repeated) one after another; then each text takes its rows."""
    rows = sum(len(job.indices) for job in jobs)
    fast = jobs[0].fast
    columns = []
    for position, name in enumerate(fast.slots):
        segments = []
        for job in jobs:
            mine = job.fast.slots[position]
            segments.append([job.fast.bound[mine]] * len(job.indices) if mine in job.fast.bound
                            else job.columns[mine])
        columns.append(_words(segments, fast.types[name].width))
    outputs = fast.run_slots(columns, rows)
    start = 0
    for job in jobs:
        end = start + len(job.indices)
        rows_out = [out[start:end] for out in outputs]
        if form == "text":
            _fill_text(job, rows_out, results)
        else:
            _fill(job, rows_out, results, form == "json")
        start = end


def _fill(job: Job, arrays: list[np.ndarray], results: list, json_values: bool) -> None:
    """One text's rows of the shape's outputs, as its own Evaluations at its indices."""
    fast = job.fast
    columns = {n: c.tolist() if type(c) is np.ndarray else c for n, c in job.columns.items()}
    outputs = {}
    for name, arr in zip(fast.outputs, arrays):
        column = arr.tolist()  # Python ints/bools
        width = fast.types[name].width
        if json_values and width > 1:
            column = [hex_bits(v, width) for v in column]
        outputs[name] = column
    names = [fast.spelling.get(n, n) for n in outputs] if json_values else list(outputs)
    for row, (i, *values) in enumerate(zip(job.indices, *outputs.values())):
        inputs = {} if json_values else {n: columns[n][row] for n in fast.inputs}
        results[i] = Evaluation(fast.types, inputs, dict(zip(names, values)), fast.spelling)


def _fill_text(job: Job, arrays: list[np.ndarray], results: list) -> None:
    """One text's rows of the shape's outputs, each as the JSON text of its outputs
    object: formatting a column at once costs a fraction of encoding row by row."""
    fast = job.fast
    widths = tuple(fast.types[name].width for name in fast.outputs)
    columns = [_json_texts(arr, width) for arr, width in zip(arrays, widths)]
    row = _row_template(tuple(fast.spelling.get(n, n) for n in fast.outputs), widths)
    for i, values in zip(job.indices, zip(*columns)):
        results[i] = row % values


@lru_cache(maxsize=4096)
def _row_template(names: tuple[str, ...], widths: tuple[int, ...]) -> str:
    """The outputs object of these registers as a %-template (the fastest Python
    formats), a `%s` for each value (the hex digits of a word, `_json_texts` gives them
    without their `0x`)."""
    keys = [json.dumps(n).replace("%", "%%") for n in names]
    return "{" + ", ".join(f'{key}: "0x%s"' if w in _HEX_WORDS else f"{key}: %s"
                           for key, w in zip(keys, widths)) + "}"


_HEX_WORDS = (8, 16, 32, 64)
_BOOLS = ("false", "true")


def _json_texts(arr: np.ndarray, width: int) -> list[str]:
    """A column of output bits as JSON values: `true`/`false`; the digits of the
    exact-width hex string of the JSON contract, split from one hex dump of the
    column's bytes; or the whole string for another width."""
    if width == 1:
        return [_BOOLS[v] for v in arr.tolist()]
    if width not in _HEX_WORDS:
        return [f'"{hex_bits(v, width)}"' for v in arr.tolist()]
    if not len(arr):
        return []
    return arr.astype(f">u{width // 8}").tobytes().hex(" ", width // 8).split(" ")
