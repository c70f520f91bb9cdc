"""Unsigned ranges through a DAG (`ptxsmt/smt/sweeping/known.py`: `RANGES`, `Ranges`),
checked against plain-Python arithmetic on every value of small operands: each range
holds every value the operator takes on operands in theirs (sound), and where the rows
say the bound is tight (a select, a min or max, a clamp), it is the least that does."""

from __future__ import annotations

import itertools
import random

import pytest
import z3

from ptxsmt.smt.sweeping import fraig, known, rewrite
from ptxsmt.smt.sweeping.known import KNOWN_DEPTH, RANGES, Ranges, known_zeros, sign_bits

W = 3  # operands of 3 bits: every interval, every value in it
ONES = (1 << W) - 1


def _signed(v: int, w: int = W) -> int:
    return v - (1 << w) if v >> (w - 1) else v


def _sdiv(a: int, b: int) -> int:  # SMT-LIB: toward zero; by 0: -1 or 1
    if b == 0:
        return ONES if _signed(a) >= 0 else 1
    q = abs(_signed(a)) // abs(_signed(b))
    return (q if (_signed(a) < 0) == (_signed(b) < 0) else -q) & ONES


def _srem(a: int, b: int) -> int:  # the dividend's sign; by 0: the dividend
    if b == 0:
        return a
    r = abs(_signed(a)) % abs(_signed(b))
    return (-r if _signed(a) < 0 else r) & ONES


