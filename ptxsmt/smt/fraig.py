"""Equivalence sweeping (SAT sweeping, "fraiging", as in ABC's `cec`): before the
whole "do the two functions differ" query, find the internal values the two sides
share and merge them, so that the last query is small.

1. Simulate every node of the query's DAG on a few hundred inputs (special values, then
   random; `simulate.py` interprets the very terms).
2. Walk the nodes children first. A node whose values match a node seen before (or a
   constant) is a candidate: with its children already replaced by their merged
   representatives, ask the solver, under a small time limit, whether the two can
   differ. Unsat: the node is replaced by the representative everywhere above it.
   Sat: the model becomes one more simulation input, so the pair is never guessed
   again. Unknown: the node stays as it is.
3. The query is rebuilt over the representatives.

Every merge is an unconditional equality the solver proved, so the rebuilt query is
equivalent to the original one in every model: "equivalent" still comes only from an
unsat of the (whole, rebuilt) query, and a model of it is a model of the original.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache

import z3

from ..sem.sorts import ieee_result
from ..solver import check
from .portfolio import solve_here, unavailable
from .simulate import as_key, evaluate_node, input_vectors, model_vector

SIMULATIONS = 128  # input vectors to start with
QUERY_SECONDS = 1.0  # the limit of one candidate's proof


@dataclass
class SweepStats:
    nodes: int = 0
    simulated: int = 0
    proved: int = 0  # merged by a proof
    structural: int = 0  # merged because the rebuilt node was the representative
    refuted: int = 0
    undecided: int = 0
    seconds: float = 0.0


def _post_order(roots: list[z3.ExprRef]) -> list[z3.ExprRef]:
    """The DAG's nodes, each after its children."""
    order, seen = [], set()
    stack = [(r, False) for r in reversed(roots)]
    while stack:
        n, expanded = stack.pop()
        i = n.get_id()
        if expanded:
            order.append(n)
            continue
        if i in seen:
            continue
        seen.add(i)
        stack.append((n, True))
        if z3.is_app(n):
            stack.extend((c, False) for c in reversed(n.children()) if c.get_id() not in seen)
    return order


# Operators whose operands may be put in any order (SMT-LIB's meaning: fp.add and fp.mul
# have one NaN, so they commute exactly; fp.min and fp.max do not, on zeros of two signs)
COMMUTATIVE = {z3.Z3_OP_BADD, z3.Z3_OP_BMUL, z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR,
               z3.Z3_OP_AND, z3.Z3_OP_OR, z3.Z3_OP_XOR, z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT,
               z3.Z3_OP_FPA_EQ}
COMMUTATIVE_AFTER_ROUNDING = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_MUL}


def _rebuild(n: z3.ExprRef, merged: dict[int, z3.ExprRef]) -> z3.ExprRef:
    """`n` over its children's representatives, the operands of a commutative operator
    in one order (by AST id), so that `a + b` and `b + a` are one term."""
    if not z3.is_app(n) or n.num_args() == 0:
        return n
    children = n.children()
    new = [merged.get(c.get_id(), c) for c in children]
    k = n.decl().kind()
    if k in COMMUTATIVE:
        new.sort(key=lambda c: c.get_id())
    elif k in COMMUTATIVE_AFTER_ROUNDING:
        new[1:] = sorted(new[1:], key=lambda c: c.get_id())
    if k == z3.Z3_OP_FPA_TO_FP and len(new) == 1:  # a float read back from its bits
        result = ieee_result(new[0], n.sort())
        if result is not None:
            return result
    if all(a.eq(b) for a, b in zip(children, new, strict=True)):
        return n
    return n.decl()(*new)


# Queries of fewer nodes go to the solver whole: they are decided faster than swept
SMALL = 100
# The share of a query's time limit that sweeping may take (the whole query gets the rest)
SWEEP_SHARE = 0.75


def sweep_if_large(roots: list[z3.ExprRef], inputs: list[z3.ExprRef],
                   timeout: float | None) -> list[z3.ExprRef]:
    """`roots` swept (`sweep`) when their DAG has SMALL nodes or more, within
    SWEEP_SHARE of `timeout` (None: no limit)."""
    if len(_post_order(roots)) < SMALL:
        return roots
    return sweep(roots, inputs, SWEEP_SHARE * timeout if timeout else float("inf"))[0]


