"""9.7.9.21 cvt that rounds: between float formats (.rn/.rz/.rm/.rp, and .rni/.rzi/.rmi/.rpi
to an integral value of the same format), from floats to integers (.rni/.rzi/.rmi/.rpi)
and from integers to floats (.rn/.rz/.rm/.rp), with .ftz and .sat. The exact widenings
and cvt between integers are glue's.

    "For float-to-integer conversions, the result is clamped to the destination range by
    default; i.e, .sat is redundant"; a NaN converts to 0.
    ".ftz: For .f32 inputs and outputs, flushes subnormal ... to sign-preserving zero"
    (sm_1x: always); ".sat: For floating-point destination types, .sat limits the result
    to the range [0.0, 1.0]. NaN results are flushed to positive zero."
The NaN of a float-to-float cvt is a free NaN of the instruction and its input.
"""

from __future__ import annotations

import z3

from ..isa.opcodes import INT_ROUNDINGS
from ..isa.types import Kind, PtxType
from ..isa.variants import Variant
from .arith import flush_bits
from .floatarith import saturate
from .options import Options
from .sorts import as_float, fp_sort, free_nan, rounding, to_bits


def convert(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    src, dst = v.atype, v.dtype
    if src.is_float and _flushes(v, src, opts):
        a = flush_bits(a, src.fmt)
    if not dst.is_float:
        return {"d": to_integer(v, as_float(a, src.fmt), dst)}
    rm, sort = rounding(v.rnd), fp_sort(dst.fmt)
    if not src.is_float:
        x = (z3.fpSignedToFP if src.kind is Kind.SIGNED else z3.fpUnsignedToFP)(rm, a, sort)
        out = z3.fpToIEEEBV(x)  # an integer is never NaN
    else:
        x = as_float(a, src.fmt)
        x = z3.fpRoundToIntegral(rm, x) if v.rnd in INT_ROUNDINGS else z3.fpToFP(rm, x, sort)
        out = to_bits(x, free_nan(_nan_name(v), a, dst.fmt))
    if _flushes(v, dst, opts):
        out = flush_bits(out, dst.fmt)
    return {"d": saturate(out, dst.fmt) if v.sat else out}


def _nan_name(v: Variant) -> str:
    """One free NaN per conversion and rounding, whatever .ftz/.sat say (.sat maps NaN to
    0 anyway): an exact widening shares glue's name, cvt.f64.f32."""
    rnd = f"{v.rnd or 'rn'}." if v.rnd or v.family == "convert" and not _widens(v) else ""
    return f"cvt.{rnd}{v.dtype}.{v.atype}"


def _widens(v: Variant) -> bool:
    a, d = v.atype.fmt, v.dtype.fmt
    return d.ebits >= a.ebits and d.sbits >= a.sbits


def _flushes(v: Variant, t: PtxType, opts: Options) -> bool:
    return t.name == "f32" and (v.ftz or opts.sm_1x)


def to_integer(v: Variant, x: z3.FPRef, dst: PtxType) -> z3.BitVecRef:
    """x rounded to an integer by .rni/.rzi/.rmi/.rpi, clamped to dst's range; NaN -> 0."""
    n, signed = dst.width, dst.kind is Kind.SIGNED
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
    r = z3.fpRoundToIntegral(rounding(v.rnd), x)
    # the bounds as floats of x's format: 2**k rounds up to +inf where the format has no
    # such value, and every finite r is then below it
    below = z3.fpLEQ(r, z3.FPVal(lo, x.sort())) if signed else z3.fpLT(r, z3.FPVal(0, x.sort()))
    above = z3.fpGEQ(r, z3.FPVal(hi + 1, x.sort()))
    exact = (z3.fpToSBV if signed else z3.fpToUBV)(z3.RTZ(), r, z3.BitVecSort(n))
    return z3.If(z3.fpIsNaN(x), z3.BitVecVal(0, n),
                 z3.If(below, z3.BitVecVal(lo, n), z3.If(above, z3.BitVecVal(hi, n), exact)))
