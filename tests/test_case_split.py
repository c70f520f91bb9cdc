"""The last query split by the cases of a float's NaN (ptxsmt/smt/sweeping/case_split.py).
A min against a min.NaN of a sum differs only where exactly one operand is a NaN: the
split finds it, and numpy (float32, apart from z3) confirms the difference at the model's
inputs; an equal pair is unsat in every case; a case left undecided, or a model that
fails its case, is never a verdict."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import z3

from ptxsmt.smt.solving.budget import Budget
from ptxsmt.smt.solving.decide import Decision
from ptxsmt.smt.sweeping import case_split
from ptxsmt.smt.sweeping.case_split import Case, Split, by_cases, splits

F32 = z3.Float32()
X, Y, Z = z3.FPs("x y z", F32)


def _sum() -> z3.FPRef:
    return z3.fpAdd(z3.RNE(), X, Y)


def _min(a, b):
    """PTX's min.f32: a NaN operand gives the other (zeros: the ordered compare's)."""
    return z3.If(z3.fpIsNaN(a), b, z3.If(z3.fpIsNaN(b), a, z3.If(a < b, a, b)))


def _min_nan(a, b):
    """PTX's min.NaN.f32: a NaN operand gives a NaN."""
    return z3.If(z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)), z3.fpNaN(F32), z3.If(a < b, a, b))


def _min_swapped(a, b):
    """min.f32 with its NaN tests the other way round: equal to `_min` everywhere."""
    return z3.If(z3.fpIsNaN(b), a, z3.If(z3.fpIsNaN(a), b, z3.If(a < b, a, b)))


def _differ(lhs, rhs) -> list[z3.BoolRef]:
    return [lhs != rhs]  # SMT-LIB's `=`: one NaN, so NaN = NaN


def _decide(query: list[z3.BoolRef]) -> Decision:
    return by_cases(query, splits(query), "z3", Budget(None))


def _float32(model: z3.ModelRef, x: z3.FPRef) -> float:
    """x's value in the model (z3 gives no bits of a NaN: to_ieee_bv leaves them open)."""
    np = pytest.importorskip("numpy")
    if z3.is_true(model.eval(z3.fpIsNaN(x), model_completion=True)):
        return np.float32(np.nan)
    bits = model.eval(z3.fpToIEEEBV(x), model_completion=True).as_long()
    return np.float32(struct.unpack("<f", struct.pack("<I", bits))[0])


def test_the_split_is_by_the_sum_a_comparison_and_a_nan_test_read():
    found = splits(_differ(_min(_sum(), Z), _min_nan(_sum(), Z)))
    assert [(s.term.eq(_sum()), s.bits) for s in found] == [(True, None)]


def test_min_against_min_nan_differs_where_numpy_says_so():
    """sat from the case where the sum is a NaN (z a number): at the model's inputs
    numpy's fmin (min.f32) and minimum (min.NaN.f32) of x + y and z differ."""
    np = pytest.importorskip("numpy")
    number = z3.Not(z3.fpIsNaN(Z))  # so the difference lies only in the sum's NaN
    decision = _decide([*_differ(_min(_sum(), Z), _min_nan(_sum(), Z)), number])
    assert decision.result == z3.sat
    x, y, z = (_float32(decision.model, v) for v in (X, Y, Z))
    with np.errstate(all="ignore"):
        s = x + y
        lhs, rhs = np.fmin(s, z), np.minimum(s, z)
    assert np.isnan(rhs) and not np.isnan(lhs)


def test_a_difference_among_numbers_is_found_in_the_case_of_none():
    """The pair differs only where the sum is a number (min against max): the case of
    no NaN has it."""
    np = pytest.importorskip("numpy")
    a = _sum()
    maximum = z3.If(z3.fpIsNaN(a), Z, z3.If(z3.fpIsNaN(Z), a, z3.If(a > Z, a, Z)))
    decision = _decide(_differ(_min(_sum(), Z), maximum))
    assert decision.result == z3.sat
    x, y, z = (_float32(decision.model, v) for v in (X, Y, Z))
    with np.errstate(all="ignore"):
        s = x + y
    assert not np.isnan(s) and np.fmin(s, z) != np.fmax(s, z)


def test_an_equal_pair_is_unsat_in_every_case():
    assert _decide(_differ(_min(_sum(), Z), _min_swapped(_sum(), Z))).result == z3.unsat


