"""Truth tables of conditions (ptxsmt/smt/sweeping/truth.py), which sweeping trusts to merge
with no proof: conditions of one table are equal for every input (proved by z3, on
random conditions over float comparisons, NaN tests and `ite`s of float bits), and
what the two compilers spell two ways has one table."""

from __future__ import annotations

import random

import z3

from ptxsmt.program import Program
from ptxsmt.smt.sweeping.rewrite import normal
from ptxsmt.smt.sweeping.truth import Tables, shallow_table

F32 = z3.FPSort(8, 24)


def _valid(claim: z3.BoolRef) -> bool:
    s = z3.Solver()
    s.add(z3.Not(claim))
    return s.check() == z3.unsat


def _condition(rng: random.Random, floats: list, flags: list, depth: int) -> z3.BoolRef:
    if depth == 0 or rng.random() < 0.25:
        if rng.random() < 0.15:
            return rng.choice(flags)
        x, y = rng.choice(floats), rng.choice(floats)
        return rng.choice([z3.fpIsNaN(x), z3.fpLT(x, y), z3.fpLEQ(x, y), z3.fpGT(x, y),
                           z3.fpGEQ(x, y), z3.fpEQ(x, y)])
    a, b, c = (_condition(rng, floats, flags, depth - 1) for _ in range(3))
    return rng.choice([z3.And(a, b), z3.Or(a, b, c), z3.Not(a), z3.Xor(a, b), z3.If(a, b, c),
                       a == b, z3.Implies(a, b)])


def _random_conditions(seed: int, count: int) -> list[z3.BoolRef]:
    rng = random.Random(seed)
    p, q = z3.BitVecs("p q", 32)
    flags = list(z3.Bools("d e"))
    a, b = z3.fpBVToFP(p, F32), z3.fpBVToFP(q, F32)
    nan = z3.BitVecVal(0x7FC00000, 32)
    floats = [a, b, z3.fpAdd(z3.RNE(), a, b),
              z3.fpBVToFP(z3.If(flags[0], p, q), F32),  # a NaN test reads through ite
              z3.fpBVToFP(z3.If(z3.fpIsNaN(a), nan, p), F32),
              z3.If(flags[1], a, z3.fpNeg(b))]
    return [_condition(rng, floats, flags, 4) for _ in range(count)]


def test_conditions_of_one_table_are_equal():
    tables = Tables()
    groups: dict = {}
    for t in _random_conditions(seed=3, count=300):
        table = tables.table(t)
        if table is not None:
            groups.setdefault(table, []).append(t)
    merged = 0
    for table, terms in groups.items():
        first = terms[0]
        for other in terms[1:]:
            assert _valid(first == other), (first, other)
            merged += not first.eq(other)
        if table.constant is not None:
            assert _valid(first == table.constant)
        negated = groups.get(table.negated())
        if negated:
            assert _valid(first == z3.Not(negated[0]))
    assert merged >= 15  # not vacuous: many spellings of one function met


def test_a_table_is_missing_only_where_a_condition_is_too_large():
    p = z3.BitVec("p", 32)
    xs = [z3.fpBVToFP(p + k, F32) for k in range(20)]
    assert Tables().table(z3.And([z3.fpIsNaN(x) for x in xs])) is None
    assert Tables().table(z3.And([z3.fpIsNaN(x) for x in xs[:4]])) is not None


def _bottom_up(t: z3.ExprRef) -> z3.ExprRef:
    """t as sweeping reads it: `rewrite.normal` on every subterm, children first (the
    NaN test on bits is then `fp.isNaN`)."""
    if not z3.is_app(t) or t.num_args() == 0:
        return t
    return normal(t.decl()(*[_bottom_up(c) for c in t.children()]))


def _encoded(text: str) -> dict[str, z3.ExprRef]:
    enc = Program.parse(text).encode()
    return {k: _bottom_up(v) for k, v in {**enc.inputs, **enc.outputs}.items()}


def test_an_ordered_comparison_is_the_negation_of_the_unordered_complement():
    """-O0's `setp.le` and a branch against opt's `setp.gtu` and a select with its
    arms swapped."""
    le = _encoded("setp.le.f32 p, a, b;")["p"]
    gtu = _encoded("setp.gtu.f32 p, a, b;")["p"]
    lt = _encoded("setp.lt.f32 p, a, b;")["p"]
    tables = Tables()
    assert tables.table(gtu) == tables.table(le).negated()
    assert tables.table(lt) != tables.table(le)


