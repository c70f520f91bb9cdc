"""Division by a constant read back from llc's multiply-high sequences
(`ptxsmt/smt/sweeping/division.py`): the integer meaning of each operator is proved against the
bit-vector operator by z3; llc-14's sequences (tests/ptx/division, written by
scripts/division_corpus.py) are read as the IR's divisions; a planted off-by-one magic
number is read as none, and its pair differs where plain Python says it does."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.function.encode import encode_function
from ptxsmt.sem.options import DEFAULT
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.solving.smt2 import script
from ptxsmt.smt.sweeping import division, fraig, rewrite
from ptxsmt.smt.sweeping.division import INTEGER, Domain, divisions

CORPUS = Path(__file__).parent / "ptx" / "division"
SINGLE = {"udiv32_7": ("udiv", 7), "sdiv32_7": ("sdiv", 7), "sdiv32_m5": ("sdiv", -5),
          "urem32_10": ("urem", 10), "srem32_3": ("srem", 3), "sdiv32_8": ("sdiv", 8),
          "udiv64_7": ("udiv", 7), "sdiv64_3": ("sdiv", 3), "urem64_10": ("urem", 10),
          "udiv32_54": ("udiv", 54)}  # an even divisor: the dividend shifted first


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _operators():
    a, b = z3.BitVecs("a b", 8)
    k = z3.BitVecVal(3, 8)
    return [a + b, a - b, -a, a * 77, a << k, z3.LShR(a, k), a >> k, z3.Extract(6, 2, a),
            z3.ZeroExt(8, a), z3.SignExt(8, a), z3.Concat(a, b), a & 0x1f, a & 0xe0,
            a & 0x3c]  # low ones, high ones, a run in between


@pytest.mark.parametrize("term", _operators(), ids=lambda t: t.decl().name())
def test_each_operators_integer_meaning_is_the_bit_vectors(term):
    """INTEGER's row, on operands that are any integers congruent to their bits (as
    the rows receive them), is congruent to the operator's unsigned value, for every
    8-bit operand: proved by z3 over bv2int."""
    a, b = z3.BitVecs("a b", 8)
    ka, kb = z3.Ints("ka kb")
    args = []
    for c, k in zip(term.children(), (ka, kb)):
        args.append(c.as_long() if z3.is_bv_value(c) else k)
    held = [z3.BV2Int(a) + 256 * ka, z3.BV2Int(b) + 256 * kb]  # congruent, not reduced
    args = [x if isinstance(x, int) else held[i] for i, x in enumerate(args)]
    params = type("P", (), {"params": tuple(term.params())})
    value = INTEGER[term.decl().kind()](params, args, term.size(), term.arg(0).size())
    assert value is not None
    w = term.size()
    assert _valid(z3.Implies(z3.And(ka >= -3, ka <= 3, kb >= -3, kb <= 3),
                             (value - z3.BV2Int(term)) % (1 << w) == 0))
    assert set(INTEGER) <= {t.decl().kind() for t in _operators()}


def _encoded(path: Path, name: str) -> z3.BitVecRef:
    return encode_function(read_function_file(str(path), name), DEFAULT).returns[
        "func_retval0"]


def _found(term: z3.ExprRef):
    dag = fraig._Dag()
    top = dag.add_roots([term])[0]
    return dag, top, divisions(dag.terms, dag.nodes, dag.kids).found


@pytest.mark.parametrize("level", ["O0", "O2"])
@pytest.mark.parametrize("name", sorted(SINGLE))
def test_llcs_sequences_are_read_as_the_ir_division(name, level):
    dag, top, found = _found(_encoded(CORPUS / f"single.{level}.ptx", name))
    assert (found[top].division.name, found[top].divisor) == SINGLE[name]
    assert dag.terms[found[top].operand].decl().name() == f"{name}_param_0"


def _planted() -> Path:
    """single.O2.ptx with udiv32_7's magic number one more (off by one)."""
    text = (CORPUS / "single.O2.ptx").read_text()
    assert text.count("613566757") == 1
    return text.replace("613566757", "613566758")


