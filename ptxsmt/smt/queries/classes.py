"""Operand classes, and which combinations of them break a rewrite.

`--all-classes` enumerates the failing class combinations with one
incremental solver: find a counterexample, record the classes of its inputs,
block that combination, repeat. When the solver says unsat, every combination
not recorded is proved safe, not merely untested.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from itertools import product

import z3

from ...isa.literals import fp_class
from ...isa.types import Kind, PtxType
from ...sem.sorts import as_float, register_value
from ...solver import check
from .snippets import Query

FLOAT_CLASSES = ("NaN", "+inf", "-inf", "+0", "-0", "+subnormal", "-subnormal",
                 "+normal", "-normal")
SIGNED_CLASSES = ("min", "negative", "zero", "positive", "max")
UNSIGNED_CLASSES = ("zero", "positive", "max")
PRED_CLASSES = ("false", "true")


def classes(t: PtxType) -> tuple[str, ...]:
    if t.kind is Kind.PRED:
        return PRED_CLASSES
    if t.is_float:
        return FLOAT_CLASSES
    return SIGNED_CLASSES if t.kind is Kind.SIGNED else UNSIGNED_CLASSES


def class_of(cls: str, x: z3.ExprRef, t: PtxType) -> z3.BoolRef:
    """The constraint 'x is in class cls' on a register (or lane) of type t."""
    if t.kind is Kind.PRED:
        return x if cls == "true" else z3.Not(x)
    if t.is_float:
        f = as_float(x, t.fmt)
        if cls == "NaN":
            return z3.fpIsNaN(f)
        test = {"inf": z3.fpIsInf, "0": z3.fpIsZero, "subnormal": z3.fpIsSubnormal,
                "normal": z3.fpIsNormal}[cls[1:]](f)
        sign = z3.fpIsNegative(f) if cls[0] == "-" else z3.fpIsPositive(f)
        return z3.And(test, sign)
    w = x.size()
    if t.kind is Kind.SIGNED:
        lo, hi = z3.BitVecVal(1 << (w - 1), w), z3.BitVecVal((1 << (w - 1)) - 1, w)
        return {"min": x == lo, "negative": z3.And(x < 0, x != lo), "zero": x == 0,
                "positive": z3.And(x > 0, x != hi), "max": x == hi}[cls]
    ones = z3.BitVecVal(-1, w)
    return {"zero": x == 0, "positive": z3.And(x != 0, x != ones), "max": x == ones}[cls]


def value_class(bits: int, t: PtxType) -> str:
    """The class of a concrete value (a register or lane of type t): the one class whose
    `class_of` holds for it, without a solver (the tests hold the two equal)."""
    if t.kind is Kind.PRED:
        return "true" if bits else "false"
    if t.is_float:
        cls = fp_class(bits, t.fmt)
        return "NaN" if cls.endswith("NaN") else cls
    w = t.width
    if bits == 0:
        return "zero"
    if t.kind is Kind.SIGNED:
        return {1 << (w - 1): "min", (1 << (w - 1)) - 1: "max"}.get(
            bits, "negative" if bits >> (w - 1) else "positive")
    return "max" if bits == (1 << w) - 1 else "positive"


@dataclass(frozen=True)
class Axis:
    """One classified quantity: a register, or one lane of a packed register."""

    name: str
    term: z3.ExprRef
    type: PtxType

    @property
    def classes(self) -> tuple[str, ...]:
        return classes(self.type)

    @cached_property
    def class_terms(self) -> dict[str, z3.BoolRef]:
        """`class_of` of each class, built once: a class report asks them of every model."""
        return {cls: class_of(cls, self.term, self.type) for cls in self.classes}


def axes(inputs: dict[str, z3.ExprRef], types: dict[str, PtxType],
         readings: dict[str, tuple[PtxType, int]] | None = None) -> list[Axis]:
    """One axis per input register, or per lane of a packed one. `readings` classes a
    register as lanes of another type instead (register -> (lane type, lanes)): a vset
    operand's bytes, or a u32 operand read as signed where signedness is compared."""
    out = []
    for name, const in inputs.items():
        t = types[name]
        lane, lanes = (readings or {}).get(name, (t.lane, t.lanes))
        if lanes > 1:
            w = lane.width
            out += [Axis(f"{name}[{i}]", z3.Extract(w * i + w - 1, w * i, const), lane)
                    for i in range(lanes)]
        else:
            out.append(Axis(name, const, lane))
    return out


