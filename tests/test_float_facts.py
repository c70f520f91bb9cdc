"""Facts about float terms (ptxsmt/smt/sweeping/float_facts.py) and the rewrites they
allow: each table row proved by z3 over every input, and checked apart from z3 by exact
rational arithmetic (tests/exact_float.py) on the special values; each rewrite fires on
the masked mutations of the held-out corpus and gives a term equal to its input."""

from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest
import z3
from exact_float import NAN, arith, decode

from ptxsmt.isa.types import F16
from ptxsmt.sem.sorts import fp_sort
from ptxsmt.smt.sweeping import float_facts
from ptxsmt.smt.sweeping.float_facts import POISON, SIGN_BLIND, THROUGH
from ptxsmt.smt.sweeping.rewrite import normal

# The rows and rewrites hold in every format; z3 proves them in a small one (3 exponent
# bits, 4 of significand), where it decides products and remainders in milliseconds;
# exact arithmetic checks them in f16 and f32 apart from z3
SMALL = z3.FPSort(3, 4)
SIGN = 1 << 6
RMS = (z3.RNE, z3.RTZ, z3.RTN, z3.RTP)
DIRECTIONS = {"rn": z3.RNE, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP}


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _like(a: z3.FPRef, b: z3.FPRef) -> z3.BoolRef:
    """a ~ b: equal (one NaN), or zeros of any signs."""
    return z3.Or(a == b, z3.And(z3.fpIsZero(a), z3.fpIsZero(b)))


def _apply(kind: int, args: list[z3.ExprRef], rm: z3.FPRMRef) -> z3.ExprRef:
    """The operator `kind` over float `args` (its rounding mode, where it takes one)."""
    sort = args[0].sort()
    build = {z3.Z3_OP_FPA_ADD: lambda x, y, _z: z3.fpAdd(rm, x, y),
             z3.Z3_OP_FPA_SUB: lambda x, y, _z: z3.fpSub(rm, x, y),
             z3.Z3_OP_FPA_MUL: lambda x, y, _z: z3.fpMul(rm, x, y),
             z3.Z3_OP_FPA_DIV: lambda x, y, _z: z3.fpDiv(rm, x, y),
             z3.Z3_OP_FPA_FMA: lambda x, y, z: z3.fpFMA(rm, x, y, z),
             z3.Z3_OP_FPA_SQRT: lambda x, _y, _z: z3.fpSqrt(rm, x),
             z3.Z3_OP_FPA_REM: lambda x, y, _z: z3.fpRem(x, y),
             z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: lambda x, _y, _z: z3.fpRoundToIntegral(rm, x),
             z3.Z3_OP_FPA_NEG: lambda x, _y, _z: z3.fpNeg(x),
             z3.Z3_OP_FPA_ABS: lambda x, _y, _z: z3.fpAbs(x),
             z3.Z3_OP_FPA_TO_FP: lambda x, _y, _z: z3.fpToFP(
                 rm, z3.fpToFP(rm, x, z3.Float32()), sort),
             z3.Z3_OP_ITE: lambda x, y, _z: z3.If(z3.Bool("c"), x, y),
             z3.Z3_OP_FPA_MIN: lambda x, y, _z: z3.fpMin(x, y),
             z3.Z3_OP_FPA_MAX: lambda x, y, _z: z3.fpMax(x, y),
             z3.Z3_OP_FPA_EQ: lambda x, y, _z: z3.fpEQ(x, y),
             z3.Z3_OP_FPA_LT: lambda x, y, _z: z3.fpLT(x, y),
             z3.Z3_OP_FPA_LE: lambda x, y, _z: z3.fpLEQ(x, y),
             z3.Z3_OP_FPA_GT: lambda x, y, _z: z3.fpGT(x, y),
             z3.Z3_OP_FPA_GE: lambda x, y, _z: z3.fpGEQ(x, y)}[kind]
    return build(*(args + [args[0]] * (3 - len(args))))


def _name(kind: int) -> str:
    return next(k for k, v in vars(z3).items() if k.startswith("Z3_OP_") and v == kind)


