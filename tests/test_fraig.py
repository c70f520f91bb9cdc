"""Equivalence sweeping (`ptxsmt/smt/sweeping/fraig.py`) and the simulation it groups values by
(`ptxsmt/smt/sweeping/simulate.py`).

The simulation interprets Z3's operators; it is checked against Z3's own evaluation of
the same terms on concrete inputs (the reference for SMT-LIB's meaning), not against
itself. Sweeping may only merge what a solver proved equal: a pair that simulation
cannot tell apart but that differs somewhere must survive it, and the swept query must
be equivalent to the original.
"""

from __future__ import annotations

import math
import random
import re
import sys
from pathlib import Path

import pytest
import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.isa.literals import fp_class
from ptxsmt.isa.types import F32 as FMT32
from ptxsmt.program import Program
from ptxsmt.sem.sorts import free_nan, to_bits, unordered
from ptxsmt.smt.queries import functions
from ptxsmt.smt.queries.functions import check_function_equivalence
from ptxsmt.smt.solving import budget, portfolio
from ptxsmt.smt.sweeping import float_facts, fraig, rewrite, simulate, sweep
from ptxsmt.smt.sweeping.simulate import (
    _bits_of_float,
    _float_of_bits,
    as_key,
    evaluate_node,
    read_node,
)

SCALE = Path(__file__).parent / "ptx" / "scale"
F32, F16 = z3.FPSort(8, 24), z3.FPSort(5, 11)
MODES = [z3.RNE(), z3.RNA(), z3.RTZ(), z3.RTP(), z3.RTN()]


def _terms(x, y, z):
    """Terms over three 32-bit inputs, each operator the simulation interprets."""
    fx, fy, fz = (z3.fpBVToFP(v, F32) for v in (x, y, z))
    out = [x + y, x - y, x * y, x & y, x | y, x ^ y, ~x, -x, z3.LShR(x, y & 31),
           x << (y & 31), x >> (y & 31), z3.UDiv(x, y), z3.URem(x, y), x / y, z3.SRem(x, y),
           x % y, z3.Extract(15, 4, x), z3.Concat(x, y), z3.ZeroExt(8, x),
           z3.SignExt(8, x), z3.RotateLeft(x, 5), z3.If(z3.ULT(x, y), x, y),
           z3.If(x < y, x, y), z3.And(z3.UGE(x, y), x != z), z3.Or(x == y, x <= z)]
    for m in MODES:
        out += [z3.fpAdd(m, fx, fy), z3.fpSub(m, fx, fy), z3.fpMul(m, fx, fy),
                z3.fpDiv(m, fx, fy), z3.fpFMA(m, fx, fy, fz), z3.fpRoundToIntegral(m, fx),
                z3.fpToFP(m, fx, F16), z3.fpToFP(m, x, F32), z3.fpToFPUnsigned(m, y, F16)]
    out += [z3.fpSqrt(z3.RNE(), fx), z3.fpRem(fx, fy), z3.fpNeg(fx), z3.fpAbs(fx),
            z3.fpLT(fx, fy), z3.fpLEQ(fx, fy), z3.fpEQ(fx, fy), z3.fpIsNaN(fx),
            z3.fpIsInf(fx), z3.fpIsZero(fx), z3.fpIsSubnormal(fx), z3.fpIsNormal(fx),
            z3.fpIsNegative(fx), fx == fy,
            z3.If(z3.fpIsNaN(fx), z3.BitVecVal(0, 32), z3.fpToIEEEBV(fx))]
    return out


def _as_z3(value, sort):
    if isinstance(sort, z3.FPSortRef):
        return z3.FPVal(value, None, sort) if not math.isnan(value) else z3.fpNaN(sort)
    return z3.BoolVal(value) if sort == z3.BoolSort() else z3.BitVecVal(value, sort.size())


def _interesting(rng: random.Random) -> int:
    floats = [0.0, -0.0, 1.0, -1.5, math.inf, -math.inf, 3.4e38, 1e-45, 2.5, -7.0, 0.5]
    pick = rng.random()
    if pick < 0.3:
        return _bits_of_float(rng.choice(floats), (8, 24))
    if pick < 0.6:
        return _bits_of_float(rng.uniform(-100, 100), (8, 24))
    return rng.getrandbits(32) if pick < 0.85 else rng.randint(0, 40)


def test_simulation_agrees_with_z3_on_every_operator():
    rng = random.Random(23)
    x, y, z = z3.BitVecs("x y z", 32)
    terms = _terms(x, y, z)
    dag = fraig._Dag()
    top = dag.add_roots(terms)
    for _ in range(40):
        given = {dag.index[v.get_id()]: [_interesting(rng)] for v in (x, y, z)}
        subst = [(v, z3.BitVecVal(given[dag.index[v.get_id()]][0], 32)) for v in (x, y, z)]
        values: list[list | None] = []
        for i, node in enumerate(dag.nodes):
            args = [values[k] for k in dag.kids[i]]
            values.append(None if any(a is None for a in args) else
                          evaluate_node(node, args, given.get(i), 1))
        for t, i in zip(terms, top, strict=True):
            got = values[i]
            if got is None:  # out of range for fp.to_sbv/ubv, or a rounding not done here
                continue
            expected = z3.simplify(z3.substitute(t, *subst))
            assert z3.is_true(z3.simplify(expected == _as_z3(got[0], t.sort()))), \
                (t, [hex(v[0]) for v in given.values()], expected, got[0])


def test_simulated_floats_round_trip_through_their_bits():
    for bits in (0, 0x80000000, 0x7f800000, 0x00000001, 0x007fffff, 0x3f800000, 0xff7fffff):
        assert _bits_of_float(_float_of_bits(bits, (8, 24)), (8, 24)) == bits


def test_a_free_function_is_simulated_as_one_function():
    """Congruence: equal arguments give equal values, on both sides of a query."""
    f = z3.Function("opaque", z3.BitVecSort(32), z3.BitVecSort(32))
    x = z3.BitVec("x", 32)
    a, b = f(x + 0), f(x)
    assert evaluate_node(read_node(a, [x + 0]), [[1, 2, 3]], None, 3) == \
        evaluate_node(read_node(b, [x]), [[1, 2, 3]], None, 3)


def test_a_free_values_bits_are_often_special():
    """An open NaN's bits, simulated: NaNs (of many payloads), infinities and ordinary
    values all occur, so that "is a NaN" and "exponent all ones" look different."""
    f = z3.Function("nan.f32", z3.BitVecSort(32), z3.BitVecSort(32))
    x = z3.BitVec("x", 32)
    bits = evaluate_node(read_node(f(x), [x]), [list(range(400))], None, 400)
    kinds = [fp_class(b, FMT32) for b in bits]
    assert {"+inf", "-inf"} & set(kinds) and {"+normal", "-normal"} & set(kinds)
    assert len({b for b, k in zip(bits, kinds, strict=True) if k.endswith("NaN")}) > 20


