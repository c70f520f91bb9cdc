"""The Z3 operators the house interprets outside Z3, one row each, keyed by decl kind: the
operator's exact value on plain Python values, its numpy spelling (what `fast/codegen.py`
writes), and what it does to IEEE value classes (what `smt/sweeping/ieee_classes.py`
reads), side by side, so that the simulator, the fast path and the class rules read one
table. tests/test_ops.py holds each row against z3's own evaluation of the operator.

A row's `family` says how its value reads its operands:
- "arith", "bitwise": value(x, y) of unsigned ints, cut to the width after;
- "division": value(x, y, w) of unsigned ints of w bits (SMT-LIB's division by zero);
- "unsigned", "signed": a compare, value(x, y) of the unsigned or signed readings;
- "logic": a Boolean connective, value(xs) of the tuple of its operands (and, or
  take any number);
- "fp compare": value(x, y) of floats (false on a NaN);
- "fp test": value(x, fmt) of a float of format fmt (ebits, sbits);
- "fp": value(fmt, *operands), a rounding mode's name first where the operator has one;
  None where Python cannot round it exactly.
A numpy spelling is an infix operator, or for an "fp test" a template over the float's
bits {b}, its float view {view} and its format's masks {sign}, {inf} (the exponent's
bits) and {man} (the fraction's).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import z3

from . import floats

# IEEE value classes, one bit each (a set of classes is their or)
NAN, PLUS_ZERO, MINUS_ZERO, PLUS_INF, MINUS_INF, POSITIVE, NEGATIVE = (1 << k for k in range(7))
ANY = (1 << 7) - 1
ZERO, INF = PLUS_ZERO | MINUS_ZERO, PLUS_INF | MINUS_INF
SIGN_MINUS = MINUS_ZERO | MINUS_INF | NEGATIVE  # fp.isNegative (false for a NaN)
SIGN_PLUS = PLUS_ZERO | PLUS_INF | POSITIVE


@dataclass(frozen=True)
class Op:
    family: str
    value: Callable
    numpy: str | None = None  # None: the fast path does not compile it
    propagates: bool = False  # an IEEE operation: a NaN operand gives a NaN
    invalid: tuple[tuple[int, ...], ...] = ()  # operand classes that make a NaN of numbers
    holds: int | None = None  # an "fp test": the classes for which it holds
    # an "fp compare" of x, y besides neither being a NaN: (x < y, y < x), each True
    # (must hold), False (must not) or None (either); the truth tables read it
    order: tuple[bool | None, bool | None] | None = None


def signed(x: int, w: int) -> int:
    """The signed reading of the w-bit pattern x."""
    return x - (1 << w) if x >> (w - 1) else x


def _udiv(a: int, b: int, w: int) -> int:
    return (1 << w) - 1 if b == 0 else a // b


def _urem(a: int, b: int, w: int) -> int:
    return a if b == 0 else a % b


def _sdiv(a: int, b: int, w: int) -> int:
    x, y = signed(a, w), signed(b, w)
    if y == 0:
        return 1 if x < 0 else (1 << w) - 1
    q = abs(x) // abs(y)
    return (q if (x < 0) == (y < 0) else -q) % (1 << w)


def _srem(a: int, b: int, w: int) -> int:
    x, y = signed(a, w), signed(b, w)
    if y == 0:
        return a
    r = abs(x) % abs(y)
    return (-r if x < 0 else r) % (1 << w)


def _smod(a: int, b: int, w: int) -> int:
    x, y = signed(a, w), signed(b, w)
    return a if y == 0 else (x - y * math.floor(Fraction(x, y))) % (1 << w)


def _normal(x: float, fmt: tuple[int, int], normal: bool = True) -> bool:
    tiny = math.ldexp(1.0, 2 - (1 << (fmt[0] - 1)))  # the least normal magnitude
    return not math.isnan(x) and not math.isinf(x) and x != 0 and (abs(x) >= tiny) == normal


def _sign(x: float) -> float:
    return math.copysign(1, x)


def _fma(a, b, c):
    return a * b + c


def _fma_host(a: float, b: float, c: float) -> float:
    """fma where an operand is not finite: a finite product (which the host's may
    overflow) plus an infinity is that infinity."""
    return c if math.isinf(c) and math.isfinite(a) and math.isfinite(b) else a * b + c


def _all_negated(*xs):
    return tuple(-x for x in xs)


def _first_negated(x, *xs):
    return (-x, *xs)


def _fma_negated(a, b, c):
    return -a, b, -c


OPS: dict[int, Op] = {
    # bit-vectors: exact on ints, then cut to the width
    z3.Z3_OP_BADD: Op("arith", operator.add, "+"),
    z3.Z3_OP_BSUB: Op("arith", operator.sub, "-"),
    z3.Z3_OP_BMUL: Op("arith", operator.mul, "*"),
    z3.Z3_OP_BAND: Op("bitwise", operator.and_, "&"),
    z3.Z3_OP_BOR: Op("bitwise", operator.or_, "|"),
    z3.Z3_OP_BXOR: Op("bitwise", operator.xor, "^"),
    z3.Z3_OP_BUDIV: Op("division", _udiv), z3.Z3_OP_BUDIV_I: Op("division", _udiv),
    z3.Z3_OP_BUREM: Op("division", _urem), z3.Z3_OP_BUREM_I: Op("division", _urem),
    z3.Z3_OP_BSDIV: Op("division", _sdiv), z3.Z3_OP_BSDIV_I: Op("division", _sdiv),
    z3.Z3_OP_BSREM: Op("division", _srem), z3.Z3_OP_BSREM_I: Op("division", _srem),
    z3.Z3_OP_BSMOD: Op("division", _smod), z3.Z3_OP_BSMOD_I: Op("division", _smod),
    z3.Z3_OP_ULT: Op("unsigned", operator.lt, "<"),
    z3.Z3_OP_ULEQ: Op("unsigned", operator.le, "<="),
    z3.Z3_OP_UGT: Op("unsigned", operator.gt, ">"),
    z3.Z3_OP_UGEQ: Op("unsigned", operator.ge, ">="),
    z3.Z3_OP_SLT: Op("signed", operator.lt, "<"),
    z3.Z3_OP_SLEQ: Op("signed", operator.le, "<="),
    z3.Z3_OP_SGT: Op("signed", operator.gt, ">"),
    z3.Z3_OP_SGEQ: Op("signed", operator.ge, ">="),
    # Booleans
    z3.Z3_OP_AND: Op("logic", all, "&"),
    z3.Z3_OP_OR: Op("logic", any, "|"),
    z3.Z3_OP_XOR: Op("logic", lambda xs: xs[0] != xs[1], "^"),
    # floats: compares (false on a NaN) and class tests
    z3.Z3_OP_FPA_LT: Op("fp compare", operator.lt, "<", order=(True, None)),
    z3.Z3_OP_FPA_LE: Op("fp compare", operator.le, "<=", order=(None, False)),
    z3.Z3_OP_FPA_GT: Op("fp compare", operator.gt, ">", order=(None, True)),
    z3.Z3_OP_FPA_GE: Op("fp compare", operator.ge, ">=", order=(False, None)),
    z3.Z3_OP_FPA_EQ: Op("fp compare", operator.eq, "==", order=(False, False)),
    z3.Z3_OP_FPA_IS_NAN: Op("fp test", lambda x, fmt: math.isnan(x), "isnan({view})",
                            holds=NAN),
    z3.Z3_OP_FPA_IS_INF: Op("fp test", lambda x, fmt: math.isinf(x), "isinf({view})",
                            holds=INF),
    z3.Z3_OP_FPA_IS_ZERO: Op("fp test", lambda x, fmt: x == 0, "({b} & {sign_less}) == 0",
                             holds=ZERO),
    z3.Z3_OP_FPA_IS_SUBNORMAL: Op("fp test", lambda x, fmt: _normal(x, fmt, False),
                                  "(({b} & {inf}) == 0) & (({b} & {man}) != 0)"),
    z3.Z3_OP_FPA_IS_NORMAL: Op("fp test", _normal,
                               "(({b} & {inf}) != 0) & (({b} & {inf}) != {inf})"),
    # sign set and not NaN: flipping the sign bit leaves at most infinity's bits
    z3.Z3_OP_FPA_IS_NEGATIVE: Op("fp test", lambda x, fmt: not math.isnan(x) and _sign(x) < 0,
                                 "({b} ^ {sign}) <= {inf}", holds=SIGN_MINUS),
    z3.Z3_OP_FPA_IS_POSITIVE: Op("fp test", lambda x, fmt: not math.isnan(x) and _sign(x) > 0,
                                 "{b} <= {inf}", holds=SIGN_PLUS),
    # IEEE operations: a NaN in, a NaN out; and the operand classes that are invalid
    # (IEEE 754 7.2: a NaN of numbers)
    z3.Z3_OP_FPA_ADD: Op("fp", floats.ieee_operation(operator.add, operator.add, _all_negated),
                         propagates=True, invalid=((PLUS_INF, MINUS_INF), (MINUS_INF, PLUS_INF))),
    z3.Z3_OP_FPA_SUB: Op("fp", floats.ieee_operation(operator.sub, operator.sub, _all_negated),
                         propagates=True, invalid=((PLUS_INF, PLUS_INF), (MINUS_INF, MINUS_INF))),
    z3.Z3_OP_FPA_MUL: Op("fp", floats.ieee_operation(operator.mul, operator.mul,
                                                     _first_negated),
                         propagates=True, invalid=((ZERO, INF), (INF, ZERO))),
    z3.Z3_OP_FPA_DIV: Op("fp", floats.ieee_operation(operator.truediv, floats.ieee_div,
                                                     _first_negated),
                         propagates=True, invalid=((ZERO, ZERO), (INF, INF))),
    z3.Z3_OP_FPA_FMA: Op("fp", floats.ieee_operation(_fma, _fma_host, _fma_negated),
                         propagates=True),
    z3.Z3_OP_FPA_SQRT: Op("fp", lambda fmt, mode, x: floats.sqrt(mode, x, fmt),
                          propagates=True),
    z3.Z3_OP_FPA_REM: Op("fp", lambda fmt, x, y: floats.remainder(x, y), propagates=True),
    z3.Z3_OP_FPA_ROUND_TO_INTEGRAL: Op("fp", lambda fmt, mode, x: floats.round_integral(mode, x),
                                       propagates=True),
    z3.Z3_OP_FPA_NEG: Op("fp", lambda fmt, x: -x),
    z3.Z3_OP_FPA_ABS: Op("fp", lambda fmt, x: abs(x)),
    z3.Z3_OP_FPA_MIN: Op("fp", lambda fmt, x, y: floats.fp_min(x, y)),
    z3.Z3_OP_FPA_MAX: Op("fp", lambda fmt, x, y: floats.fp_max(x, y)),
}


def family(*names: str) -> dict[int, Op]:
    """The rows of these families."""
    return {k: op for k, op in OPS.items() if op.family in names}


def spellings(*names: str) -> dict[int, str]:
    """The numpy spellings of the rows of these families."""
    return {k: op.numpy for k, op in family(*names).items() if op.numpy is not None}


def values(*names: str) -> dict[int, Callable]:
    return {k: op.value for k, op in family(*names).items()}

