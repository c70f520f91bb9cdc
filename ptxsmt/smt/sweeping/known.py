"""The bits of a bit-vector term known before any input is: known zeros and ones, and
how many top bits are known copies of the sign bit, read a few levels down the term
(KNOWN_DEPTH: the patterns opt's known-bits analysis sees are near the operator it
rewrites). The local rewrites (`rewrite.py`) and the division read-back
(`division.py`) rest on them: each is a fact for every value of the term's free
constants (tests/test_rewrite.py proves them on random terms).
"""

from __future__ import annotations

import functools
import operator

import z3

from ...terms.ops import signed

KNOWN_DEPTH = 4  # how far below a term `known_zeros` looks


def known_zeros(t: z3.BitVecRef, depth: int = KNOWN_DEPTH) -> int:
    """Bits of t known to be zero, as a mask (a few levels down only: the patterns
    opt's known-bits analysis sees are near the operator it rewrites)."""
    width = t.size()
    ones = (1 << width) - 1
    if z3.is_bv_value(t):
        return ~t.as_long() & ones
    if depth == 0 or not z3.is_app(t):
        return 0
    kind, kids = t.decl().kind(), t.children()
    if kind == z3.Z3_OP_ITE:
        kind, kids = z3.Z3_OP_BOR, kids[1:]  # zero in both arms, as in an or
    below = [known_zeros(c, depth - 1) for c in kids] if kind in _KNOWN else []
    if kind == z3.Z3_OP_BAND:
        return functools.reduce(operator.or_, below)
    if kind in (z3.Z3_OP_BOR, z3.Z3_OP_BXOR):
        return functools.reduce(operator.and_, below)
    if kind == z3.Z3_OP_BMUL:  # trailing zeros add up
        return ones >> (width - min(sum(trailing_zeros(z) for z in below), width))
    if kind in (z3.Z3_OP_BSHL, z3.Z3_OP_BLSHR) and z3.is_bv_value(kids[1]):
        k = min(kids[1].as_long(), width)
        if kind == z3.Z3_OP_BSHL:
            return (below[0] << k | ones >> (width - k)) & ones
        return ones << (width - k) & ones | below[0] >> k
    if kind in (z3.Z3_OP_BUDIV, z3.Z3_OP_BUREM):
        return _divided_zeros(kind, kids, below, width)
    if kind == z3.Z3_OP_ZERO_EXT:
        return ones ^ (ones >> (width - kids[0].size())) | below[0]
    if kind == z3.Z3_OP_EXTRACT and t.params()[1] == 0:
        return below[0] & ones
    if kind == z3.Z3_OP_BADD:  # a sum of values below 2^k is below 2^(k + log2(n))
        top = max(width - leading_zeros(z, width) for z in below) + (len(kids) - 1).bit_length()
        return ones ^ (ones >> max(width - top, 0)) if top < width else 0
    return 0


def _divided_zeros(kind: int, kids: list, below: list[int], width: int) -> int:
    """The high zeros of an unsigned division: by a nonzero divisor, a quotient is no
    larger than its dividend (by 0 it is all ones) and a remainder below its divisor
    too; a remainder is no larger than its dividend always (by 0 it is the dividend)."""
    ones = (1 << width) - 1
    lead = 0 if kind == z3.Z3_OP_BUDIV and not nonzero(kids[1]) else leading_zeros(below[0], width)
    if kind == z3.Z3_OP_BUDIV and z3.is_bv_value(kids[1]) and kids[1].as_long() > 1:
        most = ones >> leading_zeros(below[0], width)  # the greatest dividend
        lead = max(lead, width - (most // kids[1].as_long()).bit_length())
    if kind == z3.Z3_OP_BUREM and nonzero(kids[1]):
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
    width = t.size()
    if z3.is_bv_value(t):
        v = signed(t.as_long(), width)
        return width - (v if v >= 0 else ~v).bit_length()
    lead = max(leading_zeros(known_zeros(t, depth), width), 1)
    if depth == 0 or not z3.is_app(t) or t.decl().kind() not in _SIGNS:
        return lead
    kind, kids = t.decl().kind(), t.children()
    if kind == z3.Z3_OP_ITE:
        kind, kids = z3.Z3_OP_BOR, kids[1:]  # both arms, as in an or
    below = [sign_bits(c, depth - 1) for c in kids]
    if kind == z3.Z3_OP_SIGN_EXT:
        return max(lead, below[0] + t.params()[0])
    if kind == z3.Z3_OP_EXTRACT:
        return max(lead, below[0] - (kids[0].size() - width)) if t.params()[1] == 0 else lead
    if kind == z3.Z3_OP_BSREM:  # the dividend's sign, |r| <= |a|, and |r| < |b| for b != 0
        b = signed(kids[1].as_long(), width) if z3.is_bv_value(kids[1]) else 0
        return max(lead, below[0], width - (abs(b) - 1).bit_length() if b else 1)
    if kind == z3.Z3_OP_BSDIV:  # between a and -a, and by 0 1 or -1 (two bits); -a
        # needs one bit more where a is its range's least (by -1: the divisor's top bit)
        whole = not_negative(kids[1])
        return max(lead, min(below[0] - (not whole), width - 1))
    return max(lead, min(below))  # and, or, xor: bit by bit


_SIGNS = {z3.Z3_OP_SIGN_EXT, z3.Z3_OP_EXTRACT, z3.Z3_OP_BAND, z3.Z3_OP_BOR, z3.Z3_OP_BXOR,
          z3.Z3_OP_ITE, z3.Z3_OP_BSREM, z3.Z3_OP_BSDIV}


def not_negative(t: z3.BitVecRef) -> bool:
    """t's sign bit is known zero: t is not negative."""
    return known_zeros(t) >> (t.size() - 1) == 1


def known_ones(t: z3.BitVecRef, depth: int = KNOWN_DEPTH) -> int:
    """Bits of t known to be one, as a mask: a numeral's, an or's of any operand, an
    and's of every operand (`0xffff & (x | 1)` is odd), an extension's or extract's
    of its operand's."""
    if z3.is_bv_value(t):
        return t.as_long()
    if depth == 0 or not z3.is_app(t):
        return 0
    if t.decl().kind() in (z3.Z3_OP_ZERO_EXT, z3.Z3_OP_SIGN_EXT, z3.Z3_OP_EXTRACT):
        low = t.params()[1] if z3.is_app_of(t, z3.Z3_OP_EXTRACT) else 0
        return known_ones(t.arg(0), depth - 1) >> low & ((1 << t.size()) - 1)
    if not (z3.is_app_of(t, z3.Z3_OP_BOR) or z3.is_app_of(t, z3.Z3_OP_BAND)):
        return 0
    below = [known_ones(c, depth - 1) for c in t.children()]
    return functools.reduce(operator.or_ if z3.is_app_of(t, z3.Z3_OP_BOR) else operator.and_,
                            below)


def nonzero(t: z3.BitVecRef) -> bool:
    """t is not 0 for any input: some bit of it is known one."""
    return known_ones(t) != 0
