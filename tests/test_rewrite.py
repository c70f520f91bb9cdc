"""Sweeping's local rewrites (ptxsmt/smt/sweeping/rewrite.py): each rule fires where it should,
gives a term equal to the one it replaces for every value of its constants (proved by
z3 on fresh constants), and leaves alone what only looks like its pattern."""

from __future__ import annotations

import itertools
import random

import ml_dtypes
import numpy as np
import pytest
import z3

from ptxsmt.isa.syntax import parse_variant
from ptxsmt.isa.types import BF16, F16, F32, F64
from ptxsmt.sem.arith import fabs, flush_bits, fneg
from ptxsmt.sem.sorts import fp_sort, free_nan, is_nan, to_bits
from ptxsmt.smt.sweeping import float_facts
from ptxsmt.smt.sweeping.known import known_zeros, sign_bits
from ptxsmt.smt.sweeping.order import structural
from ptxsmt.smt.sweeping.rewrite import RULES, _identity_arm, _remainder, normal

FORMATS = (F16, BF16, F32, F64)


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _narrowed_cases() -> list[tuple[str, z3.ExprRef]]:
    a, b = z3.BitVecs("a8 b8", 8)
    x = z3.BitVec("x16", 16)
    return [("zero extension of a remainder", z3.ZeroExt(8, z3.URem(a, b))),
            ("zero extension of a quotient by a nonzero divisor",
             z3.ZeroExt(8, z3.UDiv(a, b | 1))),
            ("zero extension of low bits known zero above",
             z3.ZeroExt(8, z3.Extract(7, 0, z3.UDiv(x, 257)))),
            ("low bits of a zero extension", z3.Extract(3, 0, z3.ZeroExt(4, a))),
            ("all the bits of a zero extension", z3.Extract(7, 0, z3.ZeroExt(4, a))),
            ("a zero extension less extended", z3.Extract(9, 0, z3.ZeroExt(4, a))),
            ("low bits of a division of zero extensions",
             z3.Extract(7, 0, z3.UDiv(z3.ZeroExt(8, a), z3.ZeroExt(8, b)))),
            ("fewer low bits of a division of zero extensions",
             z3.Extract(4, 0, z3.UDiv(z3.ZeroExt(8, a), z3.ZeroExt(8, b)))),
            ("fewer low bits of a remainder of zero extensions",
             z3.Extract(2, 0, z3.URem(z3.ZeroExt(8, a), z3.ZeroExt(8, b)))),
            # operands one bit wider than the low bits: divided in the 9 bits they fit
            ("low bits of a division of a dividend one bit wider",
             z3.Extract(7, 0, z3.UDiv(z3.ZeroExt(7, z3.Extract(8, 0, x)), z3.ZeroExt(8, b)))),
            ("low bits of a signed division of a dividend one bit wider",
             z3.Extract(7, 0, z3.SignExt(7, z3.Extract(8, 0, x)) / z3.SignExt(8, b))),
            ("low bits of a signed division by a divisor one bit wider",
             z3.Extract(7, 0, z3.SRem(x, 127) / (x & 0xff))),
            ("a remainder as opt writes it beside a quotient", a - z3.UDiv(a, b) * b),
            ("a signed remainder as opt writes it", a - (a / b) * b),
            ("a remainder, the product first", (a / b) * b * 255 + a),
            ("low bits of a remainder of small values",
             z3.Extract(7, 0, z3.URem(z3.UDiv(x, 257), x & 0xff))),
            *_signed_cases(4)]


def _signed_cases(n: int) -> list[tuple[str, z3.ExprRef]]:
    """opt's narrowed signed division (`div.s16` of `cvt.s8` operands, `cvt.s32.s8` of
    the quotient) and the masks and extensions around it, n bits within 2n."""
    a, b = z3.BitVecs(f"a{n} b{n}", n)
    x = z3.BitVec(f"x{2 * n}", 2 * n)
    top = (1 << (n - 1)) - 1  # the greatest of n signed bits
    return [("low bits of a signed quotient of sign extensions",
             z3.Extract(n - 1, 0, z3.SignExt(n, a) / z3.SignExt(n, b))),
            ("low bits of a signed remainder of sign extensions",
             z3.Extract(n - 1, 0, z3.SRem(z3.SignExt(n, a), z3.SignExt(n, b)))),
            ("fewer low bits of a signed quotient of sign extensions",
             z3.Extract(n - 2, 0, z3.SignExt(n, a) / z3.SignExt(n, b))),
            ("fewer low bits of a signed remainder of sign extensions",
             z3.Extract(n - 2, 0, z3.SRem(z3.SignExt(n, a), z3.SignExt(n, b)))),
            ("low bits of a signed quotient of small values", z3.Extract(
                n - 1, 0, z3.SRem(x, top) / (z3.LShR(x, n + 2) | 1))),
            ("sign extension of a signed remainder", z3.SignExt(n, z3.SRem(a, b))),
            ("sign extension of a quotient by a divisor not negative",
             z3.SignExt(n, a / (b & top))),
            ("sign extension of a quotient of a dividend not the least",
             z3.SignExt(n, z3.SRem(a, 3) / b)),
            ("sign extension of low bits that are one", z3.SignExt(n, z3.Extract(
                n - 1, 0, z3.SRem(x, top)))),
            ("sign extension of low bits, extended less", z3.SignExt(1, z3.Extract(
                n - 1, 0, z3.SRem(x, top)))),
            ("sign extension of low bits, extended more", z3.SignExt(n + 1, z3.Extract(
                n - 1, 0, z3.SRem(x, top)))),
            ("zero extension of low bits, extended less", z3.ZeroExt(1, z3.Extract(
                n - 1, 0, z3.URem(x, top)))),
            ("sign extension of a value not negative", z3.SignExt(n, a & top)),
            ("low bits of a sign extension", z3.Extract(n - 2, 0, z3.SignExt(n, a))),
            ("a sign extension less extended", z3.Extract(n, 0, z3.SignExt(n, a))),
            ("low bits of low bits", z3.Extract(n - 2, 1, z3.Extract(2 * n - 2, 1, x))),
            ("low bits of an or with a numeral", z3.Extract(n - 1, 0, z3.ZeroExt(n, a) | 0x15)),
            ("zero extension of an and with a numeral",
             z3.ZeroExt(n, z3.Extract(n - 1, 0, z3.LShR(x, n)) & 6)),
            ("a remainder by a numeral, as `_linear` writes it",
             a + z3.BitVecVal(-3, n) * z3.UDiv(a, 3)),
            ("a signed remainder by a numeral", a + a / 3 * -3),
            ("a quotient of a dividend below the divisor", z3.UDiv(z3.URem(a, 3), 5)),
            ("a remainder of a dividend below the divisor", z3.URem(a & 3, 4)),
            ("a signed remainder of a dividend below the divisor", z3.SRem(a & 3, -5)),
            ("a signed quotient by the least numeral", (a & top) / (top + 1)),
            ("a remainder under a compare that bounds it",
             z3.If(z3.ULT(a, z3.URem(b, top)), z3.URem(a, top), b)),
            ("a quotient under a compare that bounds it",
             z3.If(z3.ULT(a, b & 3), z3.UDiv(a, 3), b)),
            ("a mask that keeps all a remainder may hold", z3.URem(a, b & 3 | 1) & 7),
            ("a nonzero value tested for zero", z3.BitVecVal(0, n) == (b | 1) & 7),
            ("a signed quotient of values not negative", (a & top) / (b & 3)),
            ("a signed remainder of values not negative", z3.SRem(a & top, z3.LShR(b, 1)))]