@pytest.mark.parametrize("kind", sorted(POISON), ids=_name)
def test_each_poison_row_passes_a_nan_on(kind):
    """isNaN(operand) implies isNaN(result) for every operand of an `any` row, and for
    all of an `all` row at once, in every rounding mode; an `all` row is no `any` row
    (a NaN in one arm of a select, or one operand of SMT-LIB's min, need not reach it).
    In the small format (`SMALL`: the rows hold in every format)."""
    sort = SMALL
    xs = list(z3.FPs("x y z", sort))
    positions, every = POISON[kind]
    for rm in RMS:
        t = _apply(kind, xs, rm())
        operands = [t.arg(k) for k in positions if k < t.num_args()]
        assert all(o.sort() == sort or kind == z3.Z3_OP_FPA_TO_FP for o in operands)
        nans = [z3.fpIsNaN(o) for o in operands]
        for premise in ([z3.And(nans)] if every else nans):
            assert _valid(z3.Implies(premise, z3.fpIsNaN(t)))
        if every:
            assert not _valid(z3.Implies(nans[0], z3.fpIsNaN(t)))


@pytest.mark.parametrize("kind", sorted(THROUGH), ids=_name)
def test_each_through_row_keeps_zeros_alike(kind):
    """Operands equal or zeros of any signs give results equal or zeros (f16, every
    rounding mode): x op y ~ x' op y' where x ~ x' and y ~ y' (each row names every
    float operand of its operator). In the small format (`SMALL`)."""
    sort = SMALL
    x, y, x2, y2 = z3.FPs("x y x2 y2", sort)
    for rm in RMS:
        a, b = _apply(kind, [x, y], rm()), _apply(kind, [x2, y2], rm())
        floats = {k for k, o in enumerate(a.children()) if z3.is_fp(o)}
        assert floats == set(THROUGH[kind])
        assert _valid(z3.Implies(z3.And(_like(x, x2), _like(y, y2)), _like(a, b)))


def test_a_divisor_does_not_keep_zeros_alike():
    """1/+0 is +inf and 1/-0 is -inf: division is no row of THROUGH."""
    sort = fp_sort(F16)
    assert z3.Z3_OP_FPA_DIV not in THROUGH
    # the witness itself, not a solver's search for one: z3's search over f16 division
    # can run for minutes where earlier tests of the process made other terms first
    x, y, y2 = z3.FPVal(1.0, sort), z3.fpPlusZero(sort), z3.fpMinusZero(sort)
    assert z3.is_true(z3.simplify(_like(y, y2)))
    assert z3.is_false(z3.simplify(_like(z3.fpDiv(z3.RNE(), x, y), z3.fpDiv(z3.RNE(), x, y2))))
    with np.errstate(divide="ignore"):
        assert np.float16(1) / np.float16(0.0) == -(np.float16(1) / np.float16(-0.0))


@pytest.mark.parametrize("kind", sorted(SIGN_BLIND), ids=_name)
def test_each_comparison_is_blind_to_a_zeros_sign(kind):
    sort = SMALL
    x, y, x2, y2 = z3.FPs("x y x2 y2", sort)
    assert _valid(z3.Implies(z3.And(_like(x, x2), _like(y, y2)),
                             _apply(kind, [x, y], z3.RNE()) == _apply(kind, [x2, y2], z3.RNE())))


# --- apart from z3: exact rationals on the special values -------------------------------

SPECIALS = {"f16": [0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00, 0x7e00, 0x0001, 0x8001,
                    0x7bff, 0xfbff, 0x3555, 0x0400],
            "f32": [0x00000000, 0x80000000, 0x3f800000, 0xbf800000, 0x7f800000, 0xff800000,
                    0x7fc00000, 0x00000001, 0x80000001, 0x7f7fffff, 0xff7fffff, 0x3eaaaaab]}
F16_SPECIALS = SPECIALS["f16"]
SIGN_BIT = {"f16": 1 << 15, "f32": 1 << 31}


def _alike(a, b, fmt: str = "f16") -> bool:
    """Results (bits or NAN) equal, or both zeros."""
    if a is NAN or b is NAN:
        return a is b
    return a == b or not (a | b) & ~SIGN_BIT[fmt]


def _variants(bits: int, fmt: str) -> list[int]:
    """bits and, for a zero, the zero of the other sign."""
    return [bits, bits ^ SIGN_BIT[fmt]] if not bits & ~SIGN_BIT[fmt] else [bits]


