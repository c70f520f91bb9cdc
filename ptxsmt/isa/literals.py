"""Literal values both ways: PTX immediates and friendly values <-> register bits.

Accepted forms (for a register of type `t`):
  * raw bits: `0x7e00`, `0X7E00`, `0f3F800000` (32-bit), `0d3FF0000000000000` (64-bit),
    binary `0b101`, octal `017`; they must fit the register's width;
  * decimal integers `42`, `-3` (two's complement for integer types, the value for floats);
  * decimal floats `1.5`, `-0.0`, `1e-40`, and `nan`, `-nan`, `inf`, `-inf` for float types.
    As in PTX, a decimal float is a double first and is then rounded to nearest-even;
  * `true`/`false`/`1`/`0` for predicates.
A value that does not fit is an error, never silently truncated.
"""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction
from functools import lru_cache

from .errors import quote
from .types import FloatFormat, Kind, PtxType


class LiteralError(ValueError):
    pass


_PLAIN_HEX = re.compile(r"0[xX][0-9a-fA-F]+")
_HEX = re.compile(r"([+-]?)0[xX]([0-9a-fA-F]+)[uU]?")
_FLT = re.compile(r"0([fFdD])([0-9a-fA-F]+)")
_BIN = re.compile(r"([+-]?)0[bB]([01]+)[uU]?")
_OCT = re.compile(r"([+-]?)0([0-7]+)[uU]?")
_DEC = re.compile(r"([+-]?)([0-9]+)[uU]?")
_NOT_OCTAL = re.compile(r"[+-]?0[0-9]+[uU]?")  # `09`: a leading 0 means octal, as in C
_FLOAT_WORDS = {"nan", "inf", "infinity"}
# No register needs more (a 64-bit binary literal is 68 characters, the exact decimal of
# a double about 770), and Python's int() refuses decimals of more than 4,300 digits.
MAX_LITERAL = 1000


def _bounded(text: str) -> str:
    s = text.strip()
    if len(s) > MAX_LITERAL:
        raise LiteralError(f"{quote(s)} is {len(s):,} characters long; "
                           f"a value has at most {MAX_LITERAL:,}")
    return s


def parse_value(text: str, t: PtxType) -> int | bool:
    """Register bits (an int; a bool for .pred) for a literal or friendly value."""
    s = _bounded(text)
    if t.kind is Kind.PRED:
        return _parse_pred(s)
    if s[:2] in ("0x", "0X") and _PLAIN_HEX.fullmatch(s):  # the common case, kept cheap
        return _fit_bits(int(s, 16), t.width, t, s)
    if m := _FLT.fullmatch(s):
        width = 32 if m.group(1) in "fF" else 64
        if len(m.group(2)) != width // 4:
            raise LiteralError(f"{quote(s)}: 0{m.group(1)} literals have exactly "
                               f"{width // 4} hex digits")
        return _fit_bits(int(m.group(2), 16), width, t, s)
    for pattern, base in ((_HEX, 16), (_BIN, 2)):
        if m := pattern.fullmatch(s):
            value = int(m.group(2), base)
            if m.group(1) == "-":
                return _fit_signed(-value, t, s)
            return _fit_bits(value, t.width, t, s)
    if m := _OCT.fullmatch(s):
        value = int(m.group(2), 8) * (-1 if m.group(1) == "-" else 1)
        return _fit_signed(value, t, s)
    if _NOT_OCTAL.fullmatch(s):
        raise LiteralError(f"{quote(s)}: a leading 0 makes an octal literal, and 8 and 9 "
                           f"are not octal digits")
    if m := _DEC.fullmatch(s):
        if t.is_float and not t.is_packed:  # from the text: -0 stays -0.0, 1e999 is inf
            return float_bits(float(m.group(1) + m.group(2)), t.fmt)
        return _fit_signed(int(m.group(2)) * (-1 if m.group(1) == "-" else 1), t, s)
    try:
        number = float(s)
    except ValueError:
        raise LiteralError(f"{quote(s)} is not a value for a .{t.name} register") from None
    if not t.is_float:
        raise LiteralError(f"{quote(s)} is a float; .{t.name} needs an integer or hex value")
    if t.is_packed:
        raise LiteralError(f"{quote(s)}: a .{t.name} register needs 32 bits, e.g. 0x3c003c00")
    if s.lstrip("+-").lower() in _FLOAT_WORDS or re.fullmatch(r"[+-]?[0-9.]+([eE][+-]?\d+)?", s):
        return float_bits(number, t.fmt)
    raise LiteralError(f"{quote(s)} is not a value for a .{t.name} register")