def _cases() -> list[tuple[str, z3.ExprRef]]:
    x, y = z3.BitVecs("x y", 32)
    c = z3.Bool("c")
    d, e = z3.Bools("d e")
    t, f = z3.BoolVal(True), z3.BoolVal(False)
    lo, hi = sorted((x, y), key=structural)
    b8 = z3.BitVec("b8", 8)
    out = [("full extract", z3.Extract(31, 0, x)),
           ("not not", z3.Not(z3.Not(c))),
           ("ite of not", z3.If(z3.Not(c), x, y)),
           ("ite of true", z3.If(t, x, y)),
           ("ite of false", z3.If(f, x, y)),
           ("ite of one value", z3.If(c, x, x)),
           ("a pair in either order", z3.If(z3.ULT(hi, lo), z3.Concat(hi, lo), z3.Concat(lo, hi))),
           ("c or not c", z3.Or(d, c, z3.Not(c))),
           ("c and not c", z3.And(z3.Not(c), d, c)),
           ("or of true", z3.Or(c, t)),
           ("and of false", z3.And(f, c)),
           ("and of true", z3.And(c, t, d)),
           ("and of true and one", z3.And(t, c)),
           ("or of false", z3.Or(f, c)),
           ("or absorbs and", z3.Or(z3.And(d, c, e), c)),
           ("and absorbs or", z3.And(d, z3.Or(e, d), c)),
           ("fold not", z3.Not(t)),
           ("fold compare", z3.ULT(z3.BitVecVal(3, 32), z3.BitVecVal(5, 32))),
           ("sum", x + y + x),
           ("sum of sums", normal(x + 7) + normal(y - x)),
           ("difference", x - normal(y + 3)),
           ("negation", -normal(x - y)),
           ("product by a constant", normal(x + y) * 277),
           ("shift by a constant", x << 3),
           ("shift out", x << 40),
           ("xor", normal(y ^ x ^ 5) ^ normal(x ^ 3)),
           ("and", normal(y & 0xff) & normal(x & y & 0xf0)),
           ("or with all ones", normal(x | y) | 0xffffffff),
           ("and of a right shift", z3.LShR(x, 4) & 0xffff00ff),
           ("the high bits of a right shift", z3.LShR(x, 22) & 768),
           ("all the bits of a right shift", z3.LShR(x, 22) & 0x3ff),
           ("xor of x and x masked", z3.LShR(y, 21) ^ x ^ normal(z3.LShR(y, 21) & 887)),
           ("xor of x and x masked to nothing", normal(z3.LShR(y, 21) ^ x) ^ normal(
               z3.LShR(y, 21) & 0x7ff)),
           ("shifted xor with a constant", normal(x ^ y ^ 734) << 8),
           ("shifted and with a constant", normal(x & 0xff) << 8),
           ("signed gt", x > y), ("signed ge", x >= y), ("signed le", x <= y),
           ("unsigned gt", z3.UGT(x, y)), ("unsigned ge", z3.UGE(x, y)),
           ("unsigned le", z3.ULE(x, y)),
           # nvcc's unoptimised spellings (their own tests: tests/test_rewrite_nvcc.py)
           ("a select of numerals tested",
            z3.If(c, z3.BitVecVal(1, 16), z3.BitVecVal(0, 16)) != 0),
           ("a sign test unsigned", z3.ULT(x, 1 << 31)),
           ("a flush of a flush", flush_bits(flush_bits(x, F32), F32)),
           ("or of disjoint bits", normal(x * 8192) | normal(47 + z3.LShR(y, 31))),
           ("or of a shifted value and a constant", normal(x << 4) | 3),
           # divisions by numerals, 8 bits (z3 bit-blasts the dividers)
           ("division of a division", z3.UDiv(z3.UDiv(b8, 3), 25)),
           ("division of a shift", z3.UDiv(z3.LShR(b8, 2), 3)),
           ("shift of a division", z3.LShR(z3.UDiv(b8, 5), 1)),
           ("shift of a shift", z3.LShR(z3.LShR(b8, 3), 2)),
           ("divided past the width", z3.UDiv(z3.UDiv(b8, 20), 20)),
           # opt's narrowed `div.u16` beside -O0's `div.u32` (8 bits within 16 here)
           *_narrowed_cases()]
    for fmt in (F32, F64):  # a float read back from a result's bits (`sem.sorts.to_bits`)
        a, b = (z3.FP(f"{n}{fmt.width}", fp_sort(fmt)) for n in "ab")
        r = z3.BitVec(f"r{fmt.width}", fmt.width)
        nan = free_nan("add NaN", r, fmt)
        out += [(f"float of a result {fmt.name}", z3.fpBVToFP(to_bits(a, nan), fp_sort(fmt))),
                (f"float of a select of results {fmt.name}",
                 z3.fpBVToFP(z3.If(c, to_bits(a, nan), r), fp_sort(fmt))),
                (f"float of a select of two results {fmt.name}", z3.fpBVToFP(z3.If(
                    c, to_bits(a, nan), to_bits(z3.fpMul(z3.RNE(), a, b), nan)), fp_sort(fmt)))]
    for fmt in (F32, F64):  # nested selects of results, -O0's select of a select
        a, b = (z3.FP(f"{n}{fmt.width}", fp_sort(fmt)) for n in "ab")
        r = z3.BitVec(f"r{fmt.width}", fmt.width)
        nan = free_nan("add NaN", r, fmt)
        out += [(f"float of a select of a select of a result {fmt.name}", z3.fpBVToFP(
            z3.If(d, z3.If(c, to_bits(a, nan), r), r), fp_sort(fmt)))]
    out += _identity_cases(c)
    for fmt in FORMATS:
        a, b = (z3.FP(n, fp_sort(fmt)) for n in "ab")
        out += [(f"gt {fmt.name}", z3.fpGT(a, b)), (f"geq {fmt.name}", z3.fpGEQ(a, b))]
        bits = z3.BitVec(f"bits{fmt.width}", fmt.width)
        test = is_nan(bits, fmt)
        out += [(f"nan test {fmt.name}", test),  # as the semantics writes it
                (f"nan test {fmt.name}, swapped", z3.And(*reversed(test.children()))),
                (f"nan test {fmt.name}, not-equal", z3.And(
                    test.arg(0), z3.Not(test.arg(1).arg(0) == test.arg(1).arg(1))))]
    wide = z3.BitVec("wide32", 32)  # an f16 in a .b32 parameter, its fields read from it
    out += [("nan test of an f16 in low bits", z3.And(z3.Extract(14, 10, wide) == 31,
                                                      z3.Extract(9, 0, wide) != 0))]
    return out


