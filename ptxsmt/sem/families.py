"""Which semantics an instruction has: its family's function, one per family."""

from __future__ import annotations

import z3

from ..isa.syntax import Instruction
from . import arith, bits, comparison, convert, floatarith, glue, half, hardware, video
from .options import DEFAULT, Options

_SCALAR = {
    "set": comparison.set_,
    "setp": comparison.setp,
    "selp": comparison.selp,
    "slct": comparison.slct,
    "half-set": half.set_,
    "half-setp": half.setp,
    "glue": glue.glue,
    "arith": arith.arith,
    "float-arith": floatarith.float_arith,
    "convert": convert.convert,
    "bits": bits.bits,
}


def semantics(ins: Instruction, a, b, c, opts: Options = DEFAULT,
              e=None) -> dict[str, z3.ExprRef]:
    """Destination terms of one instruction (unguarded) from its source terms (e: the
    fourth source, bfi's length); with `opts.hardware`, the values the ISA leaves open as
    that chip gives them."""
    out = _isa(ins, a, b, c, opts, e)
    rule = hardware.rule(ins.variant) if opts.hardware else None
    if rule is None:
        return out
    # the open values this instruction makes: those of its terms on fresh operands
    made = _isa(ins, *(x if x is None else z3.FreshConst(x.sort()) for x in (a, b, c)), opts)
    return hardware.on_silicon(ins.variant, rule, (a, b, c), out, made)


def _isa(ins: Instruction, a, b, c, opts: Options, e=None) -> dict[str, z3.ExprRef]:
    v = ins.variant
    if e is not None:  # bfi, the one instruction with a fourth source (bits family)
        return bits.bits(v, a, b, c, opts, e)
    if v.syntax.lane_prefix:  # vset: lanes chosen by the mask and selectors
        return video.vset(v, a, b, c, ins.lane_spec("d"), ins.lane_spec("a"),
                          ins.lane_spec("b"), opts)
    if c is not None and "c" in ins.operands and ins.operands["c"].negated:
        c = z3.Not(c)
    return _SCALAR[v.family](v, a, b, c, opts)

