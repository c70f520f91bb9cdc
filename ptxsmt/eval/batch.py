"""Many evaluations at once: group by snippet text, run the texts of one shape together.

The fast path is compiled from the same Z3 terms (`fast.py`); any line it
cannot take (an input missing, an operator it does not compile) goes through
the slow path, so both paths give the same answers and the same errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..isa.errors import PtxError, quote
from ..isa.literals import hex_bits
from ..sem.options import DEFAULT, Options
from .fast import FastProgram, Unsupported, word_dtype
from .programs import compile_program
from .values import Evaluation, convert_inputs, to_json

Item = tuple[str, Mapping[str, object]] | tuple[str, Mapping[str, object], Options]


def evaluate_many(items: Sequence[Item], opts: Options = DEFAULT,
                  json_values: bool = False) -> list[Evaluation | PtxError]:
    """One Evaluation (or the PtxError it raised) per (ptx, inputs[, options]), in order;
    an item without options is evaluated with `opts`. With `json_values` (the CLI's
    batch), outputs are ready for JSON: keyed by the registers' spelling in the PTX,
    valued as the JSON contract says. No item's failure costs another item its answer."""
    results: list[Evaluation | PtxError | None] = [None] * len(items)
    ready_json: set[int] = set()  # fast-path answers, already in JSON form
    groups: dict[tuple[str, Options], list[int]] = {}
    for i, (ptx, _, *item_opts) in enumerate(items):
        groups.setdefault((ptx, item_opts[0] if item_opts else opts), []).append(i)
    shapes: dict[tuple[str, Options], list[Job]] = {}  # texts of one compiled shape
    for (ptx, group_opts), indices in groups.items():
        try:
            job = _evaluate_group(ptx, group_opts, items, indices, results)
        except Exception:  # a fast-path bug: answer the group line by line
            job = None
            for i in indices:
                results[i] = _slow(ptx, items[i][1], group_opts)
        if job is not None:
            shapes.setdefault((job.fast.shape, group_opts), []).append(job)
    for (_, group_opts), jobs in shapes.items():
        try:
            _run_shape(jobs, results, json_values)
            ready_json.update(i for job in jobs for i in job.indices)
        except Exception:  # a fast-path bug: answer the shape line by line
            for job in jobs:
                for i in job.indices:
                    results[i] = _slow(items[i][0], items[i][1], group_opts)
    if json_values:  # the slow path's answers too
        for i, r in enumerate(results):
            if isinstance(r, Evaluation) and i not in ready_json:
                results[i] = Evaluation(r.types, r.inputs, {r.name(k): to_json(v, r.types[k])
                                                            for k, v in r.outputs.items()},
                                        r.spelling)
    return results  # type: ignore[return-value]


@dataclass(frozen=True)
class Job:
    """Lines of one text for the fast path: their input columns, by the text's names."""

    fast: FastProgram
    indices: list[int]
    columns: dict[str, list]


def _evaluate_group(ptx: str, opts: Options, items: Sequence[Item], indices: list[int],
                    results: list) -> Job | None:
    """The lines of one (text, options) group: errors and slow-path answers go into
    `results`; the lines the fast path takes come back as a Job."""
    try:
        fast = compile_program(ptx, opts)
    except PtxError as e:
        for i in indices:
            results[i] = e
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
            results[i] = e
            continue
        if fast is None or not set(fast.inputs) <= set(values):
            results[i] = _slow(ptx, items[i][1], opts)
        else:
            ready.append((i, values))
    if not ready:
        return None
    return Job(fast, [i for i, _ in ready],
               {name: [values[name] for _, values in ready] for name in fast.inputs})


_HEX_COLUMN = re.compile(r"(?:0x[0-9a-fA-F]+\n)*")


def _hex_columns(fast, items, indices) -> dict[str, list] | None:
    """The common CI case, converted column-wise: every line gives exactly the inputs,
    as hex strings that fit (or booleans for predicates). Anything else (None) takes
    the per-line path, which gives the same answers and the same errors."""
    names = set(fast.inputs)
    raws = []
    for i in indices:
        raw = items[i][1]
        if raw.keys() != names:
            raw = {k.lstrip("%"): v for k, v in raw.items()}  # `%r1` and `r1` are one
            if len(raw) != len(items[i][1]) or raw.keys() != names:
                return None
        raws.append(raw)
    columns = {}
    for name in fast.inputs:
        width = fast.types[name].width
        column = [raw[name] for raw in raws]
        if width == 1:
            if not all(type(x) is bool for x in column):
                return None
        else:
            if not all(type(x) is str for x in column) or \
                    not _HEX_COLUMN.fullmatch("\n".join(column) + "\n"):
                return None
            column = [int(x, 16) for x in column]
            if max(column) >> width:
                return None
        columns[name] = column
    return columns


def _slow(ptx: str, inputs, opts: Options) -> Evaluation | PtxError:
    from .evaluate import evaluate  # imports Z3: only where the fast path cannot answer

    try:
        return evaluate(ptx, inputs, opts)
    except PtxError as e:
        return e
    except Exception as e:  # a bug in ptxsmt, reported on its line only
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


def _run_shape(jobs: list[Job], results: list, json_values: bool) -> None:
    """Run the jobs of one shape as one array program: slot by slot, each text's column
    (its own immediates repeated) one after another; then each text takes its rows."""
    rows = sum(len(job.indices) for job in jobs)
    fast = jobs[0].fast
    columns = []
    for position, name in enumerate(fast.slots):
        column = np.empty(rows, dtype=word_dtype(fast.types[name].width))
        start = 0
        for job in jobs:
            mine = job.fast.slots[position]
            end = start + len(job.indices)
            column[start:end] = job.fast.bound[mine] if mine in job.fast.bound \
                else job.columns[mine]
            start = end
        columns.append(column)
    outputs = fast.run_slots(columns, rows)
    start = 0
    for job in jobs:
        end = start + len(job.indices)
        _fill(job, [out[start:end] for out in outputs], results, json_values)
        start = end


def _fill(job: Job, arrays: list[np.ndarray], results: list, json_values: bool) -> None:
    """One text's rows of the shape's outputs, as its own Evaluations at its indices."""
    fast, columns = job.fast, job.columns
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
