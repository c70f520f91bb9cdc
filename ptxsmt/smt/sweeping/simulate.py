"""Z3 terms evaluated on many inputs at once, node by node: the simulation that
equivalence sweeping (`fraig.py`) groups values by.

This interprets Z3's operators (SMT-LIB's meaning), not PTX: every value derives from
the terms. A value is a list, one entry per input vector: an int for a bit-vector (its
unsigned value), a bool, a Python float for a floating-point number (exactly its value
in its format), or a rounding-mode name. What it does not interpret (arrays, free
functions, rounding it cannot do exactly) is None, and so is every node above it: a
guess is never made, since sweeping only proves what simulation suggests, and a node
without a value is simply not a candidate.
"""

from __future__ import annotations

import hashlib
import math
import operator
import random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import z3

Values = list | None


def _signed(x: int, w: int) -> int:
    return x - (1 << w) if x >> (w - 1) else x


# ---- floating point, any format, exactly ----

def _format(s: z3.FPSortRef) -> tuple[int, int]:
    return s.ebits(), s.sbits()


def _round(x: Fraction | float, fmt: tuple[int, int], mode: str) -> float:
    """The exact real `x` (nonzero, finite) rounded to the format `fmt` (ebits, sbits)
    by `mode`, IEEE 754: subnormals, overflow to infinity or the largest finite."""
    ebits, p = fmt
    r = Fraction(x)
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
        return math.copysign(math.inf if to_inf else float(largest), r)
    if value == 0:
        return math.copysign(0.0, r)
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


def _to_format(x: float, fmt: tuple[int, int], mode: str = "RNE") -> float:
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
    return _round(x, fmt, mode)


def _float_of_bits(bits: int, fmt: tuple[int, int]) -> float:
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


def _bits_of_float(x: float, fmt: tuple[int, int]) -> int:
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


def _arith(op: Callable, host: Callable) -> Callable:
    """An IEEE operation: on finite operands exact, then rounded once (with ties to even
    the host's double operation, then a rounding to the format, which is the same for
    one operation on formats of at most 24 bits); elsewhere the host's, exact there."""
    def apply(mode: str, fmt: tuple[int, int], *xs: float) -> float:
        if not all(math.isfinite(x) for x in xs) or (op is operator.truediv and xs[1] == 0):
            return host(*xs)
        if mode == "RNE" and len(xs) == 2 and (fmt == (11, 53) or fmt in _STRUCT):
            return _to_format(host(*xs), fmt)
        exact = op(*(Fraction(x) for x in xs))
        return host(*xs) if exact == 0 else _round(exact, fmt, mode)  # the host: zero's sign
    return apply