def _identity_cases(c: z3.BoolRef) -> list[tuple[str, z3.ExprRef]]:
    """opt's select-into-op (`x op ite(c, a, identity)`), and fp.add operands out of
    order (fp.mul's order is the same rule: `test_fp_mul_operands_in_order`)."""
    out = []
    for fmt in (F16, BF16):  # small: z3 proves each in a blink (f32, f64: below)
        sort, w = fp_sort(fmt), fmt.width
        # x before a (`order.structural`): the rewrite's x * a is then the term's own
        # order, and z3 need not prove a product commutes (slow, even on 16 bits)
        x, a = sorted((z3.FP(f"{n}{fmt.name}", sort) for n in "xa"), key=structural)
        bits = z3.BitVec(f"s{fmt.name}", w)
        minus_zero, one = z3.fpMinusZero(sort), z3.FPVal(1.0, sort)
        out += [(f"add of a select of -0 bits {fmt.name}", z3.fpAdd(z3.RNE(), x, z3.fpBVToFP(
                    z3.If(c, bits, z3.BitVecVal(1 << (w - 1), w)), sort))),
                (f"add of a select of -0, on the left {fmt.name}",
                 z3.fpAdd(z3.RNE(), z3.If(c, minus_zero, a), x)),
                (f"sub of a select of +0 {fmt.name}",
                 z3.fpSub(z3.RNE(), x, z3.If(c, a, z3.fpPlusZero(sort)))),
                # a constant multiplicand: z3 proves x * 1 of a variable x slowly (bit-
                # blasting a multiplier); every half's x * 1 is x: numpy, below
                (f"mul of a select of 1 {fmt.name}", z3.fpMul(
                    z3.RTN(), z3.FPVal(2.0, sort), z3.If(c, a, one)))]
    lo, hi = sorted(z3.FPs("p q", z3.Float16()), key=structural)
    return out + [("add out of order", z3.fpAdd(z3.RNE(), hi, lo)), *_float_fact_cases()]


def _float_fact_cases() -> list[tuple[str, z3.ExprRef]]:
    """The rules of `float_facts.py` (its own tests: tests/test_float_facts.py), one case
    an operator, in a small format (3 exponent bits, 4 of significand) that z3 decides
    quickly: a NaN test of y read as false where y's NaN reaches the value anyway, and a
    zero added under a comparison."""
    sort = z3.FPSort(3, 4)
    x, y, z, a = z3.FPs("fx fy fz fa", sort)
    c, rm = z3.Bool("fc"), z3.RNE()
    # y where y is a NaN or c holds, else y + x: a NaN exactly where y is, tested so
    s = z3.If(z3.Or(z3.fpIsNaN(y), c), y, z3.fpAdd(rm, y, x))
    zero = z3.fpBVToFP(z3.BitVecVal(0, 7), sort)
    planted = z3.fpAdd(rm, x, z3.If(c, a, zero))
    return [("NaN test in a select", s),
            ("NaN test under a sum", z3.fpAdd(rm, x, s)),
            ("NaN test under a difference", z3.fpSub(rm, x, s)),
            ("NaN test under a product", z3.fpMul(rm, x, s)),
            ("NaN test under a quotient", z3.fpDiv(rm, x, s)),
            ("NaN test under an fma", z3.fpFMA(rm, s, x, x)),
            ("NaN test under a square root", z3.fpSqrt(rm, s)),
            ("NaN test under a remainder", z3.fpRem(s, x)),
            ("NaN test under rounding to an integer", z3.fpRoundToIntegral(rm, s)),
            ("NaN test under a negation", z3.fpNeg(s)),
            ("NaN test under an absolute value", z3.fpAbs(s)),
            ("NaN test under a conversion", z3.fpToFP(rm, s, z3.FPSort(4, 5))),
            ("NaN test under both operands of a min", z3.fpMin(s, z3.fpNeg(s))),
            ("NaN test under both operands of a max", z3.fpMax(s, z3.fpNeg(s))),
            ("NaN test of a constant", z3.fpIsNaN(zero)),
            *[(f"zero added under {op.__name__}", op(z, planted))
              for op in (z3.fpEQ, z3.fpLT, z3.fpLEQ, z3.fpGT, z3.fpGEQ)]]


CASES = _cases()


@pytest.mark.parametrize("term", [t for _, t in CASES], ids=[n for n, _ in CASES])
def test_each_rule_fires_and_is_an_equality(term):
    out = normal(term)
    assert not out.eq(term)
    assert out.sort() == term.sort()
    assert _valid(out == term)


def test_every_rule_has_a_case():
    assert set(RULES) <= {t.decl().kind() for _, t in CASES}


def _bottom_up(t: z3.ExprRef) -> z3.ExprRef:
    """t with `normal` applied to every subterm, children first (as the sweep builds)."""
    if not z3.is_app(t) or t.num_args() == 0:
        return t
    return normal(t.decl()(*[_bottom_up(c) for c in t.children()]))


def _known_zero_cases() -> list[z3.BitVecRef]:
    x, y = z3.BitVecs("x y", 32)
    c = z3.Bool("c")
    return [z3.BitVecVal(0x1234, 32), x & 0xff00, (x << 3) | (y << 5), (x ^ 16) << 4,
            z3.LShR(x, 7) ^ z3.LShR(y, 9), x * 8 * (y << 2), (x << 2) * y,
            z3.If(c, x << 2, y << 5), z3.LShR(x, 28) + z3.LShR(y, 30) + 3,
            (x & 0xff) + (y & 0x7f) + (x & 0xf), z3.LShR(x & 0xf0, 2), z3.LShR(x, 40),
            (x & 0xff00) + y * 2, 47 + (x * 8192 & y), z3.UDiv(x, 65537),
            z3.UDiv(x & 0xffff, y | 1), z3.URem(x, y & 0xff | 4), z3.URem(x & 0xf, y),
            z3.ZeroExt(8, x), z3.Extract(15, 0, x & 0xff), z3.UDiv(z3.ZeroExt(1, x), 65537)]


