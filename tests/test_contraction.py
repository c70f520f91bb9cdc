"""mul then add/sub without rounding modifiers may be fused by ptxas (sem/contraction.py,
Spec notes 13): the result is either rounding, checked against exact rational arithmetic
(tests/exact_float.py), and no verdict rests on one of them."""

from __future__ import annotations

import random

import pytest
import z3
from exact_float import NAN, arith, decode, fma, neg

from ptxsmt.eval.evaluate import evaluate
from ptxsmt.eval.values import UNSPECIFIED
from ptxsmt.function import read_function
from ptxsmt.program import compiled
from ptxsmt.sem.sorts import is_nan
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.queries.snippets import check_equivalence

PAIR = "mul.f32 d, a, b; add.f32 e, d, c;"
RN_PAIR = "mul.rn.f32 d, a, b; add.rn.f32 e, d, c;"
# 1 + 2**-12 squared is 1 + 2**-11 + 2**-24, a tie that rounds to 1 + 2**-11: with
# c = -(1 + 2**-11) the two roundings give 0 and the fma 2**-24 (0x33800000, which an
# H200 returned for this pair; issue 41)
TIE = {"a": 0x3F800800, "b": 0x3F800800, "c": 0xBF801000}


def _oracle(op: str, fmt: str, a: int, b: int, c: int, product_first: bool = True) -> set:
    """The values the pair may give: the two roundings, and the fma's one."""
    p = arith("mul", "rn", fmt, a, b)
    unfused = NAN if p == NAN else arith(op, "rn", fmt, *((p, c) if product_first else (c, p)))
    x, y, z = decode(a, fmt), decode(b, fmt), decode(c, fmt)
    if op == "sub":
        x, z = (x, neg(z)) if product_first else (neg(x), z)
    return {unfused, fma(x, y, z, fmt, "rn")}


def _values(text: str, inputs: dict, out: str = "e") -> z3.ExprRef:
    program, enc = compiled(text)
    pins = [(enc.inputs[k], z3.BitVecVal(v, program.types[k].width)) for k, v in inputs.items()]
    return z3.simplify(z3.substitute(enc.outputs[out], *pins))


def _allows(term: z3.ExprRef, want: set, fmt) -> None:
    """`term` can take each value of `want` (NAN: some NaN), and no other."""
    s = z3.Solver()
    alts = [is_nan(term, fmt) if v == NAN else term == v for v in want]
    for alt in alts:
        assert s.check(alt) == z3.sat, (term, want)
    assert s.check(z3.Not(z3.Or(*alts))) == z3.unsat, (term, want)


def test_the_pair_may_give_either_rounding():
    got = evaluate(PAIR, TIE, unspecified_ok=True).outputs
    assert got["d"] == 0x3F801000 and got["e"] is UNSPECIFIED  # open: never one invented
    _allows(_values(PAIR, TIE), {0, 0x33800000}, compiled(PAIR)[0].types["e"].fmt)
    assert evaluate(RN_PAIR, TIE).outputs["e"] == 0
    assert evaluate(PAIR, {"a": 0x40000000, "b": 0x40400000, "c": 0x3F800000}).outputs == \
        {"d": 0x40C00000, "e": 0x40E00000}  # 2*3 + 1: both roundings agree, so a value


CASES = [  # (text, op, type, the product is the add's first operand)
    (PAIR, "add", "f32", True),
    ("mul.f32 d, a, b; add.f32 e, c, d;", "add", "f32", False),
    ("mul.f32 d, a, b; sub.f32 e, d, c;", "sub", "f32", True),
    ("mul.f32 d, a, b; sub.f32 e, c, d;", "sub", "f32", False),
    ("mul.f64 d, a, b; add.f64 e, d, c;", "add", "f64", True),
    ("mul.f16 d, a, b; sub.f16 e, c, d;", "sub", "f16", False),
    ("mul.bf16 d, a, b; add.bf16 e, d, c;", "add", "bf16", True),
]


