"""Local rewrites that make one value one term: the semantics and two compilers spell
some values two ways (`a > b` and `b < a`; a NaN test on the bits or on the float), and
equivalence sweeping (`fraig.py`) merges for free what is one term, where two spellings
cost it a solver query.

Each rule looks at a term's root and its children, which are rewritten already (and
a few levels further: the bits known zero, known one and known copies of the sign
bit, `known.py`), and gives a term equal to it for every value of its free constants
(each rule is proved so in tests/test_rewrite.py, and on random terms that mix them);
`normal` applies the first that matches, and the rules that build new subterms write
them through `normal` too.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import z3

from ...sem.sorts import ieee_result
from ...terms.ops import signed
from . import division, float_facts
from .float_facts import kids
from .known import known_zeros, leading_zeros, nonzero, not_negative, sign_bits
from .order import structural


def _full_extract(t: z3.ExprRef) -> z3.ExprRef | None:
    """((_ extract w-1 0) x) of a w-bit x is x."""
    hi, lo = t.params()
    x = t.arg(0)
    return x if lo == 0 and hi == x.size() - 1 else None


def _greater(t: z3.ExprRef) -> z3.ExprRef | None:
    """a > b is b < a; a >= b is b <= a (floats: both false on a NaN, alike)."""
    a, b = kids(t)
    return normal(z3.fpLT(b, a) if t.decl().kind() == z3.Z3_OP_FPA_GT else z3.fpLEQ(b, a))


def _nan_of_constant(t: z3.BoolRef) -> z3.BoolRef | None:
    """isNaN of a float constant is its value: -O0's `setp.equ x, 0` tests the 0 too."""
    if _float_bits(t.arg(0)) is None:
        return None
    out = z3.simplify(t)
    return out if z3.is_true(out) or z3.is_false(out) else None


def _nan_poisoned(t: z3.ExprRef) -> z3.ExprRef | None:
    """A float with each NaN test of a value whose NaN reaches it read as false
    (`float_facts.poisoned_tests`)."""
    return float_facts.poisoned_tests(t, normal)


def _sign_blind(t: z3.BoolRef) -> z3.BoolRef | None:
    """A comparison of operands written up to the sign of a zero (`float_facts.sign_blind`)."""
    return float_facts.sign_blind(t, normal)


_STRICT = {z3.Z3_OP_SGT: (z3.Z3_OP_SLT, False), z3.Z3_OP_SGEQ: (z3.Z3_OP_SLT, True),
           z3.Z3_OP_SLEQ: (z3.Z3_OP_SLT, True), z3.Z3_OP_UGT: (z3.Z3_OP_ULT, False),
           z3.Z3_OP_UGEQ: (z3.Z3_OP_ULT, True), z3.Z3_OP_ULEQ: (z3.Z3_OP_ULT, True)}


def _less(t: z3.ExprRef) -> z3.ExprRef | None:
    """A bit-vector order as `<`: a > b is b < a, a >= b is !(a < b), a <= b is
    !(b < a) (signed and unsigned alike), so that -O0's `ite(a >= b, 0, x)` of a phi
    and opt's `ite(a < b, x, 0)` of a select meet (`_ite_of_not`)."""
    a, b = kids(t)
    kind = t.decl().kind()
    less = z3.ULT if _STRICT[kind][0] == z3.Z3_OP_ULT else lambda x, y: x < y
    if kind in (z3.Z3_OP_SGEQ, z3.Z3_OP_UGEQ):
        return z3.Not(less(a, b))
    return z3.Not(less(b, a)) if _STRICT[kind][1] else less(b, a)


def _not_not(t: z3.ExprRef) -> z3.ExprRef | None:
    x = t.arg(0)
    return x.arg(0) if z3.is_not(x) else None


def _ite_of_not(t: z3.ExprRef) -> z3.ExprRef | None:
    """ite(!c, a, b) is ite(c, b, a) (and that, written by `normal`: a pair in order)."""
    c, a, b = kids(t)
    return normal(z3.If(c.arg(0), b, a)) if z3.is_not(c) else None


def _sorted_pair(t: z3.ExprRef) -> z3.ExprRef | None:
    """The pair {x, y} whatever their order (`sem.sorts.unordered`), `ite(y < x, y.x,
    x.y)` (`.` a concat), with x and y in one order (`order.structural`): the open NaN of -O0's
    `min(a, b)` and of opt's `min(b, a)` is then one function's one value."""
    c, yes, no = kids(t)
    if not (z3.is_app_of(c, z3.Z3_OP_ULT) and z3.is_app_of(yes, z3.Z3_OP_CONCAT)
            and yes.num_args() == 2 and yes.arg(0).eq(c.arg(0)) and yes.arg(1).eq(c.arg(1))
            and z3.is_app_of(no, z3.Z3_OP_CONCAT) and no.num_args() == 2
            and no.arg(0).eq(c.arg(1)) and no.arg(1).eq(c.arg(0))):
        return None
    y, x = kids(c)
    if structural(y) < structural(x):
        return None
    return z3.If(z3.ULT(x, y), z3.Concat(x, y), z3.Concat(y, x))


def _bits_nan_test(t: z3.ExprRef) -> z3.ExprRef | None:
    """The NaN test on a float's bits, exponent all ones and fraction not zero
    (`sem.sorts.is_nan`), is fp.isNaN of the float they stand for (the low bits of a
    wider value, where its fields are read from that value: `_extract_of_extract`)."""
    tests = dict(f for c in kids(t) if (f := _field_test(c)) is not None)
    if t.num_args() != 2 or set(tests) != {"ones", "nonzero"}:
        return None
    exp, frac = tests["ones"], tests["nonzero"]
    bits = exp.arg(0)
    (top, man), (man_hi, low) = exp.params(), frac.params()
    if not bits.eq(frac.arg(0)) or top > bits.size() - 2 or man_hi != man - 1 or low != 0 \
            or man < 1 or top - man < 1:
        return None
    if top < bits.size() - 2:  # a float in the low bits (an f16 of a .b32 parameter)
        bits = normal(z3.Extract(top + 1, 0, bits))
    return z3.fpIsNaN(normal(z3.fpBVToFP(bits, z3.FPSort(top - man + 1, man + 1))))


