"""9.7.1 Integer Arithmetic (add, sub, mul with .hi/.lo/.wide, mad, div, rem, neg, abs,
min, max; add/min/max on .u16x2/.s16x2 lane by lane, min/max .relu), 9.7.8 shl/shr,
9.7.3/9.7.4 floating-point abs, neg, min, max: the arithmetic compilers put next to
compares. The docstrings quote the ISA.

Integers wrap (bit-vector arithmetic). Floats stay bits: abs/neg change the sign bit,
min/max return one of the (flushed) inputs, so no rounding is involved. Where the text
leaves a NaN open, the result is a free NaN (README, Spec notes 9 and 10).
"""

from __future__ import annotations

import z3

from ..isa.syntax import format_variant
from ..isa.types import FloatFormat, Kind, PtxType
from ..isa.variants import Variant
from .comparison import ftz
from .options import Options
from .prims import lanes, pack
from .sorts import as_float, fields, free_nan, free_value, is_nan, unordered


def arith(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    t = v.type
    if t.kind is Kind.FLOAT:
        flush = ftz(v, t, opts)
        fn = _FLOAT[v.opcode]
        return {"d": per_lane(t, lambda x, y: fn(v, t.lane.fmt, flush, x, y), a, b)}
    signed = t.kind is Kind.SIGNED
    if v.opcode == "mad":
        return {"d": mad(v, a, b, c, signed)}
    fn = _INT[v.opcode]
    if not t.is_packed:  # shl/shr's b is a .u32 whatever the type: not split into lanes
        return {"d": fn(v, a, b, signed)}
    return {"d": per_lane(t, lambda x, y: fn(v, x, y, signed), a, b)}


def per_lane(t: PtxType, op, a, b) -> z3.BitVecRef:
    """iA[i] = a[16i : 16i+15]; iB[i] = b[16i : 16i+15]; d[i] = op(iA[i], iB[i]) on the
    lanes of a type `t` (one lane: d = op(a, b)); b may be absent (abs, neg)."""
    w = t.lane_width
    bs = lanes(b, w) if b is not None else [None] * t.lanes
    return pack([op(x, y) for x, y in zip(lanes(a, w), bs)])


# ---- 9.7.1 integers ------------------------------------------------------------------------

def add(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a + b;  ".sat limits result to MININT..MAXINT (no overflow)" (.s32)."""
    return _saturate(z3.SignExt(1, a) + z3.SignExt(1, b), a.size()) if v.sat else a + b


def sub(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a - b;  ".sat limits result to MININT..MAXINT (no overflow)" (.s32)."""
    return _saturate(z3.SignExt(1, a) - z3.SignExt(1, b), a.size()) if v.sat else a - b


def _saturate(wide: z3.BitVecRef, n: int) -> z3.BitVecRef:
    """A signed value one bit wider than n, clamped to n bits' MININT..MAXINT."""
    lo, hi = z3.BitVecVal(-(1 << (n - 1)), n + 1), z3.BitVecVal((1 << (n - 1)) - 1, n + 1)
    return z3.Extract(n - 1, 0, z3.If(wide < lo, lo, z3.If(wide > hi, hi, wide)))


def mul(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """t = a * b;  n = bitwidth of type;  d = t (.wide);  d = t<2n-1..n> (.hi);
    d = t<n-1..0> (.lo)"""
    n = a.size()
    if v.mode == "lo":
        return a * b
    t = wide_product(a, b, signed)
    return t if v.mode == "wide" else z3.Extract(2 * n - 1, n, t)


def mad(v: Variant, a, b, c, signed: bool) -> z3.BitVecRef:
    """t = a * b;  n = bitwidth of type;  d = t + c (.wide: c is 2n bits);
    d = t<2n-1..n> + c (.hi);  d = t<n-1..0> + c (.lo);
    ".sat limits result to MININT..MAXINT (no overflow) for the size of the operation.
    Applies only to .s32 type in .hi mode" (9.7.1.4)."""
    part = mul(v, a, b, signed)
    return _saturate(z3.SignExt(1, part) + z3.SignExt(1, c), part.size()) if v.sat \
        else part + c


def div(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a / b;  "Division by zero yields an unspecified, machine-specific value" (a free
    value of the instruction and a). Signed division truncates toward zero, as C's /
    that nvcc lowers to it; MININT / -1 wraps to MININT."""
    q = a / b if signed else z3.UDiv(a, b)
    return z3.If(b == 0, free_value(f"{format_variant(v)} by zero", a, a.size()), q)


def rem(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a % b;  "The behavior for negative numbers is machine-dependent": read as C's %,
    which nvcc lowers to rem.s32 (the sign of a; docs/arith-families.md). By zero: a
    free value, as for div."""
    r = z3.SRem(a, b) if signed else z3.URem(a, b)
    return z3.If(b == 0, free_value(f"{format_variant(v)} by zero", a, a.size()), r)


def wide_product(a, b, signed: bool) -> z3.BitVecRef:
    """t = a * b, all 2n bits: what mul.hi keeps the upper half of, mul.wide writes whole
    and mad adds c to."""
    ext = z3.SignExt if signed else z3.ZeroExt
    return ext(a.size(), a) * ext(b.size(), b)


def neg(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = -a;  (two's complement: -MININT is MININT)"""
    return -a


def abs_(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = |a|;  "Only for signed integers" (|MININT| wraps to MININT)"""
    return z3.If(a < 0, -a, a)


def min_(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = (a < b) ? a : b; // Integer (signed and unsigned)"""
    return _relu(v, z3.If(a < b if signed else z3.ULT(a, b), a, b))


def max_(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = (a > b) ? a : b; // Integer (signed and unsigned)"""
    return _relu(v, z3.If(a > b if signed else z3.UGT(a, b), a, b))


def _relu(v: Variant, d: z3.BitVecRef) -> z3.BitVecRef:
    """".relu clamps the result to 0 if negative" (.s32 and each lane of .s16x2): of the
    min or max, not of the sources."""
    return z3.If(d < 0, z3.BitVecVal(0, d.size()), d) if v.relu else d


def shl(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a << b;  b is ".u32"; "Shift amounts greater than the register width N are
    clamped to N" (so the result is 0)."""
    return a << _amount(a, b)


def shr(v: Variant, a, b, signed: bool) -> z3.BitVecRef:
    """d = a >> b;  "Signed shifts fill with the sign bit, unsigned and untyped shifts fill
    with 0"; amounts greater than the width are clamped to it."""
    n = _amount(a, b)
    return a >> n if signed else z3.LShR(a, n)


def _amount(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """b, clamped to a's width N, as a bit-vector of a's size (N fits it)."""
    n = a.size()
    clamped = z3.If(z3.ULT(b, n), b, z3.BitVecVal(n, 32))
    return z3.Extract(n - 1, 0, clamped) if n <= 32 else z3.ZeroExt(n - 32, clamped)


_INT = {"add": add, "sub": sub, "mul": mul, "div": div, "rem": rem, "neg": neg, "abs": abs_,
        "min": min_, "max": max_, "shl": shl, "shr": shr}


# ---- 9.7.3 / 9.7.4 floating point (one lane) -----------------------------------------------

def flush_bits(x: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef:
    """".ftz flushes subnormal inputs and results to sign-preserving zero", on the bits."""
    sign, exp, _ = fields(x, fmt)
    return z3.If(exp == 0, z3.Concat(sign, z3.BitVecVal(0, fmt.width - 1)), x)


def _sign(x: z3.BitVecRef, fmt: FloatFormat, bit: int) -> z3.BitVecRef:
    """x with its sign bit set to `bit`."""
    return z3.Concat(z3.BitVecVal(bit, 1), z3.Extract(fmt.width - 2, 0, x))


def fabs(v: Variant, fmt: FloatFormat, flush: bool, a, b) -> z3.BitVecRef:
    """d = |a|;  "For abs.f32, NaN input yields unspecified NaN. For abs.f64, NaN input is
    passed through unchanged" (half: "NaN inputs yield an unspecified NaN")."""
    a = flush_bits(a, fmt) if flush else a
    nan = a if v.type.name == "f64" else free_nan(format_variant(v), a, fmt)
    return z3.If(is_nan(a, fmt), nan, _sign(a, fmt, 0))


def fneg(v: Variant, fmt: FloatFormat, flush: bool, a, b) -> z3.BitVecRef:
    """d = -a;  "NaN inputs yield an unspecified NaN"."""
    a = flush_bits(a, fmt) if flush else a
    sign, _, _ = fields(a, fmt)
    flipped = z3.Concat(~sign, z3.Extract(fmt.width - 2, 0, a))
    return z3.If(is_nan(a, fmt), free_nan(format_variant(v), a, fmt), flipped)


def _min_max(v: Variant, fmt: FloatFormat, flush: bool, a, b, less: bool) -> z3.BitVecRef:
    """if (isNaN(x) && isNaN(y)) z = NaN;  else if (.NaN && (isNaN(x) || isNaN(y)))
    z = canonical NaN;  else if (isNaN(x)) z = y;  else if (isNaN(y)) z = x;
    else z = (x < y) ? x : y;   // "note: -0.0 < +0.0 here" (max: x > y, +0.0 > -0.0)"""
    if flush:
        a, b = flush_bits(a, fmt), flush_bits(b, fmt)
    x, y = as_float(a, fmt), as_float(b, fmt)
    neg_zero_first = z3.And(z3.fpIsZero(x), z3.fpIsZero(y),
                            z3.fpIsNegative(x) if less else z3.fpIsPositive(x),
                            z3.fpIsPositive(y) if less else z3.fpIsNegative(y))
    first = z3.Or(z3.fpLT(x, y) if less else z3.fpGT(x, y), neg_zero_first)
    pick = z3.If(is_nan(a, fmt), b, z3.If(is_nan(b, fmt), a, z3.If(first, a, b)))
    both = z3.And(is_nan(a, fmt), is_nan(b, fmt))
    out = z3.If(both, free_nan(format_variant(v), unordered(a, b), fmt), pick)
    if v.nan:
        out = z3.If(z3.Or(is_nan(a, fmt), is_nan(b, fmt)), canonical_nan_of(fmt), out)
    return out


def canonical_nan_of(fmt: FloatFormat) -> z3.BitVecRef:
    """"the result is canonical NaN": one NaN per format, whose bits the text does not
    give (ptxas 13.0 folds min.NaN.f32 to 0x7fffffff): a free NaN of no input."""
    return free_nan(f"canonical NaN ({fmt.name})", z3.BitVecVal(0, 1), fmt)


def fmin(v: Variant, fmt: FloatFormat, flush: bool, a, b) -> z3.BitVecRef:
    return _min_max(v, fmt, flush, a, b, less=True)


def fmax(v: Variant, fmt: FloatFormat, flush: bool, a, b) -> z3.BitVecRef:
    return _min_max(v, fmt, flush, a, b, less=False)


_FLOAT = {"abs": fabs, "neg": fneg, "min": fmin, "max": fmax}
