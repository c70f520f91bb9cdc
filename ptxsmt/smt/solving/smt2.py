"""Queries as standard SMT-LIB 2: the one text that `--emit-smt2` writes and that every
solver of the portfolio reads.

z3's own `to_smt2` is nearly standard; four things are z3's alone and are rewritten
here, each into an equisatisfiable standard form:
- `fp.to_ieee_bv` (no standard inverse of `to_fp`): each application becomes a fresh
  bit-vector constant `b` with `(= ((_ to_fp e s) b) x)` -- unique where `x` is a number,
  any NaN where `x` is NaN (ptxsmt reads an IEEE result's bits only where it is no NaN);
- a one-operand `or`/`and` (one compared output) becomes its operand;
- `bvudiv_i` (and `bvsdiv_i`, the remainders, `bvsmod_i`), which z3's simplifier
  writes for a division, becomes `bvudiv` (the same, by 0 too: `_DIVISIONS`);
- the logic is named from what the query uses (QF_ or quantified; A for arrays, UF for
  function symbols, BV, FP), instead of z3's unnamed one.
Snippet queries additionally replace their function symbols by constants
(`ackermann`), so that they stay in QF_BVFP.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import z3

from ...terms.walk import is_free


def subterms(term: z3.ExprRef) -> list[z3.ExprRef]:
    """Each distinct subterm once, parents before children, in a fixed order."""
    return _walked(term)[0]


def bound(terms: Iterable[z3.ExprRef]) -> set[int]:
    """The ids of the subterms that hold a variable bound outside them (a quantifier's
    body, and every term around one), found in one pass, children first."""
    out: set[int] = set()
    for term in terms:
        order, children = _walked(term)
        for t in reversed(order):
            if z3.is_var(t) or any(c in out for c in children[t.get_id()]):
                out.add(t.get_id())
    return out


_WALKED: dict[int, tuple[z3.ExprRef, list[z3.ExprRef], dict[int, list[int]]]] = {}
# the last terms walked: a query's script reads the same assertions for each rewrite


def _walked(term: z3.ExprRef) -> tuple[list[z3.ExprRef], dict[int, list[int]]]:
    """The term's distinct subterms, parents first, and each one's children's ids."""
    walked = _WALKED.get(term.get_id())
    if walked is None or walked[0].ctx is not term.ctx:  # an id names a term of one context
        seen, order, children, todo = set(), [], {}, [term]
        while todo:
            t = todo.pop()
            if t.get_id() not in seen:
                seen.add(t.get_id())
                order.append(t)
                below = t.children()
                children[t.get_id()] = [c.get_id() for c in below]
                todo.extend(reversed(below))
        # the term is kept with its walk, so that its id names no other term meanwhile
        walked = _WALKED[term.get_id()] = (term, order, children)
        while len(_WALKED) > 16:
            del _WALKED[next(iter(_WALKED))]
    return walked[1], walked[2]


def no_unary(term: z3.BoolRef) -> z3.BoolRef:
    """A one-operand or/and (a single compared output) as its operand, and one of none
    as true/false: z3 writes `(or x)` and `and`, which the standard does not allow."""
    while odd := [t for t in subterms(term) if z3.is_app(t) and t.num_args() < 2 and
                  (z3.is_or(t) or z3.is_and(t)) and t.get_id() not in bound([t])]:
        done = z3.substitute(term, *[(t, t.arg(0) if t.num_args() else z3.BoolVal(z3.is_and(t)))
                                     for t in odd])
        if done.eq(term):  # nothing replaced (z3 does not substitute under every binder)
            break
        term = done
    return term


def ackermann(term: z3.BoolRef) -> list[z3.BoolRef]:
    """Function symbols away: each application of a named free value (a cvt's NaN)
    becomes a constant, and applications with equal arguments get equal values
    (Ackermann's reduction, equisatisfiable; quadratic in the applications of one
    symbol, so for snippets only)."""
    apps = [t for t in subterms(term) if is_free(t) and t.num_args()]
    consts = [(t, z3.Const(f"{t.decl().name()}!{i}", t.sort())) for i, t in enumerate(apps)]
    if not consts:
        return [term]
    lemmas = []
    for i, (f, m) in enumerate(consts):
        for g, n in consts[i + 1:]:
            if f.decl() == g.decl():
                same = [z3.substitute(x, *consts) == z3.substitute(y, *consts)
                        for x, y in zip(f.children(), g.children())]
                lemmas.append(z3.Implies(same[0] if len(same) == 1 else z3.And(same), m == n))
    return [*lemmas, z3.substitute(term, *consts)]


