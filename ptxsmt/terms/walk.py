"""Walks of Z3 term DAGs: each shared subterm once (by AST id), however many parents
it has, with an explicit stack (a deep term does not reach Python's recursion limit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import z3


def subterms(*roots: z3.ExprRef,
             below: Callable[[z3.ExprRef], bool] | None = None) -> Iterator[z3.ExprRef]:
    """Each distinct subterm of the roots once, where the walk first reaches it (depth
    first, the last root and the last child first: a subterm comes after one of its
    parents, not always after all); where `below(t)` is false, not t's children
    (unless another parent reaches them)."""
    seen, todo = set(), list(roots)
    while todo:
        t = todo.pop()
        if t.get_id() not in seen:
            seen.add(t.get_id())
            yield t
            if below is None or below(t):
                todo.extend(t.children())


def is_free(t: z3.ExprRef) -> bool:
    """An uninterpreted symbol: a free constant (an input) or an application of a free
    function (a value the ISA leaves open)."""
    return z3.is_app(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED


def free_applications(*roots: z3.ExprRef) -> list[z3.ExprRef]:
    """The applications of free functions in the roots (inputs are constants, never
    applied), in `subterms`' order."""
    return [t for t in subterms(*roots) if is_free(t) and t.num_args()]


def free_values(*roots: z3.ExprRef) -> list[z3.ExprRef]:
    """The outermost free symbols, constants and applications (not those only in the
    arguments of another), in `subterms`' order."""
    return [t for t in subterms(*roots, below=lambda t: not is_free(t)) if is_free(t)]