@pytest.mark.parametrize("fmt", ["f16", "f32"])
@pytest.mark.parametrize("op", ["add", "sub", "mul"])
def test_through_rows_on_exact_arithmetic(op, fmt):
    for direction, (x, y) in itertools.product(DIRECTIONS, itertools.product(SPECIALS[fmt],
                                                                              repeat=2)):
        results = [arith(op, direction, fmt, a, b)
                   for a in _variants(x, fmt) for b in _variants(y, fmt)]
        assert all(_alike(results[0], r, fmt) for r in results), (op, direction, x, y)


@pytest.mark.parametrize("fmt", ["f16", "f32"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "fma", "sqrt"])
def test_poison_rows_on_exact_arithmetic(op, fmt):
    arity = {"fma": 3, "sqrt": 1}.get(op, 2)
    for direction in DIRECTIONS:
        for args in itertools.product(SPECIALS[fmt], repeat=arity):
            if any(decode(a, fmt).kind == "nan" for a in args):
                assert arith(op, direction, fmt, *args) is NAN


def test_a_zero_added_is_the_operand_up_to_its_sign_on_exact_arithmetic():
    """x + 0 and x - 0 of either zero are x, or a zero where x is one: `sign_free`'s
    base step, every rounding mode."""
    for direction, x, zero in itertools.product(DIRECTIONS, F16_SPECIALS, (0x0000, 0x8000)):
        for op in ("add", "sub"):
            got = arith(op, direction, "f16", x, zero)
            assert (got is NAN) == (decode(x, "f16").kind == "nan")
            assert got is NAN or _alike(got, x)


# --- the rewrites ------------------------------------------------------------------------

def _bottom_up(t: z3.ExprRef) -> z3.ExprRef:
    if not z3.is_app(t) or t.num_args() == 0:
        return t
    return normal(t.decl()(*[_bottom_up(c) for c in t.children()]))




def _halves(names: str) -> list[z3.FPRef]:
    """Floats read from bits, as the semantics reads registers (small format)."""
    return [z3.fpBVToFP(z3.BitVec(n, 7), SMALL) for n in names.split()]


def _constant(bits: int) -> z3.FPRef:
    return z3.fpBVToFP(z3.BitVecVal(bits, 7), SMALL)


def test_an_unordered_compare_meets_the_ordered_one_under_its_operands_nan():
    """half-llvm22-1008: `setp.equ.f16 p, y, 0` made `setp.eq`, each select of p read by
    a product that y's NaN reaches anyway: the two terms are one, and equal to both."""
    x, y = _halves("x y")
    zero, rm = _constant(0), z3.RNE()

    def function(p: z3.BoolRef) -> z3.FPRef:
        a = z3.If(p, z3.fpAdd(rm, x, y), x)
        b = z3.If(p, z3.fpAdd(rm, x, y), z3.fpMul(rm, x, z3.fpAdd(rm, y, y)))
        return z3.fpMul(rm, a, b)
    equ = function(z3.Or(z3.fpIsNaN(y), z3.fpIsNaN(zero), z3.fpEQ(y, zero)))
    eq = function(z3.fpEQ(y, zero))
    assert _bottom_up(equ).eq(_bottom_up(eq))
    assert _valid(_bottom_up(equ) == equ)


def test_a_nan_test_of_a_value_that_does_not_reach_is_kept():
    """ite(isNaN(y), x, x * 2): y's NaN reaches neither arm; and a NaN test in one arm
    of a select only (`all` of ite): kept, they are not the terms without it."""
    x, y = _halves("x y")
    rm, two = z3.RNE(), z3.FPVal(2.0, SMALL)
    kept = [z3.If(z3.fpIsNaN(y), x, z3.fpMul(rm, x, two)),
            z3.fpMul(rm, x, z3.If(z3.fpIsNaN(y), y, x)),
            z3.If(z3.Bool("c"), z3.fpAdd(rm, x, y), z3.If(z3.fpIsNaN(y), x, two))]
    for t in kept:
        assert float_facts.poisoned_tests(t, normal) is None
        assert _valid(_bottom_up(t) == t)


