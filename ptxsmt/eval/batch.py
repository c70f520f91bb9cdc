"""Many evaluations at once: group by snippet text, run each group vectorised.

The fast path is compiled from the same Z3 terms (`fast.py`); any line it
cannot take (an input missing, an operator it does not compile) goes through
the slow path, so both paths give the same answers and the same errors.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from ..isa.errors import PtxError, quote
from ..isa.literals import hex_bits
from ..sem.options import DEFAULT, Options
from .evaluate import Evaluation, convert_inputs, evaluate, to_json
from .fast import Unsupported, compile_program, word_dtype

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
    for (ptx, group_opts), indices in groups.items():
        try:
            _evaluate_group(ptx, group_opts, items, indices, results, ready_json, json_values)
        except Exception:  # a fast-path bug: answer the group line by line
            ready_json.difference_update(indices)
            for i in indices:
                results[i] = _slow(ptx, items[i][1], group_opts)
    if json_values:  # the slow path's answers too
        for i, r in enumerate(results):
            if isinstance(r, Evaluation) and i not in ready_json:
                results[i] = Evaluation(r.types, r.inputs, {r.name(k): to_json(v, r.types[k])
                                                            for k, v in r.outputs.items()},
                                        r.spelling)
    return results  # type: ignore[return-value]


def _evaluate_group(ptx: str, opts: Options, items: Sequence[Item], indices: list[int],
                    results: list, ready_json: set[int], json_values: bool) -> None:
    """The lines of one (text, options) group: column-wise when they allow, else per line."""
    try:
        fast = compile_program(ptx, opts)
    except PtxError as e:
        for i in indices:
            results[i] = e
        return
    except Unsupported:
        fast = None
    columns = _hex_columns(fast, items, indices) if fast else None
    if columns is not None:
        _run_fast(fast, indices, columns, results, json_values)
        ready_json.update(indices)
        return
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
    if ready:
        columns = {name: [values[name] for _, values in ready] for name in fast.inputs}
        _run_fast(fast, [i for i, _ in ready], columns, results, json_values)
        ready_json.update(i for i, _ in ready)


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
    try:
        return evaluate(ptx, inputs, opts)
    except PtxError as e:
        return e
    except Exception as e:  # a bug in ptxsmt, reported on its line only
        return PtxError(f"internal error (a ptxsmt bug, please report it): "
                        f"{type(e).__name__}: {quote(str(e), 200)}")


def _run_fast(fast, indices: list[int], columns: dict[str, list], results,
              json_values: bool = False) -> None:
    """Evaluate one group from its input columns; fill `results` at `indices`."""
    arrays = {name: np.array(columns[name], dtype=word_dtype(fast.types[name].width))
              for name in fast.inputs}
    outputs = {}
    for name, arr in fast(arrays).items():
        # a snippet that reads no input gives one value for all its lines
        column = np.broadcast_to(arr, (len(indices),)).tolist()  # Python ints/bools
        width = fast.types[name].width
        if json_values and width > 1:
            column = [hex_bits(v, width) for v in column]
        outputs[name] = column
    names = [fast.spelling.get(n, n) for n in outputs] if json_values else list(outputs)
    for row, (i, *values) in enumerate(zip(indices, *outputs.values())):
        inputs = {} if json_values else {n: columns[n][row] for n in fast.inputs}
        results[i] = Evaluation(fast.types, inputs, dict(zip(names, values)), fast.spelling)
