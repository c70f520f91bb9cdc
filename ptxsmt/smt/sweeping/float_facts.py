"""Facts about float terms read off their structure (as LLVM's isKnownNeverNaN and
cannotBeNegativeZero read them off IR), and the two rewrites they allow, where a
mutation of a float operation is masked by what reads its value:

- **A NaN test under a NaN that poisons.** Where `isNaN(s)` forces `t` to be a NaN
  (`s` is in `poisoners(t)`: every operator on the way passes an operand's NaN on,
  `POISON`), `t` is the term with every `isNaN(s)` inside it read as false: where `s`
  is no NaN the two compute alike, and where it is one both are NaNs (checked on the
  result: `s` still poisons it). So `setp.equ` against `setp.eq` of `s` (a `max.NaN`
  against a `max` of it) meet where `s`'s NaN reaches the value anyway. A test is read
  as one of the float it asks about (`nan_source`: through a conversion, and LLVM's
  f32 view of a bf16's bits), and wherever it lies, in another test's operand too. Not
  made where it would rebuild more than REBUILT terms (`_rebuilt`).
- **A zero's sign that a comparison cannot see.** `a ~ b`, equal or both zeros (of any
  signs), is kept by the operators of `THROUGH` (operands `~` theirs give results `~`),
  and a comparison (`SIGN_BLIND`) gives one answer on `~` operands: there
  the operand is written in `sign_free` form (`x + 0` of either sign is `x`, a select of
  a zero arm added is a select of the sum and `x`), so `x + ite(c, a, +0)` meets
  `ite(c, x + a, x)` under `fpEQ`, where as a value it differs at `x = -0`.

And two tables the last query's case split (`case_split.py`) picks its floats by:
`BORN_NAN`, the operators that make a NaN of operands that are none (inf - inf,
0 * inf), and `SEES_NAN`, the operators whose answer on a NaN operand is not the
answer on any number (a comparison is false, a class test says NaN, a min or max
takes the other operand). Where a value of the first kind meets
one of the second, a solver must reason about the NaN and the numbers at once.

Every row of the tables is proved by z3 and checked against exact arithmetic in
tests/test_float_facts.py; the rules look only at the terms, never at simulation.
"""

from __future__ import annotations

from collections.abc import Callable

import z3

from ...isa.types import BF16, F32
from ...sem.sorts import fp_sort, ieee_result

# Operators whose result is a NaN wherever the operand at one of these positions is
# (positions count z3's children: a rounding mode first); ite's both arms at once (a
# NaN on either side), as fp.min/fp.max's (SMT-LIB's min of a NaN is the other one)
POISON: dict[int, tuple[tuple[int, ...], bool]] = {
    z3.Z3_OP_FPA_ADD: ((1, 2), False), z3.Z3_OP_FPA_SUB: ((1, 2), False),
    z3.Z3_OP_FPA_MUL: ((1, 2), False), z3.Z3_OP_FPA_DIV: ((1, 2), False),
    z3.Z3_OP_FPA_FMA: ((1, 2, 3), False), z3.Z3_OP_FPA_SQRT: ((1,), False),
    z3.Z3_OP_FPA_REM: ((0, 1), False), z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: ((1,), False),
    z3.Z3_OP_FPA_NEG: ((0,), False), z3.Z3_OP_FPA_ABS: ((0,), False),
    z3.Z3_OP_FPA_TO_FP: ((1,), False),  # float to float (rm, x): `_float_operand` checks
    z3.Z3_OP_ITE: ((1, 2), True),
    z3.Z3_OP_FPA_MIN: ((0, 1), True), z3.Z3_OP_FPA_MAX: ((0, 1), True)}

# Operators that keep `~` (equal, or zeros of any signs): operands `~` theirs give a
# result `~` the other's, at these positions (not a divisor: 1/+0 and 1/-0 differ)
THROUGH: dict[int, tuple[int, ...]] = {
    z3.Z3_OP_FPA_ADD: (1, 2), z3.Z3_OP_FPA_SUB: (1, 2), z3.Z3_OP_FPA_MUL: (1, 2),
    z3.Z3_OP_FPA_NEG: (0,), z3.Z3_OP_ITE: (1, 2)}