def test_a_zeros_sign_under_a_comparison_meets():
    """fcmp-llc14-1006: `selp.f32 %f8, %f1, 0f80000000, %p1` made `0f00000000`, read as
    x + f8 only by comparisons: under them x + ite(c, a, +0) is ite(c, x + a, x), the
    -O0 spelling, and the comparison is unchanged."""
    x, a, z = _halves("x a z")
    c = z3.Bool("c")
    rm = z3.RNE()
    for zero in (0, SIGN):
        zero_ = _constant(zero)
        planted = z3.fpAdd(rm, x, z3.If(c, a, zero_))
        for compare in (z3.fpEQ, z3.fpLT, z3.fpGT, z3.fpLEQ):
            t = compare(z, planted)
            out = _bottom_up(t)
            assert out.eq(_bottom_up(compare(z, z3.If(c, z3.fpAdd(rm, x, a), x))))
            assert _valid(out == t)


def test_a_zeros_sign_as_a_value_or_a_divisor_is_kept():
    """x + ite(c, a, +0) as a value differs from ite(c, x + a, x) at x = -0; so does
    a quotient by it, compared: neither is rewritten."""
    x, a, z = _halves("x a z")
    c, rm = z3.Bool("c"), z3.RNE()
    plus = _constant(0)
    planted = z3.fpAdd(rm, x, z3.If(c, a, plus))
    assert not _valid(planted == z3.If(c, z3.fpAdd(rm, x, a), x))
    value = _bottom_up(planted)
    assert _valid(value == planted)
    quotient = z3.fpEQ(z, z3.fpDiv(rm, z3.FPVal(1.0, SMALL), planted))
    rewritten = z3.fpEQ(z, z3.fpDiv(rm, z3.FPVal(1.0, SMALL), z3.If(c, z3.fpAdd(rm, x, a), x)))
    assert not _bottom_up(quotient).eq(_bottom_up(rewritten))
    assert _valid(_bottom_up(quotient) == quotient)
    one = z3.If(c, a, z3.FPVal(1.0, SMALL))
    nonzero = z3.fpEQ(z, z3.fpAdd(rm, x, one))
    assert _valid(_bottom_up(nonzero) == nonzero)
    # unchanged but for fp.add's operand order: z3's hash of a float numeral, which
    # `order.structural` reads, depends on the numerals made before it (docs/scale.md)
    assert any(_bottom_up(nonzero).eq(t) for t in (nonzero, z3.fpEQ(z, z3.fpAdd(rm, one, x))))


def test_zero_minus_a_value_is_not_the_value():
    """0 - x is -x, not x: only a zero subtracted is dropped, under a comparison too."""
    x, a, z = _halves("x a z")
    c, rm = z3.Bool("c"), z3.RNE()
    for t in (z3.fpEQ(z, z3.fpSub(rm, _constant(0), x)),
              z3.fpLT(z, z3.fpSub(rm, z3.If(c, a, _constant(SIGN)), x))):
        assert _valid(_bottom_up(t) == t)


def test_a_rewrite_that_loses_the_nan_keeps_the_test():
    """Where renormalising drops the value whose NaN was to reach the result (here a
    stand-in `normal` that writes y + x as x), the NaN test is kept: the result would
    no longer be a NaN where y is."""
    x, y = _halves("x y")
    rm = z3.RNE()
    s = z3.If(z3.Or(z3.fpIsNaN(y), z3.Bool("c")), y, z3.fpAdd(rm, y, x))
    t = z3.fpMul(rm, x, z3.fpAdd(rm, y, s))

    def losing(u: z3.ExprRef) -> z3.ExprRef:
        return x if z3.is_app_of(u, z3.Z3_OP_FPA_ADD) and u.arg(1).eq(y) \
            and z3.is_app_of(u.arg(2), z3.Z3_OP_ITE) else u
    assert float_facts.poisoned_tests(t, lambda u: u) is not None
    assert float_facts.poisoned_tests(t, losing) is None


# --- NaN tests read through to the float they ask about (`nan_source`) -------------------

BF16_, F32_ = z3.FPSort(8, 8), z3.Float32()


def _bf16_view(bits: z3.BitVecRef) -> z3.FPRef:
    """LLVM 22's bf16 comparison: the f32 of the bf16's bits shifted left by 16."""
    return z3.fpBVToFP(z3.ZeroExt(16, bits) << 16, F32_)


