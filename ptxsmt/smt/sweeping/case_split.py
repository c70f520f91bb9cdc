"""The last query split by cases (issue 44). Where a float is made by arithmetic that can
give a NaN of numbers (`float_facts.BORN_NAN`: inf - inf, 0 * inf) and read by operators
that see its NaN apart (`float_facts.SEES_NAN`: a comparison, a class test), z3 and
bitwuzla bit-blast the NaN and the numbers at once, and the swept query of a small pair
may take them the whole limit (fsel-llc14-1006-planted: 24 M of z3's resource count, 8 to
10 CPU s; as the two cases of one such float, 0.1 M and 0.3 M, under half a second).

A case is one value SMT-LIB's floats hold once (there is one NaN, one zero of each
sign), or none of them. In the case `y = v`, v is put in for y everywhere (equals for
equals, the equation kept beside: the case's query holds exactly where the query and
`y = v` do) and z3's rewriter folds what reads it (`fp.lt(x, NaN)` is false, `x + NaN`
is NaN); in the case of none, the class test those values answer is read false (its
negation kept beside). The cases of a float cover all its values, so:
- unsat only where every case is unsat, each by a solver's unsat;
- sat from one case's model, once z3 evaluates the query and that case's literals true
  under it (the counterexample's replay, as for any model, is still the authority);
- else unknown.

Bounded and deterministic: at most LITERALS floats (`splits`: ranked by how many
readers see their NaN, then by `order.structural`), each case first asked within
PROBE_SECONDS; a case left undecided is split again by the next float (the decided ones
are done), a split that decides none of its cases is dropped, and the cases left after
the last float share the time left where any split decided a case (else the split
cost its probes alone). Only where the plain query was not decided in its first
PLAIN_SECONDS (`check`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import z3

from ...terms.walk import subterms
from ..solving.budget import Budget
from ..solving.decide import Decision, check_with
from .float_facts import BORN_NAN, SEES_NAN
from .order import structural

# The partitions of a float's values: the values that have a case each (put in for the
# float there), and the class test that the case of none of them reads false
PARTITIONS: dict[str, tuple[tuple[Callable[[z3.FPSortRef], z3.FPRef], ...],
                            Callable[[z3.FPRef], z3.BoolRef]]] = {
    "NaN": ((z3.fpNaN,), z3.fpIsNaN),
    "zero": ((z3.fpPlusZero, z3.fpMinusZero), z3.fpIsZero),
}

LITERALS = 3  # floats split by, at most (3 levels: at most 8 cases left at the last)
PLAIN_SECONDS = 2.0  # the plain query's first try (CPU s), before any case
PROBE_SECONDS = 0.5  # a case's first try, before it is split again
SPLIT_SHARE = 0.25  # of the time left after the plain first try, for the cases (the
# plain query, raced, gets the rest: on fsel-llc14-1003 the cases are slower than the whole)


@dataclass(frozen=True)
class Split:
    """Split by the values of `term` in `partition` (a row of PARTITIONS)."""

    term: z3.FPRef
    partition: str


@dataclass(frozen=True)
class Case:
    """The query under `literals` (each case's equation or its negations), as asked:
    `query`, the assertions with the case's values put in."""

    literals: tuple[z3.BoolRef, ...]
    query: tuple[z3.BoolRef, ...]

    def cases(self, split: Split) -> list[Case]:
        """This case split by the values of `split.term`: a case for each value of its
        partition, then one for none of them."""
        y = split.term
        values, test = PARTITIONS[split.partition]
        out = [Case((*self.literals, y == v(y.sort())), _put(self.query, (y, v(y.sort()))))
               for v in values]
        none = z3.And(*[y != v(y.sort()) for v in values])
        return [*out, Case((*self.literals, none), _put(self.query, (test(y), z3.BoolVal(False))))]


def _put(query: Sequence[z3.BoolRef], pair: tuple[z3.ExprRef, z3.ExprRef]
         ) -> tuple[z3.BoolRef, ...]:
    return tuple(z3.simplify(z3.substitute(a, pair)) for a in query)


def splits(assertions: Sequence[z3.BoolRef]) -> list[Split]:
    """The floats to split the query by, at most LITERALS: those made by `BORN_NAN`
    arithmetic and read by `SEES_NAN` operators, most such readers first, then by
    `order.structural`; a NaN split each."""
    readers: dict[int, tuple[z3.ExprRef, int]] = {}
    for t in subterms(*assertions):
        if z3.is_app(t) and t.decl().kind() in SEES_NAN:
            for y in t.children():
                if z3.is_fp(y) and z3.is_app(y) and y.decl().kind() in BORN_NAN:
                    readers[y.get_id()] = (y, readers.get(y.get_id(), (y, 0))[1] + 1)
    ranked = sorted(readers.values(), key=lambda yn: (-yn[1], structural(yn[0])))
    return [Split(y, "NaN") for y, _ in ranked[:LITERALS]]


def check(solver: z3.Solver, how: str, budget: Budget | float | None,
          emit: Callable[[list[z3.BoolRef]], None] | None = None) -> Decision:
    """`decide.check_with` of the query `solver` holds, with the case split where it has
    floats to split by (`splits`) and the plain query is not decided in its first
    PLAIN_SECONDS: the cases within SPLIT_SHARE of the time then left, the plain query
    again in the rest. With `emit` (the query written out), the plain query alone."""
    assertions = tuple(solver.assertions())  # before a check: z3's own set after one
    found = splits(assertions) if emit is None else []
    if not found:
        return check_with(solver, how, budget, emit)
    budget = Budget.of(budget)
    first = check_with(solver, how, budget.part(PLAIN_SECONDS))
    if first.result != z3.unknown:
        return first
    left = budget.left()
    decided = by_cases(assertions, found, how,
                       budget.part(None if left is None else SPLIT_SHARE * left))
    if decided.result != z3.unknown:
        return decided
    again = z3.Solver()
    again.add(*assertions)
    return check_with(again, how, budget)


def by_cases(assertions: Sequence[z3.BoolRef], found: Sequence[Split], how: str,
             budget: Budget) -> Decision:
    """The query decided by its cases over `found` (module docstring): each split's cases
    asked within PROBE_SECONDS; a split that decides none of them is dropped (its cost
    is that of its probes), one that decides some leaves the others to the next split;
    the cases left after the last share the time left, where a split decided any."""
    root = Case((), tuple(assertions))
    open_ = [root]
    for split in found:
        cases = [c for case in open_ for c in case.cases(split)]
        undecided = []
        for case in cases:
            if budget.expired():
                return Decision(z3.unknown, reason="timeout (by cases)")
            decision = _ask(case, assertions, how, budget.part(PROBE_SECONDS))
            if decision.result == z3.sat:
                return decision
            if decision.result == z3.unknown:
                undecided.append(case)
        if not undecided:
            return Decision(z3.unsat, "z3 by cases")
        if len(undecided) < len(cases):
            open_ = undecided
    if open_ == [root]:
        return Decision(z3.unknown, reason="no split decided a case")
    for k, case in enumerate(open_):
        left = budget.left()
        decision = _ask(case, assertions, how,
                        budget.part(None if left is None else left / (len(open_) - k)))
        if decision.result != z3.unsat:
            return decision if decision.result == z3.sat else \
                Decision(z3.unknown, decision.solver, f"{decision.reason} (by cases)")
    return Decision(z3.unsat, "z3 by cases")


def _ask(case: Case, assertions: Sequence[z3.BoolRef], how: str, budget: Budget) -> Decision:
    """One case decided; a model only where it holds the query and the case's literals."""
    s = z3.Solver()
    s.add(*case.query, *case.literals)
    decision = check_with(s, how, budget)
    if decision.result != z3.sat:
        return decision
    holds = decision.model.eval(z3.And(*assertions, *case.literals), model_completion=True)
    if not z3.is_true(holds):
        return Decision(z3.unknown, decision.solver, "a case's model fails its case")
    return decision
