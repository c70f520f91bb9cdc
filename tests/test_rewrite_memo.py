"""`rewrite.normal` and the float facts it reads are memoised per term (issue 44: the
sweep of a float DAG spent most of its time rewriting the same subterms again): the
rewrite of a fixed set of terms is the one it was before the tables, spelling for
spelling, and `float_facts.poisoners` is the pairwise relation it replaced."""

from __future__ import annotations

import hashlib
import random
from pathlib import Path

import pytest
import z3

from ptxsmt.cli.common import read_function_file
from ptxsmt.isa.types import F16
from ptxsmt.sem.sorts import fp_sort, free_nan, to_bits
from ptxsmt.smt.queries import functions
from ptxsmt.smt.sweeping import float_facts
from ptxsmt.smt.sweeping.float_facts import POISON
from ptxsmt.smt.sweeping.rewrite import normal

SCALE = Path(__file__).parent / "ptx" / "scale"
SORT = fp_sort(F16)

# sha-256 (first 16 hex digits) of the sexprs `_rewritten` gives, as rewrite.py wrote
# them before its tables (main dfc60f4). A rule added or changed on purpose changes
# them: recompute them then, on the code before and after, and say why in the commit
# (round 48: "random" by h2's `a + (-b)` as `a - b` and a neg's bits read as fp.neg;
# round 50: "float-16" by h4's NaN tests read inside another test's operand,
# `float_facts.nan_tested`: 7b81d74aae140545 before).
BEFORE = {"float-16": "1197eeb481c686ce", "random": "d8b5d83e04408aa4"}


class _Query(Exception):
    pass


def _query(name: str) -> list[z3.ExprRef]:
    """The whole query of the scale pair `name` (-O0 against -O2), as sweeping gets it."""
    got = []

    def grab(query, *args, **kwargs):
        got.append(query)
        raise _Query

    a, b = (read_function_file(str(SCALE / f"{name}.{o}.ptx"), "f") for o in ("O0", "O2"))
    with pytest.MonkeyPatch.context() as m:
        m.setattr(functions, "sweep_if_large", grab)
        with pytest.raises(_Query):
            functions.check_function_equivalence(a, b, timeout=60)
    return got[0]


def _rewritten(roots: list[z3.ExprRef]) -> str:
    """Every node of the DAG, children first, rebuilt over its children's rewrites and
    rewritten (as sweeping rebuilds a node): the digest of their sexprs."""
    out: dict[int, z3.ExprRef] = {}
    digest = hashlib.sha256()
    stack = list(reversed(roots))
    while stack:
        t = stack[-1]
        if t.get_id() in out:
            stack.pop()
            continue
        kids = t.children() if z3.is_app(t) else []
        if todo := [c for c in kids if c.get_id() not in out]:
            stack.extend(reversed(todo))
            continue
        stack.pop()
        built = t.decl()(*[out[c.get_id()] for c in kids]) if kids else t
        out[t.get_id()] = normal(built)
        digest.update(out[t.get_id()].sexpr().encode() + b"\n")
    return digest.hexdigest()[:16]


