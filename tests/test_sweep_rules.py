"""The rules a sweep merge may rest on instead of a solver query (`fraig.JUSTIFICATIONS`),
proved by z3 row by row, and `--certify`, which asks a solver for each such merge again.

The IEEE value classes (`ieee_classes.py`): each class test, each operation's class transfer
(`_propagating`, with `INVALID`), each condition rule (`_condition`) is checked over every
combination of operand classes: a model would be a value of those classes for which the
rule's answer is wrong. The truth tables (`truth.py`) read a float relation as NaN tests and
`<` (`_RELATIONS`): each row is an identity z3 proves; so is each other reading of a
condition (each connective, each look-through of a NaN test, a table inside a larger
formula), by `Tables.table` and `shallow_table`: the table, read back as a formula over
what its basis variables mean, is the condition. The phi rule (`_cases_meet`) rests on two
rows (a term is the select of its cases of a condition; a node equal to the condition
negated reads flipped), and every merge it makes in a sweep is proved equal; the
float-bits rule on one row per format. Where a row holds whatever the format
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
from ptxsmt.isa.types import BF16, F16, F64
from ptxsmt.isa.types import F32 as FMT32
from ptxsmt.sem.sorts import fp_sort, free_nan, ieee_result, to_bits
from ptxsmt.smt.sweeping import JUSTIFICATIONS, certify, fraig, sweep, truth
from ptxsmt.smt.sweeping import ieee_classes as ic

SCALE = Path(__file__).parent / "ptx" / "scale"
SMALL, F32 = z3.FPSort(3, 4), z3.FPSort(8, 24)
M32 = 0xFFFFFFFF
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
    """A bf16 merge is re-proved, or refuted, by the sweep's solver (bitwuzla reads
    bf16 written in f32) or else by z3, rather than left undecided."""
    f = z3.FP("f", z3.FPSort(8, 8))
    done = certify([("class rule", z3.fpIsNaN(z3.fpMul(z3.RNE(), f, f)), z3.fpIsNaN(f)),
                    ("class rule", z3.fpIsNaN(z3.fpSub(z3.RNE(), f, f)), z3.fpIsNaN(f))], 30)
    assert (done.certified, done.refuted, done.undecided) == (1, ["class rule"], [])


# ---- truth tables (truth.py): each reading of a condition, a row proved by z3 ----

def _subterms(t: z3.ExprRef) -> dict[int, z3.ExprRef]:
    out, todo = {}, [t]
    while todo:
        u = todo.pop()
        if u.get_id() not in out:
            out[u.get_id()] = u
            todo.extend(u.children() if z3.is_app(u) else [])
    return out


def _meaning(v: tuple, terms: dict[int, z3.ExprRef]) -> z3.BoolRef:
    """A basis variable of `truth.py` as the condition its docstring says it is."""
    kind = v[0]
    if kind in ("nan", "atom", "node"):
        u = terms[v[1]]
        return z3.fpIsNaN(u) if kind == "nan" else u
    if kind == "nanbits":
        bits, e = terms[v[1]], v[2]
        return z3.fpIsNaN(z3.fpBVToFP(bits, z3.FPSort(e, bits.size() - e)))
    x, y = terms[v[1]], terms[v[2]]
    neither = z3.And(z3.Not(z3.fpIsNaN(x)), z3.Not(z3.fpIsNaN(y)))
    return z3.And(neither, z3.fpLT(x, y) if kind == "lt" else z3.fpGT(x, y))


def _function(table: truth.Table, terms: dict[int, z3.ExprRef]) -> z3.BoolRef:
    """The table as a disjunction of its true rows (variable j is bit j of the row)."""
    values = [_meaning(v, terms) for v in table.basis]
    rows = [z3.And([x if k >> j & 1 else z3.Not(x) for j, x in enumerate(values)])
            for k in range(1 << len(values)) if table.rows >> k & 1]
    return z3.Or(rows) if rows else z3.BoolVal(False)


C1, C2 = z3.Bools("c1 c2")
FX, FY, FZ = z3.FPs("fx fy fz", F32)
BITS, BITS2 = z3.BitVecs("bits bits2", 32)
H = z3.BitVec("h", 16)
NAN32 = z3.fpNaN(F32)


def _many_nans(n: int) -> list[z3.BoolRef]:
    return [z3.fpIsNaN(z3.FP(f"w{k}", F32)) for k in range(n)]


# one condition for each way truth.py reads one: each connective, each relation, each
# look-through of a NaN test, a relation of a value with itself, a table of more than
# REDUCED variables read inside a larger formula
TRUTH_ROWS = {
    "and": z3.And(C1, z3.fpIsNaN(FX), C2),
    "or": z3.Or(C1, z3.fpIsNaN(FX)),
    "not": z3.Not(z3.fpIsNaN(FX)),
    "xor": z3.Xor(C1, z3.fpIsNaN(FX)),
    "iff": z3.fpIsNaN(FX) == C1,
    "distinct": z3.Distinct(C1, z3.fpIsNaN(FX)),
    "implies": z3.Implies(C1, z3.fpIsNaN(FX)),
    "implies reversed": z3.Implies(z3.fpIsNaN(FX), C1),
    "ite": z3.If(C1, z3.fpIsNaN(FX), C2),
    **{f"{name} {order}": f(*args) for name, f in (
        ("lt", z3.fpLT), ("gt", z3.fpGT), ("le", z3.fpLEQ), ("ge", z3.fpGEQ), ("eq", z3.fpEQ))
       for order, args in (("x y", (FX, FY)), ("y x", (FY, FX)))},
    "le itself": z3.fpLEQ(FX, FX),
    "lt itself": z3.fpLT(FX, FX),
    "nan constant": z3.Or(z3.fpIsNaN(NAN32), C1),
    "number constant": z3.Or(z3.fpIsNaN(z3.FPVal(1.0, F32)), C1),
    "nan of ite": z3.fpIsNaN(z3.If(C1, FX, FY)),
    "nan of neg": z3.Xor(z3.fpIsNaN(z3.fpNeg(FX)), z3.fpIsNaN(FY)),
    "nan of abs": z3.Xor(z3.fpIsNaN(z3.fpAbs(FX)), z3.fpIsNaN(FY)),
    "nan of bits": z3.Xor(z3.fpIsNaN(z3.fpBVToFP(BITS, F32)), C1),
    "nan of constant bits": z3.Or(z3.fpIsNaN(z3.fpBVToFP(z3.BitVecVal(0x7FA00000, 32), F32)),
                                  C1),
    "nan of bits of ite": z3.fpIsNaN(z3.fpBVToFP(z3.If(C1, BITS, BITS2), F32)),
    "nan of to_ieee_bv": z3.Xor(z3.fpIsNaN(z3.fpBVToFP(z3.fpToIEEEBV(FX), F32)), C1),
    "nan of to_bits": z3.Xor(z3.fpIsNaN(z3.fpBVToFP(
        to_bits(z3.fpAdd(z3.RNE(), FX, FY), free_nan("add.f32", BITS, FMT32)), F32)), C1),
    "bits as f16 and bf16": z3.Xor(z3.fpIsNaN(z3.fpBVToFP(H, z3.FPSort(5, 11))),
                                   z3.fpIsNaN(z3.fpBVToFP(H, z3.FPSort(8, 8)))),
    "atom": z3.Or(z3.ULT(BITS, BITS2), C1),
    # eight NaN tests: more than REDUCED, read as their table inside the xor
    "reduced": z3.Xor(z3.Or(z3.And(*_many_nans(4)), z3.And(*_many_nans(8)[4:])), C1),
}


@pytest.mark.parametrize("name", sorted(TRUTH_ROWS))
def test_each_truth_table_reading_is_an_identity(name):
    """`Tables.table` of the condition, read back as a formula over what each basis
    variable means (a NaN test, x < y where neither is a NaN, a condition), is the
    condition on every input: z3 proves it."""
    t = TRUTH_ROWS[name]
    table = truth.Tables().table(t)
    assert table is not None, name
    assert never(t == _function(table, _subterms(t))), (name, table)


@pytest.mark.parametrize("name", sorted(TRUTH_ROWS))
def test_each_shallow_table_reading_is_an_identity(name):
    """The same for `shallow_table`, once with each condition its own variable, once
    with a name for each (as the sweep names its nodes)."""
    t = TRUTH_ROWS[name]
    named: dict[int, z3.ExprRef] = {}

    def name_of(u: z3.ExprRef) -> tuple:
        named[u.get_id()] = u  # kept alive: the id stays this term's
        return ("node", u.get_id())
    for name_it in (lambda u: None, name_of):
        table = truth.shallow_table(t, name_it, lambda u: False)
        if table is None:  # more variables than LIMIT
            continue
        terms = {**_subterms(t), **named}
        assert never(t == _function(table, terms)), (name, table)


def test_each_connective_is_its_rows():
    """`truth._OPERATORS` on two variables' rows (0b1010, 0b1100: every pair of values)
    against z3's connective on those values, row by row."""
    z3_of = {"&": z3.And, "|": z3.Or, "^": z3.Xor, "=": lambda a, b: a == b,
             ">": z3.Implies, "!": lambda a, _: z3.Not(a), "?": None}
    p, q, full = 0b1010, 0b1100, 0b1111
    for op, f in z3_of.items():
        if f is None:
            continue
        rows = truth._OPERATORS[op]([p, q] if op != "!" else [p], full)
        for k in range(4):
            want = z3.simplify(f(z3.BoolVal(bool(p >> k & 1)), z3.BoolVal(bool(q >> k & 1))))
            assert bool(rows >> k & 1) == z3.is_true(want), (op, k)
    c, a, b = 0b11110000, 0b11001100, 0b10101010  # every row of three variables
    rows = truth._OPERATORS["?"]([c, a, b], 0xFF)
    for k in range(8):
        want = z3.simplify(z3.If(*(z3.BoolVal(bool(v >> k & 1)) for v in (c, a, b))))
        assert bool(rows >> k & 1) == z3.is_true(want), ("?", k)


