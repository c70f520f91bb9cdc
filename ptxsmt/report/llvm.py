"""`ptxsmt tv`: one line per IR function (its verdict and why), or one JSON object;
`ptxsmt equiv F.ll F.ptx`: the same for one function, with a `ptxsmt eval` line."""

from __future__ import annotations

import shlex

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


def _reproduce(v: Validated, ptx_path: str, ptx_name: str) -> str | None:
    """`ptxsmt eval` running the PTX side of a counterexample, None if there is none to
    print (no counterexample, or one through memory, whose bytes are not kept)."""
    r = v.refinement
    if r is None or r.verdict != "different" or r.ptx_inputs is None:
        return None
    args = " ".join(shlex.quote(f"{k}={x:#x}") for k, x in r.ptx_inputs.items())
    return f"ptxsmt eval {shlex.quote(ptx_path)} --function {ptx_name} {args}".rstrip()


def equiv_text(v: Validated, ptx_path: str, ptx_name: str) -> str:
    lines = tv_text([v]).splitlines()[:1]
    if (line := _reproduce(v, ptx_path, ptx_name)) is not None:
        lines += ["  reproduce (the PTX side):", f"    {line}"]
    return "\n".join(lines)


def equiv_row(v: Validated, ptx_path: str, ptx_name: str) -> dict:
    """`equiv SOURCE.ll TARGET.ptx --json`'s fields (also one `equiv --batch` line's)."""
    row = _row(v)
    if (line := _reproduce(v, ptx_path, ptx_name)) is not None:
        row["counterexample"]["reproduce"] = {"ptx": line}
    return row


def equiv_json(v: Validated, ptx_path: str, ptx_name: str) -> str:
    return dumps(equiv_row(v, ptx_path, ptx_name), indent=2)


def tv_json(results: list[Validated]) -> str:
    return dumps({"results": [_row(v) for v in results]}, indent=2)


def _row(v: Validated) -> dict:
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
    return row
