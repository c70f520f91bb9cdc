"""PTX registers are bit-vectors; floats are a view of them.

The only module that knows Z3's FP sorts. NaN payloads and -0.0 stay in the
register bits; the FP view is taken inside a comparison, after FTZ. A
conversion is built from the bit fields instead (sign, exponent, fraction), so
exported SMT-LIB needs no `fp.to_ieee_bv`, which is Z3's and not the standard's.
The rounding families (add.rz, cvt.rn.f16.f32, ...) are the exception: their result
is an IEEE operation's, and `to_bits` is the one place that turns it into bits.
Values the ISA leaves open are uninterpreted functions (`free_nan`, `free_value`); an
evaluation may take them as a caller chooses (`take_open`) or as given by name
(`open[mul.rn.f32 NaN of 0x...]`, `open_inputs`): a counterexample's replay.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping

import z3

from ..isa.errors import PtxError, quote
from ..isa.literals import LiteralError, canonical_nan, fp_class, parse_value
from ..isa.types import BF16, F16, F32, F64, TYPES, FloatFormat, PtxType
from ..terms.walk import free_applications, is_free, subterms
from .unspecified import OpenValue

FORMATS = (F16, BF16, F32, F64)


def fp_sort(fmt: FloatFormat) -> z3.FPSortRef:
    return z3.FPSort(fmt.ebits, fmt.sbits)


def as_float(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.FPRef:
    """The float the bits stand for; the bits of an IEEE result (`to_bits`) read back as
    that very result, which they equal: `to_bits` writes every value but a NaN exactly
    and a NaN as a NaN (`free_nan` gives only NaNs). So a chain of float instructions is
    one chain of IEEE operations, with no round trip through bits between them."""
    sort = fp_sort(fmt)
    result = ieee_result(bits, sort)
    if result is not None:
        return result
    widened = _widened_nan_or_value(bits, fmt)
    if widened is not None:
        return as_float(widened, fmt)
    if z3.is_app_of(bits, z3.Z3_OP_ITE) and any(  # a selp of results: read each arm
            ieee_result(arm, sort) is not None for arm in bits.children()[1:]):
        test, yes, no = bits.children()
        return z3.If(test, as_float(yes, fmt), as_float(no, fmt))
    return z3.fpBVToFP(bits, sort)


def _widened_nan_or_value(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef | None:
    """w where `bits` is a widening cvt's `If(is_nan(a), any NaN, w)`, w = widen(a):
    as a float that is w, which is NaN exactly where a is (a float has one NaN; its
    bits are the register's, not the view's). So a cvt.f32.bf16 feeding an f32
    operation is the term `arith` widens a bf16 operand to."""
    if not z3.is_app_of(bits, z3.Z3_OP_ITE):
        return None
    test, nan, value = bits.children()
    a = test.arg(0).arg(0).arg(0) if z3.is_and(test) and test.num_args() == 2 and \
        z3.is_app_of(test.arg(0), z3.Z3_OP_EQ) and \
        z3.is_app_of(test.arg(0).arg(0), z3.Z3_OP_EXTRACT) else None
    if a is None or not _always_nan(nan, fp_sort(fmt)):
        return None
    for src in FORMATS:
        if src.width == a.size() and src is not fmt and test.eq(is_nan(a, src)) and \
                value.eq(widen(a, src, fmt)):
            return value
    return None


def ieee_result(bits: z3.BitVecRef, sort: z3.FPSortRef) -> z3.FPRef | None:
    """x where `bits` is `to_bits(x, nan)` (x of `sort`, `nan` as `free_nan` builds it),
    operands of and/or in any order."""
    if not z3.is_app_of(bits, z3.Z3_OP_ITE):
        return None
    test, nan, value = bits.children()
    if not (z3.is_app_of(value, z3.Z3_OP_FPA_TO_IEEE_BV) and value.arg(0).sort() == sort
            and test.eq(z3.fpIsNaN(value.arg(0))) and _always_nan(nan, sort)):
        return None
    return value.arg(0)


def _always_nan(bits: z3.BitVecRef, sort: z3.FPSortRef) -> bool:
    """`bits` is a NaN whatever the inputs: a NaN constant (the one an LLVM IR "any NaN"
    lane holds: llvm.values.some_nan), or built as `free_nan` builds a NaN: any NaN,
    else the canonical one."""
    fmt = next((f for f in FORMATS if fp_sort(f) == sort), None)
    if fmt is None:
        return False
    if z3.is_bv_value(bits):
        return fp_class(bits.as_long(), fmt).endswith("NaN")
    if not z3.is_app_of(bits, z3.Z3_OP_ITE):
        return False
    test, u, fallback = bits.children()
    # the test on the bits, or (as `smt.rewrite` writes it) on their float
    tests_u = _same(test, is_nan(u, fmt)) or test.eq(z3.fpIsNaN(z3.fpBVToFP(u, sort)))
    return tests_u and fallback.eq(z3.BitVecVal(canonical_nan(fmt), fmt.width))


def _same(a: z3.ExprRef, b: z3.ExprRef) -> bool:
    """a and b are one term up to the order of and/or operands."""
    if a.eq(b):
        return True
    return z3.is_app(a) and z3.is_app(b) and a.decl().eq(b.decl()) and \
        a.decl().kind() in (z3.Z3_OP_AND, z3.Z3_OP_OR) and a.num_args() == b.num_args() and \
        sorted(c.get_id() for c in a.children()) == sorted(c.get_id() for c in b.children())


def register(name: str, t: PtxType) -> z3.ExprRef:
    """A fresh register of type `t`: a Bool for .pred, else a bit-vector of its width."""
    return z3.Bool(name) if t.width == 1 else z3.BitVec(name, t.width)


def register_value(value: int | bool, t: PtxType) -> z3.ExprRef:
    return z3.BoolVal(bool(value)) if t.width == 1 else z3.BitVecVal(int(value), t.width)


def fields(bits: z3.BitVecRef, fmt: FloatFormat) -> tuple[z3.BitVecRef, ...]:
    """(sign, biased exponent, fraction) of float bits."""
    man = fmt.sbits - 1
    return (z3.Extract(fmt.width - 1, fmt.width - 1, bits),
            z3.Extract(fmt.width - 2, man, bits), z3.Extract(man - 1, 0, bits))


def is_nan(bits: z3.BitVecRef, fmt: FloatFormat) -> z3.BoolRef:
    _, exp, frac = fields(bits, fmt)
    return z3.And(exp == (1 << fmt.ebits) - 1, frac != 0)


def widen(bits: z3.BitVecRef, src: FloatFormat, dst: FloatFormat) -> z3.BitVecRef:
    """The exact `dst` bits of a non-NaN `src` value, `dst` at least as wide in both
    fields: sign kept, exponent rebiased, fraction padded with zeros on the right; a
    subnormal that `dst` holds as a normal is normalised (its leading one becomes the
    hidden bit). Zeros keep their sign, infinities stay infinite."""
    pad, grow = dst.sbits - src.sbits, dst.ebits - src.ebits
    if not grow:  # one exponent range (bf16 in f32): every field stays, the fraction padded
        return z3.Concat(bits, z3.BitVecVal(0, pad)) if pad else bits
    sign, exp, frac = fields(bits, src)
    rebias = (1 << (dst.ebits - 1)) - (1 << (src.ebits - 1))  # dst bias - src bias

    def pack(e, f):
        e = z3.BitVecVal(e, dst.ebits) if isinstance(e, int) else e
        return z3.Concat(sign, e, f, z3.BitVecVal(0, pad)) if pad else z3.Concat(sign, e, f)

    small = pack(0, frac)  # zeros; subnormals that stay subnormal (same exponent range)
    if grow:
        m = src.sbits - 1
        for k in reversed(range(m)):  # k leading zeros: the leading one is bit m-1-k
            small = z3.If(z3.Extract(m - 1 - k, m - 1 - k, frac) == 1,
                          pack(rebias - k, frac << (k + 1)), small)
    top = (1 << src.ebits) - 1
    normal = z3.ZeroExt(grow, exp) + rebias if grow else exp
    return z3.If(exp == 0, small,
                 z3.If(exp == top, pack((1 << dst.ebits) - 1, frac), pack(normal, frac)))


def unordered(a: z3.BitVecRef, b: z3.BitVecRef) -> z3.BitVecRef:
    """The pair {a, b} as one value, whatever their order: the argument of the open NaN
    of an operation that names no order of its operands ("the minimum of a and b", "a +
    b", "a * b"), so that swapping them gives the same instruction (Spec notes 10)."""
    return z3.If(z3.ULE(a, b), z3.Concat(a, b), z3.Concat(b, a))


def free_nan(name: str, arg: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef:
    """A NaN the ISA leaves open: an uninterpreted function named `name` of `arg`'s
    bits (one input, one NaN), whose value may be any NaN of `fmt`, sign and payload
    included; bits that are no NaN stand for the canonical one, so every NaN and
    nothing else is reachable. Evaluation reports an output that depends on it as
    unspecified instead of inventing bits."""
    OPEN_NANS[name] = fmt
    u = z3.Function(name, arg.sort(), z3.BitVecSort(fmt.width))(arg)
    return z3.If(is_nan(u, fmt), u, z3.BitVecVal(canonical_nan(fmt), fmt.width))


# the names `free_nan` has given, each with its NaN's format: these open values are NaNs
OPEN_NANS: dict[str, FloatFormat] = {}


def open_nan_sites(term: z3.ExprRef) -> list[z3.BoolRef]:
    """When each open NaN in `term` is the value an instruction takes: every operation
    puts `free_nan` in the then-branch of the If that picks it (`to_bits`, `fneg`,
    `_min_max`, a cvt), so that If's test. Ruling them all out leaves only inputs on
    which no open NaN's bits reach the result."""
    found = {t.arg(0).get_id(): t.arg(0) for t in subterms(term, below=z3.is_app)
             if z3.is_app_of(t, z3.Z3_OP_ITE) and _is_open_nan(t.arg(1))}
    return list(found.values())


def is_open_nan_application(t: z3.ExprRef) -> bool:
    """`t` is the uninterpreted application inside a `free_nan`: the NaN's bits."""
    return is_free(t) and t.num_args() > 0 and t.decl().name() in OPEN_NANS


def _is_open_nan(t: z3.ExprRef) -> bool:
    """`t` is a `free_nan`: If(is_nan(u), u, canonical) of an application u."""
    if not z3.is_app_of(t, z3.Z3_OP_ITE):
        return False
    return is_open_nan_application(t.arg(1))


ROUNDING_MODES = {"rn": z3.RNE, "rz": z3.RTZ, "rm": z3.RTN, "rp": z3.RTP,
                  "rni": z3.RNE, "rzi": z3.RTZ, "rmi": z3.RTN, "rpi": z3.RTP}


# f32 arithmetic on bf16 values, rounded to bf16, is bf16 arithmetic: the same number,
# since rounding twice in one direction is rounding once, and to nearest f32 (24 bits)
# then bf16 (8) is innocuous for +, -, *, / and sqrt (p' >= 2p + 2: Figueroa, "When is
# double rounding innocuous?", 1995; the formats share one exponent range, so overflow
# and subnormals agree). Not fma: its exact value may hold too many bits. A compiler
# writes bf16 arithmetic so without bf16 instructions (cvt.f32.bf16, div.rn.f32,
# cvt.rn.bf16.f32): `narrowed` makes it the bf16 operation, the term LLVM's `fdiv
# bfloat` is, so that a refinement query compares one term with itself.
THROUGH = {BF16: F32}
ONE_ROUNDING = {z3.Z3_OP_FPA_ADD: z3.fpAdd, z3.Z3_OP_FPA_SUB: z3.fpSub,
                z3.Z3_OP_FPA_MUL: z3.fpMul, z3.Z3_OP_FPA_DIV: z3.fpDiv,
                z3.Z3_OP_FPA_SQRT: z3.fpSqrt}


def narrowed(rm: z3.FPRMRef, x: z3.FPRef, fmt: FloatFormat) -> z3.FPRef:
    """x rounded by `rm` to `fmt`: where x is an operation rounded by `rm` on exact
    widenings of `fmt` values, in a format `THROUGH` names, that operation in `fmt`."""
    wide = THROUGH.get(fmt)
    if wide is None or x.sort() != fp_sort(wide) or not z3.is_app(x) or \
            x.decl().kind() not in ONE_ROUNDING or not x.arg(0).eq(rm):
        return z3.fpToFP(rm, x, fp_sort(fmt))
    operands = [_narrow(a, fmt, wide) for a in x.children()[1:]]
    if any(a is None for a in operands):
        return z3.fpToFP(rm, x, fp_sort(fmt))
    return ONE_ROUNDING[x.decl().kind()](rm, *operands)


def _narrow(x: z3.FPRef, fmt: FloatFormat, wide: FloatFormat) -> z3.FPRef | None:
    """The `fmt` value x is the exact widening of (None where it is no widening seen):
    the view of bits with the fraction padded by zeros (`widen`, or a shift left by
    the padding, which is what LLVM writes for bf16 to f32), or a widening conversion."""
    if z3.is_app_of(x, z3.Z3_OP_FPA_TO_FP) and x.num_args() == 2 and x.arg(1).sort() == \
            fp_sort(fmt):
        return x.arg(1)
    if not (z3.is_app_of(x, z3.Z3_OP_FPA_TO_FP) and x.num_args() == 1):
        return None
    bits, pad = x.arg(0), wide.sbits - fmt.sbits
    if z3.is_app_of(bits, z3.Z3_OP_CONCAT) and bits.num_args() == 2 and \
            bits.arg(1).eq(z3.BitVecVal(0, pad)):
        return as_float(bits.arg(0), fmt)
    if z3.is_app_of(bits, z3.Z3_OP_BSHL) and \
            z3.simplify(bits.arg(1)).eq(z3.BitVecVal(pad, wide.width)):  # shl's clamp
        low = bits.arg(0)
        if z3.is_app_of(low, z3.Z3_OP_ZERO_EXT) and low.arg(0).size() == fmt.width:
            return as_float(low.arg(0), fmt)
        return as_float(z3.Extract(fmt.width - 1, 0, low), fmt)
    return None


def fused(rm: z3.FPRMRef, x: z3.FPRef, y: z3.FPRef, z: z3.FPRef) -> z3.FPRef:
    """x*y + z rounded once. With a factor 1.0 (-1.0) that is z plus (minus) the other
    factor, the product being exact; with z = -0.0 it is x*y (adding -0.0 changes no
    value and, but rounding toward -inf, no zero's sign). These are the terms of add,
    sub and mul, which a compiler writes so without add.bf16 (`fma.rn.bf16 d, a, 1.0,
    b`): no fma circuit for the solver to tell apart from them."""
    e, m = x.sort().ebits(), x.sort().sbits()
    one, minus_zero = ((1 << (e - 1)) - 1) << (m - 1), 1 << (e + m - 1)
    for factor, other in ((y, x), (x, y)):
        if _constant(factor) == one:
            return z3.fpAdd(rm, other, z)
        if _constant(factor) == minus_zero | one:  # -1.0: z - other (IEEE's x - y)
            return z3.fpSub(rm, z, other)
    if _constant(z) == minus_zero and not rm.eq(z3.RTN()):
        return z3.fpMul(rm, x, y)
    return z3.fpFMA(rm, x, y, z)


def _constant(x: z3.FPRef) -> int | None:
    """The bits of a float that is a view of constant bits (an immediate), else None."""
    if z3.is_app_of(x, z3.Z3_OP_FPA_TO_FP) and x.num_args() == 1 and z3.is_bv_value(x.arg(0)):
        return x.arg(0).as_long()
    return None


def rounding(rnd: str | None) -> z3.FPRMRef:
    """9.7.3 "Rounding modifiers": .rn (the default) nearest even, .rz toward zero, .rm
    toward -inf, .rp toward +inf; cvt's .rni/.rzi/.rmi/.rpi the same to an integer."""
    return ROUNDING_MODES[rnd or "rn"]()


def to_bits(x: z3.FPRef, nan: z3.BitVecRef) -> z3.BitVecRef:
    """The register bits of an IEEE result; a NaN result is `nan` (its bits are not the
    operation's to give)."""
    return z3.If(z3.fpIsNaN(x), nan, z3.fpToIEEEBV(x))


# an open value's application (its argument a value) -> the value to take (None: open)
Choose = Callable[[z3.ExprRef], z3.ExprRef | None]


def take_open(term: z3.ExprRef, choose: Choose) -> tuple[z3.ExprRef, list[OpenValue]]:
    """`term` (its inputs substituted) with the open values `choose` takes, innermost
    first (one open NaN may be another's operand), and those it took."""
    taken: list[OpenValue] = []
    while pairs := [(a, v) for a in free_applications(term) if z3.is_bv_value(a.arg(0))
                    and (v := choose(a)) is not None]:
        taken += [_open_value(a, v) for a, v in pairs]
        term = z3.simplify(z3.substitute(term, *pairs))
    return term, taken


# an open value given as an input: `OpenValue.input`, `open[mul.rn.f32 NaN of 0x...]`
OPEN_INPUT = re.compile(r"open\[\s*(.+?)\s+of\s+(0x[0-9a-fA-F]+)\s*\]")
Given = dict[tuple[str, int], tuple[str, object]]  # (name, argument) -> (input, value)


def open_inputs(inputs: Mapping[str, object]) -> tuple[dict[str, object], Given]:
    """The inputs other than open values, and the open values given (`OPEN_INPUT`)."""
    rest, given = {}, {}
    for name, raw in inputs.items():
        if m := OPEN_INPUT.fullmatch(name.strip()):
            given[m.group(1), int(m.group(2), 16)] = (name, raw)
        else:
            rest[name] = raw
    return rest, given


def given_first(given: Given, choose: Choose | None) -> Choose | None:
    """The open values `given` as inputs, then `choose`'s."""
    if not given:
        return choose

    def first(app: z3.ExprRef) -> z3.ExprRef | None:
        if (key := (app.decl().name(), app.arg(0).as_long())) in given:
            return _given_term(*given[key], app)
        return choose(app) if choose else None
    return first


def _given_term(name: str, raw: object, app: z3.ExprRef) -> z3.ExprRef:
    """An open value given as `name`=`raw`, as a value of `app`'s sort."""
    try:
        if z3.is_bool(app):
            return z3.BoolVal(bool(raw if isinstance(raw, bool | int)
                                   else parse_value(str(raw), TYPES["pred"])))
        bits = raw if isinstance(raw, int) else parse_value(str(raw), TYPES["b64"])
    except LiteralError as e:
        raise PtxError(f"input {quote(name)}: {e}") from None
    if not 0 <= bits < 1 << app.size():
        raise PtxError(f"input {quote(name)}: {raw} does not fit the {app.size()} bits the "
                       "open value has")
    return z3.BitVecVal(bits, app.size())


def unreached(given: Given, taken: Iterable[OpenValue], where: str) -> None:
    """An open value given that the evaluation never reached is an error (a typo)."""
    if unused := given.keys() - {(c.name, c.argument) for c in taken}:
        raise PtxError(f"{where} reaches no open value " + ", ".join(
            sorted(f"{name} of {arg:#x}" for name, arg in unused)) + " with these inputs")


def _open_value(app: z3.ExprRef, value: z3.ExprRef) -> OpenValue:
    arg = app.arg(0)
    if z3.is_bool(value):
        return OpenValue(app.decl().name(), arg.as_long(), arg.size(), z3.is_true(value), 1)
    return OpenValue(app.decl().name(), arg.as_long(), arg.size(), value.as_long(),
                     value.size())


def free_value(name: str, arg: z3.BitVecRef, width: int) -> z3.BitVecRef:
    """A value the ISA leaves open, any bits of `width`: an uninterpreted function named
    `name` of `arg` (the same instruction on the same inputs gives the same value)."""
    return z3.Function(name, arg.sort(), z3.BitVecSort(width))(arg)
