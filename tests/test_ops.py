"""The operator table (`ptxsmt/terms/ops.py`) row by row against z3's own evaluation of each
operator (`z3.simplify` of the operator applied to numerals): its exact Python value, its
numpy spelling (what the fast path writes) and its IEEE class rule, at several widths and
float formats, on edge values and seeded random ones. The IEEE operations' values are
also held against exact rationals: a finite result is the rounding mode's neighbour of
the exact real, found from the result's own bits (no rounding code of ptxsmt's).
"""

from __future__ import annotations

import itertools
import math
import operator
import random
from fractions import Fraction

import numpy as np
import pytest
import z3

from ptxsmt.terms import ops
from ptxsmt.terms.floats import bits_of_float, float_of_bits

WIDTHS = (1, 3, 8, 13, 16, 32, 64)
FORMATS = ((3, 4), (5, 11), (8, 8), (8, 24), (11, 53))  # (ebits, sbits): small, f16, bf16, ...
NUMPY_FLOATS = {(5, 11): np.float16, (8, 24): np.float32, (11, 53): np.float64}
MODES = {"RNE": z3.RNE(), "RNA": z3.RNA(), "RTZ": z3.RTZ(), "RTP": z3.RTP(), "RTN": z3.RTN()}
CLASSES = (ops.NAN, ops.PLUS_ZERO, ops.MINUS_ZERO, ops.PLUS_INF, ops.MINUS_INF, ops.POSITIVE,
           ops.NEGATIVE)

# each operator built through z3's API: the reference the table is held against
BUILD = {
    z3.Z3_OP_BADD: operator.add, z3.Z3_OP_BSUB: operator.sub, z3.Z3_OP_BMUL: operator.mul,
    z3.Z3_OP_BAND: operator.and_, z3.Z3_OP_BOR: operator.or_, z3.Z3_OP_BXOR: operator.xor,
    z3.Z3_OP_BUDIV: z3.UDiv, z3.Z3_OP_BUREM: z3.URem, z3.Z3_OP_BSDIV: operator.truediv,
    z3.Z3_OP_BSREM: z3.SRem, z3.Z3_OP_BSMOD: operator.mod,
    z3.Z3_OP_ULT: z3.ULT, z3.Z3_OP_ULEQ: z3.ULE, z3.Z3_OP_UGT: z3.UGT, z3.Z3_OP_UGEQ: z3.UGE,
    z3.Z3_OP_SLT: operator.lt, z3.Z3_OP_SLEQ: operator.le, z3.Z3_OP_SGT: operator.gt,
    z3.Z3_OP_SGEQ: operator.ge,
    z3.Z3_OP_AND: z3.And, z3.Z3_OP_OR: z3.Or, z3.Z3_OP_XOR: z3.Xor,
    z3.Z3_OP_FPA_LT: z3.fpLT, z3.Z3_OP_FPA_LE: z3.fpLEQ, z3.Z3_OP_FPA_GT: z3.fpGT,
    z3.Z3_OP_FPA_GE: z3.fpGEQ, z3.Z3_OP_FPA_EQ: z3.fpEQ,
    z3.Z3_OP_FPA_IS_NAN: z3.fpIsNaN, z3.Z3_OP_FPA_IS_INF: z3.fpIsInf,
    z3.Z3_OP_FPA_IS_ZERO: z3.fpIsZero, z3.Z3_OP_FPA_IS_SUBNORMAL: z3.fpIsSubnormal,
    z3.Z3_OP_FPA_IS_NORMAL: z3.fpIsNormal, z3.Z3_OP_FPA_IS_NEGATIVE: z3.fpIsNegative,
    z3.Z3_OP_FPA_IS_POSITIVE: z3.fpIsPositive,
    z3.Z3_OP_FPA_ADD: z3.fpAdd, z3.Z3_OP_FPA_SUB: z3.fpSub, z3.Z3_OP_FPA_MUL: z3.fpMul,
    z3.Z3_OP_FPA_DIV: z3.fpDiv, z3.Z3_OP_FPA_FMA: z3.fpFMA, z3.Z3_OP_FPA_SQRT: z3.fpSqrt,
    z3.Z3_OP_FPA_REM: z3.fpRem, z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: z3.fpRoundToIntegral,
    z3.Z3_OP_FPA_NEG: z3.fpNeg, z3.Z3_OP_FPA_ABS: z3.fpAbs, z3.Z3_OP_FPA_MIN: z3.fpMin,
    z3.Z3_OP_FPA_MAX: z3.fpMax,
}
# z3's internal division kinds (no API builds them): SMT-LIB's division, as their rows say
INTERNAL = {z3.Z3_OP_BUDIV_I: z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM_I: z3.Z3_OP_BUREM,
            z3.Z3_OP_BSDIV_I: z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM_I: z3.Z3_OP_BSREM,
            z3.Z3_OP_BSMOD_I: z3.Z3_OP_BSMOD}
