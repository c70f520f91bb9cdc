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
from dataclasses import dataclass
from itertools import count

import z3

from ..eval.values import Value
from ..function.effects import param_spelling, param_type
from ..function.encode import FunctionEncoding, encode_function
from ..function.evaluate import FunctionEvaluation, Location, evaluate_function
from ..function.memory import address_bits, initial, load, observable
from ..function.memory import at as memory_at
from ..isa.errors import PtxError
from ..isa.module import Function
from ..isa.types import TYPES
from ..sem.options import DEFAULT, Options
from ..solver import check
from .solve import ReplayError, check_with, nice_values


@dataclass(frozen=True)
class FunctionCounterexample:
    inputs: dict[str, Value]  # scalar inputs shared by both sides
    memory: dict[Location, Value]  # initial memory the sides read (or differ at)
    lhs: FunctionEvaluation
    rhs: FunctionEvaluation
    differ: tuple[str, ...]  # outputs (return names, locations) that differ


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


# Loops without --unroll: each runs at most this many times; a counterexample within them
# is a real one ("different"), agreement only "unknown" (equivalent up to that many).
DEFAULT_UNROLL = 4


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
                               unroll: int = 0, solver: str = "z3") -> FunctionVerdict:
    """`different` only with a counterexample that the evaluator replays on both
    functions and that differs whatever the unmodelled instructions and the values the
    ISA leaves open give; a difference that needs them is `unknown`, naming them.
    `solver`: who decides the whole query (z3, or the portfolio: `smt.solve.check_with`).
    `unroll` 0: loops run up to DEFAULT_UNROLL times, and agreement there is `unknown`."""
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
    differ = [z3.Distinct(*_low(el.returns[k], er.returns[k])) for k in returns]
    differ += [_final(el, s)[w] != _final(er, s)[w] for s, w in witness.items()]
    undefined = [*el.undefined, *er.undefined]
    bounded = [*el.bounded, *er.bounded]
    defined = z3.And(*[a.holds for a in (*el.assumed, *er.assumed)],
                     *[z3.Not(u.when) for u in (*undefined, *bounded)])
    how, solver = solver, _solver(timeout)
    # a multiplication by a constant (nvcc's `mul.wide.s32 d, i, 4` for an index) as
    # shifts and concatenations: -O0's `shl` of the same index then meets it, and the
    # proof of an -O0/-O3 pair takes milliseconds instead of seconds
    solver.add(z3.simplify(z3.Or(differ), mul2concat=True), defined)
    result = check_with(solver, how, timeout)
    uninterpreted = {**el.uninterpreted, **er.uninterpreted}

    def verdict(v: str, reason: str = "", cex: FunctionCounterexample | None = None):
        return FunctionVerdict(v, lhs.name, rhs.name, uninterpreted, cex, reason,
                               time.perf_counter() - start, unroll if asked or bounded else 0)

    if result == z3.unknown:
        return verdict("unknown", solver.reason_unknown() or "timeout")
    if result == z3.unsat:
        reached = {f"line {u.line} ({u.text}) is reached where {u.why}": None
                   for u in undefined if check(_solver(timeout), u.when) != z3.unsat}
        if reached:
            return verdict("unknown", "they agree wherever both are defined, but "
                           + "; ".join(reached))
        beyond = {f"line {u.line} ({u.text})": None
                  for u in bounded if check(_solver(timeout), u.when) != z3.unsat}
        if beyond and not asked:
            return verdict("unknown", f"equivalent up to {unroll} iterations of each loop "
                           f"(at {', '.join(beyond)}), not beyond; give --unroll K to "
                           "compare up to K" + (f"; {note}" if note else ""))
        if beyond:
            return verdict("bounded", f"loops that run more than {unroll} times "
                           f"(at {', '.join(beyond)}) are not compared"
                           + (f"; {note}" if note else ""))
        return verdict("equivalent", note)
    prefer_nice(solver, el, er, zero=tuple(initial(s)[w] for s, w in witness.items()))
    model = solver.model()
    if not _definite(model, el, er, returns, spaces, defined, timeout):
        free = _free_names(z3.simplify(z3.Or(differ)), el, er)
        return verdict("unknown", "the functions differ only through values ptxsmt leaves "
                       "free (results of uninterpreted instructions, NaNs the PTX ISA "
                       "leaves open, return bytes never written): "
                       + ", ".join(free or ["(none named)"]))
    cex = _replay(lhs, rhs, el, er, model, opts, rename, unroll, spaces)
    return verdict("different", cex=cex)


def _solver(timeout: float | None) -> z3.Solver:
    solver = z3.Solver()
    if timeout:
        solver.set("timeout", max(1, int(timeout * 1000)))
    return solver


def _definite(model: z3.ModelRef, el: FunctionEncoding, er: FunctionEncoding,
              returns: list[str], spaces: list[str], defined: z3.BoolRef,
              timeout: float | None) -> bool:
    """Whether, on the model's inputs and initial memory, the functions differ for every
    choice of what ptxsmt leaves free (the results of uninterpreted instructions, with
    congruence; the NaNs the ISA leaves open; return bytes neither writes)."""
    pins = [c == model.eval(c, model_completion=True)
            for c in {**el.inputs, **er.inputs}.values()]
    pins += [a == model.eval(a, model_completion=True)
             for a in {**el.memory, **er.memory}.values()]
    same = [z3.Not(z3.Distinct(*_low(el.returns[k], er.returns[k]))) for k in returns]
    same += [_final(el, s) == _final(er, s) for s in spaces]
    return check(_solver(timeout), *pins, *same, defined) == z3.unsat