def test_a_min_is_a_nan_where_both_operands_are():
    """PTX's min of one NaN is the other operand; of two, a NaN (Spec notes 9)."""
    v = _encoded("min.f32 d, a, b;")
    d, a, b = (z3.fpBVToFP(v[r], F32) for r in "dab")
    tables = Tables()
    assert _valid(z3.fpIsNaN(d) == z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b)))
    assert tables.table(z3.fpIsNaN(d)) == tables.table(z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b)))
    assert tables.table(z3.fpIsNaN(d)) != tables.table(z3.Or(z3.fpIsNaN(a), z3.fpIsNaN(b)))


def test_a_relation_of_two_mins_is_read_through_their_nan_tests():
    """`x < y` of a min and a max names twenty variables (each one's inner comparisons,
    free NaN and operands' NaN tests) but depends on five: read as its table over those,
    opt's `P or x < y` meets -O0's `!(!P and y <= x)` (P: either is a NaN)."""
    v = _encoded("min.f32 x, a, b; max.f32 y, c, e;")
    x, y, a, b, c, e = (z3.fpBVToFP(v[r], F32) for r in "xyabce")
    either = z3.Or(z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b)), z3.And(z3.fpIsNaN(c), z3.fpIsNaN(e)))
    opt = z3.Or(either, z3.fpLT(x, y))
    naive = z3.Not(z3.And(z3.Not(either), z3.fpLEQ(y, x)))
    assert _valid(opt == naive)
    tables = Tables()
    table = tables.table(opt)
    assert table is not None and len(table.basis) == 5
    assert tables.table(naive) == table
    assert tables.table(z3.Or(either, z3.fpLEQ(x, y))) != table


def test_an_empty_conjunction_is_true():
    """The function query's `defined` root is `And()` where nothing is assumed."""
    table = Tables().table(z3.And())
    assert table is not None and table.constant is True


def test_bits_read_as_two_formats_are_two_nan_tests():
    """16 bits are a NaN as f16 where they need not be as bf16."""
    p = z3.BitVec("p", 16)
    half, brain = (z3.fpIsNaN(z3.fpBVToFP(p, z3.FPSort(e, s))) for e, s in ((5, 11), (8, 8)))
    assert not _valid(half == brain)
    tables = Tables()
    assert tables.table(half) != tables.table(brain)


def test_conditions_of_one_shallow_table_are_equal():
    """Over named conditions (sweeping names a node's term by its representative),
    each name standing for terms that are equal: here a term's own id."""
    conditions = _random_conditions(seed=5, count=300)
    named = {c.get_id() for t in conditions[:60] for c in t.children() if z3.is_bool(c)}

    def name(u):
        return ("term", u.get_id()) if u.get_id() in named else None

    def opaque(u):
        return u.get_id() % 3 == 0 and u.get_id() in named

    groups: dict = {}
    for t in conditions:
        table = shallow_table(t, name, opaque)
        if table is not None:
            groups.setdefault(table, []).append(t)
    merged = 0
    for table, terms in groups.items():
        for other in terms[1:]:
            assert _valid(terms[0] == other), (terms[0], other)
            merged += not terms[0].eq(other)
        if table.constant is not None:
            assert _valid(terms[0] == table.constant)
        negated = groups.get(table.negated())
        if negated:
            assert _valid(terms[0] == z3.Not(negated[0]))
    assert merged >= 15


def test_a_relation_meets_its_spelling_over_a_named_nan_test():
    """Float 1,000's -O0 `!(A or isNaN(y) or x <= y)` against opt's `y < x`, where A
    is a condition sweeping proved to be `isNaN(x)` (x a min: `isNaN(a) and isNaN(b)`),
    each basis of the inputs' tests too large for a table of its own."""
    v = _encoded("min.f32 x, a, b; max.f32 y, c, e;")
    x, y, a, b = (z3.fpBVToFP(v[r], F32) for r in "xyab")
    alias = z3.And(z3.fpIsNaN(a), z3.fpIsNaN(b))
    assert _valid(alias == z3.fpIsNaN(x))
    kept = [z3.fpIsNaN(x), alias]  # alive, so that their ids name them
    names = {t.get_id(): ("node", 1) for t in kept}

    def name(u):
        return names.get(u.get_id())

    def opaque(u):
        return u.get_id() in names

    o0 = z3.Not(z3.Or(z3.Or(alias, z3.fpIsNaN(y)), z3.fpLEQ(x, y)))
    opt = z3.fpLT(y, x)
    assert _valid(o0 == opt)
    assert shallow_table(o0, name, opaque) == shallow_table(opt, name, opaque)
    assert shallow_table(z3.Not(z3.Or(alias, z3.fpLEQ(x, y))), name, opaque) != \
        shallow_table(opt, name, opaque)
