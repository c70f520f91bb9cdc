"""9.7.6 Comparison and Selection Instructions: set, setp, selp, slct.

Each function takes register terms (bit-vectors; Bool for .pred) and returns
the destination terms by name. The docstrings quote the ISA pseudocode.
"""

from __future__ import annotations

import z3

from ..isa.types import PtxType
from ..isa.variants import Variant
from .options import Options
from .prims import bool_op, compare, float_view, true_value


def ftz(v: Variant, t: PtxType, opts: Options) -> bool:
    """Whether compares on `t` flush: `.ftz`, or sm_1x, where f32 set/setp/slct flush
    subnormal inputs regardless."""
    return v.ftz or (opts.sm_1x and t.name == "f32")


def set_(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """t = (a CmpOp b) ? 1 : 0;
    if (isFloat(dtype)) d = BoolOp(t, c) ? 1.0f : 0x00000000;
    else                d = BoolOp(t, c) ? 0xffffffff : 0x00000000;"""
    t = compare(v.cmp, a, b, v.stype, ftz(v, v.stype, opts))
    zero = z3.BitVecVal(0, v.dtype.width)
    return {"d": z3.If(bool_op(v.boolop, t, c), true_value(v.dtype), zero)}


def setp(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """t = (a CmpOp b) ? 1 : 0;  p = BoolOp(t, c);  q = BoolOp(!t, c);"""
    t = compare(v.cmp, a, b, v.type, ftz(v, v.type, opts))
    return {"p": bool_op(v.boolop, t, c), "q": bool_op(v.boolop, z3.Not(t), c)}


def selp(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """d = (c == 1) ? a : b;"""
    return {"d": z3.If(c, a, b)}


def slct(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """d = (c >= 0) ? a : b;   (c is .ctype; -0.0 >= 0; NaN selects b; .ftz flushes c first)"""
    if v.ctype.is_float:
        x = float_view(c, v.ctype.fmt, ftz(v, v.ctype, opts))
        return {"d": z3.If(z3.fpGEQ(x, z3.fpPlusZero(x.sort())), a, b)}
    return {"d": z3.If(c >= 0, a, b)}
