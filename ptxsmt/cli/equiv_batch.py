"""`ptxsmt equiv --batch PAIRS.jsonl`: the glue between the command line and `ptxsmt.pairs`."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import pairs, report
from ..isa import source
from ..isa.errors import PtxError
from .common import fail


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
            report.out(report.dumps(result))
    except PtxError as e:  # the executor could not start (dask missing, ...)
        fail(str(e))
    sys.exit(pairs.exit_code(results))
