"""LangRef "Standard C/C++ Library Intrinsics", "Bit Manipulation Intrinsics" and
"Saturation Arithmetic Intrinsics", one lane at a time: each takes its arguments' bits
and returns (bits, poison). A vector call applies the lane function to every lane."""

from __future__ import annotations

from collections.abc import Callable

import z3

from ..isa.types import FloatFormat
from ..sem.sorts import is_nan
from . import floating as fl
from .values import FALSE, Choices, some_nan

BitVec = z3.BitVecRef
Result = tuple[BitVec, z3.BoolRef]


# ---- integer ------------------------------------------------------------------------------

def _min_max(pick: Callable) -> Callable:
    return lambda a, b: (z3.If(pick(a, b), a, b), FALSE)


def abs_(a: BitVec, is_int_min_poison: int) -> Result:
    """"If the first argument is INT_MIN, then the result is also INT_MIN if
    is_int_min_poison == 0 and poison otherwise." """
    int_min = z3.BitVecVal(1 << (a.size() - 1), a.size())
    poison = a == int_min if is_int_min_poison else FALSE
    return z3.If(a < 0, -a, a), poison


def fshl(a: BitVec, b: BitVec, c: BitVec) -> Result:
    """"the first two values are concatenated as { %a : %b } (%a is the most significant
    bits of the wide value), the combined value is shifted left, and the most significant
    bits are extracted ... the shift argument is treated as an unsigned amount modulo the
    element size" """
    w = a.size()
    wide = z3.Concat(a, b) << z3.ZeroExt(w, z3.URem(c, w))
    return z3.Extract(2 * w - 1, w, wide), FALSE


def fshr(a: BitVec, b: BitVec, c: BitVec) -> Result:
    """"... the combined value is shifted right, and the least significant bits are
    extracted" """
    w = a.size()
    wide = z3.LShR(z3.Concat(a, b), z3.ZeroExt(w, z3.URem(c, w)))
    return z3.Extract(w - 1, 0, wide), FALSE


def _clamped(left: bool) -> Callable:
    def shift(a: BitVec, b: BitVec, c: BitVec) -> Result:
        """llvm.nvvm.fshl.clamp/fshr.clamp (NVPTXUsage): "very similar to 'llvm.fshl'
        ['llvm.fshr'], except the shift amount is clamped at the integer width (instead
        of modulo it)": a shift by the width or more gives %b (left) or %a (right)."""
        w = a.size()
        n = z3.ZeroExt(w, z3.If(z3.UGT(c, w), z3.BitVecVal(w, w), c))
        wide = z3.Concat(a, b)
        if left:
            return z3.Extract(2 * w - 1, w, wide << n), FALSE
        return z3.Extract(w - 1, 0, z3.LShR(wide, n)), FALSE
    return shift


def ctpop(a: BitVec) -> Result:
    """"returns the number of bits set in a value" """
    w = a.size()
    return sum((z3.ZeroExt(w - 1, z3.Extract(i, i, a)) for i in range(w)),
               z3.BitVecVal(0, w)), FALSE


def _count_zeros(bit_order: Callable[[int], range]) -> Callable:
    def count(a: BitVec, is_zero_poison: int) -> Result:
        """ctlz/cttz: "returns the total number of leading/trailing zeros ... If
        is_zero_poison == 0 and src == 0 the result is the size in bits of the type of
        src, otherwise poison." """
        w = a.size()
        n = z3.BitVecVal(w, w)
        for k, i in reversed(list(enumerate(bit_order(w)))):
            n = z3.If(z3.Extract(i, i, a) == 1, z3.BitVecVal(k, w), n)
        return n, (a == 0) if is_zero_poison else FALSE
    return count


def bswap(a: BitVec) -> Result:
    """"returns a value that has the high and low byte of the input swapped" (and so on
    for every byte: the bytes in reverse order); the width is a multiple of 16."""
    return z3.Concat(*[z3.Extract(i + 7, i, a) for i in range(0, a.size(), 8)]), FALSE


def bitreverse(a: BitVec) -> Result:
    """"reverses the bitpattern of an integer value" """
    w = a.size()
    return (z3.Concat(*[z3.Extract(i, i, a) for i in range(w)]) if w > 1 else a), FALSE


def _saturating(op: Callable, signed: bool) -> Callable:
    def sat(a: BitVec, b: BitVec) -> Result:
        """{s,u}{add,sub}.sat: "the result is the exact sum/difference ... clamped to the
        range of the type" (its minimum or maximum value on overflow)."""
        w = a.size()
        ext = (lambda x: z3.SignExt(2, x)) if signed else (lambda x: z3.ZeroExt(2, x))
        exact = op(ext(a), ext(b))  # exact in w+2 bits, read as signed
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
        return z3.If(exact > hi, z3.BitVecVal(hi, w),
                     z3.If(exact < lo, z3.BitVecVal(lo, w), z3.Extract(w - 1, 0, exact))), FALSE
    return sat


