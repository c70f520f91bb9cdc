"""Text and JSON rendering. Nothing else in the package formats output for people."""

from __future__ import annotations

import json
import shlex

from ..eval.evaluate import UNSPECIFIED, Evaluation, to_json
from ..isa.literals import describe
from ..isa.variants import Catalogue
from ..proofs import Result
from ..smt.classes import ClassReport
from ..smt.solve import Counterexample, Verdict


def evaluation_json(ptx: str, ev: Evaluation) -> dict:
    return {
        "ptx": ptx,
        "inputs": {ev.name(k): to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
        "outputs": {ev.name(k): to_json(v, ev.types[k]) for k, v in ev.outputs.items()},
    }


def evaluation_text(ptx: str, ev: Evaluation) -> str:
    lines = [" ".join(ptx.split())]
    width = max((len(ev.name(k)) for k in (*ev.inputs, *ev.outputs)), default=1)
    lines += [f"  in   {ev.name(k):<{width}} = {describe(v, ev.types[k])}"
              for k, v in ev.inputs.items()]
    lines += [f"  out  {ev.name(k):<{width}} = {describe(v, ev.types[k])}"
              for k, v in ev.outputs.items()]
    return "\n".join(lines)


def variants_rows(cat: Catalogue, family: str | None) -> list[dict]:
    return [
        {
            "variant": str(v),
            "family": v.family,
            "ptx": f"{r.ptx[0]}.{r.ptx[1]}",
            "sm": r.sm,
        }
        for v, r in cat.requirements.items()
        if family is None or v.family == family
    ]


def variants_text(rows: list[dict]) -> str:
    width = max((len(r["variant"]) for r in rows), default=10)
    out = [f"{r['variant']:<{width}}  PTX {r['ptx']:<4}  sm_{r['sm']}" for r in rows]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["family"]] = counts.get(r["family"], 0) + 1
    out.append("")
    out.append("  ".join(f"{f}: {n}" for f, n in counts.items()) + f"  total: {len(rows)}")
    return "\n".join(out)


def show(value, t) -> str:
    """describe(), and a value the ISA leaves open said as such."""
    if value is UNSPECIFIED:
        return "unspecified (any NaN: the PTX ISA leaves it open, Spec notes 9)"
    return describe(value, t)


def dumps(obj: object) -> str:
    return json.dumps(obj, separators=(", ", ": "))


# ---- equivalence ------------------------------------------------------------------------


def counterexample_json(cex: Counterexample) -> dict:
    def side(values: dict) -> dict:
        return {k: to_json(v, cex.types[k]) for k, v in values.items()}

    return {"inputs": side(cex.inputs), "lhs": side(cex.lhs), "rhs": side(cex.rhs)}


def verdict_json(v: Verdict, classes: ClassReport | None = None) -> dict:
    out = {
        "verdict": v.verdict,
        "outputs": list(v.outputs),
        "counterexample": counterexample_json(v.counterexample) if v.counterexample else None,
        "seconds": round(v.seconds, 4),
    }
    if v.reason:
        out["reason"] = v.reason
    if classes is not None:
        out["classes"] = {
            "axes": list(classes.axes),
            "failing": [list(r) for r in classes.rows()],
            "only_when": classes.only_when(),
            "complete": classes.complete,
        }
    return out


def reproduce(ptx: str, cex: Counterexample, names) -> str:
    args = " ".join(f"{k}={to_json(cex.inputs[k], cex.types[k])}".lower()
                    for k in cex.inputs if k in names)
    return f"ptxsmt eval {shlex.quote(' '.join(ptx.split()))} {args}".rstrip()


def verdict_text(v: Verdict, lhs: str, rhs: str, lhs_names, rhs_names,
                 classes: ClassReport | None = None) -> str:
    outs = ", ".join(v.outputs)
    if v.verdict == "equivalent":
        return f"equivalent: the snippets agree on {outs} for all inputs ({v.seconds:.3f} s)"
    if v.verdict == "unknown":
        return f"unknown: the solver gave no answer for {outs} ({v.reason or 'timeout'})"
    cex = v.counterexample
    differ = [o for o in v.outputs if cex.lhs[o] != cex.rhs[o]]
    lines = [f"different: the snippets disagree on {', '.join(differ)}", "  inputs:"]
    width = max(len(k) for k in (*cex.inputs, *v.outputs))
    lines += [f"    {k:<{width}} = {describe(val, cex.types[k])}" for k, val in cex.inputs.items()]
    for label, side in (("lhs", cex.lhs), ("rhs", cex.rhs)):
        lines.append(f"  {label}:")
        lines += [f"    {o:<{width}} = {show(side[o], cex.types[o])}" for o in v.outputs]
    lines += ["  reproduce:", "    " + reproduce(lhs, cex, lhs_names),
              "    " + reproduce(rhs, cex, rhs_names)]
    if classes is not None:
        lines.append(class_text(classes))
    return "\n".join(lines)


def class_text(c: ClassReport) -> str:
    head = "  operand classes that break it" + ("" if c.complete else " (search incomplete)")
    lines = [f"{head}: {len(c.failing)} of {c.total} combinations"]
    lines.append(("    " + "  ".join(f"{a:<11}" for a in c.axes)).rstrip())
    lines += [("    " + "  ".join(f"{x:<11}" for x in row)).rstrip() for row in c.rows()]
    lines.append(f"  differs only when {c.only_when()}")
    if c.complete:
        lines.append("  every other combination is proved safe")
    return "\n".join(lines)


# ---- identities -------------------------------------------------------------------------


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
        "counterexample": r.counterexample,
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
    lines = [f"{'name':<{width}}  {'instance':<{iw}}  {'verdict':<8} {'expect':<6}  seconds"]
    for r in rows:
        mark = "ok" if r.ok else "MISMATCH"
        lines.append(f"{r.instance.name:<{width}}  {r.instance.instance:<{iw}}  "
                     f"{r.verdict:<8} {r.instance.expect:<6}  {r.seconds:7.3f}  {mark}")
        if not r.ok:
            lines.append(f"    lhs: {r.instance.lhs}\n    rhs: {r.instance.rhs}")
            if r.error:
                lines.append(f"    error: {r.error}")
            if r.counterexample:
                lines.append(f"    counterexample inputs: {r.counterexample['inputs']}")
            if r.witness_ok is False:
                lines.append("    the counterexample does not have the expected witness shape")
    s = summary(results, wall)
    lines.append(f"\n{s['ok']} of {s['instances']} instances ({s['identities']} identities) "
                 f"as expected; {s['mismatched']} mismatched, {s['unknown']} unknown, "
                 f"{s['errors']} errors; {wall:.2f} s wall, {s['solver_seconds']:.2f} s in the "
                 "solver")
    return "\n".join(lines)
