"""The Boolean function a condition computes, as a truth table over what it asks of
floats: two conditions with one table are equal on every input, however the two
compilers spell them. -O0 branches on `setp.le` where opt selects on `setp.gtu` with
the arms swapped (one table is the other's negation); `isNaN` of a min is `isNaN(a) and
isNaN(b)` once the min's `ite`s are read.

A condition is read as a formula over basis variables, each a function of the inputs:
- `("nan", x)`: the float x is a NaN; `("nanbits", x, e)`: `(_ to_fp e s) x` is;
- `("lt", x, y)`, `("gt", x, y)`: x < y, x > y, where neither is a NaN (x the lower
  AST id): what a float comparison asks besides its NaN tests (`a <= b` is
  `!nan(a) and !nan(b) and !(a > b)`, `a == b` neither `<` nor `>`);
- `("atom", t)`: any other condition t, opaque.
An `isNaN` looks through `ite`s, NaN constants, `to_ieee_bv`, `fp.neg` and `fp.abs`.

Every input gives each variable one value, and each condition its value under the
formula, so two formulas with one table over all assignments (the unreachable ones,
`lt(x, y)` and `lt(y, x)` both true, included) are equal on every input: a table is a
proof, not a guess. The converse fails only on those unreachable rows, and there a
solver query is left to do what it did before.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache

import z3

from ...isa.literals import fp_class
from ...sem.sorts import FORMATS, fp_sort, ieee_result
from ...terms import ops

LIMIT = 12  # basis variables of a table (2**LIMIT rows); a larger condition is an atom
DEPTH = 48  # formula nesting kept; deeper, a condition is an atom (no deep recursion)
# A formula of more variables than REDUCED is read as its table over those it depends on,
# where they are at most WIDE: `isNaN(min(a, b))` names the min's inner comparisons and
# its free NaN but is `isNaN(a) and isNaN(b)`, and a relation of two mins asks four
# NaN tests, not twenty variables
REDUCED = 6
WIDE = 18
SHALLOW = 4  # levels of connectives a `shallow_table` reads

Formula = bool | tuple
_CONNECTIVES = {z3.Z3_OP_AND: "&", z3.Z3_OP_OR: "|", z3.Z3_OP_NOT: "!", z3.Z3_OP_XOR: "^",
                z3.Z3_OP_ITE: "?", z3.Z3_OP_IFF: "=", z3.Z3_OP_EQ: "=",
                z3.Z3_OP_DISTINCT: "^", z3.Z3_OP_IMPLIES: ">"}
# a float relation as (x < y, y < x) of its operands x, y, each True (must hold),
# False (must not) or None (either), besides neither being a NaN: the operator table's
_RELATIONS = {k: op.order for k, op in ops.family("fp compare").items()}


@dataclass(frozen=True)
class Table:
    basis: tuple  # the variables the function depends on, in one order
    rows: int  # bit k: the value where variable j is bit j of k

    def negated(self) -> Table:
        return Table(self.basis, self.rows ^ _full(len(self.basis)))

    @property
    def constant(self) -> bool | None:
        return None if self.basis else bool(self.rows)


@dataclass
class Tables:
    """Formulas of the conditions read so far, by AST id (each term kept alive, so that
    no id is reused while a formula names it)."""

    read: dict = field(default_factory=dict)
    kept: list[z3.ExprRef] = field(default_factory=list)

    def table(self, t: z3.BoolRef) -> Table | None:
        """The function `t` computes, over the variables it depends on; None where it is
        an atom of its own (too many variables)."""
        formula, support, _ = self._condition(t)
        if formula == ("v", ("atom", t.get_id())):
            return None
        return _table(formula, support)

    def _once(self, key, t: z3.ExprRef, read) -> tuple[Formula, frozenset, int]:
        """`read()` of term t, once per key."""
        found = self.read.get(key)
        if found is None:
            found = self.read[key] = _bounded(read(), t)
            self.kept.append(t)
        return found

    def _condition(self, t: z3.ExprRef) -> tuple[Formula, frozenset, int]:
        return self._once(t.get_id(), t, lambda: self._read_condition(t))

    def _read_condition(self, t: z3.ExprRef) -> tuple[Formula, frozenset, int]:
        if z3.is_true(t) or z3.is_false(t):
            return z3.is_true(t), frozenset(), 0
        kind = t.decl().kind()
        kids = t.children()
        if kind in _CONNECTIVES and all(z3.is_bool(c) for c in kids) and \
                (len(kids) == 2 or _CONNECTIVES[kind] in "&|!?"):
            return _join(_CONNECTIVES[kind], [self._condition(c) for c in kids])
        if kind == z3.Z3_OP_FPA_IS_NAN:
            return self._nan(kids[0])
        if kind in _RELATIONS:
            return self._relation(kind, *kids)
        return _atom(t)

    def _relation(self, kind: int, x: z3.FPRef, y: z3.FPRef) -> tuple[Formula, frozenset, int]:
        parts = [_join("!", [self._nan(x)]), _join("!", [self._nan(y)])]
        for (a, b), want in zip(((x, y), (y, x)), _RELATIONS[kind], strict=True):
            if want is not None:
                less = _less(a, b)
                parts.append(less if want else _join("!", [less]))
        return _join("&", parts)

    def _nan(self, x: z3.FPRef) -> tuple[Formula, frozenset, int]:
        """Whether the float x is a NaN."""
        return self._once(("nan", x.get_id()), x, lambda: self._read_nan(x))

    def _read_nan(self, x: z3.FPRef) -> tuple[Formula, frozenset, int]:
        if z3.is_fp_value(x):
            return x.isNaN(), frozenset(), 0
        kind = x.decl().kind()
        kids = x.children()
        if kind == z3.Z3_OP_FPA_TO_FP and len(kids) == 1:
            return self._nan_bits(kids[0], x.sort())
        if kind == z3.Z3_OP_ITE:
            c, a, b = kids
            return _join("?", [self._condition(c), self._nan(a), self._nan(b)])
        if kind in (z3.Z3_OP_FPA_NEG, z3.Z3_OP_FPA_ABS):
            return self._nan(kids[0])
        return _variable(("nan", x.get_id()))

    def _nan_bits(self, bits: z3.BitVecRef, sort: z3.FPSortRef) -> tuple[Formula, frozenset, int]:
        """Whether `bits` read as a float of `sort` are a NaN (16 bits may be f16 or
        bf16: the sort is part of the key)."""
        return self._once(("bits", bits.get_id(), sort.ebits()), bits,
                          lambda: self._read_nan_bits(bits, sort))

    def _read_nan_bits(self, bits: z3.BitVecRef, sort: z3.FPSortRef):
        fmt = next((f for f in FORMATS if fp_sort(f) == sort), None)
        if z3.is_bv_value(bits) and fmt is not None:
            return fp_class(bits.as_long(), fmt).endswith("NaN"), frozenset(), 0
        result = ieee_result(bits, sort)  # `to_bits(x)` is a NaN where x is
        if result is not None:
            return self._nan(result)
        kind = bits.decl().kind()
        kids = bits.children()
        if kind == z3.Z3_OP_ITE:
            c, a, b = kids
            return _join("?", [self._condition(c), self._nan_bits(a, sort),
                               self._nan_bits(b, sort)])
        if kind == z3.Z3_OP_FPA_TO_IEEE_BV and kids[0].sort() == sort:
            return self._nan(kids[0])
        return _variable(("nanbits", bits.get_id(), sort.ebits()))


def shallow_table(t: z3.BoolRef, name: Callable[[z3.ExprRef], tuple | None],
                  opaque: Callable[[z3.ExprRef], bool]) -> Table | None:
    """The function t computes over the conditions it is made of: its connectives and
    float relations are read SHALLOW levels down; a NaN test, a condition `opaque`
    holds for, any other condition, or one further down, is the variable `name` gives
    it (in sweeping: its node's representative), or one of its own where `name` gives
    None. Where the basis of the inputs' tests (`Tables.table`) has grown past LIMIT,
    two spellings of one relation of two mins still meet over the NaN tests they
    share. None past LIMIT variables. The terms named by id must stay alive while the
    table is kept (sweeping keeps every term it builds)."""
    support: set = set()

    def variable(u: z3.ExprRef, own: tuple) -> Formula:
        v = name(u) or own
        support.add(v)
        return ("v", v)

    def nan(x: z3.FPRef) -> Formula:
        return variable(z3.fpIsNaN(x), ("nan", x.get_id()))

    def read(u: z3.ExprRef, depth: int) -> Formula:
        if z3.is_true(u) or z3.is_false(u):
            return z3.is_true(u)
        kind, kids = u.decl().kind(), u.children()
        if kind == z3.Z3_OP_FPA_IS_NAN:
            return nan(kids[0])
        if depth >= SHALLOW or (depth and opaque(u)):
            return variable(u, ("atom", u.get_id()))
        if kind in _CONNECTIVES and all(z3.is_bool(c) for c in kids) and \
                (len(kids) == 2 or _CONNECTIVES[kind] in "&|!?"):
            return (_CONNECTIVES[kind], tuple(read(c, depth + 1) for c in kids))
        if kind in _RELATIONS:
            x, y = kids
            parts: list[Formula] = [("!", (nan(x),)), ("!", (nan(y),))]
            for (a, b), want in zip(((x, y), (y, x)), _RELATIONS[kind], strict=True):
                if want is not None:
                    less = _less(a, b)[0]
                    if less is not False:
                        support.add(less[1])
                    parts.append(less if want else ("!", (less,)))
            return ("&", tuple(parts))
        return variable(u, ("atom", u.get_id()))

    formula = read(t, 0)
    return None if len(support) > LIMIT else _table(formula, frozenset(support))


def _variable(v: tuple) -> tuple[Formula, frozenset, int]:
    return ("v", v), frozenset((v,)), 0


def _atom(t: z3.ExprRef) -> tuple[Formula, frozenset, int]:
    return _variable(("atom", t.get_id()))


def _bounded(read: tuple[Formula, frozenset, int], t: z3.ExprRef):
    """A formula of more than REDUCED variables as its table over those it depends on
    (a formula of its own); one of too many variables, or nested too deep, an atom."""
    formula, support, depth = read
    if REDUCED < len(support) <= WIDE:
        table = _table(formula, support)
        formula, support, depth = ("t", table), frozenset(table.basis), 0
    return _atom(t) if len(support) > LIMIT or depth > DEPTH else (formula, support, depth)


def _table(formula: Formula, support: frozenset) -> Table:
    """The formula's table over the variables of `support` it depends on."""
    basis = tuple(sorted(support))
    rows = _rows(formula, basis)
    needed = tuple(v for k, v in enumerate(basis) if _depends(rows, k, len(basis)))
    return Table(needed, rows if needed == basis else _rows(formula, needed))


def _less(x: z3.FPRef, y: z3.FPRef) -> tuple[Formula, frozenset, int]:
    """x < y where neither is a NaN: `("lt", a, b)` or `("gt", a, b)`, a the lower
    AST id; false where x and y are one term."""
    a, b = x.get_id(), y.get_id()
    if a == b:
        return False, frozenset(), 0
    return _variable(("lt", a, b) if a < b else ("gt", b, a))


def _join(op: str, parts: list[tuple[Formula, frozenset, int]]) -> tuple[Formula, frozenset, int]:
    support = frozenset().union(*(p[1] for p in parts))
    return (op, tuple(p[0] for p in parts)), support, 1 + max((p[2] for p in parts), default=0)


@cache
def _full(n: int) -> int:
    return (1 << (1 << n)) - 1


@cache
def _pattern(n: int, k: int) -> int:
    """The rows (of 2**n) where variable k is true."""
    width, block = 1 << k, ((1 << (1 << k)) - 1) << (1 << k)
    period = 2 * width
    while period < (1 << n):
        block |= block << period
        period *= 2
    return block


def _depends(rows: int, k: int, n: int) -> bool:
    p = _pattern(n, k)
    return (rows & p) >> (1 << k) != rows & ~p & _full(n)


# each connective on its operands' rows (`full`: every row true)
_OPERATORS = {
    "&": lambda v, full: functools.reduce(operator.and_, v, full),
    "|": lambda v, full: functools.reduce(operator.or_, v, 0),
    "!": lambda v, full: full ^ v[0],
    "^": lambda v, full: v[0] ^ v[1],
    "=": lambda v, full: full ^ v[0] ^ v[1],
    ">": lambda v, full: (full ^ v[0]) | v[1],
    "?": lambda v, full: (v[0] & v[1]) | ((full ^ v[0]) & v[2]),
}


def _rows(formula: Formula, basis: tuple) -> int:
    n = len(basis)
    full = _full(n)
    var = {v: _pattern(n, k) for k, v in enumerate(basis)}
    memo: dict[int, int] = {}

    def ev(f: Formula) -> int:
        if f is True or f is False:
            return full if f else 0
        got = memo.get(id(f))
        if got is not None:
            return got
        op, args = f
        if op == "v":  # a variable the function does not depend on (`_table`) is false
            out = var.get(args, 0)
        elif op == "t":
            out = _expand(args, var, full)
        else:
            out = _OPERATORS[op]([ev(a) for a in args], full)
        memo[id(f)] = out
        return out

    return ev(formula)


def _expand(table: Table, var: dict, full: int) -> int:
    """A table's rows in a larger basis (`var`: each variable's rows there), as the
    `ite`s of its variables, the last outermost (the upper half of its rows)."""
    def rows_of(n: int, rows: int) -> int:
        if rows in (0, _full(n)):
            return full if rows else 0
        half = 1 << (n - 1)
        v = var.get(table.basis[n - 1], 0)
        upper, lower = rows_of(n - 1, rows >> half), rows_of(n - 1, rows & _full(n - 1))
        return (v & upper) | ((full ^ v) & lower)

    return rows_of(len(table.basis), table.rows)