def _float_of_result(t: z3.ExprRef) -> z3.ExprRef | None:
    """A float read from the bits of an IEEE result is that result (`to_bits` writes
    a NaN as some NaN, and every NaN is one float); read from a select of such bits,
    it is the select of the floats, so that the float -O0 reads back from a register
    meets the one opt selects."""
    if t.num_args() != 1 or not z3.is_bv(t.arg(0)):
        return None
    bits, sort = t.arg(0), t.sort()
    found = ieee_result(bits, sort)
    if found is not None:
        return found
    if not z3.is_app_of(bits, z3.Z3_OP_ITE):
        return None
    c, a, b = kids(bits)
    arms = [normal(z3.fpBVToFP(x, sort)) for x in (a, b)]
    if all(z3.is_app_of(x, z3.Z3_OP_FPA_TO_FP) and x.num_args() == 1 for x in arms):
        return None  # neither arm is a result, nor a select that holds one
    return normal(z3.If(c, *arms))


def _sign_operation(t: z3.ExprRef) -> z3.ExprRef | None:
    """A float read from the bits of a neg (`sem.arith.fneg`: `ite(isNaN(a), a NaN, a
    with its sign bit flipped)`) is fp.neg of a's float: the same number, and a NaN
    where a is one (a float has one NaN). So -O0's `add(neg(b), a)` reads as opt's
    `sub(a, b)` does (`_added_negation`). (Not abs, read alike: -O0's copysign of an
    fabs then met opt's no longer, fsel-llc14-2002 unknown at 60 CPU s, 10 s without.)"""
    if t.num_args() != 1 or not z3.is_app_of(t.arg(0), z3.Z3_OP_ITE):
        return None
    test, nan, value = kids(t.arg(0))
    a = _sign_flipped(value)
    if a is None:
        return None
    x = normal(z3.fpBVToFP(a, t.sort()))
    if not test.eq(normal(z3.fpIsNaN(x))) or not float_facts.always_nan(nan, t.sort(), normal):
        return None
    return normal(z3.fpNeg(x))


def _sign_flipped(bits: z3.BitVecRef) -> z3.BitVecRef | None:
    """a where `bits` are a's with the sign bit flipped."""
    if not (z3.is_app_of(bits, z3.Z3_OP_CONCAT) and bits.num_args() == 2):
        return None
    sign, rest = kids(bits)
    w = bits.size()
    if not (z3.is_app_of(rest, z3.Z3_OP_EXTRACT) and rest.params() == [w - 2, 0]
            and rest.arg(0).size() == w):
        return None
    a = rest.arg(0)
    top = normal(z3.Extract(w - 1, w - 1, a))
    return a if z3.is_app_of(sign, z3.Z3_OP_BNOT) and sign.arg(0).eq(top) else None


_NEGATED = {z3.Z3_OP_FPA_ADD: z3.fpSub, z3.Z3_OP_FPA_SUB: z3.fpAdd}


def _added_negation(t: z3.ExprRef) -> z3.ExprRef | None:
    """a + (-b) and (-b) + a are a - b, a - (-b) is a + b: SMT-LIB's fp.sub is the sum
    with the negation, in every rounding mode (an exact zero's sign too). opt writes
    `fsub a, b` for IR's `fadd (fneg b), a`, -O0 keeps the neg."""
    rm, x, y = kids(t)
    sides = [(x, y)] if z3.is_app_of(t, z3.Z3_OP_FPA_SUB) else [(x, y), (y, x)]
    for keep, other in sides:
        if z3.is_app_of(other, z3.Z3_OP_FPA_NEG):
            return normal(_NEGATED[t.decl().kind()](rm, keep, other.arg(0)))
    return None


def _float_bits(t: z3.ExprRef) -> int | None:
    """The bits of a float constant: a float value, or one read from constant bits
    (None for SMT-LIB's NaN: it has no one pattern, and z3 leaves its bits a term)."""
    if z3.is_fp_value(t):
        return None if t.isNaN() else z3.simplify(z3.fpToIEEEBV(t)).as_long()
    if z3.is_app_of(t, z3.Z3_OP_FPA_TO_FP) and t.num_args() == 1 and z3.is_bv_value(t.arg(0)):
        return t.arg(0).as_long()
    return None


def _select(t: z3.ExprRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef] | None:
    """(c, a, b), floats, for a float that is ite(c, a, b), or is read from the bits
    ite(c, a, b)."""
    if z3.is_app_of(t, z3.Z3_OP_FPA_TO_FP) and t.num_args() == 1 \
            and z3.is_app_of(t.arg(0), z3.Z3_OP_ITE):
        c, a, b = kids(t.arg(0))
        return c, normal(z3.fpBVToFP(a, t.sort())), normal(z3.fpBVToFP(b, t.sort()))
    return tuple(kids(t)) if z3.is_app_of(t, z3.Z3_OP_ITE) else None


def _ordered(t: z3.ExprRef) -> z3.ExprRef | None:
    """fp.add and fp.mul with their operands in one order (`order.structural`): SMT-LIB's
    have one NaN, so they commute exactly, and a term a rule builds (`_identity_arm`)
    meets the one a compiler wrote."""
    rm, a, b = kids(t)
    return None if structural(a) <= structural(b) else t.decl()(rm, b, a)


# The operand that leaves the other as it is, bit for bit and NaN for NaN: x + -0 is x
# (+0 + -0 is +0 when rounding to nearest: not toward negative), x - +0 is x, x * 1 is x
# in every rounding mode: (its bits for (exponent bits, significand bits), nearest only)
_IDENTITY = {z3.Z3_OP_FPA_ADD: (lambda e, s: 1 << (e + s - 1), True),
             z3.Z3_OP_FPA_SUB: (lambda e, s: 0, True),
             z3.Z3_OP_FPA_MUL: (lambda e, s: ((1 << (e - 1)) - 1) << (s - 1), False)}


