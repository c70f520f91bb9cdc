"""LangRef floating-point instructions, `fcmp`, the float casts and fast-math flags, one
lane at a time. Lanes are bits; the FP view is taken here (sem/sorts.py's `as_float`).
An arithmetic NaN result is any NaN (LangRef "Behavior of Floating-Point NaN values");
`fneg`, and the intrinsics fabs/copysign, are bit operations that keep NaN payloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from ..isa.types import FloatFormat
from ..sem.arith import flush_bits
from ..sem.sorts import as_float, fp_sort, is_nan, widen
from .values import some_nan

RNE = z3.RNE()
RTZ = z3.RTZ()


def result_bits(r: z3.FPRef, fmt: FloatFormat) -> z3.BitVecRef:
    """A rounded result's bits; a NaN result is any NaN (`some_nan` stands for it: the
    lane is marked, see values.float_lane)."""
    return z3.If(z3.fpIsNaN(r), some_nan(fmt), z3.fpToIEEEBV(r))


# "The value produced is the floating-point sum/difference/product/quotient of the two
# operands" (IEEE-754, round to nearest even in the default environment).
BINARY: dict[str, Callable[[z3.FPRef, z3.FPRef], z3.FPRef]] = {
    "fadd": lambda a, b: z3.fpAdd(RNE, a, b),
    "fsub": lambda a, b: z3.fpSub(RNE, a, b),
    "fmul": lambda a, b: z3.fpMul(RNE, a, b),
    "fdiv": lambda a, b: z3.fpDiv(RNE, a, b),
}


def fneg(a: z3.BitVecRef) -> z3.BitVecRef:
    """"The value produced is a copy of the operand with its sign bit flipped." """
    return a ^ z3.BitVecVal(1 << (a.size() - 1), a.size())


# fcmp: "It returns true if the operands are unordered (either is QNAN) or ..." Each
# predicate is the set of outcomes (uno, lt, eq, gt) for which it yields true.
FCMP: dict[str, frozenset[str]] = {
    "false": frozenset(), "true": frozenset({"uno", "lt", "eq", "gt"}),
    "oeq": frozenset({"eq"}), "ogt": frozenset({"gt"}), "oge": frozenset({"gt", "eq"}),
    "olt": frozenset({"lt"}), "ole": frozenset({"lt", "eq"}), "one": frozenset({"lt", "gt"}),
    "ord": frozenset({"lt", "eq", "gt"}),
    "ueq": frozenset({"uno", "eq"}), "ugt": frozenset({"uno", "gt"}),
    "uge": frozenset({"uno", "gt", "eq"}), "ult": frozenset({"uno", "lt"}),
    "ule": frozenset({"uno", "lt", "eq"}), "une": frozenset({"uno", "lt", "gt"}),
    "uno": frozenset({"uno"}),
}
OUTCOMES: dict[str, Callable[[z3.FPRef, z3.FPRef], z3.BoolRef]] = {
    "uno": lambda a, b: z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)),
    "lt": z3.fpLT, "eq": z3.fpEQ, "gt": z3.fpGT,
}


def fcmp(predicate: str, a: z3.FPRef, b: z3.FPRef) -> z3.BoolRef:
    return z3.Or(*[OUTCOMES[o](a, b) for o in sorted(FCMP[predicate])]) \
        if FCMP[predicate] else z3.BoolVal(False)


# Fast-math flags that make a value poison: "nnan: No NaNs - Allow optimizations to assume
# the arguments and result are not NaN. If an argument is a nan, or the result would be a
# nan, it produces a poison value instead." ninf likewise for +/-Inf.
FAST_MATH_POISON: dict[str, Callable[[z3.FPRef], z3.BoolRef]] = {
    "nnan": z3.fpIsNaN,
    "ninf": z3.fpIsInf,
}
# Flags that license rewrites across instructions (reassociation, approximate functions
# and reciprocals): a single instruction's value cannot say what they allow, so they are
# refused where they can change a value (not on fcmp or select). `contract` is modelled:
# see `fused`.
FAST_MATH_REFUSED = frozenset({"reassoc", "afn", "arcp"})


def fused(x: z3.FPRef, y: z3.FPRef, z: z3.FPRef) -> z3.FPRef:
    """contract: "Allow floating-point contraction (e.g. fusing a multiply followed by an
    addition into a fused multiply-and-add). This does not enable reassociation": an
    fadd/fsub of a `contract` fmul may be x*y+z rounded once."""
    return z3.fpFMA(RNE, x, y, z)


def fast_math_poison(flags: frozenset[str], values: list[z3.FPRef]) -> z3.BoolRef:
    return z3.Or(z3.BoolVal(False), *[FAST_MATH_POISON[f](v) for f in sorted(flags)
                                      if f in FAST_MATH_POISON for v in values])


def nsz(bits: z3.BitVecRef, sign: z3.BitVecRef) -> z3.BitVecRef:
    """"nsz: No Signed Zeros - Allow optimizations to treat the sign of a zero argument or
    zero result as insignificant": a zero result has either sign (`sign`, a choice)."""
    top = bits.size() - 1
    magnitude = z3.Extract(top - 1, 0, bits)
    return z3.If(magnitude == 0, z3.Concat(sign, magnitude), bits)


# Casts between float formats and integers.
def fptrunc(a: z3.FPRef, fmt: FloatFormat) -> z3.FPRef:
    """"rounded according to the current rounding mode" (nearest even by default)."""
    return z3.fpToFP(RNE, a, fp_sort(fmt))


