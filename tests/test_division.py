"""Division by a constant read back from llc's multiply-high sequences
(`ptxsmt/smt/sweeping/division.py`): the integer meaning of each operator is proved against the
bit-vector operator by z3; llc-14's sequences (tests/ptx/division, written by
scripts/division_corpus.py) are read as the IR's divisions; a planted off-by-one magic
number is read as none, and its pair differs where plain Python says it does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.function.encode import encode_function
from ptxsmt.sem.options import DEFAULT
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.solving.smt2 import script
from ptxsmt.smt.sweeping import division, fraig
from ptxsmt.smt.sweeping.division import INTEGER, divisions

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
            z3.ZeroExt(8, a), z3.SignExt(8, a), z3.Concat(a, b), a & 0x1f, a & 0xe0]


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
    assert division._proved(halved, x, division.DIVISIONS[0], 2, 255)
    assert not division._proved(halved, x, division.DIVISIONS[0], 2, 256)