def _identity_arm(t: z3.ExprRef) -> z3.ExprRef | None:
    """x op ite(c, a, e), e the operation's identity, is ite(c, x op a, x): opt folds a
    select of `x op a` and `x` into the operation (InstCombine's select-into-op), -O0
    keeps the select; the same for ite(c, e, b), and for e on the left of + and *.
    Rounding to nearest even only, where the identity holds in every mode (`_IDENTITY`)."""
    rm, x, y = kids(t)
    kind = t.decl().kind()
    bits_of, nearest_only = _IDENTITY[kind]
    if nearest_only and not z3.is_app_of(rm, z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN):
        return None
    identity = bits_of(t.sort().ebits(), t.sort().sbits())
    sides = [(x, y)] if kind == z3.Z3_OP_FPA_SUB else [(x, y), (y, x)]
    for keep, select in sides:
        if (found := _select(select)) is None:
            continue
        c, a, b = found
        if _float_bits(b) == identity:
            return normal(z3.If(c, normal(t.decl()(rm, keep, a)), keep))
        if _float_bits(a) == identity:
            return normal(z3.If(c, keep, normal(t.decl()(rm, keep, b))))
    return None


def _self_difference(t: z3.ExprRef) -> z3.ExprRef | None:
    """x - x and x + (-x), rounding to nearest: +0 where x is finite (an exact zero sum
    is +0 in every mode but toward negative), the NaN where x is a NaN or an infinity
    (SMT-LIB's one NaN: the register's open NaN is `to_bits`'s, outside this term)."""
    rm, a, b = kids(t)
    if not z3.is_app_of(rm, z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN):
        return None
    if z3.is_app_of(t, z3.Z3_OP_FPA_ADD):
        negated = [(x, y) for x, y in ((a, b), (b, a)) if z3.is_app_of(y, z3.Z3_OP_FPA_NEG)]
        if not any(y.arg(0).eq(x) for x, y in negated):
            return None
    elif not a.eq(b):
        return None
    sort = t.sort()
    return normal(z3.If(z3.Or(z3.fpIsNaN(a), z3.fpIsInf(a)), z3.fpNaN(sort),
                        z3.fpPlusZero(sort)))


def _field_test(t: z3.ExprRef) -> tuple[str, z3.ExprRef] | None:
    """("ones", x) for `x == all ones`, ("nonzero", x) for `x != 0`, x an extract."""
    negated = z3.is_not(t)
    if negated:
        t = t.arg(0)
    kind = t.decl().kind() if z3.is_app(t) else None
    if kind not in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT) or t.num_args() != 2:
        return None
    equal = (kind == z3.Z3_OP_EQ) != negated
    x, c = kids(t)
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
    c, a, b = kids(t)
    if z3.is_true(c) or a.eq(b):
        return a
    return b if z3.is_false(c) else None


def _complements(t: z3.ExprRef) -> bool:
    """Some operand of t is the negation of another."""
    ids = {c.get_id() for c in kids(t)}
    return any(z3.is_not(c) and c.arg(0).get_id() in ids for c in kids(t))


def _connective(t: z3.ExprRef) -> z3.ExprRef | None:
    """An and/or with an operand that decides it (false in an and, true in an or, x and
    !x both), or that it does not need: the neutral constant, and an operand that
    another absorbs (x or (x and y) is x; x and (x or y) is x). Path conditions meet
    so: a branch and its join leave `c or !c` where the live condition was true."""
    conjunction = z3.is_and(t)
    absorbing, neutral = (z3.is_false, z3.is_true) if conjunction else (z3.is_true, z3.is_false)
    operands = kids(t)
    if any(absorbing(c) for c in operands) or _complements(t):
        return z3.BoolVal(not conjunction)
    ids = {c.get_id() for c in operands}
    inner = z3.is_or if conjunction else z3.is_and
    keep = [c for c in operands if not neutral(c) and not (
        inner(c) and any(d.get_id() in ids for d in kids(c)))]
    if len(keep) == len(operands):
        return None
    if len(keep) < 2:
        return keep[0] if keep else z3.BoolVal(conjunction)
    return z3.And(keep) if conjunction else z3.Or(keep)


def is_value(t: z3.ExprRef) -> bool:
    """A bit-vector numeral, true or false (the sort read first: a test of a float's
    operator costs a dozen calls into z3, and `_fold` asks it of every operand)."""
    if z3.is_bv(t):
        return z3.is_bv_value(t)
    return z3.is_bool(t) and z3.is_app(t) and t.num_args() == 0 \
        and t.decl().kind() in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE)


def _fold(t: z3.ExprRef) -> z3.ExprRef | None:
    """A bit-vector or Boolean operator over constants is its value (`Not(True)` is
    `False`). Not a function symbol's application (free), nor a float's (z3's
    `fp.to_ieee_bv` gives one NaN's bits, where the semantics leaves them open)."""
    if t.decl().kind() == z3.Z3_OP_UNINTERPRETED or t.num_args() == 0 \
            or not all(is_value(c) for c in kids(t)):
        return None
    out = z3.simplify(t)
    return out if is_value(out) and not out.eq(t) else None


# A sum by constants, sum of `coefficient * atom` plus a constant: an atom is any term
# that is not such a sum; coefficients are modulo 2^width, keyed by the atom's AST id
# (a name within one term only: the order written is `order.structural`)
Linear = tuple[int, dict[int, tuple[z3.BitVecRef, int]]]
LINEAR_ATOMS = 32  # a longer sum is left as written (its terms grow as the atoms do)