_PRED_INTEGER = PtxType("s64", Kind.SIGNED, 64)


def parse_immediate(text: str, t: PtxType) -> int | bool:
    """An immediate operand in PTX text, as ptxas 13.0 reads it for a `.t` operand:
    integers for bit/integer types; `0f` for f32/f64/b32; `0d` and decimal floats for
    f32/f64/b64 (a decimal is a double, then rounded); 0/1 for predicates. Unlike
    ptxas, which truncates, an integer that does not fit is an error. As in ptxas, the
    unsigned suffix is `U` only, and a decimal float a double cannot hold is an error."""
    s = _bounded(text)
    if s.endswith("u"):
        raise LiteralError(f"{quote(s)}: the unsigned suffix is 'U' (ptxas refuses 'u')")
    if t.kind is Kind.PRED:
        # any integer, true when nonzero: LLVM 14 -O0 writes `mov.pred %p, -1`, and ptxas
        # 13.0 folds mov.pred of 2 and of 0x100000000 to true
        try:
            return parse_immediate(s, _PRED_INTEGER) != 0
        except LiteralError:
            raise LiteralError(f"{quote(s)} is not a predicate immediate (an integer)") \
                from None
    if m := _FLT.fullmatch(s):
        width = 32 if m.group(1) in "fF" else 64
        if len(m.group(2)) != width // 4:
            raise LiteralError(f"{quote(s)}: 0{m.group(1)} literals have {width // 4} hex digits")
        bits = int(m.group(2), 16)
        if t.width == width and (t.is_float or t.kind is Kind.BIT):
            return bits
        if t.name in ("f32", "f64"):
            fmt = "<f" if width == 32 else "<d"
            value = struct.unpack(fmt, bits.to_bytes(width // 8, "little"))[0]
            return float_bits(value, t.fmt)
        raise LiteralError(f"{quote(s)} is not a literal for a .{t.name} operand")
    if _DECIMAL_FLOAT.fullmatch(s):
        value = _double(s)
        if t.name in ("f32", "f64"):
            return float_bits(value, t.fmt)
        if t.name == "b64":
            return struct.unpack("<Q", struct.pack("<d", value))[0]
        raise LiteralError(f"{quote(s)} is a float literal; .{t.name} operands take integers")
    if t.is_float:
        raise LiteralError(f"{quote(s)}: .{t.name} immediates are written 0f…, 0d… or like 1.0")
    return parse_value(s, t)


_DECIMAL_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+(?=[eE]))([eE][+-]?\d+)?")
_DOUBLE_MIN_NORMAL = 2.2250738585072014e-308


def _double(s: str) -> float:
    """A decimal float immediate as ptxas reads it: strtod, refused on overflow and on
    underflow (ptxas: "Constant overflow" for 1e400, 1e-400 and the subnormal 1e-320)."""
    value = float(s)
    zero = not any(ch in "123456789" for ch in s.lower().partition("e")[0])
    if math.isinf(value) or (not zero and abs(value) < _DOUBLE_MIN_NORMAL):
        raise LiteralError(f"{quote(s)} is out of range for a double (ptxas: constant overflow)")
    return value


def _parse_pred(s: str) -> bool:
    low = s.lower()
    if low in ("true", "1", "0x1"):
        return True
    if low in ("false", "0", "0x0"):
        return False
    raise LiteralError(f"{quote(s)} is not a predicate value (true/false/1/0)")


def _fit_bits(value: int, width: int, t: PtxType, s: str) -> int:
    if width != t.width and _FLT.fullmatch(s):
        raise LiteralError(f"{quote(s)} is {width} bits; .{t.name} registers are {t.width} bits")
    if value >= 1 << t.width:
        raise LiteralError(f"{quote(s)} does not fit a {t.width}-bit .{t.name} register")
    return value


def _fit_signed(value: int, t: PtxType, s: str) -> int:
    lo, hi = -(1 << (t.width - 1)), (1 << t.width) - 1
    if not lo <= value <= hi:
        raise LiteralError(f"{quote(s)} is out of range for a {t.width}-bit .{t.name} register")
    return value & ((1 << t.width) - 1)


# ---- floats -----------------------------------------------------------------------------


def canonical_nan(fmt: FloatFormat) -> int:
    """The quiet NaN NVIDIA hardware produces: exponent all ones, top mantissa bit set."""
    return ((1 << (fmt.ebits + 1)) - 1) << (fmt.sbits - 2)


def float_bits(value: float, fmt: FloatFormat) -> int:
    """Round a double to `fmt` (nearest-even) and return its bits."""
    if value != value:
        sign = 1 << (fmt.width - 1) if math.copysign(1.0, value) < 0 else 0
        return canonical_nan(fmt) | sign
    # keyed by the double's bits: 0.0 == -0.0 would share a cache entry
    return _round_bits(struct.unpack("<Q", struct.pack("<d", value))[0], fmt)


@lru_cache(maxsize=4096)
def _round_bits(double_bits: int, fmt: FloatFormat) -> int:
    import z3  # the solver rounds, so literal rounding and the semantics agree

    value = struct.unpack("<d", struct.pack("<Q", double_bits))[0]
    x = z3.fpToFP(z3.RNE(), z3.FPVal(value, z3.Float64()), z3.FPSort(fmt.ebits, fmt.sbits))
    return z3.simplify(z3.fpToIEEEBV(x)).as_long()


def split(bits: int, fmt: FloatFormat) -> tuple[int, int, int]:
    """(sign, biased exponent, trailing significand) fields."""
    man_bits = fmt.sbits - 1
    return (bits >> (fmt.width - 1)) & 1, (bits >> man_bits) & ((1 << fmt.ebits) - 1), bits & (
        (1 << man_bits) - 1
    )


def fp_class(bits: int, fmt: FloatFormat) -> str:
    """qNaN, sNaN, +inf, -inf, +0, -0, +subnormal, -subnormal, +normal, -normal."""
    sign, exp, man = split(bits, fmt)
    s = "-" if sign else "+"
    if exp == (1 << fmt.ebits) - 1:
        if man == 0:
            return s + "inf"
        return "qNaN" if man >> (fmt.sbits - 2) else "sNaN"
    if exp == 0:
        return s + ("0" if man == 0 else "subnormal")
    return s + "normal"


def exact_value(bits: int, fmt: FloatFormat) -> Fraction | None:
    """The exact rational a finite float encodes (None for inf/NaN)."""
    sign, exp, man = split(bits, fmt)
    if exp == (1 << fmt.ebits) - 1:
        return None
    bias = (1 << (fmt.ebits - 1)) - 1
    man_bits = fmt.sbits - 1
    mag = Fraction(man, 1 << man_bits) * Fraction(2) ** (1 - bias) if exp == 0 else Fraction(
        (1 << man_bits) | man, 1 << man_bits
    ) * Fraction(2) ** (exp - bias)
    return -mag if sign else mag


def describe_float(bits: int, fmt: FloatFormat) -> str:
    """`1.0`, `-0.0`, `qNaN`, `-inf`, `-subnormal 1.4e-45`: value and class for people."""
    cls = fp_class(bits, fmt)
    if cls.endswith("NaN"):
        return ("-" if bits >> (fmt.width - 1) else "") + cls
    if cls.endswith("inf"):
        return cls.lstrip("+")
    value = exact_value(bits, fmt)
    if value == 0:
        return "-0.0" if cls.startswith("-") else "0.0"
    if cls.endswith("subnormal"):
        return f"{cls} {abs(float(value)):.3g}"
    return repr(float(value))


# ---- formatting -------------------------------------------------------------------------


def hex_bits(bits: int, width: int) -> str:
    """Lower-case hex of exactly the register's width: the JSON value contract."""
    return f"0x{bits:0{max(1, width // 4)}x}"


def describe(bits: int | bool, t: PtxType) -> str:
    """`0x3f800000 (1.0)`, `0xffffffff (-1)`, `0xffff0001 (-1, 1)` (s16x2), `true`: for
    people; a packed type lane by lane, the high lane first."""
    if t.kind is Kind.PRED:
        return "true" if bits else "false"
    w = t.lane_width
    lanes = [_describe_lane((int(bits) >> (i * w)) & ((1 << w) - 1), t.lane)
             for i in range(t.lanes)]
    return f"{hex_bits(int(bits), t.width)} ({', '.join(reversed(lanes))})"  # high lane first


def _describe_lane(bits: int, t: PtxType) -> str:
    if t.is_float:
        return describe_float(bits, t.fmt)
    if t.kind is Kind.SIGNED and bits >> (t.width - 1):
        return str(bits - (1 << t.width))
    return str(bits)


def ptx_literal(bits: int, t: PtxType) -> str:
    """The PTX immediate for register bits: `0f3F800000`, `0d…`, or hex for integers."""
    if t.is_float and not t.is_packed and t.width in (32, 64):
        return f"0{'f' if t.width == 32 else 'd'}{bits:0{t.width // 4}X}"
    return hex_bits(bits, t.width)
