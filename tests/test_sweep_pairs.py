"""Pairs whose difference simulation cannot see, so that the sweep itself meets real
"different" pairs (issue 42): one side has a one-op change that one input in 2^32 exposes
(a compare at one constant, a -0.0, an fma addend, operands of a non-commutative float
operation swapped, a select's arms swapped). The sweep must keep each pair apart: the
swept query still holds at the counterexample, which plain Python computes from the two
functions as written (not from the Z3 terms). Equal pairs spelled two ways stay equal.

A difference the sweep asks about first is learned (the model becomes a simulated input)
and no wrong merge above it is ever tried; so the pairs that guard a merge rule keep the
difference where the rule acts first: below a condition over an opaque value n (which
simulates as a constant and is not asked), beside a fact or a class constant the sweep
proved first, or in a float one function alone reads. Where no pair reaches the code (a
query the solver leaves undecided), a stub solver that answers "unknown" drives it.
Each test kills mutants of `scripts/mutants.py --block sweep` (docs/mutants.md).
"""

from __future__ import annotations

import json
import struct
from fractions import Fraction
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner
from tier import THOROUGH

from ptxsmt.cli.equiv import equiv
from ptxsmt.smt.sweeping import fraig, rewrite, sweep

SWEEP = Path(__file__).parent / "ptx" / "sweep"
F32 = z3.FPSort(8, 24)
RNE = z3.RNE()
K = 0x9E3779B9  # the one input that tells each pair apart
A, B = z3.BitVecs("a b", 32)
X, Y = z3.FPs("x y", F32)
RARE = A == K


def _f32(v: float) -> int:
    return struct.unpack("<I", struct.pack("<f", v))[0]


def chain(a: z3.BitVecRef, b: z3.BitVecRef, commuted: bool) -> z3.BitVecRef:
    """Forty operations over a and b, spelled with commuted operands on one side (so
    that the sweep has a DAG of 100 nodes or more to merge)."""
    h = a
    for k in range(10):
        m = z3.BitVecVal(2 * k + 3, 32)
        h = (b ^ (m * h)) if commuted else ((h * m) ^ b)
        h = (z3.LShR(h, k + 1) | (h << 3)) if commuted else ((h << 3) | z3.LShR(h, k + 1))
    return h


def py_chain(a: int, b: int) -> int:
    h = a
    for k in range(10):
        h = (h * (2 * k + 3)) & 0xFFFFFFFF ^ b
        h = ((h << 3) & 0xFFFFFFFF) | (h >> (k + 1))
    return h


def swept_at(left: z3.ExprRef, right: z3.ExprRef, at: dict) -> bool:
    """Whether the sweep's query `left != right` (rebuilt over what it merged) still
    holds at the inputs `at`: False where it merged values that differ there."""
    root = left != right
    (new,), _ = sweep([root], [A, B, X, Y], 30, sides=([left], [right]))
    return holds_at(new, at)


def holds_at(term: z3.BoolRef, at: dict) -> bool:
    pairs = [(v, z3.BitVecVal(n, 32) if z3.is_bv(v) else z3.FPVal(n, F32))
             for v, n in at.items()]
    return z3.is_true(z3.simplify(z3.substitute(term, *pairs)))


N = z3.BitVec("n", 32)  # an opaque value (not an input): no model of it is learned first
OPAQUE_RARE = (A ^ N) == K


def opaque_rare(x: z3.BitVecRef) -> z3.BitVecRef:
    """x, except where a ^ n is K: x + 1."""
    return z3.If(OPAQUE_RARE, x + 1, x)


def rare(x: z3.ExprRef) -> z3.ExprRef:
    """x, except at the one input K: x + 1."""
    one = z3.fpAdd(RNE, x, z3.FPVal(1.0, F32)) if z3.is_fp(x) else x + 1
    return z3.If(RARE, one, x)


def test_a_compare_at_one_constant_is_kept_apart():
    left = chain(A, B, False)
    right = chain(A, B, True) + z3.If(RARE, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32))
    assert py_chain(K, 5) != (py_chain(K, 5) + 1) & 0xFFFFFFFF  # independent: they differ
    assert swept_at(left, right, {A: K, B: 5})


