"""Record what ptxas 13.0's constant folder makes of instruction cases: the fixture
tests/ptxas_folds.jsonl, an oracle independent of ptxsmt's terms.

    PATH=$PATH:/path/to/nvdisasm python scripts/ptxas_folds.py CASES.jsonl... > OUT.jsonl

CASES are batch lines ({"ptx", "inputs"}); each case ptxas folds at -O3 (-arch sm_90)
becomes {"ptx", "inputs", "ptxas": {register: value}}; cases left to run time are
dropped. Cases go to ptxas 150 at a time, in kernels the SASS reader reads back; a
kernel it still cannot read is reported on stderr and its cases left out. div, rem, rcp
and sqrt are left out too: ptxas calls a subroutine for them, and what the reader makes
of the stores after the call is no value (the same bits for every input).
"""

from __future__ import annotations

import json
import sys

from ptxsmt.ptxasdiff import DiffError, load_jsonl, run_diff

PER_KERNEL = 150
SUBROUTINES = ("div", "rem", "rcp", "sqrt")


def main(paths: list[str]) -> int:
    cases = load_jsonl(paths)
    for start in range(0, len(cases), PER_KERNEL):
        try:
            report = run_diff(cases[start:start + PER_KERNEL], batch=PER_KERNEL)
        except DiffError as e:
            print(f"cases {start}-{start + PER_KERNEL - 1} left out: {e}", file=sys.stderr)
            continue
        for outcome in report.outcomes:
            if outcome.folded and outcome.case.ptx.split(".")[0] not in SUBROUTINES:
                case = outcome.case
                values = {k: v if isinstance(v, bool) else f"0x{v:x}"
                          for k, v in outcome.values.items()}
                print(json.dumps({"ptx": case.ptx, "inputs": case.inputs, "ptxas": values}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
