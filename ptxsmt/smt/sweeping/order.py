"""One order of terms that depends on what they are, never on when they were made.

Normal forms (`rewrite.py`) and the sweep (`fraig.py`) put operands and candidates in
an order; ordered by AST id (creation order, and ids are reused once a term dies), the
same pair of functions gave other normal forms, other merges and other verdicts after
an unrelated change or even a run that built a term more first. `structural` orders by
Z3's structural hash (a function of the operator, its parameters and its children's
hashes: names and values, never ids or addresses), and where two different terms share
a hash, by their printed text.
"""

from __future__ import annotations

from functools import total_ordering

import z3


@total_ordering
class _Key:
    __slots__ = ("term", "hash")

    def __init__(self, term: z3.ExprRef):
        self.term, self.hash = term, term.hash()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self.term.eq(other.term)

    def __lt__(self, other: _Key) -> bool:
        if self.hash != other.hash:
            return self.hash < other.hash
        return _text(self.term) < _text(other.term)  # a collision: rare, and then exact

    def __hash__(self) -> int:
        return self.hash


def _text(t: z3.ExprRef) -> tuple[str, str]:
    return t.sexpr(), t.sort().sexpr()


def structural(t: z3.ExprRef) -> _Key:
    """A sort key for t: equal for one term, the same order in every run."""
    return _Key(t)
