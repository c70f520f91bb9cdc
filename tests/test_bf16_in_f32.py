"""bf16 written in f32 for bitwuzla (`smt.solving.bf16_in_f32`): each rule against the
exact oracle (tests/exact_float.py: rationals, one rounding), on values that make
rounding hard; the rounding of an f32 to bf16 proved by z3 for every rounding mode;
and the portfolio handing bitwuzla the translation (its models still replayed).
scripts/prove_bf16_in_f32.py proves every rule by z3 (minutes: not a test)."""

from __future__ import annotations

import random

import ml_dtypes
import numpy as np
import pytest
import z3
from exact_float import NAN, arith, decode, to_format

from ptxsmt.smt.solving import bf16_in_f32, portfolio
from ptxsmt.smt.solving.bf16_in_f32 import BF16, F32, in_f32

MODES = {"rn": z3.RNE, "rna": z3.RNA, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP}
OPS = {"add": (2, z3.fpAdd), "sub": (2, z3.fpSub), "mul": (2, z3.fpMul),
       "div": (2, z3.fpDiv), "sqrt": (1, z3.fpSqrt), "fma": (3, z3.fpFMA)}

# zeros, the subnormal ends, 1 and its neighbours, the finite ends, infinities, a NaN
SPECIAL = [0x0000, 0x8000, 0x0001, 0x807F, 0x007F, 0x0080, 0x3F80, 0x3F81, 0x3F7F, 0xBF80,
           0x7F7F, 0xFF7F, 0x0100, 0x7F80, 0xFF80, 0x7FC0, 0x4040, 0x3EAB, 0x1F80, 0x2001]
# exact ties and near-ties of bf16 that f32 holds exactly, or rounds onto a tie:
# 1 + 2^-8 (a tie between 1 and 1 + 2^-7); (1 + 2^-4)^2 = 1 + 2^-3 + 2^-8, a tie too,
# which 2^-100 (0x0d80) or -2^-100 (0x8d80) moves off only in an fma; the largest
# finite value plus half its last place (overflow to infinity, or not, by mode)
HARD = {"add": [(0x3F80, 0x3B80), (0x3F81, 0x3B80), (0x7F7F, 0x7300), (0x3F80, 0xB080)],
        "sub": [(0x3F80, 0xBB80), (0x3F80, 0x3380)],
        "mul": [(0x3F88, 0x3F88), (0x3F88, 0xBF88), (0x7F7F, 0x3F81), (0x0001, 0x3F00)],
        "div": [(0x3F80, 0x4040), (0x0001, 0x4000), (0x7F7F, 0x3F7F)],
        "sqrt": [(0x4000,), (0x0001,), (0x7F7F,)],
        "fma": [(0x3F88, 0x3F88, 0x0D80), (0x3F88, 0x3F88, 0x8D80), (0x3F88, 0xBF88, 0x0D80),
                (0x3F88, 0x3F88, 0x0000), (0x3F80, 0x3F80, 0xBF80), (0x7F7F, 0x3F81, 0xFF7F),
                (0x0001, 0x3F00, 0x0001), (0x7F7F, 0x7F7F, 0xFF80)]}


def _view(bits: int) -> z3.FPRef:
    return z3.fpBVToFP(z3.BitVecVal(bits, 16), BF16)


def _value(t: z3.ExprRef, definitions: list[z3.BoolRef]) -> int:
    """The bits of the f32 term `t` on constants (a NaN: f32's canonical one): each
    fresh bits constant the translation defined replaced by its float's bits, then
    folded by z3."""
    bits = [(d.arg(0).arg(0), _bits(d.arg(1))) for d in definitions]
    for _ in bits:  # a definition's float may read an earlier one's bits
        t = z3.substitute(t, *bits)
    return z3.simplify(_bits(t)).as_long()


def _bits(x: z3.FPRef) -> z3.BitVecRef:
    """The bits of an f32, a NaN's the canonical (z3 leaves them unspecified)."""
    return z3.If(z3.fpIsNaN(x), z3.BitVecVal(0x7FC00000, 32), z3.fpToIEEEBV(x))


def _translated(op: str, mode: str, xs: tuple[int, ...]) -> int:
    (term,) = [bf16_in_f32._Translation()]  # noqa: RUF015 - one translation, its definitions
    wide = term.term(OPS[op][1](MODES[mode](), *map(_view, xs)))
    return _value(wide, term.definitions)


