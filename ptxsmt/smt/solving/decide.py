"""The verifier core's one solve policy. Every verdict ptxsmt gives -- two snippets
equivalent, two functions equivalent, a PTX function refining its IR -- rests on a
`Decision` made here, by one set of rules:
- z3 is asked through `solver.check`: a Ctrl-C (z3's "interrupted", or "canceled"
  after the command line's watcher stopped it) is the KeyboardInterrupt it was, never
  an "unknown";
- `how` ("z3", "auto", "portfolio") says who else may race z3, on the query written
  out once as standard SMT-LIB (`smt2.script`, what `--emit-smt2` writes); a solver
  is handed only a query it reads (`portfolio.unreadable`: sorts, quantifiers);
- another solver's "unsat" is unsat of the full query; its "sat" is values that z3
  must complete into a model of the query: z3 refuting them raises
  `SolverDisagreement` (a solver's or ptxsmt's bug: exit 4, never a verdict), z3 not
  finishing under them is unknown;
- "unsat" only ever comes from a solver's unsat of the full query, never a timeout.
What a verdict then shows is replayed by its own kind (`REPLAY` in `phrases`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from ...isa.errors import PtxError
from ...solver import Z3_FIRST_SECONDS
from ...terms import walk
from . import portfolio, smt2
from .budget import Budget, check, milliseconds
from .portfolio import SolverDisagreement

SOLVER_CHOICES = ("auto", "z3", "portfolio")
__all__ = ["SOLVER_CHOICES", "Decision", "Query", "SolverDisagreement", "check_with", "decide"]


@dataclass(frozen=True)
class Query:
    """One question to the solvers: are the assertions satisfiable (do the two sides
    differ)? `logic`: the z3 solver's logic where one is known ("QF_BVFP")."""

    assertions: tuple[z3.BoolRef, ...]
    how: str = "z3"
    timeout: float | None = None
    logic: str | None = None

    def solver(self) -> z3.Solver:
        s = z3.SolverFor(self.logic) if self.logic else z3.Solver()
        if self.timeout is not None:  # for checks outside `decide`'s budget
            s.set("timeout", milliseconds(self.timeout))
        s.add(*self.assertions)
        return s

    def smt2(self, comments: tuple[str, ...] = ()) -> str:
        """The query as every solver of the portfolio reads it."""
        return smt2.script(self.assertions, comments)


def decide(q: Query, emit: Callable[[list[z3.BoolRef]], None] | None = None) -> Decision:
    """The query decided by the one policy (`check_with`)."""
    return check_with(q.solver(), q.how, q.timeout, emit)


@dataclass(frozen=True)
class Decision:
    """What `check_with` found: the result, which solver found it, why nobody did
    (unknown: each solver's reason), and a z3 model of the query (sat)."""

    result: z3.CheckSatResult
    solver: str = "z3"
    reason: str = ""
    model: z3.ModelRef | None = None


def check_with(solver: z3.Solver, how: str = "z3", timeout: Budget | float | None = None,
               emit: Callable[[list[z3.BoolRef]], None] | None = None) -> Decision:
    """Decide the query `solver` holds (`how`): by z3 alone, by the portfolio, or "auto",
    z3 alone for Z3_FIRST_SECONDS and then bitwuzla racing it for the time left;
    `emit` first receives the query's assertions (`--emit-smt2` writes them with
    `smt2.script`, the text the portfolio's solvers read). A portfolio "sat" becomes a
    z3 model (`_completed`: the winner's values folded into a copy of the query, z3
    finding the rest; `solver` is left as it was, for the caller to minimise). z3
    refuting those values raises `SolverDisagreement`; z3 not finishing under them
    (within the time left, at least COMPLETION_SECONDS) is unknown. "unsat" only ever
    comes from a solver's unsat of the full query, never from a timeout. `timeout`: CPU
    seconds (or a `Budget`: the same on an idle machine and a loaded one), each solver
    process its own, all within a wall-clock cap."""
    if how not in SOLVER_CHOICES:
        raise PtxError(f"unknown solver {how!r} (choose {' or '.join(SOLVER_CHOICES)})")
    # read before z3 checks: after a check z3 may answer `assertions()` with its own
    # preprocessed set (a link `read == a0` solved away), whose models lack those constants
    assertions = list(solver.assertions())
    if emit is not None:
        emit(assertions)
    racers = {"portfolio": portfolio.SOLVERS, "auto": ("bitwuzla", "z3")}.get(how, ("z3",))
    racers = tuple(s for s in racers if s not in portfolio.unavailable())
    budget = Budget.of(timeout)
    left = budget.left()
    if how == "auto" and len(racers) > 1 and (left is None or left > Z3_FIRST_SECONDS):
        result = check(solver, budget.part(Z3_FIRST_SECONDS))
        if result != z3.unknown:
            return Decision(result, model=solver.model() if result == z3.sat else None)
        if budget.expired():  # reading a large query for the others takes seconds
            return Decision(z3.unknown, reason="timeout")
        refused = portfolio.unreadable(assertions, racers)
        if [s for s in racers if s not in refused] == ["z3"]:  # z3 alone goes on here
            return _z3_alone(solver, budget,
                             "; ".join(f"{s}: {why}" for s, why in refused.items()))
    elif how != "portfolio" or len(racers) < 2:  # z3 alone: no need to write the query out
        return _z3_alone(solver, budget)
    answer = portfolio.solve(assertions, budget, racers)
    if answer.result != "sat":
        return Decision(z3.unsat, answer.solver) if answer.result == "unsat" else \
            Decision(z3.unknown, "", answer.reason or "no solver of the portfolio answered")
    left = budget.left()
    return _completed(assertions, answer, None if left is None else max(COMPLETION_SECONDS, left))


