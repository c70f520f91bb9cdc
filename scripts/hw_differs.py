"""Copy a silicon results file (../shared/silicon/*.jsonl.gz) into models/hw/, each line
where ptxsmt's value is not silicon's marked with the named reason (`"differs"`).

    python scripts/hw_differs.py ../shared/silicon/models_hw.jsonl.gz models/hw/

A reason is given by a rule on the line (REASONS, each naming where it is documented),
never by its values; a disagreement no rule explains stops the script with that line.
A line ptxsmt calls open (unspecified) differs where silicon's value is one the open
set does not allow (`allowed`: a solver's sat of "output = silicon's bits").
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import z3  # noqa: E402

from ptxsmt.batch.run import run_jsonl  # noqa: E402
from ptxsmt.eval.evaluate import evaluate  # noqa: E402
from ptxsmt.eval.values import convert_inputs  # noqa: E402
from ptxsmt.isa.literals import parse_value  # noqa: E402
from ptxsmt.program import compiled  # noqa: E402
from ptxsmt.sem.options import Options  # noqa: E402
from ptxsmt.sem.sorts import register_value  # noqa: E402

# reason -> the lines it covers; tests/test_hw.py holds where each is documented
REASONS = {
    "ptxas: guarded set (docs/ptxas-diff.md finding 1)":
        lambda x: re.match(r"@!?\w+ set\.", x["ptx"]) is not None,
    "vset_merge: b": lambda x: x.get("options", {}).get("vset_merge") == "b",
    "ptxas: abs.f64 quiets a signalling NaN (docs/ptxas-diff.md finding 9)":
        lambda x: x["ptx"].startswith("abs.f64 "),
    "ptxas: fma.{rz,rm,rp}.bf16 lowered wrongly (docs/ptxas-diff.md finding 4)":
        lambda x: re.match(r"fma\.r[zmp]\.bf16(x2)? ", x["ptx"]) is not None,
}


def replayed(lines: list[dict]) -> list[dict]:
    """ptxsmt's outputs of each line (the batch's), silicon's value where ptxsmt leaves
    an output open and allows it, and "unspecified" where it does not."""
    raws = [json.dumps({k: x[k] for k in ("ptx", "inputs", "options") if k in x})
            for x in lines]
    out = []
    for line, (answer, error) in zip(lines, run_jsonl(raws)):
        if error is None:
            out.append(answer["outputs"])
            continue
        got = evaluate(line["ptx"], line["inputs"], Options.from_json(
            line.get("options", {})), unspecified_ok=True).outputs_json()
        out.append({name: line["hw_outputs"][name] if value == "unspecified" and
                    allowed(line, name, line["hw_outputs"][name]) else value
                    for name, value in got.items()})
    return out


def allowed(line: dict, name: str, hw: str | bool) -> bool:
    """Silicon's value of an output ptxsmt leaves open is one its term can take."""
    program, enc = compiled(line["ptx"], Options.from_json(line.get("options", {})))
    values = convert_inputs(line["inputs"], program.types, enc.inputs)
    pins = [(c, register_value(values[n], program.types[n])) for n, c in enc.inputs.items()]
    t = program.types[name]
    want = register_value(hw if isinstance(hw, bool) else parse_value(hw, t), t)
    return z3.Solver().check(z3.substitute(enc.outputs[name], *pins) == want) == z3.sat


def annotate(lines: list[dict]) -> list[dict]:
    out = []
    for line, got in zip(lines, replayed(lines)):
        line = {k: v for k, v in line.items() if k != "differs"}
        if got != line["hw_outputs"]:
            reasons = [r for r, covers in REASONS.items() if covers(line)]
            if len(reasons) != 1:
                raise SystemExit(f"no single reason for {json.dumps(line)}: "
                                 f"ptxsmt gives {got}")
            line["differs"] = reasons[0]
        out.append(line)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("folder", type=Path)
    args = ap.parse_args(argv)
    with gzip.open(args.source, "rt") as f:
        lines = [json.loads(x) for x in f]
    out = annotate(lines)
    target = args.folder / args.source.name
    with gzip.GzipFile(target, "wb", mtime=0) as f:  # the same bytes for the same lines
        f.write("".join(json.dumps(x) + "\n" for x in out).encode())
    marked = sum("differs" in x for x in out)
    print(f"{target}: {len(out):,} lines, {marked:,} marked as differing")
    return 0


if __name__ == "__main__":
    sys.exit(main())