def _magic7(x: int, magic: int) -> int:
    """llc's udiv-by-7 sequence, in plain Python."""
    hi = x * magic >> 32
    return (((x - hi) & 0xffffffff) >> 1) + hi >> 2 & 0xffffffff


def test_an_off_by_one_magic_number_is_no_division(tmp_path):
    path = tmp_path / "planted.ptx"
    path.write_text(_planted())
    _, top, found = _found(_encoded(path, "udiv32_7"))
    assert top not in found


def test_an_off_by_one_magic_number_differs_where_python_says(tmp_path):
    path = tmp_path / "planted.ptx"
    path.write_text(_planted())
    verdict = check_function_equivalence(
        read_function_file(str(CORPUS / "single.O0.ptx"), "udiv32_7"),
        read_function_file(str(path), "udiv32_7"), timeout=60)
    assert verdict.verdict == "different"
    x = verdict.counterexample.inputs["udiv32_7_param_0"]
    x = x if isinstance(x, int) else int(re.sub(r"\D", "", str(x)) or 0)
    assert _magic7(x, 613566757) == x // 7 != _magic7(x, 613566758)


@pytest.mark.parametrize("name", ["mix32", "mix64"])
def test_reassociated_divisions_at_O0_and_O2_are_equivalent(name, monkeypatch):
    read = []
    monkeypatch.setattr(fraig, "divisions", lambda *a: read.append(divisions(*a)) or read[-1])
    verdict = check_function_equivalence(
        read_function_file(str(CORPUS / f"{name}.O0.ptx"), "f"),
        read_function_file(str(CORPUS / f"{name}.O2.ptx"), "f"), timeout=60)
    assert verdict.verdict == "equivalent"
    if name == "mix32":  # swept (mix64's query is small enough to be asked whole)
        assert read and len(read[0].found) >= 8 and read[0].hidden


def test_a_lemma_that_fails_is_not_proved():
    x = z3.BitVec("x", 32)
    assert not division._proved(z3.LShR(x, 3), x, division.DIVISIONS[0], 9)
    # equal to x udiv 8 below 2^31 only: each half of the lemma is asked
    assert not division._proved(z3.LShR(x, 3) & 0x0fffffff, x, division.DIVISIONS[0], 8)
    assert division._proved(z3.LShR(x, 3), x, division.DIVISIONS[0], 8)


def test_z3s_divisions_by_numerals_are_written_standard():
    """z3's simplifier writes `bvudiv_i` for a division by a numeral, which bitwuzla does
    not read (`smt2.standard`): nested ones too."""
    x = z3.BitVec("x", 32)
    t = z3.simplify(z3.UDiv(z3.URem(x, 10) + x / 3, 7) + z3.SRem(x, 5))
    assert "bvudiv_i" in t.sexpr()
    text = script([t == 1])
    assert "_i " not in text
    assert all(op in text for op in ("bvudiv", "bvurem", "bvsdiv", "bvsrem"))


def test_divisions_of_divisions_by_every_pair_of_8_bit_numerals():
    """`division.nested` for divisors 1 to 23 by 1 to 21 (products below 2^8 and past
    it): the same as the two divisions for every 8-bit dividend (z3)."""
    y = z3.BitVec("y", 8)
    for a in range(1, 24):
        for b in range(1, 24, 5):
            t = z3.UDiv(z3.UDiv(y, a), b)
            out = division.nested(t)
            assert out is not None and _valid(out == t), (a, b)


def _high(x: z3.BitVecRef, magic: int) -> z3.BitVecRef:
    """`mul.hi.u32 x, magic` as the semantics writes it."""
    return z3.Extract(63, 32, z3.ZeroExt(32, x) * z3.ZeroExt(32, z3.BitVecVal(magic, 32)))


