"""An independent reference for snippets: the parser gives the structure, the values
come from tests/oracle.py (never from the Z3 terms).

A value the ISA leaves open (the NaN of a cvt of a NaN) is tried as each of a few
representative NaNs, one per (conversion, input bits), so one input gives one NaN; a
register that differs between the tries is UNSPECIFIED, one that does not (a compare
of that NaN) has its value.
"""

from __future__ import annotations

from itertools import product

from oracle import evaluate as oracle_evaluate
from strategies import oracle_desc

from ptxsmt import parse
from ptxsmt.isa.literals import parse_immediate
from ptxsmt.isa.variants import operand_types

UNSPECIFIED = "unspecified"  # a register's value the ISA leaves open
# NaNs of each destination format; together each bit outside the exponent takes both values
NANS = {
    "f16": (0x7E00, 0xFFFF, 0x7C01),
    "bf16": (0x7FC0, 0xFFFF, 0x7F81),
    "f32": (0x7FC00000, 0xFFFFFFFF, 0x7F800001),
    "f64": (0x7FF8000000000000, 0xFFFFFFFFFFFFFFFF, 0x7FF0000000000001),
    # an integer the ISA leaves open (div/rem by zero): any bits
    **{f"int{w}": (0, 1, (1 << w) - 1) for w in (16, 32, 64)},
    "int1": (0, 1),
}


class _Open(Exception):
    """A free NaN met that no choice covers yet: its key and format."""


def run(text: str, inputs: dict, target: int = 90, vset_merge: str = "c") -> dict:
    """Final register values after the snippet (inputs included); UNSPECIFIED where the
    value depends on a NaN the ISA leaves open."""
    instructions = parse(text)
    keys: list[tuple] = []  # the free NaNs met so far, in order
    while True:
        try:
            finals = [_run(instructions, inputs, target, vset_merge, dict(zip(keys, pick)))
                      for pick in product(*(NANS[fmt] for _, fmt in keys))]
            break
        except _Open as e:
            keys.append(e.args)
    return {reg: value if all(f[reg] == value for f in finals) else UNSPECIFIED
            for reg, value in finals[0].items()}


def _run(instructions, inputs: dict, target: int, vset_merge: str, nans: dict) -> dict:
    regs = dict(inputs)
    for ins in instructions:
        types = operand_types(ins.variant)
        srcs = {slot: _value(o, types[slot], regs) for slot, o in ins.sources.items()}
        if ins.guard and regs[ins.guard.register] == ins.guard.negated:
            continue
        out = oracle_evaluate(oracle_desc(ins, target, vset_merge), srcs,
                              lambda key, fmt: _choose(nans, key, fmt))
        for slot, o in ins.destinations.items():
            if o.kind == "vec":
                w = types[slot].width // len(o.elements)
                for i, name in enumerate(o.elements):
                    regs[name] = (out[slot] >> (w * i)) & ((1 << w) - 1)
            else:
                regs[o.text] = out[slot]
    return regs


def _choose(nans: dict, key: tuple, fmt: str) -> int:
    if (key, fmt) not in nans:
        raise _Open(key, fmt)
    return nans[key, fmt]


def _value(o, t, regs):
    if o.kind == "imm":
        return parse_immediate(o.text, t)
    if o.kind == "vec":
        w = t.width // len(o.elements)
        return sum(regs[name] << (w * i) for i, name in enumerate(o.elements))
    return regs[o.text]