# ---- phi cases (fraig._cases_meet): its two rows, then every merge it makes ----

def test_a_term_is_its_cases_of_a_condition_it_reads():
    """`_given`: a term read with its condition c fixed true, then false, is the select
    of those two on c (Shannon's expansion; f any function of c and more)."""
    x = z3.BitVec("x", 32)
    f = z3.Function("f", z3.BoolSort(), z3.BitVecSort(32), z3.BitVecSort(32))
    assert never(f(C1, x) == z3.If(C1, f(True, x), f(False, x)))


def test_a_term_over_a_negated_condition_is_its_cases_flipped():
    """`_given_as_built`: a node whose representative is !c reads as false where c is
    fixed true, and as true where c is false."""
    x = z3.BitVec("x", 32)
    f = z3.Function("f", z3.BoolSort(), z3.BoolSort(), z3.BitVecSort(32), z3.BitVecSort(32))
    assert never(z3.Implies(z3.Not(C1) == C2, f(C1, C2, x) ==
                            z3.If(C1, f(True, False, x), f(False, True, x))))


def test_every_phi_merge_is_an_equality_and_a_flipped_phi_is_none(monkeypatch):
    """With a solver that decides nothing, the only merges of selects are the phi rule's
    (`_cases_meet`). -O0's phi `ite(c, g(x), g(y))` meets `g(ite(c, x, y))` and
    `g(ite(!c, y, x))`: each such merge z3 proves. `g(ite(!c, x, y))` is the phi with
    its arms swapped (it differs where x and y do: only at a = K, so simulation cannot
    tell); it must stay apart, though it reads !c, a node the rule flips."""
    monkeypatch.setattr(fraig, "_check", lambda *_: ("unknown", None))
    a, b, p = z3.BitVecs("a b p", 32)
    k = 0x9E3779B9
    c = z3.ULT(b ^ p, a)
    x, y = a, z3.If(a == k, a + 1, a)

    def g(v):
        return (v + p) ^ (v << 3)
    phi = z3.If(c, g(x), g(y))
    meets = [g(z3.If(c, x, y)), g(z3.If(z3.Not(c), y, x))]
    swapped = g(z3.If(z3.Not(c), x, y))
    roots = [phi != m for m in meets] + [phi != swapped]
    swept, stats = sweep(roots, [a, b, p], 60)
    rule = [(u, v) for r, u, v in stats.justified if r == "phi cases"]
    assert rule and all(never(u == v) for u, v in rule)
    assert all(z3.is_false(z3.simplify(t)) for t in swept[:2])
    at = [(a, z3.BitVecVal(k, 32)), (b, z3.BitVecVal(0, 32)), (p, z3.BitVecVal(3, 32))]
    gx, gx1 = ((k + 3) ^ (k << 3)) & M32, ((k + 4) ^ ((k + 1) << 3)) & M32
    assert gx != gx1  # at a = K, p = 3 (c true: 0 < K): g(x) against g(x + 1), by Python
    assert z3.is_true(z3.simplify(z3.substitute(swept[2], *at)))


