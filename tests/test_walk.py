"""The term walks (`ptxsmt/terms/walk.py`) against a plain recursive reading of the same
terms: every shared subterm once, parents first, the free symbols it names."""

from __future__ import annotations

import z3

from ptxsmt.terms import walk


def every_path(t: z3.ExprRef) -> list[z3.ExprRef]:
    """Each subterm once per path to it (recursive: the reference)."""
    return [t] + [u for c in t.children() for u in every_path(c)]


def sample() -> z3.ExprRef:
    x, y = z3.BitVecs("x y", 8)
    f = z3.Function("f", z3.BitVecSort(8), z3.BitVecSort(8))
    shared = x * y + f(x)
    return z3.If(shared > f(f(y)), shared + 1, shared)


def test_each_subterm_once_after_a_parent():
    t = sample()
    order = list(walk.subterms(t))
    ids = [u.get_id() for u in order]
    assert sorted(ids) == sorted({u.get_id() for u in every_path(t)})  # each once
    reached = {t.get_id()}
    for u in order:
        assert u.get_id() in reached
        reached |= {c.get_id() for c in u.children()}


def test_below_stops_the_walk_under_a_term():
    x, y = z3.BitVecs("x y", 8)
    t = z3.Concat(x + y, x)
    not_a_sum = lambda u: not z3.is_app_of(u, z3.Z3_OP_BADD)  # noqa: E731
    assert {u.get_id() for u in walk.subterms(t, below=not_a_sum)} == \
        {t.get_id(), (x + y).get_id(), x.get_id()}


def test_free_symbols():
    t = sample()
    reference = {u.sexpr() for u in every_path(t) if u.num_args() and
                 u.decl().kind() == z3.Z3_OP_UNINTERPRETED}
    assert {u.sexpr() for u in walk.free_applications(t)} == reference == {"(f x)", "(f y)",
                                                                           "(f (f y))"}
    # the outermost only: f(y) inside f(f(y)) is not reached past f(f(y))
    assert {u.sexpr() for u in walk.free_values(t)} == {"x", "y", "(f x)", "(f (f y))"}