ROUNDED = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_SUB, z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_DIV,
           z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_SQRT, z3.Z3_OP_FPA_ROUND_TO_INTEGRAL}
ARITY = {z3.Z3_OP_FPA_FMA: 3, z3.Z3_OP_FPA_SQRT: 1, z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: 1,
         z3.Z3_OP_FPA_NEG: 1, z3.Z3_OP_FPA_ABS: 1}


def signed(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) else x


def bit_patterns(w: int, rng: random.Random, count: int = 6) -> list[int]:
    mask = (1 << w) - 1
    edges = {0, 1, mask, mask - 1 & mask, 1 << (w - 1), (1 << (w - 1)) - 1}
    return sorted(edges) + [rng.getrandbits(w) for _ in range(count)]


def float_patterns(fmt: tuple[int, int], rng: random.Random, count: int = 6) -> list[int]:
    """Bits of each class and edge (zeros, infinities, a NaN, the least subnormal, the
    largest finite, one) and random ones."""
    e, p = fmt
    w, man, inf = e + p, p - 1, ((1 << e) - 1) << (p - 1)
    one = ((1 << (e - 1)) - 1) << man
    edges = [0, 1 << (w - 1), inf, inf | 1 << (w - 1), inf | 1 << (man - 1), 1,
             inf - 1, one, one | 1 << (w - 1), one + 1]
    return edges + [rng.getrandbits(w) for _ in range(count)]


def fp(bits: int, fmt: tuple[int, int]) -> z3.FPRef:
    return z3.fpBVToFP(z3.BitVecVal(bits, sum(fmt)), z3.FPSort(*fmt))


def z3_bool(t: z3.BoolRef) -> bool:
    v = z3.simplify(t)
    assert z3.is_true(v) or z3.is_false(v), t
    return z3.is_true(v)


def z3_float(t: z3.FPRef) -> float:
    """The value z3 gives the term (NaN for any NaN)."""
    if z3_bool(z3.fpIsNaN(t)):
        return math.nan
    fmt = (t.sort().ebits(), t.sort().sbits())
    return float_of_bits(z3.simplify(z3.fpToIEEEBV(t)).as_long(), fmt)


def same_float(x: float, y: float, fmt: tuple[int, int]) -> bool:
    return math.isnan(x) and math.isnan(y) or \
        not math.isnan(x) and bits_of_float(x, fmt) == bits_of_float(y, fmt)


def symbolic(k: int) -> z3.ExprRef:
    """The operator applied to constants, built through z3's API."""
    family = ops.OPS[k].family
    if family.startswith("fp"):
        args = z3.FPs("a b c", z3.Float32())[:1 if family == "fp test" else ARITY.get(k, 2)]
        return BUILD[k](z3.RNE(), *args) if k in ROUNDED else BUILD[k](*args)
    return BUILD[k](*(z3.Bools("p q") if family == "logic" else z3.BitVecs("x y", 8)))


def name(k: int) -> str:
    """The operator's name, for test ids."""
    return symbolic(k).decl().name()


def test_every_row_is_built_by_the_reference():
    """Each row has its z3 construction, and that construction is the row's operator."""
    assert set(BUILD) | set(INTERNAL) == set(ops.OPS)
    for k, internal in INTERNAL.items():
        assert ops.OPS[k].value is ops.OPS[internal].value
    for k in BUILD:
        assert symbolic(k).decl().kind() == k, k