def test_an_f32_of_bf16_bits_shifted_is_a_nan_exactly_where_the_bf16_is_on_ml_dtypes():
    """Every 16-bit pattern: the f32 whose bits are it shifted left by 16 is a NaN
    exactly where the bf16 is one (ml_dtypes and numpy, apart from z3), and is the same
    number elsewhere; with any low half but zero that fails (an infinity's)."""
    bits = np.arange(1 << 16, dtype=np.uint32)
    wide = (bits << 16).view(np.float32)
    narrow = bits.astype(np.uint16).view(ml_dtypes.bfloat16)
    assert (np.isnan(wide) == np.isnan(narrow)).all()
    numbers = ~np.isnan(wide)
    assert (wide[numbers] == narrow[numbers].astype(np.float32)).all()
    assert not (np.isnan(((bits << 16) | 1).view(np.float32)) == np.isnan(narrow)).all()


@pytest.mark.parametrize("wide, narrow", [(np.float32, np.float16), (np.float64, np.float32),
                                          (np.float32, ml_dtypes.bfloat16)])
def test_a_float_conversion_is_a_nan_exactly_where_its_operand_is_on_numpy(wide, narrow):
    """Widening and narrowing: a NaN of a NaN only (a number too large is an infinity)."""
    values = np.array([0.0, -0.0, 1.0, -1.5, 1e-45, 3e38, -3e38, 1e300, np.inf, -np.inf,
                       np.nan, 65520.0, 1e-8], dtype=np.float64)
    with np.errstate(all="ignore"):  # 1e300 overflows to an infinity: that is the point
        for source, target in ((wide, narrow), (narrow, wide)):
            x = values.astype(source)
            assert (np.isnan(x.astype(target)) == np.isnan(x)).all()


def test_nan_source_reads_conversions_and_bf16_views():
    b = z3.BitVec("b", 16)
    x = z3.fpBVToFP(b, BF16_)
    s = z3.fpAdd(z3.RNE(), x, x)
    assert float_facts.nan_source(_bf16_view(b)).eq(x)
    assert float_facts.nan_source(z3.fpBVToFP(z3.Concat(b, z3.BitVecVal(0, 16)), F32_)).eq(x)
    assert float_facts.nan_source(_bf16_view(z3.fpToIEEEBV(s))).eq(s)
    assert float_facts.nan_source(z3.fpFPToFP(z3.RNE(), s, F32_)).eq(s)
    assert float_facts.nan_source(normal(_bf16_view(b))).eq(x)  # the shift as a product
    kept = [z3.fpBVToFP(z3.Concat(b, z3.BitVecVal(1, 16)), F32_),  # an infinity's NaN
            z3.fpBVToFP(z3.ZeroExt(16, b) << 15, F32_),
            z3.fpBVToFP(z3.ZeroExt(16, b), F32_)]
    for t in kept:
        assert float_facts.nan_source(t).eq(t)
    half_bits = z3.fpToIEEEBV(z3.fpBVToFP(b, z3.FPSort(5, 11)))  # an f16's, read as a bf16's
    assert float_facts.nan_source(_bf16_view(half_bits)).eq(z3.fpBVToFP(half_bits, BF16_))


def test_the_sources_other_tables_name_stay_alive(monkeypatch):
    """The float a bf16 view reads is a term `nan_source` makes (no operand of the
    test): only its table keeps it, and the others hold its AST id, so that table is
    never cleared, whatever the other tables' limits (cleared, the id could be a new
    term's, and a NaN test be read as another's)."""
    for memo in vars(float_facts).values():
        if isinstance(memo, float_facts.Memo) and memo.limit is not None:
            monkeypatch.setattr(memo, "limit", 2)
    views = [_bf16_view(z3.BitVec(f"view{i}", 16) + 1) for i in range(8)]
    sources = [float_facts.nan_source(v) for v in views]
    tested = [float_facts.nan_tested(z3.fpIsNaN(v)) for v in views]
    assert all(t == {s.get_id()} for t, s in zip(tested, sources, strict=True))
    assert all(v.get_id() in float_facts._SOURCE.table for v in views)