def _free_names(term: z3.ExprRef, *encodings: FunctionEncoding) -> list[str]:
    """The uninterpreted functions and free values a term holds, other than inputs."""
    inputs = {c.decl().name() for enc in encodings
              for c in (*enc.inputs.values(), *enc.memory.values())}
    seen, todo, found = set(), [term], {}
    while todo:
        t = todo.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if t.decl().kind() == z3.Z3_OP_UNINTERPRETED and t.decl().name() not in inputs \
                and not t.decl().name().endswith(".address"):
            found[t.decl().name()] = None
        todo.extend(t.children())
    return sorted(found)


def _final(enc: FunctionEncoding, space: str) -> z3.ArrayRef:
    return enc.final.get(space, initial(space))


BUFFER = 0x10000  # where prefer_nice puts the k-th pointer: k * BUFFER
WINDOW = 1 << 40  # and the k-th window of the generic space


def prefer_nice(solver: z3.Solver, *encodings: FunctionEncoding,
                zero: tuple[z3.BitVecRef, ...] = ()) -> None:
    """Fix each input, in order, to the nicest value that keeps the solver's
    constraints: models are for people. A 64-bit parameter or a variable's address is
    first tried as a buffer of its own (0x10000, 0x20000, ...: aligned for every type,
    none aliasing another), other scalars as 0, 1, -1, ...; then each word of initial
    memory a load reads or a store overwrites as 0, else 1, and each term of `zero` as 0."""
    fixed: list[z3.BoolRef] = []

    def keep(eq: z3.BoolRef) -> bool:
        if check(solver, *fixed, eq) == z3.sat:
            fixed.append(eq)
            return True
        return False

    types = {k: t for enc in encodings for k, t in enc.types.items()}
    origins = {k: o for enc in encodings for k, o in enc.origins.items()}
    buffers, windows = count(BUFFER, BUFFER), count(WINDOW, WINDOW)
    for name, const in {k: c for enc in encodings for k, c in enc.inputs.items()}.items():
        wide = not z3.is_bool(const) and const.size() == 64
        pointer = wide and origins[name].startswith(("parameter", "the address of a variable"))
        window = wide and name.startswith("window.")
        values = ([next(buffers)] if pointer else [next(windows)] if window else []) + \
            nice_values(types[name])[:4]
        for value in values:
            if keep(const == (z3.BoolVal(bool(value)) if z3.is_bool(const)
                              else z3.BitVecVal(value, const.size()))):
                break
    if check(solver, *fixed) == z3.sat:
        model = solver.model()
        for enc in encodings:
            for a in (*enc.loads, *enc.stores):  # a stored word's bytes before it too
                if z3.is_true(model.eval(a.when, model_completion=True)):
                    word = load(enc.memory[a.space], model.eval(a.address, model_completion=True),
                                a.type.width)
                    _ = keep(word == 0) or keep(word == 1)
    for term in zero:
        keep(term == 0)
    check(solver, *fixed)


def _replay(lhs: Function, rhs: Function, el: FunctionEncoding, er: FunctionEncoding,
            model: z3.ModelRef, opts: Options,
            rename: dict[str, str], unroll: int, spaces: list[str]) -> FunctionCounterexample:
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
    given = {f"{loc}.{loc.type.name}": v for loc, v in memory.items()}
    # the rhs replays under its own names (`--function-b`): its reproduce line runs as shown
    own = {ll: r for r, ll in rename.items()}
    sides = []
    for fn, enc, names in ((lhs, el, {}), (rhs, er, own)):
        declared = {p.name: param_type(p).width for p in fn.params}
        scalars = {(n := names.get(k, k)): v % (1 << declared[n]) if n in declared else v
                   for k, v in inputs.items() if k in enc.inputs}
        scalars |= {k: value(t) for k, t in enc.opaque.items()}
        sides.append(evaluate_function(fn, {**scalars, **given}, opts, watch, unroll))
    rhs_returns = {rename.get(k, k): (v, sides[1].types[k]) for k, v in sides[1].returns.items()}

    def differs(k: str) -> bool:  # on the bytes both declare
        (a, ta), (b, tb) = (sides[0].returns[k], sides[0].types[k]), rhs_returns[k]
        if isinstance(a, int) and isinstance(b, int):
            return (a - b) % (1 << min(ta.width, tb.width)) != 0
        return a != b

    differ = tuple(dict.fromkeys(
        [k for k in sides[0].returns if k in rhs_returns and differs(k)]
        + [str(loc) for loc in _differing_locations(*sides, spaces)]))
    if not differ:
        raise ReplayError(f"counterexample {inputs} {memory} does not replay: both functions "
                          "give the same returns and memory")
    return FunctionCounterexample(inputs, memory, *sides, differ)


def _covers(loc: Location, byte: Location) -> bool:
    return loc.space == byte.space and 0 <= byte.address - loc.address < loc.type.width // 8


def _differing_locations(lhs: FunctionEvaluation, rhs: FunctionEvaluation,
                         spaces: list[str]) -> list[Location]:
    """Written bytes that end differently: each side's locations, compared byte by byte
    (a .u32 store on one side may be four .u8 stores on the other)."""
    def bytes_of(ev: FunctionEvaluation) -> dict[tuple[str, int], int]:
        return {(loc.space, loc.address + k): (v >> (8 * k)) & 0xFF
                for loc, v in ev.stores.items() for k in range(loc.type.width // 8)}

    a, b = bytes_of(lhs), bytes_of(rhs)
    bad = {key for key in a.keys() & b.keys() if a[key] != b[key] and key[0] in spaces}
    return [loc for loc in dict.fromkeys([*lhs.stores, *rhs.stores])
            if any((loc.space, loc.address + k) in bad for k in range(loc.type.width // 8))]