# each operator of RANGES in plain Python on W-bit operands (and its parameters)
PYTHON = {
    z3.Z3_OP_BAND: ((), lambda a, b: a & b),
    z3.Z3_OP_BOR: ((), lambda a, b: a | b),
    z3.Z3_OP_BXOR: ((), lambda a, b: a ^ b),
    z3.Z3_OP_BNOT: ((), lambda a: ~a & ONES),
    z3.Z3_OP_BADD: ((), lambda a, b: (a + b) & ONES),
    z3.Z3_OP_BSUB: ((), lambda a, b: (a - b) & ONES),
    z3.Z3_OP_BMUL: ((), lambda a, b: a * b & ONES),
    z3.Z3_OP_BSHL: ((), lambda a, b: a << b & ONES),
    z3.Z3_OP_BLSHR: ((), lambda a, b: a >> b),
    z3.Z3_OP_BASHR: ((), lambda a, b: _signed(a) >> b & ONES),
    z3.Z3_OP_BUDIV: ((), lambda a, b: a // b if b else ONES),
    z3.Z3_OP_BUREM: ((), lambda a, b: a % b if b else a),
    z3.Z3_OP_BSDIV: ((), _sdiv),
    z3.Z3_OP_BSREM: ((), _srem),
}
# width-changing ones: (parameters, result width, the operator)
RESIZED = {
    z3.Z3_OP_ZERO_EXT: ((2,), W + 2, lambda a: a),
    z3.Z3_OP_SIGN_EXT: ((2,), W + 2, lambda a: a | (0b11 << W if a >> (W - 1) else 0)),
    z3.Z3_OP_EXTRACT: ((2, 1), 2, lambda a: a >> 1 & 0b11),
    z3.Z3_OP_CONCAT: ((), 2 * W, lambda a, b: a << W | b),
}
INTERVALS = [(lo, hi) for lo in range(1 << W) for hi in range(lo, 1 << W)]


def _covers(rule, params, width, python, arity) -> None:
    for ranges in itertools.product(INTERVALS, repeat=arity):
        lo, hi = rule(params, list(ranges), width, W)
        for values in itertools.product(*(range(a, b + 1) for a, b in ranges)):
            assert lo <= python(*values) <= hi, (ranges, values, (lo, hi))


@pytest.mark.parametrize("kind", sorted(PYTHON))
def test_each_rows_range_holds_every_value(kind):
    params, python = PYTHON[kind]
    _covers(RANGES[kind], params, W, python, python.__code__.co_argcount)


@pytest.mark.parametrize("kind", sorted(RESIZED))
def test_each_resizing_rows_range_holds_every_value(kind):
    params, width, python = RESIZED[kind]
    _covers(RANGES[kind], params, width, python, python.__code__.co_argcount)


def test_every_row_is_checked():
    assert set(RANGES) == set(PYTHON) | set(RESIZED)


def _range(term: z3.ExprRef) -> tuple[int, int]:
    dag = fraig._Dag()
    top = dag.add_roots([term])[0]
    return Ranges(dag.nodes, dag.kids)(top)


def _exact(term: z3.ExprRef, names: str) -> tuple[int, int]:
    """The least and greatest value of term over every value of its 4-bit inputs,
    found by z3's evaluator on numerals (the values, not the ranges' rules)."""
    xs = z3.BitVecs(names, 4)
    got = [z3.simplify(z3.substitute(term, *((x, z3.BitVecVal(v, 4)) for x, v in
                                             zip(xs, vs, strict=True)))).as_long()
           for vs in itertools.product(range(16), repeat=len(xs))]
    return min(got), max(got)


def _selects() -> list[z3.BitVecRef]:
    x, y = z3.BitVecs("x y", 4)
    small, mid = x & 3, (y & 7) + 2
    return [
        z3.If(z3.ULT(small, mid), small, mid),  # umin: the lesser bound
        z3.If(z3.ULT(small, mid), mid, small),  # umax
        z3.If(z3.UGT(x, 9), z3.BitVecVal(9, 4), x),  # a clamp at 9
        z3.If(z3.ULE(x, 5), x, z3.BitVecVal(0, 4)),  # x where x <= 5
        z3.If(z3.Not(z3.ULT(x, 12)), z3.BitVecVal(1, 4), x),  # x where not x >= 12
        z3.If(z3.ULT(x, 4), z3.BitVecVal(0, 4), x),  # x where x >= 4: from 4
        z3.If(mid < small, mid, small),  # a signed min of values not negative
        z3.If(x == 3, x, y & 1),  # a select of bounded arms
        z3.If(y | 1 == 0, x, y & 7),  # -O0's guard of a division by y | 1: never taken
        z3.If((y | 1) & 7 == 0, x, y & 3),  # masked: its bit 0 still known one
        z3.If(x & 3 == (y | 3) & 7, x | 8, x & 1),  # [0, 3] and [3, 7] meet at 3: taken
        z3.If(z3.ULT(x & 3, (y | 3) & 7), x & 1, x | 8),  # at 3, not less: both taken
        z3.If(z3.ULT(x & 3, 4), y & 7, x),  # always taken
        z3.If(z3.ULE(x & 3, 3), y & 7, x),
        z3.If(z3.Not(z3.UGT(x | 8, 7)), x, y & 7),  # never taken
        z3.If(z3.ULT(x, 5), x, x),  # one arm twice: each under its own polarity
    ]


@pytest.mark.parametrize("term", _selects(), ids=str)
def test_a_selects_range_is_its_arms_under_the_condition(term):
    """Exact on these (plain enumeration of every input), so a range one wider or an
    arm left out fails."""
    assert _range(term) == _exact(term, "x y")


def test_a_signed_compare_of_values_that_may_be_negative_bounds_nothing():
    x = z3.BitVec("x", 4)
    lo, hi = _range(z3.If(x < 3, x, z3.BitVecVal(3, 4)))  # x = -8 passes x < 3
    assert (lo, hi) == (0, 15)


def test_a_value_over_numerals_is_its_value():
    x = z3.BitVec("x", 32)
    assert _range(x & (z3.BitVecVal(0x80, 32) - 1)) == (0, 127)  # not folded by z3
    assert _range(z3.LShR(x, z3.If(z3.ULT(z3.BitVecVal(1, 32), 32), z3.BitVecVal(1, 32), 32))) == \
        (0, 2**31 - 1)


def test_ranges_are_read_deeper_than_known_bits():
    x = z3.BitVec("x", 32)
    t = x & 0xff
    for k in range(1, 7):
        t = z3.If(z3.ULT(x, k), t + 1, t)
    assert _range(t)[1] == 0xff + 6


def test_a_random_dags_values_are_within_their_ranges():
    """Random terms of the table's operators and selects over two 4-bit inputs: every
    node's value on every input lies in its range."""
    rng = random.Random(7)
    x, y = z3.BitVecs("x y", 4)
    ops = [lambda a, b: a & b, lambda a, b: a | b, lambda a, b: a + b, lambda a, b: a - b,
           lambda a, b: z3.LShR(a, 1), lambda a, b: z3.UDiv(a, b), lambda a, b: z3.URem(a, b),
           lambda a, b: z3.If(z3.ULT(a, b), a, b), lambda a, b: z3.If(a < b, b, a),
           lambda a, b: a & 5, lambda a, b: z3.If(z3.UGE(a, 3), a, b)]
    for _ in range(30):
        pool = [x, y, x & 3, z3.BitVecVal(rng.randrange(16), 4)]
        for _ in range(6):
            pool.append(rng.choice(ops)(rng.choice(pool), rng.choice(pool)))
        lo, hi = _range(pool[-1])
        exact = _exact(pool[-1], "x y")
        assert lo <= exact[0] and exact[1] <= hi, (pool[-1], (lo, hi), exact)


def _guarded_quotient(r, b, d):
    """div-300-llc14-1's `(r urem ((b | 1) & 0xffff)) udiv ((d | 1) & 0xffff)) udiv 10`
    over z3 terms or plain ints (32 bits): below 2^16, as its divisors' guards say."""
    if isinstance(r, int):
        return r % ((b | 1) & 0xffff) // ((d | 1) & 0xffff) // 10
    return z3.UDiv(z3.UDiv(z3.URem(r, (b | 1) & 0xffff), (d | 1) & 0xffff), 10)


def test_a_guarded_divisor_five_levels_down_bounds_the_quotient():
    """opt's `(v | 1) & 0xffff` against -O0's `v | 1` (div-300-llc14-1): the mask keeps
    every bit v may hold, which the known zeros read five levels below it (plain
    Python's values the oracle), so the normal form drops it; four levels do not."""
    r, b, d = z3.BitVecs("r b d", 32)
    v = _guarded_quotient(r, b, d) | 1
    zeros = known_zeros(v)
    assert zeros == 0xffffe000  # 0xffff // 10 < 2^13
    rng = random.Random(3)
    for _ in range(2000):
        ints = [rng.choice([0, 1, 0xffff, 0x10000, 2**32 - 1, rng.getrandbits(32)])
                for _ in range(3)]
        assert (_guarded_quotient(*ints) | 1) & zeros == 0
    assert rewrite.normal(rewrite.normal(v) & 0xffff).eq(rewrite.normal(v))
    assert known_zeros(v, 4) == 0xe0000000  # by 10 only: not within the mask


def test_a_subterm_met_shallow_first_is_read_again_deeper():
    """The per-call memo holds a reading with its depth: a subterm first met near the
    depth's end and then near the top is read to the greater depth there."""
    r, b, d = z3.BitVecs("r b d", 32)
    q = _guarded_quotient(r, b, d)  # its zeros need five levels
    far = q
    for _ in range(KNOWN_DEPTH - 3):
        far = far & 0xffffffff
    assert known_zeros(far & q) == 0xffffe000
    assert sign_bits(far & q) == 19


def test_a_dag_of_shared_subterms_is_read_once_per_node(monkeypatch):
    """A chain where each level reads the one below twice (2^40 paths) is read once
    per node, and its zeros are those of every level."""
    x = z3.BitVec("x", 32)
    t = x & 0xff
    for k in range(40):  # three nodes each, two levels
        t = z3.If(z3.ULT(x, k), t ^ t, t | t)
    reads = []
    zeros = known._zeros

    def counted(*args):
        reads.append(args[0])
        assert len(reads) <= 3 * 40 + 3, "a node read more than once"
        return zeros(*args)

    monkeypatch.setattr(known, "_zeros", counted)
    assert known_zeros(t, 82) == 0xffffff00


# Plain-Python readings of SMT-LIB's operators on W8-bit values (truncated signed
# division; by 0 a remainder is its dividend): each term below is written once over
# these, and built as a z3 term or evaluated on ints by the same function.
W8 = 8


def _s(v: int, w: int = W8) -> int:
    return v - (1 << w) if v >> (w - 1) else v


def _op(z3_op, python_op):
    def apply(a, b):
        if isinstance(a, int) and isinstance(b, int):
            return python_op(a, b) & ((1 << W8) - 1)
        return z3_op(a, b)
    return apply


def _py_srem(a: int, b: int) -> int:
    if b == 0:
        return a
    r = abs(_s(a)) % abs(_s(b))
    return -r if _s(a) < 0 else r


ADD = _op(lambda a, b: a + b, lambda a, b: a + b)
SUB = _op(lambda a, b: a - b, lambda a, b: a - b)
MUL = _op(lambda a, b: a * b, lambda a, b: a * b)
AND = _op(lambda a, b: a & b, lambda a, b: a & b)
OR = _op(lambda a, b: a | b, lambda a, b: a | b)
SREM = _op(z3.SRem, _py_srem)


def _c(v: int, like) -> object:
    return v if isinstance(like, int) else z3.BitVecVal(v, W8)


# (name, term over x and y, sign bits at least, zeros that must be known)
FACTS = [
    ("product of a 4-bit and a 3-bit value", lambda x, y: MUL(AND(x, _c(15, x)), AND(y, _c(7, y))),
     1, 0x80),
    ("sum of two remainders", lambda x, y: ADD(SREM(x, _c(5, x)), SREM(y, _c(9, y))), 3, 0),
    ("difference of two remainders", lambda x, y: SUB(SREM(x, _c(5, x)), SREM(y, _c(9, y))),
     3, 0),
    ("remainder by a divisor that may be 0", lambda x, y: SREM(x, AND(y, _c(15, y))), 1, 0),
    ("product of two remainders", lambda x, y: MUL(SREM(x, _c(3, x)), SREM(y, _c(5, y))), 2, 0),
    ("product of -1 and a 4-bit value", lambda x, y: MUL(_c(255, x), AND(y, _c(15, y))), 3, 0),
    ("product of -8 and -8 at most", lambda x, y: MUL(SREM(x, _c(9, x)), SREM(y, _c(9, y))), 1,
     0),
    ("remainder by a divisor that may be negative", lambda x, y: SREM(x, OR(y, _c(1, y))), 1, 0),
]


@pytest.mark.parametrize("name, build, signs, zeros", FACTS, ids=[f[0] for f in FACTS])
def test_known_sign_bits_and_zeros_hold_on_every_value(name, build, signs, zeros):
    """Products' leading zeros, sums' and differences' sign bits, a remainder's by a
    divisor bounded and nonzero: as many as counted (no more), each bit a copy of the
    sign bit (or zero) on every pair of 8-bit values by plain Python."""
    x, y = z3.BitVecs("x y", W8)
    t = build(x, y)
    s, z = sign_bits(t), known_zeros(t)
    assert s == signs and z & zeros == zeros
    k = W8 - s + 1  # the value is the sign extension of its low k bits
    for a in range(1 << W8):
        for b in range(1 << W8):
            v = build(a, b) & 0xff
            assert -(1 << (k - 1)) <= _s(v) < 1 << (k - 1) and v & z == 0, (name, a, b)
