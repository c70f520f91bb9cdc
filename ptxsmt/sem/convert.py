"""9.7.9.21 cvt that rounds: between float formats (.rn/.rz/.rm/.rp, and .rni/.rzi/.rmi/.rpi
to an integral value of the same format), from floats to integers (.rni/.rzi/.rmi/.rpi)
and from integers to floats (.rn/.rz/.rm/.rp), with .ftz and .sat. The exact widenings
and cvt between integers are glue's.

    "For float-to-integer conversions, the result is clamped to the destination range by
    default; i.e, .sat is redundant"; a NaN converts as silicon does (NAN_TO_INTEGER).
    ".ftz: For .f32 inputs and outputs, flushes subnormal ... to sign-preserving zero"
    (sm_1x: always); ".sat: For floating-point destination types, .sat limits the result
    to the range [0.0, 1.0]. NaN results are flushed to positive zero."
The NaN of a float-to-float cvt is a free NaN of the instruction and its input.
"""

from __future__ import annotations

import z3

from ..isa.opcodes import INT_ROUNDINGS
from ..isa.types import BF16, F16, F32, FloatFormat, Kind, PtxType
from ..isa.variants import Variant
from .arith import flush_bits
from .floatarith import saturate
from .options import Options
from .sorts import as_float, fp_sort, free_nan, free_value, narrowed, rounding, to_bits


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
        x = z3.fpRoundToIntegral(rm, x) if v.rnd in INT_ROUNDINGS else narrowed(rm, x, dst.fmt)
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


# The integer a NaN converts to. The text says nothing of NaN; an H200 (sm_90, ptxas 13.0;
# Spec notes 11) converts in 32 bits unless the source or the destination has 64 (F2I.F64,
# F2I.S64), and gives 0 from a 32-bit conversion, the destination's sign bit alone (its
# MININT bits, also for .u16/.u64) from a 64-bit one, with or without .sat. By the
# conversion's width; n is the destination's.
NAN_TO_INTEGER = {32: lambda n: 0, 64: lambda n: 1 << (n - 1)}


def conversion_width(src: PtxType, dst: PtxType) -> int:
    """The width the hardware converts in: 64 if either side has 64 bits, else 32."""
    return max(32, src.width, dst.width)


def to_integer(v: Variant, x: z3.FPRef, dst: PtxType) -> z3.BitVecRef:
    """x rounded to an integer by .rni/.rzi/.rmi/.rpi, clamped to dst's range; a NaN
    gives NAN_TO_INTEGER's value."""
    n, signed = dst.width, dst.kind is Kind.SIGNED
    nan = NAN_TO_INTEGER[conversion_width(v.atype, dst)](n)
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if signed else (0, (1 << n) - 1)
    r = z3.fpRoundToIntegral(rounding(v.rnd), x)
    # the bounds as floats of x's format: 2**k rounds up to +inf where the format has no
    # such value, and every finite r is then below it
    below = z3.fpLEQ(r, z3.FPVal(lo, x.sort())) if signed else z3.fpLT(r, z3.FPVal(0, x.sort()))
    above = z3.fpGEQ(r, z3.FPVal(hi + 1, x.sort()))
    exact = (z3.fpToSBV if signed else z3.fpToUBV)(z3.RTZ(), r, z3.BitVecSort(n))
    return z3.If(z3.fpIsNaN(x), z3.BitVecVal(nan, n),
                 z3.If(below, z3.BitVecVal(lo, n), z3.If(above, z3.BitVecVal(hi, n), exact)))


# 9.7.9.21 cvt to the formats of PTX 7.0 (sm_80), outside the variant catalogue (two
# sources, .relu, .tf32): function/instructions.py reads them, llvm/nvvm.py's intrinsics
# name them.
#     cvt.frnd2{.relu}.f16.f32    d, a;     cvt.frnd2{.relu}.f16x2.f32    d, a, b;
#     cvt.frnd2{.relu}.bf16.f32   d, a;     cvt.frnd2{.relu}.bf16x2.f32   d, a, b;
#     cvt.rna.tf32.f32            d, a;     .frnd2 = { .rn, .rz }
#     if (/* inst type is .f16x2 or .bf16x2 */) { d[31:16] = convert(a); d[15:0] = convert(b); }
#     else { d = convert(a); }
# ".relu: For .f16, .f16x2, .bf16, .bf16x2 ... and .tf32 destination types, .relu clamps
# the result to 0 if negative. NaN results are converted to canonical NaN." Read here: a
# negative number becomes +0.0; -0.0 ("negative"?) is left open between -0.0 and +0.0,
# and so is which NaN (the text does not spell the canonical NaN of each format).
NARROW_FORMATS = {"f16": F16, "bf16": BF16}
TF32 = FloatFormat("tf32", 8, 11)  # f32's exponent, a 10-bit fraction: an f32's high 19 bits


def narrow(spelling: str, rnd: str, relu: bool, fmt: FloatFormat,
           a: z3.BitVecRef) -> z3.BitVecRef:
    """convert(a): the .f32 `a` rounded by .rn (nearest even) or .rz to `fmt`."""
    r = narrowed(rounding(rnd), as_float(a, F32), fmt)
    bits = to_bits(r, free_nan(spelling, a, fmt))
    if not relu:
        return bits
    zero = z3.BitVecVal(0, fmt.width)
    signed_zero = free_value(f"{spelling} -0", a, 1) == 1  # -0.0: kept or cleared
    return z3.If(z3.fpIsNegative(r),
                 z3.If(z3.Or(z3.Not(z3.fpIsZero(r)), signed_zero), zero, bits), bits)


def narrow_pair(spelling: str, rnd: str, relu: bool, fmt: FloatFormat,
                a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """d[31:16] = convert(a); d[15:0] = convert(b)."""
    return z3.Concat(narrow(spelling, rnd, relu, fmt, a), narrow(spelling, rnd, relu, fmt, b))


def to_tf32(spelling: str, a: z3.BitVecRef) -> z3.BitVecRef:
    """cvt.rna.tf32.f32: ".rna: rounding to nearest, with ties away from zero" to tf32,
    held in a .b32 as an f32 whose low 13 bits the text does not give (left open)."""
    r = z3.fpToFP(z3.RNA(), as_float(a, F32), fp_sort(TF32))
    high = to_bits(r, free_nan(spelling, a, TF32))
    return z3.Concat(high, free_value(f"{spelling} low", a, F32.width - TF32.width))


def sm80_form(spelling: str, sources: list[z3.BitVecRef]) -> z3.BitVecRef | None:
    """d of `cvt.rn.relu.f16x2.f32 d, a, b` and the other forms above, by spelling; None
    for any other cvt (or the wrong number of sources)."""
    opcode, rnd, *mods, dst, src = spelling.split(".") if spelling.count(".") >= 3 else [""] * 4
    if opcode != "cvt" or src != "f32" or mods not in ([], ["relu"]):
        return None
    lanes = 2 if dst.endswith("x2") else 1
    fmt = NARROW_FORMATS.get(dst.removesuffix("x2"))
    if fmt is not None and rnd in ("rn", "rz") and len(sources) == lanes:
        relu = mods == ["relu"]
        if lanes == 2:
            return narrow_pair(spelling, rnd, relu, fmt, *sources)
        return narrow(spelling, rnd, relu, fmt, sources[0])
    if (rnd, dst, mods, len(sources)) == ("rna", "tf32", [], 1):
        return to_tf32(spelling, sources[0])
    return None
