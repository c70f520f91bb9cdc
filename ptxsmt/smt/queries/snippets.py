"""Equivalence queries: Proved | Refuted (with a Counterexample) | Unknown.

Both snippets are encoded over the same free registers (a register read by
both is one input). A counterexample is minimised toward values people
recognise, then replayed through the evaluator before anyone sees it: a
failed replay is a bug in ptxsmt and raises, it never becomes a verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import z3

from ...eval.evaluate import evaluate
from ...eval.values import UNSPECIFIED, Evaluation, Value
from ...isa.literals import canonical_nan
from ...isa.syntax import PtxError
from ...isa.types import FloatFormat, Kind, PtxType, bit_type
from ...isa.variants import operand_types
from ...program import Program
from ...sem.hardware import made_nan
from ...sem.observe import (
    BIT_FOR_BIT_SECONDS,
    differ,
    observed_format,
    payloads_only,
    values_differ,
)
from ...sem.options import DEFAULT, DEFAULT_NAN, Options
from ...sem.sorts import OPEN_NANS, Choose, open_nan_sites
from ...sem.unspecified import OpenValue
from ...solver import check
from ...terms.walk import free_applications
from ..solving import decide as core
from ..solving import smt2

NICE_SECONDS = 1.0  # z3's time to make another solver's counterexample nice

class ReplayError(RuntimeError):
    """A model the solver produced does not reproduce under evaluation: a ptxsmt bug."""


@dataclass(frozen=True)
class Counterexample:
    inputs: dict[str, Value]
    lhs: dict[str, Value]
    rhs: dict[str, Value]
    types: dict[str, PtxType] = field(compare=False)
    differ: tuple[str, ...] = ()  # the outputs that differ
    # they differ only in the bits of NaNs the ISA leaves open (any NaN may be chosen)
    nan_payloads_only: bool = False
    # each side's open values as the replay took them: the sides differ for every choice
    # of them, and the evaluator shows it under this one (empty: left open)
    chosen: tuple[tuple[OpenValue, ...], tuple[OpenValue, ...]] = ((), ())


@dataclass(frozen=True)
class Verdict:
    verdict: str  # "equivalent" | "different" | "unknown"
    outputs: tuple[str, ...]
    counterexample: Counterexample | None = None
    reason: str = ""
    seconds: float = 0.0
    solver_seconds: float = 0.0
    nan: str = DEFAULT_NAN  # the NaN policy compared under (sem.observe)
    up_to_nan_payloads: bool = False  # equivalent payload-free, not proved bit for bit
    float_outputs: bool = False  # some output is float-typed: the policy matters


@dataclass(frozen=True)
class Query:
    """Two snippets over shared inputs, and the outputs compared."""

    lhs: Program
    rhs: Program
    lhs_text: str
    rhs_text: str
    outputs: tuple[str, ...]
    types: dict[str, PtxType]
    inputs: dict[str, z3.ExprRef]
    differ: z3.BoolRef
    lhs_opts: Options = DEFAULT
    rhs_opts: Options = DEFAULT
    build_seconds: float = 0.0  # a verdict's seconds include the time building took
    nan: str = DEFAULT_NAN
    differs: dict[str, z3.BoolRef] = field(default_factory=dict)  # per output, under `nan`
    formats: dict[str, FloatFormat] = field(default_factory=dict)  # the float-typed outputs
    # per float-typed output: the sides differ only in which NaN they are; they differ
    # payload-free
    payloads: dict[str, z3.BoolRef] = field(default_factory=dict)
    payload_free: dict[str, z3.BoolRef] = field(default_factory=dict)

    def solver(self, timeout: float | None) -> z3.Solver:
        return core.Query((self.differ,), timeout=timeout or None, logic="QF_BVFP").solver()

    def smt2(self) -> str:
        """The query in standard SMT-LIB 2, QF_BVFP: only Bool and bit-vector constants
        are declared, and no operator is Z3's own."""
        return smt2.script(smt2.ackermann(smt2.no_unary(self.differ)), [
            "ptxsmt equivalence query: sat means the snippets differ",
            f"lhs: {' '.join(self.lhs_text.split())}",
            f"rhs: {' '.join(self.rhs_text.split())}",
            f"outputs: {', '.join(self.outputs)}",
            f"NaNs: {self.nan} (docs/spec-notes.md, note 14)",
        ])