def _equivalent(a: z3.BoolRef, b: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(a != b)
    return s.check() == z3.unsat


def test_sweeping_merges_what_it_proves():
    x, y = z3.BitVecs("x y", 32)
    lhs, rhs = (x | y) + (x & y), y + x
    query = z3.Distinct(lhs, rhs)
    (out,), stats = sweep([query], [x, y], seconds=60)
    assert stats.proved >= 1
    assert z3.is_false(z3.simplify(out))


def test_a_float_read_from_its_results_bits_is_that_result():
    """to_fp(to_bits(x)) is x (`sem.sorts.as_float`), also where the sweep has rewritten
    the NaN test inside to_bits's open NaN (`rewrite.normal`): the two meet as one term,
    with no proof."""
    a, b = z3.BitVecs("a b", 32)
    x = z3.fpAdd(z3.RNE(), z3.fpBVToFP(a, F32), z3.fpBVToFP(b, F32))
    bits = to_bits(x, free_nan("add.f32", unordered(a, b), FMT32))
    (out,), stats = sweep([z3.fpBVToFP(bits, F32) != x], [a, b], seconds=60)
    assert stats.proved == 0
    assert z3.is_false(z3.simplify(out))


def test_sums_a_compiler_reassociates_merge_with_no_proof():
    """`rewrite.normal`'s sums by constants and xor chains, over the representatives
    (the or and the and merged by structure, their operands in one order)."""
    a, b, d, e = z3.BitVecs("a b d e", 32)
    lhs = (277 * (a + b + (47 - (d | e))) - 13019) ^ (a & d) ^ 5
    rhs = ((e | d) * 4294967019 + (b + a) * 277) ^ 3 ^ ((d & a) ^ 6)
    (out,), stats = sweep([z3.Distinct(lhs, rhs)], [a, b, d, e], seconds=60)
    assert stats.proved == 0
    assert z3.is_false(z3.simplify(out))


def test_a_node_rebuilt_as_an_earlier_one_takes_its_representative(monkeypatch):
    """Structural hashing against every earlier node, not only the simulation class's
    first: `y + x` meets `x + y` though the class began with another spelling that is
    not proved equal (no proofs here), and the equalities above them, whose operands
    are ordered by representative, meet too."""
    monkeypatch.setattr(fraig._Sweep, "_prove_equal", lambda *_: ("unknown", None))
    x, y, z = z3.BitVecs("x y z", 32)
    other, first, second, square = (x | y) + (x & y), x + y, y + x, z * z
    roots = [other == z, z3.Distinct(first == square, square == second)]
    (_, out), stats = sweep(roots, [x, y, z], seconds=60)
    assert z3.is_false(z3.simplify(out))


def test_sweeping_never_merges_values_that_differ_somewhere():
    """Equal on every simulated input, different at one: the proof refutes the guess,
    its counterexample joins the simulation, and the query keeps its models."""
    x, y = z3.BitVecs("x y", 32)
    lhs = x * 3 + y
    rhs = z3.If(x == 0x12345678, z3.BitVecVal(0, 32), x * 3) + y
    query = z3.Distinct(lhs, rhs)
    (out,), stats = sweep([query], [x, y], seconds=60)
    assert _equivalent(out, query)
    s = z3.Solver()
    s.add(out)
    assert s.check() == z3.sat
    assert stats.refuted >= 1


def test_a_node_undecided_against_its_class_still_meets_a_later_equal(monkeypatch):
    """`i` differs from its class's first member `r` at one input, and that proof is
    undecided (stubbed); `j` is equal to `i`. Refuted against `r`, `j` is asked
    against `i`, a member of the class though never merged, and merges with it."""
    x, y, z = z3.BitVecs("x y z", 32)
    special = x == 0x12345678
    r = x * 3
    i = z3.If(special, z3.BitVecVal(0, 32), x * 3)
    j = z3.If(special, x ^ 0x12345678, x * 3)
    made = _sweeper(monkeypatch)
    prove = fraig._Sweep._prove_equal

    def undecided_first(self, a, b, seconds):
        if self.dag.terms[a].eq(i) and self.dag.terms[b].eq(r):
            return "unknown", None
        return prove(self, a, b, seconds)
    monkeypatch.setattr(fraig._Sweep, "_prove_equal", undecided_first)
    # `special` is false on every simulated input: asked against false, it would be
    # refuted, and its model would set `i` apart from `r` (the case is the undecided one)
    monkeypatch.setattr(fraig._Sweep, "_proved_constant", lambda *_: False)
    (_, out), stats = sweep([r != z, z3.Distinct(i + y, j + y)], [x, y, z], seconds=60)
    assert z3.is_false(z3.simplify(out)), out
    assert stats.undecided == 1 and stats.refuted == 1
    w = made[0]
    assert w.rep[w.dag.index[j.get_id()]] == w.dag.index[i.get_id()]


def test_a_nan_test_of_a_chain_meets_its_inputs_tests_by_classes(monkeypatch):
    """`isNaN(z)`, z a min of a product of mins, against "a and b are NaNs": true, and
    at a thousand operations past what bit-blasting decides in a second. The classes
    (`ieee_classes.py`) tell, with no solver; "a or b" they keep apart."""
    enc = Program.parse("min.f32 x, a, b; mul.f32 y, x, x; min.f32 z, y, x;").encode()
    a, b, z = enc.inputs["a"], enc.inputs["b"], enc.outputs["z"]
    nan = [z3.fpIsNaN(z3.fpBVToFP(v, z3.Float32())) for v in (a, b, z)]
    both, either = z3.And(nan[0], nan[1]), z3.Or(nan[0], nan[1])
    made = _sweeper(monkeypatch)
    (out, _), _ = sweep([z3.Xor(nan[2], both), either], [a, b], seconds=60)
    assert z3.is_false(z3.simplify(out)), out
    w = made[0]
    i, r, e = (w.dag.index[t.get_id()] for t in (nan[2], both, either))
    assert w._classes_meet(i, r) and not w._classes_meet(i, e)


def _asked(monkeypatch) -> list[tuple[fraig._Sweep, int, int]]:
    """The candidate pairs sweeping asks the solver about (all proved unknown, and
    so is every node asked against a constant)."""
    asked = []

    def record(self, i, r, seconds):
        asked.append((self, i, r))
        return "unknown", None
    monkeypatch.setattr(fraig._Sweep, "_prove_equal", record)
    monkeypatch.setattr(fraig._Sweep, "_proved_constant", lambda *_: False)
    return asked


def test_a_pair_above_an_undecided_pair_is_not_asked(monkeypatch):
    """`i + y` against `r + y` holds the question `i` against `r` and more: with that
    one undecided, it is left undecided unasked (a chain of them cost a second each
    at a thousand float operations)."""
    x, y = z3.BitVecs("x y", 32)
    r = x * 3
    i = z3.If(x == 0x12345678, z3.BitVecVal(0, 32), x * 3)
    asked = _asked(monkeypatch)
    (out,), stats = sweep([z3.Distinct(i + y, r + y)], [x, y], seconds=60)
    pairs = [(w.dag.terms[a], w.dag.terms[b]) for w, a, b in asked]
    assert any(a.eq(i) and b.eq(r) for a, b in pairs)
    assert not any(t.eq(i + y) for pair in pairs for t in pair), pairs
    assert stats.undecided >= 2


def test_a_relation_meets_its_spelling_over_a_merged_nan_test(monkeypatch):
    """-O0's `!(A or isNaN(y) or x <= y)` against opt's `y < x`, A proved to be
    `isNaN(x)` (x a min: `isNaN(a) and isNaN(b)`). With the inputs' truth tables too
    large (stubbed: at a thousand operations they are) and every solver query
    unknown, they meet by their shallow tables over the merged NaN test."""
    enc = Program.parse("min.f32 x, a, b; max.f32 y, c, e;").encode()
    a, b, x, y = (z3.fpBVToFP(enc.outputs.get(r, enc.inputs.get(r)), z3.Float32())
                  for r in "abxy")
    alias = z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b))
    o0 = z3.Not(z3.Or(z3.Or(alias, z3.fpIsNaN(y)), z3.fpLEQ(x, y)))
    monkeypatch.setattr(fraig.Tables, "table", lambda self, t: None)
    monkeypatch.setattr(fraig, "_check", lambda *args: ("unknown", None))
    inputs = [enc.inputs[r] for r in "abce"]
    made = _sweeper(monkeypatch)
    # alias first, so that the NaN test merges into it (as at a thousand operations)
    (_, first, _, _), _ = sweep([alias, z3.Xor(z3.fpIsNaN(x), alias), o0, z3.fpLT(y, x)],
                                inputs, seconds=60)
    assert z3.is_false(first)
    w = made[0]
    assert w.rep[w.dag.index[z3.fpLT(y, x).get_id()]] == w.dag.index[o0.get_id()]


