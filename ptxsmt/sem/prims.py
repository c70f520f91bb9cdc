"""Primitives the ISA pseudocode names: CmpOp, BoolOp, FTZ flush, lane extraction."""

from __future__ import annotations

from collections.abc import Callable

import z3

from ..isa.literals import float_bits
from ..isa.modifiers import BoolOp, CmpOp
from ..isa.types import FloatFormat, Kind, PtxType
from .sorts import as_float

_FP_RELATIONS = {
    "eq": z3.fpEQ,
    "ne": lambda a, b: z3.Not(z3.fpEQ(a, b)),
    "lt": z3.fpLT,
    "le": z3.fpLEQ,
    "gt": z3.fpGT,
    "ge": z3.fpGEQ,
}
_SIGNED_RELATIONS = {
    "eq": lambda a, b: a == b,
    "ne": lambda a, b: a != b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
}
_UNSIGNED_RELATIONS = {
    **_SIGNED_RELATIONS,
    "lt": z3.ULT,
    "le": z3.ULE,
    "gt": z3.UGT,
    "ge": z3.UGE,
}


def flush(x: z3.FPRef) -> z3.FPRef:
    """FTZ: a subnormal becomes a zero of the same sign."""
    zero = z3.If(z3.fpIsNegative(x), z3.fpMinusZero(x.sort()), z3.fpPlusZero(x.sort()))
    return z3.If(z3.fpIsSubnormal(x), zero, x)


def float_view(bits: z3.BitVecRef, fmt: FloatFormat, ftz: bool) -> z3.FPRef:
    x = as_float(bits, fmt)
    return flush(x) if ftz else x


def compare_float(cmp: CmpOp, a: z3.FPRef, b: z3.FPRef) -> z3.BoolRef:
    """Floating Point Notes: ordered ops are false on NaN, unordered ones true."""
    either_nan = z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b))
    if cmp is CmpOp.NUM:
        return z3.Not(either_nan)
    if cmp is CmpOp.NAN:
        return either_nan
    rel = _FP_RELATIONS[cmp.relation](a, b)
    return z3.Or(either_nan, rel) if cmp.unordered else z3.And(z3.Not(either_nan), rel)


def compare_int(cmp: CmpOp, a: z3.BitVecRef, b: z3.BitVecRef, signed: bool) -> z3.BoolRef:
    """Integer Notes: lo/ls/hi/hs are the unsigned lt/le/gt/ge."""
    table = _SIGNED_RELATIONS if signed and not cmp.unsigned_only else _UNSIGNED_RELATIONS
    return table[cmp.relation](a, b)


def compare(cmp: CmpOp, a: z3.BitVecRef, b: z3.BitVecRef, t: PtxType, ftz: bool) -> z3.BoolRef:
    """`a CmpOp b` on register bits of one lane of type `t`."""
    if t.kind is Kind.FLOAT:
        return compare_float(cmp, float_view(a, t.fmt, ftz), float_view(b, t.fmt, ftz))
    return compare_int(cmp, a, b, signed=t.kind is Kind.SIGNED)


def bool_op(op: BoolOp | None, t: z3.BoolRef, c: z3.BoolRef | None) -> z3.BoolRef:
    """BoolOp(t, c); without a BoolOp the result is t."""
    if op is None:
        return t
    return {BoolOp.AND: z3.And, BoolOp.OR: z3.Or, BoolOp.XOR: z3.Xor}[op](t, c)


def lanes(bits: z3.BitVecRef, width: int) -> list[z3.BitVecRef]:
    """Split a register into `width`-bit lanes, lane 0 (the low bits) first; a register
    of one lane is that lane itself (so `sorts.as_float` still sees the IEEE result a
    previous instruction wrote, not an Extract of all its bits)."""
    if bits.size() == width:
        return [bits]
    return [z3.Extract(i + width - 1, i, bits) for i in range(0, bits.size(), width)]


def pack(lane_values: list[z3.BitVecRef]) -> z3.BitVecRef:
    """Inverse of `lanes`."""
    return z3.Concat(*reversed(lane_values)) if len(lane_values) > 1 else lane_values[0]


def true_value(t: PtxType) -> z3.BitVecRef:
    """A set destination's True value for one lane: 1.0 for floats, all ones otherwise.
    (1.0 as a bit constant keeps exported SMT-LIB free of Z3's fp.to_ieee_bv.)"""
    if t.kind is Kind.FLOAT:
        return z3.BitVecVal(float_bits(1.0, t.fmt), t.lane_width)
    return z3.BitVecVal(-1, t.lane_width)


# ---- 9.3 Predicated Execution: the guard rule, for snippets and functions alike ----------

def guard_holds(p: z3.BoolRef, negated: bool) -> z3.BoolRef:
    """`@p` runs the instruction where p is true, `@!p` where it is false."""
    return z3.Not(p) if negated else p


def guarded(holds: z3.BoolRef | None, new: z3.ExprRef,
            old: Callable[[], z3.ExprRef]) -> z3.ExprRef:
    """A guarded instruction takes effect only where its guard holds: elsewhere its
    destination keeps its old value, read (`old()`) only then; no guard: the new value."""
    return new if holds is None else z3.If(holds, new, old())