def _monomial(t: z3.BitVecRef) -> Linear:
    """A summand as `_linear` writes it: a constant, `c * atom`, or an atom."""
    if z3.is_bv_value(t):
        return t.as_long(), {}
    if z3.is_app_of(t, z3.Z3_OP_BMUL) and t.num_args() == 2 and z3.is_bv_value(t.arg(0)):
        return 0, {t.arg(1).get_id(): (t.arg(1), t.arg(0).as_long())}
    return 0, {t.get_id(): (t, 1)}


def _summands(t: z3.BitVecRef) -> Linear:
    """t (an operand, in its normal form already) as a sum."""
    if not z3.is_app_of(t, z3.Z3_OP_BADD):
        return _monomial(t)
    return _add([_monomial(c) for c in kids(t)], t.size())


def _add(parts: list[Linear], width: int, scales: list[int] | None = None) -> Linear:
    mask, const, atoms = (1 << width) - 1, 0, {}
    for (k, terms), scale in zip(parts, scales or [1] * len(parts), strict=True):
        const = (const + scale * k) & mask
        for key, (atom, c) in terms.items():
            atoms[key] = (atom, (atoms.get(key, (atom, 0))[1] + scale * c) & mask)
    return const, {key: a for key, a in atoms.items() if a[1]}


def _as_sum(t: z3.BitVecRef) -> Linear | None:
    """t's root (+, -, negation, a product or shift by a constant) over its operands'
    sums; None where the root is none of those."""
    kind, operands, width = t.decl().kind(), kids(t), t.size()
    if kind == z3.Z3_OP_BADD:
        return _add([_summands(c) for c in operands], width)
    if kind == z3.Z3_OP_BSUB:
        return _add([_summands(c) for c in operands], width, [1] + [-1] * (len(operands) - 1))
    if kind == z3.Z3_OP_BNEG:
        return _add([_summands(operands[0])], width, [-1])
    if kind == z3.Z3_OP_BSHL and z3.is_bv_value(operands[1]):
        shift = operands[1].as_long()
        return _add([_summands(operands[0])], width, [1 << shift if shift < width else 0])
    if kind == z3.Z3_OP_BMUL:
        factors = [c for c in operands if not z3.is_bv_value(c)]
        if len(factors) == 1:
            scale = 1
            for c in operands:
                scale *= c.as_long() if z3.is_bv_value(c) else 1
            return _add([_summands(factors[0])], width, [scale])
    return None