def _sweeper(monkeypatch) -> list[fraig._Sweep]:
    """The sweeps made, for a look at their tables after."""
    made = []
    init = fraig._Sweep.__init__

    def record(self, *args):
        init(self, *args)
        made.append(self)
    monkeypatch.setattr(fraig._Sweep, "__init__", record)
    return made


def test_a_phi_of_one_operation_meets_the_select_of_its_operands(monkeypatch):
    """-O0's `ite(c, g(p, x), g(p, y))` and opt's `g(p, ite(c, x, y))` merge with no
    solver query (`_cases_meet`): each arm is the other term with `c` read as true,
    then as false. Not so with the select's arms swapped."""
    monkeypatch.setattr(fraig, "_check", lambda *_: ("unknown", None))
    made = _sweeper(monkeypatch)
    p, x, y = z3.BitVecs("p x y", 32)
    c = z3.ULT(x * y, p)

    def g(a, b):
        return (a * b) ^ (a + 3 * b)
    phi, select, swapped = (z3.If(c, g(p, x), g(p, y)), g(p, z3.If(c, x, y)),
                            g(p, z3.If(c, y, x)))
    (out, _), stats = sweep([phi != select, phi != swapped], [p, x, y], seconds=60)
    assert z3.is_false(z3.simplify(out)) and stats.proved >= 1
    w = made[0]
    i, k = (w.dag.index[t.get_id()] for t in (phi, swapped))
    assert not w._cases_meet(i, k) and not w._cases_meet(k, i)


def test_a_condition_one_side_alone_reads_is_asked_only_across(monkeypatch):
    """Two spellings of "x is even", and two of x + y, in the first function only: with
    the two functions' outputs given, the conditions are never asked against each
    other, only against the other function's; the sums are (bit-vectors). Without the
    outputs, both pairs are asked."""
    x, y = z3.BitVecs("x y", 32)
    evens = [(x & 1) == 0, z3.Extract(0, 0, x) == 0]
    lhs = z3.If(z3.And(evens), ((x | y) + (x & y)) * ((x ^ y) + 2 * (x & y)), y)
    rhs = z3.If(z3.URem(x, 2) == 0, (y + x) * (y + x) + 1, y)
    for sides in (((lhs,), (rhs,)), None):
        asked = _asked(monkeypatch)
        sweep([z3.Distinct(lhs, rhs)], [x, y], seconds=60, sides=sides)
        pairs = [(w.dag.terms[i], w.dag.terms[r]) for w, i, r in asked]
        both_evens = [p for p in pairs if all(any(t.eq(e) for e in evens) for t in p)]
        one_sided = [w.dag.nodes[i].sort.kind for w, i, r in asked
                     if w.side and w.side[i] == w.side[r] in (1, 2)]
        assert bool(both_evens) == (sides is None)
        assert ("bv" in one_sided) == (sides is not None) and "bool" not in one_sided


def test_conditions_proved_equal_are_kept_as_facts_that_hold(monkeypatch):
    """A condition merged by a proof is kept as a fact for later queries: each holds
    for every input (so that assuming it loses no counterexample)."""
    p, q = z3.BitVecs("p q", 32)
    a, b = z3.fpBVToFP(p, F32), z3.fpBVToFP(q, F32)
    zero = z3.FPVal(0.0, F32)
    lhs = z3.If(z3.fpIsNaN(z3.fpMul(z3.RNE(), a, zero)), b, a)
    rhs = z3.If(z3.Or(z3.fpIsNaN(a), z3.fpIsInf(a)), b, a)
    kept = []
    keep = fraig._Sweep._keep_fact

    def record(self, i, r):
        keep(self, i, r)
        kept.extend(self.facts)
    monkeypatch.setattr(fraig._Sweep, "_keep_fact", record)
    sweep([lhs != rhs], [p, q], seconds=60, sides=((lhs,), (rhs,)))
    assert kept
    for fact, _ in kept:
        assert _equivalent(fact, z3.BoolVal(True)), fact


def _no_python_printer(monkeypatch) -> None:
    """Sweeping's proofs of float bits printed by z3 (`fraig._Sweep._standard`), not
    by `smt2.script`, which walks the terms in Python: where bitwuzla is installed."""
    if fraig._fast_solver() is None:
        return

    def walked(*_):
        raise AssertionError("a candidate went through smt2.script")
    monkeypatch.setattr(portfolio, "smt2", walked)


def test_float_bits_are_proved_equal_in_standard_form(monkeypatch):
    _no_python_printer(monkeypatch)
    a = z3.BitVec("a", 32)
    x = z3.fpBVToFP(a, F32)
    bits = to_bits(z3.fpMul(z3.RNE(), x, z3.FPVal(2.0, F32)), free_nan("op", a, FMT32))
    (out,), stats = sweep([z3.Distinct(bits, (z3.LShR(bits, 1) << 1) | (bits & 1))], [a],
                          seconds=60)
    assert stats.proved >= 1
    assert z3.is_false(z3.simplify(out))


def test_float_bits_that_differ_at_one_input_are_kept_apart(monkeypatch):
    """As in `test_sweeping_never_merges_values_that_differ_somewhere`, through the
    standard form of `fp.to_ieee_bv`; the counterexamples kept out of the simulation,
    so that the bits, and not only the floats, are guessed equal and refuted."""
    _no_python_printer(monkeypatch)
    monkeypatch.setattr(fraig._Sweep, "_add_vector", lambda self, vector: None)
    a = z3.BitVec("a", 32)
    x = z3.fpBVToFP(a, F32)
    one, two = (z3.fpAdd(z3.RNE(), x, z3.FPVal(c, F32)) for c in (1.0, 2.0))
    nan = free_nan("op", a, FMT32)
    query = z3.Distinct(to_bits(one, nan), to_bits(z3.If(a == 0x40A00001, two, one), nan))
    (out,), stats = sweep([query], [a], seconds=60)
    assert _equivalent(out, query)
    s = z3.Solver()
    s.add(out)
    assert s.check() == z3.sat
    assert stats.refuted >= 2


