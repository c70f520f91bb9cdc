"""`ptxsmt equiv --batch PAIRS.jsonl`: the glue between the command line and `ptxsmt.pairs`."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import pairs, report
from ..check import header_refusals
from ..function.evaluate import read_function_file
from ..isa import source
from ..isa.errors import PtxError
from .common import fail

REFUSALS = "ptxas_refuses"  # a result's field: the warning single `equiv` prints on stderr


def ptxas_refusals(text: bytes, number: int, defaults: dict, base: Path) -> list[str]:
    """What ptxas refuses of a pair's PTX functions for their modules' `.target` and
    `.version` (check.header_refusals), each `PATH: why`, as single `equiv` warns of them;
    none for snippets, or where a side does not read (its line says why)."""
    try:
        pair = pairs.parse_line(number, text, defaults, base)
    except PtxError:
        return []
    sides = {"functions": [(pair.lhs, pair.function), (pair.rhs, pair.function_b)],
             "ir": [(pair.rhs, pair.function_b)]}.get(pair.kind, [])
    found = []
    for path, name in sides:
        try:
            found += [f"{path}: {why}" for why in header_refusals(read_function_file(path, name))]
        except PtxError:
            continue
    return list(dict.fromkeys(found))  # a file on both sides: once


def run_batch(file, jobs: int, executor: str, scheduler: str | None, timeout: float,
              solver: str, unroll: int, target: str, vset_merge: str, nan: str) -> None:
    name = getattr(file, "name", "-")
    try:
        data = source.read_stream(file, f"--batch {name}")
    except PtxError as e:
        fail(str(e))
    # decoded line by line (`pairs.parse_line`): a line that is not UTF-8 costs only itself
    lines = data.removeprefix(b"\xef\xbb\xbf").splitlines()
    base = Path(name).parent if name not in ("-", "<stdin>") else Path()
    defaults = {"timeout": timeout, "target": target, "vset_merge": vset_merge,
                "solver": solver, "unroll": unroll, "nan": nan}
    results = []
    try:
        for result in pairs.run(lines, defaults, base, jobs, executor, scheduler):
            results.append(result)
            refusals = ptxas_refusals(lines[result["line"] - 1], result["line"], defaults, base)
            report.out(report.dumps(result | ({REFUSALS: refusals} if refusals else {})))
    except PtxError as e:  # the executor could not start (dask missing, ...)
        fail(str(e))
    sys.exit(pairs.exit_code(results))
