"""The bits of a bit-vector term known before any input is: known zeros and ones, and
how many top bits are known copies of the sign bit, read a few levels down the term
(KNOWN_DEPTH: the patterns opt's known-bits analysis sees are near the operator it
rewrites). The local rewrites (`rewrite.py`) and the division read-back
(`division.py`) rest on them: each is a fact for every value of the term's free
constants (tests/test_rewrite.py proves them on random terms). And each node's unsigned
range through a whole DAG (`Ranges`), which bounds the values a division read back is
proved over (tests/test_known.py checks each row against plain Python).
"""

from __future__ import annotations

import functools
import math
import operator
from collections.abc import Callable, Sequence

import z3

from ...terms.ops import signed
from .simulate import evaluate_node

KNOWN_DEPTH = 6  # how far below a term the known bits are read (llc's guard of a
# divisor, `(d | 1) & 0xffff`, lies five levels below the mask opt drops for it)

# Per call: each subterm's reading (known zeros, ones or sign bits) by its AST id (the
# term holds its subterms, so an id is theirs for the call), with the depth it was read
# to: a DAG's shared subterms are read once, not once per path to them.
_Memo = dict[tuple[Callable, int], tuple[int, int]]


def _read(reading: Callable[[z3.BitVecRef, int, _Memo], int], t: z3.BitVecRef, depth: int,
          memo: _Memo) -> int:
    key = reading, t.get_id()
    if (hit := memo.get(key)) is not None and hit[0] >= depth:
        return hit[1]
    out = reading(t, depth, memo)
    memo[key] = depth, out
    return out


def known_zeros(t: z3.BitVecRef, depth: int = KNOWN_DEPTH) -> int:
    """Bits of t known to be zero, as a mask (a few levels down only: the patterns
    opt's known-bits analysis sees are near the operator it rewrites)."""
    return _read(_zeros, t, depth, {})


def _zeros(t: z3.BitVecRef, depth: int, memo: _Memo) -> int:
    width = t.size()
    ones = (1 << width) - 1
    if z3.is_bv_value(t):
        return ~t.as_long() & ones
    if depth == 0 or not z3.is_app(t):
        return 0
    kind, kids = t.decl().kind(), t.children()
    if kind == z3.Z3_OP_ITE:
        kind, kids = z3.Z3_OP_BOR, kids[1:]  # zero in both arms, as in an or
    below = [_read(_zeros, c, depth - 1, memo) for c in kids] if kind in _KNOWN else []
    if kind == z3.Z3_OP_BAND:
        return functools.reduce(operator.or_, below)
    if kind in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
        return functools.reduce(operator.and_, below)
    if kind == z3.Z3_OP_BMUL:  # trailing zeros add up; values below 2^a and 2^b
        # multiply to one below 2^(a+b)
        low = ones >> (width - min(sum(trailing_zeros(z) for z in below), width))
        top = sum(width - leading_zeros(z, width) for z in below)
        return low | (ones ^ (ones >> (width - top)) if top < width else 0)
    if kind in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR) and z3.is_bv_value(kids[1]):
        k = min(kids[1].as_long(), width)
        if kind == z3.Z3_OP_BSHL:
            return (below[0] << k | ones >> (width - k)) & ones
        return ones << (width - k) & ones | below[0] >> k
    if kind in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM):
        nonzero_divisor = _read(_ones, kids[1], KNOWN_DEPTH, memo) != 0
        return _divided_zeros(kind, kids, below, width, nonzero_divisor)
    if kind == z3.Z3_OP_ZERO_EXT:
        return ones ^ (ones >> (width - kids[0].size())) | below[0]
    if kind == z3.Z3_OP_EXTRACT and t.params()[1] == 0:
        return below[0] & ones
    if kind == z3.Z3_OP_BADD:  # a sum of values below 2^k is below 2^(k + log2(n))
        top = max(width - leading_zeros(z, width) for z in below) + (len(kids) - 1).bit_length()
        return ones ^ (ones >> max(width - top, 0)) if top < width else 0
    return 0