# Comparisons, whose answer is the same on `~` operands: they do not see a zero's sign.
# (Class tests do not either, but `isNaN(x)` is left as written: `to_bits` reads a
# result back by its pattern `ite(isNaN(x), nan, to_ieee_bv(x))`, `sem.sorts.ieee_result`)
SIGN_BLIND = {z3.Z3_OP_FPA_EQ, z3.Z3_OP_FPA_LT, z3.Z3_OP_FPA_LE, z3.Z3_OP_FPA_GT,
              z3.Z3_OP_FPA_GE}

# Operators whose result is a NaN for some operands that are not NaNs (positions as in
# POISON): inf - inf, 0 * inf, 0 / 0, sqrt(-1), rem(inf, y), fma(0, inf, z); neg, abs,
# min, max, ite and a float-to-float conversion make no NaN of their own
BORN_NAN = {z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_SUB, z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_DIV,
            z3.Z3_OP_FPA_FMA, z3.Z3_OP_FPA_SQRT, z3.Z3_OP_FPA_REM}

# Operators whose result, where a float operand is a NaN, is decided by the NaN alone
# (a comparison is false, a class test says NaN) or is the other operand (fp.min, fp.max)
SEES_NAN = {*SIGN_BLIND, z3.Z3_OP_FPA_IS_NAN, z3.Z3_OP_FPA_IS_ZERO, z3.Z3_OP_FPA_IS_INF,
            z3.Z3_OP_FPA_IS_NORMAL, z3.Z3_OP_FPA_IS_SUBNORMAL, z3.Z3_OP_FPA_IS_NEGATIVE,
            z3.Z3_OP_FPA_IS_POSITIVE, z3.Z3_OP_FPA_MIN, z3.Z3_OP_FPA_MAX}

BF16_SORT, F32_SORT = fp_sort(BF16), fp_sort(F32)
Normal = Callable[[z3.ExprRef], z3.ExprRef]
# A NaN-test rewrite (`poisoned_tests`) that would rebuild more terms than this is not
# made: each rebuilt term is renormalised, its comparisons' operands read `sign_free`
# again, and on float-300 one test's cone took minutes (the masked mutations the rule is
# for lie under a few dozen terms)
REBUILT = 512
_MEMO_LIMIT = 100_000  # entries per table before it starts afresh (memory, not meaning)


class Memo:
    """A table keyed by AST id that holds its terms, so that no other term takes the id
    (for a function of the term alone: looked up, never computed twice)."""

    def __init__(self, limit: int | None = _MEMO_LIMIT) -> None:
        self.table: dict[object, tuple[z3.ExprRef, object]] = {}
        self.limit = limit

    def get(self, key: object, t: z3.ExprRef, compute: Callable[[], object]) -> object:
        found = self.table.get(key)
        if found is not None:
            return found[1]
        value = compute()
        if self.limit is not None and len(self.table) > self.limit:
            self.table.clear()
        self.table[key] = (t, value)
        return value


_KIDS, _TESTED, _POISONERS, _SIGN_FREE, _WITHOUT = Memo(), Memo(), Memo(), Memo(), Memo()
# `nan_source`, never cleared: the other tables hold the AST ids of the sources it
# makes (a bf16 view's float), which only this table keeps alive; cleared, an id could
# be a new term's (a review's finding)
_SOURCE = Memo(limit=None)
_SHAPES = Memo()  # `_shape`
_NONE: frozenset[int] = frozenset()


def _is_float(t: z3.ExprRef) -> bool:
    return z3.is_fp(t)


def kids(t: z3.ExprRef) -> tuple[z3.ExprRef, ...]:
    """t's operands, read from z3 once per term (each read of an operand is a dozen
    calls into z3; the walks below and `rewrite.normal` read the same terms again and
    again: on float-300 most of their time)."""
    if not z3.is_app(t):
        return ()
    return _KIDS.get(t.get_id(), t, lambda: tuple(t.children()))


