"""The plain-Python oracle for the rounding families (float-arith, convert), the integer
additions to arith (mul.wide, mad, div, rem) and bits (popc, clz, brev, bfe, bfi, prmt, shf).

Test-only, as tests/oracle.py (which dispatches here): no z3, no ``ptxsmt``. Rounding
is tests/exact_float.py's rational arithmetic; bit operations are Python ints, written
from the ISA's pseudocode and tables (prmt's table as the ISA prints it).
"""

from __future__ import annotations

from fractions import Fraction

import exact_float as ef
from oracle import PACKED_LANE, TYPES, _flushes, _lanes, _pack, _reg, flush, to_signed

INT_ROUNDING = {"rni": "rn", "rzi": "rz", "rmi": "rm", "rpi": "rp"}
ONE = {"f16": 0x3C00, "bf16": 0x3F80, "f32": 0x3F800000, "f64": 0x3FF0000000000000}


def saturate(bits: int, fmt: str) -> int:
    """[+0.0, 1.0]; NaN -> +0.0; -0.0 -> +0.0 (ptxas folds add.sat of -0.0 so)."""
    x = ef.decode(bits, fmt)
    if x.kind == "nan" or (x.q <= 0 if x.kind == "fin" else x.sign):
        return 0
    if x.kind == "inf" or x.q > 1:
        return ONE[fmt]
    return bits


def _name(desc: dict) -> str:
    return ".".join(str(desc.get(k)) for k in ("opcode", "mode", "rnd", "ftz", "sat", "type"))


# ---------------------------------------------------------------- float-arith
def float_lane(desc: dict, fmt: str, xs: list[int], free) -> int:
    op = desc["opcode"]
    if op == "copysign":  # a's sign on b's bits
        sign = 1 << (ef.FORMATS[fmt][0] + ef.FORMATS[fmt][1])
        return (xs[0] & sign) | (xs[1] & ~sign)
    flushes = _flushes(desc, fmt) and fmt != "f64"
    if flushes:
        xs = [flush(x, fmt) for x in xs]
    r = ef.arith(op, desc.get("rnd") or "rn", fmt, *xs)
    if r == ef.NAN:
        r = free((_name(desc), *xs), fmt)
    if flushes:
        r = flush(r, fmt)
    return saturate(r, fmt) if desc.get("sat") else r


def testp(desc: dict, bits: int, fmt: str, free) -> bool:
    x = ef.decode(bits, fmt)
    sub = ef.is_subnormal(bits, fmt)
    if desc["mode"] == "normal" and x.is_zero:  # the text says no, ptxas folds yes: open
        return bool(free(("testp.normal of zero", fmt, bits), "int1"))
    return {"finite": x.kind == "fin", "infinite": x.kind == "inf", "number": x.kind != "nan",
            "notanumber": x.kind == "nan", "normal": x.kind == "fin" and not x.is_zero and not sub,
            "subnormal": sub}[desc["mode"]]