def test_a_quotient_divided_again_is_read_over_its_range():
    """`(x udiv 7) urem 3` as llc writes it: the second multiplier, (2^32 + 2)/3, is
    exact only for dividends below 2^31 (plain Python finds one above where it is not),
    so the remainder and quotient by 3 are read over x udiv 7's range, and not over a
    value that takes every 32-bit value."""
    magic = (2**32 + 2) // 3
    assert any((v * magic >> 32) != v // 3 for v in range(2**31, 2**31 + 8))
    p = z3.BitVec("p", 32)
    high = _high(p, 613566757)
    q7 = z3.LShR(z3.LShR(p - high, 1) + high, 2)
    dag, top, found = _found(q7 - _high(q7, magic) * 3)
    assert (found[top].division.name, found[top].divisor) == ("urem", 3)
    assert dag.terms[found[top].operand].eq(q7)
    dag, top, found = _found(p - _high(p, magic) * 3)  # over every p: no remainder
    assert top not in found


def test_a_lemma_holds_up_to_the_greatest_value_only():
    x = z3.BitVec("x", 32)
    halved = z3.LShR(x & 0xff, 1)  # x udiv 2 for x up to 255 only
    assert division._proved(halved, x, division.DIVISIONS[0], 2, Domain(32, 255, 32))
    assert not division._proved(halved, x, division.DIVISIONS[0], 2, Domain(32, 256, 32))


def _read_as(term: z3.ExprRef, operand: z3.ExprRef) -> tuple[str, int] | None:
    dag, top, found = _found(term)
    if top not in found or not dag.terms[found[top].operand].eq(operand):
        return None
    return found[top].division.name, found[top].divisor


def _wide_high(x: z3.BitVecRef, magic: int, low: int) -> z3.BitVecRef:
    """`mul.hi.u32 x, magic` shifted right by low - 32, as z3 writes it: one extract of
    the 64-bit product, zero-extended back to 32 bits."""
    product = z3.ZeroExt(32, x) * z3.BitVecVal(magic, 64)
    return z3.ZeroExt(low - 32, z3.Extract(63, low, product))


@pytest.mark.parametrize("magic, low, read", [
    (0xFFFF0001, 48, ("udiv", 65537)),
    (0xFFFF0002, 48, None),  # the magic one more
    (0xFFFF0000, 48, None),  # the magic one less
    (0xFFFF0001, 47, None),  # the shift one less
    (0xFFFF0001, 49, ("udiv", 131074)),  # the shift one more: half the quotient
])
def test_the_top_bits_of_a_wide_product_are_read_as_the_division_they_are(magic, low, read):
    """llc's `x udiv 65537`, `hi(x * 0xFFFF0001) >> 16`, is one extract of the 64-bit
    product: read back as the quotient that plain Python finds it, and not where
    Python finds an x where it is not the quotient by the divisor it is near."""
    x = z3.BitVec("x", 32)
    xs = [0, 1, 65536, 65537, 131073, 131074, 2**32 - 1, 2**32 - 65537, 2**32 - 65538,
          65537 * 65535 - 1, 65537 * 32767 - 1]
    near = read[1] if read else round(2 ** low / magic)
    assert all(v * magic >> low == v // near for v in xs) == (read is not None)
    assert _read_as(_wide_high(x, magic, low), x) == read


@pytest.mark.parametrize("mask, magic, read", [
    (31, 26, ("udiv", 10)),
    (127, 26, None),  # 69 * 26 >> 8 is 7
    (31, 25, None),  # the magic one less: 10 * 25 >> 8 is 0
])
def test_a_magic_multiply_in_the_operands_own_width_is_read_over_its_known_bits(
        mask, magic, read):
    """opt's `udiv i8` of a value it knows below 32, which llc multiplies in 16 bits:
    `((x & 31) * 26) >> 8` is (x & 31) / 10 (plain Python, every value), exact only
    below 69: read back over the and's known zeros only."""
    x = z3.BitVec("x", 16)
    exact = all((v & mask) * magic >> 8 == (v & mask) // 10 for v in range(1 << 16))
    assert exact == (read is not None)
    masked = x & mask
    assert _read_as(z3.LShR(masked * magic, 8), masked) == read


@pytest.mark.parametrize("magic, read", [(86, ("sdiv", 3)), (85, None), (87, None)])
def test_an_8_bit_signed_division_in_16_bits_is_read_over_the_8_bit_value(magic, read):
    """llc's `sdiv i8 y, 3`: `(sext16(y) * 86) >> 8` plus the product's sign bit, whose
    low 8 bits are the quotient for every y (plain Python, all 256 values)."""
    y = z3.BitVec("y", 8)
    wide = z3.SignExt(8, y) * magic
    term = z3.Extract(7, 0, z3.LShR(wide, 8) + z3.LShR(wide, 15))

    def python(v: int) -> int:
        p = (v - 256 * (v >> 7)) * magic & 0xffff
        return ((p >> 8) + (p >> 15)) & 0xff

    def trunc3(v: int) -> int:
        s = v - 256 * (v >> 7)
        return (abs(s) // 3 * (1 if s >= 0 else -1)) & 0xff

    assert all(python(v) == trunc3(v) for v in range(256)) == (read is not None)
    assert _read_as(term, y) == read


def test_a_remainder_divided_by_its_divisor_is_read_over_the_remainders_range():
    """`(p urem 25) udiv 25` as llc writes it: hi(r * ceil(2^32 / 25)), exact for r
    below 25 only (plain Python finds a greater one where it is not): read over the
    remainder read back, and not over a value that takes every value."""
    magic = -(-2**32 // 25)
    assert any((v * magic >> 32) != v // 25 for v in range(2**31, 2**31 + 1000))
    p = z3.BitVec("p", 32)
    r = p - z3.LShR(_high(p, 1374389535), 3) * 25  # p urem 25
    assert _read_as(_high(r, magic), r) == ("udiv", 25)
    assert _read_as(_high(p, magic), p) is None


def test_a_domain_is_its_values_in_each_half():
    assert Domain(16, 65535, 8).intervals() == [(0, 127), (65408, 65535)]
    assert Domain(16, 24, 16).intervals() == [(0, 24)]
    assert Domain(32, 255, 32).positive() == 255
    assert {Domain(16, 65535, 8).of(v) for v in (0, 127, 128, 0x8000, 0xffff)} <= \
        {*range(128), *range(65408, 65536)}


def test_a_sign_extended_value_is_divided_over_its_narrow_range():
    """`sdiv i16 (sext y8), 3` as a 16-bit product by 86 (plain Python: the quotient for
    each of the 256 values, and not for 16-bit ones beyond them): read over the
    values of x's known sign bits."""
    y = z3.BitVec("y", 8)
    x = z3.SignExt(8, y)

    def python(v: int) -> int:  # v: 16 bits
        p = v * 86 & 0xffff
        return ((p - 65536 * (p >> 15)) >> 8) + (p >> 15) & 0xffff

    def trunc3(v: int) -> int:
        s = v - 65536 * (v >> 15)
        return (abs(s) // 3 * (1 if s >= 0 else -1)) & 0xffff

    assert all(python(v & 0xffff) == trunc3(v & 0xffff) for v in range(-128, 128))
    assert any(python(v) != trunc3(v) for v in range(128, 1000))
    term = ((x * 86) >> 8) + z3.LShR(x * 86, 15)
    assert _read_as(term, x) == ("sdiv", 3)
    assert _read_as(((z3.ZeroExt(8, y) * 86) >> 8) + z3.LShR(z3.ZeroExt(8, y) * 86, 15),
                    z3.ZeroExt(8, y)) != ("sdiv", 3)


CEIL25 = -(-2**32 // 25)  # ceil(2^32 / 25): x udiv 25 as hi(x * CEIL25) below 2^30 only
LIMIT = 2**30


@pytest.mark.parametrize("select, read", [
    (lambda x: z3.If(z3.ULT(x, LIMIT), x, z3.BitVecVal(0, 32)), ("udiv", 25)),
    (lambda x: z3.If(z3.ULE(x, LIMIT), x, z3.BitVecVal(0, 32)), None),  # one more: 2^30
    (lambda x: z3.If(z3.ULT(x, LIMIT), x, z3.BitVecVal(LIMIT - 1, 32)), ("udiv", 25)),  # min
    (lambda x: z3.If(z3.ULT(x, LIMIT), x, z3.BitVecVal(LIMIT, 32)), None),  # the arm 2^30
    (lambda x: z3.If(z3.UGE(x, LIMIT), z3.BitVecVal(7, 32), x & (LIMIT - 1)), ("udiv", 25)),
    (lambda x: z3.If(x < LIMIT, x, z3.BitVecVal(0, 32)), None),  # signed: x may be negative
])
def test_a_multiply_high_is_read_over_its_operands_range_through_a_select(select, read):
    """llc's multiplier for a value it bounds through a select or a min: hi(m * CEIL25)
    is m udiv 25 for every m below 2^30 and not at 2^30 (plain Python), so it is read
    back where the select keeps m below 2^30, and not where one value of it reaches
    2^30 (an arm, the compare one wider, a signed compare of a negative x)."""
    assert all(v * CEIL25 >> 32 == v // 25 for v in (*range(1000), *range(LIMIT - 1000, LIMIT)))
    assert LIMIT * CEIL25 >> 32 != LIMIT // 25
    m = select(z3.BitVec("x", 32))
    assert _read_as(_high(m, CEIL25), m) == read


def test_the_high_half_of_a_quotient_read_back_meets_its_32_bit_division():
    """div-100-llvm22-3: -O0 divides `udiv x, 65537` (hi(x * 0xFFFF0001) >> 16) by a
    value in 32 bits, opt in 16 (`mov.b32 {lo, hi}` of the multiply-high, `div.u16`):
    equal for every x and y (plain Python on a sample; the sweep's merge is proved), and
    the sweep reads the 16 bits as the quotient's low bits, so the two meet as one term."""
    rng = random.Random(3)
    for x, y in [(rng.getrandbits(32), rng.getrandbits(32)) for _ in range(2000)]:
        d = y & 0xffff | 1
        assert x * 0xFFFF0001 >> 48 & 0xffff == x // 65537
        assert (x // 65537) // d == (x * 0xFFFF0001 >> 48 & 0xffff) // d
    x, y = z3.BitVecs("x y", 32)
    high = _high(x, 0xFFFF0001)
    o0 = z3.UDiv(z3.LShR(high, 16), (y & 0xffff) | 1)
    o2 = z3.ZeroExt(16, z3.UDiv(z3.Extract(31, 16, high), z3.Extract(15, 0, y) | 1))
    assert _read_as(z3.Extract(31, 16, high), x) == ("udiv", 65537)
    roots, stats = fraig.sweep([o0 != o2], [x, y], 20.0)
    assert z3.is_false(z3.simplify(roots[0])) and stats.undecided == 0


def test_a_mask_of_more_than_one_run_of_ones_is_not_linear():
    """`_and` reads a mask of one run of ones only: the 8-bit masks of two runs or none
    (every mask whose ones are not contiguous, by plain Python) have no row."""
    n = z3.Int("n")
    for m in range(256):
        bits = f"{m:08b}".strip("0")
        assert (division._and([n, m], 8) is None) == (m == 0 or "0" in bits), m


MAGIC69 = -(-2**37 // 69)  # ceil(2^37 / 69): hi(x * MAGIC69) >> 5 is x udiv 69
EDGES = [0, 1, 68, 69, 70, 137, 138, 139, 2**31 - 1, 2**31, 2**32 - 1, 2**32 - 69,
         69 * (2**32 // 69), 69 * (2**32 // 69) - 1]


def _python_scaled(magic: int, mask: int) -> tuple[int, int] | None:
    """(c, k) where plain Python finds `hi(x * magic) & mask` equal to (x // c) * 2^k
    on a sample of x and the edges, k the mask's trailing zeros, c the least x where
    the value is 2^k; None where it finds it equal to no such quotient."""
    k = (mask & -mask).bit_length() - 1
    values = {x: (x * magic >> 32) & mask for x in
              EDGES + [random.Random(x).getrandbits(32) for x in range(4000)]}
    c = next((x for x in range(1, 1 << 12) if (x * magic >> 32) & mask), None)
    ok = c is not None and all(v == (x // c) << k & 0xffffffff for x, v in values.items())
    return (c, k) if ok else None


@pytest.mark.parametrize("magic, mask", [
    (MAGIC69, 0x7fffffe0),  # wide-int-300-llvm22-0: opt's `(x udiv 69) << 5`
    (MAGIC69, 0xffffffe0),  # the same with the top bit in the mask (a negative numeral)
    (MAGIC69, 0x7fffffc0),  # one more bit masked: (x udiv 138) << 6
    (MAGIC69 - 1, 0x7fffffe0),  # the magic one less
    (MAGIC69, 0x7ffffff0),  # one bit fewer masked: the remainder's top bit shows
    (MAGIC69, 0x7fffffa0),  # a mask of two runs
])
def test_a_multiply_high_masked_below_is_read_as_a_quotient_shifted_left(magic, mask):
    """opt folds `(x udiv c) << k` into `hi(x * M) & mask` (the shifts of the quotient
    become the mask's low zeros): read back as the quotient times 2^k exactly where
    plain Python finds it so, and as nothing where it finds no such quotient."""
    x = z3.BitVec("x", 32)
    dag, top, found = _found(_high(x, magic) & mask)
    got = found.get(top)
    read = None if got is None else (got.divisor, got.scale)
    assert read == _python_scaled(magic, mask)
    assert got is None or got.division.name == "udiv" and dag.terms[got.operand].eq(x)


def test_a_quotient_shifted_left_meets_its_o0_spelling_and_nothing_else():
    """The sweep writes the masked multiply-high as the quotient times 32 (`Found.over`),
    so it meets -O0's `32 * (x udiv 69)` as one term; against the quotient alone, which
    plain Python finds different (x = 69), it stays apart."""
    assert (69 * MAGIC69 >> 32) & 0x7fffffe0 == 32 != 69 // 69
    x = z3.BitVec("x", 32)
    o2 = _high(x, MAGIC69) & 0x7fffffe0
    roots, stats = fraig.sweep([32 * z3.UDiv(x, 69) != o2], [x], 20.0)
    assert z3.is_false(z3.simplify(roots[0])) and stats.undecided == 0
    roots, _ = fraig.sweep([z3.UDiv(x, 69) != o2], [x], 20.0)
    s = z3.Solver()
    s.add(roots[0], x == 69)
    assert s.check() == z3.sat


def _trunc(a: int, b: int) -> tuple[int, int]:
    """C's quotient and remainder (truncated toward zero), plain Python."""
    q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    return q, a - b * q


def _value(t: z3.ExprRef, y: z3.BitVecRef, v: int) -> int:
    return z3.simplify(z3.substitute(t, (y, z3.BitVecVal(v, y.size())))).as_long()


@pytest.mark.parametrize("op", ["sdiv", "srem"])
@pytest.mark.parametrize("c", [-1, -2, -3, -7, -100, -128])
def test_a_dividend_not_negative_by_a_negative_numeral_is_an_unsigned_division(op, c):
    """`a sdiv c` of an a known not negative (here `y udiv 3`, `y >> 1` and `y & 127`
    over 8 bits) by c < 0 is written `-(a udiv |c|)`, `a srem c` as `a urem |c|`: equal
    to C's truncated division (plain Python) for every y."""
    y = z3.BitVec("y", 8)
    for a, python in ((z3.UDiv(y, 3), lambda v: v // 3), (z3.LShR(y, 1), lambda v: v >> 1),
                      (y & 127, lambda v: v & 127)):
        t = rewrite.normal(a / c if op == "sdiv" else z3.SRem(a, c))
        assert not z3.is_app_of(t, z3.Z3_OP_BSDIV) and not z3.is_app_of(t, z3.Z3_OP_BSREM)
        for v in range(256):
            want = _trunc(python(v), c)[op == "srem"] & 0xff
            assert _value(t, y, v) == want, (str(a), c, v)


def test_a_dividend_that_may_be_negative_is_left_signed():
    y = z3.BitVec("y", 8)
    assert z3.is_app_of(rewrite.normal(y / -3), z3.Z3_OP_BSDIV)
    assert z3.is_app_of(rewrite.normal(z3.SRem(z3.LShR(y, 1) - 1, -3)), z3.Z3_OP_BSREM)


def test_a_quotient_divided_by_a_negative_numeral_meets_opts_single_division():
    """div-300-llc14-0: -O0's `(x udiv 7) sdiv -100` where opt writes `-(x udiv 700)`
    (equal for every x: plain Python on a sample) are one term, and by 100 `x udiv 700`."""
    rng = random.Random(5)
    for x in [0, 699, 700, 2**32 - 1] + [rng.getrandbits(32) for _ in range(2000)]:
        assert _trunc(x // 7, -100)[0] % 2**32 == -(x // 700) % 2**32
    x = z3.BitVec("x", 32)
    seven = rewrite.normal(z3.UDiv(x, 7))
    assert rewrite.normal(seven / -100).eq(rewrite.normal(-1 * z3.UDiv(x, 700)))
    assert rewrite.normal(seven / 100).eq(z3.UDiv(x, 700))


MAGIC10 = 0x66666667  # llc's multiplier of `sdiv i32 s, 10`: hi(s * M) >>s 2, plus its sign


def _narrow_srem10(s: z3.BitVecRef, magic: int) -> z3.BitVecRef:
    """llc's `trunc i8 (srem i32 s, 10)`: the quotient's shift made logical (only the
    low 8 bits of s - 10 q are used)."""
    high = z3.Extract(63, 32, z3.SignExt(32, s) * z3.BitVecVal(magic, 64))
    return z3.Extract(7, 0, s - 10 * (z3.LShR(high, 2) + z3.LShR(high, 31)))


def _python_srem10(v: int, magic: int) -> int:
    sv = v - (v >> 31 << 32)
    high = (sv * magic >> 32) % 2**32
    return (sv - 10 * ((high >> 2) + (high >> 31))) & 0xff


@pytest.mark.parametrize("magic, read", [(MAGIC10, ("srem", 10)), (MAGIC10 - 1, None),
                                         (MAGIC10 + 1, None)])
def test_the_low_bits_of_a_signed_remainder_are_read_as_its_low_bits(magic, read):
    """div-300-llc14-0: the low 8 bits of llc's `s srem 10` (a logical shift where the
    signed one's high bits are dropped) are `s srem 10`'s low 8 bits for every s where
    plain Python finds it so on a sample (a magic one off: Python finds an s where not)."""
    rng = random.Random(7)
    xs = [0, 1, 9, 10, 2**31 - 1, 2**31, 2**32 - 1, 2**32 - 10] + \
        [rng.getrandbits(32) for _ in range(20000)]
    exact = all(_python_srem10(v, magic) == _trunc(v - (v >> 31 << 32), 10)[1] & 0xff
                for v in xs)
    assert exact == (read is not None)
    s = z3.BitVec("s", 32)
    assert _read_as(_narrow_srem10(s, magic), s) == read


def test_a_narrow_signed_remainder_meets_its_32_bit_spelling_and_nothing_else():
    """Sign-extended back, the 8 bits meet -O0's `s srem 10` (in (-10, 10): its low 8
    bits extended are it); against `s urem 10`, which plain Python finds different at
    s = -1, they stay apart."""
    assert _trunc(-1, 10)[1] != (2**32 - 1) % 10
    s = z3.BitVec("s", 32)
    o2 = z3.SignExt(24, _narrow_srem10(s, MAGIC10))
    roots, stats = fraig.sweep([z3.SRem(s, 10) != o2], [s], 20.0)
    assert z3.is_false(z3.simplify(roots[0])) and stats.undecided == 0
    roots, _ = fraig.sweep([z3.URem(s, 10) != o2], [s], 20.0)
    solver = z3.Solver()
    solver.add(roots[0], s == 2**32 - 1)
    assert solver.check() == z3.sat


def _truncated(a: int, c: int) -> tuple[int, int]:
    """C's a / c and a % c (toward zero)."""
    q = abs(a) // abs(c) * (1 if (a < 0) == (c < 0) else -1)
    return q, a - q * c


@pytest.mark.parametrize("c", [129, -129, 200, 128, -128, 127, 1000])
def test_a_signed_dividend_smaller_than_the_divisor_is_its_remainder(c):
    """`a sdiv c` is 0 and `a srem c` is a where the sign bits put a in (-|c|, |c|):
    a = sext16(z8) in [-128, 128) by |c| > 128, rewritten; by |c| <= 128 left (a = -128
    reaches it: plain Python's truncated division, on every z)."""
    z = z3.BitVec("z", 8)
    a = z3.SignExt(8, z)
    for op, index in ((lambda p, q: p / q, 0), (z3.SRem, 1)):
        t = op(a, z3.BitVecVal(c, 16))
        out = division.small_signed_dividend(t)
        assert (out is not None) == (abs(c) > 128)
        if out is None:
            assert any(_truncated(v, c)[index] not in (0, v)[index:index + 1]
                       for v in range(-128, 128))
            continue
        for v in range(-128, 128):  # the rewritten term's value on v is Python's
            value = out.as_long() if z3.is_bv_value(out) else v & 0xffff
            assert value == _truncated(v, c)[index] & 0xffff


def test_opts_dropped_remainder_by_65537_meets_o0s():
    """div-300-llc14-1: -O0's `(s srem (1|q)) ^ t srem 65537`, s a difference of a
    product of small values and q, t a sum of small remainders, is its dividend (opt
    drops the remainder): `normal` writes it so, and plain Python finds the dividend
    within (-65537, 65537) on random inputs."""
    p, u, v, e, f = z3.BitVecs("p u v e f", 32)
    q = u & 255  # a xor of two small quotients there
    t = (u & 15) + z3.SRem(z3.SRem(e, 641), (1 | f / 7) & 0xffff)
    s = (v & 15) * (p & 255) - q  # in [-255, 3825]: 19 sign bits
    x = z3.SRem(s, 1 | q) ^ t
    assert rewrite.normal(z3.SRem(x, 65537)).eq(x)
    assert rewrite.normal(z3.SRem(x, 8192)).eq(z3.SRem(x, 8192))  # |x| <= 2^13 only
    rng = random.Random(5)
    m = (1 << 32) - 1

    def srem(a: int, b: int) -> int:  # 32-bit operands as unsigned; by 0 the dividend
        return a if b == 0 else _truncated(a - (a >> 31 << 32), b - (b >> 31 << 32))[1] & m

    for _ in range(3000):
        p, u, v, e, f = (rng.choice([0, 1, 2**31, m, rng.getrandbits(32)]) for _ in range(5))
        q = u & 255
        by_f = _truncated(f - (f >> 31 << 32), 7)[0] & m
        s = ((v & 15) * (p & 255) - q) & m
        value = srem(s, 1 | q) ^ (u & 15) + srem(srem(e, 641), (1 | by_f) & 0xffff) & m
        assert abs(value - (value >> 31 << 32)) < 65537
