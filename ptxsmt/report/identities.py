"""`prove identities`: one row per instance, the summary, and JSON."""

from __future__ import annotations

from ..proofs import Result
from .equivalence import counterexample_json


def result_json(r: Result) -> dict:
    inst = r.instance
    out = {
        "name": inst.name,
        "description": inst.description,
        "instance": inst.instance,
        "lhs": inst.lhs,
        "rhs": inst.rhs,
        "lhs_options": inst.lhs_options.to_json(),
        "rhs_options": inst.rhs_options.to_json(),
        "expect": inst.expect,
        "verdict": r.verdict,
        "ok": r.ok,
        "counterexample": counterexample_json(r.counterexample) if r.counterexample else None,
        "seconds": round(r.seconds, 4),
    }
    if r.witness_ok is not None:
        out["witness_ok"] = r.witness_ok
    if r.error:
        out["error"] = r.error
    return out


def summary(results: list[Result], wall: float) -> dict:
    return {
        "instances": len(results),
        "identities": len({r.instance.name for r in results}),
        "ok": sum(r.ok for r in results),
        "mismatched": sum(not r.ok for r in results),
        "unknown": sum(r.verdict == "unknown" for r in results),
        "errors": sum(r.verdict == "error" for r in results),
        "wall_seconds": round(wall, 3),
        "solver_seconds": round(sum(r.solver_seconds for r in results), 3),
    }


def results_text(results: list[Result], wall: float, verbose: bool) -> str:
    rows = [r for r in results if verbose or not r.ok]
    width = max((len(r.instance.name) for r in rows), default=4)
    iw = max((len(r.instance.instance) for r in rows), default=8)
    lines = [f"{'name':<{width}}  {'instance':<{iw}}  {'verdict':<8} {'expect':<6}  seconds"
             ] if rows else []  # a table only when a row is listed
    for r in rows:
        mark = "ok" if r.ok else "MISMATCH"
        lines.append(f"{r.instance.name:<{width}}  {r.instance.instance:<{iw}}  "
                     f"{r.verdict:<8} {r.instance.expect:<6}  {r.seconds:7.3f}  {mark}")
        if not r.ok:
            lines.append(f"    lhs: {r.instance.lhs}\n    rhs: {r.instance.rhs}")
            if r.error:
                lines.append(f"    error: {r.error}")
            if r.counterexample:
                inputs = counterexample_json(r.counterexample)["inputs"]
                lines.append(f"    counterexample inputs: {inputs}")
            if r.witness_ok is False:
                lines.append("    the counterexample does not have the expected witness shape")
    s = summary(results, wall)
    if rows:
        lines.append("")
    lines.append(f"{s['ok']} of {s['instances']} instances ({s['identities']} identities) "
                 f"as expected; {s['mismatched']} mismatched, {s['unknown']} unknown, "
                 f"{s['errors']} errors; {wall:.2f} s wall, {s['solver_seconds']:.2f} s in the "
                 "solver")
    return "\n".join(lines)


def results_json(results: list[Result], wall: float) -> dict:
    return {"results": [result_json(r) for r in results], "summary": summary(results, wall)}
