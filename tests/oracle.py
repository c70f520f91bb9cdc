"""Independent plain-Python reference semantics for PTX set/setp/selp/slct/vset2/vset4,
the glue around them (mov, not/and/or/xor, exact widening cvt, cvt between integers) and
the arithmetic next to them (add, sub, mul, neg, abs, min, max, shl, shr).

Test-only oracle: it must not import z3 or ``ptxsmt``. Registers are non-negative
ints holding raw bits; predicates are bools. Floats are decoded exactly from their
bit fields (every f16/bf16/f32/f64 value is exactly a Python float); NaN is
detected from the bits, never from the decoded value.

    evaluate(desc, inputs) -> {"d": int} | {"p": bool, "q": bool}

``desc`` names the instruction's types as the ISA's syntax lines do: set.dtype.stype,
setp.type, selp.type, slct.dtype.ctype, vset.atype.btype, cvt.dtype.atype, mov.type.

A value the ISA leaves open (a cvt of a NaN, abs/neg of a NaN, min/max of two NaNs, the
canonical NaN of ``.NaN``) is asked of ``free(key, fmt)``: by default it raises
``Unspecified`` (no bits to expect; README, Spec notes 9 and 10); tests/reference.py
passes a chooser, one NaN per key.

Where the ISA text disagrees with itself, the readings of DESIGN.md "Spec notes"
are used (vset merge from ``c`` by default, half ``set`` follows the prose).
"""

from __future__ import annotations

import math
import operator
import struct

# type spelling -> (kind, width); kind: b bit, u unsigned, s signed, f float, x packed float
TYPES = {
    **{f"{k}{w}": (k, w) for k in "bus" for w in (8, 16, 32, 64)},
    "f16": ("f", 16),
    "bf16": ("f", 16),
    "f32": ("f", 32),
    "f64": ("f", 64),
    "f16x2": ("x", 32),
    "bf16x2": ("x", 32),
    "u16x2": ("u", 32),
    "s16x2": ("s", 32),
    "pred": ("p", 1),
}
FLOAT_FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52)}  # (exp, man)
PACKED_LANE = {"f16x2": "f16", "bf16x2": "bf16", "u16x2": "u16", "s16x2": "s16"}

ORDERED = {
    "eq": operator.eq,
    "ne": operator.ne,
    "lt": operator.lt,
    "le": operator.le,
    "gt": operator.gt,
    "ge": operator.ge,
}
UNSIGNED_ALIAS = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}

# set: value written for a true result, by destination type
SET_TRUE_SCALAR = {
    "u32": 0xFFFFFFFF,
    "s32": 0xFFFFFFFF,
    "u16": 0xFFFF,
    "s16": 0xFFFF,
    "f32": 0x3F800000,
    "f16": 0x3C00,
    "bf16": 0x3F80,
}
SET_TRUE_LANE = {"f16x2": 0x3C00, "bf16x2": 0x3F80, "u32": 0xFFFF, "s32": 0xFFFF}


def _lookup(table: dict, key, what: str):
    if key not in table:
        raise ValueError(f"unsupported {what}: {key!r}")
    return table[key]


def width(typ: str) -> int:
    return _lookup(TYPES, typ, "type")[1]


def to_signed(v: int, w: int) -> int:
    return v - (1 << w) if v >> (w - 1) else v


# ---------------------------------------------------------------- floats from bits
def float_fields(bits: int, fmt: str) -> tuple[int, int, int]:
    e, m = _lookup(FLOAT_FORMATS, fmt, "float format")
    return bits >> (e + m), (bits >> m) & ((1 << e) - 1), bits & ((1 << m) - 1)


def is_nan(bits: int, fmt: str) -> bool:
    e, _ = FLOAT_FORMATS[fmt]
    _, exp, man = float_fields(bits, fmt)
    return exp == (1 << e) - 1 and man != 0


def is_subnormal(bits: int, fmt: str) -> bool:
    _, exp, man = float_fields(bits, fmt)
    return exp == 0 and man != 0


def flush(bits: int, fmt: str) -> int:
    """Subnormal -> zero of the same sign; anything else unchanged."""
    e, m = FLOAT_FORMATS[fmt]
    return bits & (1 << (e + m)) if is_subnormal(bits, fmt) else bits