def test_swept_terms_are_the_original_terms():
    rng = random.Random(5)
    x, y, z = z3.BitVecs("x y z", 32)
    terms = [t for t in _terms(x, y, z) if z3.is_bv(t) and t.size() == 32][:20]
    pairs = [z3.Distinct(rng.choice(terms), rng.choice(terms)) for _ in range(6)]
    out, _ = sweep(pairs, [x, y, z], seconds=60)
    for before, after in zip(pairs, out, strict=True):
        assert _equivalent(before, after)


def _pair(name: str, rhs: str = "O2"):
    return (read_function_file(str(SCALE / f"{name}.O0.ptx"), "f"),
            read_function_file(str(SCALE / f"{name}.{rhs}.ptx"), "f"))


@pytest.mark.parametrize("name", ["int-40", "intnomul-20"])
def test_llc_O0_and_opt_O2_of_generated_ir_are_equivalent(name):
    """`scripts/scale_functions.py`: llc-14 -O0 against opt-14 -O2 | llc-14 -O2."""
    assert check_function_equivalence(*_pair(name), timeout=300).verdict == "equivalent"


def test_the_whole_query_gets_the_time_sweeping_left(monkeypatch):
    """--timeout bounds encoding, sweeping and the last query together (a clock that
    moves only while sweeping)."""
    clock = [1000.0]
    _clocks(monkeypatch, clock)
    swept, limits = [], []

    def sweeping(roots, inputs, budget, sides):
        swept.append(budget.left())
        clock[0] += 50
        return roots, fraig.SweepStats()
    monkeypatch.setattr(functions, "sweep_if_large", sweeping)
    solver = functions._solver
    monkeypatch.setattr(functions, "_solver", lambda t: limits.append(t) or solver(t))
    verdict = functions.check_function_equivalence(*_pair("intnomul-20"), timeout=60)
    assert verdict.verdict == "equivalent"
    assert swept == [60] and limits[0] == 10


def test_generated_float_functions_have_no_min_max_that_opt_folds():
    """opt folds m(x, x) and m(m(x, y), x), also through a select of one value or a
    common subexpression, to a value with another NaN than PTX's min/max give: the
    generator never writes one (`scripts/scale_functions.py`)."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "scripts"))
    try:
        from scale_functions import generate
    finally:
        sys.path.pop(0)
    calls = 0
    for seed in range(30):
        same: dict[str, str] = {}  # value -> the one it is (a select of one value twice)
        made: dict[str, tuple[str, set[str]]] = {}
        for line in generate(60, "float", seed).splitlines():
            if m := re.match(r"\s*(%\w+) = select i1 %\w+, float (%\w+), float (%\w+)", line):
                if same.get(m[2], m[2]) == same.get(m[3], m[3]):
                    same[m[1]] = same.get(m[2], m[2])
            elif m := re.match(r"\s*(%\w+) = call float @llvm\.(\w+)\.f32\(float (%\w+), "
                               r"float (%\w+)\)", line):
                x, y = same.get(m[3], m[3]), same.get(m[4], m[4])
                assert x != y, line
                for u, v in ((x, y), (y, x)):
                    assert not (u in made and made[u][0] == m[2] and v in made[u][1]), line
                made[m[1]] = (m[2], {x, y})
                calls += 1
    assert calls > 100


def test_an_add_made_sub_in_the_optimised_function_differs():
    a = read_function_file(str(SCALE / "int-40.O0.ptx"), "f")
    b = read_function_file(str(SCALE / "int-40.mutant.ptx"), "f")
    verdict = check_function_equivalence(a, b, timeout=300)
    assert verdict.verdict == "different"
    assert verdict.counterexample.differ == ("func_retval0",)


def test_a_difference_simulation_shows_is_a_model_at_its_inputs(monkeypatch):
    """The mutant's outputs differ on simulated inputs: the sweep is skipped, and the
    model comes from the query at those inputs (`functions._at_inputs`), never from
    the whole query; the evaluator replays it as before."""
    a = read_function_file(str(SCALE / "int-40.O0.ptx"), "f")
    b = read_function_file(str(SCALE / "int-40.mutant.ptx"), "f")

    def whole(*_args, **_kwargs):
        raise AssertionError("the whole query was asked")
    monkeypatch.setattr(functions, "check_with", whole)
    monkeypatch.setattr(functions.case_split, "check", whole)
    monkeypatch.setattr(fraig._Sweep, "run", whole)
    verdict = check_function_equivalence(a, b, timeout=300)
    assert verdict.verdict == "different"
    assert verdict.counterexample.differ == ("func_retval0",)


def test_a_float_pairs_sides_are_the_floats_the_query_compares(monkeypatch):
    """Float-typed outputs are compared as floats (`observe.observed`: an IEEE result
    read as that result), so the query need not hold the returned bits: the sides are
    the terms it compares. Given the bits, every node was on neither side, and each
    function's own conditions and floats were asked against each other."""
    a = read_function_file(str(SCALE / "float-16.O0.ptx"), "f")
    b = read_function_file(str(SCALE / "float-16.O2.ptx"), "f")
    found = []

    class Read(Exception):
        pass

    def spy(dag, sides):
        found.append(set(fraig._sides.__wrapped__(dag, sides)))
        raise Read  # the sides are all this test asks for
    spy.__wrapped__ = fraig._sides
    monkeypatch.setattr(fraig, "_sides", spy)
    with pytest.raises(Read):
        check_function_equivalence(a, b, timeout=60)
    assert {1, 2} <= found[0]


def test_the_witness_is_a_simulated_vector_where_every_root_holds():
    """`SweepStats.witness`: inputs on which z3 itself finds every root true; none
    where no simulated vector makes them all true."""
    x, y = z3.BitVecs("x y", 32)
    p = z3.Bool("p")
    roots = [z3.If(p, x + y, x - y) != x * 3, z3.ULT(y, x)]
    _, stats = sweep(roots, [x, y, p], seconds=60, until_witness=True)
    assert {str(c) for c, _ in stats.witness} == {"x", "y", "p"}
    for r in roots:
        assert z3.is_true(z3.simplify(z3.substitute(r, *stats.witness)))
    _, stats = sweep([x * 3 != x + x + x, z3.ULT(y, x)], [x, y], seconds=60,
                     until_witness=True)
    assert stats.witness == []


def test_inputs_where_the_sides_agree_give_no_model():
    """`_at_inputs` with inputs the simulation got wrong (a value SMT-LIB leaves open,
    read one way): no model, and the query is then asked whole."""
    x = z3.BitVec("x", 8)
    solver = z3.Solver()
    solver.add(x + 1 == 5)
    assert functions._at_inputs(solver, [(x, z3.BitVecVal(3, 8))], None) is None
    found = functions._at_inputs(solver, [(x, z3.BitVecVal(4, 8))], None)
    assert found.model.eval(x).as_long() == 4


