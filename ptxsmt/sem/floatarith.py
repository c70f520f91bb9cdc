"""9.7.3 Floating-Point and 9.7.4 Half Precision Floating-Point Instructions that round:
add, sub, mul, fma, mad, div, sqrt, rcp (9.7.3.3-9.7.3.8, 9.7.3.13, 9.7.3.15, 9.7.4.1-9.7.4.4;
their IEEE forms), and 9.7.3.1 testp, 9.7.3.2 copysign.

One lane is IEEE-754 arithmetic in the rounding direction `.rnd` (9.7.3: "the default
is .rn"), on inputs flushed by `.ftz` (f32 and f16 only; f32 always on sm_1x), its
result flushed again and then clamped by `.sat`. The docstrings quote the ISA.

The text fixes no NaN bits ("Single-precision instructions return an unspecified NaN";
f64 keeps "a" NaN payload without saying whose): a NaN result is a free NaN of the
instruction and its inputs (README, Spec notes 9).
"""

from __future__ import annotations

import z3

from ..isa.types import FloatFormat
from ..isa.variants import Variant
from .arith import flush_bits
from .comparison import ftz
from .options import Options
from .prims import lanes, pack
from .sorts import as_float, fields, free_nan, free_value, fused, rounding, to_bits, unordered


def float_arith(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    t = v.type
    if v.opcode == "testp":
        return {"p": testp(v, a, t.fmt)}
    flush = ftz(v, t.lane, opts)
    n = t.lane_width
    srcs = [lanes(x, n) if x is not None else [None] * t.lanes for x in (a, b, c)]
    return {"d": pack([_LANE[v.opcode](v, t.lane.fmt, flush, *xs) for xs in zip(*srcs)])}


def rounded(v: Variant, fmt: FloatFormat, flush: bool, op, *inputs) -> z3.BitVecRef:
    """d = op(inputs) rounded by .rnd;  ".ftz flushes subnormal inputs and results to
    sign-preserving zero";  ".sat clamps the result to [0.0, 1.0]. NaN results are
    flushed to +0.0f" (saturate)."""
    xs = [flush_bits(x, fmt) if flush else x for x in inputs]
    # a + b, a * b and the product of a*b + c name no order of a and b
    key = [unordered(*xs[:2]), *xs[2:]] if v.opcode in COMMUTING else xs
    nan = free_nan(nan_name(v), z3.Concat(*key) if len(key) > 1 else key[0], fmt)
    out = to_bits(op(rounding(v.rnd), *(as_float(x, fmt) for x in xs)), nan)
    out = flush_bits(out, fmt) if flush else out
    return saturate(out, fmt) if v.sat else out


COMMUTING = {"add", "mul", "fma", "mad"}


def nan_name(v: Variant) -> str:
    """The free NaN's name: one per operation, rounding and lane type, so that spellings of
    one instruction share it (add.f32 is add.rn.f32, mad.rn.f32 is fma.rn.f32, a lane of
    add.f16x2 is an add.rn.f16); its arguments are the inputs after .ftz."""
    op = "fma" if v.opcode == "mad" else v.opcode
    return f"{op}.{v.rnd or 'rn'}.{v.type.lane} NaN"


def saturate(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef:
    """.sat: clamp to [0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0 (as ptxas 13.0 folds
    add.sat.f32 of -0.0: the clamp is max(+0.0, x); docs/arith-families.md)."""
    x, one = as_float(bits, fmt), _one(fmt)
    low = z3.Or(z3.fpIsNaN(x), z3.fpLEQ(x, z3.fpPlusZero(x.sort())))
    return z3.If(low, z3.BitVecVal(0, fmt.width), z3.If(z3.fpGT(x, as_float(one, fmt)), one, bits))


def _one(fmt: FloatFormat) -> z3.BitVecRef:
    """1.0: the biased exponent of 2**0 and a zero fraction."""
    return z3.BitVecVal(((1 << (fmt.ebits - 1)) - 1) << (fmt.sbits - 1), fmt.width)


def add(v, fmt, flush, a, b, c):
    """d = a + b;"""
    return rounded(v, fmt, flush, z3.fpAdd, a, b)


def sub(v, fmt, flush, a, b, c):
    """d = a - b;"""
    return rounded(v, fmt, flush, z3.fpSub, a, b)


def mul(v, fmt, flush, a, b, c):
    """d = a * b;"""
    return rounded(v, fmt, flush, z3.fpMul, a, b)


def fma(v, fmt, flush, a, b, c):
    """d = a*b + c;  "computes the product of a and b to infinite precision and then adds
    c to this product, again in infinite precision. The resulting value is then rounded"
    (mad.rnd.f32/.f64 are the same instruction)."""
    return rounded(v, fmt, flush, fused, a, b, c)


def div(v, fmt, flush, a, b, c):
    """d = a / b;  ".rnd: IEEE 754 compliant rounding" (div.approx/.full: not modelled)."""
    return rounded(v, fmt, flush, z3.fpDiv, a, b)


def sqrt(v, fmt, flush, a, b, c):
    """d = sqrt(a);  IEEE 754 compliant rounding; sqrt(-0.0) = -0.0, sqrt(x<0) = NaN."""
    return rounded(v, fmt, flush, z3.fpSqrt, a)


def rcp(v, fmt, flush, a, b, c):
    """d = 1 / a;  IEEE 754 compliant rounding."""
    return rounded(v, fmt, flush, lambda rm, x: z3.fpDiv(rm, as_float(_one(fmt), fmt), x), a)


def copysign(v, fmt, flush, a, b, c):
    """"Copy sign bit of a into value of b, and return the result as d": the bits of b
    with a's sign bit (an operation on bits, as IEEE copySign: NaNs keep their payload)."""
    sign, _, _ = fields(a, fmt)
    return z3.Concat(sign, z3.Extract(fmt.width - 2, 0, b))


def testp(v: Variant, a, fmt: FloatFormat) -> z3.BoolRef:
    """p = a is .finite / .infinite / .number (not NaN) / .notanumber / .normal /
    .subnormal  (zero is finite and not subnormal). Whether zero is .normal is open: not
    "a normal number" to the text, but ptxas 13.0 folds testp.normal of ±0.0 to true
    (docs/arith-families.md)."""
    x = as_float(a, fmt)
    if v.mode == "normal":
        zero = free_value(f"{v} of zero", a, 1) == 1
        return z3.If(z3.fpIsZero(x), zero, z3.fpIsNormal(x))
    return {"finite": z3.Not(z3.Or(z3.fpIsInf(x), z3.fpIsNaN(x))), "infinite": z3.fpIsInf(x),
            "number": z3.Not(z3.fpIsNaN(x)), "notanumber": z3.fpIsNaN(x),
            "subnormal": z3.fpIsSubnormal(x)}[v.mode]


_LANE = {"add": add, "sub": sub, "mul": mul, "fma": fma, "mad": fma, "div": div,
         "sqrt": sqrt, "rcp": rcp, "copysign": copysign}