def decode_float(bits: int, fmt: str) -> float:
    """Exact value of a float bit pattern (NaN -> math.nan, sign kept on 0 and inf)."""
    e, m = FLOAT_FORMATS[fmt]
    sign, exp, man = float_fields(bits, fmt)
    bias = (1 << (e - 1)) - 1
    if exp == (1 << e) - 1:
        mag = math.nan if man else math.inf
    elif exp == 0:
        mag = math.ldexp(man, 1 - bias - m)  # exact: result is representable in float64
    else:
        mag = math.ldexp(man | (1 << m), exp - bias - m)
    return -mag if sign else mag


# ---------------------------------------------------------------- primitives
def compare(cmp: str, a: int, b: int, typ: str, ftz: bool = False) -> bool:
    """``a CmpOp b`` for a scalar type; ``ftz`` flushes subnormal float inputs (not f64)."""
    kind, w = _lookup(TYPES, typ, "type")
    if kind == "f":
        if ftz and typ != "f64":
            a, b = flush(a, typ), flush(b, typ)
        nan = is_nan(a, typ) or is_nan(b, typ)
        if cmp == "num":
            return not nan
        if cmp == "nan":
            return nan
        fa, fb = decode_float(a, typ), decode_float(b, typ)
        if cmp in ORDERED:
            return not nan and ORDERED[cmp](fa, fb)
        if cmp.endswith("u") and cmp[:-1] in ORDERED:
            return nan or ORDERED[cmp[:-1]](fa, fb)
        raise ValueError(f"unsupported float CmpOp: {cmp!r}")
    if kind == "x":
        raise ValueError("packed types compare per lane")
    if cmp in UNSIGNED_ALIAS:  # lo/ls/hi/hs: unsigned compare of the raw bits
        return ORDERED[UNSIGNED_ALIAS[cmp]](a, b)
    op = _lookup(ORDERED, cmp, "integer CmpOp")
    if kind == "s":
        a, b = to_signed(a, w), to_signed(b, w)
    return op(a, b)


def boolop(op: str | None, t: bool, c: bool) -> bool:
    if op is None:
        return t
    return _lookup({"and": t and c, "or": t or c, "xor": t != c}, op, "BoolOp")


def _reg(inputs: dict, name: str, w: int) -> int:
    v = inputs[name]
    if isinstance(v, bool) or not hasattr(v, "__index__") or not 0 <= int(v) < (1 << w):
        raise ValueError(f"operand {name}={v!r} is not a {w}-bit register value")
    return int(v)


def _pred(desc: dict, inputs: dict) -> bool:
    """The predicate operand c as seen by BoolOp (``!c`` applied); unused without BoolOp."""
    if not desc.get("boolop"):
        return False
    c = inputs["c"]
    if not isinstance(c, bool):
        raise ValueError(f"predicate c={c!r} is not a bool")
    return not c if desc.get("negc") else c


def _flushes(desc: dict, typ: str) -> bool:
    return bool(desc.get("ftz")) or (typ == "f32" and (desc.get("sm") or 90) < 20)


def _lanes(v: int, n: int, w: int) -> list[int]:
    return [(v >> (w * i)) & ((1 << w) - 1) for i in range(n)]


def _pack(lanes: list[int], w: int) -> int:
    return sum(x << (w * i) for i, x in enumerate(lanes))


# ---------------------------------------------------------------- instructions
def _set_setp(desc: dict, inputs: dict) -> dict:
    op, cmp = desc["opcode"], desc["cmp"]
    stype = desc["type"] if op == "setp" else desc["stype"]
    a, b = _reg(inputs, "a", width(stype)), _reg(inputs, "b", width(stype))
    c = _pred(desc, inputs)
    bop = desc.get("boolop")
    if stype in PACKED_LANE:
        lane = PACKED_LANE[stype]
        ts = [
            compare(cmp, x, y, lane, _flushes(desc, lane))
            for x, y in zip(_lanes(a, 2, 16), _lanes(b, 2, 16), strict=True)
        ]
        if op == "setp":
            return {"p": boolop(bop, ts[0], c), "q": boolop(bop, ts[1], c)}
        true = _lookup(SET_TRUE_LANE, desc["dtype"], "set.<dtype> for packed source")
        return {"d": _pack([true if boolop(bop, t, c) else 0 for t in ts], 16)}
    t = compare(cmp, a, b, stype, _flushes(desc, stype))
    if op == "setp":
        return {"p": boolop(bop, t, c), "q": boolop(bop, not t, c)}
    true = _lookup(SET_TRUE_SCALAR, desc["dtype"], "set.<dtype>")
    return {"d": true if boolop(bop, t, c) else 0}