def _samples(op: str, n: int, seed: int) -> list[tuple[int, ...]]:
    rng = random.Random(seed)
    pick = [*SPECIAL, *(rng.getrandbits(16) for _ in range(30))]
    arity = OPS[op][0]
    return HARD[op] + [tuple(rng.choice(pick) for _ in range(arity)) for _ in range(n)]


@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("mode", MODES)
def test_each_operation_written_in_f32_is_the_bf16_operation(op, mode):
    """The f32 the translation computes holds the bf16 result the exact oracle rounds
    once, bit for bit (its low 16 bits zero); a NaN for a NaN."""
    for xs in _samples(op, 25, hash((op, mode)) % 1000):
        got, want = _translated(op, mode, xs), arith(op, mode, "bf16", *xs)
        if want == NAN:
            assert decode(got, "f32").kind == "nan", (op, mode, [hex(x) for x in xs])
        else:
            assert got == want << 16, (op, mode, [hex(x) for x in xs], hex(got), hex(want))


@pytest.mark.parametrize("mode", MODES)
def test_the_rounding_of_an_f32_to_bf16_is_z3s_conversion(mode):
    """`rounded` (an f32's bits plus the mode's increment, cut) is z3's own fp.to_fp
    to bf16, proved for every f32 (unsat of the difference), NaN to NaN."""
    x = z3.fpBVToFP(z3.BitVec("x", 32), F32)
    narrowed = z3.fpToFP(MODES[mode](), x, BF16)
    translation = bf16_in_f32._Translation()
    s = z3.Solver()
    s.add(*[translation.term(narrowed) != z3.fpToFP(z3.RNE(), narrowed, F32)],
          *translation.definitions)
    assert s.check() == z3.unsat


def test_conversions_from_f32_and_f64_round_once():
    """cvt.bf16.f32 rounds the f32's bits; from an f64 the value goes through f32
    rounded to odd, so a tie of bf16 that f32 would make is not one (sampled against
    the oracle)."""
    rng = random.Random(7)
    f64s = [0x3FF0100000000001, 0x3FF0100000000000, 0xBFF0100000000001, 0x47EFF00000000000,
            0x3800000000000001, 0x7FF8000000000000, *(rng.getrandbits(64) for _ in range(40))]
    for bits in f64s:
        for mode, rm in MODES.items():
            translation = bf16_in_f32._Translation()
            x = z3.fpBVToFP(z3.BitVecVal(bits, 64), z3.Float64())
            got = _value(translation.term(z3.fpToFP(rm(), x, BF16)), translation.definitions)
            want = to_format(decode(bits, "f64"), "bf16", mode)
            assert (decode(got, "f32").kind == "nan") if want == NAN else got == want << 16, \
                (hex(bits), mode)


def test_what_no_rule_covers_leaves_the_query_as_it_was():
    """A rounding mode that is a term, or a bf16 from an integer: None, and the
    portfolio does not ask bitwuzla, saying why."""
    rm = z3.Const("rm", z3.RNE().sort())
    a, b = _view(0x3F80), z3.fpBVToFP(z3.BitVec("b", 16), BF16)
    assert in_f32([z3.fpIsNaN(z3.fpAdd(rm, a, b))]) is None
    assert in_f32([z3.fpIsNaN(z3.fpSignedToFP(z3.RNE(), z3.BitVec("i", 32), BF16))]) is None
    answer = portfolio.solve([z3.fpIsNaN(z3.fpAdd(rm, a, b))], 10, ["bitwuzla"])
    assert answer.result == "unknown" and answer.reason == f"bitwuzla: {portfolio.UNTRANSLATED}"


def test_a_translation_keeps_the_querys_constants():
    """Bit-vector and Bool constants keep their names and sorts (a model's values are
    the query's); a bf16 constant becomes 16 bits of its own."""
    h, p = z3.BitVec("h", 16), z3.Bool("p")
    c = z3.Const("c", BF16)
    (query,) = in_f32([z3.Or(p, z3.fpLT(z3.fpAdd(z3.RNE(), z3.fpBVToFP(h, BF16), c), c))])[1:]
    names = {str(t) for t in z3_constants(query)}
    assert {"h", "p", "c!bf16"} <= names and "c" not in names


def z3_constants(t: z3.ExprRef) -> list[z3.ExprRef]:
    seen, out, todo = set(), [], [t]
    while todo:
        u = todo.pop()
        if u.get_id() not in seen:
            seen.add(u.get_id())
            if z3.is_const(u) and u.decl().kind() == z3.Z3_OP_UNINTERPRETED:
                out.append(u)
            todo.extend(u.children())
    return out


