"""The units of work a search hands to workers: plain texts in, plain values out.

A worker (a forked process, a dask worker) receives snippet texts and operand
columns, never Z3 objects, and returns ints, bools and strings, so results pickle,
cache as JSON and compare across runs.
"""

from __future__ import annotations

import hashlib
import threading

import numpy as np

from ..batch.programs import compile_program
from ..eval.values import UNSPECIFIED
from ..fast import Unsupported
from ..isa.types import TYPES
from ..smt.queries.classes import class_report
from ..smt.queries.snippets import Counterexample, build_query, decide


def fingerprints(texts: list[str], columns: dict[str, np.ndarray],
                 outputs: tuple[str, ...]) -> list[str | None]:
    """Each snippet's outputs on every row, hashed (None: the fast path cannot run it)."""
    out = []
    for text in texts:
        try:
            values = compile_program(text)(columns)
        except Unsupported:
            out.append(None)
            continue
        digest = hashlib.blake2b(digest_size=16)
        for name in outputs:
            digest.update(np.ascontiguousarray(values[name]).tobytes())
        out.append(digest.hexdigest())
    return out


def outputs_on(text: str, columns: dict[str, np.ndarray],
               outputs: tuple[str, ...]) -> np.ndarray:
    """The snippet's outputs as one row-by-output array (for comparing two snippets)."""
    values = compile_program(text)(columns)
    return np.stack([np.asarray(values[name], dtype=np.uint64) for name in outputs], axis=1)


CLASS_LIMIT = 64  # failing class combinations a near miss's report lists at most (a packed
# type has 9^4 combinations of lane classes; past the limit the report says incomplete)


def plain_counterexample(cex: Counterexample) -> dict:
    """{inputs, lhs, rhs}: ints and bools, None for a value the ISA leaves open."""
    def plain(values: dict) -> dict:
        return {k: None if v is UNSPECIFIED else v for k, v in values.items()}
    return {"inputs": plain(cex.inputs), "lhs": plain(cex.lhs), "rhs": plain(cex.rhs)}


def prove(lhs: str, rhs: str, outputs: tuple[str, ...], timeout: float,
          with_classes: bool = False, reading: tuple = ()) -> dict:
    """{"verdict": equivalent | different | unknown, "counterexample": {inputs, lhs, rhs}}
    and, when asked for a refuted pair, the operand classes that break it, each register
    of `reading` ((register, lane type name, lanes), ...) classed that way (a pool's
    reading, not whichever type the first snippet happens to give it)."""
    q = build_query(lhs, rhs, outputs)
    v = decide(q, timeout)
    out: dict = {"verdict": v.verdict}
    if v.counterexample:
        out["counterexample"] = plain_counterexample(v.counterexample)
        if with_classes:
            readings = {reg: (TYPES[lane], lanes) for reg, lane, lanes in reading}
            report = class_report(q, timeout, CLASS_LIMIT, readings)
            out["classes"] = {"axes": list(report.axes),
                              "failing": [list(r) for r in report.rows()],
                              "only_when": report.only_when(), "complete": report.complete}
    return out


def prove_task(task: tuple) -> dict:
    """`prove` on one (lhs, rhs, outputs, timeout, with_classes, reading) tuple (for
    `map`)."""
    with _Z3:
        return prove(*task)


def fingerprint_task(task: tuple) -> list[str | None]:
    with _Z3:  # compiling a program builds Z3 terms
        return fingerprints(*task)


# Z3's context is not thread-safe: a worker running tasks on several threads (a dask
# worker with threads_per_worker > 1) runs them one at a time.
_Z3 = threading.Lock()