def _bf16_plant(compare: object, nested: bool) -> z3.FPRef:
    """bf16-50-llvm22-1: `setp.ltu.f32` of two bf16 views made `setp.lt`, its select read
    where both compared values' NaNs reach the result anyway (`nested`: only inside a
    NaN test's operand, as a canonicalised NaN's test holds it)."""
    bx, by = z3.BitVecs("bx by", 16)
    x, y, rm = z3.fpBVToFP(bx, BF16_), z3.fpBVToFP(by, BF16_), z3.RNE()
    s = z3.fpAdd(rm, x, y)
    v, w = _bf16_view(z3.fpToIEEEBV(s)), _bf16_view(by)
    p = z3.Or(z3.fpIsNaN(v), z3.fpIsNaN(w), z3.fpLT(v, w)) if compare == "ltu" \
        else z3.fpLT(v, w)
    chosen = z3.fpAdd(rm, z3.If(p, s, y), x)
    read = z3.If(z3.fpIsNaN(chosen), x, s) if nested else chosen
    return z3.fpAdd(rm, z3.fpAdd(rm, s, y), read)


def _bf16_plant_on_ml_dtypes(compare: str, nested: bool, x: np.ndarray, y: np.ndarray
                             ) -> np.ndarray:
    """`_bf16_plant` in ml_dtypes' bf16 (a sum computed in f32 and rounded once)."""
    s = x + y
    v, w = s.astype(np.float32), y.astype(np.float32)
    p = (np.isnan(v) | np.isnan(w) | (v < w)) if compare == "ltu" else v < w
    chosen = np.where(p, s, y) + x
    read = np.where(np.isnan(chosen), x, s) if nested else chosen
    return (s + y) + read


@pytest.mark.parametrize("nested", [False, True])
def test_an_unordered_bf16_compare_meets_the_ordered_one_under_its_operands_nan(nested):
    """The two meet as terms, and are one function (every pair of bf16 special values
    and 200,000 random pairs, in ml_dtypes: equal, or both NaNs), though the compares
    differ (where a compared value is a NaN)."""
    assert _bottom_up(_bf16_plant("ltu", nested)).eq(_bottom_up(_bf16_plant("lt", nested)))
    special = np.array([0x0000, 0x8000, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0xffc1, 0x0001,
                        0x8001, 0x7f7f, 0xff7f, 0x4000, 0xc000, 0x0080], dtype=np.uint16)
    rng = np.random.default_rng(44)
    bx = np.concatenate([np.repeat(special, len(special)), rng.integers(0, 1 << 16, 200_000)])
    by = np.concatenate([np.tile(special, len(special)), rng.integers(0, 1 << 16, 200_000)])
    x, y = (b.astype(np.uint16).view(ml_dtypes.bfloat16) for b in (bx, by))
    with np.errstate(all="ignore"):
        a, b = (_bf16_plant_on_ml_dtypes(c, nested, x, y).astype(np.float32)
                for c in ("ltu", "lt"))
        compares_differ = np.isnan(x.astype(np.float32) + y.astype(np.float32)) \
            | np.isnan(y.astype(np.float32))
    assert ((a == b) | (np.isnan(a) & np.isnan(b))).all()
    assert compares_differ.any()


# Operators a NaN of numbers comes from (`BORN_NAN`) and those that make none, with
# numbers (as numpy computes them in float32, apart from z3) at which each row does
NOT_BORN_NAN = {z3.Z3_OP_FPA_NEG, z3.Z3_OP_FPA_ABS, z3.Z3_OP_FPA_MIN, z3.Z3_OP_FPA_MAX,
                z3.Z3_OP_ITE, z3.Z3_OP_FPA_TO_FP, z3.Z3_OP_FPA_ROUND_TO_INTEGRAL}
NUMPY_BORN_NAN = {
    z3.Z3_OP_FPA_ADD: lambda np: np.float32(np.inf) + np.float32(-np.inf),
    z3.Z3_OP_FPA_SUB: lambda np: np.float32(np.inf) - np.float32(np.inf),
    z3.Z3_OP_FPA_MUL: lambda np: np.float32(0) * np.float32(np.inf),
    z3.Z3_OP_FPA_DIV: lambda np: np.float32(0) / np.float32(0),
    z3.Z3_OP_FPA_FMA: lambda np: np.float32(0) * np.float32(np.inf) + np.float32(1),
    z3.Z3_OP_FPA_SQRT: lambda np: np.sqrt(np.float32(-1)),
    z3.Z3_OP_FPA_REM: lambda np: np.fmod(np.float32(np.inf), np.float32(1))}


