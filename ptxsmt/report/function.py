"""`eval FILE.ptx` and `equiv A.ptx B.ptx`: a function's inputs, memory and outputs (hex
plus decoded), and verdicts with replayed counterexamples."""

from __future__ import annotations

import shlex

from ..eval.values import UNSPECIFIED, Value, outputs_json, to_json
from ..function.evaluate import FunctionEvaluation
from ..isa.literals import describe as describe_bits
from ..isa.types import PtxType
from ..smt.queries.functions import FunctionCounterexample, FunctionVerdict
from ..smt.solving.phrases import phrase
from .equivalence import OPEN_NAN_DIFFERENCE, nan_fields, nan_phrase, open_json, open_lines


def describe(value: Value, t: PtxType) -> str:
    if value is UNSPECIFIED:
        return "unspecified (a value the PTX ISA leaves open)"
    return describe_bits(value, t)


def function_json(ev: FunctionEvaluation, hardware: str | None = None) -> dict:
    """`hardware`: the chip whose values stand for the ISA's open ones (named if any)."""
    return {
        "function": ev.function,
        **({"hardware": hardware} if hardware else {}),
        "inputs": {k: to_json(v, ev.types[k]) for k, v in ev.inputs.items()},
        "memory": {str(loc): to_json(v, loc.type) for loc, (v, _) in ev.memory.items()},
        **({"open": {c.input: c.spelled for c in ev.chosen}} if ev.chosen else {}),
        "outputs": outputs_json(ev.outputs()),
    }


def function_text(ev: FunctionEvaluation) -> str:
    rows = [("in", k, describe(v, ev.types[k])) for k, v in ev.inputs.items()]
    rows += [("mem", str(loc), describe(v, loc.type) + ("" if given else "  (not given: 0)"))
             for loc, (v, given) in ev.memory.items()]
    rows += [("open", c.input, str(c.spelled).lower()) for c in ev.chosen]
    rows += [("out", k, describe(v, t)) for k, (v, t) in ev.outputs().items()]
    width = max((len(name) for _, name, _ in rows), default=1)
    return "\n".join([ev.function] + [f"  {what:<4} {name:<{width}} = {text}"
                                       for what, name, text in rows])


def _arguments(cex: FunctionCounterexample, ev: FunctionEvaluation) -> str:
    """The inputs of one side's replay as `ptxsmt eval` arguments, under its own names
    (the results of unmodelled instructions are among them)."""
    scalars = {k: to_json(v, ev.types[k]) for k, v in ev.inputs.items()} | \
        {c.input: c.spelled for c in ev.chosen}
    memory = {f"{loc}.{loc.type.name}": to_json(v, loc.type) for loc, v in cex.memory.items()}
    return " ".join(shlex.quote(f"{k}={v}".lower() if isinstance(v, bool) else f"{k}={v}")
                    for k, v in {**scalars, **memory}.items())


def function_verdict_json(v: FunctionVerdict) -> dict:
    out = {"verdict": v.verdict, **({"unroll": v.unroll} if v.unroll else {}),
           "lhs": v.lhs, "rhs": v.rhs,
           "uninterpreted": list(v.uninterpreted), "seconds": round(v.seconds, 4),
           **nan_fields(v.verdict, v.nan, v.up_to_nan_payloads,
                        bool(v.counterexample and v.counterexample.nan_payloads_only))}
    if v.counterexample:
        cex = v.counterexample
        out["counterexample"] = {
            "inputs": function_json(cex.lhs)["inputs"] | function_json(cex.rhs)["inputs"],
            "memory": {str(loc): to_json(val, loc.type) for loc, val in cex.memory.items()},
            "lhs": function_json(cex.lhs)["outputs"], "rhs": function_json(cex.rhs)["outputs"],
            "differ": list(cex.differ),
            **({"open_values": [open_json(c) for c in cex.chosen]} if cex.chosen else {})}
    if v.justified:  # what an "equivalent" rests on besides solver proofs (Alive2 lists
        out["justified"] = v.justified  # its approximations)
    if v.certified is not None:
        out["certified"] = {"proved": v.certified.certified, "refuted": v.certified.refuted,
                            "undecided": v.certified.undecided}
    if v.reason:
        out["reason"] = v.reason
    return out


