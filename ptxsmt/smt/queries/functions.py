"""Translation validation of one function: two bodies (before and after a pass, -O0 and
-O3) agree when, from the same parameters, special registers and initial memory, they
end with the same return values and the same global and shared memory at every address
(`function.memory.observable`: local memory dies with the thread, and an `.entry`'s
shared memory with its CTA).

The second function's parameters and return parameters are named after the first's, by
position. An instruction ptxsmt does not model is an uninterpreted function on both
sides (the verdict lists them). A counterexample is replayed through the evaluator of
functions before anyone sees it, as for snippets.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from itertools import count

import z3

from ...eval.values import Value
from ...function.effects import param_spelling, param_type
from ...function.encode import FunctionEncoding, encode_function
from ...function.evaluate import FunctionEvaluation, Location, OpenDependence, evaluate_function
from ...function.memory import address_bits, initial, load, observable
from ...function.memory import at as memory_at
from ...function.unroll import DEFAULT_UNROLL
from ...isa.errors import PtxError
from ...isa.literals import canonical_nan, fp_class
from ...isa.module import Function
from ...isa.types import TYPES, FloatFormat
from ...sem import observe
from ...sem.contraction import is_choice
from ...sem.hardware import made_nan
from ...sem.options import DEFAULT, DEFAULT_NAN, Options
from ...sem.sorts import FORMATS, OPEN_NANS, Choose, fp_sort, ieee_result, open_nan_sites
from ...sem.unspecified import UNSPECIFIED, OpenValue
from ...solver import check
from ...terms import walk
from ..solving import budget as budgets
from ..solving.budget import Budget
from ..solving.decide import Decision, check_with
from ..solving.portfolio import solve_here
from ..solving.smt2 import subterms
from ..sweeping import case_split
from ..sweeping.fraig import Certified, Sides, SweepStats, certify, sweep_if_large
from .snippets import NICE_SECONDS, ReplayError, nice_values


@dataclass(frozen=True)
class FunctionCounterexample:
    inputs: dict[str, Value]  # scalar inputs shared by both sides
    memory: dict[Location, Value]  # initial memory the sides read (or differ at)
    lhs: FunctionEvaluation
    rhs: FunctionEvaluation
    differ: tuple[str, ...]  # outputs (return names, locations) that differ
    nan_payloads_only: bool = False  # only in which open NaNs are chosen (--nan exact)
    # the values the ISA leaves open, as the replay took them: the difference holds for
    # every choice of them, and the evaluator shows it under this one (empty: left open)
    chosen: tuple[OpenValue, ...] = ()


@dataclass(frozen=True)
class FunctionVerdict:
    verdict: str  # "equivalent" | "bounded" (equivalent up to `unroll` iterations) |
    # "different" | "unknown"
    lhs: str
    rhs: str
    uninterpreted: dict[str, int]  # instruction text -> line, both sides
    counterexample: FunctionCounterexample | None = None
    reason: str = ""
    seconds: float = 0.0
    unroll: int = 0  # --unroll K: each loop ran at most K times
    # the sweep's merges that rest on a rule, not a solver (`fraig.JUSTIFICATIONS`): count
    # by rule; with `certify`, what a solver said of them
    justified: dict[str, int] = field(default_factory=dict)
    certified: Certified | None = None
    nan: str = DEFAULT_NAN  # the NaN policy compared under (sem.observe)
    up_to_nan_payloads: bool = False  # equivalent payload-free, not proved bit for bit
    float_outputs: bool = False  # some return value is float-typed: the policy matters
    # the sweep's merges: by a solver's proof, by structure, by a rule (`fraig.SweepStats`)
    merges: dict[str, int] = field(default_factory=dict)




def _renaming(lhs: Function, rhs: Function) -> tuple[dict[str, str], dict[str, int], str]:
    """rhs's parameter and return names -> lhs's, by position; the parameters whose sizes
    differ (a half as `.b32` on one side, `.b8 p[2]` on the other), by lhs name -> the
    larger width in bits: both read one input of that size, each its own bytes of it (the
    caller passes the same bytes to both); and a note naming the parameters and return
    values compared on the bytes both declare ("" if none)."""
    out, widths, notes = {}, {}, []
    for what, left, right in (("parameters", lhs.params, rhs.params),
                              ("return parameters", lhs.returns, rhs.returns)):
        if len(left) != len(right):
            raise PtxError(f"{lhs.name} and {rhs.name} have different {what}: "
                           f"{[param_spelling(p) for p in left]} and "
                           f"{[param_spelling(p) for p in right]}")
        out |= {r.name: ll.name for ll, r in zip(left, right)}
        for ll, r in zip(left, right):
            a, b = param_type(ll).width, param_type(r).width
            if a != b:
                widths[ll.name] = max(a, b)
                notes.append(f"{ll.name} ({param_spelling(ll)} and {param_spelling(r)}) on "
                             f"its {min(a, b) // 8} low bytes")
    note = ("compared on the bytes both functions declare: " + "; ".join(notes)) if notes \
        else ""
    return out, widths, note


def _low(a: z3.BitVecRef, b: z3.BitVecRef) -> tuple[z3.BitVecRef, z3.BitVecRef]:
    """Two return values on the bytes both declare (the low ones)."""
    w = min(a.size(), b.size())
    return tuple(x if x.size() == w else z3.Extract(w - 1, 0, x) for x in (a, b))


def check_function_equivalence(lhs: Function, rhs: Function, opts: Options = DEFAULT,
                               timeout: float | None = 30.0,
                               unroll: int = 0, solver: str = "auto",
                               emit: Callable[[list[z3.BoolRef]], None] | None = None,
                               sweeping: bool = True, certifying: bool = False,
                               nan: str = DEFAULT_NAN
                               ) -> FunctionVerdict:
    """`different` only with a counterexample that the evaluator replays on both
    functions and that differs whatever the unmodelled instructions and the values the
    ISA leaves open give; a difference that needs them is `unknown`, naming them.
    `solver`: who decides the whole query (`smt.solving.decide.check_with`: auto, z3, portfolio).
    `unroll` 0: loops run up to DEFAULT_UNROLL times, and agreement there is `unknown`.
    `sweeping`: merge the values both sides share before the whole query (`fraig.py`),
    where the query is large enough to need it. `certifying`: an "equivalent" whose sweep
    merged by a rule (not a solver) asks a solver for each such merge again, and is
    "unknown" unless every one is proved. `nan`: the NaN policy at float-typed return
    values (`sem.observe`; memory is bytes, observed as bits)."""
    start = time.perf_counter()
    asked, unroll = unroll, unroll or DEFAULT_UNROLL
    rename, widths, note = _renaming(lhs, rhs)
    el = encode_function(lhs, opts, unroll=unroll, widths=widths)
    er = encode_function(rhs, opts, rename=rename, unroll=unroll, widths=widths)
    for name in el.inputs.keys() & er.inputs.keys():
        if el.inputs[name].sort() != er.inputs[name].sort():
            raise PtxError(f"{name} is .{el.types[name].name} in {lhs.name} and "
                           f".{er.types[name].name} in {rhs.name}")
    spaces = [s for s in observable(lhs.kind, rhs.kind) if s in el.memory or s in er.memory]
    witness = {s: z3.BitVec(f"{s}.address", address_bits(s)) for s in spaces}
    returns = [k for k in el.returns if k in er.returns]
    formats = {k: f for k in returns if (f := _observed(el, er, k)) is not None}
    pairs = [_low(el.returns[k], er.returns[k]) for k in returns]
    pairs += [(_final(el, s)[w], _final(er, s)[w]) for s, w in witness.items()]
    points = [*returns, *spaces]
    differ = [observe.differ(a, b, formats.get(k), nan) for k, (a, b) in zip(points, pairs)]
    undefined = [*el.undefined, *er.undefined]
    bounded = [*el.bounded, *er.bounded]
    defined = z3.And(*[a.holds for a in (*el.assumed, *er.assumed)],
                     *[z3.Not(u.when) for u in (*undefined, *bounded)])
    # one limit for encoding, sweeping and the whole query together: CPU seconds, the
    # same under any load (`budget.py`), with a wall-clock cap
    limit = Budget.capped(timeout)
    asked_whole = [z3.Or(differ), defined]
    inputs = [*{**el.inputs, **er.inputs}.values(), *{**el.memory, **er.memory}.values()]
    # each side's outputs, as the query reads them: candidates are asked only across the
    # two sides
    sides = tuple([t for k, ab in zip(points, pairs)
                   for t in observe.observed(ab[side], formats.get(k), nan)]
                  for side in (0, 1))

    def swept_solver(query: Sequence[z3.BoolRef], sides: Sides, budget: Budget,
                     **witness) -> tuple[z3.Solver, SweepStats]:
        swept = SweepStats()
        if sweeping:
            query, swept = sweep_if_large(list(query), inputs, budget, sides, **witness)
        # a multiplication by a constant (nvcc's `mul.wide.s32 d, i, 4` for an index) as
        # shifts and concatenations: -O0's `shl` of the same index then meets it, and the
        # proof of an -O0/-O3 pair takes milliseconds instead of seconds
        s = _solver(_left(budget))
        s.add(_simplified(query[0], mul2concat=True), *query[1:])
        return s, swept

    how = solver
    # a min or max of a register with itself: the query by its NaN's cases, each swept
    # (`case_split.swept_by_cases`); where that decides nothing, the plain sweep
    cases = case_split.swept_by_cases(asked_whole, sides, swept_solver, how, limit) \
        if sweeping and emit is None else None
    if cases is not None:
        decision, solver, swept = cases.decision, cases.solver, cases.stats
    else:
        decision, (solver, swept) = None, swept_solver(asked_whole, sides, limit)
    if swept.witness and emit is None:
        decision = _at_inputs(solver, swept.witness, limit)
        if decision is None:
            # no difference there after all (the simulation's choice of an open value):
            # the sweep that the witness cut short runs whole
            solver, swept = swept_solver(asked_whole, sides, limit, until_witness=False)
    if decision is None:
        # split by a float's NaN where the plain query is slow (`case_split.py`)
        decision = case_split.check(solver, how, limit.rest(NICE_SECONDS), emit)
    rules = Counter(rule for rule, _, _ in swept.justified)
    result = decision.result
    uninterpreted = {**el.uninterpreted, **er.uninterpreted}

    def verdict(v: str, reason: str = "", cex: FunctionCounterexample | None = None,
                certified: Certified | None = None, up_to: bool = False):
        return FunctionVerdict(v, lhs.name, rhs.name, uninterpreted, cex, reason,
                               time.perf_counter() - start, unroll if asked or bounded else 0,
                               dict(rules) if v in ("equivalent", "bounded") else {},
                               certified, nan, up_to, bool(formats),
                               {"proved": swept.proved, "structural": swept.structural,
                                "by rule": len(swept.justified)})

    def payloads_may_differ() -> bool:
        """Proved payload-free: may a float-typed return still differ bit for bit? True
        unless a solver's unsat says no within observe.BIT_FOR_BIT_SECONDS (a timeout
        leaves the weaker claim, "up to NaN payloads")."""
        if nan == "exact" or not formats:
            return False
        left = _left(limit)
        seconds = min(left or observe.BIT_FOR_BIT_SECONDS, observe.BIT_FOR_BIT_SECONDS)
        s = _solver(seconds)
        s.add(defined, z3.Or(*[observe.payloads_only(a, b, formats.get(k))
                               for k, (a, b) in zip(points, pairs)]))
        return budgets.check(s, Budget(seconds)) != z3.unsat

    if result == z3.unknown:
        return verdict("unknown", decision.reason or "timeout")
    if result == z3.unsat:
        reached = {f"line {u.line} ({u.text}) is reached where {u.why}": None
                   for u in undefined if _check(timeout, u.when) != z3.unsat}
        if reached:
            return verdict("unknown", "they agree wherever both are defined, but "
                           + "; ".join(reached))
        beyond = {f"line {u.line} ({u.text})": None
                  for u in bounded if _check(timeout, u.when) != z3.unsat}
        if beyond and not asked:
            return verdict("unknown", f"equivalent up to {unroll} iterations of each loop "
                           f"(at {', '.join(beyond)}), not beyond; give --unroll K to "
                           "compare up to K" + (f"; {note}" if note else ""))
        if beyond:
            return verdict("bounded", f"loops that run more than {unroll} times "
                           f"(at {', '.join(beyond)}) are not compared"
                           + (f"; {note}" if note else ""), up_to=payloads_may_differ())
        up_to = payloads_may_differ()
        if certifying and swept.justified:
            certified = certify(swept.justified, max(_left(limit) or 0.0, CERTIFY_SECONDS))
            if certified.refuted:
                return verdict("unknown", "ptxsmt bug, please report: a solver refutes "
                               f"{len(certified.refuted)} merge(s) the sweep made by rule "
                               f"({', '.join(sorted(set(certified.refuted)))})",
                               certified=certified)
            if certified.undecided:
                return verdict("unknown", "equivalent if the sweep's merges by rule hold, "
                               f"but {len(certified.undecided)} of them were not re-proved "
                               "in time (--certify)", certified=certified)
            return verdict("equivalent", note, certified=certified, up_to=up_to)
        return verdict("equivalent", note, up_to=up_to)
    deadline = Budget.capped(timeout)
    zero = tuple(initial(s)[w] for s, w in witness.items())
    blockers = _blockers(pairs, points, formats, differ, nan)
    first = None
    for round_ in range(1, OPEN_ROUNDS + 1):
        model = prefer_nice(solver, el, er, zero=zero,
                            seconds=_nice_seconds(decision.solver, _left(deadline)),
                            start=decision.model) or decision.model
        first = model if first is None else first
        agreeing = _agreement(model, el, er, differ[:len(returns)], spaces, defined,
                              _left(deadline))
        if agreeing is None:
            cex = _replayed(partial(_replay, lhs, rhs, el, er, model, opts, rename, unroll,
                                    spaces, formats, nan), model)
            return verdict("different", cex=cex)
        if agreeing is AGREEMENT_UNKNOWN or round_ == OPEN_ROUNDS:
            break
        # the difference lay only in values the ISA leaves open: ask again with their
        # influence ruled out (`_blockers`, each in a scope of its own, dropped if it
        # leaves no model), then for one that also holds under the choice of them that
        # made the sides agree
        decision = _ask_again(solver, how, deadline, blockers, z3.Implies(
            defined, z3.Or(differ)), agreeing, el, er)
        if decision.result != z3.sat:
            break
    free = _free_names(_simplified(z3.Or(differ)), el, er)
    undecided = ("" if decision.result != z3.unknown and agreeing is not AGREEMENT_UNKNOWN
                 else " (asking for a difference outside them ran out of time)")
    if free and all(name in OPEN_NANS for name in free):
        if nan == "exact":
            replay = partial(_replay, lhs, rhs, el, er, first, opts, rename, unroll, spaces,
                             formats, nan, nan_payloads_only=True)
            try:
                cex = replay()
            except OpenDependence:  # a branch on them: under the model's choice of them
                cex = replay(choose=_chosen_by(first, made=False))
            return verdict("different", cex=cex)
        # "only" where no other difference is left; else it is what was found in time
        only = "" if not undecided else "; other differences were not ruled out" + undecided
        return verdict("unknown", "the functions differ in the bits of NaNs the PTX ISA "
                       "leaves open, observed as bits (memory, or a return stored with no "
                       "float type): " + ", ".join(free) + (only or ", and nowhere else")
                       + "; --nan exact reports it as different")
    return verdict("unknown", "the functions differ only through values ptxsmt leaves "
                   "free (results of uninterpreted instructions, NaNs the PTX ISA "
                   "leaves open, return bytes never written): "
                   + ", ".join(free or ["(none named)"]) + undecided)


CERTIFY_SECONDS = 30.0  # the least time `certifying` gets for its merges, past the limit


def _observed(el: FunctionEncoding, er: FunctionEncoding, key: str) -> FloatFormat | None:
    """A return value's float format where both functions store it only with that float
    type (`st.param.f32`), at offsets on its lanes, or store, each, the bits of a float of
    that format as a float instruction wrote them (`_computed_format`); else None: bits
    observed as bits."""
    sides = [enc.return_stores.get(key, []) for enc in (el, er)]
    if not all(sides):  # a side that never stores it itself (a callee's result, ...)
        return None
    fmt = observe.observed_format(*[t for stores in sides for _, t in stores]) or \
        _computed_format(el.returns[key], er.returns[key])
    width = min(el.returns[key].size(), er.returns[key].size())
    on_lanes = fmt is not None and width % fmt.width == 0 and \
        all(8 * offset % fmt.width == 0 for stores in sides for offset, _ in stores)
    return fmt if on_lanes else None


def _computed_format(a: z3.BitVecRef, b: z3.BitVecRef) -> FloatFormat | None:
    """The float format whose IEEE bits both returns are, lane by lane, as a float
    instruction writes its result (`sorts.ieee_result`: a float's bits, an open NaN where
    it is a NaN), a lane being else the same term on both sides (the bytes neither
    writes); None where no format is. LLVM 22 stores every float return with
    `st.param.b32`/`.b16` (its registers are untyped), llc-14 an f16 with `st.param.b16`
    into a `.b32` parameter: the value is still a float both functions computed, and is
    compared as one (Spec notes 14); a `.b` view that changes the bits (`and.b32`) is not
    such a value."""
    def computed(fmt: FloatFormat) -> bool:
        pairs = list(zip(observe.lanes(a, fmt), observe.lanes(b, fmt), strict=True))
        floats = [all(ieee_result(x, fp_sort(fmt)) is not None for x in xy) for xy in pairs]
        return any(floats) and all(is_float or x.eq(y)
                                   for is_float, (x, y) in zip(floats, pairs, strict=True))

    return next((f for f in FORMATS if a.size() == b.size() and a.size() % f.width == 0
                 and computed(f)), None)


def _blockers(pairs, points, formats, differ, nan) -> list[z3.BoolRef]:
    """Constraints that rule out the open values' influence, in the order tried: under
    --nan exact, a difference payload-free (no open NaN's bits at a float-typed return);
    then no open NaN taken at all (`sorts.open_nan_sites`)."""
    out = []
    if nan == "exact" and formats:
        out.append(z3.Or(*[observe.differ(a, b, formats.get(k), "payload-free")
                           for k, (a, b) in zip(points, pairs)]))
    if sites := open_nan_sites(z3.Or(differ)):
        out.append(z3.And(*[z3.Not(c) for c in sites]))
    return out


def _ask_again(solver: z3.Solver, how: str, deadline: Budget,
               blockers: list[z3.BoolRef], differs: z3.BoolRef, agreeing: z3.ModelRef,
               *encodings: FunctionEncoding) -> Decision:
    """The next model: under the next blocker that leaves one (kept in the solver's
    scope), else under the choice of open values `agreeing` made (`_under_choice`)."""
    while True:
        scoped = bool(blockers)
        if scoped:
            solver.push()
            solver.add(blockers.pop(0))
        else:
            solver.add(_under_choice(agreeing, differs, *encodings))
        decision = check_with(solver, how, deadline.rest(NICE_SECONDS))
        if decision.result == z3.sat or not scoped:
            return decision
        solver.pop()


OPEN_ROUNDS = 5  # models asked for, while each differs only through open values
AGREEMENT_UNKNOWN = object()  # `_agreement` could not tell (a timeout)
AGREEMENT_FAST_SHARE = 0.25  # of `_agreement`'s time, bitwuzla's (before z3's)


def _left(budget: Budget | None) -> float | None:
    """The CPU seconds left of `budget`, at least NICE_SECONDS (None: no limit)."""
    left = None if budget is None else budget.left()
    return None if left is None else max(NICE_SECONDS, left)


def _nice_seconds(winner: str, left: float | None) -> float | None:
    """Models are for people, but the time is the verdict's: half of what is left (at
    least a few seconds), or a few seconds when another solver won (z3 may find the
    query hard). None: no limit."""
    if winner != "z3":
        return 4 * NICE_SECONDS
    return None if left is None else max(4 * NICE_SECONDS, left / 2)


# z3.simplify rewrites the query as a DAG, in steps: one past this many is left as built
# (the solver's own preprocessing simplifies it again), so that no query waits on it long
SIMPLIFY_STEPS = 2_000_000


def _simplified(term: z3.BoolRef, **params) -> z3.BoolRef:
    """`term` simplified (`params`: z3.simplify's, e.g. mul2concat) within
    SIMPLIFY_STEPS rewriting steps, else as it is."""
    try:
        return z3.simplify(term, max_steps=SIMPLIFY_STEPS, **params)
    except z3.Z3Exception as e:
        if "max. steps" not in str(e):
            raise
        return term


def _at_inputs(solver: z3.Solver, inputs: list[tuple[z3.ExprRef, z3.ExprRef]],
               deadline: Budget | None) -> Decision | None:
    """A model of the query `solver` holds with each input fixed to its value (those of a
    simulated vector on which the two sides differ: `fraig.SweepStats.witness`; the
    free functions' applications too, as the simulation took them). The
    query is first rewritten with the inputs' values (z3's rewriter computes the
    floating-point operations on constants, which its solver would bit-blast), then
    asked within AT_INPUTS_SECONDS. None where there is no model (the simulation's
    choice of a value SMT-LIB leaves open; a timeout): the query is then decided whole."""
    fixed = [_simplified(z3.substitute(a, *inputs)) for a in solver.assertions()]
    left = _left(deadline)
    seconds = min(AT_INPUTS_SECONDS, left or AT_INPUTS_SECONDS)
    small = _solver(seconds)
    # an application pinned over its arguments' values, not over the terms that compute
    # them (the whole cone below it, for z3 to bit-blast)
    plain = [(c, v) for c, v in inputs if c.num_args() == 0]
    small.add(*fixed, *[(_simplified(z3.substitute(c, *plain)) if c.num_args() else c) == v
                        for c, v in inputs])
    if budgets.check(small, Budget(seconds)) != z3.sat:
        return None
    # "simulation": a model z3 may find hard to make nice over the whole query
    return Decision(z3.sat, "simulation", model=small.model())


AT_INPUTS_SECONDS = 10.0


def _check(seconds: float | None, *assertions: z3.BoolRef) -> z3.CheckSatResult:
    """A fresh z3's answer on `assertions` within `seconds` of CPU time."""
    solver = z3.Solver()
    solver.add(*assertions)
    return budgets.check(solver, Budget(seconds))


def _solver(timeout: float | None) -> z3.Solver:
    solver = z3.Solver()
    if timeout:
        solver.set("timeout", max(1, int(timeout * 1000)))
    return solver


def _agreement(model: z3.ModelRef, el: FunctionEncoding, er: FunctionEncoding,
               differ: list[z3.BoolRef], spaces: list[str], defined: z3.BoolRef,
               timeout: float | None) -> z3.ModelRef | None | object:
    """None when, on the model's inputs and initial memory, the functions differ (a
    return value, `differ` under the NaN policy; memory) for every choice of what ptxsmt leaves
    free (the results of uninterpreted instructions, with congruence; the NaNs the ISA
    leaves open; return bytes neither writes): the model is a counterexample. Otherwise
    a choice of those values under which they agree there (a z3 model), or
    AGREEMENT_UNKNOWN if z3 could not tell."""
    # the inputs' values substituted and folded (not assumed): what is left is small
    values = [(c, model.eval(c, model_completion=True))
              for c in (*{**el.inputs, **er.inputs}.values(), *{**el.memory, **er.memory}.values())]
    same = [z3.Not(d) for d in differ] + [_final(el, s) == _final(er, s) for s in spaces]
    agree = z3.And(*same, defined)
    # whether ptxas fused a mul and an add (sem/contraction.py) is the hardware's to
    # choose, not a free value to agree under: each such choice as the model made it
    choices = [(t, model.eval(t, model_completion=True)) for t in subterms(agree)
               if is_choice(t)]
    query = z3.simplify(z3.substitute(z3.substitute(agree, *choices) if choices else agree,
                                      *values))
    # bitwuzla first, for an unsat (a model of the choice is z3's): over the open NaNs'
    # bits through integer products and conversions it is unsat in 0.2 s where z3 ran
    # past 100 s (mixed-100-llc14-0-planted)
    fast = None if timeout is None else timeout * AGREEMENT_FAST_SHARE
    if solve_here([query], fast).result == "unsat":
        return None
    solver = _solver(timeout)
    solver.add(query)
    result = budgets.check(solver, Budget(timeout))
    if result == z3.unsat:
        return None
    return solver.model() if result == z3.sat else AGREEMENT_UNKNOWN


def _under_choice(choice: z3.ModelRef, term: z3.BoolRef,
                  *encodings: FunctionEncoding) -> z3.BoolRef:
    """`term` with each free value (an uninterpreted function or constant other than
    an input) as `choice` took it: at the arguments its applications had there, the
    value `choice` gave them; elsewhere the first of those values. Every
    counterexample that holds for all choices holds under this one, and the model
    `choice` agreed on does not."""
    inputs = {c.decl().name() for enc in encodings
              for c in (*enc.inputs.values(), *enc.memory.values())}
    apps: dict[z3.FuncDeclRef, list[z3.ExprRef]] = {}
    for t in subterms(term):
        if walk.is_free(t) and \
                t.decl().name() not in inputs and not t.decl().name().endswith(".address"):
            apps.setdefault(t.decl(), []).append(t)
    constants, functions = [], []
    for f, uses in apps.items():
        if f.arity() == 0:
            constants.append((f(), choice.eval(f(), model_completion=True)))
            continue
        params = [z3.Var(i, f.domain(i)) for i in range(f.arity())]
        points = [([choice.eval(a, model_completion=True) for a in u.children()],
                   choice.eval(u, model_completion=True)) for u in uses]
        body = points[0][1]
        for args, value in reversed(points):
            body = z3.If(z3.And(*[p == a for p, a in zip(params, args)]), value, body)
        functions.append((f, body))
    out = z3.substitute(term, *constants) if constants else term
    return z3.substitute_funs(out, *functions) if functions else out


def _free_names(term: z3.ExprRef, *encodings: FunctionEncoding) -> list[str]:
    """The uninterpreted functions and free values a term holds, other than inputs."""
    inputs = {c.decl().name() for enc in encodings
              for c in (*enc.inputs.values(), *enc.memory.values())}
    return sorted({t.decl().name() for t in walk.subterms(term) if walk.is_free(t) and
                   t.decl().name() not in inputs and not t.decl().name().endswith(".address")})


def _final(enc: FunctionEncoding, space: str) -> z3.ArrayRef:
    return enc.final.get(space, initial(space))


BUFFER = 0x10000  # where prefer_nice puts the k-th pointer: k * BUFFER
WINDOW = 1 << 40  # and the k-th window of the generic space


def prefer_nice(solver: z3.Solver, *encodings: FunctionEncoding,
                zero: tuple[z3.BitVecRef, ...] = (), seconds: float | None = None,
                start: z3.ModelRef | None = None) -> z3.ModelRef | None:
    """Fix each input, in order, to the nicest value that keeps the solver's
    constraints: models are for people. A 64-bit parameter or a variable's address is
    first tried as a buffer of its own (0x10000, 0x20000, ...: aligned for every type,
    none aliasing another), other scalars as 0, 1, -1, ...; then each word of initial
    memory a load reads or a store overwrites as 0, else 1, and each term of `zero` as 0.
    Within `seconds` in all (None: each check under the solver's own limit). Once a
    check runs out of time, the steps are local: the inputs other than the one tried
    keep the last model's (first `start`'s) values, so z3 only propagates. Returns the
    nicest model found (None if no check succeeded), and leaves it in `solver`."""
    fixed: list[z3.BoolRef] = []
    found: list[z3.ModelRef] = []
    deadline = None if seconds is None else time.perf_counter() + seconds
    inputs = {k: c for enc in encodings for k, c in enc.inputs.items()}
    local = False

    def sat(*eqs: z3.BoolRef, trying: z3.ExprRef | None = None) -> bool:
        nonlocal local
        if deadline is not None:  # each check a quarter of the time at most
            left = min(deadline - time.perf_counter(), max(NICE_SECONDS, seconds / 4))
            if left <= 0:
                return False
            solver.set("timeout", max(1, int(left * 1000)))
        last = found[-1] if found else start
        pins = [c == last.eval(c, model_completion=True) for c in inputs.values()
                if trying is None or not c.eq(trying)] if local else []
        result = check(solver, *fixed, *pins, *eqs)
        if result == z3.unknown and not local and last is not None:
            local = True
            return sat(*eqs, trying=trying)
        if result != z3.sat:
            return False
        found.append(solver.model())
        return True

    def keep(eq: z3.BoolRef, trying: z3.ExprRef | None = None) -> bool:
        if sat(eq, trying=trying):
            fixed.append(eq)
            return True
        return False

    types = {k: t for enc in encodings for k, t in enc.types.items()}
    origins = {k: o for enc in encodings for k, o in enc.origins.items()}
    buffers, windows = count(BUFFER, BUFFER), count(WINDOW, WINDOW)
    for name, const in inputs.items():
        wide = not z3.is_bool(const) and const.size() == 64
        pointer = wide and origins[name].startswith(("parameter", "the address of a variable"))
        window = wide and name.startswith("window.")
        values = ([next(buffers)] if pointer else [next(windows)] if window else []) + \
            nice_values(types[name])[:4]
        for value in values:
            if keep(const == (z3.BoolVal(bool(value)) if z3.is_bool(const)
                              else z3.BitVecVal(value, const.size())), const):
                break
    if found or sat():
        model = found[-1]
        for enc in encodings:
            for a in (*enc.loads, *enc.stores):  # a stored word's bytes before it too
                if z3.is_true(model.eval(a.when, model_completion=True)):
                    word = load(enc.memory[a.space], model.eval(a.address, model_completion=True),
                                a.type.width)
                    _ = keep(word == 0) or keep(word == 1)
    for term in zero:
        keep(term == 0)
    sat()  # the nicest model left in `solver` too (function_vectors reads it there)
    return found[-1] if found else None


def _replayed(replay: Callable[..., FunctionCounterexample],
              model: z3.ModelRef) -> FunctionCounterexample:
    """`replay` (`_replay` of `model`, on which the functions differ for every choice of
    the values the ISA leaves open: `_agreement`) with them left open; where every output
    that differs is computed from them (unspecified to the evaluator: a NaN's bits
    returned as .b32) or a branch or an address is (no run exists until they are
    chosen), under one choice of them, which the counterexample names: each open NaN as
    the NaN an H200 makes, else (that choice reaches what ptxsmt assumes away) each open
    value as the model took it, on which the query itself differs."""
    try:
        return replay()
    except (ReplayError, OpenDependence):
        pass
    try:
        return replay(choose=_chosen_by(model, made=True))
    except (ReplayError, PtxError):
        return replay(choose=_chosen_by(model, made=False))


def _chosen_by(model: z3.ModelRef, made: bool) -> Choose:
    """Each open value as `model` took it, an open NaN as the NaN its bits stand for
    (`free_nan` reads bits that are no NaN of its format as the canonical NaN); with
    `made`, each open NaN as the NaN an H200 makes instead (`hardware.made_nan`)."""
    def choose(app: z3.ExprRef) -> z3.ExprRef:
        if made and (nan := made_nan(app)) is not None:
            return nan
        value = model.eval(app, model_completion=True)
        fmt = OPEN_NANS.get(app.decl().name())
        if fmt is None or fp_class(value.as_long(), fmt).endswith("NaN"):
            return value
        return z3.BitVecVal(canonical_nan(fmt), fmt.width)
    return choose


def _replay(lhs: Function, rhs: Function, el: FunctionEncoding, er: FunctionEncoding,
            model: z3.ModelRef, opts: Options,
            rename: dict[str, str], unroll: int, spaces: list[str],
            formats: dict[str, FloatFormat], nan: str,
            nan_payloads_only: bool = False, choose: Choose | None = None
            ) -> FunctionCounterexample:
    """Both functions evaluated on the model's inputs and memory (`_evaluated`), the
    values the ISA leaves open as `choose` takes them (None: left open)."""
    def value(term: z3.ExprRef) -> Value:
        v = model.eval(term, model_completion=True)
        return z3.is_true(v) if z3.is_bool(v) else v.as_long()

    inputs = {k: value(c) for k, c in {**el.inputs, **er.inputs}.items()}

    def locations(accesses) -> list[Location]:
        return [Location(a.space, value(a.address), a.type) for a in accesses if value(a.when)]

    memory = {loc: value(load(initial(loc.space), memory_at(loc.space, loc.address),
                              loc.type.width))
              for loc in dict.fromkeys([*locations(el.loads), *locations(er.loads)])}
    # both sides report every location either side wrote (a byte that ends differently
    # is one of them), and start from the model's bytes there
    watch = list(dict.fromkeys([*locations(el.stores), *locations(er.stores)]))
    for loc in watch:
        if not all(any(_covers(m, Location(loc.space, loc.address + k, TYPES["b8"]))
                       for m in memory) for k in range(loc.type.width // 8)):
            memory[loc] = value(load(initial(loc.space), memory_at(loc.space, loc.address),
                                     loc.type.width))
    # the rhs replays under its own names (`--function-b`): its reproduce line runs as shown
    own = {ll: r for r, ll in rename.items()}
    scalars = []
    for fn, enc, names in ((lhs, el, {}), (rhs, er, own)):
        declared = {p.name: param_type(p).width for p in fn.params}
        scalars.append({(n := names.get(k, k)): v % (1 << declared[n]) if n in declared else v
                        for k, v in inputs.items() if k in enc.inputs}
                       | {k: value(t) for k, t in enc.opaque.items()})
    return _evaluated(lhs, rhs, inputs, scalars, memory, watch, opts, rename, unroll, spaces,
                      formats, nan, nan_payloads_only, choose)


def replay_counterexample(lhs: Function, rhs: Function, scalars: list[dict[str, Value]],
                          memory: dict[Location, Value], watch: list[Location],
                          opts: Options = DEFAULT, unroll: int = 0,
                          nan_payloads_only: bool = False) -> FunctionCounterexample:
    """A counterexample kept from an earlier run (an `equiv --batch` cache entry) run
    again: each side on its own scalar inputs (the open values it took among them:
    `open[...]`) and the initial memory, its `watch`ed locations reported; ReplayError
    where the sides agree, as for a solver's model (bit for bit; two open values differ
    where it differed `nan_payloads_only`)."""
    return _evaluated(lhs, rhs, {}, scalars, memory, watch, opts, _renaming(lhs, rhs)[0],
                      unroll or DEFAULT_UNROLL, list(observable(lhs.kind, rhs.kind)),
                      nan_payloads_only=nan_payloads_only)


def _evaluated(lhs: Function, rhs: Function, inputs: dict[str, Value],
               scalars: list[dict[str, Value]], memory: dict[Location, Value],
               watch: list[Location], opts: Options, rename: dict[str, str], unroll: int,
               spaces: list[str], formats: dict[str, FloatFormat] | None = None,
               nan: str = "exact", nan_payloads_only: bool = False,
               choose: Choose | None = None) -> FunctionCounterexample:
    """Both sides run, the open values as `choose` takes them (one choice for both); they
    must differ on a return value (under the NaN policy `nan` where `formats` makes it
    float-typed, else bit for bit; on the bytes written, where some never are) or a
    location. `nan_payloads_only`: the difference runs through open NaNs, so two
    unspecified values count as differing."""
    formats = formats or {}
    own = {ll: r for r, ll in rename.items()}
    given = {f"{loc}.{loc.type.name}": v for loc, v in memory.items()}
    sides = [evaluate_function(fn, {**own, **given}, opts, watch, unroll, choose)
             for fn, own in zip((lhs, rhs), scalars)]
    rhs_returns = {rename.get(k, k): (v, sides[1].types[k]) for k, v in sides[1].returns.items()}

    def differs(k: str) -> bool:  # on the bytes both declare
        (a, ta), (b, tb) = (sides[0].returns[k], sides[0].types[k]), rhs_returns[k]
        low = (1 << min(ta.width, tb.width)) - 1
        if isinstance(a, int) and isinstance(b, int):
            return observe.values_differ(a & low, b & low, formats.get(k), nan)
        if nan_payloads_only and UNSPECIFIED in (a, b):
            return True
        # a return whose bytes are partly never written: the written ones
        (x, mx), (y, my) = (sides[0].settled.get(k, (a, low)),
                            sides[1].settled.get(own.get(k, k), (b, low)))
        if isinstance(x, int) and isinstance(y, int):
            # bits open on one side only (a fused-or-not choice: sem/contraction.py) where
            # the other's are fixed differ too: the model showed a difference for every
            # choice of the free values, with the hardware's choices as it made them
            return ((x ^ y) & mx & my | (mx ^ my)) & low != 0
        return a != b

    differ = tuple(dict.fromkeys(
        [k for k in sides[0].returns if k in rhs_returns and differs(k)]
        + [str(loc) for loc in _differing_locations(*sides, spaces, nan_payloads_only)]))
    if not differ:
        raise ReplayError(f"counterexample {inputs or scalars} {memory} does not replay: both "
                          "functions give the same returns and memory"
                          + (" under the open values chosen" if choose else ""))
    chosen = tuple(dict.fromkeys([*sides[0].chosen, *sides[1].chosen]))
    return FunctionCounterexample(inputs, memory, *sides, differ, nan_payloads_only, chosen)


def _covers(loc: Location, byte: Location) -> bool:
    return loc.space == byte.space and 0 <= byte.address - loc.address < loc.type.width // 8


def _differing_locations(lhs: FunctionEvaluation, rhs: FunctionEvaluation,
                         spaces: list[str], open_differ: bool = False) -> list[Location]:
    """Written bytes that end differently: each side's locations, compared byte by byte
    (a .u32 store on one side may be four .u8 stores on the other). A value the ISA
    leaves open (a NaN whose bits are the hardware's) against a value that is not open
    differs as a whole, as a return does; two open ones where `open_differ`."""
    def bytes_of(ev: FunctionEvaluation) -> dict[tuple[str, int], int]:
        return {(loc.space, loc.address + k): (v >> (8 * k)) & 0xFF
                for loc, v in ev.stores.items() if v is not UNSPECIFIED
                for k in range(loc.type.width // 8)}

    a, b = bytes_of(lhs), bytes_of(rhs)
    bad = {key for key in a.keys() & b.keys() if a[key] != b[key] and key[0] in spaces}
    locations = list(dict.fromkeys([*lhs.stores, *rhs.stores]))
    return [loc for loc in locations
            if any((loc.space, loc.address + k) in bad for k in range(loc.type.width // 8))
            or (loc.space in spaces and loc in lhs.stores and loc in rhs.stores
                and ((lhs.stores[loc] is UNSPECIFIED) != (rhs.stores[loc] is UNSPECIFIED)
                     or open_differ and UNSPECIFIED in (lhs.stores[loc], rhs.stores[loc])))]
