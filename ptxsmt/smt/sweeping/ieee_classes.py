"""Proofs by IEEE value classes: an abstract interpretation of a term DAG in which a
float (or the bits of an f32 or f64 register) is only known to lie in some of seven
classes (NaN, +0, -0, +inf, -inf, positive, negative) and a condition is true, false,
or either.

It decides the conditions that a chain of float operations makes equal to a test of
its inputs and that bit-blasting cannot: "p0 and p1 are NaNs" against "p0 and p1 are
NaNs, and so is x" where x is a chain of additions and mins over them (a NaN in, a
NaN out; a min is a NaN only where both operands are). `equal(i, r)` splits on the
literals of r (each a class test of one node): where every case gives i the value r
has, the two are equal on every input. The reading over-approximates: a node's value
always lies in its classes, so a definite answer holds for all inputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import z3

from ...isa.literals import fp_class
from ...isa.types import F32, F64, FloatFormat
from ...terms import ops
from ...terms.ops import ANY, MINUS_INF, MINUS_ZERO, NAN, NEGATIVE, PLUS_INF, PLUS_ZERO, POSITIVE
from .simulate import Node

FALSE, TRUE, EITHER = 1, 2, 3  # a condition's values
# nested `ite`s read with their path's narrowed classes (`Classes._ite`): a min's are
# three deep
PATH_DEPTH = 4
PATHS = 20_000  # (ite, path) pairs read in one `Classes.value`; past them, no narrowing
NODES = 100_000  # nodes read in one `Classes.value`; past them, a condition is either

# the formats a register's bits are read in, by width (16 bits: f16 or bf16, not read)
FORMATS = {f.width: (f.ebits, f.sbits) for f in (F32, F64)}
# `isa.literals.fp_class`'s names, as classes
CLASS_OF = {"qNaN": NAN, "sNaN": NAN, "+inf": PLUS_INF, "-inf": MINUS_INF,
            "+0": PLUS_ZERO, "-0": MINUS_ZERO, "+subnormal": POSITIVE, "+normal": POSITIVE,
            "-subnormal": NEGATIVE, "-normal": NEGATIVE}
# the operator table's class rules (`terms/ops.py`): fp.isNaN and the like, node -> the
# classes for which it holds; the ordered comparisons (false on a NaN); the IEEE operations
# that give a NaN where an operand is one, and the operand classes that make a NaN of numbers
TESTS = {k: op.holds for k, op in ops.family("fp test").items() if op.holds is not None}
COMPARISONS = set(ops.family("fp compare"))
PROPAGATING = {k for k, op in ops.OPS.items() if op.propagates}
INVALID = {k: op.invalid for k, op in ops.OPS.items() if op.invalid}


def float_class(x: float) -> int:
    if math.isnan(x):
        return NAN
    minus = math.copysign(1.0, x) < 0
    if x == 0:
        return MINUS_ZERO if minus else PLUS_ZERO
    if math.isinf(x):
        return MINUS_INF if minus else PLUS_INF
    return NEGATIVE if minus else POSITIVE


def bits_class(bits: int, fmt: tuple[int, int]) -> int:
    """The class of the float that `bits` encode in the format (ebits, sbits)."""
    return CLASS_OF[fp_class(bits, FloatFormat("", *fmt))]


class Classes:
    """The classes of the nodes of one DAG (`nodes`, `kids`: children first, as
    `fraig._Dag` holds them)."""

    def __init__(self, nodes: Sequence[Node], kids: Sequence[tuple[int, ...]],
                 rep: Sequence[int] | None = None):
        self.nodes, self.kids = nodes, kids
        # each node's representative (a node proved equal to it: sweeping's merges), so
        # that an assumption about one holds for every node merged into it
        self.rep = rep if rep is not None else range(len(nodes))
        self._paths: dict[tuple, int] = {}  # an `ite`'s classes on a path (`_ite`)
        # node -> (the node it tests, the classes for which it holds)
        self.tests: dict[int, tuple[int, int]] = {}
        for j, n in enumerate(nodes):
            test = self._test(j, n)
            if test is not None:
                self.tests[j] = (self.root(test[0]), test[1])

    def root(self, j: int) -> int:
        """The node whose classes node j's are: a float read from its bits, the bits
        of a float (`fp.to_ieee_bv` writes a NaN as some NaN)."""
        while True:
            n = self.nodes[j]
            if n.kind == z3.Z3_OP_FPA_TO_IEEE_BV:
                fmt = FORMATS.get(n.sort.width)
            elif n.kind == z3.Z3_OP_FPA_TO_FP and len(n.kids) == 1 and n.kids[0].kind == "bv":
                fmt = FORMATS.get(n.kids[0].width)
                fmt = fmt if fmt == n.sort.fmt else None
            else:
                return j
            if fmt is None:  # 16 bits may be read as f16 and as bf16: their own classes
                return j
            j = self.kids[j][0]

    def _test(self, j: int, n: Node) -> tuple[int, int] | None:
        if n.kind in TESTS:
            return self.kids[j][0], TESTS[n.kind]
        if n.kind == z3.Z3_OP_AND and len(self.kids[j]) == 2:  # `sorts.is_nan` of bits
            exp, frac = (self._field(k) for k in self.kids[j])
            if exp and frac and exp[0] == z3.Z3_OP_EQ and frac[0] == z3.Z3_OP_DISTINCT \
                    and exp[1] == frac[1]:
                x, fmt = exp[1], FORMATS.get(self.nodes[exp[1]].sort.width)
                if fmt and exp[2:] == (fmt[0] + fmt[1] - 2, fmt[1] - 1, (1 << fmt[0]) - 1) \
                        and frac[2:] == (fmt[1] - 2, 0, 0):
                    return x, NAN
        return None

    def _field(self, j: int) -> tuple | None:
        """(=/distinct, x, high, low, constant) where node j compares bits high..low of
        x with a constant."""
        n, kids = self.nodes[j], self.kids[j]
        if n.kind not in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) or len(kids) != 2:
            return None
        field, value = (self.nodes[k] for k in kids)
        if field.kind != z3.Z3_OP_EXTRACT or value.const is None:
            return None
        return (n.kind, self.kids[kids[0]][0], *field.params, value.const)

    def literals(self, j: int) -> tuple[int, list[tuple[int, int]]] | None:
        """Node j as (and/or, its tests) or (None, [its one test]), a `not` of them
        as the tests of the other classes under or/and; None otherwise."""
        n = self.nodes[j]
        if j in self.tests:
            return None, [self.tests[j]]
        if n.kind in (z3.Z3_OP_AND, z3.Z3_OP_OR) and all(k in self.tests for k in self.kids[j]):
            return n.kind, [self.tests[k] for k in self.kids[j]]
        if n.kind == z3.Z3_OP_NOT:
            inner = self.literals(self.kids[j][0])
            if inner is not None:
                kind, tests = inner
                flipped = {z3.Z3_OP_AND: z3.Z3_OP_OR, z3.Z3_OP_OR: z3.Z3_OP_AND, None: None}
                return flipped[kind], [(x, ANY & ~m) for x, m in tests]
        return None

    def equal(self, i: int, r: int) -> bool:
        """Nodes i and r (conditions) are equal on every input, by cases on the literals
        of one of them; False where that cannot tell."""
        return self._equal(i, r) or self._equal(r, i)

    def _equal(self, i: int, r: int) -> bool:
        n = self.nodes[r]
        if n.kind in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
            return self.value(i, {}) == (TRUE if n.kind == z3.Z3_OP_TRUE else FALSE)
        read = self.literals(r)
        if read is None or self.nodes[i].sort.kind != "bool":
            return False
        kind, tests = read
        tests = [(self.rep[x], m) for x, m in tests]
        # r true: all its tests (and) or one of them (or); r false: the reverse
        one, one_not = [{x: m} for x, m in tests], [{x: ANY & ~m} for x, m in tests]
        every, every_not = [_all(one)], [_all(one_not)]
        true_cases, false_cases = (one, every_not) if kind == z3.Z3_OP_OR else (every, one_not)
        return all(self.value(i, c) in (TRUE, 0) for c in true_cases) and \
            all(self.value(i, c) in (FALSE, 0) for c in false_cases)

    def value(self, top: int, assume: dict[int, int]) -> int:
        """Node top's classes (a condition's FALSE/TRUE/EITHER) where each node of
        `assume` (a representative) lies in the classes given; 0 where no input meets
        the assumptions."""
        values: dict[int, int] = {}
        self._paths = {}
        todo = [top]
        while todo:
            j = todo[-1]
            if j in values:
                todo.pop()
                continue
            pending = [k for k in self._needs(j, values) if k not in values]
            if pending:
                todo.extend(pending)
                continue
            todo.pop()
            if len(values) > NODES:
                return ANY | EITHER  # too large to read: nothing known
            v = self._transfer(j, values)
            if self.rep[j] in assume:
                v &= assume[self.rep[j]]
                if not v:
                    return 0
            values[j] = v
        return values[top]

    def implied(self, c: int, holds: bool, depth: int = 0) -> list[tuple[int, int]]:
        """The classes condition c narrows where it `holds` (or not): a test's node;
        the tests under `and`s that hold, `or`s that do not, `not`; both operands of
        an ordered comparison that holds are numbers."""
        n, kids = self.nodes[c], self.kids[c]
        if c in self.tests:
            x, m = self.tests[c]
            return [(x, m if holds else ANY & ~m)]
        if depth > PATH_DEPTH:
            return []
        if n.kind == z3.Z3_OP_NOT:
            return self.implied(kids[0], not holds, depth + 1)
        if n.kind == (z3.Z3_OP_AND if holds else z3.Z3_OP_OR):
            return [f for k in kids for f in self.implied(k, holds, depth + 1)]
        if n.kind in COMPARISONS and holds:
            return [(self.root(k), ANY & ~NAN) for k in kids]
        return []

    def _needs(self, j: int, values: dict[int, int]) -> tuple[int, ...]:
        """The children whose classes node j's need (an `ite` whose condition is
        decided needs only that arm)."""
        kids = self.kids[j]
        if self.nodes[j].kind == z3.Z3_OP_ITE:
            c = values.get(kids[0])
            if c is None:
                return kids[:1]
            return kids[1:2] if c == TRUE else kids[2:3] if c == FALSE else kids[1:]
        if j in self.tests:
            return (self.tests[j][0],)
        return kids

    def _transfer(self, j: int, values: dict[int, int]) -> int:
        n, kids = self.nodes[j], self.kids[j]
        k, sort = n.kind, n.sort
        if j in self.tests:
            x, m = self.tests[j]
            return _holds(values[x], m)
        tracked = sort.kind == "fp" or sort.kind == "bv" and sort.width in FORMATS
        if k == z3.Z3_OP_ITE and (tracked or sort.kind == "bool"):
            return self._ite(j, values)
        if sort.kind == "bool":
            return self._condition(n, [values[c] for c in kids])
        if not tracked:
            return ANY  # not read as a float
        if n.const is not None:
            if sort.kind == "bv":
                return bits_class(n.const, FORMATS[sort.width])
            return float_class(n.const)
        if k in (z3.Z3_OP_FPA_TO_IEEE_BV, z3.Z3_OP_FPA_TO_FP) and len(kids) == 1:
            src = self.nodes[kids[0]].sort
            same = src.kind == "fp" or FORMATS.get(src.width) == sort.fmt
            return values[kids[0]] if same else ANY
        operands = [values[c] for c, s in zip(kids, n.kids, strict=True) if s.kind == "fp"]
        if k in PROPAGATING:
            return _propagating(k, operands)
        return ANY

    def _ite(self, j: int, values: dict[int, int], path: dict[int, int] | None = None,
             depth: int = 0) -> int:
        """An `ite`'s classes: its arms', each read where the condition has the value
        that selects it. Where the condition is a class test of node x, x's classes are
        narrowed on each side (`path`) for the `ite`s nested in the arms too, so that a
        min's `ite(isNaN(a), b, ite(isNaN(b), a, ...))` is no NaN where `a` is none."""
        path = path or {}
        key = (j, tuple(sorted(path.items())))
        if key in self._paths:
            return self._paths[key]
        c, yes, no = self.kids[j]
        v, test = values[c], self.tests.get(c)
        if test is not None and test[0] in path:
            v &= _holds(values[test[0]] & path[test[0]], test[1])

        def arm(a: int, holds: bool) -> int:
            inner = path
            for x, m in self.implied(c, holds):
                inner = {**inner, x: inner.get(x, ANY) & m}
            narrowed = inner.get(self.root(a), ANY)
            if self.nodes[a].kind == z3.Z3_OP_ITE and self.nodes[a].sort == self.nodes[j].sort \
                    and inner and depth < PATH_DEPTH and len(self._paths) < PATHS:
                return self._ite(a, values, inner, depth + (inner is not path)) & narrowed
            return values[a] & narrowed

        out = (arm(yes, True) if v & TRUE else 0) | (arm(no, False) if v & FALSE else 0)
        self._paths[key] = out
        return out

    @staticmethod
    def _condition(n: Node, args: list[int]) -> int:
        k = n.kind
        if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE):
            return TRUE if k == z3.Z3_OP_TRUE else FALSE
        if k == z3.Z3_OP_NOT:
            return _not(args[0])
        if k == z3.Z3_OP_AND:
            return FALSE if any(a == FALSE for a in args) else \
                TRUE if all(a == TRUE for a in args) else EITHER
        if k == z3.Z3_OP_OR:
            return TRUE if any(a == TRUE for a in args) else \
                FALSE if all(a == FALSE for a in args) else EITHER
        if k in COMPARISONS:  # an ordered comparison with a NaN is false
            return FALSE if any(a == NAN for a in args) else EITHER
        if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) and len(args) == 2 and \
                all(s.kind in ("bv", "fp") for s in n.kids):
            a, b = args
            tracked = all(s.kind == "fp" or s.width in FORMATS for s in n.kids)
            if tracked and a and b and not a & b:  # no value in common
                return FALSE if k == z3.Z3_OP_EQ else TRUE
        return EITHER


def _all(cases: list[dict[int, int]]) -> dict[int, int]:
    """The assumptions of all the cases at once."""
    out: dict[int, int] = {}
    for case in cases:
        for x, m in case.items():
            out[x] = out.get(x, ANY) & m
    return out


def _holds(classes: int, test: int) -> int:
    if not classes:
        return 0
    return (TRUE if classes & test else 0) | (FALSE if classes & ~test & ANY else 0)


def _not(v: int) -> int:
    return (TRUE if v & FALSE else 0) | (FALSE if v & TRUE else 0)


def _propagating(k: int, operands: list[int]) -> int:
    """An IEEE operation's classes: a NaN where an operand is one or the operation is
    invalid on the operands' classes; any number otherwise (rounding may overflow or
    reach zero)."""
    if not all(operands):
        return 0
    if any(a == NAN for a in operands):
        return NAN
    nan = any(a & NAN for a in operands)
    if k in INVALID:
        a, b = operands
        nan = nan or any(a & x and b & y for x, y in INVALID[k])
    else:  # fma, sqrt, remainder, rounding: not read further
        nan = True
    return (ANY & ~NAN) | (NAN if nan else 0)