FLOAT_PAIRS = {  # name: (left, right) over x, y and y', y' = y + 1 at the one input
    "fma addend": (lambda x, y, z: z3.fpFMA(RNE, x, y, z), lambda x, y, z: z3.fpFMA(RNE, x, z, y),
                   lambda x, y, z: x * y + z, lambda x, y, z: x * z + y),
    "sub": (lambda x, y, z: z3.fpSub(RNE, y, z), lambda x, y, z: z3.fpSub(RNE, z, y),
            lambda x, y, z: y - z, lambda x, y, z: z - y),
    "div": (lambda x, y, z: z3.fpDiv(RNE, y, z), lambda x, y, z: z3.fpDiv(RNE, z, y),
            lambda x, y, z: y / z, lambda x, y, z: z / y),
}


@pytest.mark.parametrize("name", sorted(FLOAT_PAIRS))
def test_a_float_operation_with_operands_swapped_is_kept_apart(name):
    """fma's addend is not one of its factors; sub and div do not commute: equal where
    y' is y, they differ at the one input (x = 2, y = 3, y' = 4: plain fractions)."""
    left, right, py_left, py_right = FLOAT_PAIRS[name]
    x, y = Fraction(2), Fraction(3)
    assert py_left(x, y, y + 1) != py_right(x, y, y + 1)
    bits = z3.fpToIEEEBV
    z = rare(Y)
    assert swept_at(bits(left(X, Y, z)), bits(right(X, Y, z)), {A: K, X: 2.0, Y: 3.0})


def test_a_select_with_its_arms_swapped_is_kept_apart():
    """ite(c, y, y') against ite(c, y', y), y' = y + 1 where a ^ n is K (n an opaque
    value, such as an uninterpreted instruction's result: a condition over it that
    simulates as a constant is not asked, so simulation never learns K). Each function
    reads the float y from the bits of a its own way, so that y' is asked against
    nothing before the selects (a float one function alone reads is asked only
    across). Read with its arms swapped, a phi would meet the other select (phi
    cases) and the pair would merge."""
    one = z3.FPVal(1.0, F32)
    y, y2 = z3.fpBVToFP(A, F32), z3.fpBVToFP(A | 0, F32)
    y1, y1_ = (z3.If(OPAQUE_RARE, z3.fpAdd(RNE, y, one), y),
               z3.If(OPAQUE_RARE, z3.fpAdd(RNE, one, y2), y2))
    c = z3.ULT(B, 7)
    left, right = z3.If(c, y, y1), z3.If(c, y1_, y2)
    at_k = struct.unpack("<f", struct.pack("<I", K))[0]
    assert _f32(at_k) != _f32(at_k + 1.0)  # at a = K, n = 0, b = 0: y against y + 1
    assert swept_at(z3.fpToIEEEBV(left), z3.fpToIEEEBV(right), {A: K, B: 0, N: 0})


def test_minus_zero_against_plus_zero_is_kept_apart():
    """-0.0 + 0.0 is +0.0: the sum differs from its operand only where it is -0.0, here
    where a is the one input (x = -(a ^ K) as a float)."""
    x = z3.fpNeg(z3.fpToFP(RNE, A ^ K, F32))  # -0.0 only where a ^ K is 0
    left = z3.fpToIEEEBV(x)
    right = z3.fpToIEEEBV(z3.fpAdd(RNE, x, z3.FPVal(0.0, F32)))
    assert _f32(-0.0) != _f32(-0.0 + 0.0)
    assert swept_at(left, right, {A: K})


def test_a_sum_of_three_masked_bytes_may_carry_two_bits():
    """(a & 255) + (b & 255) + (c & 255) reaches 765, ten bits: or'ed with a value shifted
    by nine it is not their sum (the known-zero bits of a sum of three)."""
    c = z3.BitVec("c", 32)
    x, y, z = A & 255, B & 255, c & 255
    s = (x + y).decl()(x, y, z)  # one sum of three operands, as `_linear` writes it
    t = s | (A << 9)
    solver = z3.Solver()
    solver.add(rewrite.normal(t) != t)
    assert solver.check() == z3.unsat
    assert (255 * 3) | (1 << 9) != 255 * 3 + (1 << 9)  # where they would differ