@pytest.mark.parametrize("term", _known_zero_cases())
def test_bits_known_zero_are_zero(term):
    """`known_zeros`, which the or-as-sum rule trusts: every bit it calls zero is zero for
    every value of the term's constants, and it finds some where they are plain."""
    zeros = known_zeros(term)
    assert _valid(term & zeros == 0)
    assert zeros or z3.is_app_of(term, z3.Z3_OP_BADD)


@pytest.mark.parametrize("term", [z3.UDiv(z3.BitVec("b", 32) & 0xffff, z3.BitVec("d", 32)),
                                  z3.URem(z3.BitVec("b", 32), z3.BitVec("d", 32) & 0xff)])
def test_no_bits_known_zero_past_a_division_by_zero(term):
    """By 0 a quotient is all ones and a remainder its dividend: D may be 0."""
    assert _valid(term & known_zeros(term) == 0)


def _python(t: z3.ExprRef, env: dict[str, int]) -> int:
    """t's value by plain Python integer arithmetic (SMT-LIB's bit-vector operators:
    truncating signed division, by 0 a quotient of all ones or 1 and the dividend as
    remainder), its constants' values in `env`: independent of z3's evaluation."""
    if z3.is_true(t) or z3.is_false(t):
        return int(z3.is_true(t))
    if z3.is_app_of(t, z3.Z3_OP_ULT):
        return int(_python(t.arg(0), env) < _python(t.arg(1), env))
    if z3.is_app_of(t, z3.Z3_OP_EQ):
        return int(_python(t.arg(0), env) == _python(t.arg(1), env))
    if z3.is_app_of(t, z3.Z3_OP_ITE):
        return _python(t.arg(1) if _python(t.arg(0), env) else t.arg(2), env)
    w = t.size()
    mask = (1 << w) - 1
    if z3.is_bv_value(t):
        return t.as_long()
    if t.num_args() == 0:
        return env[str(t)]
    kind = t.decl().kind()
    v = [_python(c, env) for c in t.children()]
    kid = t.arg(0).size()

    def signed(u: int, width: int = w) -> int:
        return u - (1 << width) if u >> (width - 1) else u

    def quotient(a: int, b: int) -> int:
        q = abs(a) // abs(b)
        return q if (a < 0) == (b < 0) else -q

    if kind == z3.Z3_OP_EXTRACT:
        hi, lo = t.params()
        return v[0] >> lo & mask
    if kind == z3.Z3_OP_ZERO_EXT:
        return v[0]
    if kind == z3.Z3_OP_SIGN_EXT:
        return signed(v[0], kid) & mask
    if kind in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM):
        a, b = v
        if b == 0:
            return mask if kind == z3.Z3_OP_BUDIV else a
        return a // b if kind == z3.Z3_OP_BUDIV else a % b
    if kind in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM):
        a, b = signed(v[0]), signed(v[1])
        if b == 0:
            return (1 if a < 0 else -1) & mask if kind == z3.Z3_OP_BSDIV else v[0]
        q = quotient(a, b)
        return (q if kind == z3.Z3_OP_BSDIV else a - q * b) & mask
    ops = {z3.Z3_OP_BAND: lambda x, y: x & y, z3.Z3_OP_BOR: lambda x, y: x | y,
           z3.Z3_OP_BXOR: lambda x, y: x ^ y, z3.Z3_OP_BADD: lambda x, y: x + y,
           z3.Z3_OP_BMUL: lambda x, y: x * y}
    if kind in ops:
        out = v[0]
        for y in v[1:]:
            out = ops[kind](out, y)
        return out & mask
    if kind == z3.Z3_OP_BLSHR:
        return v[0] >> v[1] if v[1] < w else 0
    raise AssertionError(f"no plain-Python reading of {t.decl()}")


def _constants(t: z3.ExprRef) -> dict[str, int]:
    """t's free constants and their widths."""
    if t.num_args() == 0:
        return {} if z3.is_bv_value(t) else {str(t): t.size()}
    return {k: w for c in t.children() for k, w in _constants(c).items()}


@pytest.mark.parametrize("term", [t for _, t in _signed_cases(4)],
                         ids=[n for n, _ in _signed_cases(4)])
def test_signed_narrowing_rules_against_plain_python(term):
    """The rules for opt's narrowed signed division, 4 bits within 8, on every value
    of the term's constants: the rewritten term's value by plain Python arithmetic is
    the original's (INT_MIN / -1 and division by 0 among them)."""
    out = normal(term)
    assert not out.eq(term)
    widths = _constants(term)
    names = sorted(widths)
    for values in itertools.product(*(range(1 << widths[k]) for k in names)):
        env = dict(zip(names, values, strict=True))
        assert _python(out, env) == _python(term, env), (out, env)


def _one_bit_quotients() -> list[z3.BitVecRef]:
    a, b = z3.BitVecs("a1 b1", 1)
    p, q = z3.BitVecs("p2 q2", 2)
    return [z3.SignExt(7, a / z3.BitVecVal(0, 1)), z3.SignExt(7, a / (b & 0)),
            z3.SignExt(3, a / b), z3.SignExt(6, p / (q & 1)), z3.SignExt(6, p / z3.LShR(q, 1))]


@pytest.mark.parametrize("term", _one_bit_quotients())
def test_a_sign_extended_quotient_of_few_bits_keeps_its_value(term):
    """A one-bit dividend's quotient by 0 (its only divisor not negative) is 1 for the
    dividend 1 (-1), and that 1 is -1 in one bit: sign-extended, all ones, where the
    wide quotient -1 / 0 is 1. Every value by plain Python, rewritten or not; two bits
    rewrite (as `_widened` does for any width past one)."""
    out = normal(term)
    widths = _constants(term)
    names = sorted(widths)
    for values in itertools.product(*(range(1 << widths[k]) for k in names)):
        env = dict(zip(names, values, strict=True))
        assert _python(out, env) == _python(term, env), (out, env)
    assert out.eq(term) or term.arg(0).size() > 1


def _sign_cases() -> list[z3.BitVecRef]:
    a, b = z3.BitVecs("a b", 8)
    c = z3.Bool("c")
    return [z3.BitVecVal(0xfc, 8), z3.BitVecVal(5, 8), z3.SignExt(8, a) / z3.SignExt(8, b),
            z3.SRem(z3.SignExt(8, a), 100), z3.SRem(z3.ZeroExt(8, a), 100), z3.SRem(
                z3.SignExt(8, a), z3.SignExt(8, b)), z3.SignExt(8, a) / (z3.ZeroExt(8, b) | 1),
            z3.Extract(11, 0, z3.SignExt(8, a)), z3.SignExt(8, a) ^ z3.SignExt(8, b) * 3,
            z3.If(c, z3.SignExt(8, a), z3.SignExt(8, b) & 0xff00), z3.SignExt(8, a) & 0xfff0,
            z3.SRem(z3.SignExt(8, a), -128) | z3.SignExt(10, z3.Extract(5, 0, b))]