def _rests_on(v: FunctionVerdict) -> list[str]:
    if not v.justified:
        return []
    rules = ", ".join(f"{n} by {rule}" for rule, n in sorted(v.justified.items()))
    if v.certified is not None:
        return [f"  merges by rule ({rules}): each re-proved by a solver (--certify)"]
    return [f"  besides solver proofs, it rests on merges by rule ({rules}); --certify "
            "re-proves them"]


def _partly(ev: FunctionEvaluation, name: str) -> str:
    """A return of which some bytes were never written: the written ones in hex, '?'
    for each digit nobody wrote ("" if it is not one)."""
    if name not in ev.settled:
        return ""
    bits, mask = ev.settled[name]
    digits = ev.types[name].width // 4
    hexed = "".join(f"{(bits >> 4 * i) & 0xF:x}" if (mask >> 4 * i) & 0xF else "?"
                    for i in reversed(range(digits)))
    return f"0x{hexed} (? : never written, a value of its own)"


def function_verdict_text(v: FunctionVerdict, lhs_file: str, rhs_file: str) -> str:
    opaque = [f"  treated as uninterpreted (same instruction, same inputs, same result): "
              f"{text} (line {line})" for text, line in v.uninterpreted.items()]
    nans = nan_phrase(v.up_to_nan_payloads, v.float_outputs)
    said = phrase(v.verdict, v.up_to_nan_payloads, unroll=v.unroll)
    if v.verdict == "equivalent":
        return "\n".join([f"{said}: {v.lhs} and {v.rhs} agree on their return "
                          f"values and global and shared memory for all inputs{nans} "
                          f"({v.seconds:.3f} s)",
                          *([f"  {v.reason}"] if v.reason else []), *_rests_on(v), *opaque])
    if v.verdict == "bounded":
        return "\n".join([f"{said}: {v.lhs} and "
                          f"{v.rhs} agree on their return values and global and shared "
                          f"memory for all inputs on which each loop runs at most {v.unroll} "
                          f"times{nans}; "
                          f"{v.reason} ({v.seconds:.3f} s)", *_rests_on(v), *opaque])
    if v.verdict == "unknown":
        return "\n".join([f"{said}: {v.reason or 'the solver gave no answer (timeout)'}",
                          *opaque])
    cex = v.counterexample
    how = f", {OPEN_NAN_DIFFERENCE}" if cex.nan_payloads_only else ""
    lines = [f"{said}: {v.lhs} and {v.rhs} disagree on {', '.join(cex.differ)}{how}",
             "  inputs:"]
    inputs = {**cex.lhs.inputs, **cex.rhs.inputs}
    types = {**cex.lhs.types, **cex.rhs.types}
    lines += [f"    {k} = {describe(val, types[k])}" for k, val in inputs.items()]
    if cex.memory:
        lines.append("  initial memory (any other byte: 0):")
        lines += [f"    {loc}.{loc.type.name} = {describe(val, loc.type)}"
                  for loc, val in cex.memory.items()]
    lines += open_lines(list(cex.chosen), "functions", not cex.nan_payloads_only)
    for label, ev in (("lhs", cex.lhs), ("rhs", cex.rhs)):
        lines.append(f"  {label} ({ev.function}):")
        lines += [f"    {k} = {_partly(ev, k) or describe(val, t)}"
                  for k, (val, t) in ev.outputs().items()]
    lines += ["  reproduce:", *(f"    {line}" for line in reproduce(v, lhs_file, rhs_file))]
    return "\n".join(lines + opaque)


def reproduce(v: FunctionVerdict, lhs_file: str, rhs_file: str) -> list[str]:
    """The `ptxsmt eval` lines that replay a counterexample on each side."""
    cex = v.counterexample
    unroll = f"--unroll {v.unroll} " if v.unroll else ""
    return [f"ptxsmt eval {shlex.quote(path)} --function {ev.function} {unroll}"
            f"{_arguments(cex, ev)}" for path, ev in ((lhs_file, cex.lhs), (rhs_file, cex.rhs))]