def sweep(roots: list[z3.ExprRef], inputs: list[z3.ExprRef], seconds: float,
          query_seconds: float = QUERY_SECONDS) -> tuple[list[z3.ExprRef], SweepStats]:
    """`roots` with every internal value proved equal to an earlier one replaced by it,
    within `seconds` (past them the rest is rebuilt without new proofs)."""
    start = time.perf_counter()
    stats = SweepStats()
    order = _post_order(roots)
    given = {c.get_id() for c in inputs}
    inputs = [*inputs, *(n for n in order if _is_leaf(n) and n.decl().kind() ==
                         z3.Z3_OP_UNINTERPRETED and n.get_id() not in given)]
    free = _free(order, given)
    stats.nodes = len(order)
    vectors = input_vectors(inputs, SIMULATIONS)
    names = {c.decl().name(): c for c in inputs if z3.is_bv(c) or z3.is_bool(c)}
    values: dict[int, list | None] = {}
    for n in order:
        values[n.get_id()] = _values(n, values, vectors)
    stats.simulated = sum(v is not None for v in values.values())

    merged: dict[int, z3.ExprRef] = {}  # original node id -> its representative
    classes: dict[tuple, z3.ExprRef] = {}  # (sort, signature) -> representative
    done: list[z3.ExprRef] = []  # nodes walked, in order (their keys may change)
    deadline = start + seconds
    for n in order:
        new = _rebuild(n, merged)
        if not new.eq(n):
            merged[n.get_id()] = new
        v = values.get(n.get_id())
        if v is None or not (z3.is_bv(n) or z3.is_bool(n) or z3.is_fp(n)):
            continue
        if (n.get_id() in free and len(set(v)) == 1) or _ieee_bits(n):
            continue  # constant where a free value was simulated: rarely so for all;
            # or a float's bits unguarded (a NaN's, free in the SMT-LIB text, `smt2.py`)
        key = (n.sort_kind(), n.sort().sexpr(), as_key(v, n.sort()))
        rep = classes.get(key)
        if rep is None:
            classes[key] = new
            done.append(n)
            continue
        if rep.eq(new):
            stats.structural += 1
            continue
        if _is_leaf(new) and _is_leaf(rep):
            continue
        left = deadline - time.perf_counter()
        if left <= 0:
            continue
        result, vector = _prove_equal(new, rep, min(query_seconds, left), names)
        if result == "unsat":
            merged[n.get_id()] = rep
            stats.proved += 1
        elif result == "sat":
            stats.refuted += 1
            _add_vector(vector, order, values, vectors)
            classes = _classes(done, values, merged)
            if values.get(n.get_id()) is not None:
                key = (n.sort_kind(), n.sort().sexpr(), as_key(values[n.get_id()], n.sort()))
                classes.setdefault(key, new)
                done.append(n)
        else:
            stats.undecided += 1
    out = [merged.get(r.get_id(), r) for r in roots]
    stats.seconds = time.perf_counter() - start
    return out, stats


def _free(order: list[z3.ExprRef], inputs: set[int]) -> set[int]:
    """The nodes that depend on a free value other than an input: a function symbol
    (an uninterpreted instruction, a NaN the ISA leaves open) or a free constant."""
    out = set()
    for n in order:
        if not z3.is_app(n):
            continue
        if (n.decl().kind() == z3.Z3_OP_UNINTERPRETED and n.get_id() not in inputs) or \
                any(c.get_id() in out for c in n.children()):
            out.add(n.get_id())
    return out


def _ieee_bits(n: z3.ExprRef) -> bool:
    k = n.decl().kind()
    if k == z3.Z3_OP_EXTRACT:
        k = n.arg(0).decl().kind()
    return k == z3.Z3_OP_FPA_TO_IEEE_BV


def _is_leaf(n: z3.ExprRef) -> bool:
    return z3.is_app(n) and n.num_args() == 0


def _values(n: z3.ExprRef, values: dict[int, list | None],
            vectors: dict[int, list]) -> list | None:
    if not z3.is_app(n):
        return None
    args = [values.get(c.get_id()) for c in n.children()]
    if any(a is None for a in args):
        return None
    try:
        return evaluate_node(n, args, vectors)
    except (ValueError, ArithmeticError, OverflowError, z3.Z3Exception):
        return None