COMPLETION_SECONDS = 5.0  # the least time z3 gets to complete a winner's model
FOLD_STEPS = 2_000_000  # z3.simplify's rewriting steps for a folded query, at most


def _completed(assertions: list[z3.BoolRef], answer: portfolio.Answer,
               timeout: float | None) -> Decision:
    """The winner's "sat" as a z3 model of the query: its values of the query's Bool and
    bit-vector constants folded in (`_pinned`) and asked of a solver of its own, with
    the values asserted beside, so that the model holds them and z3 finds only the
    rest (arrays, functions, free NaNs). Folding, not assumptions: z3 simplifies no
    assumption into the query, and bit-blasts every float operation on values it
    could have computed (a wide-float pair: unknown after 41.5 CPU s under
    assumptions, sat in 1.2 to 2.6 folded; docs/scale.md).
    A model of the folded query and the values is one of the query. z3 refuting it
    raises `SolverDisagreement`; not finishing (within `timeout` CPU seconds) is
    unknown."""
    s = z3.Solver()
    s.add(*_pinned(assertions, answer.values))
    result = check(s, Budget.capped(timeout))
    if result == z3.unsat:
        raise SolverDisagreement(f"{answer.solver} says sat, but z3 refutes its model")
    if result == z3.unknown:
        return Decision(z3.unknown, answer.solver, f"{answer.solver} says sat, but z3 did not "
                        f"complete its model ({s.reason_unknown()})")
    return Decision(z3.sat, answer.solver, model=s.model())


def _pinned(assertions: list[z3.BoolRef], values: dict[str, bool | int]) -> list[z3.BoolRef]:
    """The assertions with `values` (a solver's model: constant name -> value) put in
    for their Bool and bit-vector constants and folded by z3's rewriter (within
    FOLD_STEPS), then each constant's equation to its value; names the query does not
    hold (constants of the standard text's own: `to_ieee_bv!0`) are left out."""
    free = {t.decl().name(): t for a in assertions for t in smt2.subterms(a)
            if z3.is_const(t) and walk.is_free(t) and (z3.is_bool(t) or z3.is_bv(t))}
    pins = [(free[name], z3.BoolVal(v) if z3.is_bool(free[name])
             else z3.BitVecVal(v, free[name].size()))
            for name, v in values.items() if name in free]
    if not pins:
        return list(assertions)
    folded = []
    for a in assertions:
        a = z3.substitute(a, *pins)
        try:
            a = z3.simplify(a, max_steps=FOLD_STEPS)
        except z3.Z3Exception as e:
            if "max. steps" not in str(e):
                raise
        folded.append(a)
    return [*folded, *[c == v for c, v in pins]]


def _z3_alone(solver: z3.Solver, budget: Budget, others: str = "") -> Decision:
    """z3's decision; unknown names why, and why no other solver was asked (`others`)."""
    result = check(solver, budget)
    own = "timeout" if budget.expired() else solver.reason_unknown()
    why = "; ".join(x for x in (own, others) if x) if result == z3.unknown else ""
    return Decision(result, reason=why, model=solver.model() if result == z3.sat else None)