@pytest.mark.parametrize("term", _sign_cases())
def test_sign_bits_known_are_copies(term):
    """`sign_bits`, which the signed narrowing trusts: the top s bits it counts are each
    the sign bit (the term is the sign extension of its low w - s + 1 bits), and it
    counts more than one for each but the xor of a product (whose count is 1)."""
    s, w = sign_bits(term), term.size()
    assert _valid(z3.SignExt(s - 1, z3.Extract(w - s, 0, term)) == term)
    assert s > 1 or z3.is_app_of(term, z3.Z3_OP_BXOR)


def _random_term(rng: random.Random, leaves: list[z3.BitVecRef], depth: int) -> z3.BitVecRef:
    """A term of the operators the rules rewrite, constants among the operands."""
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(leaves) if rng.random() < 0.7 else \
            z3.BitVecVal(rng.choice([0, 1, 3, 0x80, 0xf0, 0xff, rng.getrandbits(8)]), 8)
    a, b = (_random_term(rng, leaves, depth - 1) for _ in range(2))
    k = z3.BitVecVal(rng.randint(0, 9), 8)
    return rng.choice([a + b, a - b, -a, a * b, a * 5, a << k, z3.LShR(a, k), a & b,
                       a | b, a ^ b, ~a, z3.If(a < b, a, b), z3.If(z3.UGE(a, b), b, a)])


def test_random_terms_normalised_bottom_up_are_the_terms():
    """The rules together, on terms of 8 bits that mix them (constants, masks, shifts,
    sums, chains): each normalised term proved equal to the one it came from."""
    rng = random.Random(31)
    leaves = list(z3.BitVecs("p q r", 8))
    for _ in range(150):
        term = _random_term(rng, leaves, 4)
        assert _valid(_bottom_up(term) == term), term


def test_sums_and_chains_two_compilers_reassociate_meet():
    a, b, d, e = z3.BitVecs("a b d e", 32)
    c = 47 - (d | e)
    assert _bottom_up(277 * (a + b + c) - 13019).eq(_bottom_up((a + b - (d | e)) * 277))
    assert _bottom_up(((a ^ b) ^ 5) ^ (d ^ 3)).eq(_bottom_up((d ^ 6) ^ (b ^ a)))
    assert _bottom_up((a & d) & 423).eq(_bottom_up((d & 423) & a))
    assert _bottom_up(z3.If(a >= d, b, 0)).eq(_bottom_up(z3.If(a < d, 0, b)))
    # -O0 shifts twice and xors a constant in where opt masks once and folds it
    x, y = z3.LShR(a, 30), z3.LShR(d, 21)
    assert _bottom_up(b ^ ((x ^ 734) << 8) ^ y ^ (y & 887)).eq(
        _bottom_up((z3.LShR(a, 22) & 768) ^ (y & 1160) ^ b ^ 187904))


def test_the_nan_test_becomes_the_float_one_the_comparisons_use():
    bits = z3.BitVec("b", 32)
    assert normal(is_nan(bits, F32)).eq(z3.fpIsNaN(z3.fpBVToFP(bits, z3.Float32())))


B, D = z3.BitVec("b", 32), z3.BitVec("d", 32)
A8, B8, X16 = z3.BitVec("a", 8), z3.BitVec("b", 8), z3.BitVec("x", 16)


@pytest.mark.parametrize("term", [
    z3.Extract(30, 0, B),
    z3.Not(z3.Bool("c")),
    z3.If(z3.Bool("c"), B, D),
    z3.And(z3.Extract(30, 23, B) == 255, z3.Extract(22, 0, B) == 0),  # the infinity test
    z3.And(z3.Extract(30, 23, B) == 255, z3.Extract(22, 1, B) != 0),
    z3.And(z3.Extract(30, 23, B) == 255, z3.Extract(22, 0, D) != 0),
    z3.And(z3.Extract(30, 23, B) == 254, z3.Extract(22, 0, B) != 0),
    z3.Or(z3.Bool("c"), z3.Not(z3.Bool("d"))),
    z3.And(z3.Bool("c"), z3.Or(z3.Bool("d"), z3.Bool("e"))),
    z3.Or(z3.Bool("c"), z3.And(z3.Bool("d"), z3.Bool("e"))),
    B * D,
    B << D,
    normal(B + 3 * D + 5),
    normal(B ^ D ^ 5),
    z3.Not(z3.Bool("c") == z3.BoolVal(True)),
    normal(z3.LShR(B, 22) & 0x2ff),
    normal(B ^ 734) << D,
    normal(B * 8192) | normal(8192 + z3.LShR(D, 31)),
    B < D,
    z3.ULT(B, D),
    z3.fpBVToFP(z3.If(z3.Bool("c"), B, D), z3.Float32()),
    z3.fpBVToFP(z3.If(z3.fpIsNaN(z3.FP("x", z3.Float32())), B,
                      z3.fpToIEEEBV(z3.FP("x", z3.Float32()))), z3.Float32()),
    z3.fpBVToFP(z3.If(z3.fpIsNaN(z3.FP("x", z3.Float32())),
                      z3.If(z3.fpIsNaN(z3.fpBVToFP(D, z3.Float32())), B, 0x7FC00000),
                      z3.fpToIEEEBV(z3.FP("x", z3.Float32()))), z3.Float32()),
    z3.ZeroExt(8, z3.UDiv(z3.Extract(7, 0, B), z3.Extract(7, 0, D))),
    z3.ZeroExt(8, z3.Extract(7, 0, z3.UDiv(z3.Extract(15, 0, B), 255))),
    z3.Extract(15, 0, B / (D & 0xffff)),
    z3.SignExt(8, A8 / B8),
    z3.SignExt(8, z3.Extract(7, 0, z3.SRem(X16, 200))),
    z3.SignExt(8, A8 | 1),
    z3.SignExt(8, A8 & 0xbf),
    z3.SignExt(8, A8 / (B8 & 0xbf)),
    z3.Extract(7, 0, X16 + 1),
    z3.UDiv(A8 & 7, 7),
    (A8 & 0x87) / 100,
    z3.URem(A8 & 7, 0),
    z3.If(z3.ULT(A8, B8 & 7), z3.URem(A8, 6), B8),
    z3.If(z3.ULT(B8, A8 & 7), z3.URem(A8, 7), B8),
    z3.BitVecVal(0, 8) == (B8 | 1) & 6,
    z3.BitVecVal(1, 8) & z3.URem(A8, B8 & 3 | 1),
    z3.BitVecVal(3, 8) & ((A8 & 0x83) | (B8 & 0x81)),
    z3.SRem(A8 & 0x7f, B8),
    z3.Extract(7, 0, X16 | 0x15),
    z3.ZeroExt(8, A8 & 6),
    z3.BitVecVal(0, 4) == z3.Extract(7, 4, X16 | 1),
    (A8 & 0xbf) / z3.LShR(B8, 1),
], ids=["part extract", "one not", "plain ite", "infinity test", "fraction short of bit 0",
        "two registers", "exponent not all ones", "or of another's not", "and of another or",
        "or of another and", "product of two values", "shift by a value", "a sum as written",
        "a xor as written", "not of a non-constant", "a mask with a gap",
        "shift by a value of a xor", "or of bits that may meet", "signed less", "unsigned less",
        "float of a select of plain bits", "float of bits whose NaN may be any bits",
        "float of bits whose NaN tests other bits", "zero extension of a quotient by zero",
        "zero extension of low bits one too many",
        "low bits of a signed division", "sign extension of a quotient that may wrap",
        "sign extension of low bits that are not one", "sign extension of a value maybe negative",
        "a known zero below the sign bit", "a divisor with a known zero below its sign",
        "low bits of a sum", "a dividend as great as the divisor",
        "a signed dividend maybe negative", "a remainder by 0",
        "a remainder under a compare one short", "a remainder under another's compare",
        "a value maybe zero tested for zero", "a mask that clears a bit the value may hold",
        "a mask that clears the sign bit the value may hold",
        "a signed remainder by a value maybe negative", "low bits of a mask, kept",
        "zero extension of a mask, kept", "high bits of an odd value tested for zero",
        "a signed quotient of one maybe negative"])