def test_two_terms_one_in_each_case_of_a_condition_merge_and_rare_cases_apart_do_not(
        monkeypatch):
    """With a solver that decides nothing, two sums of selects on one condition c, with
    no select at their top (-O0 branches where opt selects, and the phi lies below the
    value both compute), merge by the phi cases (`_split_meets`): read with c true they
    are one term, and with c false. Where they differ in the false case at one input
    only (y = K, which simulation does not draw) they stay apart. Each such merge z3
    proves; the pair kept apart differs at y = K, by Python's arithmetic."""
    monkeypatch.setattr(fraig, "_check", lambda *_: ("unknown", None))
    x, y, z, w, p = z3.BitVecs("x y z w p", 32)
    k = 0x9E3779B9
    c = z3.ULT(y ^ p, x)
    ours = z3.If(c, x, y) + z3.If(c, z, w)
    theirs = z3.If(c, x, y + w) + z3.If(c, z, z3.BitVecVal(0, 32))
    rare = z3.If(c, x, y + w) + z3.If(c, z, z3.If(y == k, z3.BitVecVal(1, 32), 0))
    swept, stats = sweep([ours != theirs, ours != rare], [x, y, z, w, p], 60)
    rule = [(u, v) for r, u, v in stats.justified if r == "phi cases"]
    assert rule and all(never(u == v) for u, v in rule)
    assert z3.is_false(z3.simplify(swept[0]))
    assert not z3.is_false(z3.simplify(swept[1]))
    at = {"x": 0, "y": k, "z": 5, "w": 7, "p": k}  # c false: y ^ p = 0 is not below 0
    assert not (at["y"] ^ at["p"]) < at["x"]
    assert (at["y"] + at["w"]) & M32 != (at["y"] + at["w"] + 1) & M32
    assert z3.is_true(z3.simplify(z3.substitute(
        swept[1], *[(v, z3.BitVecVal(at[str(v)], 32)) for v in (x, y, z, w, p)])))


@pytest.mark.parametrize("fmt", [F16, BF16, FMT32, F64], ids=lambda f: f.name)
def test_a_float_read_from_the_bits_its_result_wrote_is_that_float(fmt):
    """The float-bits rule (`fraig._Sweep._rebuild`, `sorts.ieee_result`): the bits
    `to_bits` writes for x (an open NaN where x is one), read as a float, are x: every
    NaN is one float in SMT-LIB. The rule recognises the term, and z3 proves the row."""
    sort = fp_sort(fmt)
    x = z3.FP("x", sort)
    bits = to_bits(x, free_nan(f"op.{fmt.name}", z3.BitVec("u", fmt.width), fmt))
    assert ieee_result(bits, sort).eq(x)
    assert never(z3.fpBVToFP(bits, sort) == x)
