"""`equiv`: verdicts, counterexamples (hex plus decoded) and operand-class tables."""

from __future__ import annotations

import shlex

from ..eval.values import to_json
from ..isa.literals import describe, hex_bits
from ..sem.unspecified import OpenValue
from ..smt.queries.classes import ClassReport
from ..smt.queries.snippets import Counterexample, Verdict
from ..smt.solving.phrases import phrase
from . import show


def counterexample_json(cex: Counterexample) -> dict:
    def side(values: dict) -> dict:
        return {k: to_json(v, cex.types[k]) for k, v in values.items()}

    taken = list(dict.fromkeys([*cex.chosen[0], *cex.chosen[1]]))
    return {"inputs": side(cex.inputs), "lhs": side(cex.lhs), "rhs": side(cex.rhs),
            "differ": list(cex.differ),
            **({"open_values": [open_json(c) for c in taken]} if taken else {})}


def open_json(c: OpenValue) -> dict:
    """An open value a counterexample was replayed under, as JSON names it."""
    return {"open": c.name, "of": hex_bits(c.argument, c.argument_width),
            "taken_as": c.spelled}


def open_lines(taken: list[OpenValue], what: str, every: bool = True) -> list[str]:
    """The open values a counterexample was replayed under, as the text names them (none:
    left open); `every`: the difference holds for every choice of them, not only this
    one (a difference only in open NaN payloads, under --nan exact)."""
    if not taken:
        return []
    which = "every choice of them" if every else "this choice of them"
    return [f"  values the PTX ISA leaves open, as taken here (the {what} differ for "
            f"{which}):", *(f"    {c.input} = {str(c.spelled).lower()}" for c in taken)]


def nan_fields(verdict: str, nan: str, up_to: bool, payloads_only: bool) -> dict:
    """The NaN policy a verdict was reached under (docs/spec-notes.md, note 14), and
    whether it holds only up to NaN payloads or differs only in them: one spelling for
    snippets, functions and IR."""
    out = {"nan": nan}
    if verdict in ("equivalent", "bounded", "refines"):
        out["up_to_nan_payloads"] = up_to
    if verdict == "different":
        out["only_nan_payloads"] = payloads_only
    return out


def nan_phrase(up_to: bool, float_outputs: bool) -> str:
    """What an agreement claims about NaNs at float-typed outputs ("" where there is
    none: the policy changes nothing)."""
    if up_to:
        return ", NaNs compared payload-free (--nan exact compares their bits)"
    return ", NaNs bit for bit" if float_outputs else ""


OPEN_NAN_DIFFERENCE = "only in NaN payloads the PTX ISA leaves open (any NaN may be " \
    "chosen; --nan exact)"


def verdict_json(v: Verdict, classes: ClassReport | None = None) -> dict:
    out = {
        "verdict": v.verdict,
        "outputs": list(v.outputs),
        "counterexample": counterexample_json(v.counterexample) if v.counterexample else None,
        "seconds": round(v.seconds, 4),
        **nan_fields(v.verdict, v.nan, v.up_to_nan_payloads,
                     bool(v.counterexample and v.counterexample.nan_payloads_only)),
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


def reproduce(ptx: str, cex: Counterexample, names, side: int = 0) -> str:
    """The `ptxsmt eval` line of one side (0: lhs, 1: rhs; `names`: its inputs), with the
    open values it was replayed under."""
    args = [f"{k}={to_json(cex.inputs[k], cex.types[k])}".lower()
            for k in cex.inputs if k in names]
    args += [shlex.quote(f"{c.input}={str(c.spelled).lower()}") for c in cex.chosen[side]]
    return f"ptxsmt eval {shlex.quote(' '.join(ptx.split()))} {' '.join(args)}".rstrip()


def verdict_text(v: Verdict, lhs: str, rhs: str, lhs_names, rhs_names,
                 classes: ClassReport | None = None) -> str:
    outs = ", ".join(v.outputs)
    if v.verdict == "equivalent":
        return f"{phrase('equivalent', v.up_to_nan_payloads)}: the snippets agree on {outs} " \
            f"for all inputs{nan_phrase(v.up_to_nan_payloads, v.float_outputs)} ({v.seconds:.3f} s)"
    if v.verdict == "unknown":
        return f"{phrase('unknown')}: {v.reason or 'the solver gave no answer (timeout)'} " \
            f"({outs})" if v.reason.startswith("the outputs differ only") else \
            f"{phrase('unknown')}: the solver gave no answer for {outs} " \
            f"({v.reason or 'timeout'})"
    cex = v.counterexample
    how = f", {OPEN_NAN_DIFFERENCE}" if cex.nan_payloads_only else ""
    lines = [f"{phrase('different')}: the snippets disagree on {', '.join(cex.differ)}{how}",
             "  inputs:"]
    width = max(len(k) for k in (*cex.inputs, *v.outputs))
    lines += [f"    {k:<{width}} = {describe(val, cex.types[k])}" for k, val in cex.inputs.items()]
    lines += open_lines(list(dict.fromkeys([*cex.chosen[0], *cex.chosen[1]])), "snippets")
    for label, side in (("lhs", cex.lhs), ("rhs", cex.rhs)):
        lines.append(f"  {label}:")
        lines += [f"    {o:<{width}} = {show(side[o], cex.types[o])}" for o in v.outputs]
    lines += ["  reproduce:", "    " + reproduce(lhs, cex, lhs_names),
              "    " + reproduce(rhs, cex, rhs_names, 1)]
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