def _overflow_nan_pair(x: z3.BitVecRef, y: z3.BitVecRef) -> z3.BoolRef:
    """"The two differ": an ordered `s < 1` against its unordered twin, where s is
    NaN only as (x + x) - (y + y) of two finite values that both overflow to one
    infinity; an infinite or NaN input makes both sides NaN (x - x), so only finite
    operands near overflow show the difference."""
    fx, fy = (z3.fpBVToFP(v, F32) for v in (x, y))
    rne, one, two = z3.RNE(), z3.FPVal(1.0, F32), z3.FPVal(2.0, F32)
    s = z3.fpSub(rne, z3.fpAdd(rne, fx, fx), z3.fpAdd(rne, fy, fy))
    finite = z3.fpAdd(rne, z3.fpSub(rne, fx, fx), z3.fpSub(rne, fy, fy))
    ordered = z3.fpAdd(rne, z3.If(z3.fpLT(s, one), one, two), finite)
    unordered_ = z3.fpAdd(rne, z3.If(z3.Or(z3.fpIsNaN(s), z3.fpLT(s, one)), one, two),
                          finite)
    return z3.Not(ordered == unordered_)


def test_a_difference_only_an_inner_nan_shows_is_found_at_edge_vectors(monkeypatch):
    """Two finite inputs that overflow to one infinity, subtracted: the NaN that tells
    an ordered compare from an unordered one arises inside. The simulation's vectors
    miss it; the edge vectors (`simulate.edge_vectors`) find it, and z3 agrees that
    the query holds at the witness."""
    x, y = z3.BitVecs("x y", 32)
    root = _overflow_nan_pair(x, y)
    dag = fraig._Dag()
    top = dag.add_roots([root])
    sweeper = fraig._Sweep(dag, [x, y], budget.Budget(None), 1.0)
    sweeper.read_at = [x, y]
    assert sweeper.witness(top) == []
    monkeypatch.setattr(fraig, "EDGE_VECTORS", 0)
    assert sweeper.edge_witness(top) == []
    monkeypatch.setattr(fraig, "EDGE_VECTORS", 2048)
    witness = sweeper.edge_witness(top)
    assert {str(c) for c, _ in witness} == {"x", "y"}
    assert z3.is_true(z3.simplify(z3.substitute(root, *witness)))


def test_edge_vectors_are_infinities_near_overflow_and_few_nans():
    """Read back by numpy: each input's values hold both infinities, the largest
    finite float and zeros of both signs, and a NaN only now and then (a NaN input
    reaches both sides' outputs alike)."""
    import numpy as np

    from ptxsmt.smt.sweeping.simulate import Sort, edge_vectors
    for width, dtype in ((32, np.float32), (16, np.float16), (64, np.float64)):
        for column in edge_vectors([Sort("bv", width)] * 2, 3000, seed=7):
            floats = np.array(column, dtype=f"u{width // 8}").view(dtype)
            assert np.isposinf(floats).any() and np.isneginf(floats).any()
            assert (floats == np.finfo(dtype).max).any() and (floats == -np.finfo(dtype).max).any()
            assert (np.signbit(floats[floats == 0])).any() and (floats == 0).sum() > 30
            assert 0 < np.isnan(floats).mean() < 0.05


def test_an_open_nan_is_the_canonical_one_when_looking_for_a_difference():
    """`open_zero`: an open NaN (`sem.sorts.free_nan`) is the canonical NaN, so that
    the bits the simulation would choose for it make no witness; hashed, it has many."""
    from ptxsmt.isa.types import F16 as FMT16
    from ptxsmt.sem.sorts import canonical_nan
    x = z3.BitVec("x", 16)
    nan = free_nan("add.rn.f16 NaN", x, FMT16)
    node = read_node(nan.arg(1), [x])
    ones = evaluate_node(node, [list(range(64))], None, 64, open_zero=True)
    assert ones == [0] * 64
    root = nan != z3.BitVecVal(canonical_nan(FMT16), 16)
    _, stats = sweep([root], [x], seconds=0, until_witness=True)
    assert stats.witness != []  # the hashed simulation: a NaN of another payload
    dag = fraig._Dag()
    top = dag.add_roots([root])
    sweeper = fraig._Sweep(dag, [x], budget.Budget(None), 1.0)
    sweeper.read_at = [x]
    assert sweeper.edge_witness(top) == []


def test_a_refuted_candidates_model_where_the_outputs_differ_ends_the_sweep():
    """x == K is false on every simulated input; asked whether it is constant, the
    solver's model is x = K, where the roots hold too: that model is the witness, and
    the nodes above are not asked."""
    x = z3.BitVec("x", 32)
    k = 0x1234_5678
    root = x + z3.If(x == k, z3.BitVecVal(1, 32), z3.BitVecVal(0, 32)) != x
    _, stats = sweep([root], [x], seconds=60, until_witness=True, query_seconds=30)
    assert [(str(c), v.as_long()) for c, v in stats.witness] == [("x", k)]


def test_a_witness_with_no_model_at_its_inputs_lets_the_sweep_run_whole(monkeypatch):
    """A witness where the query has no model (the simulation's choice of an open
    value; here one made up for two equal functions) cut the sweep short: it is then
    run again, looking for none, and the verdict rests on the swept query."""
    calls = []

    def sweeping(roots, inputs, seconds, sides, **witness):
        calls.append(witness)
        stats = fraig.SweepStats()
        if witness.get("until_witness", True):
            stats.witness = [(z3.BitVec("f_param_0", 32), z3.BitVecVal(7, 32))]
        return roots, stats
    monkeypatch.setattr(functions, "sweep_if_large", sweeping)
    verdict = functions.check_function_equivalence(*_pair("intnomul-20"), timeout=60)
    assert verdict.verdict == "equivalent"
    assert calls == [{}, {"until_witness": False}]


def test_past_its_deadline_the_sweep_keeps_what_it_merged(monkeypatch):
    """The clock runs out at the first merge: the query comes back with the nodes
    walked so far over their representatives, the rest (never walked) as they were
    above them; with no time at all, the original itself."""
    x, y, z = z3.BitVecs("x y z", 8)
    lhs, rhs = (x | y) + (x & y), y + x
    query = z3.Distinct(lhs * z + 7, rhs * z + 7)
    (out,), _ = sweep([query], [x, y, z], seconds=0)
    assert out.eq(query)
    now, walked = [0.0], []
    _clocks(monkeypatch, now)
    ask = fraig._Sweep._sweep

    def merge_then_stop(self, i, stats):
        ask(self, i, stats)
        walked.append(i)
        if self.rep[i] != i:
            now[0] += 100.0
    monkeypatch.setattr(fraig._Sweep, "_sweep", merge_then_stop)
    (out,), stats = sweep([query], [x, y, z], seconds=50)
    assert stats.proved == 1 and max(walked) < stats.nodes - 1
    assert z3.is_false(z3.simplify(out)) and _equivalent(out, query)


