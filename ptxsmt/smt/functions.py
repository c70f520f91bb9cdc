"""Translation validation of one function: two bodies (before and after a pass, -O0 and
-O3) agree when, from the same parameters, special registers and initial memory, they
end with the same return values and the same global and shared memory at every address
(`function.memory.OBSERVABLE`; local memory dies with the thread).

The second function's parameters and return parameters are named after the first's, by
position. An instruction ptxsmt does not model is an uninterpreted function on both
sides (the verdict lists them). A counterexample is replayed through the evaluator of
functions before anyone sees it, as for snippets.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import z3

from ..eval.function import FunctionEvaluation, Location, evaluate_function
from ..eval.values import Value
from ..function.execute import FunctionEncoding, encode_function
from ..function.memory import ADDRESS_BITS, OBSERVABLE, initial, load
from ..isa.errors import PtxError
from ..isa.module import Function
from ..isa.types import TYPES
from ..sem.options import DEFAULT, Options
from ..solver import check
from .solve import ReplayError, nice_values


@dataclass(frozen=True)
class FunctionCounterexample:
    inputs: dict[str, Value]  # scalar inputs shared by both sides
    memory: dict[Location, Value]  # initial memory the sides read (or differ at)
    lhs_opaque: dict[str, Value]  # values of the uninterpreted destinations, per side
    rhs_opaque: dict[str, Value]
    lhs: FunctionEvaluation
    rhs: FunctionEvaluation
    differ: tuple[str, ...]  # outputs (return names, locations) that differ


@dataclass(frozen=True)
class FunctionVerdict:
    verdict: str  # "equivalent" | "different" | "unknown"
    lhs: str
    rhs: str
    uninterpreted: dict[str, int]  # instruction text -> line, both sides
    counterexample: FunctionCounterexample | None = None
    reason: str = ""
    seconds: float = 0.0


def _renaming(lhs: Function, rhs: Function) -> dict[str, str]:
    """rhs's parameter and return names -> lhs's, by position (same widths)."""
    out = {}
    for what, left, right in (("parameters", lhs.params, rhs.params),
                              ("return parameters", lhs.returns, rhs.returns)):
        if [p.type.width for p in left] != [p.type.width for p in right]:
            raise PtxError(f"{lhs.name} and {rhs.name} have different {what}: "
                           f"{[p.type.name for p in left]} and {[p.type.name for p in right]}")
        out |= {r.name: ll.name for ll, r in zip(left, right)}
    return out


def check_function_equivalence(lhs: Function, rhs: Function, opts: Options = DEFAULT,
                               timeout: float | None = 30.0) -> FunctionVerdict:
    start = time.perf_counter()
    el = encode_function(lhs, opts)
    er = encode_function(rhs, opts, rename=_renaming(lhs, rhs))
    for name in el.inputs.keys() & er.inputs.keys():
        if el.inputs[name].sort() != er.inputs[name].sort():
            raise PtxError(f"{name} is .{el.types[name].name} in {lhs.name} and "
                           f".{er.types[name].name} in {rhs.name}")
    witness = {s: z3.BitVec(f"{s}.address", ADDRESS_BITS) for s in OBSERVABLE
               if s in el.memory or s in er.memory}
    differ = [el.returns[k] != er.returns[k] for k in el.returns.keys() & er.returns.keys()]
    differ += [_final(el, s)[w] != _final(er, s)[w] for s, w in witness.items()]
    solver = z3.Solver()
    if timeout:
        solver.set("timeout", max(1, int(timeout * 1000)))
    # a multiplication by a constant (nvcc's `mul.wide.s32 d, i, 4` for an index) as
    # shifts and concatenations: -O0's `shl` of the same index then meets it, and the
    # proof of an -O0/-O3 pair takes milliseconds instead of seconds
    solver.add(z3.simplify(z3.Or(differ), mul2concat=True))
    result = check(solver)
    uninterpreted = {**el.uninterpreted, **er.uninterpreted}
    verdict = {"unsat": "equivalent", "unknown": "unknown", "sat": "different"}[str(result)]
    cex = None
    if result == z3.sat:
        prefer_nice(solver, el, er)
        cex = _replay(lhs, rhs, el, er, solver.model(), witness, opts)
    return FunctionVerdict(verdict, lhs.name, rhs.name, uninterpreted, cex,
                           solver.reason_unknown() if result == z3.unknown else "",
                           time.perf_counter() - start)


def _final(enc: FunctionEncoding, space: str) -> z3.ArrayRef:
    return enc.final.get(space, initial(space))


def prefer_nice(solver: z3.Solver, *encodings: FunctionEncoding) -> None:
    """Fix each scalar input, in order, to the nicest value that keeps the solver's
    constraints (0, 1, -1, ...; pointers then stay free): models are for people."""
    fixed: list[z3.BoolRef] = []
    types = {k: t for enc in encodings for k, t in enc.types.items()}
    for name, const in {k: c for enc in encodings for k, c in enc.inputs.items()}.items():
        for value in nice_values(types[name])[:4]:
            eq = const == (z3.BoolVal(bool(value)) if z3.is_bool(const)
                           else z3.BitVecVal(value, const.size()))
            if check(solver, *fixed, eq) == z3.sat:
                fixed.append(eq)
                break
    check(solver, *fixed)


def _replay(lhs: Function, rhs: Function, el: FunctionEncoding, er: FunctionEncoding,
            model: z3.ModelRef, witness: dict, opts: Options) -> FunctionCounterexample:
    def value(term: z3.ExprRef) -> Value:
        v = model.eval(term, model_completion=True)
        return z3.is_true(v) if z3.is_bool(v) else v.as_long()

    inputs = {k: value(c) for k, c in {**el.inputs, **er.inputs}.items()}
    def locations(accesses) -> list[Location]:
        return [Location(a.space, value(a.address), a.type) for a in accesses if value(a.when)]

    memory = {loc: value(load(initial(loc.space), z3.BitVecVal(loc.address, ADDRESS_BITS),
                              loc.type.width))
              for loc in dict.fromkeys([*locations(el.loads), *locations(er.loads)])}
    # both sides report every location either side wrote, and the byte the solver found
    # differing unless one of those holds it
    watch = list(dict.fromkeys([*locations(el.stores), *locations(er.stores)]))
    for space, w in witness.items():
        byte = Location(space, value(w), TYPES["b8"])
        if not any(_covers(loc, byte) for loc in watch):
            watch.append(byte)
        if not any(_covers(loc, byte) for loc in memory):
            memory[byte] = value(initial(space)[w])
    given = {f"{loc}.{loc.type.name}": v for loc, v in memory.items()}
    opaque = [{k: value(t) for k, t in enc.opaque.items()} for enc in (el, er)]
    sides = [evaluate_function(fn, {**{k: v for k, v in inputs.items() if k in enc.inputs},
                                    **op, **given}, opts, watch)
             for fn, enc, op in ((lhs, el, opaque[0]), (rhs, er, opaque[1]))]
    differ = tuple(dict.fromkeys(
        [k for k in sides[0].returns if sides[0].returns[k] != sides[1].returns.get(k)]
        + [str(loc) for loc in _differing_locations(*sides)]))
    if not differ:
        raise ReplayError(f"counterexample {inputs} {memory} does not replay: both functions "
                          "give the same returns and memory")
    return FunctionCounterexample(inputs, memory, *opaque, *sides, differ)


def _covers(loc: Location, byte: Location) -> bool:
    return loc.space == byte.space and 0 <= byte.address - loc.address < loc.type.width // 8


def _differing_locations(lhs: FunctionEvaluation, rhs: FunctionEvaluation) -> list[Location]:
    """Written bytes that end differently: each side's locations, compared byte by byte
    (a .u32 store on one side may be four .u8 stores on the other)."""
    def bytes_of(ev: FunctionEvaluation) -> dict[tuple[str, int], int]:
        return {(loc.space, loc.address + k): (v >> (8 * k)) & 0xFF
                for loc, v in ev.stores.items() for k in range(loc.type.width // 8)}

    a, b = bytes_of(lhs), bytes_of(rhs)
    bad = {key for key in a.keys() & b.keys() if a[key] != b[key]}
    return [loc for loc in dict.fromkeys([*lhs.stores, *rhs.stores])
            if any((loc.space, loc.address + k) in bad for k in range(loc.type.width // 8))]
