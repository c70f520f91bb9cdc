"""LangRef "Binary Operations" and "Bitwise Binary Operations" on integers, `icmp`, and
the integer casts, one lane at a time. Each operation gives its bits; the flag tables say
when a flag makes the result poison, the UB table when the instruction is undefined."""

from __future__ import annotations

from collections.abc import Callable

import z3

BitVec = z3.BitVecRef


def _wide(x: BitVec, signed: bool) -> BitVec:
    return z3.SignExt(x.size(), x) if signed else z3.ZeroExt(x.size(), x)


def overflows(op: Callable, a: BitVec, b: BitVec, signed: bool) -> z3.BoolRef:
    """The exact result (computed twice as wide) differs from the wrapped one."""
    return _wide(op(a, b), signed) != op(_wide(a, signed), _wide(b, signed))


# "The value produced is the integer sum/difference/product ... modulo 2^n"; division
# rounds toward zero; "the remainder has the same sign as the dividend" (srem).
BINARY: dict[str, Callable[[BitVec, BitVec], BitVec]] = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "udiv": z3.UDiv,
    "sdiv": lambda a, b: a / b,
    "urem": z3.URem,
    "srem": z3.SRem,
    "shl": lambda a, b: a << b,
    "lshr": z3.LShR,
    "ashr": lambda a, b: a >> b,
    "and": lambda a, b: a & b,
    "or": lambda a, b: a | b,
    "xor": lambda a, b: a ^ b,
}

# (opcode, flag): when the flag makes the result poison.
FLAG_POISON: dict[tuple[str, str], Callable[[BitVec, BitVec], z3.BoolRef]] = {
    # "If the nuw and/or nsw keywords are present, the result value of the add/sub/mul is
    # a poison value if unsigned and/or signed overflow, respectively, occurs."
    ("add", "nuw"): lambda a, b: overflows(BINARY["add"], a, b, signed=False),
    ("add", "nsw"): lambda a, b: overflows(BINARY["add"], a, b, signed=True),
    ("sub", "nuw"): lambda a, b: overflows(BINARY["sub"], a, b, signed=False),
    ("sub", "nsw"): lambda a, b: overflows(BINARY["sub"], a, b, signed=True),
    ("mul", "nuw"): lambda a, b: overflows(BINARY["mul"], a, b, signed=False),
    ("mul", "nsw"): lambda a, b: overflows(BINARY["mul"], a, b, signed=True),
    # shl: "If the nuw keyword is present, then the shift produces a poison value if it
    # shifts out any non-zero bits. If the nsw keyword is present, then the shift produces
    # a poison value if it shifts out any bits that disagree with the resultant sign bit."
    ("shl", "nuw"): lambda a, b: z3.LShR(a << b, b) != a,
    ("shl", "nsw"): lambda a, b: (a << b) >> b != a,
    # "If the exact keyword is present, the result value of the udiv/sdiv is a poison
    # value if %op1 is not a multiple of %op2"; lshr/ashr: "if any of the bits shifted
    # out are non-zero".
    ("udiv", "exact"): lambda a, b: z3.URem(a, b) != 0,
    ("sdiv", "exact"): lambda a, b: z3.SRem(a, b) != 0,
    ("lshr", "exact"): lambda a, b: z3.LShR(a, b) << b != a,
    ("ashr", "exact"): lambda a, b: (a >> b) << b != a,
    # or: "If the disjoint flag is set, and the or has a one and the same bit in both
    # arguments, the result is poison."
    ("or", "disjoint"): lambda a, b: a & b != 0,
}

# "The 'llvm.sadd.with.overflow' family of intrinsic functions ... return a structure
# — the first element of which is the signed summation, and the second element of which
# is a bit specifying if the signed summation resulted in an overflow" (uadd: unsigned;
# ssub/usub, smul/umul alike): the wrapped result and `overflows` of the same operation.
WITH_OVERFLOW: dict[str, tuple[str, bool]] = {
    "sadd.with.overflow": ("add", True), "uadd.with.overflow": ("add", False),
    "ssub.with.overflow": ("sub", True), "usub.with.overflow": ("sub", False),
    "smul.with.overflow": ("mul", True), "umul.with.overflow": ("mul", False),
}

SHIFTS = frozenset({"shl", "lshr", "ashr"})
DIVISIONS = frozenset({"udiv", "sdiv", "urem", "srem"})


def shift_poison(a: BitVec, b: BitVec) -> z3.BoolRef:
    """"If op2 is (statically or dynamically) equal to or larger than the number of bits
    in op1, this instruction returns a poison value." """
    return z3.UGE(b, a.size())


def division_ub(opcode: str, a: BitVec, b: BitVec, a_poison, b_poison) -> z3.BoolRef:
    """"Division by zero is undefined behavior" (and a poison divisor may be zero);
    sdiv/srem: "Overflow also leads to undefined behavior ... -2147483648 by -1"."""
    ub = z3.Or(b_poison, b == 0)
    if opcode in ("sdiv", "srem"):
        int_min = z3.BitVecVal(1 << (a.size() - 1), a.size())
        ub = z3.Or(ub, z3.And(z3.Not(a_poison), a == int_min, b == -1))
    return ub


ICMP: dict[str, Callable[[BitVec, BitVec], z3.BoolRef]] = {
    "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
    "ugt": z3.UGT, "uge": z3.UGE, "ult": z3.ULT, "ule": z3.ULE,
    "sgt": lambda a, b: a > b, "sge": lambda a, b: a >= b,
    "slt": lambda a, b: a < b, "sle": lambda a, b: a <= b,
}


def samesign_poison(a: BitVec, b: BitVec) -> z3.BoolRef:
    """icmp samesign: "if the operands have different signs, the result is poison"."""
    top = a.size() - 1
    return z3.Extract(top, top, a) != z3.Extract(top, top, b)


# Integer casts: bits, and when a flag makes the result poison.
def trunc(a: BitVec, width: int) -> BitVec:
    """"truncates the high order bits in value" """
    return z3.Extract(width - 1, 0, a)


def zext(a: BitVec, width: int) -> BitVec:
    return z3.ZeroExt(width - a.size(), a)


def sext(a: BitVec, width: int) -> BitVec:
    return z3.SignExt(width - a.size(), a)


CAST_FLAG_POISON: dict[tuple[str, str], Callable[[BitVec, int], z3.BoolRef]] = {
    # trunc: "If the nuw keyword is present, and any of the truncated bits are non-zero,
    # the result is a poison value. If the nsw keyword is present, and any of the
    # truncated bits are not the same as the top bit of the truncation result, the
    # result is a poison value."
    ("trunc", "nuw"): lambda a, w: zext(trunc(a, w), a.size()) != a,
    ("trunc", "nsw"): lambda a, w: sext(trunc(a, w), a.size()) != a,
    # zext/uitofp: "If the nneg flag is set, and the zext argument is negative, the
    # result is a poison value."
    ("zext", "nneg"): lambda a, w: a < 0,
    ("uitofp", "nneg"): lambda a, w: a < 0,
}