def _selp(desc: dict, inputs: dict) -> dict:
    w = width(desc["type"])
    a, b, c = _reg(inputs, "a", w), _reg(inputs, "b", w), inputs["c"]
    if not isinstance(c, bool):
        raise ValueError(f"predicate c={c!r} is not a bool")
    if desc.get("negc"):  # ptxas accepts selp's c as !c
        c = not c
    return {"d": a if c else b}


def _slct(desc: dict, inputs: dict) -> dict:
    w = width(desc["dtype"])
    a, b, c = _reg(inputs, "a", w), _reg(inputs, "b", w), _reg(inputs, "c", 32)
    if desc["ctype"] == "s32":
        take_a = to_signed(c, 32) >= 0
    elif desc["ctype"] == "f32":
        if _flushes(desc, "f32"):
            c = flush(c, "f32")
        take_a = not is_nan(c, "f32") and decode_float(c, "f32") >= 0  # -0.0 >= 0 holds
    else:
        raise ValueError(f"unsupported slct selector type: {desc['ctype']!r}")
    return {"d": a if take_a else b}


def _digits(spelling: str, prefix: str, limit: int, count: int | None = None) -> list[int]:
    """Digits of a selector (exactly ``count`` digits) or mask (distinct digits)."""
    body = spelling[len(prefix) :]
    ok = spelling.startswith(prefix) and body.isdigit() and all(int(k) < limit for k in body)
    ok = ok and (len(body) == count if count else len(set(body)) == len(body))
    if not ok:
        raise ValueError(f"bad selector/mask spelling: {spelling!r}")
    return [int(k) for k in body]


def _vset(desc: dict, inputs: dict, n: int) -> dict:
    w, prefix = 32 // n, "h" if n == 2 else "b"
    a, b, c = (_reg(inputs, r, 32) for r in "abc")
    bank = (b << 32) | a  # selector digit k picks lane-sized field k of b:a

    def select(sel: str, typ: str) -> list[int]:
        digits = _digits(sel, prefix, 2 * n, n)[::-1]  # last digit feeds lane 0
        fields = [(bank >> (w * k)) & ((1 << w) - 1) for k in digits]
        signed = _lookup({"u32": False, "s32": True}, typ, "vset operand type")
        return [to_signed(f, w) if signed else f for f in fields]

    va = select(desc.get("asel") or ("h10" if n == 2 else "b3210"), desc["atype"])
    vb = select(desc.get("bsel") or ("h32" if n == 2 else "b7654"), desc["btype"])
    op = _lookup(ORDERED, desc["cmp"], "vset cmp")
    t = [int(op(x, y)) for x, y in zip(va, vb, strict=True)]
    mask = set(_digits(desc["mask"], prefix, n)) if desc.get("mask") else set(range(n))
    if desc.get("add"):
        return {"d": (c + sum(t[i] for i in mask)) & 0xFFFFFFFF}
    merge = desc.get("vset_merge") or "c"
    src = _lanes(_lookup({"c": c, "b": b}, merge, "vset_merge"), n, w)
    return {"d": _pack([t[i] if i in mask else src[i] for i in range(n)], w)}


# ---------------------------------------------------------------- glue
class Unspecified(ValueError):
    """The ISA leaves the result open (a cvt of a NaN): no bits to expect."""


def unspecified(key: tuple, fmt: str) -> int:
    """The default chooser of free NaNs: there are none to expect."""
    raise Unspecified(f"{key[0]} gives a NaN of {fmt} the ISA leaves open ({key!r})")


LOGIC = {"and": operator.and_, "or": operator.or_, "xor": operator.xor}  # bools stay bools
WIDENING = {("f32", "f16"): "<f", ("f32", "bf16"): "<f", ("f64", "f32"): "<d"}  # -> struct