def nan_source(u: z3.FPRef) -> z3.FPRef:
    """The float whose NaN `isNaN(u)` asks about: u, or what u converts, where u is a
    NaN exactly where that is one: a float-to-float conversion (a NaN only of a NaN),
    and an f32 read from a bf16's bits shifted left by 16 (`BF16_VIEWS`: LLVM's bf16
    comparison; the same sign, exponent and fraction, so the same class)."""
    def compute() -> z3.FPRef:
        if z3.is_app_of(u, z3.Z3_OP_FPA_TO_FP) and u.num_args() == 2 \
                and _is_float(u.arg(1)):
            return nan_source(u.arg(1))
        bits = _bf16_bits(u)
        if bits is None:
            return u
        if z3.is_app_of(bits, z3.Z3_OP_FPA_TO_IEEE_BV) and bits.arg(0).sort() == BF16_SORT:
            return nan_source(bits.arg(0))  # z3's bits of a NaN are a NaN's (an f16's
            # bits so read are another class: its infinity an f32 number)
        found = ieee_result(bits, BF16_SORT)
        return nan_source(z3.fpBVToFP(bits, BF16_SORT) if found is None else found)
    return _SOURCE.get(u.get_id(), u, compute)


def _bf16_bits(u: z3.ExprRef) -> z3.BitVecRef | None:
    """b where u is the f32 of the 16 bits b shifted left by 16, written as one of
    `BF16_VIEWS` (`rewrite.normal` writes the shift as a product by 2^16)."""
    if not (z3.is_app_of(u, z3.Z3_OP_FPA_TO_FP) and u.num_args() == 1
            and u.sort() == F32_SORT):
        return None
    bits = u.arg(0)
    for kind, high, low in BF16_VIEWS:
        if z3.is_app_of(bits, kind) and bits.num_args() == 2 and high(bits) is not None \
                and low(bits):
            return high(bits)
    return None


def _zero_extended16(t: z3.ExprRef) -> z3.BitVecRef | None:
    """b where t is b (16 bits) zero-extended to 32."""
    if z3.is_app_of(t, z3.Z3_OP_ZERO_EXT) and t.arg(0).size() == 16 and t.size() == 32:
        return t.arg(0)
    return None


def _is_value(t: z3.ExprRef, value: int) -> bool:
    return z3.is_bv_value(t) and t.as_long() == value


# The f32 whose bits are a bf16's b shifted left by 16, as the terms write it:
# (operator, b read off the term, the rest of the term checked)
BF16_VIEWS = (
    (z3.Z3_OP_CONCAT, lambda t: t.arg(0) if t.arg(0).size() == 16 else None,
     lambda t: _is_value(t.arg(1), 0) and t.arg(1).size() == 16),
    (z3.Z3_OP_BMUL, lambda t: _zero_extended16(t.arg(1)), lambda t: _is_value(t.arg(0), 1 << 16)),
    (z3.Z3_OP_BMUL, lambda t: _zero_extended16(t.arg(0)), lambda t: _is_value(t.arg(1), 1 << 16)),
    (z3.Z3_OP_BSHL, lambda t: _zero_extended16(t.arg(0)), lambda t: _is_value(t.arg(1), 16)),
)


def nan_tested(t: z3.ExprRef) -> frozenset[int]:
    """The AST ids of the floats x whose `isNaN(x)` occurs in t, read through
    `nan_source`, a test's operand's own tests too (an operand's own set where it holds
    all of them: a rebuilt cone's sets are mostly its operands')."""
    def compute() -> frozenset[int]:
        below = [s for s in map(nan_tested, kids(t)) if s]
        if z3.is_app_of(t, z3.Z3_OP_FPA_IS_NAN):
            below.append(frozenset((nan_source(t.arg(0)).get_id(),)))
        if not below:
            return _NONE
        widest = max(below, key=len)
        return widest if all(s <= widest for s in below) else widest.union(*below)
    return _TESTED.get(t.get_id(), t, compute)


