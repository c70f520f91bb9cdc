"""Local rewrites that make one value one term: the semantics and two compilers spell
some values two ways (`a > b` and `b < a`; a NaN test on the bits or on the float), and
equivalence sweeping (`fraig.py`) merges for free what is one term, where two spellings
cost it a solver query.

Each rule looks only at a term's root and its children, which are rewritten already,
and gives a term equal to it for every value of its free constants (each rule is
proved so in tests/test_rewrite.py); `normal` applies the first that matches.
"""

from __future__ import annotations

from collections.abc import Callable

import z3


def _full_extract(t: z3.ExprRef) -> z3.ExprRef | None:
    """((_ extract w-1 0) x) of a w-bit x is x."""
    hi, lo = t.params()
    x = t.arg(0)
    return x if lo == 0 and hi == x.size() - 1 else None


def _greater(t: z3.ExprRef) -> z3.ExprRef | None:
    """a > b is b < a; a >= b is b <= a (floats: both false on a NaN, alike)."""
    a, b = t.children()
    return z3.fpLT(b, a) if t.decl().kind() == z3.Z3_OP_FPA_GT else z3.fpLEQ(b, a)


def _not_not(t: z3.ExprRef) -> z3.ExprRef | None:
    x = t.arg(0)
    return x.arg(0) if z3.is_not(x) else None


def _ite_of_not(t: z3.ExprRef) -> z3.ExprRef | None:
    """ite(!c, a, b) is ite(c, b, a)."""
    c, a, b = t.children()
    return z3.If(c.arg(0), b, a) if z3.is_not(c) else None


def _bits_nan_test(t: z3.ExprRef) -> z3.ExprRef | None:
    """The NaN test on a float's bits, exponent all ones and fraction not zero
    (`sem.sorts.is_nan`), is fp.isNaN of the float they stand for."""
    tests = dict(f for c in t.children() if (f := _field_test(c)) is not None)
    if t.num_args() != 2 or set(tests) != {"ones", "nonzero"}:
        return None
    exp, frac = tests["ones"], tests["nonzero"]
    bits = exp.arg(0)
    (top, man), (man_hi, low) = exp.params(), frac.params()
    if not bits.eq(frac.arg(0)) or top != bits.size() - 2 or man_hi != man - 1 or low != 0 \
            or man < 1 or top - man < 1:
        return None
    return z3.fpIsNaN(z3.fpBVToFP(bits, z3.FPSort(top - man + 1, man + 1)))


def _field_test(t: z3.ExprRef) -> tuple[str, z3.ExprRef] | None:
    """("ones", x) for `x == all ones`, ("nonzero", x) for `x != 0`, x an extract."""
    negated = z3.is_not(t)
    if negated:
        t = t.arg(0)
    kind = t.decl().kind() if z3.is_app(t) else None
    if kind not in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) or t.num_args() != 2:
        return None
    equal = (kind == z3.Z3_OP_EQ) != negated
    x, c = t.children()
    if z3.is_bv_value(x):
        x, c = c, x
    if not (z3.is_app_of(x, z3.Z3_OP_EXTRACT) and z3.is_bv_value(c)):
        return None
    if equal and c.as_long() == (1 << x.size()) - 1:
        return "ones", x
    if not equal and c.as_long() == 0:
        return "nonzero", x
    return None


def _ite_known(t: z3.ExprRef) -> z3.ExprRef | None:
    """ite(true, a, b) is a, ite(false, a, b) is b, ite(c, a, a) is a."""
    c, a, b = t.children()
    if z3.is_true(c) or a.eq(b):
        return a
    return b if z3.is_false(c) else None


def _complements(t: z3.ExprRef) -> bool:
    """Some operand of t is the negation of another."""
    ids = {c.get_id() for c in t.children()}
    return any(z3.is_not(c) and c.arg(0).get_id() in ids for c in t.children())


def _connective(t: z3.ExprRef) -> z3.ExprRef | None:
    """An and/or with an operand that decides it (false in an and, true in an or, x and
    !x both), or that it does not need: the neutral constant, and an operand that
    another absorbs (x or (x and y) is x; x and (x or y) is x). Path conditions meet
    so: a branch and its join leave `c or !c` where the live condition was true."""
    conjunction = z3.is_and(t)
    absorbing, neutral = (z3.is_false, z3.is_true) if conjunction else (z3.is_true, z3.is_false)
    kids = t.children()
    if any(absorbing(c) for c in kids) or _complements(t):
        return z3.BoolVal(not conjunction)
    ids = {c.get_id() for c in kids}
    inner = z3.is_or if conjunction else z3.is_and
    keep = [c for c in kids if not neutral(c) and not (
        inner(c) and any(d.get_id() in ids for d in c.children()))]
    if len(keep) == len(kids):
        return None
    if len(keep) < 2:
        return keep[0] if keep else z3.BoolVal(conjunction)
    return z3.And(keep) if conjunction else z3.Or(keep)


RULES: dict[int, tuple[Callable[[z3.ExprRef], z3.ExprRef | None], ...]] = {
    z3.Z3_OP_EXTRACT: (_full_extract,),
    z3.Z3_OP_FPA_GT: (_greater,),
    z3.Z3_OP_FPA_GE: (_greater,),
    z3.Z3_OP_NOT: (_not_not,),
    z3.Z3_OP_ITE: (_ite_known, _ite_of_not),
    z3.Z3_OP_AND: (_connective, _bits_nan_test),
    z3.Z3_OP_OR: (_connective,),
}


def normal(t: z3.ExprRef) -> z3.ExprRef:
    """t with the first rule for its root operator that matches applied."""
    for rule in RULES.get(t.decl().kind(), ()) if z3.is_app(t) else ():
        out = rule(t)
        if out is not None:
            return out
    return t