def _bf16_pair(planted: bool) -> list[z3.BoolRef]:
    """Two bf16 results that differ (bit for bit, no NaN): a + b against a - (-b), or
    where `planted`, fma(a, b, c) against the product rounded and then the sum (a
    function pair's shape in small)."""
    a, b, c = (z3.fpBVToFP(z3.BitVec(n, 16), BF16) for n in "abc")
    rn = z3.RNE()
    x, y = (z3.fpFMA(rn, a, b, c), z3.fpAdd(rn, z3.fpMul(rn, a, b), c)) if planted else \
        (z3.fpAdd(rn, a, b), z3.fpSub(rn, a, z3.fpNeg(b)))
    return [z3.Not(z3.fpToIEEEBV(x) == z3.fpToIEEEBV(y)), z3.Not(z3.fpIsNaN(x))]


@pytest.mark.skipif("bitwuzla" in portfolio.unavailable(), reason="needs bitwuzla")
def test_bitwuzla_decides_bf16_queries_and_its_models_hold_in_z3():
    """The race and the sweep's solver hand bitwuzla the translation: unsat where the
    sides agree; where they differ, a model of the bf16 inputs that z3 confirms."""
    assert portfolio.unreadable(_bf16_pair(False), portfolio.SOLVERS) == {}
    assert portfolio.solve(_bf16_pair(False), 60, ["bitwuzla"]).result == "unsat"
    assert portfolio.solve_here(_bf16_pair(False), 60).result == "unsat"
    for answer in (portfolio.solve(_bf16_pair(True), 60, ["bitwuzla"]),
                   portfolio.solve_here(_bf16_pair(True), 60)):
        assert answer.result == "sat" and answer.solver == "bitwuzla"
        s = z3.Solver()
        s.add(*_bf16_pair(True), *[z3.BitVec(n, 16) == answer.values[n] for n in "abc"])
        assert s.check() == z3.sat


def test_commuted_operands_are_one_term():
    """a*b + c*d and c*d + b*a (and an fma's factors swapped) translate to one term with
    one set of fresh bits: a solver sees them equal by hashing, where each rounding's
    own fresh bits hid it (bitwuzla: 3.3 s against 0.03 s)."""
    a, b, c, d = (z3.fpBVToFP(z3.BitVec(n, 16), BF16) for n in "abcd")
    rn = z3.RNE()
    one, other = (z3.fpAdd(rn, z3.fpMul(rn, a, b), z3.fpMul(rn, c, d)),
                  z3.fpAdd(rn, z3.fpMul(rn, c, d), z3.fpMul(rn, b, a)))
    translation = bf16_in_f32._Translation()
    assert translation.term(one).eq(translation.term(other))
    assert len(translation.definitions) == 3
    assert translation.term(z3.fpFMA(rn, a, b, c)).eq(translation.term(z3.fpFMA(rn, b, a, c)))


# bf16 terms over a and b whose translation knows their bits (`_Translation.known`), each
# with ml_dtypes' value for them: its bfloat16 arithmetic rounds the f32 result to
# nearest even, which for +, - and * is the bf16 operation (double rounding is innocuous)
KNOWN = {
    "view": (lambda a, b: a, lambda x, y: x),
    "neg": (lambda a, b: z3.fpNeg(a), lambda x, y: -x),
    "abs": (lambda a, b: z3.fpAbs(b), lambda x, y: abs(y)),
    "add": (lambda a, b: z3.fpAdd(z3.RNE(), a, b), lambda x, y: x + y),
    "sub": (lambda a, b: z3.fpSub(z3.RNE(), a, b), lambda x, y: x - y),
    "mul": (lambda a, b: z3.fpMul(z3.RNE(), a, b), lambda x, y: x * y),
    "ite": (lambda a, b: z3.If(z3.fpLT(a, b), a, z3.fpNeg(b)), lambda x, y: x if x < y else -y),
    "numeral": (lambda a, b: z3.FPVal(-1.5, BF16), lambda x, y: ml_dtypes.bfloat16(-1.5)),
    "zero": (lambda a, b: z3.fpMinusZero(BF16), lambda x, y: ml_dtypes.bfloat16(-0.0)),
}


ROUNDED = ("add", "sub", "mul")


@pytest.mark.parametrize(("rule", "mode"), [(r, m) for r in KNOWN
                                            for m in (MODES if r in ROUNDED else ["rn"])])