def _ieee_div(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


_FP_ARITH = {
    z3.Z3_OP_FPA_ADD: _arith(operator.add, operator.add),
    z3.Z3_OP_FPA_SUB: _arith(operator.sub, operator.sub),
    z3.Z3_OP_FPA_MUL: _arith(operator.mul, operator.mul),
    z3.Z3_OP_FPA_DIV: _arith(operator.truediv, _ieee_div),
    z3.Z3_OP_FPA_FMA: _arith(lambda a, b, c: a * b + c, lambda a, b, c: a * b + c),
}


def _round_integral(mode: str, x: float) -> float:
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    f = Fraction(x)
    n = TO_INTEGER[mode](f)
    return math.copysign(float(n), x) if n == 0 else float(n)


def _to_int(mode: str, x: float, w: int, signed: bool) -> int | None:
    """fp.to_sbv / fp.to_ubv: None out of range (SMT-LIB leaves it unspecified)."""
    if math.isnan(x) or math.isinf(x):
        return None
    n = int(_round_integral(mode, x))
    lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if signed else (0, (1 << w) - 1)
    return n % (1 << w) if lo <= n <= hi else None


def _fp_min(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b) or a < b:
        return a
    return b if b < a else a  # fp.min of +0 and -0: SMT-LIB leaves it open, either


def _fp_max(a: float, b: float) -> float:
    if math.isnan(a):
        return b
    if math.isnan(b) or a > b:
        return a
    return b if b > a else a


_RM = {z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_EVEN: "RNE", z3.Z3_OP_FPA_RM_NEAREST_TIES_TO_AWAY: "RNA",
       z3.Z3_OP_FPA_RM_TOWARD_ZERO: "RTZ", z3.Z3_OP_FPA_RM_TOWARD_POSITIVE: "RTP",
       z3.Z3_OP_FPA_RM_TOWARD_NEGATIVE: "RTN"}

_FP_CLASS = {
    z3.Z3_OP_FPA_IS_NAN: math.isnan, z3.Z3_OP_FPA_IS_INF: math.isinf,
    z3.Z3_OP_FPA_IS_ZERO: lambda x: x == 0,
    z3.Z3_OP_FPA_IS_NEGATIVE: lambda x: not math.isnan(x) and math.copysign(1, x) < 0,
    z3.Z3_OP_FPA_IS_POSITIVE: lambda x: not math.isnan(x) and math.copysign(1, x) > 0,
}
_FP_COMPARE = {z3.Z3_OP_FPA_LT: operator.lt, z3.Z3_OP_FPA_LE: operator.le,
               z3.Z3_OP_FPA_GT: operator.gt, z3.Z3_OP_FPA_GE: operator.ge,
               z3.Z3_OP_FPA_EQ: operator.eq}

# ---- bit-vectors and Booleans ----

_BV_BINARY = {z3.Z3_OP_BADD: operator.add, z3.Z3_OP_BSUB: operator.sub,
              z3.Z3_OP_BMUL: operator.mul, z3.Z3_OP_BAND: operator.and_,
              z3.Z3_OP_BOR: operator.or_, z3.Z3_OP_BXOR: operator.xor}
_U_COMPARE = {z3.Z3_OP_ULT: operator.lt, z3.Z3_OP_ULEQ: operator.le,
              z3.Z3_OP_UGT: operator.gt, z3.Z3_OP_UGEQ: operator.ge}
_S_COMPARE = {z3.Z3_OP_SLT: operator.lt, z3.Z3_OP_SLEQ: operator.le,
              z3.Z3_OP_SGT: operator.gt, z3.Z3_OP_SGEQ: operator.ge}


def _udiv(a: int, b: int, w: int) -> int:
    return (1 << w) - 1 if b == 0 else a // b


def _urem(a: int, b: int, w: int) -> int:
    return a if b == 0 else a % b


def _sdiv(a: int, b: int, w: int) -> int:
    x, y = _signed(a, w), _signed(b, w)
    if y == 0:
        return 1 if x < 0 else (1 << w) - 1
    q = abs(x) // abs(y)
    return (q if (x < 0) == (y < 0) else -q) % (1 << w)


def _srem(a: int, b: int, w: int) -> int:
    x, y = _signed(a, w), _signed(b, w)
    if y == 0:
        return a
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) % (1 << w)


def _smod(a: int, b: int, w: int) -> int:
    x, y = _signed(a, w), _signed(b, w)
    return a if y == 0 else (x - y * math.floor(Fraction(x, y))) % (1 << w)


_DIVISION = {z3.Z3_OP_BUDIV: _udiv, z3.Z3_OP_BUDIV_I: _udiv, z3.Z3_OP_BUREM: _urem,
             z3.Z3_OP_BUREM_I: _urem, z3.Z3_OP_BSDIV: _sdiv, z3.Z3_OP_BSDIV_I: _sdiv,
             z3.Z3_OP_BSREM: _srem, z3.Z3_OP_BSREM_I: _srem, z3.Z3_OP_BSMOD: _smod,
             z3.Z3_OP_BSMOD_I: _smod}


def _map(f: Callable, args: Sequence[list]) -> list | None:
    out = [f(*xs) for xs in zip(*args, strict=True)]
    return None if any(v is None for v in out) else out


@dataclass(frozen=True)
class Sort:
    """What evaluation needs of a sort: "bv" of `width` bits, "bool", "fp" of `fmt`
    (ebits, sbits), "rm" (a rounding mode) or "other"."""

    kind: str
    width: int = 0
    fmt: tuple[int, int] = (0, 0)


def sort_of(s: z3.SortRef) -> Sort:
    if isinstance(s, z3.FPSortRef):
        return Sort("fp", s.ebits() + s.sbits(), _format(s))
    if isinstance(s, z3.BitVecSortRef):
        return Sort("bv", s.size())
    if s.kind() == z3.Z3_BOOL_SORT:
        return Sort("bool", 1)
    return Sort("rm" if isinstance(s, z3.FPRMSortRef) else "other")


@dataclass(frozen=True)
class Node:
    """One node of a term DAG, read from Z3 once (its Python API costs more than the
    evaluation): the operator, its sort and its children's, parameters, a constant."""

    kind: int
    sort: Sort
    kids: tuple[Sort, ...]
    params: tuple = ()
    name: str = ""  # a function symbol's
    const: object = None  # a numeral's value (an int, a float), a rounding mode's name
    leaf: bool = False