def test_lookalikes_are_left_alone(term):
    assert normal(term).eq(term)


@pytest.mark.parametrize("term", [B + 3 * (B / D) * D, B + -1 * (B / D) * B,
                                  D + -1 * (B / D) * D, B + -1 * z3.UDiv(B, D) * B],
                         ids=["a sum with a quotient's product", "a product by the dividend",
                              "a difference from the divisor", "unsigned, by the dividend"])
def test_sums_like_a_remainder_are_not_one(term):
    """Sums as `_linear` writes them (a product's factors flattened) that are no
    remainder: `_remainder` leaves them (each is not one: a model says so)."""
    assert _remainder(term) is None
    assert not _valid(term == z3.SRem(B, D)) and not _valid(term == z3.URem(B, D))


@pytest.mark.parametrize("term", [B + -6 * z3.UDiv(B, 7), B + -7 * z3.UDiv(D, 7),
                                  B + 7 * (B / -7) * 1 + D],
                         ids=["a product one short", "another dividend", "three summands"])
def test_sums_like_a_remainder_by_a_numeral_are_not_one(term):
    assert _remainder(term) is None
    assert not _valid(term == z3.URem(B, 7)) and not _valid(term == z3.SRem(B, 7))


@pytest.mark.parametrize("fmt", (F16, BF16), ids=["f16", "bf16"])
def test_not_an_identity_is_left_alone(fmt):
    """+0 is no identity of + (-0 + +0 is +0), nor -0 of - (+0 - -0 is +0), nor is -0
    of + rounding toward negative (+0 + -0 is -0), nor 0 - x x: each rewrite would be
    wrong (a model says so), and `_identity_arm` leaves each."""
    sort = fp_sort(fmt)
    x, a = z3.FPs("x a", sort)
    c = z3.Bool("c")
    plus, minus = z3.fpPlusZero(sort), z3.fpMinusZero(sort)
    for term, wrong in [
            (z3.fpAdd(z3.RNE(), x, z3.If(c, a, plus)), z3.If(c, z3.fpAdd(z3.RNE(), x, a), x)),
            (z3.fpSub(z3.RNE(), x, z3.If(c, a, minus)), z3.If(c, z3.fpSub(z3.RNE(), x, a), x)),
            (z3.fpAdd(z3.RTN(), x, z3.If(c, a, minus)), z3.If(c, z3.fpAdd(z3.RTN(), x, a), x)),
            (z3.fpSub(z3.RNE(), z3.If(c, a, plus), x), z3.If(c, z3.fpSub(z3.RNE(), a, x), x))]:
        assert _identity_arm(term) is None
        assert not _valid(term == wrong)


