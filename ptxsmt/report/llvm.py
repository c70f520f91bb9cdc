"""`ptxsmt tv`: one line per IR function (its verdict and why), or one JSON object."""

from __future__ import annotations

from ..llvm.refine import Validated
from . import dumps


def _detail(v: Validated) -> str:
    if v.refused is not None:
        return str(v.refused)
    r = v.refinement
    if r.verdict == "different":
        args = ", ".join(f"%{k}={val:#x}" for k, val in r.inputs.items())
        shown = [f"inputs {args}"]
        if r.ir_result is not None:
            shown.append(f"IR {r.ir_result:#x}")
        if r.ptx_result is not None:
            shown.append(f"PTX {r.ptx_result:#x}")
        return "; ".join(shown)
    return r.reason


def tv_text(results: list[Validated]) -> str:
    lines = []
    for v in results:
        detail = _detail(v)
        lines.append(f"@{v.name}: {v.verdict}" + (f" ({detail})" if detail else ""))
    counts = {}
    for v in results:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    lines.append(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return "\n".join(lines)


def tv_json(results: list[Validated]) -> str:
    rows = []
    for v in results:
        row = {"function": v.name, "verdict": v.verdict}
        if v.refused is not None:
            row["reason"] = v.refused.reason
            row["detail"] = str(v.refused)
        elif v.refinement.verdict == "different":
            r = v.refinement
            row["counterexample"] = {"inputs": {k: f"{x:#x}" for k, x in r.inputs.items()},
                                     "ir": None if r.ir_result is None else f"{r.ir_result:#x}",
                                     "ptx": None if r.ptx_result is None
                                     else f"{r.ptx_result:#x}"}
        elif v.refinement.reason:
            row["reason"] = v.refinement.reason
        rows.append(row)
    return dumps({"results": rows}, indent=2)