INTEGER_ROWS = sorted(k for k in BUILD
                      if ops.OPS[k].family in ("arith", "bitwise", "division", "unsigned",
                                               "signed"))


@pytest.mark.parametrize("k", INTEGER_ROWS, ids=name)
@pytest.mark.filterwarnings("ignore:overflow")  # a word wraps, as the fast path's, then is cut
def test_each_bit_vector_row_is_z3s_operator(k):
    """The exact value and the numpy spelling (on the word numpy holds w bits in) of a
    bit-vector operator, on every pair of edge and random values, at each width."""
    op, rng = ops.OPS[k], random.Random(k)
    for w in WIDTHS:
        mask, word = (1 << w) - 1, getattr(np, f"uint{next(b for b in (8, 16, 32, 64) if w <= b)}")
        xs = bit_patterns(w, rng)
        for x, y in itertools.product(xs, repeat=2):
            reference = z3.simplify(BUILD[k](z3.BitVecVal(x, w), z3.BitVecVal(y, w)))
            want = reference.as_long() if z3.is_bv_value(reference) else z3.is_true(reference)
            if op.family in ("arith", "bitwise"):
                got = op.value(x, y) & mask
                spelled = int(eval(f"x {op.numpy} y", {"x": word(x), "y": word(y)})) & mask
            elif op.family == "division":
                got, spelled = op.value(x, y, w), want  # no spelling: the fast path lacks it
            elif op.family == "unsigned":
                got = op.value(x, y)
                spelled = bool(eval(f"x {op.numpy} y", {"x": word(x), "y": word(y)}))
            else:
                got = op.value(signed(x, w), signed(y, w))
                spelled = bool(eval(f"x {op.numpy} y", {"x": np.int64(signed(x, w)),
                                                         "y": np.int64(signed(y, w))}))
            assert got == want and spelled == want, (k, w, x, y, got, spelled, want)


@pytest.mark.parametrize("k", sorted(ops.family("logic")), ids=name)
def test_each_connective_row_is_z3s_operator(k):
    op = ops.OPS[k]
    for x, y in itertools.product((False, True), repeat=2):
        want = z3_bool(BUILD[k](z3.BoolVal(x), z3.BoolVal(y)))
        spelled = bool(eval(f"x {op.numpy} y", {"x": np.bool_(x), "y": np.bool_(y)}))
        assert op.value((x, y)) == want == spelled, (k, x, y)


def float_view(bits: list[int], fmt: tuple[int, int]) -> np.ndarray:
    return np.array(bits, dtype=f"uint{sum(fmt)}").view(NUMPY_FLOATS[fmt])


@pytest.mark.parametrize("k", sorted(ops.family("fp compare")), ids=name)
def test_each_float_compare_row_is_z3s_operator(k):
    op, rng = ops.OPS[k], random.Random(k)
    for fmt in FORMATS:
        xs = float_patterns(fmt, rng)
        pairs = list(itertools.product(xs, repeat=2))
        want = [z3_bool(BUILD[k](fp(x, fmt), fp(y, fmt))) for x, y in pairs]
        got = [op.value(float_of_bits(x, fmt), float_of_bits(y, fmt)) for x, y in pairs]
        assert got == want, (k, fmt)
        if fmt in NUMPY_FLOATS:
            a, b = (float_view([p[i] for p in pairs], fmt) for i in (0, 1))
            spelled = eval(f"a {op.numpy} b", {"a": a, "b": b})
            assert spelled.tolist() == want, (k, fmt)
        ordered = [compare_as_order(op.order, float_of_bits(x, fmt), float_of_bits(y, fmt))
                   for x, y in pairs]
        assert ordered == want, (k, fmt)


def compare_as_order(order: tuple, x: float, y: float) -> bool:
    """The compare the truth tables read: neither is a NaN, and x < y, y < x as `order`
    says (True: holds, False: does not, None: either)."""
    return not (math.isnan(x) or math.isnan(y)) and all(
        want is None or (a < b) == want for (a, b), want in zip(((x, y), (y, x)), order,
                                                                strict=True))