def run(name: str, *extra: str) -> dict:
    r = CliRunner().invoke(equiv, [str(SWEEP / f"{name}.a.ptx"), str(SWEEP / f"{name}.b.ptx"),
                                   "--function", "f", "--json", "--timeout", "120", *extra])
    return json.loads(r.stdout)


def decided(out: dict) -> bool:
    """Never "equivalent"; "different" in the thorough tier. By default a solver that runs
    out of time under load may leave "unknown" (no test depends on how fast it is)."""
    assert out["verdict"] in (("different",) if THOROUGH else ("different", "unknown")), out
    return out["verdict"] == "different"


def test_ptx_a_compare_at_one_constant_is_different_at_that_input():
    """Side B adds 1 where pa is 0x9E3779B9 (the query DAG has over 100 nodes: swept)."""
    out = run("cmp", "--certify")
    if not decided(out):
        return
    cex = out["counterexample"]
    assert int(cex["inputs"]["pa"], 16) == K
    assert int(cex["rhs"]["ret"], 16) == (int(cex["lhs"]["ret"], 16) + 1) & 0xFFFFFFFF


def test_ptx_minus_zero_is_different_at_that_input():
    out = run("negzero")
    if not decided(out):
        return
    cex = out["counterexample"]
    assert int(cex["inputs"]["pa"], 16) == K
    # the two returns are the same number but for the sign bit (-0.0 against +0.0)
    assert int(cex["lhs"]["ret"], 16) ^ int(cex["rhs"]["ret"], 16) == 0x80000000


def test_an_integer_subtraction_with_operands_swapped_is_kept_apart():
    u = chain(A, B, False)
    assert (0 - 1) % 2**32 != (1 - 0) % 2**32
    assert swept_at(u - rare(u), rare(chain(A, B, True)) - u, {A: K, B: 5})


# a 64-bit semiprime: which inputs multiply to it no solver finds in a fraction of a second
P, Q = 4294967291, 4294967279


def test_a_condition_not_refuted_in_time_is_not_merged():
    """a * b = P * Q is false on every simulated input and undecided within the sweep's
    time: neither proved constant false nor merged with its class (P * Q by Python)."""
    hit = z3.ZeroExt(32, A) * z3.ZeroExt(32, B) == P * Q
    u = chain(A, B, False)
    left, right = u, chain(A, B, True) + z3.If(hit, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32))
    assert swept_at(left, right, {A: P, B: Q})


def test_a_condition_that_may_be_false_is_not_the_constant_true():
    """!isZero(float(a ^ K)) is false only at the one input; its classes say "either",
    which the class rule must not read as the class constant true (`c or !c`)."""
    c = B == 3
    tautology = z3.Or(c, z3.Not(c))
    cond = z3.Not(z3.fpIsZero(z3.fpToFP(RNE, A ^ K, F32)))
    left, right = z3.If(cond, A, B), A
    root = z3.And(tautology, left != right)
    (new,), _ = sweep([root], [A, B], 30, sides=([left], [right]))
    at = z3.substitute(new, (A, z3.BitVecVal(K, 32)), (B, z3.BitVecVal(5, 32)))
    assert K != 5 and z3.is_true(z3.simplify(at))


def test_nodes_cut_apart_stay_apart():
    """u = a * b and u' = u ^ d, d = b & (7 where a ^ n is K, else 3): shifted right by
    two past b << 3 they simulate alike, and are asked first (nothing below them is
    asked against another node). The cut two levels down makes u, u' and b << 3 fresh
    constants: three, not one, or the two shifts would be proved equal."""
    u = A * B
    d = B & z3.If(OPAQUE_RARE, z3.BitVecVal(7, 32), z3.BitVecVal(3, 32))
    left = z3.LShR(u | (B << 3), 2)
    right = z3.LShR((u ^ d) | (B << 3), 2)
    u0 = K * 4 & 0xFFFFFFFF  # at a = K, b = 4, n = 0: d is 4
    assert (u0 | 32) >> 2 != ((u0 ^ 4) | 32) >> 2
    assert swept_at(left, right, {A: K, B: 4, N: 0})