def convert_int(bits: int, dtype: str, stype: str, sat: bool = False) -> int:
    """cvt between integers: the source's value (signed or not), clamped to the destination's
    range with .sat, then its low bits (sign- or zero-extension and chopping at once)."""
    (skind, sw), (dkind, dw) = TYPES[stype], TYPES[dtype]
    value = to_signed(bits, sw) if skind == "s" else bits
    if sat:
        lo, hi = (-(1 << (dw - 1)), (1 << (dw - 1)) - 1) if dkind == "s" else (0, (1 << dw) - 1)
        value = min(max(value, lo), hi)
    return value % (1 << dw)


def convert(bits: int, dtype: str, stype: str, sm: int = 90, free=unspecified) -> int:
    """Exact widening cvt: decode the value, pack it in the wider format (every source value
    is a destination value, so packing is exact; -0.0 and inf included). sm_1x flushes an
    f32 subnormal input. (Widenings struct cannot pack, f64.f16, f16.f16, ..., go through
    tests/exact_float.py.)"""
    if is_nan(bits, stype):
        return free((f"cvt.{dtype}.{stype}", bits), dtype)
    if stype == "f32" and sm < 20:
        bits = flush(bits, stype)
    if (dtype, stype) not in WIDENING:  # f64.f16, f32.f32, ...: exact, or not glue
        import exact_float

        (de, dm), (se, sm_) = FLOAT_FORMATS[dtype], FLOAT_FORMATS[stype]
        if de < se or dm < sm_:
            raise ValueError(f"unsupported cvt: {(dtype, stype)!r} rounds")
        return exact_float.to_format(exact_float.decode(bits, stype), dtype, "rn")
    raw = struct.pack(WIDENING[dtype, stype], decode_float(bits, stype))
    return int.from_bytes(raw, "little")


def _operand(inputs: dict, name: str, typ: str) -> int | bool:
    if typ != "pred":
        return _reg(inputs, name, width(typ))
    if not isinstance(inputs[name], bool):
        raise ValueError(f"predicate {name}={inputs[name]!r} is not a bool")
    return inputs[name]


def _glue(desc: dict, inputs: dict, free) -> dict:
    op = desc["opcode"]
    typ = desc["atype"] if op == "cvt" else desc["type"]
    a = _operand(inputs, "a", typ)
    if op == "mov":
        return {"d": a}
    if op == "cvt" and TYPES[typ][0] in "us":
        return {"d": convert_int(a, desc["dtype"], typ, bool(desc.get("sat")))}
    if op == "cvt":
        return {"d": convert(a, desc["dtype"], typ, desc.get("sm") or 90, free)}
    if TYPES[typ][0] not in "bp":  # logic ops: .pred and .bN only
        raise ValueError(f"unsupported type for {op}: {typ!r}")
    if op == "not":
        return {"d": (not a) if typ == "pred" else a ^ ((1 << width(typ)) - 1)}
    return {"d": _lookup(LOGIC, op, "logic op")(a, _operand(inputs, "b", typ))}


# ---------------------------------------------------------------- arithmetic
def _int_op(op: str, desc: dict, a: int, b: int, w: int, kind: str) -> int:
    """One integer instruction on w-bit values, from the ISA's one-line semantics."""
    sa, sb = to_signed(a, w), to_signed(b, w)
    x, y = (sa, sb) if kind == "s" else (a, b)  # the values the instruction compares
    if op in ("add", "sub"):
        exact = sa + sb if op == "add" else sa - sb
        if desc.get("sat"):  # "limits result to MININT..MAXINT" (.s32 only)
            exact = min(max(exact, -(1 << (w - 1))), (1 << (w - 1)) - 1)
        return exact % (1 << w)
    if op == "mul":
        t = x * y  # the full 2n-bit product
        return (t >> w if desc["mode"] == "hi" else t) % (1 << w)
    if op == "shl":
        return (a << min(b, w)) % (1 << w)  # "clamped to N"
    if op == "shr":
        return (x >> min(b, w)) % (1 << w)  # Python's >> on a negative int fills with 1s
    d = {"neg": -sa, "abs": abs(sa), "min": min(x, y), "max": max(x, y)}[op]
    return (max(d, 0) if desc.get("relu") else d) % (1 << w)  # ".relu clamps ... to 0"