def poisoners(t: z3.ExprRef) -> frozenset[int]:
    """The AST ids of the terms s whose NaN makes `t` a NaN, by `POISON`'s rows from t
    down to s: t itself, and those of its operands at the row's positions (of one of
    them, or of both for an ite/min/max), read once per term for all s together."""
    def compute() -> frozenset[int]:
        own = frozenset((t.get_id(),))
        row = POISON.get(t.decl().kind()) if z3.is_app(t) else None
        if row is None or not _is_float(t):
            return own
        operands = kids(t)
        below = [poisoners(operands[k]) for k in row[0]
                 if k < len(operands) and _is_float(operands[k])]
        if not below:
            return own  # to_fp of bits or of an integer: no float operand
        return own | (frozenset.intersection if row[1] else frozenset.union)(*below)
    return _POISONERS.get(t.get_id(), t, compute)


def poisoned_tests(t: z3.ExprRef, normal: Normal) -> z3.ExprRef | None:
    """t (a float) with `isNaN(s)` read as false for each s that poisons it, renormalised;
    None where there is none, or where a rewrite on the way lost one such s (then the
    result might not be a NaN where s is: kept as it was)."""
    if not _is_float(t) or not z3.is_app(t) or t.decl().kind() not in POISON:
        return None
    tested = nan_tested(t)
    if not tested:
        return None
    found = poisoners(t).intersection(tested)
    if not found or _rebuilt(t, found) > REBUILT:
        return None
    out = _without(t, found, normal)
    return out if found <= poisoners(out) and not out.eq(t) else None


def _rebuilt(t: z3.ExprRef, nan: frozenset[int]) -> int:
    """How many terms `_without(t, nan)` rebuilds (those that test some x of `nan`),
    counted up to one past REBUILT (each term's shape read from z3 once: on a
    1,000-operation half query, recounting the same cones was half of `normal`)."""
    seen: set[int] = set()
    todo = [(t.get_id(), t)]
    while todo and len(seen) <= REBUILT:
        i, u = todo.pop()
        if i in seen:
            continue
        found = _SHAPES.table.get(i)  # `_shape`, looked up without a call into z3
        source, tested, below = found[1] if found is not None else _shape(u)
        if source in nan or nan.isdisjoint(tested):
            continue  # a test read false, or a term kept
        seen.add(i)
        todo.extend(below)
    return len(seen)


def _shape(u: z3.ExprRef) -> tuple[int | None, frozenset[int], tuple[tuple[int, z3.ExprRef], ...]]:
    """What `_rebuilt` reads of a term: the AST id of the float it is the NaN test of
    (`nan_source`; None for any other term), `nan_tested`, and `kids` with their AST ids."""
    return _SHAPES.get(u.get_id(), u, lambda: (
        nan_source(u.arg(0)).get_id() if z3.is_app_of(u, z3.Z3_OP_FPA_IS_NAN) else None,
        nan_tested(u), tuple((k.get_id(), k) for k in kids(u))))


def _without(t: z3.ExprRef, nan: frozenset[int], normal: Normal) -> z3.ExprRef:
    """t with `isNaN(x)` false for x in `nan` (ids), the terms above them renormalised
    (once per term and the ids it tests: the walks from other roots share them)."""
    if z3.is_app_of(t, z3.Z3_OP_FPA_IS_NAN) and nan_source(t.arg(0)).get_id() in nan:
        return z3.BoolVal(False)
    tested = nan.intersection(nan_tested(t))
    if not tested:
        return t
    return _WITHOUT.get((t.get_id(), tested, normal), t, lambda: normal(
        t.decl()(*[_without(c, tested, normal) for c in kids(t)])))


