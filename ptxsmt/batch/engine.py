"""Many evaluations at once: lines grouped by text, each text's program run over its lines' inputs
as columns, the texts of one program (the same code on the same words) as one run. A line the fast
backend cannot take (an input missing, an operator it lacks) goes to the slow evaluator
(`ptxsmt.eval`): the same answers and errors, and no line's failure costs another's.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

import numpy as np

from ..eval.values import convert_inputs
from ..fast import FastProgram, word_dtype
from ..isa.errors import PtxError, quote
from ..sem.options import DEFAULT, Options
from . import cache
from .programs import compile_program, missing

Item = tuple[str, Mapping[str, object]] | tuple[str, Mapping[str, object], Options]
Outputs = dict[str, str | bool]  # a line's outputs as JSON writes them, by register as spelled


def evaluate_many(items: Sequence[Item], opts: Options = DEFAULT,
                  compile_new: Callable[[list[str]], object] | None = None
                  ) -> list[Outputs | PtxError]:
    """The outputs (or the PtxError raised) per (ptx, inputs[, options]), in order; an
    item without options is evaluated with `opts`. `compile_new` is handed the texts the
    cache lacks, before any is compiled here."""
    # per text (and options) its items' positions; keyed by the text alone where the
    # options are `opts` (hashing Options costs)
    groups: dict[str | tuple[str, Options], list[int]] = defaultdict(list)
    for i, item in enumerate(items):
        groups[item[0] if len(item) == 2 or item[2] is opts else item[::2]].append(i)
    results: list = [None] * len(items)
    new = missing([key for key in groups if type(key) is str], opts)  # one read of the cache
    if compile_new and new:
        compile_new(new)
    runs: dict[tuple, list[Job]] = defaultdict(list)  # by code and slot widths: a shape's texts, or
    for key, indices in groups.items():  # of shapes compiled alike (add.s32, add.u32)
        ptx, group_opts = (key, opts) if type(key) is str else key
        raws = list(map(itemgetter(1), map(items.__getitem__, indices)))
        try:
            job = _group(ptx, group_opts, indices, raws, results)
        except Exception:  # Unsupported by the backend (or a bug in the fast path): the
            for i, raw in zip(indices, raws):  # slow path answers the group
                results[i] = _slow(ptx, raw, group_opts)
            continue
        if job is not None:
            program = job.program
            runs[(program.code, *(program.types[s].width for s in program.slots))].append(job)
    with np.errstate(all="ignore"):  # words wrap by design (FastProgram.run_slots)
        for jobs in runs.values():
            try:
                _run_together(jobs, results)
            except Exception:  # likewise
                for i in (i for job in jobs for i in job.indices):
                    results[i] = _slow(*items[i][:2], items[i][2] if len(items[i]) == 3 else opts)
    cache.flush()  # this batch's new programs, in one write
    return results


@dataclass(frozen=True)
class Job:
    """The lines of one text the fast path takes: their inputs, column by column."""

    program: FastProgram
    indices: list[int]
    columns: dict[str, list | np.ndarray]


def _group(ptx: str, opts: Options, indices: list[int], raws: list[Mapping],
           results: list) -> Job | None:
    """The lines of one text: errors and slow answers go into `results`; the lines the
    fast path takes come back as a Job (Unsupported: the backend refuses the text)."""
    try:
        program = compile_program(ptx, opts)
    except PtxError as e:
        for i in indices:
            results[i] = e.with_traceback(None)  # kept: its frames would make a cycle
        return None
    if (columns := _exact_columns(program, raws)) is not None:
        return Job(program, indices, columns)
    ready: list[tuple[int, dict]] = []
    for i, raw in zip(indices, raws):
        try:
            values = convert_inputs(raw, program.types, program.inputs)
        except PtxError:  # a bad value, or a name the fast path does not read (an open
            results[i] = _slow(ptx, raw, opts)  # value, `open[...]`): eval's answer or error
            continue
        if values.keys() >= set(program.inputs):
            ready.append((i, values))
        else:
            results[i] = _slow(ptx, raw, opts)
    if not ready:
        return None
    return Job(program, [i for i, _ in ready],
               {name: [values[name] for _, values in ready] for name in program.inputs})


def _exact_columns(program: FastProgram, raws: list[Mapping]) -> dict | None:
    """The common case, read a column at a time: every line gives exactly the inputs,
    each word as the JSON contract writes it (`0x` and width/4 digits), each predicate
    as a Boolean. None for anything else: the line-by-line path reads it."""
    if {*map(len, raws)} != {len(program.inputs)}:
        return None
    columns: dict[str, list | np.ndarray] = {}
    try:  # KeyError: a line lacks a name; ValueError: a digit is not hex
        for name in program.inputs:  # as many names as inputs, each of them: exactly the inputs
            column = list(map(itemgetter(name), raws))
            kinds, width = {*map(type, column)}, program.types[name].width
            if width == 1 and kinds == {bool}:
                columns[name] = column
                continue
            if kinds != {str} or width == 1:  # else a register's word: 8, 16, 32 or 64 bits
                return None
            n, size = len(column), 2 + width // 4
            text = "".join(column)
            if len(text) != n * size or text[0::size] != "0" * n or text[1::size] != "x" * n:
                return None
            words = bytes.fromhex(text.replace("0x", ""))
            if len(words) != n * width // 8:  # a blank among the digits, or a `0x` inside
                return None
            columns[name] = np.frombuffer(words, dtype=f">u{width // 8}")
    except (KeyError, ValueError):
        return None
    return columns


def _slow(ptx: str, inputs, opts: Options) -> Outputs | PtxError:
    from ..eval.evaluate import evaluate  # imports Z3: only where the fast path cannot answer

    return answered(lambda: evaluate(ptx, inputs, opts).outputs_json())


def answered(evaluation: Callable[[], Outputs]) -> Outputs | PtxError:
    """The evaluation's JSON outputs, or its error (a ptxsmt bug's too: on its line only)."""
    try:
        return evaluation()
    except PtxError as e:
        return e.with_traceback(None)  # kept: its frames would make a cycle
    except Exception as e:
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


def _run_together(jobs: list[Job], results: list) -> None:
    """Jobs whose programs are one as one run: slot by slot, each text's column (its own
    immediates repeated) one after another; then each text takes its rows."""
    program = jobs[0].program
    columns = []
    for position, name in enumerate(program.slots):
        dtype = word_dtype(program.types[name].width)
        segments = []
        for job in jobs:
            mine = job.program.slots[position]
            segments.append(np.full(len(job.indices), job.program.bound[mine], dtype)
                            if mine in job.program.bound else np.asarray(job.columns[mine], dtype))
        columns.append(segments[0] if len(segments) == 1 else np.concatenate(segments))
    outputs = program.run_slots(columns, sum(len(job.indices) for job in jobs))
    start = 0
    for job in jobs:
        end = start + len(job.indices)
        names = [job.program.spelling.get(n, n) for n in job.program.outputs]
        values = [_json_column(out[start:end], job.program.types[n].width)
                  for out, n in zip(outputs, job.program.outputs)]
        if len(names) == 1:  # nearly every instruction: a literal a row
            rows = [{names[0]: value} for value in values[0]]
        else:
            rows = [dict(zip(names, row)) for row in zip(*values)]
        deque(map(results.__setitem__, job.indices, rows), 0)
        start = end


def _json_column(arr: np.ndarray, width: int) -> list:
    """A column of output bits as JSON values: Booleans, or exact-width hex strings
    (from one hex dump of the column's bytes)."""
    if width == 1:
        return arr.tolist()
    return ("0x" + arr.astype(f">u{width // 8}").tobytes().hex(" ", width // 8)
            .replace(" ", " 0x")).split(" ")