def test_a_sweep_done_with_time_left_sweeps_again_with_longer_proofs(monkeypatch):
    """`(x & y) + (x | y)` is `x + y`, but (here) no proof ends within a candidate's
    second: the sweep walks every node and leaves the pair, and all above it, apart.
    With its share not spent it sweeps its result again, each proof AGAIN times longer
    (`_again`): the pair is proved, and so is each pair above it, and the query is
    decided. Every merge still rests on a solver's unsat."""
    x, y = z3.BitVecs("x y", 8)
    sides = [(x & y) + (x | y), x + y]
    tops = []
    for v in sides:
        for k in range(3):
            v = v * 3 + (v >> (k + 1))
        tops.append(v)
    real, limits = fraig._check, []

    def slow(term, seconds, names, most=None):
        limits.append(seconds)
        return real(term, seconds, names, most) if seconds >= fraig.QUERY_SECONDS * fraig.AGAIN \
            else ("unknown", None)
    monkeypatch.setattr(fraig, "_check", slow)
    roots, stats = sweep([z3.Distinct(*tops)], [x, y], 600.0, sides=([tops[0]], [tops[1]]))
    assert stats.done and stats.undecided and max(limits) == fraig.QUERY_SECONDS
    assert not z3.is_false(z3.simplify(roots[0]))
    roots, stats = fraig._again(roots, [x, y], stats, budget.Budget(600.0))
    assert max(limits) == fraig.QUERY_SECONDS * fraig.AGAIN
    assert stats.done and stats.undecided == 0 and stats.proved >= 1
    assert z3.is_false(z3.simplify(roots[0]))
    # the outputs are one term: pairs left undecided below them are not asked again
    monkeypatch.setattr(fraig, "sweep", lambda *_args, **_kwargs: pytest.fail("swept again"))
    stats.undecided = 1
    fraig._again(roots, [x, y], stats, budget.Budget(600.0))


def test_reading_the_dag_counts_against_the_sweeps_share(monkeypatch):
    """The sweep's share of the limit counts from before its DAG is read (tens of
    seconds for a function of a thousand float operations), not after."""
    now, given = [0.0], []
    _clocks(monkeypatch, now)
    read = fraig._Dag.add_roots

    def slow(dag, roots):
        now[0] += 10.0
        return read(dag, roots)

    monkeypatch.setattr(fraig._Dag, "add_roots", slow)
    monkeypatch.setattr(fraig, "sweep", lambda roots, inputs, budget, **_: given.append(
        budget.left()) or (roots, fraig.SweepStats()))
    x = z3.BitVec("x", 32)
    big = z3.Sum([x * k for k in range(1, fraig.SMALL)])
    fraig.sweep_if_large([big != big + 1], [x], 40.0)
    assert given == [fraig.SWEEP_SHARE * 40.0 - 10.0]


@pytest.mark.parametrize("product, swept", [("x * y", True), ("x * 3", False),
                                             ("UDiv(x, y)", True), ("x + y", False)])
def test_a_small_query_is_swept_only_where_it_multiplies_or_divides_two_values(
        monkeypatch, product, swept):
    """Under SMALL nodes a query goes to the solver whole, unless bit-blasting it means a
    multiplier or divider of two values: there sweeping merges the products it shares."""
    x, y = z3.BitVecs("x y", 32)
    term = eval(product, {"x": x, "y": y, "UDiv": z3.UDiv})
    called = []
    monkeypatch.setattr(fraig, "sweep", lambda roots, inputs, budget, **_: called.append(
        roots) or (roots, fraig.SweepStats()))
    fraig.sweep_if_large([term != term + 1], [x, y], 10.0)
    assert bool(called) == swept


@pytest.mark.parametrize("apart", [False, True])
def test_a_pair_whose_terms_lie_apart_gets_an_eighth_of_the_time(monkeypatch, apart):
    """`i` is `x * 3` but at one value of x, where it is 0 or a chain of eighty
    operations on y that `r` does not hold: the whole query on the pair gets the
    full limit where they differ in a few nodes, an eighth of it where they differ in
    more than APART (the proofs found whole were of near pairs)."""
    x, y = z3.BitVecs("x y", 32)
    junk = y
    for k in range(80):
        junk = junk + (junk >> (k % 7 + 1))
    r = x * 3
    i = z3.If(x == 0x12345678, junk if apart else z3.BitVecVal(0, 32), x * 3)
    limits = []
    monkeypatch.setattr(fraig, "_check", lambda term, seconds, names, most=None: (
        limits.append(seconds), ("unknown", None))[1])
    sweep([z3.Distinct(i, r)], [x, y], seconds=60)
    assert limits and max(limits) == pytest.approx(
        fraig.QUERY_SECONDS / 8 if apart else fraig.QUERY_SECONDS)


def test_a_node_is_asked_first_against_the_member_most_like_it(monkeypatch):
    """Two members simulate as `i` does: `x * 3`, met first, and an `If` on the same
    condition as `i`'s over `x * 3`. `i` is asked first against the member of its own
    operator sharing its operands (with every answer unknown, against it only)."""
    x, y = z3.BitVecs("x y", 32)
    m = x * 3
    special = x == 0x12345678
    other, i = z3.If(special, z3.BitVecVal(1, 32), m), z3.If(special, z3.BitVecVal(0, 32), m)
    asked = _asked(monkeypatch)
    sweep([z3.Distinct(m, y), z3.Distinct(other, y), z3.Distinct(i, y)], [x, y], seconds=60)
    first = next((w.dag.terms[b] for w, a, b in asked if w.dag.terms[a].eq(i)), None)
    assert first is not None and first.eq(other), first


@pytest.mark.parametrize("negated", [False, True])
def test_a_phi_meets_its_select_where_a_merge_took_the_condition_out(monkeypatch, negated):
    """-O0's `ite(c, g(x), g(y))` against opt's `g(select c, x, y)`, where g tests
    `a == 0 and v == 0`. A zero `a` makes c false and y zero: opt's test is proved
    equal to `a == 0`, and that merge takes `c` out of opt's term, though -O0's test of
    x is not `a == 0`. Read as the function built it (`_given_as_built`), opt's value
    still meets each arm of -O0's phi; so too where opt selects on c's negation,
    spelled otherwise, with the arms swapped."""
    a, p, q, s, k = z3.BitVecs("a p q s k", 32)
    x, y, c = p + a, a & q, z3.And(z3.Not(a == 0), z3.ULT(s * k, p))

    def g(v):
        return z3.If(z3.And(a == 0, v == 0), k, (v + 1) * s)
    select = z3.If(z3.Or(a == 0, z3.UGE(s * k, p)), y, x) if negated else z3.If(c, x, y)
    o0, o2 = z3.If(c, g(x), g(y)), g(select)
    check = fraig._check

    def tests_only(query, *args):  # the solver decides the tests, not the values
        return check(query, *args) if z3.substitute(query, (k, s)).eq(query) \
            else ("unknown", None)
    monkeypatch.setattr(fraig, "_check", tests_only)
    (out,), _ = sweep([o0 != o2], [a, p, q, s, k], seconds=60)
    assert z3.is_false(z3.simplify(out))
    monkeypatch.setattr(fraig._Sweep, "_given_as_built", lambda *_: None)
    (out,), _ = sweep([o0 != o2], [a, p, q, s, k], seconds=60)
    assert not z3.is_false(z3.simplify(out))