INTEGER: dict[str, Callable[..., Result]] = {
    "smin": _min_max(lambda a, b: a < b), "smax": _min_max(lambda a, b: a > b),
    "umin": _min_max(z3.ULT), "umax": _min_max(z3.UGT),
    "abs": abs_, "fshl": fshl, "fshr": fshr, "ctpop": ctpop,
    "ctlz": _count_zeros(lambda w: range(w - 1, -1, -1)),
    "cttz": _count_zeros(range),
    "bswap": bswap, "bitreverse": bitreverse,
    "sadd.sat": _saturating(lambda a, b: a + b, signed=True),
    "uadd.sat": _saturating(lambda a, b: a + b, signed=False),
    "ssub.sat": _saturating(lambda a, b: a - b, signed=True),
    "usub.sat": _saturating(lambda a, b: a - b, signed=False),
    # NVVM intrinsics of their own meaning (the host JIT cannot run them)
    "nvvm.fshl.clamp.i32": _clamped(left=True), "nvvm.fshr.clamp.i32": _clamped(left=False),
}
IMMEDIATE = {"abs": 1, "ctlz": 1, "cttz": 1}  # trailing i1 immarg arguments
# "Saturating floating-point to integer conversions": a float lane to an integer lane,
# clamped (floating.fptoi_sat); the value: signed
FLOAT_TO_INT_SAT = {"fptosi.sat": True, "fptoui.sat": False}


# ---- floating point ----------------------------------------------------------------------

def _sign(x: BitVec) -> BitVec:
    top = x.size() - 1
    return z3.Extract(top, top, x)


def fabs(a: BitVec, fmt: FloatFormat, ch: Choices) -> BitVec:
    """"returns the same value as the input with the sign bit cleared" (NaN kept)."""
    return z3.Concat(z3.BitVecVal(0, 1), z3.Extract(a.size() - 2, 0, a))


def copysign(a: BitVec, b: BitVec, fmt: FloatFormat, ch: Choices) -> BitVec:
    """"returns a value with the magnitude of the first operand and the sign of the
    second operand" """
    return z3.Concat(_sign(b), z3.Extract(a.size() - 2, 0, a))


# An order on floats: (the IEEE compare, whether two zeros, negative or not, are in that
# order). Booleans, not -1/1: a Python int in a term makes it Int-sorted, which no
# bit-vector solver of the portfolio reads.
LESS = (z3.fpLT, lambda negative_x, negative_y: z3.And(negative_x, z3.Not(negative_y)))
GREATER = (z3.fpGT, lambda negative_x, negative_y: z3.And(negative_y, z3.Not(negative_x)))


def _ordered_zero(order: tuple[Callable, Callable]) -> Callable:
    """Whether `x` comes first in `order`, with -0.0 less than +0.0."""
    fp_pick, zero_pick = order

    def pick(x: z3.FPRef, y: z3.FPRef) -> z3.BoolRef:
        zeros = z3.And(z3.fpIsZero(x), z3.fpIsZero(y))
        signs = zero_pick(z3.fpIsNegative(x), z3.fpIsNegative(y))
        return z3.Or(fp_pick(x, y), z3.And(zeros, signs))
    return pick


def signalling(bits: BitVec, fmt: FloatFormat) -> z3.BoolRef:
    """A NaN whose quiet bit (the fraction's first) is clear: an sNaN."""
    quiet = fmt.sbits - 2
    return z3.And(is_nan(bits, fmt), z3.Extract(quiet, quiet, bits) == 0)


def _num(order: tuple[Callable, Callable]) -> Callable:
    def minmaxnum(a: BitVec, b: BitVec, fmt: FloatFormat, ch: Choices) -> BitVec:
        """minnum/maxnum as LangRef states them since LLVM 22 (llvm/llvm-project#112852,
        re-landed by #170067, and #172012): IEEE-754-2008 minNum/maxNum "except that
        -0.0 < +0.0 for the purposes of this intrinsic"; "If either operand is a qNaN,
        returns the other non-NaN operand"; with an sNaN operand, "non-deterministically
        either returning NaN or treating sNaN as qNaN" (one choice per call); NaN when
        both are NaNs. (LLVM 8-20 said "If the operands compare equal, returns either
        one of the operands" and told no sNaN apart: docs/llvm.md.)"""
        x, y = fl.view(a, fmt), fl.view(b, fmt)
        snan_is_nan = ch.flag("minmax.snan")

        def other(nan: BitVec, number: BitVec) -> BitVec:
            return z3.If(z3.And(signalling(nan, fmt), snan_is_nan), some_nan(fmt), number)
        return z3.If(z3.And(z3.fpIsNaN(x), z3.fpIsNaN(y)), some_nan(fmt),
                     z3.If(z3.fpIsNaN(x), other(a, b), z3.If(z3.fpIsNaN(y), other(b, a),
                           z3.If(_ordered_zero(order)(x, y), a, b))))
    return minmaxnum


