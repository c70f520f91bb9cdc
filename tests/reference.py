"""An independent reference for snippets: the parser gives the structure, the values
come from tests/oracle.py and plain Python for the glue (never from the Z3 terms)."""

from __future__ import annotations

import numpy as np
from oracle import evaluate as oracle_evaluate
from strategies import oracle_desc

from ptxsmt import parse
from ptxsmt.isa.literals import parse_immediate
from ptxsmt.isa.syntax import operand_types

_NP = {"f16": (np.uint16, np.float16), "f32": (np.uint32, np.float32),
       "f64": (np.uint64, np.float64)}


def run(text: str, inputs: dict, target: int = 90, vset_merge: str = "c") -> dict:
    """Final register values after the snippet (inputs included)."""
    regs = dict(inputs)
    for ins in parse(text):
        types = operand_types(ins.variant)
        srcs = {slot: _value(o, types[slot], regs) for slot, o in ins.sources.items()}
        if ins.guard and regs[ins.guard.register] == ins.guard.negated:
            continue
        if ins.variant.family == "glue":
            out = {"d": _glue(ins.variant, srcs)}
        else:
            out = oracle_evaluate(oracle_desc(ins, target, vset_merge), srcs)
        for slot, o in ins.destinations.items():
            if o.kind == "vec":
                w = types[slot].width // len(o.elements)
                for i, name in enumerate(o.elements):
                    regs[name] = (out[slot] >> (w * i)) & ((1 << w) - 1)
            else:
                regs[o.text] = out[slot]
    return regs


def _value(o, t, regs):
    if o.kind == "imm":
        return parse_immediate(o.text, t)
    if o.kind == "vec":
        w = t.width // len(o.elements)
        return sum(regs[name] << (w * i) for i, name in enumerate(o.elements))
    return regs[o.text]


def _glue(v, s):
    t = v.stype
    mask = (1 << t.width) - 1
    if v.opcode == "mov":
        return s["a"]
    if v.opcode == "not":
        return (not s["a"]) if t.name == "pred" else ~s["a"] & mask
    if v.opcode == "cvt":
        src = t.name if t.name != "bf16" else None
        if src is None:  # bf16 is the top half of an f32
            return s["a"] << 16
        ui, fl = _NP[src]
        uo, fo = _NP[v.dtype.name]
        return int(np.array([s["a"]], dtype=ui).view(fl).astype(fo).view(uo)[0])
    op = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
    result = op[v.opcode](s["a"], s["b"])
    return bool(result) if t.name == "pred" else result