def test_a_select_meets_its_phi_though_a_member_more_like_it_is_undecided(monkeypatch):
    """opt's `g(p, select c, x, y)` has the operator of a decoy that simulates alike
    (its select's condition differs from c on two inputs only) and -O0's phi does not:
    the decoy is asked first and its query ends undecided, which ends the asking. The
    phi is read against first (`_meets_a_phi`), with no query."""
    monkeypatch.setattr(fraig, "_check", lambda *_: ("unknown", None))
    made = _sweeper(monkeypatch)
    p, x, y = z3.BitVecs("p x y", 32)
    c = z3.ULT(x * y, p)
    rare = z3.Or(c, z3.And(x == 0x9E3779B9, y == 0x7F4A7C15))

    def g(a, b):
        return (a * b) ^ (a + 3 * b)
    phi, select, decoy = z3.If(c, g(p, x), g(p, y)), \
        g(p, z3.If(c, x, y)), g(p, z3.If(rare, x, y))
    (_, out), _ = sweep([z3.Distinct(decoy, phi), phi != select], [p, x, y], seconds=60)
    assert z3.is_false(z3.simplify(out))
    w = made[0]
    assert w.classes[w._key(w.dag.index[phi.get_id()])][0] == w.dag.index[decoy.get_id()]


def test_a_guard_that_always_holds_is_proved_true_and_folds(monkeypatch):
    """opt's `ite((b & 31) <u 32, v, 32)` against -O0's v: the guard is true on every
    simulated input and no constant leads its class; asked against true
    (`_proved_constant`), it folds the select to v, which meets -O0's by structure. The
    solver answers only queries that do not read `a` (stubbed), so the select is never
    proved equal to v whole."""
    a, b = z3.BitVecs("a b", 32)
    shift = b & 31
    value = ((a << shift) ^ (a * 7)) & 0xFFFF
    check = fraig._check

    def guards_only(query, *args):
        return check(query, *args) if z3.substitute(query, (a, b)).eq(query) \
            else ("unknown", None)
    monkeypatch.setattr(fraig, "_check", guards_only)
    o2 = z3.If(z3.ULT(shift, 32), value, z3.BitVecVal(32, 32))
    (out,), stats = sweep([value != o2], [a, b], seconds=60)
    assert z3.is_false(z3.simplify(out)) and stats.proved >= 1
    # a guard that fails on one input (first of its class) is refuted, not folded
    rare = z3.If(b != 0x9E3779B9, value, z3.BitVecVal(32, 32))
    (out,), stats = sweep([value != rare], [a, b], seconds=60)
    assert not z3.is_false(z3.simplify(out)) and stats.refuted >= 1


def _clocks(monkeypatch, now: list[float]) -> None:
    """Every budget reads `now[0]`, CPU and wall alike (`budget.py`)."""
    monkeypatch.setattr(budget, "_clocks", budget.Clocks(lambda thread: now[0], lambda: now[0]))


def test_a_walk_behind_its_pace_shortens_the_proofs_to_reach_the_outputs(monkeypatch):
    """Forty pairs that simulate alike, each `x * c` against the same but 0 at one
    input, every proof undecided at its limit (stubbed: the clock runs the limit on,
    and its work, as counted, is the limit: `budget.Work`).
    At a second each they would spend a 20 s budget half-way up; paced (PACE), the
    first gets its second, the limits shrink as the walk falls behind, down to the
    FLOOR, the walk reaches the outputs, and it has spent at most PACE of the budget
    and the FLOOR of the proofs past it."""
    x, y = z3.BitVecs("x y", 32)
    pairs = [(z3.If(x == 0x12345678 + k, z3.BitVecVal(0, 32), x * (2 * k + 3)), x * (2 * k + 3))
             for k in range(40)]
    now, limits = [0.0], []
    _clocks(monkeypatch, now)

    def undecided(self, i, r, seconds):
        limits.append(seconds)
        now[0] += seconds
        work = budget.Work()
        work.counted("bitwuzla", round(seconds / budget.SECONDS_PER_UNIT["bitwuzla"]))
        budget.charge(work)
        return "unknown", None
    monkeypatch.setattr(fraig._Sweep, "_prove_equal", undecided)
    monkeypatch.setattr(fraig._Sweep, "_proved_constant", lambda *_: False)
    lhs, rhs = z3.Sum([i for i, _ in pairs]) + y, z3.Sum([r for _, r in pairs]) + y
    _, stats = sweep([lhs != rhs], [x, y], 20.0, sides=([lhs], [rhs]))
    assert stats.done and limits[0] == fraig.QUERY_SECONDS
    assert min(limits) == fraig.FLOOR * fraig.QUERY_SECONDS / fraig.CONSTANT_SHARE
    assert now[0] <= fraig.PACE * 20.0 + len(limits) * fraig.FLOOR * fraig.QUERY_SECONDS


@pytest.mark.parametrize("query_seconds", [1.0, 0.05])
def test_a_query_too_hard_for_its_limit_is_not_asked(monkeypatch, query_seconds):
    """`f` is a chain of 30 float additions, `i` the same but 0 at one input: the whole
    query holds some 60 float operations, which bitwuzla turns into clauses before its
    limit can stop it (HARD_PER_SECOND): asked at a second, not at 0.05 s (undecided,
    unasked)."""
    x, y = z3.BitVecs("x y", 32)
    f = z3.fpBVToFP(x, z3.Float32())
    for k in range(30):
        f = z3.fpAdd(z3.RNE(), f, z3.fpBVToFP(y + k, z3.Float32()))
    i = z3.If(x == 0x12345678, z3.FPVal(0.0, z3.Float32()), f)
    whole = []
    monkeypatch.setattr(fraig, "_check", lambda term, seconds, names, most=None: (
        whole.append(seconds) if names else None, ("unknown", None))[1])
    monkeypatch.setattr(fraig._Sweep, "_proved_constant", lambda *_: False)
    _, stats = sweep([z3.Distinct(i, f)], [x, y], 60, query_seconds, sides=([i], [f]))
    assert stats.undecided >= 1
    assert bool(whole) == (query_seconds == 1.0), whole


def test_a_sweep_again_paces_its_walk_from_its_own_start(monkeypatch):
    """A sweep again (`_again`) gets a budget of its own, the share left: its walk's pace
    (PACE) counts from its start, not from the first pass's, whose time is spent."""
    share, given = budget.Budget(100.0), []
    monkeypatch.setattr(fraig, "sweep", lambda roots, inputs, seconds, *_a, **_k: (
        given.append(seconds), (roots, fraig.SweepStats(done=True)))[1])
    x = z3.BitVec("x", 8)
    fraig._again([x == 1], [x], fraig.SweepStats(done=True, undecided=1), share)
    assert len(given) == 1 and given[0] is not share
    assert given[0].seconds == pytest.approx(share.left(), abs=1.0) and given[0].spent() < 1.0


