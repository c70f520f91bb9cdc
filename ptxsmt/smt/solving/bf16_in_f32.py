"""A query's bf16 terms written in f32, for a solver that reads no bf16 (bitwuzla's
pip build refuses `(_ FloatingPoint 8 8)` as "experimental").

bf16 and f32 share one exponent range: every bf16 value is the f32 whose low 16
fraction bits are zero (subnormals, infinities and the NaN included), and that f32 is
what each bf16 term becomes. Each bf16 operation becomes f32 operations followed by
an explicit rounding to bf16 written on the f32's bits (`RULES`, by z3 operator):
- a view of bits, `(_ to_fp 8 8) b`, is `(_ to_fp 8 24) (concat b #x0000)`;
- +, -, *, / and sqrt are the f32 operation rounded to bf16 by the same mode: to
  nearest, rounding to 24 bits and then to 8 is rounding once (24 >= 2*8 + 2: Figueroa,
  "When is double rounding innocuous?", 1995), and in one direction twice is once;
- fma is not so (1 + 2^-8 + 2^-100 rounds to 1 + 2^-8 in f32, a tie in bf16): its f32
  result is rounded to odd first (toward zero, the last bit set where inexact), which
  keeps the information a second rounding needs (24 >= 8 + 2: Boldo and Melquiond,
  "Emulation of FMA and correctly rounded sums", 2008); "inexact" is the f32 fma
  rounded down and up differing;
- a conversion to bf16 from f32 (or a format f32 holds) is that rounding; from a wider
  format (f64) it goes through f32 rounded to odd, as fma does; a widening one, a
  comparison, a classification, negation, absolute value, `=` and `ite` are exact on
  the f32 (`=` on bits, below);
- a bf16 constant (a sweep's cut) is 16 fresh bits' view;
- `=` of two bf16 values whose bits the translation knows where they are no NaN (a
  rounding's cut, a view's bits, negation and absolute value on them: `known`) is
  written on those bits: both NaNs, or neither and the same bits. The definition of an
  exported `fp.to_ieee_bv`'s bits is such an `=`; bitwuzla then compares 16 bits where
  it unpacked two f32s.
The rounding reads the f32's bits, which standard SMT-LIB gives only as a fresh
bit-vector `b` with `(= ((_ to_fp 8 24) b) x)` (as `smt2.standard` writes
`fp.to_ieee_bv`); a NaN keeps its NaN. A term no rule covers leaves the query as it
was (`in_f32` answers None): the solver is then not asked. The translation keeps
every Bool and bit-vector constant of the query with its name and sort, so a model's
values are the query's, and they are replayed through the evaluator as any other
solver's. tests/test_bf16_in_f32.py checks each rule against exact rationals under
every rounding mode and proves the rounding; scripts/prove_bf16_in_f32.py proves each
rule against z3's own bf16 operation.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import z3

from .smt2 import logic, standard

BF16, F32 = z3.FPSort(8, 8), z3.FPSort(8, 24)
PAD = F32.sbits() - BF16.sbits()  # the f32 fraction bits below a bf16's
LOW = (1 << PAD) - 1


class _NoRule(Exception):
    """A bf16 term that no rule translates."""


def _bf16(t: z3.ExprRef) -> bool:
    return t.sort() == BF16


def in_f32(assertions: Sequence[z3.BoolRef]) -> list[z3.BoolRef] | None:
    """The assertions with every bf16 term written in f32 (module docstring), with the
    definitions of the bits the roundings read; None where some bf16 term has no rule
    (or the query is quantified)."""
    translation = _Translation()
    try:
        out = [translation.term(a) for a in assertions]
    except _NoRule:
        return None
    return [*translation.definitions, *out]


def rounded(rm: z3.FPRMRef, x: z3.FPRef, bits: z3.BitVecRef) -> z3.FPRef:
    """The f32 `x` (whose bits are `bits`) rounded to bf16 by `rm`: its magnitude plus
    the mode's increment (`INCREMENTS`), cut to a multiple of 2^16; a carry out of the
    fraction raises the exponent, and out of the largest finite value makes infinity,
    as IEEE rounding does. NaN stays NaN."""
    return z3.If(z3.fpIsNaN(x), x, _widened(rounded_bits(rm, bits)))


def rounded_bits(rm: z3.FPRMRef, bits: z3.BitVecRef) -> z3.BitVecRef:
    """The bf16 bits of the f32 whose bits are `bits` rounded by `rm` (where it is no
    NaN; `rounded`)."""
    sign, magnitude = z3.Extract(31, 31, bits), z3.Extract(30, 0, bits)
    up = magnitude + INCREMENTS[rm.decl().kind()](sign == 1, magnitude)
    return z3.Concat(sign, z3.Extract(30, PAD, up))


def _to_nearest_even(negative, magnitude):
    return z3.BitVecVal(LOW >> 1, 31) + z3.ZeroExt(30, z3.Extract(PAD, PAD, magnitude))


_ZERO, _ALL = z3.BitVecVal(0, 31), z3.BitVecVal(LOW, 31)
# what each rounding mode adds to an f32's magnitude before its low 16 bits are cut
INCREMENTS: dict[int, Callable[[z3.BoolRef, z3.BitVecRef], z3.BitVecRef]] = {
    z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN: _to_nearest_even,
    z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_AWAY: lambda negative, m: z3.BitVecVal(1 << PAD - 1, 31),
    z3.Z3_OP_FPA_RM_TOWARD_ZERO: lambda negative, m: _ZERO,
    z3.Z3_OP_FPA_RM_TOWARD_POSITIVE: lambda negative, m: z3.If(negative, _ZERO, _ALL),
    z3.Z3_OP_FPA_RM_TOWARD_NEGATIVE: lambda negative, m: z3.If(negative, _ALL, _ZERO),
}


class _Translation:
    """One query's translation: each term once (by id), and the definitions of the
    fresh bits the roundings read."""

    def __init__(self) -> None:
        self.done: dict[int, z3.ExprRef] = {}
        self.kept: list[z3.ExprRef] = []  # the originals, so that their ids stay theirs
        self.definitions: list[z3.BoolRef] = []
        self.named: dict[int, z3.BitVecRef] = {}  # an f32's id -> its bits
        # a translated bf16 term's id -> its 16 bits wherever it is no NaN (`known`)
        self.ieee: dict[int, z3.BitVecRef] = {}

    def term(self, root: z3.ExprRef) -> z3.ExprRef:
        todo = [root]
        while todo:
            t = todo[-1]
            if t.get_id() in self.done:
                todo.pop()
                continue
            if z3.is_quantifier(t) or z3.is_var(t):
                raise _NoRule
            waiting = [c for c in t.children() if c.get_id() not in self.done]
            if waiting:
                todo.extend(waiting)
                continue
            todo.pop()
            self.kept.append(t)
            self.done[t.get_id()] = self._one(t, [self.done[c.get_id()] for c in t.children()])
        return self.done[root.get_id()]

    def _one(self, t: z3.ExprRef, kids: list[z3.ExprRef]) -> z3.ExprRef:
        if not (_bf16(t) or any(_bf16(c) for c in t.children())):
            if all(k.eq(c) for k, c in zip(kids, t.children())):
                return t
            return t.decl()(*kids)
        rule = RULES.get(t.decl().kind())
        if rule is None:
            raise _NoRule
        return rule(self, t, kids)

    def bits(self, x: z3.FPRef) -> z3.BitVecRef:
        """Fresh bits `b` defined as those of the f32 `x` (any NaN's where x is NaN),
        one for each f32 term, so that equal terms round alike."""
        if x.get_id() not in self.named:
            self.kept.append(x)
            self.named[x.get_id()] = b = z3.BitVec(f"bf16_in_f32!{len(self.definitions)}", 32)
            self.definitions.append(z3.fpBVToFP(b, F32) == x)
        return self.named[x.get_id()]

    def round(self, rm: z3.FPRMRef, x: z3.FPRef) -> z3.FPRef:
        if rm.decl().kind() not in INCREMENTS:
            raise _NoRule  # a rounding mode that is a term, not a constant
        bits = self.bits(x)
        return self.knowing(rounded(rm, x, bits), rounded_bits(rm, bits))

    def knowing(self, x: z3.FPRef, bits: z3.BitVecRef) -> z3.FPRef:
        """`x`, a bf16 value in f32, noted to be the bf16 `bits` wherever it is no NaN."""
        self.kept.append(x)
        self.ieee[x.get_id()] = bits
        return x

    def known(self, x: z3.FPRef) -> z3.BitVecRef | None:
        """The bf16 bits of the translated `x` wherever it is no NaN, where a rule
        gave them (a rounding's result, a view of bits, a negation...); else None."""
        return self.ieee.get(x.get_id())

    def odd(self, x: z3.FPRef, exact: z3.BoolRef) -> z3.FPRef:
        """The f32 `x`, a value rounded toward zero, rounded to odd: its last bit set
        where it is not `exact` (what the second rounding needs to see)."""
        return z3.If(exact, x, z3.fpBVToFP(self.bits(x) | 1, F32))

    def fma(self, rm: z3.FPRMRef, a: z3.FPRef, b: z3.FPRef, c: z3.FPRef) -> z3.FPRef:
        """a*b + c rounded to bf16: in f32 by `rm` where exact, else to odd (inexact:
        the f32 fma rounded down and up differ, and toward zero is the smaller)."""
        down, up = z3.fpFMA(z3.RTN(), a, b, c), z3.fpFMA(z3.RTP(), a, b, c)
        toward_zero = z3.If(z3.fpIsNegative(up), up, down)
        exact = z3.fpEQ(down, up)
        return self.round(rm, z3.If(exact, z3.fpFMA(rm, a, b, c), self.odd(toward_zero, exact)))

    def narrowed(self, rm: z3.FPRMRef, x: z3.FPRef) -> z3.FPRef:
        """A float of any format rounded to bf16: a format f32 holds is widened exactly
        and rounded once; a wider one goes through f32 rounded to odd."""
        e, m = x.sort().ebits(), x.sort().sbits()
        if e <= F32.ebits() and m <= F32.sbits():
            return self.round(rm, x if x.sort() == F32 else z3.fpToFP(rm, x, F32))
        toward_zero = z3.fpToFP(z3.RTZ(), x, F32)
        exact = z3.fpEQ(z3.fpToFP(z3.RNE(), toward_zero, x.sort()), x)
        return self.round(rm, self.odd(toward_zero, exact))


def _widened(bits: z3.BitVecRef) -> z3.FPRef:
    """The f32 that holds the bf16 whose bits are `bits`."""
    return z3.fpBVToFP(z3.Concat(bits, z3.BitVecVal(0, PAD)), F32)


def _view(tr: _Translation, t, kids):
    """(_ to_fp 8 8) of 16 bits; a conversion to bf16 (rounding) or from it (exact)."""
    if len(kids) == 1 and z3.is_bv(kids[0]):
        return tr.knowing(_widened(kids[0]), kids[0])
    if len(kids) != 2 or not z3.is_fp(kids[1]):
        raise _NoRule  # from an integer or a real
    rm, x = kids
    if _bf16(t):
        return x if _bf16(t.arg(1)) else tr.narrowed(rm, x)
    return x if t.sort() == F32 else z3.fpToFP(rm, x, t.sort())  # x is exact


def _constant(tr: _Translation, t, kids):
    if kids or t.decl().kind() != z3.Z3_OP_UNINTERPRETED:
        raise _NoRule
    bits = z3.BitVec(f"{t.decl().name()}!bf16", BF16.ebits() + BF16.sbits())
    return tr.knowing(_widened(bits), bits)


def _numeral(tr: _Translation, t, kids):
    wide = z3.simplify(z3.fpToFP(z3.RNE(), t, F32))  # exact: any bf16 value is an f32
    if z3.is_true(z3.simplify(z3.fpIsNaN(t))):
        return wide
    return tr.knowing(wide, z3.simplify(z3.Extract(31, PAD, z3.fpToIEEEBV(wide))))


def _then_rounded(op, commuting: bool = False):
    """The f32 operation rounded to bf16; the operands of one that commutes in a fixed
    order (by z3's structural hash), so that a*b and b*a are one term."""
    def rule(tr, t, kids):
        rm, *operands = kids
        return tr.round(rm, op(rm, *(_ordered(operands) if commuting else operands)))
    return rule


def _ordered(operands: list[z3.FPRef]) -> list[z3.FPRef]:
    return sorted(operands, key=lambda x: x.hash())


def _exact(op):
    return lambda tr, t, kids: op(*kids)


SIGN = 1 << (BF16.ebits() + BF16.sbits() - 1)
# the bits of an exact operation's result, from its operands' (where none is a NaN)
KNOWN_BITS: dict[int, Callable[..., z3.BitVecRef]] = {
    z3.Z3_OP_FPA_NEG: lambda bits: bits ^ SIGN,
    z3.Z3_OP_FPA_ABS: lambda bits: bits & (SIGN - 1),
    z3.Z3_OP_ITE: lambda c, a, b: z3.If(c, a, b),
}


def _exact_knowing(op):
    """An exact operation (negation, absolute value, `ite`), its result's bits known
    where its bf16 operands' are."""
    def rule(tr, t, kids):
        out = op(*kids)
        if not _bf16(t):
            return out
        bits = [k if not z3.is_fp(k) else tr.known(k) for k in kids]
        if any(b is None for b in bits):
            return out
        return tr.knowing(out, KNOWN_BITS[t.decl().kind()](*bits))
    return rule


def _equal(tr, t, kids):
    """SMT-LIB's `=` of two bf16 values (every NaN one value, +0 not -0) on their bits
    where both are known: both NaNs, or neither and the same bits (a float that is no
    NaN has one encoding). bitwuzla compares 16 bits instead of two unpacked f32s (a
    definition of a rounding's bits, `smt2.standard`'s, is one such `=`)."""
    a, b = kids
    if not (_bf16(t.arg(0)) and (x := tr.known(a)) is not None and (y := tr.known(b)) is not None):
        return a == b
    return z3.If(z3.fpIsNaN(a), z3.fpIsNaN(b), z3.And(z3.Not(z3.fpIsNaN(b)), x == y))


RULES: dict[int, Callable[[_Translation, z3.ExprRef, list[z3.ExprRef]], z3.ExprRef]] = {
    z3.Z3_OP_FPA_TO_FP: _view,
    z3.Z3_OP_UNINTERPRETED: _constant,
    **{k: _numeral for k in (z3.Z3_OP_FPA_NUM, z3.Z3_OP_FPA_PLUS_ZERO, z3.Z3_OP_FPA_MINUS_ZERO,
                             z3.Z3_OP_FPA_PLUS_INF, z3.Z3_OP_FPA_MINUS_INF, z3.Z3_OP_FPA_NAN)},
    z3.Z3_OP_FPA_ADD: _then_rounded(z3.fpAdd, commuting=True),
    z3.Z3_OP_FPA_SUB: _then_rounded(z3.fpSub),
    z3.Z3_OP_FPA_MUL: _then_rounded(z3.fpMul, commuting=True),
    z3.Z3_OP_FPA_DIV: _then_rounded(z3.fpDiv),
    z3.Z3_OP_FPA_SQRT: _then_rounded(z3.fpSqrt),
    z3.Z3_OP_FPA_FMA: lambda tr, t, kids: tr.fma(kids[0], *_ordered(kids[1:3]), kids[3]),
    z3.Z3_OP_FPA_NEG: _exact_knowing(z3.fpNeg),
    z3.Z3_OP_FPA_ABS: _exact_knowing(z3.fpAbs),
    z3.Z3_OP_FPA_EQ: _exact(z3.fpEQ),
    z3.Z3_OP_FPA_LT: _exact(z3.fpLT),
    z3.Z3_OP_FPA_LE: _exact(z3.fpLEQ),
    z3.Z3_OP_FPA_GT: _exact(z3.fpGT),
    z3.Z3_OP_FPA_GE: _exact(z3.fpGEQ),
    z3.Z3_OP_FPA_IS_NAN: _exact(z3.fpIsNaN),
    z3.Z3_OP_FPA_IS_INF: _exact(z3.fpIsInf),
    z3.Z3_OP_FPA_IS_ZERO: _exact(z3.fpIsZero),
    z3.Z3_OP_FPA_IS_NORMAL: _exact(z3.fpIsNormal),
    z3.Z3_OP_FPA_IS_SUBNORMAL: _exact(z3.fpIsSubnormal),
    z3.Z3_OP_FPA_IS_NEGATIVE: _exact(z3.fpIsNegative),
    z3.Z3_OP_FPA_IS_POSITIVE: _exact(z3.fpIsPositive),
    z3.Z3_OP_EQ: _equal,
    z3.Z3_OP_DISTINCT: lambda tr, t, kids: z3.Not(_equal(tr, t, kids)) if len(kids) == 2
    else z3.Distinct(*kids),
    z3.Z3_OP_ITE: _exact_knowing(z3.If),
}


def text(assertions: Sequence[z3.BoolRef]) -> str | None:
    """The query as standard SMT-LIB (`smt2.script`, less its check-sat) with its bf16
    terms written in f32; None where some bf16 term has no rule. Printed by z3 from the
    terms `smt2.standard` made, which need no second pass; as one conjunction, as
    `smt2.script` writes it (z3 shares a subterm by `let` within one assertion only)."""
    translated = in_f32(standard(assertions))
    if translated is None:
        return None
    printer = z3.Solver()
    printer.add(z3.And(translated) if len(translated) > 1 else translated[0])
    return f"(set-logic {logic(assertions)})\n{printer.to_smt2()}".removesuffix("(check-sat)\n")