def _linear(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """Sums, differences and products by constants in one form, so that the sums two
    compilers reassociate meet (`277*(a + b + c) - 13019` and `(a + b - d)*277` where
    `c` is `47 - d`): `k + c1*x1 + c2*x2 + ...`, the atoms in structural order, no
    coefficient 0 or constant 0 written, coefficient 1 written as the atom alone."""
    found = _as_sum(t)
    if found is None or len(found[1]) > LINEAR_ATOMS:
        return None
    const, atoms = found
    width = t.size()
    summands = [atom if c == 1 else z3.BitVecVal(c, width) * atom
                for atom, c in sorted(atoms.values(), key=lambda a: structural(a[0]))]
    if const or not summands:
        summands.insert(0, z3.BitVecVal(const, width))
    # one n-ary bvadd (z3.Sum nests binary ones, from a 0): `_summands` reads one level
    out = summands[0] if len(summands) == 1 else \
        (summands[0] + summands[1]).decl()(*summands)
    return None if out.eq(t) else out


Atoms = dict[int, tuple[z3.BitVecRef, int]]  # AST id -> (atom, how many times)


def _flat(t: z3.BitVecRef) -> tuple[int, Atoms]:
    """An and/or/xor's constants folded into one, and its other operands counted, its
    operands' operands of the same operator taken in (they are flat already)."""
    kind, ones = t.decl().kind(), (1 << t.size()) - 1
    const, atoms = ones if kind == z3.Z3_OP_BAND else 0, {}
    for c in kids(t):
        for x in kids(c) if z3.is_app_of(c, kind) else [c]:
            if z3.is_bv_value(x):
                v = x.as_long()
                const = const & v if kind == z3.Z3_OP_BAND else \
                    const | v if kind == z3.Z3_OP_BOR else const ^ v
            else:
                atoms[x.get_id()] = (x, atoms.get(x.get_id(), (x, 0))[1] + 1)
    return const, atoms


def _shift_right(t: z3.ExprRef) -> int | None:
    """s where t is `x >> s` (logical) by a constant below the width: its top s bits
    are zero."""
    if z3.is_app_of(t, z3.Z3_OP_BLSHR) and z3.is_bv_value(t.arg(1)) \
            and t.arg(1).as_long() < t.size():
        return t.arg(1).as_long()
    return None


def _masked_high_bits(const: int, atoms: Atoms, width: int) -> z3.BitVecRef | None:
    """`(x >> s) & m`, m the bits b and up that `x >> s` may hold, is `(x >> (s + b))
    << b`: written as `_linear` writes a shift (opt writes the one where -O0 shifts
    twice)."""
    if len(atoms) != 1 or not const:
        return None
    (atom, _), = atoms.values()
    s = _shift_right(atom)
    low = (const & -const).bit_length() - 1
    if s is None or const != ((((1 << width) - 1) >> s) >> low) << low:
        return None
    shifted = z3.LShR(atom.arg(0), s + low)
    return shifted if low == 0 else z3.BitVecVal(1 << low, width) * shifted


def _xor_of_masked(const: int, atoms: Atoms, width: int) -> tuple[int, Atoms]:
    """x ^ (x & c) is x & ~c, for each such pair among a xor's atoms."""
    out = dict(atoms)
    for key, (a, _) in atoms.items():
        if not (z3.is_app_of(a, z3.Z3_OP_BAND) and a.num_args() == 2
                and z3.is_bv_value(a.arg(0)) and a.arg(1).get_id() in out and key in out):
            continue
        x = a.arg(1)
        del out[key], out[x.get_id()]
        masked = normal(x & (~a.arg(0).as_long() & ((1 << width) - 1)))
        if z3.is_bv_value(masked):
            const ^= masked.as_long()
        else:
            out[masked.get_id()] = (masked, out.get(masked.get_id(), (masked, 0))[1] + 1)
            out = {k: v for k, v in out.items() if v[1] % 2}
    return const, out


def _bitwise(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """An and/or/xor of bit-vectors flat, in one order (`_flat`): the constant written
    first unless neutral, the atoms in structural order, a repeated atom once (and, or) or
    cancelled in pairs (xor); in an and, a constant without the bits that a right
    shift among the atoms clears. So chains a compiler reassociates meet:
    `((a ^ b) ^ c) ^ d` and `(d ^ b) ^ (a ^ c)`."""
    kind, width = t.decl().kind(), t.size()
    ones = (1 << width) - 1
    const, atoms = _flat(t)
    if kind == z3.Z3_OP_BXOR:
        const, atoms = _xor_of_masked(const, {k: a for k, a in atoms.items() if a[1] % 2},
                                      width)
    if kind == z3.Z3_OP_BAND and const != ones:  # no constant where there was none
        for atom, _ in atoms.values():
            if (s := _shift_right(atom)) is not None:
                const &= ones >> s
        if any(not ~known_zeros(a) & ones & ~const for a, _ in atoms.values()):
            const = ones  # a mask that keeps every bit an atom may hold
        if (high := _masked_high_bits(const, atoms, width)) is not None:
            return high
    absorbing = {z3.Z3_OP_BAND: 0, z3.Z3_OP_BOR: ones}.get(kind)
    if const == absorbing:
        return z3.BitVecVal(const, width)
    operands = sorted((a for a, _ in atoms.values()), key=structural)
    if const != (ones if kind == z3.Z3_OP_BAND else 0) or not operands:
        operands.insert(0, z3.BitVecVal(const, width))
    out = operands[0] if len(operands) == 1 else t.decl()(*operands)
    return None if out.eq(t) else out


def _disjoint(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """An or of operands that share no bit that may be one is their sum, as
    `_linear` writes it: opt writes `a + b` as `a | b` where it sees so (`897*x | 47 +
    (y >> 31)`, x's low 13 bits zero)."""
    width = t.size()
    ones, seen = (1 << width) - 1, 0
    for c in kids(t):
        may = ~known_zeros(c) & ones
        if may & seen:
            return None
        seen |= may
    return normal((t.arg(0) + t.arg(1)).decl()(*kids(t)))


def _shifted_constant(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """`(x op c) << k` is `(x << k) op (c << k)` for op and/or/xor: the constant comes
    out to the chain above (-O0's `(x ^ 734) << 8` in a xor chain where opt folded
    the 187904 into the chain's constant)."""
    y, k = kids(t)
    if not (z3.is_bv_value(k) and k.as_long() < t.size() and z3.is_app(y)
            and y.decl().kind() in (z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR)
            and z3.is_bv_value(y.arg(0)) and y.num_args() > 1):
        return None
    rest = y.arg(1) if y.num_args() == 2 else normal(y.decl()(*kids(y)[1:]))
    mask = (1 << t.size()) - 1
    shifted = normal(rest << k)
    return normal(y.decl()(shifted, z3.BitVecVal((y.arg(0).as_long() << k.as_long()) & mask,
                                                  t.size())))


_REMAINDERS = {z3.Z3_OP_BUDIV: z3.URem, z3.Z3_OP_BSDIV: z3.SRem}


def _factors(t: z3.BitVecRef) -> list[z3.BitVecRef]:
    """The operands of a product, nested products flattened."""
    if not z3.is_app_of(t, z3.Z3_OP_BMUL):
        return [t]
    return [f for c in kids(t) for f in _factors(c)]


def _remainder(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """x - (x / d)*d is x % d, unsigned and signed (by 0 both are x; SMT-LIB's
    division is C's, truncating): opt writes `urem` beside a `udiv` of the same operands
    so, where llc writes `rem.u32`; by a numeral d, `_linear` writes `(-d)*(x / d)`."""
    if not (z3.is_app_of(t, z3.Z3_OP_BADD) and t.num_args() == 2):
        return None
    mask = (1 << t.size()) - 1
    for x, product in (kids(t), reversed(kids(t))):
        factors = _factors(product)
        numerals = [f for f in factors if z3.is_bv_value(f)]
        divs = [f for f in factors
                if z3.is_app(f) and f.decl().kind() in _REMAINDERS and f.arg(0).eq(x)]
        if len(numerals) != 1 or not divs:
            continue
        q, k = divs[0], numerals[0].as_long()
        rest = [f for f in factors if not f.eq(q) and not f.eq(numerals[0])]
        d = q.arg(1)
        by_value = len(rest) == 1 and rest[0].eq(d) and k == mask
        by_numeral = not rest and z3.is_bv_value(d) and k == -d.as_long() & mask
        if len(factors) == len(rest) + 2 and (by_value or by_numeral):
            return _REMAINDERS[q.decl().kind()](x, d)
    return None


def _sum(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """A sum as `_linear` writes it, a remainder where it is one (`_remainder`)."""
    out = _linear(t)
    remainder = _remainder(out if out is not None else t)
    return out if remainder is None else remainder


def _zero_test(t: z3.BoolRef) -> z3.BoolRef | None:
    """x == 0 is false where x is known nonzero: -O0's guard of a division by
    `(d & 0xffff) | 1` meets the division opt writes unguarded."""
    if t.num_args() != 2 or not z3.is_bv(t.arg(0)):
        return None
    a, b = kids(t)
    x = b if z3.is_bv_value(a) and a.as_long() == 0 else \
        a if z3.is_bv_value(b) and b.as_long() == 0 else None
    return z3.BoolVal(False) if x is not None and nonzero(x) else None


def _select_test(t: z3.BoolRef) -> z3.BoolRef | None:
    """k == ite(c, a, b) and k != ite(c, a, b), of numerals k, a, b, as a condition on
    c: nvcc's unoptimised code keeps a bool in a register (`selp.u16 %rs, 1, 0, %p`)
    and tests it (`setp.ne.s16 %q, %rs, 0`) where -O3 reads %p itself."""
    if t.num_args() != 2 or not z3.is_bv(t.arg(0)):
        return None
    x, k = kids(t)
    if z3.is_bv_value(x):
        x, k = k, x
    if not (z3.is_bv_value(k) and z3.is_app_of(x, z3.Z3_OP_ITE)
            and z3.is_bv_value(x.arg(1)) and z3.is_bv_value(x.arg(2))):
        return None
    c, a, b = kids(x)
    equal = {(True, True): z3.BoolVal(True), (True, False): c,
             (False, True): normal(z3.Not(c)), (False, False): z3.BoolVal(False)}[
        a.eq(k), b.eq(k)]
    return equal if z3.is_eq(t) else normal(z3.Not(equal))


def _sign_test(t: z3.BoolRef) -> z3.BoolRef | None:
    """x <u 2^(w-1) is !(x <s 0), and 2^(w-1) - 1 <u x is x <s 0: nvcc -O0 writes
    `(unsigned)v < 2147483648u` as written where -O3 tests the sign (`setp.lt.s32 %p,
    %r, 0`)."""
    a, b = kids(t)
    half = 1 << (a.size() - 1)
    if z3.is_bv_value(b) and b.as_long() == half:
        return z3.Not(a < 0)
    return b < 0 if z3.is_bv_value(a) and a.as_long() == half - 1 else None


def _flushed(t: z3.ExprRef) -> tuple[z3.BitVecRef, int] | None:
    """(x, lo) where t is .ftz's flush of x's bits as `sem.arith.flush_bits` writes it,
    `ite(x[w-2:lo] == 0, concat(x[w-1], 0), x)` (the equality's operands either way
    round: the sweep sorts them)."""
    if not z3.is_app_of(t, z3.Z3_OP_ITE) or not z3.is_bv(t.arg(2)):
        return None
    test, zero, x = kids(t)
    w = x.size()
    if not z3.is_eq(test):
        return None
    field, nought = kids(test)
    if z3.is_bv_value(field):
        field, nought = nought, field
    sign = zero.arg(0) if z3.is_app_of(zero, z3.Z3_OP_CONCAT) and zero.num_args() == 2 \
        else None
    if not (z3.is_bv_value(nought) and nought.as_long() == 0
            and z3.is_app_of(field, z3.Z3_OP_EXTRACT) and field.arg(0).eq(x)
            and field.params()[0] == w - 2 and sign is not None
            and z3.is_app_of(sign, z3.Z3_OP_EXTRACT) and sign.arg(0).eq(x)
            and sign.params() == [w - 1, w - 1]
            and z3.is_bv_value(zero.arg(1)) and zero.arg(1).as_long() == 0):
        return None
    return x, field.params()[1]


def _flushed_twice(t: z3.ExprRef) -> z3.ExprRef | None:
    """A flush (`_flushed`) of a flushed value is that value: a zero exponent field
    of the inner result means it is a signed zero already. The sweep reads -O3's
    `add.ftz(selp(p, add.ftz(..), y))` with p true (`fraig._Sweep._given`) as the flush
    of a flushed sum, where -O0's phi arm flushes the sum once."""
    outer = _flushed(t)
    inner = None if outer is None else _flushed(outer[0])
    return outer[0] if inner is not None and inner[1] == outer[1] else None


# The extensions, each with its division that a narrow one widens to, the known-bits
# test that a value of w bits is the extension of its low m bits (`_fits`), and the
# value of a numeral's bits so extended
EXTENSIONS = {z3.Z3_OP_ZERO_EXT: z3.ZeroExt, z3.Z3_OP_SIGN_EXT: z3.SignExt}
_DIVISIONS = {z3.Z3_OP_BUDIV: (z3.UDiv, z3.Z3_OP_ZERO_EXT),
              z3.Z3_OP_BUREM: (z3.URem, z3.Z3_OP_ZERO_EXT),
              z3.Z3_OP_BSDIV: (operator.truediv, z3.Z3_OP_SIGN_EXT),
              z3.Z3_OP_BSREM: (z3.SRem, z3.Z3_OP_SIGN_EXT)}


def _fits(t: z3.BitVecRef, m: int, extension: int) -> bool:
    """t is the zero (sign) extension of its low m bits: its top bits above them are
    known zero (known copies of bit m-1)."""
    if extension == z3.Z3_OP_ZERO_EXT:
        return leading_zeros(known_zeros(t), t.size()) >= t.size() - m
    return sign_bits(t) >= t.size() - m + 1


def _resized(y: z3.BitVecRef, width: int, extension: int) -> z3.BitVecRef:
    """y, known to fit (`_fits`) in fewer bits than `width` or than its own, at `width`."""
    if y.size() == width:
        return y
    if y.size() > width:
        return normal(z3.Extract(width - 1, 0, y))
    return normal(EXTENSIONS[extension](width - y.size(), y))


def _extended_low_bits(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """The extension of y's low m bits is y (less extended, or its low bits) where y is
    the extension of those bits: -O0's 32-bit value where opt truncated it, divided
    narrow, and extended back."""
    x, kind = t.arg(0), t.decl().kind()
    if not (z3.is_app_of(x, z3.Z3_OP_EXTRACT) and x.params()[1] == 0
            and _fits(x.arg(0), x.size(), kind)):
        return None
    return _resized(x.arg(0), t.size(), kind)


def _widened(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """An extended division is the division of the extended operands, zero-extended
    for an unsigned one and sign-extended for a signed one (opt narrows `udiv i32` of
    values it knows small to `div.u16`, `sdiv i32` to `div.s16` of `cvt.s8`): a
    remainder for every divisor; an unsigned quotient where the divisor is nonzero (by
    0 the narrow one is all ones, only its width's); a signed one where the divisor is
    not -1 or the dividend not the least (INT_MIN / -1 wraps in the narrow width only),
    and the dividend is wider than one bit (by 0 a negative one's quotient is 1, which
    is -1 in one bit: a review found it)."""
    k, x, kind = t.params()[0], t.arg(0), t.decl().kind()
    op = x.decl().kind() if z3.is_app(x) else None
    if op not in _DIVISIONS or _DIVISIONS[op][1] != kind:
        return None
    a, b = kids(x)
    if op == z3.Z3_OP_BUDIV and not nonzero(b) \
            or op == z3.Z3_OP_BSDIV and not (not_negative(b) and a.size() > 1
                                             or sign_bits(a) >= 2):
        return None
    extend = EXTENSIONS[kind]
    return _DIVISIONS[op][0](normal(extend(k, a)), normal(extend(k, b)))


def _nonnegative(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """A sign extension of a value whose sign bit is known zero is its zero extension."""
    return normal(z3.ZeroExt(t.params()[0], t.arg(0))) if not_negative(t.arg(0)) \
        else None


_BITWISE = {z3.Z3_OP_BAND: operator.and_, z3.Z3_OP_BOR: operator.or_,
            z3.Z3_OP_BXOR: operator.xor}


def _resized_bitwise(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """The zero extension (low bits) of an and/or/xor of a numeral and one value y is
    that operator of their extensions (low bits), where y's extension (low bits) is
    no extension (extract) again, as where y is a narrowed value extended back: the
    masks opt writes in the narrow width (`or.b16 %rs7, %rs6, 1`) meet -O0's in the
    wide one, and `0xffff & (1 | x)` stays one term whatever width reads it."""
    x = t.arg(0)
    if not (z3.is_app(x) and x.decl().kind() in _BITWISE and x.num_args() == 2) \
            or z3.is_app_of(t, z3.Z3_OP_EXTRACT) and t.params()[1] != 0:
        return None
    c, y = sorted(kids(x), key=lambda k: not z3.is_bv_value(k))
    if not z3.is_bv_value(c) or z3.is_bv_value(y):
        return None
    inner = normal(z3.ZeroExt(t.params()[0], y) if z3.is_app_of(t, z3.Z3_OP_ZERO_EXT)
                   else z3.Extract(t.params()[0], 0, y))  # the low bits (`_narrowed`'s)
    if z3.is_app(inner) and inner.decl().kind() in (*EXTENSIONS, z3.Z3_OP_EXTRACT):
        return None
    return normal(_BITWISE[x.decl().kind()](z3.BitVecVal(c.as_long(), t.size()), inner))


def _extract_of_extension(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """The low bits of an extended y: y's low bits, y, or y less extended."""
    (hi, lo), x = t.params(), t.arg(0)
    kind = x.decl().kind() if z3.is_app(x) else None
    if lo != 0 or kind not in EXTENSIONS:
        return None
    y = x.arg(0)
    if hi < y.size() - 1:
        return normal(z3.Extract(hi, 0, y))
    return y if hi == y.size() - 1 else normal(EXTENSIONS[kind](hi + 1 - y.size(), y))


def _extract_of_extract(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """Bits hi..lo of y's bits h..l are y's bits hi+l..lo+l."""
    (hi, lo), x = t.params(), t.arg(0)
    if not z3.is_app_of(x, z3.Z3_OP_EXTRACT):
        return None
    low = x.params()[1]
    return normal(z3.Extract(hi + low, lo + low, x.arg(0)))


def _narrowed(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """The low m bits of a division whose operands are extensions of their low m bits
    (zero extensions for an unsigned one, sign extensions for a signed one) are the
    division of those bits: by 0 too (all ones, the dividend; a signed quotient 1 or
    -1), and INT_MIN / -1, whose wide quotient 2^(m-1) has INT_MIN's low bits. Fewer
    low bits than m are those of that division (`cvt.u16.u32` of a 32-bit quotient,
    which the semantics writes over a 33-bit extension of it)."""
    (hi, lo), x = t.params(), t.arg(0)
    op = x.decl().kind() if z3.is_app(x) else None
    if lo != 0 or op not in _DIVISIONS:
        return None
    m = max(hi + 1, *(_least_fit(c, _DIVISIONS[op][1]) for c in kids(x)))
    if m >= x.size():
        return None
    narrow = _DIVISIONS[op][0](*(normal(z3.Extract(m - 1, 0, c)) for c in kids(x)))
    return narrow if m == hi + 1 else normal(z3.Extract(hi, 0, narrow))


def _least_fit(t: z3.BitVecRef, extension: int) -> int:
    """The least m where t is the zero (sign) extension of its low m bits (`_fits`)."""
    if extension == z3.Z3_OP_ZERO_EXT:
        return max(t.size() - leading_zeros(known_zeros(t), t.size()), 1)
    return t.size() - sign_bits(t) + 1


def _small_dividend(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """A division by a numeral c of a dividend known in [0, |c|) (its known zeros) is
    0, its remainder the dividend: `(x urem 3) sdiv 10`, which llc's sequences leave
    for the divider to bit-blast. (Below |c| <= 2^(w-1), a signed one's sign bit is 0.)"""
    a, c = kids(t)
    is_signed = t.decl().kind() in (z3.Z3_OP_BSDIV, z3.Z3_OP_BSREM)
    if not z3.is_bv_value(c):
        return None
    most = ~known_zeros(a) & ((1 << t.size()) - 1)  # the greatest value a may take
    if most >= (abs(signed(c.as_long(), t.size())) if is_signed else c.as_long()):
        return None
    return z3.BitVecVal(0, t.size()) if t.decl().kind() in (z3.Z3_OP_BUDIV, z3.Z3_OP_BSDIV) \
        else a


def _bounded_arm(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """ite(x < y, x urem d, e) is ite(x < y, x, e) where y is at most d (its known
    zeros): x is below d in that arm, and a quotient x udiv d is 0 there. opt drops
    such a remainder under the compare that bounds it (`x < p urem 7`)."""
    c, a, b = kids(t)
    if not (z3.is_app_of(c, z3.Z3_OP_ULT) and z3.is_app(a) and a.num_args() == 2
            and a.decl().kind() in (z3.Z3_OP_BUREM, z3.Z3_OP_BUDIV)
            and z3.is_bv_value(a.arg(1)) and a.arg(0).eq(c.arg(0))):
        return None
    if ~known_zeros(c.arg(1)) & ((1 << a.size()) - 1) > a.arg(1).as_long():
        return None
    below = a.arg(0) if z3.is_app_of(a, z3.Z3_OP_BUREM) else z3.BitVecVal(0, a.size())
    return normal(z3.If(c, below, b))


_UNSIGNED = {z3.Z3_OP_BSDIV: z3.UDiv, z3.Z3_OP_BSREM: z3.URem}


def _not_negative_operands(t: z3.BitVecRef) -> z3.BitVecRef | None:
    """A signed division of two values not negative (their sign bits known zero) is
    the unsigned one (by 0 too: all ones, the dividend): opt's `urem` for an `srem` it
    knows so; of a dividend not negative by a negative numeral, minus the unsigned
    quotient by its magnitude (the remainder that by it)."""
    a, b = kids(t)
    if not not_negative(a):
        return None
    if not_negative(b):
        return normal(_UNSIGNED[t.decl().kind()](a, b))
    if not z3.is_bv_value(b):
        return None
    # b a negative numeral: truncated toward zero, a's quotient by b is minus that by
    # |b| (-b's bits, 2^(w-1) for the least b), its remainder a's sign, that by |b|:
    # -O0's `(x udiv 7) sdiv -100`, opt's `-(x udiv 700)`
    by = _UNSIGNED[t.decl().kind()](a, normal(-b))
    return normal(-normal(by)) if z3.is_app_of(t, z3.Z3_OP_BSDIV) else normal(by)


RULES: dict[int, tuple[Callable[[z3.ExprRef], z3.ExprRef | None], ...]] = {
    z3.Z3_OP_EXTRACT: (_full_extract, _extract_of_extract, _extract_of_extension, _narrowed,
                       _resized_bitwise),
    z3.Z3_OP_ZERO_EXT: (_extended_low_bits, _widened, _resized_bitwise),
    z3.Z3_OP_SIGN_EXT: (_extended_low_bits, _widened, _nonnegative),
    z3.Z3_OP_FPA_GT: (_greater,),
    z3.Z3_OP_FPA_GE: (_greater,),
    **dict.fromkeys(float_facts.SIGN_BLIND - {z3.Z3_OP_FPA_GT, z3.Z3_OP_FPA_GE}, (_sign_blind,)),
    z3.Z3_OP_NOT: (_not_not,),
    **dict.fromkeys(_STRICT, (_less,)),
    z3.Z3_OP_ITE: (_ite_known, _ite_of_not, _sorted_pair, _bounded_arm, _nan_poisoned,
                   _flushed_twice),
    z3.Z3_OP_AND: (_connective, _bits_nan_test),
    z3.Z3_OP_FPA_IS_NAN: (_nan_of_constant,),
    z3.Z3_OP_FPA_TO_FP: (_sign_operation, _float_of_result, _nan_poisoned),
    z3.Z3_OP_FPA_ADD: (_self_difference, _added_negation, _nan_poisoned, _identity_arm,
                       _ordered),
    z3.Z3_OP_FPA_MUL: (_nan_poisoned, _identity_arm, _ordered),
    z3.Z3_OP_FPA_SUB: (_self_difference, _added_negation, _nan_poisoned, _identity_arm),
    **dict.fromkeys(set(float_facts.POISON) - {z3.Z3_OP_ITE, z3.Z3_OP_FPA_TO_FP, z3.Z3_OP_FPA_ADD,
                                               z3.Z3_OP_FPA_MUL, z3.Z3_OP_FPA_SUB},
                    (_nan_poisoned,)),
    z3.Z3_OP_OR: (_connective,),
    z3.Z3_OP_EQ: (_zero_test, _select_test),
    z3.Z3_OP_DISTINCT: (_select_test,),
    z3.Z3_OP_ULT: (_sign_test,),
    z3.Z3_OP_BADD: (_sum,),
    z3.Z3_OP_BSUB: (_sum,),
    z3.Z3_OP_BNEG: (_linear,),
    z3.Z3_OP_BMUL: (_linear,),
    z3.Z3_OP_BSHL: (_shifted_constant, _linear),
    z3.Z3_OP_BAND: (_bitwise,),
    z3.Z3_OP_BOR: (_disjoint, _bitwise),
    z3.Z3_OP_BXOR: (_bitwise,),
    z3.Z3_OP_BUDIV: (_small_dividend, *division.RULES[z3.Z3_OP_BUDIV]),
    z3.Z3_OP_BLSHR: division.RULES[z3.Z3_OP_BLSHR],
    z3.Z3_OP_BUREM: (_small_dividend,),
    **{op: (_small_dividend, *division.RULES[op], _not_negative_operands) for op in _UNSIGNED},
}


# `normal` of each term met, by AST id: the rules read a term's subterms again and
# again (`_float_of_result`'s arms, `sign_free`, `poisoned_tests`' rebuilt terms)
_NORMAL = float_facts.Memo()


def normal(t: z3.ExprRef) -> z3.ExprRef:
    """t with the first rule for its root operator that matches applied (folding
    constants, for every operator, first)."""
    return _NORMAL.get(t.get_id(), t, lambda: _first_rule(t))


def _first_rule(t: z3.ExprRef) -> z3.ExprRef:
    for rule in (_fold, *RULES.get(t.decl().kind(), ())) if z3.is_app(t) else ():
        out = rule(t)
        if out is not None:
            return out
    return t