def test_a_fact_kept_from_a_merge_is_what_was_proved():
    """(a & b) == 0 and a + b == (a | b) are one condition (a solver proves it; the
    tables differ): merged, the sweep keeps their equality as a fact over a + b and
    a | b. A later condition over those two, (a + b) ^ (a | b) == C, is false on every
    simulated input but true at a = b = K: with a false fact assumed, the sweep
    would prove it constant false and drop the root's only true case."""
    equal = z3.Xor((A & B) == 0, (A + B) == (A | B))  # false everywhere
    c = (2 * K & 0xFFFFFFFF) ^ K  # (a + b) ^ (a | b) at a = b = K
    assert all(((a & b) == 0) == ((a + b) & 0xFFFFFFFF == a | b)
               for a in (0, 1, 3, K) for b in (0, 2, 5, K))
    root = z3.Or(equal, c == ((A + B) ^ (A | B)))
    (new,), stats = sweep([root], [A, B], 30)
    assert stats.proved >= 1  # the merge the fact comes from
    assert holds_at(new, {A: K, B: K})


def test_a_condition_that_may_be_true_is_not_the_class_constant_true():
    """(a * a) & 3 != 2 and (a * a) & 7 == 6 are proved true and false (a square is 0, 1
    or 4 mod 8) and lead the classes of conditions true and false on every simulated
    input. isZero(float(a ^ K)) joins the false one, but its classes say "either" (it
    is true at a = K), which the class rule must not read as the class's constant
    (`_classes_meet`)."""
    assert {a * a % 8 for a in range(64)} == {0, 1, 4}
    square = A * A
    zero = z3.fpIsZero(z3.fpToFP(RNE, A ^ K, F32))
    left, right = z3.If(zero, B, A), A
    root = z3.And((square & 3) != 2, z3.Not((square & 7) == 6), left != right)
    (new,), _ = sweep([root], [A, B], 30, sides=([left], [right]))
    assert holds_at(new, {A: K, B: 5})  # float(0) is zero: left is b = 5, not K


@pytest.fixture
def undecided(monkeypatch):
    """A solver that decides nothing: every query of the sweep is "unknown"."""
    monkeypatch.setattr(fraig, "_check", lambda *_: ("unknown", None))


def test_nothing_is_merged_on_a_query_left_undecided(undecided):
    """With every query unknown, no candidate is merged and no condition is taken as
    constant: a + b and its copy that differs where a is K stay apart, and a == K
    (false on every simulated input) stays a condition."""
    left = A + B
    right = z3.If(RARE, A + B + 1, A + B)
    root = left != right
    (new,), stats = sweep([root], [A, B], 30, sides=([left], [right]))
    assert stats.proved == 0 and stats.undecided >= 1
    assert holds_at(new, {A: K, B: 5})


def test_ptx_a_condition_the_classes_leave_open_is_different_at_that_input():
    """Side A adds 1 where float(pa ^ K) is zero, a condition false on every simulated
    input whose classes say "either"; the class of such conditions is led by
    (pa * pa) & 7 == 6, proved false. The counterexample, checked in Python: pa = K
    (float(0) is zero), and A's return is B's plus one."""
    out = run("classrule")
    if not decided(out):
        return
    cex = out["counterexample"]
    pa = int(cex["inputs"]["pa"], 16)
    assert pa == K and (pa * pa) & 7 != 6
    assert int(cex["lhs"]["ret"], 16) == (int(cex["rhs"]["ret"], 16) + 1) & 0xFFFFFFFF


def test_ptx_a_fact_of_a_proved_merge_keeps_a_difference_above_it():
    """A's (pa & pd) == 0 and B's pa + pd == (pa | pd) are merged by a proof and kept as
    a fact; side B then adds 1 where (pa + pd) ^ (pa | pd) is C (false on every
    simulated input), which the fact must not hide. The counterexample's inputs meet C,
    by Python."""
    out = run("fact")
    if not decided(out):
        return
    cex = out["counterexample"]
    pa, pd = (int(cex["inputs"][p], 16) for p in ("pa", "pd"))
    assert ((pa + pd) & 0xFFFFFFFF) ^ (pa | pd) == (2 * K & 0xFFFFFFFF) ^ K
    assert int(cex["rhs"]["ret"], 16) == (int(cex["lhs"]["ret"], 16) + 1) & 0xFFFFFFFF
