"""A query split by the NaN cases of a float (issue 44): the last query (`check`), and
before the sweep, a pair where an operation reads one register twice (min/max, setp.num,
copysign: `swept_by_cases`).

The last query. Where a float is made by arithmetic that can
give a NaN of numbers (`float_facts.BORN_NAN`: inf - inf, 0 * inf) and read by operators
that see its NaN apart (`float_facts.SEES_NAN`: a comparison, a class test), z3 and
bitwuzla bit-blast the NaN and the numbers at once, and the swept query of a small pair
may take them the whole limit (fsel-llc14-1006-planted: 24 M of z3's resource count, 8 to
10 CPU s; as the two cases of one such float, 0.1 M and 0.3 M, under half a second).

Before the sweep (`swept_by_cases`). A min or max of a register with itself, which opt
folds to the register, differs from it only in the bits of its NaN: no sweep merges
them or anything above them (so too `setp.num x, x` and `copysign x, x`: `SOURCES`).
Each of the register's NaN cases is swept on its own, the case of numbers over
`never_nan` of it, and where that is undecided, as read (its NaN test false: fsel-llvm22-2000
needs the first, 1 CPU s against unknown at 16; fsel-llc14-2002 the second, 8 CPU s against
unknown at 60).

The cases of a float y: `y = NaN` (SMT-LIB's floats have one NaN), NaN put in for y
everywhere (equals for equals, the equation kept beside: the case's query holds exactly
where the query and `y = NaN` do), so that z3's rewriter or the sweep's folds what reads
it (`fp.lt(x, NaN)` is false, `x + NaN` is NaN); and y no NaN, its NaN test read false
(the negation kept beside). They cover all of y's values, so:
- unsat only where every case is unsat, each by a solver's unsat;
- sat from one case's model, once z3 evaluates the query and that case's literals true
  under it (the counterexample's replay, as for any model, is still the authority);
- else unknown (before the sweep: the plain sweep decides, in the time left).

Bounded and deterministic: at most LITERALS floats (`splits`: ranked by how many
readers see their NaN, then by `order.structural`), each case first asked within
PROBE_SECONDS; a case left undecided is split again by the next float (the decided ones
are done), a split that decides none of its cases is dropped, and the cases left after
the last float share the time left where any split decided a case (else the split
cost its probes alone). Only where the plain query was not decided in its first
PLAIN_SECONDS (`check`). Before the sweep: at most SAME_OPERAND registers, in
`order.structural`, their cases within SWEPT_SHARE of the pair's time, and nothing
spent where no min or max reads a register twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import z3

from ...isa.types import FloatFormat
from ...sem.sorts import (
    FORMATS,
    OPEN_NANS,
    as_float,
    fields,
    is_nan,
    is_open_nan_application,
    unordered,
)
from ...terms.walk import subterms
from ..solving.budget import Budget
from ..solving.decide import Decision, check_with
from .float_facts import BORN_NAN, SEES_NAN
from .fraig import Sides, SweepStats
from .order import structural

LITERALS = 3  # floats split by, at most (3 levels: at most 8 cases left at the last)
PLAIN_SECONDS = 2.0  # the plain query's first try (CPU s), before any case
PROBE_SECONDS = 0.5  # a case's first try, before it is split again
SPLIT_SHARE = 0.25  # of the time left after the plain first try, for the cases (the
# plain query, raced, gets the rest: on fsel-llc14-1003 the cases are slower than the whole)


@dataclass(frozen=True)
class Split:
    """Split by whether the float `term` is a NaN. `bits`: the register (and its format)
    whose float `term` is (`sorts.as_float`), where the query also reads its NaN test on
    the bits (`sorts.is_nan`): each case reads that test as its own too."""

    term: z3.FPRef
    bits: tuple[z3.BitVecRef, FloatFormat] | None = None


@dataclass(frozen=True)
class Case:
    """The query under `literals` (each case's equation or its negations), as asked:
    `query`, the assertions with the case's values put in (and so `sides`, terms the
    query holds, where given). `fold`: z3's rewriter then folds what reads them (for a
    solver); else the terms keep the encoding's spelling, which the sweep's own rewrites
    read (and fold: `rewrite.py`), and each side is still a term of the query
    (fsel-llvm22-2002's case of no NaN, folded: 30 CPU s of sweeping, the -O2 side's
    output no term of the query; as encoded: 2 s)."""

    literals: tuple[z3.BoolRef, ...]
    query: tuple[z3.BoolRef, ...]
    sides: tuple[tuple[z3.ExprRef, ...], ...] = ()
    fold: bool = True

    def cases(self, split: Split, as_never_nan: bool = True) -> list[Case]:
        """This case split by `split.term`'s NaN: the case `y = NaN`, NaN put in for y
        (SMT-LIB's floats have one NaN), and the case of none, `isNaN(y)` read false;
        the register's NaN test on bits, where the split has one, read true and false,
        and in the case of none (`as_never_nan`) the register's bits put in as
        `never_nan` of them."""
        y = split.term
        nan = z3.fpNaN(y.sort())
        on_bits = [is_nan(*split.bits)] if split.bits is not None else []
        no_nan = [(split.bits[0], never_nan(*split.bits))] \
            if split.bits is not None and as_never_nan else []
        return [self._put(y == nan, [(y, nan), *[(t, z3.BoolVal(True)) for t in on_bits]]),
                self._put(y != nan, [*[(t, z3.BoolVal(False)) for t in (z3.fpIsNaN(y), *on_bits)],
                                     *no_nan])]

    def _put(self, literal: z3.BoolRef, pairs: list[tuple[z3.ExprRef, z3.ExprRef]]) -> Case:
        def put(terms: Sequence[z3.ExprRef]) -> tuple[z3.ExprRef, ...]:
            put_in = (z3.substitute(t, *pairs) for t in terms)
            return tuple(z3.simplify(t) if self.fold else t for t in put_in)
        return Case((*self.literals, literal), put(self.query),
                    tuple(put(side) for side in self.sides), self.fold)


def never_nan(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef:
    """`bits` where they are no NaN, and the infinity of their sign where they are: a
    value that is never a NaN and takes every other value. Put in for a register in its
    case of no NaN (where the literal says it is none, it is the register itself), it
    makes that case's query hold only of numbers: the sweep's simulation draws no NaN
    for it and its candidates are proved for numbers alone (fsel-llvm22-2000's case of
    no NaN, the literal alone: unknown at 16 CPU s, unsat only at 45; so: unsat in 1)."""
    sign, exp, frac = fields(bits, fmt)
    return z3.If(exp == (1 << fmt.ebits) - 1, z3.Concat(sign, exp, z3.BitVecVal(0, frac.size())),
                 bits)


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
    return [Split(y) for y, _ in ranked[:LITERALS]]


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
    if not _holds(decision.model, assertions, case.literals):
        return Decision(z3.unknown, decision.solver, "a case's model fails its case")
    return decision


def _holds(model: z3.ModelRef, assertions: Sequence[z3.BoolRef],
           literals: Sequence[z3.BoolRef]) -> bool:
    """z3 evaluates the query and a case's literals true under `model`."""
    return z3.is_true(model.eval(z3.And(*assertions, *literals), model_completion=True))


# Before the sweep: a min or max of one register with itself. An optimizer folds
# min(x, x) and max(x, x) to x (LLVM's InstSimplify), but PTX's min and max of two NaNs
# is any NaN (`free_nan` of the pair): the two differ in the bits of x's NaN alone, so
# the sweep merges neither them nor anything above them, and the last query holds both
# functions whole (fsel-llvm22-2002: a dozen fp.add chains, unknown at 60 s). In the
# case `x is a NaN` both are NaNs and the sweep's rewrites fold what reads them; in the
# other, the min is x: each case sweeps as a pair without it does.
FOLDED = ("min", "max")  # the instructions (as their open NaNs are named) read so
SAME_OPERAND = 2  # registers split by, at most (4 cases)
SWEPT_SHARE = 0.3  # of the pair's time left, for the swept cases (the plain sweep, the rest:
# the held-out splits that decide took 4 to 9 CPU s; at a half, a failed one spent 27 s and
# fsel-llvm22-2006, 29 s to the plain sweep alone, ended unknown; at 0.3: 18 s, equivalent)

LAST_SHARE = 0.4  # of the pair's time left, for the last case where the others were unsat
# (the cases of NaNs are unsat in a second or two on the held-out pairs; the case of
# numbers then took 15 to 45 CPU s: fsel-llc14-2008 unknown at the share's 16 s, 18.3 CPU
# s at 0.7; but at 0.7 fsel-llvm22-2006, whose case of numbers fails, left its plain sweep
# too little (unknown; equivalent in 45.3 at 0.4, where fsel-llc14-2008 took 62.1))

# sweeps a query (its assertions, the two sides' outputs among their terms) within a
# budget, and gives the solver that holds the result
Solve = Callable[[Sequence[z3.BoolRef], Sides, Budget], tuple[z3.Solver, SweepStats]]


@dataclass(frozen=True)
class Swept:
    """The query decided by swept cases: `solver` holds the case whose model
    `decision` has (sat), and `stats` are the cases' sweeps, summed."""

    decision: Decision
    solver: z3.Solver | None
    stats: SweepStats


def same_operands(assertions: Sequence[z3.BoolRef]) -> list[Split]:
    """The registers x that the query reads through an operation of x with itself
    (SOURCES: `min`/`max x, x`, `setp.num x, x`, `copysign x, x`), at most SAME_OPERAND,
    in `order.structural`: a split each, on the float the query reads the register as,
    its NaN test on bits beside."""
    found: dict[int, tuple[z3.BitVecRef, FloatFormat]] = {}
    for t in subterms(*assertions):
        for source in SOURCES:
            if (xf := source(t)) is not None:
                found[xf[0].get_id()] = xf
                break
    ranked = sorted(found.values(), key=lambda xf: structural(xf[0]))
    return [Split(as_float(x, fmt), (x, fmt)) for x, fmt in ranked[:SAME_OPERAND]]


def _min_or_max_of_itself(t: z3.ExprRef) -> tuple[z3.BitVecRef, FloatFormat] | None:
    """(x, its format) where `t` is the open NaN of a min or max of `FOLDED` whose
    argument is `sorts.unordered(x, x)`."""
    if not (is_open_nan_application(t) and t.decl().name().split(".")[0] in FOLDED):
        return None
    fmt = OPEN_NANS[t.decl().name()]
    x = _both_operands(t.arg(0), fmt)
    return None if x is None else (x, fmt)


def _both_operands(pair: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef | None:
    """x where `pair` is `sorts.unordered(x, x)`, or the concatenation it folds to."""
    concat = pair.arg(1) if z3.is_app_of(pair, z3.Z3_OP_ITE) else pair
    if not (z3.is_app_of(concat, z3.Z3_OP_CONCAT) and concat.num_args() == 2):
        return None
    x = concat.arg(0)
    same = pair.eq(unordered(x, x)) or pair.eq(z3.Concat(x, x))
    return x if same and x.size() == fmt.width else None


# A comparison of one register with itself (prims.compare_float's `either_nan` of x and
# x): `setp.num x, x` is x's NaN test, and -O0's `selp d, x, min.NaN(x, y), num(x)`
# against -O2's phi of x and a NaN after a branch on `setp.nan x, x` (fsel-llvm22-2000)
# read each other only through x's NaN cases: in each case the choice folds.
def _compared_with_itself(either_nan: z3.ExprRef) -> tuple[z3.BitVecRef, FloatFormat] | None:
    """(x, its format) where `either_nan` is `Or(isNaN(a), isNaN(a))` of the float a
    that the query reads register x as (`sorts.as_float`)."""
    if not (z3.is_or(either_nan) and either_nan.num_args() == 2
            and either_nan.arg(0).eq(either_nan.arg(1))
            and z3.is_app_of(either_nan.arg(0), z3.Z3_OP_FPA_IS_NAN)):
        return None
    a = either_nan.arg(0).arg(0)
    if not (z3.is_app_of(a, z3.Z3_OP_FPA_TO_FP) and a.num_args() == 1):
        return None
    x = a.arg(0)
    fmt = next((f for f in FORMATS if f.width == x.size() and as_float(x, f).eq(a)), None)
    return None if fmt is None else (x, fmt)


# `copysign.f32 d, x, x` is x's bits, but read by `abs` (an open NaN of its argument)
# it meets -O2's `abs x` only where x is no NaN (fsel-llvm22-2008); llc-14 spells it
# `selp d, -|x|, |x|, sign(x)`, each of abs and neg an open NaN (fsel-llc14-2008).
def _copysign_of_itself(t: z3.ExprRef) -> tuple[z3.BitVecRef, FloatFormat] | None:
    """(x, its format) where `t` is `copysign x, x` as `floatarith.copysign` writes it
    (x's sign bit over x's other bits), or as llc-14 does: If(c, neg(|x|), |x|), |x|
    `abs` of x (its open NaN of x beside) and c reading x."""
    if z3.is_app_of(t, z3.Z3_OP_CONCAT) and t.num_args() == 2:
        sign, rest = t.children()
        if not all(z3.is_app_of(e, z3.Z3_OP_EXTRACT) for e in (sign, rest)):
            return None
        x, w = sign.arg(0), sign.arg(0).size()
        fmt = _of_width(w)
        exact = (sign.params() == [w - 1, w - 1] and rest.params() == [w - 2, 0]
                 and rest.arg(0).eq(x))
        return (x, fmt) if exact and fmt is not None else None
    if not (z3.is_app_of(t, z3.Z3_OP_ITE) and z3.is_bv(t)):
        return None
    c, negated, magnitude = t.children()
    abs_x, neg_abs = _open_arm(magnitude, "abs"), _open_arm(negated, "neg")
    if abs_x is None or neg_abs is None or not neg_abs.arg(0).eq(magnitude):
        return None
    x, fmt = abs_x.arg(0), OPEN_NANS[abs_x.decl().name()]
    reads_x = any(u.eq(x) for u in subterms(c))
    return (x, fmt) if reads_x and x.size() == fmt.width else None


def _open_arm(t: z3.ExprRef, operation: str) -> z3.ExprRef | None:
    """The open NaN application of `operation` in `t`, where `t` is an operation's
    result as `sorts.free_nan` writes it: If(NaN test, If(NaN test, u, canonical), value)."""
    if not (z3.is_app_of(t, z3.Z3_OP_ITE) and z3.is_app_of(t.arg(1), z3.Z3_OP_ITE)):
        return None
    u = t.arg(1).arg(1)
    named = is_open_nan_application(u) and u.decl().name().split(".")[0] == operation
    return u if named else None


def _of_width(width: int) -> FloatFormat | None:
    """The one format of `width` bits (none for 16: f16 and bf16; copysign has neither)."""
    fmts = [f for f in FORMATS if f.width == width]
    return fmts[0] if len(fmts) == 1 else None


# the spellings of an operation of one register with itself, each read as (x, format)
SOURCES = (_min_or_max_of_itself, _compared_with_itself, _copysign_of_itself)


def swept_by_cases(assertions: Sequence[z3.BoolRef], sides: Sides, solve: Solve, how: str,
                   budget: Budget) -> Swept | None:
    """The query decided by the cases of its `same_operands` (every combination of
    their NaN cases), each case's query and literals swept and solved (`solve`, then
    `check`) within its share of SWEPT_SHARE of `budget`'s time left: unsat where every
    case is unsat; sat from a case's model under which z3 evaluates the query and the
    case's literals true. None (nothing spent where no register is found), so that the
    plain sweep decides: no such register, a case undecided or with a model that fails
    it, or a case whose simulation holds the query (the plain sweep's witness finds it
    at once)."""
    found = same_operands(assertions)
    if not found:
        return None
    left = budget.left()
    share = budget.part(None if left is None else SWEPT_SHARE * left)
    whole = Case((), tuple(assertions), tuple(tuple(side) for side in sides), fold=False)
    open_, as_read = [whole], whole
    for split in found:
        open_ = [c for case in open_ for c in case.cases(split)]
        as_read = as_read.cases(split, as_never_nan=False)[-1]
    stats: list[SweepStats] = []
    # a model of a case of NaNs is kept while the case of numbers is asked: one there
    # differs in more than NaN bits where it can (Triton's maximum: +0 against -0)
    nan_model: tuple[Decision, z3.Solver] | None = None
    for k, case in enumerate(open_):
        # the cases before the last were decided (else the loop has returned): the last,
        # that of numbers, gets LAST_SHARE of the pair's time left, not what the others
        # left of the share; half of it over `never_nan`, then (undecided) as read
        last = 0 < k == len(open_) - 1
        tries = [(case, LAST_SHARE / 2), (as_read, LAST_SHARE / (2 - LAST_SHARE))] if last \
            else [(case, 1 / (len(open_) - k))]
        for tried, share_of_left in tries:
            pool = budget if last else share
            left = pool.left()
            part = pool.part(None if left is None else share_of_left * left)
            solver, swept = solve((*tried.query, *tried.literals), tried.sides, part)
            stats.append(swept)
            if swept.witness:
                return _with(nan_model, stats)
            decision = check(solver, how, part)
            if decision.result == z3.sat and _holds(decision.model, assertions, tried.literals):
                if last:
                    return Swept(decision, solver, _summed(stats))
                nan_model = nan_model or (decision, solver)
                break
            if decision.result == z3.unsat:
                break
        else:
            return _with(nan_model, stats)
    return _with(nan_model or (Decision(z3.unsat, "z3 by swept cases"), None), stats)


def _with(decided: tuple[Decision, z3.Solver | None] | None,
          stats: Sequence[SweepStats]) -> Swept | None:
    """The decision (and the solver holding its model) with every case's sweep counted."""
    return None if decided is None else Swept(*decided, _summed(stats))


def _summed(stats: Sequence[SweepStats]) -> SweepStats:
    """The merges of several sweeps (of several queries: their node numbers apart)."""
    return SweepStats(sum(s.nodes for s in stats), sum(s.simulated for s in stats),
                      sum(s.proved for s in stats), sum(s.structural for s in stats),
                      sum(s.refuted for s in stats), sum(s.undecided for s in stats),
                      sum(s.seconds for s in stats),
                      justified=[j for s in stats for j in s.justified])