def _random_floats(n: int, seed: int = 44) -> list[z3.ExprRef]:
    """Float terms, and comparisons of them, that the float rules look at: sums with
    zeros and selects of zeros, NaN tests under operations their NaN poisons, floats
    read back from an IEEE result's bits or from a select of such bits."""
    rng = random.Random(seed)
    x, y, z = z3.FPs("x y z", SORT)
    bits = z3.BitVec("bits", 16)
    zeros = [z3.FPVal(0.0, SORT), z3.fpMinusZero(SORT), z3.fpBVToFP(z3.BitVecVal(0x8000, 16), SORT)]
    pool: list[z3.ExprRef] = [x, y, z, *zeros]

    def pick() -> z3.ExprRef:
        return rng.choice(pool)

    def read_back(a: z3.ExprRef) -> z3.ExprRef:
        return to_bits(a, free_nan("nan", z3.fpToIEEEBV(a), F16))

    def poisoned() -> z3.ExprRef:  # `max.NaN`'s select on isNaN(a) under a's own NaN
        a = pick()
        return z3.fpMul(z3.RNE(), a, z3.If(z3.fpIsNaN(a), pick(), z3.fpMax(a, pick())))

    shapes = [poisoned,
        lambda: z3.fpAdd(z3.RNE(), pick(), pick()), lambda: z3.fpSub(z3.RNE(), pick(), pick()),
        lambda: z3.fpMul(z3.RNE(), pick(), pick()), lambda: z3.fpDiv(z3.RNE(), pick(), pick()),
        lambda: z3.fpNeg(pick()), lambda: z3.fpAbs(pick()),
        lambda: z3.fpMin(pick(), pick()), lambda: z3.fpMax(pick(), pick()),
        lambda: z3.If(z3.fpIsNaN(pick()), pick(), pick()),
        lambda: z3.If(z3.fpLT(pick(), pick()), pick(), rng.choice(zeros)),
        lambda: z3.fpBVToFP(read_back(pick()), SORT),
        lambda: z3.fpBVToFP(z3.If(z3.fpGT(pick(), pick()), read_back(pick()), bits), SORT),
        lambda: z3.fpAdd(z3.RNE(), pick(), z3.If(z3.fpIsNaN(pick()), pick(), rng.choice(zeros))),
    ]
    for _ in range(n):
        pool.append(rng.choice(shapes)())
    tests = [rng.choice([z3.fpEQ, z3.fpLT, z3.fpGEQ, z3.fpGT])(pick(), pick())
             for _ in range(n // 4)]
    return pool + tests


def test_the_scale_pairs_query_rewrites_as_before():
    assert _rewritten(_query("float-16")) == BEFORE["float-16"]


def test_random_float_terms_rewrite_as_before():
    assert _rewritten(_random_floats(160)) == BEFORE["random"]


def _poisons(s: z3.ExprRef, t: z3.ExprRef) -> bool:
    """A NaN s makes t a NaN, by POISON's rows from t down to s, pair by pair (the
    definition `float_facts.poisoners` reads for all s at once)."""
    if s.eq(t):
        return True
    row = POISON.get(t.decl().kind()) if z3.is_app(t) else None
    if row is None or not z3.is_fp(t):
        return False
    kids = [t.arg(k) for k in row[0] if k < t.num_args() and z3.is_fp(t.arg(k))]
    return bool(kids) and (all if row[1] else any)(_poisons(s, k) for k in kids)


def _subterms(t: z3.ExprRef, seen: dict[int, z3.ExprRef]) -> dict[int, z3.ExprRef]:
    if t.get_id() not in seen:
        seen[t.get_id()] = t
        for c in t.children() if z3.is_app(t) else ():
            _subterms(c, seen)
    return seen


def test_poisoners_are_the_pairs_that_poison():
    terms = _random_floats(30, seed=7)
    below: dict[int, z3.ExprRef] = {}
    for t in terms:
        _subterms(t, below)
    floats = [t for t in below.values() if z3.is_fp(t)]
    both = 0
    for t in floats:
        found = float_facts.poisoners(t)
        for s in floats:
            assert (s.get_id() in found) == _poisons(s, t), (s, t)
            both += s.get_id() in found and not s.eq(t)
    assert both > 50  # the relation is not only each term with itself


def test_sign_free_is_looked_up_by_depth_and_by_rewrite():
    """A table entry is the answer for its term, depth and `normal` only."""
    x = z3.FP("sx", SORT)
    chain = [x]
    for _ in range(8):  # x + 0 + 0 ...: each level `sign_free` looks through drops a zero
        chain.append(z3.fpAdd(z3.RNE(), chain[-1], z3.FPVal(0.0, SORT)))
    assert float_facts.sign_free(chain[8], normal, 6).eq(chain[2])
    assert float_facts.sign_free(chain[8], normal, 2).eq(chain[6])
    c = z3.Bool("sc")
    added = z3.fpAdd(z3.RNE(), x, z3.If(c, z3.fpMinusZero(SORT), z3.FPVal(0.0, SORT)))
    as_built = float_facts.sign_free(added, lambda u: u)
    assert as_built.eq(z3.If(c, x, x))  # the zero dropped below, the select as built
    assert float_facts.sign_free(added, normal).eq(x)  # ite(c, x, x) is x (`_ite_known`)


def _tested_under_a_chain(name: str, k: int) -> tuple[z3.ExprRef, z3.ExprRef]:
    """(x, x * (ite(isNaN(x), y, z) + a1 + ... + ak)): x's NaN poisons the product, and
    its NaN test lies k + 1 terms below it."""
    x, y, z = (z3.FP(f"{name}{v}", SORT) for v in "xyz")
    chain = z3.If(z3.fpIsNaN(x), y, z)
    for i in range(k):
        chain = z3.fpAdd(z3.RNE(), chain, z3.FP(f"{name}a{i}", SORT))
    return x, z3.fpMul(z3.RNE(), x, chain)


def test_the_terms_a_nan_test_rewrite_rebuilds_are_counted_before_it_is_made():
    """`_rebuilt` counts what `_without` makes: one term a level, the test not."""
    x, t = _tested_under_a_chain("cnt", 5)
    found = frozenset((x.get_id(),))
    before = len(float_facts._WITHOUT.table)
    assert float_facts._rebuilt(t, found) == 7  # the product, 5 sums, the select
    out = float_facts.poisoned_tests(t, normal)
    assert out is not None and float_facts.nan_tested(out) == frozenset()
    assert len(float_facts._WITHOUT.table) - before == 7


def test_a_nan_test_rewrite_past_its_cone_limit_is_not_made(monkeypatch):
    """Where it would rebuild more than REBUILT terms the test stays as written (on
    float-300 one test's cone took minutes); at the limit it is made."""
    x, t = _tested_under_a_chain("cap", 5)
    monkeypatch.setattr(float_facts, "REBUILT", 6)
    assert float_facts.poisoned_tests(t, normal) is None
    monkeypatch.setattr(float_facts, "REBUILT", 7)
    out = float_facts.poisoned_tests(t, normal)
    assert out is not None and x.get_id() not in float_facts.nan_tested(out)


def test_the_count_of_terms_rebuilt_is_the_plain_one_on_random_terms(monkeypatch):
    """`_rebuilt` (each term's shape read from z3 once, `_shape`) against the plain
    count, read off the terms anew: the distinct terms that test some x of `nan`,
    reached from t through such terms, a NaN test of an x of `nan` not counted; at most
    REBUILT + 1. Every subterm is counted first, so that the roots' counts read the
    shapes their subterms' counts stored."""
    tests: dict[int, set[int]] = {}  # term -> the floats NaN-tested in it

    def tested(t: z3.ExprRef) -> set[int]:
        if t.get_id() not in tests:
            tests[t.get_id()] = set().union(*map(tested, t.children())) | (
                {t.arg(0).get_id()} if z3.is_app_of(t, z3.Z3_OP_FPA_IS_NAN) else set())
        return tests[t.get_id()]

    def plain(t: z3.ExprRef, nan: frozenset[int], seen: set[int]) -> set[int]:
        read_false = z3.is_app_of(t, z3.Z3_OP_FPA_IS_NAN) and t.arg(0).get_id() in nan
        if read_false or not tested(t) & nan or t.get_id() in seen:
            return seen
        seen.add(t.get_id())
        for c in t.children():
            plain(c, nan, seen)
        return seen

    below: dict[int, z3.ExprRef] = {}
    roots = _random_floats(40, seed=12)
    for t in roots:
        _subterms(t, below)
    floats = sorted(frozenset().union(*map(float_facts.nan_tested, roots)))
    asked = [frozenset(floats[:1]), frozenset(floats)]
    counted = 0
    for cap in (float_facts.REBUILT, 3):
        monkeypatch.setattr(float_facts, "REBUILT", cap)
        for t in [*below.values(), *roots]:
            for nan in asked:
                want = min(len(plain(t, nan, set())), cap + 1)
                assert float_facts._rebuilt(t, nan) == want, t
                counted += want > 1
    assert counted > 100


def test_nan_tested_is_every_float_under_a_nan_test():
    """The sets an operand's share (`nan_tested`) are the plain union, term by term (a
    test's operand's own tests with it)."""
    def plain(t: z3.ExprRef) -> set[int]:
        own = {t.arg(0).get_id()} if z3.is_app_of(t, z3.Z3_OP_FPA_IS_NAN) else set()
        return own.union(*(plain(c) for c in t.children())) if z3.is_app(t) else own

    below: dict[int, z3.ExprRef] = {}
    for t in _random_floats(40, seed=9):
        _subterms(t, below)
    assert sum(bool(plain(t)) for t in below.values()) > 20
    for t in below.values():
        assert float_facts.nan_tested(t) == plain(t), t
