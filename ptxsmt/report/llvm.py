"""`ptxsmt tv`: one line per IR function (its verdict and why), or one JSON object per
function (JSON lines), as each is decided, then a summary; `ptxsmt equiv F.ll F.ptx`:
the same for one function, with a `ptxsmt eval` line."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..smt.queries.refinement import Validated
from ..smt.solving.phrases import phrase
from . import dumps
from .equivalence import nan_fields


def _detail(v: Validated) -> str:
    if v.refused is not None:
        return str(v.refused)
    r = v.refinement
    if r.verdict == "different":
        args = ", ".join(f"%{k}={val:#x}" for k, val in r.inputs.items())
        shown = [f"inputs {args}"]
        if r.ir_result is not None:
            shown.append(f"IR {r.ir_result:#x}{_extended(r)}")
        if r.ptx_result is not None:  # an open NaN: one the ISA lets the PTX give
            shown.append(f"PTX may give {r.ptx_result:#x}: the ISA leaves that NaN open"
                         if r.open_nan else f"PTX {r.ptx_result:#x}")
        return "; ".join(shown)
    return r.reason


def _verdict(v: Validated) -> str:
    """The verdict as said: "refines up to NaN payloads" where only payload-free
    equality of float results was proved (docs/spec-notes.md, note 14)."""
    r = v.refinement
    return phrase(v.verdict) if r is None else \
        phrase(v.verdict, r.up_to_nan_payloads, r.only_nan_payloads, r.unroll, "refines",
               r.open_nan)


def _extended(r) -> str:
    """` (signext i8 0x80)` after an IR result whose extension changed its number, so
    that `IR 0xffffff80; PTX 0x80` shows where the two differ; "" otherwise."""
    if r.extension is None or r.ir_result >> r.extension[1] == 0:
        return ""
    kind, width = r.extension
    return f" ({kind} i{width} {r.ir_result & (1 << width) - 1:#x})"


def tv_line(v: Validated) -> str:
    """One function's verdict and why."""
    detail = _detail(v)
    return f"@{v.name}: {_verdict(v)}" + (f" ({detail})" if detail else "")


def _counts(results: list[Validated]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in results:
        counts[v.verdict] = counts.get(v.verdict, 0) + 1
    return dict(sorted(counts.items()))


def tv_summary(results: list[Validated], functions: int, interrupted: bool) -> str:
    """`2 refines, 1 refused`; a run cut short says how far it got."""
    counts = ", ".join(f"{n} {k}" for k, n in _counts(results).items())
    if not interrupted:
        return counts
    return (f"{counts}; " if counts else "") + \
        f"interrupted after {len(results)} of {functions} functions"


def reproduce(v: Validated, ptx_path: str, ptx_name: str) -> str | None:
    """`ptxsmt eval` running the PTX side of a counterexample, None if there is none to
    print (no counterexample, or one through memory, whose bytes are not kept)."""
    r = v.refinement
    if r is None or r.verdict != "different" or r.ptx_inputs is None:
        return None
    args = " ".join(shlex.quote(f"{k}={x:#x}") for k, x in r.ptx_inputs.items())
    return f"ptxsmt eval {shlex.quote(ptx_path)} --function {ptx_name} {args}".rstrip()


def equiv_text(v: Validated, ptx_path: str, ptx_name: str) -> str:
    lines = [tv_line(v)]
    if (line := reproduce(v, ptx_path, ptx_name)) is not None:
        lines += ["  reproduce (the PTX side):", f"    {line}"]
    return "\n".join(lines)


def equiv_row(v: Validated, ptx_path: str, ptx_name: str) -> dict:
    """`equiv SOURCE.ll TARGET.ptx --json`'s fields (also one `equiv --batch` line's)."""
    row = _row(v)
    if (line := reproduce(v, ptx_path, ptx_name)) is not None:
        row["counterexample"]["reproduce"] = {"ptx": line}
    return row


def equiv_json(v: Validated, ptx_path: str, ptx_name: str) -> str:
    return dumps(equiv_row(v, ptx_path, ptx_name), indent=2)


def tv_json_line(v: Validated, refusals: Sequence[str] = ()) -> str:
    """One function's JSON line; `ptxas_refuses`: what ptxas refuses of its PTX for the
    module's `.target`/`.version` (check.header_refusals), where it refuses anything."""
    return dumps(_row(v) | ({"ptxas_refuses": list(refusals)} if refusals else {}))


def tv_summary_json(results: list[Validated], functions: int, interrupted: bool) -> str:
    """The last JSON line: how many functions there were, were decided, and of each verdict."""
    return dumps({"summary": {"functions": functions, "decided": len(results),
                              "verdicts": _counts(results), "interrupted": interrupted}})


def _row(v: Validated) -> dict:
    row = {"function": v.name, "verdict": v.verdict}
    if v.refinement is not None:
        r = v.refinement
        row |= nan_fields(v.verdict, r.nan, r.up_to_nan_payloads, r.only_nan_payloads)
        if r.unroll:
            row["unroll"] = r.unroll
    if v.refused is not None:
        row["reason"] = v.refused.reason
        row["detail"] = str(v.refused)
    elif v.refinement.verdict == "different":
        r = v.refinement
        row["counterexample"] = {"inputs": {k: f"{x:#x}" for k, x in r.inputs.items()},
                                 "ir": None if r.ir_result is None else f"{r.ir_result:#x}",
                                 "ptx": None if r.ptx_result is None
                                 else f"{r.ptx_result:#x}", "open_nan": r.open_nan}
    elif v.refinement.reason:
        row["reason"] = v.refinement.reason
    return row