def test_each_case_holds_exactly_where_the_query_and_its_literals_do():
    """Putting a case's value in is equals for equals: under the case's literals its
    query is the query; and the cases cover every value of the float."""
    query = tuple(_differ(_min(_sum(), Z), _min_nan(_sum(), Z)))
    cases = Case((), query).cases(Split(_sum()))
    assert len(cases) == 2
    for case in cases:
        s = z3.Solver()
        s.add(z3.And(*case.literals), z3.And(*case.query) != z3.And(*query))
        assert s.check() == z3.unsat
    s = z3.Solver()
    s.add(*[z3.Not(z3.And(*c.literals)) for c in cases])
    assert s.check() == z3.unsat


def test_a_case_left_undecided_is_no_unsat(monkeypatch):
    """Every case but one unsat, that one undecided when asked again with the time
    left: unknown, never equivalent."""
    real = case_split.check_with
    asked = []

    def nan_case_unknown(solver, how, budget, emit=None):
        """The case where the sum is a NaN (its last assertion an equation) undecided."""
        asked.append(solver)
        return Decision(z3.unknown, reason="stub") if z3.is_eq(solver.assertions()[-1]) \
            else real(solver, how, budget, emit)
    monkeypatch.setattr(case_split, "check_with", nan_case_unknown)
    decision = _decide(_differ(_min(_sum(), Z), _min_swapped(_sum(), Z)))
    assert decision.result == z3.unknown and len(asked) >= 3  # the NaN case asked again


def test_a_model_that_fails_its_case_is_no_difference(monkeypatch):
    """A solver's model that does not hold the case (here: every input zero, where the
    two agree) gives unknown."""
    def bogus(solver, how, budget, emit=None):
        s = z3.Solver()
        s.add(*[z3.fpIsZero(v) for v in (X, Y, Z)])
        s.check()
        return Decision(z3.sat, model=s.model())
    monkeypatch.setattr(case_split, "check_with", bogus)
    decision = _decide(_differ(_min(_sum(), Z), _min_nan(_sum(), Z)))
    assert decision.result == z3.unknown


def test_the_plain_query_decided_first_is_not_split(monkeypatch):
    """`check`: the plain query's own answer stands where it comes in its first try."""
    calls = []
    real = case_split.check_with

    def counted(solver, how, budget, emit=None):
        calls.append(budget)
        return real(solver, how, budget, emit)
    monkeypatch.setattr(case_split, "check_with", counted)
    s = z3.Solver()
    s.add(*_differ(_min(_sum(), Z), _min_swapped(_sum(), Z)))
    assert case_split.check(s, "z3", 30.0).result == z3.unsat
    assert len(calls) == 1


def _two_floats(product_first: bool) -> list[z3.BoolRef]:
    """A query that two floats (a sum, a product) meet a comparison in, each read by
    as many, the one made first first (AST ids follow creation order)."""
    rm = z3.RNE()
    made = [z3.fpMul(rm, X, Z), z3.fpAdd(rm, X, Y)] if product_first else \
        [z3.fpAdd(rm, X, Y), z3.fpMul(rm, X, Z)]
    a, b = made
    return [z3.Or(a < b, z3.fpIsNaN(a), z3.fpIsNaN(b))]


_SPLITS = """
import sys
sys.path.insert(0, sys.argv[2])
from test_case_split import _two_floats, splits
print([str(s.term) for s in splits(_two_floats(sys.argv[1] == "1"))])
"""


def test_the_order_of_splits_is_structural():
    """The same query with its floats made in the other order (other AST ids: a
    process each) splits by the same floats, in one order."""
    tests = Path(__file__).parent
    env = {**os.environ, "PYTHONPATH": str(tests.parent)}
    orders = [subprocess.run([sys.executable, "-c", _SPLITS, first, str(tests)],
                             capture_output=True, text=True, check=True, env=env).stdout
              for first in ("1", "0")]
    assert orders[0] == orders[1] == "['x + y', 'x * z']\n"


def test_a_float_no_comparison_reads_is_no_split():
    """x * z read only by an addition is not split by; the sum a comparison reads is."""
    product = z3.fpMul(z3.RNE(), X, Z)
    total = z3.fpAdd(z3.RNE(), product, Y)
    assert [str(s.term) for s in splits([total < Z])] == [str(total)]


def test_a_split_that_decides_no_case_costs_its_probes_alone(monkeypatch):
    """Every case undecided: each split's two cases asked once, within PROBE_SECONDS,
    and no more (the plain query, not the cases, gets the time left)."""
    asked = []

    def undecided(solver, how, budget, emit=None):
        asked.append(budget.seconds)
        return Decision(z3.unknown, reason="stub")
    monkeypatch.setattr(case_split, "check_with", undecided)
    query = _differ(_min(_sum(), Z), _min_swapped(_sum(), Z))
    decision = by_cases(query, splits(query), "z3", Budget(60.0))
    assert decision.result == z3.unknown
    assert asked == [case_split.PROBE_SECONDS] * 2
