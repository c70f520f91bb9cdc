"""An exact IEEE-754 oracle for the rounding families: rational arithmetic
(fractions.Fraction) and one rounding step to a binary format in a direction.

Test-only: it must not import z3 or ``ptxsmt``. Values are register bits (ints);
formats are named as in tests/oracle.py: f16, bf16, f32, f64.

    round_to(Fraction(1, 3), "f32", "rz")          -> 0x3eaaaaaa
    arith("add", "rm", "f32", a_bits, b_bits)      -> bits, or NAN (caller picks NaN bits)

IEEE-754 rules written out here, each once: the result of an exact operation is
rounded in its direction (overflow goes to infinity or to the largest finite value,
by direction); an exact zero sum of opposite signs is +0, or -0 rounding toward -inf;
a product's or quotient's sign is the xor of the signs; invalid operations give NaN.
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt

FORMATS = {"f16": (5, 10), "bf16": (8, 7), "f32": (8, 23), "f64": (11, 52),  # (exp, man)
           "tf32": (8, 10)}  # PTX's tf32: an f32's high 19 bits
NAN = "nan"  # an operation's NaN result: its bits are the caller's (the ISA's) to choose
DIRECTIONS = ("rn", "rz", "rm", "rp")


class Value:
    """A decoded float: NaN, ±inf or a finite rational with its sign (for ±0)."""

    def __init__(self, kind: str, sign: int = 0, q: Fraction = Fraction(0)):
        self.kind, self.sign, self.q = kind, sign, q  # kind: "nan", "inf", "fin"

    @property
    def is_zero(self) -> bool:
        return self.kind == "fin" and self.q == 0


def decode(bits: int, fmt: str) -> Value:
    e, m = FORMATS[fmt]
    sign, exp, frac = bits >> (e + m), (bits >> m) & ((1 << e) - 1), bits & ((1 << m) - 1)
    bias = (1 << (e - 1)) - 1
    if exp == (1 << e) - 1:
        return Value("nan") if frac else Value("inf", sign)
    mant = frac if exp == 0 else frac | (1 << m)
    q = Fraction(mant) * Fraction(2) ** ((exp or 1) - bias - m)
    return Value("fin", sign, -q if sign else q)


def is_subnormal(bits: int, fmt: str) -> bool:
    e, m = FORMATS[fmt]
    return (bits >> m) & ((1 << e) - 1) == 0 and bits & ((1 << m) - 1) != 0


def flush(bits: int, fmt: str) -> int:
    e, m = FORMATS[fmt]
    return bits & (1 << (e + m)) if is_subnormal(bits, fmt) else bits


def _inf(sign: int, fmt: str) -> int:
    e, m = FORMATS[fmt]
    return (sign << (e + m)) | (((1 << e) - 1) << m)


def _max_finite(sign: int, fmt: str) -> int:
    return _inf(sign, fmt) - 1


def round_to(q: Fraction, fmt: str, direction: str, zero_sign: int = 0) -> int:
    """The bits of rational q rounded to `fmt` in `direction`; an exact zero gets
    `zero_sign`, a nonzero q that rounds to zero keeps its own sign."""
    e, m = FORMATS[fmt]
    bias = (1 << (e - 1)) - 1
    if q == 0:
        return zero_sign << (e + m)
    sign, a = (1, -q) if q < 0 else (0, q)
    # the exponent k with 2**k <= a < 2**(k+1), clamped to the subnormal range
    k = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** k > a:
        k -= 1
    k = max(k, 1 - bias)
    scaled = a / Fraction(2) ** (k - m)  # the significand in units of the last place
    n, rest = divmod(scaled.numerator, scaled.denominator)
    rest = Fraction(rest, scaled.denominator)
    up = {"rn": rest > Fraction(1, 2) or (rest == Fraction(1, 2) and n % 2 == 1),
          "rna": rest >= Fraction(1, 2),  # nearest, ties away from zero (PTX cvt .rna)
          "rz": False, "rm": rest > 0 and sign == 1, "rp": rest > 0 and sign == 0}[direction]
    n += up
    if n == 1 << (m + 1):  # rounding carried into the next binade
        n, k = n >> 1, k + 1
    if k > bias:  # overflow: infinity, or the largest finite value, by direction
        to_inf = {"rn": True, "rna": True, "rz": False, "rm": sign == 1,
                  "rp": sign == 0}[direction]
        return _inf(sign, fmt) if to_inf else _max_finite(sign, fmt)
    exp = k + bias if n >> m else 0  # no hidden bit: a subnormal (or zero)
    return (sign << (e + m)) | (exp << m) | (n & ((1 << m) - 1))


def _sum_zero_sign(direction: str) -> int:
    """"x + (-x) = +0 ... except that in roundTowardNegative it is -0" (IEEE 754 6.3)."""
    return 1 if direction == "rm" else 0


def add(x: Value, y: Value, fmt: str, direction: str):
    if "nan" in (x.kind, y.kind) or (x.kind == y.kind == "inf" and x.sign != y.sign):
        return NAN
    if x.kind == "inf" or y.kind == "inf":
        return _inf(x.sign if x.kind == "inf" else y.sign, fmt)
    if x.is_zero and y.is_zero and x.sign == y.sign:
        return round_to(Fraction(0), fmt, direction, x.sign)
    return round_to(x.q + y.q, fmt, direction, _sum_zero_sign(direction))


def neg(x: Value) -> Value:
    return Value(x.kind, 1 - x.sign, -x.q)


def mul(x: Value, y: Value, fmt: str, direction: str):
    if "nan" in (x.kind, y.kind):
        return NAN
    sign = x.sign ^ y.sign
    if "inf" in (x.kind, y.kind):
        return NAN if x.is_zero or y.is_zero else _inf(sign, fmt)
    return round_to(x.q * y.q, fmt, direction, sign)


def fma(x: Value, y: Value, z: Value, fmt: str, direction: str):
    """x*y + z with one rounding."""
    if "nan" in (x.kind, y.kind, z.kind):
        return NAN
    sign = x.sign ^ y.sign
    if "inf" in (x.kind, y.kind):
        if x.is_zero or y.is_zero or (z.kind == "inf" and z.sign != sign):
            return NAN
        return _inf(sign, fmt)
    if z.kind == "inf":
        return _inf(z.sign, fmt)
    p = x.q * y.q
    if p == 0 and z.is_zero and sign == z.sign:
        return round_to(Fraction(0), fmt, direction, sign)
    return round_to(p + z.q, fmt, direction, _sum_zero_sign(direction))


def div(x: Value, y: Value, fmt: str, direction: str):
    if "nan" in (x.kind, y.kind) or (x.kind == y.kind == "inf") or (x.is_zero and y.is_zero):
        return NAN
    sign = x.sign ^ y.sign
    if x.kind == "inf" or y.is_zero:
        return _inf(sign, fmt)
    if y.kind == "inf":
        return sign << sum(FORMATS[fmt])
    return round_to(x.q / y.q, fmt, direction, sign)


def sqrt(x: Value, fmt: str, direction: str):
    if x.kind == "nan" or (x.sign and not x.is_zero):
        return NAN
    if x.kind == "inf" or x.is_zero:
        return _inf(0, fmt) if x.kind == "inf" else x.sign << sum(FORMATS[fmt])
    # sqrt(q) to 2*(m+3) bits past the format's precision, with a sticky bit: enough for
    # one correct rounding (an exact square root is found exactly)
    e, m = FORMATS[fmt]
    shift = 2 * (m + 8 + max(0, x.q.denominator.bit_length()))
    scaled = x.q * Fraction(4) ** shift
    n = scaled.numerator // scaled.denominator
    r = isqrt(n)
    exact = r * r == n and scaled.denominator == 1
    root = Fraction(r, 2 ** shift)
    if not exact:  # strictly between r and r+1 units: nudge, so no tie is seen
        root += Fraction(1, 2 ** (shift + 1))
    return round_to(root, fmt, direction)


def arith(op: str, direction: str, fmt: str, *bits: int):
    """add/sub/mul/fma/div/sqrt/rcp of register bits in `fmt`: bits or NAN."""
    xs = [decode(b, fmt) for b in bits]
    if op == "add":
        return add(xs[0], xs[1], fmt, direction)
    if op == "sub":
        return add(xs[0], neg(xs[1]), fmt, direction)
    if op == "mul":
        return mul(xs[0], xs[1], fmt, direction)
    if op in ("fma", "mad"):
        return fma(xs[0], xs[1], xs[2], fmt, direction)
    if op == "div":
        return div(xs[0], xs[1], fmt, direction)
    if op == "rcp":
        return div(Value("fin", 0, Fraction(1)), xs[0], fmt, direction)
    if op == "sqrt":
        return sqrt(xs[0], fmt, direction)
    raise ValueError(f"unsupported operation {op!r}")


def round_integral(x: Value, direction: str) -> Value:
    """x rounded to an integral value in `direction` (NaN and inf unchanged; the sign of
    a zero result is x's)."""
    if x.kind != "fin":
        return x
    q = x.q
    fl = q.numerator // q.denominator
    frac = q - fl
    n = {"rn": fl + (frac > Fraction(1, 2) or (frac == Fraction(1, 2) and fl % 2 == 1)),
         "rz": fl if q >= 0 else -((-q.numerator) // q.denominator),
         "rm": fl, "rp": fl + (frac > 0)}[direction]
    return Value("fin", x.sign, Fraction(n))


def to_format(x: Value, fmt: str, direction: str):
    """x (decoded in any format) rounded to `fmt`: bits or NAN."""
    if x.kind == "nan":
        return NAN
    if x.kind == "inf":
        return _inf(x.sign, fmt)
    return round_to(x.q, fmt, direction, x.sign)