def test_a_refutation_splits_the_classes_as_grouping_the_walked_nodes_anew_would(monkeypatch):
    """A refuted candidate's model is one more simulated vector: each class is split by
    it and each node's class key extended (`_add_vector`), not read anew. The classes
    and keys after are those a grouping of the walked nodes by their values makes, and
    the float pair the model set apart lies in two classes."""
    x, y = z3.BitVecs("x y", 32)
    fx, fy = (z3.fpBVToFP(v, F32) for v in (x, y))
    total = z3.fpAdd(z3.RNE(), fx, fy)
    odd = z3.If(x == 0x12345678, fy, total)  # `total` but at one input
    made = _sweeper(monkeypatch)
    sweep([z3.fpToIEEEBV(total) != z3.fpToIEEEBV(odd)], [x, y], seconds=60)
    w = made[0]
    fresh: dict[tuple, list[int]] = {}
    for i in w.walked:
        if w.values[i] is not None:
            sort = w.dag.nodes[i].sort
            fresh.setdefault((sort, as_key(w.values[i], sort)), []).append(i)
    assert {k: sorted(v) for k, v in w.classes.items()} == fresh
    assert all(key == (w.dag.nodes[i].sort, as_key(w.values[i], w.dag.nodes[i].sort))
               for i, key in w.keys.items())
    a, b = (w.dag.index[t.get_id()] for t in (total, odd))
    assert w.rep[b] != a and w.keys[a] != w.keys[b]


@pytest.mark.parametrize("fmt", [(8, 24), (8, 8)])
def test_the_edge_search_draws_fewer_vectors_where_each_costs_more(monkeypatch, fmt):
    """The edge vectors' work (`fraig.EDGE_WORK`) is counted in what a node's value
    costs (`simulate.cost`), not in nodes: a chain of float sums gets fewer batches
    than a chain of integer sums as long, and a chain of bf16 sums (rounded through
    fractions) fewer again, where the integers get every batch they got before."""
    x, y = z3.BitVecs("x y", 32)
    fx = z3.fpBVToFP(x, F32)
    value = z3.fpToFP(z3.RNE(), fx, z3.FPSort(*fmt))
    total = x
    for _ in range(40):
        value = z3.fpAdd(z3.RNE(), value, value)
        total = total * 3 + y
    drawn = []
    monkeypatch.setattr(fraig, "edge_vectors", lambda sorts, count, seed: drawn.append(seed)
                        or simulate.edge_vectors(sorts, count, seed))

    def batches(root):
        drawn.clear()
        dag = fraig._Dag()
        top = dag.add_roots([root])
        fraig._Sweep(dag, [x, y], budget.Budget(None), 1.0).edge_witness(top)
        return len(drawn)
    # roots true on no vector: the search runs to its end
    integers, floats = total == y, z3.And(z3.fpIsNaN(value), x == y, x != y)
    monkeypatch.setattr(fraig, "EDGE_WORK", 8 * fraig.EDGE_BATCH * 130)
    assert batches(integers) == 8
    assert 0 < batches(floats) < 8 if fmt == (8, 24) else batches(floats) == 0


@pytest.mark.parametrize("bf16", [False, True])
def test_a_constant_candidate_gets_longer_where_the_dag_holds_bf16(monkeypatch, bf16):
    """A guard true on every simulated input is asked against true for an eighth of a
    candidate's limit (`CONSTANT_SHARE`); where the DAG holds a bf16 value, whose
    queries the fast solver reads only within f32, for a half (`TRANSLATED_SHARE`)."""
    a, b = z3.BitVecs("a b", 32)
    shift = b & 31
    value = ((a << shift) ^ (a * 7)) & 0xFFFF
    limits = []
    check = fraig._check

    def guards_only(query, seconds, names, most=None):
        if not z3.substitute(query, (a, b)).eq(query):
            return "unknown", None
        limits.append(seconds)
        return check(query, seconds, names, most)
    monkeypatch.setattr(fraig, "_check", guards_only)
    o2 = z3.If(z3.ULT(shift, 32), value, z3.BitVecVal(32, 32))
    roots = [value != o2]
    if bf16:
        roots.append(z3.fpIsNaN(z3.fpBVToFP(z3.Extract(15, 0, a), z3.FPSort(8, 8))))
    sweep(roots, [a, b], seconds=60)
    share = fraig.TRANSLATED_SHARE if bf16 else fraig.CONSTANT_SHARE
    assert limits and max(limits) == pytest.approx(fraig.QUERY_SECONDS / share)


def test_a_term_met_again_is_not_rewritten_again(monkeypatch):
    """`rewrite.normal` rewrites a term once (its table): the same query swept again
    rewrites nothing new, and gives the same terms and the same merges."""
    x, y = z3.BitVecs("x y", 32)
    fx, fy = (z3.fpBVToFP(v, F32) for v in (x, y))
    lhs = z3.If(z3.fpGT(fx, fy), x * 3 + y, y + 3 * x)  # `a > b` is written `b < a`
    rhs = z3.If(z3.fpLT(fy, fx), y + x * 3, (x << 1) + x + y)
    calls = []
    first_rule = rewrite._first_rule
    monkeypatch.setattr(rewrite, "_first_rule", lambda t: calls.append(t) or first_rule(t))
    monkeypatch.setattr(rewrite, "_NORMAL", float_facts.Memo())
    first, first_stats = sweep([lhs != rhs], [x, y], seconds=60)
    asked = len(calls)
    again, again_stats = sweep([lhs != rhs], [x, y], seconds=60)
    assert asked > 0 and len(calls) == asked
    assert first[0].eq(again[0]) and first_stats.merges == again_stats.merges
    counts = [(s.proved, s.structural) for s in (first_stats, again_stats)]
    assert counts[0] == counts[1]
    assert z3.is_false(z3.simplify(first[0]))


def test_a_nodes_operator_is_read_anew_once_its_term_is_rewritten():
    """`_kind` (the likeness order's operator) keeps one read per term: a node whose
    term was rewritten has its new term's operator, not the one read before."""
    x, y = z3.BitVecs("x y", 32)
    dag = fraig._Dag()
    dag.add_roots([x * 3 + y != y])
    sweeper = fraig._Sweep(dag, [x, y], budget.Budget(None), 1.0)
    j = dag.index[(x * 3 + y).get_id()]
    assert sweeper._kind(j) == z3.Z3_OP_BADD
    sweeper._set_term(j, x ^ y)
    assert sweeper._kind(j) == z3.Z3_OP_BXOR


def test_a_terms_nearest_nodes_are_read_walking_each_subterm_once():
    """`_term_kids` walks a rebuilt term down to the nodes it holds as a DAG: a
    subterm shared by two operands is walked once, so a node under it is listed once
    (walked as a tree, n levels of `s + s` take 2^n steps: a bf16 pair's sweep spent
    57 of its 79 CPU s so)."""
    x, y = z3.BitVecs("x y", 32)
    dag = fraig._Dag()
    dag.add_roots([x * 3 + y != y])
    sweeper = fraig._Sweep(dag, [x, y], budget.Budget(None), 1.0)
    j = dag.index[(x * 3 + y).get_id()]
    shared = x * y + 1  # no node of the DAG
    tower = shared
    for _ in range(3):
        tower = tower + tower
    sweeper._set_term(j, tower)
    assert sweeper._term_kids(j) == [dag.index[x.get_id()], dag.index[y.get_id()]]
