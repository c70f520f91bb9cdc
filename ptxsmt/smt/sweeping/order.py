"""One order of terms that depends on what they are, never on when they were made.

Normal forms (`rewrite.py`) and the sweep (`fraig.py`) put operands and candidates in
an order; ordered by AST id (creation order, and ids are reused once a term dies), the
same pair of functions gave other normal forms, other merges and other verdicts after
an unrelated change or even a run that built a term more first. `structural` orders by
Z3's structural hash (a function of the operator, its parameters and its children's
hashes: names and values, never ids or addresses), and where two different terms share
a hash, by their printed text. Not z3's hash where a term holds a float numeral: z3
keeps float values in a table and hashes a numeral by its index there (creation
order: `FPVal(1.0)` hashes one way in a fresh process, another after 2.0 was made), so
such a numeral hashes by its text, and each term above it by its operator and its
operands' hashes (`_hash`).
"""

from __future__ import annotations

import struct
import zlib
from functools import total_ordering

import z3

# (its context, AST id) -> (its hash; whether that is z3's own, no float numeral below
# it), of the terms `_hash` was asked about and every term below them: those are held
# (`_HELD`), so that the terms below them (and their context) live too and no other
# term takes one of their keys; ids are a context's own (a portfolio's second context
# numbers its terms from one again: a review's finding)
_HASHES: dict[tuple[int, int], tuple[int, bool]] = {}
_HELD: list[z3.ExprRef] = []
_LIMIT = 200_000  # entries before the table starts afresh (memory, not meaning)


@total_ordering
class _Key:
    __slots__ = ("term", "hash")

    def __init__(self, term: z3.ExprRef):
        self.term, self.hash = term, _hash(term)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.term.eq(other.term)

    def __lt__(self, other: _Key) -> bool:
        if self.hash != other.hash:
            return self.hash < other.hash
        if self.term.eq(other.term):  # x * x: its text printed twice cost a third of
            return False  # `normal` on half-1000 (a DAG printed as a tree)
        return _text(self.term.ctx.ref(), self.term.as_ast()) < \
            _text(other.term.ctx.ref(), other.term.as_ast())  # a collision: rare, and exact

    def __hash__(self) -> int:
        return self.hash


def _hash(t: z3.ExprRef) -> int:
    """z3's hash of `t`, but for a float numeral (its text and sort) and a term above
    one (its operator's hash and its operands' `_hash`)."""
    c = id(t.ctx)
    if (known := _HASHES.get((c, t.get_id()))) is not None:
        return known[0]
    if len(_HASHES) > _LIMIT:
        _HASHES.clear()
        _HELD.clear()
    _HELD.append(t)
    # operands first, without recursion (terms run thousands deep), read through z3's C
    # API (a Python term for each operand cost three quarters of the walk); each
    # term's operands read once (on the way down), its hash made on the way up
    ctx = t.ctx.ref()
    stack: list[tuple[z3.Ast, tuple[int, int], list[tuple[z3.Ast, tuple[int, int]]] | None]] = \
        [(t.as_ast(), (c, t.get_id()), None)]
    while stack:
        n, i, kids = stack[-1]
        if kids is None:
            if i in _HASHES:
                stack.pop()
                continue
            app = z3.Z3_get_ast_kind(ctx, n) == z3.Z3_APP_AST
            args = [z3.Z3_get_app_arg(ctx, n, k)
                    for k in range(z3.Z3_get_app_num_args(ctx, n) if app else 0)]
            kids = [(a, (c, z3.Z3_get_ast_id(ctx, a))) for a in args]
            stack[-1] = (n, i, kids)
            stack.extend((a, k, None) for a, k in kids if k not in _HASHES)
            continue
        stack.pop()
        below = [_HASHES[k] for _, k in kids]
        if z3.Z3_is_numeral_ast(ctx, n) and z3.Z3_get_sort_kind(
                ctx, z3.Z3_get_sort(ctx, n)) == z3.Z3_FLOATING_POINT_SORT:
            h, own = zlib.crc32(" ".join(_text(ctx, n)).encode()), False
        elif all(b[1] for b in below):
            h, own = z3.Z3_get_ast_hash(ctx, n), True
        else:
            decl = z3.Z3_func_decl_to_ast(ctx, z3.Z3_get_app_decl(ctx, n))
            h, own = zlib.crc32(struct.pack(f"<{len(kids) + 1}I", z3.Z3_get_ast_hash(ctx, decl),
                                            *[b[0] for b in below])), False
        _HASHES[i] = (h, own)
    return _HASHES[c, t.get_id()][0]


def _text(ctx: z3.ContextObj, n: z3.Ast) -> tuple[str, str]:
    """A term's text and its sort's (`sexpr()`'s)."""
    sort = z3.Z3_sort_to_ast(ctx, z3.Z3_get_sort(ctx, n))
    return z3.Z3_ast_to_string(ctx, n), z3.Z3_ast_to_string(ctx, sort)


def structural(t: z3.ExprRef) -> _Key:
    """A sort key for t: equal for one term, the same order in every run."""
    return _Key(t)
