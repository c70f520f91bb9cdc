"""Many evaluations at once: group by snippet text, run each group vectorised.

The fast path is compiled from the same Z3 terms (`fast.py`); any line it
cannot take (an input missing, an operator it does not compile) goes through
the slow path, so both paths give the same answers and the same errors.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..isa.syntax import PtxError
from ..sem.options import DEFAULT, Options
from .evaluate import Evaluation, convert_inputs, evaluate
from .fast import Unsupported, compile_program

Item = tuple[str, Mapping[str, object]]


def evaluate_many(items: Sequence[Item], opts: Options = DEFAULT) -> list[Evaluation | PtxError]:
    """One Evaluation (or the PtxError it raised) per (ptx, inputs), in order."""
    results: list[Evaluation | PtxError | None] = [None] * len(items)
    groups: dict[str, list[int]] = {}
    for i, (ptx, _) in enumerate(items):
        groups.setdefault(ptx, []).append(i)
    for ptx, indices in groups.items():
        try:
            fast = compile_program(ptx, opts)
        except PtxError as e:
            for i in indices:
                results[i] = e
            continue
        except Unsupported:
            fast = None
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
            _run_fast(fast, ready, results)
    return results  # type: ignore[return-value]


def _slow(ptx: str, inputs, opts: Options) -> Evaluation | PtxError:
    try:
        return evaluate(ptx, inputs, opts)
    except PtxError as e:
        return e


def _run_fast(fast, ready, results) -> None:
    arrays = {name: np.array([values[name] for _, values in ready],
                             dtype=bool if fast.types[name].width == 1 else np.uint64)
              for name in fast.inputs}
    columns = {name: arr.tolist() for name, arr in fast(arrays).items()}  # Python ints/bools
    for row, (i, values) in enumerate(ready):
        outs = {name: col[row] for name, col in columns.items()}
        used = {k: v for k, v in values.items() if k in fast.inputs}
        results[i] = Evaluation(fast.types, used, outs)
