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

# AST id -> (the term, held so that its id stays its own; its hash; whether that is
# z3's own, no float numeral below it)
_HASHES: dict[int, tuple[z3.ExprRef, int, bool]] = {}
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
        return _text(self.term) < _text(other.term)  # a collision: rare, and then exact

    def __hash__(self) -> int:
        return self.hash


def _known(t: z3.ExprRef) -> tuple[z3.ExprRef, int, bool] | None:
    found = _HASHES.get(t.get_id())
    return found if found is not None and found[0].eq(t) else None


def _hash(t: z3.ExprRef) -> int:
    """z3's hash of `t`, but for a float numeral (its text and sort) and a term above
    one (its operator's hash and its operands' `_hash`)."""
    if (known := _known(t)) is not None:
        return known[1]
    if len(_HASHES) > _LIMIT:
        _HASHES.clear()
    # operands first, without recursion (terms run thousands deep); each term's
    # operands read from z3 once (on the way down), its hash made on the way up
    stack: list[tuple[z3.ExprRef, list[z3.ExprRef] | None]] = [(t, None)]
    while stack:
        n, kids = stack[-1]
        if kids is None:
            if _known(n) is not None:
                stack.pop()
                continue
            kids = n.children() if z3.is_app(n) else []
            stack[-1] = (n, kids)
            stack.extend((k, None) for k in kids if _known(k) is None)
            continue
        stack.pop()
        below = [_HASHES[k.get_id()] for k in kids]
        if z3.is_fp_value(n):
            h, own = zlib.crc32(" ".join(_text(n)).encode()), False
        elif all(b[2] for b in below):
            h, own = n.hash(), True
        else:
            h, own = zlib.crc32(struct.pack(f"<{len(kids) + 1}I", n.decl().hash(),
                                            *[b[1] for b in below])), False
        _HASHES[n.get_id()] = (n, h, own)
    return _HASHES[t.get_id()][1]


def _text(t: z3.ExprRef) -> tuple[str, str]:
    return t.sexpr(), t.sort().sexpr()


def structural(t: z3.ExprRef) -> _Key:
    """A sort key for t: equal for one term, the same order in every run."""
    return _Key(t)