@pytest.mark.parametrize("k", sorted(ops.family("fp test")), ids=name)
def test_each_float_test_row_is_z3s_operator_and_holds_for_its_classes(k):
    """The value, the spelling over the bits (as `fast/codegen.py` formats it), and the
    class rule: the test holds of a value exactly where the value's class is in `holds`."""
    op, rng = ops.OPS[k], random.Random(k)
    for fmt in FORMATS:
        e, p = fmt
        xs = float_patterns(fmt, rng, 20)
        want = [z3_bool(BUILD[k](fp(x, fmt))) for x in xs]
        assert [op.value(float_of_bits(x, fmt), fmt) for x in xs] == want, (k, fmt)
        if fmt in NUMPY_FLOATS:
            b = np.array(xs, dtype=f"uint{e + p}")
            sign = 1 << (e + p - 1)
            spelled = eval(op.numpy.format(b="b", view="v", sign=sign, sign_less=sign - 1,
                                           inf=((1 << e) - 1) << (p - 1), man=(1 << (p - 1)) - 1),
                           {"b": b, "v": b.view(NUMPY_FLOATS[fmt]), "isnan": np.isnan,
                            "isinf": np.isinf})
            assert spelled.tolist() == want, (k, fmt)
        if op.holds is not None:
            for x, holds in zip(xs, want, strict=True):
                assert bool(op.holds & class_of(float_of_bits(x, fmt))) == holds, (k, fmt, x)


def class_of(x: float) -> int:
    if math.isnan(x):
        return ops.NAN
    minus = math.copysign(1.0, x) < 0
    if x == 0:
        return ops.MINUS_ZERO if minus else ops.PLUS_ZERO
    if math.isinf(x):
        return ops.MINUS_INF if minus else ops.PLUS_INF
    return ops.NEGATIVE if minus else ops.POSITIVE


FLOAT_ROWS = sorted(ops.family("fp"))


def float_cases(k: int, fmt: tuple[int, int], rng: random.Random) -> list[tuple[int, ...]]:
    n = ARITY.get(k, 2)
    xs = float_patterns(fmt, rng, 2)
    if n == 3:
        return [tuple(rng.choice(xs) for _ in range(3)) for _ in range(40)]
    return list(itertools.product(xs, repeat=n))


def float_modes(k: int, fmt: tuple[int, int]) -> list[str | None]:
    if k not in ROUNDED:
        return [None]
    return list(MODES) if fmt == (3, 4) else ["RNE", "RTZ"]


def z3_apply(k: int, mode: str | None, fmt, case) -> z3.FPRef:
    args = [fp(x, fmt) for x in case]
    return BUILD[k](MODES[mode], *args) if mode else BUILD[k](*args)


def open_signed_zero(k: int, xs: list[float]) -> bool:
    """fp.min/fp.max of +0 and -0: SMT-LIB lets it be either."""
    return k in (z3.Z3_OP_FPA_MIN, z3.Z3_OP_FPA_MAX) and xs[0] == xs[1] == 0 and \
        math.copysign(1, xs[0]) != math.copysign(1, xs[1])


@pytest.mark.parametrize("k", FLOAT_ROWS, ids=name)
def test_each_ieee_row_is_z3s_operator(k):
    """The exact value in each format and rounding mode (where it gives one)."""
    op, rng = ops.OPS[k], random.Random(k)
    for fmt in FORMATS:
        for mode, case in itertools.product(float_modes(k, fmt), float_cases(k, fmt, rng)):
            xs = [float_of_bits(x, fmt) for x in case]
            got = op.value(fmt, *([mode] if mode else []), *xs)
            if got is None or open_signed_zero(k, xs):
                continue
            want = z3_float(z3_apply(k, mode, fmt, case))
            assert same_float(got, want, fmt), (k, fmt, mode, xs, got, want)


EXACT = {z3.Z3_OP_FPA_ADD: operator.add, z3.Z3_OP_FPA_SUB: operator.sub,
         z3.Z3_OP_FPA_MUL: operator.mul, z3.Z3_OP_FPA_DIV: operator.truediv,
         z3.Z3_OP_FPA_FMA: lambda a, b, c: a * b + c}