def always_nan(bits: z3.BitVecRef, sort: z3.FPSortRef, normal: Normal) -> bool:
    """`bits` encode a NaN of `sort` on every input: a NaN constant, or `ite(isNaN(u), u,
    k)` of such bits k, the test as `normal` writes it (`sem.sorts.free_nan`: an open
    NaN's bits where they are a NaN, else the canonical one)."""
    if z3.is_bv_value(bits):
        man, ones = sort.sbits() - 1, (1 << sort.ebits()) - 1
        exponent, fraction = (bits.as_long() >> man) & ones, bits.as_long() & ((1 << man) - 1)
        return exponent == ones and fraction != 0
    if not z3.is_app_of(bits, z3.Z3_OP_ITE):
        return False
    test, u, k = kids(bits)
    return test.eq(normal(z3.fpIsNaN(normal(z3.fpBVToFP(u, sort))))) \
        and always_nan(k, sort, normal)


def _zero(t: z3.ExprRef) -> bool:
    """t is a float zero constant, of either sign (a value, or read from constant bits)."""
    if z3.is_fp_value(t):
        return t.isZero()
    if z3.is_app_of(t, z3.Z3_OP_FPA_TO_FP) and t.num_args() == 1 and z3.is_bv_value(t.arg(0)):
        return t.arg(0).as_long() & ~(1 << (t.arg(0).size() - 1)) == 0
    return False


def _select(t: z3.ExprRef, normal: Normal) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef] | None:
    """(c, a, b) for a float ite(c, a, b), or one read from the bits ite(c, a, b)."""
    if z3.is_app_of(t, z3.Z3_OP_FPA_TO_FP) and t.num_args() == 1 \
            and z3.is_app_of(t.arg(0), z3.Z3_OP_ITE):
        c, a, b = kids(t.arg(0))
        return c, normal(z3.fpBVToFP(a, t.sort())), normal(z3.fpBVToFP(b, t.sort()))
    return kids(t) if z3.is_app_of(t, z3.Z3_OP_ITE) else None


def sign_free(t: z3.ExprRef, normal: Normal, depth: int = 6) -> z3.ExprRef:
    """A term `~` t (equal, or both zeros): a zero added (subtracted) dropped, a select
    with a zero arm added written as the select of the sum and the other operand, and
    so through the operators of `THROUGH`, `depth` levels down."""
    if depth == 0 or not z3.is_app(t) or not _is_float(t):
        return t
    return _SIGN_FREE.get((t.get_id(), depth, normal), t, lambda: _sign_free(t, normal, depth))


def _sign_free(t: z3.ExprRef, normal: Normal, depth: int) -> z3.ExprRef:
    kind = t.decl().kind()
    if kind in (z3.Z3_OP_FPA_ADD, z3.Z3_OP_FPA_SUB):
        rm, x, y = kids(t)
        sides = [(x, y)] if kind == z3.Z3_OP_FPA_SUB else [(x, y), (y, x)]
        for keep, other in sides:
            if _zero(other):  # x + 0 ~ x, x - 0 ~ x, in every rounding mode
                return sign_free(keep, normal, depth - 1)
            if (found := _select(other, normal)) is not None:
                c, a, b = found
                if _zero(b) or _zero(a):  # x + ite(c, a, 0) ~ ite(c, x + a, x + 0) ~ ...
                    arm = normal(t.decl()(rm, keep, a if _zero(b) else b))
                    arms = (arm, keep) if _zero(b) else (keep, arm)
                    return sign_free(normal(z3.If(c, *arms)), normal, depth - 1)
    if kind not in THROUGH:
        return t
    operands = list(kids(t))
    for k in THROUGH[kind]:
        operands[k] = sign_free(operands[k], normal, depth - 1)
    out = normal(t.decl()(*operands))
    return t if out.eq(t) else out


def sign_blind(t: z3.BoolRef, normal: Normal) -> z3.BoolRef | None:
    """A comparison (`SIGN_BLIND`) of operands in `sign_free` form: the
    same answer, since they are `~` the operands (None where none changes)."""
    operands = kids(t)
    free = [sign_free(c, normal) if _is_float(c) else c for c in operands]
    if all(a.eq(b) for a, b in zip(operands, free, strict=True)):
        return None
    return t.decl()(*free)
