"""9.7.7 Half Precision Comparison Instructions: set, setp on f16/bf16 and x2.

Packed sources compare lane by lane: fA[i] = a[16i : 16i+15]. A scalar source
is the one-lane case, so one function per instruction covers both.
"""

from __future__ import annotations

import z3

from ..isa.types import PtxType
from ..isa.variants import Variant
from .options import Options
from .prims import bool_op, compare, lanes, pack, true_value


def set_(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """t[i] = (fA[i] CmpOp fB[i]) ? 1 : 0;
    d[i] = BoolOp(t[i], c) ? trueVal : 0;  where, following the prose (Spec notes 2),
    trueVal = 1.0 for .f16/.bf16/.f16x2/.bf16x2 destinations, else all ones of a lane
    (0xffff per lane for packed sources, 0xffff/0xffffffff for .u16/.s16/.u32/.s32)."""
    t = _compare_lanes(v, a, b, v.stype)
    width = v.dtype.width // len(t)
    true_val = true_value(v.dtype) if v.dtype.is_float else z3.BitVecVal(-1, width)
    zero = z3.BitVecVal(0, width)
    return {"d": pack([z3.If(bool_op(v.boolop, ti, c), true_val, zero) for ti in t])}


def setp(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """scalar: t = (a CmpOp b) ? 1 : 0;  p = BoolOp(t, c);        (f16/bf16 write only p)
    packed: t[i] = (fA[i] CmpOp fB[i]) ? 1 : 0;  p = BoolOp(t[0], c);  q = BoolOp(t[1], c);
    A packed setp with a single p gets lane 0, as ptxas compiles it (HSETP2 on H0_H0)."""
    t = _compare_lanes(v, a, b, v.type)
    out = {"p": bool_op(v.boolop, t[0], c)}
    if len(t) == 2:
        out["q"] = bool_op(v.boolop, t[1], c)
    return out


def _compare_lanes(v: Variant, a, b, t: PtxType) -> list[z3.BoolRef]:
    """fA[i] CmpOp fB[i] on the lanes of sources of type `t`."""
    lane, n = t.lane, t.lane.width
    return [compare(v.cmp, x, y, lane, v.ftz) for x, y in zip(lanes(a, n), lanes(b, n))]
