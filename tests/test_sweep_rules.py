"""The rules a sweep merge may rest on instead of a solver query (`fraig.JUSTIFICATIONS`),
proved by z3 row by row, and `--certify`, which asks a solver for each such merge again.

The IEEE value classes (`ieee_classes.py`): each class test, each operation's class transfer
(`_propagating`, with `INVALID`), each condition rule (`_condition`) is checked over every
combination of operand classes: a model would be a value of those classes for which the
rule's answer is wrong. The truth tables (`truth.py`) read a float relation as NaN tests and
`<` (`_RELATIONS`): each row is an identity z3 proves. Where a row holds whatever the format
(the classes name no width) the floats are a small format, 3 exponent and 4 significand bits,
which has every class, subnormals and rounding to each of them, so that each query is
decided in milliseconds (a half-precision `fp.rem` can take z3 minutes); the class tests are
checked in single precision.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
import z3
from click.testing import CliRunner

from ptxsmt.cli.equiv import equiv
from ptxsmt.isa.literals import fp_class
from ptxsmt.isa.types import F32 as FMT32
from ptxsmt.smt.sweeping import JUSTIFICATIONS, certify, truth
from ptxsmt.smt.sweeping import ieee_classes as ic

SCALE = Path(__file__).parent / "ptx" / "scale"
SMALL, F32 = z3.FPSort(3, 4), z3.FPSort(8, 24)
CLASSES = [ic.NAN, ic.PLUS_ZERO, ic.MINUS_ZERO, ic.PLUS_INF, ic.MINUS_INF, ic.POSITIVE,
           ic.NEGATIVE]


def member(x: z3.FPRef, classes: int) -> z3.BoolRef:
    """x lies in one of `classes`, written with z3's own class tests."""
    zero, inf = z3.fpIsZero(x), z3.fpIsInf(x)
    finite = z3.And(z3.Not(zero), z3.Not(inf), z3.Not(z3.fpIsNaN(x)))
    each = {ic.NAN: z3.fpIsNaN(x), ic.PLUS_ZERO: z3.And(zero, z3.fpIsPositive(x)),
            ic.MINUS_ZERO: z3.And(zero, z3.fpIsNegative(x)),
            ic.PLUS_INF: z3.And(inf, z3.fpIsPositive(x)),
            ic.MINUS_INF: z3.And(inf, z3.fpIsNegative(x)),
            ic.POSITIVE: z3.And(finite, z3.fpIsPositive(x)),
            ic.NEGATIVE: z3.And(finite, z3.fpIsNegative(x))}
    return z3.Or([each[c] for c in CLASSES if classes & c] or [z3.BoolVal(False)])


def never(claim: z3.BoolRef) -> bool:
    """No input breaks the claim: z3 says unsat to its negation (a query it cannot decide
    in a minute fails the test rather than hanging it)."""
    s = z3.Solver()
    s.set("timeout", 60_000)
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


@pytest.mark.parametrize("op", sorted(ic.TESTS))
def test_each_class_test_holds_exactly_for_its_classes(op):
    x = z3.FP("x", F32)
    test = {z3.Z3_OP_FPA_IS_NAN: z3.fpIsNaN, z3.Z3_OP_FPA_IS_ZERO: z3.fpIsZero,
            z3.Z3_OP_FPA_IS_INF: z3.fpIsInf, z3.Z3_OP_FPA_IS_NEGATIVE: z3.fpIsNegative,
            z3.Z3_OP_FPA_IS_POSITIVE: z3.fpIsPositive}[op]
    for c in CLASSES:
        assert never(z3.Implies(member(x, c), test(x) == bool(ic.TESTS[op] & c))), (op, c)


def test_each_bits_class_names_the_class_of_its_float():
    for bits in (0, 0x80000000, 1, 0x807FFFFF, 0x3F800000, 0xBF800000, 0x7F800000,
                 0xFF800000, 0x7FC00000, 0xFFA00001):
        x = z3.fpBVToFP(z3.BitVecVal(bits, 32), F32)
        assert never(member(x, ic.bits_class(bits, (8, 24)))), fp_class(bits, FMT32)


BINARY = {z3.Z3_OP_FPA_ADD: z3.fpAdd, z3.Z3_OP_FPA_SUB: z3.fpSub, z3.Z3_OP_FPA_MUL: z3.fpMul,
          z3.Z3_OP_FPA_DIV: z3.fpDiv, z3.Z3_OP_FPA_REM: lambda _, a, b: z3.fpRem(a, b)}
UNARY = {z3.Z3_OP_FPA_SQRT: z3.fpSqrt, z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: z3.fpRoundToIntegral}


def transfer_holds(op: int, result: z3.FPRef, operands: list[z3.FPRef],
                   classes: tuple[int, ...]) -> bool:
    given = z3.And([member(x, c) for x, c in zip(operands, classes, strict=True)])
    return never(z3.Implies(given, member(result, ic._propagating(op, list(classes)))))


@pytest.mark.parametrize("op", sorted(BINARY))
def test_each_binary_operation_transfers_its_operands_classes(op):
    a, b = z3.FPs("a b", SMALL)
    for rm in (z3.RNE(), z3.RTZ()):
        result = BINARY[op](rm, a, b)
        for classes in itertools.product(CLASSES, repeat=2):
            assert transfer_holds(op, result, [a, b], classes), (op, rm, classes)


