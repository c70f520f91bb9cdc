"""Loops of an IR function by bounded unrolling (`--unroll K`), as `function/unroll.py`
does for PTX: the CFG is walked as an acyclic graph of block copies, a copy being a
block and, for each loop around it (outermost first), the iteration it runs in (1 to
K). A branch back to a loop's header goes to the header's next copy; from the Kth copy
it goes nowhere (`target` is None), and `encode.py` records the paths that take it
(they would run the loop a K+1st time): no verdict speaks of them ("refines up to K
iterations"). A loop whose bound is never reached (a small constant trip count) is
unrolled whole, and the verdict is plain.

Loops are natural loops: a header that every block of the loop passes through from the
entry. A cycle entered elsewhere (irreducible control flow) is refused.
"""

from __future__ import annotations

from .errors import Unsupported

Copy = tuple[int, tuple[int, ...]]  # (block, the iteration of each loop around it)


class Unrolled:
    """The copies of `succs`' blocks (block -> its successors) reachable from `entry`,
    each loop run at most `k` times, in topological order (`order`)."""

    def __init__(self, entry: int, succs: dict[int, list[int]], k: int, name: str):
        self.k, self.name = k, name
        self.bodies = _loops(entry, succs, name)
        if self.bodies and k <= 0:
            raise Unsupported("loop", f"a branch back to a block in @{name}; ptxsmt follows "
                              "loops only unrolled (--unroll K: refines up to K iterations)")
        # each block's loops, outermost (largest) first: natural loops nest
        self.chain = {b: tuple(h for h, _ in sorted(
            ((h, body) for h, body in self.bodies.items() if b in body),
            key=lambda e: -len(e[1]))) for b in succs}
        self.order = self._order((entry, ()), succs)

    def target(self, at: Copy, block: int) -> Copy | None:
        """The copy of `block` a branch from copy `at` goes to; None past the Kth
        iteration of the loop it branches back in."""
        source, counts = at
        here = dict(zip(self.chain[source], counts, strict=True))
        out = []
        for h in self.chain[block]:
            if h not in here:  # a loop entered, at its header
                out.append(1)
            elif block == h and source in self.bodies[h]:  # a branch back: one more time
                if here[h] >= self.k:
                    return None
                out.append(here[h] + 1)
            else:
                out.append(here[h])
        return block, tuple(out)

    def _order(self, entry: Copy, succs: dict[int, list[int]]) -> list[Copy]:
        order, seen = [], {entry}
        stack = [(entry, iter(succs[entry[0]]))]
        while stack:  # iterative DFS over copies: the graph of copies is acyclic
            node, rest = stack[-1]
            nxt = next(rest, None)
            if nxt is None:
                order.append(node)
                stack.pop()
                continue
            copy = self.target(node, nxt)
            if copy is not None and copy not in seen:
                seen.add(copy)
                stack.append((copy, iter(succs[nxt])))
        return order[::-1]


def _loops(entry: int, succs: dict[int, list[int]], name: str) -> dict[int, frozenset[int]]:
    """Each loop header -> the blocks of its natural loop (all its branches back): the
    header and every block that reaches a branch back without passing the header."""
    preds: dict[int, list[int]] = {b: [] for b in succs}
    for b, outs in succs.items():
        for s in outs:
            preds[s].append(b)
    backs: dict[int, list[int]] = {}
    state = {entry: 1}  # 1 = on the DFS stack, 2 = done
    stack = [(entry, iter(succs[entry]))]
    while stack:
        node, rest = stack[-1]
        nxt = next(rest, None)
        if nxt is None:
            state[node] = 2
            stack.pop()
        elif state.get(nxt) == 1:
            backs.setdefault(nxt, []).append(node)
        elif nxt not in state:
            state[nxt] = 1
            stack.append((nxt, iter(succs[nxt])))
    bodies = {}
    for head, latches in backs.items():
        body, todo = {head}, list(latches)
        while todo:
            b = todo.pop()
            if b in body:
                continue
            if b == entry:  # a path from the entry into the cycle that avoids its head
                raise Unsupported("loop", f"a cycle entered other than at one head in @{name} "
                                  "(irreducible control flow)")
            body.add(b)
            todo.extend(p for p in preds[b] if p in state)
        bodies[head] = frozenset(body)
    return bodies
