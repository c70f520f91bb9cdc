"""`--hardware sm_90`: the values an H200 (sm_90, ptxas 13.0) gives where the PTX ISA
leaves a value open (docs/hardware.md has the evidence, from ../shared/silicon/).

The ISA reading stays the semantics: each open value is an uninterpreted function of the
instruction (`sorts.free_nan`, `sorts.free_value`). With the option, `on_silicon`
replaces the functions an instruction makes by the rule's value, in its own terms, so
the slow path, the compiled fast path and the cache (keyed by the options) all see the
same terms. Rules are by format and operation class, not by instruction form:

* an f16/bf16/f32 unit (FADD, FFMA, HADD2, F2FP, FRND, MUFU, ...) gives its format's
  one NaN for any NaN result, made or passed on (`min.NaN.f32` gives 0x7fffffff);
* an f64 unit (DADD, DFMA, F2F with an f64 side, FRND.F64) makes 0xfff8000000000000 and
  passes a NaN operand on quieted, sign and payload kept: the operand `NAN_PRIORITY`
  names first;
* a cvt that is a move of bits (same format; bf16 into an f32's high half) keeps them;
* integer div/rem by zero give all ones.
Anything else the ISA leaves open (testp.normal of zero, bfe past 255, ...) stays open.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import z3

from ..isa.opcodes import INT_ROUNDINGS
from ..isa.types import BF16, F16, F32, F64, FloatFormat, Kind
from ..isa.variants import Variant
from ..terms.walk import free_applications
from .sorts import OPEN_NANS, fields, is_nan


@dataclass(frozen=True)
class NanUnit:
    """How a float unit of one format treats NaN: `made` is the NaN it makes from no NaN
    operand (0/0, inf - inf, sqrt(-1)); `passes_on`: a NaN operand comes out quieted,
    sign and payload kept (else it comes out as `made` too)."""

    made: int
    passes_on: bool


UNITS = {
    F16: NanUnit(0x7fff, passes_on=False),
    BF16: NanUnit(0x7fff, passes_on=False),
    F32: NanUnit(0x7fffffff, passes_on=False),
    F64: NanUnit(0xfff8000000000000, passes_on=True),
}

def made_nan(app: z3.ExprRef) -> z3.ExprRef | None:
    """An open NaN (the application in a `sorts.free_nan`) as the NaN an H200 makes in its
    format from no NaN operand (0x7fffffff for an f32): one choice of it that people know
    and every run makes alike; None for any other open value."""
    fmt = OPEN_NANS.get(app.decl().name())
    return None if fmt is None else z3.BitVecVal(UNITS[fmt].made, fmt.width)


# The operand whose NaN an f64 operation passes on, first choice first: add/sub/mul take
# b's over a's (whichever is signalling), fma the product's over c, div (a software
# sequence) a's over b's.
NAN_PRIORITY = {"add": "ba", "sub": "ba", "mul": "ba", "fma": "bac", "mad": "bac",
                "div": "ab", "sqrt": "a", "rcp": "a", "neg": "a", "abs": "a",
                "min": "ba", "max": "ba"}

# cvt between these formats goes through an f32 (HADD2.F32 or a shift, then F2F.F64.F32)
VIA = {(F16, F64): F32, (BF16, F64): F32}


Rule = Callable[[Variant, tuple, int], z3.BitVecRef]


def rule(v: Variant) -> Rule | None:
    """The rule for the open values `v` makes, if one covers them: a function of the
    instruction, its operands (a, b, c) and the open value's width."""
    if v.opcode == "cvt":
        return _converted if v.atype.is_float and v.dtype.is_float else None
    t = v.roles.get("type")
    if t is not None and t.kind is Kind.FLOAT:
        return _arithmetic if v.opcode in NAN_PRIORITY else None
    return _all_ones if v.opcode in ("div", "rem") else None


def on_silicon(v: Variant, value_of: Rule, operands: tuple, out: dict[str, z3.ExprRef],
               made: dict[str, z3.ExprRef]) -> dict[str, z3.ExprRef]:
    """`out` with each open value the instruction makes (an uninterpreted function
    applied in `made`, its terms on fresh operands: so never one its operands hold)
    replaced by the rule's value: every application of the function, so each lane's."""
    pairs = []
    for decl in {f.decl() for t in made.values() for f in free_applications(t)}:
        value = value_of(v, operands, decl.range().size())  # free_nan, free_value: bits
        if value.size() == decl.range().size():  # else not a value the rule gives
            pairs.append((decl, value))
    return {k: z3.substitute_funs(t, *pairs) for k, t in out.items()} if pairs else out


def _arithmetic(v: Variant, operands: tuple, width: int) -> z3.BitVecRef:
    """The NaN result of a float operation of one lane format (the lane's width: an x2
    form's lanes are f16/bf16, whose unit passes nothing on)."""
    fmt = v.type.lane.fmt
    nan = z3.BitVecVal(UNITS[fmt].made, fmt.width)
    if UNITS[fmt].passes_on:
        given = dict(zip("abc", operands))
        for k in reversed(NAN_PRIORITY[v.opcode]):
            x = given[k]
            nan = z3.If(is_nan(x, fmt), _quiet(x, fmt), nan)
    return nan


def _converted(v: Variant, operands: tuple, width: int) -> z3.BitVecRef:
    """cvt's NaN: the source through each step ptxas lowers the conversion to. A .ftz
    on an f32 that no f64 unit writes is an f32 operation (FMUL.FTZ): its NaN first."""
    x, fmt, dst = operands[0], v.atype.fmt, v.dtype.fmt
    if v.ftz and F32 in (fmt, dst) and fmt is not F64:
        x, fmt = z3.BitVecVal(UNITS[F32].made, F32.width), F32
    for to in (VIA.get((fmt, dst)), dst):
        if to is not None:
            x, fmt = _step(x, fmt, to, rounds=v.rnd in INT_ROUNDINGS), to
    return x


def _step(x: z3.BitVecRef, src: FloatFormat, dst: FloatFormat, rounds: bool) -> z3.BitVecRef:
    """One conversion step of a NaN: a move keeps its bits, an f64 unit quiets them, any
    other unit gives its own NaN."""
    if (src is dst or (src, dst) == (BF16, F32)) and not rounds:
        return _resized(x, src, dst)
    if F64 in (src, dst):
        return _quiet(_resized(x, src, dst), dst)
    return z3.BitVecVal(UNITS[dst].made, dst.width)


def _resized(x: z3.BitVecRef, src: FloatFormat, dst: FloatFormat) -> z3.BitVecRef:
    """The NaN of `dst` with x's sign and the high bits of its payload (zeros below)."""
    sign, _, frac = fields(x, src)
    grow = dst.sbits - src.sbits
    frac = z3.Concat(frac, z3.BitVecVal(0, grow)) if grow > 0 else \
        z3.Extract(src.sbits - 2, -grow, frac) if grow < 0 else frac
    return z3.Concat(sign, z3.BitVecVal((1 << dst.ebits) - 1, dst.ebits), frac)


def _quiet(x: z3.BitVecRef, fmt: FloatFormat) -> z3.BitVecRef:
    return x | z3.BitVecVal(1 << (fmt.sbits - 2), fmt.width)


def _all_ones(v: Variant, operands: tuple, width: int) -> z3.BitVecRef:
    """Integer division or remainder by zero."""
    return z3.BitVecVal(-1, width)