def build_query(lhs_text: str, rhs_text: str, outputs: Sequence[str] | None = None,
                opts: Options = DEFAULT, rhs_opts: Options | None = None,
                nan: str = DEFAULT_NAN) -> Query:
    """`rhs_opts` lets the two sides read the ISA differently (e.g. vset merge c vs b);
    `nan`: the NaN policy at float-typed outputs (`sem.observe`)."""
    start = time.perf_counter()
    rhs_opts = rhs_opts or opts
    lhs, rhs = Program.parse(lhs_text), Program.parse(rhs_text)
    types = dict(lhs.types)
    for name, t in rhs.types.items():
        if name in types and (types[name].width, types[name].kind is Kind.PRED) != (
                t.width, t.kind is Kind.PRED):
            raise PtxError(f"register {name} is .{types[name].name} in the first snippet "
                           f"and .{t.name} in the second")
        types.setdefault(name, t)
    outs = _compared_outputs(lhs, rhs, outputs)
    el, er = lhs.encode(opts), rhs.encode(rhs_opts)
    written = (_written_types(lhs), _written_types(rhs))
    formats = {o: observed_format(lhs.types[o], rhs.types[o], *(w[o] for w in written))
               for o in outs}
    differs = {o: differ(el.outputs[o], er.outputs[o], formats[o], nan) for o in outs}
    formats = {o: f for o, f in formats.items() if f is not None}
    payloads = {o: payloads_only(el.outputs[o], er.outputs[o], f) for o, f in formats.items()}
    payload_free = {o: differ(el.outputs[o], er.outputs[o], f, "payload-free")
                    for o, f in formats.items()}
    return Query(lhs, rhs, lhs_text, rhs_text, outs, types, {**el.inputs, **er.inputs},
                 z3.Or(*differs.values()), opts, rhs_opts, time.perf_counter() - start, nan,
                 differs, formats, payloads, payload_free)