def neighbours(r: float, fmt: tuple[int, int]) -> tuple[Fraction, Fraction] | None:
    """The values of the format just below and above the finite nonzero r, from its bits
    (None at the ends of the finite range)."""
    bits = bits_of_float(abs(r), fmt)
    lo, hi = float_of_bits(bits - 1, fmt), float_of_bits(bits + 1, fmt)
    if bits <= 1 or math.isinf(hi):
        return None
    lo, hi = Fraction(lo), Fraction(hi)
    return (-hi, -lo) if r < 0 else (lo, hi)


@pytest.mark.parametrize("k", sorted(EXACT), ids=name)
def test_each_rounded_result_is_the_modes_neighbour_of_the_exact_real(k):
    """On finite operands with a finite nonzero result r: r is the exact real where that
    is a value of the format; else the exact real lies between r and a neighbour of r,
    on the side the mode rounds to (to nearest: no nearer than half their gap)."""
    op, rng = ops.OPS[k], random.Random(k)
    checked = 0
    for fmt in ((3, 4), (5, 11), (8, 24)):
        for mode, case in itertools.product(MODES, float_cases(k, fmt, rng)):
            xs = [float_of_bits(x, fmt) for x in case]
            if not all(map(math.isfinite, xs)) or k == z3.Z3_OP_FPA_DIV and xs[1] == 0:
                continue
            r = op.value(fmt, mode, *xs)
            exact = EXACT[k](*map(Fraction, xs))
            near = neighbours(r, fmt) if math.isfinite(r) and r != 0 else None
            if near is None:
                continue
            checked += 1
            lo, hi = near
            r = Fraction(r)
            if r == exact:
                continue
            assert lo < exact < hi, (k, fmt, mode, xs)
            below = exact < r  # r was rounded up
            if mode == "RTP" or mode == "RTN":
                assert below == (mode == "RTP"), (k, fmt, mode, xs)
            elif mode == "RTZ":
                assert abs(r) < abs(exact) or exact == r, (k, fmt, mode, xs)
            else:
                other = lo if below else hi
                assert abs(r - exact) <= abs(other - exact), (k, fmt, mode, xs)
    assert checked > 100


@pytest.mark.parametrize("k", sorted(k for k, op in ops.OPS.items() if op.propagates),
                         ids=name)
def test_each_propagating_row_gives_a_nan_exactly_where_its_class_rule_says(k):
    """A NaN operand gives a NaN; operands of numbers give a NaN where their classes are
    an invalid row and never elsewhere (for the rows that list them all: add, sub, mul,
    div); z3 decides each case, with operands of every class."""
    op, rng = ops.OPS[k], random.Random(k)
    fmt = (3, 4)
    modes = ["RNE"] if k in ROUNDED else [None]
    exhaustive = bool(op.invalid)
    for mode, case in itertools.product(modes, float_cases(k, fmt, rng)):
        classes = [class_of(float_of_bits(x, fmt)) for x in case]
        nan = math.isnan(z3_float(z3_apply(k, mode, fmt, case)))
        if ops.NAN in classes:
            assert nan, (k, classes)
        elif exhaustive:
            invalid = any(all(c & row_class for c, row_class in zip(classes, row, strict=True))
                          for row in op.invalid)
            assert nan == invalid, (k, classes)


def test_the_propagating_rows_are_ieees_computational_operations():
    """IEEE 754 6.2: an arithmetic operation of a NaN gives a NaN; fp.min and fp.max do
    not (the number), and fp.neg, fp.abs are sign operations, whose classes the rules do
    not read (any class: sound, if less precise)."""
    assert {name(k) for k, op in ops.OPS.items() if op.propagates} == {
        "fp.add", "fp.sub", "fp.mul", "fp.div", "fp.fma", "fp.sqrt", "fp.rem",
        "fp.roundToIntegral"}
    nan, one = fp(float_patterns((3, 4), random.Random(0))[4], (3, 4)), z3.FPVal(1, z3.FPSort(3, 4))
    for build in (z3.fpMin, z3.fpMax):
        assert z3_float(build(nan, one)) == 1.0


def test_no_other_row_claims_a_class_rule():
    """Only IEEE operations propagate NaNs or list invalid operands; only class tests
    hold for classes."""
    for k, op in ops.OPS.items():
        assert not (op.propagates or op.invalid) or op.family == "fp", k
        assert op.holds is None or op.family == "fp test", k
        assert not op.invalid or op.propagates, k
