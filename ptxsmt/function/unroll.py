"""Loops by bounded unrolling (`--unroll K`): the body of each loop copied K times, the
branch back to its head in copy k going to the head of copy k+1, and in copy K to
`LIMIT`, where `encode.py` records the paths that would run a K+1st time
(`FunctionEncoding.bounded`): no verdict speaks of them ("equivalent up to K
iterations"), and `eval` refuses inputs that reach them.

A loop is a branch to a label above it. Inner loops are unrolled first, so a loop
nested in another runs up to K times each time the outer one does.
"""

from __future__ import annotations

from itertools import count

from ..isa.body import Directive, Generic, Item, Label
from ..isa.errors import PtxError, quote

LIMIT = "%unroll-limit"  # the target of the last copy's branch back: no label has it
# Loops without --unroll: each runs at most this many times; a counterexample within them
# is a real one ("different"), agreement only "unknown" (equivalent up to that many). The
# IR side (llvm/loops.py) takes the same default.
DEFAULT_UNROLL = 4


def unroll(items: list[Item], k: int) -> list[Item]:
    """`items` with every loop unrolled `k` times; with `k` = 0, a loop is an error."""
    fresh = count(1)
    while (edge := _innermost_loop(items)) is not None:
        head, back = edge
        g = items[back]
        if k <= 0:
            raise PtxError(f"loop: {quote(g.spelled)} branches back to "
                           f"{items[head].name}; ptxsmt follows loops only unrolled (--unroll "
                           "K: equivalent up to K iterations)", g.line, g.col)
        items = items[:head] + _copies(items[head:back + 1], k, next(fresh)) + items[back + 1:]
    return items


def _target(item: Item) -> str | None:
    return item.operands[-1].strip() if isinstance(item, Generic) and item.opcode == "bra" \
        else None


def _innermost_loop(items: list[Item]) -> tuple[int, int] | None:
    """(index of the head label, index of its last branch back) of the shortest loop."""
    where = {item.name: i for i, item in enumerate(items) if isinstance(item, Label)}
    loops: dict[int, int] = {}
    for j, item in enumerate(items):
        if (t := _target(item)) in where and where[t] <= j:
            loops[where[t]] = j
    return min(loops.items(), key=lambda e: e[1] - e[0], default=None)


def _copies(body: list[Item], k: int, n: int) -> list[Item]:
    head = body[0].name
    inside = {item.name for item in body if isinstance(item, Label)}
    for item in body:
        if isinstance(item, Generic) and item.opcode == "brx" or \
                isinstance(item, Directive) and item.name == ".branchtargets":
            raise PtxError("a jump table inside a loop: ptxsmt does not unroll it",
                           item.line, item.col)
    last = body[-1]
    done = Label(f"{head}%unrolled{n}", last.line, last.col)

    def name(label: str, c: int) -> str:
        return label if c == 1 else f"{label}%unrolled{n}.{c}"

    out: list[Item] = []
    for c in range(1, k + 1):
        for item in body:
            if isinstance(item, Label):
                out.append(item._replace(name=name(item.name, c)))
            elif (t := _target(item)) is None or t not in inside:
                out.append(item)
            elif t == head:  # a branch back (the last, or a `continue`)
                again = name(head, c + 1) if c < k else LIMIT
                out.append(item._replace(operands=(*item.operands[:-1], again)))
            else:
                out.append(item._replace(operands=(*item.operands[:-1], name(t, c))))
        if c < k:  # the last copy falls through to what follows the loop
            out.append(Generic("bra", ("uni",), (done.name,), None, last.line, last.col,
                               f"bra.uni {done.name}"))
    return [*out, done]