def test_the_identities_hold_on_every_half():
    """numpy, apart from z3: x + -0, x - +0 and x * 1 are x, bit for bit, for every
    float16 x but NaNs (any NaN stays a NaN)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        for got in (x + np.float16(-0.0), x - np.float16(0.0), x * np.float16(1.0)):
            same = got.view(np.uint16) == x.view(np.uint16)
            assert (same | (np.isnan(x) & np.isnan(got))).all()
        assert (x + np.float16(0.0)).view(np.uint16)[0x8000] == 0  # -0 + +0 is +0


@pytest.mark.parametrize("kind,identity", [("add", -0.0), ("sub", 0.0), ("mul", 1.0)])
@pytest.mark.parametrize("dtype,sort", [(np.float32, z3.Float32()), (np.float64, z3.Float64())])
def test_the_wide_identities_are_numpys(kind, identity, dtype, sort):
    """f32 and f64 (too slow to prove here): the rule fires on a select of the bits numpy
    gives the identity, and numpy says they are one on the special values."""
    bits = int(np.array(identity, dtype).view(np.uint32 if dtype is np.float32
                                              else np.uint64))
    op = {"add": z3.fpAdd, "sub": z3.fpSub, "mul": z3.fpMul}[kind]
    x, a = z3.FPs("x a", sort)
    width = sort.ebits() + sort.sbits()
    constant = z3.fpBVToFP(z3.BitVecVal(bits, width), sort)
    assert _identity_arm(op(z3.RNE(), x, z3.If(z3.Bool("c"), a, constant))) is not None
    assert _identity_arm(op(z3.RNE(), x, z3.If(z3.Bool("c"), a, z3.fpBVToFP(
        z3.BitVecVal(bits ^ 1, width), sort)))) is None
    v = np.array([0.0, -0.0, 1.0, -1.5, np.inf, -np.inf, 1e-45, 3e38, 5e-324], dtype)
    with np.errstate(all="ignore"):
        got = {"add": v + dtype(identity), "sub": v - dtype(identity),
               "mul": v * dtype(identity)}[kind]
    assert (got.tobytes() == v.tobytes())


def test_fp_mul_operands_in_order():
    lo, hi = sorted(z3.FPs("p q", z3.Float32()), key=structural)
    assert normal(z3.fpMul(z3.RTZ(), hi, lo)).eq(z3.fpMul(z3.RTZ(), lo, hi))
    assert normal(z3.fpMul(z3.RTZ(), lo, hi)).eq(z3.fpMul(z3.RTZ(), lo, hi))


def _self_differences(x: z3.FPRef) -> list[z3.FPRef]:
    """x - x, x + (-x) and (-x) + x, rounding to nearest."""
    return [z3.fpSub(z3.RNE(), x, x), z3.fpAdd(z3.RNE(), x, -x), z3.fpAdd(z3.RNE(), -x, x)]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_a_value_less_itself_is_plus_zero_or_the_nan(fmt):
    """Proved for every x by z3, and the rewrite's value checked apart from z3 against
    numpy (ml_dtypes for bf16) on the specials and random bits: +0 for a finite x
    (its sign bit clear), a NaN for a NaN or an infinity."""
    x = z3.FP("x", fp_sort(fmt))
    dtype = {F16: np.float16, BF16: ml_dtypes.bfloat16, F32: np.float32, F64: np.float64}[fmt]
    uint = {16: np.uint16, 32: np.uint32, 64: np.uint64}[fmt.width]
    rng = random.Random(44)
    sign, top = 1 << (fmt.width - 1), (1 << fmt.width) - 1
    specials = [0, sign, 1, sign | 1, (1 << (fmt.sbits - 1)) - 1]
    specials += [((1 << fmt.ebits) - 1) << (fmt.sbits - 1)] * 2  # +inf, and -inf below
    specials[-1] |= sign
    specials += [specials[-2] | 1, top, top ^ sign]  # NaNs
    for t in _self_differences(x):
        out = normal(t)
        assert not out.eq(t)
        assert _valid(t == out), t
        for b in specials + [rng.getrandbits(fmt.width) for _ in range(40)]:
            v = np.array([b], dtype=uint).view(dtype)[0]
            with np.errstate(invalid="ignore"):
                diff = np.array([v - v], dtype=dtype)
            want = diff.view(uint)[0]
            got = z3.simplify(z3.substitute(out, (x, z3.fpBVToFP(z3.BitVecVal(b, fmt.width),
                                                                  fp_sort(fmt)))))
            if np.isnan(diff.astype(np.float64))[0]:
                assert z3.is_true(z3.simplify(z3.fpIsNaN(got))), (fmt.name, hex(b))
            else:
                assert z3.simplify(z3.fpToIEEEBV(got)).as_long() == int(want) == 0, hex(b)


def test_a_value_less_itself_is_kept_in_other_modes_and_for_two_values():
    """Toward negative x - x is -0; a - b of two values is no zero."""
    x, y = z3.FPs("x y", fp_sort(F32))
    for t in (z3.fpSub(z3.RTN(), x, x), z3.fpSub(z3.RNE(), x, y), z3.fpAdd(z3.RNE(), x, -y)):
        out = normal(t)
        assert not z3.is_app_of(out, z3.Z3_OP_ITE), t


def test_an_operation_on_a_value_less_itself_is_rewritten():
    """The select it becomes has SMT-LIB's NaN in an arm, a constant with no one bits
    pattern (`_float_bits`: z3 leaves them a term): the identity rules above it read it
    (a wide-float pair crashed here), and the result is still equal."""
    x, y = z3.FPs("x y", fp_sort(F32))
    zero = normal(z3.fpSub(z3.RNE(), x, x))  # children first, as sweeping rewrites
    for t in (z3.fpAdd(z3.RNE(), y, zero), z3.fpMul(z3.RNE(), zero, y),
              z3.fpSub(z3.RNE(), y, zero)):
        assert _valid(t == normal(t)), t


# A neg's bits read as a float (`_sign_operation`), and a sum with a negation
# (`_added_negation`): -O0's `neg.f32 %f10, %f3; add.rn.f32 %f16, %f10, %f4` against opt's
# `sub.rn.f32 %f27, %f5, %f3` (fsel-llc14-2006: IR's `fadd (fneg v5), v6`)
_PTX_TYPE = {F16: "f16", BF16: "bf16", F32: "f32", F64: "f64"}
_DTYPES = {F16: (np.float16, np.uint16), BF16: (ml_dtypes.bfloat16, np.uint16),
           F32: (np.float32, np.uint32), F64: (np.float64, np.uint64)}


def _neg_bits(fmt, flush: bool = False, op=fneg) -> tuple[z3.BitVecRef, z3.BitVecRef]:
    """(a, the bits of neg a) as the semantics writes them (`sem.arith.fneg`; or `op`'s)."""
    a = z3.BitVec(f"a{fmt.name}", fmt.width)
    name = "neg" if op is fneg else "abs"
    v = parse_variant(f"{name}{'.ftz' if flush else ''}.{_PTX_TYPE[fmt]}")
    return a, op(v, fmt, flush, a, None)


def _specials(fmt, rng: random.Random, count: int = 60) -> list[int]:
    """Zeros, ones, infinities, NaNs (quiet and signalling, both signs), the least
    subnormal and the greatest finite value, then random bits."""
    sign, man = 1 << (fmt.width - 1), fmt.sbits - 1
    inf = ((1 << fmt.ebits) - 1) << man
    one = ((1 << (fmt.ebits - 1)) - 1) << man
    base = [0, 1, one, inf - 1, inf, inf | 1, inf | (1 << (man - 1))]
    return base + [b | sign for b in base] + [rng.getrandbits(fmt.width) for _ in range(count)]


def _value(t: z3.ExprRef, *pairs: tuple[z3.ExprRef, z3.ExprRef]) -> z3.ExprRef:
    return z3.simplify(z3.substitute(t, *pairs))


@pytest.mark.parametrize("flush", [False, True], ids=["", "ftz"])
@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_a_neg_read_as_a_float_is_fp_neg(fmt, flush):
    """Proved by z3 in each format, and its value checked against numpy (ml_dtypes for
    bf16) on the specials and random bits: -x of the (flushed) operand, any NaN for a
    NaN."""
    a, bits = _neg_bits(fmt, flush)
    sort = fp_sort(fmt)
    t = _bottom_up(z3.fpBVToFP(bits, sort))
    assert z3.is_app_of(t, z3.Z3_OP_FPA_NEG), t
    assert _valid(t == z3.fpBVToFP(bits, sort))
    dtype, uint = _DTYPES[fmt]
    for b in _specials(fmt, random.Random(fmt.width), 16):
        x = np.array([b], dtype=uint)
        flushed = flush and (b >> (fmt.sbits - 1)) & ((1 << fmt.ebits) - 1) == 0
        x = (x & np.array([1 << (fmt.width - 1)], dtype=uint)) if flushed else x
        want = np.negative(x.view(dtype))
        got = _value(t, (a, z3.BitVecVal(b, fmt.width)))
        if np.isnan(want.astype(np.float64))[0]:
            assert z3.is_true(z3.simplify(z3.fpIsNaN(got))), hex(b)
        else:
            assert z3.simplify(z3.fpToIEEEBV(got)).as_long() == int(want.view(uint)[0]), hex(b)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_a_sum_with_a_negation_is_a_difference(fmt):
    """a + (-b), (-b) + a and a - (-b), b a neg's bits read as a float, become a - b and
    a + b in every rounding mode (proved by z3 in each format), and their values are
    numpy's `a + (-b)` on the specials and random bits (rounding to nearest)."""
    b, bits = _neg_bits(fmt)
    sort = fp_sort(fmt)
    x = z3.FP(f"x{fmt.name}", sort)
    minus_b = z3.fpBVToFP(bits, sort)  # numpy below
    for rm in (z3.RNE(), z3.RTZ(), z3.RTN(), z3.RTP()):
        y = z3.FP(f"y{fmt.name}", sort)  # proved over fp.neg (the read above: its own test)
        for t, root in ((z3.fpAdd(rm, x, -y), z3.Z3_OP_FPA_SUB),
                        (z3.fpAdd(rm, -y, x), z3.Z3_OP_FPA_SUB),
                        (z3.fpSub(rm, x, -y), None)):
            out = _bottom_up(t)
            assert z3.is_app_of(out, root) if root else not _has_neg(out), out
            assert _valid(out == t)
    dtype, uint = _DTYPES[fmt]
    rng = random.Random(fmt.width + 1)
    out = _bottom_up(z3.fpAdd(z3.RNE(), x, minus_b))
    values = _specials(fmt, rng, 2)[::2]
    for u, v in itertools.product(values, values):
        xs, bs = (np.array([w], dtype=uint).view(dtype) for w in (u, v))
        with np.errstate(all="ignore"):
            want = (xs + np.negative(bs)).astype(dtype)
        got = _value(out, (x, z3.fpBVToFP(z3.BitVecVal(u, fmt.width), sort)),
                     (b, z3.BitVecVal(v, fmt.width)))
        if np.isnan(want.astype(np.float64))[0]:
            assert z3.is_true(z3.simplify(z3.fpIsNaN(got))), (hex(u), hex(v))
        else:
            assert z3.simplify(z3.fpToIEEEBV(got)).as_long() == int(want.view(uint)[0]), \
                (hex(u), hex(v))


def _has_neg(t: z3.ExprRef) -> bool:
    return z3.is_app_of(t, z3.Z3_OP_FPA_NEG) or any(_has_neg(c) for c in t.children())


def test_sign_lookalikes_are_left_alone():
    """The sign of another value's bits, a sign bit set or cleared, the NaN test of
    another value, and an arm that is not always a NaN: each is no neg of a's float
    (nor read as an abs: see `_sign_operation`), and z3 shows the first four differ from
    what a neg or abs would be."""
    a, b = z3.BitVecs("la lb", 32)
    sort = fp_sort(F32)
    rest = z3.Extract(30, 0, a)
    nan_a = z3.fpIsNaN(z3.fpBVToFP(a, sort))
    canonical = z3.BitVecVal(0x7FC00000, 32)
    for bits, op in [
            (z3.If(nan_a, canonical, z3.Concat(~z3.Extract(31, 31, b), rest)), z3.fpNeg),
            (z3.If(nan_a, canonical, z3.Concat(z3.BitVecVal(1, 1), rest)), z3.fpAbs),
            (z3.If(z3.fpIsNaN(z3.fpBVToFP(b, sort)), canonical,
                   z3.Concat(~z3.Extract(31, 31, a), rest)), z3.fpNeg),
            (z3.If(nan_a, z3.BitVecVal(0x7F800000, 32),  # +inf: no NaN
                   z3.Concat(~z3.Extract(31, 31, a), rest)), z3.fpNeg),
            (z3.If(nan_a, b, z3.Concat(~z3.Extract(31, 31, a), rest)), z3.fpNeg)]:
        t = _bottom_up(z3.fpBVToFP(bits, sort))
        assert not z3.is_app_of(t, z3.Z3_OP_FPA_NEG) and not z3.is_app_of(t, z3.Z3_OP_FPA_ABS)
        assert not _valid(z3.fpBVToFP(bits, sort) == op(z3.fpBVToFP(a, sort)))
    _, abs_bits = _neg_bits(F32, op=fabs)
    assert not z3.is_app_of(_bottom_up(z3.fpBVToFP(abs_bits, sort)), z3.Z3_OP_FPA_ABS)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.name)