def read_node(n: z3.ExprRef, children: Sequence[z3.ExprRef]) -> Node:
    k = n.decl().kind() if z3.is_app(n) else -1
    sort = sort_of(n.sort())
    const = None
    if z3.is_bv_value(n):
        const = n.as_long()
    elif k in _RM:
        const = _RM[k]
    elif k == z3.Z3_OP_FPA_NAN:
        const = math.nan
    elif sort.kind == "fp" and not children:
        bits = z3.simplify(z3.fpToIEEEBV(n))
        const = _float_of_bits(bits.as_long(), sort.fmt) if z3.is_bv_value(bits) else None
    return Node(k, sort, tuple(sort_of(c.sort()) for c in children),
                tuple(n.params()) if z3.is_app(n) else (),
                n.decl().name() if k == z3.Z3_OP_UNINTERPRETED else "", const,
                z3.is_app(n) and not children)


def evaluate_node(n: Node, args: list[list], given: list | None, count: int) -> Values:
    """The node's `count` values, from its children's (`args`, in order, none None);
    `given`: an input's."""
    k = n.kind
    if k == z3.Z3_OP_UNINTERPRETED:
        return given if n.leaf else _free_function(n, args)
    if n.const is not None:
        return [n.const] * count
    if k in (z3.Z3_OP_TRUE, z3.Z3_OP_FALSE) or (k in (z3.Z3_OP_AND, z3.Z3_OP_OR) and not args):
        return [k in (z3.Z3_OP_TRUE, z3.Z3_OP_AND)] * count  # and of nothing is true
    kind = n.sort.kind
    if kind == "bv":
        return _bit_vector(n, k, args)
    if kind == "bool":
        return _boolean(n, k, args)
    return _floating(n, k, args) if kind == "fp" else None


def _free_function(n: Node, args: list[list]) -> Values:
    """A function symbol (an uninterpreted instruction, a NaN the ISA leaves open) as one
    fixed function: a hash of its name and arguments, so that equal arguments give equal
    results, as congruence says. Bit-vector results are often special (`_free_bits`)."""
    sort = n.sort

    def value(xs: tuple) -> object:
        h = int.from_bytes(hashlib.blake2b(repr((n.name, xs)).encode(), digest_size=16).digest())
        if sort.kind == "fp":
            return _float_of_bits(h & ((1 << sort.width) - 1), sort.fmt)
        if sort.kind == "bool":
            return bool(h & 1)
        return _free_bits(h, sort.width) if sort.kind == "bv" else None

    out = [value(tuple(_hashable(x) for x in xs)) for xs in zip(*args, strict=True)]
    return None if any(v is None for v in out) else out


def _free_bits(h: int, w: int) -> int:
    """A free value's bits from a 64-bit hash: a quarter of them special (`_specials`:
    infinities, zeros, the extremes), a quarter a NaN with a hashed payload, the rest
    uniform. Uniform bits are almost never a NaN or an infinity, so the values the
    semantics tells apart by them (an open NaN taken or the canonical one; `fp.isNaN`
    against "exponent all ones") would look alike on every input, and each such pair
    would cost a solver query that the counterexample, whose free functions simulation
    cannot take, does not stop from being asked again."""
    mask = (1 << w) - 1
    pick, rest = h & 3, h >> 2  # h: 128 bits
    if pick == 0:
        special = _specials(w)
        return special[rest % len(special)]
    fmt = _FLOAT_WIDTHS.get(w)
    if pick == 1 and fmt is not None:
        man = fmt[1] - 1  # a NaN: exponent all ones, fraction not zero, either sign
        fraction = (rest % ((1 << man) - 1)) + 1
        sign = (rest >> man) & 1
        return (sign << (w - 1)) | (((1 << fmt[0]) - 1) << man) | fraction
    return rest & mask


def _hashable(x: object) -> object:
    return struct.pack("d", x) if isinstance(x, float) else x