def _imum(order: tuple[Callable, Callable]) -> Callable:
    def minmax(a: BitVec, b: BitVec, fmt: FloatFormat, ch: Choices) -> BitVec:
        """minimum/maximum: "If either operand is a NaN, returns NaN. Otherwise returns
        the lesser/greater of the two arguments. -0.0 is considered to be less than +0.0
        for this intrinsic." """
        x, y = fl.view(a, fmt), fl.view(b, fmt)
        return z3.If(z3.Or(z3.fpIsNaN(x), z3.fpIsNaN(y)), some_nan(fmt),
                     z3.If(_ordered_zero(order)(x, y), a, b))
    return minmax


def _imumnum(order: tuple[Callable, Callable]) -> Callable:
    def minmaxnum(a: BitVec, b: BitVec, fmt: FloatFormat, ch: Choices) -> BitVec:
        """minimumnum/maximumnum: "If both operands are NaNs (including sNaN), returns
        qNaN. If one operand is NaN (including sNaN) and another operand is a number,
        return the number. Otherwise returns the lesser/greater of the two arguments.
        -0.0 is considered to be less than +0.0 for this intrinsic." """
        x, y = fl.view(a, fmt), fl.view(b, fmt)
        return z3.If(z3.And(z3.fpIsNaN(x), z3.fpIsNaN(y)), some_nan(fmt),
                     z3.If(z3.fpIsNaN(x), b, z3.If(z3.fpIsNaN(y), a,
                           z3.If(_ordered_zero(order)(x, y), a, b))))
    return minmaxnum


MINMAX = frozenset({"minnum", "maxnum", "minimum", "maximum", "minimumnum", "maximumnum"})


def nsz_either_zero(a: BitVec, b: BitVec, bits: BitVec, fmt: FloatFormat,
                    ch: Choices) -> BitVec:
    """`nsz` on a min/max call (LangRef, llvm/llvm-project#172012): with "one +0.0 and one
    -0.0 operand [it] may non-deterministically return either operand. Contrary to normal
    nsz semantics, if both operands have the same sign, the result must also have the
    same sign": not the any-signed zero of `floating.nsz`. Two zeros give either operand
    (of one sign, that sign)."""
    x, y = fl.view(a, fmt), fl.view(b, fmt)
    zeros = z3.And(z3.fpIsZero(x), z3.fpIsZero(y))
    return z3.If(zeros, z3.If(ch.flag("minmax.nsz"), a, b), bits)


def _rounded(op: Callable) -> Callable:
    def arith(*args):
        *bits, fmt, ch = args
        return fl.result_bits(op(*[fl.view(b, fmt) for b in bits], ch), fmt)
    return arith


def _fmuladd(a, b, c, ch: Choices) -> z3.FPRef:
    """"equivalent to the expression a * b + c, except that it is unspecified whether
    rounding will be performed between the multiplication and addition steps" """
    fused = z3.fpFMA(fl.RNE, a, b, c)
    return z3.If(ch.flag("fmuladd.fused"), fused,
                 z3.fpAdd(fl.RNE, z3.fpMul(fl.RNE, a, b), c))


FLOAT: dict[str, Callable[..., BitVec]] = {
    "fabs": fabs, "copysign": copysign,
    "minnum": _num(LESS), "maxnum": _num(GREATER),
    "minimum": _imum(LESS), "maximum": _imum(GREATER),
    "minimumnum": _imumnum(LESS), "maximumnum": _imumnum(GREATER),
    # fma: "the fused multiply-add operation ... without intermediate rounding"
    "fma": _rounded(lambda a, b, c, ch: z3.fpFMA(fl.RNE, a, b, c)),
    "fmuladd": _rounded(_fmuladd),
    # sqrt: "the result matches a conforming libm implementation" (correctly rounded)
    "sqrt": _rounded(lambda a, ch: z3.fpSqrt(fl.RNE, a)),
    # "returns the same value as the libm" floor/ceil/trunc ("rounded towards negative
    # infinity / positive infinity / zero to the nearest integer"), round ("halfway
    # cases away from zero"), roundeven ("halfway cases to even"); rint/nearbyint round
    # "using the current rounding mode" (nearest even in the default environment)
    **{name: _rounded(lambda a, ch, mode=mode: z3.fpRoundToIntegral(mode, a))
       for name, mode in (("floor", z3.RTN()), ("ceil", z3.RTP()), ("trunc", z3.RTZ()),
                          ("round", z3.RNA()), ("roundeven", z3.RNE()),
                          ("rint", z3.RNE()), ("nearbyint", z3.RNE()))},
}
# Intrinsics whose value is a bit operation on the operands: no fast-math NaN result.
FLOAT_BITWISE = frozenset({"fabs", "copysign"})