def test_the_unary_operations_and_fma_transfer_their_operands_classes():
    a, b, c = z3.FPs("a b c", SMALL)
    for op, f in UNARY.items():
        for (cls,) in itertools.product(CLASSES, repeat=1):
            assert transfer_holds(op, f(z3.RNE(), a), [a], (cls,)), (op, cls)
    fma = z3.fpFMA(z3.RNE(), a, b, c)
    for classes in itertools.product([ic.NAN, ic.PLUS_ZERO, ic.PLUS_INF, ic.NEGATIVE],
                                     repeat=3):
        assert transfer_holds(z3.Z3_OP_FPA_FMA, fma, [a, b, c], classes), classes
    assert set(BINARY) | set(UNARY) | {z3.Z3_OP_FPA_FMA} == ic.PROPAGATING


COMPARE = {z3.Z3_OP_FPA_LT: z3.fpLT, z3.Z3_OP_FPA_LE: z3.fpLEQ, z3.Z3_OP_FPA_GT: z3.fpGT,
           z3.Z3_OP_FPA_GE: z3.fpGEQ, z3.Z3_OP_FPA_EQ: z3.fpEQ}


def test_an_ordered_comparison_with_a_nan_is_false():
    """`_condition`'s rule for COMPARISONS: an operand that is only a NaN makes it false."""
    a, b = z3.FPs("a b", SMALL)
    assert set(COMPARE) == ic.COMPARISONS
    for f in COMPARE.values():
        assert never(z3.Implies(z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)), z3.Not(f(a, b))))


def test_values_of_disjoint_classes_are_never_equal():
    """`_condition`'s rule for `=` and `distinct`: no value in common, never equal."""
    a, b = z3.FPs("a b", SMALL)
    for x, y in itertools.product(CLASSES, repeat=2):
        if not x & y:
            assert never(z3.Implies(z3.And(member(a, x), member(b, y)), a != b)), (x, y)


@pytest.mark.parametrize("kind", sorted(truth._RELATIONS))
def test_each_relation_is_its_nan_tests_and_less_than(kind):
    """A truth table reads `x REL y` as: neither is a NaN, and x < y, y < x as
    `_RELATIONS` says (True: holds, False: does not, None: either)."""
    x, y = z3.FPs("x y", SMALL)
    parts = [z3.Not(z3.fpIsNaN(x)), z3.Not(z3.fpIsNaN(y))]
    for (a, b), want in zip(((x, y), (y, x)), truth._RELATIONS[kind], strict=True):
        if want is not None:
            parts.append(z3.fpLT(a, b) if want else z3.Not(z3.fpLT(a, b)))
    assert never(COMPARE[kind](x, y) == z3.And(parts))


def test_a_nan_test_looks_through_sign_operations():
    """`truth._read_nan`: isNaN(-x) and isNaN(|x|) are isNaN(x)."""
    x = z3.FP("x", SMALL)
    assert never(z3.fpIsNaN(z3.fpNeg(x)) == z3.fpIsNaN(x))
    assert never(z3.fpIsNaN(z3.fpAbs(x)) == z3.fpIsNaN(x))


def test_certify_proves_a_true_merge_and_refutes_a_false_one():
    x = z3.BitVec("x", 8)
    f = z3.FP("f", z3.FPSort(5, 11))  # a format every solver reads
    done = certify([("truth table", z3.Not(z3.Not(x == 1)), x == 1),
                    ("class rule", z3.fpIsNaN(z3.fpAdd(z3.RNE(), f, f)), z3.fpIsNaN(f)),
                    ("class rule", z3.fpIsNaN(z3.fpSub(z3.RNE(), f, f)), z3.fpIsNaN(f))], 30)
    assert (done.certified, done.refuted, done.undecided) == (2, ["class rule"], [])


def test_certify_re_proves_every_merge_by_rule_of_a_float_pair():
    """A generated float pair (scripts/scale_functions.py 16 float 0) whose sweep merges by
    truth tables and classes: the JSON names them, and --certify proves each one."""
    args = [str(SCALE / "float-16.O0.ptx"), str(SCALE / "float-16.O2.ptx"), "--function", "f",
            "--json", "--timeout", "120"]
    plain = json.loads(CliRunner().invoke(equiv, args).stdout)
    assert plain["verdict"] == "equivalent" and set(plain["justified"]) <= set(JUSTIFICATIONS)
    assert sum(plain["justified"].values()) > 0 and "certified" not in plain
    r = CliRunner().invoke(equiv, [*args, "--certify"])
    out = json.loads(r.stdout)
    assert r.exit_code == 0 and out["verdict"] == "equivalent", r.output
    assert out["certified"] == {"proved": sum(out["justified"].values()), "refuted": [],
                                "undecided": []}


def test_certify_asks_z3_what_the_sweeps_solver_does_not_read():
    """bitwuzla reads no bf16 (portfolio.unreadable): a bf16 merge is still re-proved,
    or refuted, by z3 rather than left undecided."""
    f = z3.FP("f", z3.FPSort(8, 8))
    done = certify([("class rule", z3.fpIsNaN(z3.fpMul(z3.RNE(), f, f)), z3.fpIsNaN(f)),
                    ("class rule", z3.fpIsNaN(z3.fpSub(z3.RNE(), f, f)), z3.fpIsNaN(f))], 30)
    assert (done.certified, done.refuted, done.undecided) == (1, ["class rule"], [])