def _bit_vector(n: Node, k: int, args: list[list]) -> Values:
    w = n.sort.width
    mask = (1 << w) - 1
    c = n.kids
    if k in _BV_BINARY:
        op = _BV_BINARY[k]
        out = args[0]
        for a in args[1:]:
            out = [op(x, y) & mask for x, y in zip(out, a, strict=True)]
        return out
    if k == z3.Z3_OP_BNOT:
        return [~x & mask for x in args[0]]
    if k == z3.Z3_OP_BNEG:
        return [-x & mask for x in args[0]]
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k == z3.Z3_OP_EXTRACT:
        lo = n.params[1]
        return [(x >> lo) & mask for x in args[0]]
    if k == z3.Z3_OP_CONCAT:
        out = args[0]
        for child, a in zip(c[1:], args[1:], strict=True):
            out = [x << child.width | y for x, y in zip(out, a, strict=True)]
        return out
    if k == z3.Z3_OP_ZERO_EXT:
        return args[0]
    if k == z3.Z3_OP_SIGN_EXT:
        cw = c[0].width
        return [_signed(x, cw) & mask for x in args[0]]
    if k == z3.Z3_OP_BSHL:
        return [(x << y) & mask if y < w else 0 for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_BLSHR:
        return [x >> y if y < w else 0 for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_BASHR:
        return [(_signed(x, w) >> min(y, w)) & mask for x, y in zip(*args, strict=True)]
    if k in _DIVISION:
        f = _DIVISION[k]
        return [f(x, y, w) for x, y in zip(*args, strict=True)]
    if k in (z3.Z3_OP_ROTATE_LEFT, z3.Z3_OP_ROTATE_RIGHT):
        r = n.params[0] % w
        r = r if k == z3.Z3_OP_ROTATE_LEFT else (w - r) % w
        return [((x << r) | (x >> (w - r))) & mask for x in args[0]]
    if k == z3.Z3_OP_FPA_TO_IEEE_BV:
        fmt = c[0].fmt
        return [_bits_of_float(x, fmt) for x in args[0]]
    if k in (z3.Z3_OP_FPA_TO_UBV, z3.Z3_OP_FPA_TO_SBV):
        signed = k == z3.Z3_OP_FPA_TO_SBV
        return _map(lambda m, x: _to_int(m, x, w, signed), args)
    return None


def _boolean(n: Node, k: int, args: list[list]) -> Values:
    c = n.kids
    if k == z3.Z3_OP_AND:
        return [all(xs) for xs in zip(*args, strict=True)]
    if k == z3.Z3_OP_OR:
        return [any(xs) for xs in zip(*args, strict=True)]
    if k == z3.Z3_OP_NOT:
        return [not x for x in args[0]]
    if k == z3.Z3_OP_XOR:
        return [x != y for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_IMPLIES:
        return [(not x) or y for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k in (z3.Z3_OP_EQ, z3.Z3_OP_DISTINCT, z3.Z3_OP_IFF):
        if c[0].kind == "fp":  # SMT-LIB `=` on floats: the same datum (NaN = NaN, -0 != +0)
            fmt = c[0].fmt
            args = [[_bits_of_float(x, fmt) for x in a] for a in args]
        if k == z3.Z3_OP_DISTINCT:
            return [len(set(xs)) == len(xs) for xs in zip(*args, strict=True)]
        return [all(x == xs[0] for x in xs) for xs in zip(*args, strict=True)]
    if k in _U_COMPARE:
        op = _U_COMPARE[k]
        return [op(x, y) for x, y in zip(*args, strict=True)]
    if k in _S_COMPARE:
        op, w = _S_COMPARE[k], c[0].width
        return [op(_signed(x, w), _signed(y, w)) for x, y in zip(*args, strict=True)]
    if k in _FP_COMPARE:
        op = _FP_COMPARE[k]
        return [op(x, y) for x, y in zip(*args, strict=True)]
    if k in _FP_CLASS:
        return [bool(_FP_CLASS[k](x)) for x in args[0]]
    if k in (z3.Z3_OP_FPA_IS_NORMAL, z3.Z3_OP_FPA_IS_SUBNORMAL):
        ebits, _ = c[0].fmt
        tiny = math.ldexp(1.0, 2 - (1 << (ebits - 1)))
        normal = k == z3.Z3_OP_FPA_IS_NORMAL
        return [not math.isnan(x) and not math.isinf(x) and x != 0 and
                (abs(x) >= tiny) == normal for x in args[0]]
    return None


def _floating(n: Node, k: int, args: list[list]) -> Values:
    fmt = n.sort.fmt
    c = n.kids
    if k == z3.Z3_OP_ITE:
        return [y if b else z for b, y, z in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_FP:
        exp, sig = c[1].width, c[2].width
        return [_float_of_bits(s << (exp + sig) | e << sig | f, fmt)
                for s, e, f in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_TO_FP:
        if len(c) == 1:
            return [_float_of_bits(x, fmt) for x in args[0]]
        if len(c) == 2 and c[1].kind == "fp":
            return [_to_format(x, fmt, m) for m, x in zip(*args, strict=True)]
        if len(c) == 2 and c[1].kind == "bv":
            w = c[1].width
            return [_from_int(_signed(x, w), fmt, m) for m, x in zip(*args, strict=True)]
        return None
    if k == z3.Z3_OP_FPA_TO_FP_UNSIGNED:
        return [_from_int(x, fmt, m) for m, x in zip(*args, strict=True)]
    if k in _FP_ARITH:
        f = _FP_ARITH[k]
        return [f(m, fmt, *xs) for m, *xs in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_NEG:
        return [-x for x in args[0]]
    if k == z3.Z3_OP_FPA_ABS:
        return [abs(x) for x in args[0]]
    if k == z3.Z3_OP_FPA_MIN:
        return [_fp_min(x, y) for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_MAX:
        return [_fp_max(x, y) for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_SQRT:
        return _map(lambda m, x: _sqrt(m, x, fmt), args)
    if k == z3.Z3_OP_FPA_REM:
        return [_remainder(x, y) for x, y in zip(*args, strict=True)]
    if k == z3.Z3_OP_FPA_ROUND_TO_INTEGRAL:
        return [_round_integral(m, x) for m, x in zip(*args, strict=True)]
    return None


def _from_int(x: int, fmt: tuple[int, int], mode: str) -> float:
    return 0.0 if x == 0 else _round(Fraction(x), fmt, mode)


def _sqrt(mode: str, x: float, fmt: tuple[int, int]) -> float | None:
    if math.isnan(x) or x < 0:
        return math.nan if x != 0 else x
    if math.isinf(x) or x == 0:
        return x
    if mode != "RNE" or fmt[1] > 24:  # the host's sqrt is exact only after one rounding
        return math.sqrt(x) if fmt == (11, 53) and mode == "RNE" else None
    return _to_format(math.sqrt(x), fmt)


def _remainder(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return x if math.isinf(y) else math.remainder(x, y)


# ---- inputs ----

_FLOAT_WIDTHS = {16: (5, 11), 32: (8, 24), 64: (11, 53)}  # bits -> (exponent, precision)


@cache
def _specials(w: int) -> list[int]:
    mask = (1 << w) - 1
    out = [0, 1, 2, mask, mask - 1, 1 << (w - 1), (1 << (w - 1)) - 1, 3, 7]
    if w in _FLOAT_WIDTHS:
        fmt = _FLOAT_WIDTHS[w]
        p = fmt[1]
        out += [_bits_of_float(v, fmt) for v in
                (1.0, -1.0, -0.0, math.inf, -math.inf, math.nan, 0.5, 2.0, -2.0)]
        out += [1, (1 << (p - 1)) - 1]  # the smallest and the largest subnormal
    return [x & mask for x in out]


def input_vectors(inputs: Sequence[Sort], count: int, seed: int = 0) -> list[list | None]:
    """`count` values for each input (of these sorts; None for a sort without values):
    special values first, in turns, then random ones (uniform bits, small integers,
    floats of ordinary size)."""
    rng = random.Random(seed)
    out: list[list | None] = []
    for i, sort in enumerate(inputs):
        if sort.kind == "bool":
            out.append([rng.random() < 0.5 for _ in range(count)])
            continue
        if sort.kind != "bv":
            out.append(None)
            continue
        w = sort.width
        special = _specials(w)
        values = []
        for j in range(count):
            if j < 2 * len(special):
                values.append(special[(j + i * 5) % len(special)] if j % 2 == 0
                              else rng.choice(special))
            elif j % 3 == 0:
                values.append(rng.getrandbits(w))
            elif j % 3 == 1:
                values.append(rng.randint(-16, 16) & ((1 << w) - 1))
            else:
                values.append(_ordinary_float(rng, w))
        out.append(values)
    return out


def _ordinary_float(rng: random.Random, w: int) -> int:
    fmt = _FLOAT_WIDTHS.get(w)
    if fmt is None:
        return rng.getrandbits(w)
    value = rng.choice((-1, 1)) * rng.uniform(0.25, 4) * 2.0 ** rng.randint(-4, 4)
    return _bits_of_float(_to_format(value, fmt), fmt)


def as_key(values: list, sort: Sort) -> tuple:
    """Values as a hashable signature (floats by their bits: NaN equals NaN, -0 is not
    +0, as for SMT-LIB `=`)."""
    if sort.kind == "fp":
        return tuple(_bits_of_float(x, sort.fmt) for x in values)
    return tuple(values)


__all__ = ["Node", "Sort", "as_key", "evaluate_node", "input_vectors", "read_node", "sort_of"]