# z3's divisions "created where the divisor can be assumed nonzero" (z3_api.h), which
# its rewriter writes for a division by a numeral, and for any division under its
# default hi_div0=true (the hardware interpretation of a division by zero). They are
# the standard operations, at 0 too: z3's rewriter folds them with hi_div0 on
# (`mk_bv_udiv_i` is `mk_bv_udiv_core(.., true, ..)`: x udiv 0 is all ones, x urem 0,
# x srem 0 and x smod 0 are x, x sdiv 0 is 1 below zero, else all ones), and its
# bit-blaster's circuits give the same (tests/test_smt2.py proves each for all 8-bit
# operands and checks the values at 0 by plain arithmetic).
_DIVISIONS = {z3.Z3_OP_BUDIV_I: z3.UDiv, z3.Z3_OP_BUREM_I: z3.URem,
              z3.Z3_OP_BSDIV_I: lambda a, b: a / b, z3.Z3_OP_BSREM_I: z3.SRem,
              z3.Z3_OP_BSMOD_I: lambda a, b: a % b}


def _standard_divisions(terms: list[z3.BoolRef]) -> list[z3.BoolRef]:
    """Each of z3's divisions made standard: again while any is left (`z3.substitute`
    replaces the outermost match and leaves what it puts in, a division's operands)."""
    while found := {t.get_id(): t for a in terms for t in subterms(a)
                    if z3.is_app(t) and t.decl().kind() in _DIVISIONS}:
        pairs = [(t, _DIVISIONS[t.decl().kind()](t.arg(0), t.arg(1))) for t in found.values()]
        done = [z3.substitute(a, *pairs) for a in terms]
        if all(d.eq(a) for d, a in zip(done, terms)):  # not replaced (under a binder)
            break
        terms = done
    return terms


def standard(assertions: Sequence[z3.BoolRef]) -> list[z3.BoolRef]:
    """The assertions with z3's own operators replaced (module docstring)."""
    terms = _standard_divisions([no_unary(a) for a in assertions])
    open_ = bound(terms)
    found = {t.get_id(): t for a in terms for t in subterms(a)
             if z3.is_app(t) and t.decl().kind() == z3.Z3_OP_FPA_TO_IEEE_BV
             and t.get_id() not in open_}
    if not found:
        return terms
    bits = [(t, z3.BitVec(f"to_ieee_bv!{i}", t.sort().size()))
            for i, t in enumerate(found.values())]
    definitions = [z3.fpBVToFP(b, t.arg(0).sort()) == t.arg(0) for t, b in bits]
    # a definition's own argument may hold another conversion (a float op on converted bits)
    return [z3.substitute(d, *bits) for d in definitions] + [z3.substitute(a, *bits)
                                                              for a in terms]


def logic(assertions: Iterable[z3.BoolRef]) -> str:
    """The SMT-LIB logic the assertions need: [QF_][A][UF]BV[FP]."""
    quantified = arrays = functions = floats = False
    for a in assertions:
        for t in subterms(a):
            quantified |= z3.is_quantifier(t)
            if z3.is_quantifier(t):
                continue
            kind = t.sort().kind()
            arrays |= kind == z3.Z3_ARRAY_SORT
            floats |= kind in (z3.Z3_FLOATING_POINT_SORT, z3.Z3_ROUNDING_MODE_SORT)
            functions |= is_free(t) and t.num_args() > 0
    return (("" if quantified else "QF_") + ("A" if arrays else "") +
            ("UF" if functions else "") + "BV" + ("FP" if floats else ""))


def sorts(terms: Iterable[z3.ExprRef]) -> set[z3.SortRef]:
    """The sort of every one of `terms` (a `walk`), a quantifier's bound variables' too
    (what a solver must read to read the query)."""
    found: dict[int, z3.SortRef] = {}
    for t in terms:
        held = [t.var_sort(i) for i in range(t.num_vars())] if z3.is_quantifier(t) \
            else [t.sort()]
        found.update((x.get_id(), x) for x in held)
    return set(found.values())


def script(assertions: Sequence[z3.BoolRef], comments: Iterable[str] = ()) -> str:
    """A standalone SMT-LIB 2 script: comments, set-logic, declarations, the assertions
    in standard form as one conjunction, (check-sat). One: z3 names a shared subterm
    (`let`) within an assertion only, and the conversions' definitions share the
    query's float terms (a half 100-op pair's query: 450,278 characters apart, 36,335
    as one)."""
    terms = standard(assertions)
    s = z3.Solver()
    s.add(*([z3.And(terms)] if len(terms) > 1 else terms))
    header = "".join(f"; {c}\n" for c in comments)
    # the rewrites keep the logic: named from the assertions, whose walks `standard` made
    return f"{header}(set-logic {logic(assertions)})\n{s.to_smt2()}"