def _zero_order(x: int, y: int, fmt: str, smaller: bool) -> bool:
    """-0.0 < +0.0 for min ("note: -0.0 < +0.0 here"), +0.0 > -0.0 for max."""
    fx, fy = decode_float(x, fmt), decode_float(y, fmt)
    if fx == fy == 0:
        return (x > y) if smaller else (x < y)  # the sign bit is the top bit
    return fx < fy if smaller else fx > fy


def _float_op(op: str, desc: dict, a: int, b: int | None, fmt: str, free) -> int:
    """One lane of abs/neg/min/max: bits in, bits out (flushed first with .ftz)."""
    sign = 1 << (TYPES[fmt][1] - 1)
    flush_ = _flushes(desc, fmt)
    a = flush(a, fmt) if flush_ else a
    if op in ("abs", "neg"):
        if is_nan(a, fmt):  # abs.f64: "NaN input is passed through unchanged"
            return a if (op, fmt) == ("abs", "f64") else free((op, flush_, fmt, a), fmt)
        return a & ~sign if op == "abs" else a ^ sign
    b = flush(b, fmt) if flush_ else b
    if desc.get("nan") and (is_nan(a, fmt) or is_nan(b, fmt)):
        return free(("canonical",), fmt)
    if is_nan(a, fmt) and is_nan(b, fmt):
        return free((op, flush_, fmt, min(a, b), max(a, b)), fmt)  # one NaN per pair
    if is_nan(a, fmt) or is_nan(b, fmt):
        return a if is_nan(b, fmt) else b
    return a if _zero_order(a, b, fmt, smaller=op == "min") else b


def _arith(desc: dict, inputs: dict, free) -> dict:
    op, typ = desc["opcode"], desc["type"]
    kind, w = _lookup(TYPES, typ, "type")
    a = _reg(inputs, "a", w)
    b = _reg(inputs, "b", 32 if op in ("shl", "shr") else w) if "b" in inputs else None
    if kind in "fx":
        lane = PACKED_LANE.get(typ, typ)
        n = 2 if kind == "x" else 1
        bs = _lanes(b, n, w // n) if b is not None else [None] * n
        return {"d": _pack([_float_op(op, desc, x, y, lane, free)
                            for x, y in zip(_lanes(a, n, w // n), bs, strict=True)], w // n)}
    if typ in PACKED_LANE:  # u16x2/s16x2: "iA[i] = a[16i : 16i+15]", lane 0 the low half
        return {"d": _pack([_int_op(op, desc, x, y, 16, kind)
                            for x, y in zip(_lanes(a, 2, 16), _lanes(b, 2, 16), strict=True)], 16)}
    return {"d": _int_op(op, desc, a, b or 0, w, kind)}


ARITH = ("add", "sub", "mul", "neg", "abs", "min", "max", "shl", "shr")


def evaluate(desc: dict, inputs: dict, free=unspecified) -> dict:
    """Evaluate one instruction described by ``desc`` on concrete ``inputs``; ``free``
    chooses the NaNs the ISA leaves open (by default: raise ``Unspecified``)."""
    import oracle_rounding as rounding  # it builds on this module's primitives

    op = desc["opcode"]
    if rounding.is_float_arith(desc):
        return rounding.float_arith(desc, inputs, free)
    if op == "cvt" and desc.get("family") == "convert":
        return rounding.convert(desc, inputs, free)
    if op in ("div", "rem", "mad") or (op == "mul" and desc.get("mode") == "wide"):
        return rounding.int_arith(desc, inputs, free)
    if op in ("popc", "clz", "brev", "bfe", "bfi", "prmt", "shf"):
        return rounding.bits(desc, inputs, free)
    if op in ARITH:
        return _arith(desc, inputs, free)
    if op in ("mov", "not", "and", "or", "xor", "cvt"):
        return _glue(desc, inputs, free)
    if op in ("set", "setp"):
        return _set_setp(desc, inputs)
    if op == "selp":
        return _selp(desc, inputs)
    if op == "slct":
        return _slct(desc, inputs)
    if op in ("vset2", "vset4"):
        return _vset(desc, inputs, 2 if op == "vset2" else 4)
    raise ValueError(f"unsupported opcode: {op!r}")