def _written_types(p: Program) -> dict[str, PtxType]:
    """Each register's type as the last instruction that writes it writes it (an
    element of a vector destination: bits)."""
    out: dict[str, PtxType] = {}
    for ins in p.instructions:
        slots = operand_types(ins.variant)
        for slot, o in ins.destinations.items():
            t = bit_type(slots[slot].width // len(o.elements)) if o.kind == "vec" \
                else slots[slot]
            out.update(dict.fromkeys(o.registers, t))
    return out


def _compared_outputs(lhs: Program, rhs: Program,
                      outputs: Sequence[str] | None) -> tuple[str, ...]:
    """The outputs named, each written by both sides; by default every register both
    write, in the first snippet's order. Sets, not the lists: a chain writes thousands."""
    written = {"first": set(lhs.written), "second": set(rhs.written)}
    if outputs:
        outs = tuple(o.strip().lstrip("%") for o in outputs)
        for o in outs:
            for side in written:
                if o not in written[side]:
                    raise PtxError(f"output {o} is not written by the {side} snippet")
        return outs
    outs = tuple(o for o in lhs.written if o in written["second"])
    if not outs:
        raise PtxError("the snippets write no register in common (name them with --outputs)")
    return outs


def check_equivalence(lhs_text: str, rhs_text: str, outputs: Sequence[str] | None = None,
                      timeout: float | None = 30.0, opts: Options = DEFAULT,
                      minimise: bool = True, rhs_opts: Options | None = None,
                      solver: str = "z3", nan: str = DEFAULT_NAN) -> Verdict:
    return decide(build_query(lhs_text, rhs_text, outputs, opts, rhs_opts, nan), timeout,
                  minimise, solver)


def decide(q: Query, timeout: float | None = 30.0, minimise: bool = True,
           solver: str = "z3") -> Verdict:
    """The verdict on a built query: a caller that also needs the query (its SMT-LIB
    text, its class report) builds it once. `solver`: as `check_with`'s `how`.
    "different" comes with a counterexample that differs for every choice of the values
    the ISA leaves open where one exists (`_definite`); one that differs only in which
    open NaNs are chosen is "different" under --nan exact (`nan_payloads_only`), and
    "unknown" under payload-free (bits observed as bits: no float to compare)."""
    start = time.perf_counter() - q.build_seconds
    how, solver = solver, q.solver(timeout)
    t0 = time.perf_counter()
    decision = core.check_with(solver, how, timeout)
    solver_time = time.perf_counter() - t0
    deadline = None if timeout is None else t0 + timeout

    def left() -> float | None:  # what the verdict's limit leaves, at least NICE_SECONDS
        return None if deadline is None else max(NICE_SECONDS, deadline - time.perf_counter())

    def verdict(v: str, cex: Counterexample | None = None, **fields) -> Verdict:
        return Verdict(v, q.outputs, cex, seconds=time.perf_counter() - start,
                       solver_seconds=solver_time + fields.pop("extra", 0.0), nan=q.nan,
                       float_outputs=bool(q.payloads), **fields)

    if decision.result == z3.unsat:
        return verdict("equivalent", up_to_nan_payloads=_payloads_may_differ(q, left()))
    if decision.result == z3.unknown:
        return verdict("unknown", reason=decision.reason)
    t0 = time.perf_counter()
    values, blocked = _model_values(decision.model, q), []
    definite = _definite(q, values, left())
    if not definite:
        found = _definite_elsewhere(q, how, left)
        if found is not None:
            (values, blocked), definite = found, True
        elif _through_open_nans_only(q):
            if q.nan != "exact":
                return verdict("unknown", extra=time.perf_counter() - t0, reason=(
                    "the outputs differ only in the bits of NaNs the PTX ISA leaves open, "
                    "observed as bits (no float-typed output compares them payload-free); "
                    "--nan exact reports it as different"))
            if minimise:
                values = _minimise(q, values, min(left() or NICE_SECONDS, NICE_SECONDS))
            return verdict("different", replay(q, values, open_differ=True,
                                               nan_payloads_only=True),
                           extra=time.perf_counter() - t0)
    if minimise:  # another solver won: z3 may find the query hard, nice values briefly
        nice = _minimise(q, values, timeout if decision.solver == "z3"
                         else min(timeout or NICE_SECONDS, NICE_SECONDS), blocked)
        values = nice if not definite or _definite(q, nice, left()) else values
    solver_time += time.perf_counter() - t0
    # not definite: through another open value (a `div` by zero), shown unspecified
    return verdict("different", replay(q, values, open_differ=not definite))


def _payloads_may_differ(q: Query, timeout: float | None) -> bool:
    """Proved payload-free: may a float-typed output still differ in which NaN it is
    (bit for bit)? True unless a solver's unsat says no (a timeout leaves the weaker
    claim standing: "equivalent up to NaN payloads")."""
    if q.nan == "exact" or not q.payloads:
        return False
    s = z3.SolverFor("QF_BVFP")
    seconds = min(timeout or BIT_FOR_BIT_SECONDS, BIT_FOR_BIT_SECONDS)
    s.set("timeout", max(1, int(seconds * 1000)))
    s.add(z3.Or(*q.payloads.values()))
    return check(s) != z3.unsat


def _fixed(q: Query, values: dict[str, Value], term: z3.BoolRef) -> z3.BoolRef:
    pins = [(c, _const(values[n], q.types[n])) for n, c in q.inputs.items() if n in values]
    return z3.simplify(z3.substitute(term, *pins)) if pins else term


def _definite(q: Query, values: dict[str, Value], timeout: float | None) -> bool:
    """On these inputs the sides differ whatever the values the ISA leaves open are
    (no choice of them makes every output agree): a solver's unsat says so."""
    s = z3.SolverFor("QF_BVFP")
    if timeout:
        s.set("timeout", max(1, int(timeout * 1000)))
    s.add(z3.Not(_fixed(q, values, q.differ)))
    return check(s) == z3.unsat


def _definite_elsewhere(q: Query, how: str, left: Callable[[], float | None]
                        ) -> tuple[dict[str, Value], list[z3.BoolRef]] | None:
    """The model ran through an open value: ask again with its influence ruled out, in
    a fixed order, a bounded number of times: first for a payload-free difference (no
    open NaN's bits at a float-typed output; under --nan exact, where that is not the
    query already), then for one with no open NaN taken at all. Each is a query of its
    own (the first one is the payload-free query, which the solver compares as floats).
    The inputs of the first definite model and the query that found it; None if none."""
    queries = [z3.Or(*[d for o, d in q.differs.items() if o not in q.formats],
                     *q.payload_free.values())] if q.nan == "exact" and q.formats else []
    if sites := open_nan_sites(q.differ):
        queries.append(z3.And(q.differ, *[z3.Not(c) for c in sites]))
    for query in queries:
        solver = z3.SolverFor("QF_BVFP")
        if (timeout := left()) is not None:
            solver.set("timeout", max(1, int(timeout * 1000)))
        solver.add(query)
        d = core.check_with(solver, how, timeout)
        if d.result == z3.sat and _definite(q, values := _model_values(d.model, q), left()):
            return values, [query]
    return None


def _through_open_nans_only(q: Query) -> bool:
    """The comparison holds values the ISA leaves open, and every one is a NaN (no `div`
    by zero, no bit field past 256, ...)."""
    names = {f.decl().name() for f in free_applications(q.differ)}
    return bool(names) and names <= OPEN_NANS.keys()


def replay(q: Query, values: dict[str, Value], open_differ: bool = False,
           nan_payloads_only: bool = False) -> Counterexample:
    """Evaluate both sides on the model's inputs; they must differ on a compared output
    under the query's NaN policy. An output the ISA leaves open (any NaN) against a
    definite value differs (the query proved it differs for every choice); two open
    outputs differ where the difference runs through open values (`open_differ`: the
    solver found a choice of them under which the sides disagree, and the hardware may
    make it). Where the sides differ for every choice of the open values (not
    `open_differ`) but every output that differs is computed from them (a NaN's bits as
    .b32: unspecified on both sides), both are evaluated again with each open NaN as an
    H200 makes it (`hardware.made_nan`); the counterexample names the choice."""
    def run(choose: Choose | None) -> tuple[Evaluation, Evaluation, tuple[str, ...]]:
        lhs, rhs = (evaluate(text, {k: v for k, v in values.items() if k in side.types}, opts,
                             unspecified_ok=True, choose=choose)
                    for text, side, opts in ((q.lhs_text, q.lhs, q.lhs_opts),
                                             (q.rhs_text, q.rhs, q.rhs_opts)))

        def differs(o: str) -> bool:
            a, b = lhs.outputs[o], rhs.outputs[o]
            if a is UNSPECIFIED or b is UNSPECIFIED:
                return open_differ or (a is UNSPECIFIED) != (b is UNSPECIFIED)
            return values_differ(int(a), int(b), q.formats.get(o), q.nan)

        return lhs, rhs, tuple(o for o in q.outputs if differs(o))

    lhs, rhs, differ_at = run(None)
    if not differ_at and not open_differ:
        # every output that differs is computed from open values (a NaN's bits as .b32),
        # unspecified to the evaluator, though the sides differ for every choice of them
        lhs, rhs, differ_at = run(made_nan)
    if not differ_at:
        raise ReplayError(f"counterexample {values} does not replay: both sides give "
                          f"{ {o: lhs.outputs[o] for o in q.outputs} }")
    return Counterexample(values, lhs.outputs, rhs.outputs, q.types, differ_at,
                          nan_payloads_only, (lhs.chosen, rhs.chosen))


def _model_values(model: z3.ModelRef, q: Query) -> dict[str, Value]:
    out: dict[str, Value] = {}
    for name, const in q.inputs.items():
        v = model.eval(const, model_completion=True)
        out[name] = z3.is_true(v) if z3.is_bool(v) else v.as_long()
    return out


def nice_values(t: PtxType) -> list[Value]:
    """Values people recognise, most recognisable first."""
    if t.kind is Kind.PRED:
        return [False, True]
    w = t.width
    ones = (1 << w) - 1
    if t.is_float and not t.is_packed:
        f = t.fmt
        sign = 1 << (w - 1)
        one = ((1 << (f.ebits - 1)) - 1) << (f.sbits - 1)
        inf = ((1 << f.ebits) - 1) << (f.sbits - 1)
        two = one + (1 << (f.sbits - 1))
        return [0, one, sign | one, sign, inf, sign | inf, canonical_nan(f), two, 1, sign | 1,
                inf - 1, sign | (inf - 1), (1 << (f.sbits - 1)) - 1, 1 << (f.sbits - 1)]
    if t.is_packed:
        lanes = nice_values(t.lane)
        return [lo | (hi << t.lane_width) for hi in lanes[:7] for lo in lanes[:7]]
    return [0, 1, ones, 2, ones - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 3, 0x7F, 0x80, 0xFF]


def _minimise(q: Query, values: dict[str, Value], timeout: float | None,
              blocked: Sequence[z3.BoolRef] = ()) -> dict[str, Value]:
    """Greedily fix each input, in order, to the nicest value that still leaves a
    difference; inputs with no nice value stay free for the solver. One check per input
    would be quadratic on a long chain (each check is over the whole query), so runs of
    inputs that all keep their nicest value are found with a few checks each."""
    solver = q.solver(timeout)
    solver.add(*blocked)
    inputs = list(q.inputs.items())
    nicest = [const == _const(nice_values(q.types[name])[0], q.types[name])
              for name, const in inputs]
    fixed: list[z3.BoolRef] = []
    i = 0
    while i < len(inputs):
        run = _longest_sat_prefix(solver, fixed, nicest[i:])
        fixed += nicest[i:i + run]
        i += run
        if i < len(inputs):  # the nicest value of input i leaves no difference
            name, const = inputs[i]
            fixed += _first_sat(solver, fixed, const, nice_values(q.types[name])[1:], q.types[name])
            i += 1
    if check(solver, *fixed) != z3.sat:  # a timeout mid-way: keep the solver's first model
        return values
    return _model_values(solver.model(), q)


def _longest_sat_prefix(solver: z3.Solver, fixed: list[z3.BoolRef],
                        eqs: list[z3.BoolRef]) -> int:
    """How many leading `eqs` hold together with `fixed`: exactly those the one-at-a-time
    greedy choice keeps, since a prefix that holds makes every shorter one hold. Gallops
    (1, 2, 4, ... more) then bisects: O(log run) checks rather than one per input."""
    good, bad, step = 0, len(eqs) + 1, 1  # prefix lengths known to hold / not to hold
    while good < len(eqs):
        k = min(good + step, len(eqs))
        if check(solver, *fixed, *eqs[:k]) != z3.sat:
            bad = k
            break
        good, step = k, 2 * step
    while bad - good > 1:
        mid = (good + bad) // 2
        if check(solver, *fixed, *eqs[:mid]) == z3.sat:
            good = mid
        else:
            bad = mid
    return good


def _first_sat(solver: z3.Solver, fixed: list[z3.BoolRef], const: z3.ExprRef,
               candidates: list[Value], t: PtxType) -> list[z3.BoolRef]:
    """The equation fixing `const` to the first candidate that still leaves a difference,
    or none when no candidate does."""
    for cand in candidates:
        eq = const == _const(cand, t)
        if check(solver, *fixed, eq) == z3.sat:
            return [eq]
    return []


def _const(value: Value, t: PtxType) -> z3.ExprRef:
    return z3.BoolVal(bool(value)) if t.kind is Kind.PRED else z3.BitVecVal(int(value), t.width)