@pytest.mark.parametrize("kind", sorted(float_facts.BORN_NAN | NOT_BORN_NAN), ids=_name)
def test_born_nan_rows_are_the_operators_that_make_a_nan_of_numbers(kind):
    """A row of BORN_NAN has operands, none a NaN, whose result is a NaN (z3, the small
    format); every other operator listed has none, in any rounding mode."""
    xs = list(z3.FPs("x y z", SMALL))
    no_nan = z3.And(*[z3.Not(z3.fpIsNaN(x)) for x in xs])
    for rm in RMS:
        t = _apply(kind, xs, rm())
        made = not _valid(z3.Implies(no_nan, z3.Not(z3.fpIsNaN(t))))
        assert made == (kind in float_facts.BORN_NAN)


@pytest.mark.parametrize("kind", sorted(NUMPY_BORN_NAN), ids=_name)
def test_born_nan_rows_on_numpy(kind):
    np = pytest.importorskip("numpy")
    assert kind in float_facts.BORN_NAN
    with np.errstate(all="ignore"):
        assert np.isnan(NUMPY_BORN_NAN[kind](np))


CLASS_TESTS = {z3.Z3_OP_FPA_IS_NAN: z3.fpIsNaN, z3.Z3_OP_FPA_IS_ZERO: z3.fpIsZero,
               z3.Z3_OP_FPA_IS_INF: z3.fpIsInf, z3.Z3_OP_FPA_IS_NORMAL: z3.fpIsNormal,
               z3.Z3_OP_FPA_IS_SUBNORMAL: z3.fpIsSubnormal,
               z3.Z3_OP_FPA_IS_NEGATIVE: z3.fpIsNegative,
               z3.Z3_OP_FPA_IS_POSITIVE: z3.fpIsPositive}


@pytest.mark.parametrize("kind", sorted(float_facts.SEES_NAN), ids=_name)
def test_sees_nan_rows_are_decided_by_the_nan_or_give_the_other_operand(kind):
    """Where an operand is a NaN, a SEES_NAN row's result is a fixed truth value or the
    other operand, whatever the other operand is (z3, the small format)."""
    y = z3.FP("y", SMALL)
    nan = z3.fpNaN(SMALL)
    for args in ([nan, y],) if kind in CLASS_TESTS else ([nan, y], [y, nan]):
        t = CLASS_TESTS[kind](nan) if kind in CLASS_TESTS else _apply(kind, args, z3.RNE())
        if z3.is_bool(t):
            assert _valid(t) or _valid(z3.Not(t))
        else:
            assert _valid(t == y)


def test_sees_nan_on_numpy():
    """The same apart from z3: numpy's comparisons with a NaN are false, and fmin/fmax
    (PTX's min/max, SMT-LIB's fp.min/fp.max) of a NaN and a number give the number."""
    np = pytest.importorskip("numpy")
    nan, one = np.float32(np.nan), np.float32(1)
    for compare in (np.less, np.less_equal, np.greater, np.greater_equal, np.equal):
        assert not compare(nan, one) and not compare(one, nan)
    assert np.fmin(nan, one) == one and np.fmax(one, nan) == one


def test_the_rebuilt_count_reaches_into_a_nan_tests_operand():
    """`_rebuilt` counts the terms `_without` makes anew, those inside a NaN test's
    operand too (the limit REBUILT is on them): against a plain count."""
    t = _bf16_plant("ltu", nested=True)
    found = float_facts.poisoners(t) & float_facts.nan_tested(t)
    assert found

    def anew(u: z3.ExprRef, seen: dict[int, bool]) -> None:
        if u.get_id() in seen:
            return
        read_false = z3.is_app_of(u, z3.Z3_OP_FPA_IS_NAN) \
            and float_facts.nan_source(u.arg(0)).get_id() in found
        seen[u.get_id()] = not read_false and bool(found & float_facts.nan_tested(u))
        if seen[u.get_id()]:
            for k in u.children():
                anew(k, seen)
    seen: dict[int, bool] = {}
    anew(t, seen)
    assert float_facts._rebuilt(t, found) == sum(seen.values()) > 1
