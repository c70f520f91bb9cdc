"""Bit manipulation: 9.7.1.14 popc, 9.7.1.15 clz, 9.7.1.18 brev, 9.7.1.19 bfe, 9.7.1.20 bfi,
9.7.9.5 prmt and 9.7.8.7 shf. The docstrings quote the ISA pseudocode."""

from __future__ import annotations

import z3

from ..isa.types import Kind
from ..isa.variants import Variant
from .options import Options
from .prims import lanes, pack
from .sorts import free_value


def bits(v: Variant, a, b, c, opts: Options, e=None) -> dict[str, z3.ExprRef]:
    if e is not None:
        return {"d": bfi(v, a, b, c, e)}
    return {"d": _OPS[v.opcode](v, a, b, c)}


def popc(v: Variant, a, b, c) -> z3.BitVecRef:
    """d = number of one bits in a (d is .u32)."""
    return sum((z3.ZeroExt(31, z3.Extract(i, i, a)) for i in range(a.size())),
               z3.BitVecVal(0, 32))


def clz(v: Variant, a, b, c) -> z3.BitVecRef:
    """d = number of leading zeros of a (a = 0: the width); d is .u32."""
    n = a.size()
    out = z3.BitVecVal(n, 32)
    for i in range(n):  # the highest one bit decides: test from the bottom up
        out = z3.If(z3.Extract(i, i, a) == 1, z3.BitVecVal(n - 1 - i, 32), out)
    return out


def brev(v: Variant, a, b, c) -> z3.BitVecRef:
    """for (i=0; i<=msb; i++) d[i] = a[msb-i];"""
    return z3.Concat(*(z3.Extract(i, i, a) for i in range(a.size())))


def bfe(v: Variant, a, b, c) -> z3.BitVecRef:
    """msb = 31 or 63;  pos = b & 0xff;  len = c & 0xff;
    sbit = (.u32 || .u64 || len==0) ? 0 : a[min(pos+len-1, msb)];
    d[i] = (i<len && pos+i<=msb) ? a[pos+i] : sbit;   (i = 0..msb)
    ptxas 13.0 folds .u64/.s64 without the masks (bfe.u64 of all ones, pos 0, len 256 is
    all ones to it, 0 to the text): there a b or c of 256 or more gives an open value,
    sound under both readings (docs/arith-families.md)."""
    value = _bfe(v, a, b, c)
    if a.size() == 64:
        disputed = z3.Or(z3.UGE(b, 256), z3.UGE(c, 256))
        value = z3.If(disputed, free_value(f"{v} with pos or len >= 256", z3.Concat(a, b, c),
                                           64), value)
    return value


def _bfe(v: Variant, a, b, c) -> z3.BitVecRef:
    n, msb = a.size(), a.size() - 1
    pos, length = b & 0xFF, c & 0xFF  # 32-bit: pos + len fits
    taken = z3.If(z3.ULE(pos, msb), _min(length, msb + 1 - pos), z3.BitVecVal(0, 32))
    low = _resize(taken, n)
    mask = (z3.BitVecVal(1, n) << low) - 1  # `taken` low ones (all ones when taken = n)
    field = z3.LShR(a, _resize(z3.If(z3.ULE(pos, msb), pos, z3.BitVecVal(0, 32)), n)) & mask
    if v.type.kind is not Kind.SIGNED:
        return field
    top = _resize(_min(pos + length - 1, z3.BitVecVal(msb, 32)), n)
    sbit = z3.Extract(0, 0, z3.LShR(a, top))
    return z3.If(z3.And(length != 0, sbit == 1), field | ~mask, field)


def bfi(v: Variant, a, b, c, e) -> z3.BitVecRef:
    """`bfi.type f, a, b, c, d;` (the text's d is e here):
    msb = (.type==.b32) ? 31 : 63;  pos = c & 0xff;  len = d & 0xff;
    f = b;  for (i=0; i<len && pos+i<=msb; i++) f[pos+i] = a[i];
    The loop's bounds are the shifts': a shift by the width or more is 0 (SMT-LIB bvshl),
    so len ones at pos lose the bits past msb and a pos past msb inserts nothing."""
    n = a.size()
    pos, length = _resize(c & 0xFF, n), _resize(e & 0xFF, n)
    mask = ((z3.BitVecVal(1, n) << length) - 1) << pos
    return (b & ~mask) | ((a << pos) & mask)


def _min(x, y) -> z3.BitVecRef:
    y = z3.BitVecVal(y, 32) if isinstance(y, int) else y
    return z3.If(z3.ULE(x, y), x, y)


def _resize(x: z3.BitVecRef, n: int) -> z3.BitVecRef:
    """A 32-bit value below 2**n... as n bits (every value here is at most 64)."""
    return z3.Extract(n - 1, 0, x) if n <= 32 else z3.ZeroExt(n - 32, x)


# prmt's modes: which byte of b:a feeds byte i of d, from the selector c[1:0]
_PRMT_MODES = {
    "f4e": lambda sel, i: sel + i,  # forward 4 extract: 3210, 4321, 5432, 6543
    "b4e": lambda sel, i: (sel - i) % 8,  # backward 4 extract: 5670, 6701, 7012, 0123
    "rc8": lambda sel, i: sel,  # replicate 8
    "ecl": lambda sel, i: max(i, sel),  # edge clamp left: 3210, 3211, 3222, 3333
    "ecr": lambda sel, i: min(i, sel),  # edge clamp right: 0000, 1110, 2210, 3210
    "rc16": lambda sel, i: 2 * (sel & 1) + (i & 1),  # replicate 16: 1010, 3232
}


def prmt(v: Variant, a, b, c) -> z3.BitVecRef:
    """tmp64 = (b<<32) | a;  default: ctl[i] = c[4i+3 : 4i]; byte i of d is byte ctl[i][2:0]
    of tmp64, or (ctl[i][3] set) its sign bit replicated 8 times;
    with a mode, ctl = c[1:0] picks one row of the mode's table for all four bytes."""
    source = lanes(z3.Concat(b, a), 8)
    if v.mode is None:
        out = []
        for ctl in lanes(c, 4)[:4]:
            byte = _pick(source, z3.Extract(2, 0, ctl))
            sign = z3.If(z3.Extract(7, 7, byte) == 1, z3.BitVecVal(0xFF, 8), z3.BitVecVal(0, 8))
            out.append(z3.If(z3.Extract(3, 3, ctl) == 1, sign, byte))
        return pack(out)
    sel = z3.Extract(1, 0, c)
    row = _PRMT_MODES[v.mode]
    return pack([_pick([source[row(s, i)] for s in range(4)], sel) for i in range(4)])


def _pick(options: list[z3.BitVecRef], index: z3.BitVecRef) -> z3.BitVecRef:
    """options[index], as a chain of If."""
    out = options[-1]
    for k in reversed(range(len(options) - 1)):
        out = z3.If(index == k, options[k], out)
    return out


def shf(v: Variant, a, b, c) -> z3.BitVecRef:
    """n = (.clamp) ? min(c, 32) : c & 0x1f;
    shf.l: d = ((b:a) << n)[63:32];   shf.r: d = ((b:a) >> n)[31:0]   (a the low word)"""
    n = _min(c, 32) if v.mode == "clamp" else c & 0x1F
    wide, amount = z3.Concat(b, a), z3.ZeroExt(32, n)
    if v.dir == "l":
        return z3.Extract(63, 32, wide << amount)
    return z3.Extract(31, 0, z3.LShR(wide, amount))


_OPS = {"popc": popc, "clz": clz, "brev": brev, "bfe": bfe, "prmt": prmt, "shf": shf}