def float_arith(desc: dict, inputs: dict, free) -> dict:
    typ = desc["type"]
    kind, w = TYPES[typ]
    fmt = PACKED_LANE.get(typ, typ)
    if desc["opcode"] == "testp":
        return {"p": testp(desc, _reg(inputs, "a", w), fmt, free)}
    n = 2 if kind == "x" else 1
    srcs = [_lanes(_reg(inputs, s, w), n, w // n) for s in "abc" if s in inputs]
    return {"d": _pack([float_lane(desc, fmt, list(xs), free) for xs in zip(*srcs)], w // n)}


# ---------------------------------------------------------------- convert
def convert(desc: dict, inputs: dict, free) -> dict:
    dtype, atype = desc["dtype"], desc["atype"]
    (akind, aw), (dkind, dw) = TYPES[atype], TYPES[dtype]
    a = _reg(inputs, "a", aw)
    sm1x = (desc.get("sm") or 90) < 20
    f32_flush = bool(desc.get("ftz")) or sm1x
    rnd = desc.get("rnd")
    if akind == "f" and atype == "f32" and f32_flush:
        a = flush(a, atype)
    if dkind in "us":  # float -> integer: rounded, clamped; NaN -> 0
        x = ef.decode(a, atype)
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dkind == "s" else (0, (1 << dw) - 1)
        if x.kind == "nan":  # as an H200 gives it: 0, or MININT's bits where 64-bit
            return {"d": 1 << (dw - 1) if 64 in (aw, dw) else 0}
        if x.kind == "inf":
            return {"d": (lo if x.sign else hi) % (1 << dw)}
        value = int(ef.round_integral(x, INT_ROUNDING[rnd]).q)
        return {"d": min(max(value, lo), hi) % (1 << dw)}
    if akind in "us":  # integer -> float
        value = to_signed(a, aw) if akind == "s" else a
        out = ef.round_to(Fraction(value), dtype, rnd or "rn")
    else:
        x = ef.decode(a, atype)
        if rnd in INT_ROUNDING:
            x = ef.round_integral(x, INT_ROUNDING[rnd])
        out = ef.to_format(x, dtype, "rn" if rnd in INT_ROUNDING else rnd or "rn")
        if out == ef.NAN:
            out = free((_name(desc) + "." + atype, a), dtype)
    if dtype == "f32" and f32_flush:
        out = flush(out, dtype)
    return {"d": saturate(out, dtype) if desc.get("sat") else out}


# ---------------------------------------------------------------- integers
def int_arith(desc: dict, inputs: dict, free) -> dict:
    op, typ, mode = desc["opcode"], desc["type"], desc.get("mode")
    kind, w = TYPES[typ]
    a, b = _reg(inputs, "a", w), _reg(inputs, "b", w)
    x, y = (to_signed(a, w), to_signed(b, w)) if kind == "s" else (a, b)
    if op in ("div", "rem"):
        if y == 0:
            return {"d": free((f"{op}.{typ} by zero", a), f"int{w}")}
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)  # toward zero
        return {"d": (q if op == "div" else x - q * y) % (1 << w)}
    t = x * y
    out_w = 2 * w if mode == "wide" else w
    part = t if mode == "wide" else (t >> w if mode == "hi" else t)
    if op == "mul":
        return {"d": part % (1 << out_w)}
    c = _reg(inputs, "c", out_w)
    if desc.get("sat"):  # mad.hi.sat.s32
        total = to_signed(part % (1 << w), w) + to_signed(c, w)
        return {"d": min(max(total, -(1 << 31)), (1 << 31) - 1) % (1 << w)}
    return {"d": (part + c) % (1 << out_w)}


# prmt's modes as the ISA's table prints them: per selector c[1:0] = 0..3, the source
# bytes of d.b3 d.b2 d.b1 d.b0
PRMT_TABLE = {
    "f4e": ("3210", "4321", "5432", "6543"),
    "b4e": ("5670", "6701", "7012", "0123"),
    "rc8": ("0000", "1111", "2222", "3333"),
    "ecl": ("3210", "3211", "3222", "3333"),
    "ecr": ("0000", "1110", "2210", "3210"),
    "rc16": ("1010", "3232", "1010", "3232"),
}


def bits(desc: dict, inputs: dict, free) -> dict:
    op, typ = desc["opcode"], desc["type"]
    kind, w = TYPES[typ]
    a = _reg(inputs, "a", w)
    if op == "popc":
        return {"d": bin(a).count("1")}
    if op == "clz":
        return {"d": w - a.bit_length()}
    if op == "brev":
        return {"d": int(format(a, f"0{w}b")[::-1], 2)}
    if op == "bfe":
        msb = w - 1
        b, c = _reg(inputs, "b", 32), _reg(inputs, "c", 32)
        if w == 64 and (b > 255 or c > 255):  # ptxas folds these unmasked: open
            return {"d": free(("bfe", typ, a, b, c), "int64")}
        pos, length = b & 0xFF, c & 0xFF
        sbit = 0 if kind == "u" or length == 0 else (a >> min(pos + length - 1, msb)) & 1
        return {"d": sum((((a >> (pos + i)) & 1) if i < length and pos + i <= msb else sbit) << i
                         for i in range(w))}
    if op == "bfi":  # "f = b; for (i=0; i<len && pos+i<=msb; i++) f[pos+i] = a[i];"
        f = _reg(inputs, "b", w)
        pos, length = _reg(inputs, "c", 32) & 0xFF, _reg(inputs, "e", 32) & 0xFF  # e: the ISA's d
        for i in range(length):
            if pos + i > w - 1:
                break
            bit = 1 << (pos + i)
            f = (f | bit) if (a >> i) & 1 else (f & ~bit)
        return {"d": f}
    b, c = _reg(inputs, "b", 32), _reg(inputs, "c", 32)
    if op == "shf":
        n = min(c, 32) if desc["mode"] == "clamp" else c & 0x1F
        wide = (b << 32) | a
        shifted = (wide << n) >> 32 if desc["dir"] == "l" else wide >> n
        return {"d": shifted % (1 << 32)}
    tmp = (b << 32) | a  # prmt
    src = [(tmp >> (8 * k)) & 0xFF for k in range(8)]
    out = []
    for i in range(4):
        if desc.get("mode"):
            row = PRMT_TABLE[desc["mode"]][c & 3]
            out.append(src[int(row[3 - i])])
        else:
            ctl = (c >> (4 * i)) & 0xF
            byte = src[ctl & 7]
            out.append((0xFF if byte >> 7 else 0) if ctl & 8 else byte)
    return {"d": _pack(out, 8)}


def is_float_arith(desc: dict) -> bool:
    typ = desc.get("type")
    return desc["opcode"] in ("fma", "sqrt", "rcp", "copysign", "testp") or (
        desc["opcode"] in ("add", "sub", "mul", "mad", "div") and TYPES[typ][0] in "fx")
