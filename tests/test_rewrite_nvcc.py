"""The rewrites nvcc's unoptimised code needs to meet -O3's (ptxsmt/smt/sweeping/rewrite.py:
`_select_test`, `_sign_test`, `_flushed_twice`; found on the nvcc held-out corpus,
docs/nvcc-heldout.md): each an equality z3 proves, each checked against plain Python
on every value of a small width (or numpy's floats), and each leaving its lookalikes."""

from __future__ import annotations

import itertools
import random

import ml_dtypes
import numpy as np
import pytest
import z3

from ptxsmt.isa.types import BF16, F16, F32, F64
from ptxsmt.sem.arith import flush_bits
from ptxsmt.smt.sweeping.rewrite import normal

C = z3.Bool("c")


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _value(t: z3.ExprRef, *pairs: tuple[z3.ExprRef, z3.ExprRef]) -> int | bool:
    out = z3.simplify(z3.substitute(t, *pairs))
    return z3.is_true(out) if z3.is_bool(out) else out.as_long()


def _selects() -> list[tuple[z3.BoolRef, int, int, int]]:
    """k == ite(c, a, b) and k != ite(c, a, b), the numerals meeting or not (either
    operand first)."""
    out = []
    for k, a, b in itertools.product((0, 1, 255), repeat=3):
        s = z3.If(C, z3.BitVecVal(a, 16), z3.BitVecVal(b, 16))
        n = z3.BitVecVal(k, 16)
        out += [(s == n, k, a, b), (n == s, k, a, b), (z3.Distinct(n, s), k, a, b),
                (z3.Distinct(s, n), k, a, b)]
    return out


@pytest.mark.parametrize("term,k,a,b", _selects())
def test_a_select_of_numerals_tested_is_its_condition(term, k, a, b):
    out = normal(term)
    assert not z3.is_app_of(out, z3.Z3_OP_ITE) and _valid(out == term)
    equal = z3.is_eq(term)
    for c in (True, False):  # plain Python: the select's value against k
        want = ((a if c else b) == k) == equal
        assert _value(out, (C, z3.BoolVal(c))) == want


def test_a_select_test_needs_numerals():
    x = z3.BitVec("x", 16)
    for term in (z3.If(C, x, z3.BitVecVal(0, 16)) == 0, z3.If(C, z3.BitVecVal(1, 16),
                                                                 z3.BitVecVal(0, 16)) == x):
        assert normal(term).eq(term)


@pytest.mark.parametrize("width", (8, 16, 32, 64))
def test_an_unsigned_compare_with_half_is_a_sign_test(width):
    x = z3.BitVec(f"x{width}", width)
    half = 1 << (width - 1)
    below, above = normal(z3.ULT(x, half)), normal(z3.ULT(half - 1, x))
    assert z3.is_app_of(above, z3.Z3_OP_SLT) and z3.is_not(below)
    assert _valid(below == z3.ULT(x, half)) and _valid(above == z3.ULT(half - 1, x))
    if width == 8:  # every value, against plain Python's signed reading
        for v in range(256):
            signed = v - 256 if v >= 128 else v
            at = (x, z3.BitVecVal(v, 8))
            assert _value(below, at) == (signed >= 0) and _value(above, at) == (signed < 0)


@pytest.mark.parametrize("bound", (0x3fffffff, 0x40000000, 0x80000001, 0x7ffffffe))
def test_other_unsigned_bounds_are_left_alone(bound):
    x = z3.BitVec("x", 32)
    for term in (z3.ULT(x, bound), z3.ULT(z3.BitVecVal(bound, 32), x)):
        assert normal(term).eq(term)


@pytest.mark.parametrize("fmt", (F16, BF16, F32, F64), ids=lambda f: f.name)
def test_a_flush_of_a_flush_is_one_flush(fmt):
    x = z3.BitVec(f"x{fmt.name}", fmt.width)
    once = flush_bits(x, fmt)
    twice = flush_bits(once, fmt)
    assert normal(twice).eq(once) and _valid(twice == once)
    # its equality written the other way round (the sweep sorts a commutative `=`)
    test, zero, inner = twice.children()
    swapped = z3.If(test.arg(1) == test.arg(0), zero, inner)
    assert normal(swapped).eq(once)


FLOATS = {F16: (np.float16, np.uint16), BF16: (ml_dtypes.bfloat16, np.uint16),
          F32: (np.float32, np.uint32)}


@pytest.mark.parametrize("fmt", list(FLOATS), ids=lambda f: f.name)
def test_the_flush_kept_is_numpys(fmt):
    """The term the rule keeps, on special and random bits, against numpy: a subnormal
    (0 < |v| < the least normal) becomes the zero of its sign, any other value stays."""
    dtype, bits = FLOATS[fmt]
    x = z3.BitVec("x", fmt.width)
    kept = normal(flush_bits(flush_bits(x, fmt), fmt))
    finfo = ml_dtypes.finfo if dtype is ml_dtypes.bfloat16 else np.finfo
    tiny = float(finfo(dtype).smallest_normal)
    sign = 1 << (fmt.width - 1)
    rng = random.Random(5)
    for b in [0, 1, sign, sign | 1, (sign >> 1) - 1, sign - 1] + \
            [rng.randrange(1 << fmt.width) for _ in range(200)]:
        v = float(np.array(b, dtype=bits).view(dtype))
        want = b & sign if 0 < abs(v) < tiny else b
        assert _value(kept, (x, z3.BitVecVal(b, fmt.width))) == want


def test_flushes_of_two_formats_are_kept():
    """An f16 flush of a bf16 flush (16 bits each, another exponent field) is not the
    bf16 flush: kept (a model says they differ: y's bits 9 to 7 alone set)."""
    y = z3.BitVec("y", 16)
    term = flush_bits(flush_bits(y, BF16), F16)
    assert normal(term).eq(term) and not _valid(term == flush_bits(y, BF16))


def _shaped_flush(x: z3.BitVecRef, test_of: z3.BitVecRef, top: int, sign: int) -> z3.BitVecRef:
    """`ite(test_of[top:23] == 0, concat(x[sign], 0), x)`: flush_bits' shape with
    another value tested, or other bits."""
    return z3.If(z3.Extract(top, 23, test_of) == 0,
                 z3.Concat(z3.Extract(sign, sign, x), z3.BitVecVal(0, 31)), x)


@pytest.mark.parametrize("which", ["another value tested", "other bits"])
def test_lookalikes_of_a_flush_are_kept(which):
    """Not flushes: the outer select tests another value's field, or reads a field
    below bit 30 and the sign from bit 30; neither equals the inner value (a model
    says so), and the rule leaves both."""
    x, y = z3.BitVecs("x y", 32)
    if which == "another value tested":
        inner = flush_bits(x, F32)
        term = _shaped_flush(inner, y, 30, 31)
    else:
        inner = _shaped_flush(x, x, 29, 30)
        term = _shaped_flush(inner, inner, 29, 30)
    assert normal(term).eq(term) and not _valid(term == inner)
