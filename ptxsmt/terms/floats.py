"""IEEE 754 floating point in plain Python, any format (ebits, sbits), exactly: a float
holds a value of its format exactly (a double holds every value of a format of at most
11 exponent and 53 significand bits), an operation is exact on `Fraction`s and then
rounded once by the rounding mode's name ("RNE", "RNA", "RTZ", "RTP", "RTN"). The
operator table (`ops.py`) spells each IEEE operator's value with these.
"""

from __future__ import annotations

import math
import operator
import struct
from collections.abc import Callable
from fractions import Fraction


def round_real(x: Fraction | float, fmt: tuple[int, int], mode: str) -> float:
    """The exact real `x` (nonzero, finite) rounded to the format `fmt` (ebits, sbits)
    by `mode`, IEEE 754: subnormals, overflow to infinity or the largest finite."""
    ebits, p = fmt
    r = Fraction(x)
    sign = 1 if r > 0 else -1  # (r itself may be too large for a float)
    emax, emin = (1 << (ebits - 1)) - 1, 2 - (1 << (ebits - 1))
    num, den = abs(r.numerator), r.denominator
    e = num.bit_length() - den.bit_length()  # 2^e <= |r| < 2^(e+2)
    if Fraction(num, den) < Fraction(2) ** e:
        e -= 1
    quantum = Fraction(2) ** (max(e, emin) - p + 1)
    scaled = r / quantum
    n = TO_INTEGER[mode](scaled)
    largest = (2 - Fraction(2) ** (1 - p)) * Fraction(2) ** emax
    value = n * quantum
    if abs(value) > largest:
        to_inf = mode in ("RNE", "RNA") or (mode == "RTP" and r > 0) or \
            (mode == "RTN" and r < 0)
        return math.copysign(math.inf if to_inf else float(largest), sign)
    if value == 0:
        return math.copysign(0.0, sign)
    return float(value)


def _half_even(x: Fraction) -> int:
    return round(x)  # Fraction.__round__ ties to even


def _half_away(x: Fraction) -> int:
    n = math.floor(abs(x) + Fraction(1, 2))
    return n if x >= 0 else -n


# an exact real to an integer, by rounding mode
TO_INTEGER = {"RNE": _half_even, "RNA": _half_away, "RTZ": math.trunc, "RTP": math.ceil,
              "RTN": math.floor}


_STRUCT = {(8, 24): "f", (5, 11): "e"}  # formats the host rounds to (ties to even)


def to_format(x: float, fmt: tuple[int, int], mode: str = "RNE") -> float:
    """`x` rounded to `fmt` by `mode`."""
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    if mode == "RNE" and fmt == (11, 53):
        return x
    if mode == "RNE" and fmt in _STRUCT:
        code = _STRUCT[fmt]
        try:
            return struct.unpack(code, struct.pack(code, x))[0]
        except OverflowError:
            return math.copysign(math.inf, x)
    return round_real(x, fmt, mode)


def float_of_bits(bits: int, fmt: tuple[int, int]) -> float:
    ebits, p = fmt
    sign, exp = bits >> (ebits + p - 1), (bits >> (p - 1)) & ((1 << ebits) - 1)
    frac = bits & ((1 << (p - 1)) - 1)
    if exp == (1 << ebits) - 1:
        value = math.nan if frac else math.inf
    elif exp == 0:
        value = math.ldexp(frac, 2 - (1 << (ebits - 1)) - (p - 1))
    else:
        value = math.ldexp(frac | (1 << (p - 1)), exp - ((1 << (ebits - 1)) - 1) - (p - 1))
    return -value if sign else value


def bits_of_float(x: float, fmt: tuple[int, int]) -> int:
    ebits, p = fmt
    if math.isnan(x):
        return ((1 << ebits) - 1) << (p - 1) | 1 << (p - 2)
    sign = 1 << (ebits + p - 1) if math.copysign(1.0, x) < 0 else 0
    x = abs(x)
    if math.isinf(x):
        return sign | ((1 << ebits) - 1) << (p - 1)
    if x == 0:
        return sign
    bias = (1 << (ebits - 1)) - 1
    m, e = math.frexp(x)  # x = m * 2^e, 0.5 <= m < 1
    exp = e - 1 + bias
    if exp <= 0:  # subnormal
        return sign | int(math.ldexp(x, bias - 1 + p - 1))
    return sign | exp << (p - 1) | (int(math.ldexp(m, p)) & ((1 << (p - 1)) - 1))


def ieee_operation(op: Callable, host: Callable, mirror: Callable) -> Callable:
    """An IEEE operation: on finite operands exact, then rounded once (with ties to even
    the host's double operation, then a rounding to the format, which is the same for
    one operation on formats of at most 24 bits); elsewhere the host's, exact there.
    `mirror(*xs)`: operands whose exact result is the negation of `op(*xs)`."""
    def apply(fmt: tuple[int, int], mode: str, *xs: float) -> float:
        if not all(math.isfinite(x) for x in xs) or (op is operator.truediv and xs[1] == 0):
            return host(*xs)
        if mode == "RNE" and len(xs) == 2 and (fmt == (11, 53) or fmt in _STRUCT):
            return to_format(host(*xs), fmt)
        exact = op(*(Fraction(x) for x in xs))
        if exact != 0:
            return round_real(exact, fmt, mode)
        # an exact zero's sign: the host's, which is that of every mode but RTN; toward
        # -inf a sum of opposite signs is -0 (IEEE 754 6.3), so the mirror's, negated
        return -host(*mirror(*xs)) if mode == "RTN" else host(*xs)
    return apply


def ieee_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def round_integral(mode: str, x: float) -> float:
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    f = Fraction(x)
    n = TO_INTEGER[mode](f)
    return math.copysign(float(n), x) if n == 0 else float(n)


def to_int(mode: str, x: float, w: int, signed: bool) -> int | None:
    """fp.to_sbv / fp.to_ubv: None out of range (SMT-LIB leaves it unspecified)."""
    if math.isnan(x) or math.isinf(x):
        return None
    n = int(round_integral(mode, x))
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return n % (1 << w) if lo <= n <= hi else None


def fp_min(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b) or a < b:
        return a
    return b if b < a else a  # fp.min of +0 and -0: SMT-LIB leaves it open, either


def fp_max(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b) or a > b:
        return a
    return b if b > a else a


def from_int(x: int, fmt: tuple[int, int], mode: str) -> float:
    return 0.0 if x == 0 else round_real(Fraction(x), fmt, mode)


def sqrt(mode: str, x: float, fmt: tuple[int, int]) -> float | None:
    if math.isnan(x) or x < 0:
        return math.nan if x != 0 else x
    if math.isinf(x) or x == 0:
        return x
    if mode != "RNE" or fmt[1] > 24:  # the host's sqrt is exact only after one rounding
        return math.sqrt(x) if fmt == (11, 53) and mode == "RNE" else None
    return to_format(math.sqrt(x), fmt)


def remainder(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return x if math.isinf(y) else math.remainder(x, y)
