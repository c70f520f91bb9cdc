"""`ptxsmt equiv --batch PAIRS.jsonl`: the glue between the command line and `ptxsmt.pairs`."""

from __future__ import annotations

import sys
from pathlib import Path

from .. import pairs, report
from ..isa.errors import PtxError
from .common import fail, read_text


def run_batch(file, jobs: int, executor: str, scheduler: str | None, timeout: float,
              solver: str, unroll: int, target: str, vset_merge: str) -> None:
    text = read_text(file, "--batch")
    name = getattr(file, "name", "-")
    base = Path(name).parent if name not in ("-", "<stdin>") else Path()
    defaults = {"timeout": timeout, "target": target, "vset_merge": vset_merge,
                "solver": solver, "unroll": unroll}
    results = []
    try:
        for result in pairs.run(text.splitlines(), defaults, base, jobs, executor, scheduler):
            results.append(result)
            report.out(report.dumps(result))
    except PtxError as e:  # the executor could not start (dask missing, ...)
        fail(str(e))
    sys.exit(pairs.exit_code(results))