@pytest.mark.parametrize("text,op,t,first", CASES)
def test_the_pair_is_one_of_the_two_roundings(text, op, t, first):
    types = compiled(text)[0].types
    fmt, width = types["e"].fmt, types["e"].width
    man, sign = fmt.sbits - 1, 1 << (width - 1)
    one = ((1 << (fmt.ebits - 1)) - 1) << man
    rng = random.Random(text)
    parted = 0
    for k in range(16):
        a, b = (one | rng.getrandbits(man) for _ in "ab")  # in [1, 2): no overflow
        p = arith("mul", "rn", t, a, b)
        # c cancels the rounded product (where the two roundings part), else random
        c = p ^ sign if op == "add" else p if k % 4 else rng.getrandbits(width)
        want = _oracle(op, t, a, b, c, first)
        parted += len(want) == 2
        _allows(_values(text, {"a": a, "b": b, "c": c}), want, fmt)
    assert parted >= 8


def test_packed_lanes_are_fused_together():
    text = "mul.f16x2 d, a, b; add.f16x2 e, d, c;"
    lanes = [(0x3C01, 0x3C01, 0xBC02), (0x4000, 0x4200, 0x3C00)]  # 1+2**-10 squared; 2*3+1
    pack = [sum(x[i] << (16 * k) for k, x in enumerate(lanes)) for i in range(3)]
    term = _values(text, dict(zip("abc", pack)))
    low, high = (_oracle("add", "f16", *x) for x in lanes)
    assert len(low) == 2 and len(high) == 1  # the first lane's roundings part
    _allows(term, {lo | h << 16 for lo in low for h in high}, compiled(text)[0].types["e"].fmt)


@pytest.mark.parametrize("other,verdict", [
    (RN_PAIR, "different"),
    (PAIR, "equivalent"),  # one text: one choice on both sides
    ("fma.rn.f32 e, a, b, c; mul.rn.f32 d, a, b;", "different"),
])
def test_equivalence_holds_only_for_both_choices(other, verdict):
    v = check_equivalence(PAIR, other, timeout=120, minimise=False, solver="auto")
    assert v.verdict == verdict, v
    if verdict == "different":  # replayed: the pair's e is open, the other side's is not
        assert v.counterexample.lhs["e"] is UNSPECIFIED, v.counterexample


@pytest.mark.parametrize("text", [
    "mul.rn.f32 d, a, b; add.f32 e, d, c;",  # a rounding modifier on either: no fma
    "mul.f32 d, a, b; add.rn.f32 e, d, c;",
    "mul.sat.f32 d, a, b; add.f32 e, d, c;",  # a clamped product is no fma's
    "mul.ftz.f32 d, a, b; add.f32 e, d, c;",  # .ftz on one only
    "@p mul.f32 d, a, b; add.f32 e, d, c;",  # d may be the old value
])
def test_what_is_never_fused(text):
    rn = text.replace("add.f32", "add.rn.f32").replace("mul.f32", "mul.rn.f32")
    assert check_equivalence(text, rn, timeout=60).verdict == "equivalent"


def test_fused_with_sat_and_ftz_clamps_and_flushes_the_fma():
    text = "mul.ftz.f32 d, a, b; add.ftz.sat.f32 e, d, c;"
    fmt = compiled(text)[0].types["e"].fmt
    _allows(_values(text, {"a": 0x3F800800, "b": 0x3F800800, "c": 0xBF801000}),
            {0, 0x33800000}, fmt)  # 2**-24 is a normal f32: kept
    # 1.5 * 1 + 0: both above 1.0, clamped
    _allows(_values(text, {"a": 0x3FC00000, "b": 0x3F800000, "c": 0}), {0x3F800000}, fmt)


FUNC = """.version 8.0
.target sm_90
.address_size 64
.visible .func (.param .b32 r) f(.param .b32 x, .param .b32 y, .param .b32 z)
{{
    .reg .f32 %f<6>;
    ld.param.f32 %f1, [x];
    ld.param.f32 %f2, [y];
    ld.param.f32 %f3, [z];
    mul{r}.f32 %f4, %f1, %f2;
    mov.f32 %f5, %f4;
    add{r}.f32 %f5, %f5, %f3;
    st.param.f32 [r], %f5;
    ret;
}}
"""


def test_whole_functions_fuse_through_a_mov():
    loose, rn = (read_function(FUNC.format(r=r), "f") for r in ("", ".rn"))
    assert check_function_equivalence(loose, rn, timeout=60).verdict == "different"
    assert check_function_equivalence(loose, loose, timeout=60).verdict == "equivalent"