def _divided_zeros(kind: int, kids: list, below: list[int], width: int,
                   nonzero_divisor: bool) -> int:
    """The high zeros of an unsigned division: by a nonzero divisor, a quotient is no
    larger than its dividend (by 0 it is all ones) and a remainder below its divisor
    too; a remainder is no larger than its dividend always (by 0 it is the dividend)."""
    ones = (1 << width) - 1
    lead = 0 if kind == z3.Z3_OP_BUDIV and not nonzero_divisor else \
        leading_zeros(below[0], width)
    if kind == z3.Z3_OP_BUDIV and z3.is_bv_value(kids[1]) and kids[1].as_long() > 1:
        most = ones >> leading_zeros(below[0], width)  # the greatest dividend
        lead = max(lead, width - (most // kids[1].as_long()).bit_length())
    if kind == z3.Z3_OP_BUREM and nonzero_divisor:
        lead = max(lead, leading_zeros(below[1], width))
    return ones ^ (ones >> lead)


_KNOWN = {z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR, z3.Z3_OP_BMUL, z3.Z3_OP_BSHL,
          z3.Z3_OP_BLSHR, z3.Z3_OP_BADD, z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM, z3.Z3_OP_ZERO_EXT,
          z3.Z3_OP_EXTRACT}


def trailing_zeros(zeros: int) -> int:
    """How many of the lowest bits a mask of known zeros holds."""
    return (~zeros & (zeros + 1)).bit_length() - 1


def leading_zeros(zeros: int, width: int) -> int:
    """How many of the highest bits a mask of known zeros holds."""
    return width - (~zeros & ((1 << width) - 1)).bit_length()


def sign_bits(t: z3.BitVecRef, depth: int = KNOWN_DEPTH) -> int:
    """How many of t's highest bits are known copies of its sign bit (1 at least): a
    value of w bits with s of them is the sign extension of its low w - s + 1 bits
    (LLVM's ComputeNumSignBits; known zeros on top count too)."""
    return _read(_signs, t, depth, {})


def _signs(t: z3.BitVecRef, depth: int, memo: _Memo) -> int:
    width = t.size()
    if z3.is_bv_value(t):
        v = signed(t.as_long(), width)
        return width - (v if v >= 0 else ~v).bit_length()
    lead = max(leading_zeros(_read(_zeros, t, depth, memo), width), 1)
    if depth == 0 or not z3.is_app(t) or t.decl().kind() not in _SIGNS:
        return lead
    kind, kids = t.decl().kind(), t.children()
    if kind == z3.Z3_OP_ITE:
        kind, kids = z3.Z3_OP_BOR, kids[1:]  # both arms, as in an or
    below = [_read(_signs, c, depth - 1, memo) for c in kids]
    if kind == z3.Z3_OP_SIGN_EXT:
        return max(lead, below[0] + t.params()[0])
    if kind == z3.Z3_OP_EXTRACT:
        return max(lead, below[0] - (kids[0].size() - width)) if t.params()[1] == 0 else lead
    if kind == z3.Z3_OP_BSREM:  # the dividend's sign, |r| <= |a|, and |r| < |b| for b != 0
        b = signed(kids[1].as_long(), width) if z3.is_bv_value(kids[1]) else 0
        return max(lead, below[0], width - (abs(b) - 1).bit_length() if b else 1)
    if kind == z3.Z3_OP_BMUL:  # values of k1 and k2 signed bits multiply to one of
        # k1 + k2 (the greatest, (-2^(k1-1)) * (-2^(k2-1)), needs them all)
        bits = sum(width - s + 1 for s in below)
        return max(lead, width - bits + 1)
    if kind in (z3.Z3_OP_BADD, z3.Z3_OP_BSUB):  # n values in [-2^k, 2^k): their sum or
        # difference in [-n 2^k, n 2^k]
        return max(lead, min(below) - (len(kids) - 1).bit_length())
    if kind == z3.Z3_OP_BSDIV:  # between a and -a, and by 0 1 or -1 (two bits); -a
        # needs one bit more where a is its range's least (by -1: the divisor's top bit)
        whole = _read(_zeros, kids[1], KNOWN_DEPTH, memo) >> (width - 1) == 1
        return max(lead, min(below[0] - (not whole), width - 1))
    return max(lead, min(below))  # and, or, xor: bit by bit


_SIGNS = {z3.Z3_OP_SIGN_EXT, z3.Z3_OP_EXTRACT, z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR,
          z3.Z3_OP_ITE, z3.Z3_OP_BSREM, z3.Z3_OP_BSDIV, z3.Z3_OP_BADD, z3.Z3_OP_BSUB,
          z3.Z3_OP_BMUL}


def not_negative(t: z3.BitVecRef) -> bool:
    """t's sign bit is known zero: t is not negative."""
    return known_zeros(t) >> (t.size() - 1) == 1


def known_ones(t: z3.BitVecRef, depth: int = KNOWN_DEPTH) -> int:
    """Bits of t known to be one, as a mask: a numeral's, an or's of any operand, an
    and's of every operand (`0xffff & (x | 1)` is odd), an extension's or extract's
    of its operand's."""
    return _read(_ones, t, depth, {})


def _ones(t: z3.BitVecRef, depth: int, memo: _Memo) -> int:
    if z3.is_bv_value(t):
        return t.as_long()
    if depth == 0 or not z3.is_app(t):
        return 0
    if t.decl().kind() in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT, z3.Z3_OP_EXTRACT):
        low = t.params()[1] if z3.is_app_of(t, z3.Z3_OP_EXTRACT) else 0
        return _read(_ones, t.arg(0), depth - 1, memo) >> low & ((1 << t.size()) - 1)
    if not (z3.is_app_of(t, z3.Z3_OP_BOR) or z3.is_app_of(t, z3.Z3_OP_BAND)):
        return 0
    below = [_read(_ones, c, depth - 1, memo) for c in t.children()]
    return functools.reduce(operator.or_ if z3.is_app_of(t, z3.Z3_OP_BOR) else operator.and_,
                            below)


def nonzero(t: z3.BitVecRef) -> bool:
    """t is not 0 for any input: some bit of it is known one."""
    return known_ones(t) != 0


# Unsigned ranges: bounds [lo, hi] on a node's unsigned value for every input, read
# through a whole DAG (`Ranges`), where llc's own bounds come from: a select of
# bounded arms, a min or max (`ite(a <u b, a, b)`), an arm a compare bounds, masks,
# extensions, sums and products that do not wrap, divisions. Each row: the operator's
# range given its operands' (`r`), its width `w`, its parameters `p` and its first
# operand's width `kw`; (0, 2^w - 1) where it does not say (tests/test_known.py checks
# each row against every value of 4-bit operands).
Range = tuple[int, int]


def _full(w: int) -> Range:
    return 0, (1 << w) - 1


def _fits_or_full(lo: int, hi: int, w: int) -> Range:
    return (lo, hi) if lo >= 0 and hi < 1 << w else _full(w)


def _below_power(hi: int) -> int:
    """The greatest value of as many bits as hi: what an or or xor of values up to hi
    reaches."""
    return (1 << hi.bit_length()) - 1


def _quotient_range(a: Range, b: Range, w: int) -> Range:
    return (a[0] // b[1], a[1] // b[0]) if b[0] else _full(w)  # by 0: all ones


def _remainder_range(a: Range, b: Range, w: int) -> Range:
    return 0, min(a[1], b[1] - 1) if b[0] else a[1]  # by 0: the dividend


def _shifted(a: Range, k: Range, w: int, right: bool) -> Range:
    if k[0] != k[1]:
        return (0, a[1]) if right else _full(w)
    s = min(k[0], w)
    return (a[0] >> s, a[1] >> s) if right else _fits_or_full(a[0] << s, a[1] << s, w)


def _not_negative_ranges(r: list[Range], w: int) -> bool:
    return all(hi < 1 << (w - 1) for _, hi in r)


RANGES: dict[int, Callable[[tuple, list[Range], int, int], Range]] = {
    z3.Z3_OP_BAND: lambda p, r, w, kw: (0, min(hi for _, hi in r)),
    z3.Z3_OP_BOR: lambda p, r, w, kw: (max(lo for lo, _ in r),
                                       min(_below_power(max(hi for _, hi in r)),
                                           sum(hi for _, hi in r))),
    z3.Z3_OP_BXOR: lambda p, r, w, kw: (0, _below_power(max(hi for _, hi in r))),
    z3.Z3_OP_BNOT: lambda p, r, w, kw: ((1 << w) - 1 - r[0][1], (1 << w) - 1 - r[0][0]),
    z3.Z3_OP_BADD: lambda p, r, w, kw: _fits_or_full(sum(lo for lo, _ in r),
                                                     sum(hi for _, hi in r), w),
    z3.Z3_OP_BSUB: lambda p, r, w, kw: _fits_or_full(r[0][0] - sum(hi for _, hi in r[1:]),
                                                     r[0][1] - sum(lo for lo, _ in r[1:]), w),
    z3.Z3_OP_BMUL: lambda p, r, w, kw: _fits_or_full(math.prod(lo for lo, _ in r),
                                                     math.prod(hi for _, hi in r), w),
    z3.Z3_OP_BSHL: lambda p, r, w, kw: _shifted(r[0], r[1], w, False),
    z3.Z3_OP_BLSHR: lambda p, r, w, kw: _shifted(r[0], r[1], w, True),
    z3.Z3_OP_BASHR: lambda p, r, w, kw: _shifted(r[0], r[1], w, True)
    if _not_negative_ranges(r[:1], w) else _full(w),
    z3.Z3_OP_BUDIV: lambda p, r, w, kw: _quotient_range(r[0], r[1], w),
    z3.Z3_OP_BUREM: lambda p, r, w, kw: _remainder_range(r[0], r[1], w),
    # a signed division of values not negative is the unsigned one; a remainder takes
    # its dividend's sign and is no larger than it
    z3.Z3_OP_BSDIV: lambda p, r, w, kw: _quotient_range(r[0], r[1], w)
    if _not_negative_ranges(r, w) else _full(w),
    z3.Z3_OP_BSREM: lambda p, r, w, kw: (_remainder_range(r[0], r[1], w)
                                         if _not_negative_ranges(r[1:], w) else (0, r[0][1]))
    if _not_negative_ranges(r[:1], w) else _full(w),
    z3.Z3_OP_ZERO_EXT: lambda p, r, w, kw: r[0],
    z3.Z3_OP_SIGN_EXT: lambda p, r, w, kw: r[0] if _not_negative_ranges(r, kw) else _full(w),
    z3.Z3_OP_EXTRACT: lambda p, r, w, kw: _fits_or_full(r[0][0] >> p[1], r[0][1] >> p[1], w),
    z3.Z3_OP_CONCAT: lambda p, r, w, kw: (r[0][0] << (w - kw) | r[1][0],
                                          r[0][1] << (w - kw) | r[1][1])
    if len(r) == 2 else _full(w),
}

# a compare's operator as (unsigned less-than, or-equal, signed): `p op q`
_COMPARES = {z3.Z3_OP_ULT: (False, False), z3.Z3_OP_ULEQ: (True, False),
             z3.Z3_OP_SLT: (False, True), z3.Z3_OP_SLEQ: (True, True)}
_REVERSED = {z3.Z3_OP_UGT: z3.Z3_OP_ULT, z3.Z3_OP_UGEQ: z3.Z3_OP_ULEQ,
             z3.Z3_OP_SGT: z3.Z3_OP_SLT, z3.Z3_OP_SGEQ: z3.Z3_OP_SLEQ}


class Ranges:
    """The unsigned range of each bit-vector node of a DAG (children first, as
    `fraig._Dag` holds it: `nodes`, `kids`), computed up to a node when it is first
    asked (so `hint`, further facts about a node, may grow as nodes above are read).
    A node over numerals alone is its value (the DAG keeps `0x80 - 1` and
    `ite(1 <u 32, 1, 32)` as the encoding wrote them)."""

    def __init__(self, nodes: Sequence, kids: Sequence[tuple[int, ...]],
                 hint: Callable[[int, Callable[[int], Range]], Range | None] = lambda i, r: None):
        self.nodes, self.kids, self.hint = nodes, kids, hint
        self.known: list[Range] = []
        self.value: list = []  # a closed node's value (None: it depends on an input)
        self.ones: list[int] = []  # bits known one: a value is at least them

    def __call__(self, i: int) -> Range:
        while len(self.known) <= i:
            self.value.append(self._closed(len(self.known)))
            self.ones.append(self._ones(len(self.known)))
            self.known.append(self._of(len(self.known)))
        return self.known[i]

    def _ones(self, i: int) -> int:
        """Bits of node i known one (`d | 1`, masked: `(d | 1) & 0xffff` is not 0)."""
        n, ks = self.nodes[i], self.kids[i]
        if n.sort.kind != "bv":
            return 0
        if self.value[i] is not None:
            return self.value[i]
        below = [self.ones[k] for k in ks]
        if n.kind in (z3.Z3_OP_BOR, z3.Z3_OP_BAND):
            return functools.reduce(operator.or_ if n.kind == z3.Z3_OP_BOR else operator.and_,
                                    below)
        if n.kind == z3.Z3_OP_ITE:
            truth = self._truth(ks[0])
            return below[1] if truth else below[2] if truth is False else below[1] & below[2]
        if n.kind in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_EXTRACT):
            low = n.params[1] if n.kind == z3.Z3_OP_EXTRACT else 0
            return below[0] >> low & ((1 << n.sort.width) - 1)
        return 0

    def _closed(self, i: int):
        n, ks = self.nodes[i], self.kids[i]
        if n.kind == z3.Z3_OP_UNINTERPRETED or n.leaf and n.kind == -1 or \
                n.sort.kind not in ("bv", "bool") or any(self.value[k] is None for k in ks):
            return None
        out = evaluate_node(n, [[self.value[k]] for k in ks], None, 1)
        return None if out is None else out[0]

    def _of(self, i: int) -> Range:
        n, ks = self.nodes[i], self.kids[i]
        if n.sort.kind != "bv":
            return 0, 0
        w = n.sort.width
        if self.value[i] is not None:
            return self.value[i], self.value[i]
        if n.kind == z3.Z3_OP_ITE:
            out = self._select(ks)
        elif n.kind in RANGES and ks:
            kw = self.nodes[ks[0]].sort.width
            out = RANGES[n.kind](n.params, [self(k) for k in ks], w, kw)
        else:
            out = _full(w)
        more = self.hint(i, self) or out
        return max(out[0], more[0], self.ones[i]), min(out[1], more[1])

    def _select(self, ks: tuple[int, ...]) -> Range:
        """Both arms' ranges, each under what the condition tells of it there: a min or
        max `ite(p <u q, p, q)` is below the lesser bound, `ite(p <u 10, p, e)` below 10."""
        c, truth = ks[0], self._truth(ks[0])
        within = [self._under(c, arm, holds) for arm, holds in zip(ks[1:], (True, False))
                  if truth in (None, holds)]  # an arm the condition never takes: none
        return min(lo for lo, _ in within), max(hi for _, hi in within)

    def _truth(self, c: int) -> bool | None:
        """Condition node c's value where the ranges decide it, None elsewhere: -O0's
        guard `d == 0` of a division by `d | 1` is false."""
        holds = True
        while self.nodes[c].kind == z3.Z3_OP_NOT:
            c, holds = self.kids[c][0], not holds
        if self.value[c] is not None:
            return self.value[c] == holds
        kind, ks = self._compare(c)
        if kind is None:
            return None
        (p_lo, p_hi), (q_lo, q_hi) = self(ks[0]), self(ks[1])
        if kind == z3.Z3_OP_EQ:
            return None if p_lo <= q_hi and q_lo <= p_hi else not holds
        equal = _COMPARES[kind][0]
        if p_hi < q_lo or equal and p_hi == q_lo:  # p < q (p <= q) for every value
            return holds
        if q_hi < p_lo or not equal and q_hi == p_lo:
            return not holds
        return None

    def _compare(self, c: int) -> tuple[int | None, tuple[int, ...]]:
        """Node c as `p op q`, op of _COMPARES (a signed one where p and q are not
        negative: then it is the unsigned one) or `=`, over bit-vectors; (None, ()) for
        any other."""
        kind, ks = self.nodes[c].kind, self.kids[c]
        if kind in _REVERSED:
            kind, ks = _REVERSED[kind], ks[::-1]
        if kind not in _COMPARES and kind != z3.Z3_OP_EQ or self.nodes[ks[0]].sort.kind != "bv":
            return None, ()
        if kind in _COMPARES and _COMPARES[kind][1] and \
                not _not_negative_ranges([self(k) for k in ks], self.nodes[ks[0]].sort.width):
            return None, ()
        return kind, ks

    def _under(self, c: int, arm: int, holds: bool) -> Range:
        """arm's range where condition node c is `holds`."""
        lo, hi = self(arm)
        while self.nodes[c].kind == z3.Z3_OP_NOT:
            c, holds = self.kids[c][0], not holds
        kind, ks = self._compare(c)
        if arm not in ks or kind == z3.Z3_OP_EQ and not holds:
            return lo, hi
        if kind == z3.Z3_OP_EQ:  # arm is the other operand there
            other = self(ks[1] if ks[0] == arm else ks[0])
            return max(lo, other[0]), min(hi, other[1])
        equal, p, q = _COMPARES[kind][0], *ks
        if not holds:  # not p < q is q <= p; not p <= q is q < p
            p, q, equal = q, p, not equal
        if arm == p:  # arm < q (or <=): below q's greatest
            return lo, min(hi, self(q)[1] - (not equal))
        return max(lo, self(p)[0] + (not equal)), hi  # p < arm: above p's least
