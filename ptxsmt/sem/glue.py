"""mov and the logic operations, which rewrites put around the seed instructions."""

from __future__ import annotations

import z3

from ..isa.literals import canonical_nan
from ..isa.variants import Variant
from .options import Options
from .sorts import as_float, fp_sort

_BITWISE = {"and": lambda a, b: a & b, "or": lambda a, b: a | b, "xor": lambda a, b: a ^ b}
_LOGICAL = {"and": z3.And, "or": z3.Or, "xor": z3.Xor}


def glue(v: Variant, a, b, c, opts: Options) -> dict[str, z3.ExprRef]:
    """mov: d = a;  not: d = ~a;  and/or/xor: d = a op b  (on .pred: logical);
    cvt (exact widening only): d = (dtype) a, a NaN becomes the canonical NaN."""
    pred = v.stype.name == "pred"
    if v.opcode == "mov":
        return {"d": a}
    if v.opcode == "cvt":
        x = as_float(a, v.stype.fmt)
        wide = z3.fpToIEEEBV(z3.fpToFP(z3.RNE(), x, fp_sort(v.dtype.fmt)))
        nan = z3.BitVecVal(canonical_nan(v.dtype.fmt), v.dtype.width)
        return {"d": z3.If(z3.fpIsNaN(x), nan, wide)}
    if v.opcode == "not":
        return {"d": z3.Not(a) if pred else ~a}
    return {"d": (_LOGICAL if pred else _BITWISE)[v.opcode](a, b)}
