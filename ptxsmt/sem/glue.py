"""mov, the logic operations and exact widening cvt, which rewrites put around the
seed instructions."""

from __future__ import annotations

import z3

from ..isa.syntax import format_variant
from ..isa.types import PRED, Kind, PtxType
from ..isa.variants import Variant
from .options import Options
from .sorts import fields, free_nan, is_nan, widen

_BITWISE = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
_LOGICAL = {"and": z3.And, "or": z3.Or, "xor": z3.Xor}


def glue(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """mov: d = a;  not: d = ~a;  and/or/xor: d = a op b  (on .pred: logical);
    cvt (exact widening, or between integers): d = convert(a)."""
    if v.opcode == "mov":
        return {"d": a}
    if v.opcode == "cvt":
        return {"d": cvt(v, a, opts) if v.atype.is_float else cvt_int(v, a)}
    pred = v.type is PRED
    if v.opcode == "not":
        return {"d": z3.Not(a) if pred else ~a}
    return {"d": (_LOGICAL if pred else _BITWISE)[v.opcode](a, b)}


def cvt(v: Variant, a: z3.BitVecRef, opts: Options) -> z3.BitVecRef:
    """d = convert(a), exact for these widenings. "For cvt.f32.bf16, NaN input yields
    unspecified NaN", and the text fixes no NaN bits for the others: a NaN gives a free
    NaN named after the instruction (README, Spec notes 9). sm_1x: "Single-precision
    subnormal inputs and results are flushed to sign-preserving zero" (9.7.9.21); no
    result here is an f32 subnormal on sm_1x (cvt.f32.bf16 needs sm_80), so only the
    input of cvt.f64.f32 flushes."""
    src, dst = v.atype.fmt, v.dtype.fmt
    if opts.sm_1x and v.atype.name == "f32":
        sign, exp, _ = fields(a, src)
        a = z3.If(exp == 0, z3.Concat(sign, z3.BitVecVal(0, src.width - 1)), a)
    return z3.If(is_nan(a, src), free_nan(format_variant(v), a, dst), widen(a, src, dst))



def cvt_int(v: Variant, a: z3.BitVecRef) -> z3.BitVecRef:
    return integer_cvt(a, v.atype, v.dtype, v.sat)


def integer_cvt(a: z3.BitVecRef, src: PtxType, dst: PtxType, sat: bool) -> z3.BitVecRef:
    """d = convert(a) between integers (.u8 ... .s64; `a` has src's width): "sext =
    sign-extend; zext = zero-extend; chop = keep only low bits that fit" (the extension
    follows the source's signedness). ".sat: For integer destination types, .sat limits
    the result to MININT..MAXINT for the size of the operation": the source's value
    clamped to the destination's range."""
    n, signed = max(src.width, dst.width) + 1, src.kind is Kind.SIGNED
    wide = (z3.SignExt if signed else z3.ZeroExt)(n - src.width, a)  # a's value, exactly
    if sat:
        top = (1 << (dst.width - 1)) - 1 if dst.kind is Kind.SIGNED else (1 << dst.width) - 1
        low = -top - 1 if dst.kind is Kind.SIGNED else 0
        lo, hi = z3.BitVecVal(low, n), z3.BitVecVal(top, n)
        wide = z3.If(wide < lo, lo, z3.If(wide > hi, hi, wide))
    return z3.Extract(dst.width - 1, 0, wide)