def test_always_nan_bits(fmt):
    """`float_facts.always_nan`: NaN constants (quiet, signalling, either sign) and an
    open NaN as `sem.sorts.free_nan` builds it are; infinities, zeros and free bits are
    not (checked against numpy's isnan, and by z3 for the open NaN)."""
    sort, (dtype, uint) = fp_sort(fmt), _DTYPES[fmt]
    for b in _specials(fmt, random.Random(fmt.width + 2)):
        nan = bool(np.isnan(np.array([b], dtype=uint).view(dtype).astype(np.float64))[0])
        assert float_facts.always_nan(z3.BitVecVal(b, fmt.width), sort, normal) == nan, hex(b)
    u = z3.BitVec(f"u{fmt.name}", fmt.width)
    opened = _bottom_up(free_nan("neg", u, fmt))
    assert float_facts.always_nan(opened, sort, normal)
    assert _valid(z3.fpIsNaN(z3.fpBVToFP(opened, sort)))
    assert not float_facts.always_nan(u, sort, normal)
    assert not float_facts.always_nan(_bottom_up(z3.If(z3.fpIsNaN(z3.fpBVToFP(u, sort)), u, 0)),
                                      sort, normal)


def test_a_value_is_a_bit_vector_numeral_true_or_false():
    """`is_value`, which reads the sort first, against z3's own tests of each kind."""
    from ptxsmt.smt.sweeping.rewrite import is_value

    x, b, f = z3.BitVec("x", 8), z3.Bool("b"), z3.FP("f", z3.Float32())
    terms = [x, z3.BitVecVal(3, 8), z3.BoolVal(True), z3.BoolVal(False), b, z3.Not(b), f,
             z3.FPVal(1.0, z3.Float32()), x + 1, z3.fpIsNaN(f), z3.RNE(), z3.IntVal(3),
             z3.Extract(3, 0, z3.BitVecVal(9, 8))]
    assert [is_value(t) for t in terms] == \
        [z3.is_bv_value(t) or z3.is_true(t) or z3.is_false(t) for t in terms]