def fpext(bits: z3.BitVecRef, src: FloatFormat, fmt: FloatFormat) -> z3.FPRef:
    """"the value is exactly representable in the destination type": the exact widening
    of the bits (sem.sorts.widen: the terms of PTX's cvt.f64.f32, so that a refinement
    query compares one term with itself, not two conversion circuits); a NaN for a NaN."""
    return z3.If(is_nan(bits, src), z3.fpNaN(fp_sort(fmt)), as_float(widen(bits, src, fmt), fmt))


def fptoi(a: z3.FPRef, width: int, signed: bool) -> tuple[z3.BitVecRef, z3.BoolRef]:
    """fptosi/fptoui: "converts ... rounding towards zero ... If the value cannot fit in
    ty2, the result is a poison value." (NaN and infinities never fit.)"""
    t = z3.fpRoundToIntegral(RTZ, a)
    # the bounds are powers of two (and -1): exact in the format, or an infinity beyond it
    lo = z3.FPVal(-(2.0 ** (width - 1)) if signed else -1.0, a.sort())
    hi = z3.FPVal(2.0 ** (width - 1) if signed else 2.0 ** width, a.sort())
    fits = z3.And(z3.Not(z3.fpIsNaN(a)), z3.Not(z3.fpIsInf(a)),
                  z3.fpGEQ(t, lo) if signed else z3.fpGT(t, lo), z3.fpLT(t, hi))
    # of `t`, not of `a` (the same value: t is a rounded toward zero), as PTX's
    # cvt.rzi writes it: the refinement query then holds one conversion term, not two
    bits = (z3.fpToSBV if signed else z3.fpToUBV)(RTZ, t, z3.BitVecSort(width))
    return bits, z3.Not(fits)


def fptoi_sat(a: z3.FPRef, width: int, signed: bool) -> z3.BitVecRef:
    """llvm.fptosi.sat/fptoui.sat: "If the argument is any NaN, zero is returned. If the
    argument is smaller than the smallest representable integer of the result type, the
    smallest representable integer is returned. If the argument is larger than the
    largest representable integer of the result type, the largest representable integer
    is returned. Otherwise, the result of rounding the argument towards zero is returned."
    Out of range, the sign says which end (an infinity included)."""
    bits, out_of_range = fptoi(a, width, signed)
    lo, hi = (1 << width - 1, (1 << width - 1) - 1) if signed else (0, (1 << width) - 1)
    end = z3.If(z3.fpIsNegative(a), z3.BitVecVal(lo, width), z3.BitVecVal(hi, width))
    return z3.If(z3.fpIsNaN(a), z3.BitVecVal(0, width), z3.If(out_of_range, end, bits))


def itofp(a: z3.BitVecRef, fmt: FloatFormat, signed: bool) -> z3.FPRef:
    """sitofp/uitofp: "the value is rounded according to the current rounding mode"."""
    to = z3.fpSignedToFP if signed else z3.fpUnsignedToFP
    return to(RNE, a, fp_sort(fmt))


def view(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.FPRef:
    return as_float(bits, fmt)


# Denormal modes: the function attributes "denormal-fp-math" (every float type) and
# "denormal-fp-math-f32" (float and vectors of float; it "overrides" the first). LangRef:
# "This is a comma separated pair. ... The first entry indicates the flushing mode for the
# result of floating point operations. The second indicates the handling of denormal inputs
# to floating point instructions. ... if the second value is omitted, both input and output
# modes will assume the same mode. If this is attribute is not specified, the default is
# "ieee,ieee"." "dynamic" (whatever the hardware's mode is) is refused.
DENORMAL_KINDS = ("ieee", "preserve-sign", "positive-zero")


@dataclass(frozen=True)
class Denormal:
    output: str = "ieee"
    input: str = "ieee"


IEEE = Denormal()


def denormal_mode(value: str) -> Denormal | None:
    """The mode an attribute's value names; None if ptxsmt does not model it."""
    parts = [p.strip() for p in value.split(",")] if value else ["ieee"]
    if len(parts) == 1:
        parts *= 2
    if len(parts) != 2 or any(p not in DENORMAL_KINDS for p in parts):
        return None
    return Denormal(*parts)


def subnormal(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.BoolRef:
    """A biased exponent of 0 and a fraction that is not: a denormal (subnormal) value."""
    frac = fmt.sbits - 1
    return z3.And(z3.Extract(fmt.width - 2, frac, bits) == 0,
                  z3.Extract(frac - 1, 0, bits) != 0)


def _flush(bits: z3.BitVecRef, fmt: FloatFormat, kind: str) -> z3.BitVecRef:
    """`bits` with a denormal made the zero it becomes: "preserve-sign" keeps its sign
    ("the sign of a flushed-to-zero number is preserved in the sign of 0": PTX's .ftz,
    `flush_bits`), "positive-zero" gives +0.0."""
    if kind == "positive-zero":
        return z3.If(subnormal(bits, fmt), z3.BitVecVal(0, bits.size()), bits)
    return flush_bits(bits, fmt)


def flush_input(bits: z3.BitVecRef, fmt: FloatFormat, mode: Denormal) -> z3.BitVecRef:
    """"If the input mode is "preserve-sign", or "positive-zero", a floating-point
    operation must treat any input denormal value as zero": always."""
    if mode.input == "ieee":
        return bits
    return _flush(bits, fmt, mode.input)


def flushed_output(bits: z3.BitVecRef, fmt: FloatFormat, mode: Denormal) -> z3.BitVecRef | None:
    """"If the output mode is "preserve-sign", or "positive-zero", denormal outputs may be
    flushed to zero by standard floating-point operations. It is not mandated that
    flushing to zero occurs, but if a denormal output is flushed to zero, it must respect
    the sign mode": the value a result may be instead (`Lane.flushed`), None if none."""
    if mode.output == "ieee":
        return None
    return _flush(bits, fmt, mode.output)