@dataclass(frozen=True)
class ClassReport:
    axes: tuple[str, ...]
    domains: tuple[tuple[str, ...], ...]  # the classes of each axis
    failing: tuple[tuple[str, ...], ...]  # class combinations with a counterexample
    complete: bool  # False when the search stopped early (limit or solver unknown)

    @property
    def total(self) -> int:
        n = 1
        for d in self.domains:
            n *= len(d)
        return n

    def rows(self) -> list[tuple[str, ...]]:
        """Failing combinations with '*' where every class of an axis fails."""
        return compact(set(self.failing), list(self.domains))

    def only_when(self) -> str:
        """A necessary condition: every failing combination has one of these classes."""
        if not self.failing:
            return "never"
        lits = hitting_set(self.failing, len(self.axes))
        return " or ".join(f"{self.axes[i]} is {c}" for i, c in lits)


def class_report(q: Query, timeout: float | None, limit: int = 2000,
                 readings: dict[str, tuple[PtxType, int]] | None = None) -> ClassReport:
    ax = axes(q.inputs, q.types, readings)
    solver = q.solver(timeout)
    failing: list[tuple[str, ...]] = []
    complete = True
    while True:
        if len(failing) >= limit:
            complete = False
            break
        result = check(solver)
        if result != z3.sat:
            complete = result == z3.unsat
            break
        model = solver.model()
        combo = tuple(classify(a, model) for a in ax)
        failing.append(combo)
        solver.add(z3.Not(z3.And([a.class_terms[c] for c, a in zip(combo, ax)])))
    return ClassReport(tuple(a.name for a in ax), tuple(a.classes for a in ax),
                       tuple(sorted(failing)), complete)


def classify(a: Axis, model: z3.ModelRef | None = None) -> str:
    """The class of an axis under a model, or of an axis whose term is a constant:
    the class terms themselves decide, so coverage, --all-classes and witnesses agree."""
    for cls, term in a.class_terms.items():
        value = z3.simplify(term) if model is None else model.eval(term, model_completion=True)
        if z3.is_true(value):
            return cls
    raise AssertionError(f"no class for {a.name}")  # the classes partition each type


def input_classes(values: dict[str, int | bool], types: dict[str, PtxType]) -> dict[str, set[str]]:
    """Each concrete input's classes (one per lane for packed types)."""
    return {name: {classify(a) for a in axes({name: register_value(v, types[name])}, types)}
            for name, v in values.items()}


def compact(failing: set[tuple[str, ...]], domains: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Generalise each failing combination to '*' on every axis where all classes fail,
    then drop rows another row covers."""

    def expand(pattern: tuple[str, ...]):
        return product(*(domains[i] if c == "*" else (c,) for i, c in enumerate(pattern)))

    rows = set()
    for combo in failing:
        pattern = combo
        for i in range(len(domains)):
            wider = pattern[:i] + ("*",) + pattern[i + 1:]
            if all(e in failing for e in expand(wider)):
                pattern = wider
        rows.add(pattern)

    def covers(p, q):
        return p != q and all(a == "*" or a == b for a, b in zip(p, q))

    return sorted(r for r in rows if not any(covers(o, r) for o in rows))


def hitting_set(failing: tuple[tuple[str, ...], ...], n: int) -> list[tuple[int, str]]:
    """Greedy: (axis, class) literals such that every failing combination has one."""
    left = set(failing)
    chosen: list[tuple[int, str]] = []
    while left:
        counts: dict[tuple[int, str], int] = {}
        for combo in left:
            for i in range(n):
                counts[(i, combo[i])] = counts.get((i, combo[i]), 0) + 1
        best = max(counts, key=lambda k: (counts[k], -k[0], k[1]))  # no tie left to set order
        chosen.append(best)
        left = {c for c in left if c[best[0]] != best[1]}
    return chosen