def _add_vector(vector: dict[int, list], order: list[z3.ExprRef],
                values: dict[int, list | None], vectors: dict[int, list]) -> None:
    """Extend every node's values by one input vector (a counterexample's)."""
    for i, v in vector.items():
        if i in vectors:
            vectors[i].append(v[0])
    one: dict[int, list | None] = {}
    for n in order:
        i = n.get_id()
        if values.get(i) is None:
            continue
        extra = _values(n, one, vector)
        one[i] = extra
        values[i] = None if extra is None else [*values[i], extra[0]]  # lists are shared


def _classes(done: list[z3.ExprRef], values: dict[int, list | None],
             merged: dict[int, z3.ExprRef]) -> dict[tuple, z3.ExprRef]:
    out: dict[tuple, z3.ExprRef] = {}
    for n in done:
        v = values.get(n.get_id())
        if v is not None:
            key = (n.sort_kind(), n.sort().sexpr(), as_key(v, n.sort()))
            out.setdefault(key, merged.get(n.get_id(), n))
    return out


def _prove_equal(a: z3.ExprRef, b: z3.ExprRef, seconds: float,
                 names: dict[str, z3.ExprRef]) -> tuple[str, dict[int, list] | None]:
    """"unsat": a = b always; "sat", with the inputs of a model where they differ (one
    simulation vector); or "unknown". bitwuzla where it is installed (it decides these
    small bit-vector queries far faster than z3), else z3; first with the values both
    share cut off (free) below a depth, deeper and deeper: a proof there holds for
    whatever they are."""
    for depth in CUT_DEPTHS:
        cut = _cut(a, b, depth)
        if not cut:
            break
        if _check(z3.substitute(a != b, *cut), seconds / 8, {})[0] == "unsat":
            return "unsat", None
    return _check(a != b, seconds, names)


CUT_DEPTHS = (2, 4)


def _check(term: z3.BoolRef, seconds: float,
           names: dict[str, z3.ExprRef]) -> tuple[str, dict[int, list] | None]:
    if _fast_solver() is not None:
        answer = solve_here([term], seconds)
        if answer.result != "sat":
            return answer.result, None
        return "sat", {c.get_id(): [answer.values.get(name, False if z3.is_bool(c) else 0)]
                       for name, c in names.items()}
    solver = z3.Solver()
    solver.set("timeout", max(1, int(seconds * 1000)))
    solver.add(term)
    result = check(solver)
    if result != z3.sat:
        return str(result), None
    return "sat", model_vector(solver.model(), list(names.values()))


@cache
def _fast_solver() -> str | None:
    return None if "bitwuzla" in unavailable() else "bitwuzla"


def _cut(a: z3.ExprRef, b: z3.ExprRef, depth: int) -> list[tuple[z3.ExprRef, z3.ExprRef]]:
    """The values `a` and `b` both contain at `depth` or more below them (or a
    multiplication or division of two values), each with a fresh constant."""
    cone_a = {n.get_id() for n in _post_order([a])}
    shared = {n.get_id() for n in _post_order([b]) if n.get_id() in cone_a}
    out, seen = [], set()
    level = [a, b]
    for d in range(depth + 64):
        nxt = []
        for n in level:
            if n.get_id() in seen:
                continue
            seen.add(n.get_id())
            if n.get_id() in shared and not _is_leaf(n) and (d >= depth or _hard(n)) and \
                    (z3.is_bv(n) or z3.is_bool(n) or z3.is_fp(n)):
                out.append((n, z3.FreshConst(n.sort(), "cut")))
            elif z3.is_app(n):
                nxt.extend(n.children())
        level = nxt
        if not level:
            break
    return out


_HARD = {z3.Z3_OP_BMUL, z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM, z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM,
         z3.Z3_OP_BUDIV_I, z3.Z3_OP_BUREM_I, z3.Z3_OP_BSDIV_I, z3.Z3_OP_BSREM_I}


def _hard(n: z3.ExprRef) -> bool:
    """A multiplier or divider of two values, or a floating-point operation: costly to
    bit-blast, and shared by both sides."""
    k = n.decl().kind()
    return (k in _HARD and not any(z3.is_bv_value(c) for c in n.children())) or \
        z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN <= k <= z3.Z3_OP_FPA_BV2RM