def test_a_known_bf16s_bits_are_its_f32s_high_half(rule, mode):
    """Where a translated bf16 is no NaN, the bits the translation notes for it are
    the high half of its f32 (the low half zero): proved by z3 for all operands, the
    roundings in every mode."""
    a, b = (z3.fpBVToFP(z3.BitVec(n, 16), BF16) for n in "ab")
    term = KNOWN[rule][0](a, b)
    if rule in ROUNDED:
        term = term.decl()(MODES[mode](), *term.children()[1:])
    translation = bf16_in_f32._Translation()
    wide = translation.term(term)
    bits = translation.known(wide)
    assert bits is not None and bits.size() == 16
    s = z3.Solver()
    s.add(*translation.definitions, z3.Not(z3.fpIsNaN(wide)),
          z3.fpToIEEEBV(wide) != z3.Concat(bits, z3.BitVecVal(0, 16)))
    assert s.check() == z3.unsat


def test_equality_on_known_bits_is_smtlibs_equality():
    """`=` of two bf16 values written on their bits (both NaNs, or neither and the same
    bits) is SMT-LIB's `=` of the two f32s, for any f32s whose bits are those where they
    are no NaN: proved by z3."""
    x, y = (z3.fpBVToFP(z3.BitVec(n, 32), F32) for n in "xy")
    hx, hy = z3.BitVec("hx", 16), z3.BitVec("hy", 16)
    translation = bf16_in_f32._Translation()
    for f, h in ((x, hx), (y, hy)):
        translation.knowing(f, h)
    a, b = (z3.Const(n, BF16) for n in "ab")
    s = z3.Solver()
    s.add(*[z3.Or(z3.fpIsNaN(f), z3.fpToIEEEBV(f) == z3.Concat(h, z3.BitVecVal(0, 16)))
            for f, h in ((x, hx), (y, hy))],
          bf16_in_f32._equal(translation, a == b, [x, y]) != (x == y))
    assert s.check() == z3.unsat


def _truth(t: z3.BoolRef, definitions: list[z3.BoolRef]) -> bool:
    """A translated condition on constants: each fresh bits constant replaced by its
    float's bits, folded by z3."""
    bits = [(d.arg(0).arg(0), _bits(d.arg(1))) for d in definitions]
    for _ in bits:
        t = z3.substitute(t, *bits)
    return z3.is_true(z3.simplify(t))


def _smtlib_equal(x, y) -> bool:
    """SMT-LIB's `=` of two floats: both NaNs, or the same value and sign."""
    if np.isnan(x) or np.isnan(y):
        return bool(np.isnan(x) and np.isnan(y))
    return bool(x == y and np.signbit(x) == np.signbit(y))


def test_equality_and_distinct_on_known_bits_agree_with_ml_dtypes():
    """`=` and `distinct` of two translated bf16 results, on operands that make
    zeros of both signs, NaNs, infinities, overflow and rounding, against ml_dtypes'
    bfloat16 arithmetic; a rounding in each mode compared with the exact oracle's
    result and its neighbours."""
    rng = random.Random(11)
    operands = [*SPECIAL, 0x4000, 0xC000, *(rng.getrandbits(16) for _ in range(6))]
    pairs = [(lhs, rhs) for lhs in KNOWN for rhs in KNOWN if lhs <= rhs]
    for x, y in [(rng.choice(operands), rng.choice(operands)) for _ in range(8)]:
        a, b = _view(x), _view(y)
        mx, my = np.array([x, y], dtype=np.uint16).view(ml_dtypes.bfloat16)
        for lhs, rhs in pairs:
            want = _smtlib_equal(KNOWN[lhs][1](mx, my), KNOWN[rhs][1](mx, my))
            for condition, expect in (("=", want), ("distinct", not want)):
                p, q = KNOWN[lhs][0](a, b), KNOWN[rhs][0](a, b)
                translation = bf16_in_f32._Translation()
                got = translation.term(p == q if condition == "=" else z3.Distinct(p, q))
                assert _truth(got, translation.definitions) == expect, \
                    (lhs, condition, rhs, hex(x), hex(y))
        for op, mode in [(op, mode) for op in ROUNDED for mode in MODES]:
            # every rounding mode against the exact oracle (ml_dtypes rounds to nearest)
            want = arith(op, mode, "bf16", x, y)
            result = KNOWN[op][0](a, b)
            result = result.decl()(MODES[mode](), *result.children()[1:])
            for other in ([0x7FC0] if want == NAN else [want, want ^ 1, want ^ 0x8000]):
                translation = bf16_in_f32._Translation()
                got = translation.term(result == _view(other))
                assert _truth(got, translation.definitions) == (other == want or want == NAN), \
                    (op, mode, hex(x), hex(y), hex(other))
